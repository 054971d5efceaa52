"""A `def` may not share its name with a `let`, a pool, a stage or a queue, and rename does
not make one that does.

Both references refuse `let f = 1; def f() { 2 }` ("`f` is defined, and is also a `let`
constant"), and docs/diagnostics.md#e-name-clash says definitions need names of their
own; serq took it, and took a program whose `let` had the name of a `def` of a library it
`use`s. The editor's rename made such programs: renaming a program's `let` to the name of
a library's `def` was allowed, since the check of the new name looked at the document's
own declarations only.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

from serq import api  # noqa: E402

PROGRAM = """use "lib.sq";
fn main() {
  let rate = 0.5;
  stage server : fifo(1);
  workload { arrive poisson(rate); }
  server { run server (cost(server, service())); }
}
"""
LIBRARY = "def service() { ~exp(1) }\n"


def test_a_library_def_and_a_let_of_the_program(tmp_path):
    (tmp_path / "lib.sq").write_text(LIBRARY)
    path = tmp_path / "main.sq"
    text = PROGRAM.replace("let rate", "let service").replace("(rate)", "(service)")
    diagnostics = api.link_source(text, str(path))[1]
    assert [(d.code, d.span.file, d.span.line, d.message) for d in diagnostics] == [
        ("E-name-clash", str(tmp_path / "lib.sq"), 1, "`service` is both a definition and a `let` constant")
    ]
    assert [(label.span.line, label.text) for label in diagnostics[0].labels] == [
        (3, "the `let` constant is declared here")
    ]


def test_rename_refuses_the_name_of_a_library_def(wire: Wire, tmp_path):
    wire.initialize()
    (tmp_path / "lib.sq").write_text(LIBRARY)
    main = tmp_path / "main.sq"
    main.write_text(PROGRAM)
    wire.open(main.as_uri(), PROGRAM)
    assert wire.diagnostics(main.as_uri()) == []
    at = {"textDocument": {"uri": main.as_uri()}, "position": {"line": 2, "character": 7}}
    wire.request(1, "textDocument/rename", {**at, "newName": "service"})
    answer = wire.answer(1)
    assert answer.get("error", {}).get("message") == "`service` is already a name of this program"
    wire.request(2, "textDocument/rename", {**at, "newName": "arrival_rate"})
    assert "result" in wire.answer(2)
