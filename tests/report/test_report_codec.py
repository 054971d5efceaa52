"""The JSON of `serq run --json`: schema, the reference's keys, nulls, and the round trip."""

from __future__ import annotations

import json
import math

import pytest

from serq.report import SCHEMA, ReportFormatError, from_json, to_json
from serq.sim.recorder import StatsRecorder
from tests.report.conftest import FIFO, POOLS, STEP, link, outcome, pools_trace, step_trace


def _reports():
    step = StatsRecorder(link(STEP), 2.0)
    step_trace(step)
    pools = StatsRecorder(link(POOLS), 3.0)
    pools_trace(pools)
    return step.finish(outcome(30.0, 8, 3, 3)), pools.finish(outcome(30.0, 5, 4, 3))


def test_schema_first_notes_last_and_the_reference_order_between(fifo_report):
    data = json.loads(fifo_report.json())
    keys = list(data)
    assert keys[0] == "schema" and data["schema"] == SCHEMA and keys[-1] == "notes"
    assert keys[1:-1] == [
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
        "observes",
        "gauges",
        "stages",
        "pools",
        "skipped",
    ]


def test_nan_and_inf_are_null_whole_numbers_have_no_fraction(fifo_report):
    data = json.loads(fifo_report.json())
    assert data["observes"]["done"] == {"count": 3, "mean": 4, "ci": None, "cv2": 0.25, "p99": 6}
    stage = data["stages"][0]
    assert stage["mean_decode_batch"] is None and stage["completed"] == 3
    assert "NaN" not in fifo_report.json() and "Infinity" not in fifo_report.json()


def test_round_trip(fifo_report):
    for report in (fifo_report, *_reports()):
        text = to_json(report)
        again = from_json(text)
        assert to_json(again) == text
        assert [row.name for row in again.stages] == [row.name for row in report.stages]
    back = from_json(fifo_report.json())
    assert math.isnan(back.observe("done").ci)  # inf and NaN both read back as NaN
    assert back.gauge("q").mean == 1 and back.gauge("q").times == []


def test_other_schemas_and_garbage_are_refused(fifo_report):
    data = json.loads(fifo_report.json())
    data["schema"] = SCHEMA + 1
    with pytest.raises(ReportFormatError):
        from_json(json.dumps(data))
    del data["schema"]
    with pytest.raises(ReportFormatError):
        from_json(json.dumps(data))
    with pytest.raises(ReportFormatError):
        from_json("[1, 2")
    with pytest.raises(ReportFormatError):
        from_json(json.dumps({"schema": SCHEMA}))


def test_the_reference_keys_are_ours(fifo_report):
    pyserq = pytest.importorskip("pyserq")
    for text, ours in ((FIFO, fifo_report), (STEP, _reports()[0]), (POOLS, _reports()[1])):
        theirs = json.loads(pyserq.run(pyserq.compile(source=text)).json())
        mine = json.loads(ours.json())
        assert [k for k in mine if k not in ("schema", "skipped", "notes")] == list(theirs)
        for section in ("observes", "gauges"):
            assert {n: list(v) for n, v in mine[section].items()} == {
                n: list(v) for n, v in theirs[section].items()
            }
        for section in ("stages", "pools"):
            assert [list(row) for row in mine[section]] == [list(row) for row in theirs[section]]
