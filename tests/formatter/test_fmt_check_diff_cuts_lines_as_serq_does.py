"""`serq fmt --check`'s diff cuts lines where serq and an editor do (§68).

The diff cut the file with `str.splitlines`, which also cuts at a form feed, U+0085 and
U+2028: a comment holding one (a blank since §68, and text a user may paste) gave a
hunk whose `-` line ran on into the `+` line, which `patch` refused as malformed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("odd", ["\u2028", "\x0c", "\x85", "\u2029"])
def test_the_diff_has_one_line_per_line(tmp_path: Path, odd: str) -> None:
    source = tmp_path / "odd.sq"
    source.write_text(f"let  a = 1; // one{odd}two\nlet b = 2;\n", encoding="utf-8", newline="")
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "fmt", "--check", str(source)],
        capture_output=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 1
    diff = done.stdout.decode("utf-8").split("\n")
    assert diff[2] == "@@ -1,2 +1,2 @@"
    assert diff[3:6] == [
        f"-let  a = 1; // one{odd}two",
        f"+let a = 1; // one{odd}two",
        " let b = 2;",
    ]
