"""Source positions: `Span`, a range of one file, and `LineIndex`, offset <-> line/column lookup.

Offsets are code-point indices into the file's text (a Python `str`), end exclusive. Lines and
columns are 1-based and columns count code points. `\\n`, `\\r\\n` and `\\r` all end a line.
Columns in the code units of an encoding (UTF-8 bytes, UTF-16 units or code points: the
three a language-server client may count in) come from `LineIndex.unit_column` and back
from `LineIndex.column_from_units`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Span:
    """A range of one source file: offsets are code-point indices into the file's text (end
    exclusive); line and column are 1-based, columns counted in code points."""

    file: str
    start: int
    end: int
    line: int
    column: int
    end_line: int
    end_column: int  # column just past the last character (exclusive), 1-based

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"bad span offsets {self.start}..{self.end}")
        if self.line < 1 or self.column < 1 or self.end_line < self.line or self.end_column < 1:
            raise ValueError(
                f"bad span position {self.line}:{self.column}..{self.end_line}:{self.end_column}"
            )

    @classmethod
    def point(cls, file: str, offset: int, line: int, column: int) -> Span:
        """Return the empty span of `file` at `offset`, which lies at `line`:`column`."""
        return cls(file, offset, offset, line, column, line, column)

    @property
    def is_empty(self) -> bool:
        """Whether the span covers no character."""
        return self.start == self.end

    def first(self, length: int) -> Span:
        """Return the span of this span's first `length` characters, all on its first line
        (a clause's keyword, where a diagnostic about the whole clause points)."""
        return Span(
            self.file,
            self.start,
            self.start + length,
            self.line,
            self.column,
            self.line,
            self.column + length,
        )

    def cover(self, other: Span) -> Span:
        """Return the smallest span containing both this span and `other`, of the same file."""
        if other.file != self.file:
            raise ValueError(f"cannot cover spans of {self.file!r} and {other.file!r}")
        first = self if self.start <= other.start else other
        last = self if self.end >= other.end else other
        return Span(
            self.file,
            first.start,
            last.end,
            first.line,
            first.column,
            last.end_line,
            last.end_column,
        )

    @classmethod
    def of_text(cls, file: str, text: str, start: int, end: int) -> Span:
        """Return the span `start`..`end` of `file` whose text is `text` (builds a `LineIndex`)."""
        return LineIndex(text).span(file, start, end)


class LineIndex:
    """Line starts of one text, built once, for offset <-> (line, column) lookups in O(log n)."""

    __slots__ = ("_text", "_starts", "_ends")

    def __init__(self, text: str) -> None:
        self._text = text
        starts = [0]
        ends: list[int] = []
        for match in _NEWLINE.finditer(text):
            ends.append(match.start())
            starts.append(match.end())
        ends.append(len(text))
        self._starts = starts  # offset of each line's first character
        self._ends = ends  # offset of each line's terminator (or of the end of the text)

    def edited(self, text: str, start: int, old_end: int, new_end: int) -> LineIndex:
        """The index of `text`, this index's text with `[start, old_end)` replaced by what is
        `[start, new_end)` in `text`: the line breaks are searched again only around the
        change, and those after it are moved."""
        delta = new_end - old_end
        old_starts, old_ends = self._starts, self._ends
        # the line before the one the change begins on: its `\r` may meet a `\n` inserted
        a = max(0, bisect_right(old_starts, start) - 2)
        # the first line that begins past the change with its whole line break after it
        b = bisect_right(old_starts, old_end + 2)
        stop = old_starts[b] + delta if b < len(old_starts) else len(text)
        found = list(_NEWLINE.finditer(text, old_starts[a], stop))
        index = LineIndex.__new__(LineIndex)
        index._text = text
        index._starts = old_starts[: a + 1] + [m.end() for m in found]
        index._starts += [x + delta for x in old_starts[b + 1 :]]
        index._ends = old_ends[:a] + [m.start() for m in found]
        index._ends += [x + delta for x in old_ends[b:]] if b < len(old_starts) else [len(text)]
        return index

    @property
    def text(self) -> str:
        """The indexed text."""
        return self._text

    @property
    def line_count(self) -> int:
        """The number of lines; a text ending in a newline has an empty last line."""
        return len(self._starts)

    def position(self, offset: int) -> tuple[int, int]:
        """Return the 1-based (line, column) of `offset`, which may be `len(text)`."""
        if not 0 <= offset <= len(self._text):
            raise ValueError(f"offset {offset} outside 0..{len(self._text)}")
        index = bisect_right(self._starts, offset) - 1
        return index + 1, offset - self._starts[index] + 1

    def offset(self, line: int, column: int) -> int:
        """Return the offset of 1-based `line`:`column`, clamped to the line's end (before its
        terminator) and, for lines past the last, to the end of the text."""
        if line < 1 or column < 1:
            raise ValueError(f"bad position {line}:{column}")
        if line > len(self._starts):
            return len(self._text)
        index = line - 1
        return min(self._starts[index] + column - 1, self._ends[index])

    def line_text(self, line: int) -> str:
        """Return the text of 1-based `line` without its terminator."""
        index = self._line_index(line)
        return self._text[self._starts[index] : self._ends[index]]

    def span(self, file: str, start: int, end: int) -> Span:
        """Return the span `start`..`end` of `file`, with lines and columns filled in."""
        if end < start:
            raise ValueError(f"span end {end} before start {start}")
        line, column = self.position(start)
        end_line, end_column = self.position(end)
        return Span(file, start, end, line, column, end_line, end_column)

    def unit_column(self, line: int, column: int, encoding: str) -> int:
        """Return the 0-based column, in code units of `encoding` ("utf-8", "utf-16" or
        "utf-32"), of 1-based code-point `line`:`column`, clamped to the line's end."""
        index = self._line_index(line)
        start = self._starts[index]
        return units(self._text[start : min(start + column - 1, self._ends[index])], encoding)

    def column_from_units(self, line: int, unit_column: int, encoding: str) -> int:
        """Return the 1-based code-point column of 0-based `unit_column` (code units of
        `encoding`) on `line`, clamped to the line's end; a column inside a character (a
        surrogate pair, a UTF-8 sequence) maps to that character."""
        index = self._line_index(line)
        start, end = self._starts[index], self._ends[index]
        if encoding == "utf-32" or self._text[start : min(end, start + unit_column)].isascii():
            return min(unit_column, end - start) + 1  # fast path: one unit a character
        count = 0
        column = 1
        for char in self._text[start:end]:
            if count >= unit_column:
                break
            count += char_units(char, encoding)
            column += 1
        if count > unit_column:  # landed inside a character
            column -= 1
        return column

    def _line_index(self, line: int) -> int:
        if not 1 <= line <= len(self._starts):
            raise ValueError(f"line {line} outside 1..{len(self._starts)}")
        return line - 1


def units(text: str, encoding: str) -> int:
    """The length of `text` in code units of `encoding` ("utf-8", "utf-16" or "utf-32"). A
    lone surrogate (an invalid byte kept by `surrogateescape`) counts as its encoding
    would write it: three UTF-8 bytes, one UTF-16 unit."""
    if encoding == "utf-32" or text.isascii():  # fast path: one unit a character
        return len(text)
    if encoding == "utf-16":
        return len(text.encode("utf-16-le", "surrogatepass")) // 2
    return len(text.encode("utf-8", "surrogatepass"))


def char_units(char: str, encoding: str) -> int:
    """The code units of `encoding` that the one character `char` takes."""
    code = ord(char)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 1
