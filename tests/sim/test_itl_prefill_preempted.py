"""The inter-token latency of a prefill's token after a preemption (tests/sim/NOTES.md §34).

A prefill's token has no latency until its session has decoded in the turn
(test_inter_token_latency.py). After a preemption, the token the session had last is
computed again, and counts as its next, where the engine that gave it gives the next
token, once: in pyserq 0.1.2 and 0.1.4 alike. A first token from another engine has
none, and takes that mark away. serq counted every prefill token after any preemption,
from the session's previous token (found as the joint family's program 1499 of round 16:
a prefill on P, then a prefill of 1 on the decoder D, preempted there; D's `mean_itl`
0.766 against 0.1.2's 0.535). Each expected triple is pyserq 0.1.2's (0.1.4's for the
`fn main` twin), on serq's three paths.
"""

from __future__ import annotations

import json

import pytest

import serq

# s0 decodes 10 tokens on E; s1 prefills 2 on F (its token at 1), then prefills 11 on E,
# where the growths of the two do not fit together and s1, the newest holder, is
# preempted while it prefills, six times, until s0 is done; its prefill's token at 16.375
# has no latency (15.375 before the change), its decode's 1.125. s0's: 1.125, and 2
# after each iteration that only preempted.
ENGINE = """\
pool kv { cap 12; block 4; preempt lifo; }
stage E : step { budget 8; cost 1 + 0.125 * tokens; memory kv; }
stage F : step { budget 8; cost 1; }
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (4) { run E decode (10) growing kv; }
  } else {
    run F prefill (2);
    hold kv (4) { run E prefill (11) growing kv; run E decode (1) growing kv; }
  }
  observe t = now;
}
run { horizon 100; warmup 0; seed 1; }
"""

ENGINE_MAIN = """\
// horizon: 100
fn main() {
  pool kv { cap 12; block 4; preempt lifo; }
  stage E : step { budget 8; cost 1 + 0.125 * tokens; memory kv; }
  stage F : step { budget 8; cost 1; }
  workload { arrive batch(2); }
  server {
    branch (serial == 0) {
      hold kv (cost(kv, 4)) { run E decode (cost(E, 10)) growing kv; }
    } else {
      run F prefill (cost(F, 2));
      hold kv (cost(kv, 4)) {
        run E prefill (cost(E, 11)) growing kv;
        run E decode (cost(E, 1)) growing kv;
      }
    }
    observe t = now;
  }
}
"""

# s1 holds kv from 0; s0 prefills 3 on E (its token at 2.375), holds kv from 2.375 (the
# newest holder) and waits in D; s1's `grow` at 3 preempts it there, away from every
# engine; s0 is admitted again at 4, waits 5 in D, and prefills: FIRST, then SECOND.
AWAY = """\
pool kv { cap 10; preempt lifo; }
stage E : step { budget 8; cost 1 + 0.125 * tokens; }
stage F : step { budget 8; cost 1; }
stage D : delay;
workload { arrive batch(2); }
session {
  branch (serial == 1) {
    hold kv (4) { run D (3); grow kv (4); run D (1); }
  } else {
    run D (1);
    run E prefill (3);
    hold kv (4) { run D (5); FIRST; SECOND; }
  }
  observe t = now;
}
run { horizon 100; warmup 0; seed 1; }
"""

CASES = {
    # the token after the preemption is E's, as the last one was: 7.875 after it
    "the same engine": (("run E prefill (2)", "run D (0)"), {"E": (7.875, 7.875, 7.875)}),
    # once: E's second prefill token is a first one again (1.25 before the change)
    "once": (("run E prefill (2)", "run E prefill (2)"), {"E": (7.875, 7.875, 7.875)}),
    # F's token is a first one (7.625 before), and E's after it too (1.25 before)
    "another engine first": (
        ("run F prefill (2)", "run E prefill (2)"),
        {"E": (None, None, None), "F": (None, None, None)},
    ),
    "another engine after": (
        ("run E prefill (2)", "run F prefill (2)"),
        {"E": (7.875, 7.875, 7.875), "F": (None, None, None)},
    ),
}


def latencies(path, **options) -> list[dict[str, tuple]]:
    """Each stage's (mean_itl, itl_p50, itl_p99) on each of serq's three paths."""
    found = []
    for paths in ({}, {"codegen": False}, {"fast_forward": False}):
        report = json.loads(serq.run(serq.compile(str(path), **options), **paths).json())
        found.append(
            {s["name"]: (s["mean_itl"], s["itl_p50"], s["itl_p99"]) for s in report["stages"]}
        )
    return found


def test_a_prefill_preempted_at_the_engine_after_a_token_elsewhere(tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(ENGINE)
    assert [x["E"] for x in latencies(path)] == [(1.3, 1.125, 2)] * 3  # was 2.5795...


def test_the_same_in_fn_main(tmp_path):
    path = tmp_path / "p.sq"
    path.write_text(ENGINE_MAIN)
    assert [x["E"] for x in latencies(path, horizon=100, seed=1)] == [(1.3, 1.125, 2)] * 3


def test_a_prefill_preempted_at_the_engine_that_gave_its_last_token(tmp_path):
    """As ENGINE with s1's first prefill on E: its token at 16.625 counts, 15.25 later."""
    path = tmp_path / "p.sq"
    path.write_text(ENGINE.replace("run F prefill (2);", "run E prefill (2);"))
    assert [x["E"] for x in latencies(path)] == [(2.5681818181818183, 1.125, 15.25)] * 3


@pytest.mark.parametrize("name", CASES)
def test_away_from_every_engine(name, tmp_path):
    (first, second), expected = CASES[name]
    path = tmp_path / "p.sq"
    path.write_text(AWAY.replace("FIRST", first).replace("SECOND", second))
    for found in latencies(path):
        assert {k: found[k] for k in expected} == expected
