"""Stages: where time passes. One class per stage kind, all with one interface.

A job is whatever `run` put there: a session, or an anonymous spill job. A stage keeps the
job's `work`, `arrived` and `started` times on the job itself (its slots), schedules the
job's completion on the engine and, when the job is done, reports it and hands it back
through `wake`. `cancel` takes a job away (a preempted session). The step engine is
`serq.sim.step`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from itertools import count
from operator import itemgetter
from typing import Any

from serq.ir import Delay, Fifo, Ps, Stage, Step
from serq.sim.core import Engine
from serq.sim.errors import SimError, out_of_domain

INF = float("inf")


class StageBase:
    """What every stage kind offers: `arrive`, `cancel` and the observables `present`
    (`queue(s)`: the jobs there), `busy_count()` (in service) and `work_left()`."""

    __slots__ = (
        "index",
        "engine",
        "recorder",
        "wake",
        "present",
        "est_n",
        "est_start",
        "est_gap",
        "est_service",
        "est_waited",
        # the compiled path's (`serq.sim.compiled_stages`): the recorder's two levels of
        # the stage and its completion sums, kept here during the run; a ps stage's live
        # completion
        "lv_since",
        "lv_present",
        "lv_busy",
        "n_done",
        "wait_sum",
        "service_sum",
        "ps_seq",
    )

    def __init__(self, index: int, engine: Engine, recorder: Any, wake: Callable[[Any], None]):
        self.index = index
        self.engine = engine
        self.recorder = recorder
        self.wake = wake
        self.present = 0
        self.est_n = 0  # completions measured (the online estimates, `measure`)
        self.est_start = 0.0
        self.est_gap = 0.0
        self.est_service = 0.0
        self.est_waited = 0.0
        self.lv_since = 0.0
        self.lv_present = self.lv_busy = 0.0
        self.n_done = 0
        self.wait_sum = self.service_sum = 0.0
        self.ps_seq = -1

    def measure(self, started: float, wait: float, service: float) -> None:
        """A job that started service at `started`, after `wait`, completes now after
        `service` (now - started): the online estimates, as the reference keeps them, are
        exponentially weighted averages (weight 0.01 for the new sample, the first sample
        taken as it is) of the gaps between the service starts of consecutive completions,
        of the service times and of the waits, from time 0 (the warm-up resets nothing)."""
        n = self.est_n
        if n:
            self.est_service = 0.99 * self.est_service + 0.01 * service
            self.est_waited = 0.99 * self.est_waited + 0.01 * wait
            gap = started - self.est_start
            self.est_gap = gap if n == 1 else 0.99 * self.est_gap + 0.01 * gap
        else:
            self.est_service = service
            self.est_waited = wait
        self.est_start = started
        self.est_n = n + 1

    def est_lambda(self) -> float:
        """λ̂: 1 / the mean gap between service starts; 0 before two completions, and while
        the mean gap is 0 or below (at fifo(c) a job that started later can complete
        first, so a gap can be negative; pyserq 0.1.2 gives no negative rate either)."""
        gap = self.est_gap
        return 1.0 / gap if self.est_n > 1 and gap > 0.0 else 0.0

    def est_rho(self) -> float:
        """ρ̂ = λ̂ Ŝ (Ŝ the mean measured service, now - started), at most 0.99; 0 while λ̂ is."""
        lam = self.est_lambda()
        if lam == 0.0:
            return 0.0
        rho = lam * self.est_service
        return rho if rho < 0.99 else 0.99

    def est_wait(self) -> float:
        """Ŵ: the mean measured wait (started - arrived); 0 before the first completion."""
        return self.est_waited

    def price(self, s_hit: float, ds: float) -> float:
        """missPrice: a miss costs its own `ds` of extra service, plus the extra wait it
        causes the others in an M/G/1 queue with the measured λ̂, ρ̂, Ŵ: the second moment
        grows by (s_hit + ds)² - s_hit² and the load by λ̂ ds, so
        ds + λ̂ ((s_hit + ds)² - s_hit²) / (2 (1 - ρ̂)) + λ̂ Ŵ ds / (1 - ρ̂)."""
        lam = self.est_lambda()
        rho = self.est_rho()
        s_miss = s_hit + ds
        return (
            ds
            + lam * (s_miss * s_miss - s_hit * s_hit) / (2.0 * (1.0 - rho))
            + lam * self.est_waited * ds / (1.0 - rho)
        )

    def arrive(self, job: Any, work: float) -> None:
        """Job `job` starts `work` units of work here now."""
        raise NotImplementedError

    def cancel(self, job: Any) -> None:
        """Take `job` away unfinished (its session was preempted)."""
        raise NotImplementedError

    def busy_count(self) -> float:
        """The jobs in service."""
        raise NotImplementedError

    def work_left(self) -> float:
        """The work the jobs here have left."""
        raise NotImplementedError

    def _finish(self, job: Any, now: float) -> None:
        job.at = None
        wait, service = job.started - job.arrived, now - job.started
        self.measure(job.started, wait, service)
        self.recorder.stage_done(self.index, now, wait, service)
        self.wake(job)


class FifoStage(StageBase):
    """fifo(c): c servers, jobs in arrival order, each at rate 1."""

    __slots__ = ("servers", "in_service", "waiting", "serving")

    def __init__(self, index, engine, recorder, wake, servers: int):
        super().__init__(index, engine, recorder, wake)
        self.servers = servers
        self.in_service = 0
        self.waiting: deque[Any] = deque()
        self.serving: dict[Any, None] = {}

    def arrive(self, job, work):
        engine = self.engine
        now = engine.now
        job.at = self
        job.work = work
        job.arrived = now
        self.present += 1
        if self.in_service < self.servers:
            self.in_service += 1
            job.started = now
            self.serving[job] = None
            job.job_seq = engine.schedule(now + work, self._done, job)
        else:
            self.waiting.append(job)
        self.recorder.stage_state(self.index, now, self.present, self.in_service / self.servers)

    def _done(self, job):
        engine = self.engine
        if job.job_seq != engine.current_seq:
            return  # cancelled
        now = engine.now
        del self.serving[job]
        self.present -= 1
        # fast path: `_start_next` and `_finish` inlined (once per job each)
        waiting = self.waiting
        if waiting:
            nxt = waiting.popleft()
            nxt.started = now
            self.serving[nxt] = None
            nxt.job_seq = engine.schedule(now + nxt.work, self._done, nxt)
        else:
            self.in_service -= 1
        recorder = self.recorder
        recorder.stage_state(self.index, now, self.present, self.in_service / self.servers)
        job.at = None
        wait, service = job.started - job.arrived, now - job.started
        self.measure(job.started, wait, service)
        recorder.stage_done(self.index, now, wait, service)
        self.wake(job)

    def _start_next(self, now: float) -> None:
        if self.waiting:
            nxt = self.waiting.popleft()
            nxt.started = now
            self.serving[nxt] = None
            nxt.job_seq = self.engine.schedule(now + nxt.work, self._done, nxt)
        else:
            self.in_service -= 1

    def cancel(self, job):
        now = self.engine.now
        job.at = None
        self.present -= 1
        if job in self.serving:
            del self.serving[job]
            job.job_seq = -1
            self._start_next(now)
        else:
            self.waiting.remove(job)
        self.recorder.stage_state(self.index, now, self.present, self.in_service / self.servers)

    # `busy_count()` as code (`ExprCompiler` writes it out: {t} the stage's name)
    COUNT_CODE = {"busy": "float({t}.in_service)"}

    def busy_count(self):
        return float(self.in_service)

    def work_left(self):
        now = self.engine.now
        total = -0.0
        for job in self.serving:
            total += job.work - (now - job.started)
        for job in self.waiting:
            total += job.work
        return total


class DelayStage(StageBase):
    """delay: every job on its own at rate 1, no waiting."""

    __slots__ = ("jobs",)

    def __init__(self, index, engine, recorder, wake):
        super().__init__(index, engine, recorder, wake)
        self.jobs: dict[Any, None] = {}

    def arrive(self, job, work):
        engine = self.engine
        now = engine.now
        job.at = self
        job.work = work
        job.arrived = job.started = now
        self.jobs[job] = None
        self.present += 1
        job.job_seq = engine.schedule(now + work, self._done, job)
        self.recorder.stage_state(self.index, now, self.present, 1.0)

    def _done(self, job):
        engine = self.engine
        if job.job_seq != engine.current_seq:
            return
        now = engine.now
        del self.jobs[job]
        self.present -= 1
        self.recorder.stage_state(self.index, now, self.present, 1.0 if self.present else 0.0)
        self._finish(job, now)

    def cancel(self, job):
        job.at = None
        job.job_seq = -1
        del self.jobs[job]
        self.present -= 1
        now = self.engine.now
        self.recorder.stage_state(self.index, now, self.present, 1.0 if self.present else 0.0)

    COUNT_CODE = {"busy": "float({t}.present)"}  # `busy_count()` as code

    def busy_count(self):
        return float(self.present)

    def work_left(self):
        now = self.engine.now
        total = -0.0
        for job in self.jobs:
            total += job.work - (now - job.started)
        return total


class PsStage(StageBase):
    """ps(φ): every job at once, each at φ(present)/present, kept exact with virtual time:
    a job's finish tag is the virtual time at its start plus its work, the virtual time
    grows at the per-job rate, and the smallest tag finishes first (ties in start order).
    At a rate of inf (a capacity of inf) the job with the smallest tag ends at that
    instant, its work done (the virtual time becomes its tag), and so does the next one
    after it, whatever the capacity with one job fewer (`rush`), as the reference has it:
    at `ps(present > 2 ? inf : 1)`, three jobs end two of them there, four three. A job
    of infinite work that ends so leaves the virtual time inf, and every job present ends
    then too; it starts again from 0 when the stage empties.

    A change (an arrival, a completion, a cancel) does not schedule the next completion at
    once: the stage joins `pending`, and the world reschedules every pending ps stage after
    the settle, in stage order (so equal-time completions of two ps stages alternate as the
    reference's do)."""

    __slots__ = (
        "phi",
        "phi_const",
        "vtime",
        "rush",
        "t_last",
        "rate",
        "rate_then",
        "heap",
        "version",
        "pending",
        "dirty",
        "blank",
        "origin",
        "name",
        "_order",
    )

    def __init__(self, index, engine, recorder, wake, phi: Callable[[Any], float], pending):
        super().__init__(index, engine, recorder, wake)
        self.pending: list[PsStage] = pending
        self.blank: list[Any] = []  # the attributes a capacity reads: it has no session
        self.dirty = False
        self.phi = phi
        self.phi_const: float | None = None
        self.vtime = 0.0
        self.rush = False  # a job ended at a rate of inf: the next ends at that instant too
        self.t_last = 0.0
        self.rate = 0.0
        self.rate_then = 0.0  # `rate` at the last reschedule, which `work_left` reads
        self.heap: list[tuple[float, int, Any]] = []
        self.version = 0
        self.origin: Any = None  # the stage's declaration, for a capacity that is not positive
        self.name = ""
        self._order = count().__next__

    def _rate(self, n: int) -> float:
        if not n:
            return 0.0
        c = self.phi_const
        if c is None:
            self.engine.present = float(n)
            c = self.phi(self.blank)
        return c / n

    def _advance(self, now: float) -> None:
        if now != self.t_last:
            if self.present:
                self.vtime += (now - self.t_last) * self.rate
            self.t_last = now

    def _changed(self) -> None:
        if not self.dirty:
            self.dirty = True
            self.pending.append(self)

    def reschedule(self) -> None:
        """Schedule the next completion from the stage's state now (after a settle)."""
        self.dirty = False
        now = self.engine.now
        self.version += 1
        heap = self.heap
        self.rate_then = rate = self.rate
        rush, self.rush = self.rush, False
        if heap and rate > 0:
            v = self.vtime
            # infinite speed, the job after one that ended at it, or a virtual time of inf
            # (until the stage empties): the next job ends now
            dt = 0.0 if rate == INF or rush or v == INF else (heap[0][0] - v) / rate
            if dt < 0.0:
                dt = 0.0
            if dt < INF:
                self.engine.schedule(now + dt, self._done, self.version)
        elif heap:  # its jobs would wait forever, or run backwards
            self.no_capacity()

    def no_capacity(self) -> None:
        """Fail: the stage has jobs and a capacity that is not positive (NaN included)."""
        n = self.present
        capacity = self.rate * n if self.phi_const is None else self.phi_const
        what = f"the capacity of ps stage `{self.name}` with {n} job{'s' if n != 1 else ''}"
        raise out_of_domain(self.origin, what, capacity, "positive")

    def arrive(self, job, work):
        now = self.engine.now
        # fast path: `_advance`, `_rate` of a constant capacity and `_changed` inlined
        if now != self.t_last:
            if self.present:
                self.vtime += (now - self.t_last) * self.rate
            self.t_last = now
        job.at = self
        job.work = work
        job.arrived = job.started = now
        job.tag = tag = self.vtime + work
        heappush(self.heap, (tag, self._order(), job))
        self.present = present = self.present + 1
        c = self.phi_const
        self.rate = c / present if c is not None else self._rate(present)
        if not self.dirty:
            self.dirty = True
            self.pending.append(self)
        self.recorder.stage_state(self.index, now, present, 1.0)

    def _done(self, version):
        if version != self.version:
            return
        now = self.engine.now
        # fast path: as in `arrive`, and `_finish` inlined
        if now != self.t_last:
            if self.present:
                self.vtime += (now - self.t_last) * self.rate
            self.t_last = now
        tag, _, job = heappop(self.heap)
        if tag > self.vtime:
            self.vtime = tag  # the finished job's work is done, whatever the rounding
        self.rush = self.rate == INF  # it ended at infinite speed (`reschedule`)
        self.present = present = self.present - 1
        c = self.phi_const
        if not present:
            self.rate = 0.0
            if self.vtime == INF:  # the end of an instant of infinite speed (`reschedule`)
                self.vtime = 0.0
        else:
            self.rate = c / present if c is not None else self._rate(present)
        if not self.dirty:
            self.dirty = True
            self.pending.append(self)
        recorder = self.recorder
        recorder.stage_state(self.index, now, present, 1.0 if present else 0.0)
        job.at = None
        wait, service = job.started - job.arrived, now - job.started
        self.measure(job.started, wait, service)
        recorder.stage_done(self.index, now, wait, service)
        self.wake(job)

    def cancel(self, job):
        now = self.engine.now
        self._advance(now)
        job.at = None
        self.heap = [item for item in self.heap if item[2] is not job]
        heapify(self.heap)
        self.present -= 1
        self.rate = self._rate(self.present)
        if not self.present and self.vtime == INF:  # as in `_done`
            self.vtime = 0.0
        self._changed()
        self.recorder.stage_state(self.index, now, self.present, 1.0 if self.present else 0.0)

    COUNT_CODE = {"busy": "float({t}.present)"}  # `busy_count()` as code

    def busy_count(self):
        return float(self.present)

    def work_left(self):
        now = self.engine.now
        # at the rate set at the last reschedule: a change at this instant that the stage
        # has not rescheduled yet served nobody at its new rate. So jobs that joined a
        # ps(inf) stage at this instant count whole until it reschedules, and after a
        # reschedule at the rate of inf none has work left (0 · inf, NaN, below), as
        # pyserq 0.1.2 reads them
        v = self.vtime + ((now - self.t_last) * self.rate_then if self.present else 0.0)
        total = -0.0
        for tag, _, _ in sorted(self.heap, key=_START):
            # in start order (the reference sums in a hash order); none is left while the
            # virtual time is inf (`reschedule`)
            total += tag - v if v < INF else 0.0
        return total


_START = itemgetter(1)  # a ps job's start order, of its (tag, order, job)


def build_stage(
    stage: Stage,
    index: int,
    engine: Engine,
    recorder: Any,
    wake: Callable[[Any], None],
    compile_capacity: Callable[[Any], tuple[Callable[[Any], float], float | None]],
    pending: list[PsStage],
) -> StageBase:
    """The runtime stage for IR stage member `stage` (number `index`); a ps stage joins
    `pending` when it must reschedule."""
    kind = stage.kind
    if isinstance(kind, Fifo):
        return FifoStage(index, engine, recorder, wake, kind.servers)
    if isinstance(kind, Delay):
        return DelayStage(index, engine, recorder, wake)
    if isinstance(kind, Ps):
        phi, const = compile_capacity(kind.capacity)
        ps = PsStage(index, engine, recorder, wake, phi, pending)
        ps.phi_const = const
        ps.origin = kind.origin or stage.origin
        ps.name = stage.name if stage.index is None else f"{stage.name}[{stage.index}]"
        return ps
    if isinstance(kind, Step):
        from serq.sim.step import StepStage  # the step engine builds on this module

        return StepStage(stage, index, engine, recorder, wake, compile_capacity)
    raise SimError(stage.origin, f"unknown stage kind (stage `{stage.name}`)")
