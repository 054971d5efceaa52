"""The `serq` command: `serq check FILE...`, `serq expand FILE`, `serq ir FILE`, `serq run FILE`,
`serq fmt FILE...`.

Exit status: 0 when every file is clean, 1 when any has an error, 2 on a usage
error or a file that cannot be read. Whatever the input, the command reports
diagnostics, never a Python traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from serq import __version__, api
from serq.diagnostics import Diagnostic, Severity, print_diagnostics, to_json

if TYPE_CHECKING:
    from serq.report import Report

EXIT_OK = 0
EXIT_ERRORS = 1
EXIT_USAGE = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="serq",
        description="serQ: programs that describe LLM-serving deployments.",
    )
    parser.add_argument("--version", action="version", version=f"serq {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    check = commands.add_parser(
        "check",
        help="report every syntax error of the given files",
        description="Check serQ files and report every error found, with its position.",
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="a .sq file")
    check.add_argument("--json", action="store_true", help="print the diagnostics as a JSON list")
    _color_option(check)
    expand = commands.add_parser(
        "expand",
        help="print the kernel program a file's sugar expands to",
        description="Expand a serQ file's sugar and print the kernel program it stands for.",
    )
    expand.add_argument("file", metavar="FILE", help="a .sq file")
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
    )
    ir.add_argument("file", metavar="FILE", help="a .sq file")
    ir.add_argument("--horizon", type=_number, metavar="T", help="override the run block's horizon")
    ir.add_argument(
        "--arrivals", type=_count, metavar="N", help="override the run block's arrivals"
    )
    ir.add_argument("--compact", action="store_true", help="print the JSON on one line")
    _color_option(ir)
    run = commands.add_parser(
        "run",
        help="simulate a program and print its report",
        description="Parse, expand, link and simulate a serQ file; print the report on "
        "stdout (rich tables, or JSON with --json); diagnostics go to stderr.",
    )
    run.add_argument("file", metavar="FILE", help="a .sq file")
    run.add_argument("--seed", type=_count, metavar="N", help="override the run block's seed")
    run.add_argument("--horizon", type=_number, metavar="T", help="override the horizon")
    run.add_argument("--warmup", type=_time, metavar="T", help="override the warm-up")
    run.add_argument("--arrivals", type=_count, metavar="N", help="override the arrivals")
    run.add_argument(
        "--set",
        type=_assignment,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="give the `let NAME` the value VALUE (an expression; repeatable)",
    )
    run.add_argument("--json", action="store_true", help="print the report as JSON")
    run.add_argument(
        "--no-fast-forward",
        dest="fast_forward",
        action="store_false",
        help="step every step-engine iteration one at a time (the results are the same; "
        "for checking and timing)",
    )
    run.add_argument(
        "--dump",
        metavar="DIR",
        help="write the samples (DIR/observe/NAME.csv) and gauge change points "
        "(DIR/gauge/NAME.csv)",
    )
    _color_option(run)
    fmt = commands.add_parser(
        "fmt",
        help="format files in the canonical layout",
        description="Rewrite serQ files in the canonical layout, comments kept; `-` reads "
        "stdin and writes stdout. Items with syntax errors are left as written.",
    )
    fmt.add_argument("files", nargs="+", metavar="FILE", help="a .sq file, or - for stdin")
    fmt.add_argument(
        "--check",
        action="store_true",
        help="write nothing; print a diff and exit 1 when a file would change",
    )
    _color_option(fmt)
    return parser


def _color_option(command: argparse.ArgumentParser) -> None:
    """`--color auto|always|never`, which every command takes."""
    command.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="color the report (default: when the output is a terminal)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line `argv` (default: `sys.argv[1:]`) and return the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse exits 2 on a usage error, 0 on --help
        return int(exit_.code or 0)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "check":
        return _check(args)
    if args.command == "expand":
        return _expand(args)
    if args.command == "ir":
        return _ir(args)
    if args.command == "run":
        return _run(args)
    if args.command == "fmt":
        from serq.formatter.command import fmt

        return fmt(args.files, check=args.check, color=_color(args))
    return EXIT_USAGE


def _check(args: argparse.Namespace) -> int:
    diagnostics: list[Diagnostic] = []
    sources: dict[str, str] = {}
    unreadable = False
    for path in args.files:
        loaded = api.read_source(path)
        if isinstance(loaded, Diagnostic):
            diagnostics.append(loaded)
            unreadable = True
            continue
        sources[path] = loaded
        diagnostics.extend(api.check_source(loaded, path))
    if args.json:
        print(json.dumps([to_json(d) for d in diagnostics], indent=2))
    else:
        color = {"auto": None, "always": True, "never": False}[args.color]
        print_diagnostics(diagnostics, sources, file=sys.stderr, color=color)
    if unreadable:
        return EXIT_USAGE
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


def _expand(args: argparse.Namespace) -> int:
    path = args.file
    loaded = api.read_source(path)
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
        for d in diagnostics:  # an expansion error may lie in a `use`d library
            if d.span.file not in sources:
                library = api.read_source(d.span.file)
                if isinstance(library, str):
                    sources[d.span.file] = library
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
    path = args.file
    loaded = api.read_source(path)
    if isinstance(loaded, Diagnostic):
        print_diagnostics([loaded], {}, file=sys.stderr, color=_color(args))
        return EXIT_USAGE
    program, diagnostics = api.link_source(loaded, path)
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
    for d in diagnostics:  # an error may lie in a `use`d library
        if d.span.file not in sources:
            library = api.read_source(d.span.file)
            if isinstance(library, str):
                sources[d.span.file] = library
    print_diagnostics(diagnostics, sources, file=sys.stderr, color=_color(args))
    if text is not None:
        sys.stdout.write(text + "\n")
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from serq.sim import api as sim_api  # the simulator loads only when a program runs

    path = args.file
    loaded = api.read_source(path)
    if isinstance(loaded, Diagnostic):
        print_diagnostics([loaded], {}, file=sys.stderr, color=_color(args))
        return EXIT_USAGE
    sets = dict(args.set)
    compiled, diagnostics = sim_api.compile_program(
        loaded,
        path,
        seed=args.seed,
        horizon=args.horizon,
        warmup=args.warmup,
        arrivals=args.arrivals,
        sets=sets,
    )
    report = None
    if compiled is not None:
        bar = _ProgressBar(compiled.program.horizon)
        try:
            report, ran = sim_api.execute(
                compiled, progress=bar if bar.enabled else None, fast_forward=args.fast_forward
            )
        finally:
            bar.close()
        diagnostics = [*diagnostics, *ran]
    sources = sim_api.sources(path, loaded, sets, diagnostics)
    print_diagnostics(diagnostics, sources, file=sys.stderr, color=_color(args))
    if report is None:
        return EXIT_ERRORS
    if args.json:
        print(report.json(indent=2))
    else:
        from rich.console import Console

        from serq.report import render_text

        color = _color(args)
        render_text(report, Console(file=sys.stdout, force_terminal=color, no_color=color is False))
    if args.dump is not None:
        return _dump(report, args)
    return EXIT_OK


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
    when stderr is a terminal and the run has taken half a second, gone when it ends."""

    DELAY = 0.5  # seconds before the bar appears
    PERIOD = 0.1  # seconds between redraws

    def __init__(self, horizon: float) -> None:
        self.horizon = horizon
        self.enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self._start = time.monotonic()
        self._next = self._start + self.DELAY
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, now: float) -> None:
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

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


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


def _assignment(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"not NAME=VALUE: {text!r}")
    return name.strip(), value.strip()


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}")
    return value


def entry() -> None:
    """Console-script entry point: exit with `main()`'s status."""
    sys.exit(main())


if __name__ == "__main__":
    entry()
