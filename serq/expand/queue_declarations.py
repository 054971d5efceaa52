"""The queues a program declares, sorted out, with the errors of their shape.

`Declarations` is what the queues pass reads before it rewrites any item: each queue's roles,
pools, `serve`, `nic`, link latency and entries (`declare_queue`), the pull relations
(`transfers.relate`), the lets and hidden attributes an entry may read, and the top-level pools
and stages. References to a queue's members resolve through it (`split`, `caller_ref`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from serq.diagnostics import Label, Span, codes, counted
from serq.diagnostics.suggest import did_you_mean
from serq.expand.context import Context
from serq.expand.walk import walk
from serq.syntax import ast

# Each role's entry and its number of parameters (spec §2, Queues: "Four roles").
ROLES: dict[str, tuple[str, int]] = {
    "gateway": ("route", 0),
    "prefill": ("prefill", 1),
    "decode": ("decode", 1),
    "link": ("transfer", 1),
}
ROLE_OF = {verb: role for role, (verb, _) in ROLES.items()}


@dataclass
class Queue:
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
class Source:
    """Inside an entry with `from NAME`: where the call took the KV from."""

    name: str  # the entry's `from` name
    queue: Queue | None  # the source queue
    index: ast.Expr | None  # its member
    pool: ast.Ref  # the pool its entries lease, at that member


class Declarations:
    """What one program declares: its queues and relations, and the names its entries may read."""

    def __init__(self, items: list[ast.Item], ctx: Context) -> None:
        self.ctx = ctx
        self.queues: dict[str, Queue] = {}
        self.pulls: list[ast.Pull] = []  # the relations that hold, in order
        self.policy: ast.Pull | None = None  # the first relation, which gives the share
        self.names: set[str] = set()  # the lets and the hidden attributes
        self.resources: dict[str, str] = {}  # each top-level pool and stage: "pool", "stage"
        self.readers = {i.reader.name for i in items if isinstance(i, ast.Pull)}

    def error(self, report: bool, span: Span, message: str, **kw: Any) -> None:
        """Report an `E-queue` error at `span` with `message`, when `report` is true."""
        if report:
            self.ctx.error(codes.QUEUE, span, message, **kw)

    def count(self, q: Queue) -> str:
        """The size of family `q` as written in a message ("?" when it is not constant)."""
        v = self.ctx.const(q.size) if q.size is not None else None
        return "?" if v is None else f"{v:g}"

    # ------------------------------------------------------------------ queues

    def declare_queue(self, node: ast.Queue) -> None:
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
                self.error(
                    True,
                    r.span,
                    f"unknown role `{r.name}`: a queue plays {_role_list()}",
                    **did_you_mean(r.name, ROLES, r.span),
                )
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
        q = Queue(node, size, tuple(roles), len(roles) == len(node.roles))
        self.queues[name] = q
        for m in node.members:
            self._member(q, m)
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
            q.attrs |= own_attrs(entry, verb == "route")

    def _member(self, q: Queue, m: ast.QueueMember) -> None:
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
            self._entry(q, m)

    def _entry(self, q: Queue, e: ast.Entry) -> None:
        verb = e.verb.name
        role = ROLE_OF.get(verb)
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
                f"`{q.name}.{verb}` takes {counted(count, 'parameter')}, as the role says; "
                f"it declares {len(e.params)}",
            )
        if e.source is not None and verb != "decode":
            self.error(
                True,
                e.source.span,
                f"`{verb}` takes no `from`: only a decode entry takes its KV from another queue",
            )
        key = (verb, takes_from(e))
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

    # ------------------------------------------------------------- references

    def split(self, ref: ast.Ref, report: bool) -> tuple[Queue, str, ast.Expr | None] | None:
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
            return long_ref(ref, long, index)
        if kind == "attr":
            if index is not None:
                self.error(
                    report,
                    ref.span,
                    f"`{q.name}[…].{rest}` reads the request's attribute, which is no member's: "
                    f"write `{long}`",
                )
            if resource:
                return long_ref(ref, long, None)
            return ast.Name(ast.Ident(long, ref.span), ref.span)
        self.error(
            report,
            ref.span,
            f"`{long}`: no entry of `{q.name}` marks or sets `{rest}`, and `{q.name}` has no "
            f"pool or stage `{rest}`",
        )
        return ref


def long_ref(at: Any, name: str, index: ast.Expr | None) -> ast.Ref:
    """The kernel reference `name[index]`, a single part with a long name, spanning `at`."""
    span = at.span
    return ast.Ref((ast.RefPart(ast.Ident(name, span), index, span),), span)


def takes_from(entry: ast.Entry) -> bool:
    """Whether an entry is called `from` a queue: a decode entry with `from NAME`."""
    return entry.source is not None and entry.verb.name == "decode"


def own_attrs(entry: ast.Entry, gateway: bool) -> set[str]:
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


def _role_list() -> str:
    names = list(ROLES)
    return ", ".join(names[:-1]) + f" or {names[-1]}"


def _positive_integer(v: float | None) -> bool:
    return v is not None and math.isfinite(v) and v >= 1 and v == int(v)
