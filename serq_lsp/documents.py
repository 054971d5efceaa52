"""Open documents whose incremental changes cost the lines they touch, cut into lines as
the protocol cuts them.

pygls applies an incremental change by splitting the whole text into lines and writing
every line out again: on a 2 MB document, 40 to 50 ms of the event loop per keystroke,
before any request behind it is read. `Document` applies it the same way (the same
conversion of the client's columns) from a list of line starts that it keeps and moves
with each change, so a change costs a slice of the text and the shift of that list.

Its lines end where LSP says they end, at `\n`, `\r\n` or `\r`, as the client and serq's
own `LineIndex` count them; pygls cuts at every break of `str.splitlines`, form feed,
`U+0085` and `U+2028` among them, so a change after a line holding one of those (in a
comment, say) landed on another line than the one the client meant. `lines` is the same
cut, so every pygls helper (`offset_at_position`, ...) counts the same lines too.
`use_documents(workspace)` makes a workspace open documents of this kind.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

# The line breaks of the protocol (and of serq's LineIndex).
_BREAK = re.compile("\r\n|\r|\n")


class Document(TextDocument):
    """A text document that keeps the starts of its lines (the protocol's lines)."""

    _starts: list[int] | None = None
    _for: str | None = None  # the source `_starts` is of

    def line_starts(self) -> list[int]:
        """Where each of the document's lines begins."""
        source = self.source
        if self._starts is None or self._for is not source:
            starts = [0, *(m.end() for m in _BREAK.finditer(source))] if source else []
            if starts and starts[-1] == len(source) and len(starts) > 1:
                starts.pop()  # a final line break opens no line
            self._starts, self._for = starts, source
        return self._starts

    @property
    def lines(self) -> Sequence[str]:  # type: ignore[override]
        """The document's lines, each with its line break, cut as LSP cuts them."""
        return _Lines(self.source, self.line_starts())

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        """Apply `change`, rewriting only the text it touches. A position past the last line
        is the end of the text, a column past the end of its line the end of the line
        (LSP's rule; pygls' codec put the first before the last line break, and the second
        before a last line's last character); a range that ends before it starts removes
        nothing."""
        source = self.source
        begin = self.offset_at_position(change.range.start)
        end = max(begin, self.offset_at_position(change.range.end))
        self._set(source, source[:begin] + change.text + source[end:], begin, end)

    def offset_at_position(self, position: types.Position) -> int:  # type: ignore[override]
        """The offset in the source of the client's `position` (LSP's rules, as for a change)."""
        starts = self.line_starts()
        if position.line >= len(starts):
            return len(self.source)
        line = _Lines(self.source, starts)[position.line]
        units_of = self._position_codec.impl.code_units_for_char
        units = k = 0
        content = _content(line)
        while k < content and units < position.character:
            units += units_of(line[k])
            k += 1
        return starts[position.line] + k

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


def _content(line: str) -> int:
    """The length of `line` without its line break: a column past it is the line's end."""
    if line.endswith("\r\n"):
        return len(line) - 2
    return len(line) - 1 if line.endswith(("\n", "\r")) else len(line)


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


def open_document(workspace: Workspace, uri: str) -> TextDocument | None:
    """The open document at `uri`, or None. pygls keys its documents by the URI unquoted
    (`file:///a b.sq` for `file:///a%20b.sq`): a lookup by the URI as sent, or as
    `from_fs_path` makes it, found nothing for a path with a space or a non-ASCII name."""
    return workspace.text_documents.get(unquote(uri))


def use_documents(workspace: Workspace) -> None:
    """Make `workspace` open its documents as `Document`s from now on."""
    if type(workspace) is Workspace:
        workspace.__class__ = _Workspace
