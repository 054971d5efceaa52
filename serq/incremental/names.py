"""Which units declare, read and bind each name, in one version of a program, and the sets
of units an edit has to be analysed again with.

`Names` maps each name to the units that declare, read or bind it (their `Summary`), and
keeps the core units. A version shares what did not change with the one it was made from
(`Overlay`): making it costs the units the edit replaced, not the program.

Two closures, after `serq.incremental.program`'s argument:

- `invalidated(names, seed)`: the units whose contribution to the diagnostics may change
  when the `seed` units change: those that read what a unit of the set declares
  (dependents), those that declare what it declares (a clash, or which declaration is the
  first, is theirs together), the readers of a hold's binding and the holds that bind
  what it reads (the first read outside the hold is the one reported), and all of the
  core when one core unit is in it;
- `context(names, units)`: `units` with everything they read, at any distance (the
  declarations of the names they read, and those declarations' own), closed under the
  same ties as above, so that analysing those units alone gives each of them what the
  whole program would.

An unknown name reads more than its own name: its `did you mean` weighs every declared
name close to it (`near`). Both closures count those as read: the context of a unit that
reads a name nothing declares takes the declarations of the close names, and a unit that
declares a name invalidates the readers of the unknown names close to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from serq.incremental.summary import Summary
from serq.syntax.layout import Unit

K = TypeVar("K")
V = TypeVar("V")

_NONE: frozenset = frozenset()
_MAX_DEPTH = 12  # an overlay deeper than this is flattened into one dict


class Overlay(Generic[K, V]):
    """A map made from an older one by a few changes: it holds the changes and reads the
    rest through its parent (which never changes); a deep chain is flattened."""

    __slots__ = ("own", "parent", "depth")

    def __init__(self, own: dict[K, V] | None = None, parent: Overlay | None = None) -> None:
        self.own: dict[K, V] = own if own is not None else {}
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1

    def get(self, key: K, default: V | None = None) -> V | None:
        layer: Overlay | None = self
        while layer is not None:
            value = layer.own.get(key, _MISSING)
            if value is not _MISSING:
                return default if value is _DELETED else value
            layer = layer.parent
        return default

    def __contains__(self, key: K) -> bool:
        return self.get(key, _MISSING) is not _MISSING  # type: ignore[arg-type]

    def __setitem__(self, key: K, value: V) -> None:
        self.own[key] = value

    def __delitem__(self, key: K) -> None:
        self.own[key] = _DELETED  # type: ignore[assignment]

    def child(self) -> Overlay[K, V]:
        """A new version on top of this one (this one flattened first when deep)."""
        if self.depth < _MAX_DEPTH:
            return Overlay({}, self)
        return Overlay({}, Overlay(self.flat()))

    def flat(self) -> dict[K, V]:
        """Every entry, in one new dict."""
        layers = []
        layer: Overlay | None = self
        while layer is not None:
            layers.append(layer.own)
            layer = layer.parent
        merged: dict[K, V] = {}
        for own in reversed(layers):
            merged.update(own)
        return {k: v for k, v in merged.items() if v is not _DELETED}

    def items(self) -> Iterator[tuple[K, V]]:
        return iter(self.flat().items())


_MISSING = object()
_DELETED = object()


class Names:
    """One version's names: who declares, reads and binds each, and the core units."""

    __slots__ = ("declarers", "readers", "binders", "core", "summaries", "_unresolved", "_names")

    def __init__(self) -> None:
        self.declarers: Overlay[str, frozenset[Unit]] = Overlay()
        self.readers: Overlay[str, frozenset[Unit]] = Overlay()
        self.binders: Overlay[str, frozenset[Unit]] = Overlay()
        self.core: frozenset[Unit] = frozenset()
        self.summaries: Overlay[int, Summary] = Overlay()  # by id(unit)
        self._unresolved: tuple[str, ...] | None = None  # made when first asked for
        self._names: dict[int, list[str]] | None = None

    @classmethod
    def of(cls, units: Iterable[tuple[Unit, Summary]]) -> Names:
        """The names of a whole program, its units and their summaries."""
        declarers: dict[str, set[Unit]] = {}
        readers: dict[str, set[Unit]] = {}
        binders: dict[str, set[Unit]] = {}
        core = []
        summaries = {}
        for unit, summary in units:
            summaries[id(unit)] = summary
            for name in summary.declares:
                declarers.setdefault(name, set()).add(unit)
            for name in summary.reads:
                readers.setdefault(name, set()).add(unit)
            for name in summary.binds:
                binders.setdefault(name, set()).add(unit)
            if summary.core:
                core.append(unit)
        names = cls()
        names.declarers = Overlay({k: frozenset(v) for k, v in declarers.items()})
        names.readers = Overlay({k: frozenset(v) for k, v in readers.items()})
        names.binders = Overlay({k: frozenset(v) for k, v in binders.items()})
        names.core = frozenset(core)
        names.summaries = Overlay(summaries)
        return names

    def edited(self, removed: Iterable[Unit], added: Iterable[tuple[Unit, Summary]]) -> Names:
        """The names of the version without the units `removed` and with those `added`."""
        new = Names()
        new.declarers = self.declarers.child()
        new.readers = self.readers.child()
        new.binders = self.binders.child()
        new.summaries = self.summaries.child()
        core = set(self.core)
        for unit in removed:
            summary = self.summary(unit)
            _drop(new.declarers, summary.declares, unit)
            _drop(new.readers, summary.reads, unit)
            _drop(new.binders, summary.binds, unit)
            core.discard(unit)
        for unit, summary in added:
            new.summaries[id(unit)] = summary
            _add(new.declarers, summary.declares, unit)
            _add(new.readers, summary.reads, unit)
            _add(new.binders, summary.binds, unit)
            if summary.core:
                core.add(unit)
        new.core = frozenset(core)
        return new

    def summary(self, unit: Unit) -> Summary:
        found = self.summaries.get(id(unit))
        assert found is not None, f"{unit!r} is no unit of this version"
        return found

    def declared(self, name: str) -> frozenset[Unit]:
        return self.declarers.get(name, _NONE)  # type: ignore[return-value]

    def read(self, name: str) -> frozenset[Unit]:
        return self.readers.get(name, _NONE)  # type: ignore[return-value]

    def bound(self, name: str) -> frozenset[Unit]:
        return self.binders.get(name, _NONE)  # type: ignore[return-value]

    def unresolved(self) -> tuple[str, ...]:
        """The names read that no unit declares (each an unknown name, or a name of the
        language)."""
        if self._unresolved is None:
            read = self.readers.flat()
            self._unresolved = tuple(
                n
                for n, units in read.items()
                if units and n not in _LANGUAGE and not self.declared(n)
            )
        return self._unresolved

    def _by_length(self) -> dict[int, list[str]]:
        """The declared names by their length."""
        if self._names is None:
            self._names = {}
            for name, units in self.declarers.flat().items():
                if units:
                    self._names.setdefault(len(name), []).append(name)
        return self._names

    def near_declared(self, unknown: str) -> Iterator[Unit]:
        """The units declaring a name that a `did you mean` for the unknown name weighs."""
        slack = _slack(unknown)
        by_length = self._by_length()
        for length in range(len(unknown) - slack, len(unknown) + slack + 1):
            for name in by_length.get(length, ()):
                if near(unknown, name):
                    yield from self.declared(name)

    def near_readers(self, name: str) -> Iterator[Unit]:
        """The units reading an unknown name whose `did you mean` weighs `name`."""
        for unknown in self.unresolved():
            if near(unknown, name):
                yield from self.read(unknown)


def near(unknown: str, name: str) -> bool:
    """Whether `serq.diagnostics.suggest.close_names(unknown, ...)` weighs `name` for a
    `did you mean` (its bar, a little lower: a unit too many costs time, one too few a
    wrong help). A diagnostic of an unknown name reads every such name, declared where
    it may be, not only the names its unit reads: the closures count them as read."""
    if name == unknown or abs(len(name) - len(unknown)) > _slack(unknown):
        return False
    import difflib

    cutoff = (0.75 if len(unknown) > 3 else 0.5) - 0.05
    matcher = difflib.SequenceMatcher(None, name, unknown)
    return (
        matcher.real_quick_ratio() >= cutoff
        and matcher.quick_ratio() >= cutoff
        and matcher.ratio() >= cutoff
    )


def _slack(unknown: str) -> int:
    """How much longer or shorter than `unknown` a close name may be (`close_names`')."""
    return max(1, len(unknown) // 3)


def _language() -> frozenset[str]:
    """The names of the language that a program reads and never declares: never unknown."""
    from serq import vocabulary
    from serq.builtins import ARRIVALS, DRAWS, FUNCTIONS

    return frozenset(
        {"inf"}
        | vocabulary.CONTEXT_VARS
        | vocabulary.BUILTIN_ATTRS
        | vocabulary.MATH_FUNCS
        | vocabulary.OBSERVABLES
        | vocabulary.DISTRIBUTIONS
        | set(FUNCTIONS)
        | set(DRAWS)
        | set(ARRIVALS)
    )


_LANGUAGE = _language()


def _drop(table: Overlay, names: frozenset[str], unit: Unit) -> None:
    for name in names:
        table[name] = table.get(name, _NONE) - {unit}


def _add(table: Overlay, names: frozenset[str], unit: Unit) -> None:
    for name in names:
        table[name] = table.get(name, _NONE) | {unit}


def invalidated(names: Names, seed: Iterable[Unit]) -> set[Unit]:
    """The units of `names`' version whose diagnostics may change with the `seed` units
    (theirs included): closed under dependents and the ties."""
    return _closure(names, seed, dependents=True)


def _closure(names: Names, seed: Iterable[Unit], dependents: bool) -> set[Unit]:
    """`seed` closed under the ties and either the dependents or the dependencies."""
    found: set[Unit] = set()
    stack = list(seed)
    core_in = False
    while stack:
        unit = stack.pop()
        if unit in found:
            continue
        found.add(unit)
        summary = names.summary(unit)
        if dependents:
            for name in summary.declares:
                stack.extend(u for u in names.read(name) if u not in found)
                stack.extend(u for u in names.near_readers(name) if u not in found)
        else:
            for name in summary.reads:
                declared = names.declared(name)
                stack.extend(u for u in declared if u not in found)
                if not declared and name not in _LANGUAGE:
                    stack.extend(u for u in names.near_declared(name) if u not in found)
        for name in summary.declares:
            stack.extend(u for u in names.declared(name) if u not in found)
        for name in summary.binds:
            stack.extend(u for u in names.read(name) if u not in found)
        for name in summary.reads:
            stack.extend(u for u in names.bound(name) if u not in found)
        if summary.core and not core_in:
            core_in = True
            stack.extend(u for u in names.core if u not in found)
    return found


def related(names: Names, summaries: Iterable[Summary]) -> set[Unit]:
    """The units of `names`' version that units with these `summaries` (not its own: those
    of another version) would be invalidated with or tied to."""
    out: set[Unit] = set()
    for summary in summaries:
        for name in summary.declares:
            out.update(names.read(name))
            out.update(names.near_readers(name))
            out.update(names.declared(name))
        for name in summary.binds:
            out.update(names.read(name))
        for name in summary.reads:
            out.update(names.bound(name))
        if summary.core:
            out.update(names.core)
    return out


def context(names: Names, units: Iterable[Unit]) -> set[Unit]:
    """`units` with every unit they read, at any distance, closed under the ties."""
    return _closure(names, units, dependents=False)
