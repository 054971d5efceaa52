"""Claims and preempt keys read what exists where they are read (pyserq 0.1.4's rules).

A claim reads and never acts, so none may draw. Over a step stage's iterations it reads
the iteration's context (moments), the deployment's state through `queue`, `busy`,
`used`, `free`, `holders` and `queued`, and constants, never a session's attributes. A
claim `at end` reads constants, `now` and the aggregates of the observations
(`total(obs)`, `count(obs)`, `largest(obs)`, `prefix_total(obs)`), which nothing else
reads. Its `given` reads one session's attributes (a hidden one too) and constants.
A pool's preempt keys are read for every candidate victim: no draw, no `budget_left`, and
no `position` where a session attribute has that name (which one is meant is ambiguous).
Two claims may not share a name.
"""

from __future__ import annotations

from collections.abc import Iterator

from serq.diagnostics import Diagnostic, Label, codes
from serq.expand.walk import walk
from serq.link.checks.places import Place, attributes, sites
from serq.syntax import ast
from serq.vocabulary import CLAIM_AGGREGATES, CLAIM_CONTEXT, OBSERVABLES

# The one of pyserq 0.1.4's context variables (`CLAIM_CONTEXT`) a preempt key reads.
PREEMPT_CONTEXT = frozenset({"position"})

# What a claim over iterations may read of the deployment, as the iteration starts.
ITERATION_OBSERVABLES = frozenset({"queue", "busy", "used", "free", "holders", "queued"})
_CLAIMS = (Place.GIVEN, Place.ITERATION, Place.AT_END)


def check(kernel: ast.Module) -> Iterator[Diagnostic]:
    """E-structure for every claim or preempt key of `kernel` that reads what it may not."""
    attrs = attributes(kernel)
    for site in sites(kernel):
        observed = {  # `total(obs)`: `obs` names an observation, not an attribute
            id(n.args[0])
            for n in walk(site.expr)
            if isinstance(n, ast.Call) and n.func.name in CLAIM_AGGREGATES and n.args
        }
        for n in walk(site.expr):
            if id(n) in observed:
                continue
            message = _fault(site.place, n, attrs)
            if message is not None:
                yield Diagnostic.error(
                    codes.STRUCTURE, n.span, message, notes=(f"in {site.owner}",)
                )
    yield from _names(kernel)


def _fault(place: Place, n: ast.Node, attrs: set[str]) -> str | None:  # noqa: C901
    """What is wrong with reading `n` at `place`, or None."""
    call = n.func.name if isinstance(n, ast.Call) else None
    if call in CLAIM_AGGREGATES and place is not Place.AT_END:
        return (
            f"`{call}(…)` aggregates the run's observations and is read only by a claim "
            f"`at end`, but is read in {place.value}"
        )
    if place is Place.PREEMPT:
        if isinstance(n, ast.Draw):
            return (
                "a preempt key may not draw (`~`): it is read for every candidate at every "
                "growth that does not fit; sample into an attribute first"
            )
        if call == "budget_left":
            return "a preempt key may not read `budget_left(…)`: it plans an iteration"
        if isinstance(n, ast.Name) and n.name in PREEMPT_CONTEXT and n.name in attrs:
            # ambiguous: the candidate's attribute or where its hold is now (0.1.4 refuses);
            # the claims' own (`arrived`, `demand`, `served`) do not exist here, so an
            # attribute of that name is read as it is (`set arrived = now;` of the spec)
            return (
                f"`{n.name}` is both a session attribute and the context variable a preempt "
                f"key reads (where the candidate's hold is now): rename the attribute"
            )
        if isinstance(n, ast.Name) and n.name == "computed":
            return (
                "a preempt key reads `position`, where the candidate is now, not `computed`, "
                "the position at the session's last preemption"
            )
        return None
    if place not in _CLAIMS:
        return None
    if isinstance(n, ast.Draw):
        return (
            "a claim may not draw (`~`): it reads and does not act, and a draw would move "
            "the run's streams"
        )
    if place is Place.GIVEN:
        if call in OBSERVABLES:
            return f"a claim's `given` reads one session's attributes, not `{call}(…)`"
        return None
    if isinstance(n, ast.Name) and n.name in attrs:
        whom = "the stage" if place is Place.ITERATION else "the run"
        kind = "a claim over iterations" if place is Place.ITERATION else "a claim `at end`"
        message = f"`{n.name}` is a session attribute, and {kind} reads {whom}, not a session"
        if n.name in CLAIM_CONTEXT:
            message += f" (the context variable `{n.name}` is hidden by the attribute: rename it)"
        return message
    if call in OBSERVABLES:
        if place is Place.AT_END:
            return (
                f"`{call}(…)` reads the deployment's state, and a claim `at end` reads the "
                "constants, `now` and the aggregates of the observations"
            )
        if call not in ITERATION_OBSERVABLES:
            return (
                f"a claim over iterations may not read `{call}(…)`: it reads the deployment "
                "as the iteration starts through `queue`, `busy`, `used`, `free`, `holders` "
                "and `queued`"
            )
    return None


def _names(kernel: ast.Module) -> Iterator[Diagnostic]:
    first: dict[str, ast.Claim] = {}
    for item in kernel.items:
        if not isinstance(item, ast.Claim):
            continue
        name = item.name.name
        if name in first:
            yield Diagnostic.error(
                codes.STRUCTURE,
                item.name.span,
                f"claim `{name}` is declared twice",
                labels=(Label(first[name].name.span, "first declared here"),),
                help="give each claim a name of its own",
            )
        else:
            first[name] = item
