"""A step engine's spans: the iterations that repeat a planned one, worked out and applied
as one event (design/step-fast-forward.md).

`fastforward.py` proves from the IR which engines may fast-forward; this module is what
such an engine does at run time (`StepStage` takes these methods from `Spans`). When an
iteration gives every resident one decode token and admits and preempts nobody, `extend`
works out, at the end of its instant, the iterations that repeat it before anything else
can happen: a resident finishes, another event is due, the horizon, a block crossing does
not fit or, with sessions waiting, would evict a queue head's cached prefix (`_span`,
its end times `_ends` or `_ends_varying` when the cost reads the KV, its crossings
`_crossings`). One event (`_end_span`) then applies the crossings at their own times
(`cross_quietly`, else `grow_at_instants`), the tokens of all (`advance`) and the
inter-token gaps the iterations would have recorded. Positions may be fractional: the
additions of 1.0 are replayed (`serq.sim.ones`), so the clock, positions and crossings
are bit for bit those of stepping one iteration at a time.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from heapq import heapify, heappop, heapreplace
from itertools import accumulate, chain, islice, repeat
from math import floor
from operator import sub
from typing import TYPE_CHECKING, Any

from serq.sim.cache import EPS
from serq.sim.ones import exact_ones, ones_past, plus_ones
from serq.sim.pools import TOKEN_EPS

if TYPE_CHECKING:
    from serq.sim.step import Resident

INF = float("inf")
_NOBODY: frozenset[Any] = frozenset()  # no waiting session's cache hit to keep
EXACT = float(2**52)  # integral floats below this add and subtract whole numbers exactly
SPAN_MOST = 1 << 16  # iterations in one span at most (its lists stay small; the next goes on)
POSITION_MOST = EXACT - 2 * SPAN_MOST  # a span's positions start below this


class Spans:
    """The fast-forward half of `serq.sim.step.StepStage` (the module docstring): its
    methods read the stage's own state, which `StepStage.__init__` and `bind` set."""

    __slots__ = ()  # the stage's own slots hold that state (no `__dict__`)

    def extend(self) -> None:
        """The instant a candidate iteration started is over: turn it into a span of the
        iterations that repeat it, when there are at least two."""
        engine = self.engine
        world = self.world
        if world.replanned == engine.now:
            # a plan of this instant ran the sessions it admitted or preempted after the
            # pools' retry and the engines' starts: one may wait at a pool where it fits
            # now, or have arrived at an engine that already planned nothing, and the next
            # event, which a span would skip, admits or starts it (as the references do)
            return
        heap = engine._heap
        joint = world.joint
        if joint is not None and joint(self):  # with the other engines' (`serq.sim.joint`)
            return
        end = self._pending_end
        bound = self._next_other(heap)
        if not (end < bound and end <= engine.until):
            # iteration 1 would not start before the next other event or would start after
            # the horizon: `_span` would find fewer than two (as `_started` counts them)
            return
        if not heap or heap[0][1] != self._pending:
            return  # not pending (it ends before any other event, so it would be first)
        span = self._span(end, heap[0][3], bound)
        if span is None:
            return
        heappop(heap)  # the candidate's end, replaced by the span's
        if span[4]:  # its last iteration runs past the next event: applied as it starts
            engine.schedule(span[1][-2], self._end_span, span)
        else:
            engine.schedule(span[1][-1], self._end_span, span)

    def _next_other(self, heap: list[tuple]) -> float:
        """The time of the first pending event other than the candidate's end (inf when
        none): the heap's first, or the lesser of its two children when that is it."""
        if not heap:
            return INF
        if heap[0][1] != self._pending:
            return heap[0][0]
        n = len(heap)
        if n > 2:
            return min(heap[1], heap[2])[0]
        return heap[1][0] if n > 1 else INF

    def _span(self, first_end: float, scheduled: Any, bound: float) -> tuple | None:
        """(m, ends, crossings, scheduled, runs_on, fractions) for the m >= 2 iterations
        that repeat the one planned now, ending at `first_end`, before the next other event
        at `bound` (inf when none): `ends` are their end times
        (each the next one's start), `crossings` the block crossings (iteration, serve
        rank, resident, units) in the order the iterations would grow them; None when
        m < 2. Every iteration starts before the next other event and not after the
        horizon; `runs_on` says the last one ends after either (it is still running when
        the event comes, so `_end_span` applies the span as it starts). `fractions` is
        None, or the last iteration is a `_tail` and it lists the residents that take a
        fraction of a token in it, with their tokens."""
        residents = self.residents
        n = len(residents)
        if not scheduled or n != len(scheduled):
            return None
        limit = INF  # the fewest tokens left: no resident finishes before the last
        kv = 0.0
        for r in residents:  # the order `_context` sums the KV in
            if r.tokens != 1.0 or not r.decoding or r.stall is not None:
                return None
            remaining = r.remaining
            if remaining < limit:
                limit = remaining
            # below 2**53 taking 1.0 from at least 1.0 is exact; a position below
            # POSITION_MOST stays below 2**52 through a span (`ones`: replayed additions)
            if not remaining < EXACT:
                return None
            part = r.part
            if part is None:
                continue  # position 0
            p = part.consumed if part.position is None else part.position  # `position`
            if not 0.0 <= p < POSITION_MOST:
                return None
            if part.alloc < part.reserve and r.grows and part.pool.reserve_held:
                # its growths would use up its held reservation (`Pool.growth`, `grew`),
                # which the crossings do not count: a span only beyond it
                return None
            kv += part.alloc
        most = int(min(limit, SPAN_MOST))
        if most < 1 or not kv < EXACT:
            return None
        world = self.world
        verdict = self.verdict
        # the waiting sessions whose cache hit an admission attempt reads: the head of
        # each queue (only a head is tried, and no queue changes inside a span), every
        # session of a queue with keys (a hit may order it), and the growers
        heads: Any = _NOBODY  # a set of its own once someone waits
        waiting = False
        for pool in world.pools:
            if pool.queue or pool.front or pool.growers:
                if not waiting:
                    heads = set()
                    waiting = True
                if pool.front:
                    heads.add(pool.front[0].session)
                elif pool.keys:
                    heads.update(run.session for run in pool.queue)
                elif pool.queue:
                    heads.add(pool.queue[0].session)
                if pool.growers:
                    heads.update(grower.session for grower in pool.growers)
        if waiting and (not verdict.with_waiters or self.exclusive):
            return None
        # a resident with a fraction of a token left after `most` iterations takes it in
        # one more (`_tail`), when nobody waits and the budget is the same
        # (not under claims: its tokens and demand are not the span's)
        tail = (
            most + TOKEN_EPS < limit < most + 1  # within TOKEN_EPS of `most`: done at it
            and not waiting
            and not verdict.budget_varies
            and self.claims is None
        )
        if most == 1:
            if not tail:
                return None
            ends, crossings = [first_end], []
        elif verdict.cost_varies:  # the KV the costs read moves at the crossings
            engine = self.engine
            room = min(bound, engine.until) - first_end
            if room < INF:  # as many as fit at the first cost, and one that runs past the
                # bound: a span of costs that fall below it ends early, and the iterations
                # after it go on as usual
                most = min(most, int(room / (first_end - engine.now)) + 3)
            crossings, whole = self._crossings(scheduled, most, heads)
            ends = self._ends_varying(
                first_end,
                bound,
                n,
                kv,
                most,
                waiting,
                crossings,
                scheduled,
                whole and kv == floor(kv),
            )
        else:
            ends = self._ends(first_end, bound, n, kv, most, waiting)
            if ends is None:
                return None
            crossings = self._whole_crossings(scheduled, len(ends), heads)
            if crossings is None:  # `_crossings`, whose flag nothing reads here
                crossings = self._some_crossings(scheduled, len(ends), heads)
        m = len(ends)
        if crossings and crossings[-1][0] < 0:  # a crossing that does not fit ends it
            m = min(m, -crossings.pop()[0])
            del ends[m:]
        if crossings and crossings[-1][0] >= m:
            del crossings[bisect_left(crossings, m, key=_first) :]
        until = self.engine.until
        fractions = None
        if tail and m == most and ends[-1] < bound and ends[-1] <= until:
            fractions = self._tail(m, ends, crossings, scheduled)
            if fractions is not None:
                m += 1
        if m < 2:
            return None
        last = ends[-1]
        return (m, ends, crossings, scheduled, not (last < bound and last <= until), fractions)

    def _tail(
        self, k: int, ends: list[float], crossings: list[tuple], scheduled: list[Resident]
    ) -> list[tuple[Resident, float]] | None:
        """Iteration k of a span, after k that gave every resident one token, in which the
        residents with less than one token left take what they have left and the others
        one: its growth (in serve order, from the positions and the allocations the span
        leaves) is added to `crossings` and its end to `ends`, as planning it would make
        them, and the residents that take a fraction are returned with it; None (nothing
        added) when its growth does not fit or its cost is not positive and finite."""
        engine = self.engine
        grown: dict[Any, float] = {}  # the allocations the span's crossings leave
        for crossing in crossings:
            part = crossing[2].part
            grown[part] = grown.get(part, part.alloc) + crossing[3]
        tokens = kv = 0.0
        found = []
        fractions = []
        ceil = math.ceil
        for rank, r in enumerate(scheduled):  # as `_plan` and `start` take them
            left = r.remaining - k  # exact (`_end_span`)
            t = 1.0 if left >= 1.0 else left
            part = r.part
            if part is not None:
                alloc = grown.get(part, part.alloc)
                if r.grows:
                    position = part.consumed if part.position is None else part.position
                    target = plus_ones(position, k) + t
                    if target - alloc > TOKEN_EPS:  # as `_grow`
                        b = part.pool.block
                        if b is not None and -INF < target < INF:
                            target = ceil(target / b) * b
                        need = target - alloc
                        if need > 0:
                            found.append((k, rank, r, need))
                            alloc += need
                kv += alloc
            tokens += t
            if t != 1.0:
                fractions.append((r, t))
        used: dict[Any, float] = {}
        for _, _, r, need in found:  # each growth fits next to those before it
            pool = r.part.pool
            if pool not in used:
                used[pool] = pool.allocated
                for crossing in crossings:
                    if crossing[2].part.pool is pool:
                        used[pool] += crossing[3]
            # fits as `_grow` tests it (the reservations held count), and evicts only
            # what a span may
            if used[pool] + pool.held + need > pool.cap:
                return None
            allocated = used[pool] + need
            if allocated > pool.cap or allocated + self._kept(pool, _NOBODY, 0.0) > pool.cap:
                return None
            used[pool] = allocated
        n = float(len(scheduled))
        engine.residents = engine.decoders = n
        engine.kv_decode = kv
        engine.kv_prefill = engine.prefilled = engine.attention = 0.0
        engine.tokens = tokens
        c = self.cost(self.blank)
        if not 0.0 < c < INF:
            return None
        ends.append(ends[-1] + c)
        crossings += found
        return fractions

    def _totals(self, n: int) -> None:
        """The iteration totals of a span's iterations, but kv_decode: n residents, all
        decoding one token each, no prefill."""
        engine = self.engine
        engine.residents = engine.decoders = engine.tokens = float(n)
        engine.kv_prefill = engine.prefilled = engine.attention = 0.0

    def _ends(
        self, first_end: float, bound: float, n: int, kv: float, most: int, waiting: bool
    ) -> list[float] | None:
        """The end times of the iterations 0..m-1 that repeat iteration 0 (m <= `most`),
        for a budget and a cost that do not read kv_decode: each the previous end plus
        the cost, as one iteration at a time adds them; each starts before the next other
        event (at `bound`) and at or before the horizon (the last may end after them)."""
        engine = self.engine
        blank = self.blank
        until = engine.until
        self._totals(n)
        engine.kv_decode = kv
        budget = self.budget_value
        if budget is None:
            budget = self.budget(blank)
        if not budget >= n or (waiting and budget != self._budget0):
            return None
        c = self.cost(blank)
        if not 0.0 < c < INF:
            return None
        room = min(bound, until) - first_end
        count = most - 1 if room == INF else min(most - 1, int(room / c) + 2)
        ends = list(accumulate(repeat(c, count), initial=first_end))
        del ends[_started(ends, bound, until) :]
        return ends

    def _ends_varying(
        self,
        first_end: float,
        bound: float,
        n: int,
        kv: float,
        most: int,
        waiting: bool,
        crossings: list[tuple],
        scheduled: list[Resident],
        whole: bool,
    ) -> list[float]:
        """`_ends` for a budget or cost that reads kv_decode, the residents' allocations:
        iteration j's budget reads them grown by the iterations before j, summed in
        resident order (`_context`), its cost grown by j too, summed in serve order
        (`start`). Between crossings both are constant, so they are evaluated once per
        stretch. Whole allocations sum exactly in any order (`whole`: the residents' KV
        `kv` and every crossing's units are whole numbers): the sums then move by each
        crossing's units; otherwise both are summed again, in their orders, as `_context`
        and `start` sum them."""
        engine = self.engine
        blank = self.blank
        until = engine.until
        room = min(bound, until) - first_end  # the costs needed to pass it, roughly
        self._totals(n)
        budget_fn, cost_fn = self.budget, self.cost
        if not whole:  # each resident's allocation as the crossings grow it
            alloc = {r: r.part.alloc for r in scheduled if r.part is not None}
            residents = [r for r in self.residents if r.part is not None]
            parted = [r for r in scheduled if r.part is not None]
            kv_cost = 0.0
            for r in parted:
                kv_cost += alloc[r]
        else:
            kv_cost = kv
        # the costs of iterations 1, 2, ... in order, as stretches of one cost each (not
        # a list of every cost: `accumulate` reads them once)
        costs: list[Iterable[float]] = []
        spent = 0.0
        i, count = 0, len(crossings)
        if count and crossings[-1][0] < 0:  # the span ends at that iteration at the latest
            count -= 1
            most = min(most, -crossings[-1][0])
        j = 1
        budget_varies = self.verdict.budget_varies
        if not budget_varies:  # fast path: one budget for the whole span
            engine.kv_decode = kv
            budget = budget_fn(blank)
            if not budget >= n or (waiting and budget != self._budget0):
                most = 1
            elif whole:  # fast path: the sum moves by each crossing's units
                # iterations j .. next-1 cost what iteration j's growth leaves (`most`
                # already stops near the bound: `_span`)
                for i in range(count):
                    crossing = crossings[i]
                    nxt = crossing[0]
                    if nxt >= most:
                        break
                    if nxt != j:
                        engine.kv_decode = kv
                        c = cost_fn(blank)
                        if not 0.0 < c < INF:
                            most = j
                            break
                        costs.append(repeat(c, nxt - j))
                        j = nxt
                    kv += crossing[3]
                if j < most:
                    engine.kv_decode = kv
                    c = cost_fn(blank)
                    if 0.0 < c < INF:
                        costs.append(repeat(c, most - j))
                most = 1
        while j < most and spent <= room:
            if budget_varies:  # iteration j's budget: grown by the iterations before j
                engine.kv_decode = kv
                budget = budget_fn(blank)
                if not budget >= n or (waiting and budget != self._budget0):
                    break
            grew = i < count and crossings[i][0] == j
            if grew:  # iteration j's own growth, which its cost reads
                while i < count and crossings[i][0] == j:
                    need = crossings[i][3]
                    if whole:
                        kv += need
                    else:
                        r = crossings[i][2]
                        alloc[r] += need
                    i += 1
                if whole:
                    kv_cost = kv
                else:
                    kv = kv_cost = 0.0
                    for r in residents:
                        kv += alloc[r]
                    for r in parted:
                        kv_cost += alloc[r]
            engine.kv_decode = kv_cost
            c = cost_fn(blank)  # iteration j's, and the same for j+1 .. nxt-1
            if not 0.0 < c < INF:
                break
            costs.append((c,))
            spent += c
            j += 1
            nxt = most  # iterations j .. nxt-1 grow nothing
            if i < count and crossings[i][0] >= 0:
                nxt = min(crossings[i][0], most)
            if j >= nxt:
                continue
            if grew and budget_varies:  # their budget reads what iteration j - 1 grew
                engine.kv_decode = kv
                budget = budget_fn(blank)
                if not budget >= n or (waiting and budget != self._budget0):
                    break
            run = nxt - j
            if room != INF:
                run = min(run, int((room - spent) / c) + 2)
            costs.append(repeat(c, run))
            spent += c * run
            j += run
        # the clock adds them one at a time, in order, as iteration by iteration would
        ends = list(accumulate(chain.from_iterable(costs), initial=first_end))
        del ends[max(_started(ends, bound, until), 1) :]
        return ends

    def _crossings(
        self, scheduled: list[Resident], m: int, heads: AbstractSet[Any]
    ) -> tuple[list[tuple], bool]:
        """The block crossings of iterations 1..m-1, in the order they happen, and whether
        every one grows a whole number of units; when one cannot happen inside a span (it
        does not fit, or it would evict what a span may not: `_kept`), the list ends with
        (-j, ...) for its iteration j."""
        found = self._whole_crossings(scheduled, m, heads)
        if found is not None:
            return found, True  # each grows one block, a whole number of units
        found = self._some_crossings(scheduled, m, heads)
        return found, all(c[3] == floor(c[3]) for c in found)

    def _some_crossings(
        self, scheduled: list[Resident], m: int, heads: AbstractSet[Any]
    ) -> list[tuple]:
        """`_crossings` in general: each resident's crossings listed, then sorted."""
        found = []
        growers = 0  # the residents that cross
        blocks: Any = None  # the one pool all cross in by whole blocks, else False
        for rank, r in enumerate(scheduled):
            if not r.grows:
                continue
            part = r.part
            pool = part.pool
            p = r.position()
            alloc = part.alloc
            b = pool.block
            growers += 1
            if (
                b is not None
                and b == math.floor(b)
                and p == math.floor(p)
                and alloc % b == 0
                and alloc - p >= 1
            ):
                # fast path: whole blocks from an edge; one block every b iterations
                step = int(b)
                found += [(j, rank, r, b) for j in range(int(alloc - p), m, step)]
                if blocks is None:
                    blocks = pool
                elif blocks is not pool:
                    blocks = False
                continue
            if (
                b is not None
                and b >= 1.0
                and math.frexp(b)[0] == 0.5
                and alloc % b == 0
                and alloc < EXACT
                and p - math.floor(p) > TOKEN_EPS  # an edge is never passed by that little
                and ones_past(p, alloc) >= 2
            ):
                # fast path: whole blocks of a power of two, a fractional position: the
                # target passes the edge when the position plus one does (dividing by b is
                # exact), by at most 1, so a crossing grows one block; replayed positions
                # find each crossing (`ones_past`), unless a higher binade rounded the
                # fraction to TOKEN_EPS or below (1e-9 + 128), where `_grow` grows later
                edge, mine = alloc, []
                while (j := ones_past(p, edge) - 1) < m:
                    if not _passes(p, j, edge):
                        break
                    mine.append((j, rank, r, b))
                    edge += b
                else:
                    found += mine
                    if blocks is None:
                        blocks = pool
                    elif blocks is not pool:
                        blocks = False
                    continue
            blocks = False
            j = 1
            # fast path: once its own growth passes its pool's cap (by more than the
            # sums' rounding), the span ends at that crossing at the latest (the loop
            # below): the later ones are not listed (a span of 65,536 iterations at a cap
            # of a few blocks listed every one, 3.4x the time of stepping them)
            used, over = pool.allocated, pool.cap * (1.0 + 2.0**-20)
            while j < m:
                j = _crossing(p, alloc, j, m)
                if j >= m:
                    break
                need = _target(p, j, b) - alloc
                found.append((j, rank, r, need))
                alloc += need
                used += need
                if used > over:
                    break
                j += 1
        if not found:
            return found
        if growers > 1:
            found.sort()  # by iteration, then serve rank (unique: no resident is compared)
        pool = found[0][2].part.pool
        b = pool.block
        if blocks is pool:
            # fast path: one pool, a whole block per crossing: count the crossings that fit
            kept = self._kept(pool, heads, b * len(found))
            # a crossing fits next to the reservations held, and evicts only what it may
            room = pool.cap - pool.allocated - max(kept, pool.held)
            if room == INF or pool.cap == INF:  # an infinite cap: every crossing fits
                return found  # (the room is NaN while a part of inf units is held)
            if room == math.floor(room):  # whole numbers: the loop below, by arithmetic
                fit = int(room // b) if room >= 0 else 0
                if fit < len(found):
                    j = found[fit][0]
                    del found[fit:]
                    found.append((-j, 0, None, 0.0))
                return found
        used: dict[Any, float] = {}
        kept: dict[Any, float] = {}
        for i, (j, _, r, need) in enumerate(found):
            pool = r.part.pool
            if pool not in kept:
                grown = sum(c[3] for c in found if c[2].part.pool is pool)
                kept[pool] = self._kept(pool, heads, grown)
            before = used.get(pool, pool.allocated)
            allocated = before + need
            if (
                before + pool.held + need > pool.cap  # `_grow`'s test, reservations held
                or allocated > pool.cap
                or allocated + kept[pool] > pool.cap
            ):
                del found[i:]
                found.append((-j, 0, r, 0.0))
                break
            used[pool] = allocated
        return found

    def _whole_crossings(
        self, scheduled: list[Resident], m: int, heads: AbstractSet[Any]
    ) -> list[tuple] | None:
        """`_crossings` when every resident that crosses grows one pool by whole blocks
        from an allocation at a block edge, its position whole or (blocks of a power of
        two) fractional with every addition of the span exact, and the room is whole:
        each then crosses, growing one block, every b iterations from its first (the
        target passes an edge when the position plus one does), so the crossings are
        counted by arithmetic and only those that fit are listed, merged in order. None
        when that does not hold."""
        firsts = []  # (first crossing, serve rank, resident) of those that cross before m
        total = 0  # the crossings before m
        pool = None
        floor = math.floor
        for rank, r in enumerate(scheduled):
            if not r.grows:
                continue
            part = r.part
            p = part.consumed if part.position is None else part.position
            alloc = part.alloc
            if pool is None:
                pool = part.pool
                b = pool.block
                if b is None or b != floor(b):
                    return None
                step = int(b)
            elif part.pool is not pool:
                return None
            if alloc % b:
                return None
            if p == floor(p):
                first = alloc - p
                if not first >= 1:
                    return None
                first = int(first)
            else:
                if (
                    not 1.0 <= b < EXACT
                    or math.frexp(b)[0] != 0.5
                    or not alloc < EXACT
                    or exact_ones(p) < m  # position p + m, the last compared, is exact
                    or not p - floor(p) > TOKEN_EPS  # an edge passed by that little: no growth
                ):
                    return None
                # the additions are exact, so the first that passes alloc is
                # floor(alloc - p) + 1, and alloc - p is exact where alloc <= 2p (Sterbenz)
                first = int(alloc - p) if alloc <= p + p else ones_past(p, alloc) - 1
                if first < 1:
                    return None
            if first < m:
                firsts.append((first, rank, r))
                total += (m - 1 - first) // step + 1
        if not total:
            return []
        # the crossings fit next to the reservations held, and evict only what they may
        room = pool.cap - pool.allocated - max(self._kept(pool, heads, b * total), pool.held)
        if room == INF or pool.cap == INF:  # an infinite cap: every crossing fits (the
            fit = total  # room is NaN while a part of inf units is held)
        elif room != floor(room):
            return None
        else:
            fit = int(room // b) if room >= 0 else 0
        want = total if fit >= total else fit + 1
        if len(firsts) == 1:
            first, rank, r = firsts[0]
            found = [(j, rank, r, b) for j in range(first, m, step)[:want]]
        elif want == total:  # fast path: all of them, sorted (by iteration, then serve rank)
            found = []
            add = found.append
            for first, rank, r in firsts:
                for j in range(first, m, step):
                    add((j, rank, r, b))
            found.sort()
        else:  # the residents' sequences merged, by iteration then serve rank
            heap = firsts
            heapify(heap)
            found = []
            while len(found) < want:
                j, rank, r = heap[0]
                found.append((j, rank, r, b))
                if j + step < m:
                    heapreplace(heap, (j + step, rank, r))
                else:
                    heappop(heap)
        if fit < total:
            j = found[fit][0]
            del found[fit:]
            found.append((-j, 0, None, 0.0))
        return found

    def _kept(self, pool: Any, heads: AbstractSet[Any], grown: float) -> float:
        """The cached units of `pool` a span's crossings (`grown` units in all) may not
        evict: all of them where the engine may not evict inside a span (a spill, a key
        that reads the engine's progress); with sessions waiting, an LRU cache from the
        first entry one of `heads` owns on (the hit an admission attempt reads must not
        move: `_span`), else none."""
        cache = pool.cache
        if not self.verdict.evicts or cache.on_evict is not None:
            return cache.total
        if not heads:
            return 0.0
        if cache.keys:
            return cache.total
        need = pool.allocated + grown + cache.total - pool.cap  # the most it would evict
        free = 0.0  # the evictable prefix, in eviction (release) order
        for entry in cache.entries.values():
            if free >= need or (entry.owner is not None and entry.owner in heads):
                break
            free += entry.units
        return max(cache.total - free, 0.0)

    def _end_span(self, span: tuple) -> None:
        """The last iteration of a span ends: apply the block crossings at their own
        times, count the iterations, then end the last one as `_end` does. When it runs
        past the next event (`runs_on`), this is its start instead: the iterations
        before it end, and it runs on as one planned now would."""
        m, ends, crossings, scheduled, runs_on, fractions = span
        if crossings and not self.cross_quietly(ends, crossings, scheduled):
            grow_at_instants(self.world, [(ends[c[0] - 1], c) for c in crossings])
        self.advance(m, ends, scheduled, fractions, crossings)
        engine = self.engine
        if runs_on:  # the ends of iterations 0..m-2 (this event is the last of them)
            engine.events += m - 2
            self.run_on(ends[-1], scheduled)
        else:
            engine.events += m - 1
            self._end(scheduled)

    def cross_quietly(self, ends: list[float], crossings: list[tuple], scheduled: Any) -> bool:
        """Apply a span's `crossings` by `_cross_quietly` when they may be (no gauge reads
        their instants, and they grow one pool); False, nothing done, when not."""
        if self.world.gauges:
            return False
        pool = crossings[0][2].part.pool
        for r in scheduled:  # one pool grows: the crossings' own residents' parts
            if r.grows and r.part.pool is not pool:
                return False
        engine = self.engine
        now = engine.now
        self._cross_quietly(ends, crossings, pool)  # which sets the clock to a crossing's
        engine.now = now  # when an eviction reads it
        return True

    def advance(
        self,
        m: int,
        ends: list[float],
        scheduled: Any,
        fractions: list[tuple] | None,
        crossings: list[tuple],
    ) -> None:
        """Count a span's iterations 1..m-1 and give every resident the tokens of 0..m-2
        (the last one's are given as it ends); a tail's fractions are its tokens. The
        cost changes only at the span's `crossings` (`_ends_varying`)."""
        starts = ends[:-1]
        n = len(scheduled)
        bulk = self._bulk[0]
        if bulk is not None:
            bulk(self.index, starts, 0, n, float(n), ends[-1])
        else:
            for t, end in zip(starts, ends[1:], strict=True):
                self.recorder.iteration(self.index, t, 0, n, float(n), end)
        k = m - 1
        if self.claims is not None:  # the claims over its iterations, checked at each
            self.claims.span(self.index, k, float(n))
        if self.itl is not None:
            self._span_tokens(ends, k, scheduled, crossings)
        for r in scheduled:  # k more additions of 1.0 to each, as one at a time makes them
            if r.grows:
                part = r.part
                p = part.position
                # fast path: `plus_ones` of a whole position, whose additions are exact
                part.position = p + k if p == floor(p) else plus_ones(p, k)
            r.remaining -= k  # exact: below 2**53, 1.0 from at least 1.0 is (`_span`)
        if fractions:  # the last iteration is a tail (`_tail`)
            for r, t in fractions:
                r.tokens = t

    def _span_tokens(
        self, ends: list[float], k: int, scheduled: Any, crossings: list[tuple]
    ) -> None:
        """The inter-token latencies of a span's iterations that end at `ends[:k]` (all
        but its last): every resident takes a token in each, so after the first (the time
        since its session's last token) every resident's are the gaps between them, from
        the warm-up on (`_end`)."""
        itl = self.itl.counts
        start = bisect_left(ends, self.itl_from, 0, k)  # the first token at or after warm-up
        end = ends[k - 1]
        fresh = self.itl.fresh
        for r in scheduled:
            s = r.session
            last = s.last_token
            s.last_token = end
            s.token_stage = self
            s.decoded = True
            if start == 0 and last is not None:
                fresh.append(ends[0] - last)
        a = max(start, 1)
        if a >= k:
            return
        n = len(scheduled)
        if 0.0 < ends[a - 1] and end < _BINADES_END:
            if not self.verdict.cost_varies:
                _count_steps(ends, a - 1, k, n, itl)  # a constant cost apart, in C's floats
                return
            if _frexp(ends[a - 1])[1] == _frexp(end)[1]:  # a cost constant between crossings
                _count_stretches(ends, a, k, crossings, n, itl)
                return
        _count_gaps(islice(ends, a, k), islice(ends, a - 1, k), n, itl)

    def run_on(self, end: float, scheduled: Any) -> None:
        """The last iteration of a span, which has started, ends at `end` as one planned
        then ends; with several engines fast-forwarded together it is a candidate again
        (`serq.sim.joint`)."""
        seq = self.engine.schedule(end, self._end, scheduled)
        if self.world.joint is not None:
            self._pending = seq
            self._pending_end = end

    def _quiet_setup(self, pool: Any) -> tuple[Any, bool, bool, Any, bool]:
        """What `_cross_quietly` needs of `pool` and the run, the same at every span (set
        when the run starts): how the levels are told, whether at each crossing, whether
        an eviction reads the clock, how evictions are counted, and whether one block is
        evicted inline."""
        world = self.world
        recorder = self.recorder
        cache = pool.cache
        check = world.check_invariants
        batch = None if check else self._bulk[1]
        eager = batch is None  # each crossing told at once (the invariants checked at each)
        if eager:
            state = recorder.pool_state

            def batch(index: int, rows: list[tuple], queued: int, holders: int) -> None:
                for t, u, c in rows:
                    state(index, t, u, c, queued, holders)
                    if check:  # not a flush of the pools: the clock is the span's end
                        world.check()

        timed = bool(cache.keys) or cache.on_evict is not None  # an eviction reads the clock
        # the units each eviction takes, counted together at the end (`pool_counts`, the
        # same sum in the same order) when the recorder can
        counts = None if eager else self._bulk[2]
        block = cache.block
        # an LRU cache of blocks without a spill: `evict_to`'s loop when it takes one block
        # from the oldest entry, which keeps more than that, is inline (`_cross_quietly`)
        one_block = not timed and counts is not None and block is not None and block > 0
        return batch, eager, timed, counts, one_block

    def _cross_quietly(self, ends: list[float], crossings: list[tuple], pool: Any) -> None:
        """`_end_span`'s crossings when they all grow one pool and no gauge reads the
        instants: the pool's level is recorded at each crossing's time, evicting first
        where the cache must make room (`Pool.evict`, inline); the levels are told to the
        recorder together (`pool_states`), each at its time, as `pool_state` would be
        (before an eviction that reads the clock or spills, those so far)."""
        engine = self.engine
        recorder = self.recorder
        index = pool.index
        cache = pool.cache
        cap = pool.cap
        queued = len(pool.queue) + len(pool.front)
        holders = pool.n_holders
        setup = self._quiet_setups.get(pool)
        if setup is None:
            setup = self._quiet_setups[pool] = self._quiet_setup(pool)
        batch, eager, timed, counts, one_block = setup
        evict_to = cache.evict_to
        count = recorder.pool_count
        evicted: list[float] = []
        end = engine.now  # the span's end: an eviction that reads the clock is given its own
        block = cache.block
        entries = cache.entries
        oldest = None  # the oldest entry, which only this loop changes (while not None)
        rows: list[tuple[float, float, float]] = []  # (time, used, cached) at each crossing
        allocated = pool.allocated
        total = cache.total
        for j, _, r, need in crossings:
            t = ends[j - 1]  # iteration j starts when j - 1 ends
            r.part.alloc += need
            allocated += need
            if allocated + total > cap:
                if one_block:
                    bound = (cap - allocated) + EPS  # `evict_to(cap - allocated)`'s
                    if total > bound and entries:
                        if oldest is None:
                            oldest = next(iter(entries.values()))
                        take = oldest.units
                        rest = total - block
                        # more than a block in the oldest entry, less than a block more than
                        # the bound (no run of blocks at once), and one block ends the loop
                        # (and more than float noise left behind: `evict_to` removes it)
                        if take > block + EPS and not total - bound > block and not rest > bound:
                            oldest.units = take - block
                            total = rest
                            evicted.append(block)
                            rows.append((t, allocated, total))
                            continue
                oldest = None  # `evict_to` may remove it
                if timed:
                    if rows:
                        batch(index, rows, queued, holders)
                        rows = []
                    engine.now = t
                pool.allocated = allocated
                cache.total = total
                removed, units = evict_to(cap - allocated)  # counted at each, as one at a time
                if eager:  # `batch` checks the invariants at the span's end, the clock
                    engine.now = end  # of every other crossing's check (and of the event)
                if units:
                    if removed:
                        count(index, "evicted_entries", removed)
                    if counts is not None:
                        evicted.append(units)
                    else:
                        count(index, "evicted_units", units)
                total = cache.total
            rows.append((t, allocated, total))
            if eager:
                pool.allocated = allocated
                batch(index, rows, queued, holders)
                rows = []
        pool.allocated = allocated
        if pool.infinite:  # beside a part of inf units (`Pool.infinite`): each growth
            for _, _, r, need in crossings:  # (its part already grown, inf if it was)
                pool.infinite_grow(r.part.alloc, need)
        cache.total = total
        if evicted:
            counts(index, "evicted_units", evicted)
        if rows:
            batch(index, rows, queued, holders)
        pool.dirty = False


def grow_at_instants(world: Any, rows: list[tuple[float, tuple]]) -> None:
    """Apply span crossings `(time, (j, rank, resident, units))`, in the order of their
    times, each at its own time: the growth, then the evictions it makes, then at the end
    of each instant the pools' levels and (but at the instant of the event applying them)
    the gauges. The clock is put back after."""
    engine = world.engine
    recorder = world.recorder
    now = engine.now
    i, count = 0, len(rows)
    while i < count:
        t = engine.now = rows[i][0]
        j = rows[i][1][0]  # one iteration's crossings (two may start at one time)
        while i < count and rows[i][1][0] == j and rows[i][0] == t:
            _, _, r, need = rows[i][1]
            part = r.part
            pool = part.pool
            if pool.infinite:  # beside a part of inf units (`Pool.infinite`)
                pool.infinite_grow(part.alloc, need)
            part.alloc += need
            pool.allocated += need
            pool.dirty = True
            pool.evict(recorder)
            i += 1
        world._flush_pools()  # the levels and gauges of the end of instant t
        if t != now:  # the instant of the span's event ends after it
            world.end_instant(t)
    engine.now = now


def _count_gaps(later: Iterable[float], earlier: Iterable[float], n: int, counts: Counter) -> None:
    """Count into `counts`, `n` times each, the gaps `later - earlier`, pair by pair."""
    gaps = map(sub, later, earlier)
    if n == 1:
        counts.update(gaps)  # counted in C
    else:
        for gap, count in Counter(gaps).items():
            counts[gap] += count * n


_frexp = math.frexp
_BINADES_END = 2.0**1023  # `_count_steps` takes ends below it (the next binade's bound is a float)


def _count_steps(ends: list[float], i: int, k: int, n: int, counts: Counter[float]) -> None:
    """Count into `counts`, `n` times each, the gaps between `ends[i:k]`, which one constant
    cost apart as floats add it (`_ends`: each end the previous one plus the cost, rounded),
    and positive. Within a binade [2**e, 2**(e+1)) the sum rounds to the binade's grid, so
    every step there is the cost rounded to it (or, where the cost lies halfway between
    two points of it, one or the other): where the first gap times their number is the
    distance the ends cover (both exact: the ends are within a factor of 2, the product a
    point of the grid), they are all that gap, counted at once; else one at a time. A gap
    that crosses into the next binade is counted alone."""
    while i < k - 1:
        top = 2.0 ** (math.frexp(ends[i])[1])  # the binade of ends[i] ends below this
        j = bisect_left(ends, top, i, k) - 1  # the last end within it
        if j > i:
            gap = ends[i + 1] - ends[i]
            if ends[j] - ends[i] == (j - i) * gap:
                counts[gap] += (j - i) * n
            else:
                _count_gaps(ends[i + 1 : j + 1], ends[i:j], n, counts)
        if j + 1 < k:  # the step out of the binade
            counts[ends[j + 1] - ends[j]] += n
        i = j + 1


def _count_stretches(
    ends: list[float], a: int, k: int, crossings: list[tuple], n: int, counts: Counter[float]
) -> None:
    """Count into `counts`, `n` times each, the gaps `ends[j] - ends[j - 1]` for j in
    a..k-1, where the ends from `ends[a - 1]` on lie in one binade (positive) and the
    cost the clock adds changes only at an iteration that crosses a block (`crossings`,
    in iteration order): between two such, each gap is that cost rounded to the binade's
    grid, down or up (`_count_steps`), so where a stretch's first gap times their number
    is the distance its ends cover, every gap of it is that one; else they are counted
    one at a time."""
    lo = a
    before = ends[a - 1]  # the end the stretch's first gap starts from
    bounds = [crossing[0] for crossing in crossings]
    bounds.append(k)  # the last stretch ends at k
    for hi in bounds:  # the stretch is lo..hi-1
        if hi > k:
            hi = k
        if hi <= lo:
            continue  # before the first counted gap, or another crossing of lo's
        last = ends[hi - 1]
        gap = ends[lo] - before
        if last - before == (hi - lo) * gap:
            counts[gap] += (hi - lo) * n
        else:
            _count_gaps(islice(ends, lo, hi), islice(ends, lo - 1, hi), n, counts)
        if hi == k:
            return
        lo = hi
        before = last


def _started(ends: list[float], bound: float, until: float) -> int:
    """How many of the iterations ending at `ends` (each starting when the one before
    ends, the first now) start before `bound` and at or before `until`: those that end
    so, and the one after them, which runs past."""
    m = min(bisect_left(ends, bound), len(ends))  # those ending before the bound
    while m and ends[m - 1] > until:
        m -= 1
    return min(m + 1, len(ends))


def _target(p: float, j: int, b: float | None) -> float:
    """What iteration j of a span grows a resident's hold to, from position p before
    iteration 0: its position then plus its token, up to whole blocks of b (`_grow`)."""
    target = plus_ones(p, j + 1)
    if b is not None:
        target = math.ceil(target / b) * b
    return target


def _passes(p: float, j: int, alloc: float) -> bool:
    """Whether iteration j of a span grows a resident's hold of `alloc` units, from
    position p before iteration 0: its position then plus its token passes `alloc` by
    more than TOKEN_EPS (`_grow`)."""
    return plus_ones(p, j + 1) - alloc > TOKEN_EPS


def _crossing(p: float, alloc: float, j: int, m: int) -> int:
    """The first iteration from j on, below m, that grows the hold past `alloc`
    (`_passes`: the one `_grow` then grows at), or m when none does. The position never
    decreases from one iteration to the next, so the first is found by bisection, from a
    first guess at the iteration whose position passes `alloc` (`ones_past`)."""
    if not _passes(p, m - 1, alloc):
        return m
    guess = ones_past(p, alloc) - 1  # its position plus one passes alloc
    if j <= guess < m and _passes(p, guess, alloc):
        if guess == j or not _passes(p, guess - 1, alloc):
            return guess
        high = guess
    else:
        high = m - 1
        if j <= guess < m:
            j = guess + 1
    while j < high:  # the hold grows at high, and not before j
        mid = (j + high) // 2
        if _passes(p, mid, alloc):
            high = mid
        else:
            j = mid + 1
    return high


def _first(item: tuple) -> Any:
    return item[0]
