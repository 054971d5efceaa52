"""Holders whose growths preempt one another for good are a W-stall at the end of the run.

Eight requests at a step engine whose memory preempts by keys that pick a holder that has
done more (`preempt by (admission)`, the oldest; `(-position)`, the furthest): each growth
takes the blocks of one that was nearly done, which comes back and does the same, and no
request ever finishes. Before, the run went to its horizon with `ended` 0 and only the
report's `stuck` count said so (the W-stall of a livelock covered only a hold preempted
while nothing else held the pool). Now the sessions so preempted that are still short of
their previous preemption at the end are a warning at their hold, on both paths; a pool
where such preemptions happened but every session got past them (`preempt lifo` here)
gives none.
"""

from __future__ import annotations

import pytest

from tests.sim.both_paths import run_text

PROGRAM = """pool reqs { cap 8; admit via engine; }
pool kv { cap CAP; block 16; preempt PREEMPT; }
stage engine : step { budget 256; cost 1; memory kv; }
workload { arrive batch(8); }
session {
  hold reqs (1), kv (16) {
    run engine prefill (16) growing kv;
    run engine decode (OUT) growing kv;
  }
}
run { horizon 4000; }
"""


def _run(cap: int, preempt: str, out: int, codegen: bool):
    text = PROGRAM.replace("CAP", str(cap)).replace("PREEMPT", preempt).replace("OUT", str(out))
    return run_text(text, "livelock.sq", codegen=codegen)


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize(
    ("cap", "preempt", "out"),
    [
        (160, "by (admission) requeue tail", 100),
        (256, "by (-position) requeue tail", 300),
        (400, "by (admission, -admission) requeue tail", 100),
    ],
)
def test_holders_preempting_one_another_are_a_livelock(cap, preempt, out, codegen):
    report, said = _run(cap, preempt, out, codegen)
    assert report.ended == 0
    assert report.pools[1].stuck == 8
    [warning] = [d for d in said if d.code == "W-stall"]
    assert warning.message.startswith(
        "a livelock at pool `kv`: 8 sessions were preempted again without getting past the "
        "previous preemption while other sessions held the pool, and 8 of them were still "
        "short of it when the run ended (the first, session "
    )
    assert (warning.span.line, warning.span.column) == (6, 3)  # the hold


@pytest.mark.parametrize("codegen", [True, False])
def test_holders_that_get_past_their_preemptions_are_no_livelock(codegen):
    report, said = _run(256, "lifo", 100, codegen)
    assert report.ended == 8
    assert report.pools[1].stuck > 0  # preempted again without progress, for a while
    assert not [d for d in said if d.code == "W-stall"]
