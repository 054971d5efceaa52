"""In a library, a name its users declare is theirs: hover says so even when the name is
also a keyword, and rename of the library's `def` refuses a name a user declares.

`def serve_on(w) { run server (cost(server, w * scale)); }` in a library: hover over
`scale` listed the programs that declare it, but hover over `server` (the stage of every
`fn main` example) explained the keyword `server` ("the server's side: the statements
every `request;` stands for"), because the keyword's text came first. And renaming the
library's `def twice` to `scale` from the library was allowed, though `scale` is a `let`
of the programs that use it (an `E-name-clash` in each of them); from a program it was
refused. The first form of this test failed one run in two: opening the library checks
its users again, and until each check ended the user was dropped from the open
documents, so a hover in the library then found no user (it is now kept, marked out of
date).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

LIBRARY = """def serve_on(w) {
  run server (cost(server, w * scale));
}
def twice(w) = 2 * w;
"""
PROGRAM = """use "lib.sq";
let scale = {scale};
fn main() {{
  stage server : fifo(1);
  workload {{ arrive poisson(0.5); }}
  server {{ serve_on(twice(1)); }}
}}
"""


def _ask(wire: Wire, msg_id: int, method: str, uri: str, line: int, character: int, **more):
    params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
    wire.request(msg_id, f"textDocument/{method}", {**params, **more})
    return wire.answer(msg_id)


def test_a_library_reads_its_users_names(wire: Wire, tmp_path):
    wire.initialize()
    library = tmp_path / "lib.sq"
    library.write_text(LIBRARY)
    for name, scale in (("a.sq", 1), ("b.sq", 3)):
        (tmp_path / name).write_text(PROGRAM.format(scale=scale))
        wire.open((tmp_path / name).as_uri(), PROGRAM.format(scale=scale))
        assert wire.diagnostics((tmp_path / name).as_uri()) == []
    uri = library.as_uri()
    wire.open(uri, LIBRARY)
    assert wire.diagnostics(uri) == []
    for msg_id, character in ((1, len("  run se")), (2, len("  run server (cost(se"))):
        hover = _ask(wire, msg_id, "hover", uri, 1, character)["result"]["contents"]["value"]
        assert hover.startswith("`server` is declared by the programs that use this library")
        assert "- stage `server` of `a.sq` (line 4)" in hover, hover
    hover = _ask(wire, 3, "hover", uri, 1, len("  run server (cost(server, w * sc"))
    assert "- let `scale` of `b.sq` (line 2)" in hover["result"]["contents"]["value"]
    refused = _ask(wire, 4, "rename", uri, 3, len("def tw"), newName="scale")
    names = ("`scale` is already a name of `a.sq`", "`scale` is already a name of `b.sq`")
    assert refused["error"]["message"] in names
    renamed = _ask(wire, 5, "rename", uri, 3, len("def tw"), newName="double")["result"]
    assert sorted(Path(u).name for u in renamed["changes"]) == ["a.sq", "b.sq", "lib.sq"]
