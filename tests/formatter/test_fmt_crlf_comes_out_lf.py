"""`serq fmt` ends every line of a formatted file with `\\n`, also in what it copies as
written: an item with a syntax error over several lines, a block comment over several
lines. Before, a CRLF file came out with both line ends mixed (round 21, NOTES §49).
Range formatting leaves the items it does not format as written but for their line ends."""

from __future__ import annotations

import pytest

from serq.formatter import format_source

CASES = {
    "an item with an error": "let a = 1;\r\nsession {\r\n  set x = ;\r\n  run s (1);\r\n}\r\n"
    "let   c = 2;\r\n",
    "a block comment": "let a = 1;\r\n/* two\r\n   lines */\r\nlet   c = 2;\r\n",
    "both, and a lone CR": "/* a\r\nb */\rlet a = 1;\r\nsession {\r\n  set x = ;\r\n}\r\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_the_formatted_file_has_one_line_end(text):
    out = format_source(text).text
    assert "\r" not in out
    assert out.replace("\n", "") .replace(" ", "") == text.replace("\r", "").replace(
        "\n", ""
    ).replace(" ", "")  # the same text, comments and the broken item included
    assert format_source(out).text == out  # and formatting it again changes nothing


def test_a_range_leaves_the_items_it_does_not_format_as_written_but_for_line_ends():
    text = "let   a = 1;\r\n/* two\r\n   lines */\r\nlet   c = 2;\r\n"
    start = text.index("let   c")
    out = format_source(text, only=(start, start + 3)).text
    assert out == "let   a = 1;\n/* two\n   lines */\nlet c = 2;\n"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("let a = 1;\r\nstage s : fifo(a);\r\n", r"its \r\n line ends become \n"),
        ("let a = 1;\rstage s : fifo(a);\r\n", r"its \r\n and \r line ends become \n"),
        ("let a = 1;\rstage s : fifo(a);\r", r"its \r line ends become \n"),
    ],
)
def test_check_says_when_the_line_ends_change(tmp_path, capsys, text, said):
    """`fmt --check` of a file whose only change is its line ends printed a diff whose
    lines look the same (its `\\r` shows as nothing); it says so on stderr now."""
    from serq.formatter.command import EXIT_CHANGED, fmt

    path = tmp_path / "p.sq"
    path.write_bytes(text.encode())
    assert fmt([str(path)], check=True) == EXIT_CHANGED
    captured = capsys.readouterr()
    assert f"serq fmt: {path}: {said}" in captured.err
    assert captured.out.startswith(f"--- {path}")
    path.write_bytes(text.replace("\r\n", "\n").replace("\r", "\n").encode())
    assert fmt([str(path)], check=True) == 0
    assert capsys.readouterr().err == ""
