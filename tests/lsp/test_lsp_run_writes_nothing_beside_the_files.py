"""A Run from the editor writes nothing into the user's folders.

A Run of a program with unsaved changes (or of one that `use`s a library with unsaved
changes) wrote each such buffer beside its file as `.serq-run-*.sq` for the worker to read,
and removed it after the run. While the run went on, anything listing the folder saw a
program the user never made: a file watcher (the editor's own, which told the server of
a new `.sq` file), `git status`, and the repository's tests that glob examples/ while
`tests/fuzz/editing_search.py` ran Runs there (§54: 8 failures, files gone a moment
later). The buffers now go to a folder of their own, and the worker reads each file's
text from its copy under the file's own name (`serq run --buffer FILE=COPY`), so relative
`use`s and `trace`s are still read beside the file.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

PROGRAM = """use "lib/a.sq";
stage server : fifo(1);
workload { arrive poisson(20); trace "turns.csv"; }
session { turn; run server (~exp(50)); observe r = level() + new; }
run { horizon 500; seed 1; }
"""
A = 'use "b.sq";\ndef level() = base() + 1;\n'
B = "def base() = 1;\n"


def _listing(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def test_a_run_of_unsaved_buffers_writes_nothing_beside_them(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "main.sq").write_text(PROGRAM.replace("level()", "0"))  # the saved text
    (tmp_path / "lib" / "a.sq").write_text(A)
    (tmp_path / "lib" / "b.sq").write_text(B)
    (tmp_path / "turns.csv").write_text("session,turn,new,out,think\n0,0,0,1,0\n1,0,0,2,0\n")
    before = _listing(tmp_path)
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(_listing(tmp_path))

    wire = Wire()
    watcher = threading.Thread(target=watch)
    try:
        wire.initialize()
        main, b = (tmp_path / "main.sq").as_uri(), (tmp_path / "lib" / "b.sq").as_uri()
        wire.open(main, PROGRAM)  # unsaved: the saved file observes 0
        wire.open(b, B.replace("1;", "5;"))  # unsaved: the library's own `use`d file
        assert wire.diagnostics(main) == []
        watcher.start()
        wire.request(1, "workspace/executeCommand", {"command": "serq.run", "arguments": [main]})
        answer = wire.answer(1, timeout=120)
        done.set()
        watcher.join()
        assert "result" in answer, answer
        row = next(line for line in answer["result"].splitlines() if line.startswith("| r "))
        assert "| 6 |" in row, row  # the buffers' texts, the trace read beside main.sq
        assert seen == before, sorted(seen - before)
        assert _listing(tmp_path) == before
    finally:
        done.set()
        wire.process.kill()
        wire.process.wait()


def test_a_run_of_an_unsaved_program_names_it_as_the_editor_does(tmp_path):
    (tmp_path / "main.sq").write_text("")
    wire = Wire()
    try:
        wire.initialize()
        main = (tmp_path / "main.sq").as_uri()
        text = (
            "stage server : fifo(1);\nworkload { arrive poisson(1); }\n"
            "session { run server (~exp(1)); }\nrun { horizon 10; warmup 20; }\n"
        )
        wire.open(main, text)
        wire.request(1, "workspace/executeCommand", {"command": "serq.run", "arguments": [main]})
        answer = wire.answer(1, timeout=120)
        message = answer["error"]["message"]
        assert str(tmp_path / "main.sq") in message, message
        assert "serq-run" not in message and "0.sq" not in message, message
        assert os.listdir(tmp_path) == ["main.sq"]
    finally:
        wire.process.kill()
        wire.process.wait()
