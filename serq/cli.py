"""The `serq` command: `serq check FILE...`, `serq expand FILE`, `serq ir FILE`, `serq run FILE`,
`serq sweep FILE`, `serq plot RESULTS` (or `serq plot --dump DIR`), `serq explain [CODE]`,
`serq fmt FILE...`.

Exit status: 0 when every file is clean, 1 when any has an error, 2 on a usage
error or a file that cannot be read, 3 for `serq run --claims-fail` when a claim failed.
A `--set` or `--def` that cannot be applied is a usage error for every command that
takes it (`OVERRIDE_ERRORS`); a value the program cannot take is the program's error.
Whatever the input, the command reports diagnostics, never a Python traceback.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import io
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from serq import __version__
from serq.vocabulary import ARRIVALS_MAX, SEED_MAX, SEED_MIN

if TYPE_CHECKING:
    from serq import api
    from serq.diagnostics import Diagnostic, Severity, print_diagnostics, to_json
    from serq.report import Report


def _load(command: str | None = None) -> None:
    """Import the pipeline (the parser, the diagnostics) into this module's names, and the
    modules `command` runs (`_PIPELINE`: the expander, the linker, the simulator).

    `main` calls it inside its Ctrl-C handling: a Ctrl-C while a third of a second of
    imports runs stops the command with its one line, not with a traceback (the module
    itself imports only what argparse needs).

    It imports with the cyclic garbage collector paused, then freezes what the imports
    made (`gc.freeze`: modules, classes, code, the parser's tables, all kept for the
    process's life), so that no collection while the imports allocate, nor any full one
    later (the command's own), walks them again: 33 million instructions of the 460 of
    a `serq check` of a small file. Modules imported before are not imported again, nor
    anything frozen again."""
    global api, Diagnostic, Severity, print_diagnostics, to_json
    wanted = ("serq.api", *_PIPELINE.get(command or "", ()))
    if all(name in sys.modules for name in wanted) and "api" in globals():
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        from serq import api
        from serq.diagnostics import Diagnostic, Severity, print_diagnostics, to_json

        for name in wanted:
            importlib.import_module(name)
        gc.freeze()
    finally:
        if collecting:
            gc.enable()


# the modules a command imports when it runs, beyond `_load`'s own (loaded by it first)
_PIPELINE = {
    "check": ("serq.expand", "serq.link"),
    "expand": ("serq.expand", "serq.expand.printer"),
    "ir": ("serq.expand", "serq.link"),
    "run": ("serq.expand", "serq.link", "serq.sim"),
    "sweep": ("serq.expand", "serq.link", "serq.sim", "serq.sweeps"),
}


EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE
SEED_RANGE = f"a whole number from {SEED_MIN} to {SEED_MAX}"
EXIT_CLAIMS = 3  # `serq run --claims-fail`: a claim failed
OVERRIDE_ERRORS = (
    "a --set or --def that cannot be applied (a name given twice, or a let by its name and "
    "its program argument, a name the program does not declare or a def of statements, a "
    "value that does not parse, reads a name it may not read or is of the wrong kind)"
)
# every command: Ctrl-C, and a reader that closed the output's pipe (`serq run x.sq | head`)
STOPPED = "; 130 interrupted (Ctrl-C); 141 the reader of the output closed it (| head)"
EXIT_STATUS = (
    "exit status: 0 success; 1 the program has errors{run} (a --set value out of the range "
    "of the constant it gives is one, at its let); 2 a usage error: a bad option, a file "
    "that cannot be read, or " + OVERRIDE_ERRORS + "{claims}" + STOPPED
)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose usage errors end with a help line where a usual slip
    explains them: a file whose name begins with `-` given before `--`, or an option spelt
    nearly as one of the command's. `_main` sets `given`, the arguments being parsed."""

    given: Sequence[str] = ()
    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> NoReturn:
        hint = _usage_hint(self, self.given)
        super().error(f"{message}\nhelp: {hint}" if hint else message)


def _usage_hint(parser: argparse.ArgumentParser, given: Sequence[str]) -> str:
    """The help a usage error of `parser` on the arguments `given` ends with, or ""."""
    options = [o for action in parser._actions for o in action.option_strings]
    unknown = []
    for word in given:
        if word == "--":
            break
        name = word.split("=", 1)[0]
        if word.startswith("-") and word != "-" and not any(o.startswith(name) for o in options):
            unknown.append(word)
    for word in unknown:
        if os.path.lexists(word):
            return f"a file whose name begins with `-` goes after `--`: {parser.prog} -- {word}"
    import difflib

    for word in unknown:
        close = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.7)
        if close:
            return f"`{word}` is no option of {parser.prog}; did you mean `{close[0]}`?"
    return ""


def _parser() -> _Parser:
    parser = _Parser(
        prog="serq",
        description="serQ: programs that describe LLM-serving deployments.",
        epilog="exit status: 0 success; 1 the program has errors, or its run failed; 2 a "
        "usage error (a bad option, a file that cannot be read)" + STOPPED + "; each "
        "command's --help says more",
    )
    parser.add_argument("--version", action="version", version=f"serq {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.commands = commands.choices
    check = commands.add_parser(
        "check",
        help="report every error of the given files (syntax, names, kinds, domains)",
        description="Check serQ files and report every error found, with its position.",
        epilog=EXIT_STATUS.format(run="", claims=""),
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="a .sq file, or - for stdin")
    check.add_argument("--json", action="store_true", help="print the diagnostics as a JSON list")
    _override_options(check)
    _color_option(check)
    expand = commands.add_parser(
        "expand",
        help="print the kernel program a file's sugar expands to",
        description="Expand a serQ file's sugar and print the kernel program it stands for.",
        epilog="exit status: 0 success; 1 the program has errors; 2 a usage error: a bad "
        "option or a file that cannot be read" + STOPPED,
    )
    expand.add_argument("file", metavar="FILE", help="a .sq file, or - for stdin")
    expand.add_argument(
        "--json",
        action="store_true",
        help='print {"kernel": TEXT or null, "diagnostics": [...]} on stdout',
    )
    _color_option(expand)
    ir = commands.add_parser(
        "ir",
        help="print the IR a file links to, as JSON",
        description="Parse, expand and link a serQ file and print its IR as JSON on stdout; "
        "diagnostics go to stderr.",
        epilog=EXIT_STATUS.format(run="", claims=""),
    )
    ir.add_argument("file", metavar="FILE", help="a .sq file, or - for stdin")
    ir.add_argument("--horizon", type=_number, metavar="T", help="override the run block's horizon")
    ir.add_argument(
        "--arrivals", type=_arrivals, metavar="N", help="override the run block's arrivals"
    )
    ir.add_argument("--compact", action="store_true", help="print the JSON on one line")
    _override_options(ir)
    _color_option(ir)
    run = commands.add_parser(
        "run",
        help="simulate a program and print its report",
        description="Parse, expand, link and simulate a serQ file; print the report on "
        "stdout (rich tables, or JSON with --json); diagnostics go to stderr.",
        epilog=EXIT_STATUS.format(
            run=" or its run failed", claims="; 3 with --claims-fail, a claim failed"
        ),
    )
    run.add_argument("file", metavar="FILE", help="a .sq file, or - for stdin")
    run.add_argument(
        "--seed", type=_seed, metavar="N", help=f"override the run block's seed ({SEED_RANGE})"
    )
    run.add_argument("--horizon", type=_number, metavar="T", help="override the horizon")
    run.add_argument("--warmup", type=_time, metavar="T", help="override the warm-up")
    run.add_argument("--arrivals", type=_arrivals, metavar="N", help="override the arrivals")
    run.add_argument(
        "--trace",
        metavar="FILE",
        help="replay FILE (relative to the current directory) instead of the trace the "
        "workload names",
    )
    _override_options(run)
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.add_argument(
        "--claims-fail",
        action="store_true",
        help="exit with status 3 when a claim fails or is never witnessed (for CI)",
    )
    run.add_argument(
        "--no-fast-forward",
        dest="fast_forward",
        action="store_false",
        help="step every step-engine iteration one at a time (the results are the same; "
        "for checking and timing)",
    )
    run.add_argument(
        "--no-compile",
        dest="codegen",
        action="store_false",
        help="run the sessions on the interpreter instead of generated code (the results "
        "are the same; for checking and timing)",
    )
    run.add_argument(
        "--emit-python",
        action="store_true",
        help="print the Python source the program is compiled to, instead of running it",
    )
    run.add_argument(
        "--check-invariants",
        action="store_true",
        help="check the simulator's invariants after every event (a debug mode)",
    )
    run.add_argument(
        "--dump",
        type=_directory,
        metavar="DIR",
        help="write the samples (DIR/observe/NAME.csv) and gauge change points "
        "(DIR/gauge/NAME.csv)",
    )
    run.add_argument(
        "--buffer",
        action="append",
        default=[],
        type=_buffer,
        metavar="FILE=COPY",
        help="read the text of FILE (the program or a library it uses) from COPY, FILE "
        "keeping its name and folder (an editor's unsaved buffers; repeatable)",
    )
    _color_option(run, "the diagnostics and the report")
    _sweep_parser(commands)
    _plot_parser(commands)
    explain = commands.add_parser(
        "explain",
        help="explain a diagnostic code: what it means and how to fix it",
        description="Print the explanation of a diagnostic code (docs/diagnostics.md has "
        "them all); with no code, list every code with its one-line summary.",
        epilog="exit status: 0 success; 2 a code serq does not have" + STOPPED,
    )
    explain.add_argument(
        "code", nargs="?", metavar="CODE", help="a code such as E-hidden (the E- may be left out)"
    )
    fmt = commands.add_parser(
        "fmt",
        help="format files in the canonical layout",
        description="Rewrite serQ files in the canonical layout, comments kept; `-` reads "
        "stdin and writes stdout. Items with syntax errors are left as written.",
        epilog="exit status: 0 success; 1 a file has syntax errors (its other items are "
        "formatted), or with --check a file would change; 2 a usage error: a bad option, a "
        "file that cannot be read or written" + STOPPED,
    )
    fmt.add_argument("files", nargs="+", metavar="FILE", help="a .sq file, or - for stdin")
    fmt.add_argument(
        "--check",
        action="store_true",
        help="write nothing; print a diff and exit 1 when a file would change",
    )
    _color_option(fmt)
    return parser


def _sweep_parser(commands: Any) -> None:
    """`serq sweep`: the run options of `serq run`, the grid, the seeds and the executor."""
    sweep = commands.add_parser(
        "sweep",
        help="run a program at every point of a grid of `let` values, with replications",
        description="Run FILE at every point of the grid the --set options span (their "
        "product), once per seed, on a local process pool or a Dask cluster; print a table "
        "of the points (mean and Student-t 95 percent interval over the replications) and write "
        "the point and run rows with --out.",
        epilog=EXIT_STATUS.format(run=" or a run failed", claims=""),
    )
    sweep.add_argument("file", metavar="FILE", help="a .sq file, or - for stdin")
    sweep.add_argument(
        "--set",
        type=_assignment,
        action="append",
        default=[],
        metavar="NAME=SPEC",
        help="sweep the `let NAME` over SPEC: V1,V2,... (expressions) or START:STOP:STEP "
        "(numbers, STOP included when on the grid); repeatable, the grid is the product",
    )
    _add_defs(sweep, "at every point, as serq run does")
    seeds = sweep.add_mutually_exclusive_group()
    seeds.add_argument(
        "--seeds", type=_positive_count, metavar="N", help="N replications per point: seeds 1..N"
    )
    seeds.add_argument(
        "--seed-list", type=_count_list, metavar="S1,S2,...", help="the seeds of every point"
    )
    sweep.add_argument("--horizon", type=_number, metavar="T", help="override the horizon")
    sweep.add_argument("--warmup", type=_time, metavar="T", help="override the warm-up")
    sweep.add_argument("--arrivals", type=_arrivals, metavar="N", help="override the arrivals")
    sweep.add_argument(
        "--trace",
        metavar="FILE",
        help="replay FILE (relative to the current directory) instead of the trace the "
        "workload names, at every point",
    )
    sweep.add_argument(
        "--no-fast-forward",
        dest="fast_forward",
        action="store_false",
        help="step every step-engine iteration one at a time",
    )
    sweep.add_argument(
        "--jobs", type=_positive_count, metavar="N", help="local worker processes (default: CPUs)"
    )
    sweep.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run on the Dask scheduler at ADDRESS (tcp://HOST:PORT; default "
        "$SERQ_DASK_SCHEDULER) instead of the local pool",
    )
    sweep.add_argument(
        "--out",
        metavar="FILE",
        help=(
            "write the results to FILE, in the format its suffix names: NAME.csv or "
            "NAME.parquet (the points, with the runs beside it in NAME.runs.csv or "
            "NAME.runs.parquet), or NAME.json (both)"
        ),
    )
    _color_option(sweep)


def _plot_parser(commands: Any) -> None:
    """`serq plot`: a sweep's results, or one run's dump."""
    plot = commands.add_parser(
        "plot",
        help="plot a sweep's results, or a run's --dump directory (needs matplotlib)",
        description="Plot the mean of --y against --x with its interval from a sweep's "
        "results file, or with --dump DIR a run's gauges over time and an observation's "
        "histogram and empirical CDF. PNG or SVG, by the suffix of -o.",
        epilog="exit status: 0 the picture is written; 1 there is nothing to draw (a column "
        "the results do not have, no finite value to plot); 2 a usage error: a bad option, "
        "a file that cannot be read or written, matplotlib not installed" + STOPPED,
    )
    plot.add_argument("results", nargs="?", metavar="RESULTS", help="a serq sweep --out file")
    plot.add_argument("--x", metavar="NAME", help="the swept value on the x axis")
    plot.add_argument("--y", metavar="NAME", help="the observation (or gauge) on the y axis")
    plot.add_argument("--hue", metavar="NAME", help="one line per value of this column")
    plot.add_argument("--bars", action="store_true", help="error bars instead of a band")
    plot.add_argument("--log-x", action="store_true", help="a logarithmic x axis")
    plot.add_argument("--log-y", action="store_true", help="a logarithmic y axis")
    plot.add_argument(
        "--dump", type=_directory, metavar="DIR", help="plot a `serq run --dump DIR` instead"
    )
    plot.add_argument(
        "--observe", metavar="NAME", help="with --dump: the observation (default: the first)"
    )
    plot.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.png or .svg")
    _color_option(plot)


def _override_options(command: argparse.ArgumentParser) -> None:
    """`--set NAME=VALUE` and `--def NAME=EXPR`, which check, ir and run take."""
    command.add_argument(
        "--set",
        type=_assignment,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help='give the program argument NAME (declared `args.number("NAME", default)`) or '
        "else the `let NAME` the value VALUE, an expression (repeatable)",
    )
    _add_defs(command, "which may read its parameters")


def _color_option(command: argparse.ArgumentParser, what: str = "the diagnostics") -> None:
    """`--color auto|always|never`, which every command takes; `what` it colors."""
    command.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help=f"color {what} (default: when the output is a terminal)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: `sys.argv[1:]`) and return the exit status.

    Ctrl-C stops it with one line and status 130; a closed stdout (`serq run | head`)
    ends it quietly with status 141, as a program killed by SIGPIPE; a stdout closed before
    the start (`>&-`) is one line and status 2 when the command has output to write there,
    as a closed stdin is; running out of memory outside a run (which says so itself) is one
    line and status 1."""
    if sys.stdout is None:  # Python's stand-in for a file descriptor 1 closed at the start
        sys.stdout = _ClosedStdout()
    try:
        _load()
        status = _main(argv)
        sys.stdout.flush()  # here, not at exit, where a closed pipe would print a warning
        return status
    except _StdoutClosed:
        print("serq: cannot write the output: standard output is closed", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("serq: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError:  # where no run's diagnostic could say it (a run says it itself)
        print("serq: out of memory", file=sys.stderr)
        return 1
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE


class _StdoutClosed(Exception):
    """A write to a standard output that was closed before the command began."""


class _ClosedStdout(io.TextIOBase):
    """`sys.stdout` when file descriptor 1 was closed at the start (Python makes it None, and
    `print` then drops its text in silence): a write stops the command, which says so; a
    command with nothing to write there (a clean `serq check`) runs as usual."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not text:
            return 0
        raise _StdoutClosed

    def isatty(self) -> bool:
        return False


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush has nowhere to fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (a test's capture)
        pass


def _main(argv: Sequence[str] | None) -> int:
    parser = _parser()
    _Parser.given = list(sys.argv[1:] if argv is None else argv)
    try:
        args, extra = parser.parse_known_args(argv)
        # what the command's own parser does not take, it reports with its own usage
        command = parser.commands.get(args.command or "", parser)
        if extra:
            command.error(f"unrecognized arguments: {' '.join(extra)}")
        read = [given for given in getattr(args, "files", ()) if given == "-"]
        if len(read) > 1:
            times = "twice" if len(read) == 2 else f"{len(read)} times"
            command.error(f"`-` (standard input) is given {times}: it can be read only once")
    except SystemExit as exit_:  # argparse exits 2 on a usage error, 0 on --help
        return int(exit_.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    _load(args.command)
    if args.command == "check":
        return _check(args)
    if args.command == "expand":
        return _expand(args)
    if args.command == "ir":
        return _ir(args)
    if args.command == "run":
        return _run(args)
    if args.command == "sweep":
        from serq.sweeps.command import run_sweep

        return run_sweep(args, _color(args))
    if args.command == "plot":
        from serq.plot.command import run_plot

        return run_plot(args, _color(args))
    if args.command == "explain":
        return _explain(args)
    if args.command == "fmt":
        from serq.formatter.command import fmt

        return fmt(args.files, check=args.check, color=_color(args))
    return EXIT_USAGE


def _explain(args: argparse.Namespace) -> int:
    from serq.diagnostics import explain

    if args.code is None:
        sys.stdout.write(explain.listing())
        return EXIT_OK
    code = explain.resolve(args.code)
    if code is None:
        close = explain.suggestions(args.code)
        hint = f"; did you mean {' or '.join(f'`{c}`' for c in close)}?" if close else ""
        print(f"serq explain: no diagnostic code `{args.code}`{hint}", file=sys.stderr)
        print("`serq explain` with no code lists them all", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(explain.explain(code))
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    diagnostics, sources = _repeated_overrides(args)
    if diagnostics:
        _print_check(diagnostics, sources, args)
        return EXIT_USAGE
    unreadable = False
    for given in args.files:
        path, loaded = api.read_program(given)
        if isinstance(loaded, Diagnostic):
            diagnostics.append(loaded)
            unreadable = True
            continue
        sources[path] = loaded
        sets, defs = dict(args.set), dict(args.defs)
        diagnostics.extend(api.link_source(loaded, path, sets=sets, defs=defs)[1])
        _override_sources(sources, sets, defs)
    _print_check(diagnostics, sources, args)
    if unreadable or _bad_override(diagnostics):
        return EXIT_USAGE
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


def _print_check(
    diagnostics: list[Diagnostic], sources: dict[str, str], args: argparse.Namespace
) -> None:
    """`serq check`'s output: the diagnostics as a JSON list on stdout with `--json`, else
    rendered on stderr (with the lines of the `use`d libraries they point into)."""
    if args.json:
        print(json.dumps([to_json(d) for d in diagnostics], indent=2))
    else:
        api.library_sources(sources, diagnostics)
        print_diagnostics(diagnostics, sources, file=sys.stderr, color=_color(args))


def _repeated_overrides(args: argparse.Namespace) -> tuple[list[Diagnostic], dict[str, str]]:
    """The usage errors of a `--set` or `--def` name given more than once, and their texts."""
    diagnostics, sources = api.repeated_overrides("--set", args.set)
    more, texts = api.repeated_overrides("--def", args.defs)
    return [*diagnostics, *more], {**sources, **texts}


def _refuse_repeated(args: argparse.Namespace) -> bool:
    """Print the errors of a `--set` or `--def` name given twice; whether there were any."""
    diagnostics, sources = _repeated_overrides(args)
    print_diagnostics(diagnostics, sources, file=sys.stderr, color=_color(args))
    return bool(diagnostics)


def _bad_override(diagnostics: list[Diagnostic]) -> bool:
    """Whether a `--set` or `--def` value failed: a usage error, not the program's."""
    return any(api.is_override_error(d) for d in diagnostics)


def _expand(args: argparse.Namespace) -> int:
    path, loaded = api.read_program(args.file)
    kernel_text: str | None = None
    if isinstance(loaded, Diagnostic):
        diagnostics, sources = [loaded], {}
    else:
        kernel, diagnostics = api.expand_source(loaded, path)
        sources = {path: loaded}
        if kernel is not None:
            printed = api.format_kernel(kernel, path)
            if isinstance(printed, Diagnostic):
                diagnostics.append(printed)
            else:
                kernel_text = printed
    if args.json:
        report = {"kernel": kernel_text, "diagnostics": [to_json(d) for d in diagnostics]}
        print(json.dumps(report, indent=2))
    else:
        api.library_sources(sources, diagnostics)  # an expansion error may lie in a `use`d one
        color = {"auto": None, "always": True, "never": False}[args.color]
        print_diagnostics(diagnostics, sources, file=sys.stderr, color=color)
        if kernel_text is not None:
            sys.stdout.write(kernel_text)
    if isinstance(loaded, Diagnostic):
        return EXIT_USAGE
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


def _ir(args: argparse.Namespace) -> int:
    if _refuse_repeated(args):
        return EXIT_USAGE
    path, loaded = api.read_program(args.file)
    if isinstance(loaded, Diagnostic):
        print_diagnostics([loaded], {}, file=sys.stderr, color=_color(args))
        return EXIT_USAGE
    sets, defs = dict(args.set), dict(args.defs)
    program, diagnostics = api.link_source(loaded, path, sets=sets, defs=defs)
    text: str | None = None
    if program is not None:
        printed = api.format_ir(
            program, path, horizon=args.horizon, arrivals=args.arrivals, compact=args.compact
        )
        if isinstance(printed, Diagnostic):
            diagnostics.append(printed)
        else:
            text = printed
    sources = {path: loaded}
    _override_sources(sources, sets, defs)
    api.library_sources(sources, diagnostics)
    print_diagnostics(diagnostics, sources, file=sys.stderr, color=_color(args))
    if text is not None:
        sys.stdout.write(text + "\n")
    if _bad_override(diagnostics):
        return EXIT_USAGE
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from serq.expand.loader import BUFFERS, library_key

    # `--buffer FILE=COPY`: for this run only (`main` may be called again in one process)
    BUFFERS.update((library_key(file), copy) for file, copy in args.buffer)
    try:
        return _run_program(args)
    finally:
        BUFFERS.clear()


def _run_program(args: argparse.Namespace) -> int:
    from serq.sim import api as sim_api  # the simulator loads only when a program runs

    if _refuse_repeated(args):
        return EXIT_USAGE
    path, loaded = api.read_program(args.file)
    if isinstance(loaded, Diagnostic):
        print_diagnostics([loaded], {}, file=sys.stderr, color=_color(args))
        return EXIT_USAGE
    sets, defs = dict(args.set), dict(args.defs)
    compiled, diagnostics = sim_api.compile_program(
        loaded,
        path,
        seed=args.seed,
        horizon=args.horizon,
        warmup=args.warmup,
        arrivals=args.arrivals,
        sets=sets,
        defs=defs,
        trace=args.trace,
    )
    report = None
    if compiled is not None and args.emit_python:
        source, built = sim_api.python_source(compiled)
        diagnostics = [*diagnostics, *built]
        sources = sim_api.sources(path, loaded, sets, diagnostics, defs, args.trace)
        print_diagnostics(diagnostics, sources, file=sys.stderr, color=_color(args))
        if source is None:
            return EXIT_ERRORS if built else EXIT_USAGE
        sys.stdout.write(source)
        return EXIT_OK
    if compiled is not None:
        bar = _ProgressBar(compiled.program.horizon)
        noticed: list[Diagnostic] = []

        def notice(found: Diagnostic) -> None:
            noticed.append(found)
            bar.note(found)

        try:
            report, ran = sim_api.execute(
                compiled,
                progress=bar,
                fast_forward=args.fast_forward,
                check_invariants=args.check_invariants,
                codegen=args.codegen,
                notice=notice,
            )
        except KeyboardInterrupt as stop:
            # what the run found stopped before Ctrl-C stopped it: why it may have seemed
            # to hang, or what of the deployment had stopped moving (`Interrupted`)
            bar.close()
            found = getattr(stop, "found", noticed)
            if found:
                sources = sim_api.sources(path, loaded, sets, found, defs)
                print_diagnostics(found, sources, file=sys.stderr, color=_color(args))
            clock = getattr(stop, "now", bar.clock)
            at = f" at t = {clock:g}" if clock > 0 else ""
            print(f"serq: interrupted{at}", file=sys.stderr)
            return EXIT_INTERRUPTED
        finally:
            bar.close()
        diagnostics = [*diagnostics, *ran]
    sources = sim_api.sources(path, loaded, sets, diagnostics, defs, args.trace)
    print_diagnostics(diagnostics, sources, file=sys.stderr, color=_color(args))
    if report is None:
        return EXIT_USAGE if _bad_override(diagnostics) else EXIT_ERRORS
    # the dump first: a report whose reader went away (`| head`, `>&-`) ends the command,
    # and the run's samples must not go with it
    dumped = _dump(report, args) if args.dump is not None else EXIT_OK
    if args.json:
        print(report.json(indent=2))
    else:
        from serq.report import render_text

        color = _color(args)
        render_text(report, stdout_console(force_terminal=color, no_color=color is False))
    if dumped != EXIT_OK:
        return dumped
    if args.claims_fail and report.claims_failed():
        return EXIT_CLAIMS
    return EXIT_OK


def _override_sources(sources: dict[str, str], sets: dict, defs: dict) -> None:
    """Add the texts `--set` and `--def` values are parsed from (diagnostics point there)."""
    for name, value in sets.items():
        file, text = api.set_source(name, value)
        sources[file] = text
    for name, body in defs.items():
        file, text = api.def_source(name, body)
        sources[file] = text


def _dump(report: Report, args: argparse.Namespace) -> int:
    from serq.diagnostics import Span, codes
    from serq.report import write_dump

    try:
        write_dump(report, args.dump)
    except OSError as error:
        message = f"cannot write the dump to `{args.dump}`: {error.strerror or error}"
        failed = Diagnostic.error(codes.IO, Span.point(args.dump, 0, 1, 1), message)
        print_diagnostics([failed], {}, file=sys.stderr, color=_color(args))
        return EXIT_USAGE
    return EXIT_OK


class _ProgressBar:
    """A progress bar on stderr for runs that last, driven by `Recorder.progress`: shown
    when stderr is a terminal and the run has taken half a second, gone when it ends. It
    keeps the latest clock (for Ctrl-C's line) and shows a warning the run finds as it
    goes on (`note`) as one line above it."""

    DELAY = 0.5  # seconds before the bar appears
    PERIOD = 0.1  # seconds between redraws

    def __init__(self, horizon: float) -> None:
        self.horizon = horizon
        self.enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.clock = 0.0  # the run's clock at the latest call
        self._start = time.monotonic()
        self._next = self._start + self.DELAY
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, now: float) -> None:
        self.clock = now
        if not self.enabled:
            return
        clock = time.monotonic()
        if clock < self._next:
            return
        self._next = clock + self.PERIOD
        if self._bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            columns = (TextColumn("simulating"), BarColumn(), TaskProgressColumn())
            console = Console(file=sys.stderr)
            self._bar = Progress(*columns, TimeElapsedColumn(), console=console, transient=True)
            done = min(now, self.horizon)
            self._task = self._bar.add_task("", total=self.horizon, completed=done)
            self._bar.start()
        self._bar.update(self._task, completed=min(now, self.horizon))

    def note(self, found: Diagnostic) -> None:
        """Say on a terminal, at once, what the run found: a run that goes on for long after
        a livelock would otherwise say so only when it ends (the full warning comes then)."""
        if not self.enabled:
            return
        where = f"{found.span.file}:{found.span.line}:{found.span.column}"
        line = (
            # not "to its horizon": a run with nothing else pending fails at once after it
            f"serq: {found.severity.label}[{found.code}] at {where}, the run goes on "
            f"(Ctrl-C stops it): {found.message}"
        )
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def stdout_console(**options: Any) -> Any:
    """A rich console on stdout whose closed pipe ends the command as `main` says."""
    from rich.console import Console

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:  # rich would exit 1 here
            self.quiet = True
            raise BrokenPipeError

    return _PipeConsole(file=sys.stdout, **options)


def _color(args: argparse.Namespace) -> bool | None:
    return {"auto": None, "always": True, "never": False}[args.color]


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value != value or value <= 0:
        raise argparse.ArgumentTypeError(f"not a positive number: {text!r}")
    return value


def _time(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value != value or value < 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"not a time ≥ 0: {text!r}")
    return value


def _add_defs(parser: argparse.ArgumentParser, says: str) -> None:
    """`--def NAME=EXPR` (repeatable) on `parser`, its help ending with `says`."""
    parser.add_argument(
        "--def",
        dest="defs",
        type=_assignment,
        action="append",
        default=[],
        metavar="NAME=EXPR",
        help="replace the body of the expression definition `def NAME(...) { expr }` by "
        f"EXPR, {says} (repeatable)",
    )


def _buffer(text: str) -> tuple[str, str]:
    """`--buffer FILE=COPY`: read FILE's text from COPY."""
    file, equals, copy = text.rpartition("=")
    if not equals or not file or not copy:
        raise argparse.ArgumentTypeError(f"expected FILE=COPY, got {text!r}")
    return file, copy


def _directory(text: str) -> str:
    """A directory's name: not empty (Path("") is the working directory, which a `--dump ""`
    would fill, or read, without a word)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"not a directory name: {text!r}")
    return text


def _assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"not NAME=VALUE: {text!r}")
    return name.strip(), value.strip()


def _whole(text: str) -> int | None:
    """The integer `text` writes, as `1000` or as a number whose value is one exactly
    (`1e9`, `1000.0`, as `--horizon 1e9` and the run block's `arrivals 1e3;` are read),
    read as a decimal, without a float's rounding; None when it writes none (a fraction,
    a word, inf, NaN, or past 1e30, beyond every count and seed)."""
    try:
        return int(text)
    except ValueError:
        pass
    from decimal import Decimal  # here: every command's start-up would pay its import

    try:
        value = Decimal(text)
    except ArithmeticError:  # decimal.InvalidOperation: not a number
        return None
    if not value.is_finite() or value.adjusted() > 30 or value != value.to_integral_value():
        return None
    return int(value)


def _count(text: str) -> int:
    value = _whole(text)
    if value is None or value < 0:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return value


def _positive_count(text: str) -> int:
    value = _whole(text)
    if value is None or value < 1:
        raise argparse.ArgumentTypeError(f"not a whole number ≥ 1: {text!r}")
    return value


def _arrivals(text: str) -> int:
    """`--arrivals N`: a whole number from 1 to `ARRIVALS_MAX`, as in the run block."""
    value = _whole(text) or 0
    if not 1 <= value <= ARRIVALS_MAX:
        raise argparse.ArgumentTypeError(
            f"not a number of arrivals (1 to {ARRIVALS_MAX}): {text!r}"
        )
    return value


def _count_list(text: str) -> list[int]:
    from serq.sweeps import repeated_seed

    seeds = [_seed(part.strip()) for part in text.split(",")]
    repeated = repeated_seed(seeds)
    if repeated is not None:
        raise argparse.ArgumentTypeError(
            f"seed {repeated} is listed twice: a repeated seed repeats its runs, which would "
            "count as replications that they are not"
        )
    return seeds


def _seed(text: str) -> int:
    value = _whole(text)
    if value is None or not SEED_MIN <= value <= SEED_MAX:
        raise argparse.ArgumentTypeError(f"not a seed ({SEED_RANGE}): {text!r}")
    return value


def entry() -> None:
    """Console-script entry point: exit with `main()`'s status."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
