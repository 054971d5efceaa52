"""The rules of the spec a kernel program must keep to link, every violation in one pass.

Input: a kernel program (`serq.expand`'s output: no sugar, one name per pool
or stage, the server spliced into the one session) whose names resolve, and
the values of its `let` constants. Output: one diagnostic per violation, in
source order. Name resolution, kinds, indices and arity are the linker's
other passes; each rule here skips what it cannot judge (an unknown stage, a
constant that is not one) rather than guess.

One module per rule family:

- `moments`: a context variable read outside its place (E-moment);
- `hidden`: what is hidden, and the places the scheduler may not read it (E-hidden);
- `reveal`: the server's decisions before a run reveals a hidden attribute (E-hidden);
- `lints`: a `set` of live state read in a hold's header (L-set-in-header) and a
  constant branch guard (L-constant-guard);
- `constants`: a NaN constant (E-constant);
- `gauges`: a gauge that reads more than the state (E-structure);
- `claims`: a claim or a preempt key that reads what it may not (E-structure);
- `structure`: step modes, flows and `share`, step options, families, key
  draws, `cached` and `reuse` without `cache` (E-structure);
- `unset`: an attribute read on a path where nothing has set it yet (W-unset, a warning).

`places` lists every expression with the place it is read at, which the
moment and hidden rules filter.
"""

from __future__ import annotations

from serq.diagnostics import Diagnostic
from serq.link.checks import (
    claims,
    constants,
    gauges,
    hidden,
    lints,
    moments,
    reveal,
    structure,
    unset,
)
from serq.syntax import ast

__all__ = ["check_rules", "merge_rules", "report_rules"]


def check_rules(kernel: ast.Module, lets: dict[str, float]) -> list[Diagnostic]:
    """Every rule violation of the kernel program `kernel`, whose constants are `lets`."""
    return merge_rules(report_rules(kernel, lets))


def report_rules(kernel: ast.Module, lets: dict[str, float]) -> list[Diagnostic]:
    """Every violation as each rule reports it (a place two rules find is there twice)."""
    return [
        *moments.check(kernel),
        *hidden.check(kernel),
        *reveal.check(kernel),
        *lints.check(kernel, lets),
        *constants.check(kernel, lets),
        *gauges.check(kernel),
        *claims.check(kernel),
        *structure.check(kernel, lets),
        *unset.check(kernel),
    ]


def merge_rules(found: list[Diagnostic]) -> list[Diagnostic]:
    """The rules' findings in source order, each (code, span, message) once."""
    unique: dict[tuple, Diagnostic] = {}
    for d in sorted(found, key=Diagnostic.sort_key):
        unique.setdefault((d.code, d.span, d.message), d)
    return list(unique.values())
