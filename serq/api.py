"""The pipeline as the command line and the language server call it.

Each function takes source text (or a path) and returns results and
diagnostics; none raises on bad input.
"""

from __future__ import annotations

from pathlib import Path

from serq.diagnostics import Diagnostic, Span, codes
from serq.syntax import ItemCache, ParseResult, parse


def read_source(path: str) -> str | Diagnostic:
    """The text of the file at `path`, or an `E-io` diagnostic saying why it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        reason = f"it is not UTF-8 text (byte {e.start})"
    except IsADirectoryError:
        reason = "it is a directory"
    except FileNotFoundError:
        reason = "no such file"
    except OSError as e:
        reason = e.strerror or str(e)
    return Diagnostic.error(codes.IO, Span.point(path, 0, 1, 1), f"cannot read `{path}`: {reason}")


def parse_source(text: str, path: str = "<input>", cache: ItemCache | None = None) -> ParseResult:
    """Parse `text` (the contents of `path`); pass a `cache` to reparse edits incrementally."""
    return parse(text, path, cache)


def check_source(
    text: str, path: str = "<input>", cache: ItemCache | None = None
) -> list[Diagnostic]:
    """Every diagnostic of the program `text`: for now its syntax errors."""
    return list(parse_source(text, path, cache).diagnostics)
