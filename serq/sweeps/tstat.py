"""Student's t interval over independent replications.

Each replication of a point (one run with its own seed) gives one mean per observation;
those means are independent and, for runs long enough, near normal, so the 95 % interval
of their average is `t(0.975, n-1) · s / √n` with `s` the sample standard deviation of the
n means. The quantile is computed here (regularized incomplete beta by Lentz's continued
fraction, then bisection), not tabulated, so it is right for every n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

NAN = math.nan


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with `df` degrees of freedom."""
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The `p`-quantile (0 < p < 1) of Student's t with `df` > 0 degrees of freedom."""
    if not 0 < p < 1 or not df > 0:
        raise ValueError(f"t_quantile needs 0 < p < 1 and df > 0, not p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    if p == 0.5:
        return 0.0
    low, high = 0.0, 1.0
    while t_cdf(high, df) < p:
        low, high = high, high * 2
    for _ in range(200):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        if t_cdf(middle, df) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """The mean of `values` and the half-width of its Student-t `level` interval: NaN and
    NaN without values, the value and inf with one (one replication has no spread)."""
    n = len(values)
    if n == 0:
        return NAN, NAN
    mean = math.fsum(values) / n
    if n == 1:
        return mean, math.inf
    if not math.isfinite(mean):
        return mean, NAN
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, t_quantile(0.5 + level / 2, n - 1) * math.sqrt(variance / n)


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for 0 ≤ x ≤ 1."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1) / (a + b + 2):  # the continued fraction converges fast here
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 1000):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < eps:
            break
    return result
