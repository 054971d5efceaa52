"""The index of one version of a document, unit by unit, built as far as it is read.

`serq.link.index` makes an item's part of the index (`item_piece`: its declarations and
its references with the keys each may mean) and resolves a reference against the keys the
program declares. Here each unit's piece is made when first read, from the unit's nodes
where the unit is in this version (kept on the unit with that place, so a unit that did
not move costs nothing the next time), and a key is looked up only in the units whose
summary declares its name (`serq.incremental.names`). A hover reads the units around one
offset; definition and references read the units that declare or read one name; only
features that list the whole file (semantic tokens, symbols) build all of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cached_property

from serq.incremental.names import Names
from serq.link.index import (
    Index,
    Key,
    Occurrence,
    Piece,
    item_piece,
    library_occurrences,
)
from serq.syntax.layout import Layout
from serq.syntax.shift import Shift


class UnitIndex(Index):
    """The index of `layout`'s version (its names `names`), and of the libraries it reads
    (`libraries`: their paths and pieces, as `serq.link.index.library_pieces` makes them)."""

    def __init__(self, layout: Layout, names: Names, libraries: list[tuple[str, Piece]]) -> None:
        self.layout = layout
        self.names = names
        self.libraries = libraries
        self.files = tuple(f for f, _ in libraries)
        self._library_keys = {o.key for _, p in libraries for o in p.declared}
        self._declared: dict[Key, bool] = {}
        self._units: dict[int, list[Occurrence]] = {}
        self._all: list[Occurrence] | None = None
        self._listing: list[Occurrence] | None = None
        self._others: list[Occurrence] | None = None
        self._keyed = None

    # ------------------------------------------------------------------ keys

    def __contains__(self, key: Key) -> bool:
        """Whether the module or one of its libraries declares `key`."""
        found = self._declared.get(key)
        if found is None:
            found = key in self._library_keys or any(
                key in _keys(self.layout, i) for i in self._units_naming(key, declared=True)
            )
            self._declared[key] = found
        return found

    def _units_naming(self, key: Key, declared: bool) -> list[int]:
        """The indices of the units that may declare (or, unless `declared`, refer to)
        `key`, in order."""
        namespace, name = key
        layout, names = self.layout, self.names
        if namespace == "local":  # declared and read inside the one scope it names
            where = name.rpartition(":")[0].rpartition("@")[2]
            at = layout.unit_at(int(where)) if where.isdigit() else -1
            return [at] if at >= 0 else []
        if namespace == "file":
            units = names.declared("#file:" + os.path.normcase(name))
        else:
            base = name.split(".")[0]
            units = names.declared(base)
            if not declared:
                units = units | names.read(base)
        return sorted(layout.index_of(u) for u in units)

    # ----------------------------------------------------------- occurrences

    def unit_occurrences(self, i: int) -> list[Occurrence]:
        """The occurrences of unit `i`, where it is, in source order, resolved."""
        found = self._units.get(i)
        if found is None:
            found = self._units[i] = _piece(self.layout, i).occurrences(self)
        return found

    def at(self, offset: int) -> Occurrence | None:
        """The occurrence of the module's own file whose name covers `offset` (end included)."""
        if self._all is not None:  # built whole already (a feature listed them all)
            return Index.at(self, offset)
        before: list[Occurrence] = []  # the last two that begin at or before `offset`
        i = self.layout.unit_at(offset)
        while i >= 0 and len(before) < 2:
            found = [o for o in self.unit_occurrences(i) if o.span.start <= offset]
            before = found[-(2 - len(before)) :] + before
            i -= 1
        for o in reversed(before):
            if o.span.start <= offset <= o.span.end:
                return o
        return None

    def references(self, key: Key) -> list[Occurrence]:
        """Every occurrence of `key` in every file, declarations included."""
        own = [
            o
            for i in self._units_naming(key, declared=False)
            for o in self.unit_occurrences(i)
            if o.key == key
        ]
        return own + [o for o in self.elsewhere if o.key == key]

    def listing(self) -> list[Occurrence]:
        """The occurrences of the module's own file in source order, without the declaring
        nodes of those in units that moved (each unit's piece made once, where it was first
        parsed, and its occurrences moved: no unit's nodes are moved for it)."""
        if self._all is not None:
            return self._all
        if self._listing is None:
            layout = self.layout
            out: list[Occurrence] = []
            for i, unit in enumerate(layout.units):
                parsed = unit.parsed
                found = _anchor_piece(layout, i).occurrences(self)
                moved = (
                    layout.starts[i] - parsed.start,
                    layout.lines[i] - parsed.line,
                    layout.columns[i] - parsed.column,
                )
                if moved == (0, 0, 0):
                    out.extend(found)
                else:
                    shift = Shift(layout.file, moved[0], moved[1], parsed.line, moved[2])
                    out.extend(_moved(o, shift) for o in found)
            self._listing = out
        return self._listing

    @property
    def occurrences(self) -> list[Occurrence]:  # type: ignore[override]
        if self._all is None:
            self._all = [o for i in range(len(self.layout.units)) for o in self.unit_occurrences(i)]
        return self._all

    @cached_property
    def _starts(self) -> list[int]:  # type: ignore[override]
        return [o.span.start for o in self.occurrences]

    @property
    def elsewhere(self) -> list[Occurrence]:  # type: ignore[override]
        if self._others is None:
            self._others = library_occurrences(self.libraries, self)
        return self._others

    def by_key(self) -> dict[Key, list[Occurrence]]:
        if self._keyed is None:
            keyed: dict[Key, list[Occurrence]] = {}
            for o in self.everywhere():
                keyed.setdefault(o.key, []).append(o)
            self._keyed = keyed
        return self._keyed


def _piece(layout: Layout, i: int) -> Piece:
    """The piece of unit `i` of `layout`, made from its nodes where it is (kept on the unit
    with that place)."""
    unit = layout.units[i]
    place = (layout.starts[i], layout.lines[i], layout.columns[i])
    kept = unit.memo.get("index")
    if kept is not None and kept[0] == place:
        return kept[1]
    pieces = [item_piece(n, layout.file) for n in layout.parsed(i).nodes if not _is_name(n)]
    piece = _merged(pieces)
    unit.memo["index"] = (place, piece)
    return piece


def _anchor_piece(layout: Layout, i: int) -> Piece:
    """The piece of unit `i` where it was first parsed (kept on the unit)."""
    unit = layout.units[i]
    piece = unit.memo.get("anchor piece")
    if piece is None:
        pieces = [item_piece(n, layout.file) for n in unit.parsed.nodes if not _is_name(n)]
        piece = unit.memo["anchor piece"] = _merged(pieces)
    return piece


def _moved(o: Occurrence, shift: Shift) -> Occurrence:
    """`o` moved by `shift`, without its declaring node (a local key names a place: moved)."""
    key = o.key
    if key[0] == "local":
        where, _, name = key[1].rpartition(":")
        file, _, start = where.rpartition("@")
        key = ("local", f"{file}@{int(start) + shift.offset}:{name}")
    return Occurrence(key, shift.span(o.span), o.kind, None, o.container)


def _keys(layout: Layout, i: int) -> frozenset[Key]:
    """The keys unit `i` declares, but the local ones (which name a place): kept on the unit."""
    unit = layout.units[i]
    keys = unit.memo.get("keys")
    if keys is None:
        pieces = [item_piece(n, layout.file) for n in unit.parsed.nodes if not _is_name(n)]
        keys = frozenset(o.key for p in pieces for o in p.declared if o.key[0] != "local")
        unit.memo["keys"] = keys
    return keys


def _is_name(node: object) -> bool:
    from serq.syntax import ast

    return isinstance(node, ast.Ident)  # a `fn main` head's name is no item


def _merged(pieces: Iterable[Piece]) -> Piece:
    pieces = list(pieces)
    if len(pieces) == 1:
        return pieces[0]
    return Piece(
        tuple(o for p in pieces for o in p.declared),
        tuple(p for piece in pieces for p in piece.pending),
        tuple(lib for p in pieces for lib in p.libraries),
    )
