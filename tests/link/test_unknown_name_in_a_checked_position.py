"""An unknown name where the linker judges the folded value (a step engine's budget, a ps
stage's capacity, a `choose` count) is one error, the unknown name: its placeholder is no
value to judge. `choose j in NaN by (...)` said "the count of `choose j` must be a whole
number from 1 to 1000000, not 0" before the unknown name (found by round 23's probe of
`choose`, tests/sim/NOTES.md §53)."""

from __future__ import annotations

import pytest

from serq.sim import api as sim_api

PROGRAM = """pool kv {{ cap 100; admit via engine; }}
stage engine : step {{ budget {budget}; cost {cost}; chunk {chunk}; memory kv; }}
stage p : ps({capacity});
stage s[2] : fifo(1);
workload {{ arrive batch(1); }}
session {{
  choose j in {count} by (j);
  hold kv (1) {{ run engine prefill (10) growing kv; }}
  run p (1);
  run s[j] (1);
}}
run {{ horizon 10; }}
"""
GOOD = {"budget": "16", "cost": "1", "chunk": "8", "capacity": "2", "count": "2"}


@pytest.mark.parametrize("where", sorted(GOOD))
@pytest.mark.parametrize("name", ["NaN", "nan", "budgett"])
def test_an_unknown_name_is_the_only_error_there(where, name):
    text = PROGRAM.format(**{**GOOD, where: name})
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is None
    said = [(d.code, d.message) for d in diagnostics]
    assert said == [("E-unknown-name", f"unknown name `{name}`")]


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        ("budget", "0", "the budget of step stage `engine` must be positive, not 0"),
        ("capacity", "-1", "the capacity of ps stage `p` must be positive, not -1"),
        ("count", "0.5", "the count of `choose j` must be a whole number from 1 to 1000000, not 0.5"),
    ],
)
def test_a_known_value_out_of_its_domain_is_still_judged(where, value, message):
    text = PROGRAM.format(**{**GOOD, where: value})
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is None
    assert [(d.code, d.message) for d in diagnostics] == [("E-constant", message)]
