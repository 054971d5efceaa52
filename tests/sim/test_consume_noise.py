"""A hit on an entry with float noise (tests/sim/NOTES.md §71): the prefix consumed at an
admission is whole blocks, also when the reuse covers the whole entry.

Fourteen blocks of 0.99 cached, six of them evicted at once, leave an entry of
7.919999999999998 units, eight blocks less the noise of the subtraction. A hold whose
`reuse` reads that entry (`cachedin(kv)`) took it whole in serq: `cached` 7.92, no entry
left. Both references (0.1.2, and 0.1.4 in `fn main`) round every hit down to whole
blocks: 7.919999999999998 / 0.99 is 7.999999999999998 blocks, so the hit is seven
(6.93), and the eighth stays cached as a dead entry. serq now rounds as they do. Found by
the spec walk sweeping `block` of a prefix-cache program to 0.99 and 1.01.
"""

from __future__ import annotations

import json

import pytest

from serq.sim.api import compile_program, execute
from serq.sim.cache import Cache
from serq.sim.core import Engine

# session 0 caches 14 blocks of 0.99 at 0.5; session 1 takes 6 blocks at 1, which evicts 6
# of them at once; session 0 comes back at 3.5 and reuses what it finds
NOISY_HIT = """\
pool kv { cap 14 * 0.99; block 0.99; evict EVICT; }
stage s : delay;
workload { arrive batch(2); }
session {
  run s (serial);
  hold kv (serial == 0 ? 14 * 0.99 : 6 * 0.99) { run s (0.5); } cache (serial == 0 ? 14 * 0.99 : 0);
  run s (3 - serial);
  hold kv (1) reuse (cachedin(kv)) { run s (0.5); } cache (0);
  observe hit = cached;
}
run { horizon 10; warmup 0; seed 1; }
"""


def _program(evict: str) -> str:
    return NOISY_HIT.replace("EVICT", evict)


@pytest.mark.parametrize("evict", ["lru", "by (size)", "by (-last)"])
def test_a_hit_on_a_noisy_entry_is_whole_blocks(evict):
    """The hit is seven blocks on both event paths, fast-forwarded and stepped; the eighth
    stays cached (dead) until the end."""
    compiled, diagnostics = compile_program(_program(evict), "t.sq")
    assert compiled is not None, diagnostics
    runs = []
    for codegen in (True, False):
        for fast_forward in (True, False):
            report, said = execute(
                compiled, codegen=codegen, fast_forward=fast_forward, check_invariants=True
            )
            assert report is not None, [d.message for d in said]
            whole = json.loads(report.json())
            whole["events"] = whole["skipped"] = None
            whole["stages"] = [{**s, "skipped": None} for s in whole["stages"]]
            runs.append((whole, list(report.observe("hit").samples)))
    assert all(run == runs[0] for run in runs[1:])
    whole, hits = runs[0]
    assert hits == [7 * 0.99, 0.0]
    kv = whole["pools"][0]
    assert kv["evicted_units"] == pytest.approx(6 * 0.99)
    # 13.86 cached over [0.5, 1], 7.92 until 3.5, then the dead block to 10
    assert kv["mean_cached"] == pytest.approx((13.86 * 0.5 + 7.92 * 2.5 + 0.99 * 6.5) / 10)


def test_consume_rounds_a_whole_entry_down_to_blocks():
    """`Cache.consume` with a reuse that covers the entry: whole blocks of it."""
    cache = Cache(Engine(), None, 0.99)
    units = 7.919999999999998  # 13.86 less six blocks evicted at once, as the run has it
    assert units / 0.99 < 8
    cache.put("s", units)
    taken = cache.consume("s", units)
    assert taken == 7 * 0.99
    assert cache.total == pytest.approx(0.99)
    assert cache.cachedin("s") == 0.0
    assert len(cache.entries) == 1  # the rest, dead


@pytest.mark.parametrize("evict", ["lru", "by (size)"])
def test_the_hit_is_the_references(evict, same_as_reference):
    same_as_reference(_program(evict), "hit.sq")
