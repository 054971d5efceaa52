"""Claims over a step engine's iterations, checked at the iterations a span skips.

A claim `every iteration of E (P)` or `some iteration of E (P)` is checked at every
iteration of E. A fast-forwarded span skips planning its iterations, so a program with
such a claim used to step every iteration: one claim made a design-rate program about
twelve times slower. Where P reads only what is the same at every iteration of a span
(the totals but `kv_decode`, `demand`, constants, observables no iteration moves), its
answer at the span's first iteration is its answer at each of the others, and the span
counts them (`Claims.span`, `fastforward.claim_changes`); a claim that reads `now`,
`served`, `kv_decode` or a pool's `used` or `free` keeps the engine stepping.

Checked here: the vLLM-shaped family of test_fast_forward_fractional.py (fractional and
whole token counts, chunks of 0 and fractions, costs that read kv_decode) with one to
three claims drawn from both kinds, each program fast-forwarded and stepped: the same
report, every field (claims included: checked, failures, the first failure and what it
read) but `skipped`; a program whose claims are all steady skips, one with a moving
claim skips nothing.
"""

from __future__ import annotations

import functools
import random

import pytest

from serq.sim import fastforward
from serq.sim.api import compile_program
from tests.sim.test_fast_forward_fractional import (
    assert_identical,
    both,
    generate,
    iterations,
    skipped,
)

# the same at every iteration of a span
STEADY = (
    "tokens <= 64",
    "decoders >= 1",
    "prefilled > 0 && decoders > 0",
    "tokens == min(demand, 256)",
    "residents - decoders >= 0",
    "kv_prefill == 0",
    "attention >= 0",
    "demand >= tokens",
    "decoders == residents",
    "queued(reqs) == 0",
    "holders(reqs) <= 4",
    "busy(engine) == 0",
    "queue(engine) == residents",
    "tokens * 0.5 <= -0 + decoders",
    "min(tokens, 1e300) != inf",
    "tokens == decoders",
    "demand == floor(demand)",
)
# what a span moves: the engine steps one iteration at a time
MOVING = ("now < 20", "served < 500", "kv_decode < 200", "used(kv) < 100", "free(kv) > 10")


def with_claims(k: int) -> tuple[str, bool]:
    """generate(k)'s program with one to three claims over its engine's iterations, and
    whether all of them are steady."""
    r = random.Random(10_000 + k)
    lines = []
    steady = True
    for i in range(r.randint(1, 3)):
        moving = r.random() < 0.25
        steady = steady and not moving
        pred = r.choice(MOVING if moving else STEADY)
        kind = r.choice(("every", "every", "some"))
        lines.append(f"claim c{i}: {kind} iteration of engine ({pred});")
    return generate(k).source + "\n".join(lines) + "\n", steady


FAMILY = range(32)


@functools.cache
def family_run(k: int):
    source, steady = with_claims(k)
    fast, slow = both(source=source)
    return source, steady, fast, slow


def test_the_kinds_are_told_apart():
    for pred in STEADY + MOVING:
        compiled, diagnostics = compile_program(
            generate(1).source + f"claim c: every iteration of engine ({pred});\n", "t.sq"
        )
        assert compiled is not None, (pred, diagnostics)
        (claim,) = compiled.program.claims
        assert bool(fastforward.claim_changes(claim.pred)) == (pred in MOVING), pred


@pytest.mark.parametrize("k", FAMILY)
def test_claims_are_checked_at_every_iteration_a_span_skips(k):
    source, steady, fast, slow = family_run(k)
    assert iterations(slow) > 0, source
    assert fast.claims and all(c.checked for c in fast.claims if c.note is None), source
    assert_identical(fast, slow, context=f"the program, with_claims({k}):\n{source}")
    if not steady:
        assert skipped(fast) == 0, source


def test_steady_claims_leave_the_engine_skipping():
    runs = [family_run(k) for k in FAMILY]
    steady = [(fast, slow) for _, ok, fast, slow in runs if ok]
    assert len(steady) >= len(FAMILY) // 2
    assert sum(skipped(fast) for fast, _ in steady) > 0.3 * sum(
        iterations(slow) for _, slow in steady
    )
    failing = [c for _, _, fast, _ in runs for c in fast.claims if c.failures]
    assert failing, "some claim fails somewhere, so failures are compared too"
