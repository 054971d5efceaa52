"""Queues: each station's pools and stages under long names, its entries in place of their calls.

Input: the items after `use`, `def` and the two sides (no `Use` or `DefCall` remains, and
`ctx.lets` holds the lets' values). Output: the same items, with

- `queue Q [N] { ... }` replaced, in place and in member order, by `pool Q.p [N] { ... }` for
  each pool (`memory p` and `spill p` renamed), `stage Q [N] : kind;` for its `serve`,
  `stage Q.nic [N] : kind;` for its `nic`, and last `stage Q.latency [N] : delay;` for a
  link's `serve ... latency x`;
- `R pull S [latency x] share pol;` replaced by `stage R.nic.latency [N] : delay;` (with a
  latency) and `share pol;` (from the program's first relation);
- `Q[i].verb (args) [from S[k]] [to P (m)];` replaced by the entry's body: its own pools and
  stage as `Q.p[i]` and `Q[i]`, `self` as `i`, `run (x)` as `run Q[i] (x)`, a prefill or
  decode without `on` given `on Q[i]`, what it sets or marks as the attribute `Q.x` (`mark m;`
  is `set Q.m = now;`), the `from` name as the pool the source's entries lease (`S.p[k]`, and
  `k` in an index), a reader's `transfer` without `on` as the read over both NICs, the
  parameters replaced by the arguments; a link's call is followed by `load P (m); release S;`;
- `request gw;` replaced by the gateway's route (its sets are the request's, unprefixed);
- `transfer on L[k] ...` preceded by `run L.latency[k] (x);` for each link named that has a
  latency;
- `Q[i].p` as the single-part reference `Q.p[i]`, and `Q.m` read by the caller as `Q.m`.

Left to later passes: the serving forms (now with `on` where the queue gave it), `at
admission` (bindings renamed `Q.x` like sets), `branch with`, aggregates. Afterwards no
`Queue`, `Pull`, `EntryCall`, `Mark` or gateway `Request` remains, and an entry's `run (x)`
names a stage (but in a queue without `serve`, an error). Errors (`E-queue`) are reported on
the surface form: a queue's shape, a relation's, a call's, and what an entry reads or
allocates besides its own (spec §2, Queues: "An entry sees its own"); `turn`, `end` and
`request` in an entry are the two sides' rule (`E-sides`). Each entry is checked once, where
it is declared, with stand-ins for the member and the source; each call where it is.

The pass is split by concern: `queue_declarations` sorts out the queues, `transfers` the pull
relations and how KV moves between queues, `entry_calls` expands the calls, `entry_bodies`
rewrites an entry's body at a member; this module drives them and writes the kernel items.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from serq.diagnostics import Label, codes
from serq.expand.context import Context
from serq.expand.entry_calls import Caller, check_entry
from serq.expand.queue_declarations import Declarations, Queue
from serq.expand.transfers import relate
from serq.expand.walk import map_blocks, map_exprs, map_fields
from serq.syntax import ast


def expand_queues(items: list[ast.Item], ctx: Context) -> list[ast.Item]:
    """Replace the queues and pull relations of `items` by kernel declarations, and every entry
    call and `request gw;` by the statements it stands for."""
    declared = _declare(items, ctx)
    for q in declared.queues.values():
        for entry in q.entries.values():
            check_entry(declared, q, entry)
    out: list[ast.Item] = []
    for item in items:
        if not isinstance(item, (ast.Queue, ast.Pull, ast.DefExpr, ast.DefBlock)):
            item = _no_marks(item, ctx)
        if isinstance(item, ast.Queue):
            out.extend(_queue_items(declared, item))
        elif isinstance(item, ast.Pull):
            out.extend(_pull_items(declared, item))
        elif isinstance(item, (ast.DefExpr, ast.DefBlock)):
            out.append(item)
        elif isinstance(item, ast.Workload):
            clauses = tuple(
                Caller(declared, isinstance(c, ast.WorkloadSession)).visit(c) for c in item.clauses
            )
            out.append(replace(item, clauses=clauses))
        else:
            out.append(Caller(declared, True).visit(item))
    return out


def _no_marks(item: ast.Item, ctx: Context) -> ast.Item:
    """`item` without the `mark`s written outside a queue's entries, each an error: a mark
    names a moment of an entry, which its caller reads as `QUEUE.NAME`."""

    def f(s: ast.Stmt) -> list[ast.Stmt] | None:
        if not isinstance(s, ast.Mark):
            return None
        ctx.error(
            codes.QUEUE,
            s.span,
            f"`mark {s.name.name}` outside a queue's entry: a mark names a moment of an "
            "entry, which its caller reads as `QUEUE.NAME`",
            help=f"write the moment into an attribute here instead: `set {s.name.name} = now;`",
        )
        return []

    return map_blocks(item, f)


def _declare(items: list[ast.Item], ctx: Context) -> Declarations:
    """The queues, pull relations, lets, hidden attributes, pools and stages of `items`."""
    declared = Declarations(items, ctx)
    shares = []
    for item in items:
        if isinstance(item, ast.Queue):
            declared.declare_queue(item)
        elif isinstance(item, ast.Pull):
            relate(declared, item)
        elif isinstance(item, ast.Share):
            shares.append(item)
        elif isinstance(item, ast.Let):
            declared.names.add(item.name.name)
        elif isinstance(item, (ast.Pool, ast.Stage)):
            declared.resources[item.name.name] = type(item).__name__.lower()
        elif isinstance(item, ast.Workload):
            for c in item.clauses:
                if isinstance(c, ast.Hidden):
                    declared.names.update(n.name for n in c.names)
    if declared.policy is not None:
        for share in shares:
            ctx.error(
                codes.QUEUE,
                share.span,
                "`share` is given twice: the pull relation names the program's policy",
                labels=(Label(declared.policy.span, "the relation"),),
            )
    return declared


def _queue_items(declared: Declarations, node: ast.Queue) -> list[ast.Item]:
    """The pools and stages that stand for `node` (none for a second queue of its name)."""
    q = declared.queues[node.name.name]
    if q.node is not node:
        return []
    name, size = q.name, q.size
    out: list[ast.Item] = []
    for m in node.members:
        if isinstance(m, ast.QueuePool) and q.pools.get(m.name.name) is m:
            ident = ast.Ident(f"{name}.{m.name.name}", m.name.span)
            options = tuple(_own_names(q, o) for o in m.options)
            out.append(ast.Pool(ident, size, options, m.span))
        elif isinstance(m, ast.QueueServe) and q.serve is m:
            kind = _own_names(q, m.kind)
            out.append(ast.Stage(ast.Ident(name, node.name.span), size, kind, m.span))
        elif isinstance(m, ast.QueueNic) and q.nic is m:
            kind = _own_names(q, m.kind)
            out.append(ast.Stage(ast.Ident(f"{name}.nic", m.span), size, kind, m.span))
    if q.latency is not None and q.serve is not None:
        span = q.latency.span
        ident = ast.Ident(f"{name}.latency", span)
        out.append(ast.Stage(ident, size, ast.Delay(span), q.serve.span))
    declared.ctx.origin(node.span, "queue", out)
    return out


def _pull_items(declared: Declarations, pull: ast.Pull) -> list[ast.Item]:
    """The reader's latency stage and the program's `share` that stand for `pull`."""
    if pull not in declared.pulls:
        return []
    out: list[ast.Item] = []
    reader = declared.queues[pull.reader.name]
    if pull.latency is not None and declared.ctx.const(pull.latency) is not None:
        span = pull.latency.span
        ident = ast.Ident(f"{reader.name}.nic.latency", span)
        out.append(ast.Stage(ident, reader.size, ast.Delay(span), pull.span))
    if pull is declared.policy:
        out.append(ast.Share(pull.policy, pull.span))
    declared.ctx.origin(pull.span, "pull", out)
    return out


def _own_names(q: Queue, node: Any) -> Any:
    """A pool option or stage kind of `q` with its own pools under their long names."""

    def rename(n: Any) -> Any:
        if isinstance(n, ast.Ident) and n.name in q.pools:
            return ast.Ident(f"{q.name}.{n.name}", n.span)
        if isinstance(n, (ast.Option, ast.Spill, ast.Step)):
            return map_fields(n, rename)
        return n

    def expr(e: ast.Expr) -> ast.Expr:
        if isinstance(e, ast.Name) and e.name in q.pools:
            return ast.Name(ast.Ident(f"{q.name}.{e.name}", e.span), e.span)
        return e

    return rename(map_exprs(node, expr))
