"""Every point of a sweep checked before anything runs.

`check_points` compiles the program at each point of the grid (the checks `serq check
--set ...` makes there: the values apply, every constant is in its domain, the `--def`
bodies link, the run settings hold), once per distinct set of values, whatever the seeds.
A point that does not check stops the whole sweep: its diagnostics come back, each with a
note naming the point(s) where it is found, so a bad value late in the grid is reported
before minutes of runs at the good ones. Only what fails at run time (a run-time error, a
stall) is left to the runs, as a failed row.

A diagnostic found the same at several points is reported once, naming them all (at
every point of the grid, it is the program's and names none). Two values of one option
that both fail inside the option's own text (`<--set NAME>`) cannot be drawn in one
rendering: the first is reported, which is enough to stop the sweep.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from serq.diagnostics import Diagnostic, Severity
from serq.sweeps.grid import Point

if TYPE_CHECKING:
    from serq.sim.api import Compiled

SHOWN_POINTS = 4  # a note names this many points, then says how many more


@dataclass(frozen=True)
class PointChecks:
    """The outcome of checking a grid: the program compiled at each point that checked
    (by point index), the diagnostics to show (the first point's when every point
    checked, else the failing points' with notes naming them) and the texts they point
    into."""

    compiled: dict[int, Compiled]
    diagnostics: list[Diagnostic]
    known: dict[str, str]

    @property
    def ok(self) -> bool:
        """Whether every point checked."""
        return not any(d.severity >= Severity.ERROR for d in self.diagnostics)


def check_points(
    text: str,
    path: str,
    grid: Sequence[Point],
    settings: Mapping[str, float | int | str | None],
    defs: Mapping[str, str],
    keep: int,
    progress: Callable[[int, int], None] | None = None,
) -> PointChecks:
    """Compile the program `text` (from `path`) with the run `settings` (`horizon`,
    `warmup`, `arrivals`, `trace`) and the `--def` bodies `defs` at each point of `grid`, keeping
    the compiled program of the first `keep` points. A program that does not parse is
    checked at every point too: a value that cannot be applied is reported with its
    syntax errors, as `serq check --set` reports it. `progress` is called with the points
    checked and their count after each point (a grid of a million points takes an hour)."""
    from serq.sim import api as sim_api

    compiled: dict[int, Compiled] = {}
    failed: list[tuple[Point, list[Diagnostic], dict[str, str]]] = []
    first: tuple[list[Diagnostic], dict[str, str]] = ([], {path: text})
    checked: set[tuple[tuple[str, str], ...]] = set()
    kept: dict[tuple[tuple[str, str], ...], Compiled] = {}  # the first `keep` points' only
    for point in grid:
        if point.sets not in checked:  # once per distinct set of values (`--set c=1,1`)
            checked.add(point.sets)
            sets = dict(point.sets)
            program, diagnostics = sim_api.compile_program(
                text, path, sets=sets, defs=dict(defs), **settings
            )
            if program is None or point.index == 0:
                trace = settings.get("trace")
                known = sim_api.sources(
                    path, text, sets, diagnostics, dict(defs), trace  # type: ignore[arg-type]
                )
                first = (diagnostics, known) if point.index == 0 else first
            if program is None:
                failed.append((point, diagnostics, known))
            elif point.index < keep:
                kept[point.sets] = program
        if point.index < keep and point.sets in kept:
            compiled[point.index] = kept[point.sets]
        if progress is not None:
            progress(point.index + 1, len(grid))
    if not failed:
        return PointChecks(compiled, *first)
    diagnostics, known = _named(failed, len(checked))
    return PointChecks(compiled, diagnostics, known)


def _named(
    failed: Sequence[tuple[Point, list[Diagnostic], dict[str, str]]], size: int
) -> tuple[list[Diagnostic], dict[str, str]]:
    """The diagnostics of the `failed` points (of a grid of `size`), each once with a note
    naming the points it is found at, and the texts they point into."""
    where: dict[Diagnostic, list[Point]] = {}
    known: dict[str, str] = {}
    for point, diagnostics, texts in failed:
        for diagnostic in diagnostics:
            files = {diagnostic.span.file, *(label.span.file for label in diagnostic.labels)}
            if any(f in known and f in texts and known[f] != texts[f] for f in files):
                continue  # another value of the same option, already shown (module docstring)
            known.update({f: texts[f] for f in files if f in texts})
            where.setdefault(diagnostic, []).append(point)
    named = [_with_points(d, points, size) for d, points in where.items()]
    return named, known


def _with_points(diagnostic: Diagnostic, points: Sequence[Point], size: int) -> Diagnostic:
    """`diagnostic` with a note naming the grid `points` it is found at (none for a
    warning, when the grid has one distinct point, or when it is found at all `size`
    distinct points: the program's own)."""
    if size <= 1 or len(points) == size or diagnostic.severity < Severity.ERROR:
        return diagnostic  # a warning is the program's: the points that passed have it too
    named = ", ".join(f"({describe(p)})" for p in points[:SHOWN_POINTS])
    more = len(points) - SHOWN_POINTS
    if more > 0:
        named += f" and {more} more"
    count = f"at {len(points)} of the {size} grid points:"
    if len(points) == 1:
        count = "at the grid point"
    note = f"{count} {named}; the sweep checks every point before it runs any"
    return replace(diagnostic, notes=(*diagnostic.notes, note))


def describe(point: Point) -> str:
    """The point as `--set` values: `lambda=0.5, blocks=1000` (its index if none)."""
    return ", ".join(f"{name}={value}" for name, value in point.sets) or f"#{point.index}"
