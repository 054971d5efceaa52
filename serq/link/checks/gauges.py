"""Gauges read the deployment's state only (spec §3, Gauges).

A gauge is read at the end of every instant and held constant between events,
with no session: it reads pool and stage observables and constants. A session
attribute, a draw, `cachedin` (the session's own prefix), `now` and `work(…)`
(both move between events) and `budget_left(…)` (it plans an iteration, which
may draw) are errors. The other context variables are the moment rule's.
"""

from __future__ import annotations

from collections.abc import Iterator

from serq.diagnostics import Diagnostic, codes
from serq.expand.walk import walk
from serq.link.checks.places import attributes
from serq.syntax import ast

_CALLS = {
    "cachedin": "`cachedin` is the session's own cached prefix, and a gauge has no session",
    "work": "a gauge may not read `work(…)`: the work left drains between events, "
    "and a gauge is held constant between them",
    "budget_left": "a gauge may not read `budget_left(…)`: it plans the next iteration, "
    "which evaluates the stage's budget and may draw",
}


def check(kernel: ast.Module) -> Iterator[Diagnostic]:
    """E-structure for every gauge of `kernel` that reads more than the state."""
    attrs = attributes(kernel)
    for item in kernel.items:
        if not isinstance(item, ast.Gauge):
            continue
        for n in walk(item.value):
            message = None
            if isinstance(n, ast.Draw):
                message = "a gauge may not draw (`~`): it reads the state, and a draw would "
                message += "move the run's streams"
            elif isinstance(n, ast.Call) and n.func.name in _CALLS:
                message = _CALLS[n.func.name]
            elif isinstance(n, ast.Name) and n.name == "now":
                message = "a gauge may not read `now`: it changes between events, and a gauge "
                message += "is held constant between them"
            elif isinstance(n, ast.Name) and n.name in attrs:
                message = f"`{n.name}` is a session attribute, and a gauge has no session"
            if message is not None:
                yield Diagnostic.error(
                    codes.STRUCTURE, n.span, message, notes=(f"in gauge `{item.name.name}`",)
                )
