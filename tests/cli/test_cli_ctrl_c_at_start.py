"""Ctrl-C in the first instants of the `serq` console script (round 31, NOTES §70).

The script pip writes from `[project.scripts]` imports its entry point before it calls
it; with `serq.cli:entry`, a SIGINT during `import serq.cli` (serq's `__init__` and the
CLI's imports, ~50 ms) came out as a traceback through serq's modules. The entry point is
now `serq_entry:entry`, a module outside the package that imports nothing of serq
before it can catch the interrupt: status 130 and one line, as `main` gives later.

Python's own start (its `site` and the .pth files of the installed packages) comes
before any of serq and is not serq's to catch: a SIGINT there may still print Python's
traceback (or kill the process before Python handles signals at all), with no frame of
serq's code in it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "examples" / "mm1.sq"
TRIES = 14


def _console_script(folder: Path) -> Path:
    """The script pip writes for the `serq` entry point of pyproject.toml (its template)."""
    project = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib in 3.10
    found = re.search(r'^serq = "([\w.]+):(\w+)"$', project, re.MULTILINE)
    assert found is not None
    module, function = found.groups()
    script = folder / "serq"
    script.write_text(
        "import re\n"
        "import sys\n"
        f"from {module} import {function}\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        f"    sys.exit({function}())\n",
        encoding="utf-8",
    )
    return script


def _start(script: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(script), "check", str(PROGRAM)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )


def _serq_frames(stderr: str) -> list[str]:
    """The traceback's frames in serq's code (the package, `serq_entry`)."""
    return [
        line.strip()
        for line in stderr.splitlines()
        if line.strip().startswith(f'File "{ROOT}') or "serq_entry" in line
    ]


def test_ctrl_c_at_any_instant_of_the_start_is_never_a_traceback_of_serq(tmp_path: Path) -> None:
    script = _console_script(tmp_path)
    began = time.monotonic()
    whole = _start(script)
    assert whole.wait(timeout=120) == 0, whole.stderr.read() if whole.stderr else ""
    took = time.monotonic() - began  # the whole command, at this machine's load
    caught = 0
    for i in range(TRIES):  # SIGINT at instants spread over the whole command
        process = _start(script)
        time.sleep(took * i / TRIES)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=120)
        assert _serq_frames(stderr) == [], stderr
        if process.returncode == 130:
            assert stderr.strip().splitlines()[-1] == "serq: interrupted", stderr
            assert "Traceback" not in stderr, stderr
            caught += 1
        elif process.returncode == 1:  # Python's own start: its traceback, none of serq
            assert "KeyboardInterrupt" in stderr, stderr
        else:  # killed before Python handles SIGINT, or finished first
            assert process.returncode in (-signal.SIGINT, 0), stderr
    assert caught > 0  # some landed in serq's part
