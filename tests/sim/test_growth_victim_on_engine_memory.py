"""A growth on a step engine's memory preempts that engine's newest resident.

Spec §3, `grow m (d)`: under `preempt lifo` the victim is "the holder that is a resident
of the step stage the pool is the memory of and was admitted last"; a holder away from
the engine is in no running list, and only "a pool that is no engine's memory preempts its
most recently admitted holder". A session at a `grow` statement is running statements,
not a run on the engine, so it is never the victim there. serq used the holders' rule for
the statement on every pool: session 1 below, admitted after session 0 and back from a
delay, preempted itself at its `grow kv (28)` and again at every re-execution (a livelock
the report only noted), where pyserq 0.1.2 and 0.1.4 preempt session 0, the engine's
resident, and session 1 grows at once (round 22, tests/sim/NOTES.md §50).

A growth there that can never fit (the hold would need more than the cap) would wait for
ever once the residents are gone, as under `preempt none`: an E-run at the statement.

The same rule for a run on one engine growing another engine's memory: `StepStage._victim`
took that pool's newest holder (here the growing run's own session, a resident of A),
where the victims are B's residents, as in both references; with none left the run stops
with the engine's stall diagnostic, where 0.1.2 runs to its horizon with every session
stuck.
"""

from __future__ import annotations

import warnings

import pytest

from serq.sim.api import compile_program, execute
from tests.sim.both_paths import run_text

PROGRAM = """
let bs = 4;
pool reqs { cap 4; admit via engine; }
pool kv { cap 40; block bs; evict lru; preempt PREEMPT; }
stage engine : step { budget 8; cost 1; memory kv; }
stage d : delay;
workload { arrive batch(2); }
session {
  run d (serial * 0.5);
  hold reqs (1), kv (min(8, budget_left(engine))) reserve (8) {
    observe resumed = computed;
    run engine prefill (8) growing kv;
    branch (serial == 1) { run d (1); grow kv (GROW); observe grown = now; observe u = used(kv); }
    run engine decode (20) growing kv;
  } cache (8);
  observe done = now;
}
run { horizon 100; warmup 0; seed 1; }
"""


def _run(grow: str, preempt: str, codegen: bool):
    text = PROGRAM.replace("GROW", grow).replace("PREEMPT", preempt)
    compiled, diagnostics = compile_program(text, "grow_engine.sq")
    assert compiled is not None, [d.message for d in diagnostics]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return execute(compiled, codegen=codegen), text


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("preempt", ["lifo", "by (position)", "by (1)"])
def test_the_resident_gives_way_to_the_statement(codegen, preempt):
    (report, said), _ = _run("28", preempt, codegen)
    assert report is not None, [d.message for d in said]
    # session 1 (8 held) grows by 28 at t = 4 as soon as session 0, the only resident
    # (12 held), is preempted: 36 of 40; it is admitted once and not preempted
    grown = report.observe("grown")
    assert list(grown.sessions) == [1] and list(grown.samples) == [4.0]
    assert list(report.observe("u").samples) == [36.0]
    resumed = report.observe("resumed")
    assert list(resumed.sessions) == [0, 1, 0]
    assert [p.preemptions for p in report.pools] == [0, 1]
    # session 1 decodes its 20 tokens alone (4 + 20 = 24), then session 0 again (24 + 21)
    done = report.observe("done")
    assert list(done.sessions) == [1, 0] and list(done.samples) == [24.0, 45.0]
    assert report.ended == 2


@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("grow", ["40", "inf"])
def test_a_growth_that_can_never_fit_is_an_error_at_the_statement(codegen, grow):
    (report, said), text = _run(grow, "lifo", codegen)
    assert report is None
    errors = [d for d in said if d.code == "E-run"]
    assert len(errors) == 1, [d.message for d in said]
    error = errors[0]
    assert text[error.span.start : error.span.end].startswith(f"grow kv ({grow})")
    assert "can never be satisfied" in error.message
    assert "residents of the engine" in error.message


@pytest.mark.parametrize("codegen", [True, False])
def test_a_pool_no_engine_uses_keeps_its_newest_holder(codegen):
    # without `memory kv` the pool is no engine's memory: the grower, its newest holder,
    # preempts itself (a growing run then has nothing to grow: prefill/decode do not grow)
    text = PROGRAM.replace("GROW", "28").replace("PREEMPT", "lifo")
    text = text.replace(" memory kv;", "").replace(" growing kv", "")
    report, said = run_text(text, "grow_plain.sq", codegen=codegen)
    # 8 + 8 + 28 > 40: session 1 is preempted at its statement, re-executes, and grows
    # once session 0 has ended
    resumed = report.observe("resumed")
    assert list(resumed.sessions).count(1) >= 2
    assert report.pools[1].preemptions >= 1


OTHER = """
let bs = 4;
pool reqs { cap 4; admit via A; }
pool reqsB { cap 4; admit via B; }
pool kvA { cap 100; block bs; evict lru; preempt lifo; }
pool kvB { cap 40; block bs; evict lru; preempt lifo; }
stage A : step { budget 8; cost 1; memory kvA; }
stage B : step { budget 8; cost 1; memory kvB; }
stage d : delay;
workload { arrive batch(4); }
session {
  run d (serial * 0.5);
  branch (serial < 2) {
    hold reqsB (1), kvB (min(8, budget_left(B))) reserve (8) {
      observe resumedB = computed;
      run B prefill (8) growing kvB;
      run B decode (12) growing kvB;
    } cache (8);
  } else {
    hold kvB (4) {
      hold reqs (1), kvA (min(8, budget_left(A))) reserve (8) {
        observe resumed = computed;
        run A prefill (8) growing kvB;
        run A decode (DECODE) growing kvB;
      } cache (8);
    } cache (4);
  }
  observe done = now;
}
run { horizon 200; warmup 0; seed 1; }
"""


def _other(decode: str, codegen: bool):
    text = OTHER.replace("DECODE", decode)
    compiled, diagnostics = compile_program(text, "grow_other.sq")
    assert compiled is not None, [d.message for d in diagnostics]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return execute(compiled, codegen=codegen)


@pytest.mark.parametrize("codegen", [True, False])
def test_a_run_growing_another_engines_memory_preempts_that_engines_residents(codegen):
    report, said = _other("12", codegen)
    assert report is not None, [d.message for d in said]
    # sessions 2 and 3 (residents of A) grow kvB to 24 each, preempting B's residents
    # (sessions 0 and 1) until they have; they are admitted once and end first
    resumed = report.observe("resumed")
    assert list(resumed.sessions) == [2, 3]
    assert set(report.observe("resumedB").sessions) == {0, 1}
    assert len(report.observe("resumedB").samples) > 2
    done = report.observe("done")
    assert list(done.sessions) == [2, 3, 0, 1]
    assert list(done.samples) == [14.0, 16.0, 27.0, 29.0]
    assert report.ended == 4


@pytest.mark.parametrize("codegen", [True, False])
def test_with_no_resident_of_that_engine_left_the_run_stops_at_the_engine(codegen):
    # 2 * (4 + 8 + 20) = 64 > 40: once B's residents are gone nothing can give way
    report, said = _other("20", codegen)
    assert report is None
    errors = [d for d in said if d.code == "E-run"]
    assert len(errors) == 1, [d.message for d in said]
    assert "none can be preempted" in errors[0].message
    assert OTHER[errors[0].span.start : errors[0].span.end] == "A"
