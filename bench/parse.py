"""Parser speed: a full parse of a ~1,000-line program, and a re-parse after a one-character edit.

Run by hand from the repository root:

    PYTHONPATH=. python bench/parse.py

It prints the lines per second of a full parse without a cache (best of 5) and the time of a
re-parse through a warm `ItemCache` after a one-character edit inside one item (best of 20),
with the number of items that re-parse actually parsed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from serq.syntax import ItemCache, parse  # noqa: E402

FILE = "bench.sq"


def _queue(i: int) -> str:
    return f"""queue P{i}[2] : prefill {{
  pool reqs {{ cap 16; admit via P{i}; }}
  pool kv {{ cap 800 * bs; block bs; evict lru; preempt lifo; }}
  serve step {{
    budget B; cost 0.012 + 0.00005 * prefilled + 0.000001 * attention; chunk 128; memory kv;
  }};
  nic ps(bw{i});
  prefill (prompt) {{
    hold reqs (1), kv (min(prompt, hit + budget_left(P{i}))) reserve (prompt)
         at admission (hit = min(cachedin(kv), floor((prompt - 1) / bs) * bs)) {{
      set c = cached;
      prefill (prompt - c) growing kv;
      mark first_token;
    }} cache (prompt) lease kv (inf);
  }}
}}"""


def _def(i: int) -> str:
    return f"""def engine{i}(prompt, out) {{
  set known = computed < prompt ? prompt : computed + 1;
  set hitmax = floor((known - 1) / bs) * bs;
  hold reqs{i} (1), kv{i} (min(known, hit + budget_left(e{i}))) reserve (known)
       at admission (hit = min(cachedin(kv{i}), hitmax)) {{
    set c = cached;
    run e{i} prefill (known - c) growing kv{i};
    branch (out > 1) {{
      run e{i} decode (out - 1 - (known - prompt)) growing kv{i};
    }} else {{
      observe short = 1;
    }}
    branch with (0.1) {{ drop kv{i}; }}
  }} cache (prompt + out - 1);
}}"""


def _resources(i: int) -> str:
    return f"""pool reqs{i} {{ cap max_seqs; admit via e{i}; }}
pool kv{i} {{
  cap blocks * bs;
  block bs;
  evict by (price(e{i}, 0.1, 0.5) * size, age);
  preempt lifo;
  queue by (size, now);
  spill host{i} via pcie{i} (size) when (age > {i + 1});
}}
pool host{i} {{ cap 10 * blocks * bs; block bs; evict lru; }}
stage pcie{i} : ps(min(present, 4));
stage e{i} : step {{
  budget B;
  cost 0.0139 + 0.000041 * decoders + 0.000000138 * kv_decode + 0.0000515 * prefilled;
  serve by (remaining, age);
  memory kv{i};
}};
gauge mem{i} = used(kv{i}) / (blocks * bs);"""


def program() -> str:
    """A realistic serQ program of about 1,000 lines."""
    parts = [
        "// A generated deployment: engines, their pools, queues and a two-sided workload.",
        "let Lambda = 0.5;\nlet bs = 16;\nlet B = 512;\nlet max_seqs = 64;\nlet blocks = 2000;",
        "let bw0 = 10;\nlet bw1 = 12;\nlet bw2 = 14;\nlet bw3 = 16;",
    ]
    i = 0
    while sum(p.count("\n") + 1 for p in parts) < 930:
        parts += [_resources(i), _def(i), _queue(i % 4)]
        i += 1
    parts += [
        "stage tool : delay;",
        """workload {
  arrive poisson(Lambda);
  hidden o;
  init { set K = 0; set rounds = 3; }
  turn { set n = 50 + floor(~exp(200)); set o = 1 + floor(~exp(100)); set more = ~bernoulli(0.7); }
  session {
    turn;
    loop {
      request;
      set K = K + n + o;
      set rounds = rounds - 1;
      branch (more && rounds > 0) { tool (~exp(2)); turn; } else { end; }
    }
  }
}""",
        """server {
  choose j in 4 by (queue(e0) + j, holders(kv0), j);
  set prompt = K + n;
  engine0(prompt, o);
  P0[j].prefill(prompt);
  observe ttft = P0.first_token;
}""",
        "share maxmin;",
        "run { horizon 3600; warmup 600; seed 1; }",
    ]
    return "\n\n".join(parts) + "\n"


def best(times: list[float]) -> float:
    return min(times)


def main() -> None:
    text = program()
    lines = text.count("\n")
    result = parse(text, FILE)
    if result.diagnostics:
        for d in result.diagnostics[:5]:
            print(
                f"warning: the benchmark program has an error: {d.span.line}:{d.span.column} "
                f"{d.message}"
            )
    items = len(result.module.items)

    full = []
    for i in range(5):
        # a file name of its own each time: `parse` keeps the result of a text it has
        # read under the same name (`serq.syntax.document._RECENT`)
        start = time.perf_counter()
        parse(text, f"full-{i}-{FILE}")
        full.append(time.perf_counter() - start)

    # one character inside a statement of an item in the middle of the file
    anchor = text.index("set hitmax", len(text) // 2)
    pos = text.index("1", anchor)
    edited = text[:pos] + "2" + text[pos + 1 :]
    reparse = []
    reparsed = set()
    for _ in range(20):
        cache = ItemCache()
        parse(text, FILE, cache)
        before = cache.parses
        start = time.perf_counter()
        parse(edited, FILE, cache)
        reparse.append(time.perf_counter() - start)
        reparsed.add(cache.parses - before)

    full_s = best(full)
    print(f"program: {lines} lines, {len(text)} characters, {items} items")
    print(
        f"full parse (no cache, best of 5): {full_s * 1000:.1f} ms, {lines / full_s:,.0f} lines/s"
    )
    print(
        f"re-parse after a one-character edit (warm cache, best of 20): "
        f"{best(reparse) * 1000:.2f} ms, {sorted(reparsed)} item(s) parsed"
    )


if __name__ == "__main__":
    main()
