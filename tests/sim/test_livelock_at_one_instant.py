"""A livelock at one instant is named after a cycle of 100 preemptions, not 100,000.

Holds preempted and re-admitted with no time passing (a step engine of `cost 0`) went on
until 100,000 preemptions at one instant, 2 to 5 s of CPU, each preemption a whole round
of admission, plan, growth and release (NOTES §59, §61). A preemption that finds a state
found before at that instant (the same victim at the same position, the pool as allocated
and as cached with as many waiting, its holders' units, positions and attributes and the
step stages' residents as they were, no hold there completed, no session ended) is a
step of a cycle; 100 of them in a row, counted from the 100th preemption at the instant
on, are the livelock, named at the hold as before. Counting the residents names a cycle
whose preemptions are thousands of iterations apart in seconds, where it ran 108 s into
the clock's rule (NOTES §63). A run that moves moves some of that state, however many
preemptions it takes at one instant: the runs here take up to 107,948 and are reported
(the 100,000 preemptions that name a livelock without a cycle count only those since a
hold at the pool completed), among them a decode advancing inside its allocation beside
a newcomer that preempts itself at every iteration, and holds that count their own
retries.
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
        "a livelock at one instant: 203 preemptions at pool `kv` without time passing; "
    )
    assert cpu < 5  # some 0.05 s; 100,000 preemptions took 2.7 s


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize(
    ("preempt", "n", "count"), [("admission", 2, 205), ("-position", 4, 217), ("admission", 4, 209)]
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


@pytest.mark.parametrize("codegen", [True, False])
def test_a_cycle_of_preemptions_thousands_of_iterations_apart_is_named_in_seconds(codegen):
    """Four decodes without a cache recompute from 0 at every preemption, some 2,000
    iterations of `cost 0` apart: the clock's rule named it after 10,000,001 events, 108 s."""
    text = MUTUAL.replace("PREEMPT", "admission").replace("N", "4")
    report, said, cpu = _fails(text.replace(" cache (20000);", ""), codegen)
    assert report is None
    (d,) = said
    assert d.message.startswith("a livelock at one instant: 209 preemptions at pool `kv`")
    assert cpu < 30  # some 4 to 6 s


# a decode of 5,000 tokens inside its allocation beside a newcomer that preempts itself
# at each growth, every time at the same position, the pool as full: only the decode's
# tokens left tell the preemptions apart (the same report as pyserq 0.1.2's)
INSIDE = """pool kv { cap 5100; block 1; preempt lifo; }
stage E : step { budget 64; cost 0; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (serial == 0 ? 5090 : 1) {
    run E decode (serial == 0 ? 5000 : 50) growing kv;
  }
}
run { horizon 10; }
"""

# the cycle of four decodes, each counting its retries and asking for one token after 150
RETRIES = """pool kv { cap 2000; block 1; preempt by (admission); }
stage E : step { budget 64; cost 0; memory kv; }
workload { arrive batch(4); }
session {
  set tries = 0;
  hold kv (1) {
    set tries = tries + 1;
    run E decode (tries > 150 ? 1 : (serial == 0 ? 1900 : 1500)) growing kv;
  }
}
run { horizon 10; }
"""


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize(("text", "preemptions"), [(INSIDE, 454), (RETRIES, 599)])
def test_preemptions_at_one_instant_that_find_the_pool_alike_but_move_run(
    text, preemptions, codegen
):
    report, said = run_text(text, codegen=codegen)
    assert (report.end, report.pools[0].preemptions) == (10, preemptions)
    assert report.ended == (2 if text is INSIDE else 4)
    assert not said


# 450 sessions at an engine of `cost 0`, each decode preempting the newest holder, all at
# time 0: 107,948 preemptions, more than the 100,000 that named a livelock, but holds
# complete between them (pyserq 0.1.2: the same count, every session ended)
CROWD = """pool kv { cap 100; block 1; preempt lifo; }
stage E : step { budget 4096; cost 0; memory kv; }
workload { arrive batch(450); }
session { hold kv (1) { run E decode (serial - 7 * floor(serial / 7) + 60) growing kv; } }
run { horizon 10; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_a_crowd_past_100000_preemptions_at_one_instant_that_completes_holds_runs(codegen):
    report, said = run_text(CROWD, codegen=codegen)
    assert (report.ended, report.pools[0].preemptions) == (450, 107948)
    assert not said
