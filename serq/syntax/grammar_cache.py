"""The parser, pickled in the user cache dir, so that a process does not build it again.

Building `serq.syntax.parser.Grammar` imports Lark and has it build the LALR tables (from
Lark's own cache at best, about 35 ms, then a lexer per parser state), which
`serq.syntax.tables` reads into the plain tables of `serq.syntax.lalr`; unpickling those
costs a few milliseconds and imports no Lark. The pickle lives in
`$SERQ_CACHE_DIR`, else `$XDG_CACHE_HOME/serq`, else `~/.cache/serq`, named after the
SHA-256 of everything the object is made from: the grammar text, the source of the
modules that make it and whose classes it holds (`parser.py`, `expected.py`, `lalr.py`,
`tables.py`), Lark's version (its `__init__.py`, read without importing it), Python's
version and `FORMAT`. A change to any of them names another file. When one is written,
the `KEEP` most recently written stay and older ones are removed: two serq installs (two
checkouts, two virtual environments) used in turn keep a file each instead of removing
each other's.

Every failure falls back to building: a directory that cannot be made or written (the
object is then built in every process, as before), a file that does not unpickle, is
not a `Grammar`, or is not the user's own or is writable by others (a pickle runs code
when loaded, so only the user's own private file is read). `SERQ_GRAMMAR_CACHE=0` turns
the cache off.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path
from typing import Any

FORMAT = 2  # bump when what the pickle holds changes in a way the key does not see
KEEP = 4  # grammar files kept in the cache dir (the newest, by the time they were written)
_PREFIX = "grammar-"
_SUFFIX = ".pickle"
# the modules that make the pickle and of the classes it holds
_SOURCES = ("parser.py", "expected.py", "lalr.py", "tables.py")


def cache_dir() -> Path | None:
    """Where the pickle goes (`serq.user_cache`); None when `SERQ_GRAMMAR_CACHE=0`."""
    if os.environ.get("SERQ_GRAMMAR_CACHE") == "0":
        return None
    from serq.user_cache import cache_dir as user_cache_dir

    return user_cache_dir()


def path_for(grammar_text: str) -> Path | None:
    """The pickle of the parser built from `grammar_text` by this serq, Lark and Python."""
    directory = cache_dir()
    if directory is None:
        return None
    lark = _lark_version()
    if lark is None:
        return None
    key = _sha256()
    for part in (str(FORMAT), sys.version, grammar_text):
        key.update(part.encode("utf-8", "surrogatepass") + b"\0")
    key.update(lark + b"\0")
    here = Path(__file__).resolve().parent
    for name in _SOURCES:
        try:
            key.update((here / name).read_bytes() + b"\0")
        except OSError:
            return None  # no source to key on (a zipped install): do not cache
    return directory / f"{_PREFIX}{key.hexdigest()[:32]}{_SUFFIX}"


def load(path: Path | None, kind: type) -> Any | None:
    """The object pickled at `path` if it is the user's own private file holding a
    `kind`; None otherwise (or on any failure)."""
    if path is None:
        return None
    from serq.user_cache import read_private

    data = read_private(path)
    if data is None:
        return None
    try:
        value = pickle.loads(data)
    except Exception:  # truncated, or classes that changed
        return None
    return value if isinstance(value, kind) else None


def store(path: Path | None, value: Any) -> bool:
    """Pickle `value` at `path` (atomically, mode 0600) and remove the grammars beside it
    past the `KEEP` newest; False when it could not be written (nothing is raised)."""
    if path is None:
        return False
    from serq.user_cache import write_private

    def dump(f: Any) -> None:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)

    if not write_private(path, dump, ".grammar-"):
        return False
    others = []
    for other in path.parent.glob(f"{_PREFIX}*{_SUFFIX}"):
        try:
            if other != path:
                others.append((other.stat().st_mtime_ns, other))
        except OSError:  # removed meanwhile by another process
            pass
    for _, old in sorted(others, reverse=True)[KEEP - 1 :]:
        try:
            old.unlink()
        except OSError:
            pass
    return True


def _sha256() -> Any:
    """A SHA-256 hash object: CPython's own implementation where it has one, which spares
    `hashlib` loading OpenSSL (several milliseconds of every start-up) for one key."""
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # CPython 3.12 and later
        except ImportError:
            from hashlib import sha256
    return sha256()


def _lark_version() -> bytes | None:
    """Lark's `__init__.py` (which holds its version), found without importing Lark (a
    process that finds the pickle never does); None when it cannot be read."""
    from importlib.util import find_spec

    try:
        spec = find_spec("lark")
        origin = spec.origin if spec is not None else None
        return Path(origin).read_bytes() if origin else None
    except (ImportError, OSError, ValueError):
        return None
