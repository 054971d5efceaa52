"""The compiled event path: a program's run as generated Python source.

`install(world)` writes one Python function per program, `_k_build`, compiles it once
(`compile`, then `exec` in the namespace of the run's `ExprCompiler`, as Jinja compiles a
template) and switches the world to `CompiledWorld`, which runs what it returns. Inside
`_k_build` the hot state of the run is in local variables that its nested functions
share (closure cells): the clock `now` and the level of live sessions. It defines

- the event loop `_k_loop(until)`: it pops `(time, seq, kind, payload)` events and
  dispatches by `kind` without a call: a fifo, delay or ps completion and an open
  workload's arrival are written inline (`serq.sim.compiled_stages` has their
  templates); any other event is an action of the rest of the simulator (a step engine's
  iteration, a flow's completion, a lease's expiry), called. After each event the loop
  settles as `World.settle` does: it runs the ready sessions, retries the pools, starts
  the step engines' plans and reschedules the changed ps stages, inline where the
  program has nothing else to do;
- one generator function per scope a session can be suspended in and resumed from: the
  session block (`_k_main`) and the body of each `hold` (`_k_body{N}`). Between two
  blocking points (a run, a hold's admission, a grow, a run of zero work behind other
  ready sessions) a session executes straight-line Python: expressions inline (the code
  `ExprCompiler` generates, attributes as `a[slot]` of a local list), `branch` an `if`,
  `loop` a `while`, `turn` and the `init` and `turn` blocks inline, a run at a fifo,
  delay or ps stage the stage's arrival inline. A blocking point is a `yield`; an event
  resumes the session's innermost generator. A `release` or `grow` of an inline hold's
  part is written inline too (`serq.sim.compiled_holds`). Statements that are rare on
  the hot path (other `grow`s and `release`s, `drop`, `load`, a `choose` of a computed
  count, runs of several stages or at a step engine) call the interpreter's compiled
  step for that statement;
- `_k_new_session` and `_k_end`, which the rest of the simulator calls as the world's
  `new_session` and `end_session` (a closed population's replacement, a rejection).

What a program does not use costs nothing: a program without pools, step engines,
flows, spills, claims or traces ("plain") gives its sessions only the slots its code
reads, tracks no session state, and settles without calls; stages keep the jobs in
service only when a preemption or `work(s)` can read them.

Everything is done in the interpreter's order with the interpreter's arithmetic (the
same expression code, the same draws from the same streams, the same sequence numbers,
the same level integrals), so both paths give identical reports
(`tests/sim/test_compiled_equal.py`). `serq run --no-compile` and `codegen=False` keep
the interpreter (`serq.sim.statements`, `World.run_session`).
"""

from __future__ import annotations

import hashlib
import linecache
import math
import re
from collections import OrderedDict
from dataclasses import replace
from heapq import heappop, heappush
from itertools import count, repeat
from operator import itemgetter, length_hint
from types import CodeType
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.ir.expr import contains
from serq.sim import compiled_holds as ch
from serq.sim import compiled_stages as cs
from serq.sim import deadlock
from serq.sim.compiled_loop import LoopCode
from serq.sim.core import LATEST, ClockStops, clock_stops
from serq.sim.errors import SimError, bad_work
from serq.sim.exprs import keys_less
from serq.sim.flows import FlowStage
from serq.sim.holds import (
    HoldRun,
    HoldSpec,
    _bad_reserve,
    _bad_units,
    bad_growth,
    grow_outside,
    never_grows,
)
from serq.sim.pools import GrowWait, HoldPart
from serq.sim.recorder import StatsRecorder
from serq.sim.sample_buffers import BLOCK, GaugePoints, Samples
from serq.sim.session import AT_STAGE, ENDED, HOLD, PLAIN, QUEUED, RUNNING, Session
from serq.sim.stages import DelayStage, FifoStage, PsStage
from serq.sim.statements import StatementCompiler
from serq.sim.world import LOOP_WITHOUT_TIME, SPIN_LIMIT, World, _index

SERIAL = SLOT["serial"]
TURN_NO = SLOT["turn_no"]
NEW, OUT, THINK, FORCED, MORE = (SLOT[n] for n in ("new", "out", "think", "forced", "more"))
UNROLL = 16  # the candidates of a constant `choose` written one by one, at most
# the code objects of the latest sources compiled, by the source's digest: a program run
# again (a sweep's seeds, a notebook) writes the same source (its names are numbered in
# the order it binds them), so it is compiled once; its lines stay in linecache under
# that name, for tracebacks
_CODES: OrderedDict[str, CodeType] = OrderedDict()
_CODES_KEPT = 32
# the slots a plain program's session is made with (the rest it never reads)
_PLAIN_SLOTS = ("gen", "state")
_TRACE_SLOTS = ("trace_rows", "trace_pos", "trace_end")  # where its trace session is
_TOKEN_SLOTS = ("last_token", "token_stage", "decoded")  # its last token, for the latencies


class CFrame(tuple):
    """One suspended scope of a session, `(gen, kind, hold)`: its generator, its kind
    (`PLAIN`, or `HOLD` for a hold's body) and the hold's `HoldRun`. A tuple, so that the
    generated code builds it with one C call."""

    __slots__ = ()
    gen = property(itemgetter(0))
    kind = property(itemgetter(1))
    hold = property(itemgetter(2))


def _new_frame(gen: Any, kind: int, hold: Any) -> CFrame:
    return tuple.__new__(CFrame, (gen, kind, hold))


class Unsupported(Exception):
    """The program cannot be compiled (a nesting Python's compiler refuses)."""


def install(world: World, straight: bool = True) -> bool:
    """Compile `world`'s program and switch `world` to the compiled path; False (the world
    left on the interpreter) when the recorder is not a `StatsRecorder` (whose updates
    the generated code makes inline), when `straight` lets `straight.py`'s loop take the
    program, or when Python cannot compile the generated source. The source is kept as
    `world.source` (`serq run --emit-python`)."""
    if type(world.recorder) is not StatsRecorder:
        return False
    if straight and world.straight is not None and not world.check_invariants:
        return False  # `straight.py`'s loop takes it (it is still faster on its shapes)
    program = world.program
    options = cs.Options(
        tracked=_preemptible(world) or cs.reads_work(program),
        measuring=cs.reads_estimates(program),
        warmup=world.recorder.warmup,
        spills=any(p.spill is not None for p in program.pools),
    )
    switched = cs.specialise(world, options)
    world.__class__ = CompiledWorld  # before the code is written: it binds world methods
    try:
        codegen = _Codegen(world, options)
        namespace, lines = codegen.build()
    except (Unsupported, SyntaxError, RecursionError, MemoryError, ValueError):
        world.__class__ = World
        for stage, kind in switched:
            stage.__class__ = kind
        return False
    world.source = "\n".join(lines_of(namespace)) + "\n"
    world.switched = switched
    world.samples = namespace["_k_samples"]
    world.gauge_points = namespace["_k_gauge_points"]
    world.loop_lines = lines
    world.held_lines = codegen.held_lines
    world.waits_in_inline_holds = codegen.nested_inline
    made = namespace["_k_build"]()
    for name, cell in namespace.get("_k_enter_cells", ()):
        cell.append(made["bodies"][name])  # a hold's body: its generator function
    world.new_session = made["new_session"]  # the rest of the simulator calls these
    world.end_session = made["end"]
    world.retry_pools = made["retry"]
    if made["end_instant"] is not None:  # a step engine's span reads the gauges too
        world.end_instant = made["end_instant"]
    world._k_loop = made["loop"]
    world._k_settle = made["settle"]
    world._k_live = made["live"]
    world._k_levels = made["levels"]
    return True


def _code_of(source: str, lines: list[str]) -> CodeType:
    """`source` compiled (or the code object compiled of the same source before)."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    code = _CODES.get(digest)
    if code is not None:
        _CODES.move_to_end(digest)
        return code
    filename = f"<serq-compiled-{digest}>"
    code = compile(source, filename, "exec")
    _CODES[digest] = code
    linecache.cache[filename] = (len(source), None, lines, filename)
    if len(_CODES) > _CODES_KEPT:
        old, _ = _CODES.popitem(last=False)
        linecache.cache.pop(f"<serq-compiled-{old}>", None)
    return code


def lines_of(namespace: dict[str, Any]) -> list[str]:
    """The generated source's lines, from the namespace it was compiled in."""
    return namespace["_k_lines"]


def _preemptible(world: World) -> bool:
    """Whether a session of `world` can be taken away from a stage: a pool that preempts
    (a `grow` or a step engine's growth that does not fit aborts a holder's scope)."""
    return any(p.lifo for p in world.pools)


class CompiledWorld(World):
    """A `World` whose run is the generated code of `install`."""

    loop_lines: dict[int, Any]
    held_lines: dict[int, tuple[tuple[str, tuple[Any, ...], tuple[str | None, ...]], ...]]
    source: str
    switched: list[tuple[Any, type]]
    samples: Samples
    gauge_points: list[GaugePoints]
    _k_loop: Any
    _k_settle: Any
    _k_live: Any
    _k_levels: Any

    def run(self, horizon: float) -> None:
        """As `World.run`, on the generated event loop."""
        engine = self.engine
        engine.until = horizon  # before the first settle: a span ends by the horizon
        try:
            self.workload.start(cs.ARRIVE)
            self._k_settle()
            if self.check_invariants:
                self.check()
            if not engine.stopped:
                self._k_loop(min(horizon, LATEST))  # an event at inf never fires
            if not engine.stopped:
                self._check_end()
        except ClockStops as error:
            self.place_clock_stop(error)
            raise
        finally:
            self._write_back()

    def _write_back(self) -> None:
        """Hand the recorder what the generated code kept: the stages' levels and sums,
        the level of live sessions."""
        cs.write_back(self, self.switched)
        if not self.steps:  # the generated code kept the pools' levels
            ch.write_back(self, self._k_levels())
        self.samples.flush()
        for points in self.gauge_points:
            points.flush(keep=0)
        live = self.recorder.live_level()
        live.since, live.area, live.value = self._k_live()

    def settle(self) -> None:
        """`World.settle` (the generated one)."""
        self._k_settle()

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

    def held_inline(self, s: Session) -> list[tuple[Any, float]] | None:
        """What the waiting session `s` holds in inline holds (`World.held_inline`): the
        units of the inline holds around the `yield` each of its generators is at, read
        from the generator's locals (but a part a `release` gave back); None when a
        generator is at no known `yield`."""
        held = []
        for gen in _generators(s):
            frame = gen.gi_frame
            if frame is None:
                return None
            around = self.held_lines.get(frame.f_lineno)
            if around is None:
                return None
            if around:
                local = frame.f_locals
                try:
                    for units, pools, flags in around:
                        for pool, u, flag in zip(pools, local[units], flags, strict=True):
                            if flag is not None and local[flag]:
                                continue  # released
                            held.append((local[pool] if isinstance(pool, str) else pool, u))
                except (KeyError, TypeError, ValueError):  # not as written: no proof
                    return None
        return held

    def loop_origin(self, s: Session) -> Any:
        """The origin of the innermost loop `s` executes in, or None: from the line each of
        its generators is at, innermost first."""
        lines = self.loop_lines
        for gen in reversed(_generators(s)):
            frame = gen.gi_frame
            if frame is not None:
                origin = lines.get(frame.f_lineno)
                if origin is not None:
                    return origin
        return None


def _generators(s: Session) -> list[Any]:
    """The generators `s` is suspended in, outermost first: a plain program's one (`gen`),
    else its frames'."""
    if s.gen is not None:
        return [s.gen]
    return [f[0] for f in s.frames]


class _Codegen(LoopCode):
    """Writes and compiles the source of one program's `_k_build`."""

    def __init__(self, world: World, options: cs.Options) -> None:
        self.world = world
        self.options = options
        self.program = program = world.program
        self.exprs = world.exprs
        self.ns = world.exprs.ns
        self.session_stream = world.streams["session"]
        self.workload_stream = world.streams["workload"]
        self.statements = StatementCompiler(program, world, world.exprs, self.session_stream)
        self.inline = ch.inline_holds(program)  # the holds written inline
        # the inline holds around: the name of their units (a tuple), their shape
        # the inline holds around: units local, shape, the locals of the parts a `release`
        # may give back early (by part), their members (an index, or a computed one's local)
        self._held: list[tuple[str, ch.Shape, dict[int, str], list[int | str]]] = []
        # line number of each `yield` -> the inline holds around it: the name of their
        # units and per pool the `Pool` or the name of the local that holds it
        self.held_lines: dict[
            int, tuple[tuple[str, tuple[Any, ...], tuple[str | None, ...]], ...]
        ] = {}
        # an inline hold inside another, or a `grow` inside one: a session may wait there
        # holding units that only the locals of the session code count (else every wait
        # is outside inline holds: a hold not written inline is never inside one)
        self.nested_inline = False
        self.caching = ch.caching_pools(program)  # pools whose cache can hold anything
        self.serial_read = SERIAL in cs.slots_read(program)
        # whether a pool may queue a hold at its front (only a preemption requeues one
        # there) and may have growers waiting (a `grow`, a run `growing`, an engine)
        self.preempts = _preemptible(world)
        self.grows = bool(world.steps) or any(
            isinstance(stmt, ir.Grow) or (isinstance(stmt, ir.Run) and stmt.growing is not None)
            for block in program.blocks
            for stmt in block
        )
        self.samples = Samples(world.recorder)
        # the warm-up's end as the code compares the clock with it: a number, else its name
        warmup = float(world.warmup)
        self.warmup = repr(warmup) if math.isfinite(warmup) else "_k_warmup"
        self.gauge_points: list[GaugePoints] = []
        # whether a session's `turn_no` can be other than 0 (else an observation's turn is)
        self.turns = _sets_turn(program)
        self.lines: list[str] = []
        self.loops: dict[int, Any] = {}  # line number -> the innermost loop's origin
        self._loop: Any = None  # the innermost loop around the line being written
        self._temps = count()
        self._bodies: dict[int, str] = {}  # hold body block -> its generator's name
        self._pending: list[tuple[int, str]] = []
        holds = [s for b in program.blocks for s in b if isinstance(s, ir.Hold)]
        self.complex_holds = any(id(h) not in self.inline for h in holds)
        self.leases = any(h.lease is not None for h in holds)
        self.traced = world.workload.trace is not None
        # what the rest of the simulator may read of a session: its whole `Session`
        self.objects = bool(
            world.steps
            or world.claims is not None
            or self.complex_holds
            or ch.steps_read_frames(program, self.inline)  # `innermost` reads the frames
            # an eviction key's or a spill's context reads the state of an entry's owner
            # (`waiting`); an LRU cache without a spill only keys its entries by the session
            or any(not isinstance(program.pools[i].evict, ir.Lru) for i in self.caching)
            or any(p.spill is not None for p in program.pools)
            or any(type(s) not in (FifoStage, DelayStage, PsStage) and not cs.is_compiled(s)
                   for s in world.stages)
        )
        # the slot of a session's attributes that holds the session, for `cachedin`; None
        # when nothing reads it (a session is then in no cycle and freed as it ends);
        # `owners_read_self`: an eviction key or a spill may read it of an ended
        # session's entry (they read the attributes of an entry's owner)
        self.self_slot = world.n_attrs if "cachedin" in cs.observed(program) else None
        self.owners_read_self = any(
            "cachedin" in cs.observed(p.evict)
            or (p.spill is not None and "cachedin" in cs.observed(p.spill))
            for p in program.pools
        )
        # a program with nothing of the rest of the simulator: plain sessions, plain settle
        self.plain = not (world.pools or self.objects)
        # the slots a session is made with: all, or those the generated code reads
        # (a trace's, which `Workload.assign` sets and the generated `turn` reads, too)
        self.slots = None if self.objects else _PLAIN_SLOTS + _TRACE_SLOTS * self.traced
        # the compiled ps stages: their completions are written into the event loop
        self.ps_stages = [
            s for s in world.stages if cs.is_compiled(s) and type(s).__mro__[1] is PsStage
        ]
        self.ps = bool(self.ps_stages)
        # a flow network joins the pending ps stages too
        self.others_pending = any(isinstance(s, FlowStage) for s in world.stages)
        # one ps stage and nothing else that can be pending: the generated code marks the
        # stage changed by its `dirty` flag alone, and the settle looks at that flag (the
        # stage classes' methods, written for any program, still add it to the pending
        # list too, which the settle then clears)
        self.ps_flag = len(self.ps_stages) == 1 and not self.others_pending
        # only a ps stage or a flow is ever pending (`World.ps_pending`)
        self.any_pending = any(isinstance(s, PsStage | FlowStage) for s in world.stages)
        # the run's levels kept in closure cells of `_k_build`: the live sessions', and the
        # pools' where the generated settle integrates them (a program without step engines)
        self.pool_cells = [] if world.steps else [ch.level_cells(p.index) for p in world.pools]
        # (a function names only the cells it writes: a call copies each it names)
        self.cells = ["live_since", "live_area", "live_value"]
        for cells in self.pool_cells:
            self.cells += cells
        # the next arrival kept out of the heap (`_loop_function`): where the generated loop
        # schedules the arrivals and no step engine reads the heap
        self.split_arrival = (
            isinstance(program.arrival, ir.Poisson | ir.Renewal) and not world.steps
        )

    # ------------------------------------------------------------------ output

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)
        if self._loop is not None:
            self.loops[len(self.lines)] = self._loop

    def emit_all(self, indent: int, lines: list[str]) -> None:
        for line in lines:
            self.emit(indent, line)

    def bind(self, obj: Any, prefix: str = "_k_o") -> str:
        return self.exprs.bind(obj, prefix)

    def expr(self, e: ir.Expr, stream: Any) -> str:
        """The inline code of `e` (drawing from `stream`), reading the clock's local."""
        exprs = self.exprs
        exprs._stream = stream
        exprs.now_code = "now"
        try:
            code, _ = exprs._code(e)
        finally:
            exprs.now_code = "E.now"  # a function compiled on its own reads the engine's
        return code

    def temp(self, stem: str) -> str:
        return f"{stem}{next(self._temps)}"

    # ------------------------------------------------------------------ the program

    def build(self) -> tuple[dict[str, Any], dict[int, Any]]:
        world, program, ns = self.world, self.program, self.ns
        engine = world.engine
        ns.update(
            _k_world=world,
            _k_Session=Session,
            _k_CFrame=CFrame,
            _k_tuple_new=tuple.__new__,
            _k_object_new=object.__new__,
            _k_push=heappush,
            _k_pop=heappop,
            _k_heap=engine._heap,
            _k_seq=engine._seq,
            _k_INF=math.inf,
            _k_SimError=SimError,
            _k_bad_work=bad_work,
            _k_ready=world.ready,
            _k_zero=world.zero_run,
            _k_join=world.holds.join,
            _k_turn=world.recorder.turn,
            _k_workload=world.workload,
            _k_live_level=world.recorder.live_level(),
            _k_holds=world.holds,
            _k_warmup=float(world.warmup),
            _k_pending=world.ps_pending,
            _k_spans=world.spans,
            _k_progress=world.recorder.progress,
            _k_index=_index,
            _k_HoldRun=HoldRun,
            _k_bad_units=_bad_units,
            _k_bad_reserve=_bad_reserve,
            _k_reject=_rejecter(world),
            _k_bad_reuse=ch.bad_reuse,
            _k_bad_cache=ch.bad_cache,
            _k_HoldPart=HoldPart,
            _k_GrowWait=GrowWait,
            _k_grow_outside=grow_outside,
            _k_bad_growth=bad_growth,
            _k_never_grows=never_grows,
            _k_clock_stops=clock_stops,
            _k_recorder=world.recorder,
            _k_min=min,
            _k_repeat=repeat,
            _k_length_hint=length_hint,
            _k_take_arrival=_take_arrival,
        )
        self.exprs.inline_draws = True
        try:
            self.emit(0, "def _k_build():")
            self.emit(1, "now = E.now")
            self.emit(1, "live = _k_live_level")
            self.emit(1, "live_since, live_area, live_value = live.since, live.area, live.value")
            self.emit(1, "admit_at, admit_n = -_k_INF, 0")  # `World.count_admission`
            for cells in self.pool_cells:  # from the warm-up, at 0
                self.emit(1, f"{cells[0]} = {float(world.recorder.warmup)!r}")
                self.emit(1, f"{' = '.join(cells[1:])} = 0.0")
            self.emit(0, "")
            self._new_session()
            self._end_function()
            self._generator("_k_main", program.session)
            while self._pending:
                block, name = self._pending.pop()
                self._generator(name, block)
            self._retry_function()
            if world.gauges:
                self._gauges_function()
            else:
                self.emit(1, "_k_end_instant = None")
            self._settle_function()
            self._loop_function()
            self.emit(1, "def _k_live():")
            self.emit(2, "return live_since, live_area, live_value")
            self.emit(0, "")
            self.emit(1, "def _k_levels():")
            self.emit(2, f"return [{', '.join('(' + ', '.join(c) + ')' for c in self.pool_cells)}]")
            self.emit(0, "")
            bodies = ", ".join(f"{name!r}: {name}" for name in self._bodies.values())
            self.emit(
                1,
                "return {'new_session': _k_new_session, 'end': _k_end, 'loop': _k_loop, "
                "'settle': _k_settle_all, 'live': _k_live, 'levels': _k_levels, "
                "'retry': _k_retry, "
                "'end_instant': _k_end_instant, "
                f"'bodies': {{{bodies}}}}}",
            )
        finally:
            self.exprs.inline_draws = False
        ns["_k_samples"] = self.samples
        ns["_k_lines"] = self.lines
        ns["_k_gauge_points"] = self.gauge_points
        source = "\n".join(self.lines) + "\n"
        if len(self.lines) > 200_000:
            raise Unsupported("the generated source is too long")
        exec(_code_of(source, self.lines), ns)  # noqa: S102 - our own generated code
        return ns, self.loops

    # ------------------------------------------------------------------ sessions

    def _new_session(self) -> None:
        """`World.new_session`: a session arrives now and is ready."""
        self.emit(1, "def _k_new_session():")
        self.emit(2, "nonlocal live_since, live_area, live_value")
        self._session_body(2)
        self.emit(2, "_k_ready.append(s)")
        self.emit(0, "")

    def _session_body(self, indent: int) -> None:
        """A new session `s` (attributes `a`) made, counted and given its `init` block and
        its main generator (`World.new_session` but for making it ready)."""
        world, program = self.world, self.program
        self.emit(indent, "W = _k_world")
        self.emit(indent, "serial = W.arrivals")
        self.emit(indent, "W.arrivals = serial + 1")
        self.emit(indent, "W.live += 1")
        self._construct_session(indent)
        if self.serial_read:  # else nothing reads the attribute
            self.emit(indent, f"a[{SERIAL}] = float(serial)")
        if self.traced:
            self._assign_trace(indent)
        # `StatsRecorder.arrival`, inline
        self.emit(indent, "if now > live_since:")
        self.emit(indent + 1, "live_area += live_value * (now - live_since)")
        self.emit(indent + 1, "live_since = now")
        self.emit(indent, "live_value += 1.0")
        self._plain_block(program.init, indent, self.workload_stream)
        if world.claims is not None and world.claims.givens:  # each `given` reads it
            self.emit(indent, f"{self.bind(world.claims)}.arrived(s)")
        if not self.objects:  # nothing but the generated code resumes it: its generator,
            self.emit(indent, "s.gen = _k_main(s, a)")  # in place of a list of frames
        else:
            frame = f"_k_tuple_new(_k_CFrame, (_k_main(s, a), {PLAIN}, None))"
            self.emit(indent, f"s.frames = [{frame}]")

    def _assign_trace(self, indent: int) -> None:
        """`Workload.assign(s)`, inline: the trace session of the new session `s` (the
        one of its serial, cycling, when `ordered`, else one drawn from the workload's
        stream)."""
        workload = self.world.workload
        trace = workload.trace
        n = len(trace)
        i = self.temp("row")
        if workload.ordered:
            self.emit(indent, f"{i} = serial % {n}")
        else:
            draw = self.bind(workload.stream.random, "_k_pick")
            self.emit(indent, f"{i} = int({draw}() * {n})")
        starts = self.bind(trace.starts, "_k_starts")
        self.emit(indent, f"s.trace_rows = {self.bind(trace.columns, '_k_rows')}")
        self.emit(indent, f"s.trace_pos = {starts}[{i}]")
        self.emit(indent, f"s.trace_end = {starts}[{i} + 1]")

    def _construct_session(self, indent: int) -> None:
        """`s = Session(serial, n_attrs)` and `a = s.attrs`, inline: the object made with
        one C call and its slots set to what `Session.__init__` sets them to (read off a
        session it makes: a number, a bool or None as it is, an empty list or dict new);
        a plain program's session gets only the slots its code reads."""
        n = self.world.n_attrs
        model = Session(0, n)
        self.emit(indent, "s = _k_object_new(_k_Session)")
        self.emit(indent, "s.serial = serial")
        # a display of constants, which Python copies from one constant tuple (40 against
        # 66 ns for `[0.0] * 11`), up to a size where the source would grow long
        zeros = ", ".join(["0.0"] * (n + 1)) if n < 64 else None
        self.emit(indent, f"s.attrs = a = [{zeros}]" if zeros else f"s.attrs = a = [0.0] * {n + 1}")
        if self.self_slot is not None:
            # `cachedin` reads the session there: a cycle, broken where the session ends
            # unless an eviction key may read it later (`_end`)
            self.emit(indent, f"a[{n}] = s")
        # else nothing reads the slot (it stays 0.0), and an ended session is in no cycle
        for slot in Session.__slots__:
            if slot in ("serial", "attrs", "frames") or (self.traced and slot in _TRACE_SLOTS):
                continue  # (a trace's are set next, `_assign_trace`)
            if slot == "gen" and not self.objects:
                continue  # (set to its main generator last, `_new_session`)
            if self.slots is not None and slot not in self.slots:
                continue
            if slot in _TOKEN_SLOTS and not self.world.steps:
                continue  # only a step engine reads them (`StepStage._end`)
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
        # `StatsRecorder.observe`, inline (the arguments in the call's order), into lists
        # that `Samples` moves to the recorder's arrays a block at a time
        buffer = self.samples.buffer(stmt.stat)
        put = self.bind(buffer.items.extend, "_k_put")
        v = self.temp("v")
        self.emit(indent, f"{v} = {value}")
        claims = self.world.claims
        if claims is not None and stmt.stat in claims.samples:
            # `Claims.observed`, inline: a claim's aggregate keeps every sample, the
            # warm-up's too (the world wraps `observe` with it for the other paths)
            self.emit(indent, f"{self.bind(claims.samples[stmt.stat].append, '_k_claimed')}({v})")
        self.emit(indent, f"if now >= {float(recorder.warmup)!r}:")
        turn = f"int(a[{TURN_NO}])" if self.turns else "0"
        self.emit(indent + 1, f"{put}((now, s.serial, {turn}, {v}))")
        self.emit(indent + 1, f"if len({self.bind(buffer.items, '_k_buf')}) >= {4 * BLOCK}:")
        self.emit(indent + 2, f"{self.bind(buffer.flush, '_k_flush')}()")

    def _generator(self, name: str, block: int) -> None:
        self.emit(1, f"def {name}(s, a):")
        admits = ", admit_at, admit_n" if self.inline else ""  # `_admit_at_once` counts
        self.emit(2, f"nonlocal live_since, live_area, live_value{admits}")
        self.emit(2, "if 0:")
        self.emit(3, "yield")  # a generator, even when nothing in it blocks
        self._has_loops = self._contains_loop(block)
        if self._has_loops:
            self.emit(2, "spins = 0")
        self._block(block, 2)
        if name == "_k_main":  # the end of the session block ends it (`World.run_session`)
            self._end(2, scan=False)
        self.emit(0, "")

    def _contains_loop(self, block: int) -> bool:
        stack = [block]
        while stack:
            for stmt in self.program.blocks[stack.pop()]:
                if isinstance(stmt, ir.Loop):
                    return True
                if isinstance(stmt, ir.Branch):
                    stack += [stmt.then, stmt.otherwise]
                elif isinstance(stmt, ir.Hold) and id(stmt) in self.inline:
                    stack.append(stmt.body)  # the same generator
        return False

    # ------------------------------------------------------------------ statements

    def _yield(self, indent: int) -> None:
        """A blocking point: the session is suspended here until an event resumes it."""
        self.emit(indent, "yield")
        ns = self.ns
        self.held_lines[len(self.lines)] = tuple(
            (
                units,
                tuple(ns.get(name, name) for name in shape.pools),
                tuple(released.get(i) for i in range(len(shape.pools))),
            )
            for units, shape, released, _ in self._held
        )
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
        origin = stmt.origin
        if origin is not None:  # the statement's place in the program, for the reader
            self.emit(indent, f"# {origin.line}: {type(stmt).__name__.lower()}")
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
            self.emit(indent + 2, f"raise _k_SimError({origin}, {LOOP_WITHOUT_TIME!r})")
            self._loop = outer
        elif isinstance(stmt, ir.End):
            self._release_inline(indent)
            self._end(indent, scan=True)
            self.emit(indent, "return")  # the generator finishes (no close when it goes)
        elif isinstance(stmt, ir.Choose) and _whole_count(stmt.count):
            self._choose(stmt, indent)
        elif isinstance(stmt, ir.Hold) and id(stmt) in self.inline:
            self._inline_hold(stmt, indent)
        elif isinstance(stmt, ir.Hold):
            self.emit(indent, f"_k_join(s, {self.bind(self._hold_spec(stmt))})")
            self._yield(indent)
        elif isinstance(stmt, ir.Release) and self._release(stmt, indent):
            pass
        elif isinstance(stmt, ir.Grow) and self._grow(stmt, indent):
            pass
        else:  # grow, drop, release, load, choose: the interpreter's step
            step = self.bind(self.statements.statement(stmt))
            if isinstance(stmt, ir.Grow):
                if self._held:  # it may wait inside an inline hold
                    self.nested_inline = True
                self.emit(indent, f"if not {step}(s):")
                self._yield(indent + 1)
            else:  # these always go on
                self.emit(indent, f"{step}(s)")

    def _end(self, indent: int, scan: bool, release: bool = True) -> None:
        """`World.end_session(s)` of the running session, inline; `scan`: its frames may
        hold a hold (else only its outermost frame is left); `release`: what it holds is
        not released yet."""
        world = self.world
        if release and self.leases:
            self.emit(indent, "if s.leases:")
            self.emit(indent + 1, "_k_holds.release_all(s)")
            if scan and self.complex_holds:
                self.emit(indent, "else:")
                indent += 1
        if release and scan and self.complex_holds:
            self.emit(indent, "for f in s.frames:")
            self.emit(indent + 1, f"if f[1] == {HOLD}:")
            self.emit(indent + 2, "_k_holds.release_all(s)")
            self.emit(indent + 2, "break")
            if self.leases:
                indent -= 1
        # (a plain program's generator is its one frame: dropped, no cycle through it)
        self.emit(indent, "s.frames.clear()" if self.objects else "s.gen = None")
        if self.self_slot is not None and not self.owners_read_self:
            self.emit(indent, f"s.attrs[{self.self_slot}] = None")  # no cycle left to collect
        if self.objects:
            self.emit(indent, f"s.state = {ENDED}")
        self.emit(indent, "W = _k_world")
        self.emit(indent, "W.live -= 1")
        if world.check_invariants:  # only `World.check` reads it
            self.emit(indent, "W.ended_all += 1")
        self.emit(indent, f"if now >= {self.warmup}:")
        self.emit(indent + 1, "W.ended += 1")
        # `StatsRecorder.session_ended`, inline
        self.emit(indent, "if now > live_since:")
        self.emit(indent + 1, "live_area += live_value * (now - live_since)")
        self.emit(indent + 1, "live_since = now")
        self.emit(indent, "live_value -= 1.0")
        if world.closed:
            self.emit(indent, "_k_workload.on_end(s)")
        if world.limit is not None:
            self.emit(indent, f"if W.live == 0 and W.arrivals >= {int(world.limit)}:")
            self.emit(indent + 1, "W.drained_at = now")
            self.emit(indent + 1, "E.stop()")

    def _end_function(self) -> None:
        """`_k_end(s)`: `World.end_session`, for the rest of the simulator's calls."""
        self.emit(1, "def _k_end(s):")
        self.emit(2, "nonlocal live_since, live_area, live_value")
        self.emit(2, f"if s.state == {ENDED}:")
        self.emit(3, "return")
        if self.leases or self.complex_holds:
            self.emit(2, f"if s.leases or any(f[1] == {HOLD} for f in s.frames):")
            self.emit(3, "_k_holds.release_all(s)")
        self._end(2, scan=False, release=False)
        self.emit(0, "")

    def _turn(self, indent: int) -> None:
        """`Workload.turn` and `World.count_turn`, inline."""
        world = self.world
        self.emit(indent, f"a[{TURN_NO}] += 1.0")
        if world.steps:  # a new request: its first token is no inter-token latency
            self.emit(indent, "s.last_token = None")
            self.emit(indent, "s.decoded = False")
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
        self.emit(indent, f"if now >= {self.warmup}:")
        self.emit(indent + 1, "_k_world.turns += 1")
        recorder = world.recorder
        if "turn" in vars(recorder) or type(recorder).turn is not StatsRecorder.turn:
            self.emit(indent, "_k_turn(now, s.serial)")  # else a no-op: `StatsRecorder.turn`

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
        self.emit(indent, f"if not {w} > 0.0:")  # a run of zero work completes at once
        self.emit(indent + 1, f"if {w} != {w}:")  # NaN; below 0 is no work
        self.emit(indent + 2, f"raise _k_bad_work({origin}, {w})")
        if self.exprs.constant(ref) is None:  # its index is read all the same (checked, drawn)
            self.emit(indent + 1, self.exprs._ref(ref, in_statement=True)[0])
        self.emit(indent + 1, "if not _k_zero(s):")
        self._yield(indent + 2)
        self.emit(indent, "else:")
        if self.objects:
            self.emit(indent + 1, f"s.state = {AT_STAGE}")
        members = self._members(ref)
        kinds = {type(m) for m in members}
        # a family of one named by a computed index is still checked (and its draws made)
        one = len(members) == 1 and self.exprs.constant(ref) is not None
        if len(kinds) == 1 and cs.is_compiled(members[0]):
            if one:
                st = self.bind(members[0], "_k_st")
            else:
                member, _ = self.exprs._ref(ref, in_statement=True)
                st = self.temp("st")
                self.emit(indent + 1, f"{st} = {member}")
            self.emit_all(indent + 1, self._arrival(members, st, "s", w))
        else:
            if one:
                member = self.bind(members[0], "_k_st")
            else:
                member, _ = self.exprs._ref(ref, in_statement=True)
            self.emit(indent + 1, f"{member}.arrive(s, {w})")
        self._yield(indent + 1)

    def _members(self, ref: ir.Ref) -> list[Any]:
        """The stage members `ref` may name: the one, or the whole family."""
        stages = self.world.stages
        member = self.exprs.constant(ref)
        if member is not None:
            return [member]
        return stages[ref.base : ref.base + ref.count]

    def _arrival(self, members: list[Any], st: str, job: str, w: str) -> list[str]:
        """The template of an arrival at `st`, one of `members` (one compiled kind)."""
        o = self.options
        first = members[0]
        base = type(first).__mro__[1]
        if base is FifoStage:
            servers = {m.servers for m in members}
            count_ = str(servers.pop()) if len(servers) == 1 else f"{st}.servers"
            return cs.fifo_arrive(st, job, w, "now", count_, o)
        if base is DelayStage:
            return cs.delay_arrive(st, job, w, "now", o)
        # one member: its order of arrivals named once (a bound method the stage keeps)
        order = self.bind(first._order, "_k_order") if len(members) == 1 else None
        return cs.ps_arrive(st, job, w, "now", self._ps_const(members), o, self.ps_flag, order)

    def _ps_const(self, members: list[Any]) -> float | str | None:
        """The capacity of every ps stage of `members`, for `cs._ps_rate`: their constant,
        or the code of their one capacity that reads `present` (and no attribute), else
        None (read at run time)."""
        consts = {m.phi_const for m in members}
        const: float | str | None = consts.pop() if len(consts) == 1 else None
        if const is None:  # a capacity that reads `present`: its code inline, if one
            capacities = {self.program.stages[m.index].kind.capacity for m in members}
            if len(capacities) == 1:
                capacity = capacities.pop()
                if not _reads_attributes(capacity):
                    self.exprs._stream = None
                    const, _ = self.exprs._code(capacity)
        return const

    def _choose(self, stmt: ir.Choose, indent: int) -> None:
        """`choose j in N by (keys)` of a constant count, inline: each candidate's keys
        (a tuple when there are several, compared as the interpreter's are; one key alone,
        which compares as its 1-tuple would), the first of the least kept. Up to `UNROLL`
        candidates are written one by one, each with its keys' `j` a constant (so
        `queue(s[j])` names its member directly). A key of whole counts (`_counted`)
        compares them as ints. Several keys that a tuple's `<` finds less are asked again
        of `keys_less`, which takes no NaN for equal to itself."""
        n = int(stmt.count.value)  # type: ignore[attr-defined]
        less = ""
        if len(stmt.keys) > 1:
            less = f" and {self.bind(keys_less, '_k_keys_less')}({{0}}, {{1}})"

        def keys_of(j: int | None) -> str:
            codes = []
            for k in stmt.keys:
                e = k if j is None else _substitute(k, stmt.slot, float(j))
                code = self.expr(e, self.session_stream)
                codes.append(_COUNT_READ.sub(r"(\1)", code) if _counted(e) else code)
            return codes[0] if len(codes) == 1 else f"({', '.join(codes)},)"

        if n <= UNROLL:
            best, best_key = self.temp("best"), self.temp("best_key")
            for j in range(n):
                keys = keys_of(j)
                if j == 0:
                    self.emit(indent, f"{best}, {best_key} = 0.0, {keys}")
                    continue
                key = self.temp("key")
                self.emit(indent, f"{key} = {keys}")
                self.emit(indent, f"if {key} < {best_key}{less.format(key, best_key)}:")
                self.emit(indent + 1, f"{best}, {best_key} = {float(j)!r}, {key}")
            self.emit(indent, f"a[{stmt.slot}] = {best}")
            return
        candidates = self.bind(tuple((j, float(j)) for j in range(n)), "_k_candidates")
        best, key, best_key = self.temp("best"), self.temp("key"), self.temp("best_key")
        self.emit(indent, f"{best} = 0.0")
        self.emit(indent, f"{best_key} = None")
        self.emit(indent, f"for j, jf in {candidates}:")
        self.emit(indent + 1, f"a[{stmt.slot}] = jf")
        self.emit(indent + 1, f"{key} = {keys_of(None)}")
        test = f"{key} < {best_key}{less.format(key, best_key)}"
        self.emit(indent + 1, f"if {best_key} is None or ({test}):")
        self.emit(indent + 2, f"{best}, {best_key} = jf, {key}")
        self.emit(indent, f"a[{stmt.slot}] = {best}")

    def _inline_hold(self, stmt: ir.Hold, indent: int) -> None:
        """A hold written inline (`serq.sim.compiled_holds`): `Holds.join` (each pool's
        units, a rejection ending the session), then the body once admitted, then
        `Holds.close` (the parts released, the pools retried)."""
        spec = self.bind(self._spec_of(stmt), "_k_spec")
        if self._held:
            self.nested_inline = True
        members: list[int | str] = []  # `Holds.join` resolves every pool first
        for part in stmt.pools:
            k = ch.member(part.pool)
            if k is None:  # a computed member: resolved as the interpreter resolves it
                var = self.temp("pool")
                code = self.exprs.member_code(part.pool, self.session_stream)
                self.emit(indent, f"{var} = {code}")
                members.append(var)
            else:
                members.append(k)
        shape = self._shape(stmt, members)
        names = shape.pools
        for i, part in enumerate(stmt.pools):
            u = self.temp("u")
            code = self.expr(part.units, self.session_stream)
            self.emit(indent, f"{u} = {code}")
            if not ch.non_negative(code):  # a folded constant is checked here, once
                self.emit(indent, f"if not {u} >= 0.0:")
                self.emit(indent + 1, f"raise _k_bad_units({spec}, {i}, {names[i]}, {u})")
            self.emit_all(indent, ch.round_up(u, names[i], shape.blocks[i]))
            value, cap = ch.number(code), ch.number(shape.caps[i])
            need = u
            if shape.reserves[i] is not None:  # what it needs: the larger, with its reserve
                need, value = self.temp("need"), None
                self.emit_all(indent, ch.reserved(shape, i, u, need))
            if value is None or cap is None or shape.blocks[i] is not None or value > cap:
                self.emit(indent, f"if {need} > {shape.caps[i]}:")  # never fits: rejected
                self.emit(indent + 1, f"_k_reject({names[i]}, {spec}, {i}, s)")
                self._release_inline(indent + 1)
                self.emit(indent + 1, "_k_end(s)")
                self.emit(indent + 1, "return")
        run = self.temp("run")
        units = self.temp("units")
        go = self.temp("go") if self._admits_at_once(stmt, shape) else None
        if go is not None:  # nobody else can run or be admitted before this session
            self.emit(indent, f"{go} = not _k_ready and not ({self._waiting()})")
        if go is not None and deadlock.fixed_units(stmt):
            # the units read nothing the join changes (`queued()`): when it fits it is
            # admitted without the queue
            self._admit_at_once(stmt, shape, go, indent, units=units)
            self.emit(indent, f"if not {go}:")
            self._join(shape, run, spec, indent + 1)
            self._yield(indent + 1)  # admitted by `_k_retry`: the body goes on
            self.emit(indent + 1, f"{units} = {run}.units_now")
        else:
            self._join(shape, run, spec, indent)
            if go is None:
                self._yield(indent)  # admitted by `_k_retry`: the body goes on
            else:
                self._admit_at_once(stmt, shape, go, indent, run=run)
                self.emit(indent, f"if not {go}:")
                self._yield(indent + 1)
            self.emit(indent, f"{units} = {run}.units_now")
        released = {}  # the parts a `release` in the body may give back early
        for i, part in enumerate(stmt.pools):
            k = ch.member(part.pool)
            if k is not None and ch.released_in(self.program, stmt.body, k):
                released[i] = self.temp("released")
                self.emit(indent, f"{released[i]} = False")
        self._held.append((units, shape, released, members))
        self._block(stmt.body, indent)
        self._held.pop()
        self.emit_all(indent, ch.release(shape, units, released))  # `Holds.close`
        self.emit(indent, f"a[{ch.COMPUTED}] = 0.0")
        self.emit(indent, f"if {self._waiting(fitting=True)}:")
        self.emit(indent + 1, "_k_retry()")

    def _join(self, shape: ch.Shape, run: str, spec: str, indent: int) -> None:
        """`Pool.join` of an inline hold of `shape`: its `HoldRun` made and queued."""
        first = shape.pools[0]
        self.emit(indent, f"{run} = _k_object_new(_k_HoldRun)")
        self.emit(indent, f"{run}.spec = {spec}")
        self.emit(indent, f"{run}.session = s")
        if all(n in self.ns for n in shape.pools):  # constant members: one list for all
            pools = self.bind([self.ns[n] for n in shape.pools], "_k_pools")
        else:
            pools = f"[{', '.join(shape.pools)}]"
        self.emit(indent, f"{run}.pools = {pools}")
        self.emit(indent, f"{run}.joined = now")
        self.emit(indent, f"{first}._join_seq = {run}.join_seq = {first}._join_seq + 1")
        if self.objects:  # what a cache's `waiting`, a cancel or a spill reads
            self.emit(indent, f"s.state = {QUEUED}")
            self.emit(indent, f"s.where = {first}")
            self.emit(indent, f"s.waiter = {run}")
        self.emit(indent, f"{first}.queue.append({run})")
        self.emit(indent, f"{first}.dirty = True")

    def _admits_at_once(self, stmt: ir.Hold, shape: ch.Shape) -> bool:
        """Whether the inline hold `stmt` may admit its session where it joins, when no
        other session is ready and no pool has anyone waiting: then the settle after it
        would run nobody else and `_k_retry` would admit it alone, so admitting it here,
        with the same code, changes nothing but the cost. Not where its units draw
        (`_k_retry` evaluates them again), nor with what else the settle does between (step
        engines, claims; a flow network only reschedules after it, as a ps stage does), nor
        with more pools than `_waiting` tests. A first pool whose queue is ordered by keys
        is fine when they are ranked (`Pool.ranked`: they read only constants and the
        session's own attributes, with IEEE arithmetic, so reading them has no effect and
        cannot fail): a queue of one gives its one, whatever its keys; keys that read live
        state or draw are read again at each admission (`Pool.head`), so not there."""
        world = self.world
        first = world.pools[ch.members(stmt.pools[0].pool)[0]]
        return not (
            world.steps
            or world.claims is not None
            or self.options.spills
            or (shape.keyed and not first.ranked)
            or self._waiting() == "True"
            or any(_draws(p.units) for p in stmt.pools)
            or any(p.reserve is not None and _draws(p.reserve) for p in stmt.pools)
        )

    def _admit_at_once(
        self,
        stmt: ir.Hold,
        shape: ch.Shape,
        go: str,
        indent: int,
        run: str | None = None,
        units: str | None = None,
    ) -> None:
        """When `go`: `_k_retry`'s admission of the inline hold `stmt` where it joins
        (`ch.fits`, `ch.admit`), the session going on without yielding (as the settle
        would have resumed it at once); `go` ends False when it does not fit. With `run`
        the session has joined the queue as that `HoldRun`; else it has not (no
        `HoldRun`: what a join counts, `_join_seq` and `dirty`, is counted here, its wait
        is 0, and its units go to `units`)."""
        queued = run is not None
        codes = [self.expr(p.units, self.session_stream) for p in stmt.pools]
        admit = ch.admit(
            shape,
            self.world.recorder.warmup,
            SPIN_LIMIT,
            queued=queued,
            units_to="run.units_now" if queued else str(units),
        )
        assert admit[-1] == "ready.append(s)"
        self.emit(indent, f"if {go}:")
        self.emit(indent + 1, f"{go} = False")
        if queued:
            self.emit(indent + 1, f"q = {shape.pools[0]}.queue")
            self.emit(indent + 1, f"run = {run}")
        self.emit(indent + 1, "while True:")
        self.emit_all(indent + 2, ch.fits(shape, codes))
        if not queued:
            self.emit(indent + 2, f"{shape.pools[0]}._join_seq += 1")  # `Pool.join`'s count
            if self.objects:  # queued as it is admitted: what an eviction's `waiting` reads
                self.emit(indent + 2, f"s.state = {QUEUED}")
        self.emit_all(indent + 2, admit[:-1])
        if self.objects:
            self.emit(indent + 2, f"s.state = {RUNNING}")
        self.emit(indent + 2, f"{go} = True")
        self.emit(indent + 2, "break")

    def _release_inline(self, indent: int) -> None:
        """The inline holds around, released innermost first (`Holds.release_all`)."""
        for units, shape, released, _ in reversed(self._held):
            self.emit_all(indent, ch.release(shape, units, released))

    def _release(self, stmt: ir.Release, indent: int) -> bool:
        """`release P` of an inline hold's part (`Holds.release`), inline: the innermost
        hold around that holds the member gives it back, once (a second `release` finds
        nothing to give), then the pools are retried; False when no inline hold around
        holds it (the interpreter's step then)."""
        k = ch.member(stmt.pool)
        for units, shape, released, members in reversed(self._held):
            if k is not None and k in members:
                i = members.index(k)
                flag = released[i]
                self.emit(indent, f"if not {flag}:")
                self.emit(indent + 1, f"{flag} = True")
                self.emit_all(indent + 1, ch.release(shape, units, only=i))
                self.emit(indent, f"if {self._waiting(fitting=True)}:")
                self.emit(indent + 1, "_k_retry()")
                return True
        return False

    def _grow(self, stmt: ir.Grow, indent: int) -> bool:
        """`grow P (d)` of an inline hold's part (`Holds.grow` under `preempt none`),
        inline: the innermost hold around that holds the member grows at once when the
        pool has room, else the session waits among the pool's growers (a `yield`, which
        `_k_retry`'s `Holds.try_growers` resumes) and takes its part's allocation back;
        the hold's units local holds the new allocation. False when no inline hold around
        holds it (the interpreter's step then)."""
        k = ch.member(stmt.pool)
        for units, shape, released, members in reversed(self._held):
            if k is not None and k in members:
                i = members.index(k)
                self.nested_inline = True  # a grower waits inside an inline hold
                alloc, part = self.temp("alloc"), self.temp("part")
                origin = self.bind(stmt.origin)
                amount = self.expr(stmt.amount, self.session_stream)
                if ch.number(amount) is None:  # else a folded constant, written as it is
                    code, amount = amount, self.temp("grow")
                    self.emit(indent, f"{amount} = {code}")
                lines = ch.grow(shape, i, units, amount, alloc, part, origin, released.get(i))
                self.emit_all(indent, lines)
                self._yield(indent + 1)  # grown by `Holds.try_growers`, then resumed
                self.emit(indent + 1, f"{alloc} = {part}.alloc")
                n = len(shape.pools)
                parts = [alloc if j == i else f"{units}[{j}]" for j in range(n)]
                self.emit(indent, f"{units} = ({', '.join(parts)},)")
                return True
        return False

    def _shape(self, stmt: ir.Hold, members: list[int | str]) -> ch.Shape:
        """What the hold templates write of the inline hold `stmt`, whose pools are
        `members`: each a member's index, or the local that holds a computed member (its
        family's members are alike: `ch.inline_holds`)."""
        world = self.world
        recorder = world.recorder
        stream = self.session_stream
        names, caps, limits, blocks, cached, records = [], [], [], [], [], []
        for part, k in zip(stmt.pools, members, strict=True):
            family = [world.pools[i] for i in ch.members(part.pool)]
            if isinstance(k, int):
                pool = world.pools[k]
                names.append(self.bind(pool, "_k_pool"))
                caps.append(_number(pool.cap))
                limits.append(_number(pool.limit))
                records.append(self.bind(recorder._pools[pool.index], "_k_prec"))
            else:
                names.append(k)
                caps.append(f"{k}.cap")
                limits.append(f"{k}.limit")
                records.append(f"{self.bind(recorder._pools, '_k_precs')}[{k}.index]")
            blocks.append(family[0].block)
            cached.append(any(p.index in self.caching for p in family))
        first = world.pools[ch.members(stmt.pools[0].pool)[0]]
        return ch.Shape(
            pools=names,
            caps=caps,
            limits=limits,
            blocks=blocks,
            cached=cached,
            records=records,
            keyed=bool(first.keys),
            cache=None if stmt.cache is None else self.expr(stmt.cache, stream),
            reuse=None if stmt.reuse is None else self.expr(stmt.reuse, stream),
            spec=self.bind(self._spec_of(stmt), "_k_spec"),
            tracked=self.objects,
            reserves=[
                None if p.reserve is None else self.expr(p.reserve, stream) for p in stmt.pools
            ],
        )

    def _spec(self, stmt: ir.Hold) -> HoldSpec:
        """The `HoldSpec` of an inline hold, for what reads its waiting `HoldRun`s
        (`Holds._fits` in a stall's diagnostic) and its errors."""
        expr = self.statements.expr
        resolver = self.exprs.resolver
        spec = HoldSpec(
            tuple(resolver(p.pool, self.session_stream) for p in stmt.pools),
            tuple(expr(p.units) for p in stmt.pools),
            tuple(None if p.reserve is None else expr(p.reserve) for p in stmt.pools),
            None,
            None,
            None,
            stmt.origin,
        )
        spec.part_origins = tuple(p.origin for p in stmt.pools)
        return spec

    def _waiting(self, fitting: bool = False) -> str:
        """A test of whether any pool has anyone to retry (a queue or a grower), before
        calling `_k_retry` (which would find nobody otherwise). The queue of a pool a
        step engine admits from is the engine's to admit (its plan): `_k_retry` grows
        only its growers, so only they are tested. `fitting`: an inline pool whose queued
        holds all take a constant number of its units (no reserve, no keys, no growers)
        counts only while the least of those fits next to what it has allocated; when
        it does not, `_k_retry` would find the head of that queue too large (its units
        are at least the least) and change nothing."""
        firsts, inline_pools, grown = self._inline_queues() if fitting else ({}, set(), set())
        tests = []
        served = self.world.served
        for pool in self.world.pools:
            name = self.bind(pool, "_k_pool")
            if pool.index in served:
                tests.append(f"{name}.growers")
                continue
            queue = ch.waiting(pool, name)
            if pool.index in inline_pools and pool.index not in grown:
                least = self._least_units(pool, firsts.get(pool.index))
                if least is not None:
                    limit = _number(pool.limit)
                    queue = f"({queue} and not {name}.allocated + {least!r} > {limit})"
            tests.append(
                " or ".join(
                    [queue]
                    + ([f"{name}.front"] if self.preempts else [])  # a preemption's requeue
                    + ([f"{name}.growers"] if self.grows else [])
                )
            )
        if not tests or len(tests) > 8:
            return "True"
        return " or ".join(tests)

    def _inline_queues(self) -> tuple[dict[int, list[ir.Hold]], set[int], set[int]]:
        """The inline holds that may queue at each pool member (by index), the members
        inline holds take, and those an inline `grow` may leave growers at."""
        firsts: dict[int, list[ir.Hold]] = {}
        inline_pools: set[int] = set()
        grown: set[int] = set()
        for block in self.program.blocks:
            for stmt in block:
                if isinstance(stmt, ir.Hold) and id(stmt) in self.inline:
                    for k in ch.members(stmt.pools[0].pool):
                        firsts.setdefault(k, []).append(stmt)
                    for p in stmt.pools:
                        inline_pools.update(ch.members(p.pool))
                elif isinstance(stmt, ir.Grow) and (k := ch.member(stmt.pool)) is not None:
                    grown.add(k)
        return firsts, inline_pools, grown

    @staticmethod
    def _least_units(pool: Any, holds: list[ir.Hold] | None) -> float | None:
        """The fewest units of `pool` (rounded up to its blocks) that any of `holds`, the
        inline holds queueing there, takes of it, when each takes a constant number of
        them with no reserve and the queue has no keys; None otherwise."""
        if not holds or pool.keys or pool.ranked:
            return None
        least = math.inf
        for stmt in holds:
            first = stmt.pools[0]
            if not isinstance(first.units, ir.Num) or first.reserve is not None:
                return None
            value = first.units.value
            if not 0.0 <= value < math.inf:
                return None
            least = min(least, pool.round_up(value))
        return least

    def _retry_function(self) -> None:
        """`_k_retry()`: `World.retry_pools`, the inline pools' admissions inline."""
        world = self.world
        self.emit(1, "def _k_retry():")
        if self.inline:
            self.emit(2, "nonlocal admit_at, admit_n")  # `ch.admit` counts
        self.emit(2, "changed = False")
        self.emit(2, "H = _k_holds")
        self.emit(2, "ready = _k_ready")
        firsts, inline_pools, grown = self._inline_queues()
        for pool in world.pools:
            name = self.bind(pool, "_k_pool")
            if pool.index in inline_pools:
                if pool.index in grown:  # `World.retry_pools`: the growers first
                    self.emit(2, f"if {name}.growers and H.try_growers({name}):")
                    self.emit(3, "changed = True")
                holds = firsts.get(pool.index)
                if holds:
                    self._admissions(pool, name, holds)
                continue
            self.emit(2, f"if {name}.growers and H.try_growers({name}):")
            self.emit(3, "changed = True")
            if pool.index in world.served:
                continue
            self.emit(2, f"if ({ch.waiting(pool, name)} or {name}.front) and H.try_admit({name}):")
            self.emit(3, "changed = True")
        self.emit(2, "return changed")
        self.emit(0, "")

    def _admissions(self, pool: Any, name: str, holds: list[ir.Hold]) -> None:
        """`Holds.try_admit` of an inline pool: its heads admitted while they fit (a
        ranked queue's head taken from its heap, `Pool.head` when it declines)."""
        self.emit(2, f"q = {ch.waiting(pool, name)}")
        self.emit(2, "while q:")
        if pool.ranked:
            self.emit(3, f"run = None if {name}.front else {name}.queue.head()")
            self.emit(3, "if run is None:")
            self.emit(4, f"run = {name}.head()")
        else:
            self.emit(3, f"run = {name}.head()" if pool.keys else "run = q[0]")
        self.emit(3, "s = run.session")
        self.emit(3, "a = s.attrs")
        for k, stmt in enumerate(holds):
            indent = 3
            if len(holds) > 1:
                spec = self.bind(self._spec_of(stmt), "_k_spec")
                self.emit(3, f"{'if' if k == 0 else 'elif'} run.spec is {spec}:")
                indent = 4
            members: list[int | str] = [pool.index]  # the queue's: the run's first pool
            for i, part in enumerate(stmt.pools[1:], 1):
                k = ch.member(part.pool)
                if k is None:  # the member the run resolved when it joined
                    var = f"pool{i}"
                    self.emit(indent, f"{var} = run.pools[{i}]")
                    members.append(var)
                else:
                    members.append(k)
            shape = self._shape(stmt, members)
            units = [self.expr(p.units, self.session_stream) for p in stmt.pools]
            self.emit_all(indent, ch.fits(shape, units))
            self.emit_all(indent, ch.admit(shape, self.world.recorder.warmup, SPIN_LIMIT))
        self.emit(3, "changed = True")

    def _spec_of(self, stmt: ir.Hold) -> HoldSpec:
        """The spec `_inline_hold` bound for `stmt` (one per statement)."""
        specs = self.ns.setdefault("_k_specs", {})
        spec = specs.get(id(stmt))
        if spec is None:
            spec = specs[id(stmt)] = self._spec(stmt)
        return spec

    def _hold_spec(self, stmt: ir.Hold) -> HoldSpec:
        """The hold's spec, as `StatementCompiler` builds it, entering its body as a
        generator of its own."""
        expr = self.statements.expr
        resolver = self.exprs.resolver
        lease = None
        if stmt.lease is not None:
            lease = (resolver(stmt.lease.pool, self.session_stream), expr(stmt.lease.duration))
        spec = HoldSpec(
            tuple(resolver(p.pool, self.session_stream) for p in stmt.pools),
            tuple(expr(p.units) for p in stmt.pools),
            tuple(None if p.reserve is None else expr(p.reserve) for p in stmt.pools),
            None if stmt.reuse is None else expr(stmt.reuse),
            None if stmt.cache is None else expr(stmt.cache),
            lease,
            stmt.origin,
        )
        spec.part_origins = tuple(p.origin for p in stmt.pools)
        members = [ch.member(p.pool) for p in stmt.pools]
        if None not in members:  # constant members: `Holds.join` resolves none
            spec.members = tuple(self.world.pools[k] for k in members)
        name = self._bodies.get(stmt.body)
        if name is None:
            name = self._bodies[stmt.body] = f"_k_body{stmt.body}"
            self._pending.append((stmt.body, name))
        cell: list[Any] = []  # the body's generator function, once `_k_build` made it
        spec.enter = _enterer(cell)
        self.ns.setdefault("_k_enter_cells", []).append((name, cell))
        return spec


def _take_arrival(engine: Any) -> tuple[float, float]:
    """Take the pending arrival out of `engine`'s events (`Engine.take`): its (time,
    sequence number), or (inf, inf) when none is pending."""
    for entry in engine._heap:
        if entry[2] is cs.ARRIVE:
            engine.take(entry[1])
            return entry[0], entry[1]
    return math.inf, math.inf


# a count a stage or pool keeps as an int, read as a float (`Stage.COUNT_CODE`, `queue`)
_COUNT_READ = re.compile(
    r"float\((\w+\.(?:present|in_service|n_holders)|len\(\w+\.queue\) \+ len\(\w+\.front\))\)"
)


def _counted(e: ir.Expr) -> bool:
    """Whether `e` is made of numbers and counts of jobs or holds (`queue`, `busy`,
    `holders`, `queued`) by `+`, `-`, negation and `*` by a number alone: then reading the
    counts as ints (below 2**53, so exactly as floats) gives the same numbers, or equal
    ones (0 for -0.0), in the same order, which is all a `choose` key is used for. A
    product of counts is left to floats: as ints it could pass 2**53 and stay exact
    where the floats round."""
    if isinstance(e, ir.Num):
        return True
    if isinstance(e, ir.Unary):
        return e.op == "-" and _counted(e.operand)
    if isinstance(e, ir.Binary):
        if e.op == "*" and not (isinstance(e.left, ir.Num) or isinstance(e.right, ir.Num)):
            return False
        return e.op in ("+", "-", "*") and _counted(e.left) and _counted(e.right)
    if isinstance(e, ir.Observable):
        return e.func in ("queue", "busy", "holders", "queued") and not e.args
    return False


def _draws(e: ir.Expr) -> bool:
    """Whether the expression `e` draws a random number."""
    return contains(e, lambda n: isinstance(n, ir.expr.Draw))


def _reads_attributes(e: ir.Expr) -> bool:
    """Whether the expression `e` reads a session attribute (or the session)."""
    return contains(
        e,
        lambda n: isinstance(n, ir.Attr)
        or (isinstance(n, ir.expr.Observable) and n.func == "cachedin"),
    )


def _substitute(e: Any, slot: int, value: float) -> Any:
    """The IR `e` with every read of attribute `slot` replaced by the number `value`."""
    if isinstance(e, ir.Attr):
        return ir.Num(value) if e.slot == slot else e
    if isinstance(e, tuple):
        return tuple(_substitute(item, slot, value) for item in e)
    if hasattr(e, "__dataclass_fields__") and not isinstance(e, type):
        changes = {}
        for name in e.__dataclass_fields__:
            item = getattr(e, name)
            new = _substitute(item, slot, value)
            if new is not item:
                changes[name] = new
        return replace(e, **changes) if changes else e
    return e


def _whole_count(count: ir.Expr) -> bool:
    """Whether a `choose` count is a constant whole number from 1 on (others are checked
    when they run, by the interpreter's step)."""
    return isinstance(count, ir.Num) and count.value >= 1 and count.value == int(count.value)


def _number(value: float) -> str:
    """`value` as Python source (inf as the bound `_k_INF`)."""
    if value == math.inf:
        return "_k_INF"
    if value == -math.inf:
        return "(-_k_INF)"
    return repr(float(value))


def _rejecter(world: Any) -> Any:
    """`_k_reject(pool, spec, i, s)`: session `s`'s hold `spec` can never fit `pool`, its
    `i`th: rejected (`World.rejected`)."""

    def reject(pool: Any, spec: Any, i: int, s: Any) -> None:
        world.rejected(pool, spec.part_origins[i], s.serial)

    return reject


def _sets_turn(program: ir.Program) -> bool:
    """Whether a statement of `program` can change a session's `turn_no`: a `turn`, or a
    `set` or `choose` of it."""
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Turn):
                return True
            if isinstance(stmt, ir.Set | ir.Choose) and stmt.slot == TURN_NO:
                return True
    return False


def _enterer(cell: list[Any]) -> Any:
    """A hold's `enter(session, run)`: the frame of its body, a new generator of the
    function `_k_build` made (in `cell`, filled by `CompiledWorld`)."""

    def enter(s: Session, run: Any) -> CFrame:
        return _new_frame(cell[0](s, s.attrs), HOLD, run)

    return enter


def _branch_fails(origin: Any, v: float) -> None:
    from serq.sim.errors import number

    raise SimError(
        origin,
        f"the branch guard is {number(v)}, not 0 or 1; a draw is written `branch with (p)`",
    )
