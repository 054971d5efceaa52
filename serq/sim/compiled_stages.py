"""The compiled path's fifo, delay and ps stages: one source template per event.

A stage of these kinds changes at four events: a job arrives, a job completes, a job is
taken away (a preempted session) and, for ps, the next completion is scheduled after a
settle. Each event has one template here, a function that returns the event's Python
source lines for given names (the stage, the job, the work, the clock). `serq.sim.compiled`
writes the templates inline: an arrival into the generated session code where a `run`
is, a completion and a reschedule into the generated event loop. The same templates
are compiled once into the methods of the stage classes below (`stage_class`), which
the rest of the simulator calls (a spill's anonymous job arriving, a preemption's
cancel), so every path does the same arithmetic in the same order, and that order is the
interpreter's (`serq.sim.stages`), so both give the same report to the last bit.

What the compiled path keeps differently from the interpreter:
- The recorder's two levels of a stage (present, and busy: 1 while a job is present) and
  its completion sums live on the stage itself (`lv_since`, `lv_present`, `lv_busy`,
  `n_done`, `wait_sum`, `service_sum`), integrated exactly as `StatsRecorder.stage_state`
  and `stage_done` integrate them; `write_back` hands them to the recorder when the run
  ends. Both levels change at the same instants, so they share one `since`; a level's
  value is the stage's `present` (or whether it is positive), which the stage keeps.
- A completion is an event `(time, seq, kind, payload)` whose kind is one of the ints
  below, dispatched by the generated loop without a call: a fifo or delay completion
  carries its job (`job.at` is the stage), a ps completion its stage; a ps stage's live
  completion is the one whose sequence number it keeps (`ps_seq`), the others are stale,
  as a bumped `version` makes them in the interpreter.
- What only a cancel or `work(s)` reads (the jobs in service, their sequence numbers) is
  kept only when the program can preempt or reads `work` (`tracked`); the online
  estimates only when the program reads one (`measuring`).
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from heapq import heapify, heappop, heappush
from typing import Any

from serq import ir
from serq.sim.stages import DelayStage, FifoStage, PsStage

ESTIMATES = frozenset({"est_lambda", "est_rho", "est_wait", "price"})

# the kinds of the events the generated loop dispatches inline (`CompiledWorld`)
FIFO_DONE, DELAY_DONE, PS_DONE, ARRIVE = 1, 2, 3, 4
KIND_NAMES = {FIFO_DONE: "_K_FIFO", DELAY_DONE: "_K_DELAY", PS_DONE: "_K_PS", ARRIVE: "_K_ARRIVE"}
INF = math.inf


def reads_estimates(node: Any) -> bool:
    """Whether an online estimate (`est_*`, `price`) is read anywhere in the IR `node`."""
    return not ESTIMATES.isdisjoint(observed(node))


def reads_work(node: Any) -> bool:
    """Whether `work(s)` (the work left at a stage) is read anywhere in the IR `node`."""
    return "work" in observed(node)


# what the IR nodes walked lately read, by id (the node kept: its id stays its own):
# every run of a program asks again, and the walk is most of a short run's set-up
_READS: dict[int, tuple[Any, frozenset[str], frozenset[int]]] = {}
_READS_KEPT = 64


def observed(node: Any) -> frozenset[str]:
    """The functions of the observables (`work`, `est_rho`, ...) read anywhere in the IR
    `node`, in one walk (remembered for the nodes walked lately)."""
    return _reads(node)[1]


def slots_read(node: Any) -> frozenset[int]:
    """The slots of the session attributes read anywhere in the IR `node` (remembered as
    `observed` is)."""
    return _reads(node)[2]


def _reads(node: Any) -> tuple[Any, frozenset[str], frozenset[int]]:
    found = _READS.get(id(node))
    if found is not None and found[0] is node:
        return found
    names: set[str] = set()
    slots: set[int] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        kind = type(item)
        walk = _WALKS.get(kind)
        if walk is None:
            walk = _WALKS[kind] = _walk_of(kind)
        if walk is _SEQUENCE:
            stack.extend(item)
        elif walk:
            if walk[0] is _OBSERVABLE:
                names.add(item.func)
            elif walk[0] is _ATTR:
                slots.add(item.slot)
            stack.extend(getattr(item, name) for name in walk[1:])
    if len(_READS) >= _READS_KEPT:
        _READS.clear()
    found = _READS[id(node)] = (node, frozenset(names), frozenset(slots))
    return found


# how `_reads` walks a node of a type: its items (a tuple or list), its fields (a
# dataclass; an observable's or an attribute's first), or not at all
_SEQUENCE, _OBSERVABLE, _ATTR = object(), object(), object()
_WALKS: dict[type, Any] = {}


def _walk_of(kind: type) -> Any:
    if issubclass(kind, tuple | list):
        return _SEQUENCE
    if is_dataclass(kind) and not issubclass(kind, type):
        if issubclass(kind, ir.expr.Observable):
            head: tuple[Any, ...] = (_OBSERVABLE,)
        else:
            head = (_ATTR,) if issubclass(kind, ir.Attr) else (None,)
        return head + tuple(f.name for f in fields(kind))
    return ()


class Options:
    """What the templates of one run write: `tracked` (keep the jobs in service and their
    sequence numbers: a cancel or `work(s)` reads them), `measuring` (keep the online
    estimates), `warmup` (completions count from it on) and `spills` (a job may be a
    spill's, whose completion wakes nobody)."""

    __slots__ = ("tracked", "measuring", "warmup", "spills")

    def __init__(self, tracked: bool, measuring: bool, warmup: float, spills: bool) -> None:
        self.tracked = tracked
        self.measuring = measuring
        self.warmup = warmup
        self.spills = spills

    def key(self) -> tuple:
        return self.tracked, self.measuring, self.warmup, self.spills


# ---------------------------------------------------------------------- templates
#
# Each returns source lines, indented relative to the place they are written at. Names:
# `st` the stage (a local or a constant's name), `job`, `work` and `now` locals. The
# lines may assign the locals `present`, `dt`, `sq`, `nxt`, `started`, `waited`, `tags`,
# `tag`, `c` (and `job`, `st` where they say so).


def levels(st: str, now: str) -> list[str]:
    """The stage's levels integrated up to `now` (`StatsRecorder.stage_state`); `present`
    holds its `present` before the change."""
    return [
        f"if {now} > {st}.lv_since:",
        f"    dt = {now} - {st}.lv_since",
        f"    {st}.lv_present += present * dt",
        "    if present:",
        f"        {st}.lv_busy += dt",
        f"    {st}.lv_since = {now}",
    ]


def fifo_arrive(st: str, job: str, work: str, now: str, servers: str, o: Options) -> list[str]:
    """`FifoStage.arrive(job, work)`."""
    if o.tracked:  # `work_left` reads the work of a job in service too
        lines = [f"{job}.at = {st}", f"{job}.work = {work}", f"{job}.arrived = {now}"]
    else:  # only its start reads a waiting job's work (`_start_next`)
        lines = [f"{job}.at = {st}", f"{job}.arrived = {now}"]
    lines += [
        f"present = {st}.present",
        f"{st}.present = present + 1",
        f"if {st}.in_service < {servers}:",
        f"    {st}.in_service += 1",
        f"    {job}.started = {now}",
    ]
    if o.tracked:
        lines += [f"    {st}.serving[{job}] = None", f"    {job}.job_seq = sq = _k_seq()"]
        seq = "sq"
    else:
        seq = "_k_seq()"
    lines += [
        f"    _k_push(_k_heap, ({now} + {work}, {seq}, {FIFO_DONE}, {job}))",
        "else:",
        *([] if o.tracked else [f"    {job}.work = {work}"]),
        f"    {st}.waiting.append({job})",
        *levels(st, now),
    ]
    return lines


def fifo_done(job: str, now: str, o: Options) -> list[str]:
    """`FifoStage._done(job)`, the stage being `job.at`, but for waking the job."""
    lines = ["st = " + job + ".at"]
    if o.tracked:
        lines.append(f"del st.serving[{job}]")
    lines += [
        "present = st.present",
        "st.present = present - 1",
        *_start_next("st", now, o.tracked),
        *levels("st", now),
        *_finish("st", job, now, o),
    ]
    return lines


def _start_next(st: str, now: str, tracked: bool) -> list[str]:
    """`FifoStage._start_next(now)`: the first waiting job starts, else a server idles."""
    lines = [f"if {st}.waiting:", f"    nxt = {st}.waiting.popleft()"]
    lines.append(f"    nxt.started = {now}")
    if tracked:
        lines += [f"    {st}.serving[nxt] = None", "    nxt.job_seq = sq = _k_seq()"]
    seq = "sq" if tracked else "_k_seq()"
    return [
        *lines,
        f"    _k_push(_k_heap, ({now} + nxt.work, {seq}, {FIFO_DONE}, nxt))",
        "else:",
        f"    {st}.in_service -= 1",
    ]


def fifo_cancel(o: Options) -> list[str]:
    """`FifoStage.cancel(job)` (a method: `self`, `job`, `now`)."""
    lines = [
        "job.at = None",
        "present = self.present",
        "self.present = present - 1",
        "if job in self.serving:",
        "    del self.serving[job]",
        "    job.job_seq = -1",
        *("    " + line for line in _start_next("self", "now", True)),
        "else:",
        "    self.waiting.remove(job)",
        *levels("self", "now"),
    ]
    return lines


def delay_arrive(st: str, job: str, work: str, now: str, o: Options) -> list[str]:
    """`DelayStage.arrive(job, work)`."""
    if o.tracked:  # `work_left` reads its work, `cancel` its sequence number
        lines = [
            f"{job}.at = {st}",
            f"{job}.work = {work}",
            f"{job}.arrived = {job}.started = {now}",
            f"{st}.jobs[{job}] = None",
        ]
    else:  # its completion reads its start alone (it waits for nothing: `_finish`)
        lines = [f"{job}.at = {st}", f"{job}.started = {now}"]
    lines += [f"present = {st}.present", f"{st}.present = present + 1"]
    if o.tracked:
        lines.append(f"{job}.job_seq = sq = _k_seq()")
    seq = "sq" if o.tracked else "_k_seq()"
    lines += [f"_k_push(_k_heap, ({now} + {work}, {seq}, {DELAY_DONE}, {job}))", *levels(st, now)]
    return lines


def delay_done(job: str, now: str, o: Options) -> list[str]:
    """`DelayStage._done(job)`, the stage being `job.at`, but for waking the job."""
    lines = ["st = " + job + ".at"]
    if o.tracked:
        lines.append(f"del st.jobs[{job}]")
    lines += [
        "present = st.present",
        "st.present = present - 1",
        *levels("st", now),
        *_finish("st", job, now, o, waits=False),
    ]
    return lines


def delay_cancel(o: Options) -> list[str]:
    """`DelayStage.cancel(job)` (a method: `self`, `job`, `now`)."""
    return [
        "job.at = None",
        "job.job_seq = -1",
        "del self.jobs[job]",
        "present = self.present",
        "self.present = present - 1",
        *levels("self", "now"),
    ]


def _advance(st: str, now: str) -> list[str]:
    """`PsStage._advance(now)`: the virtual time up to `now`."""
    return [
        f"if {now} != {st}.t_last:",
        f"    if {st}.present:",
        f"        {st}.vtime += ({now} - {st}.t_last) * {st}.rate",
        f"    {st}.t_last = {now}",
    ]


def _advance_local(st: str, now: str) -> list[str]:
    """`_advance` with the stage's `present` read into the local `present` and its
    virtual time up to `now` in the local `vt` (the same sum as `_advance`'s `+=`)."""
    return [
        f"present = {st}.present",
        f"vt = {st}.vtime",
        f"if {now} != {st}.t_last:",
        "    if present:",
        f"        {st}.vtime = vt = vt + ({now} - {st}.t_last) * {st}.rate",
        f"    {st}.t_last = {now}",
    ]


def _ps_rate(st: str, present: str, const: float | str | None) -> list[str]:
    """`st.rate` for `present` jobs (at least one): `PsStage._rate`; `const` the stage's
    constant capacity when the template is written for one stage, or the code of its
    capacity, which reads `E.present` (else read at run time)."""
    if isinstance(const, str):
        return [f"E.present = float({present})", f"{st}.rate = ({const}) / {present}"]
    if const is not None:  # a positive number, inf included (`ps(inf)`: no time at all)
        number = "_k_INF" if const == math.inf else repr(float(const))
        return [f"{st}.rate = {number} / {present}"]
    return [
        f"c = {st}.phi_const",
        f"{st}.rate = c / {present} if c is not None else {st}._rate({present})",
    ]


def _changed(st: str, flag_only: bool = False) -> list[str]:
    """`PsStage._changed()`: the stage reschedules after the settle. `flag_only` (the
    generated code of a program whose settle looks at its one ps stage's flag rather
    than at the pending list, `_Codegen.ps_flag`): the flag alone."""
    if flag_only:
        return [f"{st}.dirty = True"]
    return [f"if not {st}.dirty:", f"    {st}.dirty = True", f"    {st}.pending.append({st})"]


def ps_arrive(
    st: str,
    job: str,
    work: str,
    now: str,
    const: float | str | None,
    o: Options,
    flag_only: bool = False,
    order: str | None = None,
) -> list[str]:
    """`PsStage.arrive(job, work)` (`flag_only` as for `_changed`; `order` the name of the
    stage's `_order` where the code names it, else read off the stage). Where nothing can
    cancel the job (not `tracked`), its stage and work are not kept: the completion finds
    the stage in its event and the job by its tag."""
    kept = [f"{job}.at = {st}", f"{job}.work = {work}"] if o.tracked else []
    return [
        *_advance_local(st, now),
        *kept,
        f"{job}.arrived = {job}.started = {now}",
        f"_k_push({st}.heap, (vt + {work}, {order or st + '._order'}(), {job}))",
        f"{st}.present = present + 1",
        *_ps_rate(st, "(present + 1)", const),
        *_changed(st, flag_only),
        *levels(st, now),
    ]


def ps_done(
    st: str, now: str, o: Options, const: float | str | None = None, flag_only: bool = False
) -> list[str]:
    """`PsStage._done(version)` of the live completion: the job with the smallest tag
    leaves (its job in the local `job`), but for waking it; `const` as for `_ps_rate`,
    for every stage the completion may be of; `flag_only` as for `_changed`."""
    return [
        *_advance_local(st, now),
        f"tag, _, job = _k_pop({st}.heap)",
        "if tag > vt:",
        f"    {st}.vtime = tag",
        f"{st}.rush = {st}.rate == _k_INF",  # it ended at infinite speed (`reschedule`)
        f"{st}.present = present - 1",
        "if present == 1:",
        f"    {st}.rate = 0.0",
        f"    if {st}.vtime == _k_INF:",  # a job of infinite work ended (`reschedule`)
        f"        {st}.vtime = 0.0",
        "else:",
        *("    " + line for line in _ps_rate(st, "(present - 1)", const)),
        *_changed(st, flag_only),
        *levels(st, now),
        *_finish(st, "job", now, o),
    ]


def ps_cancel(o: Options) -> list[str]:
    """`PsStage.cancel(job)` (a method: `self`, `job`, `now`)."""
    return [
        *_advance("self", "now"),
        "job.at = None",
        "self.heap = [item for item in self.heap if item[2] is not job]",
        "_k_heapify(self.heap)",
        "present = self.present",
        "self.present = present - 1",
        "self.rate = self._rate(present - 1)",
        "if present == 1 and self.vtime == _k_INF:",
        "    self.vtime = 0.0",
        *_changed("self"),
        *levels("self", "now"),
    ]


def ps_reschedule(st: str, now: str, o: Options) -> list[str]:
    """`PsStage.reschedule()`: the next completion from the stage's state after a settle
    (a stage whose jobs cannot progress fails, as the interpreter's method says). The
    rate is kept for `work_left` where the program reads `work` (`tracked`)."""
    return [
        f"{st}.dirty = False",
        f"tags = {st}.heap",
        f"{st}.rate_then = ps_rate = {st}.rate" if o.tracked else f"ps_rate = {st}.rate",
        f"rush = {st}.rush",
        f"{st}.rush = False",
        "if tags and ps_rate > 0:",
        f"    vt = {st}.vtime",
        # infinite speed, the job after one that ended at it, or a virtual time of inf
        "    if ps_rate == _k_INF or rush or vt == _k_INF:",
        "        dt = 0.0",
        "    else:",
        "        dt = (tags[0][0] - vt) / ps_rate",
        "    if dt < 0.0:",
        "        dt = 0.0",
        "    if dt < _k_INF:",
        f"        {st}.ps_seq = sq = _k_seq()",
        f"        _k_push(_k_heap, ({now} + dt, sq, {PS_DONE}, {st}))",
        "    else:",
        f"        {st}.ps_seq = -1",
        "elif tags:",
        f"    {st}.no_capacity()",
        "else:",
        f"    {st}.ps_seq = -1",
    ]


def _finish(st: str, job: str, now: str, o: Options, waits: bool = True) -> list[str]:
    """`StageBase._finish(job, now)` without the wake: the completion counted and
    measured (`measure`, `StatsRecorder.stage_done`). Not `waits` (a delay stage, whose
    jobs start as they arrive): the wait is 0.0, which adds nothing to the sum of waits."""
    # (`job.at` is read again only by a cancel: not `tracked`, the next arrival sets it)
    lines = [f"{job}.at = None"] if o.tracked else []
    lines.append(f"started = {job}.started")
    if waits:
        lines.append(f"waited = started - {job}.arrived")
    if o.measuring:
        lines.append(f"{st}.measure(started, {'waited' if waits else '0.0'}, {now} - started)")
    lines += [f"if {now} >= {float(o.warmup)!r}:", f"    {st}.n_done += 1"]
    if waits:
        lines.append(f"    {st}.wait_sum += waited")
    lines.append(f"    {st}.service_sum += {now} - started")
    return lines


# ---------------------------------------------------------------------- the classes


_CLASSES: dict[tuple, dict[type, type]] = {}


def stage_class(base: type, o: Options) -> type:
    """The compiled class of stage kind `base` for options `o`: `arrive` and `cancel`
    written from the templates above (the same slots as `base`, so a stage changes class
    in place), made once per kind and options."""
    made = _CLASSES.setdefault(o.key(), {})
    cls = made.get(base)
    if cls is None:
        cls = made[base] = _make_class(base, o)
    return cls


def _make_class(base: type, o: Options) -> type:
    if base is FifoStage:
        arrive = fifo_arrive("self", "job", "work", "now", "self.servers", o)
        cancel = fifo_cancel(o)
    elif base is DelayStage:
        arrive = delay_arrive("self", "job", "work", "now", o)
        cancel = delay_cancel(o)
    else:
        arrive = ps_arrive("self", "job", "work", "now", None, o)
        cancel = ps_cancel(o)
    source = "\n".join(
        [
            "def arrive(self, job, work):",
            "    now = self.engine.now",
            "    _k_heap = self.engine._heap",
            "    _k_seq = self.engine._seq",
            *("    " + line for line in arrive),
            "",
            "def cancel(self, job):",
            "    now = self.engine.now",
            "    _k_heap = self.engine._heap",
            "    _k_seq = self.engine._seq",
            *("    " + line for line in cancel),
            "",
        ]
    )
    namespace: dict[str, Any] = {
        "_k_push": heappush,
        "_k_heapify": heapify,
        "_k_pop": heappop,
        "_k_INF": math.inf,
    }
    exec(compile(source, f"<serq-stage-{base.__name__}>", "exec"), namespace)  # noqa: S102
    return type(
        f"Compiled{base.__name__}",
        (base,),
        {
            "__slots__": (),
            "__doc__": f"`{base.__name__}` on the compiled path (`serq.sim.compiled_stages`).",
            "arrive": namespace["arrive"],
            "cancel": namespace["cancel"],
            "compiled_kind": True,
        },
    )


def is_compiled(stage: Any) -> bool:
    """Whether `stage` is one of the compiled classes (`specialise` switched it)."""
    return getattr(type(stage), "compiled_kind", False)


def specialise(world: Any, o: Options) -> list[tuple[Any, type]]:
    """Switch `world`'s plain fifo, delay and ps stages to their compiled classes, their
    levels and sums started as the recorder's are; returns each with its class before."""
    switched = []
    for stage in world.stages:
        base = type(stage)
        if base not in (FifoStage, DelayStage, PsStage):
            continue
        switched.append((stage, base))
        stage.__class__ = stage_class(base, o)
        stage.lv_since = o.warmup
        stage.lv_present = stage.lv_busy = 0.0
        stage.n_done = 0
        stage.wait_sum = stage.service_sum = 0.0
        stage.ps_seq = -1
    return switched


def write_back(world: Any, switched: list[tuple[Any, type]]) -> None:
    """Give the recorder the levels and sums the compiled stages kept (`StatsRecorder`'s
    `_Stage` records), as `stage_state` and `stage_done` would have left them."""
    recorder = world.recorder
    for stage, _ in switched:
        record = recorder.stage_record(stage.index)
        present = stage.present
        record.present.since = record.busy.since = stage.lv_since
        record.present.area = stage.lv_present
        record.busy.area = stage.lv_busy
        record.present.value = present
        record.busy.value = 1.0 if present else 0.0
        record.completed = stage.n_done
        record.wait = stage.wait_sum
        record.service = stage.service_sum
