"""The report in a notebook (`_repr_html_`, `to_pandas`) and the gauge sparklines, which a
terminal shows and piped or recorded text does not."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

import serq
from serq.report import render_text, report_text
from serq.report.sparkline import SPARK_LEVELS, sparkline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    return serq.run(serq.compile(str(ROOT / "examples" / "ps.sq"), horizon=600, warmup=60))


def test_html_has_the_terminal_tables(report):
    html = report._repr_html_()
    text = report_text(report)
    assert html.count("<table>") == 3  # observes, gauges, stages
    cells = re.findall(r"<td>([^<]*)</td>", html)
    for cell in ("sojourn", "jobs", "cpu", str(report.observe("sojourn").count)):
        assert cell in cells and cell in text
    row = next(line for line in text.splitlines() if line.startswith("sojourn"))
    assert row.split() == cells[: len(row.split())]  # the same numbers, the same order
    assert "<th>±95%</th>" in html and f"seed {report.seed}" in html


def test_to_pandas(report):
    frames = report.to_pandas()
    assert set(frames) == {"observes", "gauges", "stages", "pools"}
    observes = frames["observes"]
    assert list(observes["name"]) == ["sojourn"] and "samples" not in observes.columns
    assert observes.loc[0, "mean"] == report.observe("sojourn").mean
    assert list(frames["stages"]["name"]) == ["cpu"] and frames["pools"].empty
    assert "mean_used" in frames["pools"].columns


def test_sparkline_shape():
    # 0 on [0, 5), 8 on [5, 10): the first half low, the second high
    assert sparkline((0.0, 5.0), (0.0, 8.0), 0.0, 10.0, width=4) == "▁▁██"
    assert sparkline((0.0,), (3.0,), 0.0, 10.0, width=5) == SPARK_LEVELS[3] * 5  # constant
    ramp = sparkline(tuple(float(t) for t in range(8)), tuple(float(v) for v in range(8)), 0, 8, 8)
    assert ramp == SPARK_LEVELS
    assert sparkline((4.0,), (1.0,), 0.0, 8.0, width=2)[0] == " "  # no value before 4
    assert sparkline((), (), 0.0, 1.0) == sparkline((0.0,), (1.0,), 1.0, 1.0) == ""
    assert sparkline((0.0, 1.0), (-2.0, float("inf")), 0.0, 2.0, width=2) == SPARK_LEVELS[3] + " "  # inf is not drawn


def test_sparklines_only_on_a_terminal(report):
    terminal = io.StringIO()
    render_text(report, Console(file=terminal, force_terminal=True, width=120))
    assert "over time" in terminal.getvalue()
    assert any(ch in terminal.getvalue() for ch in SPARK_LEVELS)
    piped = io.StringIO()
    render_text(report, Console(file=piped, force_terminal=False, width=120))
    assert "over time" not in piped.getvalue() and "over time" not in report_text(report)
