"""The step engine's tolerance on tokens (tests/sim/NOTES.md §26): a run with at most 1e-9
tokens left after an iteration is done, and a growing run whose position plus its tokens
passes its allocation by at most 1e-9 grows nothing, as in both references.

A load that passes its hold's allocation by at most 1e-9 fits as well. Without the
tolerance, float rounding gave serq iterations and blocks exact arithmetic does not:
`chunk 64 / 3` took a fourth iteration for the 4e-15 tokens three chunks of
21.333333333333332 leave of a prefill of 64, a prefill of 150 in chunks of 16 and 12.8
reached position 150.00000000000003, so its tenth decode token grew a block at 160, and
loads of 0.1 and 0.2 stopped the run in a hold of 0.3.
Each program here is worked by hand, checked against pyserq 0.1.2 when it is installed,
and run on both event paths, fast-forwarded and one iteration at a time; a seeded family
of programs drawn to land near the tolerance checks the four runs are identical.
"""

from __future__ import annotations

import json
import random

import pytest

from serq.sim.api import compile_program, execute
from tests.sim.both_paths import failure_on_both_paths

# three chunks of 64 / 3 leave 4e-15 of a prefill of 64
THIRDS = """\
stage engine : step { budget 64; cost 1; chunk 64 / 3; }
workload { arrive batch(1); }
session { run engine prefill (64); observe p = now; }
run { horizon 100; warmup 0; seed 1; }
"""

# ten chunks of 0.1 leave 1.4e-16 of a prefill of 1
TENTHS = THIRDS.replace("64 / 3", "0.1").replace("prefill (64)", "prefill (1)")

# a decode of 2 tokens and 5e-10: two iterations
DECODE = """\
stage engine : step { budget 64; cost 1; }
workload { arrive batch(1); }
session { run engine decode (2.0000000005); observe p = now; }
run { horizon 100; warmup 0; seed 1; }
"""

# chunks of 1 + 1e-12 on blocks of 1, the used units read at 0.5, 1.5, ...: a growth
# passes the allocation by 2e-12 at 1 and by 4e-12 at 3, and grows nothing there
CHUNKS_PAST_THE_EDGE = """\
pool kv { cap 1000; block 1; }
stage engine : step { budget 64; cost 1; chunk 1 + 1e-12; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold kv (0) { run engine prefill (5) growing kv; } cache (0);
  } else {
    run d (0.5);
    loop { observe u = used(kv); run d (1); }
  }
}
run { horizon 7; warmup 0; seed 1; }
"""

# a chunk of 16, then of 12.8 (the chunk reads the clock): position 150.00000000000003
# after the prefill; the decode's block at 160 is grown for its 11th token, not its 10th,
# so the kv_decode the cost reads is 176 from the 11th iteration (at 22.44 + 1.16)
POSITION_PAST_THE_EDGE = """\
pool kv { cap 1000; block 16; preempt lifo; }
stage engine : step { budget 64; cost 1 + 0.001 * kv_decode; chunk now < 0.5 ? 16 : 12.8; memory kv; }
workload { arrive batch(1); }
session {
  hold kv (16) {
    run engine prefill (150) growing kv;
    observe p = now;
    run engine decode (11) growing kv;
    observe d = now;
  } cache (0);
}
run { horizon 100; warmup 0; seed 1; }
"""

# loads of 0.1 and 0.2 reach 0.30000000000000004 in a hold of 0.3: it fits (serq stopped
# the run with E-run, "a load must fit the allocation"), and the position stays as reached
LOADS = """\
pool kv { cap 100; }
stage d : delay;
workload { arrive batch(1); }
session {
  hold kv (0.3) { load kv (0.1); load kv (0.2); run d (1); } cache (1);
  observe x = cachedin(kv);
}
run { horizon 10; warmup 0; seed 1; }
"""

BY_HAND = {
    "thirds": (THIRDS, {"p": [3.0]}),
    "tenths": (TENTHS, {"p": [10.0]}),
    "decode": (DECODE, {"p": [2.0]}),
    "chunks": (CHUNKS_PAST_THE_EDGE, {"u": [2.0, 2.0, 4.0, 4.0, 5.0, 0.0, 0.0]}),
    # 12 prefill iterations at 1, ten decodes at 1.16, the 11th at 1.176
    "position": (POSITION_PAST_THE_EDGE, {"p": [12.0], "d": [12 + 10 * 1.16 + 1.176]}),
    "loads": (LOADS, {"x": [0.1 + 0.2]}),
}


def _runs(text: str) -> list[dict]:
    """The JSON reports of `text` on both event paths, fast-forwarded and stepped."""
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    out = []
    for codegen in (True, False):
        for fast_forward in (True, False):
            report, ran = execute(compiled, codegen=codegen, fast_forward=fast_forward)
            assert report is not None, [d.message for d in ran]
            whole = json.loads(report.json())
            whole["stages"] = [{**s, "skipped": None} for s in whole["stages"]]
            whole["events"] = whole["skipped"] = None  # a span is events too
            out.append(whole)
    return out


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_the_tolerance_by_hand(name):
    text, expected = BY_HAND[name]
    runs = _runs(text)
    assert all(run == runs[0] for run in runs[1:])
    compiled, _ = compile_program(text, "t.sq")
    report, _ = execute(compiled)
    for obs, samples in expected.items():
        assert list(report.observe(obs).samples) == pytest.approx(samples, rel=1e-12), obs


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_the_tolerance_is_the_references(name, same_as_reference):
    same_as_reference(BY_HAND[name][0], f"{name}.sq")


def test_a_load_past_the_tolerance_does_not_fit():
    text = LOADS.replace("load kv (0.2);", "load kv (0.2 + 2e-9);")
    (said,) = failure_on_both_paths(text)
    assert said[0] == "E-run" and "a load must fit the allocation" in said[2]


def _program(k: int) -> str:
    """Program k of the family: residents that decode past a whole number of tokens by at
    most the tolerance or a little more, after prefills in fractional chunks that leave
    their positions near a block edge."""
    r = random.Random(k)
    n = r.randint(1, 4)
    budget = r.choice(("64", "48", "64 / 3 * 2", "residents > 1 ? 24 : 64"))
    chunk = r.choice(
        ("64 / 3", "12.8", "0.1 * 64", "now < 0.5 ? 16 : 12.8", "64 / max(1, residents)")
    )
    block = r.choice(("16", "4", "1", "2"))
    cost = r.choice(("1", "0.5 + 0.001 * kv_decode", "0.1 + 0.0001 * (kv_decode + kv_prefill)"))
    cap = r.choice(("1000", "200", "120"))
    prompts, outs = [], []
    for i in range(n):
        prompt = r.choice(("64", "150", "21.333333333333332 * 3", "100 + 1e-10", "31.9999999995"))
        excess = r.choice(("0", "5e-10", "1e-9", "2e-9", "0.5", "1e-14"))
        prompts.append(f"(serial == {i} ? {prompt} : 0)")
        outs.append(f"(serial == {i} ? {r.randint(1, 40)} + {excess} : 0)")
    prompt = " + ".join(prompts)
    out = " + ".join(outs)
    gap = r.choice(("0", "0.25 * serial", "3 * serial"))
    return f"""\
pool kv {{ cap {cap}; block {block}; preempt lifo; }}
stage engine : step {{ budget {budget}; cost {cost}; chunk {chunk}; memory kv; }}
stage d : delay;
workload {{ arrive batch({n}); }}
session {{
  run d ({gap});
  set p = {prompt};
  set o = {out};
  set t = now;
  hold kv (min(p, 16)) {{
    run engine prefill (p) growing kv;
    observe ttft = now - t;
    run engine decode (o) growing kv;
  }} cache (p);
  observe e2e = now - t;
}}
run {{ horizon 400; warmup 0; seed 1; }}
"""


def test_the_tolerance_is_the_same_on_every_path():
    for k in range(60):
        text = _program(k)
        runs = _runs(text)
        for run in runs[1:]:
            assert run == runs[0], text
