"""Reading a trace (serq/sim/trace.py): in blocks into flat columns, by a vectorised
parser (numpy), bulk float columns or row by row, with the same sessions whichever path
reads a block and wherever the blocks end, and a malformed row an `E-run` naming the
file, line and column.

The oracle is the row-by-row csv reader this one replaced (commit bf4d017), copied here
as `_old_read`: on every text it accepted, the new reader gives the same sessions and
turns, and on every text it rejected the same message. Where they differ on purpose (a
byte-order mark is accepted, invalid UTF-8 and NUL are diagnostics at their position
where the old one gave a block offset or a traceback) the tests say so."""

from __future__ import annotations

import csv
import json
import math
import random
import re
import tracemalloc
from array import array
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import serq
from serq import ir
from serq.diagnostics import Span
from serq.report.codec import to_dict
from serq.sim import trace as trace_module
from serq.sim import workload as workload_module
from serq.sim.errors import SimError
from serq.sim.trace import TraceTable, read_trace

ORIGIN = Span("t.sq", 0, 5, 1, 1, 1, 6)
ROOT = Path(__file__).resolve().parents[2]
HAS_NUMPY = trace_module._numpy() is not None
MODES = [False, True] if HAS_NUMPY else [False]  # accelerate: pure Python, then numpy


# ---------------------------------------------------------------------- the oracle


def _old_read(path: Path, name: str) -> list[list[tuple[float, ...]]]:
    """The old reader (bf4d017), as lists of (new, out, think, forced) per session."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            raise SimError(ORIGIN, f"trace `{name}` is empty")
        header = [c.strip() for c in header]
        need = ["session", "turn", "new", "out", "think"]
        if header[:5] != need or len(header) > 6 or (len(header) == 6 and header[5] != "forced"):
            raise SimError(
                ORIGIN, f"trace `{name}`: the header must be session,turn,new,out,think[,forced]"
            )
        width = len(header)
        sessions: dict[str, array] = {}
        for row in reader:
            if len(row) != width:
                if not row or all(not c.strip() for c in row):
                    continue
                raise SimError(
                    ORIGIN,
                    f"trace `{name}` line {reader.line_num}, column "
                    f"{_old_column(row, min(len(row), width))}: "
                    f"expected {width} columns, found {len(row)}",
                )
            turns = sessions.setdefault(row[0].strip(), array("d"))
            try:
                turns.extend(map(float, row[1:]))
            except ValueError:
                bad = next(i for i in range(1, width) if not _is_number(row[i]))
                raise SimError(
                    ORIGIN,
                    f"trace `{name}` line {reader.line_num}, column {_old_column(row, bad)}: "
                    f"`{row[bad].strip()}` in column `{header[bad]}` is not a number",
                ) from None
    if not sessions:
        raise SimError(ORIGIN, f"trace `{name}` has no rows")
    stride = width - 1
    out = []
    for turns in sessions.values():
        keys = turns[0::stride]
        n = len(keys)
        order = range(n) if list(keys) == sorted(keys) else sorted(range(n), key=keys.__getitem__)
        rows = [tuple(turns[i * stride + 1 : (i + 1) * stride]) for i in order]
        out.append([r if len(r) == 4 else (*r, 0.0) for r in rows])
    return out


def _old_column(row: list[str], index: int) -> int:
    if index >= len(row):
        return len(",".join(row)) + 1
    return 1 + sum(len(c) + 1 for c in row[:index])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------- helpers


@contextmanager
def _block(size: int):
    """Read in blocks of `size` bytes (so block boundaries fall inside small files)."""
    saved = trace_module.BLOCK
    trace_module.BLOCK = size
    try:
        yield
    finally:
        trace_module.BLOCK = saved


def _turns(table: TraceTable) -> list[list[tuple[float, ...]]]:
    return [table.turns(i) for i in range(len(table))]


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "t.csv"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


def _new(tmp_path: Path, accelerate: bool = True, block: int | None = None):
    with _block(block or trace_module.BLOCK):
        return read_trace(ir.Trace("t.csv", False, ORIGIN), str(tmp_path), accelerate)


def _outcome(fn):
    """("ok", the sessions' repr: it keeps nan, inf and the sign of zero apart) or
    ("error", the message)."""
    try:
        return ("ok", repr(fn()))
    except SimError as e:
        assert e.origin == ORIGIN
        return ("error", e.message)


def _all_ways(tmp_path: Path, blocks=(None, 5, 64)) -> set:
    """The outcomes of every reading path and block size: one, if they agree."""
    return {_outcome(lambda a=a, b=b: _turns(_new(tmp_path, a, b))) for a in MODES for b in blocks}


def _error(tmp_path: Path, text: str | bytes) -> str:
    _write(tmp_path, text)
    outcomes = _all_ways(tmp_path)
    assert len(outcomes) == 1, outcomes
    (kind, message), *_ = outcomes
    assert kind == "error", message
    return message


# ---------------------------------------------------------------------- against the oracle

FIELDS = ["0", "1", "7", "-2", "0.5", ".5", "5.", "-0", "-0.0", "1e3", "inf", "-inf", "nan"]
FIELDS += ["Infinity", "1_0", " 7", "+3", "123456789012345", "1234567890123456", "0.000001"]
FIELDS += ["x", "", "1.2.3", "-", '"4"', '"1,5"', "99999999999999999999"]
KEYS = ["0", "1", "12", "01", "-1", "1.0", " 2", "2 ", "a", "b c", "", '"3"', "١"]
TURNS = ["0", "1", "2", "3", "-1", "1.5", "nan", "inf", "-0", "3e0", "10", "x"]


@st.composite
def _trace_texts(draw) -> str:
    width = draw(st.sampled_from([5, 6]))
    names = ["session", "turn", "new", "out", "think", "forced"][:width]
    if draw(st.booleans()):
        names = [f" {n} " for n in names]
    rows = [",".join(names)]
    for _ in range(draw(st.integers(0, 30))):
        kind = draw(st.integers(0, 40))
        if kind == 0:
            rows.append(draw(st.sampled_from(["", "  ", ",,", ",,,,", ",,,,,"])))
            continue
        n = width if kind > 2 else draw(st.sampled_from([width - 1, width + 1, 1]))
        key = draw(st.sampled_from(KEYS))
        turn = draw(st.sampled_from(TURNS))
        plain = kind > 8  # most rows: plain numbers the vectorised parser takes
        pool = FIELDS[:7] if plain else FIELDS
        if plain:
            key, turn = draw(st.sampled_from(KEYS[:3])), draw(st.sampled_from(TURNS[:5]))
        fields = [key, turn] + [draw(st.sampled_from(pool)) for _ in range(max(n - 2, 0))]
        rows.append(",".join(fields[:n]))
    end = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = end.join(rows)
    if draw(st.booleans()):
        text += end
    return text


@settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=_trace_texts())
def test_every_path_and_block_size_reads_as_the_old_reader(tmp_path, text):
    # the old reader's column counted the fields after csv took their quotes off: where
    # a row has quotes, the new reader's column is the text's and only the rest compares
    path = _write(tmp_path, text)
    expected = _outcome(lambda: _old_read(path, "t.csv"))
    got = _all_ways(tmp_path, blocks=(None, 3, 17))
    if '"' in text:
        expected, got = _no_column(expected), {_no_column(o) for o in got}
    assert got == {expected}


def _no_column(outcome):
    return outcome[0], re.sub(r", column \d+", "", outcome[1])


def test_the_old_readers_sessions_on_the_repository_traces(tmp_path):
    for csv_path in [
        ROOT / "examples/traces/chat.csv",
        ROOT / "tests/corpus/valid/turns.csv",
        ROOT / "tests/corpus/valid/turns_forced.csv",
    ]:
        _write(tmp_path, csv_path.read_bytes())
        expected = _outcome(lambda p=csv_path: _old_read(p, "t.csv"))
        assert expected[0] == "ok"
        assert _all_ways(tmp_path) == {expected}


def _old_table(trace: ir.Trace, base_dir: str) -> TraceTable:
    """The old reader's sessions as a table, to run a program on them."""
    sessions = _old_read(Path(base_dir) / trace.path, trace.path)
    columns = tuple(array("d", [t[c] for s in sessions for t in s]) for c in range(4))
    starts = array("q", [0])
    for s in sessions:
        starts.append(starts[-1] + len(s))
    return TraceTable(columns, starts)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "program",
    [
        "examples/vllm_replay.sq",
        "tests/sim/programs/det_trace.sq",
        "tests/corpus/valid/workload_trace.sq",
        "tests/corpus/valid/workload_trace_ordered.sq",
        "tests/corpus/valid_main/arrivals_trace.sq",
    ],
)
def test_runs_are_those_on_the_old_readers_sessions(program, monkeypatch):
    path = str(ROOT / program)
    ours = json.dumps(to_dict(serq.run(serq.compile(path, horizon=400))), sort_keys=True)
    monkeypatch.setattr(workload_module, "read_trace", _old_table)
    theirs = json.dumps(to_dict(serq.run(serq.compile(path, horizon=400))), sort_keys=True)
    assert ours == theirs


# ---------------------------------------------------------------------- the reference


def test_the_sessions_are_the_references(tmp_path):
    pyserq = pytest.importorskip("pyserq")
    text = "session,turn,new,out,think\n" + "".join(
        f"{s},{t},{(s * 7 + t) % 13 - 3},{t + 0.25},{s / 4}\n" for s in (3, 1, 2) for t in (0, 1, 2)
    )
    path = _write(tmp_path, text)
    theirs = [[tuple(turn) for turn in session] for session in pyserq.read_trace(str(path))]
    for accelerate in MODES:
        assert _turns(_new(tmp_path, accelerate)) == theirs


# ---------------------------------------------------------------------- sessions and turns


def test_sessions_in_first_seen_order_turns_in_turn_order(tmp_path):
    text = (
        "session,turn,new,out,think,forced\n"
        "a,1,5,6,7,1\n"
        "b,0,1,1,1,0\n"
        "a,0,1,2,3,0\n"
        "\n"
        "a,2,0.5,inf,0,0\n"
    )
    _write(tmp_path, text)
    assert _all_ways(tmp_path) == {
        ("ok", repr([[(1.0, 2.0, 3.0, 0.0), (5.0, 6.0, 7.0, 1.0), (0.5, math.inf, 0.0, 0.0)],
                     [(1.0, 1.0, 1.0, 0.0)]]))
    }  # fmt: skip


def test_ids_compare_as_text_and_ties_keep_the_files_order(tmp_path):
    # 1, 01 and " 1" are one id only where their text (stripped) is one; rows of one
    # turn keep their order; a session split by other sessions is gathered
    text = (
        "session,turn,new,out,think\n"
        "1,1,10,0,0\n01,0,20,0,0\n 1 ,0,30,0,0\n2,5,40,0,0\n1,1,50,0,0\n01,-1,60,0,0\n"
    )
    _write(tmp_path, text)
    (kind, got), *_ = _all_ways(tmp_path)
    assert kind == "ok"
    assert got == repr(
        [
            [(30.0, 0.0, 0.0, 0.0), (10.0, 0.0, 0.0, 0.0), (50.0, 0.0, 0.0, 0.0)],
            [(60.0, 0.0, 0.0, 0.0), (20.0, 0.0, 0.0, 0.0)],
            [(40.0, 0.0, 0.0, 0.0)],
        ]
    )


@pytest.mark.parametrize(
    "field",
    ["0", "-0", "-0.0", "0.1", "-2.5", ".5", "5.", "007", "1e-3", "-1E+2", "inf", "-inf",
     "Infinity", "nan", "123456789012345", "0.00000000000001", "1234567890123456",
     "9007199254740993", "1e400", "-1e-400", " 3.25 ", "1_000", "+4"],
)  # fmt: skip
def test_each_number_is_pythons_float_of_its_text(tmp_path, field):
    _write(tmp_path, f"session,turn,new,out,think,forced\n0,0,{field},{field},{field},{field}\n")
    want = float(field)
    for accelerate in MODES:
        (turn,) = _new(tmp_path, accelerate).turns(0)
        assert [repr(x) for x in turn] == [repr(want)] * 4


def test_the_vectorised_parser_gives_pythons_floats_bit_for_bit(tmp_path):
    # decimals of up to 15 digits in every position of the point, signs, leading zeros
    rng = random.Random(17)
    lines = ["session,turn,new,out,think,forced"]
    texts = []
    for i in range(20_000):
        fields = []
        for _ in range(4):
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 15)))
            point = rng.randint(0, len(digits))
            text = digits[:point] + ("." if rng.random() < 0.7 else "") + digits[point:]
            if text == ".":
                text = "0"
            fields.append(("-" if rng.random() < 0.3 else "") + text)
        texts.append(fields)
        lines.append(f"{i // 7},{i % 7}," + ",".join(fields))
    _write(tmp_path, "\n".join(lines) + "\n")
    want = array("d", [float(t) for fields in texts for t in fields])
    for accelerate in MODES:
        table = _new(tmp_path, accelerate)
        got = array("d", [x for i in range(len(table)) for turn in table.turns(i) for x in turn])
        assert got.tobytes() == want.tobytes()


def test_a_file_without_forced_has_forced_0(tmp_path):
    _write(tmp_path, "session,turn,new,out,think\n0,0,1,2,3\n")
    for accelerate in MODES:
        table = _new(tmp_path, accelerate)
        assert table.columns[3] is None
        assert table.turns(0) == [(1.0, 2.0, 3.0, 0.0)]


# ---------------------------------------------------------------------- text shapes

ROWS = [[(1.0, 2.0, 3.0, 0.0), (4.0, 5.0, 6.5, 0.0)], [(-1.0, 0.5, math.inf, 0.0)]]


@pytest.mark.parametrize(
    "text",
    [
        "session,turn,new,out,think\n0,0,1,2,3\n0,1,4,5,6.5\n1,0,-1,.5,inf\n",
        "session,turn,new,out,think\n0,0,1,2,3\n0,1,4,5,6.5\n1,0,-1,.5,inf",
        "session,turn,new,out,think\r\n0,0,1,2,3\r\n0,1,4,5,6.5\r\n1,0,-1,.5,inf\r\n",
        "session,turn,new,out,think\r\n0,0,1,2,3\r\n0,1,4,5,6.5\r\n1,0,-1,.5,inf",
        "session,turn,new,out,think\r0,0,1,2,3\r0,1,4,5,6.5\r1,0,-1,.5,inf\r",
        "\ufeffsession,turn,new,out,think\n0,0,1,2,3\n0,1,4,5,6.5\n1,0,-1,.5,inf\n",
        "\ufeffsession,turn,new,out,think\r\n0,0,1,2,3\r\n0,1,4,5,6.5\r\n1,0,-1,.5,inf",
        "session,turn,new,out,think\n\n0,0,1,2,3\n  \n0,1,4,5,6.5\n1,0,-1,.5,inf\n\n\n",
        'session,turn,new,out,think\n"0",0,1,2,3\n0,"1",4,5,6.5\n1,0,-1,".5",inf\n',
    ],
    ids=["lf", "lf-no-end", "crlf", "crlf-no-end", "cr", "bom", "bom-crlf", "blank", "quoted"],
)
def test_line_ends_bom_blank_lines_and_quotes(tmp_path, text):
    _write(tmp_path, text)
    assert _all_ways(tmp_path, blocks=(None, 1, 2, 7)) == {("ok", repr(ROWS))}


def test_a_quoted_field_may_span_lines_and_blocks(tmp_path):
    text = 'session,turn,new,out,think\n"a\nb",0,1,2,3\n"a\nb",1,4,5,6\n9,0,"7",8,9\n9,1,x,8,9\n'
    assert (
        _error(tmp_path, text)
        == "trace `t.csv` line 7, column 5: `x` in column `new` is not a number"
    )
    _write(tmp_path, text.replace("x", "0"))
    outcomes = _all_ways(tmp_path, blocks=(None, 1, 3, 10))
    assert outcomes == {("ok", repr([[(1.0, 2.0, 3.0, 0.0), (4.0, 5.0, 6.0, 0.0)],
                                     [(7.0, 8.0, 9.0, 0.0), (0.0, 8.0, 9.0, 0.0)]]))}  # fmt: skip


# ---------------------------------------------------------------------- malformed rows

HEAD = "session,turn,new,out,think,forced\n"
GOOD = "0,0,1,2,3,0\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEAD + GOOD + "0,1,1,2,3\n", "line 3, column 10: expected 6 columns, found 5"),
        (HEAD + GOOD + "0,1,1,2,3,0,9\n", "line 3, column 13: expected 6 columns, found 7"),
        (HEAD + GOOD + "0\n", "line 3, column 2: expected 6 columns, found 1"),
        (HEAD + GOOD + "0,,,,,,\n", "line 3, column 8: expected 6 columns, found 7"),
        (HEAD + GOOD + '"0","1",1,"2""",3,0\n', "line 3, column 11: `2\"` in column `out` is not a number"),
        (HEAD + GOOD + '0,1,"1\n2",2,3\n', "line 4, column 7: expected 6 columns, found 5"),
        (HEAD + GOOD + '0,1,2,"\n\nx",3,0\n', "line 3, column 7: `x` in column `out` is not a number"),
        (HEAD + GOOD + "0,x,1,2,3,0\n", "line 3, column 3: `x` in column `turn` is not a number"),
        (HEAD + GOOD + "0,1,-,2,3,0\n", "line 3, column 5: `-` in column `new` is not a number"),
        (HEAD + GOOD + "0,1,1,2..,3,0\n", "line 3, column 7: `2..` in column `out` is not a number"),
        (HEAD + GOOD + "0,1,1,2,1e,0\n", "line 3, column 9: `1e` in column `think` is not a number"),
        (HEAD + GOOD + "0,1,1,2,3,yes\n", "line 3, column 11: `yes` in column `forced` is not a number"),
        (HEAD + GOOD + "0,1,,2,3,0\n", "line 3, column 5: `` in column `new` is not a number"),
        (HEAD + GOOD + ",,,,,\n", "line 3, column 2: `` in column `turn` is not a number"),
        (HEAD + GOOD + "0,1,0x10,2,3,0\n", "line 3, column 5: `0x10` in column `new` is not a number"),
        (HEAD + GOOD + "0,1,1 2,2,3,0\n", "line 3, column 5: `1 2` in column `new` is not a number"),
        (HEAD + "\n\n" + GOOD + "\n0,1,1,2,3\n", "line 6, column 10: expected 6 columns, found 5"),
        (HEAD.replace("\n", "\r\n") + GOOD.replace("\n", "\r\n") + "0,1,x,2,3,0\r\n",
         "line 3, column 5: `x` in column `new` is not a number"),
        (HEAD.replace("\n", "\r") + GOOD.replace("\n", "\r") + "0,1,x,2,3,0",
         "line 3, column 5: `x` in column `new` is not a number"),
        ("\ufeff" + HEAD + GOOD + "0,1,x,2,3,0\n", "line 3, column 5: `x` in column `new` is not a number"),
        (HEAD + 'é,0,1,2,3,0\n"q",1,x,2,3,0\n', "line 3, column 7: `x` in column `new` is not a number"),
        (HEAD + "0,1,1,2,3\x00,0\n", "line 2, column 9: `3\x00` in column `think` is not a number"),
    ],
)  # fmt: skip
def test_a_malformed_row_names_the_file_line_and_column(tmp_path, text, message):
    assert _error(tmp_path, text) == f"trace `t.csv` {message}"


def test_an_error_deep_in_a_large_file_has_its_line(tmp_path):
    rows = "".join(
        f"{i // 10},{i % 10},{i % 4000},{i % 800},{i % 30}.125,0\n" for i in range(99_998)
    )
    text = HEAD + rows + "9999,0,1,2,3,0\n" + "9999,1,1,2,3,-0x\n" + rows
    assert _error(tmp_path, text) == (
        "trace `t.csv` line 100001, column 14: `-0x` in column `forced` is not a number"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "trace `t.csv` is empty"),
        ("\ufeff", "trace `t.csv` is empty"),
        ("session,turn,new,out,think", "trace `t.csv` has no rows"),
        ("session,turn,new,out,think\n\n  \n\r\n", "trace `t.csv` has no rows"),
        ("session,turn,new,out\n0,0,1,2\n", "header"),
        ("session,turn,new,out,think,forced,x\n0,0,1,2,3,0,0\n", "header"),
        ("session,turn,new,out,think,other\n0,0,1,2,3,0\n", "header"),
        ("turn,session,new,out,think\n0,0,1,2,3\n", "header"),
        ("\n0,0,1,2,3\n", "header"),
    ],
)
def test_an_empty_or_headless_trace(tmp_path, text, message):
    if message == "header":
        message = "trace `t.csv`: the header must be session,turn,new,out,think[,forced]"
    assert _error(tmp_path, text) == message


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"session,turn,new,out,think\n0,0,1,2,\xff\n", "line 2, column 9: the text is not UTF-8 (byte 0xff)"),
        (b"session,turn,new,out,think\n0,0,1,2,3\n\xc3\xa9,0,\xe2\x82,2,3\n",
         "line 3, column 5: the text is not UTF-8 (byte 0xe2)"),
        (b"session,turn,new,out,think\r\n0,0,1,2,3\r\n1,0,1,2,3\r\n\x80",
         "line 4, column 1: the text is not UTF-8 (byte 0x80)"),
        (b"session,tu\xffrn,new,out,think\n", "line 1, column 11: the text is not UTF-8 (byte 0xff)"),
        (b'session,turn,new,out,think\n"a",0,1,2,3\n0,0,\xff,2,3\n',
         "line 3, column 5: the text is not UTF-8 (byte 0xff)"),
    ],
)  # fmt: skip
def test_invalid_utf8_is_a_diagnostic_at_its_line_and_column(tmp_path, data, message):
    assert _error(tmp_path, data) == f"trace `t.csv` {message}"


def test_a_missing_file_is_an_error(tmp_path):
    with pytest.raises(SimError) as raised:
        read_trace(ir.Trace("gone.csv", False, ORIGIN), str(tmp_path))
    assert raised.value.message.startswith("cannot read trace `gone.csv`: ")


# ---------------------------------------------------------------------- memory


def _extra_memory(tmp_path: Path, rows: int, accelerate: bool, row) -> int:
    """Peak traced memory while reading, less what the result keeps."""
    _write(tmp_path, HEAD + "".join(row(i) for i in range(rows)))
    tracemalloc.start()
    try:
        table = read_trace(ir.Trace("t.csv", False, ORIGIN), str(tmp_path), accelerate)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    kept = sum(c.buffer_info()[1] * c.itemsize for c in table.columns if c is not None)
    return peak - kept - table.starts.buffer_info()[1] * 8


def _contiguous(i: int) -> str:
    return f"{i // 4000},{i % 4000},{i % 4000},{i % 800},{i % 30}.5,0\n"


def _interleaved(i: int) -> str:
    return f"{i % 100},{i // 100},{i % 4000},{i % 800},{i % 30}.5,0\n"


@pytest.mark.parametrize("accelerate", MODES)
@pytest.mark.parametrize(("row", "per_turn"), [(_contiguous, 12), (_interleaved, 64)])
def test_the_memory_beyond_the_turns_kept_does_not_grow_with_the_files_text(
    tmp_path, accelerate, row, per_turn
):
    # 100 sessions, 1,000 then 4,000 turns each: the file grows fourfold (2.5 to 10 MB);
    # what the reading needs beyond the turns it keeps (32 bytes each) is the block's
    # work and, per turn, its `turn` (at most 8 bytes) and the columns' spare capacity
    # as they grow (a few bytes); where sessions interleave, the
    # session of each run of rows and the sort by session too: never the file's text
    small = _extra_memory(tmp_path, 100_000, accelerate, row)
    large = _extra_memory(tmp_path, 400_000, accelerate, row)
    assert large < small + 300_000 * per_turn


def test_numpy_is_imported_only_for_a_large_trace(tmp_path):
    """A run with a small trace reads it without importing numpy (the import costs more
    than the reading); a trace of `ACCELERATE_FROM` bytes or more is read with it."""
    import subprocess
    import sys

    probe = (
        "import sys, serq\n"
        "from serq.sim import trace\n"
        "trace.ACCELERATE_FROM = int(sys.argv[2])\n"
        "serq.run(serq.compile(sys.argv[1], horizon=50, warmup=0))\n"
        "print('numpy' in sys.modules)\n"
    )
    example = str(ROOT / "examples" / "vllm_replay.sq")
    size = (ROOT / "examples" / "traces" / "chat.csv").stat().st_size

    def imported(threshold: int) -> str:
        done = subprocess.run(
            [sys.executable, "-c", probe, example, str(threshold)],
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert imported(size + 1) == "False"
    if HAS_NUMPY:
        assert imported(size) == "True"
