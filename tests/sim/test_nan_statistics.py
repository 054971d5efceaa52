"""A report's order statistics over values some of which are NaN, as both references give
them (tests/sim/NOTES.md §24).

A gauge's least and greatest value held for a positive time, and an observation's p99,
were Python's `min`, `max` and `sorted` over the values with a NaN among them, which leave
a NaN where it is: the answer depended on whether the NaN came first. pyserq 0.1.2 and
0.1.4 take the least and greatest of the other values (NaN when there are none), and sort
the samples for the p99 by the sign bit of a NaN (`f64::total_cmp`): `0 / 0`, whose sign
bit is set, before every number, `-(0 / 0)` after. Each program runs on both paths.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from serq.report import stats
from tests.sim.both_paths import report_json

# idle at 0 (busy / busy is 0 / 0, a NaN) and busy now and then (1, or 3)
GAUGES = """
stage s : fifo(1);
gauge ratio = busy(s) / busy(s);
gauge three = busy(s) > 0 ? 3 : (busy(s) - busy(s)) / 0;
gauge idle = busy(s) > 0 ? -((busy(s) - busy(s)) / 0) : 2;
gauge never = (busy(s) - busy(s)) / 0;
workload { arrive renewal(0.5); }
session { run s (0.25 + 0.5 * (serial == 3)); }
run { horizon 20; warmup 0; seed 1; }
"""

SAMPLES = """
stage s : fifo(1);
workload { arrive renewal(0.5); }
session {
  run s (0.25);
  observe low = serial == 1 ? 0 / 0 : 10 - serial;
  observe high = serial == 0 ? -(0 / 0) : serial;
}
run { horizon 30; warmup 0; seed 1; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_a_gauges_range_leaves_nan_aside(codegen):
    gauges = report_json(GAUGES, codegen)["gauges"]
    assert (gauges["ratio"]["min"], gauges["ratio"]["max"]) == (1, 1)
    assert (gauges["three"]["min"], gauges["three"]["max"]) == (3, 3)
    assert (gauges["idle"]["min"], gauges["idle"]["max"]) == (2, 2)
    assert (gauges["never"]["min"], gauges["never"]["max"]) == (None, None)
    assert gauges["ratio"]["mean"] is None  # a NaN held for a positive time


@pytest.mark.parametrize("codegen", [True, False])
def test_a_p99_sorts_a_nan_by_its_sign(codegen):
    observes = report_json(SAMPLES, codegen)["observes"]
    assert observes["low"]["p99"] == 10  # the NaN sorts first: the top is 10 - 0
    assert observes["high"]["p99"] is None  # the NaN sorts last, at the top


def test_the_rank_does_not_depend_on_where_the_nan_is():
    nan = -(math.inf - math.inf)  # no sign bit
    for values in ([nan, 1.0, 2.0], [1.0, nan, 2.0], [1.0, 2.0, nan]):
        assert stats.percentile(values, 0.5) == 2.0
        assert stats.held_range([0.0, 1.0, 2.0], values, 0.0, 3.0) == (1.0, 2.0)


@pytest.mark.parametrize("text", [GAUGES, SAMPLES], ids=["gauges", "samples"])
def test_the_reference_agrees(text, same_as_reference):
    same_as_reference(text)


# A claim's `largest(obs)` is the same: pyserq 0.1.4 leaves a NaN sample aside (NaN when
# every sample is); `max` kept a first NaN and skipped a later one.
CLAIMS = """fn main() {
  stage svc : fifo(1);
  workload { arrive batch(8); turn { set d = 0.5; } }
  server {
    run svc (cost(svc, d));
    observe x = serial == 0 ? 0 / 0 : serial;
    observe y = serial == 2 ? -(0 / 0) : serial;
    observe z = 0 / 0;
  }
  claim first: at end (largest(x) == 7);
  claim inner: at end (largest(y) == 7);
  claim all: at end (largest(z) != largest(z));
}
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_a_claims_largest_leaves_nan_aside(codegen):
    claims = {c["name"]: c["result"] for c in report_json(CLAIMS, codegen, horizon=100)["claims"]}
    assert claims == {"first": "holds", "inner": "holds", "all": "holds"}


def test_the_claims_agree_with_0_1_4(tmp_path):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
    import differential

    if not Path(differential.PYSERQ_014).is_dir():
        pytest.skip("pyserq 0.1.4 not found (set PYSERQ_014_PATH)")
    path = tmp_path / "t.sq"
    path.write_text(CLAIMS)
    verdict = differential.compare(str(path), main=True, full=True, horizon=100.0, seed=1)
    assert verdict == ("same", "")
