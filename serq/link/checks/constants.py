"""NaN constants: a let or a constant position that evaluates to NaN does not link.

A constant is a number or `inf` (spec §2): `0/0` and `inf - inf` are neither.
The constant positions are a `let`, a pool's `cap` and `block`, a fifo's count,
the arrival rate or population and the run block. A constant that is NaN only
because it reads a NaN `let` is that let's error, reported once there; one that
is not a constant at all is the lowering's (`E-constant` too, with its own
message), so it is skipped here. Family sizes are the index rule's.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from serq.diagnostics import Diagnostic, codes, spelling
from serq.expand.context import NotConstant, evaluate
from serq.link.checks.places import Place, names, sites
from serq.syntax import ast

_HELP = "a constant is a number or `inf`; `0/0` and `inf - inf` are not"


def check(kernel: ast.Module, lets: dict[str, float]) -> Iterator[Diagnostic]:
    """E-constant for every let and constant position of `kernel` that is NaN."""
    env = dict(lets)
    nan_lets: set[str] = set()
    for item in kernel.items:
        if isinstance(item, ast.Let):
            value = env.get(item.name.name)
            if value is None:
                value = _value(item.value, env)
            if value is not None and math.isnan(value):
                nan_lets.add(item.name.name)
    for site in sites(kernel):
        if site.place is not Place.CONSTANT or site.slot == "size":
            continue
        if spelling.holds_set(site.expr.span.file):
            continue  # a `--set` value: the linker reports it at its `let`
        if any(n.name in nan_lets for n in names(site.expr)):
            continue
        value = _value(site.expr, env)
        if value is not None and math.isnan(value):
            what = site.owner if site.slot == "let" else f"{site.owner}: `{site.slot}`"
            yield Diagnostic.error(codes.CONSTANT, site.expr.span, f"{what} is NaN", help=_HELP)


def _value(e: ast.Expr, env: dict[str, float]) -> float | None:
    try:
        return evaluate(e, env)
    except NotConstant:
        return None
