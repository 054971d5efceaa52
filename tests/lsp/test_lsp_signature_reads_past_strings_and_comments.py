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
