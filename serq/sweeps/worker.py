"""One run of a sweep, as a worker process executes it.

A `RunTask` is everything a worker needs, in plain data that pickles: the program's text
and path (a `use`d library or a trace is read from that path on the worker, so a cluster's
workers must see the same files), the point's `--set` values, the `--def` bodies, the run
settings and the seed. `run_task` compiles the program once per point in each worker
process (a small cache keyed by the text, the values and the settings) and runs it with
the task's seed; what comes back is a `RunOutcome`: the run's mean of every observation
and gauge, or the error that stopped it, as one line.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from serq.diagnostics import Severity, render_concise

if TYPE_CHECKING:
    from serq.sim.api import Compiled

CACHE_SIZE = 8  # compiled points kept per worker process


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
    return (task.text, task.path, task.sets, task.defs, task.horizon, task.warmup, task.arrivals)


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


def ignore_interrupts() -> None:
    """A pool worker's initializer: Ctrl-C is the parent's to handle (it stops the pool)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
