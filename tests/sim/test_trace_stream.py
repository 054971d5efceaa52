"""Reading a trace: streamed row by row into compact per-session arrays, and a malformed
row is an `E-run` naming the file, line and column. The sessions read are pyserq's
(`pyserq.read_trace` reads a trace as a replay does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from serq import ir
from serq.diagnostics import Span
from serq.sim.errors import SimError
from serq.sim.workload import read_trace

ORIGIN = Span("t.sq", 0, 5, 1, 1, 1, 6)


def _read(tmp_path: Path, text: str):
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    return read_trace(ir.Trace("t.csv", False, ORIGIN), str(tmp_path))


def _turns(table):
    return [table.turns(i) for i in range(len(table))]


def test_sessions_in_first_seen_order_turns_in_turn_order(tmp_path):
    text = (
        "session,turn,new,out,think,forced\n"
        "a,1,5,6,7,1\n"
        "b,0,1,1,1,0\n"
        "a,0,1,2,3,0\n"
        "\n"
        "a,2,0.5,inf,0,0\n"
    )
    assert _turns(_read(tmp_path, text)) == [
        [(1, 2, 3, 0), (5, 6, 7, 1), (0.5, float("inf"), 0, 0)],
        [(1, 1, 1, 0)],
    ]


def test_the_sessions_are_the_references(tmp_path):
    pyserq = pytest.importorskip("pyserq")
    text = "session,turn,new,out,think\n" + "".join(
        f"{s},{t},{(s * 7 + t) % 13},{t + 1},{s / 4}\n" for s in (3, 1, 2) for t in (0, 1, 2)
    )
    ours = _turns(_read(tmp_path, text))
    theirs = [
        [tuple(turn) for turn in session] for session in pyserq.read_trace(str(tmp_path / "t.csv"))
    ]
    assert ours == theirs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "session,turn,new,out,think\n0,0,1,2,3\n0,1,x,2,3\n",
            "trace `t.csv` line 3, column 5: `x` in column `new` is not a number",
        ),
        (
            "session,turn,new,out,think\n0,0,1,2,3\n0,1,1,2\n",
            "trace `t.csv` line 3, column 8: expected 5 columns, found 4",
        ),
        (
            "session,turn,new,out,think\n0,0,1,2,3,4,5\n",
            "trace `t.csv` line 2, column 11: expected 5 columns, found 7",
        ),
        (
            "session,turn,new,out\n0,0,1,2\n",
            "trace `t.csv`: the header must be session,turn,new,out,think[,forced]",
        ),
        ("", "trace `t.csv` is empty"),
        ("session,turn,new,out,think\n\n", "trace `t.csv` has no rows"),
    ],
)
def test_a_malformed_trace_names_the_file_line_and_column(tmp_path, text, message):
    with pytest.raises(SimError) as raised:
        _read(tmp_path, text)
    assert raised.value.message == message
    assert raised.value.origin == ORIGIN


def test_invalid_utf8_is_a_diagnostic(tmp_path):
    (tmp_path / "t.csv").write_bytes(b"session,turn,new,out,think\n0,0,1,2,\xff\n")
    with pytest.raises(SimError) as raised:
        read_trace(ir.Trace("t.csv", False, ORIGIN), str(tmp_path))
    assert raised.value.message == (
        "trace `t.csv` line 2, column 9: the text is not UTF-8 (byte 0xff)"
    )
