"""pyserq 0.1.4's newer vocabulary, case by case: a minimal program each, its values worked
out by hand (in the comments), equal to the reference (tests/oracle/test_vocabulary_reference.py
runs the same constructs through pyserq 0.1.4)."""

from __future__ import annotations

import math

import pytest

import serq
from serq.sim import api as sim_api

# ---------------------------------------------------------------- reserve held

RESERVE = """fn main() {{
  pool kv {{ cap 20; preempt none; {option} }}
  stage svc : delay;
  workload {{ arrive batch(2); }}
  server {{
    branch (serial == 0) {{
      hold kv (cost(kv, 4)) reserve (cost(kv, 12)) {{ grow kv (cost(kv, {g0})); run svc (cost(svc, 2)); }}
    }} else {{
      run svc (cost(svc, 1));
      hold kv (cost(kv, 4)) reserve (cost(kv, {r1})) {{
        observe adm = now; grow kv (cost(kv, {g1})); observe grown = now; run svc (cost(svc, 1));
      }}
    }}
  }}
}}
"""


def _times(option: str, g0: float, r1: float, g1: float) -> tuple[float, float]:
    text = RESERVE.format(option=option, g0=g0, r1=r1, g1=g1)
    r = serq.run(serq.compile(source=text, horizon=20))
    return r.observe("adm").samples[0], r.observe("grown").samples[0]


@pytest.mark.parametrize(
    ("g0", "r1", "g1", "plain", "held"),
    [
        # session 0 holds 4 and reserved 12 (cap 20); session 1 asks at t=1 for 4, reserving r1.
        # Plain: 4 allocated + max(4, r1) must fit. Held: 12 (the reservation) + max(4, r1).
        (0, 4, 0, (1, 1), (1, 1)),  # 4 + 4 = 8; 12 + 4 = 16: both fit
        (0, 8, 0, (1, 1), (1, 1)),  # 12 + 8 = 20 fits exactly
        (0, 9, 0, (1, 1), (2, 2)),  # 12 + 9 = 21 > 20: waits for session 0's end at 2
        (10, 6, 0, (1, 1), (1, 1)),  # session 0 grew to 14 > 12: max(14, 12) + 6 = 20
        (10, 7, 0, (2, 2), (2, 2)),  # 14 + 7 = 21 either way
        # growth counts the others' held reservation: 12 + (4 + 8) = 24 > 20 waits; + 4 fits
        (0, 4, 8, (1, 1), (1, 2)),
        (0, 4, 4, (1, 1), (1, 1)),
        (0, 0, 0, (1, 1), (1, 1)),  # a reservation of 0 is the units themselves
        (0, 2.5, 0, (1, 1), (1, 1)),
    ],
)
def test_reserve_held_by_hand(g0, r1, g1, plain, held):
    assert _times("", g0, r1, g1) == plain
    assert _times("reserve held;", g0, r1, g1) == held


HELD_EVICTS = """fn main() {
  pool m { cap 10; reserve held; }
  stage svc : delay;
  workload { arrive batch(2); }
  server {
    branch (serial == 1) {
      hold m (cost(m, 4)) { run svc (cost(svc, 1)); } cache (cost(m, 4));
      run svc (cost(svc, 2));
      hold m (cost(m, 2)) { observe hit = cached; run svc (cost(svc, 1)); } cache (cost(m, 4));
    } else {
      run svc (cost(svc, 2));
      hold m (cost(m, 2)) reserve (cost(m, RESERVE)) { run svc (cost(svc, 5)); }
    }
  }
}
"""


@pytest.mark.parametrize(
    ("reserve", "admitted"),
    [
        # Session 1 holds 4 from 0 to 1 and caches 4. Session 0 comes in at 2 with 2 units
        # reserving R. Eviction counts the allocation only: 2 + 4 cached fits 10, so the 4
        # stay even when the reservation would not leave room for them (R = 8: 8 + 4 > 10).
        # At 3 session 1 asks 2: admitted when max(2, R) + 2 fits (R <= 8), else at 7
        # when session 0 leaves; either way it finds its 4.
        (8, 3.0),
        (6, 3.0),
        (0, 3.0),
        (2.5, 3.0),
        (9, 7.0),
        (10, 7.0),
    ],
)
def test_a_held_reservation_evicts_no_cached_prefix(reserve, admitted):
    text = HELD_EVICTS.replace("RESERVE", str(reserve))
    r = serq.run(serq.compile(source=text, horizon=30))
    hit = r.observe("hit")
    assert (list(hit.times), list(hit.samples)) == ([admitted], [4.0])
    assert r.pools[0].evicted_units == 0


# ------------------------------------------------------- preempt by … requeue

PREEMPT = """fn main() {
  pool m { cap 7; preempt by (x) requeue REQUEUE; }
  stage svc : delay;
  workload { arrive batch(4); init { set x = serial; } }
  server {
    hold m (cost(m, serial == 3 ? 5 : 2)) {
      run svc (cost(svc, serial == 1 ? 1 : 3 + 1.7 * serial));
      grow m (cost(m, serial == 1 ? 2 : serial == 0 ? 1 : 0));
      observe g = now;
      run svc (cost(svc, 1));
    }
    observe done = now;
  }
}
"""


def _done(requeue: str) -> tuple[dict[int, float], int]:
    r = serq.run(serq.compile(source=PREEMPT.replace("REQUEUE", requeue), horizon=50))
    done = r.observe("done")
    return dict(zip(done.sessions, done.samples, strict=True)), r.pools[0].preemptions


def test_preempt_by_keys_requeue_head_by_hand():
    # t=0: sessions 0, 1, 2 hold 2 each (6 of 7); session 3 (5) waits. t=1: session 1 grows
    # by 2, 8 > 7: the victim is the smallest x among the holders, session 0 (lifo would
    # take session 2, the newest), requeued at the head, ahead of session 3. t=2: session 1
    # ends (used 2); session 0 comes in (4), session 3 does not fit (9). Session 0 runs 3,
    # grows by 1 at 5 (5 of 7), ends at 6; session 3 comes in at 6, runs 8.1, ends at 15.1;
    # session 2 runs 6.4 and ends at 7.4.
    assert _done("head") == ({1: 2.0, 0: 6.0, 2: 7.4, 3: 15.1}, 1)


def test_preempt_by_keys_requeue_tail_by_hand():
    # The same preemption at t=1, but session 0 goes behind session 3: at t=2 session 3
    # comes in (7 of 7) and session 0 waits until session 2 ends at 7.4. At 10.4 session 0
    # grows, 8 > 7, and has the smallest x of the holders (0 against 3): it preempts
    # itself, goes to the tail, comes straight back in (7 of 7) and runs again; at 13.4 it
    # grows (session 3 left at 11.1) and ends at 14.4.
    assert _done("tail") == ({1: 2.0, 2: 7.4, 3: 11.1, 0: 14.4}, 2)


def test_preempt_by_a_constant_key_is_lifo():
    # ties go to the most recently admitted holder, as `preempt lifo` chooses
    by_one = serq.run(
        serq.compile(source=PREEMPT.replace("(x) requeue REQUEUE", "(1)"), horizon=50)
    )
    lifo = serq.run(
        serq.compile(source=PREEMPT.replace("by (x) requeue REQUEUE", "lifo"), horizon=50)
    )
    assert list(by_one.observe("done").samples) == list(lifo.observe("done").samples)


# ------------------------------------- what a preempted growing run caches (0.1.4)

ARRIVING = """fn main() {
  pool kv { cap 8; evict by (-size); preempt lifo; admit via engine; }
  stage engine : step { budget 8; cost 1; memory kv; }
  stage d : delay;
  workload { arrive batch(2); }
  server {
    run d (cost(d, serial * 2));
    hold kv (cost(kv, serial == 0 ? 4 : 2)) {
      observe hit = cached;
      prefill (serial == 0 ? 4 : 6) growing kv;
      decode (2) growing kv;
    } cache (cost(kv, 10));
    observe done = now;
  }
}
"""


def test_a_run_preempting_itself_as_the_plan_admits_it_caches_its_position():
    # Session 0 holds 4 at 0, prefills 4 (0-1) and decodes 2 (1-3), growing to 5 at 1 and
    # 6 at 2. Session 1 joins the queue at 2; the plan at 2 grows session 0 to 6, admits
    # session 1 (6 + 2 = 8), whose prefill of 6 needs 6 units: 12 > 8, and the newest
    # resident is itself. Its position is the prefix it consumed, 0, so it caches
    # min(10, 0) = 0, not its allocation of 2 (pyserq 0.1.2 cached 2). At 3 session 0 ends
    # (6 cached, evicted by `-size` first) and session 1 comes back with no hit: prefill 3-4,
    # decode 4-6.
    r = serq.run(serq.compile(source=ARRIVING, horizon=30))
    hit = r.observe("hit")
    assert list(zip(hit.sessions, hit.times, hit.samples, strict=True)) == [
        (0, 0.0, 0.0),
        (1, 2.0, 0.0),
        (1, 3.0, 0.0),
    ]
    assert list(r.observe("done").samples) == [3.0, 6.0]
    assert r.pools[0].preemptions == 1


BEYOND = """fn main() {
  pool kv { cap 8; block 1; evict lru; preempt lifo; admit via engine; }
  stage engine : step { budget 8; cost 1; memory kv; }
  workload { arrive batch(2); }
  server {
    branch (serial == 0) {
      hold kv (cost(kv, 4)) { prefill (4) growing kv; decode (2) growing kv; }
    } else {
      hold kv (cost(kv, 2)) { prefill (2) growing kv; } cache (cost(kv, 2));
      hold kv (cost(kv, UNITS)) {
        observe hit = cached;
        observe resumed = computed;
        prefill (4) growing kv;
      } cache (cost(kv, 10));
    }
    observe done = now;
  }
}
"""


@pytest.mark.parametrize(
    ("units", "admitted", "preemptions"),
    [
        # At 1 session 1's first hold ends with 2 cached and its second is admitted in the
        # plan (5 + 1 of 8), consuming the 2: position 2, allocation 1. Its prefill of 4
        # needs 6 units, 5 + 6 > 8: it preempts itself and caches min(10, 2) = 2, more than
        # it held (0.1.2 cached the allocation, 1, and found a hit of 1 next time). The
        # same at 2 (session 0 at 6); at 3 session 0 ends and the hold comes in for good
        # (prefill 3-4): a hit of 2 and computed 2 every time after the first.
        (1, [1.0, 2.0, 3.0], 2),
        # a hold of 0 units holds nothing and still caches its position
        (0, [1.0, 2.0, 3.0], 2),
        # 2.5 units: 5 + 2.5 fits at 1, 6 + 2.5 does not at 2, so it waits for 3
        (2.5, [1.0, 3.0], 1),
    ],
)
def test_a_preempted_run_caches_its_position_beyond_its_allocation(units, admitted, preemptions):
    r = serq.run(serq.compile(source=BEYOND.replace("UNITS", str(units)), horizon=30))
    hit = r.observe("hit")
    assert list(hit.times) == admitted
    assert list(hit.samples) == [2.0] * len(admitted)
    assert list(r.observe("resumed").samples) == [0.0] + [2.0] * (len(admitted) - 1)
    assert list(r.observe("done").samples) == [3.0, 4.0]
    assert r.pools[0].preemptions == preemptions


# ----------------------------------------------------------------- claims

ITERATIONS = """fn main() {
  pool kv { cap 64; block 4; evict lru; preempt lifo; admit via engine; }
  stage engine : step { budget 8; cost 1; memory kv; }
  workload { arrive renewal(3); init { set q = serial; } turn { set p = 6; set o = 3; } hidden o; }
  server {
    hold kv (cost(kv, p)) { prefill (p) growing kv; decode (o) growing kv; } cache (cost(kv, p));
    observe fin = now;
  }
  claim a: every iteration of engine (now < 7);
  claim b: some iteration of engine (now > 7.5);
  claim c given (q < 2): every iteration of engine (now < 100);
  claim d: at end (count(fin) >= 0);
  claim e: some iteration of engine (tokens > 8);
}
"""


def test_iteration_claims_by_hand():
    # Sessions arrive at 3, 6, 9; each takes one prefill iteration (6 of a budget of 8) and
    # three decode iterations, so iterations start at 3, 4, ..., 10 (the horizon): 8.
    r = serq.run(serq.compile(source=ITERATIONS, horizon=10))
    rows = {c.name: c for c in r.claims}
    a, b, c, d, e = (rows[n] for n in "abcde")
    assert (a.result, a.checked, a.failures, a.first) == ("fails", 8, 4, 7)  # 7, 8, 9, 10
    assert (b.result, b.checked, b.failures, b.first) == ("witnessed", 8, 5, 8)
    # session 2 (q = 2) arrives at 9 and fails `given`: the claim stops, after 3 .. 8
    assert (c.result, c.checked, c.note) == ("out_of_scope", 6, "session 2 fails `given`")
    assert (d.result, d.checked, d.note) == ("not_evaluated", 0, "1 session live at the end")
    assert (e.result, e.failures, math.isnan(e.first)) == ("not_witnessed", 8, True)
    assert "claim `a` fails: first at 7 (now = 7), 4 of 8 iterations" in r.notes


def test_an_iteration_claim_reads_the_batch_totals_the_cost_does_not():
    # `cost 1` reads no total, so only the claims make the plan sum them: the prefill of
    # 6 tokens from position 0 has attention 6 * (0 + 6 / 2) = 18 and a hold of 8 units
    # (6 rounded up to blocks of 4); the first decode of that session reads the 8 as
    # kv_decode; the sessions arriving at 6 and 9 prefill beside a decode (mixed batches)
    source = ITERATIONS.replace(
        "claim e: some iteration of engine (tokens > 8);",
        "claim e: some iteration of engine (prefilled == 6 && attention == 18 && kv_prefill == 8);\n"
        "  claim f: some iteration of engine (kv_decode == 8 && decoders == 1 && tokens == 1);\n"
        "  claim g: every iteration of engine (prefilled == 0 || kv_decode == 0);",
    )
    r = serq.run(serq.compile(source=source, horizon=10))
    rows = {c.name: c for c in r.claims}
    assert (rows["e"].result, rows["e"].first) == ("witnessed", 3)
    assert (rows["f"].result, rows["f"].first) == ("witnessed", 4)
    assert (rows["g"].result, rows["g"].failures, rows["g"].first) == ("fails", 2, 6)


def test_claims_in_the_json_are_the_reference_s_keys():
    r = serq.run(serq.compile(source=ITERATIONS, horizon=10))
    import json

    claims = json.loads(r.json())["claims"]
    assert list(claims[0]) == ["name", "kind", "result", "checked", "failures", "first", "note"]
    assert claims[4]["first"] is None and claims[0]["kind"] == "every_iteration"


WARNED = """fn main() {{
  pool kv {{ cap 64; block 4; evict lru; preempt lifo; admit via engine; }}
  stage engine : step {{ budget 8; cost 1; memory kv; }}
  stage svc : delay;
  workload {{ arrive batch(3); turn {{ set p = 4; set o = {o}; }} hidden o; }}
  server {{
    run svc (cost(svc, {draw}));
    hold kv (cost(kv, p)) {{ prefill (p) growing kv; decode (o) growing kv; }}
    observe fin = now;
  }}
  claim few: at end (count(fin) <= 2);
  claim small: every iteration of engine (tokens <= 2);
}}
"""


@pytest.mark.parametrize(
    "o, draw, code, few",
    [
        ("2", "~h2(1, 0.5)", "W-draw", "fails"),  # an h2 draw with a cv2 below 1: a warning
        ("inf", "serial", "W-stall", "not_evaluated"),  # a decode of inf: a warning
    ],
)
def test_a_run_with_warnings_reports_its_claims(o, draw, code, few):
    # The claims were left out of the report of a run that warned (they were taken only
    # when the run said nothing at all): mutant m307 of round 14, `decode (o - (-inf))`
    # in examples/vocabulary/engine_preempt_requeue.sq, whose claims pyserq 0.1.4 reports
    compiled, _ = sim_api.compile_program(WARNED.format(o=o, draw=draw), "<warned>", horizon=50)
    r, diagnostics = sim_api.execute(compiled)
    assert code in {d.code for d in diagnostics}
    rows = {c.name: c for c in r.claims}
    assert (rows["few"].result, rows["small"].result) == (few, "fails")
    assert rows["small"].values == (("tokens", 4.0),)  # a prefill of 4 tokens


AGGREGATES = """fn main() {{
  stage svc : delay;
  workload {{ arrive batch(5); init {{ set x = {x}; }} }}
  server {{ run svc (cost(svc, serial)); observe x = x; }}
  claim t: at end (total(x) == {total});
  claim n: at end (count(x) == {count});
  claim l: at end (largest(x) == {largest});
  claim p: at end (prefix_total(x) == {prefix});
}}
"""


@pytest.mark.parametrize(
    ("x", "total", "count", "largest", "prefix"),
    [
        # 1, 2, 4, 8, 16: prefix_total sums the prefix sums of the samples, smallest first:
        # 1 + 3 + 7 + 15 + 31 = 57
        ("pow(2, serial)", 31, 5, 16, 57),
        # 3, 3, -5, 3, 3, smallest first -5, 3, 3, 3, 3: -5 - 2 + 1 + 4 + 7 = 5
        ("serial == 2 ? -5 : 3", 7, 5, 3, 5),
        ("0.5", 2.5, 5, 0.5, 7.5),  # 0.5 * (1 + 2 + 3 + 4 + 5)
        ("-serial", -10, 5, 0, -40),  # -4, -3, -2, -1, 0: -4 - 7 - 9 - 10 - 10
    ],
)
@pytest.mark.parametrize("codegen", [True, False])
def test_aggregates_by_hand(x, total, count, largest, prefix, codegen):
    """On both paths: the generated code hands a claim's samples over inline."""
    text = AGGREGATES.format(x=x, total=total, count=count, largest=largest, prefix=prefix)
    program = serq.compile(source=text, horizon=20, warmup=2)
    r = serq.run(program, codegen=codegen)  # the warm-up's samples count too
    assert {c.name: c.result for c in r.claims} == dict.fromkeys("tnlp", "holds")


def test_largest_of_no_samples_is_zero():
    text = AGGREGATES.format(x="1", total=5, count=5, largest=1, prefix=15).replace(
        "observe x = x;", "branch (x > 9) { observe x = x; }"
    )
    text = text.replace("== 5)", "== 0)").replace("== 1)", "== 0)").replace("== 15)", "== 0)")
    r = serq.run(serq.compile(source=text, horizon=20))
    assert {c.name: c.result for c in r.claims} == dict.fromkeys("tnlp", "holds")


# ---------------------------------------------------------- program arguments

ARGS = """use "std/args";
fn main() {
  let n = args.number("sessions", 2);
  def service(k) { 1 + k }
  stage svc : delay;
  workload { arrive batch(n); }
  server { run svc (cost(svc, service(serial))); observe t = now; }
}
"""


def test_arguments_and_defs():
    r = serq.run(serq.compile(source=ARGS, horizon=50))
    assert list(r.observe("t").samples) == [1.0, 2.0]  # the default: 2 sessions
    r = serq.run(serq.compile(source=ARGS, horizon=50, sets={"sessions": 3}))
    assert list(r.observe("t").samples) == [1.0, 2.0, 3.0]
    r = serq.run(
        serq.compile(
            source=ARGS, horizon=50, sets={"sessions": "1 + 1"}, defs={"service": "2 * k + 0.5"}
        )
    )
    assert list(r.observe("t").samples) == [0.5, 2.5]


@pytest.mark.parametrize(
    ("sets", "defs", "message"),
    [
        ({"session": 3}, {}, "did you mean `sessions`?"),
        ({"nope": 1}, {}, "unknown `sets` argument or constant `nope`"),
        ({}, {"servce": "1"}, "did you mean `service`?"),
        ({}, {"service": "k +"}, "expected"),
    ],
)
def test_bad_overrides_are_reported(sets, defs, message):
    with pytest.raises(ValueError) as raised:
        serq.compile(source=ARGS, horizon=50, sets=sets, defs=defs)
    assert message in str(raised.value)


def test_args_number_needs_use_std_args():
    with pytest.raises(ValueError) as raised:
        serq.compile(source=ARGS.replace('use "std/args";\n', ""), horizon=50)
    assert '`args.number` needs `use "std/args";`' in str(raised.value)
