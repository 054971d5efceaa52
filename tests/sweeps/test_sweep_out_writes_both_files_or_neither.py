"""`serq sweep --out r.csv` (or `.parquet`) writes two files, the points and the runs beside
them; a failure while writing the second (a full disk) left a new `r.csv` beside the old
`r.runs.csv` (round 31, NOTES §70 "Left"). Both are written to their temporary files first
and renamed only then, so such a failure leaves both as they were."""

from __future__ import annotations

import errno
import importlib.util
import os
from pathlib import Path

import pytest

from serq.cli import main

ROOT = Path(__file__).resolve().parents[2]
MM1 = (ROOT / "examples" / "mm1.sq").read_text(encoding="utf-8")
OLD = b"an older file that a failed write must leave whole\n"


@pytest.mark.parametrize(
    "suffix",
    [
        ".csv",
        pytest.param(
            ".parquet",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("pyarrow") is None, reason="no pyarrow"
            ),
        ),
    ],
)
def test_a_failure_at_the_second_file_keeps_both(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    points, runs = tmp_path / f"r{suffix}", tmp_path / f"r.runs{suffix}"
    points.write_bytes(OLD)
    runs.write_bytes(OLD)
    synced = []
    real_fsync = os.fsync

    def full_at_the_second(fd: int) -> None:
        synced.append(fd)
        if len(synced) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_fsync(fd)

    monkeypatch.setattr("serq.file_output.os.fsync", full_at_the_second)
    args = ["sweep", "mm1.sq", "--set", "lambda=0.5,0.6", "--horizon", "200", "--warmup", "10"]
    status = main([*args, "--jobs", "1", "--out", points.name])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "No space left on device" in err
    assert points.read_bytes() == OLD
    assert runs.read_bytes() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mm1.sq", points.name, runs.name]
    monkeypatch.setattr("serq.file_output.os.fsync", real_fsync)
    assert main([*args, "--jobs", "1", "--out", points.name]) == 0
    assert points.read_bytes() != OLD and runs.read_bytes() != OLD


def test_the_files_written_are_named_as_positions_name_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An escape in `--out`'s name reached the terminal raw in the "wrote" line."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mm1.sq").write_text(MM1, encoding="utf-8")
    args = ["sweep", "mm1.sq", "--set", "lambda=0.5", "--horizon", "100", "--warmup", "10"]
    assert main([*args, "--jobs", "1", "--out", "r\x1b[2J.csv"]) == 0
    err = capsys.readouterr().err
    assert '; wrote "r\\u001b[2J.csv", "r\\u001b[2J.runs.csv"' in err
    assert "\x1b" not in err
