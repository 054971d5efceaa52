"""A run's results in the editor: inlay hints and hover at the names they measure.

After a Run (`serq.run`, `serq_lsp.commands`), `record` reads the `--json` report and
anchors each row where the program names it: an `observe` statement's row (mean ± CI,
count) after the statement, a gauge's after its declaration, a stage's utilisation and
a pool's mean use after its name (every member of a family `S[N]`, in order), and a
statistic observed in a `use`d library's `def` at the end of the line of each call that
writes the `def` out. An anchor
remembers the text of the item it is in and its place there, so it follows the item when
lines above it move and is dropped for good at the first edit of the item itself. The
hints' tooltips, and hover at the name, give the full rows.

A run's figures are the whole program's: once any other item, or a file it `use`s, differs
from what ran (a `let` the figures read, a pool's capacity), the hints that still stand
are marked stale, in their label and their rows, until the program is the one that ran
again (an undo) or the next Run replaces them.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from lsprotocol import types

from serq.syntax.scanner import Chunk
from serq_lsp import convert
from serq_lsp.analysis import Analysis
from serq_lsp.guard import guarded
from serq_lsp.state import SerqServer

_LINE_END = re.compile("[\r\n]")  # `\n`, `\r\n` or a lone `\r`

MEMBERS_SHOWN = 4  # a larger family shows its mean and range
STALE = " (stale)"  # after a stale hint's label
STALE_ROWS = "*the program has changed since this run: these figures are not its*"


@dataclass(frozen=True, slots=True)
class Anchor:
    """A result at `offset` of the item whose text was `item` (the `nth` such item): its
    hint `label`, and the markdown `rows` it stands for; `start`/`end` the measured name."""

    item: str
    nth: int
    offset: int
    start: int
    end: int
    label: str
    rows: str


@dataclass(frozen=True, slots=True)
class Run:
    """The last run's `anchors` in a document, the `program` that ran (`program_of`), and
    whether the document's program differs from it now (`stale`)."""

    anchors: tuple[Anchor, ...]
    program: tuple
    stale: bool = False


def register(server: SerqServer) -> None:
    """Add the results' inlay hints to `server`, and drop results when their item changes."""
    server.on_analysis.append(lambda uri, analysis: _prune(server, uri, analysis))

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
    @guarded
    def inlay_hints(ls: SerqServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        analysis = ls.analysis(params.text_document.uri)
        run = ls.results.get(params.text_document.uri)
        if run is None:
            return []
        return hints(analysis, run.anchors, params.range, run.stale)


def record(ls: SerqServer, uri: str, analysis: Analysis, output: str) -> int:
    """Keep the results of the run report `output` (JSON) of the program `analysis` for
    the document at `uri`, replacing the last run's; the number of anchors kept."""
    try:
        report = json.loads(output)
    except ValueError:
        return 0
    if not isinstance(report, dict):
        return 0
    anchors = tuple(anchors_of(analysis, report))
    ls.results[uri] = Run(anchors, program_of(ls, analysis))
    _refresh(ls)
    return len(anchors)


def program_of(ls: SerqServer, analysis: Analysis) -> tuple:
    """What a run of `analysis`' document reads: its items' texts in order (not the
    comments and blank lines between them), and the text of each file it `use`s as a Run
    reads it (the editor's buffer when open, else the disk's)."""
    text = analysis.text
    items = tuple(text[c.start : c.end] for c in analysis.chunks)
    return items, tuple((path, ls.source(path)) for path in sorted(analysis.uses))


def anchors_of(analysis: Analysis, report: dict) -> Iterable[Anchor]:
    """The anchors of `report`'s rows in `analysis`' document."""
    observes = report.get("observes") if isinstance(report.get("observes"), dict) else {}
    gauges = report.get("gauges") if isinstance(report.get("gauges"), dict) else {}
    members = _by_name(report.get("stages")), _by_name(report.get("pools"))
    for occ in analysis.index.occurrences:
        namespace, name = occ.key
        if occ.kind == "statistic" and isinstance(observes.get(name), dict):
            row = observes[name]
            label = f"{_statistic(row)} (n={_number(row.get('count'))})"
            where = occ.node.span.end
        elif occ.kind == "gauge" and isinstance(gauges.get(name), dict):
            row = gauges[name]
            label = f"{_statistic(row)} [{_number(row.get('min'))}, {_number(row.get('max'))}]"
            where = occ.node.span.end
        elif occ.kind in ("stage", "queue") and name in members[0]:
            rows = members[0][name]
            label = "ρ " + _spread([r.get("utilization") for r in rows])
            yield from _anchor(analysis, occ.span.end, occ, label, _table(name, rows))
            continue
        elif occ.kind == "pool" and name in members[1]:
            rows = members[1][name]
            label = "used " + _spread([r.get("mean_used") for r in rows])
            yield from _anchor(analysis, occ.span.end, occ, label, _table(name, rows))
            continue
        else:
            continue
        yield from _anchor(analysis, where, occ, label, _table(name, [row]))
    yield from _observed_in_libraries(analysis, observes)


def _observed_in_libraries(analysis: Analysis, observes: dict) -> Iterable[Anchor]:
    """The rows of statistics observed only in a `use`d library's `def`s, at each call of
    this document that writes such a `def` out (directly or through another `def`)."""
    index = analysis.index
    here = {o.key for o in index.occurrences if o.kind == "statistic"}
    defs = [o for o in index.elsewhere if o.kind == "def"]

    def holder(occ) -> str | None:
        return next(
            (
                d.key[1]
                for d in defs
                if d.span.file == occ.span.file
                and d.node.span.start <= occ.span.start < d.node.span.end
            ),
            None,
        )

    sites: dict[str, list] = {}
    for occ in index.elsewhere:
        if occ.kind == "statistic" and occ.key not in here:
            sites.setdefault(occ.key[1], []).append(occ)
    for name, found in sites.items():
        if not isinstance(observes.get(name), dict):
            continue
        holders: set[str] = set()
        pending = [h for h in map(holder, found) if h]
        while pending:  # the defs that write this one out, in the libraries
            current = pending.pop()
            if current in holders:
                continue
            holders.add(current)
            for call in index.references(("def", current)):
                if not call.is_declaration and call.span.file != analysis.path:
                    pending.extend(h for h in [holder(call)] if h)
        row = observes[name]
        label = f"{name} {_statistic(row)} (n={_number(row.get('count'))})"
        for d in sorted(holders):
            for call in index.occurrences:
                if call.key == ("def", d) and not call.is_declaration:
                    end = _LINE_END.search(analysis.text, call.span.end)
                    where = len(analysis.text) if end is None else end.start()
                    yield from _anchor(analysis, where, call, label, _table(name, [row]))


def _anchor(analysis: Analysis, where: int, occ, label: str, rows: str) -> Iterable[Anchor]:
    chunk = _chunk_at(analysis.chunks, occ.span.start)
    if chunk is None:
        return
    text = analysis.text[chunk.start : chunk.end]
    nth = sum(1 for c in analysis.chunks if c.start < chunk.start and _text(analysis, c) == text)
    yield Anchor(
        text,
        nth,
        where - chunk.start,
        occ.span.start - chunk.start,
        occ.span.end - chunk.start,
        label,
        rows,
    )


def hints(
    analysis: Analysis,
    anchors: Iterable[Anchor],
    within: types.Range | None = None,
    stale: bool = False,
) -> list[types.InlayHint]:
    """The inlay hints of `anchors` that still stand in `analysis`' document, in `within`;
    marked as such when they are `stale`."""
    out = []
    for anchor, start in placed(analysis, anchors):
        line, column = analysis.lines.position(start + anchor.offset)
        position = types.Position(line - 1, convert.character(analysis.lines, line, column))
        if within is not None and not _inside(position, within):
            continue
        out.append(
            types.InlayHint(
                position=position,
                label=anchor.label + STALE if stale else anchor.label,
                padding_left=True,
                tooltip=types.MarkupContent(
                    kind=types.MarkupKind.Markdown,
                    value=f"{STALE_ROWS}\n\n{anchor.rows}" if stale else anchor.rows,
                ),
            )
        )
    return out


def hover_rows(
    analysis: Analysis, anchors: Iterable[Anchor], offset: int, stale: bool = False
) -> str | None:
    """The rows of the result whose measured name covers `offset`, as markdown, or None;
    marked as such when they are `stale`."""
    rows = [
        anchor.rows
        for anchor, start in placed(analysis, anchors)
        if start + anchor.start <= offset <= start + anchor.end
    ]
    if not rows:
        return None
    head = f"**last run** ({STALE_ROWS})" if stale else "**last run**"
    return head + "\n\n" + "\n\n".join(rows)


def placed(analysis: Analysis, anchors: Iterable[Anchor]) -> list[tuple[Anchor, int]]:
    """Each anchor whose item is still there unchanged, with the item's start now."""
    if not anchors:  # no run yet: no pass over the document's items
        return []
    starts = analysis.item_starts
    out = []
    for anchor in anchors:
        found = starts.get(anchor.item, [])
        if found:
            out.append((anchor, found[min(anchor.nth, len(found) - 1)]))
    return out


def _prune(ls: SerqServer, uri: str, analysis: Analysis) -> None:
    run = ls.results.get(uri)
    if run is None or not run.anchors:
        return
    kept = tuple(anchor for anchor, _ in placed(analysis, run.anchors))
    stale = program_of(ls, analysis) != run.program
    if kept != run.anchors or stale != run.stale:
        ls.results[uri] = Run(kept, run.program, stale)
        _refresh(ls)


def _refresh(ls: SerqServer) -> None:
    """Ask the client to fetch the inlay hints again, if it can be asked."""
    workspace = ls.client_capabilities.workspace
    hint = workspace.inlay_hint if workspace is not None else None
    if hint is not None and hint.refresh_support:
        ls.workspace_inlay_hint_refresh(None)


def _inside(position: types.Position, within: types.Range) -> bool:
    at = (position.line, position.character)
    return (
        (within.start.line, within.start.character)
        <= at
        <= (
            within.end.line,
            within.end.character,
        )
    )


def _text(analysis: Analysis, chunk: Chunk) -> str:
    return analysis.text[chunk.start : chunk.end]


def _chunk_at(chunks: tuple[Chunk, ...], offset: int) -> Chunk | None:
    return next((c for c in chunks if c.start <= offset < c.end), None)


def _by_name(rows: object) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    if isinstance(rows, list):
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                out.setdefault(row["name"], []).append(row)
    for members in out.values():
        members.sort(key=lambda r: r.get("index") if isinstance(r.get("index"), int) else 0)
    return out


def _number(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, int) or value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.4g}"


def _statistic(row: dict) -> str:
    ci = row.get("ci")
    mean = _number(row.get("mean"))
    return mean if ci is None else f"{mean} ± {_number(ci)}"


def _spread(values: list[object]) -> str:
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(values) <= MEMBERS_SHOWN or len(numbers) < 2:
        return " · ".join(_number(v) for v in values)
    mean = sum(numbers) / len(numbers)
    return (
        f"{_number(mean)} (mean of {len(values)}, {_number(min(numbers))}–{_number(max(numbers))})"
    )


def _table(name: str, rows: list[dict]) -> str:
    columns = [c for c in dict.fromkeys(k for r in rows for k in r) if c != "name"]
    head = f"`{name}`\n\n| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)
    body = ["| " + " | ".join(_number(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join([head, *body])
