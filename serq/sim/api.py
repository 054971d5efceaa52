"""Compile and run from Python: `serq.compile(...)` and `serq.run(program)`.

The pair mirrors the reference's `pyserq.compile` / `pyserq.run`, so a notebook can
switch between them: `compile` reads a file (or takes text), links it with the run's
overrides and raises `ValueError` with the rendered diagnostics when it cannot;
`run` simulates and returns a `serq.report.Report`. The command line uses the
non-raising halves, `compile_program` and `execute`, which return diagnostics instead.
"""

from __future__ import annotations

import gc
import math
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from serq import api, ir
from serq.diagnostics import (
    Diagnostic,
    Severity,
    Span,
    codes,
    number_text,
    render_full,
    spelling,
)
from serq.link.flood import arrival_flood
from serq.report.model import Report
from serq.sim.recorder import StatsRecorder
from serq.vocabulary import ARRIVALS_MAX, SEED_MAX, SEED_MIN


@dataclass(frozen=True, slots=True)
class Compiled:
    """A linked program ready to run: its IR with the run's settings (`horizon`, `warmup`,
    `seed`, `arrivals`) overridden as asked, the directory a relative trace is read
    against, the warnings of compiling it, whether step engines fast-forward, and whether
    sessions run as generated code (`codegen`, `serq.sim.compiled`) or on the interpreter."""

    program: ir.Program
    base_dir: str = "."
    path: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    fast_forward: bool = True
    codegen: bool = True

    def to_json(self, indent: int | None = 2) -> str:
        """The IR as JSON (`serq ir`)."""
        return ir.to_json(self.program, indent=indent)

    @classmethod
    def from_json(cls, text: str, base_dir: str = ".") -> Compiled:
        """A program from its IR JSON; a relative trace is read against `base_dir`."""
        return cls(ir.from_json(text), base_dir)


def _no_trace_to_replace(trace: str) -> Diagnostic:
    """The error of a trace given (`--trace`, `trace=`) for a program that replays none:
    it points at the option (`serq.api.is_override_error`), so the command line exits
    with its usage status."""
    option = spelling.option("trace", value=trace)
    return Diagnostic.error(
        codes.IO,
        Span(spelling.source_name("trace"), 0, len(option), 1, 1, 1, len(option) + 1),
        f"`{option}` gives a trace to replay, but the program replays none",
        help='a trace replay names its trace in the workload, `trace "FILE";`: '
        f"`{spelling.option('trace')}` replaces that file",
    )


def _in_file(found: Any, path: str | None) -> list[Diagnostic]:
    """`found`, where a finding about a program with no construct to point at (a file of a
    `run` block alone, `serq.sim._fallback_span`) points at the start of the file `path`."""
    out = []
    for d in found:
        if d.span.file == "<program>" and path is not None:
            d = replace(d, span=Span.point(path, 0, 1, 1))
        out.append(d)
    return out


def compile_program(
    text: str,
    path: str = "<input>",
    *,
    seed: int | None = None,
    horizon: float | None = None,
    warmup: float | None = None,
    arrivals: int | None = None,
    sets: Mapping[str, str | float] | None = None,
    defs: Mapping[str, str] | None = None,
    trace: str | None = None,
) -> tuple[Compiled | None, list[Diagnostic]]:
    """The program `text` (the contents of `path`) linked with the overrides `sets`
    (program arguments and `let`s) and `defs` (expression definitions' bodies), the run
    settings given (None keeps the program's) and `trace`, a file the program's trace
    replay reads instead of the one it names (relative to the current directory, as the
    command line's `--trace` is), and every diagnostic; the program is None when there is
    an error (a `trace` for a program that replays none is one)."""
    program, diagnostics = api.link_source(text, path, sets=sets, defs=defs)
    if program is None or any(d.severity >= Severity.ERROR for d in diagnostics):
        return None, diagnostics
    if trace is not None:
        if program.trace is None:
            return None, [*diagnostics, _no_trace_to_replace(trace)]
        # read when the run starts, from where the caller is now (a relative `trace`
        # names a file of the current directory, not of the program's)
        program = replace(program, trace=replace(program.trace, path=os.path.abspath(trace)))
    settings = {"seed": seed, "horizon": horizon, "warmup": warmup, "arrivals": arrivals}
    given = {k: v for k, v in settings.items() if v is not None}
    program = replace(program, **given)
    problem = _settings_problem(program)
    if problem is not None:
        return None, [*diagnostics, _settings_error(problem, given, text, path)]
    flood = arrival_flood(program)  # again: the horizon may be the command line's now
    if flood is not None:
        return None, [*diagnostics, Diagnostic.error(codes.CONSTANT, *flood[:2], help=flood[2])]
    base = os.path.dirname(path) if path and not path.startswith("<") else "."
    return Compiled(program, base or ".", path, tuple(diagnostics)), diagnostics


def execute(
    compiled: Compiled,
    *,
    progress: Callable[[float], None] | None = None,
    fast_forward: bool | None = None,
    check_invariants: bool = False,
    codegen: bool | None = None,
    notice: Callable[[Diagnostic], None] | None = None,
) -> tuple[Report | None, list[Diagnostic]]:
    """Run `compiled` and return its report and the run's diagnostics; the report is None
    when the run failed. `progress` is called with the clock now and then; `notice` with
    a livelock's warning as soon as the run finds one (the run goes on to its horizon,
    and the diagnostics at the end have it again, with its count); `fast_forward`
    (None: the program's setting) lets step engines advance quiet iterations at once;
    `codegen` (None: the program's setting) runs sessions as generated code, False on the
    interpreter (the same report); a run whose clock crawls too slowly ever to reach the
    horizon fails (`serq.sim.pace`);
    `check_invariants` checks the simulator's invariants after every event (a debug mode:
    pools within their caps, time never going back, sessions conserved)."""
    from serq.sim import Interrupted, collector, simulate  # the simulator loads only when run
    from serq.sim.pace import Pace

    program = compiled.program
    if program.horizon is not None:  # a clock that crawls stops the run (`serq.sim.pace`)
        progress = Pace(program.horizon, progress)
    recorder = StatsRecorder(program, program.warmup, progress)
    if fast_forward is None:
        fast_forward = compiled.fast_forward
    if codegen is None:
        codegen = compiled.codegen
    try:
        with collector.for_runs():  # (the run's own MemoryError is its error: `simulate`)
            outcome = simulate(
                program,
                recorder=recorder,
                base_dir=compiled.base_dir,
                fast_forward=fast_forward,
                check_invariants=check_invariants,
                codegen=codegen,
                notice=notice,
            )
        diagnostics = _in_file(outcome.errors, compiled.path)
        if any(d.severity >= Severity.ERROR for d in diagnostics):
            return None, diagnostics
        return recorder.finish(outcome), diagnostics
    except Interrupted as stop:  # Ctrl-C: a clock that had stopped is one more thing to say
        if isinstance(progress, Pace) and progress.still and progress.last == stop.now:
            stop.found.append(_clock_stopped(program, progress.still, stop.now))
        stop.found[:] = _in_file(stop.found, compiled.path)
        raise
    except MemoryError:  # out of memory outside the run's loop: said once it is let go of
        pass
    except Exception as error:  # a bug in serq, not in the program: say so, never raise
        where = Span.point(compiled.path or "<input>", 0, 1, 1)
        message = f"serq failed while running the program: {type(error).__name__}: {error}"
        return None, [Diagnostic.error(codes.INTERNAL, where, message)]
    from serq.sim import _fallback_span
    from serq.sim.memory import out_of_memory

    del recorder  # with the samples it kept
    gc.collect()
    return None, _in_file([out_of_memory(_fallback_span(program), None, None)], compiled.path)


def _clock_stopped(program: ir.Program, events: int, now: float) -> Diagnostic:
    """The note of a run interrupted after at least `events` events at the instant `now`."""
    from serq.sim import _fallback_span
    from serq.sim.core import INSTANT_LIMIT

    return Diagnostic.note(
        codes.STALL,
        _fallback_span(program),
        f"the clock had not moved for at least {events:,} events when the run was "
        f"interrupted at t = {now:g}: a burst at one instant (a large batch), or work that "
        "takes no time repeated, which the run stops at "
        f"{INSTANT_LIMIT:,} events at one instant",
        help="a run at a ps stage of capacity inf, a time too small to move a clock that "
        "large, or a loop of runs of no work, repeated, keeps the clock where it is",
    )


def python_source(compiled: Compiled) -> tuple[str | None, list[Diagnostic]]:
    """The Python source the compiled path runs `compiled` as (`serq run --emit-python`),
    and any diagnostic of building the run (an unreadable trace, say); None when the
    program runs on the interpreter."""
    from serq.sim import compiled as generated
    from serq.sim.errors import SimError
    from serq.sim.world import World

    program = compiled.program
    recorder = StatsRecorder(program, program.warmup)
    where = Span.point(compiled.path or "<input>", 0, 1, 1)
    try:
        world = World(
            program,
            recorder,
            program.seed,
            program.warmup,
            program.arrivals,
            compiled.base_dir,
            False,
            compiled.fast_forward,
        )
        if not generated.install(world, straight=False):
            return None, []
    except SimError as error:
        return None, [error.diagnostic(where)]
    return world.source, []


def compile(
    path: str | None = None,
    *,
    source: str | None = None,
    seed: int | None = None,
    horizon: float | None = None,
    warmup: float | None = None,
    arrivals: int | None = None,
    sets: Mapping[str, str | float] | None = None,
    defs: Mapping[str, str] | None = None,
    trace: str | os.PathLike | None = None,
    fast_forward: bool = True,
    codegen: bool = True,
) -> Compiled:
    """The program file `path`, or the program text `source`, linked with the overrides
    of `serq run` (`sets`: the values of program arguments, `args.number("name", d)`, or
    of `let`s, by name, as numbers or expression text; `defs`: the bodies of expression
    definitions by name, as text; `trace`: a file for the program's trace replay to read
    instead of the one it names, relative to the current directory, `--trace`);
    `fast_forward=False` steps every step-engine iteration one at a time;
    `codegen=False` runs the sessions on the interpreter instead of generated code
    (`serq run --no-compile`; the same report).

    `path` is a `str` or a `pathlib.Path`; the numbers may be numpy's (`seed` and
    `arrivals` whole numbers, `horizon` and `warmup` real ones; never a bool).

    Raises:
        ValueError: the file cannot be read or the program has errors; the message is
        the diagnostics as `serq check` renders them.
        TypeError: an argument is not the kind of thing it takes (`serq.sim.arguments`):
        the message names it."""
    from serq.sim import arguments as given

    path, source = given.path("compile", path), given.source("compile", source)
    if (path is None) == (source is None):
        raise ValueError("compile takes a path or a source, not both and not neither")
    seed, arrivals = (
        given.whole("compile", "seed", seed),
        given.whole("compile", "arrivals", arrivals),
    )
    horizon = given.time("compile", "horizon", horizon)
    warmup = given.time("compile", "warmup", warmup)
    sets, defs = given.sets("compile", sets), given.defs("compile", defs)
    trace = given.path("compile", trace, "trace")
    if source is None:
        loaded = api.read_source(path)
        if isinstance(loaded, Diagnostic):
            raise ValueError(render_full(loaded))
        text, file = loaded, path
    else:
        text, file = source, "<input>"
    with spelling.python():  # the messages name the arguments, not `serq run`'s options
        compiled, diagnostics = compile_program(
            text,
            file,
            seed=seed,
            horizon=horizon,
            warmup=warmup,
            arrivals=arrivals,
            sets=sets,
            defs=defs,
            trace=trace,
        )
        if compiled is None:
            known = sources(file, text, sets, diagnostics, defs, trace)
            raise ValueError(render(diagnostics, known))
    return replace(compiled, fast_forward=fast_forward, codegen=codegen)


def read_trace(path: str | os.PathLike) -> list[list[tuple[float, float, float, float]]]:
    """The sessions of the trace file at `path` (relative to the current directory), each
    a list of its turns `(new, out, think, forced)` in the order a replay takes them, read
    as a run reads a `trace` (`forced` 0 where the file has no such column), as pyserq's
    `read_trace` gives them.

    Raises:
        ValueError: the file cannot be read or a row is malformed; the message names the
        file, and the line and column of a bad row.
        TypeError: `path` is not a file name (a `str` or a `pathlib.Path`)."""
    from serq.sim import arguments as given
    from serq.sim.errors import SimError
    from serq.sim.trace import read_trace as read_table

    name = given.path("read_trace", path)
    if name is None:
        raise TypeError("read_trace: `path` is a file name (str or Path), not None")
    try:
        table = read_table(ir.Trace(name, False, Span.point(name, 0, 1, 1)), ".")
    except SimError as error:
        raise ValueError(error.message) from None
    return [table.turns(i) for i in range(len(table))]


def run(
    program: Compiled,
    *,
    progress: Callable[[float], None] | None = None,
    fast_forward: bool | None = None,
    check_invariants: bool = False,
    codegen: bool | None = None,
) -> Report:
    """Run `program` (from `compile`) and return its report; `fast_forward` overrides the
    setting `compile` gave (True: step engines advance quiet iterations at once, with
    the same results; False: one iteration at a time); `check_invariants` checks the
    simulator's invariants after every event (`execute`); `codegen` overrides whether
    sessions run as generated code (True) or on the interpreter (False).

    Warns:
        RunWarning: the run finished with a warning (an engine or a pool that stopped
        moving, a job of infinite work, a draw outside its law's parameters); the message
        is the rendered diagnostic.

    Raises:
        ValueError: the run failed (a guard that is not 0 or 1, arrivals not drained by
        the horizon, ...); the message is the rendered diagnostics.
        KeyboardInterrupt: the run was interrupted (a notebook's stop button), as
        `serq.sim.Interrupted`; what it had found stopped by then (a livelock, an engine
        or a stage that stopped serving, sessions waiting at the pools for ever) is
        warned of first, as at the end of a run."""
    if not isinstance(program, Compiled):
        from serq.sim.arguments import kind

        raise TypeError(f"run takes the program `serq.compile` returns, not {kind(program)}")
    noticed: list[Diagnostic] = []
    try:
        report, diagnostics = execute(
            program,
            progress=progress,
            fast_forward=fast_forward,
            check_invariants=check_invariants,
            codegen=codegen,
            notice=noticed.append,
        )
    except KeyboardInterrupt as stop:  # why a run that seemed to hang did: say it, then stop
        _warn(program, getattr(stop, "found", noticed))  # `serq.sim.Interrupted`
        raise
    if report is None:
        raise ValueError(render(diagnostics, _sources_of(program, diagnostics)))
    _warn(program, diagnostics)  # warnings of a run that finished (W-stall, W-draw, ...)
    return report


def _sources_of(program: Compiled, diagnostics: list[Diagnostic]) -> dict[str, str]:
    """The texts `diagnostics` point into: `program`'s file and its libraries."""
    path = program.path or "<input>"
    text = api.read_source(path) if program.path else None
    return sources(path, text, None, diagnostics) if isinstance(text, str) else {}


def _warn(program: Compiled, diagnostics: list[Diagnostic]) -> None:
    """Each of `diagnostics` as a `RunWarning` from `run`'s caller."""
    if diagnostics:
        known = _sources_of(program, diagnostics)
        for d in diagnostics:
            warnings.warn(render([d], known), RunWarning, stacklevel=3)


class RunWarning(UserWarning):
    """A run finished with a warning: part of it stopped moving (`W-stall`, `W-deadlock`)
    or a draw had parameters its law does not have (`W-draw`); the message is the rendered
    diagnostic, and the report is returned as usual."""


def sources(
    path: str,
    text: str | None,
    sets: Mapping[str, str | float] | None,
    diagnostics: Iterable[Diagnostic],
    defs: Mapping[str, str] | None = None,
    trace: str | None = None,
) -> dict[str, str]:
    """The texts the renderer needs for `diagnostics`: the program's, the `--set` and
    `--def` values', the `--trace` option's and any library a diagnostic points into."""
    known = {} if text is None else {path: text}
    if trace is not None:
        known[spelling.source_name("trace")] = spelling.option("trace", value=trace)
    for name, value in (sets or {}).items():
        file, set_text = api.set_source(name, value)
        known[file] = set_text
    for name, body in (defs or {}).items():
        file, def_text = api.def_source(name, body)
        known[file] = def_text
    api.library_sources(known, diagnostics)
    return known


def render(diagnostics: Iterable[Diagnostic], known: Mapping[str, str]) -> str:
    """`diagnostics` in full, without color, one after another."""
    ordered = sorted(diagnostics, key=Diagnostic.sort_key)
    return "\n\n".join(render_full(d, known.get(d.span.file), sources=known) for d in ordered)


def is_library(program: ir.Program) -> bool:
    """Whether `program` declares nothing that runs (no stage, pool, gauge, claim, arrival,
    trace or statement), as a library (a file of `def`s and `use`s, meant to be `use`d)
    is, or a file of `let`s alone."""
    return not (
        any(program.blocks)
        or program.stages
        or program.pools
        or program.gauges
        or program.claims
        or program.arrival is not None
        or program.trace is not None
    )


def _settings_problem(program: ir.Program) -> tuple[tuple[str, ...], str, str] | None:
    """What is wrong with the run settings of `program` once the command line's overrides
    are in: the settings concerned (the first is where to point), a message and a help,
    or None. The run block's own values were checked where they are written
    (`serq.link.lower`); these are the same rules."""
    horizon, warmup = program.horizon, program.warmup
    if horizon is None and is_library(program):
        return (
            ("horizon",),
            "there is nothing to run: the file declares no stage, pool, workload, session "
            "or server, and no horizon",
            "a file of `def`s and `use`s is a library: run a program that `use`s it",
        )
    if horizon is None:
        return (
            ("horizon",),
            "the run has no horizon",
            "give one: `run { horizon T; }` or --horizon T",
        )
    if not horizon > 0:
        return ("horizon",), f"the horizon is {_num(horizon)}", "the horizon is a positive time"
    if horizon == math.inf and program.arrivals is None:
        return (
            ("horizon", "arrivals"),
            "the horizon is inf and no `arrivals` bounds the run: it would never end",
            "give a finite horizon, or bound the run with `arrivals N` (--arrivals N)",
        )
    if not warmup >= 0:
        said = "is negative" if warmup < 0 else "is not a number"  # NaN
        return ("warmup",), f"warmup {_num(warmup)} {said}", "the warm-up is a time >= 0"
    if not warmup < horizon:
        return (
            ("warmup", "horizon"),
            f"warmup {_num(warmup)} is not below the horizon {_num(horizon)}",
            "the measured interval is [warmup, horizon]: the warm-up must be shorter",
        )
    if not SEED_MIN <= program.seed <= SEED_MAX:
        return (
            ("seed",),
            f"the seed {program.seed} is out of range",
            f"a seed is a whole number from {SEED_MIN} to {SEED_MAX}",
        )
    if program.arrivals is not None and not 1 <= program.arrivals <= ARRIVALS_MAX:
        return (
            ("arrivals",),
            f"{program.arrivals} arrivals",
            f"`arrivals` counts sessions: a whole number from 1 to {ARRIVALS_MAX}",
        )
    return None


def _settings_error(
    problem: tuple[tuple[str, ...], str, str], given: Mapping[str, object], text: str, path: str
) -> Diagnostic:
    """The `E-constant` of the run settings' `problem` (`_settings_problem`), where
    `given` are the overrides (the command line's, or `compile`'s keywords): the message
    names those among the settings concerned, and the error points at the first of them
    the program writes itself, else at its run block, else at `fn main` or the file."""
    keys, message, help_ = problem
    flags = [f"`{spelling.option(key, value=_num(given[key]))}`" for key in keys if key in given]
    if flags:
        message += f" (with {' and '.join(flags)})"
    written, block, main = _run_block_spans(text, path)
    mine = [written[k] for k in keys if k in written and k not in given]
    where = mine[0] if mine else block or main or Span.point(path, 0, 1, 1)
    return Diagnostic.error(codes.CONSTANT, where, message, help=help_)


def _run_block_spans(text: str, path: str) -> tuple[dict[str, Span], Span | None, Span | None]:
    """Where the program at `path` writes its run settings: each setting's value (the
    last written), the last run block's head, and the head of `fn main` (None: absent)."""
    from serq.syntax import ast

    module = api.parse_source(text, path).module
    written: dict[str, Span] = {}
    block = None
    for item in module.all_items():
        if not isinstance(item, ast.RunSettings):
            continue
        block = Span(path, item.span.start, item.span.start + 3, *_head(item.span))
        for setting in item.settings:
            if isinstance(setting, ast.Option) and setting.value is not None:
                written[setting.key] = setting.value.span
    main = module.main.head if module.main is not None else None
    return written, block, main


def _head(span: Span) -> tuple[int, int, int, int]:
    """Line, column, end line and end column of the first three characters of `span`."""
    return span.line, span.column, span.line, span.column + 3


def _num(x: float) -> str:
    if isinstance(x, int):  # a seed or arrivals past any float (10**400) too
        return str(x)
    return number_text(x)
