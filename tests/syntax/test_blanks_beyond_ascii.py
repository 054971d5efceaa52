"""Blanks beyond ASCII (§68). The spec has no lexical rules; the reference reads Unicode's
White_Space as blank (Rust's `is_whitespace`): a no-break space pasted from a web page,
an em space, the ideographic space of a CJK input method, a vertical tab. serq refused
each as "unexpected character U+00A0". They are blanks now, within a line: U+2028 and
U+0085 end no line (the reference's positions, and an editor's, count lines at `\\n`,
`\\r\\n` and `\\r` only). U+200B, U+180E, U+001C and a U+FEFF inside a file are no blanks,
as in the reference, and are named with their position."""

from __future__ import annotations

import pytest

from serq import api
from serq.formatter import format_source

PROGRAM = """\
stage s : delay;
workload { arrive batch(1); }
session { run s (1); end; }
run { horizon 1; }
let{b}a = 1;
let b = 2 +{b}x;
"""
BLANKS = ["\x0b", "\x85", "\xa0", "\u1680", "\u2003", "\u2028", "\u2029", "\u202f", "\u3000"]


@pytest.mark.parametrize("blank", BLANKS, ids=lambda b: f"U+{ord(b):04X}")
def test_a_unicode_blank_is_a_blank(blank: str) -> None:
    (d,) = api.check_source(PROGRAM.replace("{b}", blank), "p.sq")
    # the reference: "6:13: link error: `x` is not a constant"; the line after U+2028 is 6
    assert (d.code, d.span.line, d.span.column) == ("E-unknown-name", 6, 13)


@pytest.mark.parametrize("blank", ["\xa0", "\u3000", "\u2028"], ids=["U+00A0", "U+3000", "U+2028"])
def test_fmt_writes_a_space_between_tokens(blank: str) -> None:
    source = PROGRAM.replace("{b}", blank).replace("x;", "a;")
    assert api.check_source(source, "p.sq") == []
    once = format_source(source, "p.sq").text
    assert "let a = 1;" in once and "let b = 2 + a;" in once
    assert format_source(once, "p.sq").text == once


@pytest.mark.parametrize(
    ("char", "name"),
    [("\u200b", "U+200B"), ("\ufeff", "U+FEFF"), ("\u180e", "U+180E"), ("\x1c", "U+001C")],
)
def test_what_is_no_blank_is_named_at_its_position(char: str, name: str) -> None:
    (d,) = api.check_source(PROGRAM.replace("{b}", char, 1).replace("{b}", " "), "p.sq")
    assert (d.code, d.span.line, d.span.column) == ("E-parse", 5, 4)
    assert d.message.startswith(f"unexpected character {name}")
