"""One version of a file as a sequence of units, and the next version found by rescanning
only around an edit.

A `Unit` is one chunk of the scanner's cut (`serq.syntax.scanner`) as an object: its kind,
its text and the token after it, which is all its parse depends on, and that parse
(`Parsed`), made where the chunk was when it was first parsed (its anchor). A unit has no
position of its own. A `Layout` is one version of a file: its text, its units in order and
where each one is now (start, end, line and column, in parallel lists). What a later stage
derives from a unit without regard to where it is (the names it declares and reads, its
entries in the index) is kept on the unit (`Unit.memo`), so it is computed once per unit
however often the unit moves.

`relayout(old, text, parse_chunk)` finds the layout of `text` from `old`'s: the text before
the edit is the same, so the units before it are kept as they are; the scanner restarts at
a unit start one unit before the one the edit begins in, and stops as soon as it would begin
a chunk where an old unit began, past the edit and at the same brace depth: from there on
the old cut is the new one (the scanner reads nothing behind a chunk's first token but the
character before it), each old unit moved by the edit's change of length and of lines.
That is sound because the scanner's state between two items is only that depth. So an edit
costs a scan of the units it touches and a shift of the position lists, and the units of
the rest of the file stay the same objects: every cache keyed by a unit (its parse, what the
program analysis derived from it) survives the edit. `tests/syntax/test_layout.py` holds the
result to a fresh scan and parse after random edits.

A unit that moved keeps the nodes of its first parse; they are moved to where it is now only
when someone reads them (`Unit.at`, which keeps the last move; `serq.syntax.shift`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from serq.diagnostics import Diagnostic, LineIndex
from serq.syntax import ast
from serq.syntax.scanner import FN_HEAD, Chunk, scan_from
from serq.syntax.shift import Shift
from serq.syntax.source_text import text_start


@dataclass(frozen=True, slots=True)
class Parsed:
    """A chunk's parse: where the chunk was (its anchor), its nodes and its diagnostics.

    `tail` is None, but for a parse that reached past its chunk (the token after it is one
    no rule begins with, so the parser closed what was open at the end of the file): then
    it is how the file went on past the chunk (`tail_of`), which the parse depends on too:
    where the end of the file is, its offset and its line and column."""

    start: int
    line: int
    column: int
    nodes: tuple
    diagnostics: tuple[Diagnostic, ...]
    tail: tuple[int, int, int] | None = None


def tail_of(text: str, end: int) -> tuple[int, int, int]:
    """How `text` goes on past offset `end`, as far as a parse that closed at the end of the
    file reads it: how many characters, how many line breaks, and how long its last line
    is (two texts alike in these put the end of the file at the same place from `end`)."""
    last = text.rfind("\n", end)
    return len(text) - end, text.count("\n", end), len(text) - (last + 1 if last >= 0 else end)


# Parse a chunk of `text` (the layout's LineIndex given) whose next token is `following`.
ChunkParser = Callable[[str, Chunk, str, LineIndex], Parsed]


class Unit:
    """One chunk of a file: its `kind`, `text` and the token after it (`following`), its
    parse at its anchor (`parsed`), and what later stages derived from it (`memo`)."""

    __slots__ = ("kind", "text", "following", "parsed", "memo", "label", "epoch", "_moved")

    def __init__(self, kind: str, text: str, following: str, parsed: Parsed) -> None:
        self.kind = kind
        self.text = text
        self.following = following
        self.parsed = parsed
        self.memo: dict[str, Any] = {}
        self.label = 0  # its order among the units of its layouts (`Layout.labels`)
        self.epoch = -1
        self._moved: tuple[int, int, int, Parsed] | None = None

    def at(self, file: str, start: int, line: int, column: int) -> Parsed:
        """The unit's parse with its nodes and diagnostics moved to `start`, `line`:`column`
        (the last move is kept)."""
        parsed = self.parsed
        if (parsed.start, parsed.line, parsed.column) == (start, line, column):
            return parsed
        moved = self._moved
        if moved is not None and moved[:3] == (start, line, column):
            return moved[3]
        shift = Shift.between(file, parsed.start, parsed.line, parsed.column, start, line, column)
        result = Parsed(
            start,
            line,
            column,
            tuple(shift.node(n) for n in parsed.nodes),
            tuple(shift.node(d) for d in parsed.diagnostics),
            parsed.tail,
        )
        self._moved = (start, line, column, result)
        return result

    def __repr__(self) -> str:
        return f"Unit({self.kind}, {self.text[:30]!r})"


@dataclass(frozen=True, slots=True)
class Splice:
    """How a layout was made from the one before: the old units `[first, old_stop)` were
    replaced by the new `[first, new_stop)`; the text changed in `[start, old_end)` (old
    offsets), which is `[start, new_end)` now, and later text moved by `lines` lines."""

    first: int
    old_stop: int
    new_stop: int
    start: int
    old_end: int
    new_end: int
    lines: int


_GAP = 1 << 40  # between the labels of consecutive units when they are handed out afresh
_epochs = iter(range(1, 1 << 62))


class Layout:
    """One version of `file`: its `text`, its `units` in order and where each one is.

    `starts`, `ends`, `lines` and `columns` are parallel to `units` (a chunk's first line
    and column, as the scanner counts them); `special` lists, in order, the indices of the
    units the parse's own rules look at: a `fn main` head or close, a unit with syntax
    errors, or one holding an item that may not stand outside `fn main` (and one whose
    parse read to the end of the file: `Parsed.tail`).

    `labels` are increasing integers, one a unit, that a unit keeps from version to
    version (new units get labels between their neighbours'), so where a unit is in a
    version is found by halving (`index_of`). When two neighbours leave no room, the next
    version hands out labels afresh (a new `epoch`); an older version then finds its units
    through a table built on demand."""

    __slots__ = (
        "file",
        "text",
        "units",
        "starts",
        "ends",
        "lines",
        "columns",
        "special",
        "line_index",
        "labels",
        "epoch",
        "_fn",
        "_index_of",
    )

    def __init__(
        self,
        file: str,
        text: str,
        units: list[Unit],
        starts: list[int],
        ends: list[int],
        lines: list[int],
        columns: list[int],
        special: list[int],
        line_index: LineIndex,
        labels: list[int] | None = None,
        epoch: int = 0,
    ) -> None:
        self.file = file
        self.text = text
        self.units = units
        self.starts = starts
        self.ends = ends
        self.lines = lines
        self.columns = columns
        self.special = special
        self.line_index = line_index
        if labels is None:  # labels afresh
            labels = [(i + 1) * _GAP for i in range(len(units))]
            epoch = next(_epochs)
            for unit, label in zip(units, labels, strict=True):
                unit.label, unit.epoch = label, epoch
        self.labels = labels
        self.epoch = epoch
        self._fn = [i for i in special if units[i].kind != "item"]
        self._index_of: dict[int, int] | None = None

    def __len__(self) -> int:
        return len(self.units)

    def parsed(self, i: int) -> Parsed:
        """The parse of unit `i`, its nodes where the unit is in this version."""
        return self.units[i].at(self.file, self.starts[i], self.lines[i], self.columns[i])

    def chunk(self, i: int) -> Chunk:
        return Chunk(
            self.units[i].kind, self.starts[i], self.ends[i], self.lines[i], self.columns[i]
        )

    def chunks(self) -> tuple[Chunk, ...]:
        """Every unit as the scanner's chunk."""
        return tuple(
            Chunk(u.kind, s, e, ln, c)
            for u, s, e, ln, c in zip(
                self.units, self.starts, self.ends, self.lines, self.columns, strict=True
            )
        )

    def unit_at(self, offset: int) -> int:
        """The index of the last unit that begins at or before `offset` (-1: none)."""
        return bisect_right(self.starts, offset) - 1

    def base(self, i: int) -> int:
        """The brace depth of the item list unit `i` begins in: 1 inside `fn main`, else 0."""
        k = bisect_left(self._fn, i) - 1
        return 1 if k >= 0 and self.units[self._fn[k]].kind == FN_HEAD else 0

    def index_of(self, unit: Unit) -> int:
        """Where `unit` is in this version (it must be one of its units)."""
        if unit.epoch == self.epoch:
            i = bisect_left(self.labels, unit.label)
            if i < len(self.units) and self.units[i] is unit:
                return i
        if self._index_of is None:
            self._index_of = dict(zip(map(id, self.units), range(len(self.units)), strict=True))
        return self._index_of[id(unit)]

    def has(self, unit: Unit) -> bool:
        """Whether `unit` is one of this version's units."""
        try:
            self.index_of(unit)
        except KeyError:
            return False
        return True

    def fn_units(self) -> list[int]:
        """The indices of the `fn main` heads and closes, in order."""
        return self._fn


# --------------------------------------------------------------------- building


def fresh_layout(text: str, file: str, chunks: list[Chunk], parse_chunk: ChunkParser) -> Layout:
    """The layout of `text`, cut into `chunks` by the scanner, each chunk parsed."""
    lines = LineIndex(text)
    units = _units(text, chunks, None, lines, parse_chunk)
    return Layout(
        file,
        text,
        units,
        [c.start for c in chunks],
        [c.end for c in chunks],
        [c.line for c in chunks],
        [c.column for c in chunks],
        [i for i, u in enumerate(units) if is_special(u)],
        lines,
    )


def relayout(old: Layout, text: str, parse_chunk: ChunkParser) -> tuple[Layout, Splice]:
    """The layout of `text`, an edit of `old.text`, rescanning only around the edit."""
    old_text = old.text
    if old_text is text or old_text == text:
        n = len(old.units)
        return old, Splice(n, n, n, len(text), len(text), len(text), 0)
    p = common_prefix(old_text, text)
    s = common_suffix(old_text, text, min(len(old_text), len(text)) - p)
    delta = len(text) - len(old_text)
    old_end, new_end = len(old_text) - s, len(text) - s
    n = len(old.units)
    first = max(0, old.unit_at(p) - 1)  # one unit back: its end and its next token may change
    # A block comment opened before the edit and not closed before it may now end (or have
    # ended) elsewhere: rescan from its `/*` (no `*/` between it and the edit).
    closed = old_text.rfind("*/", 0, p)
    opened = old_text.find("/*", max(0, closed - 1), p)
    if opened >= 0:
        first = min(first, max(0, old.unit_at(opened) - 1))
    if first == 0:
        begin, line, line_start, base = text_start(text), 1, 0, 0
    else:
        begin = old.starts[first]
        line = old.lines[first]
        line_start = begin - old.columns[first] + 1
        base = old.base(first)
    old_starts = old.starts
    limit = new_end + 1  # a chunk that begins here or later reads only text after the edit

    def stop(pos: int, depth: int) -> bool:
        if pos < limit:
            return False
        k = bisect_left(old_starts, pos - delta, first)
        return k < n and old_starts[k] == pos - delta and old.base(k) == depth

    scanned = scan_from(text, begin, base=base, line=line, line_start=line_start, stop=stop)
    chunks = scanned.chunks
    stop_at = n if scanned.stopped is None else bisect_left(old_starts, scanned.stopped[0] - delta)
    lines_moved = text.count("\n", p, new_end) - old_text.count("\n", p, old_end)
    line_index = old.line_index.edited(text, p, old_end, new_end)
    following = None if stop_at == n else old.units[stop_at]
    units = _units(text, chunks, following, line_index, parse_chunk, old, first, stop_at)
    # the old units after the stop, moved; those on the line the edit ends on move sideways
    tail = range(stop_at, n)
    starts = old.starts[:first] + [c.start for c in chunks] + [old_starts[k] + delta for k in tail]
    ends = old.ends[:first] + [c.end for c in chunks] + [old.ends[k] + delta for k in tail]
    new_lines = old.lines[:first] + [c.line for c in chunks]
    new_lines += [old.lines[k] + lines_moved for k in tail]
    columns = old.columns[:first] + [c.column for c in chunks] + old.columns[stop_at:]
    at = first + len(chunks)
    for k in tail:  # those that begin on the line where the edit ends
        if old_text.find("\n", old_end, old_starts[k]) >= 0:
            break
        pos = old_starts[k] + delta
        columns[at + k - stop_at] = pos - (text.rfind("\n", 0, pos) + 1) + 1
    moved = len(chunks) - (stop_at - first)
    special = [i for i in old.special if i < first]
    special += [first + i for i, u in enumerate(units) if is_special(u)]
    special += [i + moved for i in old.special if i >= stop_at]
    all_units = old.units[:first] + units + old.units[stop_at:]
    # the rescan began one unit back: units it cut as they were are the same objects
    same = 0
    while same < len(units) and first + same < stop_at and units[same] is old.units[first + same]:
        same += 1
    changed = first + same
    # a parse that read to the end of the file, before the edit, is parsed again when the
    # end of the file moved (in offset, or in line and column: a line break replaced)
    reached = [i for i in special if i < first and all_units[i].parsed.tail is not None]
    for i in reached:
        if all_units[i].parsed.tail != tail_of(text, ends[i]):
            chunk = Chunk(all_units[i].kind, starts[i], ends[i], new_lines[i], columns[i])
            unit = all_units[i]
            all_units[i] = Unit(
                unit.kind,
                unit.text,
                unit.following,
                parse_chunk(text, chunk, unit.following, line_index),
            )
            changed = min(changed, i)
    labels = _labels(old, all_units, first, same, len(units), stop_at, changed)
    epoch = old.epoch if labels is not None else 0
    layout = Layout(
        old.file,
        text,
        all_units,
        starts,
        ends,
        new_lines,
        columns,
        special,
        line_index,
        labels,
        epoch,
    )
    return layout, Splice(changed, stop_at, at, p, old_end, new_end, lines_moved)


def _labels(
    old: Layout, units: list[Unit], first: int, same: int, count: int, stop_at: int, changed: int
) -> list[int] | None:
    """The labels of the new version's `units`: the old ones, and for the `count - same`
    new units from `first + same` on labels spread between their neighbours' (a unit parsed
    again before the edit, from `changed`, takes its predecessor's); None when there is
    no room (the layout then hands out labels afresh)."""
    epoch = old.epoch
    begin = first + same
    lo = old.labels[begin - 1] if begin > 0 else 0
    hi = old.labels[stop_at] if stop_at < len(old.units) else lo + (count - same + 1) * _GAP
    fresh = count - same
    if hi - lo <= fresh:
        return None
    step = (hi - lo) // (fresh + 1)
    new = [lo + step * (i + 1) for i in range(fresh)]
    for i in range(changed, begin):  # units parsed again in place
        if units[i] is not old.units[i]:
            units[i].label, units[i].epoch = old.labels[i], epoch
    for i, label in enumerate(new, begin):
        units[i].label, units[i].epoch = label, epoch
    return old.labels[:begin] + new + old.labels[stop_at:]


def _units(
    text: str,
    chunks: list[Chunk],
    following_unit: Unit | None,
    lines: LineIndex,
    parse_chunk: ChunkParser,
    old: Layout | None = None,
    first: int = 0,
    stop: int = 0,
) -> list[Unit]:
    """The units of `chunks`, the last of which is followed by `following_unit` (or the end
    of the text); an old unit at the same place with the same text is kept, one before
    `stop` only: those from `stop` on are kept after the chunks, moved, and one object
    twice in a layout was one declaration where the text has two."""
    units: list[Unit] = []
    for i, chunk in enumerate(chunks):
        if i + 1 < len(chunks):
            following = first_token(text, chunks[i + 1].start)
        elif following_unit is not None:
            following = first_token(following_unit.text, 0)
        else:
            following = text[chunk.end :]
        chunk_text = text[chunk.start : chunk.end]
        if old is not None and first + i < stop:
            k = first + i
            unit = old.units[k]
            if (
                old.starts[k] == chunk.start
                and unit.kind == chunk.kind
                and unit.text == chunk_text
                and unit.following == following
                and (old.lines[k], old.columns[k]) == (chunk.line, chunk.column)
                and (unit.parsed.tail is None or unit.parsed.tail == tail_of(text, chunk.end))
            ):
                units.append(unit)
                continue
        parsed = parse_chunk(text, chunk, following, lines)
        units.append(Unit(chunk.kind, chunk_text, following, parsed))
    return units


def first_token(text: str, at: int) -> str:
    """The token at offset `at` of `text`, as the parse of the chunk before it sees it."""
    from serq.syntax.document import FIRST_TOKEN

    return FIRST_TOKEN.of(text).match(text, at).group()


OUTSIDE_MAIN = (ast.Let, ast.Use, ast.DefExpr, ast.DefBlock, ast.ErrorItem)


def is_special(unit: Unit) -> bool:
    """Whether the parse's own rules look at `unit` (see `Layout.special`), or its parse
    reached past its chunk."""
    if unit.kind != "item" or unit.parsed.diagnostics or unit.parsed.tail is not None:
        return True
    return not all(isinstance(n, OUTSIDE_MAIN) for n in unit.parsed.nodes)


# ---------------------------------------------------------------------- texts


def common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    """The length of the longest common prefix of the strings or lists `a` and `b`
    (halving, comparisons in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # invariant: a[:lo] == b[:lo], and a[:hi + 1] != b[:hi + 1] past hi
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix(a: Sequence[Any], b: Sequence[Any], limit: int) -> int:
    """The length (at most `limit`) of the longest common suffix of the strings or lists
    `a` and `b`."""
    lo, hi = 0, limit
    na, nb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[na - mid : na - lo] == b[nb - mid : nb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo
