"""The compiled event path: a program's sessions as generated Python source.

`install(world)` turns the session block of a linked program, with the workload's
`init` and `turn` blocks, into the source of a few Python functions, compiles it once
(`compile`, then `exec` in the namespace of the run's `ExprCompiler`, as Jinja compiles a
template) and switches the world to `CompiledWorld`, which runs them. Every scope that a
session can be suspended in, and resumed from, is one generator function: the session
block (`_k_main`) and the body of each `hold` (`_k_body{N}`, entered when the hold is
admitted). Between two blocking points (a run, a hold's admission, a grow, a turn's
wait, a run of zero work behind other ready sessions) a session executes straight-line
Python: its expressions inlined (the code `ExprCompiler` generates, reading attribute
slots as `a[slot]` of a local list), `branch` an `if`, `loop` a `while`, `turn` and the
`init` and `turn` blocks inline, the stage member of a run bound as a constant; a
blocking point is a `yield`, and an event resumes the session's innermost generator (one
C-level frame switch) instead of walking a table of statement closures. Statements that
are rare on the hot path (`grow`, `drop`, `release`, `load`, `choose`, runs of several
stages or at a step engine) call the interpreter's compiled step for that statement,
which does the same thing.

A session's continuation is still a stack of frames (`CFrame`): a generator, and for a
hold's body the `HoldRun` it holds, which is all that `serq.sim.holds` reads of frames
(the innermost hold of a pool, releasing on end, preemption popping the frames of the
aborted scope). A `loop` has no frame of its own: the livelock check of a run of zero
work finds the innermost loop from the line each generator is at (`_LoopLines`).

Everything is done in the interpreter's order with the interpreter's arithmetic (the
same expression code, the same draws from the same streams, the same calls to pools,
stages and the recorder), so both paths give identical reports
(`tests/sim/test_compiled_equal.py`). `serq run --no-compile` and `codegen=False` keep
the interpreter (`serq.sim.statements`, `World.run_session`).
"""

from __future__ import annotations

import linecache
import math
from heapq import heappop, heappush
from itertools import count
from operator import itemgetter
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim import compiled_stages
from serq.sim.core import PROGRESS_EVERY
from serq.sim.errors import SimError, bad_work
from serq.sim.holds import HoldSpec
from serq.sim.recorder import StatsRecorder
from serq.sim.session import AT_STAGE, ENDED, HOLD, PLAIN, RUNNING, Session
from serq.sim.statements import StatementCompiler
from serq.sim.world import SPIN_LIMIT, World, _reschedule

SERIAL = SLOT["serial"]
TURN_NO = SLOT["turn_no"]
NEW, OUT, THINK, FORCED, MORE = (SLOT[n] for n in ("new", "out", "think", "forced", "more"))
LOOP_FOREVER = "the loop runs forever without letting time pass"
_SOURCES = count()  # a file name per compiled program, for tracebacks (linecache)


class CFrame(tuple):
    """One suspended scope of a session, `(gen, kind, hold)`: its generator, its kind
    (`PLAIN`, or `HOLD` for a hold's body) and the hold's `HoldRun`. A tuple, so that the
    generated code builds it with one C call (`_new_frame`)."""

    __slots__ = ()
    gen = property(itemgetter(0))
    kind = property(itemgetter(1))
    hold = property(itemgetter(2))


def _new_frame(gen: Any, kind: int, hold: Any) -> CFrame:
    return tuple.__new__(CFrame, (gen, kind, hold))


class Unsupported(Exception):
    """The program cannot be compiled (a nesting Python's compiler refuses)."""


def install(world: World) -> bool:
    """Compile `world`'s program and switch `world` to the compiled path; False (the world
    left on the interpreter) when Python cannot compile the generated source."""
    world.__class__ = CompiledWorld  # first: the generated code binds its methods
    recorder = world.recorder
    world.live_level = recorder.live_level() if type(recorder) is StatsRecorder else None
    # the straight path has its own stages (`straight.py`); the others are switched
    # before the code is written, which inlines their arrivals
    switched = compiled_stages.specialise(world) if world.straight is None else []
    try:
        namespace, lines = _Codegen(world).build()
    except (Unsupported, SyntaxError, RecursionError, MemoryError, ValueError):
        world.__class__ = World
        for stage, kind in switched:
            stage.__class__ = kind
        return False
    world.loop_lines = lines
    world.new_session = namespace["_k_new_session"]  # called by the workload
    arrive = namespace.get("_k_arrive")
    if arrive is not None:  # an open workload's arrivals, scheduled by `Workload.start`
        world.workload._arrive = arrive
    return True


class CompiledWorld(World):
    """A `World` whose sessions run as generated code (`install`)."""

    loop_lines: dict[int, Any]
    live_level: Any  # the recorder's level of live sessions, or None (not a StatsRecorder)

    def run(self, horizon: float) -> None:
        """As `World.run`, on the compiled event loop (`_loop`)."""
        if self.check_invariants or self.straight is not None:
            super().run(horizon)
            return
        engine = self.engine
        engine.until = horizon  # before the first settle: a span ends by the horizon
        self.workload.start()
        self.settle()
        if not engine.stopped:
            self._loop(horizon)
        if not engine.stopped:
            self._check_stalls(engine.peek() == math.inf)

    def _loop(self, until: float) -> None:
        """`Engine.run` with the settle of a world without pools or step stages inline
        (every ready session resumed, then the changed ps stages rescheduled), and the
        gauges read only when there are some."""
        engine = self.engine
        engine.until = until
        heap = engine._heap
        ready = self.ready
        popleft = ready.popleft
        plain = not self.pools and not self.steps
        settle = self.settle
        pending = self.ps_pending
        end_instant = self.end_instant if self.gauges else None
        progress = self.recorder.progress
        finished = self._finished
        end_session = self.end_session
        mask = PROGRESS_EVERY - 1
        fired = 0
        now = engine.now
        while heap and not engine.stopped:
            time = heap[0][0]
            if time > until:
                break
            if time != now:
                if end_instant is not None:
                    end_instant(now)
                engine.now = now = time
            _, engine.current_seq, action, arg = heappop(heap)
            action(arg)
            if plain:
                while ready:  # fast path: `World.run_session`, inline
                    s = popleft()
                    s.state = RUNNING
                    frames = s.frames
                    if frames:
                        try:
                            for _ in frames[-1][0]:  # its generator
                                break
                            else:  # its innermost scope ended
                                finished(s)
                        except SimError as error:
                            if error.serial is None:
                                error.serial = s.serial
                            raise
                    else:
                        end_session(s)
                if pending:
                    if len(pending) == 1:
                        pending.pop().reschedule()
                    else:
                        _reschedule(pending)
            else:
                settle()
            fired += 1
            if not fired & mask:
                progress(time)
        engine.events += fired
        if end_instant is not None:
            end_instant(engine.now)

    def settle(self) -> None:
        """`World.settle`, with `run_session` inline for the ready sessions."""
        ready = self.ready
        popleft = ready.popleft
        finished = self._finished
        end_session = self.end_session
        pools = self.pools
        retry = self.retry_pools
        while True:
            while ready:  # fast path: `run_session`, inline
                s = popleft()
                s.state = RUNNING
                frames = s.frames
                if frames:
                    try:
                        for _ in frames[-1][0]:  # its generator
                            break
                        else:  # its innermost scope ended
                            finished(s)
                    except SimError as error:
                        if error.serial is None:
                            error.serial = s.serial
                        raise
                else:
                    end_session(s)
            if not pools or not retry():
                break
        self._settled()

    def _finished(self, s: Session) -> None:
        """The innermost scope of `s` ended: close it and go on with the one around it
        (unless the session ended in it)."""
        if s.state == ENDED:
            return
        f = s.frames.pop()
        if f.kind == HOLD:
            self.holds.close(s, f.hold)
        self.run_session(s)

    def run_session(self, s: Session) -> None:
        """Resume `s` until it blocks (or reaches its end)."""
        s.state = RUNNING
        frames = s.frames
        try:
            while frames:
                f = frames[-1]
                for _ in f.gen:  # it yielded: it waits somewhere
                    return
                if s.state == ENDED:  # it executed `end;`
                    return
                frames.pop()
                if f.kind == HOLD:
                    self.holds.close(s, f.hold)
        except SimError as error:
            if error.serial is None:  # the session that was executing
                error.serial = s.serial
            raise
        self.end_session(s)

    def end_session(self, s: Session) -> None:
        """`s` ends: as `World.end_session` (a scan of the frames without a generator)."""
        if s.state == ENDED:
            return
        frames = s.frames
        held = bool(s.leases)
        if not held and frames:
            for f in frames:
                if f.kind == HOLD:
                    held = True
                    break
        if held:
            self.holds.release_all(s)
        frames.clear()
        s.state = ENDED
        self.live -= 1
        self.ended_all += 1
        now = self.engine.now
        if now >= self.warmup:
            self.ended += 1
        live = self.live_level
        if live is None:
            self.recorder.session_ended(now, s.serial)
        else:  # fast path: `StatsRecorder.session_ended`, inline
            if now > live.since:
                live.area += live.value * (now - live.since)
                live.since = now
            live.value -= 1
        if self.closed:
            self.workload.on_end(s)
        if self.limit is not None and self.live == 0 and self.arrivals >= self.limit:
            self.drained_at = now
            self.engine.stop()

    def loop_origin(self, s: Session) -> Any:
        """The origin of the innermost loop `s` executes in, or None: from the line each of
        its generators is at, innermost first."""
        lines = self.loop_lines
        for f in reversed(s.frames):
            frame = f.gen.gi_frame
            if frame is not None:
                origin = lines.get(frame.f_lineno)
                if origin is not None:
                    return origin
        return None


class _Codegen:
    """Writes and compiles the source of one program's session functions."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.program = program = world.program
        self.exprs = world.exprs
        self.ns = world.exprs.ns
        self.session_stream = world.streams["session"]
        self.workload_stream = world.streams["workload"]
        self.statements = StatementCompiler(program, world, world.exprs, self.session_stream)
        self.lines: list[str] = []
        self.loops: dict[int, Any] = {}  # line number -> the innermost loop's origin
        self._loop: Any = None  # the innermost loop around the line being written
        self._temps = count()
        self._bodies: dict[int, str] = {}  # hold body block -> its generator's name
        self._pending: list[tuple[int, str]] = []

    # ------------------------------------------------------------------ output

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)
        if self._loop is not None:
            self.loops[len(self.lines)] = self._loop

    def bind(self, obj: Any, prefix: str = "_k_o") -> str:
        return self.exprs._bind(obj, prefix)

    def expr(self, e: ir.Expr, stream: Any) -> str:
        self.exprs._stream = stream
        code, _ = self.exprs._code(e)
        return code

    def temp(self, stem: str) -> str:
        return f"{stem}{next(self._temps)}"

    # ------------------------------------------------------------------ the program

    def build(self) -> tuple[dict[str, Any], dict[int, Any]]:
        world, program, ns = self.world, self.program, self.ns
        ns.update(
            _k_world=world,
            _k_Session=Session,
            _k_CFrame=CFrame,
            _k_tuple_new=tuple.__new__,
            _k_object_new=object.__new__,
            _k_heappush=heappush,
            _k_heap=world.engine._heap,
            _k_seq=world.engine._seq,
            _k_SimError=SimError,
            _k_bad_work=bad_work,
            _k_ready=world.ready.append,
            _k_zero=world.zero_run,
            _k_end=world.end_session,
            _k_join=world.holds.join,
            _k_observe=world.recorder.observe,
            _k_arrival=world.recorder.arrival,
            _k_turn=world.recorder.turn,
            _k_workload=world.workload,
            _k_live=world.live_level,
            _k_holds=world.holds,
            _k_session_ended=world.recorder.session_ended,
            _k_warmup=world.warmup,
        )
        self.exprs.inline_draws = True
        try:
            self._new_session()
            self._generator("_k_main", program.session)
            while self._pending:
                block, name = self._pending.pop()
                self._generator(name, block)
        finally:
            self.exprs.inline_draws = False
        source = "\n".join(self.lines) + "\n"
        if len(self.lines) > 200_000:
            raise Unsupported("the generated source is too long")
        filename = f"<serq-compiled-{next(_SOURCES)}>"
        code = compile(source, filename, "exec")
        linecache.cache[filename] = (len(source), None, self.lines, filename)
        exec(code, ns)  # noqa: S102 - our own generated code
        return ns, self.loops

    def _new_session(self) -> None:
        """`World.new_session`, with the `init` block inline; for an open workload,
        `Workload._arrive` around it."""
        world, program = self.world, self.program
        self.emit(0, "def _k_new_session():")
        self._session_body()
        self.emit(0, "")
        arrival = program.arrival
        if not isinstance(arrival, ir.Poisson | ir.Renewal):
            return
        workload = world.workload
        self.emit(0, "def _k_arrive(_):")
        self._session_body()
        limit = world.workload.limit
        self.emit(1, "if True:" if limit is None else f"if W.arrivals < {int(limit)}:")
        if isinstance(arrival, ir.Poisson):
            rate = self.bind(workload._rate, "_k_rate")
            gap = f"-_k_log(1.0 - _k_uniform()) / {rate}"
            self.ns.update(_k_log=math.log, _k_uniform=workload._uniform)
        else:
            gap = "_k_workload._next_gap()"
        self.emit(2, f"_k_heappush(_k_heap, (E.now + {gap}, _k_seq(), _k_arrive, None))")
        self.emit(0, "")

    def _session_body(self) -> None:
        world, program = self.world, self.program
        self.emit(1, "W = _k_world")
        self.emit(1, "serial = W.arrivals")
        self.emit(1, "W.arrivals = serial + 1")
        self.emit(1, "W.live += 1")
        self._construct_session(1)
        self.emit(1, f"a[{SERIAL}] = float(serial)")
        if world.workload.trace is not None:
            self.emit(1, "_k_workload.assign(s)")
        if world.live_level is None:
            self.emit(1, "_k_arrival(E.now, serial)")
        else:  # fast path: `StatsRecorder.arrival`, inline
            self.emit(1, "now = E.now")
            self.emit(1, "live = _k_live")
            self.emit(1, "if now > live.since:")
            self.emit(2, "live.area += live.value * (now - live.since)")
            self.emit(2, "live.since = now")
            self.emit(1, "live.value += 1")
        self._plain_block(program.init, 1, self.workload_stream)
        if world.claims is not None:
            self.emit(1, f"{self.bind(world.claims)}.arrived(s)")
        self.emit(1, f"s.frames.append(_k_tuple_new(_k_CFrame, (_k_main(s, a), {PLAIN}, None)))")
        self.emit(1, "_k_ready(s)")

    def _construct_session(self, indent: int) -> None:
        """`s = Session(serial, n_attrs)` and `a = s.attrs`, inline: the object made with
        one C call and every slot set to what `Session.__init__` sets it to (read off a
        session it makes: a number, a bool or None as it is, an empty list or dict new)."""
        n = self.world.n_attrs
        model = Session(0, n)
        self.emit(indent, "s = _k_object_new(_k_Session)")
        self.emit(indent, "s.serial = serial")
        self.emit(indent, f"s.attrs = a = [0.0] * {n + 1}")
        self.emit(indent, f"a[{n}] = s")
        for slot in Session.__slots__:
            if slot in ("serial", "attrs"):
                continue
            value = getattr(model, slot)
            if isinstance(value, list | dict) and not value:
                text = "[]" if isinstance(value, list) else "{}"
            elif value is None or type(value) in (bool, int, float):
                text = repr(value)
            else:
                raise Unsupported(f"Session.{slot} starts as {value!r}")
            self.emit(indent, f"s.{slot} = {text}")

    def _plain_block(self, index: int, indent: int, stream: Any) -> None:
        """The statements of a workload block (`set` and `observe`), inline."""
        on_workload = None
        for stmt in self.program.blocks[index]:
            if isinstance(stmt, ir.Set):
                self.emit(indent, f"a[{stmt.slot}] = {self.expr(stmt.value, stream)}")
            elif isinstance(stmt, ir.Observe):
                self._observe(stmt, indent, stream)
            else:  # not in a workload block today: the interpreter's step
                if on_workload is None:
                    on_workload = StatementCompiler(self.program, self.world, self.exprs, stream)
                self.emit(indent, f"{self.bind(on_workload.statement(stmt))}(s)")

    def _observe(self, stmt: ir.Observe, indent: int, stream: Any) -> None:
        value = self.expr(stmt.value, stream)
        recorder = self.world.recorder
        if type(recorder) is not StatsRecorder or "observe" in vars(recorder):
            # another recorder, or one whose `observe` the claims wrap (`World`)
            self.emit(
                indent, f"_k_observe({stmt.stat}, E.now, s.serial, int(a[{TURN_NO}]), {value})"
            )
            return
        # fast path: `StatsRecorder.observe`, inline (the arguments in the call's order)
        columns = recorder.samples(stmt.stat)
        times, sessions, turns, values = (self.bind(c.append, "_k_put") for c in columns)
        now, v = self.temp("now"), self.temp("v")
        self.emit(indent, f"{now} = E.now")
        self.emit(indent, f"{v} = {value}")
        self.emit(indent, f"if {now} >= {self.bind(recorder.warmup, '_k_since')}:")
        self.emit(indent + 1, f"{times}({now})")
        self.emit(indent + 1, f"{sessions}(s.serial)")
        self.emit(indent + 1, f"{turns}(int(a[{TURN_NO}]))")
        self.emit(indent + 1, f"{values}({v})")

    def _generator(self, name: str, block: int) -> None:
        self.emit(0, f"def {name}(s, a):")
        self.emit(1, "if 0:")
        self.emit(2, "yield")  # a generator, even when nothing in it blocks
        self._has_loops = self._contains_loop(block)
        if self._has_loops:
            self.emit(1, "spins = 0")
        self._block(block, 1)
        if name == "_k_main":  # the end of the session block ends it (`World.run_session`)
            self._end(1, scan=False)
        self.emit(0, "")

    def _contains_loop(self, block: int) -> bool:
        for stmt in self.program.blocks[block]:
            if isinstance(stmt, ir.Loop):
                return True
            if isinstance(stmt, ir.Branch) and (
                self._contains_loop(stmt.then) or self._contains_loop(stmt.otherwise)
            ):
                return True
        return False

    # ------------------------------------------------------------------ statements

    def _yield(self, indent: int) -> None:
        """A blocking point: the session is suspended here until an event resumes it."""
        self.emit(indent, "yield")
        if self._has_loops:  # as `World.run_session` counts the spins of one resumption
            self.emit(indent, "spins = 0")

    def _block(self, index: int, indent: int) -> None:
        stmts = self.program.blocks[index]
        if not stmts:
            self.emit(indent, "pass")
        for stmt in stmts:
            self._statement(stmt, indent)

    def _statement(self, stmt: ir.Stmt, indent: int) -> None:  # noqa: C901 - one case each
        stream = self.session_stream
        if isinstance(stmt, ir.Set):
            self.emit(indent, f"a[{stmt.slot}] = {self.expr(stmt.value, stream)}")
        elif isinstance(stmt, ir.Observe):
            self._observe(stmt, indent, stream)
        elif isinstance(stmt, ir.Turn):
            self._turn(indent)
        elif isinstance(stmt, ir.Run):
            self._run(stmt, indent)
        elif isinstance(stmt, ir.Branch):
            v = self.temp("v")
            self.emit(indent, f"{v} = {self.expr(stmt.test, stream)}")
            self.emit(indent, f"if {v} == 1.0:")
            self._block(stmt.then, indent + 1)
            self.emit(indent, f"elif {v} == 0.0:")
            self._block(stmt.otherwise, indent + 1)
            self.emit(indent, "else:")
            self.emit(indent + 1, f"_k_branch_fails({self.bind(stmt.origin)}, {v})")
            self.ns["_k_branch_fails"] = _branch_fails
        elif isinstance(stmt, ir.Loop):
            outer = self._loop
            self._loop = stmt.origin
            self.emit(indent, "while True:")
            self._block(stmt.body, indent + 1)
            self.emit(indent + 1, "spins += 1")
            self.emit(indent + 1, f"if spins > {SPIN_LIMIT}:")
            origin = self.bind(stmt.origin)
            self.emit(indent + 2, f"raise _k_SimError({origin}, {LOOP_FOREVER!r})")
            self._loop = outer
        elif isinstance(stmt, ir.End):
            self._end(indent, scan=True)
            self.emit(indent, "return")  # the generator finishes (no close when it goes)
        elif isinstance(stmt, ir.Hold):
            self.emit(indent, f"_k_join(s, {self.bind(self._hold_spec(stmt))})")
            self._yield(indent)
        else:  # grow, drop, release, load, choose: the interpreter's step
            step = self.bind(self.statements.statement(stmt))
            if isinstance(stmt, ir.Grow):
                self.emit(indent, f"if not {step}(s):")
                self._yield(indent + 1)
            else:  # these always go on
                self.emit(indent, f"{step}(s)")

    def _end(self, indent: int, scan: bool) -> None:
        """`CompiledWorld.end_session(s)` of the running session, inline; `scan`: its
        frames may hold a hold (else only its outermost frame is left)."""
        world = self.world
        self.emit(indent, "if s.leases:")
        self.emit(indent + 1, "_k_holds.release_all(s)")
        if scan:
            self.emit(indent, "else:")
            self.emit(indent + 1, "for f in s.frames:")
            self.emit(indent + 2, f"if f[1] == {HOLD}:")
            self.emit(indent + 3, "_k_holds.release_all(s)")
            self.emit(indent + 3, "break")
        self.emit(indent, "s.frames.clear()")
        self.emit(indent, f"s.state = {ENDED}")
        self.emit(indent, "W = _k_world")
        self.emit(indent, "W.live -= 1")
        self.emit(indent, "W.ended_all += 1")
        self.emit(indent, "now = E.now")
        self.emit(indent, "if now >= _k_warmup:")
        self.emit(indent + 1, "W.ended += 1")
        if world.live_level is None:
            self.emit(indent, "_k_session_ended(now, s.serial)")
        else:
            self.emit(indent, "live = _k_live")
            self.emit(indent, "if now > live.since:")
            self.emit(indent + 1, "live.area += live.value * (now - live.since)")
            self.emit(indent + 1, "live.since = now")
            self.emit(indent, "live.value -= 1")
        if world.closed:
            self.emit(indent, "_k_workload.on_end(s)")
        if world.limit is not None:
            self.emit(indent, f"if W.live == 0 and W.arrivals >= {int(world.limit)}:")
            self.emit(indent + 1, "W.drained_at = now")
            self.emit(indent + 1, "E.stop()")

    def _turn(self, indent: int) -> None:
        """`Workload.turn` and `World.count_turn`, inline."""
        world = self.world
        self.emit(indent, f"a[{TURN_NO}] += 1.0")
        if world.workload.trace is not None:
            cols, k, end = self.temp("cols"), self.temp("k"), self.temp("end")
            forced = self.temp("forced")
            self.emit(indent, f"{cols} = s.trace_rows")  # (new, out, think, forced) columns
            self.emit(indent, f"if {cols} is not None:")
            self.emit(indent + 1, f"{k} = s.trace_pos")
            self.emit(indent + 1, f"{end} = s.trace_end")
            self.emit(indent + 1, f"if {k} < {end}:")
            self.emit(indent + 2, f"{forced} = {cols}[3]")
            self.emit(indent + 2, f"a[{NEW}] = {cols}[0][{k}]")
            self.emit(indent + 2, f"a[{OUT}] = {cols}[1][{k}]")
            self.emit(indent + 2, f"a[{THINK}] = {cols}[2][{k}]")
            self.emit(indent + 2, f"a[{FORCED}] = 0.0 if {forced} is None else {forced}[{k}]")
            self.emit(indent + 2, f"s.trace_pos = {k} = {k} + 1")
            self.emit(indent + 2, f"a[{MORE}] = 1.0 if {k} < {end} else 0.0")
            self.emit(indent + 1, "else:")
            self.emit(indent + 2, f"a[{MORE}] = 0.0")
        self._plain_block(self.program.turn, indent, self.workload_stream)
        now = self.temp("now")
        self.emit(indent, f"{now} = E.now")
        self.emit(indent, f"if {now} >= _k_warmup:")
        self.emit(indent + 1, "_k_world.turns += 1")
        self.emit(indent, f"_k_turn({now}, s.serial)")

    def _run(self, stmt: ir.Run, indent: int) -> None:
        if len(stmt.stages) > 1 or stmt.mode != "plain" or stmt.growing is not None:
            step = self.bind(self.statements.statement(stmt))  # a flow, or a step engine's
            self.emit(indent, f"if not {step}(s):")
            self._yield(indent + 1)
            return
        ref = stmt.stages[0]
        w = self.temp("w")
        origin = self.bind(stmt.origin)
        self.emit(indent, f"{w} = {self.expr(stmt.work, self.session_stream)}")
        self.emit(indent, f"if not {w} > 0:")  # a run of zero work completes at once
        self.emit(indent + 1, f"if {w} != {w}:")  # NaN; below 0 is no work
        self.emit(indent + 2, f"raise _k_bad_work({origin}, {w})")
        self.emit(indent + 1, "if not _k_zero(s):")
        self._yield(indent + 2)
        self.emit(indent, "else:")
        self.emit(indent + 1, f"s.state = {AT_STAGE}")
        if ref.index is None or isinstance(ref.index, ir.Num):
            stage = self.exprs.resolver(ref)(None)
            if compiled_stages.inlines_arrival(stage):
                for line in compiled_stages.arrive_code(stage, "s", w, self.bind):
                    self.emit(indent + 1, line)
                self._yield(indent + 1)
                return
            member = self.bind(stage, "_k_stage")
        else:
            member, _ = self.exprs._ref(ref, in_statement=True)
        self.emit(indent + 1, f"{member}.arrive(s, {w})")
        self._yield(indent + 1)

    def _hold_spec(self, stmt: ir.Hold) -> HoldSpec:
        """The hold's spec, as `StatementCompiler` builds it, entering its body as a
        generator of its own."""
        expr = self.statements.expr
        resolver = self.exprs.resolver
        lease = None
        if stmt.lease is not None:
            lease = (resolver(stmt.lease.pool), expr(stmt.lease.duration))
        spec = HoldSpec(
            tuple(resolver(p.pool) for p in stmt.pools),
            tuple(expr(p.units) for p in stmt.pools),
            tuple(None if p.reserve is None else expr(p.reserve) for p in stmt.pools),
            None if stmt.reuse is None else expr(stmt.reuse),
            None if stmt.cache is None else expr(stmt.cache),
            lease,
            stmt.origin,
        )
        spec.part_origins = tuple(p.origin for p in stmt.pools)
        name = self._bodies.get(stmt.body)
        if name is None:
            name = self._bodies[stmt.body] = f"_k_body{stmt.body}"
            self._pending.append((stmt.body, name))
        ns = self.ns

        def enter(s: Session, run: Any) -> CFrame:
            return _new_frame(ns[name](s, s.attrs), HOLD, run)

        spec.enter = enter
        return spec


def _branch_fails(origin: Any, v: float) -> None:
    from serq.sim.exprs import arith_repr

    raise SimError(
        origin,
        f"the branch guard is {arith_repr(v)}, not 0 or 1; a draw is written `branch with (p)`",
    )
