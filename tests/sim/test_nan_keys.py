"""Queue and eviction keys that are NaN, ordered as pyserq 0.1.2 orders them.

The spec orders a pool's queue and its evictions by the keys, then the join or release
order; a NaN is not ordered by the language's comparisons, so the spec is silent there.
serq scanned with `<`, under which a NaN is neither less nor greater than anything, so the
choice depended on where the NaN sat in the queue: the thing the spec's rule on ties
forbids. The reference orders a NaN by its sign bit (`f64::total_cmp`): `inf - inf`, whose
sign bit is set, before every number, `-(inf - inf)` after (found by the inline family,
tests/oracle/inline_family.py; NOTES.md §21). -0 and 0 stay a tie, as `==` has them (the
reference orders -0 first there, which the spec's rule on equal keys decides against).
Each program runs on both event paths.
"""

from __future__ import annotations

import json

import pytest

from serq.sim import api as sim_api

# serial 0 is admitted as it comes; 1..7 wait, keyed: 0, -NaN, +NaN, -inf, inf, 1, -NaN
KEYS = """
  set z = inf - inf;
  set k = serial == 1 ? 0 : (serial == 2 ? z : (serial == 3 ? -z : (serial == 4 ? -inf
        : (serial == 5 ? inf : (serial == 6 ? 1 : (serial == 7 ? z : 5))))));
"""
ORDER = [0.0, 2.0, 7.0, 4.0, 1.0, 6.0, 5.0, 3.0]  # -NaN (join order), -inf, 0, 1, inf, +NaN

QUEUE = f"""
pool m {{ cap 1; queue by (k{{extra}}); }}
stage s : fifo(1);
workload {{ arrive batch(8); }}
session {{
{KEYS}
  run s (0.25);
  hold m (1) {{ observe first = serial; run s (2); }}
}}
run {{ horizon 60; warmup 0; seed 1; }}
"""

# eight entries of 1 unit released in serial order fill the cap of 8; session 8's three
# holds then evict three of them by the keys
EVICT = f"""
pool m {{ cap 8; evict by (k{{extra}}); }}
stage s : delay;
workload {{ arrive batch(9); }}
session {{
{KEYS}
  branch (serial < 8) {{
    hold m (1) {{ run s (serial * 0.01); }} cache (1);
  }} else {{
    run s (1);
    hold m (1) {{ run s (0); }} cache (1);
    hold m (2) {{ run s (0); }} cache (2);
    hold m (3) {{ run s (0); }} cache (3);
  }}
  run s (10);
  observe left = cachedin(m);
}}
run {{ horizon 40; warmup 0; seed 1; }}
"""


def _samples(text: str, name: str) -> list[float]:
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    runs = []
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is not None, ran
        runs.append((json.loads(report.json()), list(report.observe(name).samples)))
    assert runs[0] == runs[1]
    return runs[0][1]


# the steady keys are ranked once at the join; `0 * now` makes them read again each time
@pytest.mark.parametrize("extra", ["", ", 0 * now"])
def test_a_nan_queue_key_orders_by_its_sign(extra):
    assert _samples(QUEUE.replace("{extra}", extra), "first") == ORDER


@pytest.mark.parametrize("extra", ["", ", 0 * now"])
def test_a_nan_eviction_key_orders_by_its_sign(extra):
    """Evicted: the two -NaN entries (release order) and -inf, serials 2, 7 and 4; the
    others keep theirs (+NaN, serial 3, among them), and session 8 its 3."""
    left = _samples(EVICT.replace("{extra}", extra), "left")
    assert left == [1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 3.0]


def test_minus_zero_and_zero_queue_keys_tie():
    """Serial 1 keyed 0 joined before serial 2 keyed -0: it is admitted first."""
    text = QUEUE.replace("{extra}", "").replace("(serial == 2 ? z", "(serial == 2 ? -0")
    assert _samples(text, "first")[:3] == [0.0, 7.0, 4.0]
    assert _samples(text, "first")[3:5] == [1.0, 2.0]


@pytest.mark.parametrize("program", ["queue", "evict"])
def test_the_reference_orders_nan_keys_alike(program, same_as_reference):
    same_as_reference((QUEUE if program == "queue" else EVICT).replace("{extra}", ""), f"{program}.sq")


SIGNS = """
pool m { cap 1; queue by (k); }
stage s : fifo(1);
workload { arrive batch(4); }
session {
  set x = serial - 1;
  set k = serial == 1 ? NAN : serial;
  run s (0.25);
  hold m (1) { observe f = serial; run s (2); }
}
run { horizon 60; warmup 0; seed 1; }
"""


# which NaN each operation gives, as the reference's f64 arithmetic gives it on x86-64:
# the processor's default NaN (sign bit set) for an invalid operation, C's log a NaN
# without it; serial 1 keyed so goes first or last
@pytest.mark.parametrize(
    ("nan", "order"),
    [
        ("0 / x", [0.0, 1.0, 2.0, 3.0]),
        ("x / x", [0.0, 1.0, 2.0, 3.0]),
        ("inf / (inf + x)", [0.0, 1.0, 2.0, 3.0]),
        ("x * inf", [0.0, 1.0, 2.0, 3.0]),
        ("sqrt(x - 1)", [0.0, 1.0, 2.0, 3.0]),
        ("pow(x - 1, 0.5)", [0.0, 1.0, 2.0, 3.0]),
        ("(x - 1) ^ 0.5", [0.0, 1.0, 2.0, 3.0]),
        ("ln(x - 1)", [0.0, 2.0, 3.0, 1.0]),
        ("-(0 / x)", [0.0, 2.0, 3.0, 1.0]),
    ],
)
def test_the_sign_of_a_nan_each_operation_gives(nan, order, same_as_reference):
    text = SIGNS.replace("NAN", nan)
    assert _samples(text, "f") == order
    same_as_reference(text, "signs.sq")


SERVE = """
pool kv { cap 1000; }
stage e : step { budget 1; cost 1; serve by (k); memory kv; }
workload { arrive batch(5); }
session {
  set z = inf - inf;
  set k = serial == 1 ? 0 : (serial == 2 ? z : (serial == 3 ? -z : (serial == 4 ? -inf : 5)));
  hold kv (4) { run e prefill (2) growing kv; observe done = serial; }
}
run { horizon 60; warmup 0; seed 1; }
"""


def test_a_nan_serve_key_orders_by_its_sign(same_as_reference):
    """A step engine of one token an iteration serves its residents by the keys: -NaN,
    -inf, 0, 5, +NaN (serials 2, 4, 1, 0, 3), fast-forwarded or not."""
    assert _samples(SERVE, "done") == [2.0, 4.0, 1.0, 0.0, 3.0]
    compiled, _ = sim_api.compile_program(SERVE, "t.sq")
    report, _ = sim_api.execute(compiled, fast_forward=False)
    assert list(report.observe("done").samples) == [2.0, 4.0, 1.0, 0.0, 3.0]
    same_as_reference(SERVE, "serve.sq")
