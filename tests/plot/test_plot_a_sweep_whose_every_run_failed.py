"""`serq plot` of a sweep whose every run failed says so.

Such a sweep's results name no observation (the names come from the runs that finished),
so `serq plot r.csv --x g --y w` said "the results have no column `w` (they have point,
g, runs, failed, error, warning)": true of the file, but the user's program does observe
`w`, and the reason, every run's `E-run`, was not said. It now says every run failed and
gives the first error; status 1 (nothing to draw), as before.
"""

from __future__ import annotations

import pytest

from serq import cli

PROGRAM = """let g = 1;
stage server : fifo(1);
workload { arrive poisson(0.5); }
session {
  branch (floor(~uniform(0, g))) { run server (~exp(2)); } else { run server (~exp(1)); }
  observe w = now;
}
run { horizon 50; seed 1; }
"""


@pytest.mark.parametrize("suffix", [".csv", ".json"])
def test_plot_of_a_sweep_whose_runs_all_failed(capsys, tmp_path, suffix):
    program = tmp_path / "fail.sq"
    program.write_text(PROGRAM)
    out = tmp_path / f"r{suffix}"
    sweep = ["sweep", str(program), "--set", "g=3", "--seeds", "2", "--jobs", "1"]
    assert cli.main([*sweep, "--out", str(out)]) == 1  # its runs failed
    capsys.readouterr()
    status = cli.main(["plot", str(out), "--x", "g", "--y", "w", "-o", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert status == 1, err
    assert "every run of the sweep failed" in err, err
    assert "the branch guard is 2" in err, err
    assert "no column" not in err, err
    assert not (tmp_path / "p.png").exists()


def test_a_column_no_sweep_has_is_still_named(capsys, tmp_path):
    program = tmp_path / "fail.sq"
    program.write_text(PROGRAM)
    out = tmp_path / "r.csv"
    assert (
        cli.main(["sweep", str(program), "--set", "g=1,3", "--jobs", "1", "--out", str(out)]) == 1
    )
    capsys.readouterr()
    status = cli.main(["plot", str(out), "--x", "g", "--y", "v", "-o", str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert status == 1 and "no column `v`" in err, err


@pytest.mark.parametrize("names", [(None, "w"), ("g", None), ("g", 3), ("g", "w", 1.5)])
def test_a_column_that_is_not_a_name_is_a_type_error(names):
    """`result.plot(x="g", y=None)` raised `KeyError: None` from inside the drawing."""
    from serq.plot import plot_points

    x, y, *hue = names
    with pytest.raises(TypeError, match="names a column"):
        plot_points([{"g": 1, "w": 2.0}], x, y, hue=hue[0] if hue else None)


@pytest.mark.parametrize("axis", ["x", "y"])
def test_a_log_axis_with_nothing_positive(capsys, tmp_path, axis):
    """`--log-y` of a column of zeros printed matplotlib's UserWarning, with serq's own
    source path, on stderr and drew a linear axis, status 0."""
    results = tmp_path / "r.csv"
    results.write_text("point,g,runs,failed,w,w_ci,error,warning\n0,0,1,0,0,0,,\n1,0,1,0,0,0,,\n")
    flag = "--log-x" if axis == "x" else "--log-y"
    status = cli.main(
        ["plot", str(results), "--x", "g", "--y", "w", flag, "-o", str(tmp_path / "p.png")]
    )
    err = capsys.readouterr().err
    assert status == 1, err
    assert f"on a logarithmic {axis} axis" in err and "Warning" not in err, err
