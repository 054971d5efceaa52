"""The `serq` console script's entry point, a module of its own outside the `serq` package.

The script pip writes imports its entry point before it calls it: with `serq.cli:entry`,
a Ctrl-C in the ~50 ms of `import serq.cli` (the package's `__init__`, the CLI's own
imports) came out of that import as a Python traceback through serq's modules, before
`serq.cli.main` could catch anything. This module imports nothing but `sys`, so `entry`
is running before any of serq loads, and a Ctrl-C there ends the command as `main` ends
it later: one line, status 130.
"""

import sys  # the only import: `entry` must run before any of serq loads

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as serq.cli's


def entry() -> None:
    """Import the command line and run it; exit with its status (130 on Ctrl-C)."""
    try:
        from serq.cli import main

        status = main()  # it catches Ctrl-C itself once it runs
    except KeyboardInterrupt:  # in the imports, or on the way into `main`
        try:
            print("serq: interrupted", file=sys.stderr)
        except (KeyboardInterrupt, OSError, ValueError):  # a second Ctrl-C, no stderr
            pass
        status = EXIT_INTERRUPTED
    sys.exit(status)


if __name__ == "__main__":
    entry()
