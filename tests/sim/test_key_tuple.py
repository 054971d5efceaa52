"""serq/sim/exprs.key_tuple: the tuple of a key list's values, each key called once and in
order (draws in keys come from their stream in that order), as the generator it
replaced in the pool queue, the eviction keys, the serve order, `choose` and `preempt by`."""

from __future__ import annotations

import math

import pytest

from serq.sim.errors import SimError
from serq.sim.exprs import key_tuple


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7])
def test_the_keys_are_called_once_each_in_order(n):
    calls = []

    def key(i):
        def k(a):
            calls.append(i)
            return a[i] * -1.5 if i % 2 else a[i]

        return k

    keys = [key(i) for i in range(n)]
    a = [0.0, -0.0, math.inf, -2.5, 1e-300, math.nan, 7.0]
    got = key_tuple(keys)(a)
    want = tuple(k(a) for k in keys)
    assert calls == [*range(n), *range(n)]
    assert repr(got) == repr(want) and type(got) is tuple and len(got) == n


def test_a_key_that_fails_stops_the_rest():
    calls = []

    def fails(a):
        raise SimError(None, "a key out of its domain")

    def later(a):
        calls.append(1)
        return 0.0

    with pytest.raises(SimError, match="out of its domain"):
        key_tuple([lambda a: 1.0, fails, later])([])
    assert calls == []
