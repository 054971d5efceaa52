"""The report for a terminal: a header line and rich tables, one per kind of statistic.

`render_text(report, console)` prints; `report_text(report, width)` returns the plain
text (snapshots, tests). A number that does not exist prints as `-`, an infinite one as
`inf`; a step stage's iteration columns and the pools' event counts have tables of their
own, shown when the program has any. A note on an observation is printed under the
observations, the others at the end. On a terminal (not in piped or recorded text) the
gauge table has a sparkline of each gauge over [warmup, end]. `sections` gives the tables
to other renderers (`html`).
"""

from __future__ import annotations

import math

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from serq.report.model import PoolRow, Report, StageRow
from serq.report.sparkline import sparkline


def render_text(report: Report, console: Console) -> None:
    """Print `report` on `console`; each gauge gets a sparkline of its values over time
    when the console is a terminal that can draw one (never in piped or recorded text)."""
    console.print(_header(report), highlight=False)
    for section in sections(report, sparklines=_can_draw_sparklines(console)):
        if not isinstance(section, Table):
            console.print(section, highlight=False)
            continue
        for part in fit(section, console):  # a table wider than the console, in parts
            console.print()
            console.print(part, highlight=False)


def sections(report: Report, sparklines: bool = False) -> list[Table | str]:
    """The report's tables and notes in the order `render_text` prints them (under the
    header line); `sparklines` adds a column of them to the gauge table."""
    sections: list[Table | str] = []
    if report.observes:
        sections.append(_observes(report))
    observed = [note for note in report.notes if note.startswith("observe ")]
    sections.extend(f"[bold cyan]note[/]: {note}" for note in observed)
    if report.gauges:
        sections.append(_gauges(report, sparklines))
    if report.stages:
        sections.append(_stages(report.stages))
        steps = [row for row in report.stages if row.iterations]
        if steps:
            sections.append(_steps(steps))
        latencies = [row for row in steps if not math.isnan(row.mean_itl)]
        if latencies:
            sections.append(_latencies(latencies))
    if report.pools:
        sections.append(_pools(report.pools))
        sections.append(_pool_events(report.pools))
    if report.claims:
        sections.append(_claims(report))
    sections.extend(f"[bold cyan]note[/]: {n}" for n in report.notes if n not in observed)
    return sections


def header(report: Report) -> str:
    """The report's first two lines: the run's settings and counts."""
    return _header(report)


def fit(table: Table, console: Console) -> list[Table | Text]:
    """`table` as tables that fit `console`'s width, every value kept: the whole table when
    it fits; else its columns in groups, each group with the first column again; else,
    when not even two columns fit, each row stacked as `column  value` lines."""
    width = console.width
    if _natural(console, table) <= width:
        return [table]
    headers = [str(c.header) for c in table.columns]
    cells = [[str(v) for v in c.cells] for c in table.columns]
    rows = list(zip(*cells, strict=True))
    groups: list[list[int]] = []
    group: list[int] = []
    for i in range(1, len(headers)):
        candidate = _sub_table(headers, rows, [0, *group, i])
        if group and _natural(console, candidate) > width:
            groups.append(group)
            group = []
            candidate = _sub_table(headers, rows, [0, i])
        if _natural(console, candidate) > width:
            return _stacked(headers, rows)
        group.append(i)
    if group:
        groups.append(group)
    return [_sub_table(headers, rows, [0, *g]) for g in groups]


def _natural(console: Console, table: Table) -> int:
    """The width `table` takes when nothing limits it."""
    return Measurement.get(console, console.options.update(width=1 << 20), table).maximum


def _sub_table(headers: list[str], rows: list[tuple[str, ...]], columns: list[int]) -> Table:
    table = _table(*(headers[i] for i in columns))
    for row in rows:
        table.add_row(*(row[i] for i in columns))
    return table


def _stacked(headers: list[str], rows: list[tuple[str, ...]]) -> list[Text]:
    """One block a row: its name, then `column: value` lines that wrap where they must."""
    blocks = []
    for row in rows:
        block = Text(f"{headers[0]} {row[0]}", style="bold")
        for header, value in zip(headers[1:], row[1:], strict=True):
            block.append(f"\n  {header}: {value}", style="")
        blocks.append(block)
    return blocks


def report_text(report: Report, width: int = 100) -> str:
    """The plain text `render_text` prints on a console `width` columns wide."""
    console = Console(width=width, no_color=True, record=True, file=_Null())
    render_text(report, console)
    return console.export_text()


def number(value: float | int) -> str:
    """`value` in a table cell: whole numbers as such, about four significant digits
    otherwise, `-` for NaN."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "-"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    magnitude = abs(value)
    if 1000 <= magnitude < 1e6:
        return f"{value:.1f}"
    return f"{value:.4g}"


def setting(value: float) -> str:
    """A run setting the user gave (the horizon, the warm-up) as it is, every digit: to
    four digits a warm-up of 999.999999 would read as the horizon 1000 it is below."""
    if math.isinf(value) or (value.is_integer() and abs(value) < 1e15):
        return number(value)
    return repr(value)


def _header(r: Report) -> str:
    horizon = setting(r.horizon)
    end = horizon if r.end == r.horizon else number(r.end)
    run = f"horizon {horizon}  end {end}  warmup {setting(r.warmup)}"
    counts = f"events {r.events}  arrivals {r.arrivals}  ended {r.ended}  turns {r.turns}"
    return f"{run}  seed {r.seed}\n{counts}  mean live {number(r.mean_live)}"


def _table(*columns: str) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    first, *rest = columns
    table.add_column(first, style="bold", no_wrap=True)
    for column in rest:
        table.add_column(column, justify="right", no_wrap=True)
    return table


def _observes(r: Report) -> Table:
    table = _table("observe", "count", "mean", "±95%", "cv2", "p99")
    for name, o in r.observes.items():
        ci = number(o.ci) if o.count else "-"  # no samples: no interval, not a wide one
        table.add_row(name, str(o.count), number(o.mean), ci, *map(number, (o.cv2, o.p99)))
    return table


def _gauges(r: Report, sparklines: bool = False) -> Table:
    table = _table("gauge", "mean", "±95%", "min", "max")
    if sparklines:
        table.add_column("over time", no_wrap=True, style="cyan")
    for name, g in r.gauges.items():
        cells = [name, *map(number, (g.mean, g.ci, g.min, g.max))]
        if sparklines:
            cells.append(sparkline(*g.columns, r.warmup, r.end))
        table.add_row(*cells)
    return table


def _can_draw_sparklines(console: Console) -> bool:
    """Whether `console` is a terminal whose encoding has the block characters."""
    encoding = (console.encoding or "").lower()
    return console.is_terminal and not console.legacy_windows and encoding.startswith("utf")


def _member(row: StageRow | PoolRow) -> str:
    return row.name if row.index is None else f"{row.name}[{row.index}]"


def _stages(rows: tuple[StageRow, ...]) -> Table:
    table = _table("stage", "present", "util", "completed", "throughput", "wait", "service")
    for s in rows:
        cells = (s.mean_number, s.utilization, s.completed, s.throughput)
        table.add_row(_member(s), *map(number, cells), *map(number, (s.mean_wait, s.mean_service)))
    return table


def _steps(rows: list[StageRow]) -> Table:
    table = _table(
        "step stage",
        "iterations",
        "prefill only",
        "decode only",
        "mixed",
        "decodes",
        "batch",
        "step",
    )
    for s in rows:
        fractions = (s.prefill_only, s.decode_only, s.mixed)
        means = (s.mean_decodes, s.mean_decode_batch, s.mean_decode_step)
        table.add_row(_member(s), str(s.iterations), *map(number, fractions + means))
    return table


def _latencies(rows: list[StageRow]) -> Table:
    """The inter-token latencies of the step stages that gave a session a second token."""
    table = _table("step stage", "itl", "itl p50", "itl p99")
    for s in rows:
        table.add_row(_member(s), *map(number, (s.mean_itl, s.itl_p50, s.itl_p99)))
    return table


def _pools(rows: tuple[PoolRow, ...]) -> Table:
    table = _table("pool", "used", "cached", "queue", "holders", "wait", "admissions")
    for p in rows:
        means = (p.mean_used, p.mean_cached, p.mean_queue, p.mean_holders, p.mean_wait)
        table.add_row(_member(p), *map(number, means), str(p.admissions))
    return table


_KINDS = {"every_iteration": "every iteration", "some_iteration": "some iteration"}


def _claims(r: Report) -> Table:
    table = _table("claim")
    table.add_column("kind", no_wrap=True)
    table.add_column("result", no_wrap=True)
    for column in ("checked", "failures", "first"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("note")
    for c in r.claims:
        first = "-" if math.isnan(c.first) else number(c.first)
        kind = _KINDS.get(c.kind, "at end")
        cells = (c.name, kind, c.result, str(c.checked), str(c.failures), first, c.note or "")
        table.add_row(*cells)
    return table


def _pool_events(rows: tuple[PoolRow, ...]) -> Table:
    table = _table("pool", "evicted", "evicted units", "preemptions", "spills", "rejected", "stuck")
    for p in rows:
        counts = (p.evicted_entries, p.evicted_units, p.preemptions, p.spills, p.rejected, p.stuck)
        table.add_row(_member(p), *map(number, counts))
    return table


class _Null:
    """A file that discards what is written (the recording console keeps the text)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
