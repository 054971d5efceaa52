"""Folding ranges: every item, queue member and block that spans lines, and block comments."""

from __future__ import annotations

import re

from lsprotocol import types

from serq.expand.walk import walk
from serq.syntax import ast
from serq_lsp.analysis import Analysis
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer

_FOLDED = (
    ast.Block,
    ast.Pool,
    ast.Queue,
    ast.QueuePool,
    ast.Entry,
    ast.Workload,
    ast.Step,
    ast.RunSettings,
    ast.FnMain,
)
_COMMENT = re.compile(r"/\*(?:.|\n)*?\*/")


def register(server: SerqServer) -> None:
    """Add folding ranges to `server`."""

    @server.feature(types.TEXT_DOCUMENT_FOLDING_RANGE)
    @guarded
    def folding_ranges(ls: SerqServer, params: types.FoldingRangeParams):
        return ranges(ls.parsed(params.text_document.uri))


def ranges(analysis: Analysis) -> list[types.FoldingRange]:
    """The folding ranges of `analysis`' document, one per start line."""
    found: dict[int, int] = {}
    spans = []
    main = analysis.main_span()
    if main is not None:
        spans.append(main)  # `fn main`'s own, and those of the items inside it below
    for item, place in analysis.placed_items():
        spans.extend(place(node.span) for node in walk(item) if isinstance(node, _FOLDED))
    for span in spans:
        if span.end_line > span.line:
            start, end = span.line - 1, span.end_line - 1
            found[start] = max(found.get(start, end), end)
    out = [types.FoldingRange(start_line=s, end_line=e) for s, e in sorted(found.items())]
    for match in _COMMENT.finditer(analysis.text):
        s, e = analysis.lines.position(match.start())[0], analysis.lines.position(match.end())[0]
        if e > s:
            out.append(
                types.FoldingRange(
                    start_line=s - 1, end_line=e - 1, kind=types.FoldingRangeKind.Comment
                )
            )
    return out
