"""The terminal report: snapshots of `report_text` (width 100, no color) for the three
traces and a noted observation. Set SERQ_UPDATE_SNAPSHOTS=1 to rewrite them."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from serq.report import render_text, report_text
from serq.report.text import number
from serq.sim.recorder import StatsRecorder
from tests.report.conftest import NOTED_PROGRAM, POOLS, STEP, link, outcome, pools_trace, step_trace

SNAPSHOTS = Path(__file__).parent / "snapshots"


def _check(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if os.environ.get("SERQ_UPDATE_SNAPSHOTS"):
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


def _step():
    r = StatsRecorder(link(STEP), 2.0)
    step_trace(r)
    return r.finish(outcome(30.0, 8, 3, 3))


def _pools():
    r = StatsRecorder(link(POOLS), 3.0)
    pools_trace(r)
    return r.finish(outcome(30.0, 5, 4, 3))


def _noted():
    program = link(NOTED_PROGRAM)
    r = StatsRecorder(program, 0.0)
    for k in range(50):
        r.observe(0, 1.0, k, 0, 0.0)
    return r.finish(outcome(10.0, 50, 50, 50))


@pytest.mark.parametrize("name", ["fifo", "step", "pools", "noted"])
def test_snapshot(name, fifo_report):
    report = {"fifo": lambda: fifo_report, "step": _step, "pools": _pools, "noted": _noted}[name]()
    _check(name, report_text(report, width=100))


def test_the_note_is_under_the_observe_table():
    text = report_text(_noted())
    assert "note: observe hit is constant 0 over 50 samples" in text
    assert text.index("observe ") < text.index("note:")


def test_render_text_prints_what_report_text_returns(fifo_report):
    console = Console(width=100, record=True, no_color=True, file=io.StringIO())
    render_text(fifo_report, console)
    assert console.export_text() == report_text(fifo_report, width=100)


def test_numbers_in_cells():
    assert [number(x) for x in (3, 2.0, 2.5, 0.027777, 15232.0575, float("nan"), float("inf"))] == [
        "3",
        "2",
        "2.5",
        "0.02778",
        "15232.1",
        "-",
        "inf",
    ]
