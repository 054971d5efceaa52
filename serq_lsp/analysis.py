"""One document's analysis: the front end's results for one version, kept for every feature.

`analyze(text, path, cache, load)` runs the same stages as `serq.api.check_source` (parse,
then expand when the parse is clean, then link when the expansion is clean) but keeps what
each stage produced: the surface module (always), the `Expansion` (its origins feed hover)
and the `LinkResult` (its scope feeds hover and completion). Its diagnostics are exactly
those `check_source` reports. It never raises: a failing stage becomes an `E-internal`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from serq.diagnostics import Diagnostic, LineIndex, Severity, Span, codes
from serq.syntax import ItemCache, ast, parse
from serq.syntax.scanner import Chunk

if TYPE_CHECKING:
    from serq.expand import Expansion
    from serq.expand.loader import Loader
    from serq.link import LinkResult
    from serq.link.index import Index


_SERIALS = itertools.count(1)


@dataclass
class Analysis:
    """What the front end made of one version of one document."""

    path: str
    text: str
    module: ast.Module
    diagnostics: list[Diagnostic]
    expansion: Expansion | None = None
    linked: LinkResult | None = None
    uses: set[str] = field(default_factory=set)  # files read through `use`, absolute
    chunks: tuple[Chunk, ...] = ()  # the scanner's items of `text` (the parse's)
    serial: int = field(default_factory=lambda: next(_SERIALS))  # tells analyses apart
    load: Loader | None = None  # how `use`d files are read (the index follows them too)

    @cached_property
    def lines(self) -> LineIndex:
        return LineIndex(self.text)

    @cached_property
    def index(self) -> Index:
        """The names of the document and of the libraries it `use`s: declarations and
        references (built on first use)."""
        from serq.expand.loader import read_file
        from serq.link.index import build_index

        return build_index(self.module, self.load or read_file)

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
        for item in self.module.all_items():
            if isinstance(item, ast.Workload):
                for clause in item.clauses:
                    if isinstance(clause, ast.Hidden):
                        names.update(i.name for i in clause.names)
        return frozenset(names)

    def offset(self, line: int, utf16_column: int) -> int:
        """The code-point offset of the 0-based LSP position `line`:`utf16_column`."""
        if line >= self.lines.line_count:
            return len(self.text)
        column = self.lines.column_from_utf16(line + 1, utf16_column)
        return self.lines.offset(line + 1, column)

    @property
    def lets(self) -> dict[str, float | None]:
        """The folded `let` constants (None for one that failed), when the program linked."""
        return dict(self.linked.scope.lets) if self.linked else {}


class Stopped(Exception):
    """An analysis given up between two stages: its text is no longer wanted."""


def analyze(
    text: str,
    path: str,
    cache: ItemCache | None = None,
    load: Loader | None = None,
    stop: Callable[[], bool] | None = None,
) -> Analysis:
    """Parse, expand and link `text` (the contents of `path`), reading `use`d files by `load`.

    Raises `Stopped` between two stages when `stop()` says the result is no longer wanted."""
    parsed = parse(text, path, cache)
    result = Analysis(
        path, text, parsed.module, list(parsed.diagnostics), chunks=parsed.chunks, load=load
    )
    if _has_error(result.diagnostics):
        return result
    if stop is not None and stop():
        raise Stopped
    try:
        from serq.expand import expand
        from serq.expand.loader import read_file

        loader = load or read_file

        def recording(file: str):
            import os

            result.uses.add(os.path.abspath(file))
            return loader(file)

        result.expansion = expand(parsed.module, recording)
    except Exception as error:  # a bug in serq, not in the program
        result.diagnostics.append(_internal(path, "expanding", error))
        return result
    result.diagnostics.extend(result.expansion.diagnostics)
    if _has_error(result.diagnostics):
        return result
    if stop is not None and stop():
        raise Stopped
    try:
        from serq.link import link
        from serq.link.checks.removal import keep_parsing_fixes

        result.linked = link(result.expansion.kernel)
        found = keep_parsing_fixes(result.linked.diagnostics, text, path)
    except Exception as error:  # a bug in serq, not in the program
        result.diagnostics.append(_internal(path, "linking", error))
        return result
    result.diagnostics.extend(found)
    return result


def _has_error(diagnostics: list[Diagnostic]) -> bool:
    return any(d.severity >= Severity.ERROR for d in diagnostics)


def _internal(path: str, stage: str, error: Exception) -> Diagnostic:
    return Diagnostic.error(
        codes.INTERNAL,
        Span.point(path, 0, 1, 1),
        f"serq failed while {stage} `{path}`: {type(error).__name__}: {error}",
    )
