"""The step engine where it and the reference (pyserq 0.1.2) were found to part, one small
deterministic program each (tests/sim/programs/reference/, found by a differential search
over generated engine programs; tests/sim/NOTES.md §10 gives the reasoning).

Where the spec is silent the reference decides, and serq now gives its numbers exactly:
a resident's KV is its allocation (B, D), the cost's KV is the batch's (H), an admitted request that only
decodes joins an exclusive-prefill decode batch (C), a settle ends with one pass over the
engines, so a pool re-admits a preemption's victim and an engine that planned nothing
plans again only at the next event (A, S), stalled growths wait among the pool's
growers (N). As the spec says, with the reference: the serving order and the lifo victim
read the session's latest admission to any pool (L). Where the spec decides against the reference, serq keeps the spec, and the test pins
serq's value and shows the reference's: the victim among every engine on a shared memory
with tokens applied at an iteration's end (E), a growing run positioned at 0 caching
nothing (G), a self-preempting resident ending the iteration's pass over the residents
as vLLM's running loop does (F, spec §7's preemption row). Every program runs
the same with and without fast-forwarding.

Later searches added more. With the reference: `stuck` across an inner hold (K), a run of
zero work that lets the ready sessions run first (I), budget_left read outside a plan as
what a plan would leave, every resident counted (O, as the spec says), a preempted hold's
cache clause reading the `computed` the preemption sets (Q) and a session's end leaving
the retry of what it released to the settle (R). Against it, for the spec's invariant: a
spill into a full tier evicts from it after the write (J).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import serq

pyserq = pytest.importorskip("pyserq")

PROGRAMS = Path(__file__).resolve().parent / "programs" / "reference"
AS_REFERENCE = (
    "a_readmit",
    "b_attention",
    "c_exclusive",
    "d_kv_budget",
    "d_kv_cost",
    "h_kv_batch",
    "h_kvp_batch",
    "h_exclusive_batch",
    "s_idle_engine",
    "n_stall_growers",
)


def samples(report, name: str) -> list[tuple[int, float]]:
    o = report.observe(name)
    return list(zip(o.sessions, o.samples, strict=True))


def same(ours: list[tuple[int, float]], theirs: list[tuple[int, float]]) -> bool:
    return len(ours) == len(theirs) and all(
        a[0] == b[0] and math.isclose(a[1], b[1], rel_tol=1e-12, abs_tol=1e-12)
        for a, b in zip(ours, theirs, strict=True)
    )


def run_both(name: str):
    path = str(PROGRAMS / f"{name}.sq")
    program = serq.compile(path)
    fast, slow = serq.run(program), serq.run(program, fast_forward=False)
    for stat in program.program.observes:
        assert samples(fast, stat) == samples(slow, stat), (name, stat)
    return program, fast, path


@pytest.mark.parametrize("name", AS_REFERENCE)
def test_where_the_spec_is_silent_serq_gives_the_references_numbers(name):
    program, ours, path = run_both(name)
    theirs = pyserq.run(pyserq.compile(path))
    for stat in program.program.observes:
        assert same(samples(ours, stat), samples(theirs, stat)), (name, stat)
    if name != "n_stall_growers":  # a resumed growth keeps its position (NOTES §7): +1
        assert ours.stages[0].iterations == theirs.stages[0].iterations


def test_a_shared_memory_preempts_the_newest_resident_of_any_engine():
    _, ours, path = run_both("e_shared_victim")
    theirs = pyserq.run(pyserq.compile(path))
    assert ours.ended == theirs.ended == 2  # before: session 0 preempted itself again
    assert samples(ours, "resumed")[2] == (1, 19.0)  # tokens apply when an iteration ends
    assert samples(theirs, "resumed")[2] == (1, 20.0)


def test_a_self_preemption_ends_the_iterations_pass_over_the_residents():
    """vLLM's running loop breaks when a request's allocation fails and the victim is the
    request itself (spec §7; scheduler.py:742-813): the residents after it in the serve
    order get nothing that iteration. Served by (remaining), session 1 (prefill 64 at 15
    tokens an iteration beside session 0's decode) is first once its remaining (19, then
    4) is below session 0's; at t = 5 its growth to 64 does not fit in 80 units, it
    preempts itself, and session 0, after it, waits: every round of re-admission loses
    session 0 a token, 9 preemptions in all. The reference serves session 0 on."""
    _, ours, path = run_both("f_self_preempt_order")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "first") == [(0, 1.0), (1, 39.0)]
    assert samples(ours, "last") == [(0, 35.0), (1, 43.0)]
    assert ours.pools[1].preemptions == 9
    assert samples(theirs, "first") == [(0, 1.0), (1, 36.0)]
    assert samples(theirs, "last") == [(0, 32.0), (1, 40.0)]
    assert theirs.pools[1].preemptions == 8


def test_a_growing_run_preempted_before_its_first_token_caches_nothing():
    _, ours, path = run_both("g_unpositioned")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "hit")[2] == (1, 0.0)  # it had computed 0
    assert samples(theirs, "hit")[2] == (1, 10.0)


def test_serve_by_remaining_with_a_self_preemption_runs():
    """The reference panics on this one (interp.rs: no entry found for key)."""
    _, ours, _ = run_both("p_panic")
    assert ours.ended == 2


def test_an_inner_hold_completing_does_not_reset_stuck():
    """A session preempted again without passing its previous position is stuck, even when
    an inner hold (`hold ad (1) { run tool (1); }`) completed in between (K)."""
    _, ours, path = run_both("k_stuck_inner_hold")
    theirs = pyserq.run(pyserq.compile(path))
    kv = [row for row in ours.pools if row.name == "kv"][0]
    assert kv.stuck == 1
    assert [p.stuck for p in ours.pools] == [p.stuck for p in theirs.pools]


def test_the_serving_order_is_the_sessions_latest_admission_to_any_pool():
    _, ours, path = run_both("l_latest_admission")
    assert samples(ours, "ttft") == [(0, 4.0), (1, 6.0)]
    assert samples(ours, "response") == [(0, 7.0), (1, 7.0)]
    theirs = pyserq.run(pyserq.compile(path))
    assert same(samples(ours, "response"), samples(theirs, "response"))


def test_the_victim_is_the_resident_whose_session_was_admitted_last_anywhere():
    _, ours, path = run_both("l_latest_admission_victim")
    assert samples(ours, "response") == [(1, 31.0), (0, 72.0)]
    assert ours.pools[1].preemptions == 4
    theirs = pyserq.run(pyserq.compile(path))
    assert same(samples(ours, "response"), samples(theirs, "response"))
    assert theirs.pools[1].preemptions == 4


def test_a_run_preempted_as_it_arrives_has_computed_its_consumed_prefix():
    _, ours, path = run_both("m_arrival_computed")
    assert samples(ours, "comp")[4:] == [(1, 38.0), (0, 0.0)]
    theirs = pyserq.run(pyserq.compile(path))
    assert same(samples(ours, "comp"), samples(theirs, "comp"))


def test_budget_left_outside_a_plan_is_what_a_plan_would_leave():
    _, ours, path = run_both("o_budget_left_outside")
    assert samples(ours, "used_at_admission") == [(0, 74.0), (1, 84.0)]
    theirs = pyserq.run(pyserq.compile(path))
    assert same(samples(ours, "used_at_admission"), samples(theirs, "used_at_admission"))


def test_a_run_of_zero_work_goes_behind_the_ready_sessions():
    """A plain run, a step run and a flow of zero work complete at once, behind the
    sessions already ready (I; the program's comment works the order out)."""
    _, ours, path = run_both("i_zero_run")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "order") == [(2, 2.0), (1, 1.0), (0, 0.0)]
    assert samples(ours, "done") == [(2, 1.0), (1, 2.0), (0, 3.0)]
    for stat in ("order", "done"):
        assert same(samples(ours, stat), samples(theirs, stat)), stat


def test_a_spill_into_a_full_tier_evicts_from_it_after_writing():
    """The spec's invariant, allocated + cached <= cap in every reachable configuration,
    holds after a spill: the tier evicts once the spilled prefix is in (J). The reference
    evicts from the tier before it writes the spill, so the tier stays above its cap until
    the next spill or admission there."""
    _, ours, path = run_both("j_spill_tier")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "in") == [(0, 0.0), (1, 0.0), (2, 4.0), (3, 0.0)]
    assert samples(theirs, "in") == [(0, 0.0), (1, 4.0), (2, 4.0), (3, 0.0)]
    ours_t, theirs_t = ours.pools[1], theirs.pools[1]
    assert (ours_t.evicted_entries, ours_t.evicted_units) == (2, 8.0)
    assert (theirs_t.evicted_entries, theirs_t.evicted_units) == (1, 4.0)
    assert ours_t.mean_cached == pytest.approx(3.8)  # 4 from 1 to the horizon, 20
    assert theirs_t.mean_cached == pytest.approx(7.4)  # 8 from 2 on, above the cap of 6


@pytest.mark.parametrize(
    "name, b1, b2",
    [
        ("o_budget_left", [(3, 6.0), (4, 22.0)], [(3, 22.0), (4, 38.0)]),
        ("o_budget_left_exclusive", [(3, 0.0), (4, 0.0)], [(3, 0.0), (4, 16.0)]),
    ],
)
def test_budget_left_outside_a_plan_is_what_a_plan_now_would_leave(name, b1, b2):
    """Reading budget_left "plans an iteration" (spec §3): outside a plan it is the budget
    less the residents' tokens, every resident counted (O; the programs work it out)."""
    _, ours, path = run_both(name)
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "b1") == b1
    assert samples(ours, "b2") == b2
    for stat in ("b1", "b2"):
        assert same(samples(ours, stat), samples(theirs, stat)), stat


def test_a_preempted_holds_cache_clause_reads_the_computed_it_sets():
    """At a preemption `computed` is set before the hold's cache clause is read, so
    cache (computed) keeps the prefix the re-executed hold then finds (Q)."""
    _, ours, path = run_both("q_preempt_cache_reads_computed")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "k") == [(0, 2.0), (0, 2.0)]
    assert same(samples(ours, "k"), samples(theirs, "k"))


def test_what_a_sessions_end_releases_is_retried_after_the_ready_sessions():
    """A session's end does not retry the pools at once, as a scope's release does: the
    settle retries them once the sessions ready then have run (R)."""
    _, ours, path = run_both("r_end_release")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "got") == [(2, 1.0), (1, 2.0)]
    assert same(samples(ours, "got"), samples(theirs, "got"))


def test_a_resident_prefill_waiting_to_grow_selects_nothing_and_admission_goes_on():
    """Under `serve exclusive prefill`, a resident prefill whose growth waits among the
    pool's growers (`preempt none`, N) schedules nothing, so it is not the selected prefill
    that ends admission: every later arrival, which fits, is admitted at its arrival, as
    the reference does (V; forms family program 58, reduced). Neither runs the decodes."""
    _, ours, path = run_both("v_exclusive_stalled_prefill")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(theirs, "adm") == [(k, k + 1.0) for k in range(6)]
    assert samples(ours, "adm") == samples(theirs, "adm")


def test_an_iteration_of_cost_0_does_not_keep_another_engine_from_the_pass():
    """The settle's last step starts every idle engine with work, provided no other event
    is pending at the instant: checked once, before the pass. Engine A's iteration of
    cost 0, started in the pass, ends at this instant, and engine B starts in the same
    pass, as the reference does (serving family program 62, reduced; NOTES §18)."""
    _, ours, path = run_both("w_zero_cost_pass")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "done") == [(1, 2.0), (0, 3.0)]
    assert same(samples(ours, "done"), samples(theirs, "done"))


def test_a_run_a_plan_starts_at_a_ps_stage_declared_above_the_engine_ends_on_time():
    """Time passes at a ps stage by its discipline, whatever the order of declarations:
    the run E's plan starts at L (declared above E) ends at 0.502, alone at ps(1000).
    Both references schedule L's completion only at the next event, the end of the lease
    at 3 (queue family program 3 of `fn main`, reduced; NOTES §18)."""
    _, ours, path = run_both("x_ps_above_engine")
    theirs = pyserq.run(pyserq.compile(path))
    assert samples(ours, "got") == [(0, 0.502)]
    assert same(samples(theirs, "got"), [(0, 3.002)])
