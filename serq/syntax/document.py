"""Parsing a whole file, item by item, with a cache keyed by each item's text.

`parse` cuts the file with the item scanner, parses every chunk on its own and
assembles the `Module`. An `ItemCache` shared between calls (the language
server keeps one per workspace) makes a re-parse after an edit cost what the edit
touched: it keeps the last version of each file as a `Layout` (`serq.syntax.layout`),
so the next version is cut by rescanning only around the edit, and the chunks the
rescan meets are found by their text (kind, text and the token after it). A chunk
that only moved keeps its parse; its nodes are moved to its new place when they are
read (the module, and the diagnostics of a chunk with errors, are built from the
layout on demand).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import replace

from serq.diagnostics import Diagnostic, Label, LineIndex, Span, codes
from serq.syntax import ast
from serq.syntax.build import Builder
from serq.syntax.depth import MAX_DEPTH, too_deep
from serq.syntax.lalr import Tree
from serq.syntax.layout import Layout, Parsed, Splice, fresh_layout, relayout, tail_of
from serq.syntax.parser import parse_range
from serq.syntax.scanner import FN_CLOSE, FN_HEAD, Chunk, scan_from
from serq.syntax.source_text import (
    NamePattern,
    byte_value,
    first_bad_byte,
    is_bad_byte,
    lines_ended,
    text_start,
)

FIRST_TOKEN = NamePattern(lambda start, part: start + part + r"*|[0-9][0-9A-Za-z_.]*|\S")
_OUTSIDE_MAIN = (ast.Let, ast.Use, ast.DefExpr, ast.DefBlock, ast.ErrorItem)


class ParseResult:
    """A parsed file: its module (always whole, with error nodes), its syntax diagnostics
    and the scanner's items (`chunks`, for tools that look at one item, such as the
    language server's completion). From `parse`, it also has the file's `layout`, from
    which the module and the chunks are built when first read."""

    __slots__ = ("diagnostics", "layout", "splice", "_module", "_chunks")

    def __init__(
        self,
        module: ast.Module | None,
        diagnostics: tuple[Diagnostic, ...],
        chunks: tuple[Chunk, ...] = (),
        layout: Layout | None = None,
        splice: Splice | None = None,
    ) -> None:
        self._module = module
        self.diagnostics = diagnostics
        self._chunks = chunks if layout is None else None
        self.layout = layout
        self.splice = splice  # how `layout` was made from the cache's last one (None: fresh)

    @property
    def module(self) -> ast.Module:
        if self._module is None:
            self._module = module_of(self.layout)  # type: ignore[arg-type]
        return self._module

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        if self._chunks is None:
            self._chunks = self.layout.chunks()  # type: ignore[union-attr]
        return self._chunks

    @property
    def ok(self) -> bool:
        return not self.diagnostics

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParseResult):
            return NotImplemented
        return (self.module, self.diagnostics, self.chunks) == (
            other.module,
            other.diagnostics,
            other.chunks,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ParseResult({self.module!r}, {self.diagnostics!r})"


class ItemCache:
    """Parsed chunks by text, least recently used first out (`parses` counts real parses),
    and the last layout of each file parsed with it."""

    def __init__(self, capacity: int = 4096) -> None:
        self.capacity = capacity
        self.parses = 0
        self._entries: OrderedDict[tuple, Parsed] = OrderedDict()
        self.layouts: dict[str, Layout] = {}

    def fit(self, items: int) -> None:
        """Grow to hold twice `items` entries, so that a file of that many items is never
        evicted by its own parse (a 2 MB file has some 100,000)."""
        self.capacity = max(self.capacity, 2 * items)

    def lookup(self, key: tuple) -> Parsed | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def store(self, key: tuple, entry: Parsed) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.capacity:
            self._entries.popitem(last=False)


def parse(text: str, file: str = "<input>", cache: ItemCache | None = None) -> ParseResult:
    """Parse the serQ source `text` of `file`; reuse `cache` for the items it has seen.
    Without a cache, the same text of the same file parsed again in this process is
    the same result (a sweep compiles its program once per point, with the libraries
    it uses)."""
    if cache is None:
        key = (file, text)
        with _RECENT_LOCK:
            found = _RECENT.get(key)
            if found is not None:
                _RECENT.move_to_end(key)
                return found
    layout, splice = parse_layout(text, file, cache)
    result = ParseResult(None, layout_diagnostics(layout), layout=layout, splice=splice)
    if cache is None:
        with _RECENT_LOCK:
            _RECENT[key] = result
            while len(_RECENT) > _RECENT_FILES:
                _RECENT.popitem(last=False)
    return result


# the last files `parse` read without a cache: a result is never changed once made (its
# module and chunks are built from the layout when first read, the same each time); a
# lock, since a language server may parse from several threads
_RECENT: OrderedDict[tuple[str, str], ParseResult] = OrderedDict()
_RECENT_FILES = 8
_RECENT_LOCK = threading.Lock()


def parse_layout(
    text: str, file: str = "<input>", cache: ItemCache | None = None
) -> tuple[Layout, Splice | None]:
    """The layout of `text` (the contents of `file`) and how it was made from the last one
    `cache` holds of `file` (None: scanned whole); `cache` keeps it as the last."""
    text = lines_ended(text)
    if cache is None:
        cache = ItemCache()

    def parse_chunk(text: str, chunk: Chunk, following: str, lines: LineIndex) -> Parsed:
        return _parse_chunk(text, file, chunk, following, lines, cache)

    previous = cache.layouts.get(file)
    splice: Splice | None = None
    if previous is None:
        chunks = scan_from(text, text_start(text)).chunks
        cache.fit(len(chunks))
        layout = fresh_layout(text, file, chunks, parse_chunk)
    else:
        cache.fit(len(previous.units))
        layout, splice = relayout(previous, text, parse_chunk)
    cache.layouts[file] = layout
    return layout, splice


def reparse(layout: Layout, text: str, cache: ItemCache) -> tuple[Diagnostic, ...]:
    """The syntax diagnostics of `text`, an edit of `layout`'s text, found by rescanning
    around the edit (with `cache`'s parses, which does not keep this layout as the file's)."""
    text = lines_ended(text)
    file = layout.file

    def parse_chunk(text: str, chunk: Chunk, following: str, lines: LineIndex) -> Parsed:
        return _parse_chunk(text, file, chunk, following, lines, cache)

    edited, _ = relayout(layout, text, parse_chunk)
    return layout_diagnostics(edited)


def module_of(layout: Layout) -> ast.Module:
    """The module of `layout`: every unit's nodes where it is, `fn main` around those inside."""
    file, text, lines = layout.file, layout.text, layout.line_index
    outer: list = []
    inner: list = []
    main_name: ast.Ident | None = None
    head: Span | None = None
    main_close: Span | None = None
    for i, unit in enumerate(layout.units):
        if unit.kind == FN_HEAD:
            head = lines.span(file, layout.starts[i], layout.ends[i])
            nodes = layout.parsed(i).nodes
            name = nodes[0] if nodes else None
            main_name = name if isinstance(name, ast.Ident) else ast.Ident("main", head)
        elif unit.kind == FN_CLOSE:
            main_close = lines.span(file, layout.starts[i], layout.ends[i])
        elif head is not None and main_close is None:
            inner.extend(layout.parsed(i).nodes)
        else:
            outer.extend(layout.parsed(i).nodes)
    main = None
    if head is not None and main_name is not None:
        end = lines.span(file, len(text), len(text))
        main_span = head.cover(end) if main_close is None else head.cover(main_close)
        main = ast.FnMain(main_name, tuple(inner), head, main_span)
    return ast.Module(file, tuple(outer), main, lines.span(file, 0, len(text)))


def layout_diagnostics(layout: Layout) -> tuple[Diagnostic, ...]:
    """The syntax diagnostics of `layout`: its units' own, and the rules of the file's
    shape (`fn main` closed, what may stand outside it, invalid UTF-8), in source order.

    Only the units the shape's rules look at are read (`Layout.special`), and the units
    after a `fn main`'s close."""
    file, text, lines = layout.file, layout.text, layout.line_index
    units = layout.units
    diagnostics: list[Diagnostic] = []
    for i in layout.special:
        diagnostics.extend(layout.parsed(i).diagnostics)
    fn = layout.fn_units()
    heads = [i for i in fn if units[i].kind == FN_HEAD]
    for extra in heads[1:]:  # both references refuse it ("exactly one `fn main()`")
        first = lines.span(file, layout.starts[heads[0]], layout.ends[heads[0]])
        diagnostics.append(
            Diagnostic.error(
                codes.PARSE,
                lines.span(file, layout.starts[extra], layout.ends[extra]),
                "a second `fn main()`: a program has one",
                labels=(Label(first, "the first is here"),),
                help="put its items in the first `fn main()`",
            )
        )
    if heads:
        last = heads[-1]
        head = lines.span(file, layout.starts[last], layout.ends[last])
        nodes = layout.parsed(last).nodes
        name = nodes[0] if nodes else None
        main_name = name if isinstance(name, ast.Ident) else ast.Ident("main", head)
        closes = [i for i in fn if units[i].kind == FN_CLOSE]
        if not closes:
            end = lines.span(file, len(text), len(text))
            brace = layout.ends[last] - 1  # the head's chunk ends with its `{`
            diagnostics.append(
                Diagnostic.error(
                    codes.PARSE,
                    lines.span(file, brace, brace + 1),
                    "the `{` of `fn main` is never closed: the file ends before its `}`",
                    labels=(
                        Label(end, "expected `}` to close `fn main`, found end of file"),
                        *_closed_less_indented(layout, range(last + 1, len(units))),
                    ),
                )
            )
            main_span = head.cover(end)
        else:
            last_close = closes[-1]
            close = lines.span(file, layout.starts[last_close], layout.ends[last_close])
            main_span = head.cover(close)
        main = ast.FnMain(main_name, (), head, main_span)
        # outer items: before the first head (only the special ones can be wrong) and after
        # the first close (all of them)
        outer_units = [i for i in layout.special if i < heads[0] and units[i].kind == "item"]
        if closes:
            outer_units += [i for i in range(closes[0] + 1, len(units)) if units[i].kind == "item"]
        outer = [n for i in outer_units for n in layout.parsed(i).nodes]
        diagnostics.extend(_dialect_errors(outer, main))
    diagnostics = _invalid_utf8(text, file, lines, diagnostics)
    return tuple(sorted(diagnostics, key=Diagnostic.sort_key))


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
) -> Parsed:
    """The parse of `chunk`, from `cache` when a chunk of its text (and next token) was
    parsed before, wherever that was."""
    chunk_text = text[chunk.start : chunk.end]
    key = (file, chunk.kind, chunk_text, following)
    cached = cache.lookup(key)
    if cached is not None and (cached.tail is None or cached.tail == tail_of(text, chunk.end)):
        return cached
    cache.parses += 1
    if chunk.kind == FN_CLOSE:
        parsed = Parsed(chunk.start, chunk.line, chunk.column, (), ())
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
        tail = None
        if _reaches(nodes, diagnostics) > chunk.end:
            tail = tail_of(text, chunk.end)
        parsed = Parsed(chunk.start, chunk.line, chunk.column, nodes, diagnostics, tail)
    cache.store(key, parsed)
    return parsed


def _reaches(nodes: tuple, diagnostics: tuple[Diagnostic, ...]) -> int:
    """The furthest offset a chunk's items and diagnostics (their labels too) reach."""
    ends = [n.span.end for n in nodes]
    for d in diagnostics:
        ends.append(d.span.end)
        ends.extend(label.span.end for label in d.labels)
    return max(ends, default=0)


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
        if d.span.start == d.span.end and _only_comments_after(text, d.span.start):
            out[i] = _never_closed(d, ats, text, file, lines)
            continue
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

_BLANK = re.compile(r"(?:\s+|//[^\n]*|/\*[\s\S]*?(?:\*/|\Z))*")


def _only_comments_after(text: str, offset: int) -> bool:
    """Whether nothing but white space and comments follows `offset` in `text`."""
    return _BLANK.match(text, offset).end() == len(text)


def _never_closed(d: Diagnostic, ats: list[int], text: str, file: str, lines: LineIndex):
    """The error `d`, found at the end of the file, moved to the outermost opener `ats[0]`
    that nothing closes, where the user can act; the end of the file and the other openers
    become its labels (as rustc and TypeScript name the unclosed delimiter)."""
    at = ats[0]
    closer = {"{": "}", "(": ")", "[": "]"}[text[at]]
    inner = [
        Label(lines.span(file, k, k + 1), f"this `{text[k]}` is never closed")
        for k in ats[1:UNCLOSED_LABELS]
    ]
    notes = d.notes
    if len(ats) > UNCLOSED_LABELS:
        more = len(ats) - UNCLOSED_LABELS
        notes = (*notes, f"and {more:,} more brackets inside them are never closed")
    return replace(
        d,
        span=lines.span(file, at, at + 1),
        message=f"this `{text[at]}` is never closed: the file ends before its `{closer}`",
        labels=(*inner, Label(d.span, d.message), *d.labels),
        notes=notes,
    )


def _closed_less_indented(layout: Layout, items: range) -> list[Label]:
    """Labels for the items among `items` whose last `}` stands first on a line indented
    less than the item's own first line: a `}` that may close `fn main` but was taken by the
    item, whose own `}` is missing (rustc's hint; at most `UNCLOSED_LABELS` items)."""
    text, file, lines = layout.text, layout.file, layout.line_index
    labels: list[Label] = []
    for i in items:
        if layout.units[i].kind != "item" or len(labels) >= 2 * UNCLOSED_LABELS:
            continue
        start, end = layout.starts[i], layout.ends[i]
        close = text.rfind("}", start, end)
        line_start = text.rfind("\n", 0, close) + 1
        if (
            close < 0
            or text[line_start:close].strip()
            or close - line_start >= layout.columns[i] - 1
        ):
            continue
        opener = next(
            (m.start() for m in _BRACKETS.finditer(text, start, end) if m.group() == "{"), -1
        )
        if opener < 0:
            continue
        labels.append(
            Label(lines.span(file, opener, opener + 1), "perhaps this `{` is the one never closed")
        )
        labels.append(
            Label(
                lines.span(file, close, close + 1),
                "as this `}` that closes it is indented less than its line",
            )
        )
    return labels


def parse_whole(text: str, file: str = "<input>") -> ParseResult:
    """Parse `text` in one piece with the `program` rule, without the scanner or a cache.

    The item-wise `parse` is the parser; this is its cross-check in tests."""
    text = lines_ended(text)
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
