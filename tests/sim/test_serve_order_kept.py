"""A step engine whose `serve by` keys read only what a resident keeps while it stays
(`decoding`, `admission`, its session's attributes, constants) keeps its serve order
from one iteration to the next (`StepStage.steady`) instead of sorting the residents by
their keys before every iteration, and the runs are the same to the last bit: on the
step family's programs whose serve is such a key (`serve decode first`, `by
(-admission)`, `by (decoding)`) and on programs whose keys read attributes and constants
from the whole domain (0, -0, inf, fractions, a NaN where `decoding / decoding` is 0/0,
which keeps the sort), fast-forwarded and stepped, on the generated code and on the
interpreter, each against the same run with the order sorted at every iteration."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

import serq
from serq.sim import step

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
import step_family  # noqa: E402

KEYS = [
    "decoding",
    "-decoding",
    "decoding ? 0 : 1",
    "-admission",
    "admission * 0.5",
    "prio",
    "-prio, admission",
    "decoding / decoding",  # NaN for every prefill: the order is sorted each time
    "prio > 1 ? inf : -0",
    "0",
]


def _family(seed: int) -> str:
    """A program of the step family whose serve keys, if any, are steady."""
    k = seed
    while True:
        text = step_family.program(k)
        if "remaining" not in text:
            return text
        k += 1000


def _keyed(seed: int) -> str:
    rng = random.Random(seed)
    keys = ", ".join(rng.choice(KEYS) for _ in range(rng.randint(1, 2)))
    return f"""pool reqs {{ cap {rng.choice([2, 4, 8])}; admit via E; }}
pool kv {{ cap {rng.choice([64, 96, 160])}; block 8; evict lru; preempt lifo; }}
stage E : step {{ budget {rng.choice([16, 32, 48])}; chunk {rng.choice([0, 8, 16])};
  cost 0.25 + 0.0078125 * tokens; memory kv; serve by ({keys}); }}
stage gap : delay;
workload {{ arrive batch({rng.choice([4, 8, 12])}); }}
session {{
  set prio = floor(~uniform(0, 3)) * {rng.choice(["1", "0.5", "-1"])};
  set prompt = 8 + 8 * floor(~uniform(0, 4));
  run gap (serial * 0.25);
  hold reqs (1), kv (min(prompt, budget_left(E))) reserve (prompt) {{
    run E prefill (prompt) growing kv;
    run E decode ({rng.choice(["3", "10", "0.5"])} + prio * prio) growing kv;
  }}
}}
run {{ horizon 200; warmup 0; seed {seed}; }}
"""


def _outcome(path: str, fast_forward: bool, codegen: bool) -> str:
    try:
        program = serq.compile(path, fast_forward=fast_forward, codegen=codegen)
        return serq.run(program).json()
    except ValueError as error:  # a stall or a domain error: the same on both sides
        return str(error)


def _both(path: str, monkeypatch) -> None:
    ways = [(ff, codegen) for ff in (True, False) for codegen in (True, False)]
    kept = [_outcome(path, *way) for way in ways]
    monkeypatch.setattr(step, "_steady_serve_key", lambda key: False)
    sorted_each_time = [_outcome(path, *way) for way in ways]
    assert kept == sorted_each_time


@pytest.mark.parametrize("seed", range(12))
def test_the_step_family_serves_in_the_same_order(seed, tmp_path, monkeypatch):
    path = tmp_path / f"family_{seed}.sq"
    path.write_text(_family(seed), encoding="utf-8")
    _both(str(path), monkeypatch)


@pytest.mark.parametrize("seed", range(16))
def test_keys_of_attributes_and_constants_serve_in_the_same_order(seed, tmp_path, monkeypatch):
    path = tmp_path / f"keyed_{seed}.sq"
    path.write_text(_keyed(seed), encoding="utf-8")
    _both(str(path), monkeypatch)


@pytest.mark.parametrize(
    ("key", "steady"),
    [
        ("decoding", True),
        ("-admission, prio", True),
        ("remaining", False),  # goes down every iteration
        ("now", False),
        ("decoders", False),  # a sum over the residents
        ("used(kv)", False),
    ],
)
def test_which_serve_keys_keep_the_order(key, steady):
    source = f"""pool kv {{ cap 64; block 8; evict lru; }}
stage E : step {{ budget 32; cost 0.01; memory kv; serve by ({key}); }}
workload {{ arrive batch(2); }}
session {{ set prio = serial; hold kv (8) {{ run E decode (4) growing kv; }} }}
run {{ horizon 10; }}
"""
    program = serq.compile(source=source).program
    kind = program.stages[0].kind
    assert all(step._steady_serve_key(k) for k in kind.serve.keys) is steady
