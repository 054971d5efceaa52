"""A hit on an entry with float noise (tests/sim/NOTES.md §71): the reuse is rounded down
to whole blocks before it meets the entry.

Fourteen blocks of 0.99 cached, six of them evicted at once, leave an entry of
7.919999999999998 units, eight blocks less the noise of the subtraction. A hold whose
`reuse` reads that entry (`cachedin(kv)`) took it whole in serq: `cached` 7.92, no entry
left. Both references (0.1.2, and 0.1.4 in `fn main`) round the reuse down to whole
blocks first: 7.919999999999998 / 0.99 is 7.999999999999998 blocks, so the hit is seven
(6.93), and the eighth stays cached as a dead entry. The noise can be above the blocks
too: a reuse of an entry of 3.030000000000003 in blocks of 1.01 is three blocks
(3.0300000000000002), and the 8.9e-16 left is a dead entry, which an eviction counts;
a hold without `reuse` (an infinite one) takes the whole entry. serq now does the same.
Found by the spec walk sweeping `block` of its prefix-cache programs to 0.99 and 1.01.
"""

from __future__ import annotations

import json
from pathlib import Path

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


def test_the_noise_above_the_blocks_stays_dead():
    """`Cache.consume` of an entry a little above its blocks: a reuse of the entry takes
    the blocks and leaves the noise, dead (an eviction counts it); an infinite reuse
    takes all of it."""
    cache = Cache(Engine(), None, 1.01)
    units = 3.030000000000003
    cache.put("s", units)
    assert cache.consume("s", units) == 3 * 1.01
    assert len(cache.entries) == 1
    cache.put("u", 2 * 1.01)  # an eviction of it goes through the dead noise first
    assert cache.evict_to(0.0)[0] == 2
    cache.put("t", units)
    assert cache.consume("t", float("inf")) == units
    assert cache.entries == {}


@pytest.mark.parametrize("evict", ["lru", "by (size)"])
def test_the_hit_is_the_references(evict, same_as_reference):
    same_as_reference(_program(evict), "hit.sq")


def test_a_walk_program_at_a_block_of_1_01(same_as_reference):
    """tests/oracle/spec_walk/c_admission_bindings.sq at `bs = 1.01`, where session 3's hit
    left 2.7e-15 behind as a dead entry that an eviction then counted (29 against 28)."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "tests/oracle/spec_walk/c_admission_bindings.sq").read_text(encoding="utf-8")
    same_as_reference(text, "c.sq", sets={"bs": "1.01"}, horizon=20.0)


@pytest.mark.parametrize("blk", ["0.99", "1.01"])
def test_a_walk_program_with_a_reuse_of_its_entry(blk, same_as_reference):
    """tests/oracle/spec_walk/pool_evict_by.sq, whose reuse reads `cachedin(kv)`: at 0.99
    a hit a block short, at 1.01 seven entries of noise left dead and evicted."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "tests/oracle/spec_walk/pool_evict_by.sq").read_text(encoding="utf-8")
    same_as_reference(text, "p.sq", sets={"blk": blk}, horizon=20.0)
