"""The recorder's fast-forwarded span (`StatsRecorder.iterations`) against the same
iterations told one at a time (`iteration` at each start), field by field, bit for bit:
spans short and long (around the length from which `_gaps_added` is asked), clocks in
every binade and across binades, gaps that round, the warm-up before, inside and after
the span (before it, `iterations` takes its general path). The running iteration, the
span's first, is one of its shape, as a candidate is (`StepStage.start`)."""

from __future__ import annotations

import random
from itertools import accumulate, repeat

import pytest

from serq.sim import recorder as recorder_module
from serq.sim.recorder import StatsRecorder
from tests.report.conftest import link

PROGRAM = """
pool kv { cap 100; preempt lifo; }
stage engine : step { budget 64; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (3) { run engine decode (4) growing kv; }
}
run { horizon 30; warmup 2; seed 1; }
"""

FIELDS = ("iterations", "started", "ends", "carried", "batches", "batch_decodes", "batch_time")


def _state(r: StatsRecorder) -> tuple:
    """Everything the recorder keeps of the stage but `skipped` (a span counts its own)."""
    s = r.stage_record(0)
    levels = (*s.kinds, s.decodes, s.present, s.busy)
    on = None if s.on is None else next(i for i, k in enumerate(s.kinds) if k is s.on)
    # a level at 0 adds nothing whenever its `since` is: a span moves it, steps need not
    return (
        tuple(getattr(s, name) for name in FIELDS),
        tuple((level.area, level.since if level.value else 0.0, level.value) for level in levels),
        on,
    )


def _case(seed: int) -> tuple[float, float, list[float], int, float]:
    """(warm-up, first start, the span's starts, its decodes, the span's last end) of
    family member `seed`."""
    rng = random.Random(seed)
    first = rng.choice([0.0, 0.5, 3.0, 1000.0 + rng.random(), 2.0**30, 1e6 / 3, 2.0**52 / 7])
    # a cost that rounds against the clock, one that is a power of two, one of many bits
    cost = rng.choice([1e-7, 0.1, 2.0**-10, 1 / 3, rng.uniform(1e-4, 10.0), 2.0**20])
    while not first + cost > first:  # an iteration lasts: the clock moves (`start`)
        cost *= 1024.0
    count = rng.choice([1, 2, 15, 16, 17, rng.randint(1, 60), rng.randint(100, 400)])
    first_end = first + cost
    ends = list(accumulate(repeat(cost, count), initial=first_end))
    starts = ends[:-1]
    warmup = rng.choice([0.0, first, first_end, starts[len(starts) // 2], ends[-1] + 1.0])
    return warmup, first, starts, rng.randint(1, 9), ends[-1]


@pytest.mark.parametrize("seed", range(300))
def test_a_span_is_its_iterations_one_at_a_time(seed: int) -> None:
    warmup, first, starts, decodes, last_end = _case(seed)
    program = link(PROGRAM)
    bulk, single = StatsRecorder(program, warmup), StatsRecorder(program, warmup)
    for r in (bulk, single):
        r.stage_state(0, first, decodes, 1.0)
        r.iteration(0, first, 0, decodes, float(decodes), starts[0])
    bulk.iterations(0, starts, 0, decodes, float(decodes), last_end)
    for t, end in zip(starts, [*starts[1:], last_end], strict=True):
        single.iteration(0, t, 0, decodes, float(decodes), end)
    assert bulk.stage_record(0).skipped == len(starts)
    assert _state(bulk) == _state(single)
    for r in (bulk, single):
        r.iteration_end(0, last_end)
    assert _state(bulk) == _state(single)


def test_the_family_reaches_both_ways_of_adding_the_terms(monkeypatch) -> None:
    """The members take the short spans' sums and `_gaps_added`'s, and both of the latter's
    answers (an exact sum, and None: term by term)."""
    seen = {"short": 0, "exact": 0, "by term": 0}
    gaps_added = recorder_module._gaps_added

    def spy(area, weighted, batch_time, decodes, first, last):
        sums = gaps_added(area, weighted, batch_time, decodes, first, last)
        seen["by term" if sums is None else "exact"] += 1
        return sums

    monkeypatch.setattr(recorder_module, "_gaps_added", spy)
    for seed in range(300):
        warmup, first, starts, decodes, last_end = _case(seed)
        r = StatsRecorder(link(PROGRAM), warmup)
        r.iteration(0, first, 0, decodes, float(decodes), starts[0])
        before = sum(seen.values())
        r.iterations(0, starts, 0, decodes, float(decodes), last_end)
        if first >= warmup and sum(seen.values()) == before:
            seen["short"] += 1
    assert all(seen.values()), seen
