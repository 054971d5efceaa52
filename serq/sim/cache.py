"""A pool's cache: the prefixes sessions left behind, and their eviction.

An entry is a number of units with its release time and release order, and an owner: the
session whose prefix it is, or None for a dead entry (the unusable rest of an entry its
session consumed part of). A session has at most one live entry per pool, which
`cachedin` reads. Entries are kept in release order, which is the LRU order; `evict by`
orders by its keys and then release order, re-evaluated before every entry or block.

Within one call of `evict_to` nothing a key may read changes but the size of the entry
that lost a block, when the keys read only the entries' context, their owners'
attributes, constants and parts that read no entry, worked out once as the call starts
(`Cache.steady`: no draw, no other observable; `Cache.hoisted`,
`serq.sim.eviction_keys`). Then, once a second victim is wanted, the keys are evaluated
once per entry into a heap, and after that again only for the entry a block was taken
from, instead of for every entry before every block. The victims are the same as long as
no key is NaN (a NaN orders nothing, and the scan's answer then depends on where it
sits); with one, it falls back to the scan.

Blocks that are not whole numbers leave float noise: ten blocks of 1.1 cached as
11.000000000000002 keep 1.8e-15 after ten blocks are evicted. An entry that a block leaves
with at most `EPS` units is gone, counted in `evicted_entries` and no longer `cachedin`,
as both references have it; the noise stays in the cache's total (its `mean_cached`), as
in the references, even when no entry is left (but never below 0, which the noise of the
subtractions may be; tests/sim/NOTES.md §28).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from heapq import heapify, heappop, heapreplace
from itertools import count
from typing import Any

from serq.sim.core import Engine
from serq.sim.errors import SimError, number
from serq.sim.exprs import key_tuple
from serq.sim.ranked_queue import least
from serq.sim.session import QUEUED

EPS = 1e-9  # evicting stops within this of the limit (`Cache.evict_to`)
# Evicting in LRU order without a spill, an entry that loses more blocks than this at
# once loses them in one step (the same blocks; the units differ from a block-by-block
# subtraction in the last bits). Keyed and spilling eviction step block by block (the
# keys are read again after every block, and every block is spilled), so a block so
# small that one eviction would take more steps than `STEPPED_BLOCKS` stops the run.
BULK_BLOCKS = 1 << 16
STEPPED_BLOCKS = 10_000_000


_WHOLE = float(2**53)  # whole floats below this add and subtract exactly
_new = object.__new__
_floor, _isfinite = math.floor, math.isfinite


def _blocks(units: float, total: float, bound: float, block: float, taken: float) -> int:
    """How many blocks the LRU loop of `evict_to` would take in a row from an entry of
    `units` (each while the entry is above a block and the total above `bound`), when
    that is at least 2 and every number is whole (`taken`, what it took so far, too),
    so that taking them at once gives the same floats; else 0 (the loop takes one)."""
    floor = math.floor
    if not (
        units < _WHOLE
        and total < _WHOLE
        and taken < _WHOLE
        and total - bound < _WHOLE
        and units == floor(units)
        and total == floor(total)
        and taken == floor(taken)
        and block == floor(block)
    ):
        return 0
    by_entry = int(units - 1) // int(block)  # those that leave more than a block behind
    if by_entry < 2:
        return 0
    # those the loop's own test, total - i * block > bound, lets through (i from 0)
    by_total = math.ceil((total - bound) / block)
    while by_total > 0 and not total - (by_total - 1) * block > bound:
        by_total -= 1
    while total - by_total * block > bound:
        by_total += 1
    k = min(by_entry, by_total)
    return k if k >= 2 else 0


class Entry:
    """Cached units of one prefix."""

    __slots__ = ("owner", "units", "released", "order")

    def __init__(self, owner: Any, units: float, released: float, order: int) -> None:
        self.owner = owner
        self.units = units
        self.released = released
        self.order = order


class Cache:
    """The entries of one pool member; `total` is their units. `keys` empty is LRU;
    `block` None evicts whole entries, else one block at a time from an entry's tail.
    `on_evict(entry, units)` is told of every eviction (for spills)."""

    __slots__ = (
        "engine",
        "keys",
        "key_of",
        "block",
        "entries",
        "live",
        "total",
        "blank",
        "_order",
        "on_evict",
        "steady",
        "hoisted",
        "held",
        "rising",
    )

    def __init__(
        self, engine: Engine, keys: Sequence[Callable[[Any], float]] | None, block: float | None
    ) -> None:
        self.engine = engine
        self.keys = tuple(keys or ())
        self.key_of = key_tuple(self.keys)
        self.block = block
        self.entries: dict[int, Entry] = {}
        self.live: dict[Any, Entry] = {}
        self.total = 0.0
        self.blank: list[Any] = []  # the attributes a dead entry's keys read (all 0)
        self._order = count().__next__
        self.on_evict: Callable[[Entry, float, bool], None] | None = None
        # whether the keys read nothing an eviction changes but the victim's size (the
        # module's docstring); the world sets it from the program
        self.steady = False
        # the parts of the keys that read no entry, worked out once per eviction into
        # `held`, which the keys read (`serq.sim.eviction_keys`)
        self.hoisted: tuple[Callable[[Any], float], ...] = ()
        self.held: list[float] = []
        # steady keys that never rise as the entry they weigh shrinks, when the hoisted
        # values at these indices are at least 0 (`eviction_keys.rising`); None: not so
        self.rising: tuple[int, ...] | None = None

    def cachedin(self, session: Any) -> float:
        """The units of `session`'s live entry (0 without one)."""
        entry = self.live.get(session)
        return entry.units if entry is not None else 0.0

    def put(self, session: Any, units: float) -> None:
        """Cache `units` as `session`'s live entry, replacing the one it had."""
        live = self.live
        entry = live.pop(session, None)  # fast path: `drop`, inline
        if entry is not None:
            del self.entries[entry.order]
            self.total -= entry.units
        if units <= 0:
            return
        entry = _new(Entry)  # fast path: `Entry(...)` without a call of its `__init__`
        entry.owner = session
        entry.units = units
        entry.released = self.engine.now
        entry.order = order = self._order()
        self.entries[order] = entry
        live[session] = entry
        self.total += units

    def put_dead(self, units: float) -> None:
        """Cache `units` as a dead entry (a spilled piece of a dead prefix)."""
        if units > 0:
            entry = Entry(None, units, self.engine.now, self._order())
            self.entries[entry.order] = entry
            self.total += units

    def drop(self, session: Any) -> None:
        """Discard `session`'s live entry."""
        entry = self.live.pop(session, None)
        if entry is not None:
            del self.entries[entry.order]
            self.total -= entry.units

    def consume(self, session: Any, reuse: float) -> float:
        """Take at most `reuse` units of `session`'s live entry, in whole blocks; the rest
        stays, dead. Returns the units taken. The reuse is rounded down to whole blocks
        before it meets the entry, as both references do: an entry that lost blocks of a
        fractional size can be its blocks less float noise (7.919999999999998 for eight
        of 0.99), which a reuse that reads it then covers by seven; one a little above
        its blocks leaves that noise behind, dead (NOTES.md §71)."""
        entry = self.live.pop(session, None)
        if entry is None:
            return 0.0
        units = entry.units
        # `max(reuse, 0.0)`, as max takes it (the first unless the second is greater)
        hit = 0.0 if 0.0 > reuse else reuse
        b = self.block
        if b is not None and _isfinite(hit / b):
            hit = _floor(hit / b) * b  # a hit is whole blocks
        taken = units if hit >= units else hit
        self.total -= taken
        entry.units = units = units - taken
        entry.owner = None
        if units <= 0:
            del self.entries[entry.order]
        return taken

    def evict_to(self, limit: float) -> tuple[int, float]:
        """Evict until the total is at most `limit`; returns (entries removed, units)."""
        removed = 0
        units = 0.0
        noise = False  # the last entry removed left float noise in the total (module docstring)
        entries = self.entries
        if not self.keys and self.on_evict is None:
            # fast path: LRU without a spill, `_victim` inlined (the oldest release first)
            block = self.block
            live = self.live
            total = self.total
            bound = limit + EPS
            while total > bound and entries:
                entry = next(iter(entries.values()))
                take = entry.units
                if block is not None and take > block:
                    # two blocks or more to take from this entry (checked by `_blocks`)
                    k = _blocks(take, total, bound, block, units) if total - bound > block else 0
                    if k:  # fast path: k blocks at once, the same exact whole numbers
                        take = k * block
                        entry.units -= take
                        total -= take
                        units += take
                        continue
                    take = block
                    blocks = (total - bound) / block
                    if blocks > BULK_BLOCKS:  # the blocks this entry loses, at once
                        whole = math.ceil(blocks) * block if blocks < math.inf else math.inf
                        take = min(entry.units, whole)
                    entry.units -= take
                    noise = entry.units <= EPS
                    if noise:  # float noise of its blocks left: it is gone (module docstring)
                        removed += 1
                        del entries[entry.order]
                        if entry.owner is not None:
                            del live[entry.owner]
                else:
                    noise = False
                    entry.units -= take
                    removed += 1
                    del entries[entry.order]
                    if entry.owner is not None:
                        del live[entry.owner]
                total -= take
                units += take
            self.total = total if entries or (noise and total > 0.0) else 0.0
            return removed, units
        block = self.block
        if block is not None and (self.total - limit) / block > STEPPED_BLOCKS:
            raise SimError(
                None,
                f"evicting {number(self.total - limit)} units block by block takes "
                f"{number((self.total - limit) / block)} blocks of {number(block)}, more "
                f"than serq steps through ({STEPPED_BLOCKS:,}): the eviction keys or the "
                "spill are taken again after every block",
            )
        if self.hoisted and self.total > limit + EPS and entries:
            held, blank = self.held, self.blank
            for i, part in enumerate(self.hoisted):
                held[i] = part(blank)
        # the heap pays from the second victim on: the first is the scan's, at its cost,
        # unless more than a block is to go, which takes two victims at least; under keys
        # that never rise as an entry shrinks, the least entry stays the least while it
        # loses blocks (`rising`): every one is taken from it without weighing it again
        keyed = bool(self.keys) and self.steady
        rising = self.rising if keyed else None
        if rising is not None:
            held = self.held
            rising = rising if all(held[i] >= 0.0 for i in rising) else None
        ranked = None
        first = not (block is not None and self.total - limit > block)
        victim = None  # the least entry, which keeps its place (`rising`)
        noise = False
        on_evict, live, bound = self.on_evict, self.live, limit + EPS
        while self.total > bound and entries:
            if victim is not None:
                entry = victim
            else:
                if keyed and not first and ranked is None:
                    ranked = self._ranked()
                    keyed = ranked is not None  # a NaN: the scan from here on
                first = False
                if ranked is None:
                    entry, ordered = self._scan()
                    if not ordered:  # a NaN decided: weighed again after each block
                        rising = None
                else:
                    entry = ranked[0][2]
            take = left = entry.units
            if block is not None and take > block:
                take = block
            # a block that leaves only float noise of the blocks behind is the entry's last
            whole = take >= left - EPS
            noise = whole and take < left
            if on_evict is not None:
                on_evict(entry, take, whole)
            entry.units = left = left - take
            self.total -= take
            units += take
            if whole:
                removed += 1
                del entries[entry.order]
                if entry.owner is not None:
                    del live[entry.owner]
                if ranked is not None:
                    heappop(ranked)
                victim = None
            elif rising is not None:  # its key fell or stayed: still the least
                victim = entry
            elif ranked is not None:  # its size changed, and with it maybe its key
                key = self._key(entry, self.engine.now)
                total = sum(key)  # `unordered`, inline
                if total != total:
                    ranked = None
                    keyed = False
                else:
                    heapreplace(ranked, (key, entry.order, entry))
        if not entries and not (noise and self.total > 0.0):
            self.total = 0.0
        return removed, units

    def _key(self, entry: Entry, now: float) -> tuple[float, ...]:
        """The eviction keys of `entry` at `now`."""
        self.context(entry, now)
        owner = entry.owner
        return self.key_of(owner.attrs if owner is not None else self.blank)

    def _ranked(self) -> list[tuple[tuple[float, ...], int, Entry]] | None:
        """The entries in a heap by (keys, release order), keyed once for a whole
        eviction (`steady` keys); None when a key is NaN, which leaves the order to the
        scan of `_victim`."""
        engine = self.engine
        now = engine.now
        key_of, blank = self.key_of, self.blank
        ranked = []
        for entry in self.entries.values():
            # fast path: `_key`, with `context` inline
            released = entry.released
            engine.size = entry.units
            engine.age = now - released
            engine.last = released
            owner = entry.owner
            if owner is not None:
                engine.waiting = 1.0 if owner.state == QUEUED else 0.0
                key = key_of(owner.attrs)
            else:
                engine.waiting = 0.0
                key = key_of(blank)
            total = sum(key)  # `unordered`, inline
            if total != total:
                return None
            ranked.append((key, entry.order, entry))
        heapify(ranked)
        return ranked

    def _scan(self) -> tuple[Entry, bool]:
        """The next entry to evict, and whether every comparison that chose it was ordered
        (False: a NaN decided, which `least` orders); the keys read the entry's context
        variables and its owner's attributes."""
        if not self.keys:
            return next(iter(self.entries.values())), True  # fast path: release order is LRU
        now = self.engine.now
        best: Entry | None = None
        best_key: tuple[float, ...] = ()
        for entry in self.entries.values():
            key = self._key(entry, now)
            if best is None or key < best_key:
                best, best_key = entry, key
            elif not key >= best_key:  # neither: a NaN decided, which `least` orders
                return least(self.entries.values(), lambda e: self._key(e, now)), False
        assert best is not None
        return best, True

    def context(self, entry: Entry, now: float) -> None:
        """Set the context variables `size`, `age`, `last`, `waiting` for `entry`."""
        engine = self.engine
        engine.size = entry.units
        engine.age = now - entry.released
        engine.last = entry.released
        owner = entry.owner
        engine.waiting = 1.0 if owner is not None and owner.state == QUEUED else 0.0
