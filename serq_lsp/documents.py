"""Open documents whose incremental changes cost the lines they touch.

pygls applies an incremental change by splitting the whole text into lines and writing
every line out again: on a 2 MB document, 40 to 50 ms of the event loop per keystroke,
before any request behind it is read. `Document` applies it the same way (the same line
cut, `str.splitlines`'s, and the same conversion of the client's columns) from a list of
line starts that it keeps and moves with each change, so a change costs a slice of the
text and the shift of that list. `use_documents(workspace)` makes a workspace open
documents of this kind.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

# The line breaks of `str.splitlines`, which pygls cuts a document's lines at.
_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


class Document(TextDocument):
    """A text document that keeps the starts of its lines (pygls' lines)."""

    _starts: list[int] | None = None
    _for: str | None = None  # the source `_starts` is of

    def line_starts(self) -> list[int]:
        """Where each of the document's lines begins (as pygls cuts them)."""
        source = self.source
        if self._starts is None or self._for is not source:
            starts = [0, *(m.end() for m in _BREAK.finditer(source))] if source else []
            if starts and starts[-1] == len(source) and len(starts) > 1:
                starts.pop()  # a final line break opens no line
            self._starts, self._for = starts, source
        return self._starts

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """Apply `change` as pygls does, rewriting only the text it touches."""
        source = self.source
        starts = self.line_starts()
        lines = _Lines(source, starts)
        r = self._position_codec.range_from_client_units(lines, change.range)
        start_line, start_col = r.start.line, r.start.character
        end_line, end_col = r.end.line, r.end.character
        if start_line == len(lines):  # at the very end of the file
            self._set(source, source + change.text, len(source), len(source))
            return
        if end_line < start_line:  # pygls' own loop decides this odd case
            super()._apply_incremental_change(change)
            return
        begin = starts[start_line] + min(start_col, len(lines[start_line]))
        if end_line < len(lines):
            end = starts[end_line] + min(end_col, len(lines[end_line]))
        else:
            end = len(source)
        self._set(source, source[:begin] + change.text + source[end:], begin, end)

    def _set(self, old: str, new: str, start: int, old_end: int) -> None:
        """Take `new` (`old` with `[start, old_end)` replaced) as the source, moving the line
        starts after the change."""
        starts = self.line_starts()
        if not old or not new:
            self._source, self._starts = new, None
            return
        delta = len(new) - len(old)
        a = max(0, bisect_right(starts, start) - 2)  # a `\r` before may meet a `\n`
        b = bisect_right(starts, old_end + 2)  # lines wholly after the change
        stop = starts[b] + delta if b < len(starts) else len(new)
        found = [m.end() for m in _BREAK.finditer(new, starts[a], stop)]
        moved = starts[: a + 1] + found
        if b < len(starts):
            moved += [x + delta for x in starts[b + 1 :]]
        elif moved[-1] == len(new) and len(new) > 0:
            moved.pop()
        self._source = new
        self._starts, self._for = moved, new


class _Lines(Sequence[str]):
    """The lines of a text as pygls cuts them (each with its line break), made on demand."""

    def __init__(self, source: str, starts: list[int]) -> None:
        self.source = source
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self.starts)
        end = self.starts[i + 1] if i + 1 < len(self.starts) else len(self.source)
        return self.source[self.starts[i] : end]


class _Workspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):
        return Document(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


def use_documents(workspace: Workspace) -> None:
    """Make `workspace` open its documents as `Document`s from now on."""
    if type(workspace) is Workspace:
        workspace.__class__ = _Workspace
