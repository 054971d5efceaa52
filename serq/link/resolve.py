"""Declarations: what the kernel declares, and where its names clash.

`declare(kernel)` builds the `Scope`: the `let` constants folded in order, the pool and
stage families with their member ids, the session attributes (the built-ins, then every
name a `set` or `choose` assigns, in the order the blocks are lowered), the statistics
(`observe`, `gauge`). It reports names that clash across the one namespace of values and
resources (an attribute, a `let`, a context variable or `inf`, a pool, a stage; a pool or
stage may take a built-in attribute's name, `stage think`) and within the statistics (a
gauge and another gauge or an observe). Function and distribution names live apart:
`set min = 1;` is an attribute.

Resolving the references to these names is `serq.link.expressions`' `Resolver`, which
`declare` uses to fold the constants.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from serq import ir
from serq.diagnostics import Diagnostic, Label, Span, codes
from serq.link.expressions import Resolver
from serq.syntax import ast
from serq.vocabulary import CONTEXT_VARS

# What each kind of claim on a name is called in messages (each takes "a").
_NOUN = {
    "let": "`let` constant",
    "pool": "pool",
    "stage": "stage",
    "attribute": "session attribute",
    "builtin": "built-in session attribute",
    "context": "context variable",
    "inf": "name the language supplies",
}


@dataclass(frozen=True, slots=True)
class Family:
    """A declared pool or stage: `count` members from id `base`; `array` if declared `[N]`."""

    kind: str
    name: str
    base: int
    count: int
    array: bool
    block: float | None  # a pool's `block`, folded (None: it has none, or it failed)
    span: Span
    item: ast.Pool | ast.Stage


@dataclass(frozen=True, slots=True)
class Declaration:
    """One claim on a name: its `kind` (a key of `_NOUN`) and where it is made (None for the
    names the language supplies)."""

    kind: str
    span: Span | None


@dataclass
class Scope:
    """What a kernel program declares, and the diagnostics of its declarations."""

    lets: dict[str, float | None] = field(default_factory=dict)  # None: its value failed
    let_spans: dict[str, Span] = field(default_factory=dict)
    let_values: dict[str, ast.Expr] = field(default_factory=dict)  # the first `let` of a name
    pools: dict[str, Family] = field(default_factory=dict)
    stages: dict[str, Family] = field(default_factory=dict)
    attrs: dict[str, int] = field(default_factory=dict)  # name -> slot
    attr_spans: dict[str, Span] = field(default_factory=dict)  # first assignment
    observes: dict[str, int] = field(default_factory=dict)
    observe_spans: dict[str, Span] = field(default_factory=dict)
    gauges: dict[str, Span] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def family(self, kind: str) -> dict[str, Family]:
        """The pools or the stages (`kind` "pool" or "stage"), by name."""
        return self.pools if kind == "pool" else self.stages

    def error(self, code: codes.Code, span: Span, message: str, **kw) -> None:
        """Report an error of `code` at `span`; `kw` sets labels, notes or help."""
        self.diagnostics.append(Diagnostic.error(code, span, message, **kw))


# ----------------------------------------------------------------- declarations


def declare(kernel: ast.Module) -> Scope:
    """The scope of `kernel`: its constants, families, attributes and statistics."""
    scope = Scope()
    for slot, name in enumerate(ir.BUILTIN_ATTRS):
        scope.attrs[name] = slot
    for stmt in session_statements(kernel):
        _assign(scope, stmt)
    claims: dict[str, list[Declaration]] = {}
    for name in scope.attrs:
        if name in ir.SLOT:
            claims.setdefault(name, []).append(Declaration("builtin", None))
        else:
            claims.setdefault(name, []).append(Declaration("attribute", scope.attr_spans[name]))
    for name in CONTEXT_VARS:
        claims.setdefault(name, []).append(Declaration("context", None))
    claims.setdefault("inf", []).append(Declaration("inf", None))

    resolver = Resolver(scope)
    lets = [item for item in kernel.items if isinstance(item, ast.Let)]
    for item in lets:
        claims.setdefault(item.name.name, []).append(Declaration("let", item.name.span))
        scope.let_spans.setdefault(item.name.name, item.name.span)
        scope.let_values.setdefault(item.name.name, item.value)
    for item in lets:  # constants first: a pool's options may read any of them
        name = item.name.name
        value = resolver.constant(item.value, f"`let {name}`", visible=scope.lets)
        if name not in scope.lets and scope.let_spans[name] is item.name.span:
            scope.lets[name] = value
    for item in kernel.items:
        if isinstance(item, (ast.Pool, ast.Stage)):
            kind = "pool" if isinstance(item, ast.Pool) else "stage"
            name = item.name.name
            claims.setdefault(name, []).append(Declaration(kind, item.name.span))
            count = resolver.family_size(item)
            block = resolver.block(item) if isinstance(item, ast.Pool) else None
            table = scope.family(kind)
            if name not in table:
                base = sum(f.count for f in table.values())
                array = item.size is not None
                table[name] = Family(kind, name, base, count, array, block, item.name.span, item)
        elif isinstance(item, ast.Gauge):
            _gauge(scope, item)
    for name, declared in claims.items():
        _clashes(scope, name, declared)
    return scope


def session_statements(kernel: ast.Module) -> Iterator[ast.Stmt]:
    """Every statement of the workload's `init` and `turn` blocks and of the session, in the
    order they are lowered (a block's statements, each followed by the blocks inside it)."""
    blocks: list[ast.Block] = []
    for kind in (ast.Init, ast.TurnBlock):
        for item in kernel.items:
            if isinstance(item, ast.Workload):
                blocks.extend(c.body for c in item.clauses if isinstance(c, kind))
    blocks.extend(i.body for i in kernel.items if isinstance(i, ast.Session))
    for block in blocks:
        yield from _walk_block(block)


def _walk_block(block: ast.Block) -> Iterator[ast.Stmt]:
    for stmt in block.body:
        yield stmt
        for inner in _inner_blocks(stmt):
            yield from _walk_block(inner)


def _inner_blocks(stmt: ast.Stmt) -> tuple[ast.Block, ...]:
    if isinstance(stmt, ast.Hold):
        return (stmt.body,)
    if isinstance(stmt, ast.Branch):
        return (stmt.then,) if stmt.otherwise is None else (stmt.then, stmt.otherwise)
    if isinstance(stmt, ast.Loop):
        return (stmt.body,)
    return ()


def _assign(scope: Scope, stmt: ast.Stmt) -> None:
    if isinstance(stmt, (ast.Set, ast.Choose)):
        name = stmt.target.name
        if name not in scope.attrs:
            scope.attrs[name] = len(scope.attrs)
            scope.attr_spans[name] = stmt.target.span
    elif isinstance(stmt, ast.Observe):
        name = stmt.target.name
        if name not in scope.observes:
            scope.observes[name] = len(scope.observes)
            scope.observe_spans[name] = stmt.target.span


def _gauge(scope: Scope, item: ast.Gauge) -> None:
    name, span = item.name.name, item.name.span
    if name in scope.gauges:
        scope.error(
            codes.NAME_CLASH,
            span,
            f"gauge `{name}` is declared twice",
            labels=(Label(scope.gauges[name], "first declared here"),),
            help="give each gauge a name of its own",
        )
    elif name in scope.observes:
        scope.error(
            codes.NAME_CLASH,
            span,
            f"`{name}` is both a gauge and an observed statistic",
            labels=(Label(scope.observe_spans[name], "observed here"),),
            help="one name would be two statistics; rename one of them",
        )
    else:
        scope.gauges[name] = span


def _clashes(scope: Scope, name: str, declared: list[Declaration]) -> None:
    """Report every claim on `name` after the first: the language's names come first, then
    the declarations in source order, then the attribute (assigned anywhere)."""
    if len(declared) < 2:
        return
    rank = {"context": 0, "inf": 0, "builtin": 0, "attribute": 2}
    ordered = sorted(
        declared,
        key=lambda d: (rank.get(d.kind, 1), d.span.start if d.span is not None else -1),
    )
    first = ordered[0]
    if first.kind == "builtin":  # `stage think`: a built-in is no one's declaration, a
        # stage no value; two stages (or a pool and a stage) of its name still clash
        places = [d for d in ordered if d.kind in ("pool", "stage")]
        _clashes(scope, name, places)
        ordered = [d for d in ordered if d.kind not in ("pool", "stage")]
    for other in ordered[1:]:
        assert other.span is not None  # only the first claim can be the language's
        this, that = _NOUN[first.kind], _NOUN[other.kind]
        labels: tuple[Label, ...] = ()
        if first.span is not None:
            labels = (Label(first.span, f"the {this} is declared here"),)
        if first.kind in ("context", "inf", "builtin"):
            message = f"`{name}` is a {this}; a {that} may not take its name"
            help = f"give the {that} a name of its own"
        elif first.kind == other.kind:
            message = f"{this} `{name}` is declared twice"
            help = "rename or remove one of the declarations"
        else:
            message = f"`{name}` is both a {this} and a {that}"
            help = "one name reads one thing: rename one of them"
        if other.kind == "attribute":
            labels = (*labels, Label(other.span, "assigned here, so a session attribute"))
        scope.error(codes.NAME_CLASH, other.span, message, labels=labels, help=help)
