"""Hover says what a word is where it stands.

Read word by word over every example, the hover said: `queue` in a pool's `queue fifo;`
or `queue by (keys);` was the queue station ("a station with roles: its pools, its
engine..."), and its `fifo` a stage's "c servers in arrival order"; `max` and `min` of an
aggregate (`max j in N (e)`) were the two-argument functions ("the larger of a and b");
`inf` was a "built-in attribute"; a draw or parameter without a unit was "in none"
(`~bernoulli(p)`: "its value is in none (0 or 1)"); and `now` "may be read in
everywhere but an arrival gap".
"""

from __future__ import annotations

import pytest

from serq_lsp.analysis import analyze
from serq_lsp.hover import hover_at

TEXT = """pool kv[2] { cap 100; queue by (waited); }
pool p2 { cap 10; queue fifo; }
stage s : fifo(1);
gauge g = max j in 2 (used(kv[j])) - min j in 2 (used(kv[j]));
workload { arrive poisson(1); }
session {
  set x = max(1, 2) + inf + now;
  set b = ~bernoulli(0.5) + ~h2(1, 2);
  hold p2 (1) { run s (1); }
  observe q = queue(s);
}
run { horizon 10; }
"""


def _hover(needle: str, delta: int = 0) -> str:
    value = hover_at(analyze(TEXT, "/nowhere/h.sq"), TEXT.index(needle) + delta)
    return value.contents.value.split("\n\n---\n\n")[0]


@pytest.mark.parametrize(
    ("needle", "delta", "says", "not_said"),
    [
        ("queue by", 0, "In a pool: the order its waiting holds are admitted in", "station"),
        ("queue fifo", 0, "In a pool: the order its waiting holds are admitted in", "station"),
        ("fifo;", 0, "admits its waiting holds in arrival order", "servers"),
        ("by (waited", 0, "the smallest keys first", None),
        ("fifo(1)", 0, "c servers in arrival order", None),
        ("max j", 0, "`max j in n (e)`: the largest value of e", "larger of a and b"),
        ("min j", 0, "`min j in n (e)`: the smallest value of e", "smaller of a and b"),
        ("max(1", 0, "the larger of a and b", None),
        ("queue(s)", 0, "the jobs waiting at the stage", None),
        ("inf", 0, "**built-in constant** `inf`", "attribute"),
        ("bernoulli", 0, "its value has no unit (0 or 1)", "in none"),
        ("h2", 0, "`cv2` (no unit)", "(none)"),
        ("now;", 0, "May be read everywhere but an arrival gap", "read in everywhere"),
        ("waited", 0, "May be read in a pool's queue keys", None),
    ],
)
def test_the_hover_is_true_to_the_word(needle, delta, says, not_said):
    text = _hover(needle, delta)
    assert says in text, text
    if not_said is not None:
        assert not_said not in text, text


LEASE = """pool kv { cap 100; }
stage s : fifo(1);
workload { arrive poisson(1); }
session {
  hold kv (10) { run s (1); } lease kv (30);
  run s (1);
  release kv;
}
run { horizon 10; }
"""


def test_release_says_it_ends_a_lease_outside_a_hold():
    # `release kv;` after the hold ends the lease the hold left (docs/language.md,
    # `release`); the hover said only "gives the enclosing hold's allocation back now"
    value = hover_at(analyze(LEASE, "/nowhere/l.sq"), LEASE.index("release kv"))
    text = value.contents.value.split("\n\n---\n\n")[0]
    assert "the innermost enclosing hold's allocation on POOL back now" in text, text
    assert "outside any hold on POOL, ends the session's lease" in text, text


def test_a_keyword_in_a_comment_or_string_is_no_keyword():
    # hover on `hold` in `// a hold here` explained the statement, and on `in` inside a
    # string the aggregate's range
    text = (
        'stage s : fifo(1); // a hold here\nuse "std/args";\n'
        'let r = args.number("in", 1); /* run\n  loop */\nworkload { arrive poisson(r); }\n'
        "session { run s (1); }\nrun { horizon 10; }\n"
    )
    analysis = analyze(text, "/nowhere/c.sq")
    for needle, delta in (("hold here", 0), ('in"', 0), ("run\n", 1), ("loop */", 2)):
        assert hover_at(analysis, text.index(needle) + delta) is None, needle
    assert hover_at(analysis, text.index("run s")) is not None  # code still says
    assert "std/args" in hover_at(analysis, text.index("std/args") + 4).contents.value
