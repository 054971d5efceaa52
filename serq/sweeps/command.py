"""`serq sweep FILE --set NAME=SPEC ... [--seeds N] [--out FILE]`: the command's body.

The output file's suffix and the optional packages it needs are checked first (exit 2),
then the grid and the program, at every point of the grid (diagnostics in full naming
the points, nothing runs; exit 2 for a `--set` that cannot be applied, as in every
command, 1 for the program's errors and values it cannot take). Then every run
executes on the local pool (`--jobs`, default the CPU count) or the Dask scheduler
(`--dask ADDRESS`, default `$SERQ_DASK_SCHEDULER`), with a progress bar and an ETA on
stderr when it is a terminal. Stdout gets a table of the points; `--out` the files.
Exit status: 0, or 1 when a run failed (its row says why) or a worker of the local
pool was killed from outside (the runs done are written), 130 after Ctrl-C (the runs
done are written, and each run that was in progress says, as `serq run` does when
interrupted, what had stopped moving by then and its clock, naming its point and seed).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

from serq.diagnostics import Diagnostic, Span, codes, print_diagnostics
from serq.diagnostics.render import shown_file
from serq.expand.loader import unreadable, unwritable

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
DASK_ENV = "SERQ_DASK_SCHEDULER"


def run_sweep(args: argparse.Namespace, color: bool | None) -> int:
    """Run `serq sweep` with the parsed `args`; return the exit status."""
    from serq import api
    from serq.sweeps import execute, plan
    from serq.sweeps.executors import (
        SchedulerUnreachable,
        WorkersUnavailable,
        default_jobs,
        describe,
    )

    file, loaded = api.read_program(args.file)
    if isinstance(loaded, Diagnostic):
        print_diagnostics([loaded], {}, file=sys.stderr, color=color)
        return EXIT_USAGE
    dask = args.dask or os.environ.get(DASK_ENV) or None
    unusable = _unusable(args.out, dask)
    if unusable is not None:
        print_diagnostics([unusable], {}, file=sys.stderr, color=color)
        return EXIT_USAGE
    seeds = args.seed_list if args.seed_list is not None else args.seeds
    checking = _CheckBar()
    try:
        checked, diagnostics, known = plan(
            loaded,
            file,
            args.set,
            seeds=seeds,
            horizon=args.horizon,
            warmup=args.warmup,
            arrivals=args.arrivals,
            fast_forward=args.fast_forward,
            defs=args.defs,
            trace=args.trace,
            progress=checking,
        )
    finally:
        checking.close()
    print_diagnostics(diagnostics, known, file=sys.stderr, color=color)
    if checked is None:
        return EXIT_USAGE if any(api.is_override_error(d) for d in diagnostics) else EXIT_ERRORS
    jobs = args.jobs or default_jobs()
    where = describe(dask, jobs)
    bar = _SweepBar(len(checked.tasks), where)
    start = time.monotonic()
    try:
        result = execute(checked, dask, jobs, bar.advance)
    except (SchedulerUnreachable, WorkersUnavailable) as error:
        bar.close()  # before the diagnostic, which the bar would otherwise overwrite
        if isinstance(error, SchedulerUnreachable):
            where = Span.point(f"<--dask {error.address}>", 0, 1, 1)
            if error.malformed:
                help = "a scheduler's address is `tcp://HOST:PORT`, as `dask scheduler` prints it"
            else:
                help = "is the scheduler running? `dask scheduler` prints its address"
        else:
            where = Span.point(file, 0, 1, 1)
            help = "`--jobs 1` runs the points in this process, one after the other"
        cannot = Diagnostic.error(codes.IO, where, str(error), help=help)
        print_diagnostics([cannot], {}, file=sys.stderr, color=color)
        return EXIT_USAGE
    finally:
        bar.close()
    elapsed = time.monotonic() - start
    from serq.cli import stdout_console

    # the files first: a table whose reader went away (`| head`, `>&-`) ends the command
    # (status 141, or 2), and the runs' results must not go with it
    written: list[Path] = []
    if args.out is not None:
        try:
            written = result.write(args.out)
        except OSError as error:
            message = f"cannot write `{args.out}`: {unreadable(error)}"
            failed = Diagnostic.error(codes.IO, Span.point(args.out, 0, 1, 1), message)
            print_diagnostics([failed], {}, file=sys.stderr, color=color)
            return EXIT_USAGE
    console = stdout_console(force_terminal=color, no_color=color is False)
    if not console.is_terminal:  # piped: the whole table, not cut at 80 columns
        console.width = max(console.width, 200)
    console.print(result.table(), highlight=False)
    done = len(result.runs)
    points, seeds = len(checked.grid), len(checked.seeds)
    shape = f"{points} point{'s' * (points != 1)} × {seeds} seed{'s' * (seeds != 1)}"
    summary = (
        f"serq sweep: {done} of {len(checked.tasks)} runs ({shape}) in {elapsed:.1f} s, {where}"
    )
    if result.failed:
        summary += f"; {result.failed} failed"
    _say_interrupted(result, args, loaded, color, file)
    if written:
        summary += "; wrote " + ", ".join(shown_file(str(p)) for p in written)
    print(summary, file=sys.stderr)
    if result.broken:
        print(f"serq sweep: {result.broken}; the runs done are kept", file=sys.stderr)
        return EXIT_ERRORS
    if not result.complete:
        print("serq sweep: interrupted; the runs done are kept", file=sys.stderr)
        return EXIT_INTERRUPTED
    return EXIT_ERRORS if result.failed else EXIT_OK


def _say_interrupted(
    result: Any, args: argparse.Namespace, text: str, color: bool | None, file: str | None = None
) -> None:
    """For each run Ctrl-C stopped in progress, what `serq run` says when interrupted:
    what had stopped moving (each diagnostic with a note naming the run's point and
    seed), then the run's line with its clock."""
    from serq.sim import api as sim_api
    from serq.sweeps import late, named
    from serq.sweeps.checks import describe

    for run in result.interrupted:
        where = f"the run at ({describe(run.point)}), seed {run.seed}"
        found = named(run)
        if found:
            sets, defs = dict(run.point.sets), dict(args.defs)
            sources = sim_api.sources(file or args.file, text, sets, found, defs)
            print_diagnostics(found, sources, file=sys.stderr, color=color)
        if run.late:
            print(f"serq sweep: {where} {late(run)}", file=sys.stderr)
            continue
        if run.now is None:
            at = " before its simulation began"
        else:
            at = f" at t = {run.now:g}"
        print(f"serq sweep: {where} was interrupted{at}", file=sys.stderr)


def _unusable(out: str | None, dask: str | None) -> Diagnostic | None:
    """Why the sweep cannot write `out` or reach `dask`, before it runs: a suffix it does
    not know, a directory that is missing or not writable, a file to write that is a
    directory or is not writable, or an optional package that is missing."""
    if out is not None:
        from serq.sweeps.results import SUFFIXES

        suffix = Path(out).suffix.lower()
        where = Span.point(out, 0, 1, 1)
        if suffix not in SUFFIXES:
            message = f"cannot write `{out}`: the suffix is none of {', '.join(SUFFIXES)}"
            return Diagnostic.error(codes.IO, where, message)
        target = Path(out)
        files: list[str | Path] = (
            [out]  # as written: a trailing separator says a directory
            if suffix == ".json"
            else [out, target.with_name(f"{target.stem}.runs{target.suffix}")]
        )
        for file in files:  # before the runs: found after them, every run was lost
            why = unwritable(file)
            if why is not None:
                shown = out if file is out else file
                return Diagnostic.error(codes.IO, where, f"cannot write `{shown}`: {why}")
        if suffix == ".parquet" and importlib.util.find_spec("pyarrow") is None:
            message = f"cannot write `{out}`: Parquet needs pyarrow"
            return Diagnostic.error(codes.IO, where, message, help="pip install 'serq-py[tables]'")
    if dask is not None and importlib.util.find_spec("distributed") is None:
        message = f"cannot reach the Dask scheduler `{dask}`: dask.distributed is not installed"
        where = Span.point(f"<--dask {dask}>", 0, 1, 1)
        return Diagnostic.error(codes.IO, where, message, help="pip install 'serq-py[dask]'")
    return None


def _counting_bar(label: str, unit: str | None, total: int, done: int = 0) -> tuple[Any, Any]:
    """A started progress bar on stderr, gone when stopped, that counts `done` of `total`
    (`unit` after the count) with the time taken and the time left: (bar, its task)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    counts = (MofNCompleteColumn(),) if unit is None else (MofNCompleteColumn(), TextColumn(unit))
    columns = (TextColumn(label), BarColumn(), *counts, TimeElapsedColumn())
    bar = Progress(
        *columns,
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=Console(file=sys.stderr),
        transient=True,
    )
    task = bar.add_task("", total=total, completed=done)
    bar.start()
    return bar, task


class _CheckBar:
    """A progress bar on stderr over the check of the grid's points, before any run (a
    grid of a million points takes an hour): shown when stderr is a terminal and the
    check has taken half a second, as `serq run`'s bar is, gone when it ends."""

    DELAY = 0.5  # seconds before the bar appears
    PERIOD = 0.1  # seconds between redraws

    def __init__(self) -> None:
        self.enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self._next = time.monotonic() + self.DELAY
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        clock = time.monotonic()
        if clock < self._next:
            return
        self._next = clock + self.PERIOD
        if self._bar is None:
            self._bar, self._task = _counting_bar(
                "checking the points before any run", None, total, done
            )
        self._bar.update(self._task, completed=done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


class _SweepBar:
    """A progress bar over the runs on stderr (runs done, elapsed, ETA), shown when stderr
    is a terminal."""

    def __init__(self, total: int, where: str) -> None:
        self._bar: Any = None
        if not getattr(sys.stderr, "isatty", lambda: False)():
            return
        self._bar, self._task = _counting_bar(f"sweep ({where})", "runs", total)

    def advance(self, _outcome: object) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
