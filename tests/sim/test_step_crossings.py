"""A span's block crossings counted by arithmetic (`StepStage._whole_crossings`) are the
ones the general search finds (`_some_crossings`).

The stage is driven directly, on stand-ins for its pools and hold parts: residents
that cross at the same iterations (ties broken by serve rank), some that never cross
inside the span, whole and fractional positions, rooms that hold every crossing, some of
them, none, or an infinite cap.
"""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from serq.sim.step import Resident, StepStage

INF = float("inf")


def _stage() -> StepStage:
    stage = object.__new__(StepStage)
    stage.verdict = SimpleNamespace(evicts=False)  # `_kept`: the whole cache stays
    return stage


def _case(k: int) -> tuple[list[Resident], int]:
    rng = random.Random(k)
    b = rng.choice([1.0, 2.0, 4.0, 16.0, 3.0, 5.0])
    n = rng.randint(1, 9)
    m = rng.choice([2, 3, 5, 17, 64, 200])
    cached = rng.choice([0.0, b, 7 * b])
    pool = SimpleNamespace(
        block=b,
        cap=INF,
        allocated=0.0,
        held=rng.choice([0.0, 0.0, b, 9 * b]),  # reservations held (`reserve held`)
        cache=SimpleNamespace(total=cached, on_evict=None, keys=(), entries={}),
    )
    residents = []
    for _ in range(n):
        if rng.random() < 0.3 and b in (1.0, 2.0, 4.0, 16.0):
            position = rng.randint(1, 40) + rng.choice([0.5, 0.25, 0.75])  # fractional
        else:
            position = float(rng.randint(0, 60))
        alloc = (position // b + 1 + rng.choice([0, 0, 1, 3, 40])) * b  # at an edge, past it
        part = SimpleNamespace(pool=pool, alloc=alloc, position=position, consumed=0.0)
        residents.append(Resident(None, True, 1e6, part, grows=rng.random() < 0.9))
        pool.allocated += alloc
    room = rng.choice([INF, 0, 1, 2, 5, 30, 1000])
    pool.cap = INF if room == INF else pool.allocated + cached + room * b
    return residents, m


@pytest.mark.parametrize("k", range(400))
def test_counted_crossings_are_the_searched_ones(k):
    scheduled, m = _case(k)
    stage = _stage()
    counted = stage._whole_crossings(scheduled, m, set())
    if counted is None:
        return  # the general search serves this one
    searched = stage._some_crossings(scheduled, m, set())
    # the crossing that does not fit ends both lists, with its iteration as -j
    strip = [c[:2] + c[3:] if c[0] < 0 else c for c in searched]
    assert [c[:2] + c[3:] if c[0] < 0 else c for c in counted] == strip


def test_the_cases_cover_each_way_of_listing():
    """Crossings all listed (several residents, one), some before one that does not fit,
    and none at all, among the cases."""
    seen = set()
    for k in range(400):
        scheduled, m = _case(k)
        counted = _stage()._whole_crossings(scheduled, m, set())
        if counted is None:
            seen.add("general")
        elif not counted:
            seen.add("none")
        elif counted[-1][0] < 0:
            seen.add("stopped")
        elif len({c[2] for c in counted}) > 1:
            seen.add("merged")
        else:
            seen.add("one")
    assert seen == {"general", "none", "stopped", "merged", "one"}
