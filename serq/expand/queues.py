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
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

from serq.diagnostics import Label, Span, codes
from serq.expand.context import Context
from serq.expand.walk import EXPR_TYPES, has_draw, map_exprs, map_fields, walk
from serq.syntax import ast
from serq.vocabulary import CONTEXT_VARS, OBSERVABLES

# Each role's entry and its number of parameters (spec §2, Queues: "Four roles").
ROLES: dict[str, tuple[str, int]] = {
    "gateway": ("route", 0),
    "prefill": ("prefill", 1),
    "decode": ("decode", 1),
    "link": ("transfer", 1),
}
_ROLE_OF = {verb: role for role, (verb, _) in ROLES.items()}

# What an entry's body reads besides its own, the lets and the hidden attributes: the
# admission's prefix, the position a preemption left, `inf`, and the context variables
# (`now`; the linker places the others).
_ENTRY_READS = frozenset({"cached", "computed", "inf"}) | CONTEXT_VARS

# Fields of statements and clauses that hold a pool or stage.
_RESOURCE_FIELDS = frozenset({"pool", "stages", "growing", "on", "source", "dest", "target"})

_CallKey = tuple[str, str, bool]  # queue, verb, whether the entry takes `from`


def expand_queues(items: list[ast.Item], ctx: Context) -> list[ast.Item]:
    """Replace the queues and pull relations of `items` by kernel declarations, and every entry
    call and `request gw;` by the statements it stands for."""
    return _Queues(items, ctx).expand()


@dataclass
class _Queue:
    """A declared queue, its members sorted out."""

    node: ast.Queue
    size: ast.Expr | None
    roles: tuple[str, ...]
    roles_known: bool  # every role written is one of the four
    pools: dict[str, ast.QueuePool] = field(default_factory=dict)
    serve: ast.QueueServe | None = None
    nic: ast.QueueNic | None = None
    latency: ast.Expr | None = None  # a link's wait before a `transfer on` it
    entries: dict[tuple[str, bool], ast.Entry] = field(default_factory=dict)
    attrs: set[str] = field(default_factory=set)  # what its entries set or mark: `Q.x`
    pull: ast.Pull | None = None  # the relation in which it is the reader
    leased: tuple[str | None, str | None] | None = None  # (pool, why not), once computed

    @property
    def name(self) -> str:
        return self.node.name.name

    @property
    def family(self) -> bool:
        return self.size is not None

    @property
    def gateway(self) -> bool:
        return "gateway" in self.roles

    def member(self, rest: str) -> str | None:
        """What `Q.rest` names: a "pool", a "stage", an "attr", or None."""
        if rest in self.pools:
            return "pool"
        if (
            (rest == "nic" and self.nic is not None)
            or (rest == "latency" and self.latency is not None)
            or (rest == "nic.latency" and self.pull is not None and self.pull.latency is not None)
        ):
            return "stage"
        return "attr" if rest in self.attrs else None


@dataclass(frozen=True)
class _Source:
    """Inside an entry with `from NAME`: where the call took the KV from."""

    name: str  # the entry's `from` name
    queue: _Queue | None  # the source queue
    index: ast.Expr | None  # its member
    pool: ast.Ref  # the pool its entries lease, at that member


class _Queues:
    """One expansion: the queues declared, then every item rewritten."""

    def __init__(self, items: list[ast.Item], ctx: Context) -> None:
        self.items = items
        self.ctx = ctx
        self.queues: dict[str, _Queue] = {}
        self.pulls: list[ast.Pull] = []  # the relations that hold, in order
        self.policy: ast.Pull | None = None  # the first relation, which gives the share
        self.names: set[str] = set()  # the lets and the hidden attributes
        self.resources: dict[str, str] = {}  # each top-level pool and stage: "pool", "stage"
        self.readers = {i.reader.name for i in items if isinstance(i, ast.Pull)}

    def error(self, report: bool, span: Span, message: str, **kw: Any) -> None:
        if report:
            self.ctx.error(codes.QUEUE, span, message, **kw)

    # ------------------------------------------------------------------ driver

    def expand(self) -> list[ast.Item]:
        shares = []
        for item in self.items:
            if isinstance(item, ast.Queue):
                self.declare(item)
            elif isinstance(item, ast.Pull):
                self.relate(item)
            elif isinstance(item, ast.Share):
                shares.append(item)
            elif isinstance(item, ast.Let):
                self.names.add(item.name.name)
            elif isinstance(item, (ast.Pool, ast.Stage)):
                self.resources[item.name.name] = type(item).__name__.lower()
            elif isinstance(item, ast.Workload):
                for c in item.clauses:
                    if isinstance(c, ast.Hidden):
                        self.names.update(n.name for n in c.names)
        if self.policy is not None:
            for share in shares:
                self.ctx.error(
                    codes.QUEUE,
                    share.span,
                    "`share` is given twice: the pull relation names the program's policy",
                    labels=(Label(self.policy.span, "the relation"),),
                )
        for q in self.queues.values():
            for entry in q.entries.values():
                self.check_entry(q, entry)
        out: list[ast.Item] = []
        for item in self.items:
            if isinstance(item, ast.Queue):
                out.extend(self.queue_items(item))
            elif isinstance(item, ast.Pull):
                out.extend(self.pull_items(item))
            elif isinstance(item, (ast.DefExpr, ast.DefBlock)):
                out.append(item)
            elif isinstance(item, ast.Workload):
                clauses = tuple(
                    _Caller(self, isinstance(c, ast.WorkloadSession)).visit(c) for c in item.clauses
                )
                out.append(replace(item, clauses=clauses))
            else:
                out.append(_Caller(self, True).visit(item))
        return out

    # ------------------------------------------------------------ declarations

    def declare(self, node: ast.Queue) -> None:
        """Sort out a queue's members, with the errors of its shape."""
        name = node.name.name
        if name in self.queues:
            first = self.queues[name].node
            self.error(
                True,
                node.name.span,
                f"a second queue `{name}`",
                labels=(Label(first.name.span, "the first is here"),),
            )
            return
        roles: list[str] = []
        for r in node.roles:
            if r.name not in ROLES:
                self.error(True, r.span, f"unknown role `{r.name}`: a queue plays {_role_list()}")
            elif r.name in roles:
                self.error(True, r.span, f"role `{r.name}` twice")
            else:
                roles.append(r.name)
        size = node.size
        if size is not None:
            if "gateway" in roles:
                self.error(
                    True, size.span, "a gateway is one queue, not a family: the requests enter it"
                )
                size = None
            elif not _positive_integer(self.ctx.const(size)):
                self.error(
                    True,
                    size.span,
                    "a family's size is a positive integer, or a `let` constant that is one",
                )
                size = ast.Number(1.0, "1", size.span)
        q = _Queue(node, size, tuple(roles), len(roles) == len(node.roles))
        self.queues[name] = q
        for m in node.members:
            self.member(q, m)
        for role in roles:
            verb = ROLES[role][0]
            if role == "link":
                if q.serve is None and (verb, False) not in q.entries:
                    self.error(
                        True,
                        node.name.span,
                        f"queue `{name}` plays `link` and has neither a `serve` nor a "
                        "`transfer` entry: nothing says what a transfer over it costs",
                    )
            elif (verb, False) not in q.entries:
                self.error(
                    True, node.name.span, f"queue `{name}` plays `{role}` and has no `{verb}` entry"
                )
        if q.latency is not None and ("transfer", False) in q.entries:
            self.error(
                True,
                q.latency.span,
                f"queue `{name}` has a `transfer` entry and a `latency`: a called link's time "
                "is its entry's",
                help="write the wait in the entry's body",
            )
            q.latency = None
        for (verb, _), entry in q.entries.items():
            q.attrs |= _own_attrs(entry, verb == "route")

    def member(self, q: _Queue, m: ast.QueueMember) -> None:
        name = q.name
        above = q.node.members[: q.node.members.index(m)]
        after_entries = any(isinstance(x, ast.Entry) for x in above)
        if isinstance(m, ast.QueuePool):
            if q.serve is not None or q.nic is not None or after_entries:
                self.error(
                    True,
                    m.span,
                    f"queue `{name}` declares its pools first, above its `serve` and entries",
                )
            elif m.name.name in q.pools:
                self.error(True, m.span, f"duplicate pool `{m.name.name}` in queue `{name}`")
            else:
                q.pools[m.name.name] = m
        elif isinstance(m, ast.QueueServe):
            if q.serve is not None:
                self.error(True, m.span, f"`serve` twice: queue `{name}` is one stage")
                return
            if after_entries:
                self.error(True, m.span, f"queue `{name}` declares its `serve` above its entries")
            q.serve = m
            if m.latency is None:
                return
            if "link" not in q.roles:
                self.error(
                    True,
                    m.latency.span,
                    "`latency` belongs to the `serve` of a queue that plays `link`: "
                    "a link's fixed wait",
                )
            elif self.ctx.const(m.latency) is None:
                self.error(
                    True,
                    m.latency.span,
                    "`latency` is a number or a constant over `let`s: a link's fixed wait, "
                    "the same for every transfer",
                )
            else:
                q.latency = m.latency
        elif isinstance(m, ast.QueueNic):
            if q.nic is not None:
                self.error(True, m.span, f"`nic` twice: queue `{name}` has one NIC")
                return
            if after_entries:
                self.error(True, m.span, f"queue `{name}` declares its `nic` above its entries")
            q.nic = m
        elif isinstance(m, ast.Entry):
            self.entry(q, m)

    def entry(self, q: _Queue, e: ast.Entry) -> None:
        verb = e.verb.name
        role = _ROLE_OF.get(verb)
        if role is None:
            self.error(
                True,
                e.verb.span,
                f"`{verb}` is not an entry of any role",
                notes=(
                    "the entries are `route` (gateway), `prefill (prompt)`, "
                    "`decode (prompt) [from NAME]` and `transfer (n)` (link)",
                ),
            )
            return
        if role not in q.roles and q.roles_known:
            self.error(
                True,
                e.verb.span,
                f"`{verb}` is an entry of a `{role}` queue; declare `queue {q.name} : {role}`",
            )
        count = ROLES[role][1]
        if len(e.params) != count:
            self.error(
                True,
                e.verb.span,
                f"`{q.name}.{verb}` takes {count} parameter(s), as the role says; "
                f"it declares {len(e.params)}",
            )
        if e.source is not None and verb != "decode":
            self.error(
                True,
                e.source.span,
                f"`{verb}` takes no `from`: only a decode entry takes its KV from another queue",
            )
        key = (verb, _takes_from(e))
        if key in q.entries:
            what = f"`{verb} from`" if key[1] else f"`{verb}`"
            self.error(
                True,
                e.verb.span,
                f"queue `{q.name}` has {what} twice",
                labels=(Label(q.entries[key].verb.span, "the first is here"),),
            )
            return
        q.entries[key] = e

    def relate(self, pull: ast.Pull) -> None:
        """A pull relation: both queues declared above, distinct, with a NIC; one per reader."""
        r, s = pull.reader.name, pull.source.name
        written = f"`{r} pull {s}`"
        reader, source = self.queues.get(r), self.queues.get(s)
        if reader is None:
            self.error(True, pull.reader.span, f"{written}: no queue `{r}` is declared above")
        if source is None:
            self.error(True, pull.source.span, f"{written}: no queue `{s}` is declared above")
        if reader is None or source is None:
            return
        if reader is source:
            self.error(True, pull.source.span, f"{written}: a queue reads from another")
            return
        for q, ident, side in ((source, pull.source, "source"), (reader, pull.reader, "reader")):
            if q.nic is None:
                self.error(
                    True,
                    ident.span,
                    f"{written}: queue `{q.name}` has no `nic`; a read runs over the source's "
                    "NIC and the reader's",
                    help=f"declare the {side}'s NIC in `queue {q.name}`: `nic ps(...);`",
                )
        if pull.latency is not None and self.ctx.const(pull.latency) is None:
            self.error(
                True,
                pull.latency.span,
                "`latency` is a number or a constant over `let`s: the reader's fixed wait "
                "before each read",
            )
        if self.policy is not None and pull.policy != self.policy.policy:
            self.error(
                True,
                pull.span,
                "the program divides shared stages by one policy: every relation names the same",
                labels=(Label(self.policy.span, f"`share {self.policy.policy}` here"),),
            )
        if reader.pull is not None:
            self.error(
                True,
                pull.span,
                f"`{r}` pulls from `{reader.pull.source.name}` already: one relation per reader",
                labels=(Label(reader.pull.span, "the first relation"),),
            )
            return
        reader.pull = pull
        self.pulls.append(pull)
        if self.policy is None:
            self.policy = pull

    # ------------------------------------------------------------------ items

    def queue_items(self, node: ast.Queue) -> list[ast.Item]:
        q = self.queues[node.name.name]
        if q.node is not node:
            return []
        name, size = q.name, q.size
        out: list[ast.Item] = []
        for m in node.members:
            if isinstance(m, ast.QueuePool) and q.pools.get(m.name.name) is m:
                ident = ast.Ident(f"{name}.{m.name.name}", m.name.span)
                options = tuple(self.own_names(q, o) for o in m.options)
                out.append(ast.Pool(ident, size, options, m.span))
            elif isinstance(m, ast.QueueServe) and q.serve is m:
                kind = self.own_names(q, m.kind)
                out.append(ast.Stage(ast.Ident(name, node.name.span), size, kind, m.span))
            elif isinstance(m, ast.QueueNic) and q.nic is m:
                kind = self.own_names(q, m.kind)
                out.append(ast.Stage(ast.Ident(f"{name}.nic", m.span), size, kind, m.span))
        if q.latency is not None and q.serve is not None:
            span = q.latency.span
            ident = ast.Ident(f"{name}.latency", span)
            out.append(ast.Stage(ident, size, ast.Delay(span), q.serve.span))
        self.ctx.origin(node.span, "queue", out)
        return out

    def pull_items(self, pull: ast.Pull) -> list[ast.Item]:
        if pull not in self.pulls:
            return []
        out: list[ast.Item] = []
        reader = self.queues[pull.reader.name]
        if pull.latency is not None and self.ctx.const(pull.latency) is not None:
            span = pull.latency.span
            ident = ast.Ident(f"{reader.name}.nic.latency", span)
            out.append(ast.Stage(ident, reader.size, ast.Delay(span), pull.span))
        if pull is self.policy:
            out.append(ast.Share(pull.policy, pull.span))
        self.ctx.origin(pull.span, "pull", out)
        return out

    def own_names(self, q: _Queue, node: Any) -> Any:
        """A pool option or stage kind of `q` with its own pools under their long names."""

        def rename(n: Any) -> Any:
            if isinstance(n, ast.Ident) and n.name in q.pools:
                return ast.Ident(f"{q.name}.{n.name}", n.span)
            if isinstance(n, (ast.Option, ast.Spill)):
                return map_fields(n, rename)
            if isinstance(n, ast.Step):
                return map_fields(n, rename)
            return n

        def expr(e: ast.Expr) -> ast.Expr:
            if isinstance(e, ast.Name) and e.name in q.pools:
                return ast.Name(ast.Ident(f"{q.name}.{e.name}", e.span), e.span)
            return e

        return rename(map_exprs(node, expr))

    # ------------------------------------------------------------------ entries

    def check_entry(self, q: _Queue, entry: ast.Entry) -> None:
        """Check an entry once, where it is declared, with stand-ins for its call's values."""
        member = ast.Name(ast.Ident("self", entry.verb.span), entry.verb.span) if q.family else None
        source = None
        if entry.source is not None:
            src = entry.source
            from_queue = self.queues.get(q.pull.source.name) if q.pull else None
            pool = ast.Ref((ast.RefPart(src, None, src.span),), src.span)
            source = _Source(src.name, from_queue, ast.Name(src, src.span), pool)
        key = (q.name, entry.verb.name, _takes_from(entry))
        self.body(q, entry, member, source, None, report=True, record=False, stack=(key,))

    def body(
        self,
        q: _Queue,
        entry: ast.Entry,
        member: ast.Expr | None,
        source: _Source | None,
        args: tuple[ast.Expr, ...] | None,
        *,
        report: bool,
        record: bool,
        stack: tuple[_CallKey, ...],
    ) -> ast.Block:
        """The body of `entry` at one member, its parameters replaced by `args` (kept as written
        when None), the calls in it expanded in turn."""
        values = None if args is None else dict(zip(entry.params, args, strict=True))
        block = _Entry(self, q, entry, member, source, values, report).visit(entry.body)
        return self.nested(block, report=report, record=record, stack=stack)

    def nested(self, node: Any, *, report: bool, record: bool, stack: tuple[_CallKey, ...]) -> Any:
        """`node` with every entry call in its blocks expanded (the calls are kernel already)."""

        def visit(n: Any) -> Any:
            if not isinstance(n, ast.Block):
                return map_fields(n, visit)
            body: list[ast.Stmt] = []
            for s in n.body:
                if isinstance(s, ast.EntryCall):
                    body.extend(self.call(s, report=report, record=record, stack=stack))
                else:
                    body.append(map_fields(s, visit))
            return replace(n, body=tuple(body))

        return visit(node)

    def call(
        self, call: ast.EntryCall, *, report: bool, record: bool, stack: tuple[_CallKey, ...]
    ) -> list[ast.Stmt]:
        """The statements an entry call stands for, or none after an error."""
        parts = call.target.parts
        head = parts[0]
        qname, verb = head.ident.name, parts[-1].ident.name
        written = f"`{qname}.{verb}`"
        if len(parts) != 2 or parts[1].index is not None:
            self.error(
                report,
                call.target.span,
                f"`{call.target.dotted}` is not an entry: write `Q[i].verb (…)`",
            )
            return []
        q = self.queues.get(qname)
        if q is None:
            self.error(report, head.ident.span, f"{written}: no queue `{qname}` is declared")
            return []
        member = head.index
        if q.family and member is None:
            self.error(
                report, head.span, f"{written}: `{qname}` is a family of {self.count(q)}; index it"
            )
            return []
        if not q.family and member is not None:
            self.error(
                report, head.span, f"`{qname}[…].{verb}`: `{qname}` is one queue, not a family"
            )
            return []
        if verb == "route" and q.gateway:
            if call.args or call.source is not None or call.to is not None:
                self.error(
                    report,
                    call.target.span,
                    f"{written}: a gateway's route takes no arguments, `from` or `to`",
                )
                return []
            # `gw.route();` is the route in place, as `request gw;` is.
            if (qname, "route", False) in stack:
                self.error(report, call.span, f"{written}: the route enters itself")
                return []
            request = ast.Request(head.ident, call.span)
            return self.request(request, report=report, record=record, stack=stack)
        link = verb == "transfer" and (verb, False) in q.entries
        entry = q.entries.get((verb, False if link else call.source is not None))
        if entry is None:
            self.error(report, parts[1].ident.span, self.no_entry(q, verb, call))
            return []
        if call.to is not None and not link:
            self.error(
                report, call.to.span, f"`to` belongs to a link's `transfer`, not to `{verb}`"
            )
            return []
        if link and (call.source is None or call.to is None):
            self.error(
                report,
                call.span,
                f"`{qname}.transfer (n) from S to P (m)`: a transfer names the pool it takes "
                "from and the pool it fills",
            )
            return []
        key = (qname, verb, _takes_from(entry))
        if key in stack:
            self.error(report, call.span, f"{written}: the entries call each other in a cycle")
            return []
        if len(call.args) != len(entry.params):
            self.error(
                report,
                call.span,
                f"{written} takes {len(entry.params)} argument(s), got {len(call.args)}",
            )
            return []
        for param, arg in zip(entry.params, call.args, strict=True):
            if has_draw(arg):
                self.error(
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
            source = self.source(call, q, entry, report)
            if source is None:
                return []
        elif link:
            assert call.source is not None and call.to is not None
            pool = self.from_pool(call.source, report)
            if pool is None:
                return []
            to = call.to
            tail = [ast.Load(to.pool, to.amount, to.span), ast.Release(pool, call.source.span)]
        block = self.body(
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
            self.ctx.origin(call.span, "entry call", out)
        return out

    def no_entry(self, q: _Queue, verb: str, call: ast.EntryCall) -> str:
        written = f"`{q.name}.{verb}`"
        role = _ROLE_OF.get(verb)
        if role is not None and role not in q.roles:
            return f"{written}: queue `{q.name}` does not play `{role}`"
        if call.source is not None and (verb, False) in q.entries:
            return f"{written}: queue `{q.name}` has no such entry: its `{verb}` takes no `from`"
        if call.source is None and (verb, True) in q.entries:
            return f"{written}: its `{verb}` entry takes the KV `from` a queue"
        return f"{written}: queue `{q.name}` has no such entry"

    def source(
        self, call: ast.EntryCall, q: _Queue, entry: ast.Entry, report: bool
    ) -> _Source | None:
        """The queue a decode entry's call takes the KV from, and the pool it leased there."""
        ref = call.source
        assert ref is not None and entry.source is not None
        head = ref.parts[0]
        s = self.queues.get(head.ident.name) if len(ref.parts) == 1 else None
        pull = q.pull
        if s is None:
            if pull is not None:
                self.error(
                    report,
                    ref.span,
                    f"`{q.name}` pulls from `{pull.source.name}`, and this entry was called "
                    f"`from {ref.dotted}`",
                    labels=(Label(pull.span, "the relation"),),
                )
            else:
                self.error(
                    report,
                    ref.span,
                    f"`from {ref.dotted}`: an entry takes the KV from a queue, `from QUEUE[i]`",
                )
            return None
        if s.family and head.index is None:
            self.error(
                report,
                ref.span,
                f"`from {s.name}`: `{s.name}` is a family of {self.count(s)}; index it",
            )
            return None
        if not s.family and head.index is not None:
            self.error(
                report, ref.span, f"`from {s.name}[…]`: `{s.name}` is one queue, not a family"
            )
            return None
        if pull is not None and pull.source.name != s.name:
            self.error(
                report,
                ref.span,
                f"`{q.name}` pulls from `{pull.source.name}`, and this entry was called "
                f"`from {s.name}`",
                labels=(Label(pull.span, "the relation"),),
            )
            return None
        pool = self.leased_pool(s, ref, report)
        if pool is None:
            return None
        return _Source(entry.source.name, s, head.index, self.long(ref, pool, head.index))

    def from_pool(self, ref: ast.Ref, report: bool) -> ast.Ref | None:
        """What a link call's `from` gives back: a pool, or the pool a queue's entries lease."""
        head = ref.parts[0]
        s = self.queues.get(head.ident.name) if len(ref.parts) == 1 else None
        if s is None:
            return ref
        if s.family != (head.index is not None):
            what = "index it" if s.family else "it is one queue, not a family"
            self.error(report, ref.span, f"`from {s.name}`: {what}")
            return None
        pool = self.leased_pool(s, ref, report)
        return None if pool is None else self.long(ref, pool, head.index)

    def leased_pool(self, s: _Queue, at: ast.Ref, report: bool) -> str | None:
        """The long name of the pool every entry of `s` leases on every way through it."""
        if s.leased is None:
            s.leased = _leased(s)
        pool, why = s.leased
        if pool is None:
            self.error(report, at.span, f"`from {s.name}`: {why}")
            return None
        return f"{s.name}.{pool}"

    def request(
        self,
        req: ast.Request,
        *,
        report: bool,
        record: bool,
        stack: tuple[_CallKey, ...] = (),
    ) -> list[ast.Stmt]:
        """`request gw;`: the gateway's route, in place."""
        assert req.gateway is not None
        name = req.gateway.name
        q = self.queues.get(name)
        if q is None:
            self.error(report, req.gateway.span, f"`request {name}`: no queue `{name}` is declared")
            return []
        if not q.gateway:
            self.error(
                report,
                req.gateway.span,
                f"`request {name}`: queue `{name}` does not play `gateway`",
            )
            return []
        route = q.entries.get(("route", False))
        if route is None:
            return []
        stack = (*stack, (name, "route", False))
        block = self.body(q, route, None, None, (), report=False, record=record, stack=stack)
        if record:
            self.ctx.origin(req.span, "gateway request", block.body)
        return list(block.body)

    def latency_runs(self, t: ast.Transfer, report: bool) -> list[ast.Stmt]:
        """`run L.latency[k] (x);` for each link `transfer on` names that has a latency."""
        runs: list[ast.Stmt] = []
        for ref in t.on:
            q = self.queues.get(ref.parts[0].ident.name) if len(ref.parts) == 1 else None
            if q is None:
                continue
            if ("transfer", False) in q.entries and "link" in q.roles:
                self.error(
                    report,
                    ref.span,
                    f"`transfer on {q.name}`: link `{q.name}` has a `transfer` entry, which is "
                    "called instead",
                    help=f"write `{q.name}[…].transfer (n) from S to P (m);`",
                )
            elif q.latency is not None:
                stage = self.long(ref, f"{q.name}.latency", ref.parts[0].index)
                runs.append(ast.Run((stage,), None, q.latency, None, ref.span))
        return runs

    # ------------------------------------------------------------- references

    def split(self, ref: ast.Ref, report: bool) -> tuple[_Queue, str, ast.Expr | None] | None:
        """`Q[i].rest` as (queue, "rest", i), when the reference starts at a queue."""
        q = self.queues.get(ref.parts[0].ident.name)
        if q is None or len(ref.parts) < 2:
            return None
        indices = [p.index for p in ref.parts if p.index is not None]
        if len(indices) > 1:
            self.error(
                report, ref.span, f"`{ref.dotted}` has {len(indices)} indices; a member has one"
            )
        rest = ".".join(p.ident.name for p in ref.parts[1:])
        return q, rest, indices[0] if indices else None

    def caller_ref(self, ref: ast.Ref, resource: str, report: bool) -> ast.Expr:
        """A reference outside the queue's entries: `Q[i].p` is `Q.p[i]`, `Q.m` an attribute."""
        split = self.split(ref, report)
        if split is None:
            return ref
        q, rest, index = split
        kind = q.member(rest)
        long = f"{q.name}.{rest}"
        if kind in ("pool", "stage"):
            return self.long(ref, long, index)
        if kind == "attr":
            if index is not None:
                self.error(
                    report,
                    ref.span,
                    f"`{q.name}[…].{rest}` reads the request's attribute, which is no member's: "
                    f"write `{long}`",
                )
            if resource:
                return self.long(ref, long, None)
            return ast.Name(ast.Ident(long, ref.span), ref.span)
        self.error(
            report,
            ref.span,
            f"`{long}`: no entry of `{q.name}` marks or sets `{rest}`, and `{q.name}` has no "
            f"pool or stage `{rest}`",
        )
        return ref

    @staticmethod
    def long(at: Any, name: str, index: ast.Expr | None) -> ast.Ref:
        """The kernel reference `name[index]`, a single part with a long name, spanning `at`."""
        span = at.span
        return ast.Ref((ast.RefPart(ast.Ident(name, span), index, span),), span)

    def count(self, q: _Queue) -> str:
        v = self.ctx.const(q.size) if q.size is not None else None
        return "?" if v is None else f"{v:g}"


# ---------------------------------------------------------------- rewriting


def _is_node(value: Any) -> bool:
    return is_dataclass(value) and not isinstance(value, (Span, type))


class _Rewrite:
    """Rewrites the names and references under a node, knowing where each stands: in an index,
    as a value, or where a pool or stage stands (`resource`: "expr" in an observable's
    arguments, "stmt" in a statement's pool or stage); and the statements of
    every block, one into any number."""

    def __init__(self, x: _Queues, report: bool) -> None:
        self.x = x
        self.report = report
        self.bound: list[str] = []  # the aggregate indices in scope

    def error(self, span: Span, message: str, **kw: Any) -> None:
        self.x.error(self.report, span, message, **kw)

    def visit(self, n: Any, index: bool = False, resource: str = "") -> Any:
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
        return self.children(n, index)

    def children(self, n: Any, index: bool) -> Any:
        is_expr = isinstance(n, EXPR_TYPES)
        observable = isinstance(n, ast.Call) and n.func.name in OBSERVABLES
        changes = {}
        for fld in fields(n):
            if fld.name == "span":
                continue
            value = getattr(n, fld.name)
            res = "stmt" if not is_expr and fld.name in _RESOURCE_FIELDS else ""
            if isinstance(value, tuple):
                new = tuple(
                    self.visit(
                        v,
                        index and is_expr,
                        # price(s, s_hit, ds): only the first is a stage
                        "expr" if observable and (k == 0 or n.func.name != "price") else res,
                    )
                    if _is_node(v)
                    else v
                    for k, v in enumerate(value)
                )
                if any(a is not b for a, b in zip(new, value, strict=True)):
                    changes[fld.name] = new
            elif _is_node(value):
                new = self.visit(value, index and is_expr, res)
                if new is not value:
                    changes[fld.name] = new
        return replace(n, **changes) if changes else n

    def name(self, n: ast.Name, index: bool, resource: str) -> ast.Expr:
        return n

    def ref(self, n: ast.Ref, index: bool, resource: str) -> ast.Expr:
        return n

    def stmt(self, s: ast.Stmt) -> list[ast.Stmt]:
        return [s]


class _Caller(_Rewrite):
    """Outside the queues: entry calls and `request gw;` expanded, queue references resolved."""

    def __init__(self, x: _Queues, requests: bool) -> None:
        super().__init__(x, True)
        self.requests = requests  # whether `request gw;` may stand here

    def name(self, n: ast.Name, index: bool, resource: str) -> ast.Expr:
        if n.name == "self":
            self.error(n.span, "`self` is a member's index, inside the entries of a family")
        return n

    def ref(self, n: ast.Ref, index: bool, resource: str) -> ast.Expr:
        return self.x.caller_ref(n, resource, True)

    def stmt(self, s: ast.Stmt) -> list[ast.Stmt]:
        if isinstance(s, ast.EntryCall):
            return self.x.call(s, report=True, record=True, stack=())
        if isinstance(s, ast.Request) and s.gateway is not None:
            if not self.requests:
                self.x.ctx.error(
                    codes.SIDES,
                    s.span,
                    "`request` is a statement of the `session` inside `workload`",
                )
            return self.x.request(s, report=True, record=True)
        if isinstance(s, ast.Transfer) and s.on:
            return [*self.x.latency_runs(s, True), s]
        return [s]


class _Entry(_Rewrite):
    """Inside one entry of a queue, at one member: its own names resolved, its sets the queue's."""

    def __init__(
        self,
        x: _Queues,
        q: _Queue,
        entry: ast.Entry,
        member: ast.Expr | None,
        source: _Source | None,
        args: dict[ast.Ident, ast.Expr] | None,
        report: bool,
    ) -> None:
        super().__init__(x, report)
        self.q = q
        self.entry = entry
        self.member = member
        self.source = source
        # each parameter's argument, put in place as the caller wrote it (already kernel)
        self.args = {p.name: a for p, a in (args or {}).items()}
        self.params = {p.name for p in entry.params}
        self.gateway = entry.verb.name == "route"
        self.own = _own_attrs(entry, self.gateway)
        self.written = f"`{q.name}.{entry.verb.name}`"

    def own_ref(self, name: str, at: ast.Name | ast.Ref) -> ast.Expr:
        """The member's `name` (its pool `Q.p`, its stage `Q`), written where `at` is."""
        if self.member is None and isinstance(at, ast.Name):
            return ast.Name(ast.Ident(name, at.span), at.span)
        return _Queues.long(at, name, self.member)

    def across(self, span: Span, what: str) -> None:
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
            return self.own_ref(f"{q.name}.{x}", n)
        if x == q.name:
            return self.own_ref(x, n)
        if x in self.own:
            return n if self.gateway else ast.Name(ast.Ident(f"{q.name}.{x}", n.span), n.span)
        if self.gateway or x in _ENTRY_READS or x in self.x.names:
            return n
        if x in self.x.queues or x in self.x.resources:
            self.across(n.span, f"`{x}`, which is not a pool or stage of `{q.name}`")
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
                return self.own_ref(x if x == q.name else f"{q.name}.{x}", n)
            if self.gateway or not (x in self.x.queues or x in self.x.resources):
                return n
            if resource != "stmt":
                self.across(n.span, f"`{x}`, which is not a pool or stage of `{q.name}`")
            elif self.x.resources.get(x) == "pool":
                self.error(
                    n.span,
                    f"{self.written} allocates `{x}`, which is not a pool of `{q.name}`: an entry "
                    "holds, grows, loads and releases its queue's own pools and the pool its "
                    "`from` names",
                )
            return n
        if self.gateway:
            return self.x.caller_ref(n, resource, self.report)
        split = self.x.split(n, self.report)
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
                self.across(n.span, f"`{long}`, a pool of another queue")
            return _Queues.long(n, long, idx)
        if kind == "stage":
            if other is q:
                return _Queues.long(n, long, self.member if idx is None else idx)
            if resource != "stmt":
                self.across(n.span, f"`{long}`, a stage of another queue")
            return _Queues.long(n, long, idx)
        if kind == "attr":
            if other is not q:
                self.across(n.span, f"`{long}`, another queue's attribute")
            elif idx is not None:
                self.error(n.span, f"`{q.name}[…].{rest}` is the request's: write `{long}`")
            return ast.Name(ast.Ident(long, n.span), n.span)
        return self.x.caller_ref(n, resource, self.report)

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
            stage = _Queues.long(s, q.name, self.member)
            return [replace(s, stages=(stage,))]
        if isinstance(s, ast.Serving):
            if s.verb != "tool" and not s.on and s.index is None and q.serve is not None:
                return [replace(s, on=(_Queues.long(s, q.name, self.member),))]
            return [s]
        if isinstance(s, ast.Transfer):
            if s.on:
                return [*self.x.latency_runs(s, self.report), s]
            return self.read(s) if s.index is None else [s]
        if isinstance(s, (ast.Turn, ast.End)):
            word = "turn" if isinstance(s, ast.Turn) else "end"
            if self.report:
                self.x.ctx.error(
                    codes.SIDES,
                    s.span,
                    f"`{word}` is the session's: a queue's entry is done with a request when its "
                    "block is, and whether the session goes on is the workload's",
                )
            return [s]
        if isinstance(s, ast.Request):
            if self.report:
                self.x.ctx.error(
                    codes.SIDES,
                    s.span,
                    "`request` inside a queue's entry: a server does not request itself",
                )
            return []
        return [s]

    def read(self, t: ast.Transfer) -> list[ast.Stmt]:
        """A `transfer` without `on`: in a reader's entry called `from` its source, the read."""
        q = self.q
        if q.pull is None:
            if q.name in self.x.readers:
                return [t]  # its relation is in error
            self.error(
                t.span,
                f"`transfer` without `on` in queue `{q.name}`, which pulls from no queue",
                help=f"declare `{q.name} pull SOURCE share …;`, or write `transfer on …`",
            )
            return [t]
        if self.source is None:
            return [t]
        source = self.x.queues[q.pull.source.name]
        out: list[ast.Stmt] = []
        latency = q.pull.latency
        if latency is not None and self.x.ctx.const(latency) is not None:
            stage = _Queues.long(t, f"{q.name}.nic.latency", self.member)
            out.append(ast.Run((stage,), None, latency, None, t.span))
        nics = (
            _Queues.long(t, f"{source.name}.nic", self.source.index),
            _Queues.long(t, f"{q.name}.nic", self.member),
        )
        out.append(ast.Run(nics, None, t.work, None, t.span))
        out.append(ast.Load(t.dest, t.amount, t.span))
        out.append(ast.Release(t.source, t.span))
        return out


# ------------------------------------------------------------------ helpers


def _role_list() -> str:
    names = list(ROLES)
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def _positive_integer(v: float | None) -> bool:
    return v is not None and math.isfinite(v) and v >= 1 and v == int(v)


def _takes_from(entry: ast.Entry) -> bool:
    """Whether an entry is called `from` a queue: a decode entry with `from NAME`."""
    return entry.source is not None and entry.verb.name == "decode"


def _own_attrs(entry: ast.Entry, gateway: bool) -> set[str]:
    """The names an entry makes the queue's: what it marks, and unless it is a gateway's route,
    what it sets, chooses or binds at admission."""
    params = {p.name for p in entry.params}
    out = set()
    for n in walk(entry.body):
        if isinstance(n, ast.Mark):
            out.add(n.name.name)
        elif not gateway and isinstance(n, (ast.Set, ast.Choose)):
            out.add(n.target.name)
        elif not gateway and isinstance(n, ast.Binding):
            out.add(n.name.name)
    return out - params


def _must_lease(stmts: tuple[ast.Stmt, ...]) -> set[str]:
    """The pools leased on every way through `stmts`."""
    out: set[str] = set()
    for s in stmts:
        if isinstance(s, ast.Hold):
            if s.lease is not None:
                out.add(s.lease.pool.dotted)
            out |= _must_lease(s.body.body)
        elif isinstance(s, (ast.Branch, ast.BranchWith)):
            other = _must_lease(s.otherwise.body) if s.otherwise is not None else set()
            out |= _must_lease(s.then.body) & other
        elif isinstance(s, ast.Loop):
            out |= _must_lease(s.body.body)
    return out


def _leased(s: _Queue) -> tuple[str | None, str | None]:
    """(the pool every entry of `s` leases on every way through it, None) or (None, why not)."""
    entries = [e for (verb, _), e in s.entries.items() if verb != "route"]
    leases = [n for e in entries for n in walk(e.body) if isinstance(n, ast.Lease)]
    own = [n.pool.dotted for n in leases if n.pool.dotted in s.pools]
    if not own:
        return None, f"no entry of `{s.name}` leases a pool, so it has nothing to take"
    pool = own[0]
    for e in entries:
        if pool not in _must_lease(e.body.body):
            return None, (
                f"`{s.name}.{e.verb.name}` does not lease `{pool}` on every way through it, so a "
                "request that went through it would have no KV to take; a `from` needs every "
                f"entry of `{s.name}` to lease `{pool}`"
            )
    return pool, None
