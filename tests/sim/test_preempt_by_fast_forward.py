"""Fast-forwarding beside a pool that preempts by keys (`preempt by (...)`, 0.1.4).

A span ends before a block crossing that does not fit, so no one is preempted inside a
span, and which victim the keys would choose matters only at the plan after it, which
runs as usual. Such a program used to step every iteration all the same. Checked on the
vLLM-shaped family of test_fast_forward_fractional.py with its `preempt lifo` replaced by
keys of `position`, `admission` and `decoding`, requeued at the head or the tail:
fast-forwarded and stepped, the same report, every field but `skipped`, in programs that
preempt and programs that do not. (`reserve held;` still steps: a span's crossings do
not count reservations.)
"""

from __future__ import annotations

import functools
import json

import pytest

from tests.sim.test_fast_forward_fractional import (
    ROOT,
    assert_identical,
    both,
    generate,
    iterations,
    skipped,
)

KEYS = (
    "preempt by (position, -admission) requeue tail;",
    "preempt by (-admission);",
    "preempt by (decoding, position);",
    "preempt by (-position) requeue head;",
    "preempt by (1);",
)


def preempting_by_keys(k: int) -> str:
    """generate(k)'s program, its memory preempting by one of `KEYS`."""
    key = KEYS[k % len(KEYS)]
    source = generate(k).source.replace("preempt lifo;", key, 1)
    assert key in source
    return source


FAMILY = range(30)


@functools.cache
def family_run(k: int):
    source = preempting_by_keys(k)
    return (source, *both(source=source))


def preemptions(report) -> float:
    return sum(p["preemptions"] or 0 for p in json.loads(report.json())["pools"])


@pytest.mark.parametrize("k", FAMILY)
def test_preempting_by_keys_fast_forwards_to_the_same_report(k):
    source, fast, slow = family_run(k)
    assert iterations(slow) > 0, source
    assert_identical(fast, slow, context=f"preempting_by_keys({k}):\n{source}")


def test_the_family_preempts_and_skips():
    runs = [family_run(k) for k in FAMILY]
    assert sum(preemptions(fast) > 0 for _, fast, _ in runs) >= len(FAMILY) // 3
    assert sum(skipped(fast) for _, fast, _ in runs) > 0.3 * sum(
        iterations(slow) for _, _, slow in runs
    )


def test_the_example_the_same_both_ways():
    fast, slow = both(
        ROOT / "examples" / "vocabulary" / "engine_preempt_requeue.sq", horizon=200
    )
    assert_identical(fast, slow)
