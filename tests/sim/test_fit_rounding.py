"""What fits a pool, up to rounding (tests/sim/NOTES.md §29): an admission or a growth
whose sum passes the cap only by the rounding of its additions fits, as it does in exact
arithmetic; one that passes it by more does not (NOTES §22: the references' 1e-9 units
are not followed there).

Three holds of 0.1 in a pool of 0.3 sum to 0.30000000000000004: serq compared that with
the cap exactly, so the third waited for the first to end, and a step engine's third
prefill of 0.1 preempted the others six times where both references admit and grow all
three at once. Found by the mutants of round 12 (tests/oracle/mutants.py, seed 71).
"""

from __future__ import annotations

import pytest

from serq.sim.api import compile_program, execute

THREE_HOLDS = """\
pool m { cap 0.3; }
stage gate : delay;
workload { arrive batch(3); }
session {
  hold m (0.1) { observe got = now; run gate (1); }
}
run { horizon 10; warmup 0; seed 1; }
"""
# session 0 grows its hold of 0.1 by 0.1 beside session 1's 0.1
GROWTH = """\
pool m { cap 0.3; }
stage gate : delay;
workload { arrive batch(2); }
session {
  hold m (0.1) { run gate (1); grow m (serial == 0 ? 0.1 : 0); observe got = now; run gate (1); }
}
run { horizon 10; warmup 0; seed 1; }
"""
# three prefills of 0.1 tokens growing a pool of 0.3 (no blocks) in one iteration
PREFILLS = """\
pool kv { cap 0.3; preempt lifo; }
stage e : step { budget 16; cost 1; memory kv; }
stage gate : delay;
workload { arrive batch(3); }
session {
  hold kv (0) {
    run e prefill (0.1) growing kv;
    observe got = now;
    run gate (5);
  }
}
run { horizon 20; warmup 0; seed 1; }
"""
# a growth 1e-10 past the cap is not rounding: the newest resident is preempted
PAST_THE_CAP = """\
pool kv { cap 1; preempt lifo; }
stage e : step { budget 16; cost 1; memory kv; }
stage gate : delay;
workload { arrive batch(2); }
session {
  hold kv (0) {
    run e prefill (serial == 0 ? 0.5 : 0.5 + 1e-10) growing kv;
    observe got = now;
    run gate (5);
  }
}
run { horizon 20; warmup 0; seed 1; }
"""
CASES = {
    "three holds": (THREE_HOLDS, [0.0, 0.0, 0.0], 0),
    "growth": (GROWTH, [1.0, 1.0], 0),
    "prefills": (PREFILLS, [1.0, 1.0, 1.0], 0),
}


def _outcomes(text: str) -> list[tuple[list[float], int]]:
    """(`got` samples, preemptions) on both event paths, fast-forwarded and stepped."""
    compiled, diagnostics = compile_program(text, "fit.sq")
    assert compiled is not None, diagnostics
    seen = []
    for codegen in (True, False):
        for fast_forward in (True, False):
            report, ran = execute(
                compiled, codegen=codegen, fast_forward=fast_forward, check_invariants=True
            )
            assert report is not None, [d.message for d in ran]
            seen.append((list(report.observe("got").samples), report.pools[0].preemptions))
    return seen


@pytest.mark.parametrize("name", CASES)
def test_a_sum_past_the_cap_by_rounding_fits(name):
    text, got, preemptions = CASES[name]
    assert _outcomes(text) == [(got, preemptions)] * 4


def test_a_growth_past_the_cap_by_more_than_rounding_does_not_fit():
    assert _outcomes(PAST_THE_CAP) == [([1.0, 7.0], 6)] * 4


@pytest.mark.parametrize("name", CASES)
def test_the_fits_are_the_references(name, same_as_reference):
    same_as_reference(CASES[name][0], "fit.sq")
