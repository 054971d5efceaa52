"""Completion right after a number's digits offers nothing: whatever is typed there is
more of the number (`cap 1|` becomes `cap 16`), never a name or a keyword, which would
lex as a second token beside the number."""

from __future__ import annotations

import pytest

from serq_lsp.analysis import analyze
from serq_lsp.completion import complete

PROGRAM = """let bs = 16;
let ratio = 0.5;
pool kv { cap 4 * bs; block bs; }
stage s : fifo(1);
workload { arrive poisson(1e0); }
session { hold kv (2) { run s (~exp(1)); } }
run { horizon 10; }
"""


@pytest.mark.parametrize("after", ["16", "0.5", "cap 4", "poisson(1e0", "fifo(1"])
def test_nothing_is_offered_right_after_a_number(after):
    at = PROGRAM.index(after) + len(after)
    assert complete(analyze(PROGRAM, "p.sq"), at) == []


@pytest.mark.parametrize("after", ["4 * bs", "block bs", "~exp(1"])
def test_names_are_still_offered_after_a_name_or_in_an_expression(after):
    """A name that ends in the cursor is completed as before; so is the start of an
    operand after an operator (`4 * |`)."""
    text = PROGRAM
    at = text.index(after) + len(after)
    if after == "~exp(1":
        at -= 1  # `~exp(|1)`: before the number, where an expression starts
    labels = {item.label for item in complete(analyze(text, "p.sq"), at)}
    assert "bs" in labels and "ratio" in labels


def test_after_an_operator_next_to_a_number():
    text = PROGRAM.replace("cap 4 * bs;", "cap 4 * ;")
    at = text.index("cap 4 * ") + len("cap 4 * ")
    labels = {item.label for item in complete(analyze(text, "p.sq"), at)}
    assert "bs" in labels


def test_the_text_typed_since_an_older_analysis_counts():
    """Completion answers from the last analysis while a check is in flight: what was typed
    right before the cursor since then (`View.typed`) decides, not the older text there."""
    from lsprotocol import types

    from serq_lsp.stale import View

    old = analyze(PROGRAM, "p.sq")
    typed = PROGRAM.replace("cap 4 * bs;", "cap 4 * bs + 1;")
    cursor = types.Position(2, typed.splitlines()[2].index("+ 1") + 3)
    view = View(old, typed)
    assert view.typed(cursor).endswith("cap 4 * bs + 1")
    assert complete(old, view.offset(types.Position(2, 0)) or 0, view.typed(cursor)) == []
    named = PROGRAM.replace("cap 4 * bs;", "cap 4 * bs + ra;")
    cursor = types.Position(2, named.splitlines()[2].index("+ ra") + 4)
    view = View(old, named)
    assert view.typed(cursor).endswith("+ ra")
    at = old.text.index("cap 4 * bs") + len("cap 4 * bs")  # where the analysis has it
    assert "ratio" in {item.label for item in complete(old, at, view.typed(cursor))}
