"""Where pyserq 0.1.4 is not installed (a worktree without .cache/pyserq-0.1.4), a `fn main`
comparison says so, and the searches refuse to start or warn (tests/sim/NOTES.md §69):
before, 0.1.2 read the program and refused `fn main` ("unexpected `fn` at top level"),
every `fn main` program became a reference error, and the mutants left the `fn main`
programs out without a word, so that `--seed S --start N` drew other mutants than a run
with 0.1.4 did."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import differential  # noqa: E402

ROOT = HERE.parents[1]
PROGRAM = """fn main() {
  stage svc : delay;
  workload { arrive batch(1); }
  server { run svc (cost(svc, 1)); observe t = now; }
}
"""


@pytest.fixture
def no_014(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """`differential.PYSERQ_014` pointed at an empty folder."""
    where = tmp_path / "nowhere"
    monkeypatch.setattr(differential, "PYSERQ_014", str(where))
    return where


def test_a_fn_main_comparison_names_the_missing_reference(no_014: Path, tmp_path: Path) -> None:
    path = tmp_path / "m.sq"
    path.write_text(PROGRAM, encoding="utf-8")
    theirs = differential.reference(str(path), 10, main=True, horizon=5.0, seed=1)
    assert theirs == {"error": differential.missing_014()}
    assert "pyserq 0.1.4 not found in " + str(no_014) in theirs["error"]
    verdict, detail = differential.compare(str(path), 10, main=True, horizon=5.0, seed=1)
    assert (verdict, detail) == ("reference-error", differential.missing_014())


def _search(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """scripts/search_step.py with `options`, 0.1.4 looked for in an empty folder."""
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "search_step.py"), *options],
        capture_output=True,
        text=True,
        env={
            "PYTHONPATH": str(ROOT),
            "PYSERQ_014_PATH": str(tmp_path / "nowhere"),
            "PATH": "/usr/bin:/bin",
        },
        timeout=300,
    )


def test_search_step_refuses_fn_main_without_0_1_4(tmp_path: Path) -> None:
    done = _search(tmp_path, "--dialect", "main", "--count", "1", "--jobs", "1")
    assert done.returncode == 2, done.stderr
    assert "pyserq 0.1.4 not found in" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_interpreter_search_needs_no_reference(tmp_path: Path) -> None:
    options = ("--dialect", "main", "--against", "interpreter", "--start", "238240")
    done = _search(tmp_path, *options, "--count", "1", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert "{'same': 1}" in done.stdout


def test_the_mutants_say_they_leave_fn_main_out(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(HERE / "mutants.py"), "--count", "0", "--scratch", str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PYSERQ_014_PATH": str(tmp_path / "nowhere")},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "the `fn main` programs are left out" in done.stderr
