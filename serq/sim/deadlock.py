"""Sessions that wait for each other at pools: found when a run ends, for a warning.

When every live session waits at a pool (to be admitted, or to grow under `preempt
none`), and neither the head of any queue nor the first grower of any pool fits, what the
pools have allocated is held by sessions that wait themselves: nobody releases anything,
so nobody is admitted or grows again, however long the run goes on. New arrivals only
queue behind the heads. That is claimed only where it is certain:

- no queue has keys (a newcomer could become a head that fits);
- no lease is pending (its end releases units);
- every hold's units and reserve read only constants, the session's attributes and pool
  observables that change only when something is admitted, grows or is released
  (`used`, `free`, `cachedin`, `holders`): not the clock, a draw, a queue's length or a
  stage's state, which could make a head fit later with nothing released.
"""

from __future__ import annotations

import math
from typing import Any

from serq import ir
from serq.ir.expr import contains
from serq.sim.errors import SimError
from serq.sim.exprs import arith_repr

INF = math.inf
# pool observables that move only when a pool admits, grows, releases or evicts
SETTLED = frozenset({"used", "free", "cachedin", "holders"})


def _moves(node: Any) -> bool:
    """Whether an expression node can change while every session waits at a pool."""
    if isinstance(node, ir.Ctx | ir.Draw | ir.Aggregate):
        return True
    return isinstance(node, ir.Observable) and node.func not in SETTLED


def settled_units(program: ir.Program) -> bool:
    """Whether the units and reserves of every hold of `program` stay what they are while
    nothing is admitted, grows or is released."""
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Hold):
                for part in stmt.pools:
                    if contains(part.units, _moves) or contains(part.reserve, _moves):
                        return False
    return True


def find(world: Any) -> tuple[Any, str] | None:
    """(origin, why) for the W-stall when the run of `world` ended in the wait the module
    describes, else None."""
    if not settled_units(world.program):
        return None
    waiting = []
    for p, decl in zip(world.pools, world.program.pools, strict=True):
        if p.keys or any(part.leased for part in p.holders):
            return None
        queued, growing = len(p.queue) + len(p.front), len(p.growers)
        if queued or growing:
            waiting.append((p, decl, queued, growing))
    if sum(q + g for _, _, q, g in waiting) != world.live:
        return None  # a session runs somewhere: it may release what the heads need
    heads = []
    for p, decl, queued, growing in waiting:
        if growing:
            wait = p.growers[0]
            if wait.resident is not None:
                return None  # a step engine's resident: the engine's own stall rule
            part = wait.part
            delta = p.round_up(part.alloc + wait.amount) - part.alloc
            if p.committed() + p.growth(part, delta) <= p.cap:
                return None
        head = p.head() if queued else None
        try:
            if head is not None and world.holds._fits(head):
                return None
        except SimError:
            return None  # its units fail to evaluate now: not this rule's to say
        what = []
        if queued:
            what.append(f"{queued} waiting")
        if growing:
            what.append(f"{growing} waiting to grow")
        first = (head.joined, head.session.serial) if head is not None else (INF, -1)
        heads.append((first, p, decl, ", ".join(what), head))
    heads.sort(key=lambda h: h[0])
    parts = []
    for _, p, _, what, head in heads:
        text = f"`{p.name}` ({what}, used {arith_repr(p.allocated)} of {arith_repr(p.cap)}"
        if head is not None:
            text += f"; its head, session {head.session.serial}, since t = "
            text += arith_repr(head.joined)
        parts.append(text + ")")
    return (
        heads[0][2].origin,
        f"every live session ({world.live}) waits at a pool where nothing fits: "
        f"{', '.join(parts)}; what the pools have allocated is held by sessions that "
        "wait themselves, so none of them will be admitted or grow again",
    )

