"""The moment table: each context variable is read only at the one place it exists.

`now` exists everywhere but an arrival gap (a `renewal` reads only constants and
draws); the others at one place each (spec §2, Expressions;
the reference breaks the ties of the prose):

- `size`, `age`, `last`, `waiting`: eviction keys and spill clauses;
- `waited`: a pool's queue keys;
- `present`: a ps stage's capacity;
- `residents`, `decoders`, `kv_decode`, `kv_prefill`: a step stage's budget,
  chunk, cost and serve keys;
- `tokens`, `prefilled`, `attention`: a step stage's cost;
- `decoding`, `admission`, `remaining`: a step stage's serve keys.

Constant positions (lets, `cap`, sizes, the run block, ...) are the constant
rule's, and `now` in a gauge is the gauge rule's, so neither is reported here.
"""

from __future__ import annotations

from collections.abc import Iterator

from serq.diagnostics import Diagnostic, codes
from serq.link.checks.places import Place, attributes, names, sites
from serq.link.checks.removal import remove_read
from serq.syntax import ast
from serq.vocabulary import CLAIM_CONTEXT, CONTEXT_VARS

_TOTALS = frozenset({"residents", "decoders", "kv_decode", "kv_prefill"})

# Where each context variable other than `now` exists, in the words of a message.
HOMES: dict[str, tuple[Place, ...]] = {
    **{v: (Place.EVICT,) for v in ("size", "age", "last", "waiting")},
    "waited": (Place.QUEUE,),
    "present": (Place.PS,),
    **{v: (Place.BUDGET, Place.COST, Place.SERVE, Place.ITERATION) for v in _TOTALS},
    **{v: (Place.COST, Place.ITERATION) for v in ("tokens", "prefilled", "attention")},
    **{v: (Place.SERVE, Place.PREEMPT) for v in ("decoding", "admission")},
    "remaining": (Place.SERVE,),
    # pyserq 0.1.4's claims and preempt keys
    **{v: (Place.ITERATION,) for v in ("demand", "served", "arrived")},
    "position": (Place.PREEMPT,),
}
assert set(HOMES) | {"now"} == CONTEXT_VARS | CLAIM_CONTEXT


def check(kernel: ast.Module) -> Iterator[Diagnostic]:
    """E-moment for every context variable of `kernel` read outside its place."""
    attrs = attributes(kernel)  # an attribute named like a claim's context variable wins
    for site in sites(kernel):
        if site.place is Place.CONSTANT:
            continue
        for n in names(site.expr):
            if n.name in CLAIM_CONTEXT and n.name in attrs:
                continue
            if n.name == "now" and site.place is Place.GIVEN:
                yield Diagnostic.error(
                    codes.MOMENT,
                    n.span,
                    "a claim's `given` may not read `now`: it is a condition on one "
                    "session's attributes",
                    notes=(f"in {site.owner}",),
                    fix=remove_read(site, n),
                )
                continue
            if n.name == "now" and site.place is Place.ARRIVAL:
                yield Diagnostic.error(
                    codes.MOMENT,
                    n.span,
                    "`now` is read in an arrival gap, which is drawn with no session: "
                    "a gap reads only constants and draws",
                    fix=remove_read(site, n),
                )
                continue
            homes = HOMES.get(n.name)
            if homes is None or site.place in homes:
                continue
            where = " or ".join(h.value for h in homes)
            yield Diagnostic.error(
                codes.MOMENT,
                n.span,
                f"`{n.name}` is read in {site.place.value}, but it exists only in {where}",
                notes=(f"in {site.owner}",),
                help="a context variable is read only at the one place it exists; "
                "`now` is the one read everywhere",
                fix=remove_read(site, n),
            )
