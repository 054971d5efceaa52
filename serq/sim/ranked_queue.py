"""A pool's queue whose keys do not change while its holds wait, kept ranked.

`queue by (k1, ...)` chooses, before every admission, the waiting hold with the least
keys, then the earliest to join. The keys are evaluated again for every waiting hold each
time (`Pool.head`), which costs a scan of the queue per admission: quadratic in the
length of a queue that grows, as it does past the load where a replica collapses.

When the keys read only the session's attributes and constants (`steady`: no draw, no
observable, no context variable such as `waited`), a waiting session's keys cannot
change while it waits, since only the session itself sets its attributes and it is
suspended in the hold. The two attributes the scheduler sets (`cached` at an admission,
`computed` at a preemption, which may reach a session holding elsewhere) are left out.
`RankedQueue` then evaluates the keys once, when the hold joins, and keeps the holds in
a heap by (keys, join order), which is the order the scan finds. A key with a NaN in it
is ordered by `total` (as pyserq 0.1.2 orders it: a NaN with its sign bit set before
every number, one without after), which the heap does not do, so while such a hold
waits, `head` declines and the pool scans by `total`.

Otherwise it is the queue in join order, as the pool's deque is: `append`, `remove`,
`popleft`, `[0]`, iteration, `len`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from heapq import heappop, heappush
from itertools import count
from typing import Any

from serq import ir
from serq.ir.expr import reads_only
from serq.sim.exprs import key_tuple

SET_BY_THE_SCHEDULER = ("cached", "computed")


def unordered(key: tuple[float, ...]) -> bool:
    """Whether a tuple of keys may have a NaN in it, which no order places: its sum is
    NaN (as it is for inf and -inf together too, which only leaves that one to a scan).
    (`key != key` will not do: a tuple compares an item with itself by identity.)"""
    total = sum(key)
    return total != total


def total(key: tuple[float, ...]) -> tuple[tuple[int, float], ...]:
    """`key` as a tuple that orders a NaN too, as pyserq 0.1.2 orders queue and eviction
    keys (Rust's `f64::total_cmp` for a NaN): one with its sign bit set (`inf - inf`)
    before every number, one without (`-(inf - inf)`) after. Numbers keep their order,
    -0 and 0 equal (a tie, as `==` has them)."""
    return tuple(
        (1, x) if x == x else ((0, 0.0) if math.copysign(1.0, x) < 0 else (2, 0.0)) for x in key
    )


def least(items: Iterable[Any], key_of: Callable[[Any], tuple[float, ...]]) -> Any:
    """The first of `items` with the least keys (`key_of`), NaNs ordered by `total`; None
    when there is none. A scan: the first of equal keys stays."""
    best = None
    best_key: tuple[float, ...] = ()
    nan = False
    for item in items:
        key = key_of(item)
        if not nan and unordered(key):
            nan = True
            if best is not None:
                best_key = total(best_key)
        if nan:
            key = total(key)
        if best is None or key < best_key:
            best, best_key = item, key
    return best


def steady(keys: Sequence[ir.Expr], attrs: Sequence[str]) -> bool:
    """Whether queue keys read only constants and the attributes a session sets itself
    (`attrs`: the program's attribute names by slot)."""
    scheduled = frozenset(i for i, name in enumerate(attrs) if name in SET_BY_THE_SCHEDULER)
    return bool(keys) and all(reads_only(k, slots_but=scheduled) for k in keys)


class RankedQueue:
    """The waiting holds of a pool in join order, with a heap of them by their keys.
    `joined` (run -> its join number, in join order) is as long as the queue and as true,
    for code that tests it without a call (`serq.sim.compiled_holds.waiting`)."""

    __slots__ = ("keys", "key_of", "joined", "_heap", "_unordered", "_numbers")

    def __init__(self, keys: Sequence[Callable[[Any], float]]) -> None:
        self.keys = tuple(keys)
        self.key_of = key_tuple(self.keys)
        self.joined: dict[Any, int] = {}  # run -> the number it joined with, join order
        self._heap: list[tuple[tuple[float, ...], int, Any]] = []  # removed ones stay
        self._unordered: set[Any] = set()  # the runs whose keys have a NaN
        self._numbers = count().__next__

    def append(self, run: Any) -> None:
        """`run` joins the queue; its keys are read now, once."""
        key = self.key_of(run.session.attrs)
        number = self._numbers()
        self.joined[run] = number
        if unordered(key):
            self._unordered.add(run)
        else:
            heappush(self._heap, (key, number, run))

    def remove(self, run: Any) -> None:
        """Take `run` out (admitted or cancelled)."""
        del self.joined[run]
        self._unordered.discard(run)
        heap = self._heap
        if len(heap) > 2 * len(self.joined) + 64:  # too many removed ones: keep the rest
            joined = self.joined
            self._heap = [e for e in heap if joined.get(e[2]) == e[1]]
            self._heap.sort()

    def popleft(self) -> Any:
        """Take out and return the first to join."""
        run = self[0]
        self.remove(run)
        return run

    def head(self) -> Any:
        """The run with the least keys, the first to join among equals; None when the
        queue is empty or a NaN key leaves the choice to the pool's scan."""
        if self._unordered:
            return None
        heap = self._heap
        joined = self.joined
        while heap:
            _, number, run = heap[0]
            if joined.get(run) == number:
                return run
            heappop(heap)
        return None

    def __getitem__(self, index: int) -> Any:
        if index != 0 or not self.joined:
            raise IndexError("a ranked queue gives only its first to join, [0]")
        return next(iter(self.joined))

    def __iter__(self) -> Iterator[Any]:
        return iter(self.joined)

    def __len__(self) -> int:
        return len(self.joined)

    def __contains__(self, run: Any) -> bool:
        return run in self.joined
