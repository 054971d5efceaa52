"""A family of deterministic pool and stage programs over the whole value range, for the
differential search against pyserq 0.1.2 (`scripts/search_step.py --family pools`) and
its CI sample (`test_pool_family.py`).

No step engine: sessions of a batch or of a constant stream (`arrive renewal(g)`, a gap
of a constant or `~det`) make one or more turns of a hold on a pool (two nested pools
at times, one of them a spill tier's source) around runs on fifo(c), ps(φ) and delay
stages. Every constant is drawn from the domain the grammar admits, not only the
comfortable middle: caps of 1, fractions and inf; blocks of 1, 4, 16 and 2.5; every
eviction key (size, age, last, signed, in pairs); `preempt lifo` and `none`; queues
fifo and by keys; units, reserves, reuses and caches of 0, fractions, whole numbers, inf
and expressions reading used, free, cachedin, holders and queued; growth by 0 and by
fractions; ps capacities constant, fractional and reading present; runs of zero and
fractional work. Everything is deterministic, so the two must agree exactly.
"""

from __future__ import annotations

import random

from step_family import ternary  # the per-session constants, written as the step family's

CAPS = ("1", "2", "3.5", "4", "6", "8", "10", "16", "inf", "2.5 * 4")
BLOCKS = ("", "", "", "block 1;", "block 4;", "block 16;", "block 2.5;")
EVICTS = (
    "",
    "evict lru;",
    "evict lru;",
    "evict by (size);",
    "evict by (-size);",
    "evict by (age);",
    "evict by (last);",
    "evict by (-last);",
    "evict by (-size, age);",
    "evict by (size, -last);",
)
PREEMPTS = ("", "preempt lifo;", "preempt lifo;", "preempt none;")
QUEUES = (
    "",
    "",
    "queue fifo;",
    "queue by (serial);",
    "queue by (-serial);",
    "queue by (-need, serial);",
)
STAGES = (
    "fifo(1)",
    "fifo(2)",
    "fifo(3)",
    "ps(1)",
    "ps(2)",
    "ps(0.5)",
    "ps(min(present, 2))",
    "ps(0.5 * present + 1)",
    "delay",
)
UNITS = (
    "0",
    "0.5",
    "1",
    "1",
    "2",
    "3",
    "4.5",
    "need",
    "need",
    "free(m) > 2 ? 2 : 1",
    "min(2, 1 + cachedin(m))",
    "1 + holders(m)",
    "queued(m) + 1",
    "used(m) / 2 + 1",
)
RESERVES = (
    "",
    "",
    "",
    " reserve (0)",
    " reserve (need + 1)",
    " reserve (2.5)",
    " reserve (need + queued(m))",
)
REUSES = (
    "",
    "",
    "",
    " reuse (0)",
    " reuse (1)",
    " reuse (0.5)",
    " reuse (cachedin(m))",
    " reuse (need)",
)
CACHES = (
    "",
    " cache (0)",
    " cache (0.5)",
    " cache (need)",
    " cache (need)",
    " cache (need + 1)",
    " cache (inf)",
    " cache (cached + 1)",
    " cache (free(m) / 2)",
)
WORKS = ("0", "0.5", "1", "1", "2.5", "0.25 * serial + 0.5", "~det(1.5)", "need / 2")
GROWS = ("0", "0.5", "1", "2", "need")
NEEDS = ("0", "0.5", "1", "2", "3", "4", "2.5", "6")
GAPS = ("0", "0.5", "1", "0.25", "3")


def program(k: int, dialect: str = "items") -> str:
    """The k-th program of the family, from `random.Random(k)` alone, in pyserq 0.1.2's
    dialect (top-level items with a `run` block; the family has no `fn main` form)."""
    if dialect != "items":
        raise ValueError("the pool family is written in the items dialect only")
    r = random.Random(1_000_003 * k + 17)
    n = r.randint(1, 6)
    spill = r.random() < 0.25
    nested = r.random() < 0.3
    renewal = r.random() < 0.25
    m_opts = [
        f"cap {r.choice(CAPS)};",
        r.choice(BLOCKS),
        r.choice(EVICTS),
        r.choice(PREEMPTS),
        r.choice(QUEUES),
    ]
    tier = []
    if spill:
        when = r.choice(("1 == 1", "age >= 1", "size >= 2", "last > 0.5"))
        m_opts.append(
            f"spill t via link ({r.choice(('0', '0.5', 'size / 4', '1'))}) when ({when});"
        )
        tier = [
            f"pool t {{ cap {r.choice(('2', '4', '6.5', 'inf'))}; {r.choice(('evict lru;', 'evict by (age);', ''))} }}"
        ]
    decls = [f"pool m {{ {' '.join(o for o in m_opts if o)} }}", *tier]
    if nested:
        decls.append(
            f"pool p {{ cap {r.choice(('1', '2', '3', '4.5', 'inf'))}; {r.choice(PREEMPTS)} {r.choice(QUEUES)} }}"
        )
    decls += [f"stage work : {r.choice(STAGES)};", "stage gate : delay;"]
    if spill:
        decls.append(f"stage link : {r.choice(('fifo(1)', 'delay', 'ps(1)'))};")
    units = r.choice(UNITS)
    cache = r.choice(CACHES)  # without one a hold consumes nothing: no reuse, no cached
    reuse = r.choice(REUSES) if cache else ""
    hold = f"hold m ({units}){r.choice(RESERVES)}{reuse} {{"
    body = [
        "  observe hit = cached;" if cache else "  observe hit = cachedin(m);",
        "  observe wait = now - asked;",
        f"  run work ({r.choice(WORKS)});",
    ]
    if r.random() < 0.35:
        body += [f"  grow m ({r.choice(GROWS)});", "  observe grown = now;"]
    if nested:
        body += [
            f"  hold p ({r.choice(('1', '0.5', '0', 'holders(p) + 1', 'free(p) > 1 ? 2 : 1'))}) {{",
            f"    run work ({r.choice(WORKS)});",
            f"  }}{r.choice(('', ' cache (1)', ' cache (0.5)'))};",
        ]
    body.append(f"  run gate ({r.choice(('0', '0.5', '1'))});")
    turn = [hold, *body, f"}}{cache};", "observe in = cachedin(m);", "observe held = used(m);"]
    if spill:
        turn.append("observe tier = cachedin(t);")
    turns = r.choice((1, 1, 2, 3))
    think = r.choice(("0", "0.5", "2"))
    needs = [r.choice(NEEDS) for _ in range(n)]
    arrive = (
        f"arrive renewal({r.choice(('1', '0.5', '~det(2)', '1.5'))});"
        if renewal
        else f"arrive batch({n});"
    )
    horizon = r.choice(("12", "30")) if renewal else "60"
    lines = [
        f"// pool family program {k}",
        *decls,
        "",
        f"workload {{ {arrive} }}",
        "",
        "session {",
        f"  set need = {ternary(needs)};",
        f"  set left = {turns};",
        f"  run gate ({r.choice(GAPS)} * serial);",
        "  loop {",
        "    set asked = now;",
        *["    " + x for x in turn],
        "    set left = left - 1;",
        "    branch (left <= 0) { end; }",
        f"    run gate ({think});",
        "  }",
        "}",
        "",
        f"run {{ horizon {horizon}; warmup 0; seed 1; }}",
        "",
    ]
    return "\n".join(lines)
