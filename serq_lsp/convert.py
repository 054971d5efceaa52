"""serq diagnostics to LSP values, and the one place LSP columns are counted.

A client counts a position's `character` in the code units of the encoding the server
announced at `initialize` (UTF-16 unless the client offered and was given UTF-8 or
UTF-32: LSP 3.17's `positionEncoding`). Every position serq-lsp reads or writes goes
through `character`, `column` or `length` here, which count in that encoding; pygls
applies the document's incremental changes in the same one (its workspace's codec).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import from_fs_path

from serq.diagnostics import Diagnostic, LineIndex, Severity, Span
from serq.diagnostics.span import units

if TYPE_CHECKING:
    from serq_lsp.analysis import Analysis

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}


ENCODINGS = ("utf-8", "utf-16", "utf-32")
_encoding = "utf-16"  # the session's, set at `initialize`: one client a process


def use_encoding(kind: str) -> None:
    """Count every position in `kind`'s code units from now on (one of `ENCODINGS`)."""
    global _encoding
    if kind not in ENCODINGS:
        raise ValueError(f"unknown position encoding {kind!r}")
    _encoding = kind


def character(lines: LineIndex, line: int, column: int) -> int:
    """The LSP `character` of 1-based code-point `line`:`column` of `lines`' text."""
    return lines.unit_column(line, column, _encoding)


def column(lines: LineIndex, line: int, character: int) -> int:
    """The 1-based code-point column of the LSP `character` on 1-based `line`."""
    return lines.column_from_units(line, character, _encoding)


def length(text: str) -> int:
    """The length of `text` as the client counts it."""
    return units(text, _encoding)


def fs_uri(path: str) -> str | None:
    """The file URI of `path`, or None when it has none: a path with an invalid byte (a
    `use` of a name that is not UTF-8) cannot be quoted."""
    try:
        return from_fs_path(path)
    except UnicodeEncodeError:
        return None


def lsp_range(span: Span, lines: LineIndex) -> types.Range:
    """The LSP range of `span`, whose file's text `lines` indexes."""
    start = types.Position(span.line - 1, character(lines, span.line, span.column))
    end = types.Position(span.end_line - 1, character(lines, span.end_line, span.end_column))
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
        if diag.span.file == analysis.path:
            out.append(lsp_diagnostic(diag, analysis.lines, uri))
            continue
        there = _in_library(diag.span, analysis)
        shown = lsp_diagnostic(_moved_to_use(diag, analysis), analysis.lines, uri)
        if there is not None:  # the client links the message to the place in the library
            shown.related_information = [there, *(shown.related_information or ())]
        out.append(shown)
    return out


def _in_library(span: Span, analysis: Analysis) -> types.DiagnosticRelatedInformation | None:
    """Where `span`, in a file the document `use`s, is, as LSP links to it (the file read
    as the analysis reads it: its buffer when open), or None when it cannot be read."""
    from serq.expand.loader import read_file

    uri = fs_uri(os.path.abspath(span.file))
    loaded = (analysis.load or read_file)(span.file)
    if uri is None or isinstance(loaded, str) or loaded.layout is None:
        return None
    location = types.Location(uri, lsp_range(span, loaded.layout.line_index))
    return types.DiagnosticRelatedInformation(location, "here, in the `use`d file")


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
