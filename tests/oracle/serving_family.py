"""A family of serving programs written from their two sides with the serving vocabulary,
as the spec and the reference write them, for the differential search against pyserq
0.1.2 (`scripts/search_step.py --family serving`) and its CI sample
(`test_serving_families.py`).

Each program is a `workload { ... session { ... request; ... } }` (the client: arrivals
of every kind, `init` and `turn` blocks or a trace, a context `K` that grows, `tool`
between turns, `branch with` and `end`) and a `server { ... }` that serves one request
on one of four deployments, each written with the forms `prefill`, `decode`,
`transfer`, `tool` (bare, `on STAGE`, indexed into role arrays) and the kernel's `hold`:

- vllm: lib/vllm.sq's `vllm_request` (admission `at admission` with `known` and the
  hit of cached full blocks, `reserve (known)`, `reuse`, resumption from `computed`) on
  a step engine whose chunk is `long_prefill(reqs, chunk)` with `let chunk` of 0, -1,
  0.5, inf or whole numbers, and the reference's costs (the A100 fit, its multi-turn
  `c0 + max(...)`);
- pd: a prefill engine and a decode engine, the prefiller's KV leased (`lease kvP (t)`,
  t of inf, 0, fractions, 30) and read by `transfer (X) from kvP to kvD (n)` over the
  `link` stage or `transfer on egress, ingress` (a flow, `share maxmin | bottleneck`),
  or released with `release kvP;`, the decoder reserving a slot with `reqsD (0) reserve
  (1)`;
- arrays: pools and stages in role arrays reached by `choose j in N by (...)`:
  `prefill[j]`, `decode on decode[j]`, `transfer[k] ... from kv[j] to kvL (n)`,
  `tool[j]`, gauges aggregating over them (`max j in N (used(kv[j]))`);
- tiers: plain stages (fifo(c), ps reading `present`, delay) and a pool with a spill
  tier, `grow`, `load`, `drop`, `release`, reserve, reuse and cache over the whole value
  range.

Constants come from the whole domain the grammar admits: 0, negatives where a value may
be one, inf, fractions, and expressions that read the state. `program(k)` is
deterministic (a batch, a closed population or a constant renewal, per-session
constants, `~det`, `branch with (0 | 1)`, an ordered trace), so that it agrees with the
reference exactly; `program(k, "random")` draws (poisson, `~exp`, `~uniform`,
`branch with (p)`), for the statistical comparison. `program(k, "main")` writes the same
choices in the `fn main() { }` dialect of serq-workload.txt, as pyserq 0.1.4 takes it:
the declarations inside `fn main`, `turn;` runs the server, every kernel quantity in its
resource's unit (`hold kv (cost(kv, n))`, `run S (cost(S, w))`), a hold with a cache over
one pool (the slot's hold around the KV's, the KV's the one the engine admits), no `run`
block (the horizon is given outside, `// horizon: N`).
"""

from __future__ import annotations

import random
from pathlib import Path

from step_family import ternary

TRACE = Path(__file__).resolve().parents[1] / "corpus" / "valid" / "turns.csv"
TRACE_FORCED = Path(__file__).resolve().parents[1] / "corpus" / "valid" / "turns_forced.csv"

VLLM_REQUEST = """def vllm_request(out, forced) {
  hold reqs (1), kv (min(known, hit + budget_left(engine))) reserve (known)
       reuse (forced && computed == 0 ? 0 : prompt + computed + 1)
       at admission (known = computed < prompt ? prompt : computed + 1,
                     hit = forced && computed == 0 ? 0
                           : min(cachedin(kv), floor((known - 1) / bs) * bs)) {
    observe resumed = computed;
    set c = cached;
    prefill (known - c) growing kv;
    observe ttft = now - arrived;
    decode (out - 1 - (known - prompt)) growing kv;
  } cache (prompt + out - 1);
}
def long_prefill(reqs, c) = residents + queued(reqs) > 1 ? c : 0;"""

# the same request as pyserq 0.1.4 takes it: one pool a hold with a cache, so the slot's
# hold is around the KV's, whose queue the engine serves; quantities in their units, and
# no run of negative work (0.1.4 refuses one, where serq and 0.1.2 run it as no work)
VLLM_REQUEST_MAIN = """def vllm_request(out, forced) {
  hold reqs (cost(reqs, 1)) {
    hold kv (cost(kv, min(known, hit + budget_left(engine)))) reserve (cost(kv, known))
         reuse (cost(kv, forced && computed == 0 ? 0 : prompt + computed + 1))
         at admission (known = computed < prompt ? prompt : computed + 1,
                       hit = forced && computed == 0 ? 0
                             : min(cachedin(kv), floor((known - 1) / bs) * bs)) {
      observe resumed = computed;
      set c = cached;
      prefill (max(known - c, 0)) growing kv;
      observe ttft = now - arrived;
      decode (max(out - 1 - (known - prompt), 0)) growing kv;
    } cache (cost(kv, prompt + out - 1));
  }
}
def long_prefill(p, c) { residents + queued(p) > 1 ? c : 0 }"""

ENGINE_COSTS = (
    "c_it + c_tok * tokens",
    "1",
    "0.5",
    "0",
    "0.04 + max(0.004 + 0.00002 * (kv_decode + kv_prefill), tokens * 0.00005)",
    "0.0139 + 0.000041 * decoders + 0.000000138 * kv_decode + 0.0000515 * prefilled"
    " + 0.00000000402 * attention",
    "min(2, 0.25 + decoders / 4)",
)
BUDGETS = ("B", "B", "16", "12.5", "max(16, 256 - kv_decode / 8)", "residents > 2 ? 32 : 64")
SERVES = ("", "", "serve decode first;", "serve by (remaining);", "serve exclusive prefill;")
PLAIN_KINDS = (
    "fifo",
    "fifo(2)",
    "ps(1)",
    "ps(min(present, 2))",
    "ps(present > 1 ? 3 : 1)",
    "delay",
)


class _Serving:
    """One program's choices, drawn from `r`; `det` keeps it deterministic."""

    def __init__(self, r: random.Random, det: bool, main: bool = False) -> None:
        self.r = r
        self.det = det
        self.main = main
        self.trace = r.random() < 0.15
        self.shape = r.choice(("vllm", "vllm", "pd", "pd", "arrays", "tiers"))
        self.tool_stage = True

    # ---------------------------------------------------------------- helpers

    def u(self, resource: str, e: str) -> str:
        """`e` as a quantity of `resource`: `cost(resource, e)` in the `fn main` dialect."""
        return f"cost({resource}, {e})" if self.main else e

    def cost(self, c: str) -> str:
        """An engine's cost: not 0 in the `fn main` dialect (0.1.4 refuses an iteration
        of no time; serq and 0.1.2 run it)."""
        return "0.5" if self.main and c == "0" else c

    def run(self, stage: str, e: str) -> str:
        """The kernel's `run stage (e);`."""
        return f"run {stage} ({self.u(stage.split('[')[0], e)});"

    def draw(self, mean: str) -> str:
        """A draw of mean `mean`: `~det` when deterministic, else a law around it."""
        if self.det:
            return self.r.choice((f"~det({mean})", mean, f"~uniform({mean}, {mean})"))
        return self.r.choice((f"~exp({mean})", f"~uniform(0, 2 * {mean})", f"~erlang(2, {mean})"))

    def p(self) -> str:
        """A probability for `branch with`."""
        if self.det:
            return self.r.choice(("0", "1"))
        return self.r.choice(("0", "1", "0.5", "0.25", "0.9"))

    # ---------------------------------------------------------------- deployments

    def vllm(self) -> tuple[list[str], list[str], list[str]]:
        r = self.r
        lets = [
            f"let bs = {r.choice(('16', '16', '4', '1', '2.5'))};",
            f"let blocks = {r.choice(('1000', '40', '12', '6', '256'))};",
            f"let B = {r.choice(('256', '64', '32', '512', '16.5'))};",
            f"let chunk = {r.choice(('0', '0', '-1', '16', '0.5', 'inf', '64', '-inf'))};",
            f"let c_it = {r.choice(('0.01', '0', '1', '0.004'))};",
            f"let c_tok = {r.choice(('0.00005', '0', '0.001'))};",
        ]
        chunk = r.choice(
            ("chunk long_prefill(reqs, chunk);",) * 3 + ("chunk chunk;", "", "chunk 0;")
        )
        budget = r.choice(BUDGETS)
        via = ("", " admit via engine;") if self.main else (" admit via engine;", "")
        if self.main:  # the engine's waiting line is the KV pool's there
            chunk = chunk.replace("long_prefill(reqs,", "long_prefill(kv,")
        decls = [
            f"pool reqs {{ cap {r.choice(('32', '1', '2', '4', 'inf'))};{via[0]} }}",
            f"pool kv {{ cap blocks * bs; block bs; {r.choice(('evict lru;', 'evict lru;', 'evict by (-size);', 'evict by (last, age);'))}"
            f" {r.choice(('preempt lifo;', 'preempt lifo;', 'preempt lifo;', 'preempt none;'))}{via[1]} }}",
            f"stage engine : step {{ budget {budget}; cost {self.cost(r.choice(ENGINE_COSTS))}; {chunk}"
            f" {r.choice(SERVES)} memory kv; }}",
        ]
        forced = "forced" if self.trace else r.choice(("0", "0", "1", "serial == 1"))
        server = [
            "set arrived = now;",
            "set prompt = K + n;",
            f"vllm_request(o, {forced});",
            "observe hit_rate = c / max(prompt, 1);",
            "observe response = now - arrived;",
            "observe prefill_tokens = prompt - c;",
        ]
        return lets, [VLLM_REQUEST_MAIN if self.main else VLLM_REQUEST, *decls], server

    def pd(self) -> tuple[list[str], list[str], list[str]]:
        r = self.r
        lets = [
            f"let bs = {r.choice(('16', '4', '1', '2.5'))};",
            f"let B = {r.choice(('256', '64', '32'))};",
            f"let x0 = {r.choice(('0.001', '0', '0.5'))};",
        ]
        engine_p = r.random() < 0.75
        engine_d = r.random() < 0.75
        flow = r.random() < 0.5
        lease = r.choice(("inf", "inf", "0", "1.5", "30"))
        cap_p = r.choice(("500 * bs", "20 * bs", "inf", "300.5"))
        cap_d = r.choice(("500 * bs", "20 * bs", "40.5"))
        via_p = " admit via P;" if engine_p else ""
        via_d = " admit via D;" if engine_d else ""
        # in fn main the KV holds are the ones the engines admit (the slots' are plain)
        slot_p, kv_p = ("", via_p) if self.main else (via_p, "")
        slot_d, kv_d = ("", via_d) if self.main else (via_d, "")
        decls = [
            f"pool reqsP {{ cap {r.choice(('8', '1', '2'))};{slot_p} }}",
            f"pool kvP {{ cap {cap_p}; block bs; evict lru; {r.choice(('preempt lifo;', 'preempt none;'))}{kv_p} }}",
            f"pool reqsD {{ cap {r.choice(('8', '1', '3'))};{slot_d} }}",
            f"pool kvD {{ cap {cap_d}; block bs; {r.choice(('evict lru;', 'evict by (-size);'))} preempt lifo;{kv_d} }}",
        ]
        if engine_p:
            decls.append(
                f"stage P : step {{ budget B; cost {self.cost(r.choice(ENGINE_COSTS).replace('c_it + c_tok', '0.01 + 0.0001'))}; "
                f"{r.choice(('', 'chunk 0;', 'chunk 16;', 'chunk -1;'))} memory kvP; }}"
            )
        else:
            decls.append(f"stage P : {r.choice(PLAIN_KINDS)};")
        if engine_d:
            decls.append(
                f"stage D : step {{ budget B; cost {r.choice(('0.01 + 0.0001 * tokens', '1', '0.5 + decoders / 8'))};"
                f" {r.choice(SERVES)} memory kvD; }}"
            )
        else:
            decls.append(f"stage D : {r.choice(PLAIN_KINDS)};")
        decls.append("stage setup : delay;")
        if flow:
            decls += [
                f"stage egress : ps({r.choice(('10000', '100', '7.5'))});",
                f"stage ingress : ps({r.choice(('10000', '250', '0.5'))});",
                f"share {r.choice(('maxmin', 'bottleneck'))};",
            ]
        else:
            decls.append(f"stage link : {r.choice(('ps(1000)', 'fifo', 'delay', 'ps(0.5)'))};")
        hit = "at admission (hit = min(cachedin(kvP), floor((prompt - 1) / bs) * bs))"
        units_p = (
            "min(prompt, hit + budget_left(P))"
            if engine_p
            else r.choice(("prompt", "hit + 1", "min(prompt, hit + 8)"))
        )
        prefill = (
            "prefill on P (prompt - c) growing kvP;"
            if engine_p
            else f"prefill on P ((prompt - c) * {r.choice(('0.001', '0', '0.25'))});"
        )
        x = r.choice(("prompt - c", "prompt / 100", "0", "(prompt - c) / 1000"))
        n_in = r.choice(("prompt - 1 - c", "prompt - 1", "0", "prompt"))
        if flow:
            read = f"transfer on egress, ingress ({x}) from kvP to kvD ({n_in});"
        else:
            read = f"transfer ({x}) from kvP to kvD ({n_in});"
        if r.random() < 0.2:  # the kernel's three statements for it
            # (0.1.4 has no unit for a run over several stages: a flow is a transfer there)
            run = f"run egress, ingress ({x});" if flow else self.run("link", x)
            if not (flow and self.main):
                read = f"{run} load kvD ({self.u('kvD', n_in)}); release kvP;"
        elif r.random() < 0.2:  # the lease given back by the session, no read
            read = "release kvP;"
        slot = self.u("reqsD", "1")
        if engine_d:
            decode = [
                f"  hold reqsD ({slot}) {{",
                "    prefill on D (1) growing kvD;",
                "    observe ttft = now - arrived;",
                "    decode on D (o - 1) growing kvD;",
                "  }",
            ]
        else:
            decode = [
                f"  hold reqsD ({slot}) {{",
                "    observe ttft = now - arrived;",
                f"    decode on D ((o - 1) * {r.choice(('0.01', '0.5', '0'))});",
                "  }",
            ]
        reserve = r.choice(("prompt", "prompt", ""))
        reserve = f" reserve ({self.u('kvP', reserve)})" if reserve else ""
        cache_p = self.u("kvP", r.choice(("prompt", "prompt", "0", "inf")))
        prefiller = [
            f"{hit} {{",
            "  set c = cached;",
            "  observe hit = c;",
            f"  {prefill}",
            f"}} cache ({cache_p}) lease kvP ({lease});",
        ]
        if self.main:  # one pool a hold with a cache: the slot's around the KV's
            prefiller = [
                f"hold reqsP ({self.u('reqsP', '1')}) {{",
                f"  hold kvP ({self.u('kvP', units_p)}){reserve}",
                *("    " + x for x in prefiller),
                "}",
            ]
        else:
            prefiller = [
                f"hold reqsP (1), kvP ({units_p}){reserve}",
                *("     " + x for x in prefiller[:1]),
                *prefiller[1:],
            ]
        reuse = r.choice(("", "reuse (0)", "reuse (0)"))
        if reuse:
            reuse = f" reuse ({self.u('kvD', '0')})"
        slots = "" if self.main else ", reqsD (0) reserve (1)"
        cache_d = self.u("kvD", r.choice(("prompt + o", "prompt + o", "0", "prompt")))
        server = [
            "set arrived = now;",
            "set prompt = K + n;",
            *prefiller,
            self.run("setup", r.choice(("x0", "0", "0.25"))),
            f"hold kvD ({self.u('kvD', 'prompt')}) reserve ({self.u('kvD', 'prompt')}){slots}{reuse} {{",
            f"  {read}",
            "  observe read = now - arrived;",
            *decode,
            f"}} cache ({cache_d});",
        ]
        server.append("observe response = now - arrived;")
        return lets, decls, server

    def arrays(self) -> tuple[list[str], list[str], list[str]]:
        r = self.r
        n = r.choice(("2", "3", "N"))
        lets = [f"let N = {r.choice(('2', '3'))};", f"let bs = {r.choice(('16', '1', '4'))};"]
        engines = r.random() < 0.5
        decls = [
            f"pool kv[{n}] {{ cap {r.choice(('2000', '64', '16.5', 'inf'))}; block bs;"
            f" {r.choice(('evict lru;', 'evict by (size);'))} preempt lifo; }}",
            f"pool kvL {{ cap {r.choice(('2000', '100', 'inf'))}; }}",
        ]
        if engines:
            decls.append(
                f"stage prefill[{n}] : step {{ budget {r.choice(('64', '16', '8.5'))};"
                f" cost {self.cost(r.choice(('0.01', '1', '0', '0.01 + tokens / 1000')))}; memory kv; }}"
            )
        else:
            decls.append(f"stage prefill[{n}] : {r.choice(PLAIN_KINDS)};")
        decls += [
            f"stage decode[{n}] : {r.choice(PLAIN_KINDS)};",
            f"stage link[{n}] : ps({r.choice(('100', '2.5', '1000'))});",
            f"stage tool[{n}] : delay;",
        ]
        self.tool_stage = False  # `tool` is the array here
        key = r.choice(
            (
                "queue(decode[j])",
                "used(kv[j]), -j",
                "holders(kv[j]) + queued(kv[j])",
                "0",
                "serial - j",
                "busy(prefill[j]) * 2 + work(decode[j])",
            )
        )
        work = "prompt" if engines else f"prompt * {r.choice(('0.001', '0.01', '0'))}"
        prefill = f"prefill[j] ({work}) growing kv[j];" if engines else f"prefill[j] ({work});"
        other = r.choice(("1 - j", "j", "0", f"{n} - 1 - j"))
        server = [
            "set arrived = now;",
            "set prompt = K + n;",
            f"choose j in {n} by ({key});",
            "observe picked = j;",
            f"hold kv[j] ({self.u('kv', r.choice(('prompt', 'min(prompt, 8)', '0')))}) {{",
            f"  {prefill}",
            "  observe ttft = now - arrived;",
            f"}} cache ({self.u('kv', r.choice(('prompt', 'prompt', '0', 'inf')))}) lease kv[j] ({r.choice(('inf', '0', '2.5'))});",
            f"hold kvL ({self.u('kvL', r.choice(('prompt', '1', '0.5')))}) {{",
            f"  transfer[{other}] ({r.choice(('prompt / 100', '0', '1'))}) from kv[j] to kvL ({r.choice(('0', '0.5', 'min(prompt, 1)'))});",
            f"  decode on decode[j] ({r.choice(('o * 0.01', '0.5', '0'))});",
            "}",
            "observe response = now - arrived;",
        ]
        self.tool_index = "[j]"
        return lets, decls, server

    def tiers(self) -> tuple[list[str], list[str], list[str]]:
        r = self.r
        lets = [f"let cap = {r.choice(('64', '16', '8', '2.5 * 4', 'inf'))};"]
        block = r.choice(("", "block 1;", "block 4;", "block 2.5;"))
        spill = r.random() < 0.5
        opts = [
            "cap cap;",
            block,
            r.choice(
                ("evict lru;", "evict by (size);", "evict by (-age, size);", "evict by (last);")
            ),
            r.choice(("preempt lifo;", "preempt none;", "")),
            r.choice(("", "queue fifo;", "queue by (serial);", "queue by (-need, serial);")),
        ]
        if spill:
            opts.append(
                f"spill host via pcie ({r.choice(('size * 0.01', '0', '1'))})"
                f" when ({r.choice(('size >= 2', 'age > 0', '1 == 1', 'last >= 0.5'))});"
            )
        decls = [f"pool m {{ {' '.join(o for o in opts if o)} }}"]
        if spill:
            decls += [
                f"pool host {{ cap {r.choice(('32', '6.5', 'inf'))}; {r.choice(('evict lru;', 'evict by (age);'))} }}",
                f"stage pcie : {r.choice(('fifo', 'delay', 'ps(2)'))};",
            ]
        decls += [
            f"stage prefill : {r.choice(PLAIN_KINDS)};",
            f"stage decode : {r.choice(PLAIN_KINDS)};",
        ]
        units = self.u("m", r.choice(("need", "need", "min(need, hit + 2)", "0", "0.5", "hit + 1")))
        reserve = r.choice(("", "", "need", "0", "need + 0.5"))
        reserve = f" reserve ({self.u('m', reserve)})" if reserve else ""
        reuse = r.choice(("", "", "0", "need", "hit"))
        reuse = f" reuse ({self.u('m', reuse)})" if reuse else ""
        cache = self.u("m", r.choice(("need", "need + o", "0", "inf", "cached + 1", "0.5")))
        body = [
            "  set c = cached;",
            "  observe hit = c;",
            f"  prefill ({r.choice(('max(need - c, 0) * 0.01', '0', 'need / 4', '1'))});",
        ]
        if r.random() < 0.4:
            body.append(f"  grow m ({self.u('m', r.choice(('0', '1', '0.5', 'o', 'need')))});")
        if r.random() < 0.3:
            load = r.choice(("0", "0.5", "min(1, need - c)", "need - c"))
            body.append(f"  load m ({self.u('m', load)});")
        body += [
            "  observe ttft = now - arrived;",
            f"  decode ({r.choice(('o * 0.01', '0', '0.5', '~det(0.25)'))});",
        ]
        if r.random() < 0.2:
            body.append("  release m;")
        server = [
            "set arrived = now;",
            "set need = K + n;",
            f"hold m ({units}){reserve}{reuse}",
            "     at admission (hit = min(cachedin(m), need)) {",
            *body,
            f"}} cache ({cache});",
        ]
        if r.random() < 0.25:
            server.append("drop m;")
        server += ["observe in = cachedin(m);", "observe response = now - arrived;"]
        if spill:
            server.append("observe tier = cachedin(host);")
        return lets, decls, server

    def gauges(self) -> list[str]:
        r = self.r
        options = {
            "vllm": (
                "used(kv)",
                "queued(reqs)",
                "holders(kv) + 0.5",
                "free(kv) == 0",
                "used(reqs) * 2",
            ),
            "pd": (
                "used(kvP) - used(kvD)",
                "holders(reqsD)",
                "queued(kvD) > 0",
                "busy(P) + busy(D)",
            ),
            "arrays": (
                "max q in N (used(kv[q])) - min q in N (used(kv[q]))",
                "sum k in 2 (holders(kv[k]))",
                "max q in 2 (queue(decode[q]))",
                "min q in (N - 1) (free(kv[q]))",
            ),
            "tiers": ("used(m)", "queued(m) + holders(m)", "free(m) > 2", "busy(prefill)"),
        }[self.shape]
        return [f"gauge g{i} = {r.choice(options)};" for i in range(r.randint(0, 2))]


def program(k: int, dialect: str = "det") -> str:
    """The k-th program of the family from its seed alone: deterministic (`det`, or its
    alias `items`), drawing (`random`), or deterministic in the `fn main` dialect
    (`main`; the module docstring), or drawing in that dialect (`main-random`, the same
    choices as `random` for pyserq 0.1.4's statistical comparison)."""
    main = dialect in ("main", "main-random")
    det = dialect in ("det", "items", "main")
    r = random.Random(5_000_011 * k + 29)
    s = _Serving(r, det, main)
    s.tool_index = ""
    lets, decls, server = getattr(s, s.shape)()
    n = r.randint(1, 6)
    if det:
        arrive = r.choice(
            (
                f"arrive batch({n});",
                f"arrive batch({n});",
                f"arrive closed({r.choice(('1', '2', '3'))});",
                f"arrive renewal({r.choice(('1', '0.5', '2.5', '~det(2)'))});",
            )
        )
        if r.random() < 0.03:
            arrive = "arrive none;"  # the default: nothing arrives
    else:
        arrive = r.choice(
            (
                "arrive poisson(0.5);",
                "arrive poisson(2);",
                "arrive renewal(~h2(1, 4));",
                "arrive closed(4);",
            )
        )
    arrivals = ""
    if ("renewal" in arrive or "poisson" in arrive) and r.random() < 0.3 and not main:
        arrivals = f" arrivals {r.choice(('1', '3', '7'))};"
    wl = [arrive, "hidden o;"]
    turns = r.choice(("1", "2", "3", "2.5"))
    init = ["set K = 0;", f"set left = {turns};"]
    if det:
        prompts = [
            r.choice(("100", "40", "16", "17", "1", "2.5", "0", "200", "33.5")) for _ in range(n)
        ]
        outs = [r.choice(("10", "1", "2", "30", "2.5", "60", "0")) for _ in range(n)]
        if main:  # at least one token: 0.1.4 refuses the negative work of `o - 1`
            outs = ["1" if o == "0" else o for o in outs]
        turn = [f"set n = ({ternary(prompts)}) + turn_no * 8;", f"set o = {ternary(outs)};"]
        think = s.draw(r.choice(("1", "0", "0.5")))
        # the tool array is indexed by the server's pick, which the session reads back
        first = "[0]" if s.tool_index else ""
        start = f"tool{first} ({r.choice(('0', '0.25', '1'))} * serial);"
    else:
        turn = [
            r.choice(
                (
                    "set n = K == 0 ? ~uniform(100, 300) : ~exp(50);",
                    "set n = 20 + floor(~uniform(0, 200));",
                    "set n = ~exp(100) + 1;",
                )
            ),
            r.choice(("set o = ~exp(20) + 1;", "set o = 2 + floor(~exp(30));")),
        ]
        think = s.draw(r.choice(("1", "3", "0.5")))
        start = ""
    if s.trace:
        ordered = det or r.random() < 0.5
        wl.insert(
            1,
            f'trace "{TRACE_FORCED if r.random() < 0.5 else TRACE}"{" ordered" if ordered else ""};',
        )
        turn = ["set n = new;", "set o = out + 1;"]
        think = "think"
        go_on = "more && left > 0"
    else:
        go_on = "left > 0"
    wl += [f"init {{ {' '.join(init)} }}", f"turn {{ {' '.join(turn)} }}"]
    branch_with = r.random() < 0.3
    request = [] if main else ["request;"]  # in fn main `turn;` runs the server
    step = [
        *request,
        "set K = prompt + o;" if s.shape != "tiers" else "set K = need + o;",
        "set left = left - 1;",
    ]
    if branch_with:
        step.append(f"branch with ({s.p()}) {{ tool{s.tool_index} ({think}); }}")
    again = [] if main else ["  turn;"]
    step += [
        f"branch ({go_on}) {{",
        f"  tool{s.tool_index} ({think});",
        *again,
        "} else {",
        "  end;",
        "}",
    ]
    if main:
        session = [*([start] if start else []), "loop {", "  turn;", *("  " + x for x in step), "}"]
    else:
        session = [*([start] if start else []), "turn;", "loop {", *("  " + x for x in step), "}"]
    decls = [*decls, *([] if not s.tool_stage else ["stage tool : delay;"])]
    defs = [d for d in decls if d.startswith("def ")]
    decls = [d for d in decls if not d.startswith("def ")]
    if det:
        horizon = "400" if arrivals else r.choice(("60", "200", "30"))
        run = (
            f"run {{ horizon {horizon}; warmup {r.choice(('0', '0', '1.5'))}; seed 1;{arrivals} }}"
        )
    else:
        horizon = r.choice(("300", "600"))
        run = f"run {{ horizon {horizon}; warmup 20; seed 1;{arrivals} }}"
    body = [
        *decls,
        *s.gauges(),
        "",
        "workload {",
        *("  " + x for x in wl),
        "  session {",
        *("    " + x for x in session),
        "  }",
        "}",
        "",
        "server {",
        *("  " + x for x in server),
        "}",
    ]
    kind = (
        ("fn main" if det else "fn main, random") if main else "deterministic" if det else "random"
    )
    head = [f"// serving family program {k} ({s.shape}, {kind})"]
    if main:  # no run block there: the horizon is the caller's (seed 1)
        head.append(f"// horizon: {horizon}")
        text = "\n".join(
            [*head, *lets, *defs, "fn main() {", *("  " + x if x else x for x in body), "}", ""]
        )
        # 0.1.4 keeps `arrived` for its claims, which serq-language.txt does not have
        return text.replace("arrived", "sent")
    return "\n".join([*head, *lets, *defs, *body, "", run, ""])
