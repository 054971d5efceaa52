"""The two lints, reported as errors: well-formed programs that are almost certainly wrong.

- L-set-in-header: a `set` that reads live pool or stage state (`cachedin`,
  `budget_left`, `used`, ...) and is then read in a hold's header. The header
  is read at admission and the `set` is not, so the header sees the value from
  before the session queued: `at admission` is the clause for it. As in the
  reference, the hold's `cache` clause counts with the header, a `set` reaches
  the statements after it in its block and in the blocks nested there (not
  out of a branch, a loop or a hold's body), and a later `set` of the name
  without live state ends it. `blocksize` is folded at link time, so it is
  not live.
- L-constant-guard: a branch guard that is a constant other than 0 and 1. One
  strictly between them was meant as a draw (`branch with`); any other is not
  a test at all (spec §3, Branching).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from serq.diagnostics import Diagnostic, Label, codes
from serq.expand.context import NotConstant, evaluate
from serq.expand.walk import walk
from serq.link.checks.places import names, session_of, statements
from serq.syntax import ast
from serq.vocabulary import OBSERVABLES

LIVE = OBSERVABLES - {"blocksize"}

_Live = dict[str, ast.Call]


def check(kernel: ast.Module, lets: dict[str, float]) -> Iterator[Diagnostic]:
    """L-set-in-header and L-constant-guard over the session of `kernel`."""
    session = session_of(kernel)
    if session is None:
        return
    yield from _sets(session.body, {})
    for s in statements(session.body):
        if isinstance(s, ast.Branch):
            yield from _guard(s, lets)


def _live_call(e: ast.Expr) -> ast.Call | None:
    for n in walk(e):
        if isinstance(n, ast.Call) and n.func.name in LIVE:
            return n
    return None


def _sets(block: ast.Block, live: _Live) -> Iterator[Diagnostic]:
    live = dict(live)
    for s in block.body:
        if isinstance(s, ast.Set):
            call = _live_call(s.value)
            if call is None:
                live.pop(s.target.name, None)
            else:
                live[s.target.name] = call
        elif isinstance(s, ast.Hold):
            header = [e for p in s.pools for e in (p.units, p.reserve) if e is not None]
            header += [e for e in (s.reuse, s.cache) if e is not None]
            pool = s.pools[0].pool.dotted if s.pools else "?"
            for e in header:
                for n in names(e):
                    call = live.get(n.name)
                    if call is not None:
                        yield _set_in_header(n, call, pool)
            yield from _sets(s.body, live)
        elif isinstance(s, ast.Branch):
            yield from _sets(s.then, live)
            if s.otherwise is not None:
                yield from _sets(s.otherwise, live)
        elif isinstance(s, ast.Loop):
            yield from _sets(s.body, live)


def _set_in_header(n: ast.Name, call: ast.Call, pool: str) -> Diagnostic:
    return Diagnostic.error(
        codes.LINT_SET_HEADER,
        n.span,
        f"`{n.name}` reads `{call.func.name}(…)` when the session reaches the `set`, and the "
        f"header of this hold on `{pool}` is read when the session is admitted",
        labels=(Label(call.span, "read at the `set`"),),
        help=f"write `at admission ({n.name} = …)` if the admission value is what you meant",
    )


def _guard(s: ast.Branch, lets: dict[str, float]) -> Iterator[Diagnostic]:
    try:
        value = evaluate(s.test, lets)
    except NotConstant:
        return
    if value in (0.0, 1.0):
        return
    if 0.0 < value < 1.0:
        yield Diagnostic.error(
            codes.LINT_GUARD,
            s.test.span,
            f"this guard is the constant {value:g}, a probability, not a test",
            help=f"a draw is written `branch with ({value:g})`",
        )
        return
    shown = "NaN" if math.isnan(value) else f"{value:g}"
    yield Diagnostic.error(
        codes.LINT_GUARD,
        s.test.span,
        f"this guard is the constant {shown}, not a test: a guard is 0 or 1",
    )
