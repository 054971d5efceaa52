"""The report as JSON: `serq run --json`, versioned by `SCHEMA`.

The keys and their order are the reference's (`pyserq.Report.json()`, its report version
1, and 0.1.4's `claims` after `gauges` when the program has claims) with three more:
`schema` first, then after the reference's keys `skipped` (per stage row, the iterations
a step engine fast-forwarded) and `notes`. A number that does not exist (NaN) or is
infinite (the half-width of fewer than 40 samples) is null, and a whole number is
written without a fraction. Samples and change points are not in the JSON; `--dump`
writes them (`serq.report.dump`).
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import Any

from serq.report.model import ClaimRow, Gauge, Observe, PoolRow, Report, StageRow

SCHEMA = 1  # bump on any change of a key's name, meaning or type

_HEAD = (
    "serq_version",
    "horizon",
    "end",
    "warmup",
    "seed",
    "events",
    "arrivals",
    "ended",
    "turns",
    "mean_live",
)
_OBSERVE = ("count", "mean", "ci", "cv2", "p99")
_GAUGE = ("mean", "ci", "min", "max")
_STAGE = tuple(f.name for f in fields(StageRow) if f.name != "skipped")  # the reference's
_POOL = tuple(f.name for f in fields(PoolRow))
_CLAIM = ("name", "kind", "result", "checked", "failures", "first", "note")  # the reference's


class ReportFormatError(ValueError):
    """A JSON text that is not a report of this `SCHEMA`."""


def to_dict(report: Report) -> dict[str, Any]:
    """The JSON object of `report`, numbers as `_number` writes them."""
    out: dict[str, Any] = {"schema": SCHEMA}
    out.update((key, _number(getattr(report, key))) for key in _HEAD)
    out["observes"] = {
        name: {key: _number(getattr(o, key)) for key in _OBSERVE}
        for name, o in report.observes.items()
    }
    out["gauges"] = {
        name: {key: _number(getattr(g, key)) for key in _GAUGE} for name, g in report.gauges.items()
    }
    if report.claims:  # as the reference, only for a program with claims
        out["claims"] = [
            {key: _number(getattr(row, key)) for key in _CLAIM} for row in report.claims
        ]
    out["stages"] = [{key: _number(getattr(row, key)) for key in _STAGE} for row in report.stages]
    out["pools"] = [{key: _number(getattr(row, key)) for key in _POOL} for row in report.pools]
    out["skipped"] = [row.skipped for row in report.stages]
    out["notes"] = list(report.notes)
    return out


def to_json(report: Report, indent: int | None = None) -> str:
    """The JSON text of `report` (one line unless `indent`)."""
    return json.dumps(to_dict(report), indent=indent, ensure_ascii=False, allow_nan=False)


def from_json(text: str) -> Report:
    """The report a `to_json` text holds, without samples or change points (null reads as
    NaN). Raises `ReportFormatError` on another schema or a missing key."""
    try:
        data = json.loads(text)
        if data.get("schema") != SCHEMA:
            raise ReportFormatError(f"report schema {data.get('schema')!r}, expected {SCHEMA}")
        head = {key: _read(data[key]) for key in _HEAD}
        head["serq_version"] = data["serq_version"]
        return Report(
            **head,
            observes={
                name: Observe(name, **{key: _read(o[key]) for key in _OBSERVE})
                for name, o in data["observes"].items()
            },
            gauges={
                name: Gauge(name, **{key: _read(g[key]) for key in _GAUGE})
                for name, g in data["gauges"].items()
            },
            stages=tuple(
                StageRow(**_row(row, _STAGE), skipped=skipped)
                for row, skipped in zip(
                    data["stages"], data.get("skipped") or [0] * len(data["stages"]), strict=True
                )
            ),
            pools=tuple(PoolRow(**_row(row, _POOL)) for row in data["pools"]),
            notes=tuple(data.get("notes", ())),
            claims=tuple(
                ClaimRow(**{key: _read(c[key]) for key in _CLAIM if key != "note"}, note=c["note"])
                for c in data.get("claims", ())
            ),
        )
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as error:
        raise ReportFormatError(f"not a serq report: {error}") from None


def _number(value: Any) -> Any:
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
    return value


def _read(value: Any) -> Any:
    return math.nan if value is None else value


def _row(data: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    row = {key: _read(data[key]) for key in keys}
    row["name"] = data["name"]
    row["index"] = data["index"]
    return row
