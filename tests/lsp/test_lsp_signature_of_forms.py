"""Signature help for the calls of the `fn main` dialect that are forms, not functions.

Typing `args.number("rate", ` or `cost(server, ` in a `fn main` program showed no signature
help (hover explained both): the help knew `def`s, built-in functions, draws and arrival
laws only, and read `args.number` as a call of `number`. Nor did a claim's aggregates
(`count(done)`) have any. They now do; a step stage's `cost (...)` clause is no call.
"""

from __future__ import annotations

import pytest

from serq_lsp.analysis import analyze
from serq_lsp.signature import help_at

PROGRAM = """use "std/args";
def twice(x) { cost(server, x) }
fn main() {
  let rate = args.number("rate", 0.5);
  stage server : fifo(1);
  stage engine : step {
    budget 64;
    cost (0.01 + 0.001 * tokens);
  }
  workload { arrive poisson(rate); }
  server {
    run server (cost(server, ~exp(1)));
    observe done = twice(1);
  }
  claim served: at end (count(done) > 0);
}
"""


def _help(after: str, k: int = 0):
    start = -1
    for _ in range(k + 1):
        start = PROGRAM.index(after, start + 1)
    analysis = analyze(PROGRAM, "/nowhere/main.sq")
    return help_at(analysis, start + len(after))


@pytest.mark.parametrize(
    ("after", "k", "label", "active"),
    [
        ('args.number("rate", ', 0, 'args.number("name", default)', 1),
        ("args.number(", 0, 'args.number("name", default)', 0),
        ("cost(server, ", 1, "cost(X, amount)", 1),
        ("cost(", 0, "cost(X, amount)", 0),
        ("count(", 0, "count(obs)", 0),
        ("twice(", 1, "def twice(x)", 0),
        ("~exp(", 0, "~exp(mean)", 0),
    ],
)
def test_signature_help_of_a_form(after, k, label, active):
    found = _help(after, k)
    assert found is not None, after
    assert found.signatures[0].label == label
    assert found.active_parameter == active


def test_a_step_stages_cost_clause_is_no_call():
    assert _help("    cost (") is None
