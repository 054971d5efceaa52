"""`serq sweep` checks every point of its grid before any run: a grid of a million points
took about 1.8 hours there with nothing on the terminal (§64 left it). A check that lasts
half a second now shows a bar on a terminal, as the runs and `serq run` do (§66); a pipe
gets no bar."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")
# 2,000 points, the negative rates among them fail the check: the sweep stops after
# checking every point (about 2.5 s here, well past the bar's half second), with no run
COMMAND = [sys.executable, "-m", "serq.cli", "sweep", MM1, "--set", "lambda=-1:0.999:0.001"]


def _on_a_terminal() -> tuple[int, str]:
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        COMMAND, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower, env=env
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    status = process.wait(timeout=300)
    os.close(leader)
    return status, b"".join(chunks).decode("utf-8", "replace")


def test_a_long_check_shows_a_bar_on_a_terminal() -> None:
    status, seen = _on_a_terminal()
    assert status == 1, seen
    assert "checking the points before any run" in seen
    assert "E-constant" in seen and "Traceback" not in seen


def test_a_pipe_gets_no_bar() -> None:
    done = subprocess.run(COMMAND, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 1, done.stderr
    assert "checking the points" not in done.stderr
    assert "E-constant" in done.stderr
