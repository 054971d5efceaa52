"""LineIndex and Span: offset <-> position round trips, line ends, UTF-16 columns, cover."""

import pytest

from serq.diagnostics import LineIndex, Span

TEXTS = [
    "",
    "abc",
    "a\nbc\n",
    "a\r\nbc\r\n\r\nd",
    "a\rb\r\rc",
    "mixed\n\r\n\rend",
    "caf\u00e9 = 1\n\U0001f600x\ty\n",
]


def _mid_crlf(text: str, offset: int) -> bool:
    return 0 < offset < len(text) and text[offset - 1] == "\r" and text[offset] == "\n"


@pytest.mark.parametrize("text", TEXTS)
def test_position_offset_round_trip(text: str) -> None:
    index = LineIndex(text)
    for offset in range(len(text) + 1):
        line, column = index.position(offset)
        if _mid_crlf(text, offset):  # inside a CRLF: maps back to the `\r`
            assert index.offset(line, column) == offset - 1
        else:
            assert index.offset(line, column) == offset


@pytest.mark.parametrize("text", TEXTS)
def test_line_text_matches_splitlines(text: str) -> None:
    index = LineIndex(text)
    lines = [index.line_text(n) for n in range(1, index.line_count + 1)]
    expected = text.splitlines()
    if text == "" or text.endswith(("\n", "\r")):
        expected.append("")  # a final line end opens an empty last line
    assert lines == expected


def test_crlf_positions() -> None:
    index = LineIndex("ab\r\ncd\r\n")
    assert index.line_count == 3
    assert index.position(0) == (1, 1)
    assert index.position(2) == (1, 3)  # the `\r`
    assert index.position(4) == (2, 1)
    assert index.position(8) == (3, 1)
    assert index.line_text(1) == "ab"
    assert index.line_text(2) == "cd"
    assert index.offset(2, 99) == 6  # clamped to the end of line 2, before its `\r\n`
    assert index.offset(9, 1) == 8  # past the last line: the end of the text


def test_lone_cr_ends_a_line() -> None:
    index = LineIndex("a\rb")
    assert index.position(2) == (2, 1)
    assert index.line_text(2) == "b"


def test_non_ascii_columns_count_code_points() -> None:
    text = "x = \u00e9\u00e9 + \U0001f600 + y"
    index = LineIndex(text)
    y = text.index("y")
    assert index.position(y) == (1, y + 1)
    assert y == 13


def test_utf16_columns() -> None:
    index = LineIndex("\u00e9\U0001f600a\n\U0001f600")
    assert [index.unit_column(1, c, "utf-16") for c in range(1, 5)] == [0, 1, 3, 4]
    assert index.unit_column(1, 99, "utf-16") == 4  # clamped to the end of the line
    assert index.unit_column(2, 2, "utf-16") == 2
    assert [index.column_from_units(1, u, "utf-16") for u in range(6)] == [1, 2, 2, 3, 4, 4]


def test_out_of_range_is_an_error() -> None:
    index = LineIndex("ab")
    with pytest.raises(ValueError):
        index.position(3)
    with pytest.raises(ValueError):
        index.position(-1)
    with pytest.raises(ValueError):
        index.line_text(2)
    with pytest.raises(ValueError):
        index.offset(0, 1)


def test_index_span_and_of_text() -> None:
    text = "ab\ncd\n"
    span = LineIndex(text).span("f.sq", 1, 4)
    assert span == Span("f.sq", 1, 4, 1, 2, 2, 2)
    assert Span.of_text("f.sq", text, 1, 4) == span
    with pytest.raises(ValueError):
        LineIndex(text).span("f.sq", 4, 1)


def test_point_is_empty() -> None:
    point = Span.point("f.sq", 5, 2, 3)
    assert point == Span("f.sq", 5, 5, 2, 3, 2, 3)
    assert point.is_empty


def test_cover() -> None:
    index = LineIndex("one two\nthree four\n")
    a = index.span("f.sq", 4, 7)  # `two`
    b = index.span("f.sq", 8, 13)  # `three`
    assert a.cover(b) == b.cover(a) == index.span("f.sq", 4, 13)
    inner = index.span("f.sq", 5, 6)
    assert a.cover(inner) == a
    assert a.cover(Span.point("f.sq", 0, 1, 1)) == index.span("f.sq", 0, 7)


def test_cover_other_file_is_an_error() -> None:
    with pytest.raises(ValueError):
        Span.point("a.sq", 0, 1, 1).cover(Span.point("b.sq", 0, 1, 1))


def test_bad_span_is_an_error() -> None:
    with pytest.raises(ValueError):
        Span("f.sq", 3, 2, 1, 4, 1, 3)
