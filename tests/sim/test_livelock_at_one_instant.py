"""A livelock at one instant is named after a cycle of 10,000 preemptions, not 100,000.

Holds preempted and re-admitted with no time passing (a step engine of `cost 0`) went on
until 100,000 preemptions at one instant, 2 to 5 s of CPU, each preemption a whole round
of admission, plan, growth and release (NOTES §59, §61). A preemption that finds what one
found before at that instant (the same victim at the same position, the pool as allocated
and as cached, no hold there completed, no session ended) is a step of a cycle; 10,000 of
them in a row, counted from the 1,000th preemption at the instant on, are the livelock,
named at the hold as before. A run that moves finds
something new now and then, however many preemptions it takes at one instant: the two
here take 11,999 and 56,498 and are reported as before.
"""

from __future__ import annotations

import time

import pytest

from serq.sim.api import compile_program, execute
from tests.sim.both_paths import run_text

SELF = """pool kv { cap 16; preempt lifo; }
stage E : step { budget 64; cost 0; memory kv; }
workload { arrive batch(1); }
session { hold kv (8) { run E prefill (8) growing kv; run E decode (20) growing kv; } cache (28); }
run { horizon 100; }
"""

# two holders that preempt one another for good: the oldest gives way, comes back at its
# cached position and takes the other's blocks (the livelock of
# test_livelock_of_holders_preempting_one_another.py, here at one instant)
MUTUAL = """pool kv { cap 20000; block 1; preempt by (PREEMPT); }
stage E : step { budget 64; cost 0; memory kv; }
workload { arrive batch(N); }
session { hold kv (1) { run E decode (serial == 0 ? 19000 : 15000) growing kv; } cache (20000); }
run { horizon 10; }
"""

# 12,000 sessions, each preempting the one admitted after it, all at time 0: every hold
# completes
CASCADE = """pool kv { cap 32; block 16; preempt lifo; }
stage E : step { budget 64; cost 0; memory kv; }
workload { arrive batch(12000); }
session { hold kv (16) { run E prefill (17) growing kv; } }
run { horizon 10; }
"""


def _fails(text: str, codegen: bool):
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    start = time.process_time()
    report, said = execute(compiled, codegen=codegen)
    return report, said, time.process_time() - start


@pytest.mark.parametrize("codegen", [True, False])
def test_a_hold_preempting_itself_at_one_instant_is_named_after_a_cycle(codegen):
    report, said, cpu = _fails(SELF, codegen)
    assert report is None
    (d,) = said
    assert (d.code, d.span.line, d.span.column) == ("E-run", 4, 11)
    assert d.message.startswith(
        "a livelock at one instant: 11002 preemptions at pool `kv` without time passing; "
    )
    assert cpu < 5  # some 0.4 s; 100,000 preemptions took 2.7 s


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize(
    ("preempt", "n", "count"), [("admission", 2, 11003), ("-position", 4, 11009)]
)
def test_holders_preempting_one_another_at_one_instant_are_named_after_a_cycle(
    preempt, n, count, codegen
):
    text = MUTUAL.replace("PREEMPT", preempt).replace("N", str(n))
    report, said, _ = _fails(text, codegen)
    assert report is None
    (d,) = said
    assert (d.code, d.span.line) == ("E-run", 4)
    assert d.message.startswith(f"a livelock at one instant: {count} preemptions at pool `kv`")


@pytest.mark.parametrize("codegen", [True, False])
def test_a_cascade_of_preemptions_at_one_instant_that_moves_runs(codegen):
    report, said = run_text(CASCADE, codegen=codegen)
    assert (report.ended, report.pools[0].preemptions) == (12000, 11999)
    assert not said


@pytest.mark.parametrize("codegen", [True, False])
def test_holders_that_get_past_one_another_at_one_instant_run(codegen):
    """Under `preempt lifo` the newest holder gives way and resumes from its cache: 56,498
    preemptions at time 0, many of the same victim in a row, and every session ends."""
    text = MUTUAL.replace("by (PREEMPT)", "lifo").replace("N", "4")
    report, said = run_text(text, codegen=codegen)
    assert (report.ended, report.end, report.pools[0].preemptions) == (4, 10, 56498)
    assert not said
