"""The first pass: `use` brings in a library's definitions, and `fn main() { }` comes off.

A library (the file a `use` names, relative to the using file) holds only `def`
and `use` items; its own `use`s are resolved next to it. A file used twice is
read once; a file that uses itself through a chain is a cycle, reported at the
`use` that closes it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import BinaryIO

from serq.diagnostics import Edit, Fix, Label, Severity, Span, codes
from serq.expand.context import Context
from serq.syntax import ItemCache, ParseResult, ast, parse
from serq.syntax.source_text import decode

# The libraries serq supplies itself: `use "std/args";` makes `args.number` available.
STD_LIBRARIES = ("std/args",)

# A loader reads and parses a file: its parse, or the reason it could not be read.
Loader = Callable[[str], "ParseResult | str"]


# Files whose text is read from another file (`serq run --buffer FILE=COPY`, which the
# editor's Run passes for buffers with unsaved changes): key of FILE -> COPY. FILE keeps
# its name and folder (its `use`s and `trace`s are read beside it); only its text moves.
BUFFERS: dict[str, str] = {}


def text_path(path: str) -> str:
    """The file whose bytes are the text of the file at `path` (`BUFFERS`)."""
    if not BUFFERS or not path:
        return path
    try:
        return BUFFERS.get(library_key(path), path)
    except ValueError:  # a path the system cannot name
        return path


def read_text(path: str) -> str:
    """The text of the library at `path` as serq reads a program (`decode`); OSError, or
    ValueError for a path the system cannot name, when it cannot be read (`open_library`)."""
    with open_library(text_path(path)) as f:
        return decode(f.read())


def open_library(path: str) -> BinaryIO:
    """The file at `path` open for reading as bytes; `OSError` when it cannot be, or when it
    is no regular file: a named pipe would hold the reader until a writer came (the editor's
    server with it, every request unanswered), a device such as `/dev/zero` never ends. A
    program given on the command line may still be a pipe (`serq check <(...)`, `-`)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)  # O_NONBLOCK: a named pipe opens at once, for fstat to see
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(mode):
            kind = "a named pipe" if stat.S_ISFIFO(mode) else "a socket"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                kind = "a device"
            raise OSError(errno.EINVAL, f"it is {kind}, not a file", path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_file(path: str, items: ItemCache | None = None) -> ParseResult | str:
    """Read and parse `path` (with the item cache `items`, if given); the reason as a
    string when it cannot be read."""
    try:
        text = read_text(path)
    except OSError as e:
        return unreadable_text(path, e)
    except ValueError as e:  # a path the system cannot name: "embedded null byte"
        return str(e)
    return parse(text, path, items)


def unreadable_text(path: str, error: OSError) -> str:
    """Why the text of the file at `path` cannot be read (`unreadable`), naming the copy
    it was read from when `--buffer` gave one."""
    copy = text_path(path)
    reason = unreadable(error)
    return reason if copy == path else f"its --buffer copy `{copy}`: {reason}"


def unreadable(error: OSError) -> str:
    """Why a file cannot be read, in the words every command uses ("no such file")."""
    if isinstance(error, IsADirectoryError):
        return "it is a directory"
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, NotADirectoryError):  # a file where a folder goes (`--dump FILE`)
        return "not a directory"
    return error.strerror or str(error)


def unwritable(file: str | os.PathLike) -> str | None:
    """Why a command cannot write the file at `file`, in the words of `unreadable`, found
    before it does the work whose result goes there (a sweep's runs, a plot's drawing):
    the folder missing, not a folder or not writable, the file a directory or not
    writable, or no file to be made there (`/proc`, a share as root). The trial opens it
    for writing and changes nothing: a file made for it is removed, one there is kept
    whole. None when it can be written."""
    text = os.fspath(file)
    if text.endswith(tuple(sep for sep in (os.sep, os.altsep) if sep)):
        return "it names a directory (it ends with a separator)"  # `Path` would drop it
    path = Path(file)
    if path.is_symlink():  # its target is what gets written, in the target's folder
        path = Path(os.path.realpath(path))
    folder = path.parent
    if not folder.is_dir():
        return (
            f"`{folder}` is not a directory"
            if folder.exists()
            else (f"the directory `{folder}` does not exist")
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the directory `{folder}` is not writable"
    if path.is_dir():
        return "it is a directory"
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    try:
        if path.exists():
            with open(path, "r+b"):
                pass
        else:
            with open(path, "xb"):
                pass
            path.unlink()
    except OSError as error:
        return unreadable(error)
    return None


def flatten(module: ast.Module, ctx: Context, load: Loader = read_file) -> list[ast.Item]:
    """The program's items with `fn main` unwrapped and every used library's definitions in
    place of its `use`; the `use` items themselves are gone."""
    ctx.fn_main = module.main is not None
    seen: set[str] = set()
    chain = [library_key(module.file)]
    items = _items(module.all_items(), module.file, ctx, load, seen, chain, True)
    out = []
    arguments: dict[str, ast.Ident] = {}  # each argument's first reading
    for item in items:  # an input is its value from here on (sets replaced it before)
        if isinstance(item, ast.Let) and item.argument is not None:
            _read_once(item.argument, arguments, ctx)
            if not ctx.std_args:
                ctx.error(
                    codes.USE,
                    item.argument.span,
                    '`args.number` needs `use "std/args";`',
                    help=_STD_ARGS_HELP,
                    fix=_std_args_fix(module) if item.span.file == module.file else None,
                )
            item = replace(item, argument=None)
        out.append(item)
    return out


def _read_once(argument: ast.Ident, arguments: dict[str, ast.Ident], ctx: Context) -> None:
    """Report a program argument read by a second `let` (both references refuse it: one
    `--set` would give the one and leave the other at its default)."""
    first = arguments.setdefault(argument.name, argument)
    if first is not argument:
        ctx.error(
            codes.NAME_CLASH,
            argument.span,
            f"the program argument `{argument.name}` is read twice",
            labels=(Label(first.span, "first read here"),),
            help="read it in one `let` and use that let's name",
        )


_STD_ARGS_HELP = 'add `use "std/args";` at the top of the file'


def _std_args_fix(module: ast.Module) -> Fix | None:
    """Insert `use "std/args";` on a line of its own before the file's first item (after
    the comments that head the file)."""
    tops = [*module.items, *([module.main] if module.main is not None else [])]
    if not tops:
        return None
    first = min((t.span for t in tops), key=lambda s: s.start)
    line_start = first.start - (first.column - 1)  # columns count code points, as offsets do
    at = Span.point(first.file, line_start, first.line, 1)
    return Fix(_STD_ARGS_HELP, (Edit(at, 'use "std/args";\n'),))


def library_key(path: str) -> str:
    """One key for one file, however its path is written."""
    return os.path.normcase(os.path.abspath(path))


def library_path(item: ast.Use, file: str) -> str | None:
    """The path of the file `item`, a `use` in `file`, reads; None for a library serq
    supplies itself (`std/args`)."""
    if item.path in STD_LIBRARIES:
        return None
    base = os.path.dirname(file) if file and not file.startswith("<") else "."
    return os.path.join(base, item.path)


def _items(
    items: tuple[ast.Item, ...],
    file: str,
    ctx: Context,
    load: Loader,
    seen: set[str],
    chain: list[str],
    top: bool,
) -> list[ast.Item]:
    out: list[ast.Item] = []
    for item in items:
        if isinstance(item, ast.Use):
            out.extend(_use(item, file, ctx, load, seen, chain))
        elif top or isinstance(item, (ast.DefExpr, ast.DefBlock, ast.ErrorItem)):
            out.append(item)
        else:
            ctx.error(
                codes.USE,
                item.span,
                "a library holds only `def` and `use` items",
                help="move this item into the program that uses the library",
            )
    return out


def _use(
    item: ast.Use, file: str, ctx: Context, load: Loader, seen: set[str], chain: list[str]
) -> list[ast.Item]:
    path = library_path(item, file)
    if path is None:
        ctx.std_args = True
        return []
    key = library_key(path)
    if key in chain:
        ctx.error(
            codes.USE,
            item.span,
            f"`{item.path}` uses itself: a cycle of `use`",
            notes=tuple(f"through {p}" for p in chain[chain.index(key) :]),
        )
        return []
    if key in seen:
        return []
    seen.add(key)
    result = load(path)
    if isinstance(result, str):
        ctx.library_lost = True
        ctx.error(
            codes.USE,
            item.path_span,
            f"cannot read `{item.path}`: {result}",
            labels=(Label(item.path_span, f"looked for {path}"),),
        )
        return []
    ctx.diagnostics.extend(result.diagnostics)
    if any(d.severity >= Severity.ERROR for d in result.diagnostics):
        ctx.library_lost = True  # its broken items are left out, their defs with them
    loaded = result.module
    if loaded.main is not None:
        ctx.error(codes.USE, item.span, f"`{item.path}` has `fn main`: a library cannot")
    return _items(loaded.all_items(), path, ctx, load, seen, [*chain, key], False)
