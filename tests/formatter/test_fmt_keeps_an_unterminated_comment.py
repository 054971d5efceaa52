"""A file that ends inside an unterminated block comment (or a string on its last line)
keeps that comment's text as written: `serq fmt` and the editor's formatting used to add a
line break inside it and drop its trailing spaces, changing what a broken file says (round
28, NOTES §64). The items before it are formatted as ever; a second format changes nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from serq.formatter import format_source

CASES = {
    "a comment alone": ("let   a = 1;\n/* open", "let a = 1;\n/* open"),
    "its trailing spaces": ("let a = 1;\n/* open  ", "let a = 1;\n/* open  "),
    "over lines": ("let a = 1;\n/* a  \n   b  \n\n\n", "let a = 1;\n\n/* a  \n   b  \n\n\n"),
    "in an item": ("pool p { cap /* x  ", "pool p { cap /* x  "),
    "`/*/`": ("let a = 1;\n/*/", "let a = 1;\n/*/"),
    "in fn main": (
        "fn main() {\n  let a = 1;\n  /* open ",
        "fn main() {\n  let a = 1;\n  /* open ",
    ),
    "a string": ('pool p { cap "x  ', 'pool p { cap "x  \n'),
    "a string, lines after": ('let a = 1;\n"x  \n\n', 'let a = 1;\n"x  \n'),
}


@pytest.mark.parametrize(("text", "expected"), CASES.values(), ids=CASES.keys())
def test_the_open_comment_is_kept_to_its_last_character(text, expected):
    formatted = format_source(text)
    assert formatted.diagnostics  # a broken file
    assert formatted.text == expected
    assert format_source(formatted.text).text == formatted.text
    # a range that touches the last item (the editor's range formatting) keeps it too
    tail = expected[max(expected.rfind("/*"), expected.rfind('"')) :]
    assert format_source(text, only=(len(text) - 1, len(text))).text.endswith(tail)


def test_closed_comments_and_line_comments_end_with_a_line_break_as_before():
    assert format_source("let a = 1;\n/* closed */  ").text == "let a = 1;\n/* closed */\n"
    assert format_source("let a = 1;\n// line  ").text == "let a = 1;\n// line\n"
    assert format_source("let a = 1;\n/* a /* b */").text == "let a = 1;\n/* a /* b */\n"


def test_serq_fmt_of_stdin_writes_it_back_as_written():
    text = "let a = 1;\n/* open  "
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "fmt", "-"], input=text, capture_output=True, text=True
    )
    assert done.stdout == text
    assert "unterminated comment" in done.stderr
