"""What a run reports: the `Report` and its rows, shaped like the reference's (`pyserq`).

The attribute names are the reference's, so a notebook written against `pyserq.Report`
reads this one: `report.observe("sojourn").mean`, `report.stage("server").utilization`,
`report.pools[0].evicted_units`. A value that does not exist (the mean of no samples,
a step statistic of a fifo stage) is NaN; `serq.report.codec` writes it as null.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from operator import eq
from typing import Any


class Series(array):
    """A report's per-sample column: an `array('d')` of times or values, or an `array('q')`
    of sessions or turns (8 bytes an item, where a tuple of floats takes 32), filled by the
    recorder as the run goes and handed to the report as it is, never copied. It equals any
    tuple or list with the same items, as the tuples it replaces did."""

    __slots__ = ()
    __hash__ = None  # type: ignore[assignment]  # an array is mutable

    def __eq__(self, other: object) -> bool:
        if isinstance(other, tuple | list):
            return len(self) == len(other) and all(map(eq, self, other))
        return super().__eq__(other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __copy__(self) -> Series:
        return type(self)(self.typecode, self)

    def __deepcopy__(self, memo: dict) -> Series:
        return type(self)(self.typecode, self)


@dataclass(frozen=True, slots=True)
class Observe:
    """One `observe` statistic: its summary and its samples (after warm-up) with the time,
    session (serial) and turn of each. The run's columns stay typed arrays (`Series`, in
    `columns`: samples, times, sessions, turns); `samples`, `times`, `sessions` and `turns`
    give each as a new list at every access, as the reference's do (bind it once)."""

    name: str
    count: int
    mean: float
    ci: float  # batch-means 95 % half-width; inf below 40 samples
    cv2: float
    p99: float
    # (samples, times, sessions, turns): Series('d'), Series('d'), Series('q'), Series('q')
    columns: tuple[Sequence[float], Sequence[float], Sequence[int], Sequence[int]] = field(
        default=((), (), (), ()), repr=False
    )

    @property
    def samples(self) -> list[float]:
        """The values observed after warm-up, in the order taken (a new list)."""
        return _listed(self.columns[0])

    @property
    def times(self) -> list[float]:
        """The time of each sample (a new list)."""
        return _listed(self.columns[1])

    @property
    def sessions(self) -> list[int]:
        """The session (serial) that took each sample (a new list)."""
        return _listed(self.columns[2])

    @property
    def turns(self) -> list[int]:
        """The turn of the session at each sample (a new list)."""
        return _listed(self.columns[3])


@dataclass(frozen=True, slots=True)
class Gauge:
    """One `gauge`: its time average over [warmup, end] with a batch-means 95 % half-width,
    the least and greatest value held for a positive time, and its change points (kept
    as typed arrays in `columns`, times and values; `times` and `values` give each as a
    new list at every access, as the reference's do)."""

    name: str
    mean: float
    ci: float
    min: float
    max: float
    columns: tuple[Sequence[float], Sequence[float]] = field(default=((), ()), repr=False)

    @property
    def times(self) -> list[float]:
        """The time of each change point, over the whole run (a new list)."""
        return _listed(self.columns[0])

    @property
    def values(self) -> list[float]:
        """The value the gauge takes at each change point, until the next (a new list)."""
        return _listed(self.columns[1])


def _listed(column: Sequence[Any]) -> list[Any]:
    """A report's column as a new list (`array.tolist` for a typed array: in C)."""
    return column.tolist() if isinstance(column, array) else list(column)


@dataclass(frozen=True, slots=True)
class StageRow:
    """One stage member: time averages over [warmup, end], the jobs completed after
    warm-up and, for a step stage, its iterations (NaN or 0 elsewhere); `skipped` counts
    the iterations the step engine fast-forwarded (advanced without an event of their own)."""

    name: str
    index: int | None
    mean_number: float
    utilization: float
    completed: int
    throughput: float
    mean_wait: float
    mean_service: float
    iterations: int = 0
    prefill_only: float = 0.0
    decode_only: float = 0.0
    mixed: float = 0.0
    mean_decodes: float = 0.0
    mean_decode_batch: float = float("nan")
    mean_decode_step: float = float("nan")
    mean_itl: float = float("nan")
    itl_p50: float = float("nan")
    itl_p99: float = float("nan")
    skipped: int = 0


@dataclass(frozen=True, slots=True)
class PoolRow:
    """One pool member: time averages over [warmup, end], the mean queue wait of the
    admissions after warm-up, and the run's counts of admissions and events."""

    name: str
    index: int | None
    mean_used: float
    mean_cached: float
    mean_queue: float
    mean_holders: float
    mean_wait: float
    admissions: int
    evicted_entries: int
    evicted_units: float
    preemptions: int
    spills: int
    rejected: int
    stuck: int


@dataclass(frozen=True, slots=True)
class ClaimRow:
    """One claim's outcome, as pyserq 0.1.4 reports it: `kind` every_iteration,
    some_iteration or at_end; `result` holds, fails, witnessed, not_witnessed,
    out_of_scope or not_evaluated; `checked` the evaluations, `failures` those that were
    false; `first` the time of the first failure (of the first witness for
    some_iteration), NaN for none; `note` why it was not (wholly) evaluated, or None.
    `values` is serq's own: what the predicate read at `first` (for the run's note)."""

    name: str
    kind: str
    result: str
    checked: int
    failures: int
    first: float
    note: str | None
    values: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True, slots=True)
class Report:
    """A run's report. `horizon` is the configured deadline and `end` the time the run
    stopped; averages and rates are over [warmup, end]. `notes` are remarks on the run
    (an observed test that never held)."""

    serq_version: str
    horizon: float
    end: float
    warmup: float
    seed: int
    events: int
    arrivals: int
    ended: int
    turns: int
    mean_live: float
    observes: dict[str, Observe] = field(default_factory=dict)
    gauges: dict[str, Gauge] = field(default_factory=dict)
    stages: tuple[StageRow, ...] = ()
    pools: tuple[PoolRow, ...] = ()
    notes: tuple[str, ...] = ()
    claims: tuple[ClaimRow, ...] = ()

    def claim(self, name: str) -> ClaimRow | None:
        """The claim `name`, or None."""
        return next((row for row in self.claims if row.name == name), None)

    def claims_failed(self) -> list[ClaimRow]:
        """The claims that failed or were never witnessed."""
        return [row for row in self.claims if row.result in ("fails", "not_witnessed")]

    def observe(self, name: str) -> Observe | None:
        """The observation `name`, or None."""
        return self.observes.get(name)

    def gauge(self, name: str) -> Gauge | None:
        """The gauge `name`, or None."""
        return self.gauges.get(name)

    def stage(self, name: str) -> StageRow | None:
        """The first stage member named `name`, or None."""
        return next((row for row in self.stages if row.name == name), None)

    def pool(self, name: str) -> PoolRow | None:
        """The first pool member named `name`, or None."""
        return next((row for row in self.pools if row.name == name), None)

    def stages_named(self, name: str) -> list[StageRow]:
        """Every member of the stage `name`, in index order."""
        return [row for row in self.stages if row.name == name]

    def pools_named(self, name: str) -> list[PoolRow]:
        """Every member of the pool `name`, in index order."""
        return [row for row in self.pools if row.name == name]

    def _repr_html_(self) -> str:
        """The report's tables as HTML, for notebooks."""
        from serq.report.html import report_html

        return report_html(self)

    def to_pandas(self) -> dict[str, Any]:
        """The report's rows as pandas DataFrames (pandas is an optional extra): a dict with
        `observes` and `gauges` (one row per name) and `stages` and `pools` (one row per
        member), the columns the rows' fields."""
        import pandas as pd

        tables = {
            "observes": [_summary(o) for o in self.observes.values()],
            "gauges": [_summary(g) for g in self.gauges.values()],
            "stages": [_summary(row) for row in self.stages],
            "pools": [_summary(row) for row in self.pools],
        }
        kinds = {"observes": Observe, "gauges": Gauge, "stages": StageRow, "pools": PoolRow}
        return {
            name: pd.DataFrame(rows, columns=_summary_fields(kinds[name]))
            for name, rows in tables.items()
        }

    def json(self, indent: int | None = None) -> str:
        """The summary as JSON (`serq run --json`), versioned by `codec.SCHEMA`."""
        from serq.report.codec import to_json

        return to_json(self, indent=indent)


def _summary_fields(kind: type) -> list[str]:
    """The fields of a row type without its per-sample tuples."""
    return [f.name for f in fields(kind) if f.repr]


def _summary(row: Any) -> dict[str, Any]:
    return {name: getattr(row, name) for name in _summary_fields(type(row))}
