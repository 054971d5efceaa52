"""A family of deterministic programs in which sessions take turns at pools, for the
differential search against pyserq 0.1.2 (`scripts/search_step.py --family turns`), the
compiled event path against its interpreter (`--against interpreter`), and a CI sample
(tests/oracle/test_turns_family.py).

It leans on what the generated code does differently from the interpreter around holds:
an inline hold admitted where it joins when nobody else is ready and no pool has
waiters, the pools' levels, the observables of constant members, busy() and queued()
read from attributes, and the livelock guards. Sessions of a batch, a closed population
or a constant stream go round a bounded loop of holds on one or two pools of small caps
(1, 0.5, 0, inf, fractions), nested or one after the other, whose bodies run on fifo,
ps and delay stages (work 0 at times, so that a hold fits at once again at the same
instant), choose a member of a stage array by its queue or busy(), and observe busy(),
queue(), queued(), used(), holders() and free() where the admission happened. Gauges
read the same functions over every pool and stage. Units, works and gaps are drawn from
the whole domain: 0, fractions, whole numbers, inf (a hold above the cap is rejected),
and negatives now and then, which both implementations must refuse alike. No draw but
`~det`, so the two implementations must agree exactly, on the whole report.
"""

from __future__ import annotations

import random

from step_family import ternary  # per-session constants, as the other families write them

CAPS = ("1", "1", "1", "0.5", "2", "2.5", "3", "inf", "1.5", "4", "0")
POOL_OPTIONS = (
    "",
    "",
    "",
    "queue by (serial);",
    "queue by (-serial);",
    "block 0.5;",
    "preempt none;",
)
STAGES = ("fifo(1)", "fifo(1)", "fifo(2)", "ps(1)", "ps(0.5)", "ps(min(present, 2))", "delay")
UNITS = (
    "1",
    "1",
    "0.5",
    "0",
    "2",
    "need",
    "need",
    "queued(P) + 1",
    "holders(P) > 0 ? 0.5 : 1",
    "free(P) > 1 ? 1 : 0.5",
    "1",
)
RARE_UNITS = ("inf", "-1", "0")  # rejected, refused, and a hold of nothing
WORKS = ("0", "0", "1", "0.5", "2", "~det(1)", "need", "0.25 * serial", "1.5")
RARE_WORKS = ("inf", "-1", "-0.5")  # a run that never ends, and refused works
THINKS = ("0", "0", "0.5", "1")
OBSERVED = (
    "busy(S)",
    "queue(S)",
    "queued(P)",
    "used(P)",
    "holders(P)",
    "free(P)",
    "now",
)


class _Gen:
    def __init__(self, k: int) -> None:
        self.r = random.Random(7_000_003 * k + 11)
        self.pools: list[str] = []
        self.stages: list[tuple[str, int | None]] = []
        self.obs = 0

    def pick(self, items):
        return self.r.choice(items)

    def stage(self) -> tuple[str, int | None]:
        return self.pick(self.stages)

    def member(self, name: str, size: int | None) -> str:
        return name if size is None else f"{name}[{self.r.randrange(size)}]"

    def observable(self) -> str:
        e = self.pick(OBSERVED)
        name, size = self.stage()
        return e.replace("S", self.member(name, size)).replace("P", self.pick(self.pools))

    def observe(self) -> str:
        self.obs += 1
        return f"observe o{self.obs} = {self.observable()};"

    def run(self) -> list[str]:
        name, size = self.stage()
        work = self.pick(RARE_WORKS if self.r.random() < 0.04 else WORKS)
        if size is None or self.r.random() < 0.4:
            return [f"run {self.member(name, size)} ({work});"]
        key = self.pick(
            (
                f"queue({name}[j]), busy({name}[j])",
                f"busy({name}[j])",
                f"-busy({name}[j]), j",
                f"queue({name}[j]) + busy({name}[j]), -j",
            )
        )
        return [f"choose j in {size} by ({key});", f"run {name}[j] ({work});"]

    def units(self, pool: str) -> str:
        table = RARE_UNITS if self.r.random() < 0.06 else UNITS
        return self.pick(table).replace("P", pool)

    def body(self, depth: int, held: set[str]) -> list[str]:
        out: list[str] = []
        for _ in range(self.r.randint(1, 3)):
            roll = self.r.random()
            if roll < 0.35 and depth < 2 and len(held) < len(self.pools):
                out += self.hold(depth + 1, held)
            elif roll < 0.75:
                out += self.run()
            else:
                out.append(self.observe())
        return out

    def hold(self, depth: int, held: set[str]) -> list[str]:
        """A hold of one or two pools that no enclosing hold holds, around a body."""
        pools = [p for p in self.pools if p not in held]
        self.r.shuffle(pools)
        these = pools[: self.pick((1, 1, 2))]
        parts = ", ".join(f"{p} ({self.units(p)})" for p in these)
        inner = [self.observe()] if self.r.random() < 0.6 else []
        inner += self.body(depth, held | set(these))
        return [f"hold {parts} {{", *("  " + s for s in inner), "}"]


def program(k: int, dialect: str = "items") -> str:
    """The k-th program of the family, from its seed alone, in pyserq 0.1.2's dialect
    (top-level items with a `run` block)."""
    if dialect != "items":
        raise ValueError("the turns family is written in the items dialect only")
    g = _Gen(k)
    r = g.r
    lines = [f"// turns family program {k}"]
    for i in range(r.randint(1, 2)):
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
    lines.append("stage gate : delay;")
    n = r.randint(1, 5)
    arrive = g.pick(
        (
            f"arrive batch({n});",
            f"arrive batch({n});",
            f"arrive closed({n});",
            f"arrive renewal({g.pick(('1', '0.5', '~det(2)', '0.25'))});",
        )
    )
    turns = g.pick(("1", "2", "3", "5"))
    # a closed population's sessions take time, or they may end and be replaced at one
    # instant for ever (a livelock both name, the reference by hanging)
    offset = "1 + " if "closed" in arrive else ""
    session = [
        f"set need = {ternary([g.pick(('0', '0.5', '1', '2', '3')) for _ in range(n)])};",
        f"set left = {turns};",
        f"run gate ({offset}{g.pick(('0', '0', '0.5', '1'))} * serial);",
        "loop {",
        *("  " + s for s in g.hold(1, set())),
    ]
    if r.random() < 0.4:  # a second hold in the same turn, after the first
        session += ["  " + s for s in g.hold(1, set())]
    session += [
        "  set left = left - 1;",
        "  branch (left <= 0) { end; }",
        f"  run gate ({g.pick(THINKS)});",
        "}",
    ]
    lines += [
        "",
        f"workload {{ {arrive} }}",
        "",
        "session {",
        *("  " + s for s in session),
        "}",
        "",
    ]
    for i in range(r.randint(1, 3)):
        lines.append(f"gauge g{i} = {g.observable().replace('now', 'busy(gate)')};")
    horizon = g.pick(("10", "30", "60"))
    lines += ["", f"run {{ horizon {horizon}; warmup 0; seed 1; }}", ""]
    return "\n".join(lines)
