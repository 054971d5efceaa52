"""`serq.ir.arith`: IEEE arithmetic that never raises, and `fold` of constant expressions."""

from __future__ import annotations

import math

import pytest

from serq import ir
from serq.ir import arith

INF, NAN = math.inf, math.nan


@pytest.mark.parametrize(
    ("op", "a", "b", "want"),
    [
        ("+", 1, 2, 3),
        ("-", INF, INF, NAN),
        ("*", INF, 0, NAN),
        ("/", 1, 0, INF),
        ("/", -1, 0, -INF),
        ("/", 1, -0.0, -INF),
        ("/", 0, 0, NAN),
        ("/", NAN, 0, NAN),
        ("/", 7, 2, 3.5),
        ("^", 2, 10, 1024),
        ("^", 10, 400, INF),
        ("^", -10, 401, -INF),
        ("^", -8, 1 / 3, NAN),
        ("^", 0, -1, INF),
        ("==", 1, 1, 1),
        ("!=", 1, 1, 0),
        ("<", 1, 2, 1),
        ("<=", 2, 2, 1),
        (">", 1, 2, 0),
        (">=", 1, 2, 0),
        ("<", NAN, 1, 0),
        ("&&", 2, -1, 1),
        ("&&", 2, 0, 0),
        ("||", 0, 0, 0),
        ("||", 0, 0.5, 1),
    ],
)
def test_binary(op, a, b, want):
    got = arith.BINARY[op](float(a), float(b))
    assert (math.isnan(got) and math.isnan(want)) or got == want


@pytest.mark.parametrize(
    ("func", "args", "want"),
    [
        ("min", (1, 2), 1),
        ("min", (NAN, 2), 2),
        ("max", (1, NAN), 1),
        ("abs", (-3,), 3),
        ("floor", (-1.5,), -2),
        ("floor", (INF,), INF),
        ("ceil", (1.2,), 2),
        ("sqrt", (4,), 2),
        ("sqrt", (-1,), NAN),
        ("exp", (1000,), INF),
        ("ln", (0,), -INF),
        ("ln", (-1,), NAN),
        ("pow", (2, 3), 8),
    ],
)
def test_functions(func, args, want):
    arity, f = arith.FUNCTIONS[func]
    assert arity == len(args)
    got = f(*map(float, args))
    assert (math.isnan(got) and math.isnan(want)) or got == want


def test_the_unary_operators():
    assert arith.UNARY["-"](2.0) == -2.0
    assert arith.UNARY["!"](0.0) == 1.0
    assert arith.UNARY["!"](-3.0) == 0.0


def test_fold_a_constant_expression():
    e = ir.Cond(
        ir.Binary("<", ir.Num(1.0), ir.Num(2.0)),
        ir.Call("max", (ir.Num(3.0), ir.Unary("-", ir.Num(4.0)))),
        ir.Num(0.0),
    )
    assert arith.fold(e) == 3.0
    assert arith.fold(ir.Binary("-", ir.Num(INF), ir.Num(INF))) != 0  # NaN, reported by link


@pytest.mark.parametrize(
    "e",
    [
        ir.Attr(9),
        ir.Ctx("now"),
        ir.Binary("+", ir.Num(1.0), ir.Attr(9)),
        ir.Call("min", (ir.Num(1.0), ir.Ctx("size"))),
        ir.Cond(ir.Attr(1), ir.Num(1.0), ir.Num(2.0)),
    ],
)
def test_fold_is_none_for_what_reads_more_than_numbers(e):
    assert arith.fold(e) is None


def test_a_constant_test_folds_only_the_branch_taken():
    assert arith.fold(ir.Cond(ir.Num(0.0), ir.Attr(9), ir.Num(5.0))) == 5.0
