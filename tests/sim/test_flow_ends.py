"""Which flow ends next (tests/sim/NOTES.md §29): the one whose end time, now plus its work
left over its rate, is the earliest, ties in start order, with no work counted as done
before it is.

Flows over `up` (ps(1)) share it equally, so their rates are 1/n and their work left
carries rounding. serq used to end a flow whose work left was below 1e-12 of its work at
once, and to pick the flow with the least time to go: two flows whose times to go
differ in the last bits but whose end times round to one clock value then ended in the
order of their times to go, and a flow one unit in the last place behind another ended
with it. pyserq 0.1.2 schedules each flow's own end time and breaks a tie of end times
by start order. Found by the forms family of scripts/search_step.py (g200429).
"""

from __future__ import annotations

import pytest

from serq.sim.api import compile_program, execute

# Sessions arrive every second and each passes `up` twice in a loop, with a pause at a
# delay between: the flows at `up` come and go at every arrival and every end.
LOOPED = """\
share maxmin;
stage up : ps(1);
stage nic[2] : ps(3);
stage tool : delay;
workload { arrive renewal(1); }
session {
  set left = 2.5;
  run up, nic[0] (1);
  observe at0 = now;
  loop {
    run up, nic[0] (0.25);
    observe at0 = now;
    run up, nic[1] (1);
    tool (3);
    set left = left - 1;
    branch (left <= 0) { end; }
  }
}
run { horizon 30; warmup 0; seed 28; }
"""
# Each session passes `up` three times in a row.
STRAIGHT = """\
share maxmin;
stage up : ps(1);
stage nic[2] : ps(3);
workload { arrive renewal(1); }
session {
  run up, nic[0] (1);
  observe at0 = now;
  run up, nic[0] (0.25);
  observe at0 = now;
  run up, nic[1] (1);
  observe at0 = now;
}
run { horizon 30; warmup 0; seed 28; }
"""


def _ends(text: str) -> list[tuple[int, float]]:
    """(session, time) of every `at0` sample, the same on both event paths."""
    compiled, diagnostics = compile_program(text, "flows.sq")
    assert compiled is not None, diagnostics
    seen = []
    for codegen in (True, False):
        report, ran = execute(compiled, codegen=codegen)
        assert report is not None, [d.message for d in ran]
        samples = report.observe("at0")
        seen.append(list(zip(samples.sessions, samples.times, strict=True)))
    assert seen[0] == seen[1]
    return seen[0]


def test_end_times_that_round_together_go_in_start_order():
    # at 11.19861111111111 session 3's time to go (0.6154761904761915) is less than
    # session 4's (0.6154761904761921), but both end at 11.814087301587302: session 4's
    # flow started first
    ends = _ends(LOOPED)
    assert ends[7:10] == [(0, 11.19861111111111), (4, 11.814087301587302), (3, 11.814087301587302)]


def test_a_flow_left_with_rounding_ends_at_its_own_time():
    # session 0 ends at 5.833333333333333; session 1, with the rounding of its work left,
    # one unit in the last place later, in an event of its own
    ends = _ends(STRAIGHT)
    assert ends[3:5] == [(0, 5.833333333333333), (1, 5.833333333333334)]
    assert ends[8:10] == [(3, 11.460317460317459), (4, 11.46031746031746)]


@pytest.mark.parametrize("text", [LOOPED, STRAIGHT], ids=["looped", "straight"])
def test_the_ends_are_the_references(text, same_as_reference):
    same_as_reference(text, "flows.sq")
