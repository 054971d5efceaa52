"""`hidden`: what the workload hides, and the places the scheduler may not read it.

A hidden attribute is the target's: the scheduler may not read it where it
decides (spec §3, hidden). This module has the two static halves of the rule:

- the declaration: `cached` and `computed` are the scheduler's own and cannot
  be hidden, a hidden name is a session attribute (something `set`s or
  `choose`s it, or it is built in), and it is hidden once;
- the per-position table: a hidden attribute is refused in a hold's units,
  reserve and reuse, a queue or eviction key, a spill clause, a ps stage's
  capacity, and a step stage's budget, chunk, cost and serve keys, however the
  session got there.

The server-side analysis (a run reveals it, decisions before that) is `reveal`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from serq.diagnostics import Diagnostic, Edit, Fix, Label, Span, codes
from serq.link.checks.places import Place, attributes, broken, names, sites
from serq.link.checks.removal import remove_read
from serq.syntax import ast

SCHEDULER_SET = frozenset({"cached", "computed"})

# The places where the scheduler reads: a hidden attribute is refused there.
FORBIDDEN = frozenset(
    {
        Place.HEADER,
        Place.EVICT,
        Place.QUEUE,
        Place.PS,
        Place.BUDGET,
        Place.COST,
        Place.SERVE,
        Place.PREEMPT,
    }
)


def hidden_names(kernel: ast.Module) -> dict[str, ast.Ident]:
    """The hidden attributes of `kernel`, each with where it is first hidden."""
    out: dict[str, ast.Ident] = {}
    for item in kernel.items:
        if isinstance(item, ast.Workload):
            for clause in item.clauses:
                if isinstance(clause, ast.Hidden):
                    for ident in clause.names:
                        out.setdefault(ident.name, ident)
    return out


def check(kernel: ast.Module) -> Iterator[Diagnostic]:
    """E-hidden for a wrong `hidden` and for a hidden attribute read where the scheduler reads."""
    yield from _declarations(kernel)
    hidden = hidden_names(kernel)
    if not hidden:
        return
    clauses = _clauses(kernel)
    hidings = Counter(
        ident.name
        for item in kernel.items
        if isinstance(item, ast.Workload)
        for clause in item.clauses
        if isinstance(clause, ast.Hidden)
        for ident in clause.names
    )
    for site in sites(kernel):
        if site.place not in FORBIDDEN:
            continue
        for n in names(site.expr):
            if n.name in hidden:
                yield Diagnostic.error(
                    codes.HIDDEN,
                    n.span,
                    f"`{n.name}` is hidden from the scheduler, but is read in {site.place.value}",
                    labels=(Label(hidden[n.name].span, "hidden here"),),
                    notes=(f"in {site.owner}",),
                    help="the scheduler may not read a hidden attribute where it decides; "
                    "a bound it may know is a second attribute that is not hidden",
                    # the read out where one edit takes it, else the attribute unhidden (when
                    # one `hidden` hides it: with two, taking out the first leaves it hidden)
                    fix=remove_read(site, n)
                    or (
                        unhide(clauses, hidden[n.name], "unsafe") if hidings[n.name] == 1 else None
                    ),
                )


def _declarations(kernel: ast.Module) -> Iterator[Diagnostic]:
    attrs = attributes(kernel)
    unreadable = broken(kernel)
    seen: dict[str, ast.Ident] = {}
    for item in kernel.items:
        if not isinstance(item, ast.Workload):
            continue
        for clause in item.clauses:
            if not isinstance(clause, ast.Hidden):
                continue
            for ident in clause.names:
                name = ident.name
                if name in seen:
                    yield Diagnostic.error(
                        codes.HIDDEN,
                        ident.span,
                        f"`{name}` is hidden twice",
                        labels=(Label(seen[name].span, "first hidden here"),),
                        fix=unhide({name: clause}, ident, "safe", f"remove the second `{name}`"),
                    )
                    continue
                seen[name] = ident
                if name in SCHEDULER_SET:
                    yield Diagnostic.error(
                        codes.HIDDEN,
                        ident.span,
                        f"`{name}` cannot be hidden: the scheduler sets it",
                        fix=unhide({name: clause}, ident, "safe"),
                    )
                elif name not in attrs and not unreadable:
                    yield Diagnostic.error(
                        codes.HIDDEN,
                        ident.span,
                        f"hidden `{name}` is no session attribute: no `set` or `choose` assigns it",
                        help="hide an attribute the workload sets, such as the output length",
                        fix=unhide({name: clause}, ident, "unsafe"),
                    )


def _clauses(kernel: ast.Module) -> dict[str, ast.Hidden]:
    """The `hidden` clause that first hides each name."""
    out: dict[str, ast.Hidden] = {}
    for item in kernel.items:
        if isinstance(item, ast.Workload):
            for clause in item.clauses:
                if isinstance(clause, ast.Hidden):
                    for ident in clause.names:
                        out.setdefault(ident.name, clause)
    return out


def unhide(
    clauses: dict[str, ast.Hidden], ident: ast.Ident, applicability: str, title: str = ""
) -> Fix | None:
    """The edit that takes `ident` out of its `hidden` clause: the clause when it hides
    nothing else, else the name and the comma beside it."""
    clause = clauses.get(ident.name)
    if clause is None or ident not in clause.names:
        return None
    title = title or f"stop hiding `{ident.name}`"
    names = clause.names
    if len(names) == 1:
        return Fix(title, (Edit(clause.span, ""),), applicability)
    i = names.index(ident)
    if i > 0:  # `, name`: from the end of the name before
        before = names[i - 1].span
        s = ident.span
        span = Span(
            s.file, before.end, s.end, before.end_line, before.end_column, s.end_line, s.end_column
        )
    else:  # `name, `: to the start of the next
        s, after = ident.span, names[1].span
        span = Span(s.file, s.start, after.start, s.line, s.column, after.line, after.column)
    return Fix(title, (Edit(span, ""),), applicability)
