"""The kernel is a fixed point: printed, parsed and expanded again, it is the same kernel.

Over every corpus program and example: the expansion is clean, leaves no sugar,
its printed text parses without a diagnostic, and expanding that text gives the
kernel back, node for node (spans aside, since they point at different text).
"""

from __future__ import annotations

import math
from dataclasses import fields, is_dataclass
from pathlib import Path

import pytest

from serq.diagnostics import Span
from serq.expand import expand
from serq.expand.printer import print_module
from serq.expand.walk import walk
from serq.syntax import ast, parse

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    [
        *(ROOT / "tests" / "corpus" / "valid").glob("*.sq"),
        *(ROOT / "tests" / "corpus" / "valid_main").glob("*.sq"),
        *(ROOT / "tests" / "expand" / "programs").glob("*.sq"),
        *(ROOT / "examples").glob("*.sq"),
    ]
)
SUGAR = ast.SUGAR


def shape(node):
    """`node` without its spans and provenance (fields outside equality: a written-out
    aggregate's mark); a number is its value."""
    if isinstance(node, ast.Number):
        return ("number", "nan" if math.isnan(node.value) else node.value)
    if isinstance(node, Span):
        return None
    if isinstance(node, tuple):
        return tuple(shape(n) for n in node)
    if is_dataclass(node):
        return (type(node).__name__,) + tuple(
            shape(getattr(node, f.name)) for f in fields(node) if f.name != "span" and f.compare
        )
    return node


def kernel_of(text: str, path: Path) -> ast.Module:
    parsed = parse(text, str(path))
    assert [d.message for d in parsed.diagnostics] == []
    expansion = expand(parsed.module)
    assert [f"{d.span.line}:{d.span.column} {d.message}" for d in expansion.diagnostics] == []
    return expansion.kernel


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_printed_kernel_expands_to_itself(path):
    kernel = kernel_of(path.read_text(encoding="utf-8"), path)
    sugar = [type(n).__name__ for n in walk(kernel) if isinstance(n, SUGAR)]
    assert sugar == []
    holds = [n for n in walk(kernel) if isinstance(n, ast.Hold)]
    assert all(not h.bindings for h in holds)
    assert all(n.stages for n in walk(kernel) if isinstance(n, ast.Run))
    text = print_module(kernel)
    again = kernel_of(text, path)
    assert shape(again.items) == shape(kernel.items)
    assert print_module(again) == text
