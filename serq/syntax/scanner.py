"""The item scanner: cuts a file into top-level items without parsing them.

The incremental parser parses each item on its own and caches it by its text,
so the cut must be cheap and must not depend on the items being valid. One
regular expression finds what matters (comments, strings, braces, `;`, and
the item keywords that begin a line); brace depth does the rest:

- at the top level an item ends at a `;`, or at the `}` that closes its first
  brace (a `;` right after that `}` belongs to the item: `stage s : step {…};`);
- `fn main() {` is a chunk of its own, the items inside it are cut the same
  way one level down, and the `}` that closes it is a chunk too;
- editing leaves braces open, so a line that begins with a keyword that only
  ever starts an item (`let use def stage workload server gauge fn`) as an item
  begins (`server {`, `stage NAME`, `use "`: `_ITEM_ONLY`), no more indented
  than the current item's first line, starts a new item even inside an open
  brace. No valid program has such a line inside an item; keywords are
  contextual, so a line may begin with `server` as a name (a stage's: `run`
  on one line, `server (1);` on the next), which is no item's beginning.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from serq.syntax.source_text import BLANK, NamePattern

ITEM = "item"
FN_HEAD = "fn_head"
FN_CLOSE = "fn_close"

def _tokens(start: str, part: str) -> str:
    """The scanner's tokens, with names of the classes `start` and `part`."""
    # the keywords that only ever begin an item, each with what follows it there (a name,
    # a string, a brace), as the lines that begin items inside an open brace must show them
    item_only = (
        r"(?:let|def|stage|gauge|fn)\b(?=" + BLANK + "+" + start + ")",
        r'use\b(?=\s*")',
        r"(?:workload|server)\b(?=\s*\{)",
    )
    return (
        r"""
      (?P<comment>//[^\n]*|/\*[\s\S]*?\*/)
    | (?P<string>"[^"\n]*"?)
    | (?P<lead>(?<![^\n])[ \t]*(?:LEAD))
    | (?P<word>NAME|[0-9][0-9.eE+-]*)
    | (?P<punct>[{};])
    | (?P<other>[^\s])
    """.replace("LEAD", "|".join(item_only)).replace("NAME", start + part + "*")
    )


_TOKENS = NamePattern(_tokens, re.VERBOSE)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One top-level piece of a file: `text[start:end]`, beginning at `line`:`column`."""

    kind: str
    start: int
    end: int
    line: int
    column: int


def scan(text: str, begin: int = 0) -> list[Chunk]:
    """Cut `text` from offset `begin` (past a byte-order mark) into chunks: items, and the
    head and close of a `fn main` wrapper."""
    return scan_from(text, begin).chunks


@dataclass(frozen=True, slots=True)
class Scan:
    """The chunks a scan cut, and where it stopped: the offset of the token that would have
    begun the next chunk and the brace depth of its item list (None: at the end of the text)."""

    chunks: list[Chunk]
    stopped: tuple[int, int] | None


def scan_from(
    text: str,
    begin: int = 0,
    *,
    base: int = 0,
    line: int = 1,
    line_start: int = 0,
    stop: Callable[[int, int], bool] | None = None,
) -> Scan:
    """Cut `text` into chunks from offset `begin`, where a chunk begins (or the text does) on
    `line`, which begins at offset `line_start`, inside an item list of brace depth `base`
    (1: inside `fn main`).

    Before each chunk it would begin, at the offset of its first token, it calls
    `stop(offset, base)`; a true answer ends the scan there. The incremental parser rescans
    an edited region this way until the chunks line up with those after the edit again."""
    chunks: list[Chunk] = []
    depth = base
    start = -1  # start of the current item, -1 between items
    start_column = 0
    fn_head = False  # the current chunk is `fn NAME() {` so far
    line_starts = _LineStarts(text, begin, line, line_start)

    def close(end: int, kind: str = ITEM) -> None:
        nonlocal start
        line, column = line_starts.position(start)
        chunks.append(Chunk(kind, start, end, line, column))
        start = -1

    pending_semicolon = False  # an item closed its braces; a `;` right after is still its own
    for m in _TOKENS.of(text).finditer(text, begin):
        group = m.lastgroup
        if group == "comment":
            continue
        if group == "lead":
            word_start = m.end() - len(m.group().lstrip())
            if start >= 0 and not pending_semicolon:
                _, column = line_starts.position(word_start)
                if column <= start_column and depth >= base:
                    close(_trim_end(text, word_start))
                    depth = base
            pos, value = word_start, m.group().strip()
        else:
            pos, value = m.start(), m.group()
        if pending_semicolon:
            pending_semicolon = False
            if value == ";" and start >= 0:
                close(pos + 1)
                continue
            if start >= 0:
                close(_trim_end(text, pos))
        if start < 0:
            if stop is not None and stop(pos, base):
                return Scan(chunks, (pos, base))
            if value == "}" and base == 1 and depth == 1:
                start = pos
                close(pos + 1, FN_CLOSE)
                base = depth = 0
                continue
            start = pos
            start_column = line_starts.position(pos)[1]
            fn_head = value == "fn" and depth == 0
        if value == "{":
            depth += 1
            if fn_head and base == 0:
                close(pos + 1, FN_HEAD)
                base = 1
                fn_head = False
            continue
        if value == "}":
            if depth > base:
                depth -= 1
                if depth == base:
                    pending_semicolon = True
            else:  # a stray `}` at the item level ends the item it is in
                close(pos + 1)
            continue
        if value == ";" and depth == base and not fn_head:
            close(pos + 1)
            continue
    if start >= 0:
        close(_trim_end(text, len(text)))
    return Scan(chunks, None)


def _trim_end(text: str, end: int) -> int:
    """Move `end` back over white space, so a chunk ends at its last character."""
    while end > 0 and text[end - 1] in " \t\r\n\f":
        end -= 1
    return end


class _LineStarts:
    """Line and column of an offset, for offsets asked in increasing order from `pos`, which
    is on `line`, a line that begins at `line_start`."""

    __slots__ = ("text", "line", "line_start", "pos", "origin")

    def __init__(self, text: str, pos: int = 0, line: int = 1, line_start: int = 0) -> None:
        self.text = text
        self.line = line
        self.line_start = line_start
        self.pos = pos
        self.origin = (pos, line, line_start)

    def position(self, offset: int) -> tuple[int, int]:
        if offset < self.pos:  # rare: asked backwards; recount from where the scan began
            self.pos, self.line, self.line_start = self.origin
        count = self.text.count("\n", self.pos, offset)
        if count:
            self.line += count
            self.line_start = self.text.rindex("\n", self.pos, offset) + 1
        self.pos = offset
        return self.line, offset - self.line_start + 1
