"""A step iteration that never ends (tests/sim/NOTES.md §28): its cost evaluates to inf
during the run (`c_it + c_tok * tokens` with `--set c_tok=inf`), or the clock plus it
passes the float range. A cost that folds to inf is refused at the link (E-constant); one
computed so ran to the horizon in silence under an open workload (sessions queued at the
engine for ever, the report counting nothing) and stopped a batch with a stall that said
only "(2 live)". It is now a W-stall warning at the cost expression, from when the
iteration started, or the stall's reason. pyserq 0.1.2 runs both to the horizon with
nothing moving. Found by tests/oracle/sweep_domain.py sweeping `c_it` and `c_tok` of
examples/vllm.sq to inf. Each program runs on the three paths, fast-forwarded and stepped.
"""

from __future__ import annotations

import pytest

from serq.sim import straight
from serq.sim.api import compile_program, execute

PROGRAM = """\
let x = {x};
pool kv {{ cap 1000; block 16; }}
stage engine : step {{ budget 64; cost {cost}; memory kv; }}
workload {{ arrive {arrive}; }}
session {{
  hold kv (16) {{ run engine prefill (10) growing kv; run engine decode (5) growing kv; }}
  observe done = now;
}}
run {{ horizon 50; warmup 0; seed 1; }}
"""
COSTS = (
    "x + 0 * tokens",  # x = inf
    "x * tokens",  # x = inf
    "1 / (tokens - tokens)",
    "x * 1e300 * tokens",  # x = 1e10: the product passes the float range
    "tokens < 5 ? x : 1",  # x = inf: the decode iterations, after a prefill of cost 1
)
OPEN = ("renewal(3)", "poisson(1)")


def _said(text: str) -> list[list[tuple]]:
    """The diagnostics of `text` on every path, fast-forwarded and stepped."""
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, [d.message for d in diagnostics]
    out = []
    for codegen, straight_on, fast_forward in (
        (True, True, True),
        (True, False, True),
        (False, True, True),
        (True, True, False),
        (False, True, False),
    ):
        straight.ENABLED = straight_on
        try:
            report, ran = execute(compiled, codegen=codegen, fast_forward=fast_forward)
        finally:
            straight.ENABLED = True
        out.append([(d.code, d.span, d.message, report is None) for d in ran])
    return out


def _x(cost: str) -> str:
    return "1e10" if "1e300" in cost else "inf"


@pytest.mark.parametrize("arrive", OPEN)
@pytest.mark.parametrize("cost", COSTS)
def test_an_iteration_that_never_ends_under_open_arrivals_is_a_warning(cost, arrive):
    runs = _said(PROGRAM.format(x=_x(cost), cost=cost, arrive=arrive))
    assert all(run == runs[0] for run in runs[1:])
    (said,) = runs[0]
    code, span, message, failed = said
    assert (code, failed) == ("W-stall", False)
    assert (span.line, span.column) == (3, 39)  # the cost expression
    assert "an iteration of `engine` costs inf, so it never ends" in message


@pytest.mark.parametrize("cost", COSTS)
def test_an_iteration_that_never_ends_in_a_batch_is_the_stall(cost):
    runs = _said(PROGRAM.format(x=_x(cost), cost=cost, arrive="batch(2)"))
    assert all(run == runs[0] for run in runs[1:])
    (said,) = runs[0]
    code, _, message, failed = said
    assert (code, failed) == ("E-run", True)
    assert "no event is pending" in message
    assert "an iteration of `engine` costs inf, so it never ends" in message


def test_a_finite_cost_is_no_warning():
    runs = _said(PROGRAM.format(x="1e300", cost="x + 0 * tokens", arrive="renewal(0.5)"))
    assert runs[0] == []
