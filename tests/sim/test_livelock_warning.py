"""A hold that can never grow to what its body needs, under `preempt lifo`, preempts
itself and is executed again for ever; when time passes between the rounds the run went
on to the horizon and only the report's `stuck` column and a note (no position) said so,
and `serq.run` returned the report without a warning. It is now a W-stall warning at the
first such hold, naming the session, its position and the time, the same on every path
(tests/sim/NOTES.md §32). pyserq 0.1.2 counts `stuck` alike and says nothing more.
"""

from __future__ import annotations

import pytest

from tests.sim.both_paths import runs_on_every_path

GROW = """\
pool kv { cap 10; preempt lifo; }
stage s : fifo(1);
workload { arrive {arrive}; }
session { hold kv (6) { run s (1); grow kv ({grow}); run s (1); } }
run { horizon 100; }
"""
# a step engine's growing prefill longer than the memory, in `fn main` with an argument
ENGINE = """\
use "std/args";
fn main() {
  let prompt = args.number("prompt", 100);
  pool kv { cap 64; block 16; preempt lifo; }
  stage E : step { budget 32; cost 1; memory kv; }
  workload { arrive batch(1); turn { set p = prompt; } }
  server { hold kv (cost(kv, 16)) { run E prefill (cost(E, p)) growing kv; } }
}
"""

# holds that fit the pool alone, grown at random: sessions preempt each other, some twice
# at one position (`stuck`), and every one of them can still grow
CONTENTION = """\
pool kv { cap 40; block 4; evict lru; preempt lifo; }
stage server : ps(1);
workload { arrive poisson(0.8); }
session {
  set n = 4 + floor(~uniform(0, 12));
  hold kv (n) reuse (~uniform(0, n)) {
    run server (~exp(1));
    branch with (0.3) { grow kv (4); }
  } cache (n);
}
run { horizon 400; seed 3; }
"""


def _said(text: str, **settings) -> tuple[list, int]:
    runs = []
    for report, ran in runs_on_every_path(text, **settings):
        said = [(d.code, text.count("\n", 0, d.span.start) + 1, d.message) for d in ran]
        runs.append((said, sum(p.stuck for p in report.pools)))
    assert all(r == runs[0] for r in runs), runs
    return runs[0]


def test_a_grow_that_never_fits_under_lifo_is_a_warning_at_the_hold():
    said, stuck = _said(GROW.replace("{arrive}", "batch(1)").replace("{grow}", "6"))
    assert stuck == 1
    assert said == [
        (
            "W-stall",
            4,
            "a livelock at pool `kv`: 1 session was preempted again without getting past the "
            "previous preemption, with nothing else holding the pool (the first, session 0, "
            "at position 6 at t = 2): a hold that can never grow to what its body needs is "
            "preempted and executed again for ever",
        )
    ]


def test_only_a_session_alone_at_its_pool_is_named():
    """`stuck` also counts a session preempted twice at one position by others' growth,
    which may still go on: the warning names only those that held the pool alone."""
    text = GROW.replace("{arrive}", "renewal(1)").replace("{grow}", "inf")
    said, stuck = _said(text.replace("cap 10", "cap 100").replace("kv (6)", "kv (1)"))
    assert stuck > 1  # the later sessions preempt themselves beside the earlier ones
    assert [(code, line) for code, line, _ in said] == [("W-stall", 4)]
    assert "1 session was preempted again" in said[0][2]


def test_sessions_stuck_by_each_others_growth_are_not_a_livelock():
    said, stuck = _said(CONTENTION)
    assert stuck > 0 and said == []


def test_a_step_engines_prefill_longer_than_its_memory_in_fn_main():
    said, stuck = _said(ENGINE, horizon=50.0)
    assert stuck == 1
    assert [(code, line) for code, line, _ in said] == [("W-stall", 7)]
    assert said[0][2].startswith("a livelock at pool `kv`: 1 session was preempted again")
    assert _said(ENGINE, horizon=50.0, sets={"prompt": "60"}) == ([], 0)


@pytest.mark.parametrize("grow", ["4", "0"])
def test_a_grow_that_fits_says_nothing(grow):
    assert _said(GROW.replace("{arrive}", "batch(1)").replace("{grow}", grow)) == ([], 0)
