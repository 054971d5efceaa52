"""LRU eviction with blocks: `Cache.evict_to` takes the blocks it would take one at a time
from an entry at once when every number is whole (`serq.sim.cache._blocks`); the result,
every entry's units, the total and the counts, must be those of the one-block loop, for
whole and fractional blocks, entries and limits alike (below `BULK_BLOCKS` blocks to go:
beyond, blocks tiny against the units go at once by a rule of their own)."""

from __future__ import annotations

import math
import random

import pytest

from serq.sim.cache import BULK_BLOCKS, Cache
from serq.sim.core import Engine

EPS = 1e-9  # cache._EPS: a total within it of the limit is at the limit


def one_block_at_a_time(units: list[float], total: float, limit: float, block: float):
    """The LRU loop as it takes one block (or the rest of an entry) per turn; an entry a
    block leaves with at most EPS (float noise) is gone, its noise kept in the total when
    it is above 0 (tests/sim/NOTES.md §28)."""
    removed, taken = 0, 0.0
    entries = list(units)
    bound = limit + EPS
    noise = False
    while total > bound and entries:
        take = entries[0]
        noise = False
        if take > block:
            take = block
            entries[0] -= take
            if entries[0] <= EPS:
                entries.pop(0)
                removed += 1
                noise = True
        else:
            entries.pop(0)
            removed += 1
        total -= take
        taken += take
    return removed, taken, entries, total if entries or (noise and total > 0.0) else 0.0


def evicted(units: list[float], limit: float, block: float):
    cache = Cache(Engine(), None, block)
    for u in units:
        cache.put(object(), u)
    removed, taken = cache.evict_to(limit)
    return removed, taken, [e.units for e in cache.entries.values()], cache.total


@pytest.mark.parametrize("seed", range(8))
def test_blocks_at_once_are_the_blocks_one_at_a_time(seed):
    r = random.Random(seed)
    for _ in range(2500):
        block = r.choice((1.0, 2.0, 3.0, 16.0, 2.5, 0.5, 7.0, 0.1))
        units = []
        for _ in range(r.randint(1, 6)):
            kind = r.random()
            if kind < 0.6:
                u = float(r.randint(1, 50)) * (block if r.random() < 0.5 else 1.0)
            elif kind < 0.8:
                u = r.uniform(0.1, 300)
            else:
                u = float(r.randint(1, 5000))
            units.append(u)
        cache = Cache(Engine(), None, block)
        for u in units:
            cache.put(object(), u)
        total = cache.total
        limit = r.choice(
            (
                total - r.uniform(0, total),
                float(r.randint(0, int(total))),
                total - block * r.randint(0, 40),
                -5.0,
                0.0,
                total,
            )
        )
        if (total - limit) / block > BULK_BLOCKS:
            continue  # tiny blocks: a rule of their own (tests/fuzz/found/tiny_block_eviction.sq)
        assert evicted(units, limit, block) == one_block_at_a_time(units, total, limit, block)


def test_a_large_eviction_takes_whole_blocks_from_the_oldest():
    """4112 units out of entries of 4000, 3000 and 40 with blocks of 16: the first entry
    goes whole (its last block as its rest), then 7 blocks of the second."""
    assert evicted([4000.0, 3000.0, 40.0], 2928.0, 16.0) == (1, 4112.0, [2888.0, 40.0], 2928.0)


def consumed_by_hand(units: float, reuse: float, block: float | None) -> tuple[float, float]:
    """What `Cache.consume` takes of an entry of `units` for a `reuse`, and what stays:
    `max(reuse, 0.0)` (the sign of a zero kept) rounded down to whole blocks, or all of
    the entry when that covers it (NOTES.md §71: the reuse is rounded, not the entry)."""
    hit = max(reuse, 0.0)
    if block is not None and math.isfinite(hit / block):
        hit = math.floor(hit / block) * block
    taken = units if hit >= units else hit
    return taken, units - taken


@pytest.mark.parametrize("block", [None, 16.0, 0.5])
@pytest.mark.parametrize("units", [0.5, 40.0, 48.0, math.inf])
@pytest.mark.parametrize("reuse", [-math.inf, -1.0, -0.0, 0.0, 0.25, 17.0, 48.0, 1e300, math.inf])
def test_consume_takes_the_reuse_in_whole_blocks(block, units, reuse):
    """An entry put, then consumed: the units taken (a zero's sign too), those left, the
    total, and a second `put` replacing what stays."""
    cache = Cache(Engine(), None, block)
    owner = object()
    cache.put(owner, units)
    taken = cache.consume(owner, reuse)
    expected, left = consumed_by_hand(units, reuse, block)
    assert (taken, math.copysign(1.0, taken)) == (expected, math.copysign(1.0, expected))
    kept = [e.units for e in cache.entries.values()]  # inf - inf leaves NaN, kept
    assert repr(kept) == repr([] if left <= 0 else [left])
    assert repr(cache.total) == repr(units - expected)
    assert all(e.owner is None for e in cache.entries.values()) and owner not in cache.live
    cache.put(owner, 3.0)
    assert cache.live[owner].units == 3.0 and repr(cache.total) == repr(units - expected + 3.0)
