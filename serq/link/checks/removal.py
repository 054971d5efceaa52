"""The fix that takes out a read the linker refuses: the term, the key or the clause it is in.

A context variable read outside its place (E-moment) or a hidden attribute read where
the scheduler decides (E-hidden) is often one term too many (`reserve (prompt + o)`),
one key of several (`queue by (o, waited)`) or an optional clause (`reserve`, `reuse`,
`chunk`, `queue by`, `serve by`, `evict by`, an `observe`). `remove_read(site, name)`
is the one edit that removes it, from the narrowest of these that holds the read:

- a term of a sum: `a + n`, `a - n`, `n + a`, with a product or a negation around `n`
  (`a + 2 * n`) going with it;
- a key of a `by (…)` list of more than one key (with its comma);
- the clause itself: a hold's `reserve` or `reuse`, a step stage's `chunk`, a pool's
  `queue by` or `evict by` or a stage's `serve by` of one key (their defaults apply:
  `queue fifo`, `evict lru`, `serve admission`), an `observe`.

It changes what the program means, so it is never safe: the editor offers it and does
not prefer it. The edit is built from the kernel's spans, which are the surface forms'
only where no sugar rewrote the expression, so every span it uses must lie, in order,
inside the node that holds the read, and the read inside what is removed: a read
that sugar moved (a `def`'s argument, an `at admission` binding substituted into
the header) gets no fix where its spans and its holder's do not line up. The spans do not show
parentheses, so `keep_parsing_fixes` drops a removal whose result does not parse; the
callers that have the text (`serq.api`, the language server) run it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from serq.diagnostics import Diagnostic, Edit, Fix, Span
from serq.expand.walk import walk, walk_children
from serq.link.checks.places import Site
from serq.syntax import ast

TITLE = "remove the read of"

# Options whose whole clause may go, when it holds one key: their default applies.
_DROPPABLE_KEYS = frozenset({"queue by", "serve by", "evict by"})


def remove_read(site: Site, name: ast.Name) -> Fix | None:
    """The edit that takes the read `name` out of the expression of `site`, or None."""
    try:
        return _term(site.expr, name) or _clause(site, name)
    except ValueError:  # spans out of order (a rewrite moved them): no fix, not a failure
        return None


# --------------------------------------------------------------------------- spans


def _inside(inner: Span, outer: Span) -> bool:
    return inner.file == outer.file and outer.start <= inner.start and inner.end <= outer.end


def _from_end(a: Span, b: Span) -> Span | None:
    """From the end of `a` to the end of `b`."""
    if a.file != b.file or a.end > b.end:
        return None
    return Span(a.file, a.end, b.end, a.end_line, a.end_column, b.end_line, b.end_column)


def _to_start(a: Span, b: Span) -> Span | None:
    """From the start of `a` to the start of `b`."""
    if a.file != b.file or a.start > b.start:
        return None
    return Span(a.file, a.start, b.start, a.line, a.column, b.line, b.column)


def _fix(name: ast.Name, what: str, span: Span | None, replacement: str = "") -> Fix | None:
    if span is None or not _inside(name.span, span):
        return None
    return Fix(f"{TITLE} `{name.name}`: drop {what}", (Edit(span, replacement),), "unsafe")


# --------------------------------------------------------------------------- terms


def _parents(root: ast.Expr, target: ast.Name) -> list[ast.Expr] | None:
    """The expressions from `root` down to `target`, both included."""
    up: dict[int, ast.Expr] = {}
    for n in walk(root):
        if n is target:
            path = [n]
            while id(path[-1]) in up:
                path.append(up[id(path[-1])])
            return path[::-1]
        for child in walk_children(n):
            up[id(child)] = n
    return None


def _term(expr: ast.Expr, name: ast.Name) -> Fix | None:
    path = _parents(expr, name)
    if path is None:
        return None
    i = len(path) - 1  # the term: `name`, and the products and negations around it
    while i > 0 and (
        (isinstance(path[i - 1], ast.Binary) and path[i - 1].op in ("*", "/"))
        or (isinstance(path[i - 1], ast.Unary) and path[i - 1].op == "-")
    ):
        i -= 1
    if i == 0:
        return None
    term, sum_ = path[i], path[i - 1]
    if not (isinstance(sum_, ast.Binary) and sum_.op in ("+", "-")):
        return None
    left, right, whole = sum_.left.span, sum_.right.span, sum_.span
    # neither operand in parentheses of its own: the sum's span starts and ends with them
    if left.start != whole.start or right.end != whole.end or not _inside(right, whole):
        return None
    if term is sum_.right:
        return _fix(name, "its term", _from_end(left, right))
    if sum_.op == "+":
        return _fix(name, "its term", _to_start(left, right))
    return None


# ------------------------------------------------------------------------- clauses


def _clause(site: Site, name: ast.Name) -> Fix | None:
    holder = site.holder
    if isinstance(holder, ast.Option):
        return _option(holder, site.expr, name)
    if isinstance(holder, ast.Choose) and site.expr in holder.keys:
        return _key(holder.keys, holder.span, site.expr, name)
    if isinstance(holder, ast.HoldPool) and site.slot == "reserve" and holder.reserve is not None:
        units, reserve = holder.units.span, holder.reserve.span
        if not (_inside(units, holder.span) and _inside(reserve, holder.span)):
            return None
        # `) reserve (r` goes, and the reserve's `)` closes the units
        return _fix(name, "the `reserve`", _from_end(units, reserve))
    if isinstance(holder, ast.Hold) and site.slot == "reuse" and holder.reuse is not None:
        before = [e for p in holder.pools for e in (p.units, p.reserve) if e is not None]
        reuse = holder.reuse.span
        if not before or not all(_inside(e.span, holder.span) for e in (*before, holder.reuse)):
            return None
        # `) reuse (r` goes, and the reuse's `)` closes the last pool's clause
        return _fix(name, "the `reuse`", _from_end(before[-1].span, reuse))
    if isinstance(holder, ast.Observe) and site.expr is holder.value:
        return _fix(name, "the `observe`", holder.span)
    return None


def _option(opt: ast.Option, expr: ast.Expr, name: ast.Name) -> Fix | None:
    if opt.key == "chunk" and expr is opt.value:
        return _fix(name, "the `chunk`", opt.span)
    if expr not in opt.keys:
        return None
    if len(opt.keys) == 1:
        if opt.key in _DROPPABLE_KEYS and _inside(expr.span, opt.span):
            return _fix(name, f"`{opt.key}`", opt.span)
        return None
    return _key(opt.keys, opt.span, expr, name)


def _key(keys: tuple[ast.Expr, ...], within: Span, key: ast.Expr, name: ast.Name) -> Fix | None:
    """One key of a list of several, with the comma after it (before it, for the last)."""
    if len(keys) < 2 or not all(_inside(k.span, within) for k in keys):
        return None
    if any(a.span.end > b.span.start for a, b in zip(keys, keys[1:], strict=False)):
        return None
    i = next((j for j, k in enumerate(keys) if k is key), None)
    if i is None:
        return None
    if i > 0:
        return _fix(name, "its key", _from_end(keys[i - 1].span, key.span))
    return _fix(name, "its key", _to_start(key.span, keys[1].span))


# -------------------------------------------------------------------- verification


def keep_parsing_fixes(
    diagnostics: Iterable[Diagnostic],
    text: str,
    path: str,
    syntax: Callable[[str], Iterable[Diagnostic]] | None = None,
) -> list[Diagnostic]:
    """`diagnostics`, each removal fix kept only when `text` (the file `path`) parses
    without an error once it is applied (a removal in another file is not kept); a
    hidden read whose removal goes gets back its other fix, the attribute unhidden.
    `syntax(edited)` gives the syntax diagnostics of an edited text (default: a parse)."""
    from dataclasses import replace

    from serq.diagnostics import Severity
    from serq.syntax import parse

    def parses(fix: Fix) -> bool:
        if not all(e.span.file == path for e in fix.edits):
            return False
        edited = text
        for e in sorted(fix.edits, key=lambda e: e.span.start, reverse=True):
            edited = edited[: e.span.start] + e.replacement + edited[e.span.end :]
        found = parse(edited, path).diagnostics if syntax is None else syntax(edited)
        return not any(x.severity >= Severity.ERROR for x in found)

    out = []
    for d in diagnostics:
        fix = d.fix
        if fix is not None and fix.title.startswith(TITLE):
            if not parses(fix):
                d = replace(d, fix=_unhiding(d, text, path) if d.code == "E-hidden" else None)
            else:
                d = replace(d, fix=_whole_lines(fix, text))
        out.append(d)
    return out


def _whole_lines(fix: Fix, text: str) -> Fix:
    """`fix` with a deletion that leaves its lines blank (a statement, an option on its
    own line) taking those lines, their indentation and line break with it."""
    (edit,) = fix.edits
    span = edit.span
    start = text.rfind("\n", 0, span.start) + 1
    end = text.find("\n", span.end)
    if (
        edit.replacement
        or end < 0
        or text[start : span.start].strip()
        or text[span.end : end].strip()
    ):
        return fix
    whole = Span(span.file, start, end + 1, span.line, 1, span.end_line + 1, 1)
    return Fix(fix.title, (Edit(whole, ""),), fix.applicability)


def _unhiding(d: Diagnostic, text: str, path: str) -> Fix | None:
    """The fix that stops hiding what `d` reads, from the `hidden` clause of `text`."""
    from serq.link.checks.hidden import unhide
    from serq.syntax import parse

    module = parse(text, path).module
    items = list(module.items) + (list(module.main.items) if module.main is not None else [])
    spans = {label.span for label in d.labels if label.text == "hidden here"}
    for item in items:
        if isinstance(item, ast.Workload):
            for clause in item.clauses:
                if isinstance(clause, ast.Hidden):
                    for ident in clause.names:
                        if ident.span in spans:
                            return unhide({ident.name: clause}, ident, "unsafe")
    return None
