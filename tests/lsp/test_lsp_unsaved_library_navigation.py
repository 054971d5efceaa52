"""A library made in the editor and not saved yet: the program that `use`s it links
against the buffer, and go-to-definition on the `use` opens the buffer.

The diagnostics read a `use`d file from its buffer when it is open, so a program that uses
a library the user has just made (not on disk yet) checks clean; go-to-definition on its
`use "..."` answered nothing, because it looked for the file on disk only. A Run reads the
buffer too (`test_lsp_unsaved_library_commands.py`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

PROGRAM = """use "made.sq";

stage server : fifo(1);

workload {
  arrive poisson(1);
}

session {
  run server (~exp(2));
  observe r = level();
}

run {
  horizon 50;
  seed 1;
}
"""
LIBRARY = "def level() = 3;\n"


def _at(wire: Wire, msg_id: int, method: str, uri: str, line: int, character: int):
    params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
    wire.request(msg_id, f"textDocument/{method}", params)
    answer = wire.answer(msg_id)
    assert "result" in answer, answer
    return answer["result"]


def test_a_use_of_a_library_open_but_not_saved(wire, tmp_path):
    wire.initialize()
    main, made = tmp_path / "main.sq", tmp_path / "made.sq"
    main.write_text(PROGRAM)
    wire.open(made.as_uri(), LIBRARY)  # never written to disk
    wire.diagnostics(made.as_uri())
    wire.open(main.as_uri(), PROGRAM)
    assert wire.diagnostics(main.as_uri()) == []
    found = _at(wire, 1, "definition", main.as_uri(), 0, len('use "m'))
    assert found and found[0]["uri"] == made.as_uri(), found
    line = PROGRAM.splitlines().index("  observe r = level();")
    found = _at(wire, 2, "definition", main.as_uri(), line, len("  observe r = le"))
    assert found and found[0]["uri"] == made.as_uri(), found
    assert found[0]["range"]["start"] == {"line": 0, "character": 4}
    # a file neither open nor on disk: no answer, and no error
    wire.notify("textDocument/didClose", {"textDocument": {"uri": made.as_uri()}})
    wire.diagnostics(made.as_uri())
    assert _at(wire, 3, "definition", main.as_uri(), 0, len('use "m')) is None
