"""The author's parentheses are kept (docs/cli.md, `serq fmt`), a comment inside them too.

`1 + (2 * 3 /* a */)` came out `1 + 2 * 3`, and `a ? b : (c ? d : e /* x */)` lost its
parentheses the same way: the formatter looked for the `(` and `)` around an operand
across white space only, so a comment between them made the parentheses the printer's
to drop. Found by formatting the repository's programs with comments after their tokens
(tests/sim/programs/step_mixed39.sq).
"""

from __future__ import annotations

import re

import pytest

from serq.formatter import format_source
from serq.formatter.comments import comments

BASE = (
    "stage s : fifo(1);\nworkload { arrive poisson(1); }\n"
    "session {\n  run s (%s);\n}\nrun { horizon 10; }\n"
)


def _code(text: str) -> str:
    """`text` without its comments and white space."""
    out, last = [], 0
    for c in comments(text):
        out.append(text[last : c.start])
        last = c.end
    return re.sub(r"\s", "", "".join(out) + text[last:])


@pytest.mark.parametrize(
    ("expr", "kept"),
    [
        ("1 + (2 * 3 /* a */)", "(1 + (2 * 3));"),
        ("1 + (2 * 3 /* a\nb */)", "(1 + (2 * 3));"),
        ("1 + (/* a */ 2 * 3)", "(1 + (2 * 3));"),
        ("1 + (2 * 3 // a\n)", "(1 + (2 * 3));"),
        ("1 + ( // a   \n 2 * 3)", "(1 + (2 * 3));"),  # blanks after a `//` comment
        ("1 + (/*x*/ /*y*/ 2 * 3 /*z*/ // w\n)", "(1 + (2 * 3));"),
        ("1 ? 2 : (3 ? 4 : 5 /* a\nb */)", "(1 ? 2 : (3 ? 4 : 5));"),
        ("1 + (2 * /* a */ 3)", "(1 + (2 * 3));"),  # kept before too
    ],
)
def test_parentheses_with_a_comment_inside_are_kept(expr, kept):
    text = BASE % expr
    formatted = format_source(text, "p.sq")
    assert formatted.ok
    assert f"run s {kept}" in formatted.text, formatted.text
    assert _code(formatted.text) == _code(text)
    assert format_source(formatted.text, "p.sq").text == formatted.text
