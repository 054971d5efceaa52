"""The simulator: run a linked program (`serq.ir.Program`) as a discrete-event simulation.

`simulate(program, recorder=...)` builds the runtime (`world.World`: pools, stages, the
compiled statements, the workload) and runs the event loop (`core.Engine`) to the horizon,
telling `recorder` (`recording.Recorder`) every change the statistics measure. It returns
an `Outcome`; a run-time failure of the program (a branch guard that is not 0 or 1, a bad
arrival gap, an unreadable trace, an `arrivals` limit that does not drain) is an `E-run`
diagnostic in `Outcome.errors` at the IR origin, and the run stops there.

The step engine (step stages, `admit via`, `budget_left`) is `step.py`, its fast-forward
of repeated iterations `fastforward.py`; runs over several stages (flows, `share`) are
`flows.py`. A run is generated Python (`compiled.py`: the event loop with the fifo, delay
and ps stages' events inline, `compiled_stages.py`, one generator per session scope with
its statements inline, plain holds inline, `compiled_holds.py`) unless `codegen=False`
keeps it on the interpreter of statement steps (`statements.py`, `World.run_session` and
`core.Engine.run`); sessions of `set`s and `observe`s around one run at a fifo(1) stage,
or a ps stage whose capacity is a constant or reads only `present`, take `straight.py`'s
loop, which keeps its two events in locals (still about 1.5 times as fast as the
generated loop on that shape).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from serq import ir
from serq.diagnostics import Diagnostic, Severity, Span, codes
from serq.diagnostics import number_text as _num
from serq.sim import compiled, deadlock, endless
from serq.sim.errors import SimError
from serq.sim.memory import machine_memory, out_of_memory, too_many_at_once
from serq.sim.pools import Pool
from serq.sim.recording import NullRecorder, Recorder
from serq.sim.world import World

__all__ = ["simulate", "Outcome", "SimError", "Recorder", "NullRecorder", "Interrupted"]


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (a `KeyboardInterrupt` while it ran), with the clock it had
    reached (`now`) and what it had found stopped by then (`found`): the warnings the
    end of the run would give for the state it was in (a livelock, with its count, a step
    engine stopped or in an iteration that never ends, a job of infinite work, sessions
    waiting at the pools for ever) and a note for sessions preempted again without
    progress beside other holders (the report's note). A caller that catches
    `KeyboardInterrupt` catches it."""

    def __init__(self, now: float, found: list[Diagnostic]) -> None:
        super().__init__(now, found)  # the args: a copy in another process is the same
        self.now = now
        self.found = found

    def __str__(self) -> str:
        return f"interrupted at t = {self.now:g}"


@dataclass
class Outcome:
    """What a run did: `end` is when it stopped (the horizon, or the time an `arrivals`
    limit drained), `events` the events fired, `arrivals` the sessions that arrived, and
    `ended` and `turns` the session ends and turns at or after the warm-up."""

    end: float
    horizon: float
    warmup: float
    seed: int
    events: int = 0
    arrivals: int = 0
    ended: int = 0
    turns: int = 0
    errors: list[Diagnostic] = field(default_factory=list)
    claims: tuple = ()  # the claims' `ClaimRow`s


def simulate(
    program: ir.Program,
    *,
    recorder: Recorder,
    seed: int | None = None,
    horizon: float | None = None,
    warmup: float | None = None,
    arrivals: int | None = None,
    base_dir: str = ".",
    check_invariants: bool = False,
    fast_forward: bool = True,
    codegen: bool = True,
    notice: Callable[[Diagnostic], None] | None = None,
) -> Outcome:
    """Run `program`, reporting to `recorder`; `seed`, `horizon`, `warmup` and `arrivals`
    override the program's run block, `base_dir` is where a relative trace is read;
    `fast_forward` lets step engines advance quiet iterations at once (`fastforward.py`);
    `codegen` runs the sessions as generated code (`compiled.py`), else on the
    interpreter of compiled statement steps (`statements.py`), with the same results;
    `notice` is given each livelock's warning as the run finds it, the run going on (the
    outcome has it again at the end, with the count of sessions)."""
    seed = program.seed if seed is None else seed
    horizon = program.horizon if horizon is None else horizon
    warmup = program.warmup if warmup is None else warmup
    limit = program.arrivals if arrivals is None else arrivals
    where = _fallback_span(program)
    outcome = Outcome(end=0.0, horizon=horizon or 0.0, warmup=warmup, seed=seed)
    if horizon is None or not horizon >= 0:
        outcome.errors.append(_error(where, "the run has no horizon (run { horizon T; })"))
        return outcome
    world: World | None = None
    memory: tuple[float, int] | None = None  # where a run that ran out of memory was
    try:
        if limit is not None and not isinstance(program.arrival, ir.Poisson | ir.Renewal):
            raise SimError(
                _arrival_origin(program), "`arrivals` applies only to poisson or renewal workloads"
            )
        crowd = too_many_at_once(program, machine_memory())
        if crowd is not None:
            raise crowd
        world = World(
            program, recorder, seed, warmup, limit, base_dir, check_invariants, fast_forward
        )
        if notice is not None:

            def noticed(pool: Pool, origin: Any, serial: int, since: float, pos: float) -> None:
                notice(_livelock(pool, origin or where, serial, since, pos, 1))

            world.noticed = noticed

            def stalled(origin: Any, since: float, why: str) -> None:
                notice(_stall(origin or where, since, why, None))

            world.stall_noticed = stalled
        if codegen:
            compiled.install(world)
        world.run(horizon)
        outcome.end = horizon
        if limit is not None:
            outcome.end = _drain_end(world, program, horizon, warmup, limit)
    except KeyboardInterrupt:
        if world is None:
            raise
        raise Interrupted(world.engine.now, interrupted(world, where)) from None
    except SimError as error:
        if world is not None:
            outcome.end = world.engine.now
            if error.time is None:
                error.time = world.engine.now
        outcome.errors.append(error.diagnostic(where))
    except MemoryError:  # the state is let go of below, once the exception has gone
        memory = (world.engine.now, world.live) if world is not None else (0.0, 0)
    if memory is not None:
        world = None
        gc.collect()
        outcome.end = memory[0]
        outcome.errors.append(out_of_memory(where, *memory))
        return outcome
    if world is not None:
        for origin, since, why in world.stalls:
            outcome.errors.append(_stall(origin or where, since, why, "the end of the run"))
        for origin, why in endless.warnings(world.program, world.endless):
            outcome.errors.append(_endless(origin or where, why))
        if world.deadlock is not None:
            origin, why = world.deadlock
            outcome.errors.append(_deadlock(origin or where, why))
        # whether the run stopped at an error: only warnings are added from here on
        failed = any(d.severity >= Severity.ERROR for d in outcome.errors)
        if not failed:  # (a livelock the run stopped at, at one instant, is its error)
            for pool, (origin, serial, since, position, n) in world.livelocks.items():
                outcome.errors.append(_livelock(pool, origin or where, serial, since, position, n))
            for pool, (_, _, _, _, n) in world.stuck.items():
                # a session alone at the pool that can never grow enough (above) is what
                # keeps the others from getting past their preemptions there
                still = [] if pool in world.livelocks else world.livelocked_at(pool)
                if still:
                    outcome.errors.append(_mutual_livelock(pool, still, n, where))
        for pool, (origin, serial, since, n) in world.rejections.items():
            outcome.errors.append(_rejection(pool, origin or where, serial, since, n))
        if world.arrivals == 0 and not failed:
            outcome.errors.append(_idle(program, where, horizon))
        outcome.errors.extend(world.exprs.warnings.values())  # W-draw
        outcome.events = world.engine.events
        outcome.arrivals = world.arrivals
        outcome.ended = world.ended
        outcome.turns = world.turns
        # a run that ended with warnings only (a stall, inf work, W-draw) has a report,
        # and its claims are in it
        if world.claims is not None and not failed:
            outcome.claims = world.claims.rows(outcome.end, world.live)
    return outcome


def interrupted(world: World, where: Span) -> list[Diagnostic]:
    """What a run interrupted in `world`'s state had found stopped, as `Interrupted.found`
    says; each check that cannot be made on a state left between two events is skipped."""
    until = "the interruption"
    found: list[Diagnostic] = []
    stalls = list(world.stalls)
    for stage in world.steps:
        try:
            stall = stage.stall()
        except Exception:  # noqa: BLE001 - an engine stopped between two changes
            stall = None
        if stall is not None:
            since, origin, why = stall
            stalls.append((origin, since, why))
    for origin, since, why in stalls:
        found.append(_stall(origin or where, since, why, until))
    try:
        jobs = endless.find(world)
    except Exception:  # noqa: BLE001
        jobs = []
    for origin, why in endless.warnings(world.program, jobs):
        why = why.replace("to the end of the run", "until the run was interrupted")
        found.append(_endless(origin or where, why))
    try:
        ready = world.engine.peek() != math.inf and deadlock.applies(
            world.program, bool(world.steps)
        )
        waits = deadlock.find(world, interrupted=True) if ready else None
    except Exception:  # noqa: BLE001
        waits = None
    if waits is not None:
        origin, why = waits
        found.append(_deadlock(origin or where, why))
    for pool, (origin, serial, since, position, n) in world.livelocks.items():
        found.append(_livelock(pool, origin or where, serial, since, position, n))
    for pool, (origin, serial, since, position, n) in world.stuck.items():
        sessions = "1 session was" if n == 1 else f"{n} sessions were"
        found.append(
            Diagnostic.note(
                codes.STALL,
                origin or where,
                f"at pool `{pool.name}`, {sessions} preempted again without getting past the "
                f"previous preemption while other sessions held the pool (the first, session "
                f"{serial}, at position {_num(position)} at t = {_num(since)}): a livelock "
                "for as long as the others hold what its body needs",
                help="the report counts them under `stuck`",
            )
        )
    return found


def _stall(origin: Span, since: float, why: str, until: str | None) -> Diagnostic:
    """The warning of a step engine stopped since `since` (`why`), to `until`, or while
    the run goes on (None: a notice)."""
    to = "" if until is None else f" to {until}"  # the end of the run, the interruption
    return Diagnostic.warning(
        codes.STALL,
        origin,
        f"{why}, from t = {_num(since)}{to}",
        help="nothing the engine holds moved after that time: its numbers "
        "from then on describe a stopped engine",
    )


def _endless(origin: Span, why: str) -> Diagnostic:
    """The warning of a stage's jobs of infinite work (`endless.warnings`' `why`)."""
    return Diagnostic.warning(
        codes.STALL,
        origin,
        why,
        help="a run whose work is inf never ends: the stage's numbers from then "
        "on describe a stage that no longer serves as written",
    )


def _deadlock(origin: Span, why: str) -> Diagnostic:
    """The warning of sessions that wait at the pools for ever (`deadlock.find`'s `why`)."""
    return Diagnostic.warning(
        codes.DEADLOCK,
        origin,
        why,
        help="the sessions hold what the others wait for: take the pools in "
        "one order in every session, or size them so that one session's "
        "holds fit beside the others'",
    )


def _idle(program: ir.Program, where: Span, horizon: float) -> Diagnostic:
    """The warning of a run to `horizon` that no session arrived in, at its arrival clause
    (`where`, the program's first construct, under `arrive none`)."""
    if program.arrival is None:
        why = "the workload has no arrival process (`arrive none`, the default)"
    else:
        why = f"the first arrival comes after the horizon {_num(horizon)}"
    return Diagnostic.warning(
        codes.IDLE,
        program.arrival.origin if program.arrival is not None else where,
        f"no session arrived: {why}, so nothing ran and the report is empty",
        help="give the workload an arrival process (`arrive poisson(r);`, `arrive "
        "batch(n);`, ...) whose first arrival comes before the horizon",
    )


def _livelock(
    pool: Pool, origin: Span, serial: int, since: float, position: float, n: int
) -> Diagnostic:
    """The warning of the `n` sessions preempted again at `pool` without progress, the first
    session `serial` at `since`, at `position`."""
    sessions = "1 session was" if n == 1 else f"{n} sessions were"
    return Diagnostic.warning(
        codes.STALL,
        origin,
        f"a livelock at pool `{pool.name}`: {sessions} preempted again without getting past "
        f"the previous preemption, with nothing else holding the pool (the first, session "
        f"{serial}, at position {_num(position)} at t = {_num(since)}): a hold that can never "
        "grow to what its body needs is preempted and executed again for ever",
        help="the report counts them under `stuck`: size the pool for the hold's whole body, "
        "or reserve what it will need (`reserve (known)`), which is rejected once above the cap",
    )


def _mutual_livelock(pool: Pool, still: list, n: int, where: Span) -> Diagnostic:
    """The warning of the sessions `still` stuck at `pool` at the end of the run, of the `n`
    preempted again without progress there while others held it (`World.livelocked_at`)."""
    origin, s, since, position = still[0]
    sessions = "1 session was" if n == 1 else f"{n} sessions were"
    m = len(still)
    return Diagnostic.warning(
        codes.STALL,
        origin or where,
        f"a livelock at pool `{pool.name}`: {sessions} preempted again without getting past "
        f"the previous preemption while other sessions held the pool, and {m} of them "
        f"{'was' if m == 1 else 'were'} still short of it when the run ended (the first, "
        f"session {s.serial}, at position {_num(position)} at t = {_num(since)}): holders "
        "whose growths preempt one another can go on taking turns without any of them "
        "finishing",
        help="the report counts them under `stuck`: size the pool so that the holds running "
        "together can reach the end of their bodies, or let the growth preempt holders "
        "that have done less (`preempt lifo` preempts the newest)",
    )


def _rejection(pool: Pool, origin: Span, serial: int, since: float, n: int) -> Diagnostic:
    """The warning of the `n` sessions `pool` rejected, the first session `serial` at `since`."""
    sessions = "1 session" if n == 1 else f"{n} sessions"
    return Diagnostic.warning(
        codes.REJECT,
        origin,
        f"pool `{pool.name}` rejected {sessions}: this hold can never fit it, its units or "
        f"reserve above the cap {_num(pool.cap)}, so each session ended here (the first, "
        f"session {serial}, at t = {_num(since)})",
        help="the report counts them under `rejected`: raise the cap, or keep the hold's "
        "units and reserve within it",
    )


def _drain_end(world: World, program: ir.Program, horizon: float, warmup: float, n: int) -> float:
    origin = _arrival_origin(program)
    if world.arrivals < n:
        if horizon == math.inf:  # the clock passed the float range (`Workload._arrive`)
            raise SimError(
                origin,
                f"the arrivals stop at {world.arrivals} of the {n} requested: the next would "
                f"come after t = {world.engine.now!r}, past the float range",
            )
        raise SimError(
            origin,
            f"horizon {_num(horizon)} reached before the requested arrivals: "
            f"got {world.arrivals}, requested {n}",
        )
    if world.drained_at is None:
        raise SimError(
            origin,
            f"horizon {_num(horizon)} reached before the {n} arrivals drained "
            f"({'1 session' if world.live == 1 else f'{world.live} sessions'} still live)",
        )
    if world.drained_at <= warmup:
        raise SimError(
            origin,
            f"the arrivals drained at {_num(world.drained_at)}, before or at warmup "
            f"{_num(warmup)}: no measurement interval",
        )
    return world.drained_at


def _error(span: Span, message: str) -> Diagnostic:
    return Diagnostic.error(codes.RUNTIME, span, message)


def _arrival_origin(program: ir.Program) -> Span | None:
    return None if program.arrival is None else program.arrival.origin


def _fallback_span(program: ir.Program) -> Span:
    """A span to blame when a failure has no construct of its own: the workload's arrival,
    else the first statement, pool or stage."""
    if program.arrival is not None:
        return program.arrival.origin
    for block in program.blocks:
        for stmt in block:
            return stmt.origin
    for item in (*program.pools, *program.stages):
        return item.origin
    return Span.point("<program>", 0, 1, 1)
