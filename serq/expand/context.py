"""What every expansion pass shares: the diagnostics it reports, the constants, the origins.

A pass reports on the surface form with `ctx.error(code, span, message)`, folds a
constant expression over the program's `let`s with `ctx.const(expr)`, and
records what a surface form became with `ctx.origin(span, kind, nodes)` so the
editor can show the kernel of the form under the cursor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from serq.diagnostics import Diagnostic, Fix, Label, Span, codes, counted
from serq.syntax import ast


@dataclass(frozen=True, slots=True)
class Origin:
    """A surface form (`span`, what it was: `kind`) and the kernel nodes it expanded to."""

    span: Span
    kind: str
    nodes: tuple[Any, ...]


class NotConstant(Exception):
    """An expression that reads something other than numbers, lets and pure functions."""

    def __init__(self, node: Any, why: str) -> None:
        super().__init__(why)
        self.node = node
        self.why = why


_FUNCS = {
    "min": (2, min),
    "max": (2, max),
    "abs": (1, abs),
    "floor": (1, math.floor),
    "ceil": (1, math.ceil),
    "sqrt": (1, lambda x: math.sqrt(x) if x >= 0 else math.nan),
    "exp": (1, lambda x: math.exp(x) if x < 710 else math.inf),
    "ln": (1, lambda x: math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan)),
    "pow": (2, lambda a, b: _power(a, b)),
}


def _power(a: float, b: float) -> float:
    try:
        r = a**b
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        return math.inf
    return r if isinstance(r, float | int) else math.nan


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


_FUNCS["floor"] = (1, _floor)
_FUNCS["ceil"] = (1, _ceil)


def _div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _binary(op: str, a: float, b: float) -> float:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return _div(a, b)
    if op == "^":
        return _power(a, b)
    if op == "==":
        return float(a == b)
    if op == "!=":
        return float(a != b)
    if op == "<":
        return float(a < b)
    if op == "<=":
        return float(a <= b)
    if op == ">":
        return float(a > b)
    if op == ">=":
        return float(a >= b)
    if op == "&&":
        return float(a != 0 and b != 0)
    if op == "||":
        return float(a != 0 or b != 0)
    raise ValueError(op)


def evaluate(expr: ast.Expr, env: dict[str, float]) -> float:
    """Fold a constant expression over `env` (the lets); raise NotConstant if it is not one."""
    if isinstance(expr, ast.Number):
        return expr.value
    if isinstance(expr, ast.Name):
        if expr.name in env:
            return env[expr.name]
        if expr.name == "inf":
            return math.inf
        raise NotConstant(expr, f"`{expr.name}` is not a constant")
    if isinstance(expr, ast.Unary):
        v = evaluate(expr.operand, env)
        return -v if expr.op == "-" else float(v == 0)
    if isinstance(expr, ast.Binary):
        return _binary(expr.op, evaluate(expr.left, env), evaluate(expr.right, env))
    if isinstance(expr, ast.Conditional):
        t = evaluate(expr.test, env)
        return evaluate(expr.then if t != 0 else expr.otherwise, env)
    if isinstance(expr, ast.Call) and expr.func.name in _FUNCS:
        arity, fn = _FUNCS[expr.func.name]
        if len(expr.args) != arity:
            raise NotConstant(expr, f"`{expr.func.name}` takes {counted(arity, 'argument')}")
        return float(fn(*(evaluate(a, env) for a in expr.args)))
    if isinstance(expr, ast.Draw):
        raise NotConstant(expr, "a draw is not a constant")
    what = {ast.Ref: "a pool or stage", ast.Call: "a call", ast.Aggregate: "an aggregate"}
    raise NotConstant(expr, f"{what.get(type(expr), 'this')} is not a constant")


@dataclass
class Context:
    """The state shared by the passes of one expansion."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    lets: dict[str, float] = field(default_factory=dict)
    origins: list[Origin] = field(default_factory=list)
    fn_main: bool = False
    std_args: bool = False  # the program has `use "std/args";`
    # a `use`d library was not read whole (unreadable, or items with syntax errors): a
    # call of an unknown function may be of one of its defs, and is no error of its own
    library_lost: bool = False

    def error(
        self,
        code: codes.Code,
        span: Span,
        message: str,
        *,
        labels: tuple[Label, ...] = (),
        notes: tuple[str, ...] = (),
        help: str | None = None,
        fix: Fix | None = None,
    ) -> None:
        """Report an error of `code` on the surface form at `span`."""
        self.diagnostics.append(
            Diagnostic.error(code, span, message, labels=labels, notes=notes, help=help, fix=fix)
        )

    def const(self, expr: ast.Expr) -> float | None:
        """The value of a constant expression over the lets, or None when it is not one."""
        try:
            return evaluate(expr, self.lets)
        except NotConstant:
            return None

    def origin(self, span: Span, kind: str, nodes: tuple[Any, ...] | list[Any]) -> None:
        """Record that the surface form at `span` (a `kind`) became the kernel `nodes`."""
        self.origins.append(Origin(span, kind, tuple(nodes)))
