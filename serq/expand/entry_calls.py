"""Entry calls: `Q[i].verb (args) [from S[k]] [to P (m)];` and `request gw;` in place.

`expand_call` checks a call against the entry it names and returns the entry's body at the
member (`entry_block`), the calls in it expanded in turn and a link's call followed by
`load P (m); release S;`; `expand_request` is the gateway's route in place. `check_entry`
checks each entry once where it is declared, with stand-ins for the member and the source;
every later expansion of it reports nothing. `Caller` is the rewrite outside the queues, which
expands the calls it meets.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from serq.diagnostics import codes, counted
from serq.diagnostics.suggest import did_you_mean
from serq.expand.entry_bodies import EntryBody, Rewrite
from serq.expand.queue_declarations import ROLE_OF, Declarations, Queue, Source, takes_from
from serq.expand.transfers import call_source, from_pool, latency_runs
from serq.expand.walk import has_draw, map_fields
from serq.syntax import ast

CallKey = tuple[str, str, bool]  # queue, verb, whether the entry takes `from`


def check_entry(declared: Declarations, q: Queue, entry: ast.Entry) -> None:
    """Check `entry` of `q` once, where it is declared, with stand-ins for its call's values."""
    member = ast.Name(ast.Ident("self", entry.verb.span), entry.verb.span) if q.family else None
    source = None
    if entry.source is not None:
        src = entry.source
        from_queue = declared.queues.get(q.pull.source.name) if q.pull else None
        pool = ast.Ref((ast.RefPart(src, None, src.span),), src.span)
        source = Source(src.name, from_queue, ast.Name(src, src.span), pool)
    key = (q.name, entry.verb.name, takes_from(entry))
    entry_block(declared, q, entry, member, source, None, report=True, record=False, stack=(key,))


def entry_block(
    declared: Declarations,
    q: Queue,
    entry: ast.Entry,
    member: ast.Expr | None,
    source: Source | None,
    args: tuple[ast.Expr, ...] | None,
    *,
    report: bool,
    record: bool,
    stack: tuple[CallKey, ...],
) -> ast.Block:
    """The body of `entry` at one member, its parameters replaced by `args` (kept as written
    when None), the calls in it expanded in turn."""
    values = None if args is None else dict(zip(entry.params, args, strict=True))
    block = EntryBody(declared, q, entry, member, source, values, report).visit(entry.body)
    return _nested(declared, block, report=report, record=record, stack=stack)


def _nested(
    declared: Declarations, node: Any, *, report: bool, record: bool, stack: tuple[CallKey, ...]
) -> Any:
    """`node` with every entry call in its blocks expanded (the calls are kernel already)."""

    def visit(n: Any) -> Any:
        if not isinstance(n, ast.Block):
            return map_fields(n, visit)
        body: list[ast.Stmt] = []
        for s in n.body:
            if isinstance(s, ast.EntryCall):
                body.extend(expand_call(declared, s, report=report, record=record, stack=stack))
            else:
                body.append(map_fields(s, visit))
        return replace(n, body=tuple(body))

    return visit(node)


def expand_call(
    declared: Declarations,
    call: ast.EntryCall,
    *,
    report: bool,
    record: bool,
    stack: tuple[CallKey, ...],
) -> list[ast.Stmt]:
    """The statements `call` stands for, or none after an error (reported when `report`);
    `record` its origin; `stack` holds the entries being expanded, to refuse a cycle."""
    parts = call.target.parts
    head = parts[0]
    qname, verb = head.ident.name, parts[-1].ident.name
    written = f"`{qname}.{verb}`"
    if len(parts) != 2 or parts[1].index is not None:
        declared.error(
            report,
            call.target.span,
            f"`{call.target.dotted}` is not an entry: write `Q[i].verb (…)`",
        )
        return []
    q = declared.queues.get(qname)
    if q is None:
        declared.error(report, head.ident.span, f"{written}: no queue `{qname}` is declared")
        return []
    member = head.index
    if q.family and member is None:
        declared.error(
            report, head.span, f"{written}: `{qname}` is a family of {declared.count(q)}; index it"
        )
        return []
    if not q.family and member is not None:
        declared.error(
            report, head.span, f"`{qname}[…].{verb}`: `{qname}` is one queue, not a family"
        )
        return []
    if verb == "route" and q.gateway:
        if call.args or call.source is not None or call.to is not None:
            declared.error(
                report,
                call.target.span,
                f"{written}: a gateway's route takes no arguments, `from` or `to`",
            )
            return []
        # `gw.route();` is the route in place, as `request gw;` is.
        if (qname, "route", False) in stack:
            declared.error(report, call.span, f"{written}: the route enters itself")
            return []
        request = ast.Request(head.ident, call.span)
        return expand_request(declared, request, report=report, record=record, stack=stack)
    link = verb == "transfer" and (verb, False) in q.entries
    entry = q.entries.get((verb, False if link else call.source is not None))
    if entry is None:
        verbs = {v for v, _ in q.entries} | ({"route"} if q.gateway else set())
        hint = did_you_mean(verb, verbs, parts[1].ident.span) if verb not in verbs else {}
        declared.error(report, parts[1].ident.span, _no_entry(q, verb, call), **hint)
        return []
    if call.to is not None and not link:
        declared.error(
            report, call.to.span, f"`to` belongs to a link's `transfer`, not to `{verb}`"
        )
        return []
    if link and (call.source is None or call.to is None):
        declared.error(
            report,
            call.span,
            f"`{qname}.transfer (n) from S to P (m)`: a transfer names the pool it takes "
            "from and the pool it fills",
        )
        return []
    key = (qname, verb, takes_from(entry))
    if key in stack:
        declared.error(report, call.span, f"{written}: the entries call each other in a cycle")
        return []
    if len(call.args) != len(entry.params):
        declared.error(
            report,
            call.span,
            f"{written} takes {counted(len(entry.params), 'argument')}, got {len(call.args)}",
        )
        return []
    for param, arg in zip(entry.params, call.args, strict=True):
        if has_draw(arg):
            declared.error(
                report,
                arg.span,
                f"{written}: the argument for `{param.name}` draws a sample; a parameter is "
                "substituted, so a name used twice would draw twice",
                help="draw it into an attribute first: `set x = ~...;`",
            )
            return []
    source = None
    tail: list[ast.Stmt] = []
    if key[2]:
        source = call_source(declared, call, q, entry, report)
        if source is None:
            return []
    elif link:
        assert call.source is not None and call.to is not None
        pool = from_pool(declared, call.source, report)
        if pool is None:
            return []
        to = call.to
        tail = [ast.Load(to.pool, to.amount, to.span), ast.Release(pool, call.source.span)]
    block = entry_block(
        declared,
        q,
        entry,
        member,
        source,
        call.args,
        report=False,
        record=record,
        stack=(*stack, key),
    )
    out = [*block.body, *tail]
    if record:
        declared.ctx.origin(call.span, "entry call", out)
    return out


def _no_entry(q: Queue, verb: str, call: ast.EntryCall) -> str:
    """Why `call` finds no `verb` entry in `q`."""
    written = f"`{q.name}.{verb}`"
    role = ROLE_OF.get(verb)
    if role is not None and role not in q.roles:
        return f"{written}: queue `{q.name}` does not play `{role}`"
    if call.source is not None and (verb, False) in q.entries:
        return f"{written}: queue `{q.name}` has no such entry: its `{verb}` takes no `from`"
    if call.source is None and (verb, True) in q.entries:
        return f"{written}: its `{verb}` entry takes the KV `from` a queue"
    return f"{written}: queue `{q.name}` has no such entry"


def expand_request(
    declared: Declarations,
    req: ast.Request,
    *,
    report: bool,
    record: bool,
    stack: tuple[CallKey, ...] = (),
) -> list[ast.Stmt]:
    """`request gw;` (`req`): the gateway's route, in place."""
    assert req.gateway is not None
    name = req.gateway.name
    q = declared.queues.get(name)
    if q is None:
        declared.error(report, req.gateway.span, f"`request {name}`: no queue `{name}` is declared")
        return []
    if not q.gateway:
        declared.error(
            report,
            req.gateway.span,
            f"`request {name}`: queue `{name}` does not play `gateway`",
        )
        return []
    route = q.entries.get(("route", False))
    if route is None:
        return []
    stack = (*stack, (name, "route", False))
    block = entry_block(
        declared, q, route, None, None, (), report=False, record=record, stack=stack
    )
    if record:
        declared.ctx.origin(req.span, "gateway request", block.body)
    return list(block.body)


class Caller(Rewrite):
    """Outside the queues: entry calls and `request gw;` expanded, queue references resolved."""

    def __init__(self, declared: Declarations, requests: bool) -> None:
        super().__init__(declared, True)
        self.requests = requests  # whether `request gw;` may stand here

    def name(self, n: ast.Name, index: bool, resource: str) -> ast.Expr:
        if n.name == "self":
            self.error(n.span, "`self` is a member's index, inside the entries of a family")
        return n

    def ref(self, n: ast.Ref, index: bool, resource: str) -> ast.Expr:
        return self.declared.caller_ref(n, resource, True)

    def stmt(self, s: ast.Stmt) -> list[ast.Stmt]:
        if isinstance(s, ast.EntryCall):
            return expand_call(self.declared, s, report=True, record=True, stack=())
        if isinstance(s, ast.Request) and s.gateway is not None:
            if not self.requests:
                self.declared.ctx.error(
                    codes.SIDES,
                    s.span,
                    "`request` is a statement of the `session` inside `workload`",
                )
            return expand_request(self.declared, s, report=True, record=True)
        if isinstance(s, ast.Transfer) and s.on:
            return [*latency_runs(self.declared, s, True), s]
        return [s]
