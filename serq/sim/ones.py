"""Adding 1.0 to a float, k times, one addition at a time, without making k additions.

A resident that decodes moves its position by 1.0 an iteration (`x = x + 1.0`, rounded).
A fast-forwarded span (`serq.sim.step`) must leave the position where that many single
additions leave it, and find the iteration at which it first passes a block edge. For a
whole number below 2**53 the additions are exact, so k of them are `x + k`. For a
fractional `x` they are exact too while the sum stays in x's binade (the powers of two
around it: the unit in the last place is at most 1/2 there), and each step into the next
binade rounds once, to even. So k additions replay as at most one exact jump and one
rounded addition per binade crossed: about log2 of the distance, not k.

These functions assume 0 <= x and that x stays below 2**52 (the callers check it): past
that the unit in the last place reaches 1 and an addition can round away.
"""

from __future__ import annotations

import math

_frexp = math.frexp
_ldexp = math.ldexp
_ceil = math.ceil
_floor = math.floor


def plus_ones(x: float, k: int) -> float:
    """`x` after `k` additions of 1.0, each rounded as float addition rounds."""
    while k > 0:
        if x == _floor(x):  # a whole number: every addition is exact
            return x + k
        if x < 1.0:  # below 1 the first addition rounds to 1.0's binade
            x += 1.0
            k -= 1
            continue
        top = _ldexp(1.0, _frexp(x)[1])  # the binade's end: x < top <= 2x
        exact = _ceil(top - x) - 1  # x + j < top for j <= exact: exact sums (top - x is)
        if exact >= k:
            return x + k
        x += exact
        x += 1.0  # into the next binade: the one addition that rounds
        k -= exact + 1
    return x


def exact_ones(x: float) -> int:
    """How many additions of 1.0 to `x`, one after another, are each exact (`x + j` for
    the j-th): every one for a whole number (returned as 2**52), none below 1 for a
    fraction, else those that stay in x's binade."""
    if x == _floor(x):
        return 1 << 52
    if x < 1.0:
        return 0
    return _ceil(_ldexp(1.0, _frexp(x)[1]) - x) - 1


def ones_past(x: float, bound: float) -> int:
    """The fewest additions of 1.0 (as `plus_ones` makes them) after which `x` exceeds
    `bound`: 0 when it already does."""
    k = 0
    while x <= bound:
        if x == _floor(x):  # x + j is exact and whole: it exceeds bound past floor(bound)
            return k + int(_floor(bound) - x) + 1
        if x < 1.0:
            x += 1.0
            k += 1
            continue
        top = _ldexp(1.0, _frexp(x)[1])
        exact = _ceil(top - x) - 1
        if bound < top:  # passed inside the binade: bound - x is exact (x <= bound < 2x)
            j = int(_floor(bound - x)) + 1
            if j <= exact:
                return k + j
        x += exact
        x += 1.0
        k += exact + 1
    return k
