"""Formatting: `textDocument/formatting` and `rangeFormatting` through `serq fmt`'s formatter.

A range formats the items it touches, as the whole file would format them, and leaves
the others as written; the answer is the changed runs of lines only.
"""

from __future__ import annotations

import difflib

from lsprotocol import types

from serq.formatter import format_source
from serq.syntax.source_text import BOM, lines_with_ends
from serq_lsp import convert
from serq_lsp.documents import open_document
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer, _source


def line_edits(old: str, new: str) -> list[tuple[int, int, str]]:
    """The edits that turn `old` into `new`, as (first line, end line, replacement) over lines."""
    a = lines_with_ends(old)
    b = lines_with_ends(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        (i1, i2, "".join(b[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def text_edits(old: str, new: str) -> list[types.TextEdit]:
    """LSP edits from `old` to `new`, one for each run of changed lines."""
    lines = lines_with_ends(old)
    count = len(lines)
    edits = []
    for first, end, replacement in line_edits(old, new):
        if end >= count and not old.endswith(("\n", "\r")) and count:  # no final line break
            tail = lines[-1]
            stop = types.Position(count - 1, convert.length(tail))
        else:
            stop = types.Position(end, 0)
        edits.append(types.TextEdit(types.Range(types.Position(first, 0), stop), replacement))
    return edits


def register(server: SerqServer) -> None:
    """Add whole-document and range formatting to `server`."""

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    @guarded
    def formatting(ls: SerqServer, params: types.DocumentFormattingParams):
        document = ls.workspace.get_text_document(params.text_document.uri)
        text = _source(document)  # a document not open whose file is gone: empty, as elsewhere
        parsed = _parsed(ls, params.text_document.uri, text)
        return text_edits(text, _formatted(text, document.path or document.uri, None, parsed))

    @server.feature(types.TEXT_DOCUMENT_RANGE_FORMATTING)
    @guarded
    def range_formatting(ls: SerqServer, params: types.DocumentRangeFormattingParams):
        document = ls.workspace.get_text_document(params.text_document.uri)
        text = _source(document)
        if not text:  # nothing to format (and no lines to find the range on)
            return []
        r = params.range
        start = document.offset_at_position(r.start)
        end = document.offset_at_position(r.end)
        parsed = _parsed(ls, params.text_document.uri, text)
        new = _formatted(text, document.path or document.uri, (start, end), parsed)
        return text_edits(text, new)


def _formatted(text: str, path: str, only: tuple[int, int] | None, parsed) -> str:
    """`serq fmt`'s text of the document, its leading byte-order mark kept as `serq fmt`
    keeps a file's (the formatter prints what the parser reads, without it)."""
    new = format_source(text, path, only, parsed).text
    if text.startswith(BOM) and not new.startswith(BOM):
        new = BOM + new
    return new


def _parsed(ls: SerqServer, uri: str, text: str):
    """The parse of `text` that the open document's analysis holds (a 10,000-line document
    is not parsed again for each formatting), or None."""
    if open_document(ls.workspace, uri) is None:
        return None
    analysis = ls.analysis(uri)
    return analysis.parsed if analysis.text == text else None
