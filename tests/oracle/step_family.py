"""A family of deterministic vLLM-like engine programs over the whole value range, for the
differential search against pyserq 0.1.2 (`scripts/search_step.py`) and its CI sample
(`test_step_family.py`).

Each program is written the way the spec and the reference write theirs: lib/vllm.sq's
request (admission with `known = computed < prompt ? prompt : computed + 1`, the hit
`reusable(...)` of the cached full blocks, `reserve (known)`, resumption from `computed`)
on a step engine whose chunk is often `long_prefill(reqs, c)`. Every constant is drawn
from the domain the grammar admits, not only from the comfortable middle: chunks of 0,
-1, -inf, inf, 0.5 and whole numbers; budgets of fractions, whole numbers and
expressions; costs of 0, fractions, the step clock, `max`/`min` forms and the A100 fit;
prompts and outputs of 0, fractions and whole numbers; arrivals at once or staggered by
fractions. Everything is deterministic (`arrive batch`, no draws), so the two must agree
exactly.
"""

from __future__ import annotations

import random

CHUNKS = ("0", "-1", "-inf", "inf", "0.5", "1", "7", "16", "24", "64", "128", "2.5")
CHUNK_FORMS = (
    "",
    "chunk {c};",
    "chunk long_prefill(reqs, {c});",
    "chunk long_prefill(reqs, {c});",
    "chunk residents > 1 ? {c} : 0;",
    "chunk max(8, 64 / max(1, residents));",
    "chunk -{c};",
)
BUDGETS = (
    "8",
    "16",
    "32",
    "48",
    "64",
    "96",
    "128",
    "512",
    "12.5",
    "0.5 + 31.5",
    "max(16, 8 * residents)",
    "max(16, 256 - kv_decode / 8)",
    "residents > 2 ? 32 : 64",
)
COSTS = (
    "1",
    "1",
    "1",
    "0.5",
    "0",
    "max(1, tokens / 64)",
    "0.25 + tokens / 128",
    "min(2, 0.5 + decoders / 4)",
    "0.0139 + 0.000041 * decoders + 0.000000138 * kv_decode + 0.0000515 * prefilled"
    " + 0.00000000402 * attention",
    "0.04 + max(0.004 + 0.00002 * (kv_decode + kv_prefill), tokens * 0.00005)",
)
SERVES = (
    "",
    "",
    "serve admission;",
    "serve decode first;",
    "serve by (remaining);",
    "serve by (-admission);",
    "serve by (decoding);",
    "serve by (-remaining, admission);",
    "serve exclusive prefill;",
)
PROMPTS = ("1", "3", "15", "16", "17", "20", "40", "64", "100", "150", "200", "33.5", "7.25")
OUTS = ("1", "2", "5", "10", "30", "60", "1.5", "12.5", "100")
GAPS = ("0", "0", "1", "0.5", "3", "0.25")


def ternary(values: list[str]) -> str:
    """`serial == 0 ? v0 : serial == 1 ? v1 : ... : vn` for per-request constants."""
    if len(set(values)) == 1:
        return values[0]
    text = values[-1]
    for i in range(len(values) - 2, -1, -1):
        text = f"serial == {i} ? {values[i]} : ({text})"
    return text


def program(k: int, dialect: str = "items") -> str:
    """The k-th program of the family, from `random.Random(k)` alone: top-level items
    with a `run` block (pyserq 0.1.2's dialect), or with `dialect="main"` the same program
    in `fn main() { }` from its two sides, with the expression definitions as 0.1.4
    writes them (`def f(x) { e }`) and no `run` block (horizon 400 from the caller)."""
    r = random.Random(k)
    n = r.randint(1, 6)
    bs = r.choice(("1", "4", "16", "16", "16"))
    blocks = r.choice((4, 6, 8, 12, 20, 39, 64, 256))
    slots = r.choice((1, 2, 4, 8))
    chunk = r.choice(CHUNK_FORMS).format(c=r.choice(CHUNKS))
    budget = r.choice(BUDGETS)
    cost = r.choice(COSTS)
    serve = r.choice(SERVES)
    preempt = "preempt lifo;" if r.random() < 0.85 else "preempt none;"
    evict = r.choice(("evict lru;", "evict lru;", "evict by (-size);", "evict by (age);"))
    blocked = r.random() < 0.85
    forced = "1" if r.random() < 0.2 else "0"
    turns = r.choice((1, 1, 1, 2, 3))
    think = r.choice(("0", "1", "2.5"))
    prompts = [r.choice(PROMPTS) for _ in range(n)]
    outs = [r.choice(OUTS) for _ in range(n)]
    gap = r.choice(GAPS)
    reserve = " reserve (known)" if r.random() < 0.8 else ""
    cache = r.choice(("prompt + out - 1", "prompt + out - 1", "prompt", "known", "0"))
    block = "block bs; " if blocked else ""
    main = dialect == "main"

    def units(pool: str, e: str) -> str:  # 0.1.4 writes a pool's units as cost(pool, e)
        return f"cost({pool}, {e})" if main else e

    if reserve:
        reserve = f" reserve ({units('kv', 'known')})"
    header = (
        f"kv ({units('kv', 'min(known, hit + budget_left(engine))')}){reserve}",
        f"     reuse ({units('kv', f'{forced} && computed == 0 ? 0 : prompt + computed + 1')})",
        "     at admission (known = computed < prompt ? prompt : computed + 1,",
        f"                   hit = {forced} && computed == 0 ? 0"
        " : min(cachedin(kv), reusable(known))) {",
    )
    run = "" if main else "run engine "  # 0.1.4 takes the serving forms in fn main
    body = [
        "  observe resumed = computed;",
        "  set c = cached;",
        f"  {run}prefill (known - c) growing kv;",
        "  observe ttft = now - sent;",
        f"  {run}decode (out - 1 - (known - prompt)) growing kv;",
        f"}} cache ({units('kv', cache)});",
    ]
    if main:  # 0.1.4 holds one pool a hold: the slot, then the KV inside it
        held = [
            f"hold reqs ({units('reqs', '1')}) {{",
            *_indent(["hold " + header[0], *header[1:], *body], 1),
            "}",
        ]
    else:
        held = [f"hold reqs (1), {header[0]}", *header[1:], *body]
    request = [
        "set sent = now;",
        "set prompt = K + p0;",
        *held,
        "observe last = now;",
        "observe hit = c;",
    ]
    if main:  # the engine's waiting line is the KV pool's there
        chunk = chunk.replace("long_prefill(reqs,", "long_prefill(kv,")
    # in fn main the KV hold, inside the slot's, is the one the engine admits
    via = ("", " admit via engine;") if main else (" admit via engine;", "")
    declarations = [
        f"pool reqs {{ cap {slots};{via[0]} }}",
        f"pool kv {{ cap {blocks} * bs; {block}{evict} {preempt}{via[1]} }}",
        f"stage engine : step {{ budget {budget}; cost {cost}; {chunk} {serve} memory kv; }}",
    ]
    init = [
        "init {",
        f"  set at = {gap} * serial;",
        f"  set p0 = {ternary(prompts)};",
        f"  set out = {ternary(outs)};",
        f"  set left = {turns};",
        "  set K = 0;",
        "}",
    ]
    head = [f"// step family program {k}", f"let bs = {bs};"]
    if main:
        head += [
            "def reusable(known) { floor((known - 1) / bs) * bs }",
            "def long_prefill(p, c) { residents + queued(p) > 1 ? c : 0 }",
        ]
        body = [
            *declarations,
            "stage tool : delay;",
            "workload {",
            f"  arrive batch({n});",
            "  hidden out;",
            *_indent(init, 1),
            "  session {",
            "    tool (at);",
            "    loop {",
            "      turn;",
            "      set K = prompt + out;",
            "      set left = left - 1;",
            f"      branch (left <= 0) {{ end; }} else {{ tool ({think}); }}",
            "    }",
            "  }",
            "}",
            "server {",
            *_indent(request, 1),
            "}",
        ]
        return "\n".join([*head, "fn main() {", *_indent(body, 1), "}", ""])
    head += [
        "def reusable(known) = floor((known - 1) / bs) * bs;",
        "def long_prefill(reqs, c) = residents + queued(reqs) > 1 ? c : 0;",
    ]
    lines = [
        *head,
        "",
        *declarations,
        "stage send : delay;",
        "stage pause : delay;",
        "",
        "workload {",
        f"  arrive batch({n});",
        "  hidden out;",
        *_indent(init, 1),
        "}",
        "",
        "session {",
        "  run send (at);",
        "  loop {",
        *_indent(request, 2),
        "    set K = prompt + out;",
        "    set left = left - 1;",
        "    branch (left <= 0) { end; }",
        f"    run pause ({think});",
        "  }",
        "}",
        "",
        "run { horizon 400; warmup 0; seed 1; }",
        "",
    ]
    return "\n".join(lines)


def _indent(lines: list[str], depth: int) -> list[str]:
    return [("  " * depth + line) if line else line for line in lines]
