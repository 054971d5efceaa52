"""`serq run --emit-python`: the Python source a program's run is compiled to."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def serq(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "serq.cli", *args, "--color", "never"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_prints_the_source_with_each_statements_line():
    done = serq("run", "examples/mm1.sq", "--emit-python")
    assert done.returncode == 0, done.stderr
    source = done.stdout
    compile(source, "<emitted>", "exec")  # Python, as printed
    assert "def _k_build():" in source and "def _k_loop(until):" in source
    lines = (ROOT / "examples" / "mm1.sq").read_text(encoding="utf-8").splitlines()
    run_line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith("run server"))
    assert f"# {run_line}: run" in source
    assert "sojourn" not in done.stderr and not done.stderr  # nothing ran, nothing said


def test_holds_written_inline_are_visible():
    done = serq("run", "bench/shapes/pool1.sq", "--emit-python")
    assert done.returncode == 0, done.stderr
    assert "def _k_retry():" in done.stdout
    assert "_k_HoldRun" in done.stdout  # the hold's join, inline


def test_a_program_with_errors_prints_them_and_no_source(tmp_path):
    bad = tmp_path / "bad.sq"
    bad.write_text("stage s : fifo(1);\nsession { run t (1); }\nrun { horizon 5; }\n")
    done = serq("run", str(bad), "--emit-python")
    assert done.returncode == 1
    assert done.stdout == ""
    assert "unknown" in done.stderr and "Traceback" not in done.stderr
