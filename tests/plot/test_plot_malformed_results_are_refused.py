"""`serq plot` of results a user mangled or mistyped: a `y` column of text, a quote never
closed, a file that is not UTF-8, a sweep whose every point failed drew an empty picture
(or said "'utf-8' codec can't decode ...") and exited 0; `--dump` of a directory that is
missing, or of a file, said it had no gauge/*.csv. Each is now a diagnostic and a non-zero
status, and the points of a sweep where some runs failed are still drawn."""

from __future__ import annotations

import pytest

from serq import cli


def _plot(tmp_path, capsys, text: bytes | str, y: str = "runs") -> tuple[int, str]:
    path = tmp_path / "r.csv"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    status = cli.main(["plot", str(path), "--x", "lambda", "--y", y, "-o", str(tmp_path / "o.png")])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return status, err


@pytest.mark.parametrize(
    ("text", "status", "says"),
    [
        ("lambda,runs\nabc,def\n", 1, "`runs` of the point in row 1 is `def`, not a number"),
        ("lambda,runs\n0.1,2\n0.2,many\n", 1, "row 2 is `many`, not a number"),
        ("lambda,runs\n0.1,\n0.2,\n", 1, "no point has a finite `runs` to draw"),
        ("lambda,runs\nnan,nan\n", 1, "no point has a finite `runs` to draw"),
        ('lambda,runs\n"unterminated\n', 2, "not CSV after line"),
        (b"lambda,runs\n\xff,1\n", 2, "not UTF-8 text (byte 0xFF)"),
    ],
)
def test_results_with_nothing_to_draw_are_refused(tmp_path, capsys, text, status, says):
    got, err = _plot(tmp_path, capsys, text)
    assert got == status
    assert "E-io" in err and says in err
    assert not (tmp_path / "o.png").exists()


def test_a_sweep_with_some_failed_points_is_drawn(tmp_path, capsys):
    status, err = _plot(tmp_path, capsys, "lambda,runs\n0.1,\n0.2,3\n0.3,4\n")
    assert status == 0 and err == ""
    assert (tmp_path / "o.png").stat().st_size > 0


def test_a_categorical_x_is_still_drawn(tmp_path, capsys):
    status, _ = _plot(tmp_path, capsys, "lambda,runs\nps(2),1\nfifo(1),2\n")
    assert status == 0


@pytest.mark.parametrize(("make", "says"), [(None, "no such file"), ("file", "not a directory")])
def test_dump_of_what_is_not_a_directory_cannot_be_read(tmp_path, capsys, make, says):
    target = tmp_path / "dump"
    if make == "file":
        target.write_text("x")
    status = cli.main(["plot", "--dump", str(target), "-o", str(tmp_path / "o.png")])
    err = capsys.readouterr().err
    assert status == 2
    assert f"cannot read `{target}`: {says}" in err and "Traceback" not in err
