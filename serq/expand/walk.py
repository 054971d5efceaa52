"""Generic traversal of the frozen AST: rebuild a tree with its expressions or statements rewritten.

Every AST node is a frozen dataclass, so a rewrite builds new nodes and shares
the untouched ones. `map_exprs` applies a function to every expression
bottom-up; `map_blocks` lets a function replace each statement by any number
of statements, in every block at any depth. Both walk any node (an item, a
statement, an expression) by its fields, so a new node class needs no code here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import fields, is_dataclass, replace
from typing import Any

from serq.diagnostics import Span
from serq.syntax import ast

EXPR_TYPES = (
    ast.Number,
    ast.Name,
    ast.Ref,
    ast.Unary,
    ast.Binary,
    ast.Conditional,
    ast.Call,
    ast.Draw,
    ast.Aggregate,
)
STMT_TYPES = (
    ast.Turn,
    ast.Request,
    ast.Set,
    ast.Observe,
    ast.Hold,
    ast.Grow,
    ast.Drop,
    ast.Release,
    ast.Load,
    ast.Run,
    ast.Branch,
    ast.BranchWith,
    ast.Loop,
    ast.Choose,
    ast.End,
    ast.Mark,
    ast.EntryCall,
    ast.DefCall,
    ast.Serving,
    ast.Transfer,
    ast.ErrorStmt,
)


def _node_classes() -> frozenset[type]:
    return frozenset(
        cls
        for cls in vars(ast).values()
        if isinstance(cls, type) and is_dataclass(cls) and cls.__module__ == ast.__name__
    )


_NODES = _node_classes()
_EXPR_SET = frozenset(EXPR_TYPES)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {
    cls: tuple(f.name for f in fields(cls) if f.name != "span") for cls in _NODES
}


def is_node(value: Any) -> bool:
    """Whether `value` is an AST node (not a span, a string, a number or None)."""
    return type(value) in _NODES


def child_fields(node: Any) -> tuple[str, ...]:
    """The names of `node`'s fields other than its span, in declaration order."""
    return _CHILD_FIELDS[type(node)]


def map_fields(node: Any, f: Callable[[Any], Any]) -> Any:
    """Return `node` with `f` applied to each child node (tuples of nodes element-wise)."""
    changes = None
    nodes = _NODES
    for name in _CHILD_FIELDS[type(node)]:
        value = getattr(node, name)
        if type(value) is tuple:
            new = tuple(f(v) if type(v) in nodes else v for v in value)
            for a, b in zip(new, value, strict=True):
                if a is not b:
                    if changes is None:
                        changes = {}
                    changes[name] = new
                    break
        elif type(value) in nodes:
            new = f(value)
            if new is not value:
                if changes is None:
                    changes = {}
                changes[name] = new
    return replace(node, **changes) if changes else node


def map_exprs(node: Any, f: Callable[[ast.Expr], ast.Expr]) -> Any:
    """Rewrite every expression under `node` bottom-up with `f` (children first)."""

    def visit(n: Any) -> Any:
        n = map_fields(n, visit)
        return f(n) if isinstance(n, EXPR_TYPES) else n

    return visit(node)


def map_blocks(node: Any, f: Callable[[ast.Stmt], list[ast.Stmt] | None]) -> Any:
    """Rewrite statements: `f(stmt)` returns the statements to put in its place (taken as
    they are), or None to keep it and visit the blocks inside it."""

    def visit(n: Any) -> Any:
        if isinstance(n, ast.Block):
            return replace(n, body=tuple(_stmts(n.body)))
        return map_fields(n, visit)

    def _stmts(stmts: tuple[ast.Stmt, ...]) -> Iterator[ast.Stmt]:
        for s in stmts:
            out = f(s)
            if out is None:
                yield map_fields(s, visit)
            else:
                yield from out

    return visit(node)


def walk_children(node: Any) -> Iterator[Any]:
    """The direct child nodes of `node`, in source order."""
    nodes = _NODES
    for name in _CHILD_FIELDS[type(node)]:
        value = getattr(node, name)
        if type(value) is tuple:
            yield from (v for v in value if type(v) in nodes)
        elif type(value) in nodes:
            yield value


def walk(node: Any) -> Iterator[Any]:
    """Every node under `node`, `node` first, in source order."""
    stack = [node]
    nodes = _NODES
    pop, push = stack.pop, stack.append
    while stack:
        n = pop()
        yield n
        children = []
        for name in _CHILD_FIELDS[type(n)]:
            value = getattr(n, name)
            if type(value) is tuple:
                children.extend(v for v in value if type(v) in nodes)
            elif type(value) in nodes:
                children.append(value)
        for child in reversed(children):
            push(child)


def measure(node: Any, memo: dict[int, tuple[Any, int, int]]) -> tuple[int, int]:
    """The number of nodes and the depth of `node` as a tree, counting a subtree shared
    by several parents once per parent, in time linear in the distinct nodes. `memo`
    caches the measures by node identity (and keeps the nodes alive) across calls."""
    nodes = _NODES
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in memo:
            continue
        children = list(walk_children(n))
        if done:
            size, depth = 1, 0
            for c in children:
                _, s, d = memo[id(c)]
                size += s
                depth = max(depth, d)
            memo[id(n)] = (n, size, depth + 1)
            continue
        stack.append((n, True))
        stack.extend((c, False) for c in children if type(c) in nodes and id(c) not in memo)
    _, size, depth = memo[id(node)]
    return size, depth


def statements(node: Any) -> Iterator[Any]:
    """Every node under `node` that is not inside an expression: items, clauses, blocks,
    statements (a faster `walk` for what only statements hold, such as `set` targets)."""
    stack = [node]
    nodes = _NODES
    exprs = _EXPR_SET
    while stack:
        n = stack.pop()
        yield n
        children = []
        for name in _CHILD_FIELDS[type(n)]:
            value = getattr(n, name)
            if type(value) is tuple:
                children.extend(v for v in value if type(v) in nodes and type(v) not in exprs)
            elif type(value) in nodes and type(value) not in exprs:
                children.append(value)
        stack.extend(reversed(children))


def names_read(node: Any) -> set[str]:
    """The bare names an expression (or any node) reads."""
    return {n.ident.name for n in walk(node) if isinstance(n, ast.Name)}


def has_draw(node: Any) -> bool:
    """Whether an expression draws (`~dist(...)`) anywhere."""
    return any(isinstance(n, ast.Draw) for n in walk(node))


def substitute(node: Any, values: dict[str, ast.Expr]) -> Any:
    """Replace each bare name in `values` by its expression (a parameter by its argument)."""
    if not values:
        return node

    def f(e: ast.Expr) -> ast.Expr:
        if isinstance(e, ast.Name) and e.ident.name in values:
            return values[e.ident.name]
        return e

    return map_exprs(node, f)


def respan(node: Any, span: Span) -> Any:
    """Give `node` and every node under it the origin `span`."""

    def visit(n: Any) -> Any:
        n = map_fields(n, visit)
        return replace(n, span=span) if hasattr(n, "span") else n

    return visit(node)
