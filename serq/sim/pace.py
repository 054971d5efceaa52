"""A run whose clock crawls: so many events for so little time that it would never end.

A program whose times are many orders of magnitude apart (a ps stage of capacity 1e300
serving a closed population, a run of work 1e-300 in a loop) moves its clock forward at
every event, so no zero-time detector sees it, but by so little that reaching the
horizon would take more events than any machine runs. `Pace` watches the clock through
the run's progress callback (every `serq.sim.core.PROGRESS_EVERY` events), projects the
events left from the pace so far, and stops the run with an `E-run` when the projection
passes `EVENTS_LIMIT`. A burst of events at one instant (a large batch arriving) does not
count: only a clock that moves, too slowly, does.
"""

from __future__ import annotations

from collections.abc import Callable

from serq.sim.core import PROGRESS_EVERY
from serq.sim.errors import SimError, number

# The events a run may be projected to need before the guard stops it: far beyond any
# run that ends (10^18 events is tens of thousands of years at a microsecond each), so
# that only a clock off by many orders of magnitude trips it, never a run whose early
# events came denser than its later ones.
EVENTS_LIMIT = 10**18
# The events watched before the pace is judged (4 progress calls).
WINDOW = 4 * PROGRESS_EVERY


class Pace:
    """The progress callback of a run to `horizon` that stops a crawling clock, and passes
    the time on to `inner` (a progress bar), if given."""

    __slots__ = ("horizon", "inner", "calls", "first")

    def __init__(self, horizon: float, inner: Callable[[float], None] | None = None) -> None:
        self.horizon = horizon
        self.inner = inner
        self.calls = 0
        self.first: float | None = None  # the clock at the first call

    def __call__(self, now: float) -> None:
        if self.inner is not None:
            self.inner(now)
        self.calls += 1
        if self.first is None:
            self.first = now
            return
        events = (self.calls - 1) * PROGRESS_EVERY
        moved = now - self.first
        if events < WINDOW or not moved > 0 or not now < self.horizon:
            return
        left = (self.horizon - now) / moved * events
        if left > EVENTS_LIMIT:
            raise SimError(
                None,
                f"the clock crawls: {events:,} events moved it from {number(self.first)} "
                f"to {number(now)}, and at that pace the horizon {number(self.horizon)} is "
                f"about {left:.1g} events away: some time or rate in the program is off by "
                "many orders of magnitude",
            )
