"""The methods `dataclasses` writes for serq's classes, compiled once and kept on disk.

`serq check` defines about 140 frozen, slotted dataclasses (the surface AST, the IR, the
diagnostics) before it reads a byte of the program. For each class `dataclasses` writes
the source of six methods (`__init__`, `__repr__`, `__eq__`, `__hash__`, `__setattr__`,
`__delattr__`) and compiles it with `exec`: about 830 compilations of 670 texts, some
40 ms of a check's start-up, every process. A text depends only on the class's fields,
so its code object is the same every time; this module keeps the code objects, by text,
in a `serq.code_store.CodeStore` and hands `dataclasses` the stored code instead of
compiling it again, as a .pyc spares compiling a module (loading the file takes about
3 ms).

`install()` (called by `import serq`) puts `_exec` in `dataclasses`' namespace, where
its `exec` is looked up. `_exec` compiles a text as `exec` would have (no inherited
future flags, file name "<string>") and executes the code in the same namespaces, so
the methods are the same functions; it does so only for the classes of serq's own
modules, and passes every other call to the built-in `exec` untouched. The store says
when its file is read and written; `SERQ_CODE_CACHE=0`, or `SERQ_GRAMMAR_CACHE=0`, turns
the file off, and `SERQ_CODE_CACHE=0` the cache itself (the built-in `exec` stays in
place).
"""

from __future__ import annotations

import builtins
import os
from types import CodeType
from typing import Any

from serq.code_store import CodeStore, shaped

# keyed by (module, text): a module's classes are all made when it is imported, so the
# texts of a module that changed and that it no longer writes are dropped
_STORE = CodeStore(
    "dataclass-code",
    lambda key, value: shaped(key, (str, str)) and type(value) is CodeType,
    group=lambda key: key[0],
)
_state = {"installed": False}
_builtin_exec = builtins.exec


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    """`exec`, with the code of a serq class's generated methods taken from the cache."""
    module = globals.get("__name__") if type(globals) is dict else None
    if type(source) is str and type(module) is str and module.startswith("serq."):
        key = (module, source)
        code = _STORE.get(key)
        if code is None:
            code = compile(source, "<string>", "exec", dont_inherit=True)
            _STORE.put(key, code)
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
