"""A stale view: the last complete analysis of a document, read through the edits since.

While the check of an edit is pending, hover, definition and completion answer from the
analysis they have, an older version of the text. `View(analysis, text)` compares that
version with the document's current `text` (a common prefix and suffix, found by halving
in C-speed string comparisons) and keeps the one region that differs. Positions before
the region are the same in both versions; positions after it move by the region's change
of lines and, on its last line, of columns. A position inside the region has no meaning in
the old version (`to_old` is None), and an old answer about text that touches the region
is not given (`to_new` of a range that meets it is None): the stale view answers only
about what the edits left alone, and about that it answers what a fresh analysis would,
except where the edit changed a meaning elsewhere (a `let`'s value), until the check ends.
"""

from __future__ import annotations

from lsprotocol import types

from serq.syntax.layout import common_prefix, common_suffix
from serq_lsp import convert
from serq_lsp.analysis import Analysis

_LINE_BREAKS = "\r\n"


def _position(text: str, offset: int, line: int, line_start: int) -> types.Position:
    """The LSP position of `offset` in `text`, counting lines from `line` at `line_start`."""
    segment = text[line_start:offset]
    breaks = segment.count("\n") + segment.count("\r") - segment.count("\r\n")
    if breaks:
        last = max(segment.rfind("\n"), segment.rfind("\r"))
        line_start += last + 1
    return types.Position(line + breaks, convert.length(text[line_start:offset]))


def _before(p: types.Position, q: types.Position) -> bool:
    """`p` <= `q`."""
    return (p.line, p.character) <= (q.line, q.character)


def _shift(p: types.Position, a: types.Position, b: types.Position) -> types.Position:
    """`p` (at or after `a`) moved as `a` moves to `b`."""
    if p.line == a.line:
        return types.Position(b.line, b.character + p.character - a.character)
    return types.Position(p.line - a.line + b.line, p.character)


class View:
    """The analysis of an older version of a document, seen from its current text."""

    __slots__ = ("analysis", "text", "current", "start", "old_end", "new_end", "_typed")

    def __init__(self, analysis: Analysis, text: str) -> None:
        self.analysis = analysis
        self.text = text
        old = analysis.text
        self.current = old is text or old == text
        if self.current:
            return
        p = common_prefix(old, text)
        s = common_suffix(old, text, min(len(old), len(text)) - p)
        # never cut a line break in two: a `\r\n` lies wholly in or out of the region
        while p > 0 and old[p - 1] in _LINE_BREAKS:
            p -= 1
        while s > 0 and old[len(old) - s] in _LINE_BREAKS:
            s -= 1
        lines = analysis.lines
        line, _ = lines.position(p)
        line_start = lines.offset(line, 1)
        self.start = _position(old, p, line - 1, line_start)
        self.old_end = _position(old, len(old) - s, line - 1, line_start)
        self.new_end = _position(text, len(text) - s, line - 1, line_start)
        self._typed = text[p : len(text) - s]  # what the edits put in the region

    def to_old(self, position: types.Position) -> types.Position | None:
        """The position in the analysed text of the current `position`; None inside the
        edited region."""
        if self.current or _before(position, self.start):
            return position
        if _before(self.new_end, position):
            return _shift(position, self.new_end, self.old_end)
        return None

    def typed_before(self, position: types.Position, ending: str) -> bool:
        """Whether the edits since the analysis put text ending with `ending` right before
        the current `position` (a `.` just typed where the cursor is)."""
        return (
            not self.current and _same(position, self.new_end) and self._typed.endswith(ending)
        )

    def typed(self, position: types.Position, most: int = 256) -> str | None:
        """Where the current `position` ends the edited region: the current text's last (at
        most `most`) characters before it, what was typed since the analysis after the
        analysed text before it; None elsewhere (the analysed text there is the current)."""
        if self.current or not _same(position, self.new_end):
            return None
        old = self.analysis.text
        start = self.analysis.offset(self.start.line, self.start.character)
        return (old[max(0, start - most) : start] + self._typed)[-most:]

    def offset(self, position: types.Position) -> int | None:
        """The analysis' code-point offset of the current `position`, or None."""
        old = self.to_old(position)
        return None if old is None else self.analysis.offset(old.line, old.character)

    def to_new(self, r: types.Range | None) -> types.Range | None:
        """The current range of the analysed range `r`; None when it meets the edited region
        (touching it counts: a word may have grown there)."""
        if r is None or self.current:
            return r
        if _before(r.end, self.start) and not _same(r.end, self.start):
            return r
        if _before(self.old_end, r.start) and not _same(r.start, self.old_end):
            return types.Range(
                _shift(r.start, self.old_end, self.new_end),
                _shift(r.end, self.old_end, self.new_end),
            )
        return None

    def untouched(self, start: int, end: int) -> bool:
        """Whether the analysed text's `start`..`end` (code points) lies clear of the
        region, with a character between them."""
        if self.current:
            return True
        lines = self.analysis.lines
        r = types.Range(_lsp(lines, start), _lsp(lines, end))
        return self.to_new(r) is not None


def _same(p: types.Position, q: types.Position) -> bool:
    return p.line == q.line and p.character == q.character


def _lsp(lines, offset: int) -> types.Position:
    line, column = lines.position(offset)
    return types.Position(line - 1, convert.character(lines, line, column))
