"""The context variable `admission` in a step engine's `serve by` keys and in a pool's
`preempt by` keys, as both references read it (tests/sim/NOTES.md §25).

serq read the session's latest admission number counted from 1 in both. pyserq 0.1.2 and
0.1.4 count it from 0 in a serve key: with `serve by (admission == 1 ? -100 : 0)` the
second session admitted is served first. In a preempt key 0.1.4 reads the candidate's
place among the candidates (the engine's residents holding the pool, in the order of
their admissions), from 0: after the first session admitted has left, `admission == 0`
names the second. A NaN in a preempt key is ordered by its sign, as 0.1.4 orders it
(below). Each program runs on both paths.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from serq.sim import api as sim_api

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))

# four prefills of 5 tokens at a budget of 3: the keys decide who goes first
SERVE = """pool kv { cap 100; }
stage e : step { budget 3; cost 1; serve by (admission == K ? -100 : 0); memory kv; }
workload { arrive batch(4); }
session { hold kv (4) { run e prefill (5); observe t = now; } }
run { horizon 40; }
"""

# four holds of 4 in 14 units; session 0 leaves after one iteration, the other three
# grow by one each and the third growth preempts the candidate the key names
PREEMPT = """fn main() {
  pool kv { cap 14; block 1; evict lru; preempt by (admission == K ? -100 : 0) requeue tail; }
  stage e : step { budget 64; cost 1; memory kv; }
  workload { arrive batch(4); }
  server {
    hold kv (cost(kv, 4)) {
      observe c = computed;
      branch (serial == 0) {
        run e prefill (cost(e, 1)) growing kv;
      } else {
        run e prefill (cost(e, 4)) growing kv;
        run e decode (cost(e, 3)) growing kv;
      }
    }
  }
}
"""


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize(
    "k, order", [(0, [0, 1, 2, 3]), (1, [1, 0, 2, 3]), (2, [2, 0, 1, 3]), (3, [3, 0, 1, 2])]
)
def test_a_serve_key_counts_admissions_from_0(k, order, codegen):
    compiled, diagnostics = sim_api.compile_program(SERVE.replace("K", str(k)), "t.sq")
    assert compiled is not None, diagnostics
    report, ran = sim_api.execute(compiled, codegen=codegen)
    assert report is not None, ran
    assert list(report.observe("t").sessions) == order


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("k, victim, computed", [(0, 1, 5.0), (1, 2, 5.0), (2, 3, 4.0)])
def test_a_preempt_key_counts_the_candidates_from_0(k, victim, computed, codegen):
    compiled, diagnostics = sim_api.compile_program(
        PREEMPT.replace("K", str(k)), "t.sq", horizon=30
    )
    assert compiled is not None, diagnostics
    report, ran = sim_api.execute(compiled, codegen=codegen)
    assert report is not None, ran
    c = report.observe("c")
    # the first hold executed again is the victim's, with what it had computed (5, or 4
    # for the third grower, which preempts itself before its growth)
    assert (c.sessions[4], c.samples[4]) == (victim, computed)


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_the_references_agree(k, tmp_path):
    pytest.importorskip("pyserq")
    import differential

    path = tmp_path / "t.sq"
    path.write_text(SERVE.replace("K", str(k)))
    assert differential.compare(str(path), full=True) == ("same", "")
    if not Path(differential.PYSERQ_014).is_dir():
        pytest.skip("pyserq 0.1.4 not found (set PYSERQ_014_PATH)")
    if k < 3:
        path.write_text(PREEMPT.replace("K", str(k)))
        verdict = differential.compare(str(path), main=True, full=True, horizon=30.0, seed=1)
        assert verdict == ("same", "")


# A NaN in a preempt key: 0.1.4 orders it as it orders queue keys (`f64::total_cmp`): one
# with its sign bit set (`0 / 0`) before every number, so its candidate is the victim,
# one without (`-(0 / 0)`) after every number. serq took a NaN only when it came first
# (no comparison with it holds), wherever its sign. At an engine's memory: the candidate
# at place 1 (session 2) for the first, the newest of the others (session 3, the grower
# itself) for the second. At a pool that is no engine's memory, the same with its
# holders.
HOLDERS = """fn main() {
  pool m { cap 6; preempt by (serial == 1 ? NAN : 0); }
  stage s : fifo(3);
  workload { arrive batch(3); }
  server {
    hold m (cost(m, 2)) {
      observe c = computed;
      run s (cost(s, 1 + serial));
      grow m (cost(m, 1));
      run s (cost(s, 1));
    }
  }
}
"""


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("nan, engine_victim, holder_victim", [("0 / 0", 2, 1), ("-(0 / 0)", 3, 2)])
def test_a_nan_preempt_key_is_ordered_by_its_sign(nan, engine_victim, holder_victim, codegen):
    engine = PREEMPT.replace("admission == K ? -100 : 0", f"admission == 1 ? {nan} : 0")
    holders = HOLDERS.replace("NAN", nan)
    for text, victim in ((engine, engine_victim), (holders, holder_victim)):
        compiled, diagnostics = sim_api.compile_program(text, "t.sq", horizon=30)
        assert compiled is not None, diagnostics
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is not None, ran
        # the first hold executed again is the victim's
        assert report.observe("c").sessions[3 if text is holders else 4] == victim


@pytest.mark.parametrize("nan", ["0 / 0", "-(0 / 0)"])
def test_the_victims_of_a_nan_key_are_0_1_4s(nan, tmp_path):
    import differential

    if not Path(differential.PYSERQ_014).is_dir():
        pytest.skip("pyserq 0.1.4 not found (set PYSERQ_014_PATH)")
    path = tmp_path / "t.sq"
    path.write_text(PREEMPT.replace("admission == K ? -100 : 0", f"admission == 1 ? {nan} : 0"))
    verdict = differential.compare(str(path), main=True, full=True, horizon=30.0, seed=1)
    assert verdict == ("same", "")
