"""The straight path: an exact event loop for sessions that only pass one fifo stage.

It applies when the session block, up to its first `end;` if it has one, is `set`s and
`observe`s around one plain `run` of a fixed fifo(c) stage, the workload is `poisson` or
`renewal` without trace, its `init` block (if any) has only `set`s and
`observe`s (run where the session is made, drawing from the workload's stream, as
`World.new_session` runs them), the program has no pool and no step stage and reads no
`work(s)`, and the recorder is a `StatsRecorder`. A program that reads the stage's online
estimates (`price`, `est_*`) has them measured at each completion, before the session
goes on, as the stage measures them (`FifoStage.measure`). Then the only events pending
are the next arrival and the departures of the jobs in service, so the loop keeps the
arrival and the first departure in locals instead of the heap (with c > 1 the other
departures in a heap of their own, ordered by time and sequence number as the engine
orders them), and runs a session's statements where `settle` would have run them. An
`arrivals` limit stops the arrivals at the limit (without drawing the gap after the last)
and the run when the last session ends (`World.end_session`'s drain).
A job is its attribute list, serial and times, not a `Session` (without pools nothing
reads the session itself; `work(s)` would read the stage's jobs). Everything else is as
the event path does it, in the same order: the same sequence numbers break ties, the
same streams draw, the stage's `present` and `in_service` change as `FifoStage` changes
them, and the recorder's updates (inlined) are the same arithmetic in the same order,
so observations and statistics are identical (`tests/sim/test_straight.py` runs both
paths on several programs and seeds).

A single ps(φ) stage takes the same path (`run_ps`) when φ is a constant or a function of
`present` alone (its rate at each number of jobs computed once): `PsStage` and the
world's rescheduling inlined, the stale completion events kept (times and sequence
numbers only) so that they fire, move the clock and count in `events` as before.

A gauge that reads only stage levels (`queue`, `busy`) through operations that keep it
finite is a function of the stage's `present` (`_level_gauge`): the loops read the
program's gauges, when all are such, once per value of `present` and keep what
`StatsRecorder.gauges` keeps, inline. A program with any other gauge is left to the
generated code, which reads its gauges inline at every instant where these loops would
call `World.end_instant`. With such gauges or none, and no progress callback, a stale ps
completion changes nothing anyone sees but the count of events and the clock's last
value, so `run_ps` only counts it.

Both loops skip work whose result they can tell otherwise, with the same numbers: until a
run of no work ends a session at once, the live sessions are the jobs at the stage, so
the level of live sessions is the stage's `present`, changed at the same instants by the
same arithmetic, and is copied from it instead of being kept; without a progress callback
the events are counted at the end (arrivals, completions, stale completions), not one by
one; the stage's `present` level is kept as a float equal to the count of jobs.
"""

from __future__ import annotations

import math
from collections import deque
from heapq import heappop, heappush, heapreplace
from itertools import repeat
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.ir.expr import reads_only
from serq.sim import compiled_stages as cs
from serq.sim import draws
from serq.sim.core import LATEST, PROGRESS_EVERY
from serq.sim.endless import Endless
from serq.sim.errors import SimError, bad_work
from serq.sim.recorder import StatsRecorder
from serq.sim.stages import FifoStage, PsStage

ENABLED = True  # tests switch it off to compare with the event path
SERIAL = SLOT["serial"]
TURN_NO = SLOT["turn_no"]
INF = math.inf
LEVELS = ("queue", "busy")  # the stage observables a level gauge reads
PRESENT = frozenset({"present"})  # the one context a ps capacity reads
MAX_JOBS = 2.0**53  # a bound on `queue` and `busy`: counts of jobs
FINITE = 1e300  # a gauge bounded by this never overflows, so is never NaN


def plan(world: Any, program: ir.Program, exprs: Any, stream: Any) -> tuple | None:
    """`(pre, work, stage, post, gauge, serial, origin, measure)` when `program` may run on
    the straight path: the `set`s and `observe`s before the run, its work, its fifo or ps
    stage, those after, its gauges read together if they are level gauges
    (`_level_gauge`; None without any, and no plan with any other gauge), whether
    anything reads the attribute `serial`, the run's origin, and the stage's `measure`
    if anything reads its online estimates; else None.
    A `set` is `(slot, value, None)` (value None: `now`, read without a call), an
    `observe` `(TURN_NO, value, samples)` or `(slot, None, samples)` for `now - x` with
    `x` in `slot`, where samples append to the recorder's lists of the statistic's times,
    sessions and values (its turns are all 0: nothing sets `turn_no`, and `_pad_turns`
    adds them)."""
    if not ENABLED or world.pools or world.steps:
        return None
    if type(world.recorder) is not StatsRecorder:  # its calls are inlined
        return None
    if world.recorder.warmup != world.warmup:  # the loops count ended sessions as completed
        return None
    if not isinstance(program.arrival, ir.Poisson | ir.Renewal) or program.trace is not None:
        return None
    init = program.blocks[program.init]
    stmts = _reached(program.blocks[program.session])
    runs = [i for i, s in enumerate(stmts) if isinstance(s, ir.Run)]
    if len(runs) != 1 or not all(isinstance(s, ir.Set | ir.Observe | ir.Run) for s in stmts):
        return None
    if not all(isinstance(s, ir.Set | ir.Observe) for s in init):
        return None
    if any(isinstance(s, ir.Set) and s.slot == TURN_NO for s in (*init, *stmts)):
        return None  # an observation's turn is always 0 on this path
    k = runs[0]
    run = stmts[k]
    if len(run.stages) != 1 or run.mode != "plain" or run.growing is not None:
        return None
    ref = run.stages[0]
    if not (ref.index is None or isinstance(ref.index, ir.Num)):
        return None
    stage = exprs.resolver(ref)(None)
    if type(stage) is PsStage:
        if stage.phi_const is None:  # a capacity read at each change of `present`
            # only a function of `present` (no draw, clock or observable) is kept per count
            if not reads_only(program.stages[stage.index].kind.capacity, PRESENT):
                return None
        elif not stage.phi_const > 0:  # no capacity: the event path reports it
            return None
    elif type(stage) is not FifoStage:
        return None
    if cs.reads_work(program):  # `work(s)` reads the stage's jobs, which are not kept
        return None
    recorder = world.recorder

    def op(stmt: ir.Set | ir.Observe, stream: Any = stream) -> tuple:
        # the session's statements draw from the session stream, `init`'s from the
        # workload's, as the compiled statements do
        value = exprs.compile(stmt.value, stream)
        if isinstance(stmt, ir.Set):
            return stmt.slot, None if _is_now(stmt.value) else value, None
        samples = recorder.samples(stmt.stat)
        appends = tuple(samples[column].append for column in (0, 1, 3))  # no turns
        e = stmt.value
        if isinstance(e, ir.Binary) and e.op == "-" and _is_now(e.left):
            if isinstance(e.right, ir.Attr):  # `now - x`: the time since `x`
                return e.right.slot, None, appends
        return TURN_NO, value, appends

    # `init` runs where the session is made, before its first statement (`new_session`)
    on_workload = world.streams["workload"]
    pre = tuple(op(s, on_workload) for s in init) + tuple(op(s) for s in stmts[:k])
    post = tuple(op(s) for s in stmts[k + 1 :])
    gauge = _level_gauge(world, program)
    if program.gauges and gauge is None:
        return None  # the generated code reads other gauges inline, faster than `end_instant`
    serial = SERIAL in cs.slots_read(program)
    # the online estimates, measured at completions only where something reads them
    measure = stage.measure if cs.reads_estimates(program) else None
    work = _work(run.work, exprs, stream)
    return pre, work, stage, post, gauge, serial, run.origin, measure


def _reached(stmts: tuple) -> tuple:
    """The statements of a block up to its first `end;`: an `end;` ends the session as
    the end of its block does, and what follows it never runs."""
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ir.End):
            return stmts[:i]
    return stmts


def _is_now(e: ir.Expr) -> bool:
    """Whether `e` is the clock, `now`."""
    return isinstance(e, ir.Ctx) and e.name == "now"


def _work(expr: ir.Expr, exprs: Any, stream: Any) -> Any:
    """The work of the run, `expr`, compiled; a draw of constants straight from
    `draws.fixed` (one call a job fewer, the same draws and arithmetic)."""
    if isinstance(expr, ir.Draw) and all(isinstance(arg, ir.Num) for arg in expr.args):
        sampler = draws.fixed(expr.dist, stream.random, tuple(arg.value for arg in expr.args))
        if sampler is not None:
            return sampler
    return exprs.compile(expr, stream)


def run(
    world: Any,
    until: float,
    pre: tuple,
    work: Any,
    stage: Any,
    post: tuple,
    gauge: Any,
    serial_read: bool,
    origin: Any,
    measure: Any,
) -> bool:
    """Run `world` to `until` on the straight path (what `world.run` does otherwise), with
    what `plan` gave: `gauge`, if not None, reads the program's level gauges together;
    a session's attribute `serial` is set only if `serial_read`; `origin` is the run's.
    True when no event is pending at the end (only after an `arrivals` limit: the world
    then checks for a stall, as `World._check_end` does)."""
    if type(stage) is PsStage:
        return run_ps(world, until, pre, work, stage, post, gauge, serial_read, origin, measure)
    until = min(until, LATEST)  # a departure at inf never fires (`Engine.run`)
    engine = world.engine
    workload = world.workload
    end_instant = world.end_instant if world.gauges else None
    # a level gauge: its value at each `present` reached (read when first reached), and
    # the instants that ended with a new `present` (the recorder gets them at the end)
    table, known = _gauge_table(world, gauge)
    trace_times: list[float] = []
    trace_present: list[int] = []
    trace_time, trace_level = trace_times.append, trace_present.append
    blank = world.blank
    shown = -1  # the `present` of the last instant traced
    # fast path: the recorder's calls inlined (`StatsRecorder.arrival`, `stage_state` of a
    # fifo stage, `stage_done`, `session_ended`): the same updates in the same order
    recorder: StatsRecorder = world.recorder
    progress = recorder.progress
    progressing = recorder.has_progress()  # else the events are counted at the end
    live, record = recorder.live_level(), recorder.stage_record(stage.index)
    present_level, busy_level = record.present, record.busy
    # the levels and sums live in locals during the loop (written back when it ends)
    live_since, live_area, live_value = live.since, live.area, live.value
    present_since, present_area = present_level.since, present_level.area
    present_value = present_level.value  # kept a float equal to `present`, as in `run_ps`
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
    # an `arrivals` limit (at least 1, the linker sees to it): none arrive after it, and
    # the run drains
    limit = world.limit
    t_arrive = 0.0 if rate is not None else workload._next_gap()
    s_arrive = scheduled
    scheduled += 1
    # the jobs in service: the one that completes first in locals, the others (c > 1) in
    # a heap of (completion, sequence number, attributes, serial, arrived, started), in
    # the engine's order of events: by time, then sequence number
    t_done = INF
    s_done = 0
    job: tuple | None = None  # (attributes, serial, arrived) in service since `started`
    started = 0.0
    others: list[tuple] = []
    servers = stage.servers
    in_service = 0
    mask = PROGRESS_EVERY - 1
    fired = 0  # the events so far, if `progressing`
    no_work = 0  # the sessions whose run had no work
    completed = stage_completed
    arrivals, ended = world.arrivals, world.ended
    first = arrivals
    present = stage.present
    assert present == present_value == 0 and not stage.in_service
    # the live sessions are the jobs present until a run of no work: as in `run_ps`
    mirrored = (live_since, live_area, live_value) == (present_since, present_area, present_value)
    serial = -1  # the session being executed, for an error's note
    try:
        while True:
            arriving = t_arrive < t_done or (t_arrive == t_done and s_arrive < s_done)
            time = t_arrive if arriving else t_done
            # an arrival is pending at a finite time until an `arrivals` limit; then the
            # drain ends the loop, or the horizon (`until` is finite: a departure at inf
            # never fires, as on the event path)
            if time >= until:  # (only at the horizon or at inf: the test below is rare)
                if time > until or (job is None and not arriving):  # or nothing pending
                    break
            if time != now:  # the instant `now` is over: `World.end_instant`
                if table is not None:
                    if present != shown:  # a level gauge changes only with `present`
                        shown = present
                        trace_time(now)
                        trace_level(present)
                engine.now = now = time
            if arriving:
                # `World.new_session`, then `Workload._arrive` schedules the next arrival
                serial = arrivals
                arrivals += 1
                # no `Session`: a job is its attributes, serial and times (see `plan`)
                a = blank_attrs.copy()
                if serial_read:
                    a[SERIAL] = float(serial)
                if limit is not None and arrivals >= limit:  # `Workload._arrive`
                    t_arrive, s_arrive = INF, INF  # none pending: it never wins a tie
                else:
                    if rate is not None:
                        t_arrive = now + -log(1.0 - uniform()) / rate
                    else:
                        t_arrive = now + workload._next_gap()
                    s_arrive = scheduled
                    scheduled += 1
                    if t_arrive == INF:  # past the float range: it never comes (`_arrive`)
                        s_arrive = INF
                # `settle` runs the session up to its run
                for slot, value, samples in pre:
                    if samples is None:  # set
                        a[slot] = now if value is None else value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        v = now - a[slot] if value is None else value(a)
                        if now >= measured:  # its turn, 0, is added at the end
                            add_time, add_session, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_value(v)
                w = work(a)
                # no other session is ever ready here: the session goes on (`World.zero_run`)
                if not w > 0:  # a run of no work completes at once
                    if w != w:  # NaN work; below 0 is no work, as the reference has it
                        raise bad_work(origin, w, serial)
                    if mirrored:  # from now on `live` is kept apart
                        mirrored = False
                        live_since, live_area, live_value = (
                            present_since,
                            present_area,
                            present_value,
                        )
                    # `StatsRecorder.arrival`, and `World.end_session` of a session without
                    # holds, leases or frames
                    if now > live_since:
                        live_area += live_value * (now - live_since)
                        live_since = now
                    _steps(post, a, now, measured, serial)
                    ended += now >= warmup
                    no_work += 1
                    if limit is not None and not present and arrivals >= limit:
                        until = _drained(world, now)  # the next event is past it
                else:
                    if not mirrored:  # `StatsRecorder.arrival`
                        if now > live_since:
                            live_area += live_value * (now - live_since)
                            live_since = now
                        live_value += 1
                    present += 1
                    stage.present = present
                    if in_service < servers:  # a server is free
                        in_service += 1
                        stage.in_service = in_service
                        t_new = now + w
                        if job is None:
                            job = a, serial, now
                            started = now
                            t_done = t_new
                            s_done = scheduled
                        elif t_new < t_done:  # its sequence number is the latest: no tie
                            heappush(others, (t_done, s_done, *job, started))
                            job = a, serial, now
                            started = now
                            t_done = t_new
                            s_done = scheduled
                        else:
                            heappush(others, (t_new, scheduled, a, serial, now, now))
                        scheduled += 1
                    else:
                        waiting.append((a, serial, w, now))
                    if present == known:  # a new level: read the gauge at it, once
                        table.append(gauge(blank))
                        known += 1
                    if now > present_since:  # the two levels change together: one `since`
                        dt = now - present_since
                        present_area += present_value * dt
                        busy_area += busy_value * dt
                        present_since = now
                    present_value += 1.0
                    busy_value = 1.0
            else:
                # `FifoStage._done`, then `settle` runs the session to its end
                a, serial, arrived = job
                job_started = started
                present -= 1
                stage.present = present
                if waiting:
                    next_a, next_serial, next_work, next_arrived = waiting.popleft()
                    t_new = now + next_work
                    if others and others[0][0] <= t_new:  # the other's earlier on a tie
                        t_done, s_done, next_a, next_serial, next_arrived, started = (
                            heapreplace(
                                others, (t_new, scheduled, next_a, next_serial, next_arrived, now)
                            )
                        )
                    else:
                        started = now
                        t_done = t_new
                        s_done = scheduled
                    job = next_a, next_serial, next_arrived
                    scheduled += 1
                else:
                    in_service -= 1
                    stage.in_service = in_service
                    if others:
                        t_done, s_done, next_a, next_serial, next_arrived, started = heappop(
                            others
                        )
                        job = next_a, next_serial, next_arrived
                    else:
                        job = None
                        t_done = INF
                if now > present_since:  # the two levels change together: one `since`
                    dt = now - present_since
                    present_area += present_value * dt
                    busy_area += busy_value * dt
                    present_since = now
                present_value -= 1.0
                busy_value = 1.0 if present else 0.0
                if measure is not None:  # `FifoStage.measure`
                    measure(job_started, job_started - arrived, now - job_started)
                if now >= measured:
                    stage_completed += 1
                    stage_wait += job_started - arrived
                    stage_service += now - job_started
                for slot, value, samples in post:
                    if samples is None:  # set
                        a[slot] = now if value is None else value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        v = now - a[slot] if value is None else value(a)
                        if now >= measured:  # its turn, 0, is added at the end
                            add_time, add_session, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_value(v)
                if not mirrored:  # `StatsRecorder.session_ended`
                    if now > live_since:
                        live_area += live_value * (now - live_since)
                        live_since = now
                    live_value -= 1
                if limit is not None and not present and arrivals >= limit:
                    until = _drained(world, now)  # the next event is past it
            if progressing:
                fired += 1
                if not fired & mask:
                    progress(time)
    except SimError as error:
        if error.serial is None and serial >= 0:
            error.serial = serial
        raise
    finally:
        if mirrored:
            live_since, live_area, live_value = present_since, present_area, present_value
        # `World.end_session` (as in `run_ps`): those of no work, and the completions
        world.arrivals, world.ended = arrivals, ended + stage_completed - completed
        live.since, live.area, live.value = live_since, live_area, live_value
        for level, since, area, value in (
            (present_level, present_since, present_area, present_value),
            (busy_level, present_since, busy_area, busy_value),
        ):
            level.since, level.area, level.value = since, area, value
        record.completed, record.wait, record.service = stage_completed, stage_wait, stage_service
        world.live = stage.present  # every live session is at the stage between events
        if table is not None:
            _record_gauge(world.recorder, trace_times, trace_present, table)
        _pad_turns(world)
    if job is not None and t_done == INF:  # a job of infinite work keeps a server
        world.endless.append(Endless(stage.index, job[1], started, len(waiting)))
    for t, _, _, other, _, since in others:  # as does each other one (c > 1)
        if t == INF:
            world.endless.append(Endless(stage.index, other, since, len(waiting)))
    # the arrivals and the completions (of the sessions that arrived with work and left)
    arrived = arrivals - first
    left = arrived - no_work - len(waiting) - (job is not None) - len(others)
    engine.events += arrived + left
    if end_instant is not None:
        end_instant(engine.now)
    return min(t_arrive, t_done) == INF


def run_ps(
    world: Any,
    until: float,
    pre: tuple,
    work: Any,
    stage: PsStage,
    post: tuple,
    gauge: Any,
    serial_read: bool,
    origin: Any,
    measure: Any,
) -> bool:
    """`run` for one ps(φ) stage, φ a constant or a function of `present` alone (its rate
    at each number of jobs read once, `PsStage._rate`): `PsStage` and the world's
    rescheduling inlined. The pending events are the next arrival, the live completion
    (the one of the stage's current version) and the stale completions that every
    reschedule leaves behind; a stale one still fires as the event path fires it (it
    moves the clock, counts in `events` and in the progress), and does nothing else, so it
    keeps only its time and sequence number, in a heap of its own. The same sequence
    numbers break ties. When no one watches the clock between events (`_watched`), a stale
    completion is only counted (if it falls by `until`), and the clock ends at the last
    one's time. A capacity that is not positive while jobs are present fails where the
    settle would (`PsStage.no_capacity`)."""
    engine = world.engine
    workload = world.workload
    end_instant = world.end_instant if world.gauges else None
    table, known = _gauge_table(world, gauge)
    trace_times: list[float] = []
    trace_present: list[int] = []
    trace_time, trace_level = trace_times.append, trace_present.append
    blank = world.blank
    shown = -1
    # a drain may stop the run before a stale completion: they are kept, to fire in order
    keep_stale = _watched(world) or world.limit is not None
    # no event of this loop is at inf (`PsStage.reschedule` schedules no completion there),
    # so a time of inf is none pending, past every horizon (after an `arrivals` limit)
    until = min(until, LATEST)  # a completion at inf never fires (`Engine.run`)
    n_stale = 0  # the stale completions by `until` not kept: they count as fired
    last_stale = -INF  # and the latest of their times
    recorder: StatsRecorder = world.recorder
    progress = recorder.progress
    # fast path: without a progress callback the events are counted once, at the end
    progressing = recorder.has_progress()
    live, record = recorder.live_level(), recorder.stage_record(stage.index)
    present_level, busy_level = record.present, record.busy
    live_since, live_area, live_value = live.since, live.area, live.value
    present_since, present_area = present_level.since, present_level.area
    # fast path: the level's value is kept as a float (`present`, a number of jobs, is an
    # int), which it equals: float arithmetic, the same numbers
    present_value = present_level.value
    busy_area, busy_value = busy_level.area, busy_level.value
    assert busy_level.since == present_since  # both set together from the warm-up on
    assert not stage.heap and not stage.present and not stage.dirty and present_value == 0
    stage_completed, stage_wait, stage_service = record.completed, record.wait, record.service
    measured = recorder.warmup
    warmup = world.warmup
    n_attrs = world.n_attrs
    blank_attrs: list[Any] = [0.0] * (n_attrs + 1)
    c = stage.phi_const
    # the rate φ(n) / n at each number of jobs n so far, for a capacity that reads `present`
    rates = [0.0]
    vtime, t_last, rate = stage.vtime, stage.t_last, stage.rate
    rush = stage.rush  # `PsStage.rush`
    present = 0
    # `PsStage.heap`: (tag, serial, attributes, arrived); serials are in arrival order,
    # as the stage's order of arrival, which breaks ties between equal tags
    jobs: list[tuple] = []
    stale: list[tuple[float, int]] = []  # (time, seq) of the stale completions
    scheduled = 0
    rate_in = workload._rate
    uniform = workload._uniform
    log = math.log
    now = engine.now
    # an `arrivals` limit (at least 1, the linker sees to it): none arrive after it, and
    # the run drains
    limit = world.limit
    t_arrive = 0.0 if rate_in is not None else workload._next_gap()
    s_arrive = scheduled
    scheduled += 1
    t_done = INF  # the live completion
    s_done = 0
    t_stale = INF  # the first stale completion
    s_stale = 0
    mask = PROGRESS_EVERY - 1
    fired = 0  # the events so far, if `progressing`
    stale_fired = 0  # the stale completions fired (kept)
    no_work = 0  # the sessions whose run had no work
    arrivals, ended = world.arrivals, world.ended
    first = arrivals
    # fast path: while no run of no work has ended a session, the live sessions are the
    # jobs present and their level is the stage's `present`, updated at the same instants
    # with the same arithmetic; `live` is then worked out at the end (or at that session)
    mirrored = (live_since, live_area, live_value) == (present_since, present_area, present_value)
    completed = stage_completed
    serial = -1  # the session being executed, for an error's note
    try:
        while True:
            # the next event: the least (time, seq) of the three
            # (`arriving`: True, False for the live completion, None for a stale one)
            if t_arrive < t_done or (t_arrive == t_done and s_arrive < s_done):
                arriving = True
                time = t_arrive
                if t_stale <= time and (t_stale < time or s_stale < s_arrive):
                    arriving = None
                    time = t_stale
            else:
                arriving = False
                time = t_done
                if t_stale <= time and (t_stale < time or s_stale < s_done):
                    arriving = None
                    time = t_stale
            if time > until:  # `until` is finite: nothing at inf fires
                break
            if time != now:  # the instant `now` is over: as in `run`
                if table is not None:
                    if present != shown:
                        shown = present
                        trace_time(now)
                        trace_level(present)
                engine.now = now = time
            if arriving is None:
                # a stale `PsStage._done`: it returns at once, and the settle does nothing
                heappop(stale)
                if stale:
                    t_stale, s_stale = stale[0]
                else:
                    t_stale = INF
                stale_fired += 1
                if progressing:
                    fired += 1
                    if not fired & mask:
                        progress(time)
                continue
            if arriving:
                # `World.new_session`, then `Workload._arrive` schedules the next arrival
                serial = arrivals
                arrivals += 1
                a = blank_attrs.copy()
                if serial_read:
                    a[SERIAL] = float(serial)
                if limit is not None and arrivals >= limit:  # `Workload._arrive`
                    t_arrive, s_arrive = INF, INF  # none pending: it never wins a tie
                else:
                    if rate_in is not None:
                        t_arrive = now + -log(1.0 - uniform()) / rate_in
                    else:
                        t_arrive = now + workload._next_gap()
                    s_arrive = scheduled
                    scheduled += 1
                    if t_arrive == INF:  # past the float range: it never comes (`_arrive`)
                        s_arrive = INF
                # `settle` runs the session up to its run
                for slot, value, samples in pre:
                    if samples is None:  # set
                        a[slot] = now if value is None else value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        v = now - a[slot] if value is None else value(a)
                        if now >= measured:  # its turn, 0, is added at the end
                            add_time, add_session, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_value(v)
                w = work(a)
                # no other session is ever ready here: the session goes on (`World.zero_run`)
                if not w > 0:  # a run of no work completes at once: nothing changes
                    if w != w:  # NaN work; below 0 is no work, as the reference has it
                        raise bad_work(origin, w, serial)
                    if mirrored:  # from now on `live` is kept apart
                        mirrored = False
                        live_since, live_area = present_since, present_area
                        live_value = present_value
                    # `StatsRecorder.arrival`, and `World.end_session` of a session without
                    # holds, leases or frames
                    if now > live_since:
                        live_area += live_value * (now - live_since)
                        live_since = now
                    _steps(post, a, now, measured, serial)
                    ended += now >= warmup
                    no_work += 1
                    if limit is not None and not present and arrivals >= limit:
                        until = _drained(world, now)  # the next event is past it
                    if progressing:
                        fired += 1
                        if not fired & mask:
                            progress(time)
                    continue
                if not mirrored:  # `StatsRecorder.arrival`
                    if now > live_since:
                        live_area += live_value * (now - live_since)
                        live_since = now
                    live_value += 1
                # `PsStage.arrive`
                if now != t_last:
                    if present:
                        vtime += (now - t_last) * rate
                    t_last = now
                heappush(jobs, (vtime + w, serial, a, now))
                stage.present = present = present + 1
                if present == known:  # as in `run`
                    table.append(gauge(blank))
                    known += 1
                # `StatsRecorder.stage_state`, inlined
                if now > present_since:
                    dt = now - present_since
                    present_area += present_value * dt
                    busy_area += busy_value * dt
                    present_since = now
                present_value += 1.0
                busy_value = 1.0
                if c is not None:
                    rate = c / present_value
                elif present < len(rates):
                    rate = rates[present]
                else:
                    rate = stage._rate(present)
                    rates.append(rate)
                # `PsStage.reschedule` (next): the live completion, if any, turns stale
                if t_done != INF:
                    if keep_stale:
                        heappush(stale, (t_done, s_done))
                        t_stale, s_stale = stale[0]
                    elif t_done <= until:
                        n_stale += 1
                        if t_done > last_stale:
                            last_stale = t_done
            else:
                # the live `PsStage._done` (it fired: it does not turn stale), then `settle`
                # runs the session to its end; a job is present (it is the one done)
                if now != t_last:
                    vtime += (now - t_last) * rate
                    t_last = now
                tag, serial, a, arrived = heappop(jobs)
                if tag > vtime:
                    vtime = tag
                rush = rate == INF  # it ended at infinite speed: so does the next (below)
                stage.present = present = present - 1
                if now > present_since:
                    dt = now - present_since
                    present_area += present_value * dt
                    busy_area += busy_value * dt
                    present_since = now
                present_value -= 1.0
                if not present:
                    busy_value = rate = 0.0
                    if vtime == INF:  # a job of infinite work ended (below)
                        vtime = 0.0
                elif c is not None:
                    busy_value = 1.0
                    rate = c / present_value
                else:  # `present` was reached before, by an arrival
                    busy_value = 1.0
                    rate = rates[present]
                if measure is not None:  # `PsStage.measure`: a job starts as it arrives
                    measure(arrived, 0.0, now - arrived)
                if now >= measured:  # `StatsRecorder.stage_done`; its wait, 0, at the end
                    stage_completed += 1
                    stage_service += now - arrived
                for slot, value, samples in post:
                    if samples is None:  # set
                        a[slot] = now if value is None else value(a)
                    else:  # observe: `StatsRecorder.observe`, inlined
                        v = now - a[slot] if value is None else value(a)
                        if now >= measured:  # its turn, 0, is added at the end
                            add_time, add_session, add_value = samples
                            add_time(now)
                            add_session(serial)
                            add_value(v)
                if not mirrored:  # `StatsRecorder.session_ended`
                    if now > live_since:
                        live_area += live_value * (now - live_since)
                        live_since = now
                    live_value -= 1
                if limit is not None and not present and arrivals >= limit:
                    until = _drained(world, now)  # the next event is past it
            # `PsStage.reschedule` (the stage changed); a positive `rate` means jobs present
            t_done = INF
            rushed, rush = rush, False
            if rate > 0:
                # infinite speed, the job after one that ended at it, or a virtual time of
                # inf (a job of infinite work ended): the next job ends now
                dt = 0.0 if rate == INF or rushed or vtime == INF else (jobs[0][0] - vtime) / rate
                if dt < 0.0:
                    dt = 0.0
                if dt < INF:
                    t_done = now + dt
                    s_done = scheduled
                    scheduled += 1
            elif jobs:  # a capacity not positive with jobs present: the settle's failure
                stage.rate = rate
                serial = -1  # no session's doing
                stage.no_capacity()
            if progressing:
                fired += 1
                if not fired & mask:
                    progress(time)
    except SimError as error:
        if error.serial is None and serial >= 0:
            error.serial = serial
        raise
    finally:
        if mirrored:
            live_since, live_area, live_value = present_since, present_area, present_value
        if stage_completed > completed:  # each added a wait of 0.0 (`arrived - arrived`)
            stage_wait += 0.0
        # `World.end_session`: the sessions that ended from the warm-up on are those of no
        # work counted in `ended`, and the completions counted in the stage's record
        world.arrivals, world.ended = arrivals, ended + stage_completed - completed
        live.since, live.area, live.value = live_since, live_area, live_value
        for level, since, area, value in (
            (present_level, present_since, present_area, present_value),
            (busy_level, present_since, busy_area, busy_value),
        ):
            level.since, level.area, level.value = since, area, value
        record.completed, record.wait, record.service = stage_completed, stage_wait, stage_service
        stage.vtime, stage.t_last, stage.rate = vtime, t_last, rate
        world.live = stage.present
        if table is not None:
            _record_gauge(world.recorder, trace_times, trace_present, table)
        _pad_turns(world)
    world.endless.extend(  # the jobs of infinite work, in the order they arrived
        Endless(stage.index, serial, arrived) for tag, serial, _, arrived in jobs if tag == INF
    )
    # the arrivals, the completions (of the sessions that arrived with work and left) and
    # the stale completions, fired or only counted
    arrived = arrivals - first
    engine.events += arrived + (arrived - no_work - len(jobs)) + stale_fired + n_stale
    if last_stale > engine.now:  # the clock moves on to the last stale completion
        if end_instant is not None:
            end_instant(engine.now)
        engine.now = last_stale
    if end_instant is not None:
        end_instant(engine.now)
    return min(t_arrive, t_done, t_stale) == INF


def _drained(world: Any, now: float) -> float:
    """The last session of an `arrivals` limit ended now: the run drained
    (`World.end_session`). The loops' new horizon, which every event is past."""
    world.drained_at = now
    world.engine.stop()
    return -INF


def _steps(steps: tuple, a: list, now: float, measured: float, serial: int) -> None:
    """Execute the `set`s and `observe`s `steps` (as `plan` compiles them) for the session
    with attributes `a`: what the loops above inline on their per-customer paths, and call
    on the rare one (a run of no work)."""
    for slot, value, samples in steps:
        if samples is None:  # set
            a[slot] = now if value is None else value(a)
        else:  # observe: `StatsRecorder.observe`; its turn, 0, is added at the end
            v = now - a[slot] if value is None else value(a)
            if now >= measured:
                add_time, add_session, add_value = samples
                add_time(now)
                add_session(serial)
                add_value(v)


def _level_gauge(world: Any, program: ir.Program) -> Any:
    """The program's gauges read together, compiled (a function of the blank attributes
    that gives their values as a tuple), if it has any and each is a level gauge: one
    that reads nothing but numbers and the `queue` and `busy` of stages (so on the
    straight path it is a function of the stage's `present`), through operations that
    keep it finite (so it is never NaN, and equal values are `==`); else None."""
    if not program.gauges or not all(_bound(g.value) <= FINITE for g in program.gauges):
        return None
    gauges = tuple(world.gauges)
    return lambda blank: tuple([gauge(blank) for gauge in gauges])


def _bound(e: Any) -> float:
    """A bound on the magnitude of the expression `e` when it reads only numbers and
    stage levels through `+ - *`, comparisons, logic, `? :`, `min`, `max`, `abs`, `floor`
    and `ceil`; inf otherwise."""
    if isinstance(e, ir.Num):
        return abs(e.value) if e.value == e.value else INF
    if isinstance(e, ir.Observable):
        index = e.target.index
        fixed = index is None or isinstance(index, ir.Num)
        return MAX_JOBS if e.func in LEVELS and e.target.kind == "stage" and fixed else INF
    if isinstance(e, ir.Unary):
        return max(_bound(e.operand), 1.0)
    if isinstance(e, ir.Binary):
        left, right = _bound(e.left), _bound(e.right)
        if e.op in ("+", "-"):
            return left + right
        if e.op == "*":
            return left * right
        if e.op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
            return 1.0 if max(left, right) <= FINITE else INF
        return INF
    if isinstance(e, ir.Cond):
        return max(_bound(e.test), _bound(e.then), _bound(e.otherwise))
    if isinstance(e, ir.Call) and e.func in ("min", "max", "abs", "floor", "ceil"):
        return max((_bound(arg) for arg in e.args), default=INF)
    return INF


def _watched(world: Any) -> bool:
    """Whether anything reads the clock between events: a progress callback (a program
    with gauges other than level gauges takes the generated code, `plan`)."""
    return world.recorder.has_progress()


def _pad_turns(world: Any) -> None:
    """Add the turn, 0, of every observation the loop added (see `plan`)."""
    for stat in range(len(world.program.observes)):
        _, _, turns, values = world.recorder.samples(stat)
        turns.extend(repeat(0, len(values) - len(turns)))


def _gauge_table(world: Any, gauge: Any) -> tuple[list[tuple[float, ...]] | None, int]:
    """The values of the level gauges `gauge` reads by `present`, read at 0 (the stage is
    empty when the loop starts), and how many there are; `(None, -1)` without any."""
    if gauge is None:
        return None, -1
    return [gauge(world.blank)], 1


def _record_gauge(
    recorder: StatsRecorder,
    times: list[float],
    present: list[int],
    table: list[tuple[float, ...]],
) -> None:
    """Record the level gauges as `StatsRecorder.gauges` would have at the end of each
    instant: `times` are the ends of the instants after which `present` had changed (the
    gauges cannot have changed at the others), increasing. A gauge none of whose levels
    has the value of another has each of them as a change point (`present` differs from
    the one before)."""
    if times:
        # each gauge's column looked up by `present` on its own (no row tuples to transpose)
        levels = list(zip(*table, strict=True))
        columns = [list(map(column.__getitem__, present)) for column in levels]
        distinct = [len(set(column)) == len(column) for column in levels]
        recorder.gauge_series(times, columns, distinct)
