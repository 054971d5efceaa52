"""`at admission`, `branch with` and aggregates: the last of the sugar inside statements.

- `hold ... at admission (x = e, ...)`: each binding is substituted into the
  header (units, reserve, reuse), a later binding seeing the earlier ones; a
  binding the body reads is set at the body's top (`set x = e;`), which is
  only sound when `e` reads no live state.
- `branch with (p)` is `branch (~bernoulli(p))`.
- `max|min|sum j in n (e)` is written out term by term, j = 0 .. n-1.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from serq.diagnostics import Label, Span, codes
from serq.expand.context import Context
from serq.expand.defs import MAX_INLINED_DEPTH, MAX_INLINED_NODES
from serq.expand.walk import (
    has_draw,
    map_blocks,
    map_exprs,
    map_fields,
    measure,
    statements,
    substitute,
    walk,
    walk_children,
)
from serq.syntax import ast
from serq.vocabulary import BUILTIN_ATTRS, CONTEXT_VARS, OBSERVABLES, TRACE_ATTRS


def program_names(items: list[ast.Item]) -> dict[str, Span]:
    """Every name the program declares or sets, with where: lets, pools, stages, attributes."""
    names: dict[str, Span] = {}
    for item in items:
        if isinstance(item, (ast.Let, ast.Pool, ast.Stage, ast.Gauge)):
            names.setdefault(item.name.name, item.name.span)
        for n in statements(item):
            if isinstance(n, (ast.Set, ast.Choose)):
                names.setdefault(n.target.name, n.target.span)
            elif isinstance(n, ast.Observe):
                names.setdefault(n.target.name, n.target.span)
    return names


def _outside_reads(items: list[ast.Item]) -> dict[str, ast.Name]:
    """The first read of each name outside every hold that binds it (its clause included)."""
    reads: dict[str, ast.Name] = {}

    def visit(n: Any, bound: frozenset[str]) -> None:
        if isinstance(n, ast.Hold) and n.bindings:
            bound = bound | {b.name.name for b in n.bindings}
        if isinstance(n, ast.Name) and n.name not in bound:
            reads.setdefault(n.name, n)
        for child in walk_children(n):
            visit(child, bound)

    for item in items:
        visit(item, frozenset())
    return reads


def expand_statements(items: list[ast.Item], ctx: Context) -> list[ast.Item]:
    """Rewrite `at admission`, `branch with` and aggregates in every item."""
    names = program_names(items)
    outside = _outside_reads(items)
    out = []
    for item in items:
        item = _aggregates(item, names, ctx)
        out.append(map_blocks(item, lambda s: _stmt(s, names, outside, ctx)))
    return out


def _stmt(
    s: ast.Stmt, names: dict[str, Span], outside: dict[str, ast.Name], ctx: Context
) -> list[ast.Stmt] | None:
    if isinstance(s, ast.BranchWith):
        then = map_blocks(s.then, lambda x: _stmt(x, names, outside, ctx))
        otherwise = (
            map_blocks(s.otherwise, lambda x: _stmt(x, names, outside, ctx))
            if s.otherwise
            else None
        )
        p = s.probability
        draw = ast.Draw(ast.Ident("bernoulli", s.span), (p,), s.span)
        out = ast.Branch(draw, then, otherwise, s.span)
        ctx.origin(s.span, "branch with", (out,))
        return [out]
    if isinstance(s, ast.Hold) and s.bindings:
        hold = map_fields(s, lambda n: map_blocks(n, lambda x: _stmt(x, names, outside, ctx)))
        out = _admission(hold, names, outside, ctx)
        ctx.origin(s.at_admission or s.span, "at admission", (out,))
        return [out]
    return None


def _live(e: ast.Expr) -> ast.Expr | None:
    """The first part of `e` that reads live state: an observable, a context variable, `cached`."""
    for n in walk(e):
        if isinstance(n, ast.Call) and n.func.name in OBSERVABLES:
            return n
        if isinstance(n, ast.Name) and (n.name in CONTEXT_VARS or n.name == "cached"):
            return n
    return None


def _admission(
    hold: ast.Hold, names: dict[str, Span], outside: dict[str, ast.Name], ctx: Context
) -> ast.Hold:
    values: dict[str, ast.Expr] = {}
    later = {b.name.name for b in hold.bindings}
    sets: list[ast.Stmt] = []
    body_reads: dict[str, ast.Name] = {}
    for n in walk(hold.body):
        if isinstance(n, ast.Name):
            body_reads.setdefault(n.name, n)
    for b in hold.bindings:
        name = b.name.name
        later.discard(name)
        for n in walk(b.value):
            if isinstance(n, ast.Draw):
                ctx.error(
                    codes.ADMISSION,
                    n.span,
                    f"the binding `{name}` draws: it is substituted where it is read, "
                    "so each read would draw again",
                    help="draw into an attribute with `set` before the hold, and bind that",
                )
            elif isinstance(n, ast.Name) and n.name in later:
                ctx.error(
                    codes.ADMISSION,
                    n.span,
                    f"the binding `{name}` reads `{n.name}`, bound after it",
                    help="a binding reads only the ones before it in its clause",
                )
        value = substitute(b.value, values)
        values[name] = value
        read = body_reads.get(name)
        if read is None:
            continue
        live = _live(value)
        if live is not None:
            ctx.error(
                codes.ADMISSION,
                read.span,
                f"the body reads `{name}`, whose value reads live state: it is not "
                "the admission's value any more",
                labels=(Label(live.span, "live state, read at admission"),),
                help="the body reads `cached`, the units the admission consumed",
            )
            continue
        if name in outside:
            ctx.error(
                codes.ADMISSION,
                outside[name].span,
                f"`{name}` is read outside the hold that binds it",
                labels=(Label(b.name.span, "bound here, and set for the body"),),
                help="a binding the body reads is the hold's own: read it only inside",
            )
            continue
        clash = _clash(name, names, ctx)
        if clash is not None:
            ctx.error(
                codes.ADMISSION,
                b.name.span,
                f"the binding `{name}` is read by the body, so it is set there, "
                f"and `{name}` is {clash}",
                help="give the binding a name of its own",
            )
            continue
        sets.append(ast.Set(b.name, value, b.span))
    pools = tuple(
        replace(
            p,
            units=substitute(p.units, values),
            reserve=substitute(p.reserve, values) if p.reserve is not None else None,
        )
        for p in hold.pools
    )
    reuse = substitute(hold.reuse, values) if hold.reuse is not None else None
    cache = substitute(hold.cache, values) if hold.cache is not None else None
    lease = substitute(hold.lease, values) if hold.lease is not None else None
    body = replace(hold.body, body=(*sets, *hold.body.body))
    return replace(
        hold,
        pools=pools,
        reuse=reuse,
        cache=cache,
        lease=lease,
        bindings=(),
        at_admission=None,
        body=body,
    )


def _clash(name: str, names: dict[str, Span], ctx: Context) -> str | None:
    if name in BUILTIN_ATTRS or name in TRACE_ATTRS:
        return "a built-in attribute"
    if name in CONTEXT_VARS or name == "inf":
        return "a name the language supplies"
    if name in ctx.lets:
        return "a `let` constant"
    if name in names:
        return "a name the program already has"
    return None


_AGG_FUNCS = {"max": "max", "min": "min"}


def _aggregates(node: Any, names: dict[str, Span], ctx: Context) -> Any:
    def f(e: ast.Expr) -> ast.Expr:
        if not isinstance(e, ast.Aggregate):
            return e
        out = _write_out(e, names, ctx)
        if out is not e:
            ctx.origin(e.span, "aggregate", (out,))
        return out

    return map_exprs(node, f)


def _write_out(e: ast.Aggregate, names: dict[str, Span], ctx: Context) -> ast.Expr:
    var = e.var.name
    clash = _clash(var, names, ctx)
    if clash is not None:
        ctx.error(
            codes.AGGREGATE,
            e.var.span,
            f"the index `{var}` is {clash}",
            help="an aggregate's index takes a name the program does not have",
        )
        return e
    n = ctx.const(e.count)
    if n is None or has_draw(e.count):
        ctx.error(
            codes.AGGREGATE,
            e.count.span,
            "an aggregate's count is a number, a constant's name or a parenthesised "
            "constant expression",
        )
        return e
    if not (math.isfinite(n) and n == int(n) and n >= 1):
        ctx.error(
            codes.AGGREGATE,
            e.count.span,
            f"an aggregate's count is a whole number of at least 1, not {n:g}",
        )
        return e
    size, depth = measure(e.body, {})
    count = int(n)
    chained = count - 1 + depth  # the depth of the terms written out one after another
    balanced = e.func != "sum" and chained > MAX_INLINED_DEPTH
    if balanced:  # max and min are associative: a balanced tree of the same terms
        chained = math.ceil(math.log2(count)) + depth
    if count * size > MAX_INLINED_NODES or chained > MAX_INLINED_DEPTH:
        what = (
            f"has {count * size:,} nodes (at most {MAX_INLINED_NODES:,})"
            if count * size > MAX_INLINED_NODES
            else f"nests {chained:,} levels deep (at most {MAX_INLINED_DEPTH})"
        )
        ctx.error(
            codes.TOO_DEEP,
            e.span,
            f"written out, this `{e.func}` of {count:,} terms {what}",
            help="a sum of n terms nests n levels deep: add up sums of fewer terms"
            if e.func == "sum"
            else "aggregate over fewer terms",
        )
        return e
    terms = [substitute(e.body, {var: ast.Number(float(k), str(k), e.span)}) for k in range(count)]
    if count == 1:  # no join to mark: the term is (`ast.Binary.aggregate`)
        return replace(terms[0], aggregate=True)
    if e.func == "sum":
        return _chain(terms, lambda a, b: ast.Binary("+", a, b, e.span, aggregate=True))
    ident = ast.Ident(_AGG_FUNCS[e.func], e.span)
    join = lambda a, b: ast.Call(ident, (a, b), e.span, aggregate=True)  # noqa: E731
    return _balance(terms, join) if balanced else _chain(terms, join)


def _chain(terms: list[ast.Expr], join: Any) -> ast.Expr:
    """`terms` joined left to right, as the spec writes an aggregate out."""
    acc = terms[0]
    for t in terms[1:]:
        acc = join(acc, t)
    return acc


def _balance(terms: list[ast.Expr], join: Any) -> ast.Expr:
    """`terms` joined pairwise, level by level: the same value for an associative `join`,
    in a tree ceil(log2 n) levels deep."""
    while len(terms) > 1:
        pairs = [join(terms[i], terms[i + 1]) for i in range(0, len(terms) - 1, 2)]
        terms = pairs + terms[len(terms) - len(terms) % 2 :]
    return terms[0]
