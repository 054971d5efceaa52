"""A release that caches more than the hold gives back evicts down to the cap.

A hold whose units are below the prefix it consumes (examples/vocabulary/sarathi_claims.sq
allocates min(p, budget) and consumes the whole cached prompt) has a computed position
above its allocation. Preempted, it gives back its allocation and caches min(ℓ, computed):
more than it gave back. Spec §3 keeps allocated + cached within the cap in every reachable
configuration, so the cache evicts at that release; pyserq 0.1.4 evicts nothing there and
runs for a while with 16 units over the cap: §14's Y, pinned against 0.1.4 on a minimal
program in tests/oracle/test_vocabulary_reference.py, here on §61's mutant m15 at the
instant it parts (tests/sim/NOTES.md §63), on every path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.sim.api import compile_program, execute

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "vocabulary" / "sarathi_claims.sq"


def _program() -> str:
    text = EXAMPLE.read_text(encoding="utf-8")
    old = "serial - 8 * floor(serial / 8)"
    assert old in text
    # prompts growing with the serial to three times the pool: session 46's 1,728 are all
    # cached and consumed by a hold of 256, which preempts itself at every iteration
    return text.replace(old, "serial - 4 * floor(serial / 8)")


@pytest.mark.parametrize(
    "options",
    [{}, {"codegen": False}, {"fast_forward": False}, {"check_invariants": True}],
)
def test_a_victim_caching_above_its_allocation_evicts_to_the_cap(options):
    # at 3.55912 another resident's decode took a block (2,640 allocated); session 46
    # then gives back 256 and caches 1,728: 2,384 + 1,728 is 16 over the cap of 4,096
    compiled, diagnostics = compile_program(_program(), "m15.sq", horizon=3.5595)
    assert compiled is not None, diagnostics
    report, said = execute(compiled, **options)
    assert not said
    kv = report.pools[1]
    assert kv.evicted_units == 39376  # 0.1.4: 39,360
    assert kv.mean_cached == pytest.approx(762.1263660626911, rel=1e-12)  # 0.1.4: 762.12807
