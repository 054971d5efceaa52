"""The results of a sweep: one row per run and one row per point, in grid order.

A run row has the point's index and values, the seed, the run's mean of every
observation and gauge, `error` (empty, or the diagnostic that stopped the run) and
`warning` (empty, or the run's first warning: an engine that stopped planning, sessions
waiting for each other, a job that never ends; the numbers of a run that finished then
describe a deployment that stopped moving, and of one that failed it often says why). A
point row has the point's values, `runs` (the replications that finished) and `failed`,
and for every observation and gauge NAME the mean over the replications that have a value
(`NAME`) with the half-width of its Student-t 95 % interval (`NAME_ci`, inf for one
replication), then `error`, the first failure at the point, and `warning`, the first
warning there.

Files (chosen by the suffix): `.csv` holds the point rows and `STEM.runs.csv` beside it
the run rows, numbers written so that they read back exactly (`nan`, `inf`); `.json`
holds both (`{"points": [...], "runs": [...]}`, NaN and inf as null, as `serq run --json`
writes them); `.parquet` (pyarrow) is written like `.csv`. The same sweep gives the same
bytes whatever executed it. Each file is replaced whole or not at all (`serq.file_output`),
and the two of `.csv` or `.parquet` are both written before either replaces its old file.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from serq.file_output import write_bytes, write_files
from serq.sweeps.grid import Point
from serq.sweeps.tstat import interval
from serq.sweeps.worker import RunOutcome

if TYPE_CHECKING:
    from rich.table import Table

    from serq.diagnostics import Diagnostic

SCHEMA = "serq-sweep/1"
SUFFIXES = (".csv", ".json", ".parquet")

Row = dict[str, Any]


@dataclass(frozen=True)
class InterruptedRun:
    """A run that Ctrl-C stopped before it finished: its grid `point`, its `seed`, the
    clock `now` it had reached (None: stopped before its simulation began), and `found`,
    what had stopped moving by then, as `serq run` says it when interrupted (a job of
    infinite work, an engine stopped, sessions waiting at the pools for ever, a livelock,
    a clock that had not moved)."""

    point: Point
    seed: int
    now: float | None
    found: tuple[Diagnostic, ...] = ()
    # it gave no answer within the grace after Ctrl-C: what became of it (its clock and
    # findings unknown)
    late: str = ""


@dataclass(frozen=True)
class SweepResult:
    """A sweep's results: `points` and `runs` as lists of rows (dicts, in grid order),
    the swept `parameters`, the observation and gauge names, the `seeds` of each point, and
    whether every run finished (`complete`: False after Ctrl-C, `interrupted` then the
    runs that were in progress, in grid order, each with what it had found)."""

    parameters: tuple[str, ...]
    observations: tuple[str, ...]
    gauges: tuple[str, ...]
    seeds: tuple[int, ...]
    points: list[Row] = field(repr=False)
    runs: list[Row] = field(repr=False)
    complete: bool = True
    interrupted: tuple[InterruptedRun, ...] = field(default=(), repr=False)
    broken: str = ""  # why the sweep stopped before its runs were done, if not Ctrl-C

    @property
    def measures(self) -> tuple[str, ...]:
        """The observation and gauge names, the columns that have an interval."""
        return self.observations + tuple(g for g in self.gauges if g not in self.observations)

    @property
    def failed(self) -> int:
        """The number of runs that failed."""
        return sum(1 for row in self.runs if row["error"])

    def to_pandas(self, runs: bool = False) -> Any:
        """The point rows (or with `runs=True` the run rows) as a pandas DataFrame."""
        import pandas as pd

        rows = self.runs if runs else self.points
        return pd.DataFrame(rows, columns=self.columns(runs))

    def columns(self, runs: bool = False) -> list[str]:
        """The column names of the point rows (or of the run rows), in order."""
        if runs:
            return ["point", *self.parameters, "seed", *self.measures, "error", "warning"]
        measured = [c for m in self.measures for c in (m, f"{m}_ci")]
        return ["point", *self.parameters, "runs", "failed", *measured, "error", "warning"]

    def plot(self, x: str, y: str, hue: str | None = None, **options: Any) -> Any:
        """A matplotlib figure of `y`'s mean against `x` with its interval (a band; see
        `serq.plot.plot_points` for `hue`, `bars`, `log_x`, `log_y`, `ax`)."""
        from serq.plot import plot_points

        return plot_points(self.points, x, y, hue=hue, **options)

    def write(self, path: str | Path) -> list[Path]:
        """Write the results to `path` (`.csv`, `.json` or `.parquet`; see the module
        docstring) and return the files written. Raises `ValueError` for another suffix
        and `OSError` when a file cannot be written."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix == ".json":
            write_bytes(path, self.to_json().encode("utf-8"))
            return [path]
        beside = path.with_name(f"{path.stem}.runs{path.suffix}")
        if suffix == ".csv":  # both files written before either is replaced
            points, runs = self.to_csv().encode("utf-8"), self.to_csv(runs=True).encode("utf-8")
            write_files([(path, lambda f: f.write(points)), (beside, lambda f: f.write(runs))])
            return [path, beside]
        if suffix == ".parquet":
            write_files(
                [
                    (path, _parquet_writer(self.points, self.columns())),
                    (beside, _parquet_writer(self.runs, self.columns(runs=True))),
                ]
            )
            return [path, beside]
        raise ValueError(f"cannot write `{path}`: the suffix is none of {', '.join(SUFFIXES)}")

    def to_csv(self, runs: bool = False) -> str:
        """The point rows (or the run rows) as CSV text."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        columns = self.columns(runs)
        writer.writerow(columns)
        for row in self.runs if runs else self.points:
            writer.writerow([_csv_cell(row[c]) for c in columns])
        return out.getvalue()

    def to_json(self, indent: int | None = 2) -> str:
        """Both tables as one JSON document."""
        document = {
            "schema": SCHEMA,
            "parameters": list(self.parameters),
            "observations": list(self.observations),
            "gauges": list(self.gauges),
            "seeds": list(self.seeds),
            "complete": self.complete,
            "points": [{c: _json_value(row[c]) for c in self.columns()} for row in self.points],
            "runs": [{c: _json_value(row[c]) for c in self.columns(True)} for row in self.runs],
        }
        return json.dumps(document, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"

    def table(self, limit: int = 8) -> Table:
        """The point rows as a rich table: the values, the replications, and the first
        `limit` observations and gauges as `mean ± half-width`."""
        from rich import box
        from rich.table import Table

        from serq.report.text import number

        table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for name in self.parameters:
            table.add_column(name, style="bold", justify="right", no_wrap=True)
        table.add_column("runs", justify="right", no_wrap=True)
        shown = self.measures[:limit]
        for name in shown:
            table.add_column(name, justify="right", no_wrap=True)
        notes = [c for c in ("error", "warning") if any(row[c] for row in self.points)]
        for column in notes:
            table.add_column(column, overflow="fold")
        for row in self.points:
            runs = str(row["runs"]) + (f" ({row['failed']} failed)" if row["failed"] else "")
            cells = [_plain(row[p]) for p in self.parameters] + [runs]
            cells += [f"{number(row[m])} ± {number(row[m + '_ci'])}" for m in shown]
            cells += [row[column] for column in notes]
            table.add_row(*cells)
        return table

    def _repr_html_(self) -> str:
        """The point rows as an HTML table (for notebooks)."""
        from serq.report.text import number

        notes = [c for c in ("error", "warning") if any(row[c] for row in self.points)]
        columns = [*self.parameters, "runs", *self.measures, *notes]
        head = "".join(f"<th>{escape(c)}</th>" for c in columns)
        body = []
        for row in self.points:
            cells = [_plain(row[p]) for p in self.parameters] + [str(row["runs"])]
            cells += [f"{number(row[m])} ± {number(row[m + '_ci'])}" for m in self.measures]
            cells += [row[column] for column in notes]
            body.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
        note = "" if self.complete else "<p>interrupted: not every run finished</p>"
        points, seeds = len(self.points), len(self.seeds)
        caption = (
            f"<caption>sweep: {points} point{'s' * (points != 1)} × "
            f"{seeds} seed{'s' * (seeds != 1)}</caption>"
        )
        rows = "".join(body)
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>{note}"


def collect(
    grid: Sequence[Point],
    seeds: Sequence[int],
    outcomes: Mapping[int, RunOutcome],
    complete: bool = True,
    interrupted: Mapping[int, RunOutcome] | None = None,
) -> SweepResult:
    """The results of the runs `outcomes` (by run index: point × len(seeds) + seed's
    position) of the points `grid` with `seeds`; points without a finished run are left
    out. `interrupted` holds the runs Ctrl-C stopped (by run index), kept apart."""
    parameters = tuple(name for name, _ in grid[0].values) if grid else ()
    observations: dict[str, None] = {}
    gauges: dict[str, None] = {}
    for index in sorted(outcomes):
        observations.update(dict.fromkeys(name for name, _ in outcomes[index].observes))
        gauges.update(dict.fromkeys(name for name, _ in outcomes[index].gauges))
    measures = list(observations) + [g for g in gauges if g not in observations]
    runs: list[Row] = []
    points: list[Row] = []
    for point in grid:
        done = []
        for k, seed in enumerate(seeds):
            outcome = outcomes.get(point.index * len(seeds) + k)
            if outcome is None:
                continue
            values = {**dict(outcome.observes), **dict(outcome.gauges)}
            row: Row = {"point": point.index, **dict(point.values), "seed": seed}
            row.update({m: values.get(m, math.nan) for m in measures})
            row["error"] = outcome.error or ""
            row["warning"] = outcome.warning or ""
            runs.append(row)
            done.append(row)
        if done:
            points.append(_point_row(point, done, measures))
    by_index = {point.index: point for point in grid}
    stopped = tuple(
        InterruptedRun(
            by_index[i // len(seeds)], seeds[i % len(seeds)], run.now, run.found, run.late
        )
        for i, run in sorted((interrupted or {}).items())
    )
    return SweepResult(
        parameters,
        tuple(observations),
        tuple(gauges),
        tuple(seeds),
        points,
        runs,
        complete,
        stopped,
    )


def _point_row(point: Point, runs: list[Row], measures: list[str]) -> Row:
    finished = [r for r in runs if not r["error"]]
    row: Row = {"point": point.index, **dict(point.values)}
    row["runs"], row["failed"] = len(finished), len(runs) - len(finished)
    for m in measures:
        values = [r[m] for r in finished if not math.isnan(r[m])]
        row[m], row[f"{m}_ci"] = interval(values)
    row["error"] = next((r["error"] for r in runs if r["error"]), "")
    row["warning"] = next((r["warning"] for r in runs if r["warning"]), "")
    return row


def read_points(path: str | Path) -> list[Row]:
    """The point rows of a results file (`.csv`, `.json` or `.parquet`). Raises `OSError`
    when it cannot be read and `ValueError` (saying why, without the path) when it is not
    a results file."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        rows = []
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, strict=True)  # a quote never closed is an error
            try:
                for row in reader:
                    if None in row:  # more cells than the header has names: csv keys them None
                        raise ValueError(f"line {reader.line_num} has more cells than the header")
                    rows.append(row)
            except csv.Error as error:
                raise ValueError(f"not CSV after line {reader.line_num}: {error}") from None
            except UnicodeDecodeError as error:
                byte = error.object[error.start]
                raise ValueError(f"not UTF-8 text (byte 0x{byte:02X})") from None
        return [{k: _read_cell(v) for k, v in row.items()} for row in rows]
    if suffix == ".json":
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
            rows = document["points"]
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ValueError(f"not a sweep's JSON: {error}") from None
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise ValueError("not a sweep's JSON: `points` is not a list of objects")
        return [{k: math.nan if v is None else v for k, v in row.items()} for row in rows]
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    raise ValueError(f"the suffix is none of {', '.join(SUFFIXES)}")


def _csv_cell(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _read_cell(text: str | None) -> Any:
    if text is None:
        return ""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _plain(value: Any) -> str:
    return repr(value) if isinstance(value, float) else str(value)


def _parquet_writer(rows: list[Row], columns: list[str]) -> Callable[[BinaryIO], None]:
    """What writes `rows` as a Parquet table of `columns` to a binary file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {}
    for column in columns:
        values = [row[column] for row in rows]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            arrays[column] = pa.array(values, pa.int64())
        elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            arrays[column] = pa.array([float(v) for v in values], pa.float64())
        else:
            arrays[column] = pa.array([_plain(v) for v in values], pa.string())
    table = pa.table(arrays)
    return lambda f: pq.write_table(table, f)
