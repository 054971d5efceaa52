"""Where serq keeps what it caches between processes: `$SERQ_CACHE_DIR`, else
`$XDG_CACHE_HOME/serq`, else `~/.cache/serq` (the parser's pickle, `serq.syntax.
grammar_cache`, and the stores of `serq.code_store`: the dataclasses' code and the
lexers' regexes), and how its files are read and written. Imports no serq module."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def cache_dir() -> Path:
    """The directory (it may not exist yet)."""
    explicit = os.environ.get("SERQ_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "serq"


def read_private(path: Path) -> bytes | None:
    """The bytes of the file at `path` if it is the user's own and nobody else can write
    it (what it holds is executed: a pickle, code); None otherwise, or when it cannot be
    read."""
    try:
        with open(path, "rb") as f:
            status = os.fstat(f.fileno())
            if hasattr(os, "getuid") and status.st_uid != os.getuid():
                return None
            if status.st_mode & 0o022:  # group or others could have written it
                return None
            return f.read()
    except OSError:
        return None


def write_private(path: Path, write: Callable[[BinaryIO], object], prefix: str) -> bool:
    """Write the file at `path` with `write(f)`, atomically (a temporary file named
    `prefix`... beside it, then renamed), readable by the user alone, in a directory
    made for the user alone; False when it could not be (nothing is raised)."""
    import tempfile

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except Exception:  # not writable, disk full, or a value that cannot be written
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False
    return True
