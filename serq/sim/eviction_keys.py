"""A pool's eviction keys, with what reads no entry worked out once per eviction.

`evict by` keys are evaluated for every entry before every victim (every block, with a
block). A priced order, `evict by (price(s, 0.1, 0.5) * size)`, reads an estimate of a
stage that is the same for every entry: within one call of `Cache.evict_to` nothing runs
but the eviction itself, so a stage's or another pool's state and the clock stand still
(a spill is the exception: it sends work to a stage and units to a tier as it evicts, so
a pool with one hoists nothing). Such a part of a key (`_fixed`) is compiled as a
function of its own that the cache calls once at the start of each eviction
(`Cache.hoisted`), and the key reads its value from a list (`Cache.held`). The values
are the same floats the key computed inline, so the victims are the same; and a key
whose remaining part reads only the entries' context and their owners' attributes is
`steady`, which lets the cache rank its entries in a heap.

Only what cannot fail, draws nothing and sets nothing is hoisted, so that evaluating it
where the key might not have (a branch of `?:` the entry does not take) changes nothing:
no draw, no computed member index (`member` may refuse it), no `budget_left` (it sets the
engine's context), nothing the simulator does not simulate.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from serq import ir
from serq.ir import arith
from serq.sim import exprs as sim_exprs
from serq.sim.exprs import ExprCompiler, Fn

# What an eviction key reads of the entry it weighs (`Cache.context`): never hoisted.
ENTRY_CONTEXT = frozenset({"size", "age", "last", "waiting"})
# Observables whose value `ExprCompiler` computes without a call that may refuse or set
# anything (price with its two times aside): `cachedin` reads the entry's owner, and
# `budget_left` outside a plan sets the engine's context as it plans.
_FIXED_OBSERVABLES = frozenset(sim_exprs.OBSERVABLE_CODE) - {"cachedin", "budget_left"}


def _children(e: ir.Expr) -> Iterator[ir.Expr]:
    """The subexpressions `ExprCompiler` evaluates for `e` (a `?:` of a constant test: the
    branch it takes)."""
    if isinstance(e, ir.Unary):
        yield e.operand
    elif isinstance(e, ir.Binary):
        yield e.left
        yield e.right
    elif isinstance(e, ir.Cond):
        test = arith.fold(e.test)
        if test is None:
            yield e.test
            yield e.then
            yield e.otherwise
        else:
            yield e.then if test != 0 else e.otherwise
    elif isinstance(e, ir.Call | ir.Draw):
        yield from e.args
    elif isinstance(e, ir.Cost):
        yield e.value
    elif isinstance(e, ir.Observable):
        if e.target.index is not None:
            yield e.target.index
        yield from e.args


def _fixed(e: ir.Expr, pool: int) -> bool:
    """Whether `e` has one value through an eviction of pool member `pool` without a
    spill, and evaluating it cannot fail or draw (the module's docstring)."""
    if isinstance(e, ir.Num):
        return True
    if isinstance(e, ir.Ctx):
        return e.name in sim_exprs.CONTEXT and e.name not in ENTRY_CONTEXT
    if isinstance(e, ir.Attr | ir.Draw | ir.Aggregate):
        return False
    if isinstance(e, ir.Observable):
        ref = e.target
        if not sim_exprs.constant_member(ref):
            return False
        member = ref.base + (0 if ref.index is None else int(ref.index.value))
        if ref.kind == "pool" and member == pool:
            return False  # its own cache changes as it evicts
        known = e.func in _FIXED_OBSERVABLES or (e.func == "price" and len(e.args) == 2)
        if not known:
            return False
    return all(_fixed(c, pool) for c in _children(e))


def _observes(e: ir.Expr) -> bool:
    """Whether `e` reads an observable (what is worth hoisting)."""
    return isinstance(e, ir.Observable) or any(_observes(c) for c in _children(e))


def hoistable(key: ir.Expr, pool: int) -> list[ir.Expr]:
    """The largest subexpressions of `key` that are `_fixed` and read an observable."""
    found: list[ir.Expr] = []
    stack = [key]
    while stack:
        e = stack.pop()
        if _observes(e) and _fixed(e, pool):
            found.append(e)
        else:
            stack.extend(_children(e))
    return found


def _steady(e: ir.Expr, hoisted: set[int]) -> bool:
    """Whether `e` reads nothing but constants, owners' attributes, the entry's context,
    the clock and the hoisted values (`Cache.steady`)."""
    if id(e) in hoisted:
        return True
    if isinstance(e, ir.Draw | ir.Observable | ir.Aggregate):
        return False
    if isinstance(e, ir.Ctx):
        return e.name in ENTRY_CONTEXT or e.name == "now"
    return all(_steady(c, hoisted) for c in _children(e))


def plan(keys: tuple[ir.Expr, ...], pool: int, spill: int | None) -> tuple[list[ir.Expr], bool]:
    """The parts of pool member `pool`'s eviction `keys` to work out once per eviction
    (none when the pool spills, to member `spill`), and whether the keys are steady
    (`Cache.steady`) with them: never when the pool spills into itself."""
    parts = [] if spill is not None else [e for k in keys for e in hoistable(k, pool)]
    given = {id(e) for e in parts}
    return parts, spill != pool and all(_steady(k, given) for k in keys)


# How a key moves as the entry it weighs loses a block (`_trend`): not at all, up with its
# size (so down as it shrinks), down with its size.
FLAT, UP, DOWN = 0, 1, -1
_MONOTONE_CALLS = frozenset({"min", "max", "floor", "ceil"})  # non-decreasing in each argument


def rising(keys: tuple[ir.Expr, ...], parts: list[ir.Expr]) -> tuple[int, ...] | None:
    """Whether steady `keys` never rise as the entry they weigh shrinks (each key is a
    non-decreasing function of `size`): then the victim of an eviction, the least entry,
    stays the least as it loses blocks, and the cache takes them all from it without
    weighing it again (`Cache.rising`). Returned as the indices of the hoisted `parts` that
    must be at least 0 for it (a factor of `size` whose sign only the run knows), None
    when it cannot be shown. Float addition and multiplication round monotonically, and a
    shrinking size only shrinks what it is multiplied into, so no key becomes NaN or
    infinite that was not."""
    index = {id(e): i for i, e in enumerate(parts)}
    needed: set[int] = set()
    for key in keys:
        trend = _trend(key, index, needed)
        if trend is None or trend == DOWN:
            return None
    return tuple(sorted(needed))


def _trend(e: ir.Expr, index: dict[int, int], needed: set[int]) -> int | None:
    """How `e` moves with `size` (FLAT, UP, DOWN), None when not known; a hoisted part `e`
    is multiplied by must be at least 0 (its index added to `needed`)."""
    if id(e) in index or not _reads_size(e):
        return FLAT
    if isinstance(e, ir.Ctx):  # `size` (the only context that reads it)
        return UP
    if isinstance(e, ir.Unary) and e.op == "-":
        inner = _trend(e.operand, index, needed)
        return None if inner is None else -inner
    if isinstance(e, ir.Call) and e.func in _MONOTONE_CALLS:
        trends = {_trend(a, index, needed) for a in e.args} - {FLAT}
        return trends.pop() if len(trends) == 1 and None not in trends else None
    if not isinstance(e, ir.Binary):
        return None
    if e.op in ("+", "-"):
        left = _trend(e.left, index, needed)
        right = _trend(e.right, index, needed)
        if left is None or right is None:
            return None
        if e.op == "-":
            right = -right
        trends = {left, right} - {FLAT}
        return FLAT if not trends else trends.pop() if len(trends) == 1 else None
    if e.op in ("*", "/"):
        factor, moving = (e.left, e.right) if not _reads_size(e.left) else (e.right, e.left)
        if _reads_size(factor) or (e.op == "/" and factor is e.left):
            return None  # size times size, or over something that reads it
        trend = _trend(moving, index, needed)
        if trend is None:
            return None
        sign = _sign(factor, index, needed, strict=e.op == "/")
        return None if sign is None else trend * sign
    return None


def _sign(e: ir.Expr, index: dict[int, int], needed: set[int], strict: bool) -> int | None:
    """1 when the factor `e` is at least 0 (above 0 when `strict`: a divisor), -1 when at
    most 0 (below), as a number literal, or 1 for a hoisted part the run checks (its index
    added to `needed`); None when not known."""
    value = arith.fold(e)
    if value is not None:
        if value > 0.0 or (value == 0.0 and not strict):
            return 1
        return -1 if value < 0.0 else None
    if id(e) in index and not strict:
        needed.add(index[id(e)])
        return 1
    return None


def _reads_size(e: ir.Expr) -> bool:
    if isinstance(e, ir.Ctx):
        return e.name == "size"
    return any(_reads_size(c) for c in _children(e))


def compile_keys(
    compiler: ExprCompiler, pool: ir.Pool, index: int, stream: random.Random | None
) -> tuple[list[Fn], tuple[Fn, ...], list[float], bool, tuple[int, ...] | None]:
    """The eviction keys of pool member `index` (`pool`, which evicts `by`) compiled
    (`plan`): the key functions, the hoisted functions, the list they fill and the keys
    read, whether the keys are steady, and when they are, whether they never rise as an
    entry shrinks (`rising`)."""
    assert isinstance(pool.evict, ir.By)
    keys = pool.evict.keys
    parts, steady = plan(keys, index, None if pool.spill is None else pool.spill.to)
    held = [0.0] * len(parts)
    given: dict[int, str] = {}
    if parts:
        name = compiler.bind(held, "_H")
        given = {id(e): f"{name}[{i}]" for i, e in enumerate(parts)}
    hoisted = tuple(compiler.compile(e, stream) for e in parts)
    fns = [compiler.compile(k, stream, given) for k in keys]
    return fns, hoisted, held, steady, rising(keys, parts) if steady else None
