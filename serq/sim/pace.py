"""A run whose clock crawls: so many events for so little time that it would never end.

A program whose times are many orders of magnitude apart (a ps stage of capacity 1e300
serving a closed population, a run of work 1e-300 in a loop) moves its clock forward at
every event, so no zero-time detector sees it, but by so little that reaching the
horizon would take more events than any machine runs. `Pace` watches the clock through
the run's progress callback (every `serq.sim.core.PROGRESS_EVERY` events), projects the
events left from the pace since time 0, and stops the run with an `E-run` when the
projection passes `EVENTS_LIMIT`. A burst of events at time 0 (a large batch arriving)
does not count: only a clock that moves, too slowly, does. Nor does a run of infinite
horizon, which `arrivals N` bounds: it has no horizon to be projected to.

A crawl that sets in late (a run of work 1e-13 in a loop, once the clock is at 1) hides
in the pace since time 0, whose first unit of time came at a normal pace. So the pace is
also taken over the recent events alone: those since the count of callbacks was last a
power of two at or below half the count, which is at least half of the run's events (a
window that cannot be a short burst, and is the whole run at the first callback).
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
INF = float("inf")


class Pace:
    """The progress callback of a run from time 0 to `horizon` that stops a crawling
    clock, and passes the time on to `inner` (a progress bar), if given."""

    __slots__ = ("horizon", "inner", "events", "calls", "marks", "last", "still")

    def __init__(self, horizon: float, inner: Callable[[float], None] | None = None) -> None:
        self.horizon = horizon
        self.inner = inner
        self.events = 0
        self.calls = 0
        # (events, time) at the calls numbered by a power of two, after (0, 0): the
        # starts of the recent windows (module docstring)
        self.marks: list[tuple[int, float]] = [(0, 0.0)]
        # the clock at the latest call, and the events since the first call at it (a
        # clock that stopped: what an interrupted run says, `api.execute`)
        self.last = -INF
        self.still = 0

    def __call__(self, now: float) -> None:
        if self.inner is not None:
            self.inner(now)
        self.events += PROGRESS_EVERY
        self.calls += 1
        if now == self.last:
            self.still += PROGRESS_EVERY
        else:
            self.last, self.still = now, 0
        calls = self.calls
        # no pace at one instant (a burst) or at the end, nor without a horizon to reach
        # (an infinite one, which `arrivals N` bounds: the run ends when its sessions do)
        if 0 < now < self.horizon < INF:
            self._judge(now)
        if calls & (calls - 1) == 0:
            self.marks.append((self.events, now))

    def _judge(self, now: float) -> None:
        """Stop the run (SimError) when the pace since time 0, or over the recent
        events, puts the horizon more than EVENTS_LIMIT events away."""
        events, horizon = self.events, self.horizon
        since, then = 0, 0.0
        left = (horizon - now) / now * events
        if left <= EVENTS_LIMIT:
            marks = self.marks
            since, then = marks[-1] if marks[-1][0] <= events // 2 else marks[-2]
            if now <= then:  # the clock did not move: the instant's rule (`core`)
                return
            left = (horizon - now) / (now - then) * (events - since)
            if left <= EVENTS_LIMIT:
                return
        raise SimError(
            None,
            f"the clock crawls: {events - since:,} events moved it from {number(then)} to "
            f"{number(now)}, and at that pace the horizon {number(horizon)} is about "
            f"{left:.1g} events away: some time or rate in the program is off by many "
            "orders of magnitude",
        )
