"""The one exception a run raises: `SimError`, a run-time failure of the program.

`simulate` catches it and turns it into an `E-run` diagnostic at the IR origin it carries,
so a failing run reports a span, never a traceback.
"""

from __future__ import annotations

from serq.diagnostics import Diagnostic, Span, codes


class SimError(Exception):
    """The program failed while it ran: `message` about the construct at `origin`."""

    def __init__(self, origin: Span | None, message: str) -> None:
        super().__init__(message)
        self.origin = origin
        self.message = message

    def diagnostic(self, fallback: Span) -> Diagnostic:
        """This failure as an `E-run` diagnostic (at `fallback` when it has no origin)."""
        return Diagnostic.error(codes.RUNTIME, self.origin or fallback, self.message)
