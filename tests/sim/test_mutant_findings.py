"""Programs the differential mutation search (tests/oracle/mutants.py) found, each reduced
to what it needs, with what serq must answer on both of its event paths (tests/sim/NOTES.md
§22 has the round)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from serq.sim.api import compile_program, execute

# `choose j in 8` over an array of 4: the keys of j = 4 .. 7 name no member. The compiled
# path wrote `s[j]` out with j a constant and subscripted the program's whole list of
# stages (an IndexError, E-internal; with more stages declared, another stage's member);
# the interpreter reports the index. pyserq 0.1.2 refuses it too ("index 7 out of range").
CHOOSE_PAST_THE_ARRAY = """\
stage s[4] : fifo(1);
stage other : delay;
workload { arrive batch(2); }
session {
  choose j in 8 by (queue(s[j]) + busy(s[j]));
  run s[j] (1);
}
run { horizon 10; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_a_choose_past_its_array_is_an_index_error_at_the_key(codegen):
    compiled, diagnostics = compile_program(CHOOSE_PAST_THE_ARRAY, "choose.sq")
    assert compiled is not None, diagnostics
    report, diagnostics = execute(compiled, codegen=codegen)
    assert report is None
    (error,) = [d for d in diagnostics if d.severity.name == "ERROR"]
    assert error.code == "E-run"
    assert error.message == "index 4 is out of range: the array has 4 members, 0 .. 3"
    at = CHOOSE_PAST_THE_ARRAY[error.span.start : error.span.end]
    assert at == "s[j]" and error.span.line == 5


# A decode of inf tokens beside one of 30 on a step engine (a mutant of b_attention.sq
# wrote a prefill of inf). The check that an iteration's tokens change a run's remaining
# work (NOTES §11: a budget of 1e-300 against 100 tokens "rounds away") stopped the run
# with E-run at the first iteration, where pyserq 0.1.2 runs it to the horizon as it runs
# a job of inf work at a fifo stage. Now an infinite run takes its tokens every iteration
# and never ends, as one of 1e9 tokens would within this horizon: the same report as 1e9
# and as the reference, on every path.
INFINITE_DECODE = """\
pool kv { cap 64; block 4; preempt lifo; }
stage E : step { budget 16; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (4) {
    run E prefill (4) growing kv;
    run E decode (serial == 0 ? LENGTH : 30) growing kv;
  }
  observe done = now;
}
run { horizon 200; }
"""


def _report(text: str, **options):
    compiled, diagnostics = compile_program(text, "inf.sq")
    assert compiled is not None, diagnostics
    report, diagnostics = execute(compiled, check_invariants=True, **options)
    assert report is not None, [d.message for d in diagnostics]
    whole = json.loads(report.json())
    own = ("events", "skipped", "serq_version")  # the fast-forward's own counts
    return {k: v for k, v in whole.items() if k not in own}, report


@pytest.mark.parametrize("fast_forward", [True, False])
@pytest.mark.parametrize("codegen", [True, False])
def test_an_infinite_decode_runs_to_the_horizon(codegen, fast_forward):
    options = {"codegen": codegen, "fast_forward": fast_forward}
    infinite, report = _report(INFINITE_DECODE.replace("LENGTH", "inf"), **options)
    finite, _ = _report(INFINITE_DECODE.replace("LENGTH", "1e9"), **options)
    assert infinite == finite
    # session 0 grows until it preempts session 1, and itself, again and again: neither ends
    assert report.ended == 0 and report.pools[0].preemptions > 0
    compiled, _ = compile_program(INFINITE_DECODE.replace("LENGTH", "inf"), "inf.sq")
    _, diagnostics = execute(compiled, **options)
    # a job of infinite work, as at any stage (endless.py), and the livelock it then is:
    # session 0, alone at the pool, grows past its cap and preempts itself (NOTES §32)
    warning, livelock = diagnostics
    assert warning.code == "W-stall" and warning.message.startswith(
        "stage `E` has served session 0's job of infinite work since t = "
    )
    assert livelock.code == "W-stall" and livelock.message.startswith("a livelock at pool `kv`")


@pytest.mark.parametrize("fast_forward", [True, False])
@pytest.mark.parametrize("codegen", [True, False])
def test_an_infinite_run_at_iterations_of_no_time_stops_at_once(codegen, fast_forward):
    """At cost 0 the iterations of a run of inf tokens repeat at one instant for ever: the
    plan says so at the stage, where the core's count of events at one instant would
    take ten million of them (and name the arrivals)."""
    text = INFINITE_DECODE.replace("LENGTH", "inf").replace("cost 1;", "cost 0;")
    compiled, diagnostics = compile_program(text, "inf.sq")
    assert compiled is not None, diagnostics
    report, diagnostics = execute(compiled, codegen=codegen, fast_forward=fast_forward)
    assert report is None
    (error,) = diagnostics
    assert error.code == "E-run" and error.span.line == 2
    assert error.message == (
        "stage E can make no progress: an iteration gives session 0 1.0 tokens of the inf "
        "its decode has left and costs 0: the run never ends and the clock never moves"
    )


def test_an_infinite_decode_agrees_with_the_reference(same_as_reference):
    same_as_reference(INFINITE_DECODE.replace("LENGTH", "inf"), "inf.sq")


# tests/sim/programs/det_flow.sq with its uplink at ps(inf) (and, in the second program,
# its links too). The spec asks a flow's stages for "ps(φ) with a constant φ above 0",
# which inf is; serq refused it with E-run, pyserq 0.1.2 runs it. A stage of inf capacity
# never fills: the flows over it and a link take the link's share, and one over inf
# stages alone has rate inf and ends at once. Each stage's utilisation is the rate its
# flows carry over φ, 0 at φ = inf, where the reference reports null (NaN).
FLOW_OVER_INF = """\
stage up : ps(inf);
stage link[2] : ps(LINK);
stage gate : delay;
share SHARE;
workload { arrive batch(6); }
session {
  run gate (serial);
  set t0 = now;
  set i = serial - 2 * floor(serial / 2);
  run up, link[i] (2 + serial);
  observe transfer = now - t0;
  run up (1);
  observe total = now - t0;
}
run { horizon 40; }
"""


@pytest.mark.parametrize("share", ["maxmin", "bottleneck"])
@pytest.mark.parametrize("link", ["2", "inf"])
def test_a_flow_over_a_stage_of_inf_capacity(link, share, tmp_path):
    path = tmp_path / "flow.sq"
    path.write_text(FLOW_OVER_INF.replace("LINK", link).replace("SHARE", share))
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
    import differential  # noqa: PLC0415

    assert differential.paths(str(path)) == ("same", "")
    mine = differential.ours(str(path), full=True)["ok"]
    if link == "2":  # the uplink never limits: each transfer at its link's share, then at once
        assert mine["samples"]["transfer"][1] == [1.0, 1.5, 2.0, 3.0, 3.0, 4.0]
        assert mine["samples"]["total"][1] == mine["samples"]["transfer"][1]
    else:
        assert mine["samples"]["total"][1] == [0.0] * 6
    assert mine["stages"][0]["utilization"] == 0
    pytest.importorskip("pyserq")
    theirs = differential.reference(str(path), full=True)["ok"]
    found = differential.report_differences(mine, theirs)
    inf_stages = 1 if link == "2" else 3
    assert found == [
        f".stages[{k}].utilization: serq 0 | reference None" for k in range(inf_stages)
    ]


# A growth of 1e-9 units in a full pool: pyserq 0.1.2 takes anything within 1e-9 of the
# cap as fitting, and both sessions hold 2 + 1e-9 of a cap of 4 (used 4.000000002); serq
# keeps allocated + cached <= cap exactly (spec §3, Pools), so session 1, the newest
# holder, is preempted, re-runs its hold and ends at 4 (NOTES §22).
GROW_PAST_THE_CAP = """\
pool m { cap 4; preempt lifo; }
stage s : delay;
workload { arrive batch(2); }
session {
  hold m (2) { run s (1); grow m (1e-9); run s (1); observe u = used(m); }
  observe t = now;
}
run { horizon 10; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_a_growth_past_the_cap_by_1e_9_does_not_fit(codegen):
    compiled, diagnostics = compile_program(GROW_PAST_THE_CAP, "grow.sq")
    assert compiled is not None, diagnostics
    report, diagnostics = execute(compiled, codegen=codegen, check_invariants=True)
    assert report is not None, [d.message for d in diagnostics]
    assert list(report.observe("t").samples) == [2.0, 4.0]
    assert list(report.observe("u").samples) == [2.000000001, 2.000000001]
    assert report.pools[0].preemptions == 1


def test_the_reference_fits_within_1e_9(tmp_path):
    pytest.importorskip("pyserq")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
    import differential  # noqa: PLC0415

    path = tmp_path / "grow.sq"
    path.write_text(GROW_PAST_THE_CAP)
    theirs = differential.reference(str(path), full=True)["ok"]
    assert theirs["samples"]["t"][1] == [2.0, 3.0]  # nobody preempted
    assert max(theirs["samples"]["u"][1]) == 4.000000001
    path.write_text(GROW_PAST_THE_CAP.replace("1e-9", "1.1e-9"))
    assert differential.compare(str(path), full=True) == ("same", "")


# The order a step engine serves its residents in when some hold no part of its memory
# (tests/corpus/valid/run_statements.sq at a budget of 0.5, found in distribution). Spec
# §3 serves them "by the session's latest admission" (NOTES §10 L), to any pool; serq put
# every resident that did not hold the memory after every one that did, so a session
# coming back for an unheld prefill after its hold ended waited behind all the holders
# (with arrivals every second, none ever ended in 20 s; 0.1.2 ended 14). Session 0 holds
# kv; session 1 was never admitted; session 2 holds another pool, admitted after 0: 0.1.2
# serves 0, then 2 (by its admission), then 1 (never admitted: after every admitted one).
SERVE_ORDER_WITHOUT_THE_MEMORY = """\
pool kv { cap 4096; block 16; preempt lifo; }
pool other { cap 10; }
stage engine : step { budget 0.5; cost 0.01; memory kv; }
stage gap : delay;
workload { arrive batch(3); }
session {
  run gap (serial * 0.1);
  branch (serial == 0) {
    hold kv (16) { run engine prefill (40) growing kv; observe p = now; }
  } else { branch (serial == 1) {
    run engine prefill (8); observe q = now;
  } else {
    hold other (1) { run engine prefill (8); observe r = now; }
  } }
}
run { horizon 20; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_residents_without_the_memory_are_served_by_their_latest_admission(codegen):
    compiled, diagnostics = compile_program(SERVE_ORDER_WITHOUT_THE_MEMORY, "order.sq")
    assert compiled is not None, diagnostics
    report, diagnostics = execute(compiled, codegen=codegen)
    assert report is not None, [d.message for d in diagnostics]
    at = {name: round(report.observe(name).times[0], 9) for name in ("p", "q", "r")}
    assert at == {"p": 0.8, "r": 0.96, "q": 1.12}  # iterations of 0.01 added up


def test_the_serve_order_without_the_memory_is_the_references(tmp_path):
    pytest.importorskip("pyserq")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
    import differential  # noqa: PLC0415

    path = tmp_path / "order.sq"
    path.write_text(SERVE_ORDER_WITHOUT_THE_MEMORY)
    assert differential.compare(str(path), full=True) == ("same", "")
    # the program of the finding, with arrivals every second instead of Poisson's
    text = (Path(__file__).resolve().parents[1] / "corpus/valid/run_statements.sq").read_text()
    text = text.replace("budget 64;", "budget 0.5;").replace("poisson(1)", "renewal(1)")
    assert "budget 0.5;" in text and "renewal(1)" in text
    path.write_text(text)
    assert differential.compare(str(path), full=True, horizon=20.0) == ("same", "")


# Hand-written in the seventh round (tests/sim/NOTES.md §24). A pool that spills into
# itself, or two tiers that spill into each other: the first eviction wrote the prefix
# into a tier that evicted back into the first without end, and Python's stack overflowed
# on both paths (E-internal); pyserq 0.1.2 hangs. The cycle is a link error at the spill.
SPILL_CYCLES = {
    "itself": "pool t { cap 4; evict lru; spill t via p (size) when (1); }",
    "two": "pool t { cap 4; evict lru; spill u via p (size) when (1); }\n"
    "pool u { cap 4; evict lru; spill t via p (size) when (1); }",
    "three": "pool t { cap 4; evict lru; spill u via p (size) when (1); }\n"
    "pool u { cap 4; evict lru; spill w via p (size) when (1); }\n"
    "pool w { cap 4; evict lru; spill u via p (size) when (1); }",
}
SPILL_BASE = """\
stage s : fifo(1);
stage p : ps(1);
POOLS
workload { arrive renewal(0.5); }
session { hold t (3) { run s (0.1); } cache (3); hold t (4) { run s (0.1); } cache (4); }
run { horizon 10; }
"""


@pytest.mark.parametrize("cycle", sorted(SPILL_CYCLES))
def test_spill_tiers_in_a_cycle_are_a_link_error(cycle):
    text = SPILL_BASE.replace("POOLS", SPILL_CYCLES[cycle])
    compiled, diagnostics = compile_program(text, "spill.sq")
    assert compiled is None
    (error,) = diagnostics
    assert error.code == "E-structure"
    assert error.message.startswith("the spill tiers form a cycle: ")
    assert text[error.span.start : error.span.end].startswith("spill ")


@pytest.mark.parametrize("codegen", [True, False])
def test_a_spill_hierarchy_still_runs(codegen):
    text = SPILL_BASE.replace(
        "POOLS",
        "pool t { cap 4; evict lru; spill u via p (size) when (1); }\n"
        "pool u { cap 4; evict lru; spill w via p (size) when (1); }\n"
        "pool w { cap 2; evict lru; }",
    )
    compiled, diagnostics = compile_program(text, "spill.sq")
    assert compiled is not None, diagnostics
    report, diagnostics = execute(compiled, codegen=codegen)
    assert report is not None, diagnostics
    assert json.loads(report.json())["pools"][0]["evicted_entries"] > 0


# `budget_left` of a stage that is not a step engine: both paths failed in the run with
# E-internal (an AttributeError: a fifo stage has no budget); pyserq 0.1.2 refuses it at
# link ("budget_left needs a step stage"). A link error at the stage's name now.
@pytest.mark.parametrize("kind", ["fifo(1)", "ps(1)", "delay"])
def test_budget_left_of_a_stage_without_a_budget_does_not_link(kind):
    text = f"""stage s : {kind};
workload {{ arrive renewal(0.5); }}
session {{ run s (0.1); observe b = budget_left(s); }}
run {{ horizon 10; }}
"""
    compiled, diagnostics = compile_program(text, "budget.sq")
    assert compiled is None
    (error,) = diagnostics
    assert error.code == "E-wrong-kind"
    assert "has no budget" in error.message
    assert text[error.span.start : error.span.end] == "s"


# Written by hand in the eighth round (tests/sim/NOTES.md §25). `admit via S` of a stage
# with no scheduler: the queue was handed to a fifo, ps or delay stage, which never
# admits, so every session waited at 0 (serq stopped with E-run, blaming a step engine's
# plan there is none of; pyserq 0.1.2 ran to the horizon with nothing moving). And a
# spill via a step engine: the spill's write is a job of seconds, which a step engine
# cannot run (both serq paths failed with E-internal, an AttributeError; 0.1.2 panics).
# Both are link errors at the stage's name now.
@pytest.mark.parametrize("kind", ["fifo(1)", "ps(1)", "delay"])
def test_admit_via_a_stage_without_a_scheduler_does_not_link(kind):
    text = f"""pool kv {{ cap 10; admit via s; }}
stage s : {kind};
workload {{ arrive batch(2); }}
session {{ hold kv (1) {{ run s (1); }} }}
run {{ horizon 20; }}
"""
    compiled, diagnostics = compile_program(text, "admit.sq")
    assert compiled is None
    (error,) = diagnostics
    assert error.code == "E-wrong-kind"
    assert "no scheduler to admit a queue" in error.message
    assert text[error.span.start : error.span.end] == "s"


def test_a_spill_via_a_step_engine_does_not_link():
    text = """pool kv { cap 10; spill t via e (1) when (1); evict lru; }
pool t { cap 10; }
stage e : step { budget 4; cost 1; }
stage s : fifo(1);
workload { arrive batch(2); }
session { hold kv (6) { run s (1); } cache (6); }
run { horizon 20; }
"""
    compiled, diagnostics = compile_program(text, "spill.sq")
    assert compiled is None
    (error,) = diagnostics
    assert error.code == "E-wrong-kind"
    assert "a spill goes via a fifo, ps or delay stage" in error.message
    assert text[error.span.start : error.span.end] == "e"


# A run at a step engine growing a pool no hold around it holds: the E-run pointed at
# the engine's declaration, on both paths; it points at the run now.
@pytest.mark.parametrize("codegen", [True, False])
def test_a_run_growing_outside_its_hold_is_reported_at_the_run(codegen):
    text = """stage e : step { budget 4; cost 1; }
pool m { cap 10; }
pool r { cap 2; }
workload { arrive batch(2); }
session { hold m (1) { run e prefill (2) growing r; } }
run { horizon 20; }
"""
    compiled, _ = compile_program(text, "growing.sq")
    assert compiled is not None
    report, diagnostics = execute(compiled, codegen=codegen)
    assert report is None
    (error,) = diagnostics
    assert error.code == "E-run"
    assert error.message == "a run growing `r` outside its hold"
    assert text[error.span.start : error.span.end].startswith("run e prefill (2) growing r")


# The warm-up is a measurement setting, not an event (tests/sim/NOTES.md §25, spec against
# pyserq 0.1.2). A step engine's plan preempts the only resident at 1 (its growth can
# never fit), and the pools are not retried after a plan, so the session is admitted
# again at 2, after the next (empty) iteration. pyserq 0.1.2 with a warm-up of 1.5 admits
# it at 1.5 instead: its warm-up is an event, whose settle retries the pools. serq admits
# it at 2 whatever the warm-up.
WARMUP_PROGRAM = """pool kv { cap 16.5; block 16; evict lru; preempt lifo; }
stage prefill : step { budget 8.5; cost 1; memory kv; }
stage tool : delay;
workload { arrive batch(2); }
session {
  run tool (serial);
  hold kv (8) {
    observe adm = serial;
    run prefill prefill (200 - 100 * serial) growing kv;
  }
}
run { horizon 4; seed 1; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_the_warm_up_changes_no_admission(codegen):
    times = {}
    for warmup in (0.0, 1.25, 1.5, 3.5):
        compiled, diagnostics = compile_program(WARMUP_PROGRAM, "w.sq", warmup=warmup)
        assert compiled is not None, diagnostics
        report, ran = execute(compiled, codegen=codegen)
        assert report is not None, ran
        times[warmup] = list(report.observe("adm").times)
    assert times[0.0] == [0.0, 2.0, 4.0]
    for warmup, seen in times.items():
        assert seen == [t for t in times[0.0] if t >= warmup]


# Two `workload` items: serq ran their clauses as one (the second `arrive` replacing the
# first); pyserq 0.1.2 and 0.1.4 refuse the second ("duplicate workload"). E-structure
# at the second now, as for a second session or server.
@pytest.mark.parametrize(
    "text",
    [
        "stage s : fifo(1);\nworkload { arrive renewal(1); }\nworkload { arrive batch(2); }\n"
        "session { run s (0.5); }\nrun { horizon 10; }\n",
        "fn main() {\n  stage s : fifo(1);\n  workload { arrive renewal(1); }\n"
        "  workload { turn { set w = 1; } }\n  server { run s (cost(s, 0.5)); }\n}\n",
    ],
    ids=["items", "fn-main"],
)
def test_a_second_workload_does_not_link(text):
    compiled, diagnostics = compile_program(text, "w.sq", horizon=10)
    assert compiled is None
    (error,) = diagnostics
    assert error.code == "E-structure"
    assert error.message.startswith("a second `workload`: a program has one")
    assert text[error.span.start : error.span.end].startswith("workload {")
    assert error.span.start > text.index("workload")


# A job whose end passes the float range (a work of 1e300 at ps(1e-300), alone or in a
# flow through such a stage) leaves no event: the stall said only "(2 live)". It names
# the stages now, and why. pyserq 0.1.2 runs to the horizon with nothing moving.
@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize(
    "stages, run, where",
    [
        ("stage a : ps(1e-300);", "run a (1e300);", "at stage `a`,"),
        (
            "stage a : ps(1);\nstage b : ps(1e-300);\nshare maxmin;",
            "run a, b (1e300);",
            "at stages `a`, `b`,",
        ),
    ],
    ids=["ps", "flow"],
)
def test_a_stall_at_jobs_ending_past_the_float_range_names_the_stages(stages, run, where, codegen):
    text = f"""{stages}
workload {{ arrive batch(2); }}
session {{ {run} observe t = now; }}
run {{ horizon 20; }}
"""
    compiled, _ = compile_program(text, "far.sq")
    assert compiled is not None
    report, diagnostics = execute(compiled, codegen=codegen)
    assert report is None
    (error,) = diagnostics
    assert error.code == "E-run"
    assert error.message == (
        "the run stalls at 0: no event is pending and 2 sessions wait for ever (2 live, "
        f"{where} whose jobs would end past the float range (their work over their rate is "
        "inf)); nothing that could free them will happen"
    )
