"""What the expression compiler writes out instead of calling: `min`/`max` and the draws
of `~erlang` and `~h2` of constants give exactly what `serq.ir.arith` and `serq.sim.draws`
give, bit for bit, over the whole domain (0, -0, negatives, fractions, inf, NaN)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from serq import ir
from serq.diagnostics import Span
from serq.ir import arith
from serq.sim import draws
from serq.sim.core import Engine
from serq.sim.exprs import ExprCompiler, _erlang_code, _h2_code

_SPAN = Span.point("t.sq", 0, 1, 1)
VALUES = (0.0, -0.0, 1.0, -1.0, 2.5, 1e-300, -1e300, math.inf, -math.inf, math.nan)


def _same(x: float, y: float) -> bool:
    """Equal as floats are to the bit: NaN to NaN, and 0 and -0 apart."""
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)


def _operand(value: float, kind: str, slot: int) -> ir.Expr | None:
    """`value` as a number (never NaN: the linker folds none), an attribute, or an
    expression that reads one and so is bound to a name of its own."""
    if kind == "number":
        return None if math.isnan(value) else ir.Num(value)
    if kind == "attribute":
        return ir.Attr(slot)
    return ir.Binary("*", ir.Attr(slot), ir.Num(1.0))


@pytest.mark.parametrize("func", ["min", "max"])
def test_min_and_max_are_rusts_on_every_pair(func):
    compiler = ExprCompiler(Engine(), [], [], 2)
    reference = arith.FUNCTIONS[func][1]
    kinds = ("number", "attribute", "expression")
    checked = 0
    for (x, y), (kx, ky) in itertools.product(
        itertools.product(VALUES, VALUES), itertools.product(kinds, kinds)
    ):
        left, right = _operand(x, kx, 0), _operand(y, ky, 1)
        if left is None or right is None:
            continue
        f = compiler.compile(ir.Call(func, (left, right)))
        got = f([x, y, None])
        assert _same(got, reference(x * 1.0, y * 1.0)), (func, x, y, kx, ky, got)
        checked += 1
    assert checked > 700


def test_min_evaluates_each_operand_once_and_in_order():
    """An operand that draws is drawn once, the first before the second."""
    compiler = ExprCompiler(Engine(), [], [], 1)
    stream = random.Random(5)
    first = ir.Draw("exp", (ir.Num(1.0),), _SPAN)
    second = ir.Draw("exp", (ir.Num(2.0),), _SPAN)
    compiler.inline_draws = True
    f = compiler.compile(ir.Call("min", (first, second)), stream)
    twin = random.Random(5)
    for _ in range(200):
        a = draws.exp(twin.random, 1.0)
        b = draws.exp(twin.random, 2.0)
        assert _same(f([None]), arith.FUNCTIONS["min"][1](a, b))


@pytest.mark.parametrize("phases", range(1, 17))
def test_erlang_of_constants_is_the_samplers(phases):
    for mean in (0.9, 1.0, 3.7, 1e-300, 1e300):
        ours, theirs = random.Random(phases), random.Random(phases)
        f = eval("lambda: " + _erlang_code("U", phases, mean), {"U": ours.random, "_log": math.log})
        for _ in range(300):
            assert _same(f(), draws.erlang(theirs.random, float(phases), mean))


@pytest.mark.parametrize("cv2", [0.5, 1.0, 1.0000001, 2.0, 9.0, 100.0, 1e12])
def test_h2_of_constants_is_the_samplers(cv2):
    for mean in (1.0, 0.3, 7.5, 1e-300, 1e300):
        ours, theirs = random.Random(7), random.Random(7)
        code = _h2_code("U", mean, cv2)
        assert code is not None
        f = eval("lambda: " + code, {"U": ours.random, "_log": math.log})
        for _ in range(300):
            assert _same(f(), draws.h2(theirs.random, mean, cv2))


def test_h2_whose_first_phase_is_certain_keeps_the_sampler():
    """With cv2 so large that p rounds to 1, the second phase's mean would divide by 0:
    nothing is written out, and the sampler (which never reaches it) is called."""
    assert _h2_code("U", 1.0, 1e40) is None
    assert draws.fixed("h2", random.Random(7).random, (1.0, 1e40)) is None


@pytest.mark.parametrize("func", ["floor", "ceil"])
def test_floor_and_ceil_are_ariths(func):
    """Rounded as floats where finite; inf, -inf and NaN as they are; -0 kept."""
    compiler = ExprCompiler(Engine(), [], [], 1)
    reference = arith.FUNCTIONS[func][1]
    values = (*VALUES, 0.5, -0.5, -2.5, 2.0**52 + 0.5, 2.0**60, -(2.0**60), 1e308, 4.999999)
    for x, kind in itertools.product(values, ("number", "attribute", "expression")):
        operand = _operand(x, kind, 0)
        if operand is None:
            continue
        got = compiler.compile(ir.Call(func, (operand,)))([x, None])
        assert _same(got, reference(x * 1.0)), (func, x, kind, got)


def test_floor_evaluates_its_operand_once():
    """An operand that draws is drawn once."""
    compiler = ExprCompiler(Engine(), [], [], 1)
    compiler.inline_draws = True
    f = compiler.compile(
        ir.Call("floor", (ir.Draw("exp", (ir.Num(3.0),), _SPAN),)), random.Random(2)
    )
    twin = random.Random(2)
    for _ in range(200):
        assert _same(f([None]), arith.FUNCTIONS["floor"][1](draws.exp(twin.random, 3.0)))


def test_division_by_a_number_is_divide():
    """`x / c` of a number c (not 0, not NaN) is Python's `/`, which is `arith.divide`."""
    compiler = ExprCompiler(Engine(), [], [], 1)
    for x, c in itertools.product(VALUES, (1.0, -1.0, 2.5, -0.5, 1e-300, 1e300, math.inf)):
        f = compiler.compile(ir.Binary("/", ir.Attr(0), ir.Num(c)))
        assert _same(f([x, None]), arith.divide(x, c)), (x, c)


@pytest.mark.parametrize("kind", ["attribute", "expression"])
def test_a_computed_member_is_members(kind):
    """A member looked up by its index as a float is the one `member` gives, and an index
    that names none (a fraction, -1, the count, inf, NaN) is `member`'s error."""
    from serq.sim.errors import SimError
    from serq.sim.exprs import member

    stages = [object() for _ in range(5)]
    compiler = ExprCompiler(Engine(), [], stages, 1)
    index = ir.Attr(0) if kind == "attribute" else ir.Binary("+", ir.Attr(0), ir.Num(0.0))
    ref = ir.Ref("stage", 1, 3, index, _SPAN)
    f = compiler.resolver(ref)
    for value in (*VALUES, 2.0, 0.5, 3.0, -2.0, 2.9999999999999996):
        try:
            expected = member(stages, 1, 3, value * 1.0, _SPAN, "stage ")
        except SimError as error:
            with pytest.raises(SimError) as raised:
                f([value, None])
            assert raised.value.message == error.message
        else:
            assert f([value, None]) is expected, value
