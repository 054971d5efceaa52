"""What a run says about memory: a workload that can never fit, and a run that ran out.

A batch or a closed population has every session live at once, and a live session takes
some 900 bytes at least (an empty one, on either path: measured with `arrive
batch(1000000)` and `run d (1)`). When `SESSION_BYTES_LEAST` times the sessions exceeds
the machine's memory, the run could only swap, be killed or raise `MemoryError` deep
inside, so it is refused at the `arrive` before it starts. A run that runs out anyway (an
open workload that builds a backlog) lets go of its state and says where it was.
"""

from __future__ import annotations

import os

from serq import ir
from serq.diagnostics import Diagnostic, Span, codes
from serq.diagnostics import number_text as _num
from serq.sim.errors import SimError

SESSION_BYTES_LEAST = 500  # below the least a live session takes (some 900 bytes)

_HELP = (
    "fewer sessions at once (a smaller batch or population, a lower rate) or a shorter "
    "horizon need less; every live session and every sample is kept in memory"
)


def machine_memory() -> int | None:
    """The machine's physical memory in bytes, None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def too_many_at_once(program: ir.Program, memory: int | None) -> SimError | None:
    """The error of a batch or closed population whose sessions, all live at once, could
    never fit in `memory` bytes (None: not known, nothing refused)."""
    arrival = program.arrival
    if isinstance(arrival, ir.Batch):
        n, what = arrival.size, "a batch"
    elif isinstance(arrival, ir.Closed):
        n, what = arrival.population, "a closed population"
    else:
        return None
    if memory is None or n * SESSION_BYTES_LEAST <= memory:
        return None
    return SimError(
        arrival.origin,
        f"{what} of {n:,} sessions, all live at once, needs over "
        f"{_gigabytes(n * SESSION_BYTES_LEAST)} of memory (at least {SESSION_BYTES_LEAST} "
        f"bytes a session), and this machine has {_gigabytes(memory)}",
    )


def out_of_memory(where: Span, now: float | None, live: int | None) -> Diagnostic:
    """The error of a run that ran out of memory at `now` with `live` sessions (None: not
    known, the memory having run out outside the run's loop)."""
    if now is None or live is None:
        message = "the run ran out of memory"
    else:
        sessions = "1 session" if live == 1 else f"{live:,} sessions"
        message = f"the run ran out of memory at simulated time {_num(now)} with {sessions} live"
    return Diagnostic.error(codes.RUNTIME, where, message, help=_HELP)


def _gigabytes(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB" if n < 2**60 else f"{n / 2**30:.3g} GiB"
