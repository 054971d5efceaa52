"""`def`: a call of a definition is its body with the arguments in place of the parameters.

An expression definition (`def f(x) = e;`, or `def f(x) { e }` in the `fn main`
dialect) is called in an expression, a statement definition (`def g(x) { ... }`)
as a statement. Names in a body other than the parameters are the program's:
the body is substituted, not closed over. A parameter may also stand for a pool
or stage (`def serve_on(s, w) { run s (w); }`): a reference through it takes the
argument's name.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any

from serq.diagnostics import Label, codes, counted
from serq.diagnostics.suggest import close_names, did_you_mean
from serq.expand.context import Context
from serq.expand.walk import map_fields, measure, walk
from serq.syntax import ast
from serq.syntax.depth import MAX_DEPTH
from serq.syntax.parser import grammar
from serq.vocabulary import CLAIM_AGGREGATES, DISTRIBUTIONS, MATH_FUNCS, OBSERVABLES

_SYNTAX_ERRORS = (ast.ErrorStmt, ast.ErrorOption, ast.ErrorItem)
# the functions a call may name besides a `def` (the linker's `_FUNCTION_NAMES`)
_FUNCTIONS = frozenset(MATH_FUNCS) | OBSERVABLES | {"cost"} | CLAIM_AGGREGATES

Defs = dict[str, "ast.DefExpr | ast.DefBlock"]

# What one call of a definition may inline (docs/limits.md): nodes, and levels of
# nesting. Calls whose bodies use a parameter twice double at each level of nesting
# (`f(f(f(x)))` with `def f(x) = x + x;`), and every phase after expansion walks the
# tree it gets, so a call that would inline more is an error at the call.
MAX_INLINED_NODES = 100_000
MAX_INLINED_DEPTH = 150
# A call inlined at an item's deepest parse level (MAX_DEPTH) with a result of at most
# MAX_INLINED_DEPTH levels stays within both; deeper than that, a chain of calls is
# stopped while it is being inlined, before its result can be measured (and before
# Python's own stack runs out on the way down).
_GUARD_LEVEL = MAX_INLINED_DEPTH + MAX_DEPTH


@lru_cache(maxsize=1)
def words() -> frozenset[str]:
    """The words of the language a definition may not take as its name: the grammar's
    keywords, the functions of numbers, the observables, the laws and a claim's
    aggregates (both references refuse `def min(x) = ...;`, "a word of the language")."""
    keywords = frozenset(grammar().keywords)
    return keywords | MATH_FUNCS | OBSERVABLES | DISTRIBUTIONS | CLAIM_AGGREGATES


def expand_defs(items: list[ast.Item], ctx: Context) -> list[ast.Item]:
    """Drop the definitions and inline every call of one, in every other item."""
    defs: Defs = {}
    for item in items:
        if isinstance(item, (ast.DefExpr, ast.DefBlock)):
            if item.name.name in words():
                ctx.error(
                    codes.DEF,
                    item.name.span,
                    f"`{item.name.name}` is a word of the language: a definition needs a "
                    "name of its own",
                )  # still defined: its calls are not errors of their own
            first = defs.get(item.name.name)
            if first is not None:
                ctx.error(
                    codes.DEF,
                    item.name.span,
                    f"`{item.name.name}` is defined twice",
                    labels=(Label(first.name.span, "first defined here"),),
                )
                continue
            defs[item.name.name] = item
    _check_names(defs, items, ctx)
    for d in defs.values():
        _check_params(d, ctx)
    recursive = _recursive(defs, ctx)
    expander = _Expander(defs, ctx, recursive)
    out = []
    for item in items:
        if not isinstance(item, (ast.DefExpr, ast.DefBlock)):
            expander.too_big = False
            out.append(expander.node(item, ()))
    return out


# The declarations a definition may not share a name with (both references refuse
# `let f = 1; def f() = 2;`, "`f` is defined, and is also a `let` constant"); a session
# attribute, a gauge or an observation may (a call and a read differ by their parentheses).
_DECLARES = (
    (ast.Let, "`let` constant"),
    (ast.Pool, "pool"),
    (ast.Stage, "stage"),
    (ast.Queue, "queue"),
)


def _check_names(defs: Defs, items: list[ast.Item], ctx: Context) -> None:
    """Report a definition whose name a `let`, a pool, a stage or a queue also has, at the
    definition (still defined: its calls are not errors of their own)."""
    for item in items:
        noun = next((n for kind, n in _DECLARES if isinstance(item, kind)), None)
        d = defs.get(item.name.name) if noun is not None else None  # type: ignore[union-attr]
        if d is not None:
            ctx.error(
                codes.NAME_CLASH,
                d.name.span,
                f"`{d.name.name}` is both a definition and a {noun}",
                labels=(Label(item.name.span, f"the {noun} is declared here"),),  # type: ignore[union-attr]
                help="one name reads one thing: rename one of them",
            )


class _TooDeep(Exception):
    """Inlining went past `MAX_INLINED_DEPTH` in the tree being built."""


class _Expander:
    def __init__(self, defs: Defs, ctx: Context, recursive: set[str]) -> None:
        self.defs = defs
        self.ctx = ctx
        self.recursive = recursive
        self._measures: dict[int, tuple[Any, int, int]] = {}
        self.too_big = False  # a call in the current item inlined too much (reported once)
        self.level = 0  # the depth, in the tree being built, of the node being visited
        self.inlining = 0  # the calls being inlined around it

    def node(self, node: Any, stack: tuple[str, ...]) -> Any:
        """`node` with every call of a definition inlined; `stack` is the definitions being
        expanded around it (a call of one of them is a recursion)."""

        def visit(n: Any) -> Any:
            self.level += 1
            try:
                # a call inlined counts as a level too: it takes Python frames of its own
                if self.level + self.inlining > _GUARD_LEVEL and self.inlining:
                    raise _TooDeep  # before Python's own stack runs out
                if isinstance(n, ast.Block):
                    body: list[ast.Stmt] = []
                    for s in n.body:
                        if isinstance(s, ast.DefCall):
                            body.extend(self._stmt(s, stack))
                        else:
                            body.append(visit(s))
                    return replace(n, body=tuple(body))
                n = map_fields(n, visit)
                return self._expr(n, stack) if isinstance(n, ast.Call) else n
            finally:
                self.level -= 1

        return visit(node)

    def _inline(self, call: Any, d: ast.DefExpr | ast.DefBlock, body: Any, stack: tuple) -> Any:
        """`body` with its own calls inlined, or None (an error at `call`, the innermost
        call being inlined) where that nests deeper than the limit in the tree built."""
        self.inlining += 1
        try:
            return self.node(body, (*stack, d.name.name))
        except _TooDeep:
            if self.too_big:  # reported already, at a call inside: give up up to the item
                if self.inlining > 1:
                    raise
                return None
            self.too_big = True
            self.ctx.error(
                codes.TOO_DEEP,
                call.span if isinstance(call, ast.Call) else call.name.span,
                f"inlining this call of `{d.name.name}` nests calls and what they inline "
                f"more than {_GUARD_LEVEL} levels deep in its item (at most "
                f"{_GUARD_LEVEL}, a call counting as a level)",
                labels=(Label(d.name.span, "defined here"),),
                help="definitions that call definitions nest their bodies: flatten the "
                "chain, or `set` an attribute in one and read it in the next",
            )
            if self.inlining > 1:
                raise
            return None
        finally:
            self.inlining -= 1

    def _close_def(self, name: ast.Ident, others: frozenset[str] = frozenset()) -> dict:
        """A diagnostic's `help`, `fix` and a label at the `def`, when the one name close to
        `name` among the `def`s and `others` is a `def`'s; else `{}`."""
        close = close_names(name.name, [*self.defs, *others])
        if len(close) != 1 or close[0] not in self.defs:
            return {}
        kw = did_you_mean(name.name, close, name.span)
        kw["labels"] = (Label(self.defs[close[0]].name.span, f"`{close[0]}` is defined here"),)
        return kw

    def _misspelt(self, name: ast.Ident) -> None:
        """An error at a call of `name`, which no `def` declares, when the one name close to
        it is a `def`'s (the linker, which knows no `def`s, would only say "unknown
        function"); a name close to a built-in function's, or to none, is the linker's.
        None when a library was not read whole: the name may be one of its lost defs."""
        if self.ctx.library_lost:
            return
        kw = self._close_def(name, _FUNCTIONS) if name.name not in _FUNCTIONS else {}
        if kw:
            self.ctx.error(codes.UNKNOWN_NAME, name.span, f"unknown function `{name.name}`", **kw)

    def _lookup(self, name: ast.Ident, stack: tuple[str, ...], n_args: int, want: type) -> Any:
        d = self.defs.get(name.name)
        if d is None:
            return None
        if name.name in self.recursive:
            return False
        if name.name in stack:
            self.ctx.error(
                codes.DEF,
                name.span,
                f"`{name.name}` calls itself: a definition cannot recurse",
                notes=(" -> ".join((*stack, name.name)),),
            )
            return False
        if not isinstance(d, want):
            if any(isinstance(n, _SYNTAX_ERRORS) for n in walk(d)):
                # a body with a syntax error (`def f(x) { x + }`, reported where it is)
                # is read as statements whatever was meant: its calls say nothing more
                return False
            kind = "statements" if isinstance(d, ast.DefBlock) else "an expression"
            where = "a statement" if want is ast.DefBlock else "an expression"
            self.ctx.error(
                codes.DEF,
                name.span,
                f"`{name.name}` names {kind}, called here as {where}",
                labels=(Label(d.name.span, "defined here"),),
            )
            return False
        if len(d.params) != n_args:
            self.ctx.error(
                codes.DEF,
                name.span,
                f"`{name.name}` takes {counted(len(d.params), 'argument')}, given {n_args}",
                labels=(Label(d.name.span, "defined here"),),
            )
            return False
        return d

    def _expr(self, e: ast.Expr, stack: tuple[str, ...]) -> ast.Expr:
        if not isinstance(e, ast.Call):
            return e
        d = self._lookup(e.func, stack, len(e.args), ast.DefExpr)
        if d is None:
            self._misspelt(e.func)
        if not d:
            return e
        body = bind(d.body, d.params, e.args)
        if not self._fits(e, d, body):
            return e
        result = self._inline(e, d, body, stack)
        if result is None or not self._fits(e, d, result):
            return e
        self.ctx.origin(e.span, "def call", (result,))
        return result

    def _fits(self, call: Any, d: ast.DefExpr | ast.DefBlock, inlined: Any) -> bool:
        """Whether what `call` inlines stays within the limits; an error at the call if not
        (once an item: the calls around one that inlines too much inline nothing more)."""
        if self.too_big:
            return False
        parts = inlined if isinstance(inlined, list) else [inlined]
        size = depth = 0
        for part in parts:
            s, dp = measure(part, self._measures)
            size += s
            depth = max(depth, dp)
        if size <= MAX_INLINED_NODES and depth <= MAX_INLINED_DEPTH:
            return True
        kind = "statements" if isinstance(inlined, list) else "an expression"
        what = (
            f"{kind} of {size:,} nodes (at most {MAX_INLINED_NODES:,})"
            if size > MAX_INLINED_NODES
            else f"{kind} {depth} levels deep (at most {MAX_INLINED_DEPTH})"
        )
        self.too_big = True
        name = d.name.name
        span = call.span if isinstance(call, ast.Call) else call.name.span
        self.ctx.error(
            codes.TOO_DEEP,
            span,
            f"inlining this call of `{name}` makes {what}",
            labels=(Label(d.name.span, "defined here"),),
            help="compute the repeated part once: `set` it in an attribute, or give "
            "it a `let`, and use the name",
        )
        return False

    def _stmt(self, s: ast.DefCall, stack: tuple[str, ...]) -> list[ast.Stmt]:
        d = self._lookup(s.name, stack, len(s.args), ast.DefBlock)
        if d is None:
            kw = self._close_def(s.name)
            self.ctx.error(codes.DEF, s.name.span, f"no definition named `{s.name.name}`", **kw)
            return []
        if d is False:
            return []
        args = tuple(self.node(a, stack) for a in s.args)
        body = bind(d.body, d.params, args)
        if not self._fits(s, d, body):
            return []
        inlined = self._inline(s, d, body, stack)
        if inlined is None:
            return []
        result = list(inlined.body)
        if not self._fits(s, d, result):
            return []
        self.ctx.origin(s.span, "def call", result)
        return result


def bind(body: Any, params: tuple[ast.Ident, ...], args: tuple[ast.Expr, ...]) -> Any:
    """`body` with each parameter replaced by its argument, in expressions and in references."""
    values = {p.name: a for p, a in zip(params, args, strict=True)}
    if not values:
        return body

    def visit(n: Any) -> Any:
        if isinstance(n, ast.Name) and n.ident.name in values:
            return values[n.ident.name]
        n = map_fields(n, visit)
        if isinstance(n, ast.Ref) and n.parts[0].ident.name in values:
            return _through(n, values[n.parts[0].ident.name])
        return n

    return visit(body)


def _through(ref: ast.Ref, arg: ast.Expr) -> ast.Ref:
    """`p[i].x` where the parameter `p` is given the pool, stage or queue `arg`."""
    first = ref.parts[0]
    if isinstance(arg, ast.Name):
        head = (replace(first, ident=replace(arg.ident, span=first.ident.span)),)
    elif isinstance(arg, ast.Ref) and (first.index is None or arg.parts[-1].index is None):
        last = arg.parts[-1]
        head = (*arg.parts[:-1], replace(last, index=first.index or last.index))
    else:
        return ref
    return replace(ref, parts=(*head, *ref.parts[1:]))


def _calls(d: ast.DefExpr | ast.DefBlock, defs: Defs) -> list[ast.Ident]:
    """The definitions `d`'s body calls, in order."""
    out = []
    for n in walk(d.body):
        if isinstance(n, ast.DefCall) and n.name.name in defs:
            out.append(n.name)
        elif isinstance(n, ast.Call) and n.func.name in defs:
            out.append(n.func)
    return out


def _cycle(start: str, graph: dict[str, list[str]]) -> list[str] | None:
    """A path of calls from `start` back to itself, if there is one."""
    seen: set[str] = set()
    path: list[str] = []  # the callees on the way from `start` (depth first, no recursion)
    stack = [iter(graph[start])]
    while stack:
        callee = next(stack[-1], None)
        if callee is None:
            stack.pop()
            if path:
                path.pop()
            continue
        if callee == start:
            return [start, *path]
        if callee not in seen:
            seen.add(callee)
            path.append(callee)
            stack.append(iter(graph[callee]))
    return None


def _recursive(defs: Defs, ctx: Context) -> set[str]:
    """The definitions on a cycle of calls, each cycle reported once at its first member."""
    graph = {name: [c.name for c in _calls(d, defs)] for name, d in defs.items()}
    on_cycle: set[str] = set()
    for start, d in defs.items():
        path = _cycle(start, graph)
        if path is None:
            continue
        if not on_cycle.intersection(path):
            ctx.error(
                codes.DEF,
                d.name.span,
                f"`{start}` calls itself: a definition cannot recurse",
                notes=(" -> ".join((*path, start)),),
            )
        on_cycle.update(path)
    return on_cycle


def _check_params(d: ast.DefExpr | ast.DefBlock, ctx: Context) -> None:
    """A parameter is substituted, so the body may not assign, bind or index with its name."""
    params = {p.name for p in d.params}
    for n in walk(d.body):
        if isinstance(n, (ast.Set, ast.Choose)):
            target = n.target
        elif isinstance(n, ast.Binding):
            target = n.name
        elif isinstance(n, ast.Aggregate):
            target = n.var
        else:
            continue
        if target.name in params:
            ctx.error(
                codes.DEF,
                target.span,
                f"`{target.name}` is a parameter of `{d.name.name}`, and the body names "
                "with it what it assigns or binds",
                help="give the parameter or the assigned name another name",
            )
