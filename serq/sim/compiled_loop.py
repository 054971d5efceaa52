"""The compiled path's event loop, generated: `_k_loop` and the settle around it.

`serq.sim.compiled._Codegen` takes these methods from `LoopCode`. They write the loop that
pops the next event (a stage's completion dispatched by its kind without a call, the
pending arrival kept in two locals beside the heap), resumes the session an event makes
ready, and then settles the instant as `World.settle` does: the ready sessions run, the
pools are retried, the step engines plan, the pools' levels and the gauges are recorded,
the ps stages reschedule and the spans are found. The same arithmetic, in the same order,
as the interpreter's `core.Engine.run` and `World.settle`.
"""

from __future__ import annotations

import functools
import math
import re

from serq import ir
from serq.sim import compiled_holds as ch
from serq.sim import compiled_stages as cs
from serq.sim.core import INSTANT_LIMIT, PROGRESS_EVERY
from serq.sim.sample_buffers import BLOCK, GaugePoints
from serq.sim.session import READY, RUNNING
from serq.sim.stages import DelayStage, FifoStage, PsStage
from serq.sim.workload import bad_gap
from serq.sim.world import SPIN_LIMIT


class LoopCode:
    """The event loop's half of `serq.sim.compiled._Codegen` (the module docstring): its
    methods emit into the generator's lines and read its state, which `_Codegen` sets."""

    def _resume(self, indent: int, s: str) -> None:
        """Resume the ready session `s` until it blocks (`World.run_session`)."""
        if not self.objects:
            # its one frame is its main generator, `gen` (inline holds have none), whose
            # end ends the session; nothing reads where it is
            self.emit(indent, "try:")
            self.emit(indent + 1, f"for _ in {s}.gen:")
            self.emit(indent + 2, "break")
            self.emit(indent, "except _k_SimError as error:")
            self.emit(indent + 1, "if error.serial is None:")
            self.emit(indent + 2, f"error.serial = {s}.serial")
            self.emit(indent + 1, "raise")
            return
        self.emit(indent, f"{s}.state = {RUNNING}")
        self.emit(indent, f"frames = {s}.frames")
        self.emit(indent, "if frames:")
        self.emit(indent + 1, "try:")
        self.emit(indent + 2, "for _ in frames[-1][0]:")
        self.emit(indent + 3, "break")
        self.emit(indent + 2, "else:")
        self.emit(indent + 3, f"W._finished({s})")
        self.emit(indent + 1, "except _k_SimError as error:")
        self.emit(indent + 2, "if error.serial is None:")
        self.emit(indent + 3, f"error.serial = {s}.serial")
        self.emit(indent + 2, "raise")
        self.emit(indent, "else:")
        self.emit(indent + 1, f"_k_end({s})")

    def _wake(self, indent: int, job: str) -> None:
        """A stage finished `job`: its session goes on (`World.wake`, then the settle)."""
        if self.options.spills:
            self.emit(indent, f"if {job}.serial >= 0:")
            indent += 1
        self._run_first(indent, job)

    def _run_first(self, indent: int, s: str) -> None:
        """The session `s`, made ready by an event, runs now: it is the settle's first
        ready session, unless a step engine's plan left sessions ready for this event
        (which run first, as the settle runs them in order)."""
        if not self.world.steps:  # no session is ready when an event fires
            self._resume(indent, s)
            return
        self.emit(indent, "if ready:")
        self.emit(indent + 1, f"{s}.state = {READY}")
        self.emit(indent + 1, f"ready.append({s})")
        self.emit(indent, "else:")
        self._resume(indent + 1, s)

    def _settle(self, indent: int) -> None:
        """`World.settle`: the ready sessions run, the pools are retried, then the step
        engines, the pools' levels, the ps stages and the spans."""
        world = self.world
        if world.pools:
            self.emit(indent, "rounds = 0")
            self.emit(indent, "while True:")
            self.emit(indent + 1, "while ready:")
            self.emit(indent + 2, "s = popleft()")
            self._resume(indent + 2, "s")
            self.emit(indent + 1, f"if not ({self._waiting(fitting=True)}) or not _k_retry():")
            self.emit(indent + 2, "break")
            self.emit(indent + 1, "rounds += 1")  # `World.settle`'s count
            self.emit(indent + 1, f"if rounds > {SPIN_LIMIT}:")
            self.emit(indent + 2, "W.spinning()")
        else:
            self.emit(indent, "while ready:")
            self.emit(indent + 1, "s = popleft()")
            self._resume(indent + 1, "s")
        if world.steps:  # the part of `World._settled` for pools and step engines, inline
            # `start_iterations`: one pass, in stage order, unless another event is pending
            # at this instant, looked for once before the pass (an iteration of cost 0
            # does not keep the stages after it out; NOTES §18)
            self.emit(indent, "if (_k_heap[0][0] if _k_heap else _k_INF) > E.now:")
            for stage in world.steps:
                st = self.bind(stage, "_k_step")
                self.emit(indent + 1, f"if not {st}.busy and ({st}.residents or {st}.wants()):")
                self.emit(indent + 2, f"{st}.start()")
            state = self.bind(world.recorder.pool_state, "_k_pool_state")
            for pool in world.pools:  # `World._flush_pools`
                p = self.bind(pool, "_k_pool")
                self.emit_all(
                    indent,
                    [
                        f"if {p}.dirty:",
                        f"    {p}.dirty = False",
                        f"    {state}({pool.index}, E.now, {p}.allocated, {p}.cache.total,",
                        f"        len({ch.waiting(pool, p)}) + len({p}.front), {p}.n_holders)",
                    ],
                )
        elif world.pools:  # `World._flush_pools`, inline: the levels of the pools that changed
            for pool, cells in zip(world.pools, self.pool_cells, strict=True):
                name = self.bind(pool, "_k_pool")
                cached = pool.index in self.caching
                self.emit_all(
                    indent,
                    ch.flush(name, ch.waiting(pool, name), cells, cached, self.preempts),
                )
        if self.ps_flag:  # the one stage that can be pending, by its flag (`ps_flag`)
            stage = self.bind(self.ps_stages[0], "_k_st")
            self.emit(indent, f"if {stage}.dirty:")
            self.emit(indent + 1, f"st = {stage}")
            self.emit(indent + 1, "if pending:")
            self.emit(indent + 2, "pending.clear()")
            self.emit_all(indent + 1, cs.ps_reschedule("st", "now", self.options))
        elif self.any_pending:
            self.emit(indent, "if pending:")
            self.emit(indent + 1, "if len(pending) > 1:")
            self.emit(indent + 2, "pending.sort(key=_k_index)")
            self.emit(indent + 1, "for st in pending:")
            if self.ps:
                if self.others_pending:
                    ps_class = self.bind(cs.stage_class(PsStage, self.options), "_k_ps_class")
                    self.emit(indent + 2, f"if st.__class__ is not {ps_class}:")
                    self.emit(indent + 3, "st.reschedule()")
                    self.emit(indent + 3, "continue")
                self.emit_all(indent + 2, cs.ps_reschedule("st", "now", self.options))
            else:
                self.emit(indent + 2, "st.reschedule()")
            self.emit(indent + 1, "pending.clear()")
        if world.steps:
            self.emit(indent, "if _k_spans:")  # last: every event of this instant is scheduled
            self.emit(indent + 1, "for st in _k_spans:")
            self.emit(indent + 2, "st.extend()")
            self.emit(indent + 1, "_k_spans.clear()")

    def _gauges_function(self) -> None:
        """`_k_end_instant(t)`: `World.end_instant`, with `StatsRecorder.gauges` inline:
        every gauge read at the end of the instant `t`, a change point kept where its
        value changed (the points in lists, `GaugePoints`, moved to the arrays in blocks).
        A value equal to the last one (the same object, or ==, as tuples compare) is no
        change; the clock going back (a step engine's span) is noted for the report."""
        world, recorder = self.world, self.world.recorder
        n = len(world.gauges)
        lasts = [f"g_last{i}" for i in range(n)]
        # the time of each gauge's last point, -inf before the first (a later instant
        # appends a point, without reading the list: the usual case)
        tops = [f"g_top{i}" for i in range(n)]
        # before the first reading, a last value equal to none (`StatsRecorder`'s None)
        never = self.bind(_NEVER, "_k_never")
        self.emit(1, f"{', '.join(lasts)} = {', '.join(never for _ in lasts)}")
        self.emit(1, f"{', '.join(tops)} = {', '.join('-_k_INF' for _ in tops)}")
        self.emit(1, "def _k_end_instant(t):")
        self.emit(2, f"nonlocal {', '.join(lasts + tops)}")
        exprs = self.exprs
        codes = []
        for gauge in self.program.gauges:
            exprs._stream = None
            code, _ = exprs._code(gauge.value)  # a gauge reads no clock and draws nothing
            codes.append(code)
        if any(_READS_A.search(code) for code in codes):  # an attribute, or a function of `a`
            self.emit(2, f"a = {self.bind(world.blank, '_k_blank')}")
        for i, code in enumerate(codes):
            self.emit(2, f"v{i} = {code}")
        same = " and ".join(f"(v{i} is g_last{i} or v{i} == g_last{i})" for i in range(n))
        self.emit(2, f"if {same}:")
        self.emit(3, "return")
        unordered = self.bind(recorder._gauge_unordered, "_k_unordered")
        for i in range(n):
            points = GaugePoints(recorder._gauge_points[i])
            self.gauge_points.append(points)
            times, values = self.bind(points.times, "_k_gt"), self.bind(points.values, "_k_gv")
            flush = self.bind(points.flush, "_k_gflush")
            self.emit(2, f"if not g_last{i} == v{i}:")
            # fast path: an instant after the last point's (`g_top`: the last time in
            # `times`, which a flush keeps, or -inf), a point appended
            self.emit(3, f"if t > g_top{i}:")
            self.emit(4, f"g_top{i} = t")
            self.emit(4, f"{self.bind(points.times.append, '_k_gta')}(t)")
            self.emit(4, f"{self.bind(points.values.append, '_k_gva')}(v{i})")
            self.emit(4, f"if len({times}) > {BLOCK}:")
            self.emit(5, f"{flush}()")
            self.emit(3, f"elif {times} and {times}[-1] == t:")
            self.emit(4, f"{values}[-1] = v{i}")
            self.emit(4, f"if len({values}) > 1 and {values}[-2] == v{i}:")
            self.emit(5, f"{times}.pop()")
            self.emit(5, f"{values}.pop()")
            self.emit(5, f"g_top{i} = {times}[-1] if {times} else -_k_INF")
            self.emit(3, "else:")
            self.emit(4, f"if {times} and t < {times}[-1]:")
            self.emit(5, f"{unordered}.add({i})")
            self.emit(4, f"g_top{i} = t")
            self.emit(4, f"{times}.append(t)")
            self.emit(4, f"{values}.append(v{i})")
            self.emit(4, f"if len({times}) > {BLOCK}:")
            self.emit(5, f"{flush}()")
        for i in range(n):
            self.emit(2, f"g_last{i} = v{i}")
        self.emit(0, "")

    def _settle_function(self) -> None:
        self.emit(1, "def _k_settle_all():")
        self.emit(2, f"nonlocal {', '.join(self.cells)}")
        self.emit(2, "W = _k_world")
        self.emit(2, "ready = _k_ready")
        self.emit(2, "popleft = ready.popleft")
        self.emit(2, "pending = _k_pending")
        self._settle(2)
        self.emit(0, "")

    def _loop_function(self) -> None:
        """`_k_loop(until)`: `Engine.run` with the handlers inline and the settle after
        every event, the gauges read at the end of every instant."""
        self.emit(1, "def _k_loop(until):")
        self.emit(2, f"nonlocal now, {', '.join(self.cells)}")
        self.emit(2, "W = _k_world")
        self.emit(2, "heap = _k_heap")
        self.emit(2, "pop = _k_pop")
        self.emit(2, "ready = _k_ready")
        self.emit(2, "popleft = ready.popleft")
        self.emit(2, "pending = _k_pending")
        self.emit(2, "engine = E")
        for kind, name in cs.KIND_NAMES.items():
            self.emit(2, f"{name} = {kind}")
        self.emit(2, "fired = 0")
        self.emit(2, "same = 0")
        self.emit(2, "t = now")
        # The next arrival is kept out of the heap, in `t_arr` and `s_arr`, and compared
        # with the heap's first event (time, then sequence number, as the heap orders
        # them): a push and a pop less per arrival, and a smaller heap for every other
        # event. Only where nothing but this loop reads the heap (no step engine peeks at
        # the next event); it goes back into the heap when the loop ends.
        split = self.split_arrival
        if split:
            self.emit(2, "t_arr, s_arr = _k_take_arrival(engine)")
            self.emit(2, "try:")
            self._loop_body(3)
            self.emit(2, "finally:")
            self.emit(3, "if s_arr != _k_INF:")
            self.emit(4, f"_k_push(heap, (t_arr, s_arr, {cs.ARRIVE}, None))")
        else:
            self._loop_body(2)
        self.emit(0, "")

    def _loop_body(self, indent: int) -> None:
        """The events of `_k_loop`, from `indent` (see `_loop_function`)."""
        world = self.world
        gauges = bool(world.gauges)
        checking = world.check_invariants
        split = self.split_arrival
        i = indent
        # The events are counted a chunk of PROGRESS_EVERY at a time: each event takes
        # one item of `itertools.repeat(None, PROGRESS_EVERY)` (no int is made), and a
        # chunk used up is a progress callback, as `Engine.run`'s count every
        # PROGRESS_EVERY events. A loop that leaves takes the count from what is left of
        # its chunk (the item of the iteration that leaves fired no event).
        self.emit(i, "while True:")
        self.emit(i + 1, f"chunk = _k_repeat(None, {PROGRESS_EVERY})")
        self.emit(i + 1, "for _ in chunk:")
        body = i + 2
        if world.limit is not None or world.steps:
            self.emit(body, "if engine.stopped:")
            self.emit(body + 1, "break")
        if split:
            self.emit_all(
                body,
                [
                    "if heap:",
                    "    top = heap[0]",
                    "    t = top[0]",
                    "    if t_arr < t or (t_arr == t and s_arr < top[1]):",
                    "        t = t_arr",
                    "        if t > until:",
                    "            break",
                    "        kind = _K_ARRIVE",
                    "    elif t > until:",
                    "        break",
                    "    else:",
                    "        _, sq, kind, job = pop(heap)",
                    "else:",
                    "    t = t_arr",
                    "    if t > until or s_arr == _k_INF:",  # no arrival left either
                    "        break",
                    "    kind = _K_ARRIVE",
                ],
            )
        else:
            self.emit(body, "if not heap:")
            self.emit(body + 1, "break")
            self.emit(body, "t = heap[0][0]")
            self.emit(body, "if t > until:")
            self.emit(body + 1, "break")
        self.emit(body, "if t != now:")
        if gauges:
            self.emit(body + 1, "_k_end_instant(now)")
        self.emit(body + 1, "now = engine.now = t")
        self.emit(body + 1, "same = 0")
        self.emit(body, "else:")  # `Engine.run`'s count of the events of one instant
        self.emit(body + 1, "same += 1")
        self.emit(body + 1, f"if same >= {INSTANT_LIMIT}:")
        if split:  # the event taken is pending again, for `World.place_clock_stop`
            self.emit(body + 2, "if kind is not _K_ARRIVE:")
            self.emit(body + 3, "_k_push(heap, (t, sq, kind, job))")
        self.emit(body + 2, "raise _k_clock_stops(now, same + 1)")
        if not split:
            self.emit(body, "_, sq, kind, job = pop(heap)")
        first = True
        kinds = {type(s).__mro__[1] for s in world.stages if cs.is_compiled(s)}
        handlers = []
        if FifoStage in kinds:
            handlers.append(("_K_FIFO", self._fifo_handler))
        if DelayStage in kinds:
            handlers.append(("_K_DELAY", self._delay_handler))
        if PsStage in kinds:
            handlers.append(("_K_PS", self._ps_handler))
        if isinstance(self.program.arrival, ir.Poisson | ir.Renewal):
            handlers.append(("_K_ARRIVE", self._arrival_handler))
        for name, handler in handlers:
            self.emit(body, f"{'if' if first else 'elif'} kind is {name}:")
            first = False
            handler(body + 1)
        if first:
            self.emit(body, "if True:")
        else:
            self.emit(body, "else:")
        self.emit(body + 1, "engine.current_seq = sq")
        self.emit(body + 1, "kind(job)")
        self._settle(body)
        if checking:
            self.emit(body, "W.check()")
        self.emit(i + 1, "else:")
        self.emit(i + 2, f"fired += {PROGRESS_EVERY}")
        self.emit(i + 2, "_k_progress(t)")
        self.emit(i + 2, "continue")
        self.emit(i + 1, f"fired += {PROGRESS_EVERY - 1} - _k_length_hint(chunk)")
        self.emit(i + 1, "break")
        self.emit(i, "engine.events += fired")
        if gauges:
            self.emit(i, "_k_end_instant(engine.now)")

    def _fifo_handler(self, indent: int) -> None:
        o = self.options
        if o.tracked:  # a cancelled job's completion is stale
            self.emit(indent, "if job.job_seq == sq:")
            indent += 1
        self.emit_all(indent, cs.fifo_done("job", "now", o))
        self._wake(indent, "job")

    def _delay_handler(self, indent: int) -> None:
        o = self.options
        if o.tracked:
            self.emit(indent, "if job.job_seq == sq:")
            indent += 1
        self.emit_all(indent, cs.delay_done("job", "now", o))
        self._wake(indent, "job")

    def _ps_handler(self, indent: int) -> None:
        self.emit(indent, "st = job")
        self.emit(indent, "if st.ps_seq == sq:")  # else stale: a later reschedule
        const = self._ps_const(self.ps_stages)
        self.emit_all(indent + 1, cs.ps_done("st", "now", self.options, const, self.ps_flag))
        self._wake(indent + 1, "job")
        if self._stale_settles_nothing():
            self.emit(indent, "else:")  # it changed nothing: the next event
            self.emit(indent + 1, "continue")

    def _stale_settles_nothing(self) -> bool:
        """Whether the settle after a stale ps completion can be skipped: it finds no
        session ready and no stage pending (the settle before emptied both), and there
        is no pool to retry (a queue by keys that read `waited` may admit another head
        at a later instant), no step engine to start and no invariant to check."""
        world = self.world
        return not (world.pools or world.steps or world.check_invariants)

    def _arrival_handler(self, indent: int) -> None:
        """`Workload._arrive`: a session arrives, the next arrival is scheduled, then the
        session runs (the settle's first ready session)."""
        world, workload = self.world, self.world.workload
        self._session_body(indent)
        limit = workload.limit
        inner = indent
        if limit is not None:
            self.emit(indent, f"if W.arrivals < {int(limit)}:")
            inner += 1
        if isinstance(self.program.arrival, ir.Poisson):
            rate = self.bind(workload._rate, "_k_rate")
            uniform = self.bind(workload._uniform, "_k_uniform")
            self.ns["_k_log"] = math.log
            gap = f"-_k_log(1.0 - {uniform}()) / {rate}"
        else:  # `Workload._next_gap` of a renewal: its gap (reading no session) checked
            code = self.expr(self.program.arrival.gap, world.streams["arrivals"])
            value = ch.number(code)
            if _READS_A.search(code):  # read with the blank attributes, as the workload does
                gap = "_k_workload._next_gap()"
            elif value is not None and 0.0 < value < math.inf:  # a constant gap: no check
                gap = code
            else:
                self.emit(inner, f"gap = {code}")
                self.emit(inner, "if not (gap > 0.0 and gap < _k_INF):")
                bad = self.bind(functools.partial(bad_gap, self.program.arrival), "_k_bad_gap")
                self.emit(inner + 1, f"raise {bad}(gap)")
                gap = "gap"
        # an arrival past the float range never comes: the arrivals stop (`Workload._arrive`)
        if self.split_arrival:  # the next arrival, kept out of the heap (`_loop_function`)
            self.emit(inner, f"t_arr = now + {gap}")
            self.emit(inner, "s_arr = _k_seq() if t_arr < _k_INF else _k_INF")
            if limit is not None:
                self.emit(indent, "else:")
                self.emit(indent + 1, "t_arr = s_arr = _k_INF")
        else:
            self.emit(inner, f"t_arr = now + {gap}")
            self.emit(inner, "if t_arr < _k_INF:")
            self.emit(inner + 1, "_k_push(heap, (t_arr, _k_seq(), _K_ARRIVE, None))")
        del world
        self._run_first(indent, "s")


_READS_A = re.compile(r"(?<![.\w])a\b")  # the attributes' local, `a`, read in generated code


class _Never:
    """A value equal to none, a float's comparison included (`float.__eq__` defers to
    it): the last reading of a gauge before its first."""

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = object.__hash__


_NEVER = _Never()
