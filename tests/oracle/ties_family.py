"""A family of programs in which many events fall at one instant, for the differential
search against pyserq 0.1.2 (`scripts/search_step.py --family ties`), the compiled event
path against its interpreter (`--against interpreter`, and `--dialect random` there), and
a CI sample (tests/oracle/test_ties_family.py).

It aims at the compiled path's shortcuts where ties decide the order: the next arrival
kept out of the event heap and compared with its top by time, then sequence number; a
plain hold of constant or attribute units admitted where it joins, without the queue;
constant hold units not checked again; `min`/`max` written out (NaN, -0 and inf
operands); `~erlang` and `~h2` of constants written out. Arrivals are deterministic and
land on the instants where stages finish: `renewal` of a constant, `batch(k)`, a closed
population whose sessions think a constant time (at times with an `arrivals` limit).
Works are 0, whole numbers and fractions (dyadic ones, whose sums are exact, and now and
then 0.1 or 1/3, which are not), on fifo(c), ps, delay stages, stage arrays reached by
`choose` on `busy()` and `queued()`, and at times a step engine with its KV pool. Holds
of one or two pools take constant, attribute and expression units, 0 among them, and
rarely inf or -1, which both must refuse alike; sessions loop over `turn`, branch with a
probability of 0 or 1 (or 0.5 in the random dialect), observe `busy()`, `queued()`,
the pools' levels and functions of -0 (`min`, `max`, `ceil`, `floor`, `pow`), and
gauges read them. The warm-up ends at 0, or at an instant where other events fall too.
`program(k)` draws nothing but `~det` and `branch with` of 0 or 1, so that the
reference must agree exactly, on the whole report;
`program(k, "random")` adds `~erlang` and `~h2` of constants and of attributes, Poisson
arrivals and `branch with (0.5)`, for the interpreter only.
"""

from __future__ import annotations

import random

from step_family import ternary  # per-session constants, as the other families write them

CAPS = ("1", "1", "2", "3", "0.5", "1.5", "inf", "0", "4")
POOL_OPTIONS = (
    "",
    "",
    "",
    "queue by (serial);",
    "queue by (-serial);",
    "queue by (need);",  # ties among keys: the order of joining decides
    "queue by (-w, need);",
    "preempt none;",
)
STAGES = (
    "fifo(1)",
    "fifo(1)",
    "fifo(2)",
    "fifo(3)",
    "ps(1)",
    "ps(2)",
    "ps(0.5)",
    "ps(min(present, 2))",
    "ps(max(1, present - 1))",
    "delay",
    "delay",
)
WORKS = (
    "0",
    "0",
    "1",
    "1",
    "2",
    "0.5",
    "0.25",
    "1.5",
    "3",
    "w",
    "w",
    "w + 0.5",
    "~det(1)",
    "min(w, 1)",
    "max(nz, w)",
    "max(w, z)",
    "min(z, 0.5)",
    "0.5 * serial",
    "turn_no",
)
RARE_WORKS = ("0.1", "1 / 3", "0.2 + 0.1", "inf", "-0.5", "max(z, z)")
UNITS = (
    "1",
    "1",
    "0",
    "0.5",
    "2",
    "need",
    "need",
    "min(need, 1)",
    "max(nz, need)",
    "max(z, 1)",
    "min(1, z)",
    "need + 0",
    "max(0, -1)",
    "queued(P) > 0 ? 1 : 0.5",
)
RARE_UNITS = ("inf", "-1", "-0", "min(-0, 0)", "max(z, z)")
RANDOM_WORKS = (
    "~erlang(2, 1)",
    "~erlang(16, 0.5)",
    "~h2(1, 4)",
    "~erlang(3, w + 1)",
    "~h2(w + 1, 2)",
    "~exp(1)",
)
RANDOM_UNITS = ("~erlang(2, need + 1)", "floor(~h2(1, 4))", "min(2, ~erlang(4, 1))")
GAPS = ("1", "1", "0.5", "0.25", "2", "~det(1)", "1.5")
THINKS = ("0", "0", "1", "0.5", "2")
OBSERVED = (
    "busy(S)",
    "queue(S)",
    "queued(P)",
    "used(P)",
    "holders(P)",
    "free(P)",
    "now",
    "1 / min(nz, 0)",
    "1 / max(0, nz)",
    "min(z, now)",
    "max(now, z)",
    "min(w, inf)",
    "1 / ceil(nz - 0.5)",
    "pow(floor(nz), -1)",
)


class _Gen:
    def __init__(self, k: int, rand: bool) -> None:
        self.r = random.Random(9_100_001 * k + 5)
        self.rand = rand
        self.pools: list[str] = []
        self.stages: list[tuple[str, int | None]] = []
        self.engine = False
        self.obs = 0
        self.loops = 0

    def pick(self, items):
        return self.r.choice(items)

    def member(self, name: str, size: int | None) -> str:
        return name if size is None else f"{name}[{self.r.randrange(size)}]"

    def observable(self) -> str:
        e = self.pick(OBSERVED)
        name, size = self.pick(self.stages)
        pool = self.pick(self.pools) if self.pools else None
        if pool is None and "P" in e:
            e = "busy(S)"
        return e.replace("S", self.member(name, size)).replace("P", pool or "")

    def observe(self) -> list[str]:
        self.obs += 1
        return [f"observe o{self.obs} = {self.observable()};"]

    def work(self) -> str:
        if self.rand and self.r.random() < 0.3:
            return self.pick(RANDOM_WORKS)
        return self.pick(RARE_WORKS if self.r.random() < 0.04 else WORKS)

    def run(self) -> list[str]:
        name, size = self.pick(self.stages)
        work = self.work()
        if size is None or self.r.random() < 0.3:
            return [f"run {self.member(name, size)} ({work});"]
        key = self.pick(
            (
                f"busy({name}[j])",
                f"queue({name}[j]), -j",
                f"-busy({name}[j]), j",
                f"queue({name}[j]) + busy({name}[j])",
            )
        )
        return [f"choose j in {size} by ({key});", f"run {name}[j] ({work});"]

    def units(self, pool: str) -> str:
        if self.rand and self.r.random() < 0.15:
            return self.pick(RANDOM_UNITS)
        table = RARE_UNITS if self.r.random() < 0.05 else UNITS
        return self.pick(table).replace("P", pool)

    def request(self) -> list[str]:
        """A request of the step engine: a slot and its KV, a prefill and a decode."""
        return [
            "hold slot (1), kv (need + 1) {",
            "  run engine prefill (need + 1) growing kv;",
            f"  run engine decode ({self.pick(('1', '2', 'w + 1', '3'))}) growing kv;",
            "}",
        ]

    def body(self, depth: int, held: set[str]) -> list[str]:
        out: list[str] = []
        for _ in range(self.r.randint(1, 3)):
            roll = self.r.random()
            if roll < 0.3 and depth < 2 and len(held) < len(self.pools):
                out += self.hold(depth + 1, held)
            elif roll < 0.4 and self.engine and not held:
                out += self.request()
            elif roll < 0.47 and depth < 2:
                p = self.pick(("0", "1", "1", "0.5") if self.rand else ("0", "1", "1"))
                then = self.body(depth + 1, held)
                out += [f"branch with ({p}) {{", *("  " + s for s in then), "}"]
            elif roll < 0.8:
                out += self.run()
            else:
                out += self.observe()
        return out

    def hold(self, depth: int, held: set[str]) -> list[str]:
        """A hold of one or two pools that no enclosing hold holds, around a body."""
        pools = [p for p in self.pools if p not in held]
        self.r.shuffle(pools)
        these = pools[: self.pick((1, 1, 2))]
        parts = ", ".join(f"{p} ({self.units(p)})" for p in these)
        inner = self.observe() if self.r.random() < 0.5 else []
        inner += self.body(depth, held | set(these))
        return [f"hold {parts} {{", *("  " + s for s in inner), "}"]


def program(k: int, dialect: str = "items") -> str:
    """The k-th program of the family, from its seed alone, in pyserq 0.1.2's dialect
    (top-level items with a `run` block); `dialect="random"` draws as well (module
    docstring)."""
    if dialect not in ("items", "random"):
        raise ValueError("the ties family is written in the items dialect only")
    rand = dialect == "random"
    g = _Gen(k, rand)
    r = g.r
    lines = [f"// ties family program {k}{' (random)' if rand else ''}"]
    for i in range(r.randint(0, 2)):
        name = f"m{i}"
        g.pools.append(name)
        lines.append(
            f"pool {name} {{ cap {g.pick(CAPS)}; {g.pick(POOL_OPTIONS)} }}".replace("  ", " ")
        )
    for i in range(r.randint(1, 3)):
        size = g.pick((None, None, 2, 3))
        name = f"s{i}"
        g.stages.append((name, size))
        lines.append(f"stage {name}{f'[{size}]' if size else ''} : {g.pick(STAGES)};")
    if r.random() < 0.15:
        g.engine = True
        lines += [
            f"pool slot {{ cap {g.pick(('1', '2', '4'))}; admit via engine; }}",
            f"pool kv {{ cap {g.pick(('8', '16', '64'))}; block {g.pick(('1', '4'))}; preempt lifo; }}",
            f"stage engine : step {{ budget {g.pick(('4', '8', '16'))}; "
            f"cost {g.pick(('0.5', '1', '0.25 + 0.125 * tokens', '1 + 0.5 * decoders'))}; memory kv; }}",
        ]
    lines.append("stage think : delay;")
    n = r.randint(1, 6)
    kinds = ["batch", "batch", "closed", "renewal", "renewal", "renewal"]
    if rand:
        kinds.append("poisson")
    kind = g.pick(kinds)
    limit = ""
    if kind == "batch":
        arrive = f"arrive batch({n});"
    elif kind == "closed":
        arrive = f"arrive closed({n});"
    elif kind == "renewal":
        arrive = f"arrive renewal({g.pick(GAPS)});"
        if r.random() < 0.25:
            limit = f" arrivals {r.randint(1, 12)};"
    else:
        arrive = f"arrive poisson({g.pick(('1', '2', '0.5'))});"
    turns = r.random() < 0.5
    workload = [f"  {arrive}"]
    if turns:
        workload += [
            "  turn {",
            f"    set w = {g.pick(('w + 0.5', 'w', '0', 'turn_no * 0.5'))};",
            "  }",
        ]
    needs = [g.pick(("0", "0.5", "1", "2", "3")) for _ in range(n)]
    works = [g.pick(("0", "0.5", "1", "2", "0.25", "1.5")) for _ in range(n)]
    # a closed population's sessions take time, or they may end and be replaced at one
    # instant for ever (a livelock both name, the reference by hanging)
    offset = "1 + " if kind == "closed" else ""
    session = [
        f"set need = {ternary(needs)};",
        f"set w = {ternary(works)};",
        "set z = inf - inf;",
        "set nz = -0;",
        "set left = " + g.pick(("1", "2", "3")) + ";",
        f"run think ({offset}{g.pick(('0', '0', '0.5', '1'))} * serial);",
        "loop {",
        *("  " + s for s in ([*(["turn;"] if turns else []), *g.body(0, set())])),
        "  set left = left - 1;",
        "  branch (left <= 0) { end; }",
        f"  run think ({offset if kind == 'closed' else ''}{g.pick(THINKS)});",
        "}",
    ]
    lines += [
        "",
        "workload {",
        *workload,
        "}",
        "",
        "session {",
        *("  " + s for s in session),
        "}",
        "",
    ]
    for i in range(r.randint(0, 3)):
        e = g.observable()
        if any(v in e for v in ("now", "nz", "z", "w")):
            e = f"busy({g.member(*g.pick(g.stages))})"
        lines.append(f"gauge g{i} = {e};")
    horizon = "1000" if limit else g.pick(("10", "20", "40"))
    # the warm-up ends at an instant where arrivals and completions fall too (a stream
    # of its own, so that the rest of the program does not depend on it)
    warmup = random.Random(31 * k + 7).choice(("0", "0", "1", "2.5", "4"))
    if limit:  # a run that arrivals bound may drain before any warm-up
        warmup = "0"
    lines += ["", f"run {{ horizon {horizon}; warmup {warmup}; seed {k};{limit} }}", ""]
    return "\n".join(lines)
