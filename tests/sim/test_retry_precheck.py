"""The generated code calls `_k_retry` only when a queued hold may fit.

A pool whose queued holds are all written inline and each take a constant number of
units of it (no reserve, no keys, no growers) is retried only while the least of those
numbers, rounded up to the pool's blocks, fits next to what the pool has allocated
(`_Codegen._waiting` with `fitting`): otherwise the retry would find the head of its
queue too large and change nothing. These programs draw the cases where that test could go wrong (holds
of different sizes on one pool, so that the least decides; units of 0, fractions, sizes
that blocks round up, a size above the cap, a cap of inf, holds over two pools, a size
read from an attribute, which keeps the retry) and run each on the generated code and
on the interpreter: the reports must be identical in every field and sample.
"""

from __future__ import annotations

import random

import pytest

from tests.sim.both_paths import generated_source, report_json

SIZES = ("0", "0.5", "1", "1.5", "2", "3", "0.25")
CAPS = ("1", "2", "2.5", "3", "4", "inf")


def _hold(rng: random.Random, pools: list[str], body: str) -> str:
    """A hold of one pool (or, one time in four, of two) around `body`."""
    first = rng.choice(pools)
    parts = [f"{first} ({rng.choice(SIZES)})"]
    others = [p for p in pools if p != first]
    if others and rng.random() < 0.25:
        parts.append(f"{others[0]} ({rng.choice(SIZES)})")
    return f"hold {', '.join(parts)} {{ {body} }}"


def program(seed: int) -> str:
    """A random program of one or two pools that sessions of two kinds hold, of
    different sizes, around a run."""
    rng = random.Random(seed)
    pools = ["p"] if rng.random() < 0.5 else ["p", "q"]
    lines = []
    for name in pools:
        block = f" block {rng.choice(('2', '0.5'))};" if rng.random() < 0.3 else ""
        lines.append(f"pool {name} {{ cap {rng.choice(CAPS)};{block} }}")
    kind = rng.choice(("fifo(1)", "delay", "ps(1)", "fifo(2)"))
    lines.append(f"stage s : {kind};")
    lines.append(f"workload {{ arrive poisson({rng.choice(('0.8', '1.5', '3'))}); }}")
    run = f"run s (~exp({rng.choice(('0.5', '1', '2'))}));"
    first = _hold(rng, pools, run)
    second = _hold(rng, pools, run)
    if rng.random() < 0.2:  # a size read from an attribute: not a constant
        second = f"hold p (u) {{ {run} }}"
    lines.append(
        "session {\n"
        "  set t0 = now;\n"
        f"  set u = {rng.choice(SIZES)};\n"
        "  set k = ~bernoulli(0.5);\n"
        f"  branch (k) {{ {first} }} else {{ {second} }}\n"
        "  observe sojourn = now - t0;\n"
        "}"
    )
    lines.append("run { horizon 300; warmup 10; seed 3; }")
    return "\n".join(lines) + "\n"


def _prechecked(source: str) -> bool:
    """Whether the settle of `source` tests a pool's allocation before `_k_retry`."""
    return any("not _k_retry()" in line and ".allocated + " in line for line in source.splitlines())


@pytest.mark.parametrize("seed", range(40))
def test_generated_code_and_interpreter_agree(seed: int) -> None:
    text = program(seed)
    assert report_json(text, codegen=True) == report_json(text, codegen=False), text


def test_the_family_draws_the_precheck() -> None:
    """The programs of one pool get the test before `_k_retry`, but for those with a
    size read from an attribute."""
    drawn = {True: 0, False: 0}
    for seed in range(40):
        text = program(seed)
        if "pool q" in text:
            continue
        tested = _prechecked(generated_source(text))
        assert tested == ("hold p (u)" not in text), text
        drawn[tested] += 1
    assert drawn[True] >= 5 and drawn[False] >= 1


def test_the_least_size_decides() -> None:
    """Sessions of one unit and of two share a pool of two: a one-unit session queued
    behind nobody larger is admitted as soon as one unit is free, which a test with the
    larger size would delay; both paths agree, and the test reads the least size."""
    text = """
pool p { cap 2; }
stage s : delay;
workload { arrive poisson(3); }
session {
  set t0 = now;
  set k = ~bernoulli(0.5);
  branch (k) { hold p (1) { run s (~exp(1)); } } else { hold p (2) { run s (~exp(1)); } }
  observe wait = now - t0;
}
run { horizon 500; warmup 0; seed 5; }
"""
    assert _prechecked(generated_source(text)) and "allocated + 1.0 > 2.0" in generated_source(text)
    assert report_json(text, codegen=True) == report_json(text, codegen=False)


def test_blocks_round_the_least_size_up() -> None:
    """A size of 3 on a pool of blocks of 2 takes 4 units: the test reads 4."""
    text = """
pool p { cap 8; block 2; }
stage s : fifo(1);
workload { arrive poisson(2); }
session { set t0 = now; hold p (3) { run s (~exp(0.5)); } observe w = now - t0; }
run { horizon 300; warmup 0; seed 2; }
"""
    assert "allocated + 4.0 > 8.0" in generated_source(text)
    assert report_json(text, codegen=True) == report_json(text, codegen=False)


def test_a_size_from_an_attribute_keeps_the_retry() -> None:
    text = """
pool p { cap 2; }
stage s : delay;
workload { arrive poisson(3); }
session { set u = 1; hold p (u) { run s (~exp(1)); } }
run { horizon 100; warmup 0; seed 2; }
"""
    assert not _prechecked(generated_source(text))
    assert report_json(text, codegen=True) == report_json(text, codegen=False)
