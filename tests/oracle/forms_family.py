"""A family of programs that use every statement form of the session, for the differential
search of serq's compiled event path against its interpreter (`scripts/search_step.py
--family forms --against interpreter`) and, on its deterministic half, against pyserq
0.1.2 (`--family forms`).

Each program declares one to three pools (one of them a spill tier at times), a plain
stage of every kind, a stage array reached by `choose`, two ps links shared by a flow
(`run up, link[i] (w)` under `share maxmin` or `bottleneck`), a link for `transfer`, at
times a step engine with its KV pool, and gauges. Sessions arrive in a batch, a constant
stream or a closed population, from an `init` and a `turn` block or from a trace, and run
a session drawn statement by statement: set, observe, run (plain, indexed, a flow, `tool`),
hold over one or two pools with reserve, reuse, cache and lease, grow, load, release,
drop, transfer, branch (a test) and branch with (a draw), choose, turn, end, and a loop
that ends by `end`. Every constant is drawn from the domain the grammar admits: 0,
negatives, inf, -inf, fractions, whole numbers, and expressions over them with every
function and operator; a run's work and a hold's units are usually clamped into their
domain, and sometimes not, so that both implementations must refuse the same values at
the same place. `program(k)` is deterministic (no draw but `~det`, `branch with` of 0 or
1, `~uniform(a, a)`), so that it can be compared with the reference exactly;
`program(k, "random")` draws from every law as well, for the compiled path against the
interpreter.
"""

from __future__ import annotations

import random
from pathlib import Path

TRACE = Path(__file__).resolve().parents[1] / "corpus" / "valid" / "turns.csv"

CONSTS = ("0", "0", "1", "2", "3", "0.5", "2.5", "0.25", "-1", "-0.5", "inf", "-inf", "7", "1e-3")
SAFE = ("0", "1", "2", "3", "0.5", "2.5", "0.25", "4", "1.5")
FUNCS1 = ("abs", "floor", "ceil", "sqrt", "exp", "ln")
FUNCS2 = ("min", "max", "pow")
STAGE_KINDS = (
    "fifo(1)",
    "fifo(2)",
    "fifo(3)",
    "ps(1)",
    "ps(2)",
    "ps(0.5)",
    "ps(min(present, 2))",
    "ps(present > 1 ? 3 : 1)",
    "delay",
)


class _Gen:
    def __init__(self, r: random.Random, det: bool) -> None:
        self.r = r
        self.det = det
        self.attrs = ["serial", "turn_no"]  # attributes that are safe to read anywhere
        self.n_obs = 0
        self.n_attr = 0
        self.pools: list[str] = []
        self.engine = False
        self.tier = False
        self.flow = False

    # expressions -------------------------------------------------------------------

    def const(self) -> str:
        return self.r.choice(CONSTS)

    def draw(self) -> str:
        r = self.r
        if self.det:
            return r.choice(("~det(1.5)", "~det(0)", "~det(0.25)", "~uniform(2, 2)"))
        return r.choice(
            (
                "~exp(1)",
                "~det(2)",
                "~uniform(0, 2)",
                "~erlang(2, 1)",
                "~h2(1, 4)",
                "~bernoulli(0.5)",
                "~exp(0.5)",
            )
        )

    def pure(self, depth: int = 2) -> str:
        """An expression of constants, attributes and draws (no state)."""
        r = self.r
        if depth <= 0 or r.random() < 0.3:
            choice = r.random()
            if choice < 0.45:
                return self.const()
            if choice < 0.85:
                return r.choice(self.attrs)
            return self.draw()
        form = r.random()
        a, b = self.pure(depth - 1), self.pure(depth - 1)
        if form < 0.35:
            return f"({a} {r.choice(('+', '-', '*', '/'))} {b})"
        if form < 0.5:
            return f"{r.choice(FUNCS1)}({a})"
        if form < 0.65:
            return f"{r.choice(FUNCS2)}({a}, {b})"
        if form < 0.8:
            return f"({a} {r.choice(('<', '<=', '>', '>=', '==', '!='))} {b})"
        if form < 0.9:
            return f"({self.test(depth - 1)} ? {a} : {b})"
        return f"({a} {r.choice(('&&', '||'))} {b})"

    def observable(self) -> str:
        r = self.r
        options = ["queue(a)", "busy(a)", "work(a)", "queue(s[1])", "busy(s[0])"]
        for p in self.pools:
            options += [f"used({p})", f"free({p})", f"cachedin({p})", f"holders({p})"]
            options.append(f"queued({p})")
        return r.choice(options)

    def live(self, depth: int = 2) -> str:
        """An expression that may read the state too (observables, now)."""
        r = self.r
        if depth <= 0 or r.random() < 0.35:
            x = r.random()
            if x < 0.4:
                return self.observable()
            if x < 0.55:
                return "now"
            return self.pure(0)
        a, b = self.live(depth - 1), self.live(depth - 1)
        form = r.random()
        if form < 0.4:
            return f"({a} {r.choice(('+', '-', '*', '/'))} {b})"
        if form < 0.6:
            return f"{r.choice(FUNCS2)}({a}, {b})"
        if form < 0.8:
            return f"({a} {r.choice(('<', '>=', '==', '!='))} {b})"
        return f"{r.choice(FUNCS1)}({a})"

    def test(self, depth: int = 1, live: bool = False) -> str:
        """A 0-or-1 expression."""
        r = self.r
        e = self.live if live else self.pure
        x = r.random()
        if x < 0.6:
            return f"{e(depth)} {r.choice(('<', '<=', '>', '>=', '==', '!='))} {e(depth)}"
        if x < 0.8:
            return f"!({e(depth)} > {self.const()})"
        return f"({e(depth)} > 1) && ({e(depth)} < 3) || serial == 0"

    def amount(self, live: bool = False) -> str:
        """A non-negative finite amount usually (clamped), a raw one at times."""
        r = self.r
        e = self.live(1) if live else self.pure(2)
        x = r.random()
        if x < 0.35:
            return r.choice(SAFE)
        if x < 0.9:
            return f"min({r.choice(('4', '2.5', '8', '1'))}, max(0, {e}))"
        return e  # may be negative, NaN or infinite: both must refuse it at the same place

    # statements --------------------------------------------------------------------

    def stmts(self, depth: int, held: tuple[tuple[str, bool], ...], n: int) -> list[str]:
        out: list[str] = []
        for _ in range(n):
            out += self.stmt(depth, held)
        return out

    def stmt(self, depth: int, held: tuple[tuple[str, bool], ...]) -> list[str]:
        r = self.r
        x = r.random()
        cached_ok = bool(held) and held[-1][1]
        if x < 0.12:
            name = f"x{self.n_attr}"
            self.n_attr += 1
            value = self.pure(2)
            if cached_ok and r.random() < 0.3:
                value = f"cached + {value}"
            self.attrs.append(name)
            return [f"set {name} = {value};"]
        if x < 0.24:
            self.n_obs += 1
            value = self.live(2) if r.random() < 0.6 else self.pure(2)
            if cached_ok and r.random() < 0.3:
                value = f"cached + {value}"
            return [f"observe o{self.n_obs} = {value};"]
        if x < 0.36:
            stage = r.choice(("a", "a", "b", "c", "tool"))
            if stage == "tool":
                return [f"tool ({self.amount()});"]
            return [f"run {stage} ({self.amount(live=r.random() < 0.3)});"]
        if x < 0.42:
            keys = r.choice(
                (
                    "queue(s[j])",
                    "work(s[j]), -j",
                    "busy(s[j]) + queue(s[j])",
                    "0",
                    "-j",
                    "serial - j",
                )
            )
            return [
                f"choose j in 3 by ({keys});",
                "observe picked = j;",
                f"run s[j] ({self.amount()});",
            ]
        if x < 0.47:
            i = r.choice(("0", "1", "serial - 2 * floor(serial / 2)"))
            self.flow = True
            return [f"run up, nic[{i}] ({self.amount()});"]
        if x < 0.62 and depth > 0:
            return self.hold(depth, held)
        if x < 0.7 and depth > 0:
            guard = self.test(1, live=r.random() < 0.4)
            if r.random() < 0.05:
                guard = self.pure(1)  # a guard that may be neither 0 nor 1
            then = self.stmts(depth - 1, held, r.randint(1, 2))
            other = self.stmts(depth - 1, held, r.randint(0, 2))
            tail = f" else {{ {' '.join(other)} }}" if other or r.random() < 0.5 else ""
            return [f"branch ({guard}) {{ {' '.join(then)} }}{tail}"]
        if x < 0.75 and depth > 0:
            p = r.choice(("0", "1")) if self.det else r.choice(("0", "1", "0.5", "0.25", "0.9"))
            then = self.stmts(depth - 1, held, r.randint(1, 2))
            return [f"branch with ({p}) {{ {' '.join(then)} }}"]
        if x < 0.8 and held:
            pool, _ = r.choice(held)
            grow = self.amount() if r.random() < 0.8 else self.const()
            return [f"grow {pool} ({grow});"]
        if x < 0.84 and held:
            pool, _ = r.choice(held)
            return [f"load {pool} ({r.choice(('0', '1', '0.5', '2', self.amount()))});"]
        if x < 0.87 and held:
            pool, _ = r.choice(held)
            return [f"release {pool};"]
        if x < 0.89 and self.pools:
            return [f"drop {r.choice(self.pools)};"]
        if x < 0.9:
            return ["end;"]
        if x < 0.95 and self.engine and not held:
            return self.engine_request()
        return [f"observe at{self.n_obs} = now;"]

    def hold(self, depth: int, held: tuple[tuple[str, bool], ...]) -> list[str]:
        r = self.r
        free = [p for p in self.pools if p not in {h for h, _ in held}]
        if not free:
            return []
        pools = [r.choice(free)]
        if len(free) > 1 and r.random() < 0.3:
            pools.append(r.choice([p for p in free if p != pools[0]]))
        cache = r.random() < 0.6
        parts = []
        for p in pools:
            units = self.amount(live=r.random() < 0.25)
            reserve = f" reserve ({self.amount()})" if r.random() < 0.25 else ""
            parts.append(f"{p} ({units}){reserve}")
        reuse = f" reuse ({self.amount()})" if cache and r.random() < 0.4 else ""
        inner = held + tuple((p, cache) for p in pools)
        body = self.stmts(depth - 1, inner, r.randint(1, 3))
        tail = f" cache ({self.amount()})" if cache else ""
        if r.random() < 0.12:
            tail += f" lease {pools[0]} ({r.choice(('0', '1', '2.5', 'inf'))})"
            lines = [f"hold {', '.join(parts)}{reuse} {{", *("  " + b for b in body), f"}}{tail};"]
            if r.random() < 0.5:  # the lease is taken by a transfer, or given back
                others = [p for p in self.pools if p != pools[0] and p not in {h for h, _ in held}]
                if others and r.random() < 0.6:
                    q = others[0]
                    lines += [
                        f"hold {q} ({self.amount()}) {{",
                        f"  transfer ({self.amount()}) from {pools[0]} to {q} ({r.choice(SAFE)});",
                        "}" + (f" cache ({self.amount()});" if r.random() < 0.5 else ";"),
                    ]
                else:
                    lines.append(f"release {pools[0]};")
            return lines
        return [f"hold {', '.join(parts)}{reuse} {{", *("  " + b for b in body), f"}}{tail};"]

    def engine_request(self) -> list[str]:
        r = self.r
        prompt = r.choice(("0", "1", "3", "17", "2.5", "40", "serial * 7 + 1"))
        out = r.choice(("0", "1", "2", "5", "0.5", "12"))
        cache = r.choice(("", f" cache ({prompt} + {out})", " cache (0)", " cache (inf)"))
        return [
            f"hold kv (min({prompt}, {r.choice(('inf', '8', '16', '0'))})) {{",
            f"  run engine prefill ({prompt}) growing kv;",
            "  observe ttft = now;",
            f"  run engine decode ({out}) growing kv;",
            f"}}{cache};",
        ]


def program(k: int, dialect: str = "det") -> str:
    """The k-th program of the family from its seed alone: deterministic (`det`, the
    default and what the reference is compared on; `items` is its alias) or drawing from
    every law (`random`)."""
    det = dialect in ("det", "items")
    r = random.Random(7_654_321 * k + 3)
    g = _Gen(r, det)
    decls = []
    n_pools = r.choice((1, 1, 2, 2, 3))
    for i, name in enumerate(("m", "p", "q")[:n_pools]):
        cap = r.choice(("1", "2", "4", "3.5", "8", "16", "inf", "0", "2.5 * 2"))
        opts = [f"cap {cap};"]
        if r.random() < 0.3:
            opts.append(f"block {r.choice(('1', '2', '4', '2.5', '0.5'))};")
        opts.append(
            r.choice(
                ("", "evict lru;", "evict by (size);", "evict by (-age, size);", "evict by (last);")
            )
        )
        opts.append(r.choice(("", "preempt lifo;", "preempt none;")))
        opts.append(r.choice(("", "queue fifo;", "queue by (serial);", "queue by (-serial, 1);")))
        if i == 0 and r.random() < 0.2:
            g.tier = True
            opts.append(f"spill t via link ({r.choice(('0', 'size / 4', '1'))}) when (size >= 1);")
        decls.append(f"pool {name} {{ {' '.join(o for o in opts if o)} }}")
        g.pools.append(name)
    if g.tier:
        decls.append(f"pool t {{ cap {r.choice(('2', '6.5', 'inf'))}; evict lru; }}")
    decls += [
        f"stage a : {r.choice(STAGE_KINDS)};",
        f"stage b : {r.choice(STAGE_KINDS)};",
        "stage c : delay;",
        f"stage s[3] : {r.choice(('fifo(1)', 'ps(1)', 'delay', 'fifo(2)'))};",
        f"stage up : ps({r.choice(('1', '2', '4', '0.5'))});",
        f"stage nic[2] : ps({r.choice(('1', '2', '3'))});",
        f"stage link : {r.choice(('fifo(1)', 'delay', 'ps(2)'))};",
        "stage tool : delay;",
    ]
    if r.random() < 0.3:
        g.engine = True
        budget = r.choice(("8", "16", "2.5", "64", "max(4, 16 - residents)"))
        chunk = r.choice(("", "chunk 0;", "chunk 4;", "chunk inf;", "chunk -1;", "chunk 2.5;"))
        serve = r.choice(
            ("", "serve decode first;", "serve by (remaining);", "serve exclusive prefill;")
        )
        decls.insert(
            0,
            f"pool kv {{ cap {r.choice(('32', '64', '16', '200'))}; block {r.choice(('1', '4', '16'))};"
            f" evict lru; {r.choice(('preempt lifo;', 'preempt none;'))} admit via engine; }}",
        )
        cost = r.choice(("1", "0.5 + tokens / 32", "0", "0.25"))
        decls.insert(
            1, f"stage engine : step {{ budget {budget}; cost {cost}; {chunk} {serve} memory kv; }}"
        )
    gauges = []
    for i in range(r.randint(0, 2)):
        seen = g.observable().replace("cachedin", "used").replace("work(a)", "busy(b)")
        gauges.append(f"gauge g{i} = {seen};")
    trace = r.random() < 0.2
    n = r.randint(1, 6)
    arrive = r.choice(
        (
            f"arrive batch({n});",
            f"arrive batch({n});",
            f"arrive renewal({r.choice(('1', '0.5', '~det(2)', '2.5'))});",
            f"arrive closed({r.choice(('1', '2', '3'))});",
        )
    )
    wl = [arrive]
    if trace:
        wl.append(f'trace "{TRACE}" ordered;')
        g.attrs += ["new", "out", "think", "more"]
    init_sets = []
    for _ in range(r.randint(0, 2)):
        name = f"x{g.n_attr}"
        g.n_attr += 1
        init_sets.append(f"set {name} = {g.pure(1)};")
        g.attrs.append(name)
    if init_sets:
        wl.append(f"init {{ {' '.join(init_sets)} }}")
    turn_sets = []
    if not trace or r.random() < 0.5:
        for _ in range(r.randint(0, 2)):
            name = f"x{g.n_attr}"
            g.n_attr += 1
            turn_sets.append(f"set {name} = {g.pure(1)};")
            g.attrs.append(name)
        if turn_sets:
            wl.append(f"turn {{ {' '.join(turn_sets)} }}")
    body = g.stmts(2, (), r.randint(2, 5))
    if r.random() < 0.6:  # a loop of turns, ended by a counter (or earlier by an `end`)
        turns = r.choice(("1", "2", "3", "2.5", "0"))
        loop = [
            "turn;",
            *g.stmts(2, (), r.randint(1, 4)),
            "set left = left - 1;",
            "branch (left <= 0) { end; }" if not trace else "branch (left <= 0 || !more) { end; }",
            f"run c ({g.amount()});",
        ]
        session = [f"set left = {turns};", *body, "loop {", *("  " + x for x in loop), "}"]
    else:
        session = ["turn;", *body]
    if g.flow:
        decls.append(f"share {r.choice(('maxmin', 'bottleneck'))};")
    horizon = r.choice(("20", "60", "7.5"))
    lines = [
        f"// forms family program {k} ({'deterministic' if det else 'random'})",
        *decls,
        *gauges,
        "",
        f"workload {{ {' '.join(wl)} }}",
        "",
        "session {",
        *("  " + x for x in session),
        "}",
        "",
        f"run {{ horizon {horizon}; warmup {r.choice(('0', '0', '1', '2.5'))}; seed {k % 97 + 1}; }}",
        "",
    ]
    return "\n".join(lines)
