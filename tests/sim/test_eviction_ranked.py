"""Keyed eviction ranked once per eviction (`Cache._ranked`) picks the victims the scan
of every entry before every block picks (`Cache._victim`), on a seeded family of
programs whose keys read the entries' context (`size`, `age`, `last`, `waiting`), the
owner's attributes and constants from the whole domain: 0, -0, negatives, inf,
fractions, and keys that are NaN for some entries (0/0), where the ranking gives way to
the scan. Blocks whole and fractional, with and without a spill, on one pool member and
on a pool array. Each program runs twice, ranked and with every eviction scanned, and
the two reports must be equal to the last bit. Keys that never rise as an entry shrinks
(`size`, `2 * size - age`, a hoisted price at least 0 times `size`) keep the victim
without weighing it again after each block (`eviction_keys.rising`): the same victims."""

from __future__ import annotations

import random

import pytest

import serq
from serq.ir import arith
from serq.sim import eviction_keys

KEYS = [
    "size",
    "-size",
    "age",
    "-age",
    "last",
    "-last",
    "waiting",
    "u",
    "-u",
    "0",
    "-0",
    "size > 3 ? inf : -inf",
    "(size - 2) / age",  # NaN where an entry of 2 units is keyed at its release
    "0 * age / age",  # NaN at age 0, else 0: the scan decides those instants
    "size * 0.1 + age * 0.25",
    "floor(size / 3)",
    "-0.5 * waiting + u",
    "min(size, 2.5)",
    "price(gpu, 0.5, 0.5) * size",  # a hoisted factor at least 0: the victim kept
    "size * price(gpu, 0.1, -3)",  # a factor the run finds below 0: weighed again
    "2 * size - age",
    "-(0.5 - size) / 4 + u",
    "max(size, u) - -0",
    "size * -0.5",
]


def _program(seed: int) -> str:
    rng = random.Random(seed)
    keys = ", ".join(rng.choice(KEYS) for _ in range(rng.randint(1, 3)))
    block = rng.choice(["1", "2", "0.5", "1.5"])
    cap = rng.choice(["24", "40", "37.5", "64"])
    spill = rng.random() < 0.4
    members = rng.choice([1, 1, 2])
    kv = "kv" if members == 1 else "kv[floor(~uniform(0, 2))]"
    decl = "pool kv" if members == 1 else f"pool kv[{members}]"
    lines = [
        "pool host { cap 200; block 1; evict lru; }" if spill else "",
        f"{decl} {{ cap {cap}; block {block}; evict by ({keys});"
        + (" spill host via link (size / 16) when (age >= 1); }" if spill else " }"),
        "stage link : fifo(1);" if spill else "",
        "stage gpu : ps(4);",
        "stage think : delay;",
        "workload {",
        f"  arrive closed({rng.choice([6, 12, 20])});",
        "}",
        "session {",
        f"  set u = {rng.choice(['2', '3.5', '1'])} + floor(~uniform(0, 6));",
        "  loop {",
        "    run think (~exp(1.5));",
        f"    hold {kv} (u + 1) reuse (u) {{ observe hit = cached; run gpu (~exp(0.4)); }} "
        f"cache (u + {rng.choice(['0', '1', '0.5'])});",
        "    set u = u + floor(~uniform(0, 3));",
        "  }",
        "}",
        f"run {{ horizon {rng.choice([40, 80])}; warmup 0; seed {seed}; }}",
    ]
    return "\n".join(line for line in lines if line) + "\n"


def _report(path: str) -> str:
    return serq.run(serq.compile(path)).json()


@pytest.mark.parametrize("seed", range(60))
def test_ranked_eviction_evicts_what_the_scan_evicts(seed, tmp_path, monkeypatch):
    path = tmp_path / f"ranked_{seed}.sq"
    path.write_text(_program(seed), encoding="utf-8")
    ranked = _report(str(path))
    monkeypatch.setattr(eviction_keys, "_steady", lambda key, given: False)
    assert _report(str(path)) == ranked


def test_keys_that_read_a_draw_or_an_observable_are_scanned():
    """A key that draws or reads its own pool's state can change as the eviction goes on:
    those pools keep the scan. A stage's or another pool's state stands still through an
    eviction (worked out once: test_eviction_hoisted.py), so a key reading them is ranked."""
    source = """pool kv {{ cap 8; block 1; evict by ({key}); }}
pool other {{ cap 2; }}
stage s : fifo(1);
workload {{ arrive poisson(1); }}
session {{ hold kv (2) {{ run s (1); }} cache (2); }}
run {{ horizon 5; }}
"""
    for key, steady in [
        ("size", True),
        ("age, -size", True),
        ("~uniform(0, 1)", False),
        ("used(kv)", False),
        ("size + cachedin(kv)", False),
        ("size + cachedin(other)", False),
        ("price(s, 0.1, 0.5) * size", True),
        ("queue(s) + used(other), -age", True),
        ("~uniform(0, 1) * price(s, 0.1, 0.5)", False),
    ]:
        program = serq.compile(source=source.format(key=key)).program
        _, steady_now = eviction_keys.plan(program.pools[0].evict.keys, 0, spill=None)
        assert steady_now is steady, key


def test_an_eviction_keys_the_entries_only_as_often_as_it_needs():
    """Nothing to evict reads no key; one victim is the scan's (every entry keyed once);
    from the second victim on the entries are keyed once more into the heap, and after
    that only the entry a block was taken from. (A pool evicts at every admission, most
    often nothing or one entry: keying every entry for nothing made a run that evicts one
    of a thousand entries at a time five times slower.) Where more than a block is to
    go, which takes two victims at least, the heap is built at once."""
    from serq.sim.cache import Cache
    from serq.sim.core import Engine

    reads = []

    def key(a):
        reads.append(1)
        return 0.0

    cache = Cache(Engine(), [key], block=1.0)
    cache.steady = True
    for _ in range(10):
        cache.put_dead(3.0)  # ten entries of three blocks, all keyed 0: release order
    assert cache.evict_to(30.0) == (0, 0.0) and reads == []
    assert cache.evict_to(29.0) == (0, 1.0) and len(reads) == 10  # the scan
    reads.clear()
    assert cache.evict_to(20.0) == (3, 9.0)
    # nine blocks to go: the heap at once, then one key for each block that leaves its
    # entry with blocks (6 of the 9)
    assert len(reads) == 10 + 6
    reads.clear()
    assert cache.evict_to(19.0) == (0, 1.0) and len(reads) == 7  # one block: the scan


def test_keys_that_never_rise_as_an_entry_shrinks():
    """`eviction_keys.rising`: the keys non-decreasing in `size`, with the hoisted factors
    whose sign the run checks; None where that cannot be shown (a key falling with size,
    a factor of unknown sign, size times size, a division by what reads it)."""
    source = """pool kv {{ cap 8; block 1; evict by ({key}); }}
stage s : fifo(1);
workload {{ arrive poisson(1); }}
session {{ set u = 1; hold kv (2) {{ run s (1); }} cache (2); }}
run {{ horizon 5; }}
"""
    for key, expected in [
        ("size", ()),
        ("age, -age, last, waiting, u", ()),  # no key reads size: each stays as it is
        ("size, -age", ()),
        ("-size", None),
        ("size, -size", None),
        ("2 * size - age", ()),
        ("size * -0.5", None),
        ("-(0 - size)", ()),
        ("size / 4 + u", ()),
        ("size / 0", None),
        ("size / -2", None),
        ("4 / size", None),
        ("size * size", None),
        ("u * size", None),  # an owner's attribute: of unknown sign
        ("floor(size / 16), min(size, 3), max(size, u)", ()),
        ("abs(size)", None),
        ("size > 3 ? 1 : 0", None),
        ("price(s, 0.5, 0.5) * size", ("price(s, 0.5, 0.5)",)),
        ("size * price(s, 0.1, -3) + price(s, 1, 1)", ("price(s, 0.1, -3)",)),
        ("size / price(s, 0.5, 0.5)", None),
    ]:
        program = serq.compile(source=source.format(key=key)).program
        keys = program.pools[0].evict.keys
        parts, steady = eviction_keys.plan(keys, 0, spill=None)
        assert steady, key
        found = eviction_keys.rising(keys, parts)
        if found is not None and expected:  # the hoisted parts, by their text
            found = tuple(_text(parts[i]) for i in found)
        assert found == expected, key


def _text(e) -> str:
    """`price(STAGE, A, B)` of a hoisted price observable."""
    args = ", ".join(f"{arith.fold(a):g}" for a in e.args)
    return f"price(s, {args})"


def test_a_victim_under_keys_that_never_rise_is_weighed_once():
    """Under keys that never rise as an entry shrinks (`Cache.rising`), an eviction keys
    every entry once into the heap and takes each victim's blocks without weighing it
    again; when a hoisted factor it needs at least 0 is below 0, each block's entry is
    weighed again as before (test_an_eviction_keys_the_entries_only_as_often_as_it_needs)."""
    from serq.sim.cache import Cache
    from serq.sim.core import Engine

    for factor, weighed in [(2.0, 10), (0.0, 10), (-1.0, 10 + 6)]:
        reads: list[int] = []

        def key(a, reads=reads):
            reads.append(1)
            return 0.0

        cache = Cache(Engine(), [key], block=1.0)
        cache.steady = True
        cache.hoisted = (lambda a, factor=factor: factor,)
        cache.held = [0.0]
        cache.rising = (0,)
        for _ in range(10):
            cache.put_dead(3.0)
        assert cache.evict_to(21.0) == (3, 9.0)
        assert len(reads) == weighed, factor
