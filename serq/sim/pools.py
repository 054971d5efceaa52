"""Pools: counted resources with a cache, an admission queue and growers.

A `Pool` is one pool member's state: its capacity and block, the units allocated to its
holders (`HoldPart`s, in admission order), its `Cache`, its admission queue (`HoldRun`s
waiting, a preempted one in `front` ahead of the rest) and its growers (`GrowWait`s, in
stall order). What happens to a hold (admission, release, preemption) is `holds.py`'s;
this module keeps the numbers and chooses who is next.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from serq.ir import Pool as IRPool
from serq.sim.cache import Cache
from serq.sim.core import Engine
from serq.sim.errors import SimError
from serq.sim.exprs import key_tuple
from serq.sim.ranked_queue import RankedQueue, least

INF = math.inf
# a run with at most this many tokens left after an iteration is done, a growing run
# whose position plus its tokens passes its allocation by at most this grows nothing, and
# a load that passes the allocation by at most this fills it: the tolerance both
# references keep on tokens (tests/sim/NOTES.md §26), so that 64 / 3 taken three times
# finishes a prefill of 64, a position 1e-14 past a block edge needs no block, and loads
# of 0.1 and 0.2 fit a hold of 0.3
TOKEN_EPS = 1e-9
# an admission or a growth fits when what the pool then holds passes its cap by no more
# than the rounding of a few additions (this share of the cap, sixteen units in its last
# place): three holds of 0.1 fit a pool of 0.3, whose sum is 0.30000000000000004, as in
# exact arithmetic. Not the references' 1e-9 units: a growth of 1e-9 past a full cap
# would break the invariant allocated + cached <= cap (spec §3; tests/sim/NOTES.md §22,
# §29). A hold that alone needs more than the cap, even by rounding, is rejected
# (`Holds._fits`, against `cap`, as both references compare it)
FIT_ROUNDING = 2.0**-48


class HoldPart:
    """A hold's allocation on one pool: `alloc` units, `position` the computed position a
    load reached (None while nothing advanced it)."""

    __slots__ = ("pool", "alloc", "position", "run", "leased", "released", "consumed", "reserve")

    def __init__(self, pool: Pool, run: Any) -> None:
        self.pool = pool
        self.run = run
        self.alloc = 0.0
        self.position: float | None = None
        self.leased = False
        self.released = False
        self.consumed = 0.0
        self.reserve = 0.0  # the units its hold reserved (`reserve held` counts them)

    def computed(self) -> float:
        """The computed prefix: once a load moved any position of the hold, this part's
        position (which starts at the prefix it consumed), else its allocation."""
        if not self.run.positioned:
            return self.alloc
        return self.consumed if self.position is None else self.position


class GrowWait:
    """A session waiting to grow `part` by `amount` units; `resident` is the step-stage
    resident whose growth stalled (`preempt none`), None for a `grow` statement."""

    __slots__ = ("session", "part", "amount", "resident")

    def __init__(self, session: Any, part: HoldPart, amount: float, resident: Any = None):
        self.session = session
        self.part = part
        self.amount = amount
        self.resident = resident


class Pool:
    """One pool member at run time."""

    __slots__ = (
        "index",
        "name",
        "cap",
        "limit",
        "block",
        "lifo",
        "keys",
        "key_of",
        "engine",
        "allocated",
        "infinite",
        "finite",
        "cache",
        "holders",
        "sessions",
        "n_holders",
        "queue",
        "ranked",
        "front",
        "growers",
        "dirty",
        "spill",
        "origin",
        "preempt_key_of",
        "requeue_tail",
        "reserve_held",
        "held",
        "_join_seq",
    )

    def __init__(
        self,
        index: int,
        pool: IRPool,
        engine: Engine,
        queue_keys: Sequence[Callable[[Any], float]],
        evict_keys: Sequence[Callable[[Any], float]] | None,
        ranked: bool = False,
    ) -> None:
        self.index = index
        self.name = pool.name if pool.index is None else f"{pool.name}[{pool.index}]"
        self.cap = pool.cap
        # what admissions and growths may fill it to: the cap, up to rounding
        self.limit = pool.cap + pool.cap * FIT_ROUNDING
        self.block = pool.block if pool.block else None
        self.lifo = pool.preempt in ("lifo", "by")  # a growth that does not fit preempts
        self.keys = tuple(queue_keys)
        self.key_of = key_tuple(self.keys)
        self.engine = engine
        self.allocated = 0.0
        # while some part holds inf units (a pool of cap inf), `allocated` is inf and
        # these keep the level to come back to: the parts of inf and the sum of the rest
        self.infinite = 0
        self.finite = 0.0
        self.cache = Cache(engine, evict_keys, self.block)
        self.holders: dict[HoldPart, None] = {}
        # The holders as the observables and the victim choice see them (as the reference
        # keeps them): a session's admissions, counted, in the order of its latest; any
        # release by the session takes all of them out.
        self.sessions: dict[Any, int] = {}
        self.n_holders = 0
        # the waiting holds in join order; ranked by the keys when nothing changes them
        # while the holds wait (`serq.sim.ranked_queue.steady`)
        self.ranked = ranked and bool(self.keys)
        self.queue: deque[Any] | RankedQueue = (
            RankedQueue(self.keys) if self.ranked else deque()
        )
        self.front: deque[Any] = deque()
        self.growers: deque[GrowWait] = deque()
        self.dirty = False
        self.spill: Any = None
        self.origin = pool.origin
        # `preempt by (keys) requeue tail|head`: the victim by ascending keys (the World
        # compiles them), put back at the tail or the head of the queue
        self.preempt_key_of: Callable[[Any], tuple] | None = None
        self.requeue_tail = pool.requeue == "tail"
        # `reserve held`: each holder's reservation beyond its allocation stays counted
        # against admission and growth (`held`, their sum) until it releases
        self.reserve_held = pool.reserve_held
        self.held = 0.0
        self._join_seq = 0

    # observables
    def cachedin(self, session: Any) -> float:
        return self.cache.cachedin(session)

    def holders_count(self) -> float:
        return float(self.n_holders)

    # `queued_count()`, `holders_count()` and `cachedin(s)` as code (`ExprCompiler` writes
    # them out: {t} the pool's name, {a} the slot of the session, None without one)
    COUNT_CODE = {
        "queued": "float(len({t}.queue) + len({t}.front))",
        "holders": "float({t}.n_holders)",
        "cachedin": "({t}.cache.live[a[{a}]].units if a[{a}] in {t}.cache.live else 0.0)",
    }

    def queued_count(self) -> float:
        return float(len(self.queue) + len(self.front))

    def blocksize(self) -> float:
        return self.block or 0.0

    def round_up(self, units: float) -> float:
        """`units` rounded up to whole blocks (as they are when there are more blocks than
        a float counts: the rounding is below its precision)."""
        b = self.block
        if b is None:
            return units
        blocks = units / b
        if not math.isfinite(blocks):
            return units
        return math.ceil(blocks) * b

    def round_down(self, units: float) -> float:
        """`units` rounded down to whole blocks (as `round_up` for more than a float counts)."""
        b = self.block
        if b is None:
            return units
        blocks = units / b
        if not math.isfinite(blocks):
            return units
        return math.floor(blocks) * b

    # the queue
    def join(self, run: Any, at_front: bool) -> None:
        """Queue `run` (a `HoldRun`), at the head when it was preempted."""
        run.joined = self.engine.now
        self._join_seq += 1
        run.join_seq = self._join_seq
        if at_front:
            self.front.appendleft(run)
        else:
            self.queue.append(run)
        self.dirty = True

    def leave(self, run: Any) -> None:
        """Take `run` out of the queue (admitted or cancelled)."""
        if self.front and self.front[0] is run:
            self.front.popleft()
        elif self.ranked and run not in self.front:
            self.queue.remove(run)
        elif self.queue and self.queue[0] is run:
            self.queue.popleft()
        elif run in self.front:
            self.front.remove(run)
        else:
            self.queue.remove(run)
        self.dirty = True

    def head(self) -> Any:
        """The waiting hold to try next: a preempted one, else by the keys, else the first."""
        if self.front:
            return self.front[0]
        queue = self.queue
        if not queue:
            return None
        keys = self.keys
        if not keys:
            return queue[0]
        if self.ranked:
            run = queue.head()
            if run is not None:
                return run  # else a NaN key: the scan below decides
        engine = self.engine
        now = engine.now
        key_of = self.key_of
        best = None
        best_key: tuple[float, ...] = ()
        for run in queue:  # join order breaks ties: the first of equal keys stays
            engine.waited = now - run.joined
            key = key_of(run.session.attrs)
            if best is None or key < best_key:
                best, best_key = run, key
            elif not key >= best_key:  # neither: a NaN decided, which `least` orders
                return least(queue, lambda r: self._keys_of(r, now))
        return best

    def _keys_of(self, run: Any, now: float) -> tuple[float, ...]:
        """The queue keys of the waiting `run` at `now`."""
        self.engine.waited = now - run.joined
        return self.key_of(run.session.attrs)

    # holders
    def add_holder(self, part: HoldPart, units: float) -> None:
        """Allocate `units` to `part`, the newest holder."""
        part.alloc = units
        if self.infinite or units == INF:
            self.infinite_in(units)
        self.allocated += units
        if self.reserve_held:
            self.held += max(0.0, part.reserve - units)
        self.holders[part] = None
        session = part.run.session
        sessions = self.sessions
        n = sessions.pop(session, 0)
        sessions[session] = n + 1
        self.n_holders += 1
        self.dirty = True

    def remove_holder(self, part: HoldPart) -> None:
        """Give `part`'s allocation back."""
        if self.reserve_held:
            self.held -= max(0.0, part.reserve - part.alloc)
            if self.held < 0 or not self.holders:
                self.held = max(0.0, self.held)
        self.allocated -= part.alloc
        if self.infinite:
            self.allocated = self.infinite_out(part.alloc)
        del self.holders[part]
        if not self.holders:
            self.allocated = 0.0  # no drift survives an empty pool
        self.n_holders -= self.sessions.pop(part.run.session, 0)
        part.released = True
        self.dirty = True

    def infinite_in(self, units: float) -> None:
        """A part of `units` comes in (before `allocated` counts it) while a part of inf
        units is held or this is one: the level without the infinite parts is kept."""
        if not self.infinite:
            self.finite = self.allocated
        if units == INF:
            self.infinite += 1
        else:
            self.finite += units

    def infinite_out(self, units: float) -> float:
        """A part of `units` goes (`allocated` already less them) while a part of inf units
        is held: the level after, inf while one still is, else the sum of the others (inf
        less inf would be NaN)."""
        if units == INF:
            self.infinite -= 1
        else:
            self.finite -= units
        return INF if self.infinite else self.finite

    def infinite_grow(self, alloc: float, delta: float) -> None:
        """A part of `alloc` units grows by `delta` (before `allocated` counts it) while a
        part of inf units is held or this one becomes one."""
        if not self.infinite:
            self.finite = self.allocated
        if delta == INF:
            self.infinite += 1
            self.finite -= alloc
        elif alloc != INF:
            self.finite += delta

    def grow_delta(self, alloc: float, amount: float) -> float:
        """What a part of `alloc` units grows by for `amount` more, rounded up to blocks;
        an infinite part stays what it is (inf less inf would be NaN)."""
        delta = self.round_up(alloc + amount) - alloc
        return 0.0 if delta != delta else delta

    def committed(self) -> float:
        """The units admission and growth count as taken: the allocation, and under
        `reserve held` the holders' reservations beyond it."""
        return self.allocated + self.held

    def growth(self, part: HoldPart, need: float) -> float:
        """What growing `part` by `need` units adds to `committed()`: `need`, less what
        its own held reservation already covers."""
        if not self.reserve_held:
            return need
        covered = min(need, max(0.0, part.reserve - part.alloc))
        return need - covered

    def grew(self, part: HoldPart, need: float) -> None:
        """`part` grew by `need` (after `growth` said it fits): its held slack shrinks."""
        if self.reserve_held:
            self.held -= min(need, max(0.0, part.reserve - (part.alloc - need)))

    def victim(self, innermost: Callable[[Any, Pool], HoldPart | None]) -> HoldPart | None:
        """The most recently admitted holder's innermost hold here that is not a lease;
        under `preempt by` the holder with the smallest keys, ties to the newest."""
        if self.preempt_key_of is not None:
            from serq.sim.preempt import by_keys

            return by_keys(self, innermost)
        for session in reversed(self.sessions):
            part = innermost(session, self)
            if part is not None:
                return part
        return None

    def evict(self, recorder: Any) -> None:
        """Evict cached entries until the allocation and the cache fit the capacity: the
        allocation alone, as pyserq 0.1.4 counts it (a reservation held under `reserve
        held` keeps others out, but evicts no cached prefix)."""
        cache = self.cache
        taken = self.allocated
        if taken + cache.total > self.cap:
            try:
                removed, units = cache.evict_to(self.cap - taken)
            except SimError as error:  # too many blocks to step through: at this pool
                raise SimError(self.origin, f"pool `{self.name}`: {error.message}") from None
            if units:
                self.dirty = True
                if removed:  # `evict_counts`, inline
                    recorder.pool_count(self.index, "evicted_entries", removed)
                recorder.pool_count(self.index, "evicted_units", units)

    def evict_counts(self, recorder: Any, removed: int, units: float) -> None:
        """Count an eviction of `units` that removed `removed` entries."""
        if removed:
            recorder.pool_count(self.index, "evicted_entries", removed)
        if units:
            recorder.pool_count(self.index, "evicted_units", units)
