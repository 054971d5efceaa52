"""Linking: the kernel program to the IR, with every name resolved and every rule checked.

`link(kernel)` declares the program's names (`resolve.declare`: constants, pools, stages,
attributes, statistics, and the names that clash), lowers it (`lower.lower`: every
reference resolved, every constant position folded) and runs the rule checks of the spec
(`checks.check_rules`: moments, hidden, lints, structure); it returns the IR `Program`
when no error was found, and every diagnostic of the three in one pass, in source order.

The kernel comes from `serq.expand`: no sugar is left in it, and its spans are the
surface forms' origins, so an error inside a serving form points at the form. Where a
rule check finds a fault at the span of one the lowering reported (a NaN constant,
families that do not pair, a step stage without `cost`, a context variable in an arrival
gap), only the lowering's is reported: one error per place, as parso does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from serq import ir
from serq.diagnostics import Diagnostic, Severity, Span, codes
from serq.link.checks import check_rules
from serq.link.lower import lower
from serq.link.resolve import Family, Scope, declare
from serq.syntax import ast

__all__ = ["LinkResult", "Rule", "RULES", "Family", "Scope", "link"]

# A rule check: the kernel and its folded `let` constants to the violations found.
Rule = Callable[[ast.Module, dict[str, float]], Iterable[Diagnostic]]
RULES: tuple[Rule, ...] = (check_rules,)


@dataclass(frozen=True, slots=True)
class LinkResult:
    """The linked `program` (None when any error was found), the `diagnostics` in source
    order, and the `scope` of the program's names (for editors: declarations and slots)."""

    program: ir.Program | None
    diagnostics: tuple[Diagnostic, ...]
    scope: Scope

    @property
    def ok(self) -> bool:
        return not any(d.severity >= Severity.ERROR for d in self.diagnostics)


def link(kernel: ast.Module, rules: Iterable[Rule] | None = None) -> LinkResult:
    """Link `kernel` into the IR, with the rule checks `rules` (default: `RULES`)."""
    scope = declare(kernel)
    program = lower(kernel, scope)
    found = list(scope.diagnostics)
    spots = {d.span for d in found}
    lets = {name: value for name, value in scope.lets.items() if value is not None}
    for rule in RULES if rules is None else rules:
        try:
            found.extend(d for d in rule(kernel, lets) if d.span not in spots)
        except Exception as error:  # a bug in serq: say so, and keep the other findings
            name = getattr(rule, "__name__", "a rule check")
            found.append(
                Diagnostic.error(
                    codes.INTERNAL,
                    Span.point(kernel.file, 0, 1, 1),
                    f"serq's rule check `{name}` failed: {type(error).__name__}: {error}",
                )
            )
    diagnostics = tuple(sorted(found, key=Diagnostic.sort_key))
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        program = None
    return LinkResult(program, diagnostics, scope)
