"""`serq fmt` does what docs/cli.md says of it.

The page said "Every comment stays where it was"; a comment inside a statement or an
option (`fifo(/* one */ 1)`) goes to the end of the element's line, and `\\r\\n` line ends
come out as `\\n`. The page now says so; these keep it true.
"""

from __future__ import annotations

from pathlib import Path

from serq.formatter import format_source

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")


def test_a_comment_inside_an_element_goes_to_the_end_of_its_line():
    text = "let a = /* the rate */ 0.5;\nstage s : fifo(/* one */ 1);\n"
    out = format_source(text, "p.sq").text
    assert out.splitlines()[:2] == ["let a = 0.5; /* the rate */", "stage s : fifo(1); /* one */"]
    assert "`fifo(/* one */ 1)`) goes to the\nend of that element's line" in PAGE


def test_line_ends_come_out_as_newlines():
    out = format_source("let a = 1;\r\nlet b = 2;\r\n", "p.sq").text
    assert out == "let a = 1;\nlet b = 2;\n"
    assert "Line ends are written as `\\n`" in PAGE


def test_the_authors_parentheses_around_an_operand_are_kept_once():
    # the page said "The author's parentheses are kept": those around a whole value or
    # argument, and a second pair, never were
    cases = {
        "1 + ((2 * 3))": "1 + (2 * 3)",
        "(1 + 2)": "1 + 2",
        "min((1), 2)": "min(1, 2)",
        "1 * (2 + 3 /* c */)": "1 * (2 + 3)",
    }
    for written, kept in cases.items():
        out = format_source(f"let b = {written};\n", "p.sq").text
        assert out.split(";")[0] == f"let b = {kept}", out
    page = " ".join(PAGE.split())
    assert (
        "around an operand are kept, one pair of them (`1 + ((2 * 3))` becomes `1 + (2 * 3)`)"
        in page
    )
    assert "(`let b = (1 + 2);` becomes `let b = 1 + 2;`)" in page
