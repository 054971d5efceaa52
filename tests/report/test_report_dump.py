"""`--dump DIR`: observe/NAME.csv (time,session,turn,value), gauge/NAME.csv (time,value)."""

from __future__ import annotations

import csv

import pytest

from serq.report import write_dump


def _rows(path):
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def test_dump_writes_samples_and_change_points(fifo_report, tmp_path):
    written = write_dump(fifo_report, tmp_path / "out")
    root = tmp_path / "out"
    assert sorted(p.relative_to(root).as_posix() for p in written) == [
        "gauge/b.csv",
        "gauge/q.csv",
        "observe/done.csv",
    ]
    assert _rows(root / "observe" / "done.csv") == [
        ["time", "session", "turn", "value"],
        ["2.0", "0", "0", "2.0"],
        ["4.0", "1", "0", "4.0"],
        ["6.0", "2", "0", "6.0"],
    ]
    assert _rows(root / "gauge" / "q.csv") == [
        ["time", "value"],
        ["0.0", "3.0"],  # change points of the whole run, warm-up included
        ["2.0", "2.0"],
        ["4.0", "1.0"],
        ["6.0", "0.0"],
    ]
    assert _rows(root / "gauge" / "b.csv") == [["time", "value"], ["0.0", "1.0"], ["6.0", "0.0"]]


def test_numbers_read_back_exactly(fifo_report, tmp_path):
    write_dump(fifo_report, tmp_path)
    rows = _rows(tmp_path / "gauge" / "q.csv")[1:]
    g = fifo_report.gauge("q")
    assert [(float(t), float(v)) for t, v in rows] == list(zip(g.times, g.values, strict=True))


def test_a_dump_that_cannot_be_written_raises_oserror(fifo_report, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OSError):
        write_dump(fifo_report, blocker)


def test_dump_matches_the_reference_samples(fifo_report):
    pyserq = pytest.importorskip("pyserq")
    from tests.report.conftest import FIFO

    theirs = pyserq.run(pyserq.compile(source=FIFO))
    o, g = theirs.observe("done"), theirs.gauge("q")
    mine_o, mine_g = fifo_report.observe("done"), fifo_report.gauge("q")
    assert (
        list(mine_o.times),
        list(mine_o.sessions),
        list(mine_o.turns),
        list(mine_o.samples),
    ) == (
        o.times,
        o.sessions,
        o.turns,
        o.samples,
    )
    assert (list(mine_g.times), list(mine_g.values)) == (g.times, g.values)
