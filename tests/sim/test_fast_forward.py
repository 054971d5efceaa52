"""Fast-forwarding of step-engine iterations against stepping them one at a time.

A step engine may advance a span of quiet iterations at once (every resident decodes one
token, nobody is admitted, finishes or preempted: docs in
/work/shared/design/step-fast-forward.md, `serq/sim/fastforward.py`); the results must be
those of the engine that plans every iteration (`fast_forward=False`). Every run here is
made in both modes and compared by `assert_same`: per-turn samples (sessions and turns
identical, values and times to 1e-9 relative), every stage's iterations and completions,
every pool's counts, and every time average.

- every step-engine example and tests/sim/programs step scenario, with short horizons,
  and a loaded variant of each program a `let` can load (preemptions, evictions);
- a family of generated step-engine programs (`generate(k)`, one test per seed k), and
  across the family, that fast-forwarding actually skipped iterations;
- the static analysis (`serq.sim.fastforward.analyse`): what it refuses and why, each
  refusal with a run that skips nothing and still equals the slow mode;
- `serq run --no-fast-forward --json`.
"""

from __future__ import annotations

import functools
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path

import pytest

import serq
from serq import cli, ir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
PROGRAMS = Path(__file__).resolve().parent / "programs"

REL = 1e-9
ABS = 1e-12
# confidence intervals and cv2 are differences of nearly equal numbers: looser
REL_DERIVED = 1e-6

# ---------------------------------------------------------------------------- comparing


def _same_number(a: float, b: float, rel: float = REL) -> bool:
    """Equal to `rel` relative (1e-9); NaN equals NaN, and an infinity only itself."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return math.isclose(a, b, rel_tol=rel, abs_tol=ABS)


def _first_difference(a, b, exact: bool) -> int | None:
    """The index of the first pair of `a` and `b` that differ, or None."""
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if not (x == y if exact else _same_number(x, y)):
            return i
    return None


def _collapse(times, values) -> list[tuple[float, float]]:
    """A gauge's change points without the ones that repeat the value before them."""
    out: list[tuple[float, float]] = []
    for t, v in zip(times, values, strict=True):
        if out and (out[-1][1] == v or (math.isnan(v) and math.isnan(out[-1][1]))):
            continue
        out.append((t, v))
    return out


STAGE_MEANS = (
    "mean_number",
    "utilization",
    "throughput",
    "mean_wait",
    "mean_service",
    "prefill_only",
    "decode_only",
    "mixed",
    "mean_decodes",
    "mean_decode_batch",
    "mean_decode_step",
    "mean_itl",
    "itl_p50",
    "itl_p99",
)
POOL_COUNTS = (
    "admissions",
    "evicted_entries",
    "evicted_units",
    "preemptions",
    "spills",
    "rejected",
    "stuck",
)
POOL_MEANS = ("mean_used", "mean_cached", "mean_queue", "mean_holders", "mean_wait")


def differences(fast, slow, *, exact: bool = False) -> list[str]:
    """Every way the report `fast` (fast-forwarded) differs from `slow` (one iteration at
    a time), in words; `exact` compares the samples and their times exactly (a program on
    the step clock, whose times are iteration numbers)."""
    out: list[str] = []
    for key in ("horizon", "warmup", "seed", "arrivals", "ended", "turns", "notes"):
        if getattr(fast, key) != getattr(slow, key):
            out.append(f"report.{key}: fast {getattr(fast, key)!r}, slow {getattr(slow, key)!r}")
    for key in ("end", "mean_live"):
        if not _same_number(getattr(fast, key), getattr(slow, key)):
            out.append(f"report.{key}: fast {getattr(fast, key)!r}, slow {getattr(slow, key)!r}")

    if sorted(fast.observes) != sorted(slow.observes):
        out.append(f"observes: fast {sorted(fast.observes)}, slow {sorted(slow.observes)}")
    for name in sorted(set(fast.observes) & set(slow.observes)):
        a, b = fast.observe(name), slow.observe(name)
        if a.count != b.count or len(a.samples) != len(b.samples):
            out.append(f"observe {name}: {a.count} samples fast, {b.count} slow")
            continue
        if a.sessions != b.sessions or a.turns != b.turns:
            ka = list(zip(a.sessions, a.turns, strict=True))
            kb = list(zip(b.sessions, b.turns, strict=True))
            i = next(i for i, (x, y) in enumerate(zip(ka, kb, strict=True)) if x != y)
            out.append(
                f"observe {name}: sample {i} is session {a.sessions[i]} turn {a.turns[i]} fast,"
                f" session {b.sessions[i]} turn {b.turns[i]} slow"
            )
            continue
        for what, xs, ys in (("value", a.samples, b.samples), ("time", a.times, b.times)):
            i = _first_difference(xs, ys, exact)
            if i is not None:
                out.append(
                    f"observe {name}: sample {i} (session {a.sessions[i]}, turn {a.turns[i]})"
                    f" {what} fast {xs[i]!r}, slow {ys[i]!r}"
                )
        for key, rel in (("mean", REL), ("p99", REL), ("ci", REL_DERIVED), ("cv2", REL_DERIVED)):
            if not _same_number(getattr(a, key), getattr(b, key), rel):
                out.append(
                    f"observe {name}.{key}: fast {getattr(a, key)!r}, slow {getattr(b, key)!r}"
                )

    if sorted(fast.gauges) != sorted(slow.gauges):
        out.append(f"gauges: fast {sorted(fast.gauges)}, slow {sorted(slow.gauges)}")
    for name in sorted(set(fast.gauges) & set(slow.gauges)):
        a, b = fast.gauge(name), slow.gauge(name)
        for key, rel in (("mean", REL), ("min", REL), ("max", REL), ("ci", REL_DERIVED)):
            if not _same_number(getattr(a, key), getattr(b, key), rel):
                out.append(
                    f"gauge {name}.{key}: fast {getattr(a, key)!r}, slow {getattr(b, key)!r}"
                )
        pa, pb = _collapse(a.times, a.values), _collapse(b.times, b.values)
        for i, (x, y) in enumerate(zip(pa, pb, strict=False)):  # lengths below
            if not (_same_number(x[0], y[0]) and _same_number(x[1], y[1])):
                out.append(f"gauge {name}: change point {i} (time, value) fast {x}, slow {y}")
                break
        else:
            if len(pa) != len(pb):
                out.append(f"gauge {name}: {len(pa)} change points fast, {len(pb)} slow")

    if [(s.name, s.index) for s in fast.stages] != [(s.name, s.index) for s in slow.stages]:
        out.append("stages: not the same members")
    for a, b in zip(fast.stages, slow.stages, strict=False):
        where = f"stage {a.name}" + ("" if a.index is None else f"[{a.index}]")
        for key in ("iterations", "completed"):
            if getattr(a, key) != getattr(b, key):
                out.append(f"{where}.{key}: fast {getattr(a, key)}, slow {getattr(b, key)}")
        for key in STAGE_MEANS:
            if not _same_number(getattr(a, key), getattr(b, key)):
                out.append(f"{where}.{key}: fast {getattr(a, key)!r}, slow {getattr(b, key)!r}")
        if b.skipped != 0:
            out.append(f"{where}.skipped is {b.skipped} with fast-forwarding off")

    if [(p.name, p.index) for p in fast.pools] != [(p.name, p.index) for p in slow.pools]:
        out.append("pools: not the same members")
    for a, b in zip(fast.pools, slow.pools, strict=False):
        where = f"pool {a.name}" + ("" if a.index is None else f"[{a.index}]")
        for key in POOL_COUNTS:
            if getattr(a, key) != getattr(b, key):
                out.append(f"{where}.{key}: fast {getattr(a, key)}, slow {getattr(b, key)}")
        for key in POOL_MEANS:
            if not _same_number(getattr(a, key), getattr(b, key)):
                out.append(f"{where}.{key}: fast {getattr(a, key)!r}, slow {getattr(b, key)!r}")
    return out


def assert_same(fast, slow, *, exact: bool = False, context: str = "") -> None:
    """`fast` (fast-forwarded) and `slow` (one iteration at a time) report the same run:
    every observe's sessions and turns identical and its values and times equal to 1e-9
    relative (identical with `exact`), every stage's iterations and completions and every
    pool's counts identical, every time average equal to 1e-9 relative."""
    problems = differences(fast, slow, exact=exact)
    assert not problems, (
        f"fast-forwarding changed the run ({len(problems)} differences):\n  "
        + "\n  ".join(problems[:25])
        + (f"\n{context}" if context else "")
    )


def skipped(report) -> int:
    return sum(s.skipped for s in report.stages)


def iterations(report) -> int:
    return sum(s.iterations for s in report.stages)


def both(path=None, *, source=None, **options):
    """The program run fast-forwarded and one iteration at a time: (fast, slow)."""
    program = serq.compile(None if path is None else str(path), source=source, **options)
    return serq.run(program, fast_forward=True), serq.run(program, fast_forward=False)


def has_step(program: ir.Program) -> bool:
    return any(isinstance(s.kind, ir.Step) for s in program.stages)


# ------------------------------------------------------------- examples and scenarios

# Every example with a step engine, with a short horizon; "NAME/loaded" is a variant with
# more load or less memory (a `let` changed), LOADED says what it must exercise.
EXAMPLE_RUNS: dict[str, dict] = {
    "vllm.sq": {"horizon": 100, "warmup": 10},
    "vllm.sq/loaded": {"horizon": 60, "warmup": 7.5, "sets": {"Lambda": 2.0, "blocks": 250}},
    "vllm_single_turn.sq": {"horizon": 20, "warmup": 2.5},
    "vllm_single_turn.sq/loaded": {"horizon": 15, "warmup": 2, "sets": {"Lambda": 8, "blocks": 60}},
    "vllm_subagents.sq": {"horizon": 60, "warmup": 5},
    "vllm_subagents.sq/loaded": {
        "horizon": 40,
        "warmup": 5,
        "sets": {"Lambda": 1.5, "blocks": 100},
    },
    "vllm_chat.sq": {"horizon": 60, "warmup": 6},
    "vllm_chat.sq/loaded": {"horizon": 40, "warmup": 4, "sets": {"Lambda": 2.0, "B": 64}},
    "vllm_request.sq": {},
    "vllm_request.sq/loaded": {"sets": {"out_len": 400}, "horizon": 600},
    "vllm_replay.sq": {},
    "vllm_replay.sq/loaded": {"sets": {"blocks": 40}},
    "llmd_pd.sq": {"horizon": 40, "warmup": 5},
    "llmd_pd.sq/loaded": {"horizon": 30, "warmup": 5, "sets": {"B": 96}},
    "pd_queues.sq": {"horizon": 60, "warmup": 5},
    "replica.sq": {"horizon": 60, "warmup": 6},
    "replica.sq/loaded": {"horizon": 40, "warmup": 4, "sets": {"Lambda": 3}},
}
# What a loaded variant must exercise (a count some pool of the slow run has above 0), so
# that a change of the example cannot empty it; the memory of the last three is not a `let`.
LOADED = {
    "vllm.sq/loaded": ("preemptions", "evicted_entries"),
    "vllm_single_turn.sq/loaded": ("preemptions", "evicted_entries"),
    "vllm_subagents.sq/loaded": ("preemptions", "evicted_entries"),
    "vllm_request.sq/loaded": ("preemptions",),
    "vllm_replay.sq/loaded": ("preemptions", "evicted_entries"),
    "vllm_chat.sq/loaded": ("evicted_entries",),
    "llmd_pd.sq/loaded": ("evicted_entries",),
    "replica.sq/loaded": ("evicted_entries",),
}

SCENARIOS = sorted(
    p.name
    for p in PROGRAMS.glob("*.sq")
    if p.name.startswith(("step_", "det_step", "rand_step", "ff_"))
)


@functools.cache
def example_run(case: str):
    """The example run of EXAMPLE_RUNS[case], both ways: (fast, slow)."""
    return both(EXAMPLES / case.split("/")[0], **EXAMPLE_RUNS[case])


@pytest.mark.parametrize("case", sorted(EXAMPLE_RUNS))
def test_example_same_both_ways(case):
    name = case.split("/")[0]
    fast, slow = example_run(case)
    assert iterations(slow) > 0
    assert_same(fast, slow, context=f"examples/{name} {EXAMPLE_RUNS[case]}")
    for count in LOADED.get(case, ()):
        assert any(getattr(p, count) for p in slow.pools), f"{case}: no {count}"


def test_vllm_fast_forwards_most_iterations():
    """The multi-turn vLLM program at light load is almost all quiet iterations (the
    design note measured 98% skipped on long runs); loaded, still most of them."""
    for case, share in (("vllm.sq", 0.8), ("vllm.sq/loaded", 0.5)):
        fast, slow = example_run(case)
        assert skipped(fast) > share * iterations(slow), (case, skipped(fast), iterations(slow))


def test_every_step_example_is_run():
    """A new example with a step engine gets a line in EXAMPLE_RUNS."""
    step_examples = {
        p.name for p in EXAMPLES.glob("*.sq") if has_step(serq.compile(str(p)).program)
    }
    assert step_examples == {k.split("/")[0] for k in EXAMPLE_RUNS}


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_same_both_ways(name):
    program = serq.compile(str(PROGRAMS / name))
    assert has_step(program.program)
    fast, slow = serq.run(program, fast_forward=True), serq.run(program, fast_forward=False)
    # the step_* and ff_clock_* scenarios run on the step clock (cost 1, integral
    # arrivals): their times are iteration numbers, compared exactly
    exact = name.startswith(("step_", "ff_clock_"))
    assert_same(fast, slow, exact=exact, context=f"tests/sim/programs/{name}")


@functools.cache
def evict_keys_run(rule: int):
    return both(PROGRAMS / "ff_clock_evict_keys.sq", sets={"rule": rule})


@pytest.mark.parametrize("rule", range(5))
def test_eviction_keys_that_move_inside_a_span(rule):
    """Block crossings inside a span evict by keys evaluated at the crossing's own
    iteration: now, age, last, used(kv), work(E) (ff_clock_evict_keys.sq)."""
    fast, slow = evict_keys_run(rule)
    assert slow.pools[0].evicted_units > 0
    assert_same(fast, slow, exact=True, context=f"ff_clock_evict_keys.sq, rule {rule}")


def test_eviction_keys_scenario_tells_the_rules_apart():
    """Each rule leaves another pattern of surviving prefixes, so that evaluating a key
    at the wrong iteration shows in `c`."""
    patterns = {tuple(evict_keys_run(rule)[1].observe("c").samples) for rule in range(5)}
    assert len(patterns) == 5


@pytest.mark.parametrize("cap", ["inf", "1e308"])
def test_an_infinite_memory_with_blocks(cap):
    """Block crossings on a pool of cap inf (or near it) all fit: counting them by whole
    blocks once converted the infinite room to an integer (an E-internal)."""
    source = engine_program(kv=f"cap {cap};").replace("cap 40 * bs; block bs;", "block bs;")
    fast, slow = both(source=source)
    assert skipped(fast) > 0
    assert_same(fast, slow, context=source)


def test_the_scenarios_are_found():
    assert sum(n.startswith("step_") for n in SCENARIOS) >= 11


# ---------------------------------------------------------------- generated programs


@dataclass(frozen=True)
class Generated:
    """A generated program, and whether it runs on the step clock (cost 1, integral
    arrival and think times: every time is an iteration number)."""

    seed: int
    source: str
    step_clock: bool


COSTS = (
    "0.01 + 0.00005 * tokens",
    "max(0.015, 0.0002 * tokens)",
    "0.008 + 0.0004 * decoders + 0.00003 * prefilled",
    "0.01 + 0.000002 * kv_decode + 0.00004 * tokens",
    "max(0.01 + 0.000003 * kv_decode, 0.0001 * tokens)",
    "0.006 + 0.0000001 * attention + 0.00005 * prefilled",
    "0.005 + 0.001 * residents + 0.000001 * kv_prefill",
    "min(0.05, 0.01 + 0.0001 * tokens)",
    "0.01 + 0.0001 * sqrt(kv_decode) + 0.00001 * decoders",
    "tokens > 64 ? 0.02 : 0.011",
    "0.0125 + tokens / 40000",
)
STEP_COSTS = ("1", "1", "1", "max(1, tokens / 4096)", "1 + 0 * kv_decode", "1 + 0 * attention")


def generate(k: int) -> Generated:
    """The k-th program of the family, from `random.Random(k)` alone."""
    r = random.Random(k)
    step_clock = k % 3 == 0
    engines = 2 if r.random() < 0.25 else 1
    bs = r.choice((4, 8, 16))
    blocked = r.random() < 0.7
    admit_via = r.random() < 0.7
    resume = admit_via and r.random() < 0.5  # vLLM's resumption from `computed`
    upfront = not admit_via and r.random() < 0.3  # the whole request held at admission
    multi_turn = r.random() < 0.6
    batch = step_clock or r.random() < 0.3
    gauge = r.random() < 0.5
    shared = engines == 2 and r.random() < 0.4  # one KV pool, the memory of both engines
    fractional = r.random() < 0.15  # prompts and outputs of non-integral lengths

    arr = "[2]" if engines == 2 else ""
    ix = "[j]" if engines == 2 else ""
    E, kv, reqs = f"E{ix}", "kv" if shared else f"kv{ix}", f"reqs{ix}"

    # pools
    slots = r.choice((2, 3, 4, 8, 16))
    queue = r.choice(
        ("queue fifo;", "", "queue by (prompt);", "queue by (-serial);", "queue by (o, serial);")
    )
    if admit_via:
        reqs_pool = f"pool reqs{arr} {{ cap {slots}; admit via E; {queue} }}"
    else:
        reqs_pool = f"pool reqs{arr} {{ cap {slots}; {queue} }}"
    kv_cap = r.choice((128, 160, 250, 256, 410, 640, 1024, 4096))
    evict = r.choice(
        (
            "evict lru;",
            "evict lru;",
            "evict by (-size);",
            "evict by (size, last);",
            "evict by (age);",
            "evict by (-age, size);",
        )
    )
    # growth that waits (preempt none) deadlocks a small pool: only in larger ones
    preempt = "preempt none;" if kv_cap >= 400 and r.random() < 0.3 else "preempt lifo;"
    block = "block bs; " if blocked else ""
    kv_arr = "" if shared else arr
    kv_pool = f"pool kv{kv_arr} {{ cap {kv_cap}; {block}{evict} {preempt} }}"

    # the engine
    budget = r.choice(
        ("8", "16", "48", "128", "512", "max(32, 8 * residents)", "max(16, 256 - kv_decode / 8)")
    )
    cost = r.choice(STEP_COSTS if step_clock else COSTS)
    if engines == 1 and not step_clock and r.random() < 0.15:  # observables no span moves
        cost = "0.01 + 0.001 * queued(reqs) + 0.0005 * holders(kv) + 0.00004 * tokens"
    chunk = r.choice(
        (
            "",
            "",
            "chunk 16; ",
            "chunk 32; ",
            "chunk 64; ",
            "chunk max(8, 64 / max(1, residents)); ",
            # at or below 0 is no cap (vLLM's threshold 0); a fraction is a cap
            "chunk 0; ",
            "chunk -1; ",
            "chunk -inf; ",
            "chunk 0.5; ",
            "chunk residents + queued(reqs) > 1 ? 24 : 0; " if engines == 1 else "chunk 0; ",
        )
    )
    serve = r.choice(
        ("", "", "serve admission; ", "serve decode first; ", "serve by (remaining); ")
        + (("serve exclusive prefill; ",) if admit_via else ())
    )
    engine = f"stage E{arr} : step {{ budget {budget}; cost {cost}; {chunk}{serve}memory kv; }}"

    # the workload
    if batch:
        n = r.choice((3, 6, 10, 16, 24))
        gap = r.choice((0, 1, 3, 7)) if step_clock else r.choice((0, 0.25, 0.4))
        arrive = f"arrive batch({n});"
        stagger = f"  run gap (serial * {gap});\n"
    else:
        rate = r.choice((0.5, 1, 2, 4))
        arrive = r.choice((f"arrive poisson({rate});", f"arrive renewal(~erlang(2, {1 / rate}));"))
        stagger = ""
    new = r.choice(("16 + floor(~uniform(0, 100))", "~det(40)", "8 + floor(~exp(60))"))
    out = r.choice(("~det(24)", "2 + floor(~exp(40))", "2 + floor(~uniform(0, 60))", "~det(3)"))
    if step_clock:
        think = r.choice(("~det(5)", "floor(~uniform(1, 40))", "1 + floor(~exp(10))"))
    else:
        think = r.choice(("~exp(2)", "~det(0.5)", "~uniform(0.1, 3)"))
    more = r.choice((0.4, 0.6, 0.8))
    if fractional:
        new, out = f"{new} + 0.25", f"{out} + 0.5"

    if engines == 2:
        route = r.choice(
            (
                "choose j in 2 by (holders(reqs[j]) + queued(reqs[j]));",
                "set j = serial - 2 * floor(serial / 2);",
            )
            + (
                ()
                if shared
                else (
                    "choose j in 2 by (holders(kv[j]) + queued(reqs[j]));",
                    "choose j in 2 by (-cachedin(kv[j]), holders(reqs[j]));",
                )
            )
        )
        route = f"    {route}\n"
    else:
        route = ""

    if admit_via and resume:
        hold = f"""\
    hold {reqs} (1), {kv} (min(known, hit + budget_left({E}))) reserve (known)
         at admission (known = computed < prompt ? prompt : computed + 1,
                       hit = min(cachedin({kv}), floor((known - 1) / bs) * bs)) {{
      set c = cached;
      observe resumed = computed;
      run {E} prefill (known - c) growing {kv};
      observe first = now;
      observe ttft = now - arrived;
      run {E} decode (o - 1 - (known - prompt)) growing {kv};
    }} cache (prompt + o - 1);
"""
    elif admit_via:
        hold = f"""\
    hold {reqs} (1), {kv} (min(prompt, hit + budget_left({E}))) reserve (prompt)
         at admission (hit = min(cachedin({kv}), prompt - 1)) {{
      set c = cached;
      run {E} prefill (prompt - c) growing {kv};
      observe first = now;
      observe ttft = now - arrived;
      run {E} decode (o) growing {kv};
    }} cache (prompt + o);
"""
    elif upfront:
        hold = f"""\
    hold {reqs} (1), {kv} (prompt + o) {{
      set c = cached;
      run {E} prefill (prompt - c);
      observe first = now;
      observe ttft = now - arrived;
      run {E} decode (o);
    }} cache (prompt + o);
"""
    else:
        hold = f"""\
    hold {reqs} (1), {kv} (prompt) {{
      set c = cached;
      run {E} prefill (prompt - c) growing {kv};
      observe first = now;
      observe ttft = now - arrived;
      run {E} decode (o) growing {kv};
    }} cache (prompt + o);
"""

    body = f"""\
    set arrived = now;
    set n = min({new}, {kv_cap // 4});
    set o = min({out}, {kv_cap // 3});
    set prompt = min(K, {min(200, kv_cap // 4)}) + n;
{route}{hold}\
    observe hit = c / prompt;
    observe last = now;
    observe response = now - arrived;
    set K = prompt + o;
"""
    if multi_turn:
        session = (
            f"session {{\n{stagger}  set K = 0;\n  loop {{\n{body}"
            f"    branch with ({more}) {{ run think ({think}); }} else {{ end; }}\n  }}\n}}\n"
        )
    else:
        session = f"session {{\n{stagger}  set K = 0;\n{body}}}\n"

    if gauge:
        if engines == 2 and not shared:
            g = r.choice(("sum i in 2 (used(kv[i]))", "max i in 2 (holders(reqs[i]))"))
        elif engines == 2:
            g = r.choice(("used(kv)", "free(kv) == 0", "sum i in 2 (queued(reqs[i]))"))
        else:
            g = r.choice(("used(kv)", "used(kv) + queued(reqs)", "holders(kv)", "busy(E)"))
        gauges = f"gauge g = {g};\n"
    else:
        gauges = ""

    horizon = r.choice((1500, 2500)) if step_clock else r.choice((40, 60, 90))
    if batch:  # a batch may be served before a long warm-up ends
        warmup = r.choice((0, 2.5 if step_clock else 0.3125))
    else:
        warmup = r.choice((0, round(horizon * 0.137, 3)))
    source = (
        f"// generated: test_fast_forward.py generate({k})\n"
        f"let bs = {bs};\n{reqs_pool}\n{kv_pool}\n{engine}\n"
        "stage think : delay;\nstage gap : delay;\n"
        f"workload {{ {arrive} }}\n{session}{gauges}"
        f"run {{ horizon {horizon}; warmup {warmup}; seed {k + 1}; }}\n"
    )
    return Generated(k, source, step_clock)


FAMILY = range(60)


@functools.cache
def family_run(k: int):
    """The k-th generated program and its two reports (fast, slow)."""
    g = generate(k)
    fast, slow = both(source=g.source)
    return g, fast, slow


@pytest.mark.parametrize("k", FAMILY)
def test_generated_same_both_ways(k):
    g, fast, slow = family_run(k)
    assert_same(fast, slow, exact=g.step_clock, context=f"the program, generate({k}):\n{g.source}")
    if g.step_clock:  # times are iteration numbers: the comparison above was exact
        for name in ("first", "last"):
            assert all(t == int(t) for t in slow.observe(name).times), (name, g.source)


def test_generator_is_deterministic():
    assert generate(7) == generate(7)
    assert len({generate(k).source for k in FAMILY}) == len(FAMILY)


def test_family_fast_forwards():
    """Across the family the engine skips a good share of iterations: more than 30% of
    all iterations, in at least half of the programs."""
    runs = [family_run(k) for k in FAMILY]
    total = sum(iterations(slow) for _, _, slow in runs)
    skips = [skipped(fast) for _, fast, _ in runs]
    assert total > 0
    for (g, fast, _), s in zip(runs, skips, strict=True):
        assert s <= iterations(fast), f"generate({g.seed}) skipped more than it iterated"
    share = sum(skips) / total
    programs = sum(s > 0 for s in skips)
    assert share > 0.3, f"fast-forwarding skipped {sum(skips)} of {total} iterations"
    assert programs >= len(runs) / 2, f"only {programs} of {len(runs)} programs skip"


def test_family_exercises_the_engine():
    """The family preempts, evicts and stalls somewhere, so that equality means something."""
    runs = [family_run(k) for k in FAMILY]
    assert sum(any(p.preemptions for p in slow.pools) for _, _, slow in runs) >= 5
    assert sum(any(p.evicted_units for p in slow.pools) for _, _, slow in runs) >= 10
    assert sum(g.step_clock for g, _, _ in runs) >= 15


# ------------------------------------------------------------------- the analysis


def analyse(source: str):
    """The verdicts of `serq.sim.fastforward.analyse` on `source`, by stage name."""
    from serq.sim import fastforward

    program = serq.compile(source=source).program
    verdicts = fastforward.analyse(program)
    assert len(verdicts) == len(program.stages)
    return {s.name: v for s, v in zip(program.stages, verdicts, strict=True)}


def engine_program(
    *, cost: str = "0.01 + 0.00005 * tokens", budget: str = "64", queue: str = "", kv: str = ""
) -> str:
    """A small vLLM-shaped program whose engine, queue key and memory the tests vary."""
    return f"""\
let bs = 16;
pool host {{ cap 100000; block bs; evict lru; }}
pool reqs {{ cap 4; admit via engine; {queue} }}
pool kv {{ cap 40 * bs; block bs; evict lru; preempt lifo; {kv} }}
stage engine : step {{ budget {budget}; cost {cost}; memory kv; }}
stage link : fifo(1);
stage think : delay;
workload {{ arrive poisson(1); }}
session {{
  set K = 0;
  loop {{
    set arrived = now;
    set prompt = min(K, 150) + 20 + floor(~uniform(0, 80));
    set o = 2 + floor(~exp(40));
    hold reqs (1), kv (min(prompt, hit + budget_left(engine))) reserve (prompt)
         at admission (hit = min(cachedin(kv), floor((prompt - 1) / bs) * bs)) {{
      run engine prefill (prompt - cached) growing kv;
      observe ttft = now - arrived;
      run engine decode (o) growing kv;
    }} cache (prompt + o);
    observe response = now - arrived;
    set K = prompt + o;
    branch with (0.6) {{ run think (~exp(2)); }} else {{ end; }}
  }}
}}
run {{ horizon 40; warmup 4; seed 3; }}
"""


def _reasons(verdict) -> str:
    return " ".join(verdict.reasons).lower()


# cost (or budget) expressions that make spans impossible, with a word the reason says
REFUSED = {
    "now": ("cost", "0.01 + 0.000001 * now", "now"),
    "draw": ("cost", "0.01 + ~uniform(0, 0.001)", ""),
    "draw-exp": ("cost", "~exp(0.01)", ""),
    "used": ("cost", "0.01 + 0.0000001 * used(kv)", "used"),
    "free": ("cost", "0.01 + 0.0000001 * free(kv)", "free"),
    "cachedin": ("cost", "0.01 + 0.0000001 * cachedin(kv)", "cachedin"),
    "work": ("cost", "0.01 + 0.0001 * work(think)", "work"),
    "budget_left": ("cost", "0.01 + 0.00001 * budget_left(engine)", "budget_left"),
    "est_rho": ("cost", "0.01 + 0.001 * est_rho(engine)", "est_"),
    "price": ("cost", "0.01 + 0.001 * price(engine, 0.1, 0.5)", "price"),
    "budget-now": ("budget", "64 + 0 * now", "now"),
    "budget-draw": ("budget", "floor(~uniform(60, 70))", ""),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_analysis_refuses_what_moves_without_an_event(case):
    where, expr, word = REFUSED[case]
    source = engine_program(**{where: expr})
    verdict = analyse(source)["engine"]
    assert verdict is not None
    assert not verdict.skips, f"{where} {expr}: spans allowed"
    assert verdict.reasons, "a refusal says why"
    if word:
        assert word in _reasons(verdict), verdict.reasons
    fast, slow = both(source=source)
    assert skipped(fast) == 0
    assert_same(fast, slow, context=source)


def test_analysis_refuses_a_draw_in_the_cost():
    """The brief's case by name (also in REFUSED): a cost that draws."""
    source = engine_program(cost="0.005 + ~exp(0.005)")
    verdict = analyse(source)["engine"]
    assert not verdict.skips and verdict.reasons
    fast, slow = both(source=source)
    assert skipped(fast) == 0
    assert_same(fast, slow)


@pytest.mark.parametrize("key", ["-waited", "waited, serial", "now - arrived", "prompt - now"])
def test_analysis_no_spans_while_waiters_when_the_queue_key_reads_time(key):
    """A served pool's queue key that reads `waited` or `now` can change the head with no
    event: no span while a session waits."""
    source = engine_program(queue=f"queue by ({key});")
    verdict = analyse(source)["engine"]
    assert verdict is not None
    assert not verdict.with_waiters
    assert verdict.reasons
    fast, slow = both(source=source)
    assert_same(fast, slow, context=source)


def test_analysis_queue_key_on_attributes_allows_waiters():
    verdict = analyse(engine_program(queue="queue by (prompt, -serial);"))["engine"]
    assert verdict.skips and verdict.with_waiters


def test_analysis_no_evictions_in_spans_when_the_pool_spills():
    """A spill is a job on the link, an event: a spilling pool cannot evict inside a span."""
    source = engine_program(kv="spill host via link (size / 100000) when (1);")
    verdict = analyse(source)["engine"]
    assert verdict is not None
    assert not verdict.evicts
    assert "spill" in _reasons(verdict), verdict.reasons
    fast, slow = both(source=source, sets={})
    assert_same(fast, slow, context=source)
    loaded = engine_program(kv="spill host via link (size / 100000) when (1);").replace(
        "poisson(1)", "poisson(4)"
    )
    fast, slow = both(source=loaded)
    assert any(p.spills for p in slow.pools), "the loaded spill program spills"
    assert_same(fast, slow, context=loaded)


def test_analysis_accepts_the_vllm_engine():
    program = serq.compile(str(EXAMPLES / "vllm.sq")).program
    from serq.sim import fastforward

    verdicts = fastforward.analyse(program)
    by_name = {s.name: v for s, v in zip(program.stages, verdicts, strict=True)}
    assert by_name["pause"] is None  # a delay stage has no verdict
    v = by_name["engine"]
    assert v.skips and v.with_waiters and v.evicts
    assert not v.cost_varies
    assert v.reasons == ()


def test_analysis_cost_reading_kv_decode_varies():
    verdict = analyse(engine_program(cost="0.01 + 0.000002 * kv_decode"))["engine"]
    assert verdict.skips and verdict.cost_varies


@pytest.mark.parametrize(
    "cost",
    [
        "0.01 + 0.00005 * tokens",
        "0.008 + 0.0004 * decoders + 0.00003 * prefilled + 0.001 * residents",
        "max(0.01, 0.0000001 * attention)",
        "1",
    ],
)
def test_analysis_cost_not_reading_kv_decode_is_constant_over_a_span(cost):
    verdict = analyse(engine_program(cost=cost))["engine"]
    assert verdict.skips and not verdict.cost_varies


def test_analysis_has_one_entry_per_stage_member():
    """None for every stage that is not a step engine; a verdict per member of a family."""
    program = serq.compile(str(EXAMPLES / "llmd_pd.sq")).program
    from serq.sim import fastforward

    verdicts = fastforward.analyse(program)
    assert len(verdicts) == len(program.stages)
    for stage, verdict in zip(program.stages, verdicts, strict=True):
        assert (verdict is None) == (not isinstance(stage.kind, ir.Step)), stage.name


# ------------------------------------------------------------------------- the CLI


def test_cli_no_fast_forward_json(capsys):
    status = cli.main(["run", str(EXAMPLES / "vllm_request.sq"), "--no-fast-forward", "--json"])
    out = capsys.readouterr().out
    assert status == 0
    slow = json.loads(out)
    assert slow["stages"] and slow["skipped"] == [0] * len(slow["stages"])
    status = cli.main(["run", str(EXAMPLES / "vllm_request.sq"), "--json"])
    fast = json.loads(capsys.readouterr().out)
    assert status == 0
    assert [r["iterations"] for r in fast["stages"]] == [r["iterations"] for r in slow["stages"]]
    assert fast["observes"] == slow["observes"]
    assert len(fast["skipped"]) == len(fast["stages"]) and sum(fast["skipped"]) > 0


# ------------------------------------------------------------- events during a span

EVENTS_DURING_A_SPAN = """\
pool kv { cap 4000; block 16; evict lru; preempt lifo; }
stage E : step { budget 64; cost 1; memory kv; }
stage gap : delay;
workload { arrive batch(12); }
session {
  branch (serial == 0) {
    hold kv (16) {
      run E prefill (16) growing kv;
      run E decode (1000) growing kv;
    }
  } else {
    run gap (serial * 70.5);
  }
  observe done = now;
}
run { horizon 2000; warmup 0; seed 1; }
"""


def test_an_event_during_a_span_costs_one_planned_iteration():
    """A resident decodes 1000 tokens on the step clock while eleven other sessions each
    end a delay at a half-integral time, during an iteration: each such event is met by
    a span's last iteration running past it, so it costs the one iteration planned after
    it (before, also the one that started before it and could not become a span)."""
    fast, slow = both(source=EVENTS_DURING_A_SPAN)
    assert_same(fast, slow, exact=True, context=EVENTS_DURING_A_SPAN)
    planned = iterations(fast) - skipped(fast)
    assert iterations(slow) == 1001  # the prefill, then one token an iteration
    assert planned <= 2 + 11, planned
