"""A Run of an `untitled:` document reads its `use`s where its diagnostics read them.

A document with no folder of its own (a new, never saved `untitled:Untitled-1`) reads a
relative `use "lib.sq"` from the server's working directory: its diagnostics were clean
there. Its Run wrote the program to the temporary directory and the worker looked for
`/tmp/lib.sq`, "cannot read `lib.sq`": a program the editor showed clean would not run.
The copy is now written where the document's `use`s are read from.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lsp_robust import Wire  # noqa: E402

PROGRAM = """use "lib.sq";
stage server : fifo(1);
workload { arrive poisson(0.5); }
session { run server (~exp(1)); observe r = level(); }
run { horizon 20; seed 1; }
"""


def test_run_of_an_untitled_document(tmp_path, monkeypatch):
    (tmp_path / "lib.sq").write_text("def level() = 3;\n")
    monkeypatch.chdir(tmp_path)  # the server's working directory
    wire = Wire()
    try:
        wire.initialize()
        uri = "untitled:Untitled-1"
        wire.open(uri, PROGRAM)
        assert wire.diagnostics(uri) == []
        wire.request(1, "workspace/executeCommand", {"command": "serq.run", "arguments": [uri]})
        answer = wire.answer(1, timeout=120)
        assert "result" in answer, answer
        assert "| r | " in answer["result"], answer["result"]
        assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".serq-run-")]
    finally:
        wire.process.kill()
        wire.process.wait()
