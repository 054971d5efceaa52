"""`serq sweep --out`, `serq run --dump` and `serq plot -o` replace a file whole or not at
all (round 31, NOTES §70), as `serq fmt` does.

Each wrote its file in place: a write that failed part way (here a file size limit of
256 bytes, a full disk alike) left the file that was there cut short, with the new
content's first bytes. Each now writes a temporary file beside it and renames it over:
the failure is reported (status 2, one line) and the old file is as it was."""

from __future__ import annotations

import importlib.util
import os
import stat
import subprocess
from pathlib import Path

import pytest

from serq.cli import main
from tests.file_size_limit import serq_limited

ROOT = Path(__file__).resolve().parents[2]
MM1 = (ROOT / "examples" / "mm1.sq").read_text(encoding="utf-8")
OLD = "an older file that a failed write must leave whole\n" * 40
PLOT = pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="no matplotlib")


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _fails_and_keeps(done: subprocess.CompletedProcess[str], old: Path, name: str) -> None:
    assert done.returncode == 2, done.stderr
    assert f"`{name}`: File too large" in done.stderr
    assert "Traceback" not in done.stderr
    assert old.read_text(encoding="utf-8") == OLD


def test_sweep_out(tmp_path: Path) -> None:
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    (tmp_path / "r.csv").write_text(OLD, encoding="utf-8")
    args = ["sweep", "mm1.sq", "--set", "lambda=0.1:0.9:0.1", "--horizon", "200"]
    done = serq_limited([*args, "--warmup", "10", "--jobs", "1", "--out", "r.csv"], tmp_path)
    _fails_and_keeps(done, tmp_path / "r.csv", "r.csv")
    assert _files(tmp_path) == ["mm1.sq", "r.csv"]


def test_run_dump(tmp_path: Path) -> None:
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    (tmp_path / "d" / "observe").mkdir(parents=True)
    old = tmp_path / "d" / "observe" / "sojourn.csv"
    old.write_text(OLD, encoding="utf-8")
    done = serq_limited(
        ["run", "mm1.sq", "--horizon", "2000", "--warmup", "10", "--dump", "d"], tmp_path
    )
    _fails_and_keeps(done, old, "d")
    assert _files(tmp_path) == ["d", "d/observe", "d/observe/sojourn.csv", "mm1.sq"]


@PLOT
def test_plot_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    args = ["run", str(tmp_path / "mm1.sq"), "--horizon", "2000", "--warmup", "10"]
    assert main([*args, "--dump", str(tmp_path / "d")]) == 0
    (tmp_path / "p.png").write_text(OLD, encoding="utf-8")
    done = serq_limited(["plot", "--dump", "d", "-o", "p.png"], tmp_path)
    _fails_and_keeps(done, tmp_path / "p.png", "p.png")
    assert not any(".tmp" in f for f in _files(tmp_path))


def test_a_results_file_keeps_its_bits_and_its_link(tmp_path: Path) -> None:
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "r.json").write_text(OLD, encoding="utf-8")
    (tmp_path / "kept" / "r.json").chmod(0o640)
    (tmp_path / "r.json").symlink_to(Path("kept") / "r.json")
    args = ["sweep", str(tmp_path / "mm1.sq"), "--set", "lambda=0.5,0.6", "--horizon", "100"]
    assert main([*args, "--warmup", "1", "--out", str(tmp_path / "r.json")]) == 0
    assert (tmp_path / "r.json").is_symlink()
    written = tmp_path / "kept" / "r.json"
    assert written.read_text(encoding="utf-8").startswith('{\n  "schema": "serq-sweep/1"')
    assert stat.S_IMODE(written.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path / "kept")) == ["r.json"]


def test_a_new_file_gets_the_umask_and_a_device_is_written_in_place(tmp_path: Path) -> None:
    from serq.file_output import write_bytes

    old = os.umask(0o027)
    try:
        write_bytes(tmp_path / "new.csv", b"a,b\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.csv").stat().st_mode) == 0o640
    write_bytes(os.devnull, b"nothing")  # no rename over a device, even as root
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["new.csv"]


def test_a_system_without_chown_still_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Windows has no os.chown: keeping an old file's owner is skipped there, not an error.
    from serq.file_output import write_bytes

    (tmp_path / "r.csv").write_text(OLD, encoding="utf-8")
    monkeypatch.delattr(os, "chown")
    write_bytes(tmp_path / "r.csv", b"a,b\n")
    assert (tmp_path / "r.csv").read_bytes() == b"a,b\n"
    assert sorted(os.listdir(tmp_path)) == ["r.csv"]
