"""Sweeps: one program run at every point of a grid of `let` values, with replications.

`plan` reads the program and the grid (`serq sweep --set NAME=SPEC`, see `grid`) and checks
both: the values parse as the `let`s they override, and the program compiles at every
point of the grid (`checks`: a bad value anywhere stops the sweep with its diagnostics,
naming the point, before anything runs). `execute` runs every
(point, seed) on an executor (`executors`: this process, a local process pool or a Dask
cluster) and collects the outcomes into a `SweepResult` in grid order (`results`), so the
result is the same whatever ran it. A run that fails is a row with its error. Ctrl-C
stops the runs and returns the rows already done, with `complete` False.

From Python, `serq.sweep(path, sets={"lambda": "0.5:0.9:0.1"}, seeds=5)` does both.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from serq.diagnostics import Diagnostic, Severity, Span, codes, spelling
from serq.sweeps.checks import check_points
from serq.sweeps.grid import (
    MAX_RUNS,
    Axis,
    Point,
    parse_axes,
    points,
    repeated_sets,
    spec_sources,
)
from serq.sweeps.results import InterruptedRun, SweepResult, collect, read_points
from serq.sweeps.worker import RunOutcome, RunTask
from serq.vocabulary import SEED_MAX, SEED_MIN

__all__ = ["InterruptedRun", "Plan", "SweepResult", "execute", "plan", "read_points", "sweep"]


@dataclass(frozen=True)
class Plan:
    """A checked sweep: the program, its grid, the seeds, and one task per run in grid
    order (point by point, the seeds of a point in the order given)."""

    path: str
    text: str
    axes: tuple[Axis, ...]
    grid: tuple[Point, ...]
    seeds: tuple[int, ...]
    tasks: tuple[RunTask, ...]


def plan(
    text: str,
    path: str,
    sets: Mapping[str, Any] | Iterable[tuple[str, Any]] = (),
    *,
    seeds: int | Sequence[int] | None = None,
    horizon: float | None = None,
    warmup: float | None = None,
    arrivals: int | None = None,
    fast_forward: bool = True,
    defs: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    trace: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Plan | None, list[Diagnostic], dict[str, str]]:
    """The sweep of the program `text` (from `path`) over `sets` (a let's name to its
    values: list or range text, a number, or a sequence), with `seeds` (N: seeds 1..N; a
    sequence: those; None: the program's own seed), the expression definitions' bodies
    `defs` (`--def`, the same at every point), the run settings given and `trace`
    (`--trace`, relative to the current directory); its
    diagnostics; and the texts they point into. The plan is None when there is an error,
    at any point of the grid (see `checks`); `progress` is called with the points checked
    and their count as the check goes."""
    from serq import api
    from serq.sweeps import worker

    pairs = list(sets.items()) if isinstance(sets, Mapping) else list(sets)
    bodies = list(defs.items()) if isinstance(defs, Mapping) else list(defs)
    repeated, known = repeated_sets(pairs)
    more, texts = api.repeated_overrides("--def", bodies)
    if repeated or more:
        return None, [*repeated, *more], {**known, **texts}
    axes = parse_axes(pairs)
    if axes and isinstance(axes[0], Diagnostic):
        return None, list(axes), spec_sources(pairs)  # type: ignore[arg-type]
    many = _too_many_runs(path, axes, seeds)  # type: ignore[arg-type]
    if many is not None:
        return None, [many], {}
    grid = points(axes)  # type: ignore[arg-type]
    problems, known = _value_problems(text, path, axes)  # type: ignore[arg-type]
    if problems:
        return None, problems, known
    settings = {"horizon": horizon, "warmup": warmup, "arrivals": arrivals, "trace": trace}
    checks = check_points(text, path, grid, settings, dict(bodies), worker.CACHE_SIZE, progress)
    if not checks.ok:
        return None, checks.diagnostics, checks.known
    diagnostics, known = checks.diagnostics, checks.known
    compiled = checks.compiled[0]
    if seeds is None:
        seed_list: tuple[int, ...] = (compiled.program.seed,)
    elif isinstance(seeds, int):
        seed_list = tuple(range(1, seeds + 1))
    else:
        seed_list = tuple(seeds)
    if not seed_list or any(
        isinstance(s, bool) or not isinstance(s, int) or not SEED_MIN <= s <= SEED_MAX
        for s in seed_list
    ):
        where = Span.point(path, 0, 1, 1)
        message = (
            f"seeds {_shown(seeds)}: a sweep needs at least one seed, each a whole number "
            f"from {SEED_MIN} to {SEED_MAX}"
        )
        return None, [*diagnostics, Diagnostic.error(codes.CONSTANT, where, message)], known
    twice = repeated_seed(seed_list)
    if twice is not None:  # the same runs again, taken for replications
        where = Span.point(path, 0, 1, 1)
        message = (
            f"seeds {_shown(seeds)}: seed {twice} is listed twice, and a repeated seed repeats its "
            "runs, which the intervals would count as independent replications"
        )
        return None, [*diagnostics, Diagnostic.error(codes.CONSTANT, where, message)], known
    tasks = tuple(
        RunTask(
            p.index * len(seed_list) + k,
            p.index,
            text,
            path,
            p.sets,
            seed,
            horizon,
            warmup,
            arrivals,
            fast_forward,
            tuple(bodies),
            None if trace is None else os.path.abspath(trace),
        )
        for p in grid
        for k, seed in enumerate(seed_list)
    )
    for task in tasks[:: len(seed_list)]:  # the points checked are compiled already
        if task.point in checks.compiled:
            worker.remember(task, checks.compiled[task.point])
    return Plan(path, text, tuple(axes), tuple(grid), seed_list, tasks), diagnostics, known  # type: ignore[arg-type]


def execute(
    sweep_plan: Plan,
    executor: object = None,
    jobs: int = 1,
    on_outcome: Callable[[RunOutcome], None] | None = None,
) -> SweepResult:
    """Run every task of `sweep_plan` on `executor` (see `executors.stream`; `jobs` sizes
    the local pool), calling `on_outcome` as each run finishes, and return the results in
    grid order. Ctrl-C stops it: the result then holds the runs done, `complete` False,
    and in `interrupted` each run that was in progress, with its clock and what had
    stopped moving by then (in this process, the local pool or on Dask: see `executors`).
    A local pool whose worker was killed from outside (out of memory) stops the same way,
    with `broken` saying so. A Dask scheduler that cannot be reached raises
    `executors.SchedulerUnreachable`, and a local pool that cannot be started (no shared
    memory, no process) `executors.WorkersUnavailable`, both `OSError`s."""
    from concurrent.futures import BrokenExecutor
    from dataclasses import replace

    from serq.sweeps.executors import stream

    outcomes: dict[int, RunOutcome] = {}
    interrupted: dict[int, RunOutcome] = {}

    def take(outcome: RunOutcome) -> None:
        if outcome.interrupted:  # a run Ctrl-C stopped: why it had not finished
            if outcome.started and outcome.index not in outcomes:
                interrupted[outcome.index] = outcome
        elif outcome.index not in outcomes:
            outcomes[outcome.index] = outcome
            if on_outcome is not None:
                on_outcome(outcome)

    complete, broken = True, ""
    runs = stream(sweep_plan.tasks, executor, jobs)
    try:
        for outcome in runs:
            take(outcome)
    except BrokenExecutor:  # a worker killed from outside (out of memory, a signal)
        complete = False
        broken = (
            "a worker process ended abruptly (killed by a signal, perhaps for lack of "
            "memory), so the sweep stopped"
        )
    except KeyboardInterrupt as stop:
        complete = False
        if getattr(runs, "gi_frame", None) is not None:  # Ctrl-C here, between two outcomes:
            try:  # the stream stops its runs in progress and yields what they say
                outcome = runs.throw(stop)
                while True:
                    take(outcome)
                    outcome = next(runs)
            except (KeyboardInterrupt, StopIteration):
                pass
    finally:
        close = getattr(runs, "close", None)
        if close is not None:
            close()
    complete = complete and len(outcomes) == len(sweep_plan.tasks)
    result = collect(sweep_plan.grid, sweep_plan.seeds, outcomes, complete, interrupted)
    return replace(result, broken=broken) if broken else result


def _too_many_runs(path: str, axes: Sequence[Axis], seeds: object) -> Diagnostic | None:
    """The error of a sweep of more than `MAX_RUNS` runs (a typo: `--seeds 1000000000`, or
    two fine ranges), found before the points and the seeds are made, or None."""
    count = 1
    for axis in axes:
        count *= len(axis.texts)
    replications = seeds if isinstance(seeds, int) else 1
    if isinstance(seeds, Sequence):
        replications = len(seeds)
    if count * max(replications, 1) <= MAX_RUNS:
        return None
    message = (
        f"the sweep would be {count:,} point{'s' * (count != 1)} × {replications:,} "
        f"seed{'s' * (replications != 1)}, more than {MAX_RUNS:,} runs"
    )
    return Diagnostic.error(
        codes.CONSTANT,
        Span.point(path, 0, 1, 1),
        message,
        help="one sweep runs at most that many (its plan is held whole): sweep fewer values "
        "or fewer seeds, or split it into several sweeps",
    )


def _shown(seeds: object) -> str:
    """`seeds` as a message shows them: a long list cut short."""
    if isinstance(seeds, Sequence) and len(seeds) > 8:
        return "[" + ", ".join(map(str, seeds[:4])) + f", ... ({len(seeds):,} seeds)]"
    return repr(seeds)


def repeated_seed(seeds: Sequence[int]) -> int | None:
    """The first seed of `seeds` that an earlier one repeats, if any."""
    seen: set[int] = set()
    for seed in seeds:
        if seed in seen:
            return seed
        seen.add(seed)
    return None


def sweep(
    path: str | None = None,
    sets: Mapping[str, Any] | None = None,
    seeds: int | Sequence[int] | None = None,
    executor: object = None,
    *,
    source: str | None = None,
    jobs: int | None = None,
    horizon: float | None = None,
    warmup: float | None = None,
    arrivals: int | None = None,
    fast_forward: bool = True,
    defs: Mapping[str, str] | None = None,
    trace: str | os.PathLike | None = None,
    on_outcome: Callable[[RunOutcome], None] | None = None,
) -> SweepResult:
    """Run the program file `path` (or the text `source`) at every point of `sets` (a
    let's name to its values: `"0.5:0.9:0.1"`, `"1,2,4"`, `[1, 2, 4]`) with `seeds`
    replications (N: seeds 1..N; a list: those seeds; None: the program's seed), and
    `defs` giving expression definitions other bodies (`--def`) at every point, and
    `trace` a file for the program's trace replay to read instead of the one it names
    (`--trace`, relative to the current directory).

    `executor` is None (a local process pool of `jobs` workers, default the CPU count; 1
    runs here), a `concurrent.futures.Executor`, a `distributed.Client` or a Dask scheduler
    address. Ctrl-C returns the runs done so far (`complete` False); what each run then in
    progress had found stopped (`interrupted`) is warned of as a `serq.RunWarning`.

    The numbers may be numpy's (a list of seeds, `np.linspace(...)` as a let's values).

    Raises:
        ValueError: the file cannot be read, a value is not one, a seed is out of range,
        the sweep has more than `grid.MAX_RUNS` runs, or the program does not compile at
        some point of the grid (nothing ran); the message is the rendered diagnostics,
        naming the points.
        TypeError: an argument is not the kind of thing it takes (`serq.sim.arguments`):
        the message names it."""
    from serq import api
    from serq.sim import api as sim_api
    from serq.sim import arguments as given
    from serq.sweeps.executors import default_jobs

    path, source = given.path("sweep", path), given.source("sweep", source)
    if (path is None) == (source is None):
        raise ValueError("sweep takes a path or a source, not both and not neither")
    horizon = given.time("sweep", "horizon", horizon)
    warmup = given.time("sweep", "warmup", warmup)
    arrivals = given.whole("sweep", "arrivals", arrivals)
    sets, defs = given.sets("sweep", sets, many=True), given.defs("sweep", defs)
    seeds, jobs = given.seeds("sweep", seeds), given.jobs("sweep", jobs)
    trace = given.path("sweep", trace, "trace")
    if source is None:
        loaded = api.read_source(path)  # type: ignore[arg-type]
        if isinstance(loaded, Diagnostic):
            raise ValueError(sim_api.render([loaded], {}))
        text, file = loaded, path
    else:
        text, file = source, "<input>"
    with spelling.python():  # the messages name the arguments, not `serq sweep`'s options
        checked, diagnostics, known = plan(
            text,
            file,
            sets or {},
            seeds=seeds,
            horizon=horizon,
            warmup=warmup,
            arrivals=arrivals,
            fast_forward=fast_forward,
            defs=defs or {},
            trace=trace,
        )
        if checked is None:
            raise ValueError(sim_api.render(diagnostics, known))
    result = execute(checked, executor, jobs or default_jobs(), on_outcome)
    for run in result.interrupted:  # why a run that seemed to hang did, as `serq.run` says
        for found in named(run):
            texts = sim_api.sources(file, text, dict(run.point.sets), [found], defs)
            warnings.warn(sim_api.render([found], texts), sim_api.RunWarning, stacklevel=2)
        if run.late:
            from serq.sweeps.checks import describe

            where = f"the run at ({describe(run.point)}), seed {run.seed}"
            warnings.warn(f"{where} {late(run)}", sim_api.RunWarning, stacklevel=2)
    return result


def late(run: InterruptedRun) -> str:
    """What to say of an interrupted `run` that gave no answer in time (`run.late`)."""
    from serq.sweeps.executors import GRACE

    return f"gave no answer within {GRACE:g} s of Ctrl-C, so its clock is unknown: {run.late}"


def named(run: InterruptedRun) -> list[Diagnostic]:
    """What the interrupted `run` had found, each with a note naming its point and seed."""
    from dataclasses import replace

    from serq.sweeps.checks import describe

    where = f"in the run at ({describe(run.point)}), seed {run.seed}"
    return [replace(d, notes=(*d.notes, where)) for d in run.found]


def _value_problems(
    text: str, path: str, axes: Sequence[Axis]
) -> tuple[list[Diagnostic], dict[str, str]]:
    """The diagnostics of the swept values (a let the program does not declare, a value
    that is not one expression: each distinct value checked once, on the parse alone) and
    the texts they point into."""
    from serq import api

    parsed = api.parse_source(text, path)
    known = {path: text}
    if any(d.severity >= Severity.ERROR for d in parsed.diagnostics):
        return [], known  # the compile of the first point reports them
    problems: list[Diagnostic] = []
    for axis in axes:
        for value in dict.fromkeys(axis.texts):
            _, found = api.override_lets(parsed.module, {axis.name: value})
            if found:
                file, set_text = api.set_source(axis.name, value)
                known[file] = set_text
                problems.extend(found)
                break
    return problems, known
