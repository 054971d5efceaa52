"""A statement among the items says so, not "expected `pull`".

A `}` typed one too many inside a session or a server block closes the block early, and
every statement after it stands among the items. `observe a = 1;` there was read as the
start of the item `NAME pull NAME ...` and reported as "expected `pull`, found `a`", on
every such line (305 of them in an editor on a long program): true of the grammar, no help
to the user. It is now "`observe` begins a statement, which belongs in a block, not among
the items" at the keyword, with a help naming the likely cause.
"""

from __future__ import annotations

import pytest

from serq import api

PROGRAMS = {
    "top level": """stage s : fifo(1);
workload { arrive poisson(1); }
session {
  run s (1);
  }
  KEYWORD
}
run { horizon 5; }
""",
    "fn main": """fn main() {
  stage s : fifo(1);
  workload { arrive poisson(1); }
  server {
    run s (1);
    }
    KEYWORD
  }
}
""",
}


@pytest.mark.parametrize("dialect", PROGRAMS)
@pytest.mark.parametrize(
    "statement", ["observe a = 1;", "set c = 3;", "turn;", "mark m;", "hold p (1) { }"]
)
def test_a_statement_among_the_items(dialect, statement):
    text = PROGRAMS[dialect].replace("KEYWORD", statement)
    found = api.check_source(text, "p.sq")
    parse = [d for d in found if str(d.code) == "E-parse"]
    assert parse, found
    word = statement.split()[0].rstrip(";")
    first = parse[0]
    if statement in ("turn;",):  # no `NAME pull` reading: the parser's own words
        assert "pull" not in first.message
        return
    assert first.message == f"`{word}` begins a statement, which belongs in a block, not among the items"
    assert text[first.span.start : first.span.end] == word
    assert "a `}` above may close its block too early" in str(first.help)


def test_a_pull_item_typed_wrong_still_expects_pull():
    found = api.check_source("queue q { }\nP D;\n", "p.sq")
    assert any("expected `pull`" in d.message for d in found), found


def test_the_word_before_an_error_is_read_back_from_the_error_alone():
    """Finding the keyword before the error reads back over white space and one word, not
    from the start of the text: a block of 4,000 errors took 7 s of CPU that way (the
    search ran at every error), and now takes well under one."""
    import time

    from serq.syntax.parser import _word_before

    assert _word_before("  observe  \n x", 12) == (2, 9)
    assert _word_before("a_1 ", 4) == (0, 3)
    assert _word_before("x = 1 ", 6) is None  # a number, not a word
    assert _word_before("}  ", 3) is None and _word_before("", 0) is None
    text = "stage s : fifo(1);\nsession {\n" + "  set x = ;\n" * 4000 + "}\n"
    started = time.process_time()
    assert len(api.check_source(text, "x.sq")) >= 4000
    assert time.process_time() - started < 4.0
