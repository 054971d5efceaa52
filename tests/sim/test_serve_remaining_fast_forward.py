"""Fast-forwarding an engine that serves the shortest (or longest) remaining run first.

`serve by (remaining)` reads what every iteration changes, so the engine used to step
one iteration at a time. In a span every resident takes one token an iteration and its
remaining falls by exactly 1.0, so the order of the residents by `remaining`, or by
`-remaining`, ties included, is the same at every iteration of the span as at its first
(`fastforward._by_remaining`), and the span may run. Checked on the vLLM-shaped family
of test_fast_forward_fractional.py (fractional and whole token counts) with the serve
order replaced by keys of `remaining`, alone and beside `decoding` and `admission`:
fast-forwarded and stepped, the same report, every field but `skipped`; and the spans
skip a good part of the iterations.
"""

from __future__ import annotations

import functools
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

KEYS = (
    "serve by (remaining); ",
    "serve by (-remaining); ",
    "serve by (decoding, remaining); ",
    "serve by (-decoding, -remaining, admission); ",
)


def served_by_remaining(k: int) -> str:
    """generate(k)'s program, its engine serving by one of `KEYS`."""
    source = re.sub(r"serve (admission|decode first|by \([^)]*\)); ", "", generate(k).source)
    key = KEYS[k % len(KEYS)]
    source = source.replace("memory kv; }", key + "memory kv; }", 1)
    assert key in source
    return source


FAMILY = range(24)


@functools.cache
def family_run(k: int):
    source = served_by_remaining(k)
    return (source, *both(source=source))


@pytest.mark.parametrize("k", FAMILY)
def test_serving_by_remaining_fast_forwards_to_the_same_report(k):
    source, fast, slow = family_run(k)
    assert iterations(slow) > 0, source
    assert_identical(fast, slow, context=f"served_by_remaining({k}):\n{source}")


def test_the_family_skips():
    runs = [family_run(k) for k in FAMILY]
    assert sum(skipped(fast) for _, fast, _ in runs) > 0.3 * sum(
        iterations(slow) for _, _, slow in runs
    )


def test_det_step_serve_the_same_both_ways():
    """tests/sim/programs/det_step_serve.sq, shortest remaining first by hand."""
    fast, slow = both(ROOT / "tests" / "sim" / "programs" / "det_step_serve.sq")
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
def test_which_keys_keep_their_order(key, spans):
    source = served_by_remaining(0).replace(KEYS[0], f"serve by ({key}); ")
    compiled, diagnostics = compile_program(source, "t.sq")
    assert compiled is not None, diagnostics
    (verdict,) = [v for v in fastforward.analyse(compiled.program) if v is not None]
    assert verdict.skips == spans, verdict.reasons
