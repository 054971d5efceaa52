"""The hidden rule and aggregates: an aggregate's body is not assumed to execute
(serq-workload.txt, hidden), so running work by `sum`, `max` or `min` of a hidden
attribute does not reveal it, whatever the count; work that reads it outside the
aggregate does. The expander writes an aggregate out before the rules run, so it marks
what it writes (`ast.Binary.aggregate`). pyserq 0.1.4 gives each verdict below (checked
by hand; tests/corpus/link_invalid/reveal_aggregate*.sq are checked against it)."""

from __future__ import annotations

import pytest

from serq import api

SERVER = """\
fn main() {
  stage svc : fifo(1);
  workload {
    arrive poisson(1);
    hidden o;
    turn { set o = ~uniform(1, 9); set more = ~bernoulli(0.5); }
    session { loop { turn; branch (more) { } else { end; } } }
  }
  server {
    run svc (cost(svc, WORK));
    branch (o > 3) { run svc (cost(svc, 1)); }
  }
}
"""


@pytest.mark.parametrize(
    ("work", "refused"),
    [
        ("sum k in 2 (o)", True),
        ("sum k in 1 (o)", True),
        ("max k in 1 (o)", True),
        ("min k in 3 (o + k)", True),
        ("o + sum k in 2 (o)", False),
        ("sum k in 2 (k) + o", False),
        ("o", False),
    ],
)
def test_running_work_by_an_aggregate_does_not_reveal(work, refused):
    text = SERVER.replace("WORK", work)
    found = [d for d in api.check_source(text, "server.sq") if d.code == "E-hidden"]
    assert bool(found) == refused, [d.message for d in found]
    if refused:
        assert found[0].span.line == 11 and "before a run reveals it" in found[0].message


def test_the_mark_is_outside_equality_and_hash():
    """The mark is where a node came from, not what it is: a node written out equals, and
    hashes as, the same node written by hand (how the kernel prints is
    tests/expand/test_expand_roundtrip.py's)."""
    from serq.diagnostics import Span
    from serq.syntax import ast

    span = Span("x", 0, 1, 1, 1, 1, 2)
    a = ast.Number(1.0, "1", span)
    assert ast.Binary("+", a, a, span, aggregate=True) == ast.Binary("+", a, a, span)
    assert hash(ast.Number(1.0, "1", span, aggregate=True)) == hash(a)
