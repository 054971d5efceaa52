"""Random streams and the distributions of `~exp(...)` and its kin.

A run has four independent streams, all derived from its seed: arrivals (renewal gaps,
Poisson gaps), workload (`init` and `turn` blocks, trace sampling), sessions (draws in the
session's statements) and eviction (eviction keys, spill work). Each is a `random.Random`,
so one seed and one program give one result on every machine.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

STREAMS = ("arrivals", "workload", "session", "eviction")


def streams(seed: int) -> dict[str, random.Random]:
    """The run's four random streams for `seed`, by name."""
    return {name: random.Random(f"serq:{seed}:{name}") for name in STREAMS}


# Each sampler takes the stream's bound `random()` first, then the distribution's arguments.


def exp(u: Callable[[], float], mean: float) -> float:
    """~exp(mean): exponential of mean `mean`."""
    return -mean * math.log(1.0 - u())


def det(u: Callable[[], float], x: float) -> float:
    """~det(x): the constant `x` (draws nothing)."""
    return x


def uniform(u: Callable[[], float], lo: float, hi: float) -> float:
    """~uniform(lo, hi)."""
    return lo + (hi - lo) * u()


def erlang(u: Callable[[], float], k: float, mean: float) -> float:
    """~erlang(k, mean): the sum of k exponentials of mean mean / k."""
    n = int(k)
    if n <= 0:
        return math.nan
    product = 1.0
    for _ in range(n):
        product *= 1.0 - u()
    return -(mean / n) * math.log(product) if product > 0.0 else math.inf


def h2(u: Callable[[], float], mean: float, cv2: float) -> float:
    """~h2(mean, cv2): the balanced-means two-phase hyperexponential of mean `mean` and
    squared coefficient of variation `cv2` (>= 1)."""
    if cv2 < 1.0:
        return math.nan
    p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
    if u() < p:
        return -(mean / (2.0 * p)) * math.log(1.0 - u())
    return -(mean / (2.0 * (1.0 - p))) * math.log(1.0 - u())


def bernoulli(u: Callable[[], float], p: float) -> float:
    """~bernoulli(p): 1 with probability p, else 0."""
    return 1.0 if u() < p else 0.0


def fixed(
    dist: str, u: Callable[[], float], args: tuple[float, ...]
) -> Callable[..., float] | None:
    """`SAMPLERS[dist]` bound to `u` and the constant arguments `args`, as a function of
    one ignored argument (a compiled expression's attributes), with its constants worked
    out once: the same arithmetic on the same draws, so the same values bit for bit.
    None for a distribution or arguments it does not specialise."""
    log = math.log
    if dist == "exp":
        scale = -args[0]  # `-mean * log(...)` is `(-mean) * log(...)`
        return lambda _: scale * log(1.0 - u())
    if dist == "h2" and args[1] >= 1.0:
        mean, cv2 = args
        p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
        first, second = -(mean / (2.0 * p)), -(mean / (2.0 * (1.0 - p)))
        return lambda _: (first if u() < p else second) * log(1.0 - u())
    return None


SAMPLERS: dict[str, Callable[..., float]] = {
    "exp": exp,
    "det": det,
    "uniform": uniform,
    "erlang": erlang,
    "h2": h2,
    "bernoulli": bernoulli,
}
