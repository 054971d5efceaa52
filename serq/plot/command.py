"""`serq plot RESULTS --x NAME --y NAME [--hue NAME] -o FILE` and `serq plot --dump DIR -o FILE`.

Exit status: 0 when the picture is written, 1 when the data cannot be plotted (a column
that is not there, a `--y` of text, no point with a finite `--y`), 2 on a usage error, a
file that cannot be read or written (a `--dump` that is not a directory, results that are
not UTF-8 or not CSV), or matplotlib missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from serq.diagnostics import Diagnostic, Span, codes, print_diagnostics

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def run_plot(args: argparse.Namespace, color: bool | None) -> int:
    """Run `serq plot` with the parsed `args`; return the exit status."""
    target = args.dump if args.dump is not None else args.results

    def fail(message: str, status: int, where: str | None = None, help_: str | None = None) -> int:
        span = Span.point(where or target or "<serq plot>", 0, 1, 1)
        diagnostic = Diagnostic.error(codes.IO, span, message, help=help_)
        print_diagnostics([diagnostic], {}, file=sys.stderr, color=color)
        return status

    if (args.dump is None) == (args.results is None):
        return fail("serq plot takes a results file or --dump DIR (one of them)", EXIT_USAGE)
    if args.dump is None and (args.x is None or args.y is None):
        return fail("plotting results needs --x NAME and --y NAME", EXIT_USAGE)
    from serq.plot import FORMATS

    if not args.output.lower().endswith(FORMATS):
        message = f"cannot draw `{args.output}`: the suffix is none of {', '.join(FORMATS)}"
        return fail(message, EXIT_USAGE, args.output)
    if importlib.util.find_spec("matplotlib") is None:
        return fail("serq plot needs matplotlib", EXIT_USAGE, help_="pip install 'serq-py[plot]'")
    from serq.expand.loader import unreadable, unwritable

    why = unwritable(args.output)  # before the drawing
    if why is not None:
        return fail(f"cannot write `{args.output}`: {why}", EXIT_USAGE, args.output)
    from serq.plot import PlotError, plot_dump, plot_points, save
    from serq.sweeps.results import read_points

    try:
        if args.dump is not None:
            figure = plot_dump(args.dump, args.observe)
        else:
            rows = read_points(args.results)
            figure = plot_points(
                rows, args.x, args.y, args.hue, bars=args.bars, log_x=args.log_x, log_y=args.log_y
            )
    except PlotError as error:
        return fail(str(error), EXIT_ERRORS)
    except (OSError, ValueError) as error:
        reason = unreadable(error) if isinstance(error, OSError) else str(error)
        return fail(f"cannot read `{target}`: {reason}", EXIT_USAGE)
    try:
        save(figure, args.output)
    except OSError as error:
        return fail(
            f"cannot write `{args.output}`: {unreadable(error)}", EXIT_USAGE, args.output
        )
    return EXIT_OK
