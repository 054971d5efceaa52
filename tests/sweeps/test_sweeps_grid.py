"""The grid of `serq sweep --set`: lists, decimal ranges, products, and their diagnostics."""

from __future__ import annotations

import math

import pytest

from serq.diagnostics import Diagnostic, codes
from serq.sweeps.grid import parse_axes, parse_axis, points, spec_source


@pytest.mark.parametrize(
    ("spec", "texts", "values"),
    [
        ("0.5:0.9:0.1", ["0.5", "0.6", "0.7", "0.8", "0.9"], [0.5, 0.6, 0.7, 0.8, 0.9]),
        ("1:5:2", ["1", "3", "5"], [1, 3, 5]),
        ("0:1:0.3", ["0", "0.3", "0.6", "0.9"], [0, 0.3, 0.6, 0.9]),  # 1 is off the grid
        ("0.9:0.5:-0.2", ["0.9", "0.7", "0.5"], [0.9, 0.7, 0.5]),
        ("-1:-2:-0.5", ["-1", "-1.5", "-2"], [-1, -1.5, -2]),
        ("1e-3:3e-3:1e-3", ["0.001", "0.002", "0.003"], [0.001, 0.002, 0.003]),
        ("2:2:1", ["2"], [2]),
        ("1,inf,0,-3", ["1", "inf", "0", "-3"], [1, math.inf, 0, -3]),
        ("0.25, 1/3", ["0.25", "1/3"], [0.25, "1/3"]),
        ("max(1, 2),3", ["max(1, 2)", "3"], ["max(1, 2)", 3]),
        ("0,1:3:1", ["0", "1", "2", "3"], [0, 1, 2, 3]),
    ],
)
def test_values(spec, texts, values):
    axis = parse_axis("x", spec)
    assert not isinstance(axis, Diagnostic)
    assert list(axis.texts) == texts
    assert list(axis.values) == values  # 0.7 is 0.7, not 0.7000000000000001
    assert [type(v) for v in axis.values] == [type(v) for v in values]


def test_python_values():
    axis = parse_axis("x", [1, 0.5, float("inf"), "2*B"])
    assert list(axis.texts) == ["1", "0.5", "inf", "2*B"]
    assert parse_axis("x", 0.1).texts == ("0.1",)


@pytest.mark.parametrize(
    ("spec", "code", "bad"),
    [
        ("1:2", codes.PARSE, "1:2"),
        ("1:2:3:4", codes.PARSE, "1:2:3:4"),
        ("0:1:0", codes.CONSTANT, "0:1:0"),
        ("2:1:1", codes.CONSTANT, "2:1:1"),
        ("1:2:-1", codes.CONSTANT, "1:2:-1"),
        ("a:2:1", codes.PARSE, "a"),
        ("0:inf:1", codes.PARSE, "inf"),
        ("1,,2", codes.PARSE, ""),
        ("0:1e9:1", codes.CONSTANT, "0:1e9:1"),
        # numbers past a float's range, and STEPs whose count overflows decimal arithmetic
        # (they raised decimal.Overflow; 1e999:2e999:1 printed a count of 1000 digits)
        ("1e999:2e999:1", codes.PARSE, "1e999"),
        ("0:1e9999999:1", codes.PARSE, "1e9999999"),
        ("0:1:1e-9999999", codes.CONSTANT, "0:1:1e-9999999"),
        ("0.1:0.3:1e-300", codes.CONSTANT, "0.1:0.3:1e-300"),
        # values a float cannot tell apart: the same runs again under other names
        ("0.1:0.1000000000001:1e-17", codes.CONSTANT, "0.1:0.1000000000001:1e-17"),
        ("1e17:100000000000000010:1", codes.CONSTANT, None),
    ],
)
def test_bad_specs_point_at_the_fault(spec, code, bad):
    diagnostic = parse_axis("lam", spec)
    assert isinstance(diagnostic, Diagnostic)
    assert diagnostic.code == code.id
    file, text, offset = spec_source("lam", spec)
    assert diagnostic.span.file == file == "<--set lam>"
    if bad is None:
        assert text[diagnostic.span.start : diagnostic.span.end] == spec
        assert "distinct numbers" in diagnostic.message
    elif bad:
        assert text[diagnostic.span.start : diagnostic.span.end] == bad
    else:
        assert diagnostic.span.start == offset + spec.index(",,") + 1


def test_points_are_the_product_last_fastest():
    axes = parse_axes([("a", "1,2"), ("b", "x,y,z")])
    grid = points(axes)
    assert [p.values for p in grid] == [
        (("a", 1), ("b", "x")), (("a", 1), ("b", "y")), (("a", 1), ("b", "z")),
        (("a", 2), ("b", "x")), (("a", 2), ("b", "y")), (("a", 2), ("b", "z")),
    ]
    assert [p.index for p in grid] == list(range(6))
    assert grid[4].sets == (("a", "2"), ("b", "y"))
    assert [p.sets for p in points([])] == [()]  # nothing swept: one point


def test_a_let_given_twice():
    found = parse_axes([("a", "1"), ("a", "2")])
    assert len(found) == 1 and isinstance(found[0], Diagnostic) and "twice" in found[0].message


def test_a_range_s_far_numbers_are_short_texts():
    # 1e40 was written out in 41 digits, and 1e-9999999 in ten million
    assert parse_axis("x", "1e40:1e40:1").texts == ("1E+40",)
    assert parse_axis("x", "1e-400:1e-400:1").texts == ("1E-400",)
    assert parse_axis("x", "1e-30:1e-30:1").texts == ("0." + "0" * 29 + "1",)


def test_a_range_s_message_names_the_bound():
    diagnostic = parse_axis("x", "1e300:1.7e308:1")
    assert isinstance(diagnostic, Diagnostic)
    assert diagnostic.message == "--set x: the range has more than 100000 values"
