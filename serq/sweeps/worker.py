"""One run of a sweep, as a worker process executes it.

A `RunTask` is everything a worker needs, in plain data that pickles: the program's text
and path (a `use`d library or a trace is read from that path on the worker, so a cluster's
workers must see the same files), the point's `--set` values, the `--def` bodies, the run
settings and the seed. `run_task` compiles the program once per point in each worker
process (a small cache keyed by the text, the values and the settings) and runs it with
the task's seed; what comes back is a `RunOutcome`: the run's mean of every observation
and gauge, or the error that stopped it, as one line.

Ctrl-C: a run stopped by it is an outcome with `interrupted` set, carrying what `serq run`
says when interrupted (`serq.sim.Interrupted`: the clock and what had stopped moving by
then). In a local pool's worker (`interruptible`, with `pool_worker` as the pool's
initializer) SIGINT stops the run in progress that way, once, and the worker starts no
other run after it; a worker waiting for work only notes it. In this process the
`KeyboardInterrupt` propagates, and `interrupted_outcome` turns it into the outcome. On a
Dask worker, whose runs execute in threads that no signal reaches, `dask_interruptible`
runs each task and `stop_dask_runs` (sent to every worker by `Client.run`) raises
`KeyboardInterrupt` in the threads of a sweep's runs in progress (`serq.sweeps.stopping`).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from serq.diagnostics import Severity, render_concise
from serq.sweeps import stopping

if TYPE_CHECKING:
    from collections.abc import Callable

    from serq.diagnostics import Diagnostic
    from serq.sim.api import Compiled

CACHE_SIZE = 256  # compiled points kept per process (examples/vllm.sq: about 21 KiB each)


@dataclass(frozen=True, slots=True)
class RunTask:
    """One run: the run `index` in grid order, the program, the point and the seed."""

    index: int
    point: int
    text: str
    path: str
    sets: tuple[tuple[str, str], ...]
    seed: int
    horizon: float | None = None
    warmup: float | None = None
    arrivals: int | None = None
    fast_forward: bool = True
    defs: tuple[tuple[str, str], ...] = ()  # `--def NAME=EXPR`, the same at every point
    trace: str | None = None  # `--trace FILE`, an absolute path (workers run elsewhere)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What one run gave: the mean of each observation and gauge (in the report's order),
    or `error`, the diagnostic that stopped it on one line; `warning`, its first warning
    (a stalled engine, sessions that wait for each other, a rejected hold), on one line:
    the numbers of a run that finished describe a deployment that stopped moving, and the
    warning of one that failed often says why (a job of infinite work behind sessions
    that never drain)."""

    index: int
    observes: tuple[tuple[str, float], ...] = ()
    gauges: tuple[tuple[str, float], ...] = ()
    error: str | None = None
    warning: str | None = None
    # Ctrl-C stopped this run before it finished: `now` is its clock then (None: it
    # stopped before its simulation began), `found` what had stopped moving by then
    # (`serq.sim.Interrupted`); `started` False: it was never begun (its worker had
    # been interrupted already)
    interrupted: bool = False
    now: float | None = None
    found: tuple[Diagnostic, ...] = ()
    started: bool = True
    # an interrupted run that gave no answer within the grace after Ctrl-C: what became
    # of it ("its worker was terminated"); its clock and findings are unknown
    late: str = ""


_compiled: OrderedDict[tuple, Compiled | str] = OrderedDict()


def run_task(task: RunTask) -> RunOutcome:
    """Run `task` (compiling its point if this process has not yet) and return its outcome;
    a program error is an outcome with `error`, never an exception."""
    try:
        return _run(task)
    except Exception as error:  # a bug in serq, not in the program: a row that says so
        return RunOutcome(task.index, error=f"serq failed: {type(error).__name__}: {error}")


def _run(task: RunTask) -> RunOutcome:
    from serq.sim import api as sim_api

    compiled = _compile(task)
    if isinstance(compiled, str):
        return RunOutcome(task.index, error=compiled)
    if task.seed < 0:
        return RunOutcome(task.index, error=f"seed {task.seed}: seeds are whole numbers ≥ 0")
    seeded = replace(compiled, program=replace(compiled.program, seed=task.seed))
    report, diagnostics = sim_api.execute(seeded, fast_forward=task.fast_forward)
    warnings = [d for d in diagnostics if d.severity == Severity.WARNING]
    warning = _one_line(warnings) or None  # of a failed run too: often why it failed
    if report is None:
        failed = _one_line(diagnostics) or "the run failed without a diagnostic"
        return RunOutcome(task.index, error=failed, warning=warning)
    observes = tuple((name, o.mean) for name, o in report.observes.items())
    gauges = tuple((name, g.mean) for name, g in report.gauges.items())
    return RunOutcome(task.index, observes, gauges, warning=warning)


def remember(task: RunTask, compiled: Compiled) -> None:
    """Keep `compiled` as the program of `task`'s point in this process (a pool forked
    from it starts with it too)."""
    _compiled[_key(task)] = compiled


def _key(task: RunTask) -> tuple:
    return (
        task.text,
        task.path,
        task.sets,
        task.defs,
        task.horizon,
        task.warmup,
        task.arrivals,
        task.trace,
    )


def _compile(task: RunTask) -> Compiled | str:
    key = _key(task)
    found = _compiled.get(key)
    if found is not None:
        _compiled.move_to_end(key)
        return found
    from serq.sim import api as sim_api

    compiled, diagnostics = sim_api.compile_program(
        task.text,
        task.path,
        horizon=task.horizon,
        warmup=task.warmup,
        arrivals=task.arrivals,
        sets=dict(task.sets),
        defs=dict(task.defs),
        trace=task.trace,
    )
    result: Compiled | str = compiled if compiled is not None else _one_line(diagnostics)
    _compiled[key] = result
    if len(_compiled) > CACHE_SIZE:
        _compiled.popitem(last=False)
    return result


def _one_line(diagnostics: list) -> str:
    """The first error of `diagnostics` (else the first of them) as
    `file:line:column: error[code]: message`; "" for none."""
    errors = [d for d in diagnostics if d.severity >= Severity.ERROR] or diagnostics
    if not errors:
        return ""
    first = min(errors, key=lambda d: d.sort_key())
    more = len(errors) - 1
    return render_concise(first) + (f" (and {more} more)" if more else "")


def interrupted_outcome(task: RunTask, stop: BaseException) -> RunOutcome:
    """The outcome of `task`'s run stopped by Ctrl-C (`stop`, a `KeyboardInterrupt`; a
    `serq.sim.Interrupted` has the clock and the findings)."""
    now = getattr(stop, "now", None)
    found = tuple(getattr(stop, "found", ()))
    return RunOutcome(task.index, interrupted=True, now=now, found=found)


_stopped = False  # a pool worker that SIGINT reached: it begins no other run
POOL = ""  # the sweep a local pool worker's runs are registered under (one sweep a pool)
BEGUN, ENDED = 1, 2  # a run's mark in the pool's `progress`
_progress: Any = None  # the pool's shared marks, one byte a run index (`pool_worker`)


def pool_worker(progress: Any = None) -> None:
    """A local pool worker's initializer: SIGINT (Ctrl-C at the terminal, which reaches
    the whole process group, or the parent's forwarding) stops the run in progress, once,
    and the worker begins no other; the parent collects what the run had found
    (`interruptible`). `progress`, bytes shared with the parent, gets each run's index
    marked `BEGUN` as it begins and `ENDED` as it returns, so that the parent knows which
    runs a worker that never answered was in (`executors`)."""
    import signal

    global _progress
    _progress = progress
    signal.signal(signal.SIGINT, _on_interrupt)
    stopping.keep_dropped_interrupts()


def _on_interrupt(_signum: int, _frame: object) -> None:
    global _stopped
    first = not _stopped
    _stopped = True
    if first and stopping.running():
        stopping.asked()
        raise KeyboardInterrupt  # in the run: `simulate` makes it an `Interrupted`


def interruptible(function: Callable[[RunTask], RunOutcome], task: RunTask) -> RunOutcome:
    """`function(task)` in a pool worker initialised by `pool_worker`: a run that Ctrl-C
    stops is an interrupted outcome with what it had found, and a task given after
    Ctrl-C is not begun (an outcome with `started` False)."""
    return _stoppable(function, task, POOL, lambda: _stopped, _progress)


def dask_interruptible(
    function: Callable[[RunTask], RunOutcome], sweep: str, task: RunTask
) -> RunOutcome:
    """`function(task)` as a task of sweep `sweep` on a Dask worker, which
    `stop_dask_runs(sweep)` can interrupt: a run it stops is an interrupted outcome with
    what it had found; a task that begins after it is not begun (`started` False)."""
    stopping.keep_dropped_interrupts()
    return _stoppable(function, task, sweep, lambda: stopping.stopped(sweep))


def _stoppable(
    function: Callable[[RunTask], RunOutcome],
    task: RunTask,
    sweep: str,
    stopped: Callable[[], bool],
    progress: Any = None,
) -> RunOutcome:
    """`function(task)` registered as a run of `sweep` (`stopping.run_registered`), its
    interruption an outcome; not begun when `stopped()`, which is asked once registered
    (a stop before that would not reach the run). `progress`, if any, marks the run's
    index `BEGUN` and then `ENDED`."""

    def call() -> RunOutcome:
        if stopped():
            return RunOutcome(task.index, interrupted=True, started=False)
        if progress is None:
            return function(task)
        progress[task.index] = BEGUN
        try:
            return function(task)
        finally:
            progress[task.index] = ENDED

    try:
        return stopping.run_registered(sweep, call, task.index)
    except KeyboardInterrupt as stop:
        return interrupted_outcome(task, stop)


def stop_dask_runs(sweep: str) -> list[int]:
    """Stop sweep `sweep`'s runs on this Dask worker (called there by `Client.run`): those
    in progress are interrupted, once each, and those not begun will not begin. The
    indices of the runs interrupted."""
    return stopping.stop(sweep)
