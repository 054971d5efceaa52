"""Several step engines fast-forwarded together (`serq.sim.joint`) against stepping them.

Programs with two to four engines, each with its memory and request pools of its own, as
users write replicas behind a router: the results must be bit for bit those of stepping
every iteration (`fast_forward=False`) and of the interpreter (`codegen=False`): every
field of the report but the count of skipped iterations, every sample (time, session,
turn, value) and every gauge's change points.

The family (`generate(k)`, from `random.Random(k)` alone) draws from the whole domain:
costs of whole numbers (iterations of two engines end together, where a window must stop)
and fractional ones, costs that read `kv_decode` (each iteration's own), budgets below
and above the batch, chunks of 0, below 0 and fractions, the serve orders, memory so
small that crossings evict and preempt, `preempt none`, fractional token counts, gauges
over every replica's memory (read at each crossing's instant), sessions routed by
`choose`, by their serial or by a draw, multi-turn sessions and batches on the step
clock.
"""

from __future__ import annotations

import functools
import json
import random

import pytest

import serq
from serq.sim import joint

pytestmark = pytest.mark.filterwarnings("ignore::serq.RunWarning")  # stalls the family draws


def _stripped(value):
    """A report's JSON without the counts of skipped iterations (the one field that says
    how it was run)."""
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k != "skipped"}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


def everything(report) -> str:
    """Every field of `report` but `skipped`, every sample and every gauge point, as text
    (floats by `repr`, so that equal text is equal bits)."""
    samples = {
        name: [repr(list(getattr(o, a))) for a in ("times", "sessions", "turns", "samples")]
        for name, o in report.observes.items()
    }
    gauges = {
        name: [repr(list(g.times)), repr(list(g.values))] for name, g in report.gauges.items()
    }
    return json.dumps([_stripped(json.loads(report.json())), samples, gauges], sort_keys=True)


COSTS = (
    "0.01 + 0.00005 * tokens",
    "max(0.012, 0.0002 * tokens)",
    "0.01 + 0.000002 * kv_decode + 0.00004 * tokens",
    "max(0.01 + 0.000003 * kv_decode, 0.0001 * tokens)",
    "0.008 + 0.0004 * decoders + 0.00003 * prefilled",
    "0.0125 + tokens / 40000",
    "0.01",
)
STEP_COSTS = ("1", "1", "2", "max(1, tokens / 64)", "1 + 0 * kv_decode")


@functools.cache
def generate(k: int) -> str:
    """The k-th program of the family."""
    r = random.Random(k)
    step_clock = k % 4 == 0
    n = r.choice((2, 2, 3, 4))
    bs = r.choice((1, 4, 16))
    blocks = r.choice((12, 40, 200, 1000)) * 16 // bs  # tokens: 192 to 16,000
    slots = r.choice((1, 2, 4, 16))
    evict = r.choice(("evict lru;", "evict lru;", "evict by (-size);", "evict by (age);"))
    preempt = "preempt none;" if blocks * bs >= 3200 and r.random() < 0.3 else "preempt lifo;"
    budget = r.choice(("16", "64", "512", "512", "max(8, 4 * residents)", "2", "1.5"))
    cost = r.choice(STEP_COSTS if step_clock else COSTS)
    chunk = r.choice(("", "chunk 0; ", "chunk -1; ", "chunk 16; ", "chunk 0.5; ", "chunk 64; "))
    serve = r.choice(
        ("", "serve decode first; ", "serve by (remaining); ", "serve by (-remaining); ")
    )
    gauge = r.random() < 0.4
    fractional = r.random() < 0.25
    multi_turn = r.random() < 0.6
    route = r.choice(
        (
            f"choose j in {n} by (holders(reqs[j]) + queued(reqs[j]));",
            f"set j = serial - {n} * floor(serial / {n});",
            f"set j = floor(~uniform(0, {n}));",
            f"choose j in {n} by (-cachedin(kv[j]), holders(reqs[j]));",
        )
    )
    prompt = r.choice(("4 + floor(~uniform(0, 40))", "~det(20)", "1 + floor(~exp(30))"))
    out = r.choice(("2 + floor(~exp(30))", "~det(12)", "1 + floor(~uniform(0, 50))", "~det(1)"))
    if fractional:
        prompt, out = f"{prompt} + 0.25", f"{out} + 0.5"
    if step_clock:
        arrive = f"arrive batch({r.choice((4, 8, 16))});"
        stagger = f"  run gap (serial * {r.choice((0, 1, 3))});\n"
        think = r.choice(("~det(5)", "floor(~uniform(1, 30))"))
        horizon, warmup = r.choice((400, 900)), r.choice((0, 2.5))
    else:
        arrive = f"arrive poisson({r.choice((0.5, 1, 3))});"
        stagger = ""
        think = r.choice(("~exp(2)", "~det(0.5)", "~uniform(0.1, 3)"))
        horizon, warmup = r.choice((30, 60)), r.choice((0, 4.2))
    if r.random() < 0.5:
        hold = """\
    hold reqs[j] (1), kv[j] (min(known, hit + budget_left(E[j]))) reserve (known)
         at admission (known = computed < p ? p : computed + 1,
                       hit = min(cachedin(kv[j]), floor((known - 1) / bs) * bs)) {
      set c = cached;
      run E[j] prefill (known - c) growing kv[j];
      observe ttft = now - arrived;
      run E[j] decode (o - 1 - (known - p)) growing kv[j];
    } cache (p + o - 1);
"""
    else:
        hold = """\
    hold reqs[j] (1), kv[j] (p) {
      set c = cached;
      run E[j] prefill (p - c) growing kv[j];
      observe ttft = now - arrived;
      run E[j] decode (o) growing kv[j];
    } cache (p + o);
"""
    body = f"""\
    set arrived = now;
    set p = min(K, {bs * blocks // 5}) + {prompt};
    set o = {out};
{"    " + route}
{hold}\
    observe response = now - arrived;
    set K = p + o;
"""
    if multi_turn:
        session = (
            f"session {{\n{stagger}  set K = 0;\n  loop {{\n{body}"
            f"    branch with (0.6) {{ run think ({think}); }} else {{ end; }}\n  }}\n}}\n"
        )
    else:
        session = f"session {{\n{stagger}  set K = 0;\n{body}}}\n"
    gauges = ""
    if gauge:
        gauges = (
            f"gauge used_all = sum m in {n} (used(kv[m]));\n"
            f"gauge spread = max m in {n} (used(kv[m])) - min m in {n} (used(kv[m]));\n"
        )
    return (
        f"// generated: test_joint_spans.py generate({k})\n"
        f"let bs = {bs};\n"
        f"pool reqs[{n}] {{ cap {slots}; admit via E; }}\n"
        f"pool kv[{n}] {{ cap {blocks} * bs; block bs; {evict} {preempt} }}\n"
        f"stage E[{n}] : step {{ budget {budget}; cost {cost}; {chunk}{serve}memory kv; }}\n"
        "stage think : delay;\nstage gap : delay;\n"
        f"workload {{ {arrive} }}\n{session}{gauges}"
        f"run {{ horizon {horizon}; warmup {warmup}; seed {k + 1}; }}\n"
    )


FAMILY = range(40)


@functools.cache
def family_run(k: int) -> tuple[str, str, str, int, int]:
    """The three runs of the k-th program, as `everything`, with the iterations and the
    skipped ones of the fast-forwarded run."""
    program = serq.compile(source=generate(k))
    fast = serq.run(program)
    slow = serq.run(program, fast_forward=False)
    interpreted = serq.run(serq.compile(source=generate(k), codegen=False))
    iterations = sum(s.iterations for s in fast.stages)
    skipped = sum(s.skipped for s in fast.stages)
    return everything(fast), everything(slow), everything(interpreted), iterations, skipped


@pytest.mark.parametrize("k", FAMILY)
def test_generated_same_three_ways(k):
    fast, slow, interpreted, _, _ = family_run(k)
    assert fast == slow, f"fast-forwarding changed the run of:\n{generate(k)}"
    assert interpreted == fast, f"the interpreter differs on:\n{generate(k)}"


def test_family_fast_forwards_together():
    """Most of the family skips iterations (what does not is refused a span by its own
    engine: a budget below the batch, a prefill at every iteration, a livelock)."""
    runs = [family_run(k) for k in FAMILY]
    assert sum(1 for run in runs if run[4]) >= len(runs) // 2
    assert sum(run[4] for run in runs) > 0.15 * sum(run[3] for run in runs)


def test_generator_is_deterministic():
    assert generate(3) == generate(3)
    assert len({generate(k) for k in FAMILY}) == len(FAMILY)


REPLICAS = """\
let R = 4;
pool reqs[R] { cap 32; admit via E; }
pool kv[R] { cap 1000 * 16; block 16; evict lru; preempt lifo; }
stage E[R] : step { budget 256; cost 0.01 + 0.00005 * tokens; memory kv; }
stage think : delay;
workload { arrive poisson(2); }
session {
  set K = 0;
  set j = floor(~uniform(0, R));
  loop {
    set arrived = now;
    set p = K + 100 + floor(~uniform(0, 200));
    set o = 20 + floor(~exp(80));
    hold reqs[j] (1), kv[j] (p) {
      run E[j] prefill (p - cached) growing kv[j];
      run E[j] decode (o - 1) growing kv[j];
    } cache (p + o - 1);
    observe response = now - arrived;
    set K = p + o;
    branch with (0.5) { run think (~exp(3)); } else { end; }
  }
}
run { horizon 200; warmup 20; seed 1; }
"""


def test_replicas_skip_as_one_engine_does():
    """Four replicas of the example's engine skip most iterations (one at a time, each
    cut short by the others' iterations, they skipped about 5%), with the report of
    stepping them."""
    program = serq.compile(source=REPLICAS)
    fast = serq.run(program)
    assert everything(fast) == everything(serq.run(program, fast_forward=False))
    iterations = sum(s.iterations for s in fast.stages)
    assert sum(s.skipped for s in fast.stages) > 0.75 * iterations


def windows(program, monkeypatch) -> int:
    """How many windows a run of `program` fast-forwarded together."""
    made = []
    extend = joint.extend

    def counted(first):
        done = extend(first)
        made.append(done)
        return done

    monkeypatch.setattr(joint, "extend", counted)
    serq.run(program)
    monkeypatch.undo()
    return sum(made)


def test_what_may_not_be_fast_forwarded_together(monkeypatch):
    """One engine, or a memory pool the engines share, keeps each engine to its own spans
    (with the same report as stepping); four with their own memories go together."""
    one = serq.compile(source=REPLICAS.replace("let R = 4;", "let R = 1;"))
    shared = serq.compile(source=REPLICAS.replace("pool kv[R]", "pool kv").replace("kv[j]", "kv"))
    four = serq.compile(source=REPLICAS)
    assert windows(one, monkeypatch) == 0
    assert windows(shared, monkeypatch) == 0
    assert windows(four, monkeypatch) > 100
    assert everything(serq.run(shared)) == everything(serq.run(shared, fast_forward=False))


@pytest.mark.parametrize("k", range(200))
def test_the_first_other_event_is_the_least_that_is_no_candidates(k):
    """`joint._first_other` walks down the heap from its root through candidates' entries
    only: it finds the time a scan of the whole heap finds, on heaps of any size with
    candidates anywhere in them, at the root, in runs of equal times, or none."""
    import heapq

    rng = random.Random(k)
    times = [
        rng.choice([0.0, 0.5, 1.0, 2.0, 3.25]) if rng.random() < 0.3 else rng.random()
        for _ in range(rng.randrange(0, 60))
    ]
    heap = [(t, seq, None, None) for seq, t in enumerate(times)]
    heapq.heapify(heap)
    seqs = [entry[1] for entry in heap]
    chosen = rng.sample(seqs, min(len(seqs), rng.randrange(0, 6)))
    if heap and rng.random() < 0.5:
        chosen.append(heap[0][1])  # the root a candidate's
    candidates = {seq: None for seq in chosen}
    scanned = min((e[0] for e in heap if e[1] not in candidates), default=float("inf"))
    assert joint._first_other(heap, candidates) == scanned
