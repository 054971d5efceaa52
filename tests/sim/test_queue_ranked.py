"""A pool queue ranked once per join (`serq.sim.ranked_queue`) admits what the scan of
every waiting hold before every admission admits (`Pool.head`), on a seeded family of
overloaded pools whose `queue by` keys read session attributes and constants from the
whole domain: 0, -0, negatives, inf, fractions, and keys that are NaN for some sessions
(where the ranking gives way to the scan while they wait). Holds of one pool and of two,
nested holds, pools that preempt (a preempted hold re-enters at the head), a step
engine's `admit via` queue. Each program runs ranked and scanned, on the generated code
and on the interpreter; the four reports must be equal to the last bit."""

from __future__ import annotations

import random

import pytest

import serq
from serq.sim import ranked_queue
from serq.sim.api import python_source

KEYS = [
    "prio",
    "-prio",
    "serial",
    "-serial",
    "u",
    "-u",
    "0",
    "-0",
    "prio > 1 ? inf : -inf",
    "prio / (u - 1)",  # inf, -inf, and NaN where prio is 0 and u is 1
    "0 * u / (prio - 1)",  # NaN for the sessions of prio 1
    "floor(u * 2.5) / 2",
    "turn_no",
    "min(prio, 0.5) - serial * 1e-3",
]


def _program(seed: int) -> str:
    rng = random.Random(seed)
    keys = ", ".join(rng.choice(KEYS) for _ in range(rng.randint(1, 3)))
    shape = rng.choice(["one", "two", "nested", "preempt", "step"])
    rate = rng.choice(["1.4", "2", "3"])
    head = [
        "stage gpu : fifo(2);",
        "stage think : delay;",
    ]
    body = [
        "  set prio = floor(~uniform(0, 3));",
        f"  set u = {rng.choice(['1', '0.5', '2'])} * floor(~uniform(0, 3));",
    ]
    if shape == "one":
        head.insert(0, f"pool slots {{ cap {rng.choice(['2', '3.5'])}; queue by ({keys}); }}")
        body.append("  hold slots (1) { run gpu (~exp(1)); }")
    elif shape == "two":
        head.insert(0, f"pool slots {{ cap 2; queue by ({keys}); }}")
        head.insert(1, "pool mem { cap 5; }")
        body.append("  hold slots (1), mem (u + 0.5) { run gpu (~exp(1)); }")
    elif shape == "nested":
        head.insert(0, f"pool slots {{ cap 2; queue by ({keys}); }}")
        head.insert(1, f"pool mem {{ cap 3; queue by ({rng.choice(KEYS)}); }}")
        body.append(
            "  hold slots (1) { run think (~exp(0.2)); hold mem (1 + u) { run gpu (~exp(1)); } }"
        )
    elif shape == "preempt":
        head.insert(0, f"pool kv {{ cap 12; block 1; preempt lifo; queue by ({keys}); }}")
        body.append(
            "  hold kv (2) reserve (5 + u) { grow kv (1 + u); run gpu (~exp(1)); grow kv (2); }"
        )
    else:
        head = [
            f"pool reqs {{ cap 4; admit via E; queue by ({keys}); }}",
            "pool kv { cap 96; block 8; evict lru; preempt lifo; }",
            "stage E : step { budget 32; chunk 16; cost 0.01 + 0.0005 * tokens; memory kv; }",
            "stage think : delay;",
        ]
        body.append(
            "  hold reqs (1), kv (min(20 + 8 * prio, budget_left(E))) reserve (20 + 8 * prio) "
            "{ run E prefill (20 + 8 * prio) growing kv; run E decode (4 + 3 * u) growing kv; }"
        )
    lines = [
        *head,
        "workload {",
        f"  arrive poisson({rate});",
        "}",
        "session {",
        *body,
        "}",
        f"run {{ horizon {rng.choice([30, 60])}; warmup 0; seed {seed}; }}",
    ]
    return "\n".join(lines) + "\n"


def _report(path: str, codegen: bool) -> str:
    """The report, or the error that stopped the run (a livelock of preemptions, say)."""
    try:
        return serq.run(serq.compile(path, codegen=codegen)).json()
    except ValueError as error:
        return str(error)


@pytest.mark.parametrize("seed", range(40))
def test_a_ranked_queue_admits_what_the_scan_admits(seed, tmp_path, monkeypatch):
    path = tmp_path / f"queue_{seed}.sq"
    path.write_text(_program(seed), encoding="utf-8")
    ranked = [_report(str(path), codegen) for codegen in (True, False)]
    monkeypatch.setattr(ranked_queue, "steady", lambda keys, attrs: False)
    scanned = [_report(str(path), codegen) for codegen in (True, False)]
    assert ranked == scanned
    assert ranked[0] == ranked[1]


@pytest.mark.parametrize(
    ("key", "ranked"),
    [
        ("prio", True),
        ("-prio, serial", True),
        ("turn_no, 0", True),
        ("waited", False),  # grows while the hold waits
        ("prio * now", False),
        ("used(slots)", False),
        ("cached", False),  # the scheduler sets it
        ("computed", False),
    ],
)
def test_which_keys_rank(key, ranked):
    source = f"""pool slots {{ cap 1; block 1; evict lru; queue by ({key}); }}
stage s : fifo(1);
workload {{ arrive poisson(1); }}
session {{ set prio = serial; hold slots (1) {{ run s (1); }} cache (1); }}
run {{ horizon 5; }}
"""
    program = serq.compile(source=source).program
    pool = program.pools[0]
    assert ranked_queue.steady(pool.queue.keys, program.attrs) is ranked


@pytest.mark.parametrize(("key", "at_once"), [("prio, -serial", True), ("used(slots)", False)])
def test_an_idle_ranked_pool_admits_where_it_joins(key, at_once):
    """A hold whose pool is ranked is admitted where it joins when nobody waits anywhere
    (as an unordered pool's is), and its queue is tested through `joined`; keys that read
    live state are read again at each admission, so such a hold always goes through the
    queue. Both give the interpreter's report."""
    source = f"""pool slots {{ cap 2; queue by ({key}); }}
stage s : delay;
workload {{ arrive poisson(1.5); }}
session {{ set prio = floor(~uniform(0, 3)); hold slots (1) {{ run s (~exp(1)); }} }}
run {{ horizon 200; warmup 0; seed 3; }}
"""
    compiled = serq.compile(source=source)
    code, _ = python_source(compiled)
    assert ("= not _k_ready and not (" in code) is at_once
    assert (".queue.joined" in code) is at_once
    reports = [serq.run(serq.compile(source=source, codegen=c)).json() for c in (True, False)]
    assert reports[0] == reports[1]
