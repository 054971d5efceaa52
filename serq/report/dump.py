"""`serq run --dump DIR`: every sample and every gauge change point as CSV.

`DIR/observe/NAME.csv` has a header `time,session,turn,value` and one line per sample
taken after warm-up; `DIR/gauge/NAME.csv` has `time,value` and one line per change
point of the gauge over the whole run (the value holds until the next line). Numbers are
written so that they read back exactly. Each file is replaced whole or not at all.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from serq.file_output import write_file
from serq.report.model import Report

OBSERVE_HEADER = ("time", "session", "turn", "value")
GAUGE_HEADER = ("time", "value")


def write_dump(report: Report, directory: str | Path) -> list[Path]:
    """Write the CSV files of `report` under `directory` (created if missing) and return
    their paths. Raises `OSError` when a file cannot be written."""
    root = Path(directory)
    written = []
    for name, o in report.observes.items():
        samples, times, sessions, turns = o.columns  # the arrays themselves: no list
        rows = zip(times, sessions, turns, samples, strict=True)
        written.append(_write(root / "observe" / f"{name}.csv", OBSERVE_HEADER, rows))
    for name, g in report.gauges.items():
        rows = zip(*g.columns, strict=True)
        written.append(_write(root / "gauge" / f"{name}.csv", GAUGE_HEADER, rows))
    return written


def _write(path: Path, header: tuple[str, ...], rows: Iterable[tuple]) -> Path:
    """Write one CSV file, whole or not at all (`serq.file_output`)."""

    def write(f: BinaryIO) -> None:
        text = io.TextIOWrapper(f, encoding="utf-8", newline="")
        out = csv.writer(text, lineterminator="\n")
        out.writerow(header)
        out.writerows(tuple(_cell(v) for v in row) for row in rows)
        text.detach()  # flushes; `write_file` closes `f` itself

    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, write)
    return path


def _cell(value: float | int) -> str:
    return repr(value) if isinstance(value, float) else str(value)
