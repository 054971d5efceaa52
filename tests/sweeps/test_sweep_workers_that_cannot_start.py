"""A sweep whose local pool of workers cannot start says so (round 31, NOTES §70).

Found beside the outputs written whole: under a file size limit, the pool's shared
memory (a file, `multiprocessing`'s heap arena) could not be made, and the sweep ended
in a traceback from `multiprocessing`; a full /dev/shm or a fork refused does the same.
It is now an E-io diagnostic, status 2, with `--jobs 1` as the help."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MM1 = (ROOT / "examples" / "mm1.sq").read_text(encoding="utf-8")


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (256, 256))  # Python ignores SIGXFSZ


def _serq(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "serq.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        # no bytecode: under the limit Python would write its .pyc files cut short
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=_limit_file_size,
        timeout=300,
    )


def test_a_sweep_whose_workers_cannot_start_says_so(tmp_path: Path) -> None:
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    args = ["sweep", "mm1.sq", "--set", "lambda=0.1:0.9:0.1", "--horizon", "200"]
    done = _serq([*args, "--warmup", "10", "--jobs", "2"], tmp_path)
    assert done.returncode == 2, done.stderr
    assert "cannot start 2 worker processes: File too large" in done.stderr
    assert "`--jobs 1` runs the points in this process" in done.stderr
    assert "Traceback" not in done.stderr
