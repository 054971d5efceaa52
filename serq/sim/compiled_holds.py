"""The compiled path's holds: which can be written inline, and their templates.

A hold is written inline into the generated session code (its body in the same
generator, no frame) when nothing but that code ever touches what it holds: every pool
of it is "inline", and its body holds only inline holds and runs only plain runs. A pool
is inline when the program only ever holds it with plain holds (no `cache`, `reuse`,
`lease` or `reserve`, a constant member, never nested in a hold of the same pool), never
grows, loads, drops or releases it, and it has no block, no queue keys, no `admit via`,
no spill from or to it, no `preempt by` and no `reserve held`, in a program where no
preemption can happen (no growth at all). Such a pool never caches, never evicts and
never preempts; its holders are sessions holding it once each; its queue is first come,
first served. What the rest of the simulator reads of it (its observables, the pools'
levels, the stall diagnostics) it reads from the `Pool` and the `HoldRun`s in its queue
as before.

The templates are `Holds.join`, `Holds.try_admit` (with `_fits` and `_admit`),
`Holds.close` and `Holds.release_all` for such holds, in the order and with the
arithmetic of `serq.sim.holds`, so both paths give the same report.
"""

from __future__ import annotations

from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim.session import READY

CACHED = SLOT["cached"]
COMPUTED = SLOT["computed"]


def inline_holds(program: ir.Program) -> set[int]:
    """The `id`s of the hold statements of `program` to write inline (see the module)."""
    if _grows(program):
        return set()
    pools = _inline_pools(program)
    holds: list[ir.Hold] = [
        stmt for block in program.blocks for stmt in block if isinstance(stmt, ir.Hold)
    ]
    while True:
        candidates = {
            id(h): h for h in holds if all(_member(p.pool) in pools for p in h.pools)
        }
        # a body that holds another kind of hold, or runs at a step engine or a flow,
        # makes the hold not inline (the rest of the simulator would see a session in it)
        changed = True
        while changed:
            changed = False
            for key, hold in list(candidates.items()):
                if not _plain_body(program, hold.body, candidates):
                    del candidates[key]
                    changed = True
        # a pool that a hold not written inline holds is not inline: the two kinds of
        # holder would not mix
        held = {
            member
            for h in holds
            if id(h) not in candidates
            for p in h.pools
            for member in _family(p.pool)
        }
        if not held & pools:
            return set(candidates)
        pools -= held


def _grows(program: ir.Program) -> bool:
    """Whether anything of `program` can grow a hold (and so preempt): a `grow`, a run
    `growing` a pool, or a step engine with a memory."""
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Grow) or (isinstance(stmt, ir.Run) and stmt.growing):
                return True
    return any(isinstance(s.kind, ir.Step) and s.kind.memory is not None for s in program.stages)


def _member(ref: ir.Ref) -> int | None:
    """The pool member a constant reference names, None for a computed one."""
    if ref.index is None:
        return ref.base
    if isinstance(ref.index, ir.Num):
        return ref.base + int(ref.index.value)
    return None


def _family(ref: ir.Ref) -> range:
    return range(ref.base, ref.base + ref.count)


def _inline_pools(program: ir.Program) -> set[int]:
    """The pool members that only plain holds hold (see the module)."""
    pools = {
        i
        for i, p in enumerate(program.pools)
        if p.block is None
        and not p.queue.keys
        and p.admit_via is None
        and p.spill is None
        and not p.preempt_keys
        and not p.reserve_held
    }
    for p in program.pools:
        if p.spill is not None:
            pools.discard(p.spill.to)
    for stage in program.stages:
        if isinstance(stage.kind, ir.Step) and stage.kind.memory is not None:
            pools.discard(stage.kind.memory)
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Hold):
                plain = (
                    stmt.cache is None
                    and stmt.reuse is None
                    and stmt.lease is None
                    and all(p.reserve is None for p in stmt.pools)
                )
                for part in stmt.pools:
                    if not plain or _member(part.pool) is None:
                        pools.difference_update(_family(part.pool))
                if stmt.lease is not None:
                    pools.difference_update(_family(stmt.lease.pool))
                for part in stmt.pools:  # a hold of the same pool inside: held twice
                    if _holds_inside(program, stmt.body, part.pool):
                        pools.difference_update(_family(part.pool))
            elif isinstance(stmt, ir.Grow | ir.Load | ir.Drop | ir.Release):
                pools.difference_update(_family(stmt.pool))
    return pools


def _holds_inside(program: ir.Program, block: int, ref: ir.Ref) -> bool:
    """Whether a hold of a member of `ref`'s family is in `block` or anything inside it."""
    family = set(_family(ref))
    for stmt in _walk(program, block):
        if isinstance(stmt, ir.Hold) and any(set(_family(p.pool)) & family for p in stmt.pools):
            return True
    return False


def _plain_body(program: ir.Program, block: int, inline: dict[int, Any]) -> bool:
    for stmt in _walk(program, block):
        if isinstance(stmt, ir.Hold) and id(stmt) not in inline:
            return False
        if isinstance(stmt, ir.Run) and (
            len(stmt.stages) > 1 or stmt.mode != "plain" or stmt.growing is not None
        ):
            return False
        if isinstance(stmt, ir.Grow | ir.Load | ir.Drop | ir.Release):
            return False
    return True


def _walk(program: ir.Program, block: int):
    """Every statement of `block` and of the blocks inside it."""
    stack = [block]
    while stack:
        for stmt in program.blocks[stack.pop()]:
            yield stmt
            if isinstance(stmt, ir.Hold | ir.Loop):
                stack.append(stmt.body)
            elif isinstance(stmt, ir.Branch):
                stack += [stmt.then, stmt.otherwise]


# ---------------------------------------------------------------------- templates


def fits(pools: list[str], units: list[str], caps: list[str]) -> list[str]:
    """`Holds._fits` of an inline hold: each pool's units (`units[i]`, code reading `a`,
    already evaluated in order into `u{i}` by the caller's lines) checked; the lines
    `break` out of the caller's loop when one does not fit."""
    lines = []
    for i, (pool, code, cap) in enumerate(zip(pools, units, caps, strict=True)):
        lines += [
            f"u{i} = {code}",
            f"if not u{i} >= 0.0:",
            f"    raise _k_bad_units(run.spec, {i}, {pool}, u{i})",
            f"if {pool}.allocated + u{i} > {cap}:",
            "    break",
        ]
    return lines


def admit(pools: list[str], records: list[str], warmup: float) -> list[str]:
    """`Holds._admit` of an inline hold (the run `run` of session `s`, attributes `a`,
    its units in `u0`, `u1`, ...; the first pool's queue `q`): it leaves the queue, takes
    its units, is counted, and its session is ready (the body goes on from the join)."""
    lines = ["q.popleft()", f"{pools[0]}.dirty = True"]
    for i, pool in enumerate(pools):
        lines += [
            f"{pool}.allocated += u{i}",
            f"{pool}.n_holders += 1",
            f"{pool}.dirty = True",
        ]
    units = ", ".join(f"u{i}" for i in range(len(pools)))
    lines += [
        f"run.units_now = ({units},)",
        "H = _k_holds",
        "H.admissions = n = H.admissions + 1",
        "s.admitted = n",
        f"a[{CACHED}] = 0.0",
        f"rec = {records[0]}",
        "rec.admissions += 1",
        "waited = now - run.joined",
        f"if now >= {float(warmup)!r} and waited == waited:",
        "    rec.waits += 1",
        "    rec.wait += waited",
    ]
    for record in records[1:]:
        lines.append(f"{record}.admissions += 1")
    lines += [f"s.state = {READY}", "s.where = s.waiter = None", "ready.append(s)"]
    return lines


def release(pools: list[str], run: str) -> list[str]:
    """`Pool.remove_holder` of each part of the inline hold `run` (`Holds.release_part`
    without a cache clause), in pool order."""
    lines = [f"units = {run}.units_now"]
    for i, pool in enumerate(pools):
        lines += [
            f"{pool}.allocated -= units[{i}]",
            f"{pool}.n_holders -= 1",
            f"if not {pool}.n_holders:",
            f"    {pool}.allocated = 0.0",
            f"{pool}.dirty = True",
        ]
    return lines


def flush(pool: str) -> list[str]:
    """`World._flush_pools` of one pool, with `StatsRecorder.pool_state` inline: the four
    levels, kept on the pool (`start_levels`), integrated to now if it changed."""
    return [
        f"if {pool}.dirty:",
        f"    {pool}.dirty = False",
        f"    if now > {pool}.lv_since:",
        f"        dt = now - {pool}.lv_since",
        f"        {pool}.lv_used += {pool}.v_used * dt",
        f"        {pool}.lv_cached += {pool}.v_cached * dt",
        f"        {pool}.lv_queued += {pool}.v_queued * dt",
        f"        {pool}.lv_holders += {pool}.v_holders * dt",
        f"        {pool}.lv_since = now",
        f"    {pool}.v_used = {pool}.allocated",
        f"    {pool}.v_cached = {pool}.cache.total",
        f"    {pool}.v_queued = len({pool}.queue) + len({pool}.front)",
        f"    {pool}.v_holders = {pool}.n_holders",
    ]


def start_levels(world: Any) -> None:
    """Start each pool's levels as the recorder's start (from the warm-up, at 0), for a
    run whose pool levels only `flush` changes (one without a step engine)."""
    warmup = world.recorder.warmup
    for pool in world.pools:
        pool.lv_since = warmup
        pool.lv_used = pool.lv_cached = pool.lv_queued = pool.lv_holders = 0.0
        pool.v_used = pool.v_cached = pool.v_queued = pool.v_holders = 0.0


def write_back(world: Any) -> None:
    """Give the recorder the pool levels `flush` kept, as `pool_state` would have left
    them."""
    for pool in world.pools:
        record = world.recorder._pools[pool.index]
        for level, area, value in (
            (record.used, pool.lv_used, pool.v_used),
            (record.cached, pool.lv_cached, pool.v_cached),
            (record.queued, pool.lv_queued, pool.v_queued),
            (record.holders, pool.lv_holders, pool.v_holders),
        ):
            level.since = pool.lv_since
            level.area = area
            level.value = value
