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
from typing import Any

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
    """~erlang(k, mean): the sum of floor(k) exponentials of mean mean / floor(k); past
    `PHASES_SUMMED` phases, the gamma variate of that shape drawn at once (`_gamma`)."""
    n = int(k)
    if n <= 0:  # outside the law (`problem`): the checked sampler never gets here
        return math.nan
    if n > PHASES_SUMMED:
        return (mean / n) * _gamma(u, n)
    product = 1.0
    for _ in range(n):
        product *= 1.0 - u()
    if product > 0.0:
        return -(mean / n) * math.log(product)
    return (mean / n) * _gamma(u, n)  # an underflow (see `PHASES_SUMMED`): never seen


# Up to this many phases an Erlang draw multiplies one uniform a phase: the product of 64
# stays far above the smallest float (it is below 1e-300 with probability about 1e-170).
# Beyond, the product would cost a draw per phase and underflow to 0 (an infinite draw)
# near 745 phases, so the sum is drawn as the gamma variate of shape n, the same law.
PHASES_SUMMED = 64


def _gamma(u: Callable[[], float], shape: float) -> float:
    """A gamma variate of `shape` >= 1 and scale 1 (Marsaglia and Tsang's method, 2000),
    from the uniforms `u` (a standard normal from two of them, Box and Muller)."""
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = math.sqrt(-2.0 * math.log(1.0 - u())) * math.cos(2.0 * math.pi * u())
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        w = 1.0 - u()
        if math.log(w) < 0.5 * x * x + d - d * v + d * math.log(v):
            return d * v


def h2(u: Callable[[], float], mean: float, cv2: float) -> float:
    """~h2(mean, cv2): the balanced-means two-phase hyperexponential of mean `mean` and
    squared coefficient of variation `cv2`; a cv2 below 1 is drawn as 1 (see `problem`)."""
    if not cv2 >= 1.0:
        cv2 = 1.0
    p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
    if u() < p:
        return -(mean / (2.0 * p)) * math.log(1.0 - u())
    return -(mean / (2.0 * (1.0 - p))) * math.log(1.0 - u())


def bernoulli(u: Callable[[], float], p: float) -> float:
    """~bernoulli(p): 1 with probability p, else 0."""
    return 1.0 if u() < p else 0.0


# ------------------------------------------------------------------ the laws' domains
#
# A draw whose parameters are outside its law stops the run (`SimError`). One case the
# reference gives a meaning: `~h2(m, cv2)` with cv2 < 1, which no hyperexponential has,
# is drawn by pyserq 0.1.2 exactly as `~h2(m, 1)` (the same draws), an exponential of mean
# m; serq draws it so too and warns (W-draw) at the draw that the variance is not the one
# asked for. `~erlang(k, m)` with a fractional k >= 1 has floor(k) phases, as the reference.


def problem(dist: str, args: tuple[float, ...]) -> tuple[str, float, str] | None:
    """What is outside the law of `~dist(args)`: (the parameter, its value, the rule), or
    None; `~h2`'s cv2 below 1 is not a problem here (`below_one`). A law's parameters are
    finite: an infinite mean, bound or cv2 would draw inf or NaN."""
    if dist == "exp":
        (mean,) = args
        return _mean("exp", mean)
    if dist == "uniform":
        lo, hi = args
        if not math.isfinite(lo):
            return "the low end of `~uniform`", lo, "a finite number"
        if not hi >= lo or hi == math.inf:
            return "the high end of `~uniform`", hi, f"finite and at least the low end, {lo:g}"
        return None
    if dist == "erlang":
        k, mean = args
        if not 1 <= k < math.inf:
            return "the phases of `~erlang`", k, "at least 1 and finite"
        return _mean("erlang", mean)
    if dist == "h2":
        mean, cv2 = args
        found = _mean("h2", mean)
        if found is None and not cv2 < math.inf:  # NaN or inf; below 1 is `below_one`
            return "the cv2 of `~h2`", cv2, "a finite number"
        return found
    if dist == "bernoulli":
        (p,) = args
        return None if 0.0 <= p <= 1.0 else ("the probability of `~bernoulli`", p, "in [0, 1]")
    return None


def _mean(dist: str, mean: float) -> tuple[str, float, str] | None:
    """The problem of `~dist`'s mean `mean`, which must be positive and finite, or None."""
    return None if 0 < mean < math.inf else (f"the mean of `~{dist}`", mean, "positive and finite")


def below_one(dist: str, args: tuple[float, ...]) -> bool:
    """Whether `~dist(args)` is an `~h2` asked for a cv2 below 1 (drawn with cv2 = 1)."""
    return dist == "h2" and args[1] < 1.0


def checked(dist: str, fail: Callable[..., float], warn: Callable[..., None]):
    """The sampler of `dist` that first checks its arguments: `fail(origin, problem)` for
    arguments outside the law, `warn(origin, args)` once an `~h2`'s cv2 is below 1."""
    sample = SAMPLERS[dist]

    def draw(u: Callable[[], float], *args_origin: Any) -> float:
        *args, origin = args_origin
        found = problem(dist, tuple(args))
        if found is not None:
            return fail(origin, found)
        if dist == "h2" and args[1] < 1.0:
            warn(origin, tuple(args))
            args[1] = 1.0
        return sample(u, *args)

    return draw


def fixed(
    dist: str, u: Callable[[], float], args: tuple[float, ...]
) -> Callable[..., float] | None:
    """`SAMPLERS[dist]` bound to `u` and the constant arguments `args`, as a function of
    one ignored argument (a compiled expression's attributes), with its constants worked
    out once: the same arithmetic on the same draws, so the same values bit for bit.
    None for a distribution or arguments it does not specialise (or outside its law, or
    an `~h2` so variable that its first phase is certain)."""
    if problem(dist, args) is not None:
        return None
    log = math.log
    if dist == "exp":
        scale = -args[0]  # `-mean * log(...)` is `(-mean) * log(...)`
        return lambda _: scale * log(1.0 - u())
    if dist == "h2" and args[1] >= 1.0:
        mean, cv2 = args
        p = 0.5 * (1.0 + math.sqrt((cv2 - 1.0) / (cv2 + 1.0)))
        if p == 1.0:  # the first phase is certain: the second's mean divides by 0
            return None
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
