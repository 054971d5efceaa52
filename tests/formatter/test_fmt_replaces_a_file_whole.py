"""`serq fmt FILE` replaces the file whole or not at all (round 31, NOTES §70).

It wrote the new text over the file in place: a write that failed part way (a full
disk, a file size limit, Ctrl-C) left the user's program truncated. It now writes a
temporary file beside it and renames that over it, with the file's permission bits, and
through a symbolic link rewrites the link's target."""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from serq.cli import main

ROOT = Path(__file__).resolve().parents[2]
UNFORMATTED = "".join(
    f"let   name_{i}   =   {i}  ;   // a comment long enough to make the file large\n"
    for i in range(200)
)
FORMATTED = "".join(
    f"let name_{i} = {i}; // a comment long enough to make the file large\n" for i in range(200)
)


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # Python ignores SIGXFSZ


def test_a_write_that_fails_part_way_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    # A real failed write: under a 4 KB file size limit the write of the 14 KB
    # formatted text fails with EFBIG after 4 KB; in place, the file kept those 4 KB.
    source = tmp_path / "big.sq"
    source.write_text(UNFORMATTED, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "fmt", str(source)],
        capture_output=True,
        cwd=ROOT,
        # no bytecode: under the limit Python would write its .pyc files cut short
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=_limit_file_size,
        timeout=120,
    )
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == 2, stderr
    assert f"serq fmt: cannot write `{source}`: File too large" in stderr
    assert "Traceback" not in stderr
    assert source.read_text(encoding="utf-8") == UNFORMATTED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.sq"]  # no temporary left


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failure_or_ctrl_c_before_the_rename_keeps_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: BaseException
) -> None:
    source = tmp_path / "a.sq"
    source.write_text(UNFORMATTED, encoding="utf-8")

    def fail(fd: int) -> None:
        raise failure

    monkeypatch.setattr("serq.file_output.os.fsync", fail)
    status = main(["fmt", str(source)])
    assert status == (130 if isinstance(failure, KeyboardInterrupt) else 2)
    assert source.read_text(encoding="utf-8") == UNFORMATTED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sq"]


def test_the_permission_bits_are_kept(tmp_path: Path) -> None:
    source = tmp_path / "a.sq"
    source.write_text(UNFORMATTED, encoding="utf-8")
    source.chmod(0o751)
    assert main(["fmt", str(source)]) == 0
    assert source.read_text(encoding="utf-8") == FORMATTED
    assert stat.S_IMODE(source.stat().st_mode) == 0o751


def test_a_symbolic_link_stays_a_link_to_the_rewritten_file(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "a.sq"
    target.write_text(UNFORMATTED, encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.sq"
    link.symlink_to(Path("real") / "a.sq")
    assert main(["fmt", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(Path("real") / "a.sq")
    assert target.read_text(encoding="utf-8") == FORMATTED
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.sq", "real"]
    assert sorted(p.name for p in (tmp_path / "real").iterdir()) == ["a.sq"]


def test_a_file_in_a_read_only_folder_is_still_formatted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No temporary file can be made there: the file is written in place, as before. (The
    # refusal is simulated: the tests may run as root, who writes in any folder.)
    source = tmp_path / "a.sq"
    source.write_text(UNFORMATTED, encoding="utf-8")

    def refuse(target: Path, old: os.stat_result | None) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("serq.file_output._temporary", refuse)
    assert main(["fmt", str(source)]) == 0
    assert source.read_text(encoding="utf-8") == FORMATTED
