"""The event loop: a clock, a heap of scheduled actions, and the instant boundaries.

An event is `(time, seq, action, arg)`; `seq` breaks ties, so events at one instant fire
in the order they were scheduled and actions are never compared. After every event the
loop calls `settle` (the world runs its ready sessions and retries its pools), and when
the clock is about to move it calls `end_instant` (gauges read the state the instant's
last event left). The core knows no pools, stages or sessions. The engine also carries
the context variables an expression reads (`now`, `present`, `size`, ...), so compiled
expressions find them with one attribute load.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from itertools import count
from typing import Any

from serq.sim.errors import SimError, number

Action = Callable[[Any], None]
PROGRESS_EVERY = 1 << 16
# events at one instant before the run is called stuck: a clock that cannot advance (a
# positive delay below its resolution, 1e20 + 1 == 1e20, repeated in a loop, say)
INSTANT_LIMIT = 10_000_000
# the latest time an event fires at: one scheduled at inf (a job of infinite work, an
# iteration that costs inf) never fires, even under a horizon of inf (`arrivals N`)
LATEST = sys.float_info.max


class ClockStops(SimError):
    """A run whose clock cannot advance (`clock_stops`); the world places it at the loop
    that repeats the work (`World.place_clock_stop`) when it can tell which."""


def clock_stops(now: float, events: int) -> SimError:
    """The error of a run that fired `events` events at the instant `now` (both event
    paths raise it at the same event)."""
    return ClockStops(
        None,
        f"the clock stops at {number(now)}: {events:,} events at that instant without "
        "time passing (work that takes no time, such as a run at a ps stage of capacity "
        "inf, or a delay too small to move a clock that large, ends at the same instant, "
        "and something repeats it)",
    )


class Engine:
    """The clock and the event heap of one run."""

    __slots__ = (
        "now",
        "current_seq",
        "events",
        "stopped",
        "until",
        "_heap",
        "_seq",
        # context variables read by compiled expressions
        "present",
        "size",
        "age",
        "last",
        "waiting",
        "waited",
        # a step stage's
        "residents",
        "decoders",
        "kv_decode",
        "kv_prefill",
        "tokens",
        "prefilled",
        "attention",
        "decoding",
        "admission",
        "remaining",
        # a claim over iterations' (pyserq 0.1.4), and a preempt key's
        "demand",
        "served",
        "arrived",
        "position",
    )

    def __init__(self) -> None:
        self.now = 0.0
        self.current_seq = -1
        self.events = 0
        self.stopped = False
        self.until = float("inf")  # the run's horizon: no event after it fires
        self._heap: list[tuple[float, int, Action, Any]] = []
        self._seq = count().__next__
        self.present = self.size = self.age = self.last = self.waiting = self.waited = 0.0
        self.residents = self.decoders = self.kv_decode = self.kv_prefill = 0.0
        self.tokens = self.prefilled = self.attention = 0.0
        self.decoding = self.admission = self.remaining = 0.0
        self.demand = self.served = self.arrived = self.position = 0.0

    def schedule(self, time: float, action: Action, arg: Any = None) -> int:
        """Call `action(arg)` at `time` (not before now); returns the event's sequence number."""
        seq = self._seq()
        heappush(self._heap, (time, seq, action, arg))
        return seq

    def take(self, seq: int) -> tuple[float, int, Action, Any] | None:
        """Take the pending event numbered `seq` out of the heap and return it (None when
        it is not pending)."""
        heap = self._heap
        for i, entry in enumerate(heap):
            if entry[1] == seq:
                last = heap.pop()
                if i < len(heap):
                    heap[i] = last
                    heapify(heap)
                return entry
        return None

    def peek(self) -> float:
        """The time of the next event, or inf when none is scheduled."""
        return self._heap[0][0] if self._heap else float("inf")

    def stop(self) -> None:
        """End the run after the current event."""
        self.stopped = True

    def run(
        self,
        until: float,
        settle: Callable[[], None],
        end_instant: Callable[[float], None],
        progress: Callable[[float], None],
    ) -> None:
        """Fire every event up to and including time `until`, settling after each."""
        self.until = until
        until = min(until, LATEST)  # an event at inf never fires
        heap = self._heap
        mask = PROGRESS_EVERY - 1  # a power of two: progress every PROGRESS_EVERY events
        fired = 0
        now = self.now
        same = 0  # the events of the instant so far, less one
        # `while True`: CPython 3.11 never specialises a loop that tests at its top in a
        # function called once (only an unconditional jump back warms the code up)
        while True:
            if not heap or self.stopped:
                break
            time = heap[0][0]
            if time > until:
                break
            if time != now:
                end_instant(now)
                self.now = now = time
                same = 0
            else:
                same += 1
                if same >= INSTANT_LIMIT:
                    raise clock_stops(now, same + 1)
            _, self.current_seq, action, arg = heappop(heap)
            action(arg)
            settle()
            fired += 1
            if not fired & mask:
                progress(time)
        self.events += fired
        end_instant(self.now)
