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
