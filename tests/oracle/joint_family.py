"""A family of deployments with two to four step engines, as users write them, for the
differential search against pyserq 0.1.2 (`scripts/search_step.py --family joint`) and
its CI sample (`test_joint_family.py`): the programs that `serq.sim.joint` fast-forwards
together (tests/sim/test_joint_spans.py checks it against stepping; this family checks
the engines against the reference).

Two shapes, each drawn over the whole domain:

- replicas: `stage E[n] : step` behind a router, each with its request slots `reqs[n]`
  (`admit via E`) and its KV pool `kv[n]`, or one KV pool every member shares; the
  router picks by the fewest requests (`holders + queued`), the least used memory, round
  robin on the serial and the turn, or the longest cached prefix (`cachedin`);
- pd: prefill engines `P[np]` and decode engines `D[nd]` (one or two each), each member
  with its slots and KV (or one KV pool a side), the prefiller's KV leased (`lease
  kvP[i] (t)`, t of inf, 0, fractions) and read by the decoder with `transfer (x) from
  kvP[i] to kvD[j] (m)` over a link stage or over two NICs (`transfer on egress[i],
  ingress[j]`, a flow, `share maxmin | bottleneck`), the decoder's slot reserved
  (`arrivedD[j] (0) reserve (1) reuse (0)`, the pool of arrived requests declared
  first); a short turn skips the prefiller and is prefilled on the decoder.

Both write the request as lib/vllm.sq does (admission `at admission` with `known` and
the hit of cached full blocks, `reserve (known)`, resumption from `computed`) or as a
plain `hold reqs (1), kv (p)`; the session is written as a `session { }` of its own or
as `workload { turn { } session { request; } }` with a `server { }`. Constants come from
the whole domain: chunk 0 (no cap), -1, fractions and inf; budgets below the batch and
fractional; costs of whole numbers (iterations of several engines end together), 0,
fractions, `max`, `kv_decode`; `preempt none`; fractional token counts and blocks;
pools too small for a turn's context (they evict and preempt); think times of 0.

`program(k)` is deterministic (a batch or a constant renewal, per-session constants
by `serial`), so that it agrees with the reference exactly; `program(k, "main")` writes
the same choices in the `fn main` dialect for pyserq 0.1.4 (`--dialect main`).
"""

from __future__ import annotations

import random

from step_family import ternary

COSTS = (
    "1",
    "2",
    "0.5",
    "0.01 + 0.00005 * tokens",
    "max(0.012, 0.0002 * tokens)",
    "0.01 + 0.000002 * kv_decode + 0.00004 * tokens",
    "max(1, tokens / 64)",
    "0.008 + 0.0004 * decoders + 0.00003 * prefilled",
    "0",
)
BUDGETS = ("1", "1.5", "2", "16", "64", "512", "512", "max(8, 4 * residents)", "12.5", "inf")
CHUNKS = ("", "", "chunk 0;", "chunk -1;", "chunk 16;", "chunk 0.5;", "chunk 64;", "chunk inf;")
SERVES = (
    "",
    "",
    "serve decode first;",
    "serve by (remaining);",
    "serve by (-remaining);",
    "serve by (-admission);",
    "serve exclusive prefill;",
)
EVICTS = ("evict lru;", "evict lru;", "evict by (-size);", "evict by (age);")
CAPS = ("12 * bs", "40 * bs", "200 * bs", "1000 * bs", "300.5", "inf")
PROMPTS = ("1", "2.5", "16", "17", "40", "100", "200", "300")
OUTS = ("1", "2", "2.5", "10", "30", "60")

VLLM_HOLD = """\
hold {slot} (1), {kv} (min(known, hit + budget_left({E}))) reserve (known)
     at admission (known = computed < p ? p : computed + 1,
                   hit = min(cachedin({kv}), floor((known - 1) / bs) * bs)) {{
  set c = cached;
  run {E} prefill (known - c) growing {kv};
  observe ttft = now - arrived;
  run {E} decode (o - 1 - (known - p)) growing {kv};
}} cache ({cache});"""

PLAIN_HOLD = """\
hold {slot} (1), {kv} ({units}) {{
  set c = cached;
  run {E} prefill (p - c) growing {kv};
  observe ttft = now - arrived;
  run {E} decode (o) growing {kv};
}} cache ({cache});"""

# the same requests as pyserq 0.1.4 takes them (`fn main`): one pool a hold with a cache
# (the slot's hold around the KV's, whose queue the engine serves), quantities in their
# resource's unit, no run of negative work
VLLM_HOLD_MAIN = """\
hold {slot} (cost({slot_unit}, 1)) {{
  hold {kv} (cost({kv_unit}, min(known, hit + budget_left({E})))) reserve (cost({kv_unit}, known))
       at admission (known = computed < p ? p : computed + 1,
                     hit = min(cachedin({kv}), floor((known - 1) / bs) * bs)) {{
    set c = cached;
    prefill on {E} (max(known - c, 0)) growing {kv};
    observe ttft = now - arrived;
    decode on {E} (max(o - 1 - (known - p), 0)) growing {kv};
  }} cache (cost({kv_unit}, {cache}));
}}"""

PLAIN_HOLD_MAIN = """\
hold {slot} (cost({slot_unit}, 1)) {{
  hold {kv} (cost({kv_unit}, {units})) {{
    set c = cached;
    prefill on {E} (max(p - c, 0)) growing {kv};
    observe ttft = now - arrived;
    decode on {E} (o) growing {kv};
  }} cache (cost({kv_unit}, {cache}));
}}"""


# where the engines share one KV pool, which no family of several can admit (`fn main`):
# the KV's hold around the slot's, which the engine admits
VLLM_HOLD_SHARED_MAIN = """\
hold {kv} (cost({kv_unit}, min(known, hit + budget_left({E})))) reserve (cost({kv_unit}, known))
     at admission (known = computed < p ? p : computed + 1,
                   hit = min(cachedin({kv}), floor((known - 1) / bs) * bs)) {{
  set c = cached;
  hold {slot} (cost({slot_unit}, 1)) {{
    prefill on {E} (max(known - c, 0)) growing {kv};
    observe ttft = now - arrived;
    decode on {E} (max(o - 1 - (known - p), 0)) growing {kv};
  }}
}} cache (cost({kv_unit}, {cache}));"""

PLAIN_HOLD_SHARED_MAIN = """\
hold {kv} (cost({kv_unit}, {units})) {{
  set c = cached;
  hold {slot} (cost({slot_unit}, 1)) {{
    prefill on {E} (max(p - c, 0)) growing {kv};
    observe ttft = now - arrived;
    decode on {E} (o) growing {kv};
  }}
}} cache (cost({kv_unit}, {cache}));"""


def unit(ref: str) -> str:
    """The resource of `ref` (a family's name without its index), for `cost(...)`."""
    return ref.split("[")[0]


class _Joint:
    """The choices of one program, drawn from `r`."""

    def __init__(self, r: random.Random, main: bool = False) -> None:
        self.r = r
        self.main = main
        self.bs = r.choice(("1", "4", "16", "16", "2.5"))

    def u(self, resource: str, e: str) -> str:
        """`e` as a quantity of `resource`: `cost(resource, e)` in the `fn main` dialect."""
        return f"cost({unit(resource)}, {e})" if self.main else e

    def engine(self, name: str, n: str, memory: str) -> str:
        r = self.r
        budget = r.choice(BUDGETS)
        chunk = r.choice(CHUNKS)
        if budget == "inf" and chunk in ("", "chunk 0;", "chunk -1;", "chunk inf;"):
            chunk = "chunk 32;"  # an unbounded plan needs a finite chunk
        cost = r.choice(COSTS)
        if self.main and cost == "0":  # 0.1.4 refuses an iteration of no time
            cost = "0.5"
        return (
            f"stage {name}[{n}] : step {{ budget {budget}; cost {cost}; {chunk} "
            f"{r.choice(SERVES)} memory {memory}; }}"
        )

    def kv(self, name: str, n: str | None, via: str) -> str:
        """A KV pool; in `fn main` the one engine `via` admits (its hold the innermost),
        unless the engines share it (a family of one is admitted by no family of several:
        their slots are, as in the items dialect)."""
        r = self.r
        preempt = r.choice(("preempt lifo;", "preempt lifo;", "preempt none;"))
        size = f"[{n}]" if n else ""
        admit = f" admit via {via};" if self.main and n else ""
        return (
            f"pool {name}{size} {{ cap {r.choice(CAPS)}; block bs; {r.choice(EVICTS)} "
            f"{preempt}{admit} }}"
        )

    def slots(self, name: str, n: str, via: str, shared: bool = False) -> str:
        """A slot pool, admitted by engine `via` (in `fn main` a plain one, unless the
        engines share their KV pool)."""
        admit = "" if self.main and not shared else f" admit via {via};"
        return f"pool {name}[{n}] {{ cap {self.r.choice(('1', '2', '4', '16'))};{admit} }}"

    def request(self, E: str, slot: str, kv: str, vllm: bool) -> list[str]:
        """One request on engine `E` with its slot and KV pools (all indexed)."""
        r = self.r
        names = {"slot": slot, "kv": kv, "E": E, "slot_unit": unit(slot), "kv_unit": unit(kv)}
        shared = "[" not in kv
        if vllm:
            cache = r.choice(("p + o - 1", "p + o - 1", "p", "0", "inf"))
            template = VLLM_HOLD
            if self.main:
                template = VLLM_HOLD_SHARED_MAIN if shared else VLLM_HOLD_MAIN
            text = template.format(cache=cache, **names)
        else:
            units = r.choice(("p", "p", "min(p, 8)", "1", "0"))
            cache = r.choice(("p + o", "p + o", "p", "0", "inf"))
            template = PLAIN_HOLD
            if self.main:
                template = PLAIN_HOLD_SHARED_MAIN if shared else PLAIN_HOLD_MAIN
            text = template.format(units=units, cache=cache, **names)
        return text.splitlines()

    def replicas(self) -> tuple[list[str], list[str]]:
        r = self.r
        n = r.choice((2, 2, 3, 4))
        shared = r.random() < 0.3
        kv_at = "kv" if shared else "kv[j]"
        decls = [
            f"let R = {n};",
            self.slots("reqs", "R", "E", shared),
            self.kv("kv", None if shared else "R", "E"),
            self.engine("E", "R", "kv"),
        ]
        used = "used(kv[j])" if not shared else "holders(reqs[j])"
        cached = "-cachedin(kv[j]), holders(reqs[j])" if not shared else "queued(reqs[j]), -j"
        route = r.choice(
            (
                "choose j in R by (holders(reqs[j]) + queued(reqs[j]));",
                f"choose j in R by ({used});",
                "set j = (serial + t) - R * floor((serial + t) / R);",
                f"choose j in R by ({cached});",
                "choose j in R by (residents(E[j]), -j);",
            )
        )
        if "residents(" in route:
            route = "choose j in R by (busy(E[j]) + queued(reqs[j]));"
        body = [route, *self.request("E[j]", "reqs[j]", kv_at, r.random() < 0.6)]
        return decls, body

    def pd(self) -> tuple[list[str], list[str]]:
        r = self.r
        np_, nd = r.choice(((1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (2, 2)))
        shared_p = r.random() < 0.25
        shared_d = r.random() < 0.25
        kvp = "kvP" if shared_p else "kvP[i]"
        kvd = "kvD" if shared_d else "kvD[j]"
        parked = r.random() < 0.6
        flow = r.random() < 0.5
        decls = [
            f"let NP = {np_};",
            f"let ND = {nd};",
            f"let x0 = {r.choice(('0', '0.002', '0.5'))};",
            self.slots("reqsP", "NP", "P", shared_p),
            self.kv("kvP", None if shared_p else "NP", "P"),
            self.engine("P", "NP", "kvP"),
        ]
        if parked:
            decls.append(self.slots("arrivedD", "ND", "D", shared_d))
        decls += [
            self.slots("reqsD", "ND", "D", shared_d),
            self.kv("kvD", None if shared_d else "ND", "D"),
            self.engine("D", "ND", "kvD"),
            "stage setup : delay;",
        ]
        if flow:
            decls += [
                f"stage egress[NP] : ps({r.choice(('20000', '1000', '7.5'))});",
                f"stage ingress[ND] : ps({r.choice(('20000', '250', '0.5'))});",
                f"share {r.choice(('maxmin', 'bottleneck'))};",
            ]
        else:
            decls.append(f"stage link : {r.choice(('ps(1000)', 'fifo', 'delay', 'ps(0.5)'))};")
        key_p = r.choice(
            (
                "queued(reqsP[i]) + holders(reqsP[i])",
                "used(kvP[i]), -i" if not shared_p else "busy(P[i])",
                "-cachedin(kvP[i]), queued(reqsP[i])" if not shared_p else "0",
                "0",
            )
        )
        slot_d = "arrivedD[j]" if parked else "reqsD[j]"
        key_d = r.choice(
            (
                f"holders(reqsD[j]) + holders({slot_d})",
                "used(kvD[j])" if not shared_d else "queued(reqsD[j])",
                "serial - j",
                "busy(D[j]), j",
            )
        )
        x = r.choice(("p - c", "p / 100", "0", "(p - c) / 1000"))
        into = r.choice(("p - 1 - c", "p - 1", "0", "p"))
        where = "on egress[i], ingress[j] " if flow else "on link "
        read = f"transfer {where}({x}) from {kvp} to {kvd} ({into});"
        lease = r.choice(("inf", "inf", "inf", "0", "1.5", "30"))
        hit = f"min(cachedin({kvp}), floor((p - 1) / bs) * bs)"
        units_p = r.choice(("min(p, hit + budget_left(P[i]))", "p", "hit + 1"))
        reserve_p = r.choice((" reserve (p)", " reserve (p)", ""))
        cache_p = r.choice(("p", "p", "0", "inf", "p - 1"))
        cache_d = r.choice(("p + o", "p + o", "0", "p", "inf"))
        reuse = r.choice((" reuse (0)", " reuse (0)", ""))
        local = r.choice(("n < 150", "n < 150", "0", "1", "serial == 1", "t > 0"))
        setup = r.choice(("x0", "0", "0.25"))
        if self.main:
            remote = self._remote_main(
                (key_p, kvp, units_p, reserve_p, hit, cache_p, lease, setup),
                (kvd, slot_d, reuse, read, cache_d),
            )
        else:
            remote = [
                f"choose i in NP by ({key_p});",
                f"hold reqsP[i] (1), {kvp} ({units_p}){reserve_p}",
                f"     at admission (hit = {hit}) {{",
                "  set c = cached;",
                f"  run P[i] prefill (p - c) growing {kvp};",
                f"}} cache ({cache_p}) lease {kvp} ({lease});",
                f"run setup ({setup});",
                f"hold {kvd} (p) reserve (p), {slot_d} (0) reserve (1){reuse} {{",
                f"  {read}",
                "  observe read = now - arrived;",
                f"  hold {slot_d} (1) {{",
                f"    run D[j] prefill (1) growing {kvd};",
                "    observe ttft = now - arrived;",
                f"    run D[j] decode (o - 1) growing {kvd};",
                "  }",
                f"}} cache ({cache_d});",
            ]
        here = self.request("D[j]", "reqsD[j]", kvd, r.random() < 0.5)
        body = [
            f"choose j in ND by ({key_d});",
            f"branch ({local}) {{",
            *("  " + x for x in here),
            "} else {",
            *("  " + x for x in remote),
            "}",
        ]
        return decls, body

    def _remote_main(self, prefiller: tuple[str, ...], decoder: tuple[str, ...]) -> list[str]:
        """The disaggregated path in `fn main`: the slot's hold around the KV's on each
        side, the decoder's slot taken once the KV is read (0.1.4 has no reservation of
        a slot beside the KV's hold)."""
        key_p, kvp, units_p, reserve_p, hit, cache_p, lease, setup = prefiller
        kvd, slot_d, reuse, read, cache_d = decoder
        u = self.u
        if reserve_p:
            reserve_p = f" reserve ({u(kvp, 'p')})"
        if reuse:
            reuse = f" reuse ({u(kvd, '0')})"
        if "[" in kvp:  # the slot's hold around the KV's, which the engine admits
            prefill = [
                f"hold reqsP[i] ({u('reqsP', '1')}) {{",
                f"  hold {kvp} ({u(kvp, units_p)}){reserve_p}",
                f"       at admission (hit = {hit}) {{",
                "    set c = cached;",
                f"    prefill on P[i] (max(p - c, 0)) growing {kvp};",
                f"  }} cache ({u(kvp, cache_p)}) lease {kvp} ({lease});",
                "}",
            ]
        else:  # a KV pool the engines share: its hold around the slot's
            prefill = [
                f"hold {kvp} ({u(kvp, units_p)}){reserve_p}",
                f"     at admission (hit = {hit}) {{",
                "  set c = cached;",
                f"  hold reqsP[i] ({u('reqsP', '1')}) {{",
                f"    prefill on P[i] (max(p - c, 0)) growing {kvp};",
                "  }",
                f"}} cache ({u(kvp, cache_p)}) lease {kvp} ({lease});",
            ]
        return [
            f"choose i in NP by ({key_p});",
            *prefill,
            f"run setup ({u('setup', setup)});",
            f"hold {kvd} ({u(kvd, 'p')}) reserve ({u(kvd, 'p')}){reuse} {{",
            f"  {read}",
            "  observe read = now - arrived;",
            f"  hold {slot_d} ({u(slot_d, '1')}) {{",
            f"    prefill on D[j] (1) growing {kvd};",
            "    observe ttft = now - arrived;",
            f"    decode on D[j] (max(o - 1, 0)) growing {kvd};",
            "  }",
            f"}} cache ({u(kvd, cache_d)});",
        ]


def program(k: int, dialect: str = "items") -> str:
    """The k-th program of the family from its seed alone: deterministic in pyserq 0.1.2's
    dialect (`items`, or its alias `det`), or the same choices in the `fn main` dialect
    as pyserq 0.1.4 takes it (`main`: the declarations inside `fn main`, the session's
    `turn;` running the server, quantities in their resource's unit, the KV pools the
    ones the engines admit, no iteration of cost 0, no `run` block: `// horizon: N`)."""
    if dialect not in ("items", "det", "main"):
        raise ValueError(f"the joint family has no {dialect} dialect")
    main = dialect == "main"
    r = random.Random(7_654_321 * k + 3)
    j = _Joint(r, main)
    shape = r.choice(("replicas", "replicas", "pd"))
    decls, body = j.replicas() if shape == "replicas" else j.pd()
    m = r.randint(1, 6)
    prompts = [r.choice(PROMPTS) for _ in range(m)]
    outs = [r.choice(OUTS) for _ in range(m)]
    turns = r.choice(("1", "2", "3", "2.5"))
    think = r.choice(("0", "0", "0.5", "1", "3"))
    gap = r.choice(("0", "0", "0.25", "1"))
    fraction = r.choice(("", "", " + 0.25"))
    arrive = r.choice((f"arrive batch({m});", f"arrive batch({m});", "arrive renewal(0.5);"))
    # the context grows by each turn's prompt and answer; small pools cannot hold it
    grow = r.choice(("K", "K", "0", "min(K, 64)"))
    turn = [
        "set arrived = now;",
        f"set n = ({ternary(prompts)}){fraction} + t * {r.choice(('0', '8', '50'))};",
        f"set p = {grow} + n;",
        f"set o = {ternary(outs)};",
    ]
    after = [
        "observe response = now - arrived;",
        "set K = p + o;",
        "set t = t + 1;",
    ]
    gauges = []
    if r.random() < 0.4:
        pools = "kv" if shape == "replicas" else "kvD"
        many = "R" if shape == "replicas" else "ND"
        indexed = f"pool {pools}[" in "".join(decls)
        level = f"used({pools}[m])" if indexed else f"used({pools}) + m"
        gauges.append(f"gauge spread = max m in {many} ({level}) - min m in {many} ({level});")
    server_style = r.random() < 0.35
    lets = [f"let bs = {j.bs};"]
    decls = [*lets, *decls, "stage think : delay;", "stage gap : delay;", *gauges]
    ends = [
        f"branch (t >= {turns}) {{",
        "  end;",
        "} else {",
        f"  run think ({think});",
        "}",
    ]
    if server_style:
        workload = [
            "workload {",
            f"  {arrive}",
            "  init { set K = 0; set t = 0; }",
            f"  turn {{ {' '.join(turn[1:2] + turn[3:])} }}",
            "  session {",
            f"    run gap ({gap} * serial);",
            "    turn;",
            "    loop {",
            "      request;",
            "      set K = p + o;",
            "      set t = t + 1;",
            *("      " + x for x in ends[:-1]),
            "        turn;",
            "      }",
            "    }",
            "  }",
            "}",
            "server {",
            "  set arrived = now;",
            f"  set p = {grow} + n;",
            *("  " + x for x in body),
            "  observe response = now - arrived;",
            "}",
        ]
    else:
        workload = [
            f"workload {{ {arrive} }}",
            "session {",
            f"  run gap ({gap} * serial);",
            "  set K = 0;",
            "  set t = 0;",
            "  loop {",
            *("    " + x for x in turn),
            *("    " + x for x in body),
            *("    " + x for x in after),
            *("    " + x for x in ends),
            "  }",
            "}",
        ]
    horizon = r.choice(("30", "60", "200"))
    run = f"run {{ horizon {horizon}; warmup {r.choice(('0', '0', '1.5'))}; seed 1; }}"
    head = f"// joint family program {k} ({shape})"
    if main:
        return _main_text(
            f"// joint family program {k} ({shape}, fn main)\n// horizon: {horizon}",
            decls,
            [arrive, turn[1], turn[3], grow, turns, think, gap],
            body,
        )
    return "\n".join([head, *decls, "", *workload, "", run, ""])


def _main_text(head: str, decls: list[str], session: list[str], body: list[str]) -> str:
    """A program of the family in the `fn main` dialect: `decls` (its `let`s go above
    `fn main`), a workload whose session's `turn;` runs the server's `body`."""
    arrive, n, o, grow, turns, think, gap = session
    workload = [
        "workload {",
        f"  {arrive}",
        "  init { set K = 0; set t = 0; }",
        f"  turn {{ {n} {o} }}",
        "  session {",
        f"    run gap (cost(gap, {gap} * serial));",
        "    loop {",
        "      turn;",
        "      set K = p + o;",
        "      set t = t + 1;",
        f"      branch (t >= {turns}) {{",
        "        end;",
        "      } else {",
        f"        run think (cost(think, {think}));",
        "      }",
        "    }",
        "  }",
        "}",
        "server {",
        "  set arrived = now;",
        f"  set p = {grow} + n;",
        *("  " + x for x in body),
        "  observe response = now - arrived;",
        "}",
    ]
    lets = [d for d in decls if d.startswith("let ")]
    inner = [d for d in decls if not d.startswith("let ")] + ["", *workload]
    text = "\n".join([head, *lets, "fn main() {", *("  " + x if x else x for x in inner), "}", ""])
    # 0.1.4 keeps `arrived` for its claims, which serq-language.txt does not have
    return text.replace("arrived", "sent")
