"""What happens to a hold: it joins a queue, is admitted, grows, is preempted, is released.

`HoldSpec` is a compiled `hold` statement; a `HoldRun` is one execution of it, first a
waiter in its first pool's queue, then the active hold with one `HoldPart` per pool.
`Holds` carries out the pool semantics of spec §3 on them: admission when every pool has
room for max(units, reserve) next to the allocation (cached prefixes are evicted, never
block), consumption of the session's own prefix under `cache`, release with min(ℓ,
computed) cached, leases, loads, growth with `preempt none` (wait, in stall order) or
`preempt lifo` (abort the most recently admitted holder's scope and re-queue it at the
head), and rejection of a request that can never fit.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from serq.diagnostics import Span
from serq.ir import SLOT
from serq.sim.errors import SimError, number, out_of_domain
from serq.sim.pools import TOKEN_EPS, GrowWait, HoldPart, Pool
from serq.sim.session import GROWING, HOLD, QUEUED, READY, Frame, Session

INF = math.inf
CACHED = SLOT["cached"]
COMPUTED = SLOT["computed"]

# preemptions at one instant, none of them since a hold at the pool completed, before a
# run is a livelock: a cascade that moves completes holds between them (450 sessions at a
# step engine of `cost 0` take 107,948 preemptions at time 0, pyserq 0.1.2 alike)
PREEMPT_LIMIT = 100_000
# ... or preemptions in a row at one instant that each find a state seen there before (the
# victim and its position; the pool's allocation, cache and queue; each holder's units,
# position and attributes; each step-stage resident's tokens left, planned and computed;
# the sessions ended): a cycle. At some 30 us a preemption, 100,000 took 2 to 5 s of CPU, and
# a cycle whose preemptions are 2,000 iterations apart ran into the 10,000,001 events of
# the clock's rule, 108 s (tests/sim/NOTES.md §61, §63)
REPEAT_LIMIT = 100
REPEAT_WATCH = 100  # ... counted from this many preemptions at one instant on

Fn = Callable[[Any], float]
Resolver = Callable[[Any], Pool]


class HoldSpec:
    """A compiled `hold`: per pool a resolver (attrs -> pool member), units and reserve;
    the hold's reuse, cache and lease; its body (compiled statements)."""

    __slots__ = (
        "resolvers",
        "units",
        "reserves",
        "reuse",
        "cache",
        "lease",
        "body",
        "origin",
        "part_origins",
        "enter",
        "members",
    )

    def __init__(
        self,
        resolvers: tuple[Resolver, ...],
        units: tuple[Fn, ...],
        reserves: tuple[Fn | None, ...],
        reuse: Fn | None,
        cache: Fn | None,
        lease: tuple[Resolver, Fn] | None,
        origin: Span,
    ) -> None:
        self.resolvers = resolvers
        self.units = units
        self.reserves = reserves
        self.reuse = reuse
        self.cache = cache
        self.lease = lease
        self.body: tuple = ()
        self.origin = origin
        self.part_origins: tuple[Span, ...] = (origin,) * len(units)  # each `pool (units)`
        # the compiled path's: (session, run) -> the frame of the body (`serq.sim.compiled`)
        self.enter: Callable[[Session, HoldRun], Any] | None = None
        # the pool members when every part names its own by a constant (the compiled
        # path's, which knows): `join` then resolves nothing
        self.members: tuple[Pool, ...] | None = None


class HoldRun:
    """One execution of a hold: waiting at `pools[0]`, then holding `parts`."""

    __slots__ = (
        "spec",
        "session",
        "pools",
        "parts",
        "joined",
        "join_seq",
        "units_now",
        "positioned",
    )

    def __init__(self, spec: HoldSpec, session: Session, pools: Sequence[Pool]) -> None:
        self.spec = spec
        self.session = session
        self.pools = pools
        self.parts: list[HoldPart] = []
        self.joined = 0.0
        self.join_seq = 0
        self.units_now: list[float] = []
        self.positioned = False  # a load moved a position of this hold


class Holds:
    """The hold machinery of one run; `world` supplies the engine, the recorder, the ready
    queue and session control (`end_session`, `cancel_wait`, `retry_pools`)."""

    def __init__(self, world: Any) -> None:
        self.world = world
        self.engine = world.engine
        self.recorder = world.recorder
        self.admissions = 0  # hold admissions so far, the last one numbered by it
        self._preempted_at = -INF  # the instant of the latest preemption, and their count
        self._preempted_now = 0
        # what each preemption at that instant found of the pool, and the hashes of the rest
        self._seen: dict[tuple, set[int]] = {}
        self._repeats = 0  # preemptions in a row whose finding was in `_seen`

    # ------------------------------------------------------------ joining, admission

    def join(self, s: Session, spec: HoldSpec, at_front: bool = False) -> bool:
        """Execute hold `spec` for `s`: join its first pool's queue, or be rejected."""
        a = s.attrs
        pools = spec.members
        if pools is None:
            pools = [resolve(a) for resolve in spec.resolvers]
        run = HoldRun(spec, s, pools)
        if not self._fits(run, alone=True):
            i = len(run.units_now)  # the first pool it can never fit
            self.world.rejected(pools[i], spec.part_origins[i], s.serial)
            self.world.end_session(s)
            return False
        s.state = QUEUED
        s.where = pools[0]
        s.waiter = run
        pools[0].join(run, at_front)
        return False

    def try_admit(self, pool: Pool) -> bool:
        """Admit the heads of `pool`'s queue while they fit; True if any was."""
        admitted = False
        front, queue = pool.front, pool.queue
        while True:
            # fast path: `Pool.head` inline, but for queue keys
            if front:
                run = front[0]
            elif not queue:
                return admitted
            elif pool.keys:
                run = pool.head()
            else:
                run = queue[0]
            if not self._fits(run):
                return admitted
            self._admit(run)
            admitted = True

    def _fits(self, run: HoldRun, alone: bool = False) -> bool:
        """Whether `run` fits every pool now, next to what is taken there (`alone`: within
        the cap alone, which a request that can never fit does not), evaluating its units
        and reserves pool by pool; `run.units_now` gets the units of the pools it fits,
        up to the first it does not."""
        spec = run.spec
        a = run.session.attrs
        units = []
        unit_fns, reserves = spec.units, spec.reserves
        i = 0
        for pool in run.pools:
            u = unit_fns[i](a)  # fast path: `_units` and `Pool.round_up` inline
            if not u >= 0:
                raise _bad_units(spec, i, pool, u)
            b = pool.block
            if b is not None:
                q = u / b
                if -INF < q < INF:
                    u = math.ceil(q) * b
            need = u
            reserve = reserves[i]
            if reserve is not None:
                r = reserve(a)
                if not r >= 0:
                    raise _bad_reserve(spec, i, pool, r)
                if b is not None:
                    q = r / b
                    if -INF < q < INF:
                        r = math.ceil(q) * b
                need = max(u, r)
            if (need > pool.cap) if alone else (pool.allocated + pool.held + need > pool.limit):
                run.units_now = units
                return False
            units.append(u)
            i += 1
        run.units_now = units
        return True

    def _admit(self, run: HoldRun) -> None:
        s = run.session
        a = s.attrs
        spec = run.spec
        now = self.engine.now
        first = run.pools[0]
        first.leave(run)
        caching = spec.cache is not None
        reuse = INF
        if caching and spec.reuse is not None:
            reuse = spec.reuse(a)
            if reuse != reuse:  # below 0 consumes nothing, as `reuse (0)`
                error = out_of_domain(spec.origin, "the `reuse` of the hold", reuse, "a number")
                error.serial = s.serial  # admitted by a retry, maybe while another runs
                raise error
        consumed = 0.0
        parts = []
        units_now = run.units_now
        i = 0
        for pool in run.pools:
            part = HoldPart(pool, run)
            if pool.reserve_held and spec.reserves[i] is not None:
                part.reserve = pool.round_up(spec.reserves[i](a))
            if caching and s in pool.cache.live:  # else it consumes nothing (`consume`)
                part.consumed = taken = pool.cache.consume(s, reuse)
                if taken > consumed:
                    consumed = taken
            pool.add_holder(part, units_now[i])
            parts.append(part)
            i += 1
        recorder = self.recorder
        try:
            for pool in run.pools:
                if pool.allocated + pool.cache.total > pool.cap:  # else nothing to evict
                    pool.evict(recorder)
        except SimError as error:
            if error.serial is None:  # the session admitted, as where it joins
                error.serial = s.serial
            raise
        run.parts = parts
        self.world.count_admission(s)
        self.admissions += 1
        s.admitted = self.admissions
        a[CACHED] = consumed
        recorder.pool_admitted(first.index, now, now - run.joined)
        if len(parts) > 1:
            for pool in run.pools[1:]:
                recorder.pool_count(pool.index, "admissions")
        enter = spec.enter
        s.frames.append(Frame(spec.body, HOLD, run) if enter is None else enter(s, run))
        s.state = READY
        s.where = s.waiter = None
        self.world.ready.append(s)

    # ------------------------------------------------------------ release, lease

    def close(self, s: Session, run: HoldRun) -> None:
        """The end of `run`'s scope: release (or lease) what it still holds."""
        spec = run.spec
        lease_pool = spec.lease[0](s.attrs) if spec.lease is not None else None
        if lease_pool is not None:
            duration = spec.lease[1](s.attrs)
            if not duration >= 0:  # NaN never ends; below 0 would end before it began
                raise out_of_domain(
                    spec.origin,
                    f"the duration of `lease {lease_pool.name}`",
                    duration,
                    "at least 0",
                )
        plain = spec.cache is None
        fruitless = self.world.fruitless
        for part in run.parts:
            if fruitless:  # a hold there completed: not a livelock (`World.livelocked_at`)
                fruitless.pop(part.pool, None)
            if part.released:
                continue
            if part.pool is lease_pool:
                self._lease(s, part, duration)
            elif plain:  # fast path: `release_part` without a cache clause
                part.pool.remove_holder(part)
            else:
                self.release_part(s, part)
        if lease_pool is None:  # nothing reads the parts again: no cycle with them
            run.parts = []
        s.attrs[COMPUTED] = 0.0
        if s.preempted is None or run.spec is s.preempted:
            # the preempted hold completed: a later preemption starts afresh (an inner
            # hold completing does not count, as in the reference)
            s.last_preempt = None
            s.preempted = None
            if s.stuck:  # it got past the preemption it was stuck at (`World.livelocked_at`)
                self.world.stuck_sessions.pop(s, None)
        self.world.retry_pools()

    def release_part(self, s: Session, part: HoldPart) -> None:
        """Give `part` back, caching min(ℓ, computed) rounded down to blocks under `cache`."""
        pool = part.pool
        computed = part.computed()
        pool.remove_holder(part)
        spec = part.run.spec
        cache = spec.cache
        if cache is not None:
            length = cache(s.attrs)
            if length != length:  # below 0 caches nothing, as the reference has it
                error = out_of_domain(
                    spec.origin, "the length of the hold's cache", length, "a number"
                )
                error.serial = s.serial  # released by a preemption, maybe in another's turn
                raise error
            amount = pool.round_down(min(length, computed))
            if amount > 0:
                pool.cache.put(s, amount)
                if pool.allocated + pool.cache.total > pool.cap:  # else nothing to evict
                    pool.evict(self.recorder)

    def _lease(self, s: Session, part: HoldPart, duration: float) -> None:
        part.leased = True
        s.leases.setdefault(part.pool, []).append(part)
        if duration < INF:
            self.engine.schedule(self.engine.now + duration, self._lease_expired, part)

    def _lease_expired(self, part: HoldPart) -> None:
        if part.leased and not part.released:
            self.end_lease(part.run.session, part)

    def end_lease(self, s: Session, part: HoldPart) -> None:
        """End lease `part`: its allocation goes and its hold's cache applies."""
        part.leased = False
        leases = s.leases.get(part.pool)
        if leases is not None and part in leases:
            leases.remove(part)
            if not leases:
                del s.leases[part.pool]
        self.release_part(s, part)
        # the lease was the last of its hold (the scope closed before it): nothing reads
        # the parts again, so they no longer keep a cycle with the run (as `close` does)
        part.run.parts = []

    def release(self, s: Session, pool: Pool) -> None:
        """`release pool`: the innermost enclosing hold's allocation there, else a lease.
        The pools are retried even when it gave nothing back (a hold re-executed after a
        preemption reaches a transfer whose lease went the first time): inside a step
        engine's plan that admits a session queued since, as both references do."""
        part = innermost(s, pool)
        if part is not None:
            self.release_part(s, part)
        else:
            leases = s.leases.get(pool)
            if leases:
                self.end_lease(s, leases[0])  # the oldest lease first
        self.world.retry_pools()

    def release_all(self, s: Session) -> None:
        """The session ends: every hold, innermost first, then every lease."""
        for frame in reversed(s.frames):
            if frame.kind == HOLD:
                for part in frame.hold.parts:
                    if not part.released:
                        self.release_part(s, part)
        for leases in list(s.leases.values()):
            for part in list(leases):
                self.end_lease(s, part)

    # ------------------------------------------------------------ load, grow, preempt

    def load(self, s: Session, pool: Pool, amount: float, origin: Span, text: str) -> None:
        """`load pool (amount)`: the innermost hold's position advances by `amount`."""
        part = innermost(s, pool)
        if part is None:
            raise SimError(origin, f"`load {pool.name}` outside a hold of `{pool.name}`")
        if not amount >= 0:
            raise out_of_domain(origin, f"the units of `load {pool.name}`", amount, "at least 0")
        position = part.consumed if part.position is None else part.position
        # within TOKEN_EPS past the allocation fits (0.1 + 0.2 in a hold of 0.3), as in
        # both references, which keep the position so reached
        if position + amount > part.alloc + TOKEN_EPS:
            raise SimError(
                origin,
                f"`{text}`: the hold has {number(part.alloc)} allocated and "
                f"{number(position)} computed; a load must fit the allocation (grow first)",
            )
        part.position = position + amount
        part.run.positioned = True

    def grow(self, s: Session, pool: Pool, amount: float, origin: Span) -> bool:
        """`grow pool (amount)`; False when the session waits or was preempted."""
        part = innermost(s, pool)
        if part is None:
            raise grow_outside(origin, pool)
        if not amount >= 0:
            raise bad_growth(origin, pool, amount)
        delta = pool.grow_delta(part.alloc, amount)
        if pool.committed() + pool.growth(part, delta) <= pool.limit:  # stalled growers do not
            self._apply_grow(pool, part, delta)  # stop one that fits
            return True
        if not pool.lifo:
            if part.alloc + delta > pool.limit:
                raise never_grows(origin, pool, amount, part.alloc + delta)
            self._stall(s, pool, part, amount)
            return False
        # the memory of a step engine gives way with its newest resident (spec §3, `grow`):
        # a session at this statement is in no engine's running list, so it is never the
        # victim, and a growth that can never fit would wait for ever
        engine = next((st for st in self.world.steps if st.memory is pool), None)
        if engine is not None and part.alloc + delta > pool.limit:
            raise never_grows(origin, pool, amount, part.alloc + delta, lifo=True)
        preempted = False
        while pool.committed() + pool.growth(part, delta) > pool.limit:
            victim = pool.victim(innermost) if engine is None else engine._victim(pool)
            if victim is None:
                break
            self.preempt(victim.run, pool)
            preempted = True
            if victim.run.session is s:
                self.world.retry_pools()
                return False
        if pool.committed() + pool.growth(part, delta) > pool.limit:
            self._stall(s, pool, part, amount)
            return False
        self._apply_grow(pool, part, delta)
        if preempted:
            self.world.retry_pools()
        return True

    def _apply_grow(self, pool: Pool, part: HoldPart, delta: float) -> None:
        if pool.infinite or delta == math.inf:
            pool.infinite_grow(part.alloc, delta)
        part.alloc += delta
        pool.allocated += delta
        pool.grew(part, delta)
        pool.dirty = True
        pool.evict(self.recorder)

    def _stall(self, s: Session, pool: Pool, part: HoldPart, amount: float) -> None:
        wait = GrowWait(s, part, amount)
        pool.growers.append(wait)
        s.state = GROWING
        s.where = pool
        s.waiter = wait

    def try_growers(self, pool: Pool) -> bool:
        """Grow the stalled growers of `pool` in stall order while the head fits."""
        grown = False
        growers = pool.growers
        while growers:
            wait = growers[0]
            part = wait.part
            delta = pool.grow_delta(part.alloc, wait.amount)
            if pool.committed() + pool.growth(part, delta) > pool.limit:
                break
            growers.popleft()
            self._apply_grow(pool, part, delta)
            grown = True
            if wait.resident is not None:  # a step resident: its next plan goes on
                wait.resident.stall = None
                continue
            s = wait.session
            s.state = READY
            s.where = s.waiter = None
            self.world.ready.append(s)
        return grown

    def preempt(self, run: HoldRun, pool: Pool) -> None:
        """Abort `run`'s scope for a growth at `pool`: release it with its computed prefix
        cached and re-queue its session at the head to execute the hold again."""
        s = run.session
        recorder = self.recorder
        recorder.pool_count(pool.index, "preemptions")
        fruitless = self.world.fruitless  # preemptions since the pool's last completed hold
        fruitless[pool] = since = fruitless.get(pool, 0) + 1
        # the token its session had last, as it is computed again, follows the ones it
        # had: an output token where the same engine gives it next (`StepStage._end`;
        # without a step engine the generated code makes a session without the slots)
        if self.world.steps and s.decoded is not True and s.last_token is not None:
            s.decoded = s.token_stage
        now = self.engine.now
        if now == self._preempted_at:
            self._preempted_now += 1
            if self._preempted_now > PREEMPT_LIMIT and since > PREEMPT_LIMIT:
                raise _livelock(run, pool, self._preempted_now)
        else:
            self._preempted_at, self._preempted_now = now, 1
            self._seen.clear()
            self._repeats = 0
        computed = 0.0
        for part in run.parts:
            if part.pool is pool:
                # the position a growing run gave the part, even when the run preempted
                # itself as it arrived (what it caches is then its allocation, §7 of
                # tests/sim/NOTES.md); a part nothing positioned is at its allocation
                computed = part.computed() if part.position is None else part.position
        # a livelock at one instant, found sooner: a cycle of preemptions, each finding
        # the state one found before at this instant (the same victim at the same
        # position, the pool as full, as cached and as queued, its holders and the step
        # stages' residents where they were, no hold there completed nor session ended); a run
        # that moves moves some of them. REPEAT_LIMIT in a row, watched from REPEAT_WATCH
        # at the instant on (a run with fewer pays nothing for it)
        if self._preempted_now > REPEAT_WATCH:
            if since == 1:  # the first since a hold there completed
                self._seen.clear()
                self._repeats = 0
            queued = pool.queued_count()
            cached = pool.cache.total
            found = (pool, s, computed, pool.allocated, cached, queued, self.world.ended_all)
            states = self._seen.get(found)
            if states is None:  # the first such finding: nothing more to compare
                self._seen[found] = set()
                self._repeats = 0
            else:
                # the rest of the state, taken only when the pool repeats (it is as large
                # as the holders and residents) and kept as its hash
                try:
                    key = hash(self._state(pool))
                except TypeError:  # an attribute no hash can take: never a repeat
                    key = None
                if key in states:
                    self._repeats += 1
                    if self._repeats > REPEAT_LIMIT:
                        raise _livelock(run, pool, self._preempted_now)
                else:
                    if key is not None:
                        states.add(key)
                    self._repeats = 0
        # stuck: preempted again without passing the position of the previous preemption
        # (a hold that no load or growing run moved is at its allocation, as `computed`
        # reads it; the reference agrees), counted once per session
        position = computed
        if s.last_preempt is not None and position <= s.last_preempt and not s.stuck:
            s.stuck = True
            recorder.pool_count(pool.index, "stuck")
            # nothing but the session holds the pool: its growth can never fit (W-stall)
            if all(h.run.session is s for h in pool.holders):
                self.world.livelocked(pool, run.spec.origin, s.serial, position)
            else:  # another holder may yet release: only the report's note, or a Ctrl-C's
                self.world.stuck_beside(pool, run.spec.origin, s, position)
        s.last_preempt = position
        s.preempted = run.spec
        self.world.cancel_wait(s)
        # set before the releases: a cache clause that reads `computed` reads the value the
        # re-executed hold will find (the spec does not say; the reference does this)
        s.attrs[COMPUTED] = computed
        frames = s.frames
        while frames:
            frame = frames.pop()
            if frame.kind == HOLD:
                for part in frame.hold.parts:
                    if not part.released:
                        self.release_part(s, part)
                if frame.hold is run:
                    break
        self.join(s, run.spec, at_front=not pool.requeue_tail)

    def _state(self, pool: Pool) -> tuple:
        """What a run that moves at one instant moves: each holder of `pool` (its units,
        position and session's attributes) and each step-stage resident (its session,
        tokens left, tokens planned and position), in their orders."""
        holders = tuple(
            (part.alloc, part.position, part.consumed, *part.run.session.attrs)
            for part in pool.holders
        )
        residents = tuple(
            (r.session, r.remaining, r.tokens, r.position())
            for stage in self.world.steps
            for r in stage.residents
        )
        return holders, residents


def _livelock(run: HoldRun, pool: Pool, preemptions: int) -> SimError:
    """The error of a livelock at one instant: `preemptions` at `pool` without time passing."""
    return SimError(
        run.spec.origin,
        f"a livelock at one instant: {preemptions} preemptions at pool `{pool.name}` without "
        "time passing; a hold that can never grow to what its body needs is preempted and "
        "re-admitted at once, forever",
    )


def grow_outside(origin: Span, pool: Pool) -> SimError:
    """The error of a `grow` of `pool` where no hold around holds it."""
    return SimError(origin, f"grow outside a hold of pool `{pool.name}`")


def bad_growth(origin: Span, pool: Pool, amount: float) -> SimError:
    """The error of a growth `amount` that is not at least 0."""
    return out_of_domain(origin, f"the units of `grow {pool.name}`", amount, "at least 0")


def never_grows(
    origin: Span, pool: Pool, amount: float, need: float, lifo: bool = False
) -> SimError:
    """The error of a growth by `amount` whose hold would then need `need` units, above
    `pool`'s cap: under `preempt none`, or (`lifo`) on a step engine's memory, whose
    residents alone give way, it would wait for ever."""
    if lifo:
        why = (
            "only the residents of the engine whose memory it is give way to a growth, "
            "which a session at a `grow` statement is not: it would wait forever"
        )
    else:
        why = "under `preempt none` it would wait forever"
    return SimError(
        origin,
        f"`grow {pool.name} ({number(amount)})` can never be satisfied: the "
        f"hold would need {number(need)} of pool `{pool.name}`, "
        f"whose cap is {number(pool.cap)}, and {why}",
    )


def _units(spec: HoldSpec, i: int, a: Any, pool: Pool) -> float:
    """The units the hold `spec` asks of its `i`th pool for the attributes `a`."""
    units = spec.units[i](a)
    if not units >= 0:  # negative units would create capacity
        raise _bad_units(spec, i, pool, units)
    return units


def _bad_units(spec: HoldSpec, i: int, pool: Pool, units: float) -> SimError:
    """The error of units that are not at least 0 (negative units would create capacity)."""
    return out_of_domain(
        spec.part_origins[i], f"the units of `hold {pool.name}`", units, "at least 0"
    )


def _reserve(spec: HoldSpec, i: int, a: Any, pool: Pool) -> float:
    """The reserve the hold `spec` asks of its `i`th pool for the attributes `a`."""
    reserve = spec.reserves[i](a)
    if not reserve >= 0:
        raise _bad_reserve(spec, i, pool, reserve)
    return reserve


def _bad_reserve(spec: HoldSpec, i: int, pool: Pool, reserve: float) -> SimError:
    """The error of a reserve that is not at least 0."""
    what = f"the reserve of `hold {pool.name}`"
    return out_of_domain(spec.part_origins[i], what, reserve, "at least 0")


def innermost(s: Session, pool: Pool) -> HoldPart | None:
    """The innermost enclosing hold's unreleased part on `pool`."""
    for frame in reversed(s.frames):
        if frame.kind == HOLD:
            for part in frame.hold.parts:
                if part.pool is pool and not part.released:
                    return part
    return None
