"""The report's arithmetic (`serq.report.stats`), against the reference's conventions:
nearest-rank p99, cv2 from the (n - 1) variance, batch means over 20 batches with t = 2.093."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from serq.report import stats


def test_p99_is_the_nearest_rank():
    assert stats.percentile([float(i) for i in range(100)], 0.99) == 98.0  # the reference's
    assert stats.percentile([float(i) for i in range(200)], 0.99) == 197.0
    assert stats.percentile([5.0], 0.99) == 5.0
    assert stats.percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert math.isnan(stats.percentile([], 0.99))


def test_cv2_uses_the_sample_variance():
    assert stats.cv2([0.0, 1.0]) == 2.0  # mean 1/2, variance 1/2
    assert math.isnan(stats.cv2([0.0, 0.0, 0.0]))  # zero mean
    assert math.isnan(stats.cv2([4.0]))


def test_sample_ci_batches_the_first_twenty_b_samples():
    values = [float((i * 7919) % 101) for i in range(87)]  # b = 4: the last 7 are left out
    means = [sum(values[4 * k : 4 * k + 4]) / 4 for k in range(20)]
    m = sum(means) / 20
    s = math.sqrt(sum((x - m) ** 2 for x in means) / 19)
    assert stats.sample_ci(values) == pytest.approx(2.093 * s / math.sqrt(20))
    assert stats.sample_ci(values[:39]) == math.inf
    assert stats.sample_ci([1.0] * 40) == 0.0


def test_integral_of_a_step_function_with_a_cut():
    times, values = [1.0, 3.0, 6.0], [2.0, 5.0, 1.0]
    # the first value holds back to 0
    assert stats.integral(times, values, 0.0, 10.0) == 2 * 3 + 5 * 3 + 1 * 4
    assert stats.integral(times, values, 2.0, 4.0) == 2 + 5
    assert stats.integral(times, values, 7.0, 7.0) == 0.0
    assert stats.time_average(times, values, 2.0, 4.0) == 3.5
    assert math.isnan(stats.time_average([], [], 0.0, 1.0))


def test_held_range_ignores_values_held_for_no_time():
    times, values = [0.0, 2.0, 2.0, 5.0], [1.0, 9.0, 4.0, -3.0]
    assert stats.held_range(times, values, 0.0, 5.0) == (1.0, 4.0)
    assert stats.held_range(times, values, 3.0, 6.0) == (-3.0, 4.0)
    assert all(math.isnan(x) for x in stats.held_range([], [], 0.0, 1.0))


def test_window_ci_of_a_constant_is_zero():
    assert stats.window_ci([0.0], [3.0], 1.0, 11.0) == 0.0
    assert math.isnan(stats.window_ci([0.0], [3.0], 1.0, 1.0))


@pytest.mark.parametrize(
    "values",
    [
        [1.125, 1.375, 1.375],
        [0.1, 0.2, 0.3] * 7 + [1e-300, 3.5],
        [random.Random(k).uniform(0, 1) for k in range(5000)],  # more distinct than exact terms
        [1e308] * 3,  # the sum passes the float range: the mean does not
        [1e308] * 300 + [1.0] * 300,  # the same, with values too large to split
        [1e299] * 3000,  # values that split, whose sum passes the float range
        [math.inf, 1.0, 1.0],
        [0.010049999999978354] * 999 + [0.01274999999998272] * 11,
    ],
)
def test_counted_statistics_are_those_of_the_samples(values):
    """The inter-token latencies are kept as value -> count; their mean and percentiles
    are those of the samples written out, to the last bit."""
    counts = Counter(values)
    assert stats.counted_mean(counts) == stats.mean(values)
    for q in (0.5, 0.99):
        assert stats.counted_percentile(counts, q) == stats.percentile(values, q)


def test_counted_statistics_of_nothing_are_nan():
    assert math.isnan(stats.counted_mean(Counter()))
    assert math.isnan(stats.counted_percentile(Counter(), 0.5))
