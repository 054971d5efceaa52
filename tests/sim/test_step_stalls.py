"""Every way a step engine can stop moving ends in a diagnostic, never in silence (issue 16).

An engine stops when its plans schedule no token and preempt nobody. With no event left
to change that, the run fails with `E-run` at the stage, saying what the stage holds and
why nothing can be scheduled; when other events go on (arrivals), the run reaches its
horizon and `W-stall` says from when the engine stood still. An iteration whose tokens
round away (a chunk or budget too small for the run's work) makes no progress and fails
at once. A chunk at or below 0 is no cap (vLLM's long_prefill_token_threshold 0), which
used to be the commonest stall of all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.diagnostics import Severity
from serq.sim.api import compile_program, execute
from tests.sim.both_paths import runs_on_every_path

pyserq = pytest.importorskip("pyserq")

HERE = Path(__file__).resolve().parent / "programs"

# One request of 100 prompt tokens and 10 outputs on a one-request vLLM engine, step clock.
ENGINE = """
let bs = 16;
let CHUNK = 24;
pool reqs {{ cap 4; admit via engine; }}
pool kv {{ cap 40 * bs; block bs; evict lru; preempt lifo; }}
stage engine : step {{ budget {budget}; cost 1; {chunk} memory kv; }}
workload {{ {arrive} }}
session {{
  set prompt = 100;
  hold reqs (1), kv (min(prompt, budget_left(engine))) {{
    run engine prefill (prompt) growing kv;
    observe first = now;
    run engine decode (9) growing kv;
  }}
  observe last = now;
}}
run {{ horizon 500; warmup 0; seed 1; }}
"""


def program(
    tmp_path: Path,
    budget: str = "64",
    chunk: str | None = "CHUNK",
    arrive: str = "arrive batch(1);",
    **lets: str,
) -> Path:
    text = ENGINE.format(
        budget=budget, chunk="" if chunk is None else f"chunk {chunk};", arrive=arrive
    )
    for name, value in lets.items():
        text = text.replace(f"let {name} = 24;", f"let {name} = {value};")
    path = tmp_path / "engine.sq"
    path.write_text(text)
    return path


def run(path: Path, **settings):
    compiled, diagnostics = compile_program(path.read_text(), str(path), **settings)
    assert compiled is not None, [d.message for d in diagnostics]
    return execute(compiled)


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def times(report, name: str) -> list[float]:
    return list(report.observe(name).times)


@pytest.mark.parametrize("value", ["0", "-1", "-inf", "-0.5", "0 * CHUNK"])
def test_a_chunk_at_or_below_zero_is_no_cap(tmp_path, value):
    """The prefill takes the whole budget, as without a chunk clause: 100 tokens at 64 a
    step is two steps (first token at 2), then 9 decode steps (last at 11); pyserq 0.1.2
    agrees on each value."""
    path = program(tmp_path, chunk=value)
    report, diagnostics = run(path)
    assert report is not None, [d.message for d in diagnostics]
    assert (times(report, "first"), times(report, "last")) == ([2.0], [11.0])
    theirs = pyserq.run(pyserq.compile(str(path)))
    assert (list(theirs.observe("first").times), list(theirs.observe("last").times)) == (
        [2.0],
        [11.0],
    )
    none, _ = run(program(tmp_path, chunk=None))
    assert times(none, "last") == [11.0]


def test_a_positive_chunk_below_one_token_is_a_cap(tmp_path):
    """0.5 caps the prefill at half a token a step: 200 steps to the first token, as the
    reference has it."""
    report, _ = run(program(tmp_path, chunk="0.5"))
    assert (times(report, "first"), times(report, "last")) == ([200.0], [209.0])


@pytest.mark.parametrize(
    "budget, chunk, limit",
    [("64", "1e-300", "chunk"), ("1e-300", None, "budget"), ("1e-300", "0", "budget")],
)
def test_tokens_that_round_away_make_no_progress_and_fail_at_the_stage(
    tmp_path, budget, chunk, limit
):
    """1e-300 tokens taken from 100 leave 100: the engine would iterate to the horizon
    doing nothing (pyserq 0.1.2 runs 2,001 such iterations in silence). It fails at the
    first such iteration, at the stage, naming the session, the tokens and the limit."""
    path = program(tmp_path, budget=budget, chunk=chunk)
    report, diagnostics = run(path)
    assert report is None
    (d,) = diagnostics
    assert d.code == "E-run"
    assert d.span.line == line_of(path, "stage engine")
    assert d.message == (
        "stage engine can make no progress: an iteration gives session 0 1e-300 tokens of the "
        f"100 its prefill has left, which rounds away (the {limit} is too small for the "
        "run's work)"
    )


# Two requests on an engine whose budget is 1/3 of a token: the first's last third is
# 0.33333333333333326 after twelve steps, and the 3.3e-16 of the budget it leaves is the
# second's share of that step (tests/sim/NOTES.md §57).
REMNANT = """
pool kv { cap 1000; block 1; preempt lifo; }
stage engine : step { budget 1 / 3; cost 1; memory kv; }
workload { arrive batch(2); }
session {
  hold kv (1) {
    run engine prefill (serial == 0 ? 4 : 60) growing kv;
  }
  observe done = now;
}
run { horizon 400; }
"""


def test_the_remnant_of_a_budget_another_run_left_is_not_a_stall(tmp_path):
    """The second request's share of the step where the first ends rounds away (60 less
    3.3e-16 is 60), but the first moved in that step: the engine is not stuck, and the
    second takes the whole third from the next step on (done at 192, as pyserq 0.1.2 has
    it), on every path; it failed with "can make no progress" at 12."""
    path = tmp_path / "remnant.sq"
    path.write_text(REMNANT)
    for report, diagnostics in runs_on_every_path(REMNANT):
        assert times(report, "done") == [12.0, 192.0], [d.message for d in diagnostics]
    theirs = pyserq.run(pyserq.compile(str(path)))
    assert list(theirs.observe("done").times) == [12.0, 192.0]


def test_tokens_that_round_away_in_a_step_where_nothing_moves_still_fail(tmp_path):
    """The same remnant where no run moves fails as before: 1e-300 of a budget left to a
    run whose prefill is 60 tokens, the only run."""
    path = tmp_path / "alone.sq"
    path.write_text(REMNANT.replace("1 / 3", "1e-300").replace("batch(2)", "batch(1)"))
    report, diagnostics = run(path)
    assert report is None
    assert [d.message for d in diagnostics] == [
        "stage engine can make no progress: an iteration gives session 0 1e-300 tokens of "
        "the 4 its prefill has left, which rounds away (the budget is too small for the "
        "run's work)"
    ]


def test_a_chunk_that_rounds_away_fails_beside_a_run_that_moves(tmp_path):
    """A chunk of 1e-300 gives the prefill the same nothing at every iteration, whatever
    the decode beside it does: it fails at the first such iteration, as alone."""
    text = REMNANT.replace("budget 1 / 3;", "budget 64; chunk 1e-300;").replace(
        "run engine prefill (serial == 0 ? 4 : 60) growing kv;",
        "run engine decode (serial == 0 ? 50 : 0) growing kv;\n"
        "    run engine prefill (serial == 0 ? 0 : 60) growing kv;",
    )
    path = tmp_path / "chunk.sq"
    path.write_text(text)
    report, diagnostics = run(path)
    assert report is None
    assert [d.message for d in diagnostics] == [
        "stage engine can make no progress: an iteration gives session 1 1e-300 tokens of "
        "the 60 its prefill has left, which rounds away (the chunk is too small for the "
        "run's work)"
    ]
    assert list(diagnostics[0].notes) == ["at simulated time 1"]  # not 50, once alone


# Two requests whose run of WORK tokens is more than a float counts down token by token.
ENDLESS = """pool kv { cap 1e9; block 16; }
stage engine : step { budget 64; cost COST; CHUNK memory kv; }
workload { arrive batch(2); }
session {
  hold kv (1) {
    run engine prefill (PREFILL) growing kv;
    observe first = now;
    run engine decode (DECODE) growing kv;
  }
  observe done = now;
}
run { horizon 5; }
"""


def endless(cost="0.01", chunk="", prefill="10", decode="3") -> str:
    text = ENDLESS.replace("COST", cost).replace("CHUNK", chunk)
    return text.replace("PREFILL", prefill).replace("DECODE", decode)


@pytest.mark.parametrize(
    "kind",
    [
        dict(decode="1e17"),
        dict(decode="1e300"),
        dict(prefill="1e300"),
        dict(prefill="1e300", chunk="chunk 16;"),
        dict(decode="serial == 0 ? 1e300 : 20"),
    ],
    ids=["decode-1e17", "decode-1e300", "prefill-1e300", "prefill-1e300-chunk", "beside-one"],
)
def test_a_run_whose_whole_tokens_round_away_runs_to_the_horizon(tmp_path, kind):
    """A decode of 1e17 tokens takes one a step, and 1e17 less 1 is 1e17: its work is past
    2**53 tokens, where a float no longer counts single tokens, and it could not end before
    2**53 steps. It takes its tokens at every step to the horizon, as a run of inf work
    does and as pyserq 0.1.2 runs it; it failed with "can make no progress ... the budget
    is too small for the run's work" (a prefill of 1e300 so, and under `chunk 16` it blamed
    the chunk), where a prefill of 1e17, whose 64 tokens do not round away, ran."""
    text = endless(**kind)
    path = tmp_path / "endless.sq"
    path.write_text(text)
    theirs = pyserq.run(pyserq.compile(str(path)))
    for report, diagnostics in runs_on_every_path(text):
        assert not diagnostics, [d.message for d in diagnostics]
        assert report.ended == theirs.ended
        assert times(report, "first") == list(theirs.observe("first").times)
        assert times(report, "done") == list(theirs.observe("done").times)
        assert report.stages[0].iterations == theirs.stages[0].iterations


def test_a_run_that_never_ends_at_steps_of_cost_0_fails_at_once(tmp_path):
    """The same decode of 1e300 tokens at steps that cost 0 never ends and the clock never
    moves: the run fails at the first step, as a decode of inf does."""
    for decode in ("1e300", "inf"):
        path = tmp_path / "endless0.sq"
        path.write_text(endless(cost="0", decode=decode))
        report, diagnostics = run(path)
        assert report is None
        assert [d.message for d in diagnostics] == [
            f"stage engine can make no progress: an iteration gives session 0 1.0 tokens of "
            f"the {decode if decode == 'inf' else '1e+300'} its decode has left and costs 0: "
            "the run never ends and the clock never moves"
        ]


def test_a_budget_below_one_token_still_moves(tmp_path):
    """A budget of 0.5 gives the prefill half a token a step and the decode half a token a
    step: slow, not stopped (the reference agrees: first token at 200, last at 218)."""
    path = program(tmp_path, budget="0.5")
    report, _ = run(path)
    assert (times(report, "first"), times(report, "last")) == ([200.0], [218.0])
    theirs = pyserq.run(pyserq.compile(str(path)))
    assert list(theirs.observe("last").times) == [218.0]


def test_a_zero_budget_with_nothing_pending_fails_at_the_budget(tmp_path):
    """A budget that reads 0 once a request is resident: the prefill got its first chunk,
    then nothing can be scheduled and no event is left (pyserq 0.1.2 runs to the horizon
    in silence). The error is at the budget expression, which made it so."""
    budget = "residents > 0 ? 0 : 64"
    path = program(tmp_path, budget=budget)
    report, diagnostics = run(path)
    assert report is None
    (d,) = diagnostics
    line = line_of(path, "stage engine")
    column = path.read_text().splitlines()[line - 1].index(budget) + 1
    assert (d.code, d.span.line, d.span.column) == ("E-run", line, column)
    assert d.message == (
        "stage engine holds 1 resident (0 decoding, 1 prefilling) and no waiting session, and "
        "its budget is 0, so no token can be scheduled; no event is pending, so the run can "
        "never move again"
    )


def test_a_zero_budget_that_holds_waiting_sessions_fails_at_the_stage(tmp_path):
    path = program(tmp_path, budget="queued(reqs) > 0 ? 0 : 64", arrive="arrive batch(3);")
    report, diagnostics = run(path)
    assert report is None
    (d,) = diagnostics
    assert d.message.startswith(
        "stage engine holds no resident and 3 waiting sessions, and its budget is 0"
    )


def test_an_engine_stalled_while_arrivals_go_on_is_a_warning_with_the_report(tmp_path):
    """Sessions keep arriving, so the run reaches its horizon; the engine stood still from
    the first instant its budget read 0, and the report comes with `W-stall` saying so."""
    path = program(tmp_path, budget="residents > 0 ? 0 : 64", arrive="arrive poisson(0.1);")
    report, diagnostics = run(path)
    assert report is not None
    (d,) = diagnostics
    assert (d.code, d.severity, d.span.line) == (
        "W-stall",
        Severity.WARNING,
        line_of(path, "stage engine"),
    )
    assert "its budget is 0, so no token can be scheduled, from t = " in d.message
    assert report.ended == 0 and report.arrivals > 10
    # what the engine holds at the end, not when it stopped: every later arrival waits
    waiting = report.arrivals - 1
    assert f"holds 1 resident (0 decoding, 1 prefilling) and {waiting} waiting sessions" in (
        d.message
    )


def test_growths_that_wait_on_each_other_under_preempt_none_fail_at_the_stage():
    """Four requests grow under `preempt none` on 8 blocks until each waits for memory
    another holds: a deadlock. The reference ends the run there with the sessions inside;
    serq says so."""
    path = HERE / "stall" / "preempt_none_deadlock.sq"
    report, diagnostics = run(path)
    assert report is None
    (d,) = diagnostics
    assert (d.code, d.span.line) == ("E-run", 3)
    assert d.message == (
        "stage E holds 3 residents (3 decoding, 0 prefilling) and no waiting session, and every "
        "resident waits to grow its hold on pool kv (preempt none), which has 0 of 128 units "
        "free; no event is pending, so the run can never move again"
    )


def test_a_growth_that_never_fits_under_preempt_none_fails_at_the_stage_in_fn_main():
    """The `fn main` dialect: two chunks of 2 grow the hold to the cap of 4, the third
    needs 6, and nothing else holds the pool: no event can ever free it."""
    path = HERE / "stall" / "growth_never_fits_main.sq"
    report, diagnostics = run(path, horizon=10)
    assert report is None
    (d,) = diagnostics
    assert (d.code, d.span.line) == ("E-run", line_of(path, "stage engine"))
    assert d.message == (
        "stage engine holds 1 resident (0 decoding, 1 prefilling) and no waiting session, and "
        "every resident waits to grow its hold on pool kv (preempt none), which has 0 of 4 "
        "units free; no event is pending, so the run can never move again"
    )


def test_sessions_left_at_a_pool_after_an_engines_plan_fail_at_the_pool():
    """Both sessions take a slot in the engine's first plan (serve exclusive prefill: no
    prefill is selected, so admission goes on) and join kv's queue after the pools were
    retried; no event is left to retry them. The diagnostic is at the pool and says the
    head would fit now, and why it was not admitted."""
    path = HERE / "stall" / "exclusive_nested_main.sq"
    report, diagnostics = run(path, horizon=30)
    assert report is None
    (d,) = diagnostics
    assert (d.code, d.span.line) == ("E-run", line_of(path, "pool kv"))
    assert d.message == (
        "the run stalls at 0: no event is pending and 2 sessions wait for ever (2 queued for "
        "pool `kv` (used 0 of 20)); nothing that could free them will happen; the head at "
        "`kv` would fit now: it joined in a step engine's plan, after the pools were last "
        "retried"
    )


def test_a_hold_that_preempts_itself_at_one_instant_is_a_livelock_at_the_hold():
    """The pools search's U (NOTES §13): a hold that can never grow is preempted by its own
    growth and re-admitted at once, with no time passing; the reference hangs on it."""
    path = HERE / "reference" / "u_self_preempt_instant.sq"
    report, diagnostics = run(path)
    assert report is None
    (d,) = diagnostics
    assert (d.code, d.span.line) == ("E-run", line_of(path, "hold m (1)"))
    assert d.message.startswith("a livelock at one instant: 203 preemptions at pool `m`")
