"""Folding ranges: every item, queue member and block that spans lines, block comments, and
the `// region` ... `// endregion` markers (editors/vscode/language-configuration.json's: an
editor takes the server's ranges instead of its own markers)."""

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
# the comments as the parser reads them: a `/*` in a `//` comment or a string opens none
_COMMENTS = re.compile(r'//[^\r\n]*|/\*[\s\S]*?\*/|"[^"\r\n]*"?')
_REGION = re.compile(r"//\s*#?(end)?region\b")


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
    text, lines = analysis.text, analysis.lines
    regions: list[int] = []  # the lines of the `// region` markers not closed yet
    for match in _COMMENTS.finditer(text):
        word = match.group()
        s = lines.position(match.start())[0] - 1
        if word.startswith("/*"):
            e = lines.position(match.end())[0] - 1
            if e > s:
                out.append(
                    types.FoldingRange(
                        start_line=s, end_line=e, kind=types.FoldingRangeKind.Comment
                    )
                )
        elif word.startswith("//") and (marker := _REGION.match(word)):
            line_start = max(text.rfind("\n", 0, match.start()), text.rfind("\r", 0, match.start()))
            own_line = not text[line_start + 1 : match.start()].strip()
            if not own_line:
                continue
            if marker.group(1) is None:
                regions.append(s)
            elif regions and (start := regions.pop()) < s:
                out.append(
                    types.FoldingRange(
                        start_line=start, end_line=s, kind=types.FoldingRangeKind.Region
                    )
                )
    return out
