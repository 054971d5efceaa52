"""What a run reports, and its three renderings.

`Report` (model) holds the data, shaped like the reference's `pyserq.Report`;
`render_text` prints it as rich tables, `codec.to_json` / `from_json` write and read the
versioned JSON of `serq run --json`, and `write_dump` writes the samples and gauge change
points of `serq run --dump DIR`. The statistics themselves (`stats`) are computed by
`serq.sim.recorder`, which builds the report at the end of a run.
"""

from __future__ import annotations

from serq.report.codec import SCHEMA, ReportFormatError, from_json, to_json
from serq.report.dump import write_dump
from serq.report.model import Gauge, Observe, PoolRow, Report, StageRow
from serq.report.text import render_text, report_text

__all__ = [
    "SCHEMA",
    "Gauge",
    "Observe",
    "PoolRow",
    "Report",
    "ReportFormatError",
    "StageRow",
    "from_json",
    "render_text",
    "report_text",
    "to_json",
    "write_dump",
]
