"""A run whose clock crawls: so many events for so little time that it would never end.

A program whose times are many orders of magnitude apart (a ps stage of capacity 1e300
serving a closed population, a run of work 1e-300 in a loop) moves its clock forward at
every event, so no zero-time detector sees it, but by so little that reaching the
horizon would take more events than any machine runs. `Pace` watches the clock through
the run's progress callback (every `serq.sim.core.PROGRESS_EVERY` events), projects the
events left from the pace since time 0, and stops the run with an `E-run` when the
projection passes `EVENTS_LIMIT`. A burst of events at time 0 (a large batch arriving)
does not count: only a clock that moves, too slowly, does.
"""

from __future__ import annotations

from collections.abc import Callable

from serq.sim.core import PROGRESS_EVERY
from serq.sim.errors import SimError, number

# The events a run may be projected to need before the guard stops it: far beyond any
# run that ends (10^18 events is tens of thousands of years at a microsecond each), so
# that only a clock off by many orders of magnitude trips it (a ratio of more than 10^13
# between the horizon and the time the first 65,536 events took), never a run whose early
# events came denser than its later ones.
EVENTS_LIMIT = 10**18


class Pace:
    """The progress callback of a run from time 0 to `horizon` that stops a crawling
    clock, and passes the time on to `inner` (a progress bar), if given."""

    __slots__ = ("horizon", "inner", "events")

    def __init__(self, horizon: float, inner: Callable[[float], None] | None = None) -> None:
        self.horizon = horizon
        self.inner = inner
        self.events = 0

    def __call__(self, now: float) -> None:
        if self.inner is not None:
            self.inner(now)
        self.events += PROGRESS_EVERY
        if not (0 < now < self.horizon):  # a burst at one instant, or the end: no pace
            return
        left = (self.horizon - now) / now * self.events
        if left > EVENTS_LIMIT:
            raise SimError(
                None,
                f"the clock crawls: {self.events:,} events moved it from 0 to {number(now)}, "
                f"and at that pace the horizon {number(self.horizon)} is about {left:.1g} "
                "events away: some time or rate in the program is off by many orders of "
                "magnitude",
            )
