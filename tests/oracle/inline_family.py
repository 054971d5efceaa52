"""A family of programs over the compiled path's newest inline code, for the differential
search against pyserq 0.1.2 (`scripts/search_step.py --family inline`), the compiled event
path against its interpreter (`--against interpreter`, and `--dialect random` there), and
a CI sample (tests/oracle/test_inline_family.py).

It aims at what the generated code writes inline since the fourth round (docs/speed.md,
"How a run executes"): `release P` inside a hold of that very member (once; the end of
the hold skips it), and `release` elsewhere (of an outer hold from inside an inner one,
twice in a row, inside a branch); `grow P (d)` inside a hold of P on a pool that does not
preempt, the growth waiting among the pool's growers when it does not fit, of an outer
hold from inside an inner one, after a `release` (an error), and on a pool that preempts
(the interpreter's holds); a `queue by` pool whose keys read only constants and the
session's attributes (steady: admitted where it joins) or `waited` and the pools' state
(unsteady), with ties between keys, NaN keys and -0; `evict lru` and `evict by` keys of
every kind; `reserve` and `cache` clauses (the inline release under a cache); pool arrays
held by a computed index or a `choose`; ps stages of one capacity for all (a constant,
0.5, 1e-3, inf, an expression of `present`, `min(present, k)`) or of several; flows over
two and three links; gauges of every kind (the online estimates too); `loop`s with `turn`
and `end;` (inside holds too); batches, closed populations and constant streams. Constants come from the whole
domain: 0, -0, negatives, inf, NaN (`inf - inf`) and fractions. `program(k)` draws
nothing but `~det`, so the reference must agree exactly, on the whole report;
`program(k, "random")` adds draws, Poisson arrivals and a `release` with no hold around
after a lease of 0 (so it finds nothing to give), for the interpreter only.
"""

from __future__ import annotations

import random

from step_family import ternary  # per-session constants, as the other families write them

CAPS = ("1", "2", "3", "4", "0.5", "1.5", "2.5", "inf", "0", "6")
BLOCKS = ("", "", "", "block 1;", "block 0.5;", "block 2;")
EVICTS = (
    "",
    "",
    "evict lru;",
    "evict by (size);",
    "evict by (-size, age);",
    "evict by (last);",
    "evict by (waiting, -last);",
    "evict by (need);",
    "evict by (z);",  # NaN keys: ties go to the release order
    "evict by (size > 1 ? -z : (size == 1 ? z : nz));",  # NaNs of each sign, -0
)
STEADY = (  # keys of constants and the session's own attributes: admitted at the join
    "queue by (serial);",
    "queue by (-serial);",
    "queue by (need);",  # ties: the order of joining decides
    "queue by (-need, serial);",
    "queue by (w, -serial);",
    "queue by (z);",  # NaN
    "queue by (need > 1 ? z : serial);",
    "queue by (nz * serial);",  # -0 against 0
    "queue by (serial == 1 ? -z : (serial == 2 ? z : nz), -need);",  # NaNs of each sign
    "queue by (2);",
)
UNSTEADY = (
    "queue by (waited);",
    "queue by (-waited, serial);",
    "queue by (used(P), serial);",
    "queue by (now - serial);",
)
PREEMPTS = ("", "", "", "", "", "preempt none;", "preempt none;", "preempt lifo;")
PS_CAPS = (
    "1",
    "1",
    "0.5",
    "2",
    "1e-3",
    "inf",
    "present",
    "min(present, 2)",
    "min(present, 0.5)",
    "0.5 * present + 1",
    "max(1, present - 1)",
    "max(present - 1, 0.5)",
    "1 / present",
)
LINK_CAPS = ("1", "1", "0.5", "2", "4", "1", "0.5", "2", "4", "1e-3")
STAGES = ("fifo(1)", "fifo(1)", "fifo(2)", "fifo(3)", "delay", "ps", "ps", "ps")
WORKS = (
    "0",
    "0",
    "1",
    "1",
    "2",
    "0.5",
    "0.25",
    "1.5",
    "w",
    "w",
    "w + 0.5",
    "~det(1)",
    "max(z, w)",
    "min(w, 1)",
    "0.5 * serial",
    "turn_no",
)
RARE_WORKS = ("0.1", "1 / 3", "inf", "-0.5", "z", "1e-3")
UNITS = (
    "1",
    "1",
    "0",
    "0.5",
    "2",
    "need",
    "need",
    "min(need, 1)",
    "max(z, 1)",
    "max(nz, need)",
    "need + 0.5",
    "queued(P) > 0 ? 1 : 0.5",
    "free(P) > 1 ? 1 : 0.5",
)
RARE_UNITS = ("inf", "-1", "-0", "z", "1e-3")
RESERVES = ("", "", "", "", " reserve (need + 1)", " reserve (0)", " reserve (2.5)", " reserve (w)")
CACHES = (
    "",
    "",
    " cache (need)",
    " cache (0)",
    " cache (inf)",
    " cache (0.5)",
    " cache (cached + 1)",
    " cache (computed + 0.5)",
)
GROWS = ("1", "1", "0.5", "0", "2", "need", "w", "max(z, 1)", "1e-3", "0.25")
RARE_GROWS = ("inf", "-1", "z")
THINKS = ("0", "0", "0.5", "1", "2")
GAPS = ("1", "1", "0.5", "0.25", "2", "~det(1)", "1.5")
RANDOM_WORKS = ("~exp(1)", "~exp(0.5)", "~uniform(0, 2)", "~erlang(2, 1)", "~h2(1, 4)")
RANDOM_GROWS = ("~uniform(0, 2)", "floor(~uniform(0, 3))", "~exp(1)")
GAUGES = (
    "used(P)",
    "free(P)",
    "holders(P)",
    "queued(P)",
    "busy(S)",
    "queue(S)",
    "used(P) + queued(P)",
    "busy(S) > 0",
    "2",
    "est_rho(S) + est_wait(S)",  # the online estimates, computed only when read
)
OBSERVED = (
    "used(P)",
    "free(P)",
    "holders(P)",
    "queued(P)",
    "cachedin(P)",
    "busy(S)",
    "queue(S)",
    "now",
    "1 / min(nz, 0)",
    "max(z, used(P))",
    "computed",
)


class _Gen:
    def __init__(self, k: int, rand: bool) -> None:
        self.r = random.Random(4_400_021 * k + 3)
        self.rand = rand
        self.pools: list[tuple[str, int | None]] = []  # name, array size
        self.stages: list[tuple[str, int | None]] = []
        self.links: list[str] = []
        self.obs = 0
        self.given: set[str] = set()  # the parts some `release` names

    def pick(self, items):
        return self.r.choice(items)

    def member(self, name: str, size: int | None, computed: bool = False) -> str:
        if size is None:
            return name
        if computed:
            return f"{name}[i]"  # i, the session's index: serial modulo the size
        return f"{name}[{self.r.randrange(size)}]"

    def any_pool(self) -> str:
        name, size = self.pick(self.pools)
        return self.member(name, size)

    def any_stage(self) -> str:
        name, size = self.pick(self.stages)
        return self.member(name, size)

    def observable(self, table=OBSERVED) -> str:
        e = self.pick(table)
        if "P" in e and not self.pools:
            e = "busy(S)"
        if "P" in e:
            e = e.replace("P", self.any_pool())
        return e.replace("S", self.any_stage())

    def observe(self) -> list[str]:
        self.obs += 1
        return [f"observe o{self.obs} = {self.observable()};"]

    def work(self) -> str:
        if self.rand and self.r.random() < 0.3:
            return self.pick(RANDOM_WORKS)
        return self.pick(RARE_WORKS if self.r.random() < 0.03 else WORKS)

    def run(self) -> list[str]:
        if self.links and self.r.random() < 0.3:  # a flow over two or three links
            links = self.r.sample(self.links, self.pick((2, 2, 3)) if len(self.links) > 2 else 2)
            return [f"run {', '.join(links)} ({self.work()});"]
        name, size = self.pick(self.stages)
        if size is None or self.r.random() < 0.3:
            computed = size is not None and self.r.random() < 0.5
            return [f"run {self.member(name, size, computed)} ({self.work()});"]
        key = self.pick(
            (
                f"busy({name}[j])",
                f"queue({name}[j]), -j",
                f"-busy({name}[j]), j",
            )
        )
        return [f"choose j in {size} by ({key});", f"run {name}[j] ({self.work()});"]

    def units(self, pool: str) -> str:
        table = RARE_UNITS if self.r.random() < 0.04 else UNITS
        return self.pick(table).replace("P", pool)

    def grow_amount(self) -> str:
        if self.rand and self.r.random() < 0.2:
            return self.pick(RANDOM_GROWS)
        return self.pick(RARE_GROWS if self.r.random() < 0.04 else GROWS)

    def body(self, depth: int, held: list[str], cached: bool) -> list[str]:
        """The statements of a block inside the holds of `held` (innermost last)."""
        out: list[str] = []
        for _ in range(self.r.randint(1, 4)):
            roll = self.r.random()
            if roll < 0.22 and depth < 3:
                out += self.hold(depth + 1, held, cached)
            elif roll < 0.34 and held:  # release: the innermost hold's part, or an outer's
                target = held[-1] if self.r.random() < 0.6 else self.pick(held)
                out.append(f"release {target};")
                self.given.add(target)
                if self.r.random() < 0.2:
                    out.append(f"release {target};")  # a second finds nothing to give
            elif roll < 0.48 and held:  # grow: the innermost hold's part, or an outer's
                target = held[-1] if self.r.random() < 0.6 else self.pick(held)
                if target in self.given and self.r.random() < 0.8:
                    continue  # a grow after the release is an error: now and then
                out.append(f"grow {target} ({self.grow_amount()});")
            elif roll < 0.52 and held and depth < 3:
                cond = self.pick(("left <= 1", "serial == 1", "w > 1", "turn_no >= 2"))
                out.append(f"branch ({cond}) {{ end; }}")
            elif roll < 0.56 and depth < 3:
                cond = self.pick(("serial == 0", "need > 1", "turn_no == 1"))
                then = self.body(depth + 1, held, cached)
                out += [f"branch ({cond}) {{", *("  " + s for s in then), "}"]
            elif roll < 0.62 and cached:
                self.obs += 1
                out.append(f"observe o{self.obs} = cached;")
            elif roll < 0.85:
                out += self.run()
            else:
                out += self.observe()
        return out

    def hold(self, depth: int, held: list[str], outer_cached: bool = False) -> list[str]:
        """A hold of one or two pools (members of an array by a constant index, a computed
        one or a `choose`) that no enclosing hold holds, around a body; `outer_cached`:
        the enclosing hold has a cache clause (which its `cached` needs)."""
        free = [(n, s) for n, s in self.pools if not any(h.startswith(n) for h in held)]
        if not free:
            return self.run()
        self.r.shuffle(free)
        chosen = free[: self.pick((1, 1, 1, 2))]
        pre: list[str] = []
        parts, names = [], []
        for name, size in chosen:
            if size is None:
                m = name
            else:
                how = self.r.random()
                if how < 0.4:
                    m = f"{name}[i]"
                elif how < 0.6:
                    c = f"c{name[1:]}"
                    pre.append(f"choose {c} in {size} by (used({name}[{c}]), -{c});")
                    m = f"{name}[{c}]"
                else:
                    m = f"{name}[{self.r.randrange(size)}]"
            names.append(m)
            parts.append(f"{m} ({self.units(m)}){self.pick(RESERVES)}")
        cache = self.pick(CACHES) if self.r.random() > 0.02 else " cache (z)"  # NaN: an error
        if "cached" in cache and not outer_cached:
            cache = " cache (need + 1)"
        inner = self.body(depth, held + names, bool(cache))
        return [*pre, f"hold {', '.join(parts)} {{", *("  " + s for s in inner), f"}}{cache};"]


def program(k: int, dialect: str = "items") -> str:
    """The k-th program of the family, from its seed alone, in pyserq 0.1.2's dialect
    (top-level items with a `run` block); `dialect="random"` draws as well (module
    docstring)."""
    if dialect not in ("items", "random"):
        raise ValueError("the inline family is written in the items dialect only")
    rand = dialect == "random"
    g = _Gen(k, rand)
    r = g.r
    lines = [f"// inline family program {k}{' (random)' if rand else ''}"]
    sizes: set[int] = set()
    for i in range(r.randint(1, 3)):
        size = g.pick((None, None, None, 2, 3))
        name = f"q{i}" if size else f"m{i}"
        if size:
            sizes.add(size)
        g.pools.append((name, size))
        options = [f"cap {g.pick(CAPS)};", g.pick(BLOCKS), g.pick(EVICTS), g.pick(PREEMPTS)]
        roll = r.random()
        if roll < 0.35:
            options.append(g.pick(STEADY))
        elif roll < 0.5:
            options.append(g.pick(UNSTEADY).replace("P", f"{name}[0]" if size else name))
        decl = f"pool {name}{f'[{size}]' if size else ''} {{ {' '.join(o for o in options if o)} }}"
        lines.append(decl)
    equal = r.random() < 0.6  # every ps stage of one capacity, folded into the completion
    one_cap = g.pick(PS_CAPS)
    for i in range(r.randint(1, 3)):
        size = g.pick((None, None, 2, 3))
        kind = g.pick(STAGES)
        if kind == "ps":
            kind = f"ps({one_cap if equal else g.pick(PS_CAPS)})"
        name = f"s{i}"
        if size:
            sizes.add(size)
        g.stages.append((name, size))
        lines.append(f"stage {name}{f'[{size}]' if size else ''} : {kind};")
    if r.random() < 0.35:  # flows: links of constant capacities, shared by max-min
        lines.append(g.pick(("share maxmin;", "share maxmin;", "share bottleneck;")))
        for i in range(r.randint(2, 3)):
            cap = (
                one_cap if equal and g.pick((0, 1)) and one_cap in LINK_CAPS else g.pick(LINK_CAPS)
            )
            g.links.append(f"l{i}")
            lines.append(f"stage l{i} : ps({cap});")
    lines.append("stage think : delay;")
    n = r.randint(1, 6)
    kinds = ["batch", "batch", "closed", "closed", "renewal", "renewal"]
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
        if r.random() < 0.3:
            limit = f" arrivals {r.randint(1, 10)};"
    else:
        arrive = f"arrive poisson({g.pick(('1', '2', '0.5'))});"
    turns = r.random() < 0.6
    workload = [f"  {arrive}"]
    if turns:
        workload += [
            "  turn {",
            f"    set w = {g.pick(('w + 0.5', 'w', '0', 'turn_no * 0.5', 'w * 2'))};",
            "  }",
        ]
    needs = [g.pick(("0", "0.5", "1", "2", "3", "1.5")) for _ in range(n)]
    works = [g.pick(("0", "0.5", "1", "2", "0.25", "1.5")) for _ in range(n)]
    # a closed population's sessions take time, or they may end and be replaced at one
    # instant for ever (a livelock both name, the reference by hanging)
    offset = "1 + " if kind == "closed" else ""
    index = []
    if sizes:
        m = min(sizes)  # a valid index of every array
        index = [f"set i = serial - {m} * floor(serial / {m});"]
    loop_body = [*(["turn;"] if turns else [])]
    for _ in range(r.choice((1, 1, 2))):
        loop_body += g.hold(1, []) if g.pools and r.random() < 0.85 else g.run()
    if g.links and not any("run l" in s and "," in s for s in loop_body):
        loop_body.append(f"run {', '.join(g.links)} ({g.work()});")  # `share` needs a flow
    if rand and g.pools and r.random() < 0.15:
        # no hold around: a lease of 0 has ended by then, so it finds nothing to give (a
        # release in a program that leases none of its pool is a link error)
        pool = g.any_pool()
        loop_body.append(f"hold {pool} (0) {{ }} lease {pool} (0); release {pool};")
    session = [
        f"set need = {ternary(needs)};",
        f"set w = {ternary(works)};",
        "set z = inf - inf;",
        "set nz = -0;",
        "set left = " + g.pick(("1", "2", "3")) + ";",
        *index,
        f"run think ({offset}{g.pick(('0', '0', '0.5', '1'))} * serial);",
        "loop {",
        *("  " + s for s in loop_body),
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
    for j in range(r.randint(0, 4)):
        roll = r.random()
        arrays = [(nm, s) for nm, s in g.pools if s] + [(nm, s) for nm, s in g.stages if s]
        if roll < 0.3 and arrays:
            name, size = g.pick(arrays)
            what = "used" if name.startswith("q") else g.pick(("busy", "queue"))
            agg = g.pick(("sum", "max", "min"))
            e = f"{agg} x in {size} ({what}({name}[x]))"
        else:
            e = g.observable(GAUGES)
        lines.append(f"gauge g{j} = {e};")
    horizon = "1000" if limit else g.pick(("10", "20", "40"))
    warmup = random.Random(17 * k + 5).choice(("0", "0", "0", "1", "2.5"))
    if limit:  # a run that arrivals bound may drain before any warm-up
        warmup = "0"
    lines += ["", f"run {{ horizon {horizon}; warmup {warmup}; seed {k};{limit} }}", ""]
    return "\n".join(lines)
