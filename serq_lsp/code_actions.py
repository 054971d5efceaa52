"""Code actions: a quick fix for every diagnostic that carries a `Fix`, and `source.fixAll`.

The fixes come from the analysis's own diagnostics (the ones `serq check --json`
prints), not from the client's copy. A diagnostic's fix is offered where the requested
range touches the diagnostic or the fix's edits; when the request names diagnostics of
the document (its context: those under the cursor, or the one whose hover asks), only
for those, so that each fix is offered for the diagnostic it mends alone. A fix is
`isPreferred` when it is safe. `source.fixAll` applies every safe fix of the document
whose edits do not overlap.
"""

from __future__ import annotations

from lsprotocol import types

from serq.diagnostics import Diagnostic, Span
from serq.syntax.source_text import text_start
from serq_lsp.convert import lsp_diagnostic, lsp_diagnostics, lsp_range
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer

KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll]


def _fixable(analysis) -> list[Diagnostic]:
    """The diagnostics of the document itself whose fix edits only the document."""
    return [
        d
        for d in analysis.diagnostics
        if d.fix is not None
        and d.fix.applicability != "display"
        and d.span.file == analysis.path
        and all(e.span.file == analysis.path for e in d.fix.edits)
    ]


def _edit(uri: str, edits, lines, begin: int = 0) -> types.WorkspaceEdit:
    """The edits as LSP's, none before `begin`, where the program begins (past a byte-order
    mark the document keeps: a fix "at the top of the file" goes after it, as `serq check`'s
    does, which reads the file without it)."""
    spans = [_from(e.span, begin) for e in edits]
    return types.WorkspaceEdit(
        changes={
            uri: [
                types.TextEdit(lsp_range(s, lines), e.replacement)
                for s, e in zip(spans, edits, strict=True)
            ]
        }
    )


def _from(span: Span, begin: int) -> Span:
    """`span` starting at `begin` at the earliest (`begin` is 0 or 1, on the first line)."""
    if span.start >= begin:
        return span
    end = max(span.end, begin)
    end_column = span.end_column if span.end >= begin else begin + 1
    return Span(span.file, begin, end, 1, begin + 1, span.end_line, end_column)


def _touches(span, r: types.Range, lines) -> bool:
    s = lsp_range(span, lines)
    start, end = (s.start.line, s.start.character), (s.end.line, s.end.character)
    return start <= (r.end.line, r.end.character) and end >= (r.start.line, r.start.character)


def actions(analysis, uri: str, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The quick fixes for the diagnostics `params.range` touches, and a fix-all."""
    only = params.context.only
    lines = analysis.lines
    begin = text_start(analysis.text)
    out: list[types.CodeAction] = []
    fixable = _fixable(analysis)
    if not only or any(k.startswith(types.CodeActionKind.QuickFix) for k in only):
        shown = [
            (d, lsp_diagnostic(d, lines, uri))
            for d in fixable
            if _touches(d.span, params.range, lines)
            or any(_touches(e.span, params.range, lines) for e in d.fix.edits)
        ]
        asked = {_key(a) for a in params.context.diagnostics or ()}
        if asked and asked & {_key(p) for p in lsp_diagnostics(analysis, uri)}:  # those named
            shown = [(d, shown_d) for d, shown_d in shown if _key(shown_d) in asked]
        for d, shown_d in shown:
            out.append(
                types.CodeAction(
                    title=_title(d),
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[shown_d],
                    is_preferred=d.fix.applicability == "safe",
                    edit=_edit(uri, d.fix.edits, lines, begin),
                )
            )
    if not only or any(types.CodeActionKind.SourceFixAll.startswith(k) for k in only):
        safe = _disjoint([d for d in fixable if d.fix.applicability == "safe"])
        if safe:
            edits = [e for d in safe for e in d.fix.edits]
            out.append(
                types.CodeAction(
                    title="serq: fix all safe problems",
                    kind=types.CodeActionKind.SourceFixAll,
                    diagnostics=[lsp_diagnostic(d, lines, uri) for d in safe],
                    edit=_edit(uri, edits, lines, begin),
                )
            )
    return out


def _key(d: types.Diagnostic) -> tuple:
    """What identifies a diagnostic the client sends back: its code, range and message."""
    r = d.range
    where = (r.start.line, r.start.character, r.end.line, r.end.character)
    return (str(d.code), where, d.message)


def _title(d: Diagnostic) -> str:
    title = d.fix.title
    return title[:1].upper() + title[1:]


def _disjoint(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics whose edits overlap no earlier one's (and no duplicates of an edit)."""
    taken: list[tuple[int, int]] = []
    kept = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        ranges = [(e.span.start, e.span.end) for e in d.fix.edits]
        if any(_overlap(r, t) for r in ranges for t in taken):
            continue
        taken.extend(ranges)
        kept.append(d)
    return kept


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    if a == b:
        return True
    return a[0] < b[1] and b[0] < a[1]


def register(server: SerqServer) -> None:
    """Add quick fixes and `source.fixAll` to `server`."""

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=KINDS)
    )
    @guarded
    def code_action(ls: SerqServer, params: types.CodeActionParams):
        uri = params.text_document.uri
        return actions(ls.analysis(uri), uri, params) or None
