"""An open workload that would make more arrivals before its horizon than a run can.

`arrive poisson(r)` up to the horizon T makes about r*T + 1 arrivals and `arrive
renewal(g)` about T/g; past `ARRIVALS_MAX` (the bound of `arrivals`) the run would
outlast any machine (`poisson(1e300)` to 200 is 2e302 arrivals). The linker checks the
program's own run block; `serq.sim.api.compile_program` checks again once the command
line's horizon is in.
"""

from __future__ import annotations

import math

from serq import ir
from serq.diagnostics import Span
from serq.vocabulary import ARRIVALS_MAX

# The mean of a draw whose arguments are numbers (a renewal gap's), by distribution.
_MEANS = {
    "exp": lambda m: m,
    "det": lambda x: x,
    "uniform": lambda lo, hi: (lo + hi) / 2,
    "erlang": lambda k, m: m,
    "h2": lambda m, cv2: m,
}


def arrival_flood(program: ir.Program) -> tuple[Span, str, str] | None:
    """(where, message, help) when `program`'s open workload would make more than
    `ARRIVALS_MAX` arrivals before its horizon, else None. The count is the rate's, or a
    renewal gap's whose mean is known before the run (a number, or a draw of numbers); a
    run that `arrivals` bounds, or whose horizon is not finite, is not counted."""
    arrival, horizon = program.arrival, program.horizon
    if program.arrivals is not None or horizon is None or not math.isfinite(horizon):
        return None
    if isinstance(arrival, ir.Poisson):
        expected, how = arrival.rate * horizon + 1, f"at rate {arrival.rate:g}"
    elif isinstance(arrival, ir.Renewal):
        gap = arrival.gap
        if isinstance(gap, ir.Num):
            mean = gap.value
        elif (
            isinstance(gap, ir.Draw)
            and gap.dist in _MEANS
            and all(isinstance(a, ir.Num) for a in gap.args)
        ):
            mean = _MEANS[gap.dist](*(a.value for a in gap.args))
        else:
            return None
        if not mean > 0:  # a gap outside its domain: the run says so at the first one
            return None
        expected, how = horizon / mean, f"a mean gap of {mean:g} apart"
    else:
        return None
    if not expected > ARRIVALS_MAX:
        return None
    return (
        arrival.origin,
        f"sessions arriving {how} until the horizon {horizon:g} would number about "
        f"{expected:.2g}, more than a run can make (at most {ARRIVALS_MAX:,} arrivals)",
        "a lower rate or a shorter horizon, or bound the run with `arrivals N`",
    )
