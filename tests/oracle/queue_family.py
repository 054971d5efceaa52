"""A family of disaggregated deployments written with queues, as the spec and
examples/llmd_pd.sq write them, for the differential search against pyserq 0.1.2
(`scripts/search_step.py --family queues`) and its CI sample (`test_serving_families.py`).

Each program is a gateway (`queue gw : gateway { route { ... } }`, sometimes with a serve
of its own) that picks a prefill and a decode member with `choose` over their pools and
stages, and sends a turn either to a local decode or through a prefill member whose entry
leases its KV (`lease kv (inf | 0 | 2.5 | 30)`) to a decode member's `decode (prompt)
from src`, which reads it: over the NICs of a pull relation (`D pull P latency x share
maxmin | bottleneck`, each queue with `nic ps(...)`), over two link queues named with
`transfer on E[src], I[self]` (link serves with `latency`), or by calling a link queue's
`transfer (n)` entry. The members serve with a step engine (budget, cost, chunk drawn
from 0, -1, inf, fractions and the alone exception; every serve order), fifo(c), ps or delay;
families have one to three members, sized by a `let` at times; entries bind `at
admission`, reserve, reuse, mark moments the route reads back (`D.first_token`), set
attributes the route reads (`D.known`); gauges aggregate over the members (`max m in ND
(used(D[m].kv))`). The session's side is a loop of turns with a context `K` that grows,
a think `tool`, and `end`.

`program(k)` is deterministic (a batch, a constant renewal, per-session constants), so
that it agrees with the reference exactly; `program(k, "random")` draws its arrivals and
turns, for the statistical comparison (`differential.compare_statistics`).
`program(k, "main")` writes the same choices in the `fn main() { }` dialect of
serq-workload.txt, as pyserq 0.1.4 takes it (`--dialect main`): the declarations inside
`fn main`, the server `{ gw.route(); }` run by the session's `turn;`, every kernel quantity
in its resource's unit (`hold kv (cost(kv, n))`, `run (cost(P, w))`), one pool a hold
with a cache (the slot's hold around the KV's, the KV pool the one its engine admits), no
run of negative work, no iteration of cost 0, `def f(x) { e }`, `sent` for the
attribute `arrived` (0.1.4 keeps that name) and no `run` block (`// horizon: N`).
There the decoder's engine admits the KV hold of `decode (prompt) from src`, so the read
starts in its plan, at a NIC or link declared above the engine, which both references
end only at the next event (tests/sim/NOTES.md §18): such a program may differ there.
"""

from __future__ import annotations

import random

from step_family import ternary

CHUNKS = ("", "chunk 0;", "chunk -1;", "chunk inf;", "chunk 0.5;", "chunk 16;", "chunk 64;")
BUDGETS = ("32", "64", "512", "12.5", "max(16, 64 - residents)", "inf")
STEP_COSTS = (
    "1",
    "0.01 + 0.00005 * tokens",
    "0.5",
    "0",
    "0.04 + max(0.004 + 0.00002 * (kv_decode + kv_prefill), tokens * 0.00005)",
    "0.0139 + 0.000041 * decoders + 0.000000138 * kv_decode + 0.0000515 * prefilled"
    " + 0.00000000402 * attention",
)
SERVES = ("", "", "serve decode first;", "serve by (remaining);", "serve exclusive prefill;")
SPEEDS = ("0.001", "0.01", "0", "0.5")  # seconds per token of a plain stage
DECODE_SPEEDS = ("0.01", "0.5", "0")
PLAIN = ("fifo", "fifo(2)", "ps(1)", "ps(min(present, 2))", "delay")
LEASES = ("inf", "inf", "inf", "0", "2.5", "30")
LATENCIES = ("0", "0.001", "0.5", "x0", "2 * x0")
# `ps(0.5 * 400)`: a constant expression, which serq folds and the reference refuses for
# a NIC a flow holds (tests/sim/NOTES.md §17), kept rare
NICS = ("ps(20000)", "ps(1000)", "ps(100)", "ps(7.5)", "ps(20000)", "ps(1000)", "ps(100)")
NICS += ("ps(7.5)", "ps(0.5)", "ps(0.5 * 400)")


class _Queues:
    """The choices of one program, drawn from `r`."""

    def __init__(self, r: random.Random, det: bool, main: bool = False) -> None:
        self.r = r
        self.det = det
        self.main = main
        self.np = r.choice((1, 1, 2, 2, 3))
        self.nd = r.choice((1, 2, 2, 3))
        self.size_p = r.choice(("NP", str(self.np)))
        self.bs = r.choice(("1", "4", "16", "16", "2.5"))
        self.p_step = r.random() < 0.65
        self.d_step = r.random() < 0.65
        self.read = r.choice(("pull", "pull", "pull", "links", "entry"))
        self.local = r.choice(("n < 150", "n < 150", "0", "1", "serial == 1", "K > 0"))
        self.arrived_pool = self.d_step and r.random() < 0.6
        # the pool of requests whose KV arrived (0.1.4 keeps the name `arrived`)
        self.parked = "parked" if main else "arrived"

    def u(self, resource: str, e: str) -> str:
        """`e` as a quantity of `resource`: `cost(resource, e)` in the `fn main` dialect."""
        return f"cost({resource}, {e})" if self.main else e

    def hold(
        self, outer: tuple[str, str, str], inner: tuple[str, str, str], rest: str, indent: str
    ) -> tuple[list[str], list[str]]:
        """The head and tail lines of a hold on two pools, each `(pool, units, reserve)`
        (`rest` the inner pool's reuse and `at admission`): one hold of both pools, the
        outer first, or in the `fn main` dialect the outer pool's hold around the inner's
        (0.1.4 takes a hold with a cache over one pool); the caller closes the body with
        the tail and its `cache`/`lease` clause."""
        (op, ou, orr), (ip, iu, ir) = outer, inner
        if not self.main:
            first = f"{op} ({ou}){f' reserve ({orr})' if orr else ''}"
            second = f"{ip} ({iu}){f' reserve ({ir})' if ir else ''}"
            return [f"{indent}hold {first}, {second}{rest} {{"], []
        head = [
            f"{indent}hold {op} ({self.u(op, ou)})"
            f"{f' reserve ({self.u(op, orr)})' if orr else ''} {{",
            f"{indent}  hold {ip} ({self.u(ip, iu)})"
            f"{f' reserve ({self.u(ip, ir)})' if ir else ''}{rest} {{",
        ]
        return head, [f"{indent}}}"]

    def step(self, name: str, decode: bool) -> str:
        r = self.r
        chunk = r.choice(CHUNKS)
        if r.random() < 0.3:  # the alone exception (the reference's serve reads no pool)
            chunk = f"chunk residents > 1 ? {r.choice(('0', '16', '0.5', '-1'))} : 0;"
        budget = r.choice(BUDGETS)
        if budget == "inf" and chunk in ("", "chunk 0;", "chunk -1;", "chunk inf;"):
            chunk = "chunk 32;"  # an unbounded plan needs a finite chunk
        if budget == "inf" and "residents" in chunk:
            budget = "512"
        serve = r.choice(SERVES) if decode else r.choice(("", "serve by (-admission);"))
        cost = r.choice(STEP_COSTS)
        if self.main and cost == "0":  # 0.1.4 refuses an iteration of no time
            cost = "0.5"
        return f"  serve step {{ budget {budget}; cost {cost}; {chunk} {serve} memory kv; }}"

    def kv(self, via: str = "") -> str:
        """The queue's KV pool; `via` its `admit via` (the `fn main` dialect's engine
        admits the KV's hold, the innermost)."""
        r = self.r
        cap = r.choice(("1000 * bs", "40 * bs", "12 * bs", "inf", "300.5"))
        evict = r.choice(("evict lru;", "evict lru;", "evict by (-size);", "evict by (age, last);"))
        preempt = r.choice(("preempt lifo;", "preempt lifo;", "preempt none;"))
        via = f" admit via {via};" if via and self.main else ""
        return f"  pool kv {{ cap {cap}; block bs; {evict} {preempt}{via} }}"

    def via(self, stage: str, engine: bool) -> str:
        """A slot pool's `admit via` clause: the engine's queue in the items dialect; in
        `fn main` the KV pool's (`kv`)."""
        return f" admit via {stage};" if engine and not self.main else ""

    def gateway(self) -> list[str]:
        r = self.r
        key_p = r.choice(
            (
                "queued(P[i].reqs) + holders(P[i].reqs)",
                "work(P[i])",
                "used(P[i].kv), -i",
                "0",
                "holders(P[i].reqs) * 2 - i",
            )
        )
        key_d = r.choice(
            (
                "holders(D[j].reqs)",
                "used(D[j].kv)",
                "free(D[j].kv) * -1, j",
                "queue(D[j])",
                "serial - j",
            )
        )
        served = r.random() < 0.3
        head = ["queue gw : gateway {"]
        if served:
            head.append(f"  serve {r.choice(('delay', 'fifo', 'ps(2)'))};")
        route = [
            "    set arrived = now;",
            "    set prompt = K + n;",
        ]
        if served:
            route.append(f"    run ({self.u('gw', r.choice(('0', '0.001', '0.25', 'n / 1000')))});")
        route += [
            f"    choose i in {self.size_p} by ({key_p});",
            f"    choose j in ND by ({key_d});",
            f"    branch ({self.local}) {{",
            "      D[j].decode(prompt);",
            "    } else {",
            "      P[i].prefill(prompt);",
            "      D[j].decode(prompt) from P[i];",
            "      observe prefill_time = P.prefilled - arrived;",
            "      observe transfer_time = D.kv_in - P.prefilled;",
            "      observe hit = P.c;",
            "    }",
            "    observe ttft = D.first_token - arrived;",
            "    observe known = D.known;",
            "    observe response = now - arrived;",
        ]
        return [*head, "  route {", *route, "  }", "}"]

    def prefill_queue(self) -> list[str]:
        r = self.r
        lines = [f"queue P[{self.size_p}] : prefill {{"]
        if self.p_step:
            lines.append(
                f"  pool reqs {{ cap {r.choice(('16', '1', '2', '4'))};{self.via('P', True)} }}"
            )
        else:
            lines.append(f"  pool reqs {{ cap {r.choice(('16', '1', '2', 'inf'))}; }}")
        lines.append(self.kv("P" if self.p_step else ""))
        if self.p_step:
            lines.append(self.step("P", decode=False))
        else:
            lines.append(f"  serve {r.choice(PLAIN)};")
        if self.read == "pull":
            lines.append(f"  nic {r.choice(NICS)};")
        reserve = r.choice(("prompt", "prompt", "", "0"))
        # the work left after the hit: 0.1.4 refuses a run of negative work, which serq
        # and 0.1.2 run as no work
        left = "max(prompt - c, 0)" if self.main else "prompt - c"
        if self.p_step:
            units = r.choice(("min(prompt, hit + budget_left(P))", "hit + 1", "prompt"))
            run = f"prefill ({left}) growing kv;"
        else:
            units = r.choice(("prompt", "min(prompt, hit + 8)", "hit"))
            run = f"run ({self.u('P', f'({left}) * {r.choice(SPEEDS)}')});"
        lease = r.choice(LEASES)
        cache = self.u("kv", r.choice(("prompt", "prompt", "0", "inf", "prompt - 1")))
        head, tail = self.hold(
            ("reqs", "1", ""),
            ("kv", units, reserve),
            "\n         at admission (hit = min(cachedin(kv), reusable(prompt, bs)))",
            "    ",
        )
        inner = "  " if self.main else ""
        lines += [
            "  prefill (prompt) {",
            *head,
            f"    {inner}  set c = cached;",
            f"    {inner}  {run}",
            f"    {inner}}} cache ({cache}) lease kv ({lease});",
            *tail,
            "    mark prefilled;",
            "  }",
            "}",
        ]
        return lines

    def decode_queue(self) -> list[str]:
        r = self.r
        lines = ["queue D[ND] : decode {"]
        via = self.via("D", self.d_step)
        if self.arrived_pool:
            lines.append(f"  pool {self.parked} {{ cap {r.choice(('4', '1', '2'))};{via} }}")
        lines.append(f"  pool reqs {{ cap {r.choice(('4', '1', '8', 'inf'))};{via} }}")
        lines.append(self.kv("D" if self.d_step else ""))
        if self.d_step:
            lines.append(self.step("D", decode=True))
        else:
            lines.append(f"  serve {r.choice(PLAIN)};")
        if self.read == "pull":
            lines.append(f"  nic {r.choice(NICS)};")
        slot = self.parked if self.arrived_pool else "reqs"
        inner = "  " if self.main else ""  # the body of a hold nested in the slot's
        if self.d_step:
            local_units = r.choice(("min(prompt, budget_left(D))", "prompt", "1"))
            local_body = [
                "prefill (prompt) growing kv;",
                "mark first_token;",
                "decode (o - 1) growing kv;",
            ]
            remote_body = [
                "prefill (1) growing kv;",
                "mark first_token;",
                "decode (o - 1) growing kv;",
            ]
        else:
            w = r.choice(("0.001", "0.01", "0"))
            local_units = r.choice(("prompt", "prompt + 1", "0"))
            local_body = [
                f"run ({self.u('D', f'prompt * {w}')});",
                "mark first_token;",
                f"run ({self.u('D', f'(o - 1) * {r.choice(DECODE_SPEEDS)}')});",
            ]
            remote_body = [
                "mark first_token;",
                f"run ({self.u('D', f'(o - 1) * {r.choice(DECODE_SPEEDS)}')});",
            ]
        if self.read == "pull":
            read = "transfer (prompt) from src to kv (prompt - 1);"
        elif self.read == "links":
            read = "transfer on E[src], I[self] (prompt) from src to kv (prompt - 1);"
        else:
            read = "L[self].transfer(prompt) from src to kv (prompt - 1);"
        local_cache = self.u("kv", r.choice(("prompt + o", "prompt + o", "0", "prompt")))
        remote_cache = self.u("kv", r.choice(("prompt + o", "prompt + o", "inf", "prompt")))
        local_head, local_tail = self.hold(
            ("reqs", "1", ""), ("kv", local_units, "prompt"), "", "    "
        )
        if self.main:  # the slot's reservation around the KV's hold
            remote_head, remote_tail = self.hold(
                (slot, "0", "1"),
                ("kv", "prompt", "prompt"),
                f" reuse ({self.u('kv', '0')})",
                "    ",
            )
        else:
            remote_head = [
                f"    hold kv (prompt) reserve (prompt), {slot} (0) reserve (1) reuse (0) {{"
            ]
            remote_tail = []
        body = "      " + inner
        lines += [
            "  decode (prompt) {",
            *local_head,
            *(body + x for x in local_body),
            f"{body}set known = prompt + o;",
            f"    {inner}}} cache ({local_cache});",
            *local_tail,
            "  }",
            "  decode (prompt) from src {",
            *remote_head,
            f"{body}{read}",
            f"{body}mark kv_in;",
            f"{body}hold {slot} ({self.u(slot, '1')}) {{",
            *(body + "  " + x for x in remote_body),
            f"{body}}}",
            f"{body}set known = prompt;",
            f"    {inner}}} cache ({remote_cache});",
            *remote_tail,
            "  }",
            "}",
        ]
        return lines

    def links(self) -> list[str]:
        r = self.r
        if self.read == "links":
            return [
                f"queue E[{self.size_p}] : link {{ serve ps({r.choice(('2000', '100', '7.5'))})"
                f" latency {r.choice(LATENCIES)}; }}",
                f"queue I[ND] : link {{ serve ps({r.choice(('2000', '100', '50.5'))})"
                f" latency {r.choice(LATENCIES)}; }}",
                f"share {r.choice(('maxmin', 'bottleneck'))};",
            ]
        if self.read == "entry":
            return [
                "queue L[ND] : link {",
                f"  serve {r.choice(('ps(1000)', 'fifo', 'delay', 'ps(0.5 * 20)'))};",
                f"  transfer (n) {{ run ({self.u('L', f'n * {r.choice(SPEEDS[:3])}')}); }}",
                "}",
            ]
        share = r.choice(("maxmin", "bottleneck"))
        latency = r.choice(("", f" latency {r.choice(LATENCIES)}"))
        return [f"D pull P{latency} share {share};"]


def program(k: int, dialect: str = "det") -> str:
    """The k-th program of the family from its seed alone: deterministic (`det`, or its
    alias `items`), drawing its arrivals and turns (`random`), or deterministic in the
    `fn main` dialect (`main`; the module docstring), or drawing in that dialect
    (`main-random`, for pyserq 0.1.4's statistical comparison)."""
    main = dialect in ("main", "main-random")
    det = dialect in ("det", "items", "main")
    r = random.Random(9_176_543 * k + 11)
    q = _Queues(r, det, main)
    n = r.randint(1, 6)
    lets = [
        f"let NP = {q.np};",
        f"let ND = {q.nd};",
        f"let bs = {q.bs};",
        f"let x0 = {r.choice(('0.002', '0', '0.25'))};",
    ]
    if main:
        defs = ["def reusable(p, b) { floor((p - 1) / b) * b }"]
    else:
        defs = ["def reusable(p, b) = floor((p - 1) / b) * b;"]
    decls = ["stage tool : delay;", ""]
    decls += q.gateway() + [""] + q.prefill_queue() + [""]
    if q.read != "pull":  # the links a transfer names are declared above it
        decls += q.links() + [""]
    decls += q.decode_queue() + [""]
    if q.read == "pull":  # a relation follows both its queues
        decls += q.links()
    gauges = []
    for i in range(r.randint(0, 3)):
        gauges.append(
            f"gauge g{i} = "
            + r.choice(
                (
                    "max m in ND (used(D[m].kv)) - min m in ND (used(D[m].kv))",
                    "max m in ND (free(D[m].reqs) == 0)",
                    "sum m in NP (queued(P[m].reqs))",
                    "sum m in NP (holders(P[m].kv)) + 0.5",
                    "min m in ND (busy(D[m]))",
                    "max m in NP (queue(P[m]))",
                )
            )
            + ";"
        )
    turns = r.choice(("1", "2", "3", "2.5"))
    if det:
        prompts = [r.choice(("100", "200", "40", "16", "1", "2.5", "300", "17")) for _ in range(n)]
        outs = [r.choice(("10", "1", "2", "30", "2.5", "60")) for _ in range(n)]
        arrive = r.choice(
            (
                f"arrive batch({n});",
                f"arrive batch({n});",
                f"arrive renewal({r.choice(('1', '0.5', '2.5'))});",
            )
        )
        turn = [
            f"    set n = ({ternary(prompts)}) + turn_no * 50;",
            f"    set o = {ternary(outs)};",
        ]
        think = r.choice(("0", "1", "0.5"))
        gap = r.choice(("0", "0.25", "1"))
        start = [f"    tool ({gap} * serial);"]
    else:
        arrive = f"arrive {r.choice(('poisson(1.4)', 'poisson(0.5)', 'renewal(~h2(1, 4))'))};"
        turn = [
            "    set n = 100 + floor(~exp(300));",
            "    set o = 10 + floor(~exp(60));",
        ]
        think = "~exp(3)"
        start = []
    # a turn: the context grows, one turn fewer is left, the last ends, the others think
    turn_end = [
        "      set K = prompt + o;",
        "      set left = left - 1;",
        "      branch (left <= 0) {",
        "        end;",
        "      } else {",
        f"        tool ({think});",
    ]
    if main:  # `turn;` draws the turn and runs the server, which routes
        session = [*start, "    loop {", "      turn;", *turn_end, "      }", "    }"]
    else:
        session = [
            *start,
            "    turn;",
            "    loop {",
            "      request gw;",
            *turn_end,
            "        turn;",
            "      }",
            "    }",
        ]
    workload = [
        "workload {",
        f"  {arrive}",
        "  hidden o;",
        f"  init {{ set K = 0; set left = {turns}; }}",
        "  turn {",
        *turn,
        "  }",
        "  session {",
        *session,
        "  }",
        "}",
    ]
    if det:
        horizon = r.choice(("60", "200", "30"))
        run = f"run {{ horizon {horizon}; warmup {r.choice(('0', '0', '1'))}; seed 1; }}"
    else:
        horizon = "300"
        run = f"run {{ horizon {horizon}; warmup 20; seed 1; }}"
    if main:  # no run block there: the horizon is the caller's (seed 1)
        body = [*decls, *gauges, "", *workload, "", "server {", "  gw.route();", "}"]
        text = "\n".join(
            [
                f"// queue family program {k} (fn main{'' if det else ', random'})",
                f"// horizon: {horizon}",
                *lets,
                *defs,
                "fn main() {",
                *("  " + x if x else x for x in body),
                "}",
                "",
            ]
        )
        # 0.1.4 keeps `arrived` for its claims, which serq-language.txt does not have
        return text.replace("arrived", "sent")
    lines = [
        f"// queue family program {k} ({'deterministic' if det else 'random'})",
        *lets,
        *defs,
        *decls,
        *gauges,
        "",
        *workload,
        "",
        run,
        "",
    ]
    return "\n".join(lines)
