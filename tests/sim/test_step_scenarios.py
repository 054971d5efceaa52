"""The step engine against the reference on the scenarios of issue 6 (spec §7, "How the
correspondence is checked"): the one-request vLLM program on the step clock (cost 1),
written out per scenario as tests/sim/programs/step_*.sq. On each, every request's
first-token step, last-token step and preemption count must be pyserq 0.1.2's.

A request's first-token step is its first `first` sample (a preempted request prefills
again), its last-token step its `last` sample (none when it was rejected), and its
preemptions are its admissions (`resumed` samples) less one.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).resolve().parent / "programs"
SCENARIOS = sorted(p.name for p in PROGRAMS.glob("step_*.sq"))
# `serve exclusive prefill` (spec §3 "Stages"): the mixed scenario under the rule, on 39 and
# on 30 blocks; held to the reference the same way, and not among issue 6's nine.
EXCLUSIVE = sorted(p.name for p in PROGRAMS.glob("step_exclusive*.sq"))

# What each scenario must exercise, so that a change of the program cannot empty it.
EXERCISES = {
    "step_self_preemption.sq": {"preemptions": 1, "rejected": 1},
    "step_mixed39.sq": {"preemptions": 1},
    "step_serve_admission.sq": {"preemptions": 2},
    "step_serve_prefill_first.sq": {"preemptions": 2},
    "step_exclusive_preempt.sq": {"preemptions": 2},
}


def per_request(report) -> dict[int, tuple[float | None, float | None, int]]:
    """Per session: (first-token step, last-token step, preemptions)."""
    first: dict[int, float] = {}
    last: dict[int, float] = {}
    admissions: dict[int, int] = defaultdict(int)
    o = report.observe("first")
    for session, time in zip(o.sessions, o.times, strict=True):
        first.setdefault(session, time)
    o = report.observe("last")
    for session, time in zip(o.sessions, o.times, strict=True):
        last[session] = time
    for session in report.observe("resumed").sessions:
        admissions[session] += 1
    return {s: (first.get(s), last.get(s), admissions[s] - 1) for s in sorted(admissions)}


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_matches_the_reference(impl, reference, name):
    """Every request's first-token step, last-token step and preemption count are the
    reference's, and so are the pool's preemptions and rejections."""
    ours = impl.run_fresh(PROGRAMS / name)
    theirs = reference.run(PROGRAMS / name)
    assert per_request(ours) == per_request(theirs)
    for key in ("preemptions", "rejected", "stuck", "admissions"):
        assert [getattr(p, key) for p in ours.pools] == [getattr(p, key) for p in theirs.pools]
    assert ours.stages[0].iterations == theirs.stages[0].iterations


@pytest.mark.parametrize("name", sorted(EXERCISES))
def test_scenario_exercises_what_it_names(impl, name):
    """The scenario still preempts and rejects as its comment says."""
    kv = impl.run(PROGRAMS / name).pools[1]
    for key, count in EXERCISES[name].items():
        assert getattr(kv, key) == count, key


def test_exclusive_prefill_is_not_admission_order(impl):
    """The rule changes the schedule: the exclusive scenario on 39 blocks takes more
    iterations than the same requests served in admission order (step_mixed39)."""
    exclusive = impl.run(PROGRAMS / "step_exclusive.sq").stages[0].iterations
    admission = impl.run(PROGRAMS / "step_mixed39.sq").stages[0].iterations
    assert exclusive > admission


def test_every_scenario_is_a_program():
    """The nine scenarios of issue 6 are all here, next to the exclusive-prefill ones."""
    assert len(set(SCENARIOS) - set(EXCLUSIVE)) == 9
    assert len(EXCLUSIVE) == 2
