"""editing_search.py writes nothing into the repository's folders while it runs.

Its Runs wrote the program into examples/ (`.editing-search-*.sq` for `serq run`, and the
language server's Run `.serq-run-*.sq` beside the unsaved document), and the tests that
glob examples/ (test_expand_printer, test_link_rules, test_link_unset, test_regex_code)
then read a file gone a moment later when they ran beside a search (§54: 8 failures).
The search now writes its programs into `tools_search.mirror()`, and the server's Run
writes unsaved buffers to a folder of its own (tests/lsp/test_lsp_run_writes_nothing_beside_the_files.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _listing(root: Path) -> set[str]:
    return {os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs}


def test_runs_and_renames_write_nothing_into_examples():
    examples = ROOT / "examples"
    before = _listing(examples)
    seen: set[str] = set()
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            seen.update(_listing(examples))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        search = [sys.executable, str(ROOT / "tests/fuzz/editing_search.py"), "--seed", "1"]
        search += ["--only", "run,rename", "--run", "--match", "examples/mm1.sq"]
        done_search = subprocess.run(search, capture_output=True, text=True, timeout=300)
    finally:
        done.set()
        watcher.join()
    assert done_search.returncode == 0, done_search.stdout[-2000:] + done_search.stderr[-2000:]
    assert "0 failures" in done_search.stdout, done_search.stdout[-2000:]
    assert sorted(seen - before) == []
