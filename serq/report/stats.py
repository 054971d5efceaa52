"""The arithmetic of the report: sample statistics and piecewise-constant time averages.

Both confidence intervals are batch means over `BATCHES` batches with Student's t at
`BATCHES - 1` degrees of freedom, the 95 % quantile taken as the table value `T_95`
(the reference implementation reports the same half-widths). Missing values are NaN.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence

NAN = math.nan
BATCHES = 20
T_95 = 2.093  # Student's t, 0.975 quantile, 19 degrees of freedom (as tabulated)
MIN_SAMPLES_FOR_CI = 40  # below this many samples an observation's half-width is inf


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean of `values` (NaN without any)."""
    return math.fsum(values) / len(values) if values else NAN


def cv2(values: Sequence[float]) -> float:
    """The squared coefficient of variation of `values`: the sample variance (n - 1)
    over the squared mean; NaN with fewer than two values or a zero mean."""
    n = len(values)
    if n < 2:
        return NAN
    m = mean(values)
    if m == 0:
        return NAN
    variance = math.fsum((v - m) ** 2 for v in values) / (n - 1)
    return variance / (m * m)


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank `q`-quantile of `values` (0 < q ≤ 1): the ⌈q·n⌉-th smallest."""
    if not values:
        return NAN
    ordered = sorted(values)
    rank = math.ceil(q * len(ordered))
    return ordered[min(max(rank, 1), len(ordered)) - 1]


def half_width(batch_means: Sequence[float]) -> float:
    """The 95 % half-width from `BATCHES` batch means: T_95 · s / √k."""
    k = len(batch_means)
    if k < 2:
        return NAN
    m = mean(batch_means)
    s = math.sqrt(math.fsum((b - m) ** 2 for b in batch_means) / (k - 1))
    return T_95 * s / math.sqrt(k)


def sample_ci(values: Sequence[float]) -> float:
    """The batch-means 95 % half-width of the mean of `values`: the first `BATCHES`·b
    values in `BATCHES` consecutive batches of b = n // `BATCHES`; inf below
    `MIN_SAMPLES_FOR_CI` values."""
    n = len(values)
    if n < MIN_SAMPLES_FOR_CI:
        return math.inf
    b = n // BATCHES
    return half_width([mean(values[i * b : (i + 1) * b]) for i in range(BATCHES)])


def integral(times: Sequence[float], values: Sequence[float], start: float, stop: float) -> float:
    """∫ over [start, stop] of the step function that is `values[i]` from `times[i]` on
    (and `values[0]` before `times[0]`); `times` ascending."""
    if stop <= start or not times:
        return 0.0
    total = []
    i = max(bisect_right(times, start) - 1, 0)  # the piece in force at `start`
    lo = start
    while i < len(times):
        hi = min(times[i + 1], stop) if i + 1 < len(times) else stop
        if hi > lo:
            total.append(values[i] * (hi - lo))
            lo = hi
        if hi >= stop:
            break
        i += 1
    return math.fsum(total)


def time_average(
    times: Sequence[float], values: Sequence[float], start: float, stop: float
) -> float:
    """The time average over [start, stop] of the step function of `integral`."""
    if stop <= start or not times:
        return NAN
    return integral(times, values, start, stop) / (stop - start)


def window_ci(times: Sequence[float], values: Sequence[float], start: float, stop: float) -> float:
    """The batch-means 95 % half-width of the time average over [start, stop], from the
    averages over `BATCHES` equal windows."""
    if stop <= start or not times:
        return NAN
    width = (stop - start) / BATCHES
    edges = [start + i * width for i in range(BATCHES)] + [stop]
    return half_width([time_average(times, values, edges[i], edges[i + 1]) for i in range(BATCHES)])


def held_range(
    times: Sequence[float], values: Sequence[float], start: float, stop: float
) -> tuple[float, float]:
    """The least and the greatest value held for a positive time within [start, stop]."""
    held = []
    for i, value in enumerate(values):
        lo = start if i == 0 else max(times[i], start)
        hi = min(times[i + 1], stop) if i + 1 < len(times) else stop
        if hi > lo:
            held.append(value)
    return (min(held), max(held)) if held else (NAN, NAN)
