"""One document's analysis: the front end's results for one version, kept for every feature.

`analyze(text, path, cache, load)` is `serq.incremental.analyze`: the diagnostics of
`serq.api.check_source` (parse, then expand when the parse is clean, then link when the
expansion is clean), found from what `cache` kept of the document's last version, so that
an edit costs what it touched. The `Analysis` keeps the version's layout, names and
program reports; what a feature reads of it is built when first read, and only as far as
it reads: the module (every unit's nodes where it is), the index (`UnitIndex`: the units
around an offset, or those of one name), the chunks. It never raises: a failing stage is
an `E-internal` diagnostic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import TYPE_CHECKING, Any

from serq.diagnostics import Diagnostic, LineIndex, Span
from serq.incremental import Analysed, Cache, Stopped
from serq.incremental import analyze as analyze_incrementally
from serq.syntax import ast
from serq.syntax.scanner import FN_HEAD, Chunk
from serq.syntax.shift import Shift
from serq_lsp import convert

if TYPE_CHECKING:
    from serq.expand.loader import Loader
    from serq.incremental.runs import Origin
    from serq.link.index import Index

__all__ = ["Analysis", "Stopped", "analyze"]

_SERIALS = itertools.count(1)


_LIBRARY_ITEMS = (ast.Use, ast.DefExpr, ast.DefBlock)


class Analysis:
    """What the front end made of one version of one document."""

    def __init__(
        self, path: str, text: str, analysed: Analysed, load: Loader | None, complete: bool = True
    ) -> None:
        self.path = path
        self.text = text
        # False for the parse alone, before the expander and the linker (`analyze`'s
        # `on_parse`): its tree, names and index are the version's, its diagnostics only
        # the syntax ones, and it has no outcome (no kernel, no folded constants)
        self.complete = complete
        self.diagnostics: list[Diagnostic] = analysed.diagnostics
        self.parsed = analysed.parsed
        self.version = analysed.version
        self.outcome = analysed.outcome
        self.linked = analysed.linked  # the linker's diagnostics are among them
        self.serial = next(_SERIALS)  # tells analyses apart
        self.load = load  # how `use`d files are read (the index follows them too)

    @property
    def layout(self):
        return self.parsed.layout

    def item_start(self, offset: int) -> int:
        """Where the top-level item (the scanner's chunk) that `offset` lies in or after
        begins, 0 before the first: never inside a comment or a string, so a scan for them
        from there reads `offset`'s surroundings as a scan from the start of the file
        would, at the cost of the item only."""
        layout = self.layout
        if layout is None:
            return 0
        i = layout.unit_at(offset)
        return layout.starts[i] if i >= 0 else 0

    @property
    def module(self) -> ast.Module:
        """The surface module (built when first read: every unit's nodes where it is)."""
        return self.parsed.module

    @property
    def chunks(self) -> tuple[Chunk, ...]:
        """The scanner's items of `text` (built when first read)."""
        return self.parsed.chunks

    @cached_property
    def lines(self) -> LineIndex:
        layout = self.parsed.layout
        return layout.line_index if layout is not None else LineIndex(self.text)

    @cached_property
    def index(self) -> Index:
        """The names of the document and of the libraries it `use`s: declarations and
        references (built as far as it is read)."""
        from serq.expand.loader import read_file
        from serq.link.index import build_index

        load = self.load or read_file
        if self.version is None or self.version.layout is not self.parsed.layout:
            return build_index(self.module, load)
        from serq.incremental.index import UnitIndex, _piece
        from serq.link.index import library_pieces

        version = self.version
        layout = version.layout
        cached = version.loader(load)  # the libraries as this version read them
        uses = sorted(layout.index_of(unit) for unit, _, _ in version.libraries.values())
        pieces = [_piece(layout, i) for i in uses]
        return UnitIndex(layout, version.names, library_pieces(layout.file, pieces, cached))

    @cached_property
    def uses(self) -> frozenset[str]:
        """The files read through `use`, absolute."""
        if self.version is not None:
            return self.version.files
        return frozenset()

    @cached_property
    def item_starts(self) -> dict[str, list[int]]:
        """The start offsets of the scanner's items, by their text (for results' anchors)."""
        starts: dict[str, list[int]] = {}
        text = self.text
        for chunk in self.chunks:
            starts.setdefault(text[chunk.start : chunk.end], []).append(chunk.start)
        return starts

    @cached_property
    def hidden_attributes(self) -> frozenset[str]:
        """The attributes a `workload`'s `hidden` clause hides from the scheduler."""
        names: set[str] = set()
        for item in self.core_items():
            if isinstance(item, ast.Workload):
                for clause in item.clauses:
                    if isinstance(clause, ast.Hidden):
                        names.update(i.name for i in clause.names)
        return frozenset(names)

    def core_items(self) -> list:
        """The items of the core units (every item but `let`, `def` and `use`), or of the
        whole module when there is no version."""
        if self.version is None:
            return list(self.module.all_items())
        layout = self.version.layout
        indices = sorted(layout.index_of(u) for u in self.version.names.core)
        return [n for i in indices for n in layout.parsed(i).nodes]

    def prepare(self) -> None:
        """Make ahead what requests read first (on the checker thread, off the loop): the
        index, the hidden attributes, the index's part of the core units, where most
        names a hover asks about are declared or read, and the listing of every name that
        semantic tokens read (a second of a 10,000-line document's first request)."""
        index = self.index
        self.hidden_attributes  # noqa: B018
        if self.version is not None and hasattr(index, "unit_occurrences"):
            layout = self.version.layout
            for unit in self.version.names.core:
                index.unit_occurrences(layout.index_of(unit))
        index.listing()

    def adopt(self, early: Analysis) -> None:
        """Take what `early`, this version's analysis as far as its parse, has built of what
        does not depend on the expander or the linker (the index, the hidden attributes,
        the lines), so that requests answered from it leave nothing to build again."""
        if early.parsed is not self.parsed or early.version is not self.version:
            return
        for name in ("lines", "index", "uses", "item_starts", "hidden_attributes"):
            if name in early.__dict__ and name not in self.__dict__:
                self.__dict__[name] = early.__dict__[name]

    def use_items(self) -> list[ast.Use]:
        """The document's `use` items, in order."""
        if self.version is None:
            return [i for i in self.module.all_items() if isinstance(i, ast.Use)]
        layout = self.version.layout
        indices = sorted(layout.index_of(u) for u, _, _ in self.version.libraries.values())
        return [n for i in indices for n in layout.parsed(i).nodes if isinstance(n, ast.Use)]

    def is_library(self) -> bool:
        """Whether the document is a library, meant to be `use`d: no `fn main`, and only
        `def` and `use` items (it has nothing of its own to run; a library holds no
        `let`: E-use)."""
        layout = self.parsed.layout
        if layout is None:
            module = self.module
            items = module.all_items() if module.main is None else None
        elif layout.fn_units():
            items = None
        else:  # the kinds of the nodes only: each unit's own parse, not moved
            items = [n for unit in layout.units for n in unit.parsed.nodes]
        if items is None or self.first_item_line() is None:  # an empty file is no library
            return False
        return all(isinstance(n, _LIBRARY_ITEMS) for n in items)

    def first_item_line(self) -> int | None:
        """The line of the document's first item, or None when it has none."""
        layout = self.parsed.layout
        if layout is None:
            items = self.module.all_items()
            return items[0].span.line if items else None
        for i, unit in enumerate(layout.units):
            if unit.kind == "item" and layout.parsed(i).nodes:
                return layout.parsed(i).nodes[0].span.line
        return None

    def items_at(self, offset: int) -> list:
        """The items of the unit at `offset` and of the one before (any item whose span holds
        `offset` is among them; all the module's when there is no layout)."""
        layout = self.parsed.layout
        if layout is None:
            return list(self.module.all_items())
        i = layout.unit_at(offset)
        return [
            n
            for k in (i - 1, i)
            if k >= 0
            for n in layout.parsed(k).nodes
            if not isinstance(n, ast.Ident)
        ]

    def placed_items(self) -> Iterator[tuple[Any, Callable[[Span], Span]]]:
        """Every item of the document in source order (those inside `fn main` too), each with
        the function that gives one of its spans where it is now. The items are those of each
        unit's first parse, so a feature that reads a few spans of every item moves those
        spans, not every node of the items."""
        layout = self.parsed.layout
        if layout is None:
            for item in self.module.all_items():
                yield item, _same
            return
        file = layout.file
        for i, unit in enumerate(layout.units):
            if unit.kind != "item":
                continue
            parsed = unit.parsed
            place = _same
            if (parsed.start, parsed.line, parsed.column) != (
                layout.starts[i],
                layout.lines[i],
                layout.columns[i],
            ):
                place = Shift.between(
                    file,
                    parsed.start,
                    parsed.line,
                    parsed.column,
                    layout.starts[i],
                    layout.lines[i],
                    layout.columns[i],
                ).span
            for item in parsed.nodes:
                yield item, place

    def declarations_near(self, offset: int) -> list:
        """The declarations in the items at `offset` (and the one before), with their nodes
        where they are (all the document's when it has no layout)."""
        index = self.index
        layout = self.parsed.layout
        if layout is None or not hasattr(index, "unit_occurrences"):
            return [o for o in index.occurrences if o.is_declaration]
        i = layout.unit_at(offset)
        found = []
        for k in (i - 1, i):
            if k >= 0:
                found.extend(o for o in index.unit_occurrences(k) if o.is_declaration)
        return found

    def main_span(self) -> Span | None:
        """The span of the document's `fn main` wrapper, or None."""
        layout = self.parsed.layout
        if layout is None:
            main = self.module.main
            return None if main is None else main.span
        if not self.has_main:
            return None
        fn = layout.fn_units()
        lines = layout.line_index
        heads = [i for i in fn if layout.units[i].kind == FN_HEAD]
        closes = [i for i in fn if layout.units[i].kind != FN_HEAD]
        head = lines.span(layout.file, layout.starts[heads[-1]], layout.ends[heads[-1]])
        if closes:
            end = lines.span(layout.file, layout.starts[closes[-1]], layout.ends[closes[-1]])
        else:
            end = lines.span(layout.file, len(layout.text), len(layout.text))
        return head.cover(end)

    @property
    def has_main(self) -> bool:
        layout = self.parsed.layout
        if layout is None:
            return self.module.main is not None
        return any(layout.units[i].kind == FN_HEAD for i in layout.fn_units())

    def origins(self) -> tuple[Origin, ...]:
        """Every sugar form the expander rewrote: its span, kind and the kernel as text."""
        return self.outcome.origins if self.outcome is not None else ()

    def let_value(self, name: str) -> float | None:
        """The folded value of `let name` when the program linked (None: not a constant)."""
        if self.outcome is not None and self.linked:
            return self.outcome.lets.get(name)
        raise LookupError(name)

    def family(self, kind: str, name: str) -> tuple[int, bool] | None:
        """The size and arrayness of the pool or stage family `name` (`kind` "pool" or
        "stage"), when the program linked."""
        if self.outcome is None or not self.linked:
            return None
        return self.outcome.families.get((kind, name))

    @property
    def lets(self) -> dict[str, float | None]:
        """The folded `let` constants (None for one that failed), when the program linked."""
        if self.outcome is None or not self.linked:
            return {}
        return dict(self.outcome.lets.items())

    def offset(self, line: int, character: int) -> int:
        """The code-point offset of the 0-based LSP position `line`:`character`."""
        if line >= self.lines.line_count:
            return len(self.text)
        column = convert.column(self.lines, line + 1, character)
        return self.lines.offset(line + 1, column)


def _same(span: Span) -> Span:
    return span


def analyze(
    text: str,
    path: str,
    cache: Cache | None = None,
    load: Loader | None = None,
    stop: Callable[[], bool] | None = None,
    on_parse: Callable[[Analysis], None] | None = None,
) -> Analysis:
    """Parse, expand and link `text` (the contents of `path`), reading `use`d files by `load`,
    from what `cache` kept of the last version of `path` (none: from scratch). `on_parse`
    is given the analysis as far as the parse (`complete` False) before the rest runs.

    Raises `Stopped` between two stages when `stop()` says the result is no longer wanted."""
    from serq.expand.loader import read_file

    loader = load or read_file

    def parsed(early: Analysed) -> None:
        if on_parse is not None:
            on_parse(Analysis(path, text, early, load, complete=False))

    analysed = analyze_incrementally(
        text, path, cache or Cache(), loader, stop, parsed if on_parse is not None else None
    )
    return Analysis(path, text, analysed, load)
