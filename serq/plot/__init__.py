"""Pictures of sweeps and runs, drawn with matplotlib (the optional extra `serq-py[plot]`).

`plot_points(rows, x, y)` draws a sweep's mean of `y` against `x` with its 95 % interval
(a band, or error bars), one line per value of `hue`; `plot_dump(directory)` draws one
run's `--dump`: every gauge over time, and an observation's histogram and empirical CDF.
Both return a `matplotlib.figure.Figure` built without pyplot (no display needed:
`save(figure, "out.png")` renders it headless); `plot_points` draws on a given `ax` instead.
"""

from __future__ import annotations

import csv
import errno
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from serq.file_output import write_file

FORMATS = (".png", ".svg")
DPI = 120


class PlotError(ValueError):
    """What cannot be plotted: a column that is not there, a dump without data."""


def plot_points(
    rows: Sequence[dict[str, Any]],
    x: str,
    y: str,
    hue: str | None = None,
    *,
    bars: bool = False,
    log_x: bool = False,
    log_y: bool = False,
    ax: Any = None,
) -> Any:
    """The figure of the point rows `rows`: `y`'s mean against `x`, its interval (`y_ci`,
    when the rows have it) as a band or, with `bars`, error bars, one line per value of
    `hue`; logarithmic axes on request. Raises `PlotError` for a missing column, a `y`
    that is text other than a number, or no point with a finite `y`, and `TypeError` when
    `x`, `y` or `hue` is not a column's name (a str)."""
    for what, name in (("x", x), ("y", y), ("hue", hue)):
        if not isinstance(name, str) and not (what == "hue" and name is None):
            raise TypeError(f"`{what}` names a column (a str), not {name!r}")
    for name in (x, y, hue):
        if name is not None and rows and name not in rows[0]:
            if name == y and all(_float(row.get("runs", math.nan)) == 0 for row in rows):
                # a sweep whose every run failed names no observation: say so, not "no column"
                first = next((row["error"] for row in rows if row.get("error")), "")
                why = f"; the first error: {first}" if first else ""
                raise PlotError(f"every run of the sweep failed: it has no `{y}` to draw{why}")
            known = ", ".join(k for k in rows[0] if not k.endswith("_ci"))
            raise PlotError(f"the results have no column `{name}` (they have {known})")
    if not rows:
        raise PlotError("the results have no rows")
    for k, row in enumerate(rows):  # an empty cell is a point whose runs failed
        if isinstance(row[y], str) and row[y].strip() and math.isnan(_float(row[y])):
            raise PlotError(f"`{y}` of the point in row {k + 1} is `{row[y]}`, not a number")
    if not any(math.isfinite(_float(row[y])) for row in rows):
        raise PlotError(f"no point has a finite `{y}` to draw (every run failed?)")
    figure, ax = _axes(ax)
    groups: dict[Any, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row[hue] if hue else None, []).append(row)
    categorical = not all(_is_number(row[x]) for row in rows)
    for axis, name, wanted in (("x", x, log_x and not categorical), ("y", y, log_y)):
        if wanted and not any(_float(row[name]) > 0 for row in rows):
            # matplotlib would warn on stderr and draw a linear axis
            raise PlotError(
                f"no point has a positive `{name}` to draw on a logarithmic {axis} axis"
            )
    ticks = list(dict.fromkeys(str(row[x]) for row in rows)) if categorical else []
    for key, group in groups.items():
        group = group if categorical else sorted(group, key=lambda r: float(r[x]))
        xs = [ticks.index(str(r[x])) if categorical else float(r[x]) for r in group]
        ys = [_float(r[y]) for r in group]
        half = [_float(r.get(f"{y}_ci", math.nan)) for r in group]
        label = None if hue is None else f"{hue} = {key}"
        (line,) = ax.plot(xs, ys, marker="o", label=label)
        finite = [h if math.isfinite(h) else 0.0 for h in half]
        if any(finite):
            if bars:
                ax.errorbar(xs, ys, yerr=finite, fmt="none", ecolor=line.get_color(), capsize=3)
            else:
                low = [v - h for v, h in zip(ys, finite, strict=True)]
                high = [v + h for v, h in zip(ys, finite, strict=True)]
                ax.fill_between(xs, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    if categorical:
        ax.set_xticks(range(len(ticks)), ticks)
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
        means = [v for row in rows if (v := _float(row[y])) > 0 and math.isfinite(v)]
        if means:  # an interval reaching 0 or below runs off the bottom, not to 1e-300
            ax.set_ylim(bottom=min(means) / 4)
    ax.set_xlabel(x)
    ax.set_ylabel(f"{y} (mean, 95% interval)" if any(f"{y}_ci" in r for r in rows) else y)
    ax.grid(True, alpha=0.3)
    if hue is not None:
        ax.legend()
    return figure


def plot_dump(directory: str | Path, observe: str | None = None) -> Any:
    """The figure of the `serq run --dump` directory `directory`: its gauges over time
    (each a step line) and the histogram and empirical CDF of the observation `observe`
    (default: the first by name). Raises `PlotError` when there is nothing to draw, and
    `OSError` when `directory` is not one or a file cannot be read."""
    root = Path(directory)
    if not root.is_dir():
        error = errno.ENOTDIR if root.exists() else errno.ENOENT
        raise OSError(error, os.strerror(error), str(root))
    gauges = sorted((root / "gauge").glob("*.csv")) if (root / "gauge").is_dir() else []
    observes = sorted((root / "observe").glob("*.csv")) if (root / "observe").is_dir() else []
    if not gauges and not observes:
        raise PlotError(f"`{root}` has no gauge/*.csv or observe/*.csv (a `serq run --dump`)")
    chosen = None
    if observe is not None:
        chosen = root / "observe" / f"{observe}.csv"
        if chosen not in observes:
            known = ", ".join(p.stem for p in observes) or "none"
            raise PlotError(f"the dump has no observation `{observe}` (it has {known})")
    elif observes:
        chosen = observes[0]
    from matplotlib.figure import Figure

    rows = (1 if gauges else 0) + (1 if chosen is not None else 0)
    figure = Figure(figsize=(9, 3.6 * rows), layout="constrained")
    grid = figure.add_gridspec(rows, 2)
    row = 0
    if gauges:
        ax = figure.add_subplot(grid[row, :])
        for path in gauges:
            times, values = _columns(path, "time", "value")
            ax.step(times, values, where="post", label=path.stem)
        ax.set_xlabel("time")
        ax.set_ylabel("gauge value")
        ax.set_title("gauges")
        ax.legend()
        ax.grid(True, alpha=0.3)
        row += 1
    if chosen is not None:
        (samples,) = _columns(chosen, "value")
        name = chosen.stem
        histogram = figure.add_subplot(grid[row, 0])
        finite = [v for v in samples if math.isfinite(v)]
        histogram.hist(finite, bins=min(50, max(len(finite), 1)))
        histogram.set_xlabel(name)
        histogram.set_ylabel("samples")
        histogram.set_title(f"{name}: histogram ({len(samples)} samples)")
        ecdf = figure.add_subplot(grid[row, 1])
        ordered = sorted(finite)
        n = len(ordered)
        ecdf.step(ordered, [(i + 1) / n for i in range(n)], where="post")
        ecdf.set_xlabel(name)
        ecdf.set_ylabel("fraction ≤ x")
        ecdf.set_title(f"{name}: empirical CDF")
        ecdf.grid(True, alpha=0.3)
    return figure


def save(figure: Any, path: str | Path) -> Path:
    """Render `figure` to `path` (PNG or SVG by the suffix) without a display. Raises
    `PlotError` for another suffix and `OSError` when the file cannot be written."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise PlotError(f"cannot draw `{path}`: the suffix is none of {', '.join(FORMATS)}")
    from matplotlib import rc_context
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)  # attaches itself to the figure: no pyplot, no display
    kind = path.suffix.lower().lstrip(".")
    with rc_context({"svg.fonttype": "none"}):  # SVG text stays text: searchable, editable
        write_file(path, lambda f: figure.savefig(f, format=kind, dpi=DPI))  # whole or not at all
    return path


def _axes(ax: Any) -> tuple[Any, Any]:
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4.5), layout="constrained")
    return figure, figure.add_subplot()


def _columns(path: Path, *names: str) -> list[list[float]]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = [n for n in names if n not in (reader.fieldnames or [])]
        if missing:
            raise PlotError(f"`{path}` has no column {', '.join(missing)}")
        rows = list(reader)
    return [[float(row[n]) for row in rows] for n in names]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan
