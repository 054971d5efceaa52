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
    """~erlang(k, mean): the sum of k exponentials of mean mean / k."""
    n = int(k)
    if n <= 0:  # outside the law (`problem`): the checked sampler never gets here
        return math.nan
    product = 1.0
    for _ in range(n):
        product *= 1.0 - u()
    return -(mean / n) * math.log(product) if product > 0.0 else math.inf


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
    None; `~h2`'s cv2 below 1 is not a problem here (`below_one`)."""
    if dist == "exp":
        (mean,) = args
        return None if mean > 0 else ("the mean of `~exp`", mean, "positive")
    if dist == "uniform":
        lo, hi = args
        if lo != lo:
            return "the low end of `~uniform`", lo, "a number"
        if not hi >= lo:
            return "the high end of `~uniform`", hi, f"at least the low end, {lo:g}"
        return None
    if dist == "erlang":
        k, mean = args
        if not k >= 1:
            return "the phases of `~erlang`", k, "at least 1"
        return None if mean > 0 else ("the mean of `~erlang`", mean, "positive")
    if dist == "h2":
        mean, cv2 = args
        if not mean > 0:
            return "the mean of `~h2`", mean, "positive"
        return ("the cv2 of `~h2`", cv2, "a number") if cv2 != cv2 else None
    if dist == "bernoulli":
        (p,) = args
        return None if 0.0 <= p <= 1.0 else ("the probability of `~bernoulli`", p, "in [0, 1]")
    return None


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
    None for a distribution or arguments it does not specialise (or outside its law)."""
    if problem(dist, args) is not None:
        return None
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
