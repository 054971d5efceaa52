"""`serq fmt FILE…`: format files in place, or with `--check` say which would change.

Exit status: 0 when every file is formatted (or, with `--check`, already was), 1
when `--check` found a file that would change or a file has syntax errors (its
broken items are left as written and reported), 2 when a file cannot be read.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from serq import api
from serq.diagnostics import Diagnostic, print_diagnostics
from serq.formatter import format_source

EXIT_OK, EXIT_CHANGED, EXIT_USAGE = 0, 1, 2
STDIN = "-"


def fmt(files: Sequence[str], check: bool = False, color: bool | None = None) -> int:
    """Format each of `files` (`-` is stdin, written to stdout); with `check`, write nothing
    and print a unified diff of each file that would change."""
    status = EXIT_OK
    for path in files:
        if path == STDIN:
            text, name = sys.stdin.read(), "<stdin>"
        else:
            loaded = api.read_source(path)
            if isinstance(loaded, Diagnostic):
                print_diagnostics([loaded], {}, file=sys.stderr, color=color)
                status = EXIT_USAGE
                continue
            text, name = loaded, path
        formatted = format_source(text, name)
        if formatted.diagnostics:
            print_diagnostics(
                list(formatted.diagnostics), {name: text}, file=sys.stderr, color=color
            )
            print(
                f"{name}: {formatted.kept} item(s) with syntax errors left as written",
                file=sys.stderr,
            )
            status = max(status, EXIT_CHANGED)
        changed = formatted.text != text
        if check:
            if changed:
                sys.stdout.writelines(
                    difflib.unified_diff(
                        text.splitlines(keepends=True),
                        formatted.text.splitlines(keepends=True),
                        fromfile=name,
                        tofile=f"{name} (formatted)",
                    )
                )
                status = max(status, EXIT_CHANGED)
        elif path == STDIN:
            sys.stdout.write(formatted.text)
        elif changed:
            try:
                Path(path).write_text(formatted.text, encoding="utf-8")
            except OSError as error:
                print(
                    f"serq fmt: cannot write `{path}`: {error.strerror or error}", file=sys.stderr
                )
                status = EXIT_USAGE
    return status
