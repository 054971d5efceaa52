"""Ties that the spec leaves to the reference, found by the fourth differential round
(tests/oracle/ties_family.py, tests/sim/NOTES.md §20), pinned on both implementations
(`impl`) and on serq's two event paths.

- `min` and `max` of 0 and -0 give the second operand, in pyserq 0.1.2 and 0.1.4 alike,
  whether the operands are attributes, constants the linker folds, or the terms of an
  aggregate (`min j in n (e)`, whose terms are combined left to right, or as a balanced
  tree past 150 terms: the last of the smallest terms wins either way); a NaN operand
  gives the other. `1 / x` tells the two zeros apart.
- `floor` and `ceil` keep the sign of a zero, and `ceil` of a number between -1 and 0 is
  -0; `pow(-0, y)` of a negative odd integer y is -inf (C's pow), of any other negative
  y inf.
"""

from __future__ import annotations

import json
import math

import pytest

from serq.sim import api as sim_api

ZEROS = """
stage s : fifo(1);
workload { arrive batch(1); }
session {
  set m = -0;
  set p = 0;
  set z = inf - inf;
  observe min_mp = 1 / min(m, p);
  observe min_pm = 1 / min(p, m);
  observe max_mp = 1 / max(m, p);
  observe max_pm = 1 / max(p, m);
  observe folded_min = 1 / min(-0, 0);
  observe folded_max = 1 / max(0, -0);
  observe agg_mpm = 1 / (min j in 3 (j == 1 ? p : m));
  observe agg_mmp = 1 / (min j in 3 (j == 2 ? p : m));
  observe agg_pmm = 1 / (max j in 3 (j == 0 ? p : m));
  observe nan_first = 1 / min(z, m);
  observe nan_second = 1 / max(p, z);
  observe both_nan = min(z, z);
  run s (max(z, min(p, 1)));
}
run { horizon 10; warmup 0; seed 1; }
"""

EXPECTED = {
    "min_mp": math.inf,
    "min_pm": -math.inf,
    "max_mp": math.inf,
    "max_pm": -math.inf,
    "folded_min": math.inf,
    "folded_max": -math.inf,
    "agg_mpm": -math.inf,
    "agg_mmp": math.inf,
    "agg_pmm": -math.inf,
    "nan_first": -math.inf,
    "nan_second": math.inf,
}


def test_min_and_max_give_the_second_of_two_zeros(impl):
    report = impl.run(source=ZEROS)
    for name, value in EXPECTED.items():
        assert list(report.observe(name).samples) == [value], name
    assert math.isnan(report.observe("both_nan").samples[0])


SIGNED = """
stage s : fifo(1);
workload { arrive batch(1); }
session {
  set mz = -0;
  set h = -0.5;
  observe floor_mz = 1 / floor(mz);
  observe floor_quarter = 1 / floor(0.25);
  observe ceil_half = 1 / ceil(h);
  observe ceil_mz = 1 / ceil(mz);
  observe ceil_folded = 1 / ceil(-0.75);
  observe pow_odd = pow(mz, -1);
  observe pow_odd_op = mz ^ -3;
  observe pow_even = pow(mz, -2);
  observe pow_fraction = pow(mz, -0.5);
  observe pow_huge = pow(mz, -1e300);
  observe pow_folded = pow(-0, -1);
  observe pow_cube = 1 / pow(mz, 3);
  run s (1);
}
run { horizon 10; warmup 0; seed 1; }
"""

SIGNED_EXPECTED = {
    "floor_mz": -math.inf,
    "floor_quarter": math.inf,
    "ceil_half": -math.inf,
    "ceil_mz": -math.inf,
    "ceil_folded": -math.inf,
    "pow_odd": -math.inf,
    "pow_odd_op": -math.inf,
    "pow_even": math.inf,
    "pow_fraction": math.inf,
    "pow_huge": math.inf,
    "pow_folded": -math.inf,
    "pow_cube": -math.inf,
}


def test_floor_ceil_and_pow_keep_the_sign_of_zero(impl):
    report = impl.run(source=SIGNED)
    for name, value in SIGNED_EXPECTED.items():
        assert list(report.observe(name).samples) == [value], name


@pytest.mark.parametrize("source", [ZEROS, SIGNED])
def test_signed_zeros_are_the_same_on_both_event_paths(source):
    compiled, _ = sim_api.compile_program(source, "zeros.sq")
    assert compiled is not None
    runs = []
    for codegen in (True, False):
        report, diagnostics = sim_api.execute(compiled, codegen=codegen)
        assert report is not None, diagnostics
        runs.append(
            (
                json.loads(report.json()),
                {n: [repr(x) for x in report.observe(n).samples] for n in report.observes},
            )
        )
    assert runs[0] == runs[1]
