"""Writing a user's file whole or not at all: `serq fmt`'s rewrite, `sweep --out`, `run
--dump`, `plot -o` and the API's `write` and `save`. Imports no serq module.

The new content goes to a temporary file beside the target (`.NAME.XXXXXXXX.tmp`), is
flushed to the disk, takes the old file's permission bits (a new file gets the umask's),
and is renamed over the target in one step; if anything fails first (a full disk, a file
size limit, Ctrl-C) the temporary file is removed and the old file is as it was. A
symbolic link is followed: its target is replaced and the link stays a link.

Three cases write in place instead, as an `open(path, "wb")` would, since a rename cannot
do what they need: a target that is not a regular file (`/dev/stdout`, a named pipe), and
a file that can be written in a directory that cannot (no temporary file can be made
there). A rename gives the file a new inode, so a hard link to the old one keeps the old
content, and the file's owner becomes the writer where it cannot be kept (another user's
file written by root keeps its owner; a group the writer is not in is lost).
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import BinaryIO

_ATTEMPTS = 100  # names tried for the temporary file before giving up (each is random)


def write_file(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> None:
    """Replace the file at `path` with what `write(f)` writes to the binary file `f`, whole
    or not at all. Raises `OSError` (and whatever `write` raises) with the old file kept."""
    write_files([(path, write)])


def write_files(writes: Sequence[tuple[str | os.PathLike, Callable[[BinaryIO], object]]]) -> None:
    """Replace several files, each as `write_file` does, so that a failure in the writing
    of any (a full disk, Ctrl-C) leaves them all as they were: every new content goes to
    its temporary file first, and the renames follow once all are written. (Only a failure
    among the renames themselves, which write nothing, could leave the first ones new.)"""
    staged: list[tuple[str, Path]] = []
    try:
        for path, write in writes:
            temporary = _stage(path, write)
            if temporary is not None:
                staged.append(temporary)
        for temporary, target in staged:
            os.replace(temporary, target)
    except BaseException:
        for temporary, _ in staged:  # those renamed already are gone: nothing to remove
            with suppress(OSError):
                os.unlink(temporary)
        raise


def _stage(path: str | os.PathLike, write: Callable[[BinaryIO], object]) -> tuple[str, Path] | None:
    """The temporary file written with `path`'s new content and the file it will replace,
    or None when `path` was written in place (see the module docstring)."""
    target = Path(os.path.realpath(path))  # a symlink's target, not the link itself
    try:
        old: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        _in_place(target, write)
        return None
    try:
        fd, temporary = _temporary(target, old)
    except PermissionError:
        if old is None or not os.access(target, os.W_OK):
            raise
        _in_place(target, write)  # the folder is read-only, the file is not
        return None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if old is not None:
            os.chmod(temporary, stat.S_IMODE(old.st_mode))
            if hasattr(os, "chown"):  # POSIX: keep the owner and group where the writer may
                with suppress(OSError):
                    os.chown(temporary, old.st_uid, old.st_gid)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary, target


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Replace the file at `path` with `data` (see `write_file`)."""
    write_file(path, lambda f: f.write(data))


def _temporary(target: Path, old: os.stat_result | None) -> tuple[int, str]:
    """A new file beside `target` open for writing, and its path. It is made with mode
    0o666 less the umask (what `open` gives a new file), or 0o600 when it will take an
    old file's bits (nobody else reads it meanwhile)."""
    mode = 0o600 if old is not None else 0o666
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(_ATTEMPTS):
        name = target.with_name(f".{target.name[:200]}.{secrets.token_hex(4)}.tmp")  # < 255 bytes
        try:
            return os.open(name, flags, mode), str(name)
        except FileExistsError:
            continue
    raise FileExistsError(f"no temporary file could be made beside `{target}`")


def _in_place(target: Path, write: Callable[[BinaryIO], object]) -> None:
    with open(target, "wb") as f:
        write(f)
