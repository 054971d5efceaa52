"""Where each expression of the kernel is read: the places of the moment table.

Every expression of a kernel program sits at one place, and the place decides
what it may read: a context variable exists at one place only (spec §2,
Expressions), and a hidden attribute is refused at the places the scheduler
reads (§3, hidden). `sites(kernel)` lists every expression with its place,
its position (`slot`, e.g. `units`, `serve by`) and the item it belongs to, so
each rule is a filter over one list.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from serq.expand.walk import statements as _outside_expressions
from serq.expand.walk import walk
from serq.syntax import ast
from serq.vocabulary import BUILTIN_ATTRS, TRACE_ATTRS


class Place(enum.Enum):
    """A place of the moment table; the value says it in a message."""

    SESSION = "a session statement, a run or a hold's cache"
    HEADER = "a hold's header, read at admission"
    EVICT = "an eviction key or spill clause"
    QUEUE = "a pool's queue keys, read before selecting a waiting session"
    PS = "a ps stage's capacity"
    BUDGET = "a step stage's budget or chunk, planned before the iteration"
    COST = "a step stage's cost, after the iteration"
    SERVE = "a step stage's serve keys"
    GAUGE = "a gauge, read on the deployment's state with no session"
    ARRIVAL = "an arrival gap, drawn with no session"
    CONSTANT = "a constant"
    PREEMPT = "a pool's preempt keys, read for each candidate victim"
    GIVEN = "a claim's `given`, read on one session's attributes"
    ITERATION = "a claim over iterations, read when an iteration starts"
    AT_END = "a claim `at end`, read when the run ends"


@dataclass(frozen=True, slots=True)
class Site:
    """An expression `expr` read at `place`, in the `slot` of the item `owner`; `holder` is
    the node whose clause the slot is (a hold's pool, a hold, an option, a statement),
    where a fix may take the expression out."""

    place: Place
    slot: str
    expr: ast.Expr
    owner: str
    holder: ast.Node | None = None


# Pool and step options whose expressions are constants; `admit via` and `memory` name things.
_CONSTANT_OPTIONS = frozenset({"cap", "block"})


def sites(kernel: ast.Module) -> Iterator[Site]:
    """Every expression of `kernel` with its place, in source order within each item."""
    for item in kernel.items:
        if isinstance(item, ast.Let):
            yield Site(Place.CONSTANT, "let", item.value, f"`let {item.name.name}`")
        elif isinstance(item, ast.Pool):
            yield from _pool(item)
        elif isinstance(item, ast.Stage):
            yield from _stage(item)
        elif isinstance(item, ast.Workload):
            yield from _workload(item)
        elif isinstance(item, ast.Session):
            yield from statement_sites(item.body, "session")
        elif isinstance(item, ast.RunSettings):
            for opt in item.settings:
                if isinstance(opt, ast.Option) and opt.value is not None:
                    yield Site(Place.CONSTANT, opt.key, opt.value, "the run block")
        elif isinstance(item, ast.Gauge):
            yield Site(Place.GAUGE, "gauge", item.value, f"gauge `{item.name.name}`")
        elif isinstance(item, ast.Claim):
            yield from claim_sites(item)


def claim_sites(claim: ast.Claim) -> Iterator[Site]:
    """The expressions of a claim: its `given`, and its predicate where its kind reads it."""
    owner = f"claim `{claim.name.name}`"
    if claim.given is not None:
        yield Site(Place.GIVEN, "given", claim.given, owner)
    place = Place.AT_END if claim.kind == "at_end" else Place.ITERATION
    yield Site(place, claim.kind, claim.pred, owner)


def _pool(pool: ast.Pool) -> Iterator[Site]:
    owner = f"pool `{pool.name.name}`"
    if pool.size is not None:
        yield Site(Place.CONSTANT, "size", pool.size, owner)
    for opt in pool.options:
        if isinstance(opt, ast.Spill):
            yield Site(Place.EVICT, "spill", opt.amount, owner)
            yield Site(Place.EVICT, "spill", opt.when, owner)
        elif isinstance(opt, ast.Option):
            if opt.key in _CONSTANT_OPTIONS and opt.value is not None:
                yield Site(Place.CONSTANT, opt.key, opt.value, owner)
            elif opt.key == "evict by":
                for k in opt.keys:
                    yield Site(Place.EVICT, opt.key, k, owner, opt)
            elif opt.key == "queue by":
                for k in opt.keys:
                    yield Site(Place.QUEUE, opt.key, k, owner, opt)
            elif opt.key == "preempt by":
                for k in opt.keys:
                    yield Site(Place.PREEMPT, opt.key, k, owner, opt)


def _stage(stage: ast.Stage) -> Iterator[Site]:
    owner = f"stage `{stage.name.name}`"
    if stage.size is not None:
        yield Site(Place.CONSTANT, "size", stage.size, owner)
    kind = stage.kind
    if isinstance(kind, ast.Fifo) and kind.servers is not None:
        yield Site(Place.CONSTANT, "fifo", kind.servers, owner)
    elif isinstance(kind, ast.Ps):
        yield Site(Place.PS, "ps", kind.capacity, owner)
    elif isinstance(kind, ast.Step):
        for opt in kind.options:
            if not isinstance(opt, ast.Option):
                continue
            if opt.key in ("budget", "chunk") and opt.value is not None:
                yield Site(Place.BUDGET, opt.key, opt.value, owner, opt)
            elif opt.key == "cost" and opt.value is not None:
                yield Site(Place.COST, opt.key, opt.value, owner, opt)
            elif opt.key == "serve by":
                for k in opt.keys:
                    yield Site(Place.SERVE, opt.key, k, owner, opt)


def _workload(workload: ast.Workload) -> Iterator[Site]:
    for clause in workload.clauses:
        if isinstance(clause, ast.Arrive) and clause.arg is not None:
            if clause.process == "renewal":
                yield Site(Place.ARRIVAL, "renewal", clause.arg, "the workload")
            else:
                yield Site(Place.CONSTANT, clause.process, clause.arg, "the workload")
        elif isinstance(clause, ast.Init):
            yield from statement_sites(clause.body, "init")
        elif isinstance(clause, ast.TurnBlock):
            yield from statement_sites(clause.body, "turn")


def statement_sites(block: ast.Block, owner: str) -> Iterator[Site]:
    """Every expression of the statements of `block`, at any depth."""
    for s in block.body:
        yield from _statement(s, owner)


def _refs(refs: tuple[ast.Ref | None, ...], owner: str) -> Iterator[Site]:
    """The index expressions of pool and stage references: read where the statement is."""
    for ref in refs:
        if ref is None:
            continue
        for part in ref.parts:
            if part.index is not None:
                yield Site(Place.SESSION, "index", part.index, owner)


def _statement(s: ast.Stmt, owner: str) -> Iterator[Site]:
    S = Place.SESSION
    if isinstance(s, (ast.Set, ast.Observe)):
        yield Site(S, type(s).__name__.lower(), s.value, owner, s)
    elif isinstance(s, ast.Hold):
        for p in s.pools:
            yield from _refs((p.pool,), owner)
            yield Site(Place.HEADER, "units", p.units, owner, p)
            if p.reserve is not None:
                yield Site(Place.HEADER, "reserve", p.reserve, owner, p)
        if s.reuse is not None:
            yield Site(Place.HEADER, "reuse", s.reuse, owner, s)
        yield from statement_sites(s.body, owner)
        if s.cache is not None:
            yield Site(S, "cache", s.cache, owner)
        if s.lease is not None:
            yield from _refs((s.lease.pool,), owner)
            yield Site(S, "lease", s.lease.duration, owner)
    elif isinstance(s, (ast.Grow, ast.Load)):
        yield from _refs((s.pool,), owner)
        yield Site(S, type(s).__name__.lower(), s.amount, owner)
    elif isinstance(s, (ast.Drop, ast.Release)):
        yield from _refs((s.pool,), owner)
    elif isinstance(s, ast.Run):
        yield from _refs((*s.stages, s.growing), owner)
        yield Site(S, "run", s.work, owner)
    elif isinstance(s, ast.Branch):
        yield Site(S, "branch", s.test, owner)
        yield from statement_sites(s.then, owner)
        if s.otherwise is not None:
            yield from statement_sites(s.otherwise, owner)
    elif isinstance(s, ast.Loop):
        yield from statement_sites(s.body, owner)
    elif isinstance(s, ast.Choose):
        yield Site(S, "choose", s.count, owner, s)
        for k in s.keys:
            yield Site(S, "choose by", k, owner, s)


def statements(block: ast.Block) -> Iterator[ast.Stmt]:
    """Every statement of `block` at any depth, outer ones first."""
    for s in block.body:
        yield s
        for inner in blocks(s):
            yield from statements(inner)


def blocks(s: ast.Stmt) -> tuple[ast.Block, ...]:
    """The blocks directly inside the statement `s`."""
    if isinstance(s, ast.Hold):
        return (s.body,)
    if isinstance(s, ast.Branch):
        return (s.then,) if s.otherwise is None else (s.then, s.otherwise)
    if isinstance(s, ast.Loop):
        return (s.body,)
    return ()


def session_of(kernel: ast.Module) -> ast.Session | None:
    """The kernel's one session, or None."""
    for item in kernel.items:
        if isinstance(item, ast.Session):
            return item
    return None


def declared(kernel: ast.Module) -> tuple[dict[str, ast.Pool], dict[str, ast.Stage]]:
    """The pools and stages of `kernel` by name (the first of a name)."""
    pools: dict[str, ast.Pool] = {}
    stages: dict[str, ast.Stage] = {}
    for item in kernel.items:
        if isinstance(item, ast.Pool):
            pools.setdefault(item.name.name, item)
        elif isinstance(item, ast.Stage):
            stages.setdefault(item.name.name, item)
    return pools, stages


def ref_name(ref: ast.Ref) -> str:
    """The kernel name of a pool or stage reference (`P.kv` for `P.kv[i]`)."""
    return ref.dotted


def names(expr: ast.Expr) -> Iterator[ast.Name]:
    """Every bare name `expr` reads, in source order."""
    for n in walk(expr):
        if isinstance(n, ast.Name):
            yield n


def attributes(kernel: ast.Module) -> set[str]:
    """The session attributes of `kernel`: what a `set` or `choose` assigns anywhere, and
    the built-in ones (the trace's included)."""
    out = set(BUILTIN_ATTRS) | set(TRACE_ATTRS)
    for item in kernel.items:
        for n in _outside_expressions(item):
            if isinstance(n, (ast.Set, ast.Choose)):
                out.add(n.target.name)
    return out


def broken(node: ast.Module | ast.Node) -> bool:
    """Whether `node` holds text the parser could not read: a rule that judges what is
    absent (no `share`, no `cost`, nothing sets a name) says nothing about such a program."""
    errors = (ast.ErrorItem, ast.ErrorStmt, ast.ErrorOption)
    return any(isinstance(n, errors) for n in walk(node))
