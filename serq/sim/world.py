"""One run of a program: the runtime pools, stages and sessions around one engine.

`World` builds everything from the IR once (stages, pools, compiled expressions and
blocks, the workload), then runs the engine. Its `settle` is what follows every event:
run every ready session in the order it became ready, then retry the growers and the
admissions of every pool in declaration order, until nothing changes; then every ps stage
that changed schedules its next completion, in stage order (as the reference does: its
completions at one instant fall after the other events there). A session runs until a
step stops it; closing a hold's scope releases it, and a release retries the pools at
once, so a session admitted by it is ready before the releasing one goes on (a session's
end retries nothing: the settle retries what it freed after the ready sessions). A run of
zero work completes at once but lets the sessions already ready run first (`zero_run`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim import (
    deadlock,
    draws,
    endless,
    eviction_keys,
    fastforward,
    flows,
    joint,
    ranked_queue,
    straight,
)
from serq.sim.claims import Claims
from serq.sim.core import ClockStops, Engine
from serq.sim.errors import SimError, number
from serq.sim.exprs import ExprCompiler, key_tuple
from serq.sim.holds import Holds
from serq.sim.pools import Pool
from serq.sim.session import (
    AT_STAGE,
    ENDED,
    GROWING,
    HOLD,
    LOOP,
    QUEUED,
    READY,
    RUNNING,
    Frame,
    Session,
    SpillJob,
)
from serq.sim.stages import PsStage, StageBase, build_stage
from serq.sim.statements import StatementCompiler
from serq.sim.step import StepStage, start_iterations
from serq.sim.workload import Workload

SERIAL = SLOT["serial"]
INF = math.inf
SPIN_LIMIT = 1_000_000  # loop iterations of one session at one instant before we call it stuck
# what is said then: a loop may only be on its way to an `end` (the reference, which has
# no such limit, runs 10,000,000 passes to one), so it says what happened, not "for ever"
LOOP_WITHOUT_TIME = (
    "the loop goes round without letting time pass: a million passes at one instant "
    "(each pass must take time: a run or a wait)"
)


def _index(stage: StageBase) -> int:
    return stage.index


def _reschedule(pending: list[PsStage]) -> None:
    """Every ps stage in `pending` schedules its next completion, in stage order."""
    if len(pending) > 1:
        pending.sort(key=_index)
    for stage in pending:
        stage.reschedule()
    pending.clear()


# preemptions at a pool, per session stuck there, with no hold of it completed, that make
# the stuck sessions a livelock at the end of a run (`World.livelocked_at`)
LIVELOCK_ROUNDS = 4


class World:
    """The runtime state of one run of `program`."""

    def __init__(
        self,
        program: ir.Program,
        recorder: Any,
        seed: int,
        warmup: float,
        limit: int | None,
        base_dir: str,
        check_invariants: bool,
        fast_forward: bool = True,
    ) -> None:
        self.program = program
        self.recorder = recorder
        self.warmup = warmup
        self.check_invariants = check_invariants
        self._zero_at = -math.inf  # the instant of the latest re-queued runs of zero work
        self._zero_count = 0
        self._admit_at = -math.inf  # the instant of the latest admissions to pools
        self._admit_count = 0
        self.engine = engine = Engine()
        self.ready: deque[Session] = deque()
        self.arrivals = 0
        self.live = 0
        self.ended = 0
        # ended, warm-up included: kept only for `check` (the generated code counts it
        # only under `check_invariants`)
        self.ended_all = 0
        self._checked_at = -math.inf
        self.turns = 0
        self.limit = limit
        self.drained_at: float | None = None
        # (origin, since, why): step engines stopped at the end of a run that went on
        # (`_check_stalls`), and iterations that never end, as they start (`stalled`)
        self.stalls: list[tuple[Any, float, str]] = []
        # told of each iteration that never ends as it starts (origin, since, why), for a
        # caller that says so while the run goes on (`serq run`), as `noticed` a livelock
        self.stall_noticed: Callable[[Any, float, str], None] | None = None
        # jobs of infinite work still at a stage when the run ended (`endless.find`)
        self.endless: list[endless.Endless] = []
        self.deadlock: tuple[Any, str] | None = None  # a circular wait at the pools (W-deadlock)
        # per pool, the hold that could never fit it first (origin, serial, time), and how
        # many sessions it rejected in all (W-reject)
        self.rejections: dict[Pool, tuple[Any, int, float, int]] = {}
        # per pool, the first session preempted again without progress (origin, serial,
        # time, position), and how many (the report's `stuck`; W-stall)
        self.livelocks: dict[Pool, tuple[Any, int, float, float, int]] = {}
        # told of each pool's first livelock as it is found (pool, origin, serial, time,
        # position), for a caller that says so while the run goes on (`serq run`)
        self.noticed: Callable[[Pool, Any, int, float, float], None] | None = None
        # per pool, the first session preempted again without progress while other
        # sessions held the pool too (origin, serial, time, position), and how many: the
        # report's note, and what a Ctrl-C says of them (`serq.sim.interrupted`)
        self.stuck: dict[Pool, tuple[Any, int, float, float, int]] = {}
        # each session so stuck that has not got past that preemption since (its hold
        # completed), in the order they were stuck: (pool, origin, time, position). Those
        # still live when the run ends may be a livelock (`livelocked_at`)
        self.stuck_sessions: dict[Session, tuple[Pool, Any, float, float]] = {}
        # per pool, the preemptions since a hold of it last completed (none: since the start)
        self.fruitless: dict[Pool, int] = {}
        self.n_attrs = len(program.attrs)
        # what an expression without a session reads as its attributes: zeros, no session
        self.blank: list[Any] = [0.0] * self.n_attrs + [None]
        self.streams = streams = draws.streams(seed)
        self.pools: list[Pool] = []
        self.stages: list[StageBase] = []
        self.exprs = exprs = ExprCompiler(engine, self.pools, self.stages, self.n_attrs)

        def capacity(e: ir.Expr):
            return exprs.compile(e), ir.arith.fold(e)

        self.ps_pending: list[Any] = []
        for i, stage in enumerate(program.stages):
            self.stages.append(
                build_stage(stage, i, engine, recorder, self.wake, capacity, self.ps_pending)
            )
        flows.install(program, self.stages, self.ps_pending)  # arrays a flow holds
        for stage in self.stages:
            if isinstance(stage, PsStage):
                stage.blank = self.blank
        for i, pool in enumerate(program.pools):
            queue_keys = [exprs.compile(k) for k in pool.queue.keys]
            evict_keys = hoisted = None
            if isinstance(pool.evict, ir.By):
                evict_keys, hoisted, held, steady, rise = eviction_keys.compile_keys(
                    exprs, pool, i, streams["eviction"]
                )
            ranked = ranked_queue.steady(pool.queue.keys, program.attrs)
            self.pools.append(Pool(i, pool, engine, queue_keys, evict_keys, ranked))
            if hoisted is not None:
                cache = self.pools[-1].cache
                cache.hoisted, cache.held, cache.steady = hoisted, held, steady
                cache.rising = rise
            if pool.preempt_keys:  # `preempt by (keys)`
                keys = [exprs.compile(k) for k in pool.preempt_keys]
                self.pools[-1].preempt_key_of = key_tuple(keys)
            self.pools[-1].cache.blank = self.blank
        for pool, runtime in zip(program.pools, self.pools, strict=True):
            if pool.spill is not None:
                self._install_spill(runtime, pool.spill, exprs, streams["eviction"])
        self.holds = Holds(self)
        self.steps = [s for s in self.stages if isinstance(s, StepStage)]
        self.spans: list[StepStage] = []  # step stages whose iteration may become a span
        # the last instant at which a plan admitted or preempted: what its sessions did
        # then (joined a queue, released a pool, arrived at an engine that had planned)
        # comes after the pools' retry, which the next event's settle makes
        # (`StepStage.extend`)
        self.replanned = -math.inf
        for s in self.steps:
            s.bind(self)
        if fast_forward and self.steps:
            for stage, verdict in zip(self.stages, fastforward.analyse(program), strict=True):
                if verdict is not None and verdict.skips:
                    stage.verdict = verdict
        self.claims: Claims | None = None
        if program.claims:
            self._install_claims(program, exprs)
        # pools whose queue a step stage serves (admitted by its iterations, not here)
        self.served = frozenset(i for i, p in enumerate(program.pools) if p.admit_via is not None)
        self.workload = Workload(
            program, self, exprs, streams["arrivals"], streams["workload"], base_dir
        )
        self.workload.limit = limit
        self.closed = isinstance(program.arrival, ir.Closed)
        on_workload = StatementCompiler(program, self, exprs, streams["workload"])
        self.workload.compile_blocks(
            on_workload.block(program.init), on_workload.block(program.turn)
        )
        statements = StatementCompiler(program, self, exprs, streams["session"])
        self.session_block = statements.block(program.session)
        self.gauges = tuple(exprs.compile(g.value) for g in program.gauges)
        # several step engines fast-forwarded together (`serq.sim.joint`), or None
        self.joint = joint.extend if joint.eligible(self) else None
        self.straight = None
        if self.claims is None:
            self.straight = straight.plan(self, program, exprs, streams["session"])

    def _install_claims(self, program: ir.Program, exprs: ExprCompiler) -> None:
        """The run's claims: every sample goes to them too. A step stage a claim reads
        iterates one iteration at a time, unless each such claim reads only what is the
        same at every iteration of a span (`fastforward.claim_changes`), whose checks the
        span then counts (`Claims.span`)."""
        claims = self.claims = Claims(program, self.engine, exprs, self.blank)
        for stage, held in claims.by_stage.items():
            step = self.stages[stage]
            step.claims = claims
            if any(fastforward.claim_changes(c.claim.pred) for c in held):
                step.verdict = None
        if claims.samples:
            record = self.recorder.observe

            def observe(stat: int, now: float, session: int, turn: int, value: float) -> None:
                claims.observed(stat, value)
                record(stat, now, session, turn, value)

            self.recorder.observe = observe

    # ------------------------------------------------------------------ running

    def run(self, horizon: float) -> None:
        """Run until `horizon` (or until an `arrivals` limit drains)."""
        if self.straight is not None and not self.check_invariants:
            # fast path: one fifo or ps stage, no engine heap (straight.py)
            quiet = straight.run(self, horizon, *self.straight)
            if quiet and self.live and not self.engine.stopped:
                self._stalled()  # `_check_end`'s stall: nothing else applies there
            return
        self.engine.until = horizon  # before the first settle: a span ends by the horizon
        self.workload.start()
        self.settle()
        # fast path: without pools or step stages a settle only runs the ready sessions
        settle = self.settle if self.pools or self.steps else self._settle_plain
        if self.check_invariants:
            settle = self._checked(settle)
            self.check()
        engine = self.engine
        if not engine.stopped:
            try:
                engine.run(horizon, settle, self.end_instant, self.recorder.progress)
            except ClockStops as error:
                self.place_clock_stop(error)
                raise
        if not engine.stopped:
            self._check_end()

    def _check_end(self) -> None:
        """The run reached its horizon: the jobs of infinite work left (`endless`), a
        stall (`_check_stalls`), and with events still pending, a circular wait at the
        pools that the arrivals ran past (`deadlock`)."""
        quiet = self.engine.peek() == INF
        self.endless = endless.find(self)  # before a stall, whose message counts them
        self._check_stalls(quiet)
        if not quiet and deadlock.applies(self.program, bool(self.steps)):
            self.deadlock = deadlock.find(self)

    # whether a session can wait at a pool while it holds units that no `HoldPart` counts:
    # never here; in the generated code, inside an inline hold (`CompiledWorld`)
    waits_in_inline_holds = False

    def held_inline(self, s: Session) -> list[tuple[Pool, float]] | None:
        """What the waiting session `s` holds beside the pools' `HoldPart`s, as (pool,
        units): nothing here; the generated code keeps an inline hold's units in its
        locals (`CompiledWorld`), None when it cannot tell."""
        return []

    def _check_stalls(self, quiet: bool) -> None:
        """The run is over: a step engine that still has something to plan and planned
        nothing since it last tried has stopped moving. With no event pending (`quiet`)
        nothing can ever change that, and the run fails at the stage; otherwise the run
        ran on without it, which `stalls` keeps for a warning."""
        for stage in self.steps:
            stall = stage.stall()
            if stall is None:
                continue
            since, where, why = stall
            if quiet:
                raise SimError(
                    where, f"{why}; no event is pending, so the run can never move again"
                )
            self.stalls.append((where, since, why))
        if quiet and self.live:
            self._stalled()

    def _stalled(self) -> None:
        """No event is pending and sessions are live, none of them at a stopped engine:
        they wait at the pools for ever. Say where, and when the head of a queue would fit
        now, why it was not admitted (it joined in an engine's plan, after the pools were
        last retried, and only an event retries them)."""
        waits = []
        origin = None
        late = ""
        for p, decl in zip(self.pools, self.program.pools, strict=True):
            queued, growing = len(p.queue) + len(p.front), len(p.growers)
            if queued:
                waits.append(
                    f"{queued} queued for pool `{p.name}` "
                    f"(used {number(p.allocated)} of {number(p.cap)})"
                )
                head = p.head()
                if not late and head is not None and self.holds._fits(head):
                    late = (
                        f"; the head at `{p.name}` would fit now: it joined in a step "
                        "engine's plan, after the pools were last retried"
                    )
            if growing:
                waits.append(f"{growing} waiting to grow at pool `{p.name}`")
            if (queued or growing) and origin is None:
                origin = decl.origin
        if self.endless:  # the W-stall warnings name them
            n = len(self.endless)
            waits.append(f"{n} in {'a job' if n == 1 else 'jobs'} of infinite work")
        waits += [why for _, _, why in self.stalls]  # iterations that never end
        self.stalls.clear()  # said here, not again as warnings
        if self.ready:  # made ready in a step engine's plan, after which no event came
            waits.append(
                f"{len(self.ready)} made ready in a step engine's plan, which only an event "
                "would run"
            )
        where = "; ".join(waits) or self._at_stages()
        raise SimError(
            origin or (self.program.arrival.origin if self.program.arrival else None),
            f"the run stalls at {number(self.engine.now)}: no event is pending and "
            f"{self.live} session{'s wait' if self.live != 1 else ' waits'} for ever ({where}); "
            f"nothing that could free them will happen{late}",
        )

    def _at_stages(self) -> str:
        """Where the live sessions of a stall that no pool, growth, endless job or ready
        session explains are: at stages whose jobs' ends passed the float range (a work
        of 1e300 at ps(1e-300), or a flow through one, ends at time inf)."""
        names = []
        for stage, decl in zip(self.stages, self.program.stages, strict=True):
            if stage.present and not isinstance(stage, StepStage):
                names.append(
                    f"`{decl.name}`" if decl.index is None else f"`{decl.name}[{decl.index}]`"
                )
        if not names:
            return f"{self.live} live"
        return (
            f"{self.live} live, at {'stage' if len(names) == 1 else 'stages'} "
            f"{', '.join(names)}, whose jobs would end past the float range (their work over "
            "their rate is inf)"
        )

    def settle(self) -> None:
        """Run every ready session, then retry every pool, until nothing changes; then
        start an iteration on every idle step stage that has something to plan."""
        ready = self.ready
        run = self.run_session
        if not self.pools and not self.steps:  # fast path: nothing to retry
            while ready:
                run(ready.popleft())
        else:
            rounds = 0
            while True:
                while ready:
                    run(ready.popleft())
                if not self.retry_pools():
                    break
                rounds += 1
                if rounds > SPIN_LIMIT:
                    self.spinning()
        self._settled()

    def _settled(self) -> None:
        """The end of `settle`, once no session is ready and no pool admits: one pass over
        the step stages, the pools' levels, the ps stages' and the spans' rescheduling."""
        if self.pools or self.steps:
            if self.steps:
                # then one pass over the step stages (spec §3 settle; the reference too): a
                # pool admits again, and an engine that planned nothing plans again, only
                # at the next event, even when an iteration's preemption freed memory
                start_iterations(self.steps, self.engine)
                # a session a plan made ready but did not run (a closed population's
                # replacement of a session that ended in it, say) runs at the next event,
                # as the references run it (tests/sim/NOTES.md §17); the plans ran their
                # admitted sessions themselves
            self._flush_pools()
        pending = self.ps_pending
        if pending:
            _reschedule(pending)
        spans = self.spans
        if spans:  # last: every event of this instant is scheduled
            for stage in spans:
                stage.extend()
            spans.clear()

    def _checked(self, settle: Callable[[], None]) -> Callable[[], None]:
        """`settle`, followed by `check` (serq run --check-invariants: after every event)."""

        def settle_and_check() -> None:
            settle()
            self.check()

        return settle_and_check

    def check(self) -> None:
        """Raise an `E-run` when the state breaks an invariant of the simulator: a pool's
        used or cached below 0 or their sum above its cap, the clock gone back, sessions
        not conserved (arrived = ended + live). A failure is a bug of serq, not of the
        program; the message says which invariant, where and when."""
        now = self.engine.now
        if now < self._checked_at:
            self._broken(f"the clock went back from {now!r} to {self._checked_at!r}")
        self._checked_at = now
        for p in self.pools:
            used, cached = p.allocated, p.cache.total
            # both ways, a rounding's worth of slack: fractional parts taken and given back
            # leave `allocated` a few ulps off 0 until the pool empties
            if not (used >= -1e-9 and cached >= -1e-9):
                self._broken(f"pool `{p.name}` has used {used!r} and cached {cached!r}")
            if used + cached > p.cap * (1 + 1e-12) + 1e-9:
                self._broken(
                    f"pool `{p.name}` has used {used!r} + cached {cached!r} above its cap {p.cap!r}"
                )
        if self.live < 0 or self.arrivals != self.ended_all + self.live:
            self._broken(
                f"{self.arrivals} sessions arrived, {self.ended_all} ended and {self.live} live"
            )

    def _broken(self, what: str) -> None:
        origin = self.program.arrival.origin if self.program.arrival is not None else None
        raise SimError(origin, f"invariant broken (a bug in serq): {what}")

    def _settle_plain(self) -> None:
        """`settle` for a world without pools or step stages."""
        ready = self.ready
        if ready:
            run = self.run_session
            while ready:
                run(ready.popleft())
        pending = self.ps_pending
        if pending:
            if len(pending) == 1:  # fast path: one ps stage changed
                pending.pop().reschedule()
            else:
                _reschedule(pending)

    def _flush_pools(self) -> None:
        """Tell the recorder the state of every pool that changed."""
        now = self.engine.now
        state = self.recorder.pool_state
        for p in self.pools:
            if p.dirty:
                p.dirty = False
                queued = len(p.queue) + len(p.front)
                state(p.index, now, p.allocated, p.cache.total, queued, p.n_holders)

    def end_instant(self, now: float) -> None:
        """The instant `now` is over: read the gauges."""
        gauges = self.gauges
        if gauges:
            blank = self.blank
            if len(gauges) == 1:  # fast path: one gauge, no list
                self.recorder.gauges(now, (gauges[0](blank),))
            else:
                self.recorder.gauges(now, tuple([g(blank) for g in gauges]))

    def retry_pools(self) -> bool:
        """Retry growers, then admissions, at every pool in declaration order."""
        changed = False
        holds = self.holds
        for p in self.pools:
            if p.growers and holds.try_growers(p):
                changed = True
            if (p.queue or p.front) and p.index not in self.served and holds.try_admit(p):
                changed = True
        return changed

    def run_session(self, s: Session) -> None:
        """Execute `s` until a step stops it (or it reaches its end)."""
        s.state = RUNNING
        frames = s.frames
        spins = 0
        try:
            while frames:
                f = frames[-1]
                pc = f.pc
                if pc < f.n:
                    f.pc = pc + 1
                    if not f.stmts[pc](s):
                        return
                elif f.kind == LOOP:
                    f.pc = 0
                    spins += 1
                    if spins > SPIN_LIMIT:
                        raise SimError(f.origin, LOOP_WITHOUT_TIME)
                else:
                    frames.pop()
                    if f.kind == HOLD:
                        self.holds.close(s, f.hold)
            self.end_session(s)  # in the try: its leases' caches are the session's
        except SimError as error:
            if error.serial is None:  # the session that was executing
                error.serial = s.serial
            raise

    # ------------------------------------------------------------------ sessions

    def new_session(self) -> None:
        """A session arrives now."""
        serial = self.arrivals
        self.arrivals += 1
        self.live += 1
        s = Session(serial, self.n_attrs)
        s.attrs[SERIAL] = float(serial)
        workload = self.workload
        if workload.trace is not None:  # fast path: only a trace assigns anything
            workload.assign(s)
        self.recorder.arrival(self.engine.now, serial)
        for step in workload.init:
            step(s)
        if self.claims is not None:
            self.claims.arrived(s)
        s.frames.append(Frame(self.session_block))
        self.ready.append(s)

    def wake(self, job: Any) -> None:
        """A stage finished `job`: its session goes on."""
        if job.serial >= 0:
            job.state = READY
            self.ready.append(job)

    def zero_run(self, s: Session) -> bool:
        """`s` ran a run of zero work, which completes at once: True when it goes on now,
        because no other session is ready; else it goes behind the ready ones (the spec
        does not say which runs first; the reference queues it, tests/sim/NOTES.md §10)."""
        ready = self.ready
        if not ready:
            return True
        now = self.engine.now
        if now == self._zero_at:  # sessions that take turns at zero work, in loops, forever
            self._zero_count += 1
            if self._zero_count > SPIN_LIMIT:
                self.spinning_at(s)
        else:
            self._zero_at, self._zero_count = now, 1
        s.state = READY
        ready.append(s)
        return False

    def count_admission(self, s: Session) -> None:
        """A pool admitted `s`: past SPIN_LIMIT admissions at one instant, more than the
        live sessions, sessions take turns at pools for ever (a loop around holds that
        nothing between them makes wait), and the run fails at `s`'s loop."""
        now = self.engine.now
        if now == self._admit_at:
            self._admit_count += 1
            if self._admit_count > SPIN_LIMIT + self.live:
                self.spinning_at(s)
        else:
            self._admit_at, self._admit_count = now, 1

    def spinning_at(self, s: Session) -> None:
        """Raise a livelock at one instant (`zero_run`, `count_admission`, `spinning`) at
        the innermost loop `s` executes, naming `s`; nothing when it executes no loop."""
        origin = self.loop_origin(s)
        if origin is None:  # sessions without loops cannot take turns for ever
            return
        error = SimError(origin, LOOP_WITHOUT_TIME)
        error.serial = s.serial
        raise error

    def spinning(self) -> None:
        """Raise the `E-run` of a settle whose pools admitted sessions SPIN_LIMIT times
        without time passing: a loop around a hold that is admitted at once, for ever. It
        names the first ready session that executes a loop, at that loop."""
        for s in self.ready:
            self.spinning_at(s)
        origin = self.program.arrival.origin if self.program.arrival is not None else None
        raise SimError(
            origin,
            f"the sessions are admitted to pools for ever at time {self.engine.now!r} "
            "without letting time pass",
        )

    def loop_origin(self, s: Session) -> Any:
        """The origin of the innermost loop `s` executes in, or None."""
        for f in reversed(s.frames):
            if f.kind == LOOP:
                return f.origin
        return None

    def place_clock_stop(self, error: SimError) -> None:
        """Place `error`, a clock that stopped (`serq.sim.core.ClockStops`), at the loop a
        session executes in whose work at this instant repeats, with its number: the first
        such session among those ready, those of the events pending now (in the order they
        would fire), the jobs of a ps stage whose completion is pending now, and a step
        engine's residents. With none in a loop, at the cost of a step engine whose
        iteration ends now (iterations of no time, one after another, repeat the work);
        else at no place (the workload's, later)."""
        if error.origin is not None:
            return
        for s in self._at_this_instant():
            origin = self.loop_origin(s)
            if origin is not None:
                error.origin = origin
                if error.serial is None:
                    error.serial = s.serial
                return
        now = self.engine.now
        for event in sorted((e for e in self.engine._heap if e[0] == now), key=lambda e: e[1]):
            stage = getattr(event[2], "__self__", None)
            if isinstance(stage, StepStage) and self.recorder.iteration_started(stage.index) == now:
                error.origin = stage.cost_origin
                error.message += (
                    f"; here step stage `{stage.name}` runs iterations that cost 0, one after "
                    "another"
                )
                return

    def _at_this_instant(self) -> Any:
        """The sessions that may act at this instant (`place_clock_stop`), in that order."""
        yield from self.ready
        now = self.engine.now
        pending = sorted((e for e in self.engine._heap if e[0] == now), key=lambda e: e[1])
        for event in pending:
            job = event[3]
            if isinstance(job, Session):
                yield job
                continue
            # a ps stage's completion: the stage itself (generated code), or a method of it
            stage = job if isinstance(job, StageBase) else getattr(event[2], "__self__", None)
            if isinstance(stage, PsStage):
                yield from (entry[2] for entry in sorted(stage.heap, key=lambda e: e[:2]))
            elif isinstance(stage, StepStage):
                yield from (r.session for r in stage.residents)

    def count_turn(self, s: Session) -> None:
        """`s` executed `turn;`."""
        now = self.engine.now
        if now >= self.warmup:
            self.turns += 1
        self.recorder.turn(now, s.serial)

    def cancel_wait(self, s: Session) -> None:
        """Take `s` out of wherever it waits (a preempted session)."""
        state = s.state
        if state == AT_STAGE:
            s.at.cancel(s)
        elif state == QUEUED:
            s.where.leave(s.waiter)
        elif state == GROWING:
            s.where.growers.remove(s.waiter)
        elif state == READY and s in self.ready:
            self.ready.remove(s)
        s.where = s.waiter = None
        s.state = RUNNING

    def rejected(self, pool: Pool, origin: Any, serial: int) -> None:
        """Session `serial`'s hold (at `origin`) can never fit `pool`: count it in the
        report's `rejected`, and keep the first for the run's warning; the caller ends it."""
        self.recorder.pool_count(pool.index, "rejected")
        first = self.rejections.get(pool)
        if first is None:
            self.rejections[pool] = (origin, serial, self.engine.now, 1)
        else:
            self.rejections[pool] = (*first[:3], first[3] + 1)

    def livelocked(self, pool: Pool, origin: Any, serial: int, position: float) -> None:
        """Session `serial`'s hold (at `origin`) was preempted at `pool` again at `position`,
        no further than its previous preemption: keep the first for the run's warning."""
        first = self.livelocks.get(pool)
        if first is None:
            self.livelocks[pool] = (origin, serial, self.engine.now, position, 1)
            if self.noticed is not None:
                self.noticed(pool, origin, serial, self.engine.now, position)
        else:
            self.livelocks[pool] = (*first[:4], first[4] + 1)

    def stalled(self, origin: Any, since: float, why: str) -> None:
        """A step engine stopped moving at `since` while the run goes on (an iteration that
        never ends, `why`, at `origin`): keep it for the run's warning, and tell
        `stall_noticed`."""
        self.stalls.append((origin, since, why))
        if self.stall_noticed is not None:
            self.stall_noticed(origin, since, why)

    def stuck_beside(self, pool: Pool, origin: Any, s: Session, position: float) -> None:
        """Session `s`'s hold (at `origin`) was preempted at `pool` again at `position`, no
        further than its previous preemption, while other sessions held the pool: keep the
        first, count them, and keep the session (`livelocked_at`)."""
        now = self.engine.now
        first = self.stuck.get(pool)
        if first is None:
            self.stuck[pool] = (origin, s.serial, now, position, 1)
        else:
            self.stuck[pool] = (*first[:4], first[4] + 1)
        self.stuck_sessions[s] = (pool, origin, now, position)

    def livelocked_at(self, pool: Pool) -> list[tuple[Any, Session, float, float]]:
        """The sessions stuck at `pool` beside others (`stuck_beside`) that are still live
        and have not completed the hold preempted then, as (origin, session, time,
        position), when the pool's holders went on preempting one another without
        completing a hold: at least `LIVELOCK_ROUNDS` preemptions a session so stuck since
        the last hold of the pool completed (a pool past its cliff completes holds between
        its preemptions). Empty when none."""
        still = [
            (origin, s, since, position)
            for s, (at, origin, since, position) in self.stuck_sessions.items()
            if at is pool and s.state != ENDED
        ]
        if self.fruitless.get(pool, 0) < LIVELOCK_ROUNDS * len(still):
            return []
        return still

    def end_session(self, s: Session) -> None:
        """`s` ends: it releases every hold and lease, keeping its cached prefixes."""
        if s.state == ENDED:
            return
        held = bool(s.leases) or (bool(s.frames) and any(f.kind == HOLD for f in s.frames))
        if held:
            self.holds.release_all(s)
        s.frames.clear()
        s.state = ENDED
        self.live -= 1
        self.ended_all += 1
        now = self.engine.now
        if now >= self.warmup:
            self.ended += 1
        self.recorder.session_ended(now, s.serial)
        if self.closed:
            self.workload.on_end(s)
        # no retry here, unlike a scope's release: the pools it freed are retried by the
        # settle, after the sessions ready now (the spec's settle order; the reference too)
        if self.limit is not None and self.live == 0 and self.arrivals >= self.limit:
            self.drained_at = now
            self.engine.stop()

    # ------------------------------------------------------------------ spills

    def _install_spill(self, pool: Pool, spill: ir.Spill, exprs: ExprCompiler, stream) -> None:
        tier = self.pools[spill.to]
        stage = self.stages[spill.via]
        when = exprs.compile(spill.when, stream)
        work = exprs.compile(spill.work, stream)
        cache = pool.cache
        recorder = self.recorder
        engine = self.engine

        def on_evict(entry, units: float, whole: bool) -> None:
            owner = entry.owner
            cache.context(entry, engine.now)
            engine.size = units  # a block evicted alone is a spill of its own size
            a = owner.attrs if owner is not None else self.blank
            if when(a) == 0:
                return
            w = work(a)
            recorder.pool_count(pool.index, "spills")
            if owner is not None:
                tier.cache.put(owner, tier.cache.cachedin(owner) + units)
            else:
                tier.cache.put_dead(units)  # a dead prefix is written, and stays dead
            tier.dirty = True
            tier.evict(recorder)
            if w > 0:  # a write of inf never ends, a job of infinite work as a run's is
                stage.arrive(SpillJob(), w)

        cache.on_evict = on_evict
