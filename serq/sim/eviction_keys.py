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


def compile_keys(
    compiler: ExprCompiler, pool: ir.Pool, index: int, stream: random.Random | None
) -> tuple[list[Fn], tuple[Fn, ...], list[float], bool]:
    """The eviction keys of pool member `index` (`pool`, which evicts `by`) compiled
    (`plan`): the key functions, the hoisted functions, the list they fill and the keys
    read, and whether the keys are steady."""
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
    return fns, hoisted, held, steady
