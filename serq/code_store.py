"""A table of compiled code kept on disk between processes (`serq.user_cache`).

Two things cost a serq process the same work every time it starts, though their result
depends only on a text: the methods `dataclasses` writes for serq's classes
(`serq.dataclass_code`) and the regular expressions of the parser's lexers
(`serq.syntax.regex_code`). Each keeps what it compiled in a `CodeStore`, a dict from the
text to what `marshal` can write, in one file per store and per interpreter (the name
carries the cache tag and `sys.hexversion`: code is the interpreter's own format).

The file is read once a process, when the store is first asked, and only if it is the
user's own and nobody else can write it (it holds code that is executed). It is written
back when the process exits, atomically, and only if the process added to it. What
went stale is dropped then: a store whose keys fall in groups that are compiled whole in
one process (a module's dataclasses, made when it is imported) keeps, of each group
this process added to, only what it used; any store past `max_entries` keeps only what
this process used. Nothing
here raises: a missing, foreign or damaged file is an empty store, and a directory that
cannot be written keeps nothing. `SERQ_CODE_CACHE=0`, or `SERQ_GRAMMAR_CACHE=0`, turns
every store off (it then holds what this process compiles, and writes nothing).
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path


def enabled() -> bool:
    """Whether stores are read and written (the environment may turn them off)."""
    return os.environ.get("SERQ_CODE_CACHE") != "0" and os.environ.get("SERQ_GRAMMAR_CACHE") != "0"


def shaped(value: Any, types: tuple[type, ...]) -> bool:
    """Whether `value` is a tuple of exactly these types, item by item (a stored entry's
    key or value, checked before it is used)."""
    return (
        type(value) is tuple
        and len(value) == len(types)
        and all(type(v) is t for v, t in zip(value, types, strict=True))
    )


class CodeStore:
    """Compiled values by key, read from and written to `<stem>-<interpreter>.marshal` in
    the user's cache; `valid(key, value)` tells a stored entry that may be used, and
    `group(key)`, if given, the group of keys one process compiles whole."""

    def __init__(
        self,
        stem: str,
        valid: Callable[[Any, Any], bool],
        max_entries: int = 4000,
        group: Callable[[Any], Hashable] | None = None,
    ) -> None:
        self.stem = stem
        self.valid = valid
        self.max_entries = max_entries
        self.group = group
        self.added: set[Hashable] = set()
        self.table: dict[Hashable, Any] = {}
        self.used: set[Hashable] = set()
        self.new = False
        self.loaded = False

    def get(self, key: Hashable) -> Any | None:
        """The value stored for `key`, or None (the file is read on the first call)."""
        if not self.loaded:
            self._load_once()
        value = self.table.get(key)
        if value is not None:
            self.used.add(key)
        return value

    def put(self, key: Hashable, value: Any) -> None:
        """Keep `value` for `key` (written when the process exits)."""
        self.table[key] = value
        self.used.add(key)
        self.added.add(key)
        self.new = True

    def path(self) -> Path | None:
        """The store's file (None when stores are off)."""
        if not enabled():
            return None
        from serq.user_cache import cache_dir

        tag = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
        return cache_dir() / f"{self.stem}-{tag}.marshal"

    def _load_once(self) -> None:
        self.loaded = True
        path = self.path()
        if path is None:
            return
        self.table.update(self.load(path))
        import atexit

        atexit.register(self.save, path)

    def load(self, path: Path) -> dict[Hashable, Any]:
        """The valid entries of the file at `path`; {} unless it is the user's own file,
        writable by nobody else, holding a table."""
        from serq.user_cache import read_private

        data = read_private(path)
        if data is None:
            return {}
        try:
            table = marshal.loads(data)  # fast path: `marshal.load` reads piecemeal
        except Exception:  # truncated: compile as usual
            return {}
        if type(table) is not dict:
            return {}
        valid = self.valid
        return {k: v for k, v in table.items() if valid(k, v)}

    def save(self, path: Path) -> None:
        """Write the table if this process added to it (at exit; never raises)."""
        if not self.new:
            return
        from serq.user_cache import write_private

        table, used, group = self.table, self.used, self.group
        if group is not None:  # a group with new code changed: what it did not use is gone
            changed = {group(k) for k in self.added}
            table = {k: v for k, v in table.items() if k in used or group(k) not in changed}
        if len(table) > self.max_entries:
            table = {k: table[k] for k in used}
        write_private(path, lambda f: marshal.dump(table, f), ".code-")
