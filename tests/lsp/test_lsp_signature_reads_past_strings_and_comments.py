"""Signature help finds the open call and the argument at the cursor by reading the text
back from the cursor; it counted the commas and brackets of strings and comments too.
`args.number("a,b", |` was the third argument of two, `f(1, /* , */ |` the third, and
a `)` or `;` in a comment hid the call altogether."""

from __future__ import annotations

import pytest

from serq_lsp.analysis import analyze
from serq_lsp.signature import help_at

DEFS = 'use "std/args";\ndef f(a, b, c) = a + b + c;\n'


@pytest.mark.parametrize(
    ("written", "label", "active"),
    [
        ('let r = args.number("a,b", |', 'args.number("name", default)', 1),
        ('let r = args.number("(", |', 'args.number("name", default)', 1),
        ("let q = f(1, /* , */ |", "def f(a, b, c)", 1),
        ("let q = f(1, /* ) */ |", "def f(a, b, c)", 1),
        ("let q = f(1, /* ; */ |", "def f(a, b, c)", 1),
        ("let q = f(1, // ,\n  |", "def f(a, b, c)", 1),
        ("let q = f(1, // (\n 2, |", "def f(a, b, c)", 2),
        ('let q = f(1, /* " */ |', "def f(a, b, c)", 1),
        ("let q = f(min(1, 2), |", "def f(a, b, c)", 1),  # as before
    ],
)
def test_the_argument_at_the_cursor(written, label, active):
    text = DEFS + written.replace("|", "")
    found = help_at(analyze(text, "/nowhere/s.sq"), len(DEFS) + written.index("|"))
    assert found is not None, written
    (signature,) = found.signatures
    assert signature.label == label
    assert (found.active_parameter, signature.active_parameter) == (active, active)


def test_no_call_is_open_inside_a_string_or_comment_alone():
    for written in ('let r = "f(|', "let r = 1; /* f(|"):
        text = DEFS + written.replace("|", "")
        assert help_at(analyze(text, "/nowhere/s.sq"), len(DEFS) + written.index("|")) is None


def test_the_text_is_read_from_the_cursor_s_item_only():
    """A signature request or a hover read every comment and string from the start of the
    file to the cursor: 18 ms at the end of a 2 MB document, at every keystroke of a call.
    They read from the start of the cursor's item (`Analysis.item_start`), which no
    comment or string spans; what lies before it cannot change the answer."""
    from serq_lsp.signature import open_call

    text = DEFS + "let a = 1;\nlet q = f(1, "
    analysis = analyze(text, "items.sq")
    start = analysis.item_start(len(text))
    assert start == text.index("let q")
    assert analysis.item_start(0) == 0
    # an unclosed comment before the item, which a scan from the file's start would
    # read as running over the cursor, is not read
    unread = "/* " + text[3:]
    assert open_call(unread, len(unread), 0) is None
    assert open_call(unread, len(unread), start) == ("f", "call", 1)
