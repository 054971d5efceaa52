"""serq diagnostics to LSP values: ranges in UTF-16 code units, as LSP counts."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path

from serq.diagnostics import Diagnostic, LineIndex, Severity, Span

if TYPE_CHECKING:
    from serq_lsp.analysis import Analysis

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


def fs_uri(path: str) -> str | None:
    """The file URI of `path`, or None when it has none: a path with an invalid byte (a
    `use` of a name that is not UTF-8) cannot be quoted."""
    try:
        return from_fs_path(path)
    except UnicodeEncodeError:
        return None


def lsp_range(span: Span, lines: LineIndex) -> types.Range:
    """The LSP range of `span`, whose file's text `lines` indexes."""
    start = types.Position(span.line - 1, lines.utf16_column(span.line, span.column))
    end = types.Position(span.end_line - 1, lines.utf16_column(span.end_line, span.end_column))
    return types.Range(start, end)


def lsp_diagnostic(diag: Diagnostic, lines: LineIndex, uri: str) -> types.Diagnostic:
    """One serq diagnostic as LSP shows it: range, severity, code, message, related spans."""
    message = diag.message
    extra = [f"note: {n}" for n in diag.notes] + ([f"help: {diag.help}"] if diag.help else [])
    if extra:
        message = "\n".join([message, *extra])
    related = [
        types.DiagnosticRelatedInformation(
            types.Location(uri, lsp_range(label.span, lines)), label.text or "here"
        )
        for label in diag.labels
        if label.span.file == diag.span.file and label.span != diag.span
    ]
    return types.Diagnostic(
        range=lsp_range(diag.span, lines),
        message=message,
        severity=_SEVERITY[diag.severity],
        code=diag.code,
        source="serq",
        related_information=related or None,
    )


def lsp_diagnostics(analysis: Analysis, uri: str) -> list[types.Diagnostic]:
    """Every diagnostic of `analysis` for the document at `uri`; one found in a `use`d file is
    shown on the `use` that brought it in, its place in that file in the message."""
    out = []
    for diag in analysis.diagnostics:
        if diag.span.file != analysis.path:
            diag = _moved_to_use(diag, analysis)
        out.append(lsp_diagnostic(diag, analysis.lines, uri))
    return out


def _moved_to_use(diag: Diagnostic, analysis: Analysis) -> Diagnostic:
    uses = analysis.use_items()
    file = os.path.abspath(diag.span.file)
    base = os.path.dirname(analysis.path)
    chosen = next(
        (u for u in uses if os.path.abspath(os.path.join(base, u.path)) == file),
        uses[0] if uses else None,
    )
    span = chosen.span if chosen else Span.point(analysis.path, 0, 1, 1)
    where = f"{diag.span.file}:{diag.span.line}:{diag.span.column}"
    return replace(diag, span=span, message=f"in {where}: {diag.message}", labels=())
