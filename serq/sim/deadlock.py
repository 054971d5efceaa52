"""A wait at the pools that never ends while the run goes on (`W-deadlock`).

The stall rule of `World._stalled` names sessions that wait for ever when no event is
left. When something else keeps the clock going (an open workload's next arrival, a
session in a `loop` of runs), sessions that wait for each other at the pools (one holds
`a` and waits for `b`, the other holds `b` and waits for `a`) let the run go on to the
horizon, and the report describes a deployment part of which stopped. At the end of such
a run this module proves the wait permanent and says so; it changes nothing in the report.

The proof is a greatest fixed point over the sessions waiting in a pool's queue (or to
grow under `preempt none`): start with all of them, and drop any whose hold (every pool
of it) or growth would fit if every session outside the set gave back all it holds, so
that the pool kept only what the set holds (units, and under `reserve held` their
reservations); repeat until none drops. No session of the set that is left can go on
before another of it does, and none of it releases anything while it waits, so none ever
goes on: whatever the other sessions do, each pool keeps at least what the set holds. A
hold's units are fixed (`fixed_units`: no state, clock or draw in them), and the rule
applies only where nothing but a session's own release frees units (`applies`): no claim,
spill, lease of a finite duration (a timer ends it) or `load` in the program, a `grow`
only where no pool preempts (a newcomer's growth may preempt a waiting holder), and a
step engine's run growing only the engine's memory or a pool under `preempt none` (the
plan's victim on the memory is a resident, whose run is at the engine; on another pool
it is the newest holder, which may wait). A lease of inf ends only by its session's
`release` or end, and stays in the pool's holders: held by its session while it waits,
and never a victim. A cached prefix counts as nothing held: admission evicts it. The
generated code keeps an inline hold's units in its locals; `World.held_inline` reads them
for a waiting session.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from serq import ir
from serq.ir.expr import Aggregate, Ctx, Draw, Observable, contains
from serq.sim.errors import SimError, number
from serq.sim.holds import _reserve, _units


def _reads_more_than_the_session(node: Any) -> bool:
    return isinstance(node, Observable | Draw | Ctx | Aggregate)


def fixed_units(hold: ir.Hold) -> bool:
    """Whether the units and reserves of `hold` read only the session's attributes and
    constants, so that they evaluate the same for a session that waits."""
    return not any(
        contains(part.units, _reads_more_than_the_session)
        or (part.reserve is not None and contains(part.reserve, _reads_more_than_the_session))
        for part in hold.pools
    )


def _family(ref: ir.Ref) -> range:
    return range(ref.base, ref.base + ref.count)


def _preempts_only_residents(program: ir.Program, run: ir.Run) -> bool:
    """Whether a step engine growing `run` can preempt no session that waits at a pool: a
    growth on its engine's memory takes a resident of an engine on that memory (whose
    run is at the engine, not at a pool), one under `preempt none` waits and preempts
    nobody; a growth on another pool takes the newest holder there, waiting or not."""
    if run.growing is None:
        return True
    for g in _family(run.growing):
        if program.pools[g].preempt == "none":
            continue
        for ref in run.stages:
            for k in _family(ref):
                kind = program.stages[k].kind
                if not isinstance(kind, ir.Step) or kind.memory != g:
                    return False
    return True


def applies(program: ir.Program, has_steps: bool) -> bool:
    """Whether `program` can have a circular wait the rule proves: pools, fixed units, and
    nothing that frees units but a session's release (a step engine's plan preempts only
    its residents, `_preempts_only_residents`)."""
    if not program.pools or program.claims:
        return False
    if any(p.spill is not None for p in program.pools):
        return False
    preempting = any(p.preempt != "none" for p in program.pools)
    for block in program.blocks:  # every body is a block of its own
        for stmt in block:
            # a newcomer admitted somewhere could grow and preempt a waiting holder, which
            # gives its units back; under `preempt none` a growth only waits (one more
            # waiting session)
            if isinstance(stmt, ir.Load) or (isinstance(stmt, ir.Grow) and preempting):
                return False
            if has_steps and isinstance(stmt, ir.Run):
                if not _preempts_only_residents(program, stmt):
                    return False
            if isinstance(stmt, ir.Hold) and (not _endless(stmt.lease) or not fixed_units(stmt)):
                return False
    return True


def _endless(lease: ir.Lease | None) -> bool:
    """Whether `lease` is none, or lasts until its session releases it or ends (a
    duration of the constant inf): no timer ends it, so a session that waits keeps it,
    and it counts as held by that session (it stays in the pool's holders)."""
    return lease is None or (
        isinstance(lease.duration, ir.Num) and lease.duration.value == math.inf
    )


class _Wait:
    """A waiting session: `run`, its `HoldRun` in the queue of `pool`, or `grow`, its
    `GrowWait` at `pool`."""

    __slots__ = ("session", "pool", "run", "grow")

    def __init__(self, session: Any, pool: Any, run: Any, grow: Any) -> None:
        self.session = session
        self.pool = pool
        self.run = run
        self.grow = grow


def _slack(pool: Any) -> float:
    """What a sum of `pool`'s units may be off by (the allocation is a float kept by
    additions and subtractions): a hold that misses fitting by less is taken to fit."""
    return 1e-9 * max(1.0, abs(pool.cap)) if math.isfinite(pool.cap) else 0.0


def _needs(wait: _Wait) -> list[tuple[Any, float]]:
    """What `wait` needs to go on: per pool the units its hold or growth adds to the
    pool's committed count (`Holds._fits`, `Holds.try_growers`)."""
    grow = wait.grow
    if grow is not None:
        part, pool = grow.part, wait.pool
        delta = pool.grow_delta(part.alloc, grow.amount)
        return [(pool, pool.growth(part, delta))]
    run = wait.run
    spec, a = run.spec, run.session.attrs
    needs = []
    for i, pool in enumerate(run.pools):
        need = pool.round_up(_units(spec, i, a, pool))
        if spec.reserves[i] is not None:
            need = max(need, pool.round_up(_reserve(spec, i, a, pool)))
        needs.append((pool, need))
    return needs


def _fits(needs: list[tuple[Any, float]], taken: dict[Any, float]) -> bool:
    """Whether `needs` fit, in every pool, beside the units `taken`."""
    return all(taken.get(p, 0.0) + need <= p.cap + _slack(p) for p, need in needs)


def _each_wait(world: Any) -> Iterator[tuple[Any, Any, Any, Any]]:
    """(session, pool, run, grow) for every session waiting at a pool: `run` its `HoldRun`
    in the pool's queue, or `grow` its `GrowWait` there."""
    for p in world.pools:
        for run in p.front:
            yield run.session, p, run, None
        for run in p.queue:
            yield run.session, p, run, None
        for grow in p.growers:
            yield grow.session, p, None, grow


def _held(world: Any) -> dict[Any, dict[Any, float]]:
    """What each holder holds in the pools' `HoldPart`s: per session, per pool the units
    counted against admission there (under `reserve held` with their reservations)."""
    held: dict[Any, dict[Any, float]] = {}
    for p in world.pools:
        for part in p.holders:
            units = part.alloc
            if p.reserve_held:
                units += max(0.0, part.reserve - part.alloc)
            mine = held.setdefault(part.run.session, {})
            mine[p] = mine.get(p, 0.0) + units
    return held


def _holders_waiting(world: Any) -> dict[Any, tuple[_Wait, dict[Any, float]]] | None:
    """The waiting sessions that hold something, with what they hold; None when a wait
    is not a session's (a step engine's resident: the engine's own stall rule) or what a
    session holds is not known."""
    held = _held(world)
    inline = world.waits_in_inline_holds  # the generated code keeps those units in locals
    found = {}
    for s, p, run, grow in _each_wait(world):
        if grow is not None and grow.resident is not None:
            return None
        mine = held.get(s)
        if inline:
            extra = world.held_inline(s)
            if extra is None:
                return None
            if extra:
                mine = dict(mine or {})
                for q, units in extra:
                    mine[q] = mine.get(q, 0.0) + units
        if mine is not None:
            found[s] = (_Wait(s, p, run, grow), mine)
    return found


def _deadlocked(world: Any) -> tuple[list[_Wait], dict[Any, float]] | None:
    """The waits that never end (see the module), and what their sessions hold per pool:
    the greatest set of waits none of whose needs fits beside what the set holds. Only
    the waits of sessions that hold something change what the set holds, so the fixed
    point is found among them first; a wait of a session that holds nothing is in the
    set when it does not fit beside what the set holds then. None: not known."""
    holders = _holders_waiting(world)
    if holders is None:
        return None
    stuck = {s: _needs(wait) for s, (wait, _) in holders.items()}
    taken: dict[Any, float] = {}
    for _, mine in holders.values():
        for p, units in mine.items():
            taken[p] = taken.get(p, 0.0) + units
    changed = True
    while changed:
        changed = False
        for s, needs in list(stuck.items()):
            if _fits(needs, taken):  # it may go on, and then release what it holds
                del stuck[s]
                for p, units in holders[s][1].items():
                    taken[p] -= units
                changed = True
    if not stuck:  # (none holding anything: each fits once the others are gone)
        return [], taken
    found = []
    for s, p, run, grow in _each_wait(world):
        if s in stuck:
            found.append(holders[s][0])
        elif s not in holders:
            wait = _Wait(s, p, run, grow)
            if not _fits(_needs(wait), taken):
                found.append(wait)
    return found, taken


def find(world: Any, interrupted: bool = False) -> tuple[Any, str] | None:
    """(origin, message) when some live sessions of `world` wait at the pools for ever,
    else None; called at the end of a run that still had events pending, or where a run
    was `interrupted` (Ctrl-C: the words say how far it went, not "to the end")."""
    if world.ready or not world.live:
        return None
    try:
        result = _deadlocked(world)
    except SimError:  # units out of their domain: not this rule's business
        return None
    if not result or not result[0]:
        return None
    stuck, taken = result
    waiting = sum(1 for _ in _each_wait(world))
    every = len(stuck) == waiting == world.live
    return _message(world, stuck, taken, every, interrupted)


def _message(
    world: Any, stuck: list[_Wait], taken: dict[Any, float], every: bool, interrupted: bool
) -> tuple[Any, str]:
    """The warning's origin (the first pool a stuck session waits at) and its words: as
    they were when the rule proved only a wait of every live session (`every`), else with
    how many of the live sessions wait, what they hold, the first of them and since when."""
    queued: dict[Any, int] = {}
    growing: dict[Any, int] = {}
    for w in stuck:
        counts = queued if w.run is not None else growing
        counts[w.pool] = counts.get(w.pool, 0) + 1
    where = []
    origin = None
    for p, decl in zip(world.pools, world.program.pools, strict=True):
        if p not in queued and p not in growing:
            continue
        counts = [f"{queued[p]}"] if p in queued else []
        if p in growing:
            counts.append(f"{growing[p]} waiting to grow")
        used = f"used {number(p.allocated)} of {number(p.cap)}"
        if not every:
            used += f", {number(taken.get(p, 0.0))} of it by them"
        where.append(f"{', '.join(counts)} at pool `{p.name}` ({used})")
        if origin is None:
            origin = decl.origin
    n = len(stuck)
    if every:
        arrivals = isinstance(world.program.arrival, ir.Poisson | ir.Renewal) or (
            world.program.trace is not None
        )
        return origin, (
            f"{n} session{'s wait' if n != 1 else ' waits'} at the pools for ever "
            f"({'; '.join(where)}): none of their holds fits, and every unit the pools hold "
            "is held by one of them, so nothing will ever be released; the run went on"
            + (" to the end" if not interrupted else "")
            + (" with the arrivals joining them" if arrivals else "")
            + (" until it was interrupted" if interrupted else "")
        )
    first = min(stuck, key=lambda w: w.session.serial)
    since = "" if first.run is None else f", since t = {number(first.run.joined)}"
    return origin, (
        f"{n} of the {world.live} live sessions wait at the pools for ever "
        f"({'; '.join(where)}; the first, session {first.session.serial}{since}): none "
        "of their holds would fit even if every other session gave back all it holds, so "
        "they never release anything; the other sessions went on running "
        + ("until the run was interrupted" if interrupted else "to the end of the run")
    )
