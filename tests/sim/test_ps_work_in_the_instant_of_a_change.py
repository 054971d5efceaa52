"""`work(S)` of a ps stage read in the instant its jobs changed, before the stage goes on
to serve them (its reschedule, after the event's sessions have run).

The work read is what the jobs had left under the rate in force since the last
reschedule: nothing has been served at the new rate yet. So jobs that joined a `ps(inf)`
stage in one event (a batch) count their whole work, where serq used to read 0 (its
virtual time advanced by 0 · inf, a NaN, counts nothing); after the reschedule at the rate
of inf every job ends in that instant and none has work left. The expected readings are
pyserq 0.1.2's, signs included (the spec leaves 0 · inf open: the reference decides).
"""

from __future__ import annotations

import math

import pytest

from serq.sim.api import compile_program, execute
from tests.sim.both_paths import run_text

BATCH = """
stage S : ps({cap});
workload {{ arrive batch(3); }}
session {{
  observe before = work(S);
  run S ({work});
  observe after = work(S);
}}
run {{ horizon 10; warmup 0; seed 1; }}
"""

CASES = [
    # jobs of 3 joining ps(inf) in one event: 0, then 3, then 6 before the reschedule
    ("inf", "3", [-0.0, 3.0, 6.0], [0.0, 0.0, -0.0]),
    # after the first completion at the rate of inf, the others end in that instant
    ("inf", "1 + serial", [-0.0, 1.0, 3.0], [0.0, 0.0, -0.0]),
    # inf for three jobs only: two end at once, then the third is served at rate 1
    ("present > 2 ? inf : 1", "1 + serial", [-0.0, 1.0, 3.0], [0.0, 1.0, -0.0]),
    # jobs of infinite work: counted whole as they join, then all end in that instant
    ("inf", "inf", [-0.0, math.inf, math.inf], [0.0, 0.0, -0.0]),
    # inf while two or more are present: the third, of no work, ends at once, then two
    ("present > 1 ? inf : 1", "2 - serial", [-0.0, 2.0, 3.0], [3.0, 0.0, -0.0]),
    # a finite rate: nothing served in the instant of the batch either
    ("2", "1 + serial", [-0.0, 1.0, 3.0], [3.0, 1.0, -0.0]),
]


def _readings(text: str, codegen: bool) -> dict[str, list[float]]:
    report, _ = run_text(text, "ps_work.sq", codegen=codegen)
    return {name: list(report.observe(name).samples) for name in ("before", "after")}


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize(("cap", "work", "before", "after"), CASES)
def test_work_in_the_instant_of_a_change(cap, work, before, after, codegen):
    got = _readings(BATCH.format(cap=cap, work=work), codegen)
    assert got == {"before": before, "after": after}
    signs = {k: [str(x) for x in v] for k, v in got.items()}  # -0.0 and 0.0 as 0.1.2's
    assert signs == {"before": [str(x) for x in before], "after": [str(x) for x in after]}


JOINS = """
stage S : ps(inf);
stage gate : delay;
workload { arrive batch(4); }
session {
  run gate (serial == 0 ? 0 : 1);
  observe w = work(S);
  run S (3);
}
run { horizon 10; warmup 0; seed 1; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_work_after_a_reschedule_at_the_rate_of_inf_is_none(codegen):
    """Sessions released one event after another (by a delay) each find the stage
    rescheduled at the rate of inf after the one before joined: nothing left."""
    compiled, _ = compile_program(JOINS, "joins.sq")
    report, _ = execute(compiled, codegen=codegen)
    assert [str(x) for x in report.observe("w").samples] == ["-0.0", "-0.0", "0.0", "0.0"]
