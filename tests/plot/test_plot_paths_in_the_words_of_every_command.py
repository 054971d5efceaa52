"""`serq plot`'s files in the words of every command (`unreadable`, NOTES §58), and its
picture's path checked before the drawing, as `serq sweep --out` is: it said "No such
file or directory", "Not a directory" and "Is a directory" (the system's words), and a
folder that does not exist only after drawing (round 28, NOTES §64)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("matplotlib")

from serq import cli  # noqa: E402

RESULTS = "lambda,runs,sojourn,sojourn_ci\n0.5,2,1.5,0.1\n0.6,2,2.0,0.2\n"


def _plot(capsys, *argv: str) -> tuple[int, str]:
    status = cli.main(["plot", *argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


def test_results_that_are_missing(tmp_path, capsys):
    missing = tmp_path / "r.csv"
    status, err = _plot(capsys, str(missing), "--x", "lambda", "--y", "sojourn", "-o", "o.png")
    assert status == 2 and f"cannot read `{missing}`: no such file" in err


@pytest.mark.parametrize(
    ("make", "says"),
    [
        ("folder", "it is a directory"),
        ("nowhere", "the directory `{tmp}/none` does not exist"),
        ("below a file", "`{tmp}/f` is not a directory"),
    ],
)
def test_a_picture_that_cannot_be_written_is_refused_before_drawing(tmp_path, capsys, make, says):
    results = tmp_path / "r.csv"
    results.write_text(RESULTS)
    out = {"folder": "o.png", "nowhere": "none/o.png", "below a file": "f/o.png"}[make]
    if make == "folder":
        (tmp_path / "o.png").mkdir()
    if make == "below a file":
        (tmp_path / "f").write_text("")
    picture = tmp_path / out
    argv = [str(results), "--x", "lambda", "--y", "sojourn", "-o", str(picture)]
    status, err = _plot(capsys, *argv)
    assert status == 2
    assert f"cannot write `{picture}`: {says.format(tmp=tmp_path)}" in err


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")
def test_a_folder_where_no_file_can_be_made(tmp_path, capsys):
    results = tmp_path / "r.csv"
    results.write_text(RESULTS)
    argv = [str(results), "--x", "lambda", "--y", "sojourn", "-o", "/proc/serq-plot.png"]
    status, err = _plot(capsys, *argv)
    assert status == 2 and "cannot write `/proc/serq-plot.png`: " in err  # as root: no such file
