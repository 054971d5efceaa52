"""The arithmetic of the report: sample statistics and piecewise-constant time averages.

Both confidence intervals are batch means over `BATCHES` batches with Student's t at
`BATCHES - 1` degrees of freedom, the 95 % quantile taken as the table value `T_95`
(the reference implementation reports the same half-widths). Missing values are NaN.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain, islice, repeat
from operator import lt, mul, sub

NAN = math.nan
INF = math.inf
BATCHES = 20
T_95 = 2.093  # Student's t, 0.975 quantile, 19 degrees of freedom (as tabulated)
SELECT_FROM = 4096  # from this many values a percentile sorts only the tail
MIN_SAMPLES_FOR_CI = 40  # below this many samples an observation's half-width is inf
# `counted_mean`'s exact products: a value split at 2**27 + 1 into two halves of 26 bits
# (while the split does not overflow), times a count below 2**26
SPLIT = 134217729.0
SPLITTABLE = 2.0**996
COUNT_EXACT = 1 << 26
SQUARABLE = 1e-100  # a mean between this and its inverse squares well within the float range


def fsum(values: Sequence[float]) -> float:
    """The exact sum of `values` (`math.fsum`), or ±inf or NaN when it passes the float
    range or holds both inf and -inf, which `math.fsum` raises for (OverflowError,
    ValueError): a statistic that overflows, or has no value, is reported, not an error."""
    try:
        return math.fsum(values)
    except (OverflowError, ValueError):
        return sum(values, 0.0)


def mean(values: Sequence[float]) -> float:
    """The arithmetic mean of `values` (NaN without any). A sum past the float range is
    taken again over the values scaled by 2⁻⁶⁴ (exact for any value above 2⁻⁹⁵⁸), so that
    the mean of three samples of 1e308 is 1e308, as in pyserq, and not inf."""
    if not values:
        return NAN
    try:
        return math.fsum(values) / len(values)
    except OverflowError:
        try:
            return math.fsum([v * _DOWN for v in values]) / len(values) * _UP
        except (OverflowError, ValueError):
            return sum(values, 0.0) / len(values)
    except ValueError:  # inf beside -inf
        return NAN


_DOWN, _UP = 2.0**-64, 2.0**64  # powers of 2: scaling by them is exact


def cv2(values: Sequence[float], known_mean: float | None = None) -> float:
    """The squared coefficient of variation of `values`: the sample variance (n - 1)
    over the squared mean (`known_mean`, if the caller has it: `mean(values)`); NaN with
    fewer than two values or a zero mean."""
    n = len(values)
    if n < 2:
        return NAN
    m = mean(values) if known_mean is None else known_mean
    if m == 0:
        return NAN
    if not SQUARABLE < abs(m) < 1 / SQUARABLE:
        # the squares would leave the float range (underflow to 0, or overflow): the
        # same ratio from the values over their mean, whose squares stay near 1
        try:
            return math.fsum((v / m - 1.0) ** 2 for v in values) / (n - 1)
        except OverflowError:
            return math.inf
    # fast path: map in C, each term `(v - m) * (v - m)`, the correctly rounded square
    # (`pow(d, 2.0)` can be an ulp off it, and is slower); a finite d whose square
    # overflows gives an inf term, so an inf sum; fsum is exact: order is free
    try:
        variance = math.fsum(chain.from_iterable(_squares(values, m))) / (n - 1)
    except OverflowError:  # a square or the sum of squares passes the float range
        variance = math.inf if m == m else NAN
    return variance / (m * m)


def _squares(values: Sequence[float], m: float, k: int = 4096) -> Iterator[Iterable[float]]:
    """The terms `(v - m) * (v - m)` of `values`, `k` values at a time (a list of k
    differences each: a list of them all would cost 32 bytes a sample)."""
    for i in range(0, len(values), k):
        d = list(map(sub, values[i : i + k], repeat(m)))
        yield map(mul, d, d)


def percentile(values: Sequence[float], q: float, known_mean: float | None = None) -> float:
    """The nearest-rank `q`-quantile of `values` (0 < q ≤ 1): the ⌈q·n⌉-th smallest.
    `known_mean`, if the caller has it (`mean(values)`), is NaN just when a value is:
    it saves a pass."""
    if not values:
        return NAN
    n = len(values)
    rank = min(max(math.ceil(q * n), 1), n)
    total = sum(values) if known_mean is None else known_mean
    if n >= SELECT_FROM and total == total:  # no NaN: the order is total
        # fast path: sort only the values at or above a threshold taken from every 64th
        # value, below about twice the tail wanted. Every smaller value sorts before them,
        # and a stable sort keeps equal values (0.0 and -0.0) in the same order either way.
        sample = sorted(values[::64])
        below = len(sample) - 2 * (n - rank + 1) // 64 - 2
        if below > 0:
            threshold = sample[below]
            top = [v for v in values if v >= threshold]
            skip = n - len(top)
            if skip <= rank - 1:
                return sorted(top)[rank - 1 - skip]
    if total != total:  # a NaN: sorted as both references sort (below)
        return sorted(values, key=_total_order)[rank - 1]
    return sorted(values)[rank - 1]


def counted_mean(counts: dict[float, int]) -> float:
    """`mean` of the samples that `counts` holds (value -> how many): the same number,
    the sum exactly rounded over every sample (NaN without any). Each value is split in
    two halves of 26 bits (Veltkamp), whose products with a count below 2**26 are exact,
    so `fsum` of the products is the sum of the samples written out."""
    n = sum(counts.values())
    if not n:
        return NAN
    terms = []
    for value, count in counts.items():
        if not (abs(value) < SPLITTABLE and count < COUNT_EXACT):
            return mean(list(chain.from_iterable(map(repeat, counts, counts.values()))))
        t = value * SPLIT
        high = t - (t - value)
        terms.append(high * count)
        terms.append((value - high) * count)
    total = fsum(terms)
    if -INF < total < INF:
        return total / n
    return mean(list(chain.from_iterable(map(repeat, counts, counts.values()))))  # scaled


def counted_percentile(counts: dict[float, int], q: float) -> float:
    """`percentile` (nearest rank) of the samples that `counts` holds, none of them NaN:
    a pass over the distinct values in order."""
    n = sum(counts.values())
    if not n:
        return NAN
    rank = min(max(math.ceil(q * n), 1), n)
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        if seen >= rank:
            return value
    return NAN  # not reached: the counts add up to n


def _total_order(x: float) -> tuple[int, float]:
    """Where `x` sorts among samples as pyserq sorts them (Rust's `f64::total_cmp` for a
    NaN): a NaN with its sign bit set (`0 / 0`) before every number, one without
    (`-(0 / 0)`) after. Python's `sorted` left a NaN where it was, so the rank read
    depended on the order the samples came in."""
    if x == x:
        return (1, x)
    return (0, 0.0) if math.copysign(1.0, x) < 0 else (2, 0.0)


def half_width(batch_means: Sequence[float]) -> float:
    """The 95 % half-width from `BATCHES` batch means: T_95 · s / √k."""
    k = len(batch_means)
    if k < 2:
        return NAN
    m = mean(batch_means)
    try:
        s = math.sqrt(math.fsum((b - m) ** 2 for b in batch_means) / (k - 1))
    except OverflowError:  # a square or the sum of squares passes the float range
        s = math.inf
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
    i = max(bisect_right(times, start) - 1, 0)  # the piece in force at `start`
    j = bisect_left(times, stop, i + 1)  # pieces i .. j - 1 meet (start, stop)
    if j == i + 1:
        return fsum([values[i] * (stop - start)])  # fsum: a -0.0 term sums to 0.0
    # fast path: one comprehension over the inner pieces (fsum is exact: order is free)
    total = [values[i] * (times[i + 1] - start)]
    inner = zip(values[i + 1 : j - 1], times[i + 1 : j - 1], times[i + 2 : j], strict=True)
    total += [v * (hi - lo) for v, lo, hi in inner if hi > lo]
    total.append(values[j - 1] * (stop - times[j - 1]))
    return fsum(total)


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
    return _windows(lambda lo, hi: time_average(times, values, lo, hi), start, stop)


def _windows(average: Callable[[float, float], float], start: float, stop: float) -> float:
    """`window_ci` from `average(lo, hi)`, the time average over [lo, hi]."""
    width = (stop - start) / BATCHES
    edges = [start + i * width for i in range(BATCHES)] + [stop]
    return half_width([average(edges[i], edges[i + 1]) for i in range(BATCHES)])


def held_range(
    times: Sequence[float], values: Sequence[float], start: float, stop: float
) -> tuple[float, float]:
    """The least and the greatest value held for a positive time within [start, stop],
    NaN aside."""
    if stop <= start or not times:
        return (NAN, NAN)
    i = max(bisect_right(times, start) - 1, 0)  # as in `integral`: pieces i .. j - 1
    j = bisect_left(times, stop, i + 1)
    held = [values[i]]
    inner = zip(values[i + 1 : j - 1], times[i + 1 : j - 1], times[i + 2 : j], strict=True)
    held += [v for v, lo, hi in inner if hi > lo]
    if j - 1 > i:
        held.append(values[j - 1])
    # NaN is no value: the least and greatest of the others (NaN when there are none), as
    # both references have it; `min` over a list with NaN depended on where the NaN was
    numbers = [v for v in held if v == v]
    return (min(numbers), max(numbers)) if numbers else (NAN, NAN)


def step_summary(
    times: Sequence[float],
    values: Sequence[float],
    start: float,
    stop: float,
    *,
    increasing: bool = False,
) -> tuple[float, float, float, float]:
    """`time_average`, `window_ci` and `held_range` (least, greatest) of one step function
    over [start, stop], bit for bit, in fewer passes: when every value is finite, the
    area of every piece is multiplied out once, in C, and each window sums its slice.
    `increasing`: the caller knows that `times` strictly increase (every piece is held
    for a positive time), which saves a pass."""
    if stop <= start or not times or not math.isfinite(sum(values)):
        least, greatest = held_range(times, values, start, stop)
        return (
            time_average(times, values, start, stop),
            window_ci(times, values, start, stop),
            least,
            greatest,
        )
    later = islice(times, 1, None)
    areas = list(map(mul, values, map(sub, later, times)))  # held for no time: adds a zero

    def average(lo: float, hi: float) -> float:
        """`time_average` over [lo, hi] (`integral` with the inner areas sliced)."""
        if hi <= lo:
            return NAN
        i = max(bisect_right(times, lo) - 1, 0)
        j = bisect_left(times, hi, i + 1)
        if j == i + 1:
            return fsum([values[i] * (hi - lo)]) / (hi - lo)
        total = [values[i] * (times[i + 1] - lo)]
        total += areas[i + 1 : j - 1]
        total.append(values[j - 1] * (hi - times[j - 1]))
        return fsum(total) / (hi - lo)

    i = max(bisect_right(times, start) - 1, 0)  # `held_range`: every inner piece counts
    j = bisect_left(times, stop, i + 1)  # when each is held for a positive time
    if increasing or all(map(lt, islice(times, i + 1, j - 1), islice(times, i + 2, j))):
        held = values if i == 0 and j == len(values) else values[i:j]
        least, greatest = min(held), max(held)
    else:
        least, greatest = held_range(times, values, start, stop)
    return average(start, stop), _windows(average, start, stop), least, greatest
