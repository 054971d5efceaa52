"""serq diagnostics to LSP values: ranges in UTF-16 code units, as LSP counts."""

from __future__ import annotations

from lsprotocol import types

from serq.diagnostics import Diagnostic, LineIndex, Severity, Span

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


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
