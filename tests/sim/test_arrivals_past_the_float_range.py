"""Under `horizon inf` with `arrivals N`, an open workload whose next arrival falls past the
float range (gaps of 1e308: the second arrival at 1e308 + 1e308 = inf) stops its arrivals:
an `E-run` at the `arrive` clause on every path, never an arrival at time inf. The straight
loop (serq/sim/straight.py) took such an arrival for a departure and failed with a
`TypeError` (an `E-internal`) where no job was in service, and the event paths ran the
sessions at t = inf in silence (round 21, tests/sim/NOTES.md §48)."""

from __future__ import annotations

import pytest

from serq.sim import straight
from serq.sim.api import compile_program, execute

PROGRAM = """stage svc : {stage};
workload {{ arrive {arrive}; }}
session {{ run svc ({work}); }}
run {{ horizon {horizon}; seed 1; arrivals 3; }}
"""

WAYS = [
    pytest.param(True, True, id="straight"),
    pytest.param(False, True, id="generated"),
    pytest.param(False, False, id="interpreter"),
]


def _run(text: str, straight_on: bool, codegen: bool, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(straight, "ENABLED", straight_on)
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    return execute(compiled, codegen=codegen)


@pytest.mark.parametrize(("straight_on", "codegen"), WAYS)
@pytest.mark.parametrize("stage", ["fifo(1)", "fifo(2)", "ps(1)", "delay"])
@pytest.mark.parametrize("work", ["0", "1"])
@pytest.mark.parametrize("arrive", ["renewal(1e308)", "poisson(5e-324)"])
def test_an_arrival_past_the_float_range_stops_the_arrivals_at_the_arrive_clause(
    straight_on, codegen, stage, work, arrive, monkeypatch
):
    text = PROGRAM.format(stage=stage, arrive=arrive, work=work, horizon="inf")
    report, diagnostics = _run(text, straight_on, codegen, monkeypatch)
    assert report is None
    [d] = diagnostics
    assert d.code == "E-run"
    assert (d.span.line, d.span.column) == (2, 12)
    assert "requested: the next would come after t = " in d.message
    assert d.message.endswith("past the float range")


@pytest.mark.parametrize(("straight_on", "codegen"), WAYS)
def test_a_finite_horizon_and_gaps_that_fit_are_as_before(straight_on, codegen, monkeypatch):
    # the arrival at inf is past a finite horizon: the limit is not reached there, as before
    text = PROGRAM.format(stage="fifo(1)", arrive="renewal(1e308)", work="0", horizon="1.5e308")
    _, diagnostics = _run(text, straight_on, codegen, monkeypatch)
    assert [d.code for d in diagnostics] == ["E-run"]
    assert "reached before the requested arrivals: got 1, requested 3" in diagnostics[0].message
    # gaps of 1e307: the three arrivals fit in the float range and the run drains
    text = PROGRAM.format(stage="fifo(1)", arrive="renewal(1e307)", work="1", horizon="inf")
    report, diagnostics = _run(text, straight_on, codegen, monkeypatch)
    assert report is not None, diagnostics
    assert (report.arrivals, report.ended) == (3, 3)
