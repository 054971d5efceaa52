"""Plots render headless: a sweep's mean with its interval, one run's dump; the pictures have
the size asked for and axes named as given."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

import serq
from serq import cli
from serq.plot import DPI, PlotError, plot_dump, plot_points, save
from tests.sweeps.conftest import MM1, ROOT, SHORT


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    result = serq.sweep(
        MM1, sets={"lambda": "0.5:0.9:0.2"}, seeds=3, jobs=1, **SHORT
    )
    path = tmp_path_factory.mktemp("sweep") / "r.csv"
    result.write(path)
    return path


def test_serq_plot_draws_the_mean_and_its_band(capsys, results, tmp_path):
    out = tmp_path / "r.png"
    assert cli.main(["plot", str(results), "--x", "lambda", "--y", "sojourn", "-o", str(out)]) == 0
    assert png_size(out) == (7 * DPI, int(4.5 * DPI))
    assert out.stat().st_size > 10_000


def test_axes_carry_the_names_given(results):
    from serq.sweeps import read_points

    figure = plot_points(read_points(results), "lambda", "sojourn")
    (ax,) = figure.axes
    assert ax.get_xlabel() == "lambda" and ax.get_ylabel().startswith("sojourn")
    assert len(ax.collections) == 1  # the band
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [0.5, 0.7, 0.9]
    bars = plot_points(read_points(results), "lambda", "sojourn", bars=True, log_x=True, log_y=True)
    ax = bars.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.containers  # error bars


def test_svg_keeps_the_names_as_text(results, tmp_path):
    out = tmp_path / "r.svg"
    assert cli.main(["plot", str(results), "--x", "lambda", "--y", "sojourn", "-o", str(out)]) == 0
    text = out.read_text()
    assert text.lstrip().startswith("<?xml") and ">lambda<" in text and "sojourn" in text


def test_hue_draws_one_line_per_value(tmp_path):
    result = serq.sweep(
        MM1, sets={"lambda": "0.5,0.8"},
        seeds=2, jobs=1, **SHORT,
    )
    rows = [dict(row, group=("a" if row["point"] % 2 else "b")) for row in result.points]
    figure = result.plot(x="lambda", y="sojourn")
    assert figure.axes[0].get_xlabel() == "lambda"
    figure = plot_points(rows, "lambda", "sojourn", hue="group")
    ax = figure.axes[0]
    assert len(ax.get_lines()) == 2
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["group = b", "group = a"]
    save(figure, tmp_path / "hue.png")


def test_a_column_that_is_not_there(capsys, results, tmp_path):
    status = cli.main(["plot", str(results), "--x", "lambda", "--y", "nope", "-o", str(tmp_path / "x.png")])
    assert status == 1 and "no column `nope`" in capsys.readouterr().err
    with pytest.raises(PlotError):
        save(plot_points([{"a": 1, "b": 2}], "a", "b"), tmp_path / "x.gif")
    assert cli.main(["plot", str(results), "--x", "lambda", "-o", str(tmp_path / "x.png")]) == 2
    assert cli.main(["plot", str(results), "--x", "a", "--y", "b", "-o", str(tmp_path / "x.pdf")]) == 2
    assert cli.main(["plot", str(tmp_path / "none.csv"), "--x", "a", "--y", "b", "-o",
                     str(tmp_path / "x.png")]) == 2


def test_plot_a_runs_dump(capsys, tmp_path):
    dump = tmp_path / "dump"
    ps = str(ROOT / "examples" / "ps.sq")
    argv = ["run", ps, "--horizon", "500", "--warmup", "50", "--dump", str(dump), "--color", "never"]
    assert cli.main(argv) == 0
    out = tmp_path / "dump.png"
    assert cli.main(["plot", "--dump", str(dump), "-o", str(out)]) == 0
    width, height = png_size(out)
    assert width == 9 * DPI and height == int(2 * 3.6 * DPI)
    figure = plot_dump(dump, "sojourn")
    gauges, histogram, ecdf = figure.axes
    assert gauges.get_legend().get_texts()[0].get_text() == "jobs"
    assert histogram.get_xlabel() == ecdf.get_xlabel() == "sojourn"
    ys = ecdf.get_lines()[0].get_ydata()
    assert ys[-1] == 1.0 and all(a <= b for a, b in zip(ys, ys[1:], strict=False))
    status = cli.main(["plot", "--dump", str(dump), "--observe", "nope", "-o", str(out)])
    assert status == 1 and "no observation `nope`" in capsys.readouterr().err
    assert cli.main(["plot", "--dump", str(tmp_path), "-o", str(out)]) == 1


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("extra.csv", "a,b\n1,2,3\n", "line 2 has more cells than the header"),
        ("numbers.json", '{"points": [1, 2]}', "`points` is not a list of objects"),
        ("object.json", '{"points": {"a": 1}}', "`points` is not a list of objects"),
        ("results.txt", "a,b\n1,2\n", "cannot read `{path}`: the suffix is none of"),
    ],
)
def test_results_that_are_not_a_sweep_s(capsys, tmp_path, name, content, reason):
    # a row longer than the header and `points` that are not objects raised TypeError and
    # AttributeError (tracebacks); the suffix's message said `cannot read` twice
    path = tmp_path / name
    path.write_text(content)
    argv = ["plot", str(path), "--x", "a", "--y", "b", "-o", str(tmp_path / "x.png")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert reason.format(path=path) in err and "Traceback" not in err
    assert err.count("cannot read") == 1
