"""serq/builtins.py names exactly the functions, draws and arrival laws the language has
(serq.vocabulary, grammar/serq.lark), and gives every parameter a unit and a meaning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from serq import builtins
from serq.vocabulary import DISTRIBUTIONS, MATH_FUNCS, OBSERVABLES

GRAMMAR = (Path(__file__).resolve().parents[2] / "grammar" / "serq.lark").read_text()


def test_the_table_names_every_function_draw_and_arrival_law():
    assert set(builtins.FUNCTIONS) == MATH_FUNCS | OBSERVABLES
    assert set(builtins.DRAWS) == DISTRIBUTIONS
    rule = re.search(r"^arrival:(.*?)^\S", GRAMMAR, re.M | re.S).group(1)
    laws = re.findall(r'"(\w+)"(?: "\(" expr "\)")?', rule)
    assert set(builtins.ARRIVALS) == set(laws)
    for name, law in builtins.ARRIVALS.items():
        takes = f'"{name}" "(" expr ")"' in rule
        assert len(law.params) == (1 if takes else 0), name


@pytest.mark.parametrize(
    "builtin",
    [*builtins.FUNCTIONS.values(), *builtins.DRAWS.values(), *builtins.ARRIVALS.values()],
    ids=lambda b: f"{b.kind}-{b.name}",
)
def test_every_parameter_has_a_unit_and_a_meaning(builtin):
    assert builtin.meaning and builtin.result
    for p in builtin.params:
        assert p.name and p.unit and p.meaning
        assert f"`{p.name}` ({'no unit' if p.unit == 'none' else p.unit})" in builtin.markdown()


def test_signatures_as_written():
    assert builtins.lookup("poisson", arrival=True).signature() == "arrive poisson(rate)"
    assert builtins.lookup("none", arrival=True).signature() == "arrive none"
    assert builtins.lookup("exp", draw=True).signature(units=True) == "~exp(mean: any)"
    assert builtins.lookup("exp").signature() == "exp(x)"
    assert builtins.lookup("price").signature() == "price(stage, s_hit, ds)"
    assert builtins.lookup("nosuch") is None
    assert builtins.lookup("poisson") is None  # not a function
