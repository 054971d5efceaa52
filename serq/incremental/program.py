"""One file's program analysed again after an edit, re-doing what the edit can change.

The front end's answer for a program P, `F(P)`, is the expander's and the linker's
diagnostics (and origins, and folded constants) when the whole program goes through
`serq.expand.run_passes` and the linker's passes (`serq.link`'s `declare`, `lower`,
`report_rules`; `serq.incremental.runs`). Taken as reported (before the merging of
duplicates that `expand` and `link` do last), they add up over a program's parts: with
`Names`' ties and closures (`serq.incremental.names`),

    F(P) = F(P - I) + F(S) - F(S - I)

for any set of units I closed under dependents and ties (`invalidated`), where S is I with
its context (`context`): what I adds to the program depends only on what I reads. So when
an edit replaces the units R by the units A, with I the units either side that may see the
change (I_old in the old version B, I_new in the new version C; the same units once R and
A are set aside), the new totals are

    F(C) = F(B) - (F(S_old) - F(S_old - I_old)) + (F(S_new) - F(S_new - I_new)),

four runs of the ordinary front end over small programs, however large the file. The
totals of B move to C's places unit by unit (a unit keeps its identity across versions:
`serq.syntax.layout`), and the output is made from them exactly as `expand` and `link`
make theirs: merged, sorted, the linker's rule findings at a place the lowering reported
dropped. Where diagnostics of one place differ but sort alike, their order is the order
the passes reported them in, found by a run over the units that report at that place.

What is kept (`Baseline`), for the last version that parsed without errors: its layout,
its `Names`, the totals (diagnostics as reported, origins with their kernel's text), the
folded `let` constants and the pool and stage families. A version with syntax errors
reports those and keeps the baseline; the next clean version is compared with it. Any run
that raises (a bug in serq) makes the next version a whole run, which reports it as
`serq check` does.
"""

from __future__ import annotations

import os
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

from serq.diagnostics import Diagnostic, Span
from serq.incremental.names import Overlay, context, invalidated, related
from serq.incremental.runs import (
    EMPTY_RUN,
    Failed,
    Loader,
    Origin,
    Run,
    Stopped,
    Totals,
    run_front_end,
)
from serq.incremental.versions import Version, changed_units
from serq.syntax import ast
from serq.syntax.document import module_of
from serq.syntax.layout import Layout, Unit
from serq.syntax.scanner import FN_CLOSE, FN_HEAD


@dataclass
class Baseline:
    """The last version analysed without syntax errors, and what it reported."""

    version: Version
    totals: Totals
    lets: Overlay[str, float | None]
    families: dict[tuple[str, str], tuple[int, bool]]


@dataclass
class Outcome:
    """The program's part of one version's analysis."""

    expand: tuple[Diagnostic, ...]  # as `expand` reports them
    link: tuple[Diagnostic, ...]  # as `link` reports them (no fix checked yet)
    origins: tuple[Origin, ...]
    lets: Overlay[str, float | None]
    families: dict[tuple[str, str], tuple[int, bool]]


class Program:
    """The analysis of one file's program, kept from version to version."""

    def __init__(self, load: Loader) -> None:
        self.load = load
        self.baseline: Baseline | None = None
        self.runs = 0  # the runs of the front end the last version cost (-1: one whole run)
        # the last edit's units: invalidated in the old version, in the new, with context
        self.last: tuple[set[Unit], set[Unit], set[Unit], set[Unit]] | None = None
        self._orders: dict[tuple, list[Diagnostic]] = {}

    # ------------------------------------------------------------------ entry

    def analyze(self, version: Version, stop: Callable[[], bool] | None = None) -> Outcome:
        """The program's diagnostics of `version` (one that parses without errors), from
        the last version's where there is one. `stop()` is asked before the runs."""
        base = self.baseline
        if base is not None and base.version.layout.file == version.layout.file:
            try:
                return self._edit(base, version, stop)
            except Failed:
                pass
        return self._whole(version)

    def _whole(self, version: Version) -> Outcome:
        """Analyse `version` as one run."""
        self.baseline = None
        run = run_front_end(module_of(version.layout), version.loader(self.load))
        totals = Totals.of(run)
        self.baseline = Baseline(version, totals, Overlay(run.lets), run.families)
        self.runs = -1
        self.last = None
        return self._outcome(self.baseline)

    # ------------------------------------------------------------------ edits

    def _edit(self, base: Baseline, version: Version, stop: Callable[[], bool] | None) -> Outcome:
        before, old, layout, names = (
            base.version,
            base.version.layout,
            version.layout,
            version.names,
        )
        removed, added = changed_units(before, layout, None)
        # a `use` whose libraries changed since is a unit replaced by itself
        for key, (unit, read, _) in before.libraries.items():
            now = version.libraries.get(key)
            if now is not None and now[1] != read:
                removed.append(unit)
                added.append(unit)
        if not removed and not added:  # only text between the units changed: they moved
            totals = base.totals.moved(_Mover(old, layout, [], []).move)
            self.baseline = Baseline(version, totals, base.lets, base.families)
            self.runs = 0
            self.last = (set(), set(), set(), set())
            return self._outcome(self.baseline)
        old_units = set(removed)
        new_units = set(added)
        # the units either side that may see the change: the same ones, `old_units` and
        # `new_units` aside (each side's closure may find more: until they agree)
        new_summaries = [names.summary(u) for u in added]
        stale_old = invalidated(before.names, old_units | related(before.names, new_summaries))
        while True:
            stale_new = invalidated(names, (stale_old - old_units) | new_units)
            more = (stale_new - new_units) - (stale_old - old_units)
            if not more:
                break
            stale_old = invalidated(before.names, stale_old | more)
        scope_old = context(before.names, stale_old)
        scope_new = context(names, stale_new)
        if stop is not None and stop():
            raise Stopped
        sets = [scope_old, scope_old - stale_old, scope_new, scope_new - stale_new]
        runs = [self._run(before, sets[0]), self._run(before, sets[1])]
        runs += [self._run(version, sets[2]), self._run(version, sets[3])]
        totals = base.totals.copy()
        totals.add(runs[0], -1)
        totals.add(runs[1], +1)
        gone = [(old.index_of(u), u) for u in removed]
        came = [(layout.index_of(u), u) for u in added]
        mover = _Mover(old, layout, gone, came)
        totals = totals.moved(mover.move)
        totals.add(runs[2], +1)
        totals.add(runs[3], -1)
        if mover.lost or not totals.consistent():
            raise Failed("the bookkeeping of an edit went wrong")  # analysed whole instead
        lets = base.lets.child()
        for unit in stale_old:
            for name in before.names.summary(unit).declares:
                if name in lets:
                    del lets[name]
        declared = {n for u in stale_new for n in names.summary(u).declares}
        for name, value in runs[2].lets.items():
            if name in declared:
                lets[name] = value
        families = base.families
        if any(names.summary(u).core for u in stale_new) or any(
            before.names.summary(u).core for u in stale_old
        ):
            families = dict(runs[2].families)
        self.baseline = Baseline(version, totals, lets, families)
        self.runs = sum(1 for units in sets if units)
        self.last = (stale_old, stale_new, scope_old, scope_new)
        return self._outcome(self.baseline)

    def _run(self, version: Version, units: set[Unit]) -> Run:
        if not units:
            return EMPTY_RUN
        return run_front_end(_submodule(version.layout, units), version.loader(self.load))

    # ----------------------------------------------------------------- output

    def _outcome(self, base: Baseline) -> Outcome:
        totals = base.totals
        expand = _unique(self._ordered(base, totals.expand, "expand"))
        lowering = self._ordered(base, totals.lowering, "lowering")
        from serq.link import combine
        from serq.link.checks import merge_rules

        link = combine(lowering, merge_rules(self._ordered(base, totals.rules, "rules")))
        origins = tuple(sorted(totals.origins.elements(), key=_origin_key))
        return Outcome(expand, link, origins, base.lets, base.families)

    def _ordered(self, base: Baseline, counter: Counter, phase: str) -> list[Diagnostic]:
        """The diagnostics of `counter` in source order, those of one place and code in the
        order the passes reported them."""
        items = sorted(counter.elements(), key=Diagnostic.sort_key)
        out: list[Diagnostic] = []
        i = 0
        while i < len(items):
            j = i + 1
            key = items[i].sort_key()
            while j < len(items) and items[j].sort_key() == key:
                j += 1
            group = items[i:j]
            if len(set(group)) > 1:
                group = self._reported_order(base, group, phase)
            out.extend(group)
            i = j
        return out

    def _reported_order(
        self, base: Baseline, group: list[Diagnostic], phase: str
    ) -> list[Diagnostic]:
        """The diagnostics of `group` (one place, one code) in the order the pass `phase`
        reports them: from a run over the units that can report at that place."""
        key = (phase, frozenset(Counter(group).items()))
        known = self._orders.get(key)
        if known is not None:
            return known
        layout, names = base.version.layout, base.version.names
        span = group[0].span
        found = group
        if span.file == layout.file:  # the unit there, and those that read it
            at = layout.unit_at(span.start)
            reporters = {layout.units[at]} if at >= 0 else set()
        else:  # a library's: the `use`s of its file, and those that read them
            reporters = set(names.declared("#file:" + os.path.normcase(os.path.abspath(span.file))))
        if reporters:
            run = self._run(base.version, context(names, invalidated(names, reporters)))
            wanted = Counter(group)
            reported = []
            for d in getattr(run, phase):
                if wanted[d] > 0:
                    wanted[d] -= 1
                    reported.append(d)
            if len(reported) == len(group):
                found = reported
        if len(self._orders) > 1000:
            self._orders.clear()
        self._orders[key] = found
        return found


def _origin_key(origin: Origin) -> tuple:
    span = origin[0]
    return (span.file, span.start, span.end, origin[1], origin[2])


def _unique(diagnostics: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    from serq.expand import unique

    return unique(diagnostics)


def _submodule(layout: Layout, units: set[Unit]) -> ast.Module:
    """The module of `units` of `layout`, in order and where they are; inside a `fn main`
    when the head is among them and the file has one."""
    wanted = {id(u) for u in units}
    indices = sorted(layout.index_of(u) for u in units)
    file, text, lines = layout.file, layout.text, layout.line_index
    fn = layout.fn_units()
    heads = [i for i in fn if layout.units[i].kind == FN_HEAD]
    closes = [i for i in fn if layout.units[i].kind == FN_CLOSE]
    first_head = heads[0] if heads else None
    first_close = closes[0] if closes else None
    outer: list = []
    inner: list = []
    main = None
    if heads and id(layout.units[heads[-1]]) in wanted:
        last = heads[-1]
        head = lines.span(file, layout.starts[last], layout.ends[last])
        nodes = layout.parsed(last).nodes
        name = nodes[0] if nodes else None
        main_name = name if isinstance(name, ast.Ident) else ast.Ident("main", head)
        if closes:
            c = closes[-1]
            main_span = head.cover(lines.span(file, layout.starts[c], layout.ends[c]))
        else:
            main_span = head.cover(lines.span(file, len(text), len(text)))
        main = (main_name, head, main_span)
    for i in indices:
        if layout.units[i].kind != "item":
            continue
        nodes = layout.parsed(i).nodes
        if (
            main is not None
            and first_head is not None
            and i > first_head
            and (first_close is None or i < first_close)
        ):
            inner.extend(nodes)
        else:
            outer.extend(nodes)
    fn_main = None if main is None else ast.FnMain(main[0], tuple(inner), main[1], main[2])
    return ast.Module(file, tuple(outer), fn_main, lines.span(file, 0, len(text)))


class _Mover:
    """Moves what the old version reported to the places of the new one, unit by unit: a
    place in a unit that is in both moves as the unit did (its columns too, on its first
    line); a place in a unit the edit replaced is `lost` (it should have been taken out)."""

    def __init__(
        self,
        old: Layout,
        new: Layout,
        removed: list[tuple[int, Unit]],
        added: list[tuple[int, Unit]],
    ) -> None:
        self.old = old
        self.new = new
        self.file = old.file
        self.gone = sorted(i for i, _ in removed)
        self.gone_set = set(self.gone)
        self.came = sorted(i for i, _ in added)
        self.lost = False
        self._spans: dict[Span, Span] = {}

    def move(self, value: Any) -> Any:
        return _rebuild(value, self.span)

    def span(self, s: Span) -> Span:
        if s.file != self.file:
            return s
        moved = self._spans.get(s)
        if moved is None:
            start = self._point(s.start, s.line, s.column, s.start)
            end = self._point(s.end, s.end_line, s.end_column, max(s.start, s.end - 1))
            moved = Span(s.file, start[0], end[0], start[1], start[2], end[1], end[2])
            if moved == s:
                moved = s
            self._spans[s] = moved
        return moved

    def _point(self, offset: int, line: int, column: int, at: int) -> tuple[int, int, int]:
        """Where the point `offset`, `line`:`column` (in the unit holding offset `at`) is now."""
        old = self.old
        k = bisect_right(old.starts, at) - 1
        if k < 0:
            return offset, line, column  # before the first unit: nothing there moved
        if k in self.gone_set:
            self.lost = True
            return offset, line, column
        rank = k - bisect_left(self.gone, k)  # it is the rank-th unit of both versions
        j = rank
        while True:
            moved = rank + bisect_right(self.came, j)
            if moved == j:
                break
            j = moved
        new = self.new
        d_column = new.columns[j] - old.columns[k] if line == old.lines[k] else 0
        return (
            offset + new.starts[j] - old.starts[k],
            line + new.lines[j] - old.lines[k],
            column + d_column,
        )


_FIELDS: dict[type, tuple[str, ...]] = {}


def _rebuild(value: Any, span: Callable[[Span], Span]) -> Any:
    """`value` with `span` applied to every span in it (dataclasses and tuples, any depth);
    `value` itself when nothing in it moved."""
    if isinstance(value, Span):
        return span(value)
    if isinstance(value, tuple):
        parts = tuple(_rebuild(v, span) for v in value)
        return value if all(a is b for a, b in zip(parts, value, strict=True)) else parts
    if is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        names = _FIELDS.get(cls)
        if names is None:
            names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
        old = [getattr(value, n) for n in names]
        new = [_rebuild(v, span) for v in old]
        if all(a is b for a, b in zip(new, old, strict=True)):
            return value
        return cls(*new)
    return value
