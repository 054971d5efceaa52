"""Near misses: programs next to each rule's edge that the rule checks accept, as the reference does.

Each program of the table is one step away from a file of tests/corpus/link_invalid: a
context variable at its own place, a hidden attribute where the scheduler does not read
it, a server that decides after the run that reveals, a `set` of live state that does not
reach a header, draws in eviction and `choose` keys (allowed: eviction has a random stream
of its own, and random routing is a policy). check_rules reports nothing on any of them,
and the reference (pyserq 0.1.2; 0.1.4 for a `fn main` program) compiles each one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from serq.expand import expand
from serq.expand.context import NotConstant, evaluate
from serq.link.checks import check_rules
from serq.syntax import ast, parse

ROOT = Path(__file__).resolve().parents[2]
PYSERQ_014 = os.environ.get("PYSERQ_014_PATH", str(ROOT / ".cache" / "pyserq-0.1.4"))
MAIN = re.compile(r"^\s*fn\s+main\b", re.M)


def lets_of(kernel: ast.Module) -> dict[str, float]:
    """The values of the kernel's `let`s, each folded over the ones above it."""
    lets: dict[str, float] = {}
    for item in kernel.items:
        if isinstance(item, ast.Let):
            try:
                lets[item.name.name] = evaluate(item.value, lets)
            except NotConstant:
                pass
    return lets


ENGINE = """
pool kv { cap 1000; block 16; evict lru; preempt lifo; }
pool reqs { cap 8; admit via engine; }
stage engine : step { budget 64; cost 0.01; memory kv; }
stage svc : fifo(1);
stage tool : delay;
workload { arrive poisson(1); hidden o; turn { set n = 10; set o = 5; set more = ~bernoulli(0.5); } }
"""
RUN = "run { horizon 10; }\n"


def session(body: str, items: str = "") -> str:
    return ENGINE + items + "session {\n  turn;\n" + body + "\n  end;\n}\n" + RUN


def server(body: str, client: str = "") -> str:
    """A `fn main` program whose server is `body` (pyserq 0.1.4 checks it)."""
    client = client or "session { loop { turn; branch (more) { tool (1); } else { end; } } }"
    return f"""fn main() {{
  pool kv {{ cap 1000; block 16; evict lru; preempt lifo; }}
  pool kv2[2] {{ cap 1000; }}
  stage engine : step {{ budget 64; cost 1; memory kv; }}
  stage svc : fifo(1);
  stage s2[2] : fifo(1);
  stage tool : delay;
  workload {{
    arrive poisson(1);
    hidden o;
    turn {{ set n = 10; set o = ~uniform(1, 9); set more = ~bernoulli(0.5); }}
    {client}
  }}
  server {{
    {body}
  }}
}}
"""


PROGRAMS = {
    # moments: every context variable at its place, `now` everywhere but a gauge
    "moment_homes": session(
        "  hold q (now) { run ps1 (now); } cache (now);",
        "pool host { cap 100; }\n"
        "pool q { cap 10; evict by (size, age, last, waiting, now); queue by (waited, now);"
        " spill host via svc (size + age) when (last > waiting); }\n"
        "stage ps1 : ps(min(present, 4) + now);\n"
        "stage e2 : step { budget 10 + residents + decoders + kv_decode + kv_prefill + now;"
        " cost 1 + residents + decoders + kv_decode + kv_prefill + tokens + prefilled + attention;"
        " chunk residents + decoders + kv_decode + kv_prefill;"
        " serve by (decoding, admission, remaining, residents, decoders, kv_decode, kv_prefill); }\n",
    ),
    # hidden: read where the scheduler does not decide
    "hidden_allowed": session(
        "  set x = o;\n  hold kv (x) { run svc (o); observe out_len = o; } cache (o) lease kv (o);",
        "pool q { cap 10; queue by (n); evict by (n); }\n",
    ),
    "hidden_builtin_attribute": ENGINE.replace("hidden o;", "hidden o, serial;")
    + "session { turn; run svc (o); end; }\n"
    + RUN,
    # the top-level session is both sides in one: the reference checks none of it
    "reveal_top_level_session": session("  branch (o > 3) { run svc (1); }\n  run svc (o);"),
    # lints
    "lint_set_killed": session("  set h = used(kv);\n  set h = 3;\n  hold kv (h) { run svc (1); }"),
    "lint_set_in_arm": session(
        "  branch (n > 1) { set h = used(kv); } else { set h = 1; }\n  hold kv (h) { run svc (1); }"
    ),
    "lint_set_in_body_of_earlier_hold": session(
        "  hold kv (1) { set h = used(kv); run svc (1); }\n  hold reqs (h) { run svc (1); }"
    ),
    "lint_set_after_hold_in_loop": ENGINE
    + "session {\n  loop {\n    turn;\n    hold kv (h) { run svc (1); }\n    set h = used(kv);\n"
    "    branch (more) { tool (1); } else { end; }\n  }\n}\n" + RUN,
    "lint_set_not_live": session(
        "  set a = blocksize(kv);\n  set b = cached;\n  set c = now;\n"
        "  choose j in 2 by (used(kv));\n  hold kv (a + b + c + j) { run svc (1); }"
    ),
    "lint_set_read_in_body": session("  set h = used(kv);\n  hold kv (1) { run svc (h); }"),
    "lint_guard_tests": "let one = 1;\n"
    + session(
        "  branch (1) { run svc (1); }\n  branch (0) { run svc (1); } else { run svc (one); }"
    ),
    # structure
    # `budget_left` read by a cost and a serve key: they are not what it plans from
    "structure_budget_left_in_cost_and_serve_keys": session(
        "  hold reqs (1) { run e3 prefill (10) growing kv; }",
        "stage e3 : step { budget 32; cost 0.1 + 0.001 * budget_left(e3);"
        " serve by (budget_left(e3), -admission); }\n",
    ),
    "structure_key_draws": session(
        "  choose j in 2 by (~uniform(0, 1));\n  hold q (1) { run svc (j); } cache (1);",
        "pool q { cap 10; evict by (~exp(1)); }\n",
    ),
    "structure_cached_where_cache": session(
        "  set before = cached;\n"
        "  hold kv (1) { hold reqs (1) { run svc (1); } cache (0); run svc (cached); }"
        " cache (cached) lease kv (cached);\n"
        "  hold reqs (1) { run svc (1); } lease reqs (cached);"
    ),
    # a release outside every hold of its pool, where the program leases the pool: a
    # lease later in the session, in another branch, or only on some paths
    "structure_release_of_a_lease_anywhere": session(
        "  release kv;\n"
        "  branch (n > 5) { hold kv (1) { run svc (1); } lease kv (2); } else { release kv; }\n"
        "  hold reqs (1) { run svc (1); release kv; release reqs; }"
    ),
    # a lease written as the hold writes its pool: spaces and parentheses aside
    "structure_lease_as_the_hold_writes_it": """
pool kv[2] { cap 3; }
pool n { cap 3; }
stage s : fifo(1);
workload { arrive poisson(1); }
session {
  set i = serial - 2 * floor(serial / 2);
  hold n (1), kv[(i)] (1) { run s (1); } lease kv[ i ] (1);
  hold kv[0] (1) { run s (1); } lease kv[0] (inf);
  end;
}
""",
    "structure_families_one_for_all": """
pool q[3] { cap 4; admit via S; }
pool r[3] { cap 4; admit via T; }
pool kv { cap 100; }
stage S : step { budget 8; cost 1; memory kv; }
stage T[1] : step { budget 8; cost 1; }
stage U[2] : step { budget 8; cost 1; memory kv; serve exclusive prefill; }
workload { arrive poisson(1); }
session {
  choose i in 3 by (1);
  hold q[i] (1), kv (1) { run S prefill (1) growing kv; }
  hold r[i] (1) { run T[0] decode (1); run U[1] prefill (1); }
  end;
}
"""
    + RUN,
    "structure_flow": """
let phi = 3;
stage up[2] : ps(2);
stage down : ps(phi);
share bottleneck;
gauge load = sum j in 2 (busy(up[j])) + used(kv) + free(kv) + holders(kv) + queued(kv) + inf;
pool kv { cap 10; }
workload { arrive poisson(1); }
session {
  choose i in 2 by (queue(up[i]));
  run up[i], down (1);
  run down (1);
  end;
}
"""
    + RUN,
    "structure_serve_once": session(
        "  hold kv (10) { run e2 prefill (10) growing kv; }",
        "stage e2 : step { budget 8; cost 1; chunk 4; serve decode first; memory kv; }\n",
    ),
    # reveal, on pyserq 0.1.4's server
    "reveal_run_then_branch": server(
        "run svc (cost(svc, o));\n    branch (o > 3) { run svc (cost(svc, 1)); }"
    ),
    "reveal_both_arms": server(
        "branch (n > 1) { run svc (cost(svc, o)); } else { run svc (cost(svc, o + 1)); }\n"
        "    branch (o > 3) { run svc (cost(svc, 1)); }"
    ),
    "reveal_in_loop_pass": server(
        "loop { run svc (cost(svc, o)); branch (o > 1) { run svc (cost(svc, 1)); } }"
    ),
    "reveal_every_path_reads": server(
        "run svc (cost(svc, o * 0));\n    run svc (cost(svc, o > 1 && n > 3));\n"
        "    run svc (cost(svc, max(o, 1)));\n    choose j in 2 by (o);\n"
        "    hold kv2[j] (cost(kv2, 1)) { grow kv2[j] (cost(kv2, o)); run s2[o > 5] (cost(s2, 1)); }"
    ),
    "reveal_through_attribute": server(
        "set x = o;\n    set long = x > 3;\n    run svc (cost(svc, x));\n"
        "    branch (long) { run svc (cost(svc, 1)); }\n    hold kv (cost(kv, x)) { run svc (cost(svc, 1)); }"
    ),
    "reveal_decode_in_hold": server(
        "observe seen = o;\n    set l = 0;\n    branch (l) { run svc (cost(svc, 1)); }\n"
        "    hold kv (cost(kv, n)) { run engine decode (cost(engine, o)) growing kv; }"
        " cache (cost(kv, n + o))\n    branch (o > 3) { run svc (cost(svc, 1)); }"
    ),
    "reveal_client_decides": server(
        "run svc (cost(svc, 1));",
        client="session { loop { turn; branch (o > 3) { tool (1); } else { end; } } }",
    ),
    "reveal_client_attribute": server(
        "branch (K > 1) { run svc (cost(svc, o)); }",
        client="session { set K = 0; loop { turn; set K = o; "
        "branch (more) { tool (1); } else { end; } } }",
    ),
}


@pytest.fixture(scope="module")
def reference():
    """The reference's verdict on every program: None when it compiles, else its error."""
    mod = pytest.importorskip("pyserq", reason="pyserq (0.1.2) is not installed")
    if not mod.__version__.startswith("0.1.2"):
        pytest.skip(f"the reference is pyserq 0.1.2; the installed one is {mod.__version__}")
    out: dict[str, str | None] = {}
    mains = {k: v for k, v in PROGRAMS.items() if MAIN.search(v)}
    for name, text in PROGRAMS.items():
        if name in mains:
            continue
        try:
            mod.compile(source=text, horizon=10)
            out[name] = None
        except ValueError as e:
            out[name] = str(e)
    if (Path(PYSERQ_014) / "pyserq").is_dir():
        child = (
            "import json, sys\nsys.path.insert(0, sys.argv[1])\nimport pyserq\nout = {}\n"
            "for k, v in json.loads(sys.stdin.read()).items():\n"
            "    try:\n        pyserq.compile(source=v, horizon=10); out[k] = None\n"
            "    except ValueError as e:\n        out[k] = str(e)\nprint(json.dumps(out))\n"
        )
        proc = subprocess.run(
            [sys.executable, "-c", child, PYSERQ_014],
            input=json.dumps(mains),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        out.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    return out


# Programs that truly read an attribute before anything sets it: a warning, not a refusal.
READ_BEFORE_SET = {
    # `h` is set after the hold that reads it: the first pass reads 0
    "lint_set_after_hold_in_loop": [("W-unset", 11, 14)],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_checks_accept(name):
    text = PROGRAMS[name]
    parsed = parse(text, f"{name}.sq")
    assert [d.message for d in parsed.diagnostics] == []
    expansion = expand(parsed.module)
    assert [d.message for d in expansion.diagnostics] == []
    found = check_rules(expansion.kernel, lets_of(expansion.kernel))
    got = [(d.code, d.span.line, d.span.column, d.message) for d in found]
    assert [g[:3] for g in got if g[0] == "W-unset"] == READ_BEFORE_SET.get(name, [])
    assert [g for g in got if g[0] != "W-unset"] == []


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_reference_accepts(name, reference):
    if name not in reference:
        pytest.skip("pyserq 0.1.4 is not available for a `fn main` program")
    assert reference[name] is None
