"""A report's statistics over samples that are infinite or near the float range
(tests/sim/NOTES.md §25).

`math.fsum` raises on inf beside -inf (ValueError) and on a sum past the range
(OverflowError). The first escaped from an observation's mean, a gauge's time average
and a claim's `total`/`prefix_total`: the run failed with E-internal on both paths where
both references report NaN. The second made the mean of three samples of 1e308 inf (and
its cv2 1.5), where the mean is 1e308 and the cv2 0, as pyserq has them. Each program
runs on both paths.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from serq.report import stats
from tests.sim.both_paths import report_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))

SAMPLES = """
stage s : fifo(1);
gauge g = queue(s) == 1 ? inf : (queue(s) == 0 ? -inf : 1);
workload { arrive batch(3); }
session {
  run s (1);
  observe both = serial == 0 ? -inf : inf;
  observe big = 1e308;
}
run { horizon 20; warmup 0; seed 1; }
"""

CLAIMS = """fn main() {
  stage s : fifo(1);
  workload { arrive batch(3); }
  server { run s (cost(s, 1)); observe w = serial == 0 ? -inf : inf; observe big = 1e308; }
  claim nan_total: at end (total(w) != total(w));
  claim nan_prefix: at end (prefix_total(w) != prefix_total(w));
  claim big_total: at end (total(big) == inf);
  claim big_prefix: at end (prefix_total(big) == inf);
}
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_inf_beside_minus_inf_is_nan(codegen):
    report = report_json(SAMPLES, codegen)
    assert report["observes"]["both"]["mean"] is None
    assert report["gauges"]["g"]["mean"] is None
    assert (report["gauges"]["g"]["min"], report["gauges"]["g"]["max"]) == (None, None)


@pytest.mark.parametrize("codegen", [True, False])
def test_a_mean_near_the_float_range_is_not_inf(codegen):
    big = report_json(SAMPLES, codegen)["observes"]["big"]
    assert (big["mean"], big["cv2"], big["p99"]) == (1e308, 0, 1e308)


def test_the_mean_past_the_range_is_exact():
    assert stats.mean([1e308] * 3) == 1e308
    assert stats.mean([1.7e308] * 10 + [-1e308]) == pytest.approx(1.4545454545454546e308)
    # pyserq's running mean passes through inf - inf here and says NaN (§25): serq keeps
    # the mean, which is a number
    values = [-1e308] * 3 + [1e308] + [-1e308] * 41
    assert stats.mean(values) == pytest.approx(-1e308 / 45 * 43)
    assert stats.mean([1e308, 1e308, -float("inf")]) == -float("inf")


@pytest.mark.parametrize("codegen", [True, False])
def test_a_claims_total_of_inf_and_minus_inf(codegen):
    report = report_json(CLAIMS, codegen, horizon=20)
    results = {c["name"]: c["result"] for c in report["claims"]}
    assert set(results.values()) == {"holds"}, results


def test_the_references_agree(tmp_path):
    pytest.importorskip("pyserq")
    import differential

    path = tmp_path / "t.sq"
    path.write_text(SAMPLES)
    assert differential.compare(str(path), full=True) == ("same", "")
    if not Path(differential.PYSERQ_014).is_dir():
        pytest.skip("pyserq 0.1.4 not found (set PYSERQ_014_PATH)")
    path.write_text(CLAIMS)
    verdict = differential.compare(str(path), main=True, full=True, horizon=20.0, seed=1)
    assert verdict == ("same", "")
