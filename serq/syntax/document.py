"""Parsing a whole file, item by item, with a cache keyed by each item's text.

`parse` cuts the file with the item scanner, parses every chunk on its own and
assembles the `Module`. An `ItemCache` shared between calls (the language
server keeps one per workspace) makes a re-parse after an edit cost one item:
the other chunks are found by their text and only moved to their new place
(`rebase`) when the edit shifted them.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, fields, is_dataclass, replace

from lark import Tree

from serq.diagnostics import Diagnostic, Label, LineIndex, Span, codes
from serq.syntax import ast
from serq.syntax.build import Builder
from serq.syntax.depth import MAX_DEPTH, too_deep
from serq.syntax.parser import parse_range
from serq.syntax.scanner import FN_CLOSE, FN_HEAD, Chunk, scan
from serq.syntax.source_text import byte_value, first_bad_byte, is_bad_byte, text_start

_FIRST_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9A-Za-z_.]*|\S")
_OUTSIDE_MAIN = (ast.Let, ast.Use, ast.DefExpr, ast.DefBlock, ast.ErrorItem)


@dataclass(frozen=True, slots=True)
class ParseResult:
    """A parsed file: its module (always whole, with error nodes), its syntax diagnostics
    and the scanner's items (`chunks`, for tools that look at one item, such as the
    language server's completion)."""

    module: ast.Module
    diagnostics: tuple[Diagnostic, ...]
    chunks: tuple[Chunk, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.diagnostics


@dataclass(frozen=True, slots=True)
class _Parsed:
    """A chunk's parse as cached: where it was, its nodes and diagnostics."""

    start: int
    line: int
    column: int
    nodes: tuple
    diagnostics: tuple[Diagnostic, ...]


class ItemCache:
    """Parsed chunks by text, least recently used first out; `parses` counts real parses."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self.parses = 0
        self._entries: OrderedDict[tuple, _Parsed] = OrderedDict()

    def fit(self, items: int) -> None:
        """Grow to hold twice `items` entries, so that a file of that many items is never
        evicted by its own parse (a 2 MB file has some 100,000)."""
        self.capacity = max(self.capacity, 2 * items)

    def lookup(self, key: tuple) -> _Parsed | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def store(self, key: tuple, entry: _Parsed) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)


def parse(text: str, file: str = "<input>", cache: ItemCache | None = None) -> ParseResult:
    """Parse the serQ source `text` of `file`; reuse `cache` for the items it has seen."""
    if cache is None:
        cache = ItemCache()
    lines = LineIndex(text)
    chunks = scan(text, text_start(text))
    cache.fit(len(chunks))
    outer: list = []
    inner: list = []
    diagnostics: list[Diagnostic] = []
    main_name: ast.Ident | None = None
    head: Span | None = None
    main_close: Span | None = None
    for i, chunk in enumerate(chunks):
        # what an error at the chunk's end depends on: the token after it, or the file's tail
        if i + 1 < len(chunks):
            following = _FIRST_TOKEN.match(text, chunks[i + 1].start).group()
        else:
            following = text[chunk.end :]
        parsed = _parse_chunk(text, file, chunk, following, lines, cache)
        diagnostics.extend(parsed.diagnostics)
        if chunk.kind == FN_HEAD:
            head = lines.span(file, chunk.start, chunk.end)
            name = parsed.nodes[0] if parsed.nodes else None
            main_name = name if isinstance(name, ast.Ident) else ast.Ident("main", head)
        elif chunk.kind == FN_CLOSE:
            main_close = lines.span(file, chunk.start, chunk.end)
        elif head is not None and main_close is None:
            inner.extend(parsed.nodes)
        else:
            outer.extend(parsed.nodes)
    main = None
    if head is not None and main_name is not None:
        if main_close is None:
            end = lines.span(file, len(text), len(text))
            diagnostics.append(
                Diagnostic.error(
                    codes.PARSE,
                    end,
                    "expected `}` to close `fn main`, found end of file",
                    labels=(Label(head, "opened here"),),
                )
            )
            main_span = head.cover(end)
        else:
            main_span = head.cover(main_close)
        main = ast.FnMain(main_name, tuple(inner), head, main_span)
        diagnostics.extend(_dialect_errors(outer, main))
    span = lines.span(file, 0, len(text))
    module = ast.Module(file, tuple(outer), main, span)
    diagnostics = _invalid_utf8(text, file, lines, diagnostics)
    return ParseResult(module, tuple(sorted(diagnostics, key=Diagnostic.sort_key)), tuple(chunks))


def _invalid_utf8(
    text: str, file: str, lines: LineIndex, diagnostics: list[Diagnostic]
) -> list[Diagnostic]:
    """`diagnostics` with one `E-utf8` at the first invalid byte of `text` (if it has one)
    in place of the syntax errors that the escaped bytes themselves raised."""
    bad = first_bad_byte(text)
    if bad is None:
        return diagnostics
    count = sum(1 for c in text if is_bad_byte(c))
    kept = [d for d in diagnostics if not _at_bad_byte(d, text)]
    more = f" (and {count - 1} more)" if count > 1 else ""
    message = f"invalid UTF-8: {_bad_byte(byte_value(text[bad]))}{more}"
    kept.append(
        Diagnostic.error(
            codes.INVALID_UTF8,
            lines.span(file, bad, bad + 1),
            message,
            help="save the file as UTF-8",
        )
    )
    return kept


def _bad_byte(byte: int) -> str:
    """What is wrong with the invalid `byte`: a lead byte whose sequence is cut short or
    malformed, a continuation byte with no lead, or a byte UTF-8 never uses."""
    if 0xC2 <= byte <= 0xF4:
        return f"the sequence byte 0x{byte:02X} begins is cut short or malformed"
    if 0x80 <= byte <= 0xBF:
        return f"byte 0x{byte:02X} continues no character"
    return f"byte 0x{byte:02X} is never part of UTF-8"


def _dialect_errors(outer: list, main: ast.FnMain) -> list[Diagnostic]:
    """The fn-main dialect's rules: `fn main`, and only `use`, `def`, `let` outside, before it."""
    errors = []
    if main.name.name != "main":
        errors.append(
            Diagnostic.error(
                codes.PARSE,
                main.name.span,
                "the entry point is `fn main()`",
                help="name it `main`; a reusable definition is written with `def`",
            )
        )
    for item in outer:
        if item.span.start > main.span.start:
            errors.append(
                Diagnostic.error(
                    codes.PARSE,
                    item.span,
                    "declarations belong before `fn main()`",
                    labels=(Label(main.head, "the program's `fn main`"),),
                )
            )
        elif not isinstance(item, _OUTSIDE_MAIN):
            errors.append(
                Diagnostic.error(
                    codes.PARSE,
                    item.span,
                    "executable declarations belong inside `fn main() { … }`",
                    help="only `use`, `def` and `let` may stand outside `fn main`",
                )
            )
    return errors


def _parse_chunk(
    text: str, file: str, chunk: Chunk, following: str, lines: LineIndex, cache: ItemCache
) -> _Parsed:
    chunk_text = text[chunk.start : chunk.end]
    key = (file, chunk.kind, chunk_text, following)
    cached = cache.lookup(key)
    if cached is not None:
        if (cached.start, cached.line, cached.column) == (chunk.start, chunk.line, chunk.column):
            return cached
        moved = _rebase(cached, chunk)
        cache.store(key, moved)
        return moved
    cache.parses += 1
    if chunk.kind == FN_CLOSE:
        parsed = _Parsed(chunk.start, chunk.line, chunk.column, (), ())
    else:
        symbol = "fn_head" if chunk.kind == FN_HEAD else "chunk"
        raw = parse_range(
            text, file, chunk.start, chunk.end, chunk.line, chunk.column, symbol, lines
        )
        builder = Builder(file, text)
        nodes: tuple = ()
        deep = too_deep(raw.tree) if raw.tree is not None else None
        if deep is not None:
            raw.diagnostics.append(_too_deep(builder.span(deep)))
            nodes = (ast.ErrorItem(lines.span(file, chunk.start, chunk.end)),)
        elif raw.tree is not None:
            if symbol == "fn_head":
                nodes = (builder.ident(raw.tree.children[0]),)
            else:
                nodes = builder.items(raw.tree.children)
        diagnostics = tuple(raw.diagnostics) + tuple(builder.diagnostics)
        if diagnostics and chunk.kind != FN_HEAD:
            diagnostics = _name_unclosed(text, file, chunk, diagnostics, lines)
        parsed = _Parsed(chunk.start, chunk.line, chunk.column, nodes, diagnostics)
    cache.store(key, parsed)
    return parsed


def _at_bad_byte(d: Diagnostic, text: str) -> bool:
    return d.code == codes.PARSE.id and d.span.start < len(text) and is_bad_byte(text[d.span.start])


def _too_deep(span: Span) -> Diagnostic:
    return Diagnostic.error(
        codes.TOO_DEEP,
        span,
        f"this nests more than {MAX_DEPTH} levels deep",
        help="serq reads at most that many nested operators, calls and blocks; "
        "split the expression with `let`, `def` or `set`",
    )


_BRACKETS = re.compile(r'//[^\n]*|/\*[\s\S]*?(?:\*/|\Z)|"[^"\n]*"?|[{}()\[\]]')
_CLOSING = {"}": "{", ")": "(", "]": "["}


def unclosed(text: str, start: int, end: int) -> list[int]:
    """The offsets of the `{`, `(` and `[` of `text[start:end]` that nothing closes
    (comments and strings skipped; a closer pops back to the opener it matches)."""
    stack: list[int] = []
    lost: list[int] = []  # openers a closer of another kind passed over
    for m in _BRACKETS.finditer(text, start, end):
        c = m.group()
        if c in "{([":
            stack.append(m.start())
        elif c in _CLOSING:
            opener = _CLOSING[c]
            for depth in range(len(stack) - 1, -1, -1):
                if text[stack[depth]] == opener:
                    lost.extend(stack[depth + 1 :])
                    del stack[depth:]
                    break
    return sorted(lost + stack)


def _name_unclosed(
    text: str, file: str, chunk: Chunk, diagnostics: tuple, lines: LineIndex
) -> tuple:
    """`diagnostics` with each opener the chunk never closes named where it stands: a label
    "this `{` is never closed" on the first error at or after it (at most
    `UNCLOSED_LABELS` a diagnostic, the outermost, and a note counting the others)."""
    openers = unclosed(text, chunk.start, chunk.end)
    if not openers:
        return diagnostics
    out = list(diagnostics)
    owned: dict[int, list[int]] = {}
    for at in openers:
        i = next((k for k, d in enumerate(out) if d.span.start >= at), len(out) - 1)
        owned.setdefault(i, []).append(at)
    for i, ats in owned.items():
        d = out[i]
        labels = [
            Label(lines.span(file, at, at + 1), f"this `{text[at]}` is never closed")
            for at in ats[:UNCLOSED_LABELS]
        ]
        notes = d.notes
        if len(ats) > UNCLOSED_LABELS:
            more = len(ats) - UNCLOSED_LABELS
            notes = (*notes, f"and {more:,} more brackets inside them are never closed")
        out[i] = replace(d, labels=(*d.labels, *labels), notes=notes)
    return tuple(out)


# The unclosed openers named on one diagnostic; the rest are counted in a note.
UNCLOSED_LABELS = 3


def parse_whole(text: str, file: str = "<input>") -> ParseResult:
    """Parse `text` in one piece with the `program` rule, without the scanner or a cache.

    The item-wise `parse` is the parser; this is its cross-check in tests."""
    lines = LineIndex(text)
    begin = text_start(text)
    raw = parse_range(text, file, begin, len(text), 1, 1 + begin, "program", lines)
    builder = Builder(file, text)
    outer: list = []
    main = None
    deep = too_deep(raw.tree) if raw.tree is not None else None
    if deep is not None:
        raw.diagnostics.append(_too_deep(builder.span(deep)))
    elif raw.tree is not None:
        for child in raw.tree.children:
            if child is None:
                continue
            if isinstance(child, Tree) and child.data == "fn_main":
                head, *items = child.children
                main = ast.FnMain(
                    builder.ident(head.children[0]),
                    builder.items(items),
                    builder.span(head),
                    builder.span(child),
                )
            else:
                outer.append(builder.build(child))
    diagnostics = list(raw.diagnostics) + builder.diagnostics
    if main is not None:
        diagnostics.extend(_dialect_errors(outer, main))
    diagnostics = _invalid_utf8(text, file, lines, diagnostics)
    module = ast.Module(file, tuple(outer), main, lines.span(file, 0, len(text)))
    return ParseResult(module, tuple(sorted(diagnostics, key=Diagnostic.sort_key)))


# ------------------------------------------------------------------- rebasing


def _rebase(parsed: _Parsed, chunk: Chunk) -> _Parsed:
    """Move a cached parse from where it was to `chunk`'s place."""
    shift = _Shift(
        chunk.start - parsed.start,
        chunk.line - parsed.line,
        parsed.line,
        chunk.column - parsed.column,
    )
    return _Parsed(
        chunk.start,
        chunk.line,
        chunk.column,
        tuple(shift.node(n) for n in parsed.nodes),
        tuple(shift.node(d) for d in parsed.diagnostics),
    )


_FIELDS: dict[type, tuple[str, ...]] = {}


class _Shift:
    """Moves spans by an offset and line delta; columns move only on the chunk's first line."""

    __slots__ = ("offset", "lines", "first_line", "columns")

    def __init__(self, offset: int, lines: int, first_line: int, columns: int) -> None:
        self.offset = offset
        self.lines = lines
        self.first_line = first_line
        self.columns = columns

    def span(self, s: Span) -> Span:
        first = self.first_line
        return Span(
            s.file,
            s.start + self.offset,
            s.end + self.offset,
            s.line + self.lines,
            s.column + self.columns if s.line == first else s.column,
            s.end_line + self.lines,
            s.end_column + self.columns if s.end_line == first else s.end_column,
        )

    def node(self, value):
        if isinstance(value, Span):
            return self.span(value)
        if isinstance(value, tuple):
            return tuple(self.node(v) for v in value)
        if is_dataclass(value) and not isinstance(value, type):
            cls = type(value)
            names = _FIELDS.get(cls)
            if names is None:
                names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
            return cls(*(self.node(getattr(value, n)) for n in names))
        return value
