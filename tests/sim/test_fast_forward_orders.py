"""Fast-forwarding under the serve and preemption orders, and the held reservations, that
used to switch it off.

- `serve by (remaining)` (shortest remaining run first) or `-remaining`, alone or beside
  steady keys. In a span every resident takes one token an iteration and its remaining
  falls by exactly 1.0, so the residents' order by it, ties included, is the same at
  every iteration of the span as at its first (`fastforward._by_remaining`). A key that
  only reads `remaining` (`remaining * 0.3`, `floor(remaining / 8)`) still steps: rounding
  could tie or reorder two keys inside a span.
- a memory that preempts by keys (`preempt by (...)`, 0.1.4). A span ends before a block
  crossing that does not fit, so no one is preempted inside one, and which victim the
  keys choose matters only at the plan after it.
- a memory with `reserve held;` (0.1.4). A span's block crossings fit next to the
  reservations the pool holds (`_grow`'s test), and a resident whose allocation is still
  within its own reservation does not span, since its growths would use that up.

Checked on the vLLM-shaped family of test_fast_forward_fractional.py (fractional and
whole token counts, chunks of 0 and fractions, costs with `max` and ones that read
kv_decode), its serve order or its `preempt lifo` replaced: each program fast-forwarded
and stepped gives the same report, every field but `skipped`, and the spans skip a good
part of the iterations; more than a third of the preempting programs preempt.
"""

from __future__ import annotations

import functools
import json
import re

import pytest

from serq.sim import fastforward
from serq.sim.api import compile_program
from tests.sim.test_fast_forward_fractional import (
    ROOT,
    assert_identical,
    both,
    generate,
    iterations,
    skipped,
)

# a held reservation can starve the queue for good (W-stall), the same both ways
pytestmark = pytest.mark.filterwarnings("ignore::serq.RunWarning")

SERVE = (
    "serve by (remaining); ",
    "serve by (-remaining); ",
    "serve by (decoding, remaining); ",
    "serve by (-decoding, -remaining, admission); ",
)
PREEMPT = (
    "preempt by (position, -admission) requeue tail;",
    "preempt by (-admission);",
    "preempt by (decoding, position);",
    "preempt by (-position) requeue head;",
    "preempt by (1);",
)


def served_by_remaining(k: int) -> str:
    """generate(k)'s program, its engine serving by one of `SERVE`."""
    source = re.sub(r"serve (admission|decode first|by \([^)]*\)); ", "", generate(k).source)
    key = SERVE[k % len(SERVE)]
    source = source.replace("memory kv; }", key + "memory kv; }", 1)
    assert key in source
    return source


def preempting_by_keys(k: int) -> str:
    """generate(k)'s program, its memory preempting by one of `PREEMPT`."""
    key = PREEMPT[k % len(PREEMPT)]
    source = generate(k).source.replace("preempt lifo;", key, 1)
    assert key in source
    return source


def holding_reservations(k: int) -> str:
    """generate(k)'s program, its memory holding the reservations (`reserve held;`), each
    request reserving half its output beyond what it has (so that its first decodes grow
    within its reservation), and three sessions in ten first holding a block with eight
    reserved while they think (reservations held by holders that are no residents)."""
    source = generate(k).source.replace("preempt lifo;", "preempt lifo; reserve held;", 1)
    source = source.replace("reserve (known)", "reserve (known + o / 2)").replace(
        "hold reqs (1), kv (prompt) {", "hold reqs (1), kv (prompt) reserve (prompt + o / 2) {"
    )
    source = source.replace(
        "    set arrived = now;\n",
        "    branch with (0.3) { hold kv (bs) reserve (8 * bs) { run think (1); } }\n"
        "    set arrived = now;\n",
        1,
    )
    assert "reserve held" in source and "o / 2" in source and "8 * bs" in source
    return source


VARIANTS = {
    "serve": served_by_remaining,
    "preempt": preempting_by_keys,
    "held": holding_reservations,
}
CASES = (
    [("serve", k) for k in range(24)]
    + [("preempt", k) for k in range(30)]
    + [("held", k) for k in range(30)]
)


@functools.cache
def family_run(variant: str, k: int):
    source = VARIANTS[variant](k)
    return (source, *both(source=source))


@pytest.mark.parametrize(("variant", "k"), CASES)
def test_fast_forwarded_to_the_same_report(variant, k):
    source, fast, slow = family_run(variant, k)
    assert iterations(slow) > 0, source
    assert_identical(fast, slow, context=f"{VARIANTS[variant].__name__}({k}):\n{source}")


# the share of iterations each family skips at least (about half, half, a fifth: under
# `held` a resident's first decodes, within its reservation, do not span)
SKIPS = {"serve": 0.3, "preempt": 0.3, "held": 0.15}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_the_family_skips(variant):
    runs = [family_run(*case) for case in CASES if case[0] == variant]
    assert sum(skipped(fast) for _, fast, _ in runs) > SKIPS[variant] * sum(
        iterations(slow) for _, _, slow in runs
    )


def preemptions(report) -> float:
    return sum(p["preemptions"] or 0 for p in json.loads(report.json())["pools"])


@pytest.mark.parametrize("variant", ["preempt", "held"])
def test_the_family_preempts(variant):
    runs = [family_run(*case) for case in CASES if case[0] == variant]
    assert sum(preemptions(fast) > 0 for _, fast, _ in runs) >= len(runs) // 3


@pytest.mark.parametrize(
    "path",
    [
        ("tests", "sim", "programs", "det_step_serve.sq"),  # shortest remaining first
        ("examples", "vocabulary", "engine_preempt_requeue.sq"),
    ],
)
def test_programs_the_same_both_ways(path):
    fast, slow = both(ROOT.joinpath(*path), horizon=200)
    assert_identical(fast, slow)


@pytest.mark.parametrize(
    ("key", "spans"),
    [
        ("remaining", True),
        ("-remaining", True),
        ("decoding, -remaining", True),
        ("remaining * 0.3", False),  # rounding may tie two keys a span apart
        ("floor(remaining / 8)", False),
        ("remaining + admission", False),
    ],
)
def test_which_serve_keys_keep_their_order(key, spans):
    source = served_by_remaining(0).replace(SERVE[0], f"serve by ({key}); ")
    compiled, diagnostics = compile_program(source, "t.sq")
    assert compiled is not None, diagnostics
    (verdict,) = [v for v in fastforward.analyse(compiled.program) if v is not None]
    assert verdict.skips == spans, verdict.reasons
