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

__all__ = ["LinkResult", "Rule", "RULES", "Family", "Scope", "combine", "constants_of", "link"]

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
    lowering = list(scope.diagnostics)
    lets = constants_of(scope)
    found: list[Diagnostic] = []
    failed: list[Diagnostic] = []
    for rule in RULES if rules is None else rules:
        try:
            found.extend(rule(kernel, lets))
        except Exception as error:  # a bug in serq: say so, and keep the other findings
            failed.append(rule_failed(kernel.file, rule, error))
    diagnostics = combine(lowering, found, failed)
    if any(d.severity >= Severity.ERROR for d in diagnostics):
        program = None
    return LinkResult(program, diagnostics, scope)


def constants_of(scope: Scope) -> dict[str, float]:
    """The `let` constants of `scope` that folded to a value, as the rule checks read them."""
    return {name: value for name, value in scope.lets.items() if value is not None}


def combine(
    lowering: list[Diagnostic], found: Iterable[Diagnostic], failed: list[Diagnostic] = ()
) -> tuple[Diagnostic, ...]:
    """The linker's diagnostics: the lowering's (with `declare`'s), the rule checks'
    `found` but those at a place the lowering reported (one error per place, as parso
    does), and the rule checks that `failed`, in source order, each once: a def's body is
    lowered at every call, and an error in it was reported at every one (the calls in
    different places may give it different help, and those stay apart)."""
    spots = {d.span for d in lowering}
    merged = [*lowering, *(d for d in found if d.span not in spots), *failed]
    return tuple(dict.fromkeys(sorted(merged, key=Diagnostic.sort_key)))


def rule_failed(file: str, rule: Rule, error: Exception) -> Diagnostic:
    """The internal error of a rule check `rule` that raised `error` on a kernel of `file`."""
    name = getattr(rule, "__name__", "a rule check")
    return Diagnostic.error(
        codes.INTERNAL,
        Span.point(file, 0, 1, 1),
        f"serq's rule check `{name}` failed: {type(error).__name__}: {error}",
    )
