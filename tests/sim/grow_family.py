"""A family of random programs that `grow` their holds, for the generated code against the
interpreter.

The generated code writes a `grow` of a hold it writes inline (`serq.sim.compiled`,
`compiled_holds.grow`): the growth taken at once when it fits, else the session waits
among the pool's growers until `Holds.try_growers` grows it. This family draws programs
around that: growths that fit, that wait (small caps, busy pools), that preempt (`preempt
lifo`, which keeps the program on the interpreter's holds), growths of 0, fractions,
inf, negatives and NaN (errors), of pools with a block, a cache clause, queue keys and a
`reserve`, grows of the outer hold from inside an inner one, of both parts of a hold of
two pools, inside `loop` and `branch`, after a `release` of the part, of a pool no hold
around holds, of a member of a pool array, and `end;` while grown. `program(k)` is the
k-th program (seeded by k).
"""

from __future__ import annotations

import random

CAPS = ("0", "1", "2.5", "4", "6", "8", "12", "16", "24", "inf")
OPTIONS = (
    "",
    "",
    "",
    "block 1;",
    "block 0.5;",
    "block 2;",
    "evict lru;",
    "block 1; evict lru;",
    "queue by (-x);",
    "preempt lifo;",
)
AMOUNTS = (
    "1",
    "1",
    "2",
    "0.5",
    "0",
    "2.5",
    "x",
    "~exp(1)",
    "~uniform(0, 3)",
    "floor(x)",
    "0.25",
    "3",
)
BAD_AMOUNTS = ("inf", "-1", "0 / (x - x)")  # errors, but under a cap of inf
UNITS = ("1", "1", "0.5", "0", "2", "x", "1.5")
WORKS = ("~exp(1)", "~exp(0.5)", "0.5", "~uniform(0, 2)", "0", "x")
RATES = ("0.5", "1.5", "3")


def _form(r: random.Random) -> str:
    """One hold (or a few statements) that grows."""

    def a() -> str:
        return r.choice(BAD_AMOUNTS) if r.random() < 0.04 else r.choice(AMOUNTS)

    def u() -> str:
        return r.choice(UNITS)

    def w() -> str:
        return r.choice(WORKS)

    cache = r.choice(("", "", " cache (x)", " cache (inf)"))
    reserve = r.choice(("", "", "", " reserve (3)", " reserve (x)"))
    forms = [
        # grow between two runs (bench/wide/hold_grow.sq)
        f"hold p0 ({u()}){reserve} {{ run f ({w()}); grow p0 ({a()}); run f ({w()}); }}{cache};",
        # a decode loop that grows a block at a time, ending inside the hold
        f"set n = 0; hold p0 ({u()}) {{ loop {{ run f ({w()}); grow p0 ({a()}); "
        f"set n = n + 1; branch (n >= {r.choice(('1', '3'))}) {{ end; }} }} }}{cache};",
        # the outer hold grown from inside an inner one, then the inner one
        f"hold p0 ({u()}) {{ hold p1 ({u()}) {{ run f ({w()}); grow p0 ({a()}); "
        f"run d ({w()}); grow p1 ({a()}); }} run f ({w()}); }}{cache};",
        # both parts of a hold of two pools
        f"hold p0 ({u()}), p1 ({u()}) {{ grow p1 ({a()}); run f ({w()}); grow p0 ({a()}); "
        f"run d ({w()}); }}{cache};",
        # on one way of a branch, then `end;` while grown on one way
        f"hold p0 ({u()}) {{ branch with (0.5) {{ grow p0 ({a()}); }} run f ({w()}); "
        f"branch with (0.3) {{ end; }} grow p0 ({a()}); }}{cache};",
        # twice in a row
        f"hold p0 ({u()}) {{ grow p0 ({a()}); grow p0 ({a()}); run f ({w()}); }}{cache};",
        # after the part was given back: no hold around holds it (an error)
        f"hold p0 ({u()}) {{ run f ({w()}); release p0; grow p0 ({a()}); }};",
        # of a pool no hold around holds (an error), or around it
        f"hold p1 ({u()}) {{ hold p0 ({u()}) {{ grow p1 ({a()}); run f ({w()}); }} }};",
        f"hold p0 ({u()}) {{ run f ({w()}); grow p1 ({a()}); }};",
        # a member of a pool array, named by a constant or a computed index
        f"hold q[1] ({u()}) {{ run f ({w()}); grow q[1] ({a()}); run d ({w()}); }};",
        f"set i = floor(~uniform(0, 2)); hold q[i] ({u()}) {{ grow q[i] ({a()}); "
        f"run f ({w()}); }};",
        # a grow of zero, then the hold's own end
        f"hold p1 ({u()}) {{ grow p1 (0); run d ({w()}); grow p1 ({a()}); }};",
    ]
    weights = [4, 3, 3, 2, 2, 2, 1, 1, 1, 2, 1, 1]
    return r.choices(forms, weights)[0]


def program(k: int) -> str:
    """The k-th program of the family."""
    r = random.Random(k)
    pools = []
    for name in ("p0", "p1"):
        pools.append(f"pool {name} {{ cap {r.choice(CAPS)}; {r.choice(OPTIONS)} }}")
    pools.append(f"pool q[2] {{ cap {r.choice(CAPS)}; {r.choice(OPTIONS[:6])} }}")
    if r.random() < 0.3:
        workload = f"workload {{ arrive closed({r.choice(('1', '3', '8'))}); }}"
    else:
        workload = f"workload {{ arrive poisson({r.choice(RATES)}); }}"
    session = ["set arrived = now;", "set x = ~uniform(0, 3);"]
    for _ in range(r.choice((1, 1, 2))):
        session.append(_form(r))
    session.append("observe sojourn = now - arrived;")
    if r.random() < 0.3:
        gauges = "gauge used0 = used(p0);\ngauge waiting0 = queued(p0);\n"
    else:
        gauges = ""
    return (
        "\n".join(pools)
        + f"\nstage f : fifo({r.choice(('1', '2'))});\nstage d : delay;\n"
        + workload
        + "\n"
        + gauges
        + "session {\n  "
        + "\n  ".join(session)
        + "\n}\nrun { horizon 150; warmup 10; seed "
        + str(k % 7 + 1)
        + "; }\n"
    )
