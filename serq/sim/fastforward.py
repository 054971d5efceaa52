"""Which step engines may fast-forward: decided once from the IR, before the run.

A step engine fast-forwards a *span* (design/step-fast-forward.md): when an iteration
only gives every resident one decode token, admits nobody and preempts nobody, the next
iterations repeat it until a resident finishes, another event is due, a block crossing
does not fit, or an admission could become possible. `StepStage.extend` checks the
dynamic conditions at run time; this module proves the static ones, per engine:

- `skips`: budget, chunk and cost read only the iteration's totals (residents, decoders,
  kv_decode, kv_prefill, tokens, prefilled, attention), constants and observables that no
  iteration changes; the serve keys read only what a resident keeps through a span, or
  are `remaining` or `-remaining` (whose order a span keeps); no gauge reads something an
  iteration changes without an event (`now`, `work`, ...).
- `cost_varies`: cost or budget reads kv_decode, which grows every iteration: each
  iteration's cost is evaluated (in order, so the clock is the per-iteration clock).
- `with_waiters`: a span may run while sessions wait at a queue: no queue key reads time
  or draws, and no hold's units read anything a span changes (used, free, a draw,
  `budget_left` of an engine whose budget varies); block crossings then may not evict,
  since an eviction can change a waiting head's cache hit.
- `evicts`: a crossing may evict cached entries: the memory pool does not spill (a
  spill is a job, an event), and no eviction key reads the engine's progress (`work`,
  `budget_left`, the iteration's totals); keys that read time are evaluated at each
  crossing's own time.

No span starts at an instant a plan admitted or preempted (`World.replanned`): the
sessions the plan ran came after the pools' retry and the other engines' starts, which
the next event's settle makes.

A claim over an engine's iterations (`every iteration of E (P)`, `some iteration of E
(P)`) is checked at every iteration a span skips too. Where P reads only what is the
same at every iteration of a span (`claim_changes`: the iteration's totals but
`kv_decode`, `demand` and `arrived`, constants, observables no iteration moves, the
samples' aggregates), its value at the span's first iteration, planned as usual, is its
value at each of the others (`Claims.span` counts them); a claim that reads more keeps
its engine stepping one iteration at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from serq import ir

# The iteration's totals: what cost and budget read, the same for every iteration of a
# span except kv_decode, which grows by the growing decoders each iteration.
TOTALS = frozenset({"residents", "decoders", "kv_prefill", "tokens", "prefilled", "attention"})
# What a claim over iterations may read and still be the same at every iteration of a
# span: the totals (`kv_decode` aside: it grows at the block crossings), the residents'
# demand (one token each) and the sessions arrived (no arrival inside a span).
CLAIM_STEADY = TOTALS | {"demand", "arrived"}
# What a serve key may read besides constants and session attributes.
RESIDENT = frozenset({"decoding", "admission"})
# What an eviction key reads of the entry it weighs (set at each crossing's own time).
ENTRY = frozenset({"now", "size", "age", "last", "waiting"})
# Stage observables an iteration changes, or that the design note keeps out of spans.
MOVING_STAGE = frozenset({"work", "budget_left", "price", "est_lambda", "est_rho", "est_wait"})
# Pool observables a block crossing or an eviction changes.
MOVING_POOL = frozenset({"used", "free", "cachedin"})


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one step engine may do when it fast-forwards (module docstring)."""

    skips: bool
    with_waiters: bool
    evicts: bool
    cost_varies: bool
    reasons: tuple[str, ...] = ()
    budget_varies: bool = False  # the budget itself reads kv_decode (`cost_varies` too)


def analyse(program: ir.Program) -> list[Verdict | None]:
    """A verdict per stage member of `program` (None for a stage that is not a step)."""
    global_reasons = [f"gauge {g.name} {why}" for g in program.gauges for why in _gauge(g.value)]
    waiting = _waiting_reasons(program)
    eviction = [
        f"pool {pool.name}'s eviction key {why}: a span may not evict"
        for pool in program.pools
        if isinstance(pool.evict, ir.By)
        for key in pool.evict.keys
        for why in _eviction_key(key)
    ]
    verdicts: list[Verdict | None] = []
    for stage in program.stages:
        kind = stage.kind
        if not isinstance(kind, ir.Step):
            verdicts.append(None)
            continue
        reasons = list(global_reasons)
        varies = False
        parts = [("budget", kind.budget), ("cost", kind.cost)]
        if kind.chunk is not None:
            parts.append(("chunk", kind.chunk))
        budget_varies = False
        for what, expr in parts:
            found = list(_engine_expr(expr))
            reasons += [f"{what} {why}" for why in found if why != "kv_decode"]
            if "kv_decode" in found and what != "chunk":
                varies = True
                budget_varies = budget_varies or what == "budget"
        if isinstance(kind.serve, ir.By):
            for key in kind.serve.keys:
                reasons += [f"a serve key {why}" for why in _serve_key(key)]
        quiet = list(waiting)
        if budget_varies:
            quiet.append("the budget grows with kv_decode (an admission's budget_left moves)")
        memory = None if kind.memory is None else program.pools[kind.memory]
        evicts = memory is None or memory.spill is None
        notes = tuple(reasons)
        if not evicts:
            notes += (f"pool {memory.name} spills: a span may not evict",)
        if eviction:
            evicts = False
            notes += tuple(eviction)
        notes += tuple(f"with sessions waiting: {why}" for why in quiet)
        verdicts.append(Verdict(not reasons, not quiet, evicts, varies, notes, budget_varies))
    return verdicts


def contexts(expr: ir.Expr) -> frozenset[str]:
    """The context variables `expr` reads."""
    return frozenset(leaf.name for leaf in _leaves(expr) if isinstance(leaf, ir.Ctx))


def _leaves(expr: ir.Expr) -> Iterator[ir.Expr]:
    """Every leaf of `expr` that reads something: contexts, draws, observables, slots."""
    if isinstance(expr, ir.Num | ir.Attr | ir.Ctx):
        yield expr
    elif isinstance(expr, ir.Unary):
        yield from _leaves(expr.operand)
    elif isinstance(expr, ir.Binary):
        yield from _leaves(expr.left)
        yield from _leaves(expr.right)
    elif isinstance(expr, ir.Cond):
        for part in (expr.test, expr.then, expr.otherwise):
            yield from _leaves(part)
    elif isinstance(expr, ir.Call):
        for arg in expr.args:
            yield from _leaves(arg)
    elif isinstance(expr, ir.Cost):
        yield from _leaves(expr.value)
    elif isinstance(expr, ir.Draw):
        yield expr
        for arg in expr.args:
            yield from _leaves(arg)
    elif isinstance(expr, ir.Observable):
        yield expr
        if expr.target.index is not None:
            yield from _leaves(expr.target.index)
        for arg in expr.args:
            yield from _leaves(arg)


def _moving(leaf: ir.Expr) -> str | None:
    """Why `leaf` can change inside a span with no event, or None: draws, observables an
    iteration moves. Context variables are judged by the caller."""
    if isinstance(leaf, ir.Draw):
        return f"draws (~{leaf.dist})"
    if isinstance(leaf, ir.Observable):
        if leaf.target.kind == "stage" and leaf.func in MOVING_STAGE:
            return f"reads {leaf.func}(...)"
        if leaf.target.kind == "pool" and leaf.func in MOVING_POOL:
            return f"reads {leaf.func}(...)"
    return None


def _changes(
    expr: ir.Expr, allowed: frozenset[str], varying: frozenset[str] = frozenset()
) -> Iterator[str]:
    """Why `expr` could read another value inside a span: a context variable not in
    `allowed` (one in `varying` is yielded by its bare name, for the caller), a draw, an
    observable an iteration moves."""
    for leaf in _leaves(expr):
        if isinstance(leaf, ir.Ctx):
            if leaf.name in varying:
                yield leaf.name
            elif leaf.name not in allowed:
                yield f"reads `{leaf.name}`"
        else:
            why = _moving(leaf)
            if why is not None:
                yield why


def _engine_expr(expr: ir.Expr) -> Iterator[str]:
    """Why budget, chunk or cost `expr` cannot be repeated; "kv_decode" when it reads it."""
    return _changes(expr, TOTALS, frozenset({"kv_decode"}))


def claim_changes(pred: ir.Expr) -> list[str]:
    """Why a claim's predicate `pred` could read another value at an iteration a span
    skips than at the span's first (empty: it cannot)."""
    return list(_changes(pred, CLAIM_STEADY))


def _serve_key(expr: ir.Expr) -> Iterator[str]:
    """Why a serve key could reorder the residents inside a span."""
    if _by_remaining(expr):
        return iter(())
    return _changes(expr, RESIDENT | TOTALS)


def _by_remaining(expr: ir.Expr) -> bool:
    """Whether serve key `expr` is `remaining` or `-remaining` (shortest or longest
    remaining run first). Every resident of a span takes one token an iteration, and its
    remaining falls by exactly 1.0 (`StepStage._span` keeps it below 2**53), so two
    residents' keys keep their order, ties included, through the span."""
    if isinstance(expr, ir.Unary) and expr.op == "-":
        expr = expr.operand
    return isinstance(expr, ir.Ctx) and expr.name == "remaining"


def _gauge(expr: ir.Expr) -> Iterator[str]:
    """Why a gauge's value could change inside a span other than at a block crossing (a
    crossing reads the gauges again)."""
    for leaf in _leaves(expr):
        if isinstance(leaf, ir.Ctx):
            yield f"reads `{leaf.name}`"
        elif isinstance(leaf, ir.Draw):
            yield f"draws (~{leaf.dist})"
        elif isinstance(leaf, ir.Observable) and leaf.func in MOVING_STAGE:
            yield f"reads {leaf.func}(...)"


def _eviction_key(expr: ir.Expr) -> Iterator[str]:
    """Why an eviction key, evaluated when a span's crossings are applied (at their own
    times, before the residents' tokens are), could read another value than it would
    have one iteration at a time: the engine's progress or its iteration context."""
    for leaf in _leaves(expr):
        if isinstance(leaf, ir.Ctx) and leaf.name not in ENTRY:
            yield f"reads `{leaf.name}`"
        elif isinstance(leaf, ir.Observable) and leaf.func in {"work", "budget_left"}:
            yield f"reads {leaf.func}(...)"


def _waiting_reasons(program: ir.Program) -> list[str]:
    """Why a waiting session's admission could change inside a span: a queue key, or a
    hold's units, reading what a span moves (`_waiting`)."""
    reasons = [
        f"pool {pool.name}'s queue key reads {why}"
        for pool in program.pools
        for key in pool.queue.keys
        for why in _waiting(key, budget_left=False)
    ]
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Hold):
                for part in stmt.pools:
                    for expr in (part.units, part.reserve):
                        if expr is not None:
                            reasons += [f"a hold's units read {why}" for why in _waiting(expr)]
    return reasons


def _waiting(expr: ir.Expr, budget_left: bool = True) -> Iterator[str]:
    """What `expr`, read again at each attempt to admit a waiting session, reads that can
    move inside a span: time and context, draws, the used or free units of a pool, the
    stage observables an iteration moves (`budget_left` aside where `budget_left` says:
    a hold's units may read it while the budget is constant, which the caller checks)."""
    for leaf in _leaves(expr):
        if isinstance(leaf, ir.Ctx):
            yield f"`{leaf.name}`"
        elif isinstance(leaf, ir.Draw):
            yield f"~{leaf.dist}"
        elif isinstance(leaf, ir.Observable) and (
            leaf.func in ("used", "free")
            or (leaf.func in MOVING_STAGE and not (budget_left and leaf.func == "budget_left"))
        ):
            yield f"{leaf.func}(...)"
