"""The compiled path's fifo, delay and ps stages: the recorder's updates inline.

`specialise(world)` switches every plain `FifoStage`, `DelayStage` and `PsStage` of a run
whose recorder is a `StatsRecorder` to the subclass below (the same slots, so the object
changes class in place). Each does what its base does, in the same order, with two
calls less per change: the recorder's `stage_state` (the two levels, present and busy,
integrated as `_Level.set` does) and `stage_done` (the completion sums) are written
inline against the stage's record (`StatsRecorder.stage_record`), and the online
estimates (`measure`) are kept only when the program reads one (`est_*`, `price`), as
nothing else does. The busy level of these kinds is 1 while a job is present (the
recorder's rule for fifo; what delay and ps report), so it is not computed from the
servers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, is_dataclass
from heapq import heappop, heappush
from typing import Any

from serq import ir
from serq.sim.recorder import StatsRecorder
from serq.sim.session import READY
from serq.sim.stages import DelayStage, FifoStage, PsStage

ESTIMATES = frozenset({"est_lambda", "est_rho", "est_wait", "price"})


def reads_estimates(node: Any) -> bool:
    """Whether an online estimate (`est_*`, `price`) is read anywhere in the IR `node`."""
    if isinstance(node, ir.expr.Observable) and node.func in ESTIMATES:
        return True
    if isinstance(node, tuple | list):
        return any(reads_estimates(item) for item in node)
    if is_dataclass(node) and not isinstance(node, type):
        return any(reads_estimates(getattr(node, f.name)) for f in fields(node))
    return False


def specialise(world: Any) -> list[tuple[Any, type]]:
    """Switch `world`'s plain stages to their compiled classes (see the module); returns
    each switched stage with its class before."""
    recorder = world.recorder
    if type(recorder) is not StatsRecorder:
        return []
    switched = []
    measuring = reads_estimates(world.program)
    for stage in world.stages:
        fast = _FAST.get(type(stage))
        if fast is None:
            continue
        record = recorder.stage_record(stage.index)
        stage.rec = record
        stage.rec_present = record.present
        stage.rec_busy = record.busy
        stage.rec_warmup = recorder.warmup
        stage.measuring = measuring
        if stage.wake == world.wake:  # `World.wake`, inline
            stage.ready = world.ready
        switched.append((stage, type(stage)))
        stage.__class__ = fast
    return switched


def inlines_arrival(stage: Any) -> bool:
    """Whether `arrive_code` writes the arrival of `stage` (switched by `specialise`)."""
    return type(stage) in (CompiledFifo, CompiledDelay)


def arrive_code(stage: Any, job: str, work: str, bind: Callable[[Any, str], str]) -> list[str]:
    """The source lines of `stage.arrive(job, work)` for a stage `specialise` switches
    (`job` and `work` names of locals; `bind` names an object in the generated code's
    namespace): the method's statements inline, in its order, the stage's fixed parts
    (its levels, its completion method, its queue) bound as constants."""
    st = bind(stage, "_k_st")
    present, busy = bind(stage.rec_present, "_k_lv"), bind(stage.rec_busy, "_k_lv")
    done = bind(stage._done, "_k_done")
    lines = ["now = E.now", f"{job}.at = {st}", f"{job}.work = {work}"]
    kind = type(stage)
    if kind is CompiledFifo:
        lines += [
            f"{job}.arrived = now",
            f"{st}.present = present = {st}.present + 1",
            f"if {st}.in_service < {stage.servers}:",
            f"    {st}.in_service += 1",
            f"    {job}.started = now",
            f"    {bind(stage.serving, '_k_serving')}[{job}] = None",
            f"    {job}.job_seq = seq = _k_seq()",
            f"    _k_heappush(_k_heap, (now + {work}, seq, {done}, {job}))",
            "else:",
            f"    {bind(stage.waiting.append, '_k_wait')}({job})",
        ]
    elif kind is CompiledDelay:
        lines += [
            f"{job}.arrived = {job}.started = now",
            f"{bind(stage.jobs, '_k_jobs')}[{job}] = None",
            f"{st}.present = present = {st}.present + 1",
            f"{job}.job_seq = seq = _k_seq()",
            f"_k_heappush(_k_heap, (now + {work}, seq, {done}, {job}))",
        ]
    else:
        raise TypeError(f"no inline arrival for {type(stage).__name__}")
    for level in (present, busy):  # `StatsRecorder.stage_state`, as `arrive` inlines it
        lines += [
            f"if now > {level}.since:",
            f"    {level}.area += {level}.value * (now - {level}.since)",
            f"    {level}.since = now",
        ]
    lines += [f"{present}.value = present", f"{busy}.value = 1.0"]
    return lines


class CompiledFifo(FifoStage):
    """`FifoStage` with the recorder inline."""

    __slots__ = ()

    def arrive(self, job, work):
        engine = self.engine
        now = engine.now
        job.at = self
        job.work = work
        job.arrived = now
        self.present = present = self.present + 1
        if self.in_service < self.servers:
            self.in_service += 1
            job.started = now
            self.serving[job] = None
            # fast path: `Engine.schedule`, inline
            job.job_seq = seq = engine._seq()
            heappush(engine._heap, (now + work, seq, self._done, job))
        else:
            self.waiting.append(job)
        # fast path: `StatsRecorder.stage_state`, inline
        level = self.rec_present
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = present
        level = self.rec_busy
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = 1.0

    def _done(self, job):
        engine = self.engine
        if job.job_seq != engine.current_seq:
            return  # cancelled
        now = engine.now
        del self.serving[job]
        self.present = present = self.present - 1
        waiting = self.waiting
        if waiting:
            nxt = waiting.popleft()
            nxt.started = now
            self.serving[nxt] = None
            nxt.job_seq = seq = engine._seq()
            heappush(engine._heap, (now + nxt.work, seq, self._done, nxt))
        else:
            self.in_service -= 1
        level = self.rec_present
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = present
        level = self.rec_busy
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = 1.0 if present else 0.0
        job.at = None
        started = job.started
        wait, service = started - job.arrived, now - started
        if self.measuring:
            self.measure(started, wait, service)
        if now >= self.rec_warmup:  # `StatsRecorder.stage_done`
            rec = self.rec
            rec.completed += 1
            rec.wait += wait
            rec.service += service
        ready = self.ready
        if ready is None:
            self.wake(job)
        elif job.serial >= 0:  # fast path: `World.wake`, inline
            job.state = READY
            ready.append(job)


class CompiledDelay(DelayStage):
    """`DelayStage` with the recorder inline."""

    __slots__ = ()

    def arrive(self, job, work):
        engine = self.engine
        now = engine.now
        job.at = self
        job.work = work
        job.arrived = job.started = now
        self.jobs[job] = None
        self.present = present = self.present + 1
        job.job_seq = seq = engine._seq()
        heappush(engine._heap, (now + work, seq, self._done, job))
        level = self.rec_present
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = present
        level = self.rec_busy
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = 1.0

    def _done(self, job):
        engine = self.engine
        if job.job_seq != engine.current_seq:
            return
        now = engine.now
        del self.jobs[job]
        self.present = present = self.present - 1
        level = self.rec_present
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = present
        level = self.rec_busy
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = 1.0 if present else 0.0
        job.at = None
        started = job.started
        wait, service = started - job.arrived, now - started
        if self.measuring:
            self.measure(started, wait, service)
        if now >= self.rec_warmup:
            rec = self.rec
            rec.completed += 1
            rec.wait += wait
            rec.service += service
        ready = self.ready
        if ready is None:
            self.wake(job)
        elif job.serial >= 0:  # fast path: `World.wake`, inline
            job.state = READY
            ready.append(job)


class CompiledPs(PsStage):
    """`PsStage` with the recorder inline."""

    __slots__ = ()

    def arrive(self, job, work):
        now = self.engine.now
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
        level = self.rec_present
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = present
        level = self.rec_busy
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = 1.0

    def _done(self, version):
        if version != self.version:
            return
        now = self.engine.now
        if now != self.t_last:
            if self.present:
                self.vtime += (now - self.t_last) * self.rate
            self.t_last = now
        tag, _, job = heappop(self.heap)
        if tag > self.vtime:
            self.vtime = tag
        self.present = present = self.present - 1
        c = self.phi_const
        if not present:
            self.rate = 0.0
        else:
            self.rate = c / present if c is not None else self._rate(present)
        if not self.dirty:
            self.dirty = True
            self.pending.append(self)
        level = self.rec_present
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = present
        level = self.rec_busy
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = 1.0 if present else 0.0
        job.at = None
        started = job.started
        wait, service = started - job.arrived, now - started
        if self.measuring:
            self.measure(started, wait, service)
        if now >= self.rec_warmup:
            rec = self.rec
            rec.completed += 1
            rec.wait += wait
            rec.service += service
        ready = self.ready
        if ready is None:
            self.wake(job)
        elif job.serial >= 0:  # fast path: `World.wake`, inline
            job.state = READY
            ready.append(job)


_FAST = {FifoStage: CompiledFifo, DelayStage: CompiledDelay, PsStage: CompiledPs}
