"""`work(S)` of a flow stage holding a flow at a rate of inf is 0, not NaN.

A flow whose stages are all `ps(inf)` goes at a rate of inf and ends at the instant it
started, as a job at a ps stage of infinite speed does. Between its reschedule and its
completion (another session at the same instant, here released by a delay), `work` of its
stage read the flow's work less inf · 0, NaN, which an `observe` then recorded. Now such
a flow has no work left, as a job at a ps(inf) stage outside a flow has, and as 0.1.2 reads
it. (Before the reschedule its rate is not yet set and its whole work is read, as in
0.1.2.)
"""

from __future__ import annotations

import math

import pytest

from serq.sim import flows
from tests.sim.both_paths import run_text

FLOW = """
stage up[2] : ps(inf);
stage down[2] : ps(2);
stage gate : delay;
share maxmin;
workload { arrive batch(4); }
session {
  run gate (serial == 0 ? 0 : 1);
  observe w0 = work(up[0]);
  run up[0] (3);
  run up[0], down[1] (1);
}
run { horizon 10; warmup 0; seed 1; }
"""

# the same sessions at a plain ps(inf) stage (no run over several stages, no share)
PLAIN = FLOW.replace("share maxmin;\n", "").replace("run up[0], down[1] (1);", "run down[1] (1);")


def _readings(text: str, codegen: bool) -> list[float]:
    report, _ = run_text(text, "work_inf.sq", codegen=codegen)
    return list(report.observe("w0").samples)


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("from_scratch", [False, True])
def test_work_of_a_flow_at_rate_inf_is_zero(codegen, from_scratch, monkeypatch):
    monkeypatch.setattr(flows, "FROM_SCRATCH", from_scratch)
    got = _readings(FLOW, codegen)
    assert not any(math.isnan(x) for x in got), got
    assert got == [0.0] * 4
    assert got == _readings(PLAIN, codegen)
