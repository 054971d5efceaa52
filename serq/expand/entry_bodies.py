"""The rewriting of an entry's body at one member, and the walk every queue rewrite shares.

`Rewrite` walks a node knowing where each name and reference stands (in an index, as a value,
where a pool or stage stands) and turns each statement of a block into any number; its
subclasses say what becomes of each. `EntryBody` is the rewrite inside one entry: its own pools
and stage under long names at the member, `self` as the member, the parameters replaced by the
arguments, what it sets or marks as the queue's attribute `Q.x`, the `from` name as the source's
pool, a reader's `transfer` as the read; and the errors of what an entry reads or allocates
besides its own (spec §2, Queues: "An entry sees its own").
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from serq.diagnostics import Span, codes
from serq.expand.queue_declarations import Declarations, Queue, Source, long_ref, own_attrs
from serq.expand.transfers import latency_runs, pull_read
from serq.expand.walk import EXPR_TYPES, child_fields, is_node
from serq.syntax import ast
from serq.vocabulary import CONTEXT_VARS, OBSERVABLES

# What an entry's body reads besides its own, the lets and the hidden attributes: the
# admission's prefix, the position a preemption left, `inf`, and the context variables
# (`now`; the linker places the others).
_ENTRY_READS = frozenset({"cached", "computed", "inf"}) | CONTEXT_VARS

# Fields of statements and clauses that hold a pool or stage.
_RESOURCE_FIELDS = frozenset({"pool", "stages", "growing", "on", "source", "dest", "target"})


class Rewrite:
    """Rewrites the names and references under a node, knowing where each stands: in an index,
    as a value, or where a pool or stage stands (`resource`: "expr" in an observable's
    arguments, "stmt" in a statement's pool or stage); and the statements of
    every block, one into any number."""

    def __init__(self, declared: Declarations, report: bool) -> None:
        self.declared = declared
        self.report = report
        self.bound: list[str] = []  # the aggregate indices in scope

    def error(self, span: Span, message: str, **kw: Any) -> None:
        """Report an `E-queue` error at `span`, unless this rewrite reports nothing."""
        self.declared.error(self.report, span, message, **kw)

    def visit(self, n: Any, index: bool = False, resource: str = "") -> Any:
        """`n` rewritten, standing in an index (`index`) or where a `resource` stands."""
        if isinstance(n, ast.Name):
            return n if n.name in self.bound else self.name(n, index, resource)
        if isinstance(n, ast.Ref):
            parts = tuple(
                p if p.index is None else replace(p, index=self.visit(p.index, True))
                for p in n.parts
            )
            if any(a is not b for a, b in zip(parts, n.parts, strict=True)):
                n = replace(n, parts=parts)
            return self.ref(n, index, resource)
        if isinstance(n, ast.Block):
            body: list[ast.Stmt] = []
            for s in n.body:
                body.extend(self.stmt(self.visit(s)))
            return replace(n, body=tuple(body))
        if isinstance(n, ast.Aggregate):
            count = self.visit(n.count, index)
            self.bound.append(n.var.name)
            try:
                body_expr = self.visit(n.body, index)
            finally:
                self.bound.pop()
            return replace(n, count=count, body=body_expr)
        if isinstance(n, ast.EntryCall):
            target = replace(
                n.target,
                parts=tuple(
                    p if p.index is None else replace(p, index=self.visit(p.index, True))
                    for p in n.target.parts
                ),
            )
            to = n.to
            if to is not None:
                to = replace(
                    to, pool=self.visit(to.pool, resource="stmt"), amount=self.visit(to.amount)
                )
            return replace(
                n,
                target=target,
                args=tuple(self.visit(a) for a in n.args),
                source=None if n.source is None else self.visit(n.source, resource="stmt"),
                to=to,
            )
        return self._children(n, index)

    def _children(self, n: Any, index: bool) -> Any:
        is_expr = isinstance(n, EXPR_TYPES)
        observable = isinstance(n, ast.Call) and n.func.name in OBSERVABLES
        changes = {}
        for fname in child_fields(n):
            value = getattr(n, fname)
            res = "stmt" if not is_expr and fname in _RESOURCE_FIELDS else ""
            if isinstance(value, tuple):
                new = tuple(
                    self.visit(
                        v,
                        index and is_expr,
                        # price(s, s_hit, ds): only the first is a stage
                        "expr" if observable and (k == 0 or n.func.name != "price") else res,
                    )
                    if is_node(v)
                    else v
                    for k, v in enumerate(value)
                )
                if any(a is not b for a, b in zip(new, value, strict=True)):
                    changes[fname] = new
            elif is_node(value):
                new = self.visit(value, index and is_expr, res)
                if new is not value:
                    changes[fname] = new
        return replace(n, **changes) if changes else n

    def name(self, n: ast.Name, index: bool, resource: str) -> ast.Expr:
        """What the name `n` becomes, standing in an index or where a `resource` stands."""
        raise NotImplementedError

    def ref(self, n: ast.Ref, index: bool, resource: str) -> ast.Expr:
        """What the reference `n` becomes (its indices rewritten already)."""
        raise NotImplementedError

    def stmt(self, s: ast.Stmt) -> list[ast.Stmt]:
        """The statements `s` becomes (its children rewritten already)."""
        raise NotImplementedError


class EntryBody(Rewrite):
    """Inside one entry of a queue, at one member: its own names resolved, its sets the queue's."""

    def __init__(
        self,
        declared: Declarations,
        q: Queue,
        entry: ast.Entry,
        member: ast.Expr | None,
        source: Source | None,
        args: dict[ast.Ident, ast.Expr] | None,
        report: bool,
    ) -> None:
        super().__init__(declared, report)
        self.q = q
        self.member = member
        self.source = source
        # each parameter's argument, put in place as the caller wrote it (already kernel)
        self.args = {p.name: a for p, a in (args or {}).items()}
        self.params = {p.name for p in entry.params}
        self.gateway = entry.verb.name == "route"
        self.own = own_attrs(entry, self.gateway)
        self.written = f"`{q.name}.{entry.verb.name}`"

    def _own_ref(self, name: str, at: ast.Name | ast.Ref) -> ast.Expr:
        """The member's `name` (its pool `Q.p`, its stage `Q`), written where `at` is."""
        if self.member is None and isinstance(at, ast.Name):
            return ast.Name(ast.Ident(name, at.span), at.span)
        return long_ref(at, name, self.member)

    def _across(self, span: Span, what: str) -> None:
        """Report that the entry reads `what`, which is another queue's."""
        self.error(
            span,
            f"{self.written} reads {what}: a queue sees its own; the deployment reads "
            "across queues",
        )

    def name(self, n: ast.Name, index: bool, resource: str) -> ast.Expr:
        x, q, source = n.name, self.q, self.source
        if x in self.params:
            return self.args.get(x, n)
        if x == "self":
            if self.member is None:
                self.error(n.span, f"`self` inside queue `{q.name}`, which is not a family")
                return n
            return self.member
        if source is not None and x == source.name:
            if resource:
                return source.pool
            if not index:
                self.error(
                    n.span,
                    f"{self.written} reads `{x}` as a number: `{x}` is the source pool, and only "
                    f"in an index the source member (`L[{x}]`)",
                )
            elif source.index is not None:
                return source.index
            elif source.queue is not None:
                self.error(n.span, f"`{x}` in an index: `{source.queue.name}` is not a family")
            return n
        if x in q.pools:
            return self._own_ref(f"{q.name}.{x}", n)
        if x == q.name:
            return self._own_ref(x, n)
        if x in self.own:
            return n if self.gateway else ast.Name(ast.Ident(f"{q.name}.{x}", n.span), n.span)
        if self.gateway or x in _ENTRY_READS or x in self.declared.names:
            return n
        if x in self.declared.queues or x in self.declared.resources:
            self._across(n.span, f"`{x}`, which is not a pool or stage of `{q.name}`")
            return n
        self.error(
            n.span,
            f"{self.written} reads `{x}`, a session attribute set outside the queue: an entry "
            "sees its parameters, the queue's pools, the context and the request's `hidden` "
            "attributes",
            help=f"pass `{x}` as a parameter, or `mark` a moment for the caller to read",
        )
        return n

    def ref(self, n: ast.Ref, index: bool, resource: str) -> ast.Expr:
        q = self.q
        if len(n.parts) == 1:
            part = n.parts[0]
            x = part.ident.name
            if x in self.params or x in self.bound:
                return n
            if self.source is not None and x == self.source.name:
                if part.index is not None:
                    self.error(n.span, f"`{x}` is the source pool; it takes no index")
                    return n
                return self.source.pool
            if x in q.pools or x == q.name:
                if part.index is not None:
                    what = "an own pool" if x in q.pools else "the own stage"
                    self.error(
                        n.span,
                        f"`{x}[…]` inside queue `{q.name}`: {what} is the member's; write `{x}`",
                    )
                return self._own_ref(x if x == q.name else f"{q.name}.{x}", n)
            if self.gateway or not (x in self.declared.queues or x in self.declared.resources):
                return n
            if resource != "stmt":
                self._across(n.span, f"`{x}`, which is not a pool or stage of `{q.name}`")
            elif self.declared.resources.get(x) == "pool":
                self.error(
                    n.span,
                    f"{self.written} allocates `{x}`, which is not a pool of `{q.name}`: an entry "
                    "holds, grows, loads and releases its queue's own pools and the pool its "
                    "`from` names",
                )
            return n
        if self.gateway:
            return self.declared.caller_ref(n, resource, self.report)
        split = self.declared.split(n, self.report)
        if split is None:
            return n
        other, rest, idx = split
        long = f"{other.name}.{rest}"
        kind = other.member(rest)
        if kind == "pool":
            if other is q:
                self.error(n.span, f"`{n.dotted}` inside queue `{q.name}`: write `{rest}`")
            elif resource == "stmt":
                self.error(
                    n.span,
                    f"`{long}` is a pool of queue `{other.name}`, and only `{other.name}`'s "
                    f"entries hold it; call one (`{other.name}.verb (…)`)",
                )
            else:
                self._across(n.span, f"`{long}`, a pool of another queue")
            return long_ref(n, long, idx)
        if kind == "stage":
            if other is q:
                return long_ref(n, long, self.member if idx is None else idx)
            if resource != "stmt":
                self._across(n.span, f"`{long}`, a stage of another queue")
            return long_ref(n, long, idx)
        if kind == "attr":
            if other is not q:
                self._across(n.span, f"`{long}`, another queue's attribute")
            elif idx is not None:
                self.error(n.span, f"`{q.name}[…].{rest}` is the request's: write `{long}`")
            return ast.Name(ast.Ident(long, n.span), n.span)
        return self.declared.caller_ref(n, resource, self.report)

    def stmt(self, s: ast.Stmt) -> list[ast.Stmt]:
        q = self.q
        if isinstance(s, (ast.Set, ast.Choose)):
            x = s.target.name
            if x in self.params:
                self.error(s.target.span, f"{self.written} sets its parameter `{x}`")
                return [s]
            if self.gateway:
                return [s]
            return [replace(s, target=ast.Ident(f"{q.name}.{x}", s.target.span))]
        if isinstance(s, ast.Mark):
            now = ast.Name(ast.Ident("now", s.span), s.span)
            return [ast.Set(ast.Ident(f"{q.name}.{s.name.name}", s.name.span), now, s.span)]
        if isinstance(s, ast.Hold) and s.bindings and not self.gateway:
            bindings = tuple(
                replace(b, name=ast.Ident(f"{q.name}.{b.name.name}", b.name.span))
                for b in s.bindings
            )
            return [replace(s, bindings=bindings)]
        if isinstance(s, ast.Run) and not s.stages:
            if q.serve is None:
                self.error(s.span, f"`run (…)` in queue `{q.name}`, which has no `serve`")
                return [s]
            stage = long_ref(s, q.name, self.member)
            return [replace(s, stages=(stage,))]
        if isinstance(s, ast.Serving):
            if s.verb != "tool" and not s.on and s.index is None and q.serve is not None:
                return [replace(s, on=(long_ref(s, q.name, self.member),))]
            return [s]
        if isinstance(s, ast.Transfer):
            if s.on:
                return [*latency_runs(self.declared, s, self.report), s]
            if s.index is not None:
                return [s]
            return pull_read(self.declared, s, q, self.member, self.source, self.report)
        if isinstance(s, (ast.Turn, ast.End)):
            word = "turn" if isinstance(s, ast.Turn) else "end"
            if self.report:
                self.declared.ctx.error(
                    codes.SIDES,
                    s.span,
                    f"`{word}` is the session's: a queue's entry is done with a request when its "
                    "block is, and whether the session goes on is the workload's",
                )
            return [s]
        if isinstance(s, ast.Request):
            if self.report:
                self.declared.ctx.error(
                    codes.SIDES,
                    s.span,
                    "`request` inside a queue's entry: a server does not request itself",
                )
            return []
        return [s]
