"""A family of random programs for the compiled event path against the interpreter.

The generated code of `serq.sim.compiled` (its event loop, its stage templates, its
inline holds and sessions) must give the interpreter's report to the last bit. This
family draws programs over what that code writes differently from the interpreter:
fifo(c), delay and ps stages (single, and arrays run with a computed index or chosen
with `choose`), plain holds of one or two pools (the inline holds), with a `reserve` at
times, and of pool arrays' members (constant, computed, or chosen by `choose` as a router
does), several holds of one
pool, holds nested in holds of other pools, `end;` inside holds, `release` inside holds
(of a pool the hold holds, once or twice, or of an enclosing hold's), rejections (units above
the cap), units that read the clock, the state and draws, loops and branches around
runs and holds, turns with the workload's blocks, gauges and observables of pools and
stages, every arrival kind and an `arrivals` limit, and runs of zero, negative and NaN
work. Constants come from the whole domain: 0, fractions, inf, negatives where they are
errors. Random draws are fine: both paths draw from the same streams.

`program(k)` is the k-th program (seeded by k). `scripts/search_step.py --family paths
--against interpreter` runs a range of them; `tests/sim/test_paths_family.py` a sample.
"""

from __future__ import annotations

import random

CAPS = ("0", "1", "2", "3", "2.5", "4", "8", "inf", "0.5", "16", "40")
POOL_OPTIONS = (
    "",
    "",
    "block 1;",
    "block 4;",
    "block 0.5;",
    "evict lru;",
    "evict by (size);",
    "evict by (-age, size);",
    "evict by (waiting, last);",
    "queue by (serial);",
    "queue by (-x, serial);",
    "queue by (waited);",
)
CACHES = ("", "", " cache (u)", " cache (x)", " cache (inf)", " cache (0)", " cache (2.5)")
REUSES = (
    "",
    "",
    " reuse (x)",
    " reuse (1)",
    " reuse (0)",
    " reuse (inf)",
    " reuse (-1)",
    " reuse (0 / (u - u))",  # NaN: an error where the hold is admitted, on both paths
)
STAGE_KINDS = (
    "fifo(1)",
    "fifo(1)",
    "fifo(2)",
    "fifo(3)",
    "delay",
    "ps(1)",
    "ps(2)",
    "ps(0.5)",
    "ps(min(present, 2))",
    "ps(1 + 0.5 * present)",
)
WORKS = (
    "~exp(1)",
    "~exp(0.5)",
    "~uniform(0, 2)",
    "~erlang(2, 1)",
    "~h2(1, 4)",
    "~det(1)",
    "0.5",
    "2",
    "0",
    "~bernoulli(0.5)",
    "x",
    "x + 1",
    "max(0, x - 1)",
)
UNITS = (
    "1",
    "1",
    "2",
    "0",
    "0.5",
    "x",
    "1 + floor(~uniform(0, 3))",
    "now > 50 ? 1 : 2",
    "free({p}) > 1 ? 1 : 0.5",
    "holders({p}) + 1",
    "1 + cachedin({p})",
    "min(4, 1 + cachedin({p}))",
    "queued({p}) > 2 ? 2 : 1",
    "used({p}) / 4 + 1",
)
ARRIVALS = (
    "arrive poisson(0.8);",
    "arrive poisson(2);",
    "arrive renewal(1);",
    "arrive renewal(~exp(1.5));",
    "arrive renewal(~uniform(0.5, 1.5));",
    "arrive closed(3);",
    "arrive closed(1);",
    "arrive batch(5);",
    "arrive batch(1);",
)
EXPRS = (
    "now",
    "now - t0",
    "x",
    "queue({s})",
    "busy({s})",
    "work({s})",
    "used({p})",
    "free({p})",
    "holders({p})",
    "queued({p})",
    "cachedin({p})",
    "turn_no",
    "serial",
    "now - t0 > 2",
)


class _Gen:
    def __init__(self, k: int) -> None:
        self.r = random.Random(k)
        # pool arrays and their indices are drawn from a stream of their own, so that the
        # programs drawn before pool arrays joined the family keep their shape
        self.ar = random.Random(k + 1_000_003)
        # and so are the `release` statements, which joined later still
        self.rr = random.Random(k + 2_000_003)
        self.stages: list[tuple[str, int | None]] = []  # name, array size
        self.pools: list[str] = []
        self.sizes: dict[str, int | None] = {}  # a pool's array size (None: one pool)
        self.depth = 0
        self.outer: list[str] = []  # the pools the enclosing holds take, as they write them
        self.loops = 0
        self.obs = 0

    def pick(self, items):
        return self.r.choice(items)

    def stage_ref(self) -> str:
        name, size = self.pick(self.stages)
        if size is None:
            return name
        index = self.pick(
            (
                f"{self.r.randrange(size)}",
                f"min(x, {size - 1})",
                f"floor(~uniform(0, {size}))",
                "serial - 2 * floor(serial / 2)",
                "x",  # out of range at times: the run fails, on both paths alike
            )
        )
        return f"{name}[{index}]"

    def pool(self) -> str:
        return self.ref(self.pick(self.pools))

    def reserve(self) -> str:
        """A `reserve` clause at times: room the hold waits for beyond its units (0,
        fractions, inf, an attribute; a negative one is an error on both paths)."""
        if self.ar.random() < 0.7:
            return ""
        held = f"holders({self.ref(self.pools[0])})"
        return f" reserve ({self.ar.choice(('0', '2', '2.5', 'inf', 'u + 1', 'x', '-1', held))})"

    def ref(self, name: str) -> str:
        """Pool `name`, or a member of it with a constant or computed index (computed
        ones are resolved where a hold joins; stage indices test the ones out of range)."""
        size = self.sizes.get(name)
        if size is None:
            return name
        index = self.ar.choice(
            (
                f"{self.ar.randrange(size)}",
                f"{self.ar.randrange(size)}",
                f"floor(~uniform(0, {size}))",
                "serial - 2 * floor(serial / 2)",
                f"min(floor(x), {size - 1})",
                f"min(floor(x), {size - 1})",
            )
        )
        return f"{name}[{index}]"

    def expr(self) -> str:
        e = self.pick(EXPRS)
        if "{s}" in e:
            name, size = self.pick(self.stages)
            e = e.format(s=name if size is None else f"{name}[0]")
        if "{p}" in e:
            if not self.pools:
                return "now"
            e = e.format(p=self.pool())
        return e

    def run(self) -> str:
        work = self.pick(WORKS)
        return f"run {self.stage_ref()} ({work});"

    def block(self, n: int) -> list[str]:
        out = []
        for _ in range(n):
            out += self.stmt()
        return out

    def stmt(self) -> list[str]:
        r = self.r
        choices = ["run", "run", "run", "set", "observe"]
        if self.pools and self.depth < 3:
            choices += ["hold", "hold", "hold"]
        if self.depth < 3:
            choices += ["branch", "branch_with"]
        if self.depth < 2 and self.loops < 1:
            choices.append("loop")
        if self.depth > 0:
            choices.append("end")
        if self.pools:
            choices.append("drop")
        choices.append("choose")
        kind = r.choice(choices)
        if kind == "run":
            return [self.run()]
        if kind == "set":
            return [f"set x = {self.pick(('~exp(1)', 'x + 1', 'floor(~uniform(0, 3))', 'now - t0', '0.5'))};"]
        if kind == "observe":
            self.obs += 1
            return [f"observe o{self.obs} = {self.expr()};"]
        if kind == "choose":
            arrays = [p for p in self.pools if self.sizes.get(p)]
            if arrays and self.depth < 3 and self.ar.random() < 0.5:  # routing: pick, hold
                name = self.ar.choice(arrays)
                size = self.sizes[name]
                keys = self.ar.choice(
                    (
                        f"queued({name}[j]) + holders({name}[j]), used({name}[j])",
                        f"-cachedin({name}[j]), queued({name}[j])",
                        f"free({name}[j])",
                    )
                )
                self.depth += 1
                body = self.block(r.randint(1, 2))
                self.depth -= 1
                units = self.pick(UNITS).format(p=f"{name}[j]")
                cache = self.ar.choice(("", " cache (u)", " cache (2.5)"))
                if cache:
                    body = ["set u = cached + 1;", *body]
                return [
                    f"choose j in {size} by ({keys});",
                    f"hold {name}[j] ({units}) {{",
                    *("  " + s for s in body),
                    f"}}{cache};",
                ]
            name, size = self.pick(self.stages)
            if size is None:
                return [f"choose j in 2 by ({self.pick(('x', 'now', '-serial', 'j'))});"]
            return [f"choose j in {size} by (queue({name}[j]), busy({name}[j]));"]
        if kind == "end":
            return ["branch with (0.2) {", "  end;", "}"]
        if kind == "drop":
            return [f"drop {self.pool()};"]
        if kind in ("branch", "branch_with"):
            self.depth += 1
            then = self.block(r.randint(1, 2))
            other = self.block(r.randint(0, 2))
            self.depth -= 1
            head = (
                f"branch with ({self.pick(('0.5', '0.1', '0', '1', '0.9'))})"
                if kind == "branch_with"
                else f"branch ({self.pick(('x > 1', 'serial - 2 * floor(serial / 2) == 0', 'now > 20', 'turn_no >= 2'))})"
            )
            return [f"{head} {{", *("  " + s for s in then), "} else {", *("  " + s for s in other), "}"]
        if kind == "loop":
            self.depth += 1
            self.loops += 1
            body = self.block(r.randint(1, 3))
            self.depth -= 1
            return [
                "loop {",
                *("  " + s for s in body),
                "  set n = n + 1;",
                f"  branch (n >= {r.randint(1, 4)}) {{",
                "    set n = 0;",
                "    end;",
                "  }",
                *(["  run think (~exp(1));"] if r.random() < 0.7 else []),
                "}",
            ]
        # hold
        pools = self.pools[:]
        r.shuffle(pools)
        held = [self.ref(p) for p in pools[: self.pick((1, 1, 2))]]
        parts = ", ".join(f"{p} ({self.pick(UNITS).format(p=p)}){self.reserve()}" for p in held)
        cache = self.pick(CACHES)
        reuse = self.pick(REUSES) if cache else ""
        self.depth += 1
        outer = self.outer
        self.outer = outer + held
        body = self.block(r.randint(1, 3))
        self.outer = outer
        self.depth -= 1
        if cache:  # `cached` is read only where the hold consumes
            body = ["set u = cached + 1;", *body]
        for _ in range(self.rr.choice((0, 0, 1, 1, 2))):  # give a part back early
            # this hold's part, or an enclosing hold's (a release outside every hold of
            # its pool, in a program that leases none, does not link: NOTES.md §24)
            target = self.rr.choice(held + held + (outer or held))
            body.insert(self.rr.randint(0, len(body)), f"release {target};")
        return [f"hold {parts}{reuse} {{", *("  " + s for s in body), f"}}{cache};"]


def program(k: int, dialect: str = "items") -> str:
    """The k-th program of the family (`dialect` is accepted for the search script)."""
    g = _Gen(k)
    r = g.r
    lines = []
    for i in range(r.randint(0, 3)):
        name = f"p{i}"
        g.pools.append(name)
        options = " ".join(r.sample(POOL_OPTIONS, r.randint(0, 2)))
        if "evict" in options and options.count("evict") > 1:
            options = ""
        size = g.sizes[name] = g.ar.choice((None, None, 2, 3))
        decl = f"pool {name}[{size}]" if size else f"pool {name}"
        lines.append(f"{decl} {{ cap {g.pick(CAPS)}; {options} }}")
    for i in range(r.randint(1, 3)):
        size = g.pick((None, None, None, 2, 3))
        name = f"s{i}"
        g.stages.append((name, size))
        decl = f"stage {name}[{size}]" if size else f"stage {name}"
        lines.append(f"{decl} : {g.pick(STAGE_KINDS)};")
    lines.append("stage think : delay;")
    turns = r.random() < 0.3
    arrival = g.pick(ARRIVALS)
    lines += [
        "workload {",
        f"  {arrival}",
        "  init {",
        "    set t0 = now;",
        "    set x = ~exp(1);",
        "    set n = 0;",
        "    set u = 1;",
        "  }",
    ]
    if turns:
        lines += ["  turn {", "    set x = ~uniform(0, 3);", "  }"]
    lines.append("}")
    body = g.block(r.randint(2, 5))
    if turns:
        body = ["turn;", *body, "turn;", *g.block(r.randint(1, 2))]
    lines += ["session {", *("  " + s for s in body), "  observe sojourn = now - t0;", "}"]
    for i in range(r.randint(0, 2)):
        e = g.expr()
        if "~" in e:  # a gauge may not draw: a member's index drawn for a session
            e = "1"
        if any(w in e for w in ("now", "x", "t0", "cached", "turn_no", "serial", "work")):
            e = "1"
        lines.append(f"gauge g{i} = {e};")
    horizon = g.pick(("60", "120", "200"))
    limit = ""
    if "poisson" in arrival or "renewal" in arrival:
        if r.random() < 0.15:
            limit = f" arrivals {r.randint(5, 40)};"
            horizon = "100000"
    lines.append(f"run {{ horizon {horizon}; warmup {g.pick(('0', '5', '10'))}; seed {k};{limit} }}")
    return "\n".join(lines) + "\n"
