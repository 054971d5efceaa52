"""The one diagnostic type of every serq stage, and its renderings.

A `Diagnostic` is a code declared in `codes`, a severity, the primary span, a short message and
optional labels, notes, help and fix. Renderers (`render_full`, `render_concise`, `to_json`) only
read it. This package imports no other serq module.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from serq.diagnostics import codes
from serq.diagnostics.render import (
    print_diagnostics,
    render_concise,
    render_full,
    render_json,
    to_json,
)
from serq.diagnostics.span import LineIndex, Span

__all__ = [
    "Span",
    "LineIndex",
    "Severity",
    "Label",
    "Edit",
    "Fix",
    "Diagnostic",
    "codes",
    "render_full",
    "render_concise",
    "to_json",
    "render_json",
    "print_diagnostics",
    "number_text",
    "counted",
]

APPLICABILITIES = ("safe", "unsafe", "display")


def counted(n: int, noun: str) -> str:
    """`n` and `noun`, plural unless `n` is 1: "1 argument", "2 arguments", "0 arguments"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def number_text(x: float) -> str:
    """A number as a message shows it: a whole number without a fraction, as far as a
    float holds whole numbers exactly (below 2**53); else its repr (1e+300, inf, nan)."""
    return str(int(x)) if x == x and abs(x) < 2**53 and x == int(x) else repr(x)


class Severity(enum.IntEnum):
    """How serious a diagnostic is; ordered NOTE < WARNING < ERROR."""

    NOTE = 0
    WARNING = 1
    ERROR = 2

    @property
    def label(self) -> str:
        """The lower-case word used in output: `note`, `warning` or `error`."""
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class Label:
    """A secondary span with a short text, e.g. "declared here"; a label whose span equals the
    diagnostic's own span gives the text under the primary carets instead."""

    span: Span
    text: str = ""


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text of `span` by `replacement`; an empty span inserts, an empty text deletes."""

    span: Span
    replacement: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A titled set of edits, kept sorted by position, with an applicability of "safe",
    "unsafe" or "display" (shown only, never applied)."""

    title: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"

    def __post_init__(self) -> None:
        if self.applicability not in APPLICABILITIES:
            raise ValueError(f"bad fix applicability {self.applicability!r}")
        edits = tuple(sorted(self.edits, key=lambda e: (e.span.file, e.span.start, e.span.end)))
        object.__setattr__(self, "edits", edits)


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem found in a program: `code` is the id of a code declared in `codes`, `message` one
    lower-case phrase with names in backticks, `labels` secondary spans with short texts."""

    code: str
    severity: Severity
    span: Span
    message: str
    labels: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: str | None = None
    fix: Fix | None = None

    def __post_init__(self) -> None:
        if isinstance(self.code, codes.Code):
            object.__setattr__(self, "code", self.code.id)
        if self.code not in codes.ALL:
            raise ValueError(f"undeclared diagnostic code {self.code!r}; add it to codes.py")
        object.__setattr__(self, "severity", Severity(self.severity))
        object.__setattr__(self, "labels", tuple(self.labels))
        object.__setattr__(self, "notes", tuple(self.notes))

    @classmethod
    def error(cls, code: str | codes.Code, span: Span, message: str, **kw: Any) -> Diagnostic:
        """Return an error with `code` at `span`; `kw` sets labels, notes, help or fix."""
        return cls(code, Severity.ERROR, span, message, **kw)  # type: ignore[arg-type]

    @classmethod
    def warning(cls, code: str | codes.Code, span: Span, message: str, **kw: Any) -> Diagnostic:
        """Return a warning with `code` at `span`; `kw` sets labels, notes, help or fix."""
        return cls(code, Severity.WARNING, span, message, **kw)  # type: ignore[arg-type]

    @classmethod
    def note(cls, code: str | codes.Code, span: Span, message: str, **kw: Any) -> Diagnostic:
        """Return a note with `code` at `span`; `kw` sets labels, notes, help or fix."""
        return cls(code, Severity.NOTE, span, message, **kw)  # type: ignore[arg-type]

    def sort_key(self) -> tuple[str, int, int, str]:
        """Return the key that orders diagnostics by file, position and code."""
        return (self.span.file, self.span.start, self.span.end, self.code)
