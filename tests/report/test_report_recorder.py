"""`StatsRecorder` on hand-made call sequences: the arithmetic of every field it computes.

The expected numbers of the three traces are the reference's report of the same programs
(conftest: FIFO, STEP, POOLS), so exact agreement here is agreement with pyserq.
"""

from __future__ import annotations

import math
import random

import pytest

from serq.report import stats
from serq.sim.recorder import StatsRecorder, is_test
from tests.report.conftest import (
    FIFO,
    POOLS,
    STEP,
    link,
    outcome,
    pools_trace,
    step_trace,
)

approx = pytest.approx


def test_fifo_matches_the_reference(fifo_report):
    r = fifo_report
    assert (r.horizon, r.end, r.warmup, r.seed) == (10, 10, 1, 1)
    assert r.mean_live == approx(1.0)
    done = r.observe("done")
    assert (done.count, done.mean, done.cv2, done.p99) == (3, 4.0, 0.25, 6.0)
    assert math.isinf(done.ci)  # fewer than 40 samples
    assert done.samples == [2.0, 4.0, 6.0] and done.sessions == [0, 1, 2]
    q, b = r.gauge("q"), r.gauge("b")
    assert (q.mean, q.min, q.max) == (approx(1.0), 0.0, 3.0)
    assert q.ci == approx(0.5004852174555088, rel=1e-12)
    assert (b.mean, b.min, b.max) == (approx(5 / 9), 0.0, 1.0)
    assert b.ci == approx(0.23619894534137292, rel=1e-12)
    assert b.times == [0.0, 6.0] and b.values == [1.0, 0.0]  # change points only
    s = r.stage("server")
    assert (s.mean_number, s.utilization) == (approx(1.0), approx(5 / 9))
    assert (s.completed, s.throughput, s.mean_wait, s.mean_service) == (3, approx(1 / 3), 2, 2)
    assert s.iterations == 0 and math.isnan(s.mean_decode_batch)


def test_step_matches_the_reference():
    rec = StatsRecorder(link(STEP), 2.0)
    step_trace(rec)
    r = rec.finish(outcome(30.0, 8, 3, 3))
    assert r.mean_live == approx(0.42857142857142855)
    assert (r.observe("ttft").count, r.observe("ttft").mean) == (2, 2.5)
    assert r.observe("resp").cv2 == approx(0.027777777777777776)
    u = r.gauge("u")
    assert (u.mean, u.min, u.max) == (approx(2.3214285714285716), 0, 18)
    assert u.ci == approx(2.444137907293371, rel=1e-12)
    e = r.stage("engine")
    assert e.mean_number == approx(0.42857142857142855)
    assert e.utilization == approx(0.17857142857142858)
    assert (e.completed, e.mean_wait, e.mean_service) == (5, 0, approx(3.4))
    assert e.iterations == 7  # the whole run's, as the reference counts them
    assert (e.prefill_only, e.decode_only, e.mixed) == (0, approx(4 / 28), approx(1 / 28))
    assert e.mean_decodes == approx(0.39285714285714285)
    assert (e.mean_decode_batch, e.mean_decode_step) == (approx(2.2), approx(1.0))
    kv = r.pool("kv")
    assert (kv.mean_used, kv.mean_holders) == (approx(2.3214285714285716), approx(3 / 7))
    assert kv.admissions == 3 and math.isnan(kv.mean_wait)  # admitted before the warm-up


def test_pools_match_the_reference():
    rec = StatsRecorder(link(POOLS), 3.0)
    pools_trace(rec)
    r = rec.finish(outcome(30.0, 5, 4, 3))
    p, c = r.pool("p"), r.pool("c")
    assert (p.mean_used, p.mean_queue, p.mean_holders) == (
        approx(8 / 27),
        approx(1 / 27),
        approx(8 / 27),
    )
    assert (p.mean_wait, p.admissions) == (4, 4)  # the wait after warm-up; all admissions
    assert (c.mean_used, c.mean_cached, c.mean_queue) == (
        approx(15 / 27),
        approx(66 / 27),
        approx(3 / 27),
    )
    assert (c.mean_holders, c.mean_wait, c.admissions) == (approx(5 / 27), 2, 4)
    assert (c.evicted_entries, c.evicted_units, c.preemptions, c.stuck) == (3, 9, 0, 0)
    assert r.mean_live == approx(1 / 3)
    s = r.stage("s")
    assert (s.completed, s.throughput, s.utilization) == (3, approx(1 / 9), approx(5 / 27))


def test_warmup_cuts_a_level_set_before_it():
    rec = StatsRecorder(link(STEP), 5.0)
    rec.stage_state(0, 0.0, 4, 1.0)  # held from 0, counted from 5
    rec.stage_state(0, 7.0, 2, 0.5)
    r = rec.finish(outcome(10.0, 0, 0, 0))
    assert r.stage("engine").mean_number == approx((4 * 2 + 2 * 3) / 5)
    assert r.stage("engine").utilization == approx((1 * 2 + 0.5 * 3) / 5)


def test_a_fifo_stage_is_busy_while_a_job_is_present():
    rec = StatsRecorder(link(FIFO), 0.0)  # fifo(c): busy is in service / c; the reference's
    rec.stage_state(0, 0.0, 1, 0.5)  # utilisation is the time with any job present
    rec.stage_state(0, 2.0, 0, 0.0)
    assert rec.finish(outcome(4.0, 0, 0, 0)).stage("server").utilization == 0.5


def test_samples_and_completions_count_from_the_warmup_on():
    rec = StatsRecorder(link(FIFO), 2.0)
    for t in (1.0, 2.0, 3.0):
        rec.observe(0, t, 0, 0, t)
        rec.stage_done(0, t, 1.0, 1.0)
    r = rec.finish(outcome(4.0, 0, 0, 0))
    assert r.observe("done").samples == [2.0, 3.0]
    assert r.stage("server").completed == 2
    assert r.stage("server").throughput == approx(1.0)


def test_gauge_min_max_only_what_was_held_for_a_positive_time():
    rec = StatsRecorder(link(FIFO), 3.0)
    rec.gauges(0.0, (9.0, 0.0))  # before the warm-up: not held within [3, 10]
    rec.gauges(4.0, (2.0, 0.0))
    rec.gauges(5.0, (-1.0, 0.0))
    rec.gauges(5.0, (3.0, 0.0))  # the same instant again: its last state is the one read
    rec.gauges(10.0, (100.0, 0.0))  # at the end: held for no time
    g = rec.finish(outcome(10.0, 0, 0, 0)).gauge("q")
    assert (g.min, g.max) == (2.0, 9.0)
    assert g.times == [0.0, 4.0, 5.0, 10.0] and g.values == [9.0, 2.0, 3.0, 100.0]
    assert g.mean == approx((9 * 1 + 2 * 1 + 3 * 5) / 7)


def test_a_repeated_instant_that_returns_to_the_old_value_leaves_no_point():
    rec = StatsRecorder(link(FIFO), 0.0)
    rec.gauges(0.0, (1.0, 0.0))
    rec.gauges(2.0, (5.0, 0.0))
    rec.gauges(2.0, (1.0, 0.0))
    g = rec.finish(outcome(4.0, 0, 0, 0)).gauge("q")
    assert g.times == [0.0] and g.values == [1.0] and g.mean == 1.0


ONE_GAUGE = FIFO.replace("gauge b = busy(server);\n", "")


def _series(warmup: float, times: list, values: list, how: str):
    """The gauge row of `ONE_GAUGE` told of `values` at the ends of the instants `times`
    one instant at a time (`gauges`) or all at once (`gauge_series`)."""
    rec = StatsRecorder(link(ONE_GAUGE), warmup)
    if how == "instants":
        for t, v in zip(times, values, strict=True):
            rec.gauges(t, (v,))
    else:
        rec.gauge_series(list(times), [list(values)], [how == "distinct"])
    return rec.finish(outcome(times[-1] + 3.0, 0, 0, 0)).gauge("q")


@pytest.mark.parametrize("warmup", [0.0, 2.5, 7.0])
def test_a_gauge_series_is_recorded_as_its_instants(warmup):
    rng = random.Random(3)
    times = sorted(set(rng.uniform(0, 10) for _ in range(300)))
    changing = [float(rng.randint(0, 5))]
    for _ in times[1:]:
        changing.append(rng.choice([v for v in (0.0, 1.0, 2.5, 4.0, 5.0) if v != changing[-1]]))
    repeating = [float(rng.randint(0, 2)) for _ in times]  # equal neighbours: not distinct
    for values, hows in ((changing, ("distinct", "any")), (repeating, ("any",))):
        expected = _series(warmup, times, values, "instants")
        for how in hows:
            got = _series(warmup, times, values, how)
            assert repr(got) == repr(expected)
            assert (got.times, got.values) == (expected.times, expected.values)
        # the same as the generic summary, which checks that the times increase
        mean, ci, least, greatest = stats.step_summary(
            list(expected.times), list(expected.values), warmup, times[-1] + 3.0
        )
        assert repr((expected.mean, expected.ci, expected.min, expected.max)) == repr(
            (mean, ci, least, greatest)
        )


def test_a_gauge_told_of_an_earlier_instant_keeps_only_what_was_held():
    rec = StatsRecorder(link(ONE_GAUGE), 0.0)
    for t, v in ((0.0, 1.0), (4.0, 7.0), (2.0, 3.0), (6.0, 2.0)):  # 4.0 then 2.0: back
        rec.gauges(t, (v,))
    g = rec.finish(outcome(8.0, 0, 0, 0)).gauge("q")
    assert g.times == [0.0, 4.0, 2.0, 6.0]
    assert (g.min, g.max) == stats.held_range(g.times, g.values, 0.0, 8.0) == (1.0, 3.0)


def test_admissions_to_the_other_pools_of_a_hold_are_counted():
    rec = StatsRecorder(link(POOLS), 0.0)
    rec.pool_admitted(0, 1.0, 1.0)
    rec.pool_count(1, "admissions")
    r = rec.finish(outcome(4.0, 0, 0, 0))
    assert (r.pool("p").admissions, r.pool("c").admissions) == (1, 1)
    assert r.pool("p").mean_wait == 1.0 and math.isnan(r.pool("c").mean_wait)


def test_an_admission_with_a_nan_wait_counts_without_a_wait_sample():
    rec = StatsRecorder(link(POOLS), 0.0)
    rec.pool_admitted(1, 1.0, math.nan)
    rec.pool_admitted(1, 1.0, 3.0)
    c = rec.finish(outcome(4.0, 0, 0, 0)).pool("c")
    assert (c.admissions, c.mean_wait) == (2, 3.0)


def test_gauge_ci_is_batch_means_over_twenty_windows():
    times, values = [0.0, 1.0, 3.0, 7.5], [1.0, 4.0, 0.0, 2.0]
    rec = StatsRecorder(link(FIFO), 0.5)
    for t, v in zip(times, values, strict=True):
        rec.gauges(t, (v, 0.0))
    g = rec.finish(outcome(9.5, 0, 0, 0)).gauge("q")
    width = 9.0 / 20
    means = [
        stats.time_average(times, values, 0.5 + i * width, 0.5 + (i + 1) * width) for i in range(20)
    ]
    m = sum(means) / 20
    s = math.sqrt(sum((x - m) ** 2 for x in means) / 19)
    assert g.ci == approx(2.093 * s / math.sqrt(20))
    assert g.mean == approx(m)


def test_step_fractions_and_iteration_ends():
    rec = StatsRecorder(link(STEP), 0.0)
    rec.stage_state(0, 0.0, 2, 1.0)
    rec.iteration(0, 0.0, 1, 0, 4)  # prefill only, [0, 1]
    rec.iteration(0, 1.0, 1, 1, 4)  # mixed, [1, 3]
    rec.iteration(0, 3.0, 0, 2, 2)  # decode only, [3, 4]: ends when no job is present
    rec.stage_state(0, 4.0, 0, 0.0)
    e = rec.finish(outcome(8.0, 0, 0, 0)).stage("engine")
    assert (e.prefill_only, e.mixed, e.decode_only) == (approx(1 / 8), approx(2 / 8), approx(1 / 8))
    assert e.mean_decodes == approx((1 * 2 + 2 * 1) / 8)
    assert e.mean_decode_batch == approx(1.5) and e.mean_decode_step == approx(1.5)
    assert e.iterations == 3


def test_an_iteration_still_running_at_the_end_is_a_batch_of_its_whole_length():
    # the reference (0.1.2 and 0.1.4) counts a batch when its iteration starts: one that
    # runs past the end counts, with the length it was planned to have
    rec = StatsRecorder(link(STEP), 0.0)
    rec.stage_state(0, 0.0, 1, 1.0)
    rec.iteration(0, 2.0, 0, 1, 1, 5.0)
    e = rec.finish(outcome(4.0, 0, 0, 0)).stage("engine")
    assert e.decode_only == approx(0.5)
    assert e.mean_decode_batch == approx(1.0) and e.mean_decode_step == approx(3.0)


def test_an_iteration_that_ends_stops_the_shape():
    # a resident stalled on a growth: the stage does not iterate after the iteration ends
    rec = StatsRecorder(link(STEP), 0.0)
    rec.stage_state(0, 0.0, 1, 1.0)
    rec.iteration(0, 0.0, 1, 0, 2, 1.0)
    rec.iteration_end(0, 1.0)
    e = rec.finish(outcome(4.0, 0, 0, 0)).stage("engine")
    assert e.prefill_only == approx(0.25)


def test_empty_observation_and_empty_interval():
    rec = StatsRecorder(link(FIFO), 10.0)
    r = rec.finish(outcome(10.0, 0, 0, 0))
    o = r.observe("done")
    assert o.count == 0 and math.isnan(o.mean) and math.isnan(o.p99) and math.isinf(o.ci)
    assert math.isnan(r.stage("server").mean_number) and math.isnan(r.gauge("q").mean)


NOTED = """
stage s : delay;
workload { arrive batch(45); }
session {
  set x = 1;
  run s (~det(1));
  observe hit = x > 2;
  observe never = x - 1;
  observe fine = !(x == 1);
  observe held = x == 1;
}
run { horizon 10; warmup 0; seed 1; }
"""


def test_a_test_observed_0_forty_times_gets_a_note():
    program = link(NOTED)
    rec = StatsRecorder(program, 0.0)
    stat = {name: i for i, name in enumerate(program.observes)}
    for k in range(45):
        rec.observe(stat["hit"], 1.0, k, 0, 0.0)
        rec.observe(stat["never"], 1.0, k, 0, 0.0)  # 0 but not a test
        rec.observe(stat["fine"], 1.0, k, 0, 0.0)
        rec.observe(stat["held"], 1.0, k, 0, 1.0)  # a test that always held: no note
    r = rec.finish(outcome(10.0, 0, 45, 45))
    assert r.notes == (
        "observe hit is constant 0 over 45 samples",
        "observe fine is constant 0 over 45 samples",
    )
    assert math.isnan(r.observe("hit").cv2)


def test_under_forty_samples_no_note():
    program = link(NOTED)
    rec = StatsRecorder(program, 0.0)
    for k in range(39):
        rec.observe(0, 1.0, k, 0, 0.0)
    assert rec.finish(outcome(10.0, 0, 0, 0)).notes == ()


def test_is_test_looks_at_the_outermost_operator():
    program = link(NOTED)
    observed = [s for block in program.blocks for s in block if type(s).__name__ == "Observe"]
    assert [is_test(s.value) for s in observed] == [True, False, True, True]


def test_progress_is_forwarded():
    seen = []
    rec = StatsRecorder(link(FIFO), 0.0, progress=seen.append)
    rec.progress(3.5)
    StatsRecorder(link(FIFO), 0.0).progress(1.0)  # no callback: nothing happens
    assert seen == [3.5]


def test_stuck_sessions_name_the_livelock():
    rec = StatsRecorder(link(POOLS), 0.0)
    rec.pool_count(1, "preemptions", 5)
    rec.pool_count(1, "stuck")
    r = rec.finish(outcome(4.0, 0, 0, 0))
    assert r.pool("c").stuck == 1 and r.pool("c").preemptions == 5
    assert r.notes == (
        "pool c: 1 session preempted again without progress "
        "(a livelock: a hold that can never grow to what its body needs)",
    )
    from serq.report import report_text

    assert report_text(r).rstrip().endswith("what its body needs)")
