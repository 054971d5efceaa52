"""The fast paths of `serq.report.stats` against the plain definitions, bit for bit.

`percentile` sorts only a tail from 4096 values on, `integral` and `held_range` walk the
pieces with bisection and one comprehension, and `cv2` maps in C; each must give exactly
what the plain loop gives (the same float, the same sign of zero, the same NaN), on
random data with ties, zeros of both signs, infinities and NaNs of both signs (a NaN
sorts by its sign bit, and is no value of a range: tests/sim/test_nan_statistics.py).
"""

from __future__ import annotations

import math
import random

import pytest

from serq.report import stats


def _total(x):
    """A NaN sorts by its sign bit, as pyserq sorts samples (f64::total_cmp)."""
    if x == x:
        return (1, x)
    return (0, 0.0) if math.copysign(1.0, x) < 0 else (2, 0.0)


def _percentile(values, q):
    ordered = sorted(values, key=_total)
    rank = math.ceil(q * len(ordered))
    return ordered[min(max(rank, 1), len(ordered)) - 1]


def _fsum(values):
    """The exact sum; NaN for inf beside -inf, where `math.fsum` raises (a report has
    no value there, as in both references: tests/sim/test_infinite_statistics.py)."""
    try:
        return math.fsum(values)
    except ValueError:
        return math.nan


def _cv2(values):
    m = _fsum(values) / len(values)
    return (
        math.nan if m == 0 else _fsum([(v - m) ** 2 for v in values]) / (len(values) - 1) / (m * m)
    )


def _integral(times, values, start, stop):
    if stop <= start or not times:
        return 0.0
    total, lo = [], start
    i = max(stats.bisect_right(times, start) - 1, 0)
    while i < len(times):
        hi = min(times[i + 1], stop) if i + 1 < len(times) else stop
        if hi > lo:
            total.append(values[i] * (hi - lo))
            lo = hi
        if hi >= stop:
            break
        i += 1
    return _fsum(total)


def _held_range(times, values, start, stop):
    held = []
    for i, value in enumerate(values):
        lo = start if i == 0 else max(times[i], start)
        hi = min(times[i + 1], stop) if i + 1 < len(times) else stop
        if hi > lo:
            held.append(value)
    held = [v for v in held if v == v]  # a NaN is no value of the range
    return (min(held), max(held)) if held else (math.nan, math.nan)


SPECIAL = [0.0, -0.0, 1.0, 2.5, math.inf, -math.inf, math.nan, -math.nan]


def _values(rng, size):
    share = rng.choice([0.0, 0.01, 0.3])
    values = [
        rng.choice(SPECIAL) if rng.random() < share else rng.expovariate(1.0) * rng.choice([1, 1e9])
        for _ in range(size)
    ]
    if rng.random() < 0.3:
        values = [round(v, 1) if math.isfinite(v) else v for v in values]
    return values


@pytest.mark.parametrize("seed", range(4))
def test_percentile_and_cv2_match_the_definitions(seed):
    rng = random.Random(seed)
    for _ in range(60):
        values = _values(rng, rng.choice([2, 100, 4096, 5000, 20000]))
        for q in (0.001, 0.5, 0.9, 0.99, 1.0):
            assert repr(stats.percentile(values, q)) == repr(_percentile(values, q))
        try:
            expected = repr(_cv2(values))
        except ValueError as e:  # fsum of inf and -inf
            expected = type(e).__name__
        try:
            got = repr(stats.cv2(values))
        except ValueError as e:
            got = type(e).__name__
        assert got == expected


def test_step_functions_match_the_definitions():
    rng = random.Random(5)
    for _ in range(5000):
        k = rng.randint(1, 12)
        times = sorted(rng.choice([0, 0.5, 1, 1.5, 2, 3, rng.uniform(-1, 5)]) for _ in range(k))
        if rng.random() < 0.5:
            times = sorted(set(times))
        values = [rng.choice([*SPECIAL, rng.uniform(-3, 3), -1.0]) for _ in times]
        start = rng.choice([-1, 0, 0.5, 1, 1.2, 2, 3, rng.uniform(-1, 5)])
        stop = rng.choice([start, start + 0.5, 1, 2, 3, 6, rng.uniform(-1, 6)])
        args = (times, values, start, stop)
        try:
            expected = repr(_integral(*args))
        except ValueError as e:
            expected = type(e).__name__
        try:
            got = repr(stats.integral(*args))
        except ValueError as e:
            got = type(e).__name__
        assert got == expected
        assert repr(stats.held_range(*args)) == repr(_held_range(*args))


def _three(times, values, start, stop):
    """A gauge's mean, interval and range by the three separate functions (or the error)."""
    out = []
    for f in (stats.time_average, stats.window_ci, stats.held_range):
        try:
            result = f(times, values, start, stop)
        except (ValueError, OverflowError) as error:
            return type(error).__name__
        out += list(result) if isinstance(result, tuple) else [result]
    return repr(out)


def test_step_summary_is_the_three_functions_at_once():
    rng = random.Random(5)
    special = [0.0, -0.0, 1.0, 2.5, math.inf, -math.inf, math.nan, -math.nan]
    for _ in range(6000):
        k = rng.choice([1, 2, 3, 5, 12, 50, 300])
        times = sorted(rng.choice([0, 0.5, 1, 1.5, 2, 3, rng.uniform(-1, 5)]) for _ in range(k))
        if rng.random() < 0.5:
            times = sorted(set(times))
        mode = rng.random()
        if mode < 0.3:
            values = [rng.choice([*special, rng.uniform(-3, 3), -1.0]) for _ in times]
        elif mode < 0.6:
            pool = [0.0, -0.0, 1.0, -1.0, 2.0, rng.uniform(-3, 3), 1e308, -1e308]
            values = [rng.choice(pool) for _ in times]
        else:
            values = [rng.choice([0.0, -0.0, 1.0, 3.0, float(rng.randint(0, 9))]) for _ in times]
        start = rng.choice([-1, 0, 0.5, 1, 1.2, 2, 3, rng.uniform(-1, 5)])
        stop = rng.choice([start, start + 0.5, 1, 2, 3, 6, rng.uniform(-1, 6)])
        expected = _three(times, values, start, stop)
        try:
            got = repr(list(stats.step_summary(times, values, start, stop)))
        except (ValueError, OverflowError) as error:
            got = type(error).__name__
        assert got == expected, (times, values, start, stop)
        if all(a < b for a, b in zip(times, times[1:], strict=False)):  # they increase
            try:
                got = repr(list(stats.step_summary(times, values, start, stop, increasing=True)))
            except (ValueError, OverflowError) as error:
                got = type(error).__name__
            assert got == expected, (times, values, start, stop)
