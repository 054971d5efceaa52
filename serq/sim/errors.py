"""The one exception a run raises: `SimError`, a run-time failure of the program.

`simulate` catches it and turns it into an `E-run` diagnostic at the IR origin it carries,
so a failing run reports a span, never a traceback. The world adds where the run was: the
serial of the session that was executing (when one was) and the simulated time, as notes.
`out_of_domain` builds the error of a value computed outside its domain (negative work,
NaN units, a draw's parameter outside its law), with the value in the message.
"""

from __future__ import annotations

import math

from serq.diagnostics import Diagnostic, Span, codes


class SimError(Exception):
    """The program failed while it ran: `message` about the construct at `origin`; `serial`
    is the session executing then (None: none was), `time` the simulated time."""

    def __init__(self, origin: Span | None, message: str) -> None:
        super().__init__(message)
        self.origin = origin
        self.message = message
        self.serial: int | None = None
        self.time: float | None = None

    def diagnostic(self, fallback: Span) -> Diagnostic:
        """This failure as an `E-run` diagnostic (at `fallback` when it has no origin)."""
        notes = []
        if self.serial is not None:
            notes.append(f"in session {self.serial}")
        if self.time is not None:
            notes.append(f"at simulated time {number(self.time)}")
        where = ("; ".join(notes),) if notes else ()
        return Diagnostic.error(codes.RUNTIME, self.origin or fallback, self.message, notes=where)


def out_of_domain(origin: Span | None, what: str, value: float, rule: str) -> SimError:
    """The error of `what` computed as `value`, which is not `rule` (e.g. "at least 0")."""
    return SimError(origin, f"{what} is {number(value)}; it must be {rule}")


def bad_work(origin: Span | None, work: float, serial: int | None = None) -> SimError:
    """The error of a run whose work is NaN, in session `serial` when given. Work of 0 or
    below is a run that completes at once: the reference's rule, which `prefill (prompt -
    c)` relies on when the cached prefix covers the prompt."""
    error = out_of_domain(origin, "the work of the run", work, "a number")
    error.serial = serial
    return error


def number(value: float) -> str:
    """`value` as the language writes it (3, 2.5, inf, NaN)."""
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return str(int(value)) if value == math.floor(value) and abs(value) < 1e15 else repr(value)
