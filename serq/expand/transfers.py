"""How KV moves between queues: pull relations, reads, links' waits, and what a `from` takes.

`relate` checks a pull relation `R pull S [latency x] share pol;` and records it on the reader;
`pull_read` is the read a reader's `transfer` without `on` stands for (the relation's latency,
then both NICs); `latency_runs` is the fixed wait of each link a `transfer on` names;
`call_source` and `from_pool` find the pool a call's `from` takes the KV from, the one every
entry of the source queue leases (`leased_pool`).
"""

from __future__ import annotations

from serq.diagnostics import Label
from serq.expand.queue_declarations import Declarations, Queue, Source, long_ref
from serq.expand.walk import walk
from serq.syntax import ast


def relate(declared: Declarations, pull: ast.Pull) -> None:
    """Record `pull` on its reader in `declared`: both queues declared above, distinct, with a
    NIC; one relation per reader, one policy per program."""
    r, s = pull.reader.name, pull.source.name
    written = f"`{r} pull {s}`"
    reader, source = declared.queues.get(r), declared.queues.get(s)
    if reader is None:
        declared.error(True, pull.reader.span, f"{written}: no queue `{r}` is declared above")
    if source is None:
        declared.error(True, pull.source.span, f"{written}: no queue `{s}` is declared above")
    if reader is None or source is None:
        return
    if reader is source:
        declared.error(True, pull.source.span, f"{written}: a queue reads from another")
        return
    for q, ident, side in ((source, pull.source, "source"), (reader, pull.reader, "reader")):
        if q.nic is None:
            declared.error(
                True,
                ident.span,
                f"{written}: queue `{q.name}` has no `nic`; a read runs over the source's "
                "NIC and the reader's",
                help=f"declare the {side}'s NIC in `queue {q.name}`: `nic ps(...);`",
            )
    if pull.latency is not None and declared.ctx.const(pull.latency) is None:
        declared.error(
            True,
            pull.latency.span,
            "`latency` is a number or a constant over `let`s: the reader's fixed wait "
            "before each read",
        )
    policy = declared.policy
    if policy is not None and pull.policy != policy.policy:
        declared.error(
            True,
            pull.span,
            "the program divides shared stages by one policy: every relation names the same",
            labels=(Label(policy.span, f"`share {policy.policy}` here"),),
        )
    if reader.pull is not None:
        declared.error(
            True,
            pull.span,
            f"`{r}` pulls from `{reader.pull.source.name}` already: one relation per reader",
            labels=(Label(reader.pull.span, "the first relation"),),
        )
        return
    reader.pull = pull
    declared.pulls.append(pull)
    if declared.policy is None:
        declared.policy = pull


def pull_read(
    declared: Declarations,
    t: ast.Transfer,
    q: Queue,
    member: ast.Expr | None,
    source: Source | None,
    report: bool,
) -> list[ast.Stmt]:
    """A `transfer` without `on` in an entry of `q` at `member`: in a reader's entry called
    `from` its `source`, the read."""
    if q.pull is None:
        if q.name in declared.readers:
            return [t]  # its relation is in error
        declared.error(
            report,
            t.span,
            f"`transfer` without `on` in queue `{q.name}`, which pulls from no queue",
            help=f"declare `{q.name} pull SOURCE share …;`, or write `transfer on …`",
        )
        return [t]
    if source is None:
        return [t]
    from_queue = declared.queues[q.pull.source.name]
    out: list[ast.Stmt] = []
    latency = q.pull.latency
    if latency is not None and declared.ctx.const(latency) is not None:
        stage = long_ref(t, f"{q.name}.nic.latency", member)
        out.append(ast.Run((stage,), None, latency, None, t.span))
    nics = (
        long_ref(t, f"{from_queue.name}.nic", source.index),
        long_ref(t, f"{q.name}.nic", member),
    )
    out.append(ast.Run(nics, None, t.work, None, t.span))
    out.append(ast.Load(t.dest, t.amount, t.span))
    out.append(ast.Release(t.source, t.span))
    return out


def latency_runs(declared: Declarations, t: ast.Transfer, report: bool) -> list[ast.Stmt]:
    """`run L.latency[k] (x);` for each link `transfer on` names that has a latency."""
    runs: list[ast.Stmt] = []
    for ref in t.on:
        q = declared.queues.get(ref.parts[0].ident.name) if len(ref.parts) == 1 else None
        if q is None:
            continue
        if ("transfer", False) in q.entries and "link" in q.roles:
            declared.error(
                report,
                ref.span,
                f"`transfer on {q.name}`: link `{q.name}` has a `transfer` entry, which is "
                "called instead",
                help=f"write `{q.name}[…].transfer (n) from S to P (m);`",
            )
        elif q.latency is not None:
            stage = long_ref(ref, f"{q.name}.latency", ref.parts[0].index)
            runs.append(ast.Run((stage,), None, q.latency, None, ref.span))
    return runs


def call_source(
    declared: Declarations, call: ast.EntryCall, q: Queue, entry: ast.Entry, report: bool
) -> Source | None:
    """The queue a decode entry's call takes the KV from, and the pool it leased there."""
    ref = call.source
    assert ref is not None and entry.source is not None
    head = ref.parts[0]
    s = declared.queues.get(head.ident.name) if len(ref.parts) == 1 else None
    pull = q.pull
    if s is None:
        if pull is not None:
            declared.error(
                report,
                ref.span,
                f"`{q.name}` pulls from `{pull.source.name}`, and this entry was called "
                f"`from {ref.dotted}`",
                labels=(Label(pull.span, "the relation"),),
            )
        else:
            declared.error(
                report,
                ref.span,
                f"`from {ref.dotted}`: an entry takes the KV from a queue, `from QUEUE[i]`",
            )
        return None
    if s.family and head.index is None:
        declared.error(
            report,
            ref.span,
            f"`from {s.name}`: `{s.name}` is a family of {declared.count(s)}; index it",
        )
        return None
    if not s.family and head.index is not None:
        declared.error(
            report, ref.span, f"`from {s.name}[…]`: `{s.name}` is one queue, not a family"
        )
        return None
    if pull is not None and pull.source.name != s.name:
        declared.error(
            report,
            ref.span,
            f"`{q.name}` pulls from `{pull.source.name}`, and this entry was called "
            f"`from {s.name}`",
            labels=(Label(pull.span, "the relation"),),
        )
        return None
    pool = leased_pool(declared, s, ref, report)
    if pool is None:
        return None
    return Source(entry.source.name, s, head.index, long_ref(ref, pool, head.index))


def from_pool(declared: Declarations, ref: ast.Ref, report: bool) -> ast.Ref | None:
    """What a link call's `from` gives back: a pool, or the pool a queue's entries lease."""
    head = ref.parts[0]
    s = declared.queues.get(head.ident.name) if len(ref.parts) == 1 else None
    if s is None:
        return ref
    if s.family != (head.index is not None):
        what = "index it" if s.family else "it is one queue, not a family"
        declared.error(report, ref.span, f"`from {s.name}`: {what}")
        return None
    pool = leased_pool(declared, s, ref, report)
    return None if pool is None else long_ref(ref, pool, head.index)


def leased_pool(declared: Declarations, s: Queue, at: ast.Ref, report: bool) -> str | None:
    """The long name of the pool every entry of `s` leases on every way through it."""
    if s.leased is None:
        s.leased = _leased(s)
    pool, why = s.leased
    if pool is None:
        declared.error(report, at.span, f"`from {s.name}`: {why}")
        return None
    return f"{s.name}.{pool}"


def _leased(s: Queue) -> tuple[str | None, str | None]:
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
