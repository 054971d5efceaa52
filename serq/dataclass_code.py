"""The methods `dataclasses` writes for serq's classes, compiled once and kept on disk.

`serq check` defines about 140 frozen, slotted dataclasses (the surface AST, the IR, the
diagnostics) before it reads a byte of the program. For each class `dataclasses` writes
the source of six methods (`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`,
`__delattr__`) and compiles it with `exec`: about 830 compilations of 670 texts, some
40 ms of a check's start-up, every process. A text depends only on the class's fields,
so its code object is the same every time; this module keeps the code objects, by text,
in a `marshal` file beside the grammar's pickle (`serq.user_cache`) and hands
`dataclasses` the stored code instead of compiling it again, as a .pyc spares compiling
a module (loading the file takes about 3 ms).

`install()` (called by `import serq`) puts `_exec` in `dataclasses`' namespace, where
its `exec` is looked up. `_exec` compiles a text as `exec` would have (no inherited
future flags, file name "<string>") and executes the code in the same namespaces, so
the methods are the same functions; it does so only for the classes of serq's own
modules, and passes every other call to the built-in `exec` untouched. New code is
written when the process exits (atomically; nothing when nothing was new or the dir is
not writable). The file is read only if it is the user's own and nobody else can write
it (it holds code that is executed), and only if it was written by this Python (its name
carries the interpreter's cache tag and `sys.hexversion`). `SERQ_CODE_CACHE=0`, or
`SERQ_GRAMMAR_CACHE=0`, turns it off.
"""

from __future__ import annotations

import builtins
import marshal
import os
import sys
from types import CodeType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

_MAX_ENTRIES = 4000  # past this many (serq's sources changed a lot), start afresh
_codes: dict[str, CodeType] = {}
_used: set[str] = set()
_state = {"new": False, "installed": False, "loaded": False}
_builtin_exec = builtins.exec


def _file() -> Path | None:
    if os.environ.get("SERQ_CODE_CACHE") == "0":
        return None
    from serq.user_cache import cache_dir

    if os.environ.get("SERQ_GRAMMAR_CACHE") == "0":
        return None
    # the code's format is the interpreter's: one file per implementation and version
    tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
    return cache_dir() / f"dataclass-code-{tag}.marshal"


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """`exec`, with the code of a serq class's generated methods taken from the cache."""
    if (
        type(source) is str
        and type(globals) is dict
        and str(globals.get("__name__", "")).startswith("serq.")
    ):
        if not _state["loaded"]:
            _load_once()
        code = _codes.get(source)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _codes[source] = code
            _state["new"] = True
        _used.add(source)
        return _builtin_exec(code, globals, locals)
    return _builtin_exec(source, globals, locals)


def install() -> None:
    """Hand `dataclasses` the cached `exec` (once a process; the stored code is read when
    the first serq class is made)."""
    if _state["installed"] or os.environ.get("SERQ_CODE_CACHE") == "0":
        return
    _state["installed"] = True
    import dataclasses

    dataclasses.exec = _exec  # type: ignore[attr-defined]  # its `exec` is a global lookup


def _load_once() -> None:
    _state["loaded"] = True
    path = _file()
    if path is None:
        return
    _codes.update(_load(path))
    import atexit

    atexit.register(_save, path)


def _load(path: Path) -> dict[str, CodeType]:
    try:
        with open(path, "rb") as f:
            status = os.fstat(f.fileno())
            if hasattr(os, "getuid") and status.st_uid != os.getuid():
                return {}
            if status.st_mode & 0o022:  # group or others could have written it
                return {}
            table = marshal.loads(f.read())  # fast path: `marshal.load` reads piecemeal
    except Exception:  # missing, unreadable or truncated: compile as usual
        return {}
    if type(table) is not dict:
        return {}
    return {k: v for k, v in table.items() if type(k) is str and type(v) is CodeType}


def _save(path: Path) -> None:
    """Write the table if this process compiled anything new (at exit; never raises)."""
    if not _state["new"]:
        return
    import tempfile

    table = _codes if len(_codes) <= _MAX_ENTRIES else {k: _codes[k] for k in _used}
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".code-", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as f:
            marshal.dump(table, f)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except Exception:
        try:
            os.unlink(temporary)
        except OSError:
            pass
