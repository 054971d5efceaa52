"""A Run from the editor that fails names the files the user edits, not the copies it ran.

A Run of a program with unsaved changes (in itself or in a library it `use`s) writes the
buffers beside their files as `.serq-run-*.sq` and runs those; the copies are gone when
the answer comes. A run that failed answered with the worker's diagnostics as they were,
`--> lib/.serq-run-n83chxai.sq:1:14`: a file the user never made and cannot open. The
answer now names each copy as the file it copies. (Since §56 the buffers go to a folder of
the server's own and the worker reads them under the files' names, `serq run --buffer`:
no copy's name can reach the answer.)
"""

from __future__ import annotations

import json

# the program, its two libraries, and the fixture `tree` that writes them, as
# tests/lsp/test_lsp_unsaved_library_commands.py has them
from tests.lsp.test_lsp_unsaved_library_commands import PROGRAM, B
from tests.lsp.test_lsp_unsaved_library_commands import tree as tree  # noqa: F401


def _change(wire, uri: str, version: int, text: str) -> None:
    wire.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
    )


def _failed_run(wire, msg_id: int, uri: str) -> str:
    wire.request(msg_id, "workspace/executeCommand", {"command": "serq.run", "arguments": [uri]})
    answer = wire.answer(msg_id, timeout=120)
    assert "error" in answer, answer
    return answer["error"]["message"]


def test_an_error_in_an_unsaved_library_names_the_library(wire, tree):
    wire.initialize()
    main, b = (tree / "main.sq").as_uri(), (tree / "lib" / "b.sq").as_uri()
    wire.open(main, PROGRAM)
    assert wire.diagnostics(main) == []
    wire.open(b, B)
    wire.diagnostics(b)
    _change(wire, b, 2, "def base() = nothing;\n")  # not saved
    wire.diagnostics(b)
    found = wire.diagnostics(main)
    while "nothing" not in json.dumps(found):  # rechecked when the library changes
        found = wire.diagnostics(main, timeout=30)
    message = _failed_run(wire, 1, main)
    assert "nothing" in message, message
    assert "serq-run-" not in message, message
    assert f"{tree / 'lib' / 'b.sq'}:1:14" in message, message


def test_an_error_in_an_unsaved_program_names_the_program(wire, tree):
    wire.initialize()
    main = (tree / "main.sq").as_uri()
    wire.open(main, PROGRAM)
    assert wire.diagnostics(main) == []
    unsaved = PROGRAM.replace("  horizon 50;\n", "")  # no horizon: the check passes, the run not
    _change(wire, main, 2, unsaved)
    wire.diagnostics(main)
    message = _failed_run(wire, 1, main)
    assert "no horizon" in message, message
    assert "serq-run-" not in message, message
    assert str(tree / "main.sq") in message, message
    # with a library unsaved too: the program and the library are both copies
    b = (tree / "lib" / "b.sq").as_uri()
    wire.open(b, B)
    wire.diagnostics(b)
    _change(wire, b, 2, "def base() = 2;\n")
    wire.diagnostics(b)
    message = _failed_run(wire, 2, main)
    assert "serq-run-" not in message, message
    assert str(tree / "main.sq") in message, message
    assert sorted(p.name for p in tree.rglob("*")) == ["a.sq", "b.sq", "lib", "main.sq"]
