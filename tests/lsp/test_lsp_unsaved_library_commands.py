"""Run, Show kernel and Show IR read a `use`d library from its editor buffer, as the
diagnostics and hover do.

A user edited a library a program `use`s, did not save it, and ran the program from the
editor: the diagnostics showed the buffer's library, the run the disk's (the worker read
the disk), and Show kernel and Show IR the disk's too. The run now gives the worker each
unsaved file's text (`serq run --buffer FILE=COPY`, the copies in a folder of their own,
removed after); the commands expand with the server's loader.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

PROGRAM = """use "lib/a.sq";

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
A = 'use "b.sq";\n\ndef level() = base() + 1;\n'
B = "def base() = 1;\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "main.sq").write_text(PROGRAM)
    (tmp_path / "lib" / "a.sq").write_text(A)
    (tmp_path / "lib" / "b.sq").write_text(B)
    return tmp_path


def _command(wire: Wire, msg_id: int, command: str, uri: str) -> str:
    wire.request(msg_id, "workspace/executeCommand", {"command": command, "arguments": [uri]})
    answer = wire.answer(msg_id, timeout=120)
    assert "result" in answer, answer
    return answer["result"]


def _observed(markdown: str) -> str:
    """The row of the observation `r` in a Run's report."""
    return next(line for line in markdown.splitlines() if line.startswith("| r "))


def _change(wire: Wire, uri: str, version: int, text: str) -> None:
    wire.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
    )


def test_a_run_reads_the_unsaved_library_the_diagnostics_read(wire, tree):
    wire.initialize()
    main, b = (tree / "main.sq").as_uri(), (tree / "lib" / "b.sq").as_uri()
    wire.open(main, PROGRAM)
    assert wire.diagnostics(main) == []
    saved = _command(wire, 1, "serq.run", main)
    assert "| 2 |" in _observed(saved)
    wire.open(b, B)
    wire.diagnostics(b)
    _change(wire, b, 2, "def base() = 41;\n")  # not saved: the disk still says 1
    wire.diagnostics(b)
    ran = _command(wire, 2, "serq.run", main)
    assert "| 42 |" in _observed(ran), ran
    assert "def base() = 1;" in (tree / "lib" / "b.sq").read_text()
    assert "41" in _command(wire, 3, "serq.showKernel", main)
    ir = _command(wire, 4, "serq.showIR", main)
    assert "41" in ir or "42" in ir, ir
    # a buffer whose library does not link: the diagnostics and the run both say so
    _change(wire, b, 3, "def base() = nothing;\n")
    wire.diagnostics(b)
    found = wire.diagnostics(main)
    while "nothing" not in json.dumps(found):  # rechecked when the library changes
        found = wire.diagnostics(main, timeout=30)
    wire.request(5, "workspace/executeCommand", {"command": "serq.run", "arguments": [main]})
    failed = wire.answer(5, timeout=120)
    assert "nothing" in failed["error"]["message"], failed
    # no copy is left behind, and the files on disk are untouched
    assert sorted(p.name for p in tree.rglob("*")) == ["a.sq", "b.sq", "lib", "main.sq"]
    assert (tree / "lib" / "a.sq").read_text() == A
    assert (tree / "main.sq").read_text() == PROGRAM


def test_a_saved_library_runs_from_disk_with_no_copy(wire, tree):
    wire.initialize()
    main, a = (tree / "main.sq").as_uri(), (tree / "lib" / "a.sq").as_uri()
    wire.open(main, PROGRAM)
    wire.open(a, A)  # open, as on disk
    assert wire.diagnostics(main) == []
    ran = _command(wire, 1, "serq.run", main)
    assert "| 2 |" in _observed(ran)
    assert sorted(p.name for p in tree.rglob("*")) == ["a.sq", "b.sq", "lib", "main.sq"]
