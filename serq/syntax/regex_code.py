"""The regular expressions of the parser's lexers, compiled once and kept on disk.

Lark's contextual lexer gives each parser state a lexer of the terminals that state
accepts, and a lexer compiles its one big alternation of them (and the keywords its
names may turn out to be) the first time it is used. Python's `re` compiles a pattern in
Python code, so checking a ten-line file compiled about 47 patterns, some 9 ms of the
start-up of `serq check` (16 ms for examples/vllm.sq), every process.

What `re` makes of a pattern depends only on the pattern and its flags: the program of
the regex engine (a list of numbers), the group count and the group names, which
`_sre.compile` turns into a `re.Pattern`. `compile` keeps those parts in a
`serq.code_store.CodeStore` and builds the pattern from them, as `re._compiler.compile`
does after parsing. The store's file is trusted as a .pyc is (the user's own, written
by this interpreter); still, an entry `_sre.compile` refuses (it checks that a program
is well formed) is compiled again. Where `re`'s internals are not there (another
implementation), or for the DEBUG and TEMPLATE flags, `re` compiles as usual. `RE`
stands in for the `re` module in the grammar's lexers (`serq.syntax.parser.grammar`).
"""

from __future__ import annotations

import re
from array import array
from typing import Any

from serq.code_store import CodeStore, shaped

try:  # the internals `re.compile` is made of (CPython 3.11 and later)
    import _sre
    from re import _compiler, _parser
except ImportError:  # pragma: no cover - another implementation
    _sre = _compiler = _parser = None  # type: ignore[assignment]

# the engine's code words are 32-bit unsigned (`SRE_CODE`)
_CODE_ITEM = "I" if array("I").itemsize >= 4 else "L"
_SPECIAL = int(re.DEBUG | re.TEMPLATE)  # flags `re.compile` does more for: left to it


# (pattern, flags) -> (flags, program, groups, groupindex, indexgroup): see `_parts`
_STORE = CodeStore(
    "regex-code",
    lambda key, value: shaped(key, (str, int)) and shaped(value, (int, bytes, int, dict, tuple)),
    max_entries=2000,
)
_compiled: dict[tuple[str, int], re.Pattern] = {}  # this process's, as `re` keeps its own


def compile(pattern: str, flags: int = 0) -> re.Pattern:
    """`re.compile(pattern, flags)`, from the stored parts when there are some."""
    compiled = _compiled.get((pattern, flags))  # (a `RegexFlag` is equal to its int)
    if compiled is not None:  # fast path: compiled before in this process
        return compiled
    flags = int(flags)
    if _sre is None or type(pattern) is not str or flags & _SPECIAL:
        return re.compile(pattern, flags)
    key = (pattern, flags)
    parts = _STORE.get(key)
    if parts is not None:
        try:
            compiled = _build(pattern, parts)
        except Exception:  # a damaged entry (`_sre` checks the program): compile again
            parts = None
    if parts is None:
        try:
            parts = _parts(pattern, flags)
            compiled = _build(pattern, parts)
        except Exception:  # a bad pattern, which `re` reports, or internals it lacks
            return re.compile(pattern, flags)
        _STORE.put(key, parts)
    _compiled[key] = compiled
    return compiled


def match(pattern: str, string: str, flags: int = 0) -> re.Match | None:
    """`re.match`, through `compile`."""
    return compile(pattern, flags).match(string)


def _parts(pattern: str, flags: int) -> tuple:
    """What `re._compiler.compile` hands `_sre.compile` for `pattern`, the program as
    bytes (which `marshal` writes and reads in one piece)."""
    parsed = _parser.parse(pattern, flags)
    code = _compiler._code(parsed, flags)
    state = parsed.state
    indexgroup: list[str | None] = [None] * state.groups
    for name, i in state.groupdict.items():
        indexgroup[i] = name
    return (
        flags | state.flags,
        array(_CODE_ITEM, code).tobytes(),
        state.groups - 1,
        dict(state.groupdict),
        tuple(indexgroup),
    )


def _build(pattern: str, parts: tuple) -> re.Pattern:
    flags, code, groups, groupindex, indexgroup = parts
    return _sre.compile(
        pattern, flags, array(_CODE_ITEM, code).tolist(), groups, groupindex, indexgroup
    )


class _CachedRe:
    """The `re` module as Lark's lexers use it, with `compile` and `match` cached."""

    compile = staticmethod(compile)
    match = staticmethod(match)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


RE = _CachedRe()
