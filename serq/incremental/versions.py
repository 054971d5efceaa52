"""A version of a file as the incremental analysis sees it, and which units changed.

`track(previous, layout, load)` makes a `Version` from the file's last: its `Names` are
the last version's with the units that left taken out and those that came put in (a unit
is the same object in both versions when its text and place in the cut did not change:
`serq.syntax.layout`), and each `use` reads its libraries again; one whose libraries read
otherwise now counts as a unit that left and came back. `changed_units` compares two
versions by unit identity, halving over the unit lists with comparisons in C.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from serq.incremental.names import Names
from serq.incremental.summary import Summary, summarize, summarize_use
from serq.syntax import ast
from serq.syntax.layout import Layout, Unit, common_prefix, common_suffix
from serq.syntax.scanner import FN_CLOSE, FN_HEAD

Loader = Callable[[str], Any]

Libraries = dict[int, tuple[Unit, Any, frozenset[str]]]  # id(use unit) -> (unit, read, files)


@dataclass(frozen=True)
class Version:
    """One version of a file as the analysis sees it: its layout, its names, and what each
    of its `use` units read (the libraries' parses, and the files, absolute)."""

    layout: Layout
    names: Names
    libraries: Libraries

    @property
    def files(self) -> frozenset[str]:
        """The files read through `use`."""
        return frozenset(f for _, _, files in self.libraries.values() for f in files)

    def loader(self, load: Loader) -> Loader:
        """A loader that reads the libraries as this version read them (`load` the rest): a
        run over an older version sees the libraries it saw."""
        read = {
            os.path.normcase(os.path.abspath(path)): result
            for _, found, _ in self.libraries.values()
            for path, result in found
        }

        def cached(path: str):
            found = read.get(os.path.normcase(os.path.abspath(path)))
            return found if found is not None else load(path)

        return cached


def track(previous: Version | None, layout: Layout, load: Loader) -> Version:
    """The version of `layout`, its names made from `previous`'s (the version of the same
    file before) for the units it shares with it; every `use` reads its libraries again,
    and one whose libraries changed counts as a new unit."""
    if previous is None or previous.layout.file != layout.file:
        libraries: Libraries = {}
        pairs = [(u, summary_of(u, layout.file, libraries, load)) for u in layout.units]
        return Version(layout, Names.of(pairs), libraries)
    removed, added = changed_units(previous, layout, load)
    libraries = {k: v for k, v in previous.libraries.items() if k not in {id(u) for u in removed}}
    for unit in added:
        libraries.pop(id(unit), None)
    pairs = [(u, summary_of(u, layout.file, libraries, load)) for u in added]
    names = previous.names.edited(removed, pairs)
    return Version(layout, names, libraries)


def changed_units(
    old: Version, layout: Layout, load: Loader | None
) -> tuple[list[Unit], list[Unit]]:
    """The units of `old` that `layout` does not have and those it has that `old` has not;
    with `load`, a `use` whose libraries read otherwise now is in both."""
    first, old_stop, new_stop = _common(old.layout.units, layout.units)
    gone = old.layout.units[first:old_stop]
    came = layout.units[first:new_stop]
    kept = set(map(id, gone)) & set(map(id, came))
    removed = [u for u in gone if id(u) not in kept]
    added = [u for u in came if id(u) not in kept]
    if load is not None:
        out = {id(u) for u in removed}
        for key, (unit, read, _) in old.libraries.items():
            if key not in out and _read_libraries(unit, layout.file, load)[0] != read:
                removed.append(unit)
                added.append(unit)
    return removed, added


def summary_of(unit: Unit, file: str, libraries: Libraries, load: Loader) -> Summary:
    """The summary of `unit`: kept on it, but a `use`'s, which reads its libraries (what
    it read goes in `libraries`)."""
    if any(isinstance(n, ast.Use) for n in unit.parsed.nodes):
        read, files = _read_libraries(unit, file, load)
        libraries[id(unit)] = (unit, read, files)
        parsed = [r.module.all_items() for _, r in read if not isinstance(r, str)]
        keys = [os.path.normcase(os.path.abspath(p)) for p, _ in read]
        return summarize_use(unit.parsed.nodes, keys, parsed)
    summary = unit.memo.get("summary")
    if summary is None:
        core = unit.kind in (FN_HEAD, FN_CLOSE)
        summary = unit.memo["summary"] = summarize(unit.parsed.nodes, core)
    return summary


def _common(a: list[Unit], b: list[Unit]) -> tuple[int, int, int]:
    """The extent of the units `a` and `b` do not share at either end: `a[first:a_stop]`
    and `b[first:b_stop]` (list comparisons in C, units compared by identity)."""
    first = common_prefix(a, b)
    last = common_suffix(a, b, min(len(a), len(b)) - first)
    return first, len(a) - last, len(b) - last


def _read_libraries(unit: Unit, file: str, load: Loader) -> tuple[tuple, frozenset[str]]:
    """What the `use`s of `unit` read, as the expander's loader reads it: each file with
    its parse (or why it could not be read), following the libraries' own `use`s."""
    from serq.expand.loader import STD_LIBRARIES

    read: list[tuple[str, Any]] = []
    seen: set[str] = set()
    todo: list[tuple[str, ast.Use]] = [
        (file, n) for n in unit.parsed.nodes if isinstance(n, ast.Use)
    ]
    while todo:
        where, use = todo.pop(0)
        if use.path in STD_LIBRARIES:
            continue
        base = os.path.dirname(where) if where and not where.startswith("<") else "."
        path = os.path.join(base, use.path)
        key = os.path.normcase(os.path.abspath(path))
        if key in seen:
            continue
        seen.add(key)
        result = load(path)
        read.append((path, result))
        if not isinstance(result, str):
            todo.extend((path, n) for n in result.module.all_items() if isinstance(n, ast.Use))
    files = frozenset(os.path.abspath(p) for p, _ in read)
    return tuple(read), files
