"""`serq` in a child process that may write no file larger than 256 bytes (`RLIMIT_FSIZE`):
a write that fails part way, as on a full disk, for the tests of what a failed write
leaves behind."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 256  # bytes


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))  # Python ignores SIGXFSZ


def serq_limited(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `python -m serq.cli ARGS` in `cwd` under the limit, its output captured."""
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
