"""The straight path: an exact event loop for sessions that only pass one fifo(1) stage.

It applies when the session block is `set`s and `observe`s around one plain `run` of a
fixed fifo(1) stage, the workload is `poisson` or `renewal` without `init`, trace or
`arrivals` limit, the program has no pool and no step stage and reads no `work(s)` and
no online estimate (`price`, `est_*`: they are measured at completions), and the
recorder is a `StatsRecorder`. Then at most two events are ever pending, the next
arrival and the departure of the job in service, so the loop keeps them in four locals
instead of the heap, and runs a session's statements where `settle` would have run them.
A job is its attribute list, serial and times, not a `Session` (without pools nothing
reads the session itself; `work(s)` would read the stage's jobs). Everything else is as
the event path does it, in the same order: the same sequence numbers break ties, the
same streams draw, the stage's `present` and `in_service` change as `FifoStage` changes
them, and the recorder's updates (inlined) are the same arithmetic in the same order,
so observations and statistics are identical (`tests/sim/test_straight.py` runs both
paths on several programs and seeds).

A single ps(φ) stage of a constant φ takes the same path (`run_ps`): `PsStage` and the
world's rescheduling inlined, the stale completion events kept (times and sequence
numbers only) so that they fire, move the clock and count in `events` as before.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import fields, is_dataclass
from heapq import heappop, heappush
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim.core import PROGRESS_EVERY
from serq.sim.recorder import StatsRecorder
from serq.sim.stages import FifoStage, PsStage

ENABLED = True  # tests switch it off to compare with the event path
SERIAL = SLOT["serial"]
TURN_NO = SLOT["turn_no"]
INF = math.inf


def plan(world: Any, program: ir.Program, exprs: Any, stream: Any) -> tuple | None:
    """`(pre, work, stage, post)` when `program` may run on the straight path: the `set`s
    and `observe`s before the run, its work, its fifo(1) stage and those after; else None.
    A `set` is `(slot, value, None)`, an `observe` `(TURN_NO, value, samples)`, where
    samples append to the recorder's lists of the statistic's times, sessions, turns and
    values."""
    if not ENABLED or world.pools or world.steps or world.limit is not None:
        return None
    if type(world.recorder) is not StatsRecorder:  # its calls are inlined
        return None
    if not isinstance(program.arrival, ir.Poisson | ir.Renewal) or program.trace is not None:
        return None
    if program.blocks[program.init]:
        return None
    stmts = program.blocks[program.session]
    runs = [i for i, s in enumerate(stmts) if isinstance(s, ir.Run)]
    if len(runs) != 1 or not all(isinstance(s, ir.Set | ir.Observe | ir.Run) for s in stmts):
        return None
    k = runs[0]
    run = stmts[k]
    if len(run.stages) != 1 or run.mode != "plain" or run.growing is not None:
        return None
    ref = run.stages[0]
    if not (ref.index is None or isinstance(ref.index, ir.Num)):
        return None
    stage = exprs.resolver(ref)(None)
    if type(stage) is PsStage:
        if stage.phi_const is None:  # a capacity that reads `present`: the event path
            return None
    elif type(stage) is not FifoStage or stage.servers != 1:
        return None
    if _reads(program, "work"):  # `work(s)` reads the stage's jobs, which are not kept
        return None
    if any(_reads(program, f) for f in ("price", "est_lambda", "est_rho", "est_wait")):
        return None  # the online estimates are measured at completions, as `FifoStage` does
    recorder = world.recorder

    def op(stmt: ir.Set | ir.Observe) -> tuple:
        # every expression draws from the session stream, as the compiled statements do
        value = exprs.compile(stmt.value, stream)
        if isinstance(stmt, ir.Set):
            return stmt.slot, value, None
        return TURN_NO, value, tuple(column.append for column in recorder.samples(stmt.stat))

    pre = tuple(op(s) for s in stmts[:k])
    post = tuple(op(s) for s in stmts[k + 1 :])
    return pre, exprs.compile(run.work, stream), stage, post


def run(world: Any, until: float, pre: tuple, work: Any, stage: Any, post: tuple) -> None:
    """Run `world` to `until` on the straight path (what `world.run` does otherwise)."""
    if type(stage) is PsStage:
        run_ps(world, until, pre, work, stage, post)
        return
    engine = world.engine
    workload = world.workload
    end_instant = world.end_instant if world.gauges else None
    # fast path: the recorder's calls inlined (`StatsRecorder.arrival`, `stage_state` of a
    # fifo stage, `stage_done`, `session_ended`): the same updates in the same order
    recorder: StatsRecorder = world.recorder
    progress = recorder.progress
    live, record = recorder.live_level(), recorder.stage_record(stage.index)
    present_level, busy_level = record.present, record.busy
    # the levels and sums live in locals during the loop (written back when it ends)
    live_since, live_area, live_value = live.since, live.area, live.value
    present_since, present_area = present_level.since, present_level.area
    present_value = present_level.value
    busy_area, busy_value = busy_level.area, busy_level.value
    assert busy_level.since == present_since  # both set together from the warm-up on
    stage_completed, stage_wait, stage_service = record.completed, record.wait, record.service
    measured = recorder.warmup
    warmup = world.warmup
    n_attrs = world.n_attrs
    blank_attrs: list[Any] = [0.0] * (n_attrs + 1)
    waiting: deque[tuple] = deque()  # (attributes, serial, work, arrived)
    scheduled = 0  # the events scheduled so far: the next one's sequence number
    rate = workload._rate
    uniform = workload._uniform
    log = math.log
    # the first arrival, as `Workload.start` schedules it
    now = engine.now
    t_arrive = 0.0 if rate is not None else workload._next_gap()
    s_arrive = scheduled
    scheduled += 1
    t_done = INF
    s_done = 0
    job: tuple | None = None  # (attributes, serial, arrived) in service since `started`
    started = 0.0
    mask = PROGRESS_EVERY - 1
    fired = 0
    arrivals, ended = world.arrivals, world.ended
    try:
        while True:
            arriving = t_arrive < t_done or (t_arrive == t_done and s_arrive < s_done)
            time = t_arrive if arriving else t_done
            if time > until:  # an arrival is always pending, at a finite time
                break
            if time != now:
                if end_instant is not None:
                    end_instant(now)
                engine.now = now = time
            if arriving:
                # `World.new_session`, then `Workload._arrive` schedules the next arrival
                serial = arrivals
                arrivals += 1
                # no `Session`: a job is its attributes, serial and times (see `plan`)
                a = blank_attrs.copy()
                a[SERIAL] = float(serial)
                if now > live_since:
                    live_area += live_value * (now - live_since)
                    live_since = now
                live_value += 1
                if rate is not None:
                    t_arrive = now + -log(1.0 - uniform()) / rate
                else:
                    t_arrive = now + workload._next_gap()
                s_arrive = scheduled
                scheduled += 1
                # `settle` runs the session up to its run
                for slot, value, samples in pre:
                    if samples is None:  # set
                        a[slot] = value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        turn = int(a[slot])
                        v = value(a)
                        if now >= measured:
                            add_time, add_session, add_turn, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_turn(turn)
                            add_value(v)
                w = work(a)
                if not w > 0:  # a run of no work completes at once
                    for slot, value, samples in post:
                        if samples is None:  # set
                            a[slot] = value(a)
                        else:  # observe: `StatsRecorder.observe`, inlined
                            turn = int(a[slot])
                            v = value(a)
                            if now >= measured:
                                add_time, add_session, add_turn, add_value = samples
                                add_time(now)
                                add_session(serial)
                                add_turn(turn)
                                add_value(v)
                    # `World.end_session` of a session without holds, leases or frames
                    ended += now >= warmup
                    if now > live_since:
                        live_area += live_value * (now - live_since)
                        live_since = now
                    live_value -= 1
                else:
                    stage.present = present = stage.present + 1
                    if job is None:  # the server is free (`in_service` 0)
                        stage.in_service = 1
                        job = a, serial, now
                        started = now
                        t_done = now + w
                        s_done = scheduled
                        scheduled += 1
                    else:
                        waiting.append((a, serial, w, now))
                    if now > present_since:  # the two levels change together: one `since`
                        present_area += present_value * (now - present_since)
                        busy_area += busy_value * (now - present_since)
                        present_since = now
                    present_value = present
                    busy_value = 1.0
            else:
                # `FifoStage._done`, then `settle` runs the session to its end
                a, serial, arrived = job
                job_started = started
                stage.present = present = stage.present - 1
                if waiting:
                    next_a, next_serial, next_work, next_arrived = waiting.popleft()
                    job = next_a, next_serial, next_arrived
                    started = now
                    t_done = now + next_work
                    s_done = scheduled
                    scheduled += 1
                else:
                    stage.in_service = 0
                    job = None
                    t_done = INF
                if now > present_since:  # the two levels change together: one `since`
                    present_area += present_value * (now - present_since)
                    busy_area += busy_value * (now - present_since)
                    present_since = now
                present_value = present
                busy_value = 1.0 if present else 0.0
                if now >= measured:
                    stage_completed += 1
                    stage_wait += job_started - arrived
                    stage_service += now - job_started
                for slot, value, samples in post:
                    if samples is None:  # set
                        a[slot] = value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        turn = int(a[slot])
                        v = value(a)
                        if now >= measured:
                            add_time, add_session, add_turn, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_turn(turn)
                            add_value(v)
                ended += now >= warmup  # `World.end_session`, as above
                if now > live_since:
                    live_area += live_value * (now - live_since)
                    live_since = now
                live_value -= 1
            fired += 1
            if not fired & mask:
                progress(time)
    finally:
        world.arrivals, world.ended = arrivals, ended
        live.since, live.area, live.value = live_since, live_area, live_value
        for level, since, area, value in (
            (present_level, present_since, present_area, present_value),
            (busy_level, present_since, busy_area, busy_value),
        ):
            level.since, level.area, level.value = since, area, value
        record.completed, record.wait, record.service = stage_completed, stage_wait, stage_service
        world.live = stage.present  # every live session is at the stage between events
    engine.events += fired
    if end_instant is not None:
        end_instant(engine.now)


def run_ps(world: Any, until: float, pre: tuple, work: Any, stage: PsStage, post: tuple) -> None:
    """`run` for one ps(φ) stage of a constant φ: `PsStage` and the world's rescheduling
    inlined. The pending events are the next arrival, the live completion (the one of the
    stage's current version) and the stale completions that every reschedule leaves
    behind; a stale one still fires as the event path fires it (it moves the clock, counts
    in `events` and in the progress), and does nothing else, so it keeps only its time and
    sequence number, in a heap of its own. The same sequence numbers break ties."""
    engine = world.engine
    workload = world.workload
    end_instant = world.end_instant if world.gauges else None
    recorder: StatsRecorder = world.recorder
    progress = recorder.progress
    live, record = recorder.live_level(), recorder.stage_record(stage.index)
    present_level, busy_level = record.present, record.busy
    live_since, live_area, live_value = live.since, live.area, live.value
    present_since, present_area = present_level.since, present_level.area
    present_value = present_level.value
    busy_area, busy_value = busy_level.area, busy_level.value
    assert busy_level.since == present_since  # both set together from the warm-up on
    assert not stage.heap and not stage.present and not stage.dirty
    stage_completed, stage_wait, stage_service = record.completed, record.wait, record.service
    measured = recorder.warmup
    warmup = world.warmup
    n_attrs = world.n_attrs
    blank_attrs: list[Any] = [0.0] * (n_attrs + 1)
    c = stage.phi_const
    vtime, t_last, rate = stage.vtime, stage.t_last, stage.rate
    present = 0
    jobs: list[tuple] = []  # (tag, order, attributes, serial, arrived): `PsStage.heap`
    order = 0
    stale: list[tuple[float, int]] = []  # (time, seq) of the stale completions
    scheduled = 0
    rate_in = workload._rate
    uniform = workload._uniform
    log = math.log
    now = engine.now
    t_arrive = 0.0 if rate_in is not None else workload._next_gap()
    s_arrive = scheduled
    scheduled += 1
    t_done = INF  # the live completion
    s_done = 0
    t_stale = INF  # the first stale completion
    s_stale = 0
    mask = PROGRESS_EVERY - 1
    fired = 0
    arrivals, ended = world.arrivals, world.ended
    try:
        while True:
            # the next event: the least (time, seq) of the three
            if t_arrive < t_done or (t_arrive == t_done and s_arrive < s_done):
                kind, time, seq = 0, t_arrive, s_arrive
            else:
                kind, time, seq = 1, t_done, s_done
            if t_stale < time or (t_stale == time and s_stale < seq):
                kind, time = 2, t_stale
            if time > until:  # an arrival is always pending, at a finite time
                break
            if time != now:
                if end_instant is not None:
                    end_instant(now)
                engine.now = now = time
            changed = False
            if kind == 2:
                # a stale `PsStage._done`: it returns at once, and the settle does nothing
                heappop(stale)
                if stale:
                    t_stale, s_stale = stale[0]
                else:
                    t_stale = INF
            elif kind == 0:
                # `World.new_session`, then `Workload._arrive` schedules the next arrival
                serial = arrivals
                arrivals += 1
                a = blank_attrs.copy()
                a[SERIAL] = float(serial)
                if now > live_since:
                    live_area += live_value * (now - live_since)
                    live_since = now
                live_value += 1
                if rate_in is not None:
                    t_arrive = now + -log(1.0 - uniform()) / rate_in
                else:
                    t_arrive = now + workload._next_gap()
                s_arrive = scheduled
                scheduled += 1
                # `settle` runs the session up to its run
                for slot, value, samples in pre:
                    if samples is None:  # set
                        a[slot] = value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        turn = int(a[slot])
                        v = value(a)
                        if now >= measured:
                            add_time, add_session, add_turn, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_turn(turn)
                            add_value(v)
                w = work(a)
                if not w > 0:  # a run of no work completes at once
                    for slot, value, samples in post:
                        if samples is None:  # set
                            a[slot] = value(a)
                        else:  # observe: `StatsRecorder.observe`, inlined
                            turn = int(a[slot])
                            v = value(a)
                            if now >= measured:
                                add_time, add_session, add_turn, add_value = samples
                                add_time(now)
                                add_session(serial)
                                add_turn(turn)
                                add_value(v)
                    ended += now >= warmup
                    if now > live_since:
                        live_area += live_value * (now - live_since)
                        live_since = now
                    live_value -= 1
                else:
                    # `PsStage.arrive`
                    if now != t_last:
                        if present:
                            vtime += (now - t_last) * rate
                        t_last = now
                    heappush(jobs, (vtime + w, order, a, serial, now))
                    order += 1
                    stage.present = present = present + 1
                    rate = c / present
                    changed = True
                    # `StatsRecorder.stage_state`, inlined
                    if now > present_since:
                        present_area += present_value * (now - present_since)
                        busy_area += busy_value * (now - present_since)
                        present_since = now
                    present_value = present
                    busy_value = 1.0
            else:
                # the live `PsStage._done`, then `settle` runs the session to its end
                t_done = INF  # fired: it does not turn stale
                if now != t_last:
                    if present:
                        vtime += (now - t_last) * rate
                    t_last = now
                tag, _, a, serial, arrived = heappop(jobs)
                if tag > vtime:
                    vtime = tag
                stage.present = present = present - 1
                if not present:
                    rate = 0.0
                else:
                    rate = c / present
                changed = True
                if now > present_since:
                    present_area += present_value * (now - present_since)
                    busy_area += busy_value * (now - present_since)
                    present_since = now
                present_value = present
                busy_value = 1.0 if present else 0.0
                if now >= measured:  # `StatsRecorder.stage_done`
                    stage_completed += 1
                    stage_wait += arrived - arrived
                    stage_service += now - arrived
                for slot, value, samples in post:
                    if samples is None:  # set
                        a[slot] = value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        turn = int(a[slot])
                        v = value(a)
                        if now >= measured:
                            add_time, add_session, add_turn, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_turn(turn)
                            add_value(v)
                ended += now >= warmup  # `World.end_session`, as above
                if now > live_since:
                    live_area += live_value * (now - live_since)
                    live_since = now
                live_value -= 1
            if changed:
                # `PsStage.reschedule`: the live completion, if any, turns stale
                if t_done != INF:
                    heappush(stale, (t_done, s_done))
                    t_stale, s_stale = stale[0]
                t_done = INF
                if jobs and rate > 0:
                    dt = (jobs[0][0] - vtime) / rate
                    if dt < 0.0:
                        dt = 0.0
                    if dt < INF:
                        t_done = now + dt
                        s_done = scheduled
                        scheduled += 1
            fired += 1
            if not fired & mask:
                progress(time)
    finally:
        world.arrivals, world.ended = arrivals, ended
        live.since, live.area, live.value = live_since, live_area, live_value
        for level, since, area, value in (
            (present_level, present_since, present_area, present_value),
            (busy_level, present_since, busy_area, busy_value),
        ):
            level.since, level.area, level.value = since, area, value
        record.completed, record.wait, record.service = stage_completed, stage_wait, stage_service
        stage.vtime, stage.t_last, stage.rate = vtime, t_last, rate
        world.live = stage.present
    engine.events += fired
    if end_instant is not None:
        end_instant(engine.now)


def _reads(node: Any, func: str) -> bool:
    """Whether an `Observable` named `func` appears anywhere in the IR value `node`."""
    if isinstance(node, ir.expr.Observable) and node.func == func:
        return True
    if isinstance(node, tuple | list):
        return any(_reads(item, func) for item in node)
    if is_dataclass(node) and not isinstance(node, type):
        return any(_reads(getattr(node, f.name), func) for f in fields(node))
    return False
