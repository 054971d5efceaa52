"""Eviction keys with the part that reads no entry worked out once per eviction
(`serq.sim.eviction_keys`) evict what keys evaluated whole for every entry evict.

A seeded family of programs whose `evict by` keys read stage observables (`price`,
`est_*`, `queue`, `busy`, `work`, `budget_left`) and another pool's state next to the
entries' context, their owners' attributes, draws, the pool's own state and `cachedin`
(never hoisted), under `?:` with observables in either branch, over the whole domain of
constants (0, -0, negatives, inf, fractions, NaN keys where a queue is empty). Each
program runs with hoisting and with none, and the reports (every sample) must be equal
to the last bit; a few are compared with pyserq 0.1.2 as well.
"""

from __future__ import annotations

import random

import pytest

import serq
from serq import ir
from serq.sim import eviction_keys
from serq.sim.errors import SimError

KEYS = [
    "price(s, 0.1, 0.5) * size",
    "-price(s, 0, 1) * size / (age + 1)",
    "est_rho(s) > 0.5 ? size : -size",
    "queue(s) + size",
    "busy(p) * age",
    "work(s) - last",
    "used(other) + size",
    "free(other) * 0 + u",
    "holders(other) - size",
    "queued(other), -size",
    "est_wait(s) * waiting",
    "est_lambda(s) * age + used(kv)",  # the pool's own state: evaluated whole
    "cachedin(other) + size",  # the owner's: evaluated whole
    "now - last",
    "size * queue(p) / queue(p)",  # NaN while p is empty: the scan decides
    "min(price(s, 0.1, 0.5), size)",
    "~uniform(0, 1) * price(s, 1, 1)",  # a draw per entry, the price once
    "queue(sa[1]) * -0",
    "queue(sa[u > 3 ? 1 : 0]) + size",  # a computed member: evaluated whole
    "u > 2 ? est_wait(s) : -inf",
    "price(s, 0.1, 0.5) > 1 ? age : size",
    "-(est_lambda(s) + queue(sa[0])) * inf",
]
ENGINE_KEYS = ["budget_left(engine) * size", "queue(engine) - age", "work(engine) + u"]


def _program(seed: int) -> str:
    rng = random.Random(seed)
    engine = rng.random() < 0.4
    pool_keys = KEYS + ENGINE_KEYS if engine else KEYS
    keys = ", ".join(rng.choice(pool_keys) for _ in range(rng.randint(1, 3)))
    block = rng.choice(["1", "2", "0.5", "1.5"])
    cap = rng.choice(["24", "40", "37.5", "64"])
    served = (
        "run engine prefill (u + 2) growing kv;"
        if engine
        else "run p (~exp(0.5)); run sa[floor(~uniform(0, 2))] (0.1);"
    )
    lines = [
        f"pool kv {{ cap {cap}; block {block}; evict by ({keys}); }}",
        "pool other { cap 3; }",
        "stage s : fifo(1);",
        "stage p : ps(2);",
        "stage sa[2] : ps(1);",
        "stage think : delay;",
        "stage engine : step { budget 8; cost 0.05; memory kv; }" if engine else "",
        "workload {",
        f"  arrive closed({rng.choice([6, 12, 20])});",
        "}",
        "session {",
        f"  set u = {rng.choice(['2', '3.5', '1', '0'])} + floor(~uniform(0, 6));",
        "  loop {",
        "    run think (~exp(1.5));",
        "    hold other (1) { run s (~exp(0.3)); }",
        f"    hold kv (u + 2) reuse (u) {{ observe hit = cached; {served} }} "
        f"cache (u + {rng.choice(['0', '1', '0.5'])});",
        "    set u = min(u + floor(~uniform(0, 3)), 9);",
        "  }",
        "}",
        f"run {{ horizon {rng.choice([40, 80])}; warmup 0; seed {seed}; }}",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def _report(path: str) -> tuple:
    try:
        report = serq.run(serq.compile(path))
    except (SimError, ValueError) as error:  # a stall: both ways must stop alike
        return ("error", str(error))
    samples = {
        name: (list(o.times), list(o.sessions), list(o.samples))
        for name, o in report.observes.items()
    }
    return report.json(), samples


@pytest.mark.parametrize("seed", range(40))
def test_hoisted_keys_evict_what_whole_keys_evict(seed, tmp_path, monkeypatch):
    path = tmp_path / f"hoisted_{seed}.sq"
    path.write_text(_program(seed), encoding="utf-8")
    hoisted = _report(str(path))
    monkeypatch.setattr(eviction_keys, "hoistable", lambda key, pool: [])
    assert _report(str(path)) == hoisted


def test_the_family_hoists_and_ranks():
    """The family is not vacuous: most of its programs hoist a part, and many of those
    rank their entries because of it."""
    hoisting = ranked = 0
    for seed in range(40):
        program = serq.compile(source=_program(seed)).program
        parts, steady = eviction_keys.plan(program.pools[0].evict.keys, 0, spill=None)
        hoisting += bool(parts)
        ranked += bool(parts) and steady
    assert hoisting >= 25 and ranked >= 8


# The family without draws, for the reference, whose streams are not serq's: each draw
# becomes a number that still varies by session (`serial`).
DETERMINISTIC = {
    "~exp(1.5)": "(1.5 + serial / 7)",
    "~exp(0.3)": "0.3",
    "~exp(0.5)": "(0.5 + serial / 40)",
    "floor(~uniform(0, 6))": "floor(serial / 3)",
    "floor(~uniform(0, 2))": "(serial > 5 ? 1 : 0)",
    "floor(~uniform(0, 3))": "1",
    "~uniform(0, 1)": "0.5",
}


def _deterministic(source: str) -> str:
    for draw, number in DETERMINISTIC.items():
        source = source.replace(draw, number)
    assert "~" not in source
    return source


@pytest.mark.parametrize("seed", range(8))
def test_hoisted_keys_agree_with_the_reference(seed, same_as_reference):
    source = _deterministic(_program(seed))
    same_as_reference(source, name=f"hoisted_{seed}.sq")


def _source(key: str) -> str:
    return f"""pool kv {{ cap 8; block 1; evict by ({key}); }}
pool other {{ cap 2; }}
stage s : fifo(1);
stage sa[2] : ps(1);
stage engine : step {{ budget 8; cost 0.05; memory kv; }}
workload {{ arrive poisson(1); }}
session {{ set u = 1; hold kv (2) {{ run s (1); }} cache (2); }}
run {{ horizon 5; }}
"""


def _parts(key: str, spill: int | None = None) -> list[str]:
    program = serq.compile(source=_source(key)).program
    parts, _ = eviction_keys.plan(program.pools[0].evict.keys, 0, spill)
    return [
        type(p).__name__ + ":" + (p.func if isinstance(p, ir.Observable) else "") for p in parts
    ]


@pytest.mark.parametrize(
    ("key", "parts"),
    [
        ("price(s, 0.1, 0.5) * size", ["Observable:price"]),
        ("(queue(s) + used(other)) * size", ["Binary:"]),
        ("size + 1", []),  # nothing observed: nothing to gain
        ("used(kv) * size", []),  # its own pool changes as it evicts
        ("cachedin(other)", []),  # reads the entry's owner
        ("queue(sa[u > 0 ? 1 : 0])", []),  # a computed member `member` may refuse
        ("budget_left(engine) * size", []),  # sets the engine's context as it plans
        ("queue(sa[1]) + ~exp(1)", ["Observable:queue"]),  # the draw stays per entry
        ("u > 0 ? est_wait(s) : size", ["Observable:est_wait"]),
        ("now > 1 ? est_wait(s) : queue(s)", ["Cond:"]),
    ],
)
def test_what_is_hoisted(key, parts):
    assert _parts(key) == parts


def test_a_spilling_pool_hoists_nothing():
    """A spill sends work to a stage and units to a tier as it evicts."""
    assert _parts("price(s, 0.1, 0.5) * size", spill=1) == []


def test_a_pool_that_spills_into_itself_is_never_steady():
    """Its spill puts units back into the cache it evicts from; a spill to another pool
    leaves keys that read only the entry steady."""
    program = serq.compile(source=_source("size")).program
    keys = program.pools[0].evict.keys
    assert eviction_keys.plan(keys, 0, spill=1) == ([], True)
    assert eviction_keys.plan(keys, 0, spill=0) == ([], False)
