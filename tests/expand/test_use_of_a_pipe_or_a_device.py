"""A `use` of a named pipe or a device: the loader opened it as a file and read it to its
end, so a named pipe held `serq check` and the editor's server (every request after it
unanswered) until some writer came, and `use "/dev/zero"` read until memory ran out. A
library must be a regular file; anything else is its `E-use` at the `use`. A program given
on the command line may still be a pipe (`serq check <(...)`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")


def _check(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "serq.cli", "check", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        timeout=60,  # the old loader waited for a writer for ever
    )


@pytest.mark.parametrize(
    ("library", "kind"), [("pipe.sq", "a named pipe"), ("/dev/zero", "a device")]
)
def test_a_use_of_what_is_no_file_is_refused(tmp_path: Path, library: str, kind: str) -> None:
    os.mkfifo(tmp_path / "pipe.sq")
    (tmp_path / "main.sq").write_text(f'use "{library}";\nlet a = 1;\n')
    done = _check(tmp_path, "main.sq")
    assert done.returncode == 1, done.stderr
    assert f"error[E-use]: cannot read `{library}`: it is {kind}, not a file" in done.stderr
    assert " --> main.sq:1:5" in done.stderr


def test_a_use_of_a_folder_or_a_file_still_reads(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib.sq").write_text("def two() = 2;\n")
    (tmp_path / "main.sq").write_text('use "lib";\nuse "lib.sq";\nlet a = two();\n')
    done = _check(tmp_path, "main.sq")
    assert "cannot read `lib`: it is a directory" in done.stderr
    assert "lib.sq" not in done.stderr.replace("`lib`", "")


def test_a_program_on_a_pipe_is_still_read(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m serq.cli check <(printf 'let a = ;\\n')"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"},
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "expected an expression" in done.stderr
