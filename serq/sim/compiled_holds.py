"""The compiled path's holds: which can be written inline, and their templates.

A hold is written inline into the generated session code (its body in the same generator,
no frame) when nothing but that code ever reads where a session is in it: every pool of it
is "inline", and its body holds only inline holds and runs only plain runs (flows over
several stages too: the network wakes the session as a stage does, and nothing cancels a
flow where no preemption can happen). A pool is inline when every hold of it is an inline
candidate (no `lease`; never nested in a hold of the same family, nor naming a computed
member beside another of its family), nothing loads it, no step engine admits from it, and
it has no `reserve held`, in a program where no preemption can happen (no `grow` of a pool
that preempts, no run `growing` a pool, no step engine's memory). It may be released early
(`release P`) or grown (`grow P (d)`) by a statement inside the body of a hold of that
very member (both named by a constant): a release gives the part back there, once, and not
again at the end; a growth enlarges the part at once when the pool has room, else the
session waits among the pool's growers (a `GrowWait` of a `HoldPart` made for the wait,
which `Holds.try_growers` grows and wakes as it does any other). Its holders are sessions
holding it once each. A hold may name a member by a computed index (`hold kv[i] (...)`, as
a router writes it) when every member of the family is inline and all have the same block
and kind of queue: the member is resolved where the session joins, as `Holds.join`
resolves it, and the code is written once for the family. A pool may have a block, an
eviction order, queue keys and a spill, and its holds may `reserve`, `cache` and `reuse`:
the cache itself stays the `Cache` object's, called as the interpreter calls it. What the
rest of the simulator reads of such a pool (its observables, the pools' levels, the stall
diagnostics) it reads from the `Pool` and the `HoldRun`s in its queue as before.

The templates are `Holds.join`, `Holds.try_admit` (with `_fits` and `_admit`),
`Holds.close`, `Holds.release_all`, `Holds.release` and `Holds.grow` for such holds, in
the order and with the arithmetic of `serq.sim.holds`, so both paths give the same
report.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim.errors import SimError, out_of_domain
from serq.sim.session import GROWING, READY

CACHED = SLOT["cached"]
COMPUTED = SLOT["computed"]


def inline_holds(program: ir.Program) -> set[int]:
    """The `id`s of the hold statements of `program` to write inline (see the module)."""
    if _preempts(program):
        return set()
    pools = _inline_pools(program)
    holds: list[ir.Hold] = [
        stmt for block in program.blocks for stmt in block if isinstance(stmt, ir.Hold)
    ]
    while True:
        candidates = {
            id(h): h for h in holds if all(set(members(p.pool)) <= pools for p in h.pools)
        }
        # a body that holds another kind of hold, or runs at a step engine, makes the
        # hold not inline (the rest of the simulator would see a session in it)
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
            i for h in holds if id(h) not in candidates for p in h.pools for i in _family(p.pool)
        }
        if not held & pools:
            return set(candidates)
        pools -= held


def caching_pools(program: ir.Program) -> set[int]:
    """The pool members whose cache can hold anything: a hold of them caches, or a spill
    writes to them."""
    found = {p.spill.to for p in program.pools if p.spill is not None}
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Hold) and stmt.cache is not None:
                for part in stmt.pools:
                    found.update(_family(part.pool))
    return found


def _preempts(program: ir.Program) -> bool:
    """Whether a growth in `program` may preempt a holder or is an engine's: a `grow` of a
    pool family with a member that preempts, a run `growing` a pool, or a step engine
    with a memory. A preemption aborts the scope of a holder wherever it is, which an
    inline hold (a stretch of a generator) cannot be; a `grow` under `preempt none` only
    waits."""
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Run) and stmt.growing:
                return True
            if isinstance(stmt, ir.Grow) and any(
                program.pools[k].preempt != "none" for k in _family(stmt.pool)
            ):
                return True
    return any(isinstance(s.kind, ir.Step) and s.kind.memory is not None for s in program.stages)


def member(ref: ir.Ref) -> int | None:
    """The pool member a constant reference names, None for a computed one."""
    if ref.index is None:
        return ref.base
    if isinstance(ref.index, ir.Num):
        return ref.base + int(ref.index.value)
    return None


def _family(ref: ir.Ref) -> range:
    return range(ref.base, ref.base + ref.count)


def members(ref: ir.Ref) -> range:
    """The members a hold's part may take: the one a constant reference names, else its
    whole family (resolved when the session joins)."""
    k = member(ref)
    return _family(ref) if k is None else range(k, k + 1)


def _inline_pools(program: ir.Program) -> set[int]:
    """The pool members only inline candidates hold (see the module)."""
    pools = {
        i for i, p in enumerate(program.pools) if p.admit_via is None and not p.reserve_held
    }
    for stage in program.stages:
        if isinstance(stage.kind, ir.Step) and stage.kind.memory is not None:
            pools.discard(stage.kind.memory)
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Hold):
                for part in stmt.pools:
                    if stmt.lease is not None:
                        pools.difference_update(_family(part.pool))
                    elif _holds_inside(program, stmt.body, part.pool) or _twice(stmt, part.pool):
                        pools.difference_update(_family(part.pool))  # a member, held once
                    elif member(part.pool) is None and not _alike(program, part.pool):
                        pools.difference_update(_family(part.pool))
                if stmt.lease is not None:
                    pools.difference_update(_family(stmt.lease.pool))
            elif isinstance(stmt, ir.Load):
                pools.difference_update(_family(stmt.pool))
    for ref in _uncovered(program):
        pools.difference_update(_family(ref))
    return pools


def released_in(program: ir.Program, block: int, k: int) -> bool:
    """Whether a `release` of pool member `k` (named by a constant) is in `block` or
    anything inside it."""
    return any(
        isinstance(stmt, ir.Release) and member(stmt.pool) == k for stmt in _walk(program, block)
    )


def grown_in(program: ir.Program, block: int, k: int) -> bool:
    """Whether a `grow` of pool member `k` (named by a constant) is in `block` or anything
    inside it."""
    return any(
        isinstance(stmt, ir.Grow) and member(stmt.pool) == k for stmt in _walk(program, block)
    )


def _uncovered(program: ir.Program, holds: set[int] | None = None) -> list[ir.Ref]:
    """The pools of the `release` and `grow` statements that are not inside the body of a
    hold (of `holds`, by `id`, when given) of the member they name, both named by a
    constant (an inline `release` gives back that hold's part, an inline `grow` enlarges
    it)."""
    covered: set[int] = set()
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Hold) and (holds is None or id(stmt) in holds):
                held = {member(p.pool) for p in stmt.pools} - {None}
                for inner in _walk(program, stmt.body):
                    if isinstance(inner, ir.Release | ir.Grow) and member(inner.pool) in held:
                        covered.add(id(inner))
    return [
        stmt.pool
        for block in program.blocks
        for stmt in block
        if isinstance(stmt, ir.Release | ir.Grow) and id(stmt) not in covered
    ]


def steps_read_frames(program: ir.Program, inline: set[int]) -> bool:
    """Whether the session code calls an interpreter step that looks for the holds around
    (`holds.innermost`, a session's leases): a `load`, or a `release` or `grow` that no
    inline hold of `inline` around it gives back or enlarges."""
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Load):
                return True
    return bool(_uncovered(program, inline))


def _twice(stmt: ir.Hold, ref: ir.Ref) -> bool:
    """Whether hold `stmt` names `ref`'s family in another part too, where one of the two
    is computed (both may then be the same member)."""
    family = set(_family(ref))
    parts = [p.pool for p in stmt.pools if set(_family(p.pool)) & family]
    return len(parts) > 1 and any(member(r) is None for r in parts)


def _alike(program: ir.Program, ref: ir.Ref) -> bool:
    """Whether the members of `ref`'s family have the same block and the same kind of
    queue (keyed or not): a hold of a computed member is written once for them all."""
    members = [program.pools[k] for k in _family(ref)]
    return len({(p.block, bool(p.queue.keys)) for p in members}) == 1


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
        if isinstance(stmt, ir.Run) and (stmt.mode != "plain" or stmt.growing is not None):
            return False
        if isinstance(stmt, ir.Load):
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


def bad_cache(spec: Any, s: Any, length: float) -> SimError:
    """The error of a NaN cache length (`Holds.release_part`'s), naming the session."""
    error = out_of_domain(spec.origin, "the length of the hold's cache", length, "a number")
    error.serial = s.serial  # released by a preemption, maybe in another's turn
    return error


def bad_reuse(spec: Any, s: Any, reuse: float) -> SimError:
    """The error of a NaN `reuse` (`Holds._admit`'s), naming the session admitted."""
    error = out_of_domain(spec.origin, "the `reuse` of the hold", reuse, "a number")
    error.serial = s.serial  # admitted by a retry, maybe while another runs
    return error


# ---------------------------------------------------------------------- templates


@dataclass
class Shape:
    """What the templates write of one inline hold: per pool its name in the generated
    code, its cap and what an admission or a growth may take there (`Pool.limit`, both
    source), its block (None without), whether its cache can hold anything, the
    recorder's record of it; whether the first pool's queue has keys; the code of the
    hold's `cache` and `reuse` expressions (None without)."""

    pools: list[str]
    caps: list[str]
    limits: list[str]
    blocks: list[float | None]
    cached: list[bool]
    records: list[str]
    keyed: bool
    cache: str | None
    reuse: str | None
    spec: str  # the hold's `HoldSpec`, for its errors
    tracked: bool  # the session's state, place and admission are read by the rest
    reserves: list[str | None]  # per pool the code of its `reserve`, None without


def round_up(var: str, pool: str, block: float | None) -> list[str]:
    """`Pool.round_up` of the local `var` (a call: its rounding is the pool's)."""
    if block is None:
        return []
    return [f"{var} = {pool}.round_up({var})"]


def fits(shape: Shape, units: list[str]) -> list[str]:
    """`Holds._fits` (the run `run`, attributes `a`): each pool's units (`units[i]`, code)
    into `u{i}` in order, and its reserve when it has one, what it needs being the larger;
    the lines `break` out of the caller's loop at one that does not fit."""
    lines = []
    for i, (pool, code, limit) in enumerate(zip(shape.pools, units, shape.limits, strict=True)):
        lines.append(f"u{i} = {code}")
        if not non_negative(code):
            lines += [
                f"if not u{i} >= 0.0:",
                f"    raise _k_bad_units({shape.spec}, {i}, {pool}, u{i})",
            ]
        lines += round_up(f"u{i}", pool, shape.blocks[i])
        need = f"u{i}"
        if shape.reserves[i] is not None:
            need = f"need{i}"
            lines += reserved(shape, i, f"u{i}", need)
        lines += [f"if {pool}.allocated + {need} > {limit}:", "    break"]
    return lines


def reserved(shape: Shape, i: int, units: str, need: str) -> list[str]:
    """Pool i's reserve evaluated, checked and rounded up to blocks (`Holds._reserve`,
    `Pool.round_up`) into `need`, then the larger of it and `units` (Python's `max`)."""
    code, pool = shape.reserves[i], shape.pools[i]
    lines = [f"{need} = {code}"]
    if not non_negative(str(code)):
        lines += [
            f"if not {need} >= 0.0:",
            f"    raise _k_bad_reserve({shape.spec}, {i}, {pool}, {need})",
        ]
    lines += round_up(need, pool, shape.blocks[i])
    lines.append(f"if not {need} > {units}:")
    lines.append(f"    {need} = {units}")
    return lines


def unbounded(cap: str) -> bool:
    """Whether a pool whose cap is the code `cap` may be of cap inf (only there can a
    part hold inf units)."""
    value = number(cap)
    return value is None or value == math.inf


def number(code: str) -> float | None:
    """The value of `code` when it is a number literal (a folded constant), else None."""
    try:
        return float(code)
    except ValueError:
        return None


def non_negative(code: str) -> bool:
    """Whether `code` is a literal of at least 0: a domain check of it can be left out."""
    value = number(code)
    return value is not None and value >= 0.0


def admit(
    shape: Shape, warmup: float, limit: int, queued: bool = True, units_to: str = "run.units_now"
) -> list[str]:
    """`Holds._admit` (the run `run` of session `s`, attributes `a`, its units in `u0`,
    `u1`, ...; the first pool's queue `q`): it leaves the queue, consumes its cached
    prefix under `cache`, takes its units (evicting what no longer fits; the tuple of them
    into `units_to`), is counted (a livelock past `limit` admissions at one instant, more
    than the live sessions), and its session is ready (the body goes on from the join).
    Not `queued`: a session admitted where it joins, which never entered the queue (no
    `run`; it joined now)."""
    first = shape.pools[0]
    if not queued:
        lines = [f"{first}.dirty = True"]
    elif shape.keyed:
        lines = [f"{first}.leave(run)"]
    else:
        lines = ["q.popleft()", f"{first}.dirty = True"]
    caching = shape.cache is not None
    if caching:
        if shape.reuse is not None:
            lines += [
                f"reuse = {shape.reuse}",
                "if reuse != reuse:",
                f"    raise _k_bad_reuse({shape.spec}, s, reuse)",
            ]
        else:
            lines.append("reuse = _k_INF")
        lines.append("consumed = 0.0")
    for i, pool in enumerate(shape.pools):
        if caching:
            lines += [
                f"c = {pool}.cache.consume(s, reuse)",
                "if c > consumed:",
                "    consumed = c",
            ]
        if unbounded(shape.caps[i]):  # a part of inf units may come or be held
            lines += [f"if u{i} == _k_INF or {pool}.infinite:", f"    {pool}.infinite_in(u{i})"]
        lines += [f"{pool}.allocated += u{i}", f"{pool}.n_holders += 1"]
        if i or shape.keyed and queued:  # the first pool was marked above, but by `leave`
            lines.append(f"{pool}.dirty = True")
    for i, pool in enumerate(shape.pools):
        if shape.cached[i]:  # else its cache is empty: nothing to evict
            lines += [
                f"if {pool}.allocated + {pool}.cache.total > {shape.caps[i]}:",
                "    try:",
                f"        {pool}.evict(_k_recorder)",
                "    except _k_SimError as error:",  # `Holds._admit`: the session admitted
                "        if error.serial is None:",
                "            error.serial = s.serial",
                "        raise",
            ]
    units = ", ".join(f"u{i}" for i in range(len(shape.pools)))
    lines.append(f"{units_to} = ({units},)")
    if shape.tracked:  # the serving order of a step engine, a `preempt by` key
        lines += ["H = _k_holds", "H.admissions = n = H.admissions + 1", "s.admitted = n"]
    lines += [  # `World.count_admission`, in the closure cells `admit_at`, `admit_n`
        "if now == admit_at:",
        "    admit_n += 1",
        f"    if admit_n > {limit} + _k_world.live:",
        "        _k_world.spinning_at(s)",
        "else:",
        "    admit_at = now",
        "    admit_n = 1",
    ]
    lines += [
        f"a[{CACHED}] = {'consumed' if caching else '0.0'}",
        f"rec = {shape.records[0]}",
        "rec.admissions += 1",
    ]
    if queued:
        lines += [
            "waited = now - run.joined",
            f"if now >= {float(warmup)!r} and waited == waited:",
            "    rec.waits += 1",
            "    rec.wait += waited",
        ]
    else:  # it waited 0 (now - now), which adds nothing to the sum; NaN at a time of inf
        lines += [f"if now >= {float(warmup)!r} and now < _k_INF:", "    rec.waits += 1"]
    for record in shape.records[1:]:
        lines.append(f"{record}.admissions += 1")
    if shape.tracked:
        lines += [f"s.state = {READY}", "s.where = s.waiter = None"]
    lines.append("ready.append(s)")
    return lines


def release(
    shape: Shape, units: str, released: dict[int, str] | None = None, only: int | None = None
) -> list[str]:
    """`Holds.release_part` of each part of an inline hold whose units (a tuple, in pool
    order) are `units` (of session `s`, attributes `a`), in pool order: the units go back
    and, under `cache`, min(cache, allocation) rounded down to blocks stays cached. A part
    in `released` (its index: the local that is True once a `release` gave it back) is
    skipped when it was; `only`: that part alone, unconditionally (the `release`)."""
    lines = [f"units = {units}"]
    for i, pool in enumerate(shape.pools):
        if only is not None and i != only:
            continue
        part = [f"{pool}.allocated -= units[{i}]"]
        if unbounded(shape.caps[i]):  # inf less inf: the level `Pool.infinite_out` kept
            part += [
                f"if {pool}.infinite:",
                f"    {pool}.allocated = {pool}.infinite_out(units[{i}])",
            ]
        part += [
            f"{pool}.n_holders -= 1",
            f"if not {pool}.n_holders:",
            f"    {pool}.allocated = 0.0",
            f"{pool}.dirty = True",
        ]
        if shape.cache is not None:
            amount = f"_k_min(length, units[{i}])"
            if shape.blocks[i] is not None:
                amount = f"{pool}.round_down({amount})"
            part += [
                f"length = {shape.cache}",
                "if length != length:",
                f"    raise _k_bad_cache({shape.spec}, s, length)",
                f"amount = {amount}",
                "if amount > 0:",
                f"    {pool}.cache.put(s, amount)",
                # fast path: `Pool.evict`'s own test, without the call when it fails
                f"    if {pool}.allocated + {pool}.cache.total > {shape.caps[i]}:",
                f"        {pool}.evict(_k_recorder)",
            ]
        flag = None if released is None or only is not None else released.get(i)
        if flag is None:
            lines += part
        else:
            lines += [f"if not {flag}:", *(f"    {line}" for line in part)]
    return lines


def grow(
    shape: Shape,
    i: int,
    units: str,
    amount: str,
    alloc: str,
    part: str,
    origin: str,
    released: str | None,
) -> list[str]:
    """`Holds.grow` of part `i` of an inline hold whose units (a tuple, in pool order) are
    `units`, by the local `amount` (of session `s`; `origin` the statement's, for its
    errors): a part a `release` gave back (its local `released` True) is no hold around;
    the growth is rounded to blocks and, when the pool has room for it (stalled growers do
    not stop one that fits), taken at once into `alloc`, evicting what no longer fits;
    else, under `preempt none`, the session becomes the last of the pool's growers (a
    `GrowWait` of the new part `part` holding `alloc`), unless it could never fit. The
    caller writes the wait (a `yield` under the last line, `else:`) and takes the part's
    allocation back when it is resumed (`Holds.try_growers` grew it)."""
    pool, cap, limit = shape.pools[i], shape.caps[i], shape.limits[i]
    lines = []
    if released is not None:  # `innermost` skips a released part (no other hold around)
        lines += [f"if {released}:", f"    raise _k_grow_outside({origin}, {pool})"]
    if not non_negative(amount):
        lines += [
            f"if not {amount} >= 0.0:",
            f"    raise _k_bad_growth({origin}, {pool}, {amount})",
        ]
    lines += [f"{alloc} = {units}[{i}]", f"delta = {alloc} + {amount}"]
    lines += round_up("delta", pool, shape.blocks[i])
    lines.append(f"delta = delta - {alloc}")
    infinite = unbounded(cap)
    if infinite:  # `Pool.grow_delta`: an infinite part stays what it is
        lines += ["if delta != delta:", "    delta = 0.0"]
    lines += [
        f"if {pool}.allocated + delta <= {limit}:",  # `committed() + growth()`: nothing held
    ]
    if infinite:
        lines += [
            f"    if delta == _k_INF or {pool}.infinite:",
            f"        {pool}.infinite_grow({alloc}, delta)",
        ]
    lines += [
        f"    {alloc} = {alloc} + delta",
        f"    {pool}.allocated += delta",
        f"    {pool}.dirty = True",
    ]
    if shape.cached[i]:  # else its cache is empty: nothing to evict
        lines += [
            f"    if {pool}.allocated + {pool}.cache.total > {cap}:",
            f"        {pool}.evict(_k_recorder)",
        ]
    lines += [
        "else:",
        f"    if {alloc} + delta > {limit}:",
        f"        raise _k_never_grows({origin}, {pool}, {amount}, {alloc} + delta)",
        f"    {part} = _k_HoldPart({pool}, None)",
        f"    {part}.alloc = {alloc}",
        f"    wait = _k_GrowWait(s, {part}, {amount})",
        f"    {pool}.growers.append(wait)",
    ]
    if shape.tracked:  # `Holds._stall`: where the session waits, for the rest to read
        lines += [f"    s.state = {GROWING}", f"    s.where = {pool}", "    s.waiter = wait"]
    return lines


def level_cells(index: int) -> list[str]:
    """The names of the closure cells in which the generated code keeps pool `index`'s
    levels: since when they are integrated, the areas of used, cached, queued and
    holders, then their values."""
    return [f"p{index}_{n}" for n in ("since", "au", "ac", "aq", "ah", "vu", "vc", "vq", "vh")]


def flush(
    pool: str, queue: str, cells: list[str], cached: bool = True, front: bool = True
) -> list[str]:
    """`World._flush_pools` of one pool, with `StatsRecorder.pool_state` inline: the four
    levels, kept in the closure cells `cells` (`level_cells`), integrated to now if the
    pool changed (`queue`: the code of its waiting holds, `waiting`). A pool whose cache
    never holds anything (`cached` false: its cached level stays 0, its area too) and one
    that no preemption queues at the front (`front` false) leave those terms out."""
    since, au, ac, aq, ah, vu, vc, vq, vh = cells
    return [
        f"if {pool}.dirty:",
        f"    {pool}.dirty = False",
        f"    if now > {since}:",
        f"        dt = now - {since}",
        f"        {au} += {vu} * dt",
        *([f"        {ac} += {vc} * dt"] if cached else []),
        f"        {aq} += {vq} * dt",
        f"        {ah} += {vh} * dt",
        f"        {since} = now",
        f"    {vu} = {pool}.allocated",
        *([f"    {vc} = {pool}.cache.total"] if cached else []),
        f"    {vq} = len({queue}) + len({pool}.front)" if front else f"    {vq} = len({queue})",
        f"    {vh} = {pool}.n_holders",
    ]


def waiting(pool: Any, name: str) -> str:
    """The code of what `pool` (named `name` in the generated code) keeps of its waiting
    holds in join order, as true and as long as its queue: a ranked queue's `joined`
    (a dict: tested and measured without a call), else the queue (a deque)."""
    return f"{name}.queue.joined" if pool.ranked else f"{name}.queue"


def write_back(world: Any, levels: list[tuple[float, ...]]) -> None:
    """Give the recorder the pool levels `flush` kept (`levels`, a tuple of the cells of
    `level_cells` per pool), as `pool_state` would have left them."""
    for pool, kept in zip(world.pools, levels, strict=True):
        record = world.recorder._pools[pool.index]
        since, au, ac, aq, ah, vu, vc, vq, vh = kept
        for level, area, value in (
            (record.used, au, vu),
            (record.cached, ac, vc),
            (record.queued, aq, vq),
            (record.holders, ah, vh),
        ):
            level.since = since
            level.area = area
            level.value = value
