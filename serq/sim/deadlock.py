"""A circular wait at the pools that arrivals keep running past (`W-deadlock`).

The stall rule of `World._stalled` names sessions that wait for ever when no event is left.
An open workload always has one more arrival, so sessions that wait for each other at
the pools (one holds `a` and waits for `b`, the other holds `b` and waits for `a`) let the
run go on to the horizon, every later arrival joining them, and the report describes a
deployment that stopped. At the end of such a run this module proves the wait permanent
and says so; it changes nothing in the report.

The proof: every live session waits in a pool's queue and none of their holds fits now.
Then every unit the pools hold belongs to a waiting session, which releases nothing, so
no pool's allocation ever falls below what it is; an arrival can only take units and give
them back. A hold's units are fixed (`fixed_units`: no state, clock or draw in them), so
none of the waiting holds can ever fit. The rule applies only where nothing else frees
units (`applies`): no step engine, claim, spill, lease or `load` in the program, and a
`grow` only where no pool preempts (an engine's plan or a newcomer's growth may preempt a
waiting holder, a lease may end on a timer). A session waiting to grow under `preempt
none` is one more waiting session, whose growth does not fit either.
"""

from __future__ import annotations

from typing import Any

from serq import ir
from serq.ir.expr import Aggregate, Ctx, Draw, Observable, contains
from serq.sim.errors import SimError
from serq.sim.exprs import arith_repr


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


def applies(program: ir.Program, has_steps: bool) -> bool:
    """Whether `program` can have a circular wait the rule proves: pools, an open
    workload, fixed units, and nothing that frees units but a session's release."""
    if not program.pools or has_steps or program.claims:
        return False
    if not isinstance(program.arrival, ir.Poisson | ir.Renewal) and program.trace is None:
        return False  # a batch or a closed population stalls with no event left instead
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
            if isinstance(stmt, ir.Hold) and (stmt.lease is not None or not fixed_units(stmt)):
                return False
    return True


def find(world: Any) -> tuple[Any, str] | None:
    """(origin, message) when every live session of `world` waits at the pools for ever,
    else None; called at the end of a run that still had events (arrivals) pending."""
    if world.ready or not world.live:
        return None
    waiting = 0
    where = []
    origin = None
    for p, decl in zip(world.pools, world.program.pools, strict=True):
        runs = [*p.front, *p.queue]
        growers = p.growers
        if not runs and not growers:
            continue
        for wait in growers:  # `Holds.try_growers`' test, for each of them
            if wait.resident is not None:
                return None  # a step engine's resident: the engine's own stall rule
            part = wait.part
            delta = p.round_up(part.alloc + wait.amount) - part.alloc
            if p.committed() + p.growth(part, delta) <= p.cap:
                return None
        waiting += len(runs) + len(growers)
        counts = [f"{len(runs)}"] if runs else []
        if growers:
            counts.append(f"{len(growers)} waiting to grow")
        where.append(
            f"{', '.join(counts)} at pool `{p.name}` (used {arith_repr(p.allocated)} of "
            f"{arith_repr(p.cap)})"
        )
        if origin is None:
            origin = decl.origin
        try:
            if any(world.holds._fits(run) for run in runs):
                return None
        except SimError:  # units out of their domain: not this rule's business
            return None
    if waiting != world.live:
        return None
    return origin, (
        f"{waiting} session{'s wait' if waiting != 1 else ' waits'} at the pools for ever "
        f"({'; '.join(where)}): none of their holds fits, and every unit the pools hold "
        "is held by one of them, so nothing will ever be released; the run went on to the "
        "end with the arrivals joining them"
    )
