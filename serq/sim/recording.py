"""What the simulator tells the statistics, as it happens.

The interpreter calls a `Recorder` at every change of what the report measures;
`serq.report` turns the calls into time averages, counts and samples. Members
are indices into `Program.pools` / `Program.stages`; times are the simulation
clock. The recorder applies the warm-up itself (the simulator always calls).
"""

from __future__ import annotations

from typing import Protocol


class Recorder(Protocol):
    """The simulator's side of the statistics."""

    def observe(self, stat: int, now: float, session: int, turn: int, value: float) -> None:
        """`observe` number `stat` of `Program.observes` took `value` in session `session`
        (its serial) at its turn `turn`."""

    def stage_state(self, stage: int, now: float, present: int, busy: float) -> None:
        """From `now` on, stage member `stage` has `present` jobs (waiting and in service)
        and `busy` is the fraction of its capacity in use (fifo(c): in service / c; ps and
        step: 1 while any job is present; delay: 1 while any job is present)."""

    def stage_done(self, stage: int, now: float, wait: float, service: float) -> None:
        """A job completed at stage member `stage` after waiting `wait` and being served
        `service` (its time at the stage is wait + service)."""

    def pool_state(
        self, pool: int, now: float, used: float, cached: float, queued: int, holders: int
    ) -> None:
        """From `now` on, pool member `pool` has `used` units allocated, `cached` units
        cached, `queued` sessions waiting in its queue and `holders` sessions holding it."""

    def pool_admitted(self, pool: int, now: float, waited: float) -> None:
        """A session was admitted to pool member `pool` (the first pool of its hold) after
        waiting `waited` in its queue."""

    def pool_count(self, pool: int, what: str, amount: float = 1) -> None:
        """Count an event at pool member `pool`: `what` is one of "evicted_entries",
        "evicted_units", "preemptions", "spills", "rejected", "stuck"."""

    def iteration(
        self,
        stage: int,
        now: float,
        prefills: int,
        decodes: int,
        tokens: float,
        ends: float | None = None,
    ) -> None:
        """Step stage member `stage` started an iteration at `now` with `prefills`
        prefilling and `decodes` decoding residents scheduling `tokens` tokens, due to
        end at `ends`."""

    def iteration_end(self, stage: int, now: float) -> None:
        """The iteration of step stage member `stage` ended at `now`: until the next one
        starts the stage does not iterate (its residents may be stalled on a growth)."""

    def gauges(self, now: float, values: tuple[float, ...]) -> None:
        """The gauges' values at the end of the instant `now` (held until the next call)."""

    def arrival(self, now: float, session: int) -> None:
        """Session `session` (its serial) arrived."""

    def session_ended(self, now: float, session: int) -> None:
        """Session `session` ended (`end;`, the end of its block, or a rejection)."""

    def turn(self, now: float, session: int) -> None:
        """Session `session` executed `turn;`."""

    def progress(self, now: float) -> None:
        """The clock reached `now` (called now and then, for a progress bar)."""


class NullRecorder:
    """A recorder that keeps nothing: for runs whose statistics nobody reads."""

    def __getattr__(self, name: str):
        return _ignore


def _ignore(*args: object, **kwargs: object) -> None:
    return None
