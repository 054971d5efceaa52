"""Random programs of the straight loop's shapes and their near variants, written as users
write them: one fifo(c), ps(constant) or ps(f(present)) stage, an `init` block or none,
`set`s and `observe`s around one run, a trailing `end;` (or one before dead code), the
stage's estimates and observables read, gauges (none to three, level gauges or others),
Poisson or renewal arrivals, an `arrivals` limit or none;
constants drawn from the whole domain the grammar admits (0, negative works, fractions,
inf capacities). Some fall off the straight loop's shapes (two runs, a capacity that reads
the clock), so that the test also checks where it declines.

`program(seed)` gives one program's text; tests/sim/test_straight_family.py runs each on
the straight loop, with it switched off, and on the interpreter, and compares.
"""

from __future__ import annotations

import random

CAPACITIES = (
    "1",
    "0.5",
    "2",
    "inf",
    "min(present, 3)",
    "min(present, 2) * 0.75 + 0.25",
    "present > 4 ? 2 : 1",
    "sqrt(present)",
    "floor(present / 2) + 0.5",
    "3 - present",  # not positive from 3 jobs on: E-run, the same on every path
    "now < 50 ? 1 : 2",  # reads the clock: not the straight loop's
)

WORKS = (
    "~exp(1)",
    "~exp(0.8)",
    "~h2(1, 4)",
    "~uniform(0, 2)",
    "~erlang(2, 0.9)",
    "1",
    "0",
    "-1",
    "0.5",
    "~uniform(0, 1) < 0.2 ? 0 : ~exp(1)",
    "~uniform(0, 1) < 0.05 ? -0 : ~exp(1) * scale",
    "serial == 3 ? inf : ~exp(1)",  # a job of infinite work: W-stall, on every path
    "serial == 3 || serial == 6 ? inf : 0.5",  # two of them, at a fifo(c): one server each
    "serial == 5 ? inf : ~uniform(0, 1) < 0.5 ? 1 : 2",  # and completions that tie
    "~uniform(0, 1) < 0.5 ? 1 : 2",
)

# a fifo stage's servers: the straight loop keeps the first completion in locals and the
# others (c > 1) in a heap of their own
SERVERS = ("1", "1", "1", "2", "3", "16", "100000000000000000000")

ARRIVALS = (
    "poisson(0.7)",
    "poisson(0.95)",
    "poisson(0.3)",
    "renewal(1)",
    "renewal(~exp(1.25))",
    "renewal(~uniform(0, 1) < 0.5 ? 0.5 : 1.5)",
    "renewal(~h2(1.3, 2))",
)

READS = (
    "now - t0",
    "queue(S)",
    "busy(S)",
    "queue(S) + busy(S)",
    "est_wait(S)",
    "est_rho(S) + est_lambda(S)",
    "price(S, 0.5, 0.25)",
    "scale * 2",
    "serial",
    "~exp(1)",
    "now",
    "-inf < now ? 1 : 0",
)

GAUGES = (
    "queue(S)",
    "queue(S) + busy(S)",
    "busy(S) > 0 ? 1 : 0",
    "busy(S)",
    "-min(queue(S), 3) * 0.5",
    "queue(S) / 2",
    "now",
)


def program(seed: int) -> str:
    """The text of the random program numbered `seed`."""
    rng = random.Random(seed)
    pick = rng.choice
    ps = rng.random() < 0.5
    kind = f"ps({pick(CAPACITIES)})" if ps else f"fifo({pick(SERVERS)})"
    lines = [f"stage S : {kind};", "", "workload {", f"  arrive {pick(ARRIVALS)};"]
    init = []
    if rng.random() < 0.7:
        init.append("set t0 = now;")
    if rng.random() < 0.5:
        init.append(f"set scale = {pick(('1', '0.5', '~uniform(0.5, 1.5)', '2'))};")
    if rng.random() < 0.2:
        init.append(f"observe first = {pick(('now', 'queue(S)', 'est_wait(S)'))};")
    if "t0" not in " ".join(init) and rng.random() < 0.5:
        init.append("set t0 = now;")
    if init:
        lines += ["  init {"] + [f"    {s}" for s in init] + ["  }"]
    lines += ["}", "", "session {"]
    has_scale = any("scale" in s for s in init)
    has_t0 = any("t0" in s for s in init)

    def read() -> str:
        while True:
            r = pick(READS)
            if ("scale" in r and not has_scale) or ("t0" in r and not has_t0):
                continue
            return r

    body = []
    for i in range(rng.randrange(3)):
        body.append(f"observe before{i} = {read()};" if rng.random() < 0.6 else "set x = now;")
    work = pick(WORKS)
    if "scale" in work and not has_scale:
        work = "~exp(1)"
    body.append(f"run S ({work});")
    if rng.random() < 0.1:
        body.append("run S (1);")  # two runs: not the straight loop's
    for i in range(rng.randrange(1, 4)):
        body.append(f"observe after{i} = {read()};")
    ending = rng.random()
    if ending < 0.4:
        body.append("end;")
    elif ending < 0.5:
        body += ["end;", "run S (1);", "observe never = now;"]
    lines += [f"  {s}" for s in body] + ["}", ""]
    for i in range(pick((0, 0, 0, 1, 1, 2, 3))):  # level gauges or others, several
        lines.append(f"gauge g{i} = {pick(GAUGES)};")
    horizon = pick(("300", "800", "1500.5"))
    warmup = pick(("0", "10", "100", "0.5"))
    limit = ""
    if rng.random() < 0.3:  # an `arrivals` limit: drains, or fails to
        limit = f" arrivals {pick(('1', '5', '200', '400', '2000'))};"
        if rng.random() < 0.3:  # the drain alone ends the run
            horizon = "inf"
    seed_ = rng.randrange(1, 9)
    lines.append(f"run {{ horizon {horizon}; warmup {warmup}; seed {seed_};{limit} }}")
    return "\n".join(lines) + "\n"
