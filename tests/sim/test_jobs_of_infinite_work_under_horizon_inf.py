"""Under `horizon inf` with `arrivals N`, a job of infinite work never ends, as under a
finite horizon (docs/domains-and-stalls.md): the run stalls at the `arrive` clause with the
stage's `W-stall`, on every path. A delay or fifo stage scheduled its completion at
now + inf = inf, and the event loops, the generated one and the straight fifo loop fired it
under a horizon of inf: the session went on at t = inf and the run "drained" there in
silence (`end inf`, `ended` 3; round 24, tests/sim/NOTES.md §55). No event at inf fires now
(`core.LATEST`); a ps stage and a step engine were already right, and are checked here too.
"""

from __future__ import annotations

import pytest

from serq.sim import straight
from serq.sim.api import compile_program, execute

PROGRAM = """stage d : {stage};
workload {{ arrive renewal(2); }}
session {{
  observe start = now;
  run d (serial == 1 ? {work} : 1);
  observe stop = now;
}}
run {{ arrivals 3; horizon {horizon}; warmup 0; seed 1; }}
"""

STEP = """pool kv {{ cap 1000; admit via e; }}
stage e : step {{ budget 16; cost {cost}; memory kv; }}
workload {{ arrive renewal(2); }}
session {{
  hold kv (1) {{
    run e decode ({work}) growing kv;
  }}
  observe stop = now;
}}
run {{ arrivals 3; horizon inf; warmup 0; seed 1; }}
"""

# (straight loop on, execute's options): the straight loop where it applies, the generated
# code without it, the interpreter, every iteration stepped, the invariants checked
WAYS = [
    pytest.param(True, {}, id="default"),
    pytest.param(False, {}, id="generated"),
    pytest.param(True, {"codegen": False}, id="interpreter"),
    pytest.param(True, {"fast_forward": False}, id="stepped"),
    pytest.param(True, {"check_invariants": True}, id="checked"),
]


def _run(text: str, straight_on: bool, options: dict, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(straight, "ENABLED", straight_on)
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    return execute(compiled, **options)


@pytest.mark.parametrize(("straight_on", "options"), WAYS)
@pytest.mark.parametrize("stage", ["delay", "fifo(1)", "fifo(2)", "ps(1)"])
@pytest.mark.parametrize("work", ["inf", "1 / 0"])
def test_a_job_of_infinite_work_never_ends_under_a_horizon_of_inf(
    straight_on, options, stage, work, monkeypatch
):
    text = PROGRAM.format(stage=stage, work=work, horizon="inf")
    report, diagnostics = _run(text, straight_on, options, monkeypatch)
    assert report is None, (report.end, report.ended)
    said = {d.code: d for d in diagnostics}
    assert set(said) == {"E-run", "W-stall"}
    assert (said["E-run"].span.line, said["E-run"].span.column) == (2, 12)  # `arrive`
    assert "in a job of infinite work" in said["E-run"].message
    assert "session 1's job of infinite work since t = 4" in said["W-stall"].message


@pytest.mark.parametrize(("straight_on", "options"), WAYS)
@pytest.mark.parametrize("stage", ["delay", "fifo(1)", "fifo(2)", "ps(1)"])
def test_the_same_run_under_a_finite_horizon_says_the_same(
    straight_on, options, stage, monkeypatch
):
    finite = PROGRAM.format(stage=stage, work="inf", horizon="1e6")
    endless = PROGRAM.format(stage=stage, work="inf", horizon="inf")
    said = []
    for text in (finite, endless):
        report, diagnostics = _run(text, straight_on, options, monkeypatch)
        assert report is None
        said.append([(d.code, d.span, d.message) for d in diagnostics])
    assert said[0] == said[1]


@pytest.mark.parametrize(("straight_on", "options"), WAYS)
@pytest.mark.parametrize("stage", ["delay", "fifo(1)", "ps(1)"])
def test_work_that_ends_near_the_float_range_still_ends(straight_on, options, stage, monkeypatch):
    text = PROGRAM.format(stage=stage, work="1e308", horizon="inf")
    report, diagnostics = _run(text, straight_on, options, monkeypatch)
    assert report is not None, diagnostics
    assert (report.arrivals, report.ended) == (3, 3)
    assert report.end == pytest.approx(1e308)


@pytest.mark.parametrize(("straight_on", "options"), WAYS)
@pytest.mark.parametrize(
    ("cost", "work"),
    [("0.1", "serial == 1 ? inf : 3"), ("1 / (tokens - tokens)", "3")],
    ids=["decode-of-inf", "iteration-of-inf"],
)
def test_a_step_engine_under_a_horizon_of_inf(straight_on, options, cost, work, monkeypatch):
    report, diagnostics = _run(STEP.format(cost=cost, work=work), straight_on, options, monkeypatch)
    assert report is None
    assert any(d.code == "E-run" for d in diagnostics)
