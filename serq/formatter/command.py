"""`serq fmt FILE…`: format files in place, or with `--check` say which would change.

Exit status: 0 when every file is formatted (or, with `--check`, already was), 1
when `--check` found a file that would change or a file has syntax errors (its
broken items are left as written and reported), 2 when a file cannot be read.

Files and stdin are read as bytes and written back as bytes: UTF-8 whatever the locale,
an invalid byte (which the parser reports as `E-utf8`) written back as it was, and a
byte-order mark kept where the file had one. A file is replaced whole or not at all
(`serq.file_output`: a temporary file beside it, renamed over it with its permissions),
so a full disk or a Ctrl-C in the write leaves it as it was. A file with syntax errors that
holds a NUL byte is taken for no program text (a binary file named by mistake) and left as
it was (stdin is copied to stdout), its errors reported, status 1; a NUL in a comment of a
program without errors is formatted as any text.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

from serq import api
from serq.diagnostics import Diagnostic, counted, print_diagnostics
from serq.diagnostics.render import shown_file
from serq.file_output import write_bytes
from serq.formatter import format_source
from serq.syntax.source_text import decode, lines_with_ends

EXIT_OK, EXIT_CHANGED, EXIT_USAGE = 0, 1, 2
STDIN = "-"


def fmt(files: Sequence[str], check: bool = False, color: bool | None = None) -> int:
    """Format each of `files` (`-` is stdin, written to stdout); with `check`, write nothing
    and print a unified diff of each file that would change."""
    status = EXIT_OK
    for path in files:
        loaded, name = (api.read_stdin(), api.STDIN) if path == STDIN else (_read(path), path)
        if isinstance(loaded, Diagnostic):
            print_diagnostics([loaded], {}, file=sys.stderr, color=color)
            status = EXIT_USAGE
            continue
        data = loaded
        text, mark = decode(data), _BOM if data.startswith(_BOM) else b""
        formatted = format_source(text, name)
        if formatted.diagnostics:
            print_diagnostics(
                list(formatted.diagnostics), {name: text}, file=sys.stderr, color=color
            )
            errors = "a syntax error" if formatted.kept == 1 else "syntax errors"
            print(
                f"{shown_file(name)}: {counted(formatted.kept, 'item')} with {errors} left as "
                "written",
                file=sys.stderr,
            )
            status = max(status, EXIT_CHANGED)
        if formatted.diagnostics and "\0" in text:  # a binary file given by mistake
            line = text.count("\n", 0, text.index("\0")) + 1
            print(
                f"serq fmt: {shown_file(name)}: left as it was: it holds a NUL byte (line "
                f"{line}), so it is no program text",
                file=sys.stderr,
            )
            if path == STDIN and not check:
                _write_stdout(data)
            status = max(status, EXIT_CHANGED)
            continue
        changed = formatted.text != text
        if check:
            if changed:
                diff = difflib.unified_diff(
                    lines_with_ends(text),
                    lines_with_ends(formatted.text),
                    fromfile=name,
                    tofile=f"{name} (formatted)",
                )
                _write_stdout(_encode("".join(diff)))
                ends = _line_ends(text)
                if ends:  # else the diff's lines look the same where only these change
                    shown = shown_file(name)
                    print(f"serq fmt: {shown}: its {ends} line ends become \\n", file=sys.stderr)
                status = max(status, EXIT_CHANGED)
        elif path == STDIN:
            _write_stdout(mark + _encode(formatted.text))
        elif changed:
            try:
                write_bytes(path, mark + _encode(formatted.text))
            except OSError as error:
                print(
                    f"serq fmt: cannot write `{shown_file(path)}`: {error.strerror or error}",
                    file=sys.stderr,
                )
                status = EXIT_USAGE
    return status


_BOM = b"\xef\xbb\xbf"


def _line_ends(text: str) -> str:
    """The line ends of `text` that formatting rewrites as `\\n`, as a message names
    them (`\\r\\n`, `\\r`, or both), or "" when it has none."""
    crlf = text.count("\r\n")
    alone = text.count("\r") - crlf
    found = [name for name, n in ((r"\r\n", crlf), (r"\r", alone)) if n]
    return " and ".join(found)


def _read(path: str) -> bytes | Diagnostic:
    """The bytes of the file at `path`, or `serq.api.read_source`'s `E-io` diagnostic."""
    try:
        return Path(path).read_bytes()
    except OSError:
        pass
    loaded = api.read_source(path)
    return loaded if isinstance(loaded, Diagnostic) else _encode(loaded)


def _write_stdout(data: bytes) -> None:
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # a text stream without bytes (a test's capture)
        sys.stdout.write(("\ufeff" if data.startswith(_BOM) else "") + decode(data))
        return
    sys.stdout.flush()
    stream.write(data)
    stream.flush()


def _encode(text: str) -> bytes:
    """`text` as UTF-8, each escaped invalid byte (`serq.syntax.source_text.decode`) as it was."""
    return text.encode("utf-8", "surrogateescape")
