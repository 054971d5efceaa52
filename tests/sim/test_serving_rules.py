"""Rules the serving and queue families found (tests/sim/NOTES.md §17), one program each,
worked out by hand and run on both implementations (`impl`: pyserq 0.1.2 and serq).

Where serq does not follow the reference yet because the fix belongs to a module another
change owns (the step engine, the event loop), the test is a strict xfail on serq, so
that the fix turns it green and the xfail must then go.
"""

from __future__ import annotations

import pytest

HORIZON = 40


def run(impl, source: str):
    return impl.run(source=source, horizon=HORIZON, warmup=0, seed=1)


def values(report, name: str) -> list[tuple[int, float, float]]:
    """(session, time, value) of every sample of `name`, in the order taken."""
    o = report.observe(name)
    return list(zip(o.sessions, o.times, o.samples, strict=True))


def pending(impl, request, why: str) -> None:
    """Mark the test a strict xfail on serq, for a fix that belongs elsewhere (`why`)."""
    if impl.name == "serq":
        request.applymarker(pytest.mark.xfail(strict=True, reason=why))


NOTHING_RELEASED = """
pool kvX { cap 10; }
pool reqsD { cap 8; }
pool kvD { cap 40; block 4; evict lru; preempt lifo; admit via D; }
stage D : step { budget 256; cost 0.01 + 0.0001 * tokens; memory kvD; }
workload { arrive batch(2); }
session {
  set prompt = 10 + serial;
  set sent = now;
  branch (serial == 5) { hold kvX (1) { observe q = 0; } lease kvX (inf); }
  hold kvD (prompt) reserve (prompt) {
    branch (serial == 1) { release kvX; }
    observe read = now - sent;
    hold reqsD (1) {
      observe slot = now;
      run D prefill (1) growing kvD;
      run D decode (4) growing kvD;
    }
  } cache (prompt);
}
"""


def test_a_release_that_gives_nothing_back_retries_the_pools(impl):
    """D's first plan, at 0, admits both KV holds and runs both sessions in it. Session 0
    joins `reqsD` there (a pool no engine serves, so the plan does not retry it); then
    session 1's `release kvX`, which finds no hold and no lease of kvX, still retries the
    pools, and session 0 takes its slot at 0. Session 1 then joins `reqsD`, and nothing
    retries the pools until the iteration ends at 0.0101 (0.01 + 0.0001 for the one
    token). Without the retry both would wait for an event that never comes."""
    r = run(impl, NOTHING_RELEASED)
    assert values(r, "slot") == [(0, 0.0, 0.0), (1, 0.0101, 0.0101)]
    assert r.ended == 2


BUSY = """
pool kv { cap 1000; block 1; preempt lifo; }
stage engine : step { budget 4; cost 1; memory kv; }
stage gate : delay;
gauge b = busy(engine);
gauge q = queue(engine);
workload { arrive batch(3); }
session {
  run gate (serial * 0.5);
  hold kv (10) {
    observe b0 = busy(engine);
    run engine prefill (4) growing kv;
    observe b1 = busy(engine);
    run engine decode (3 + serial) growing kv;
    observe b2 = busy(engine);
  }
}
"""


def test_busy_of_a_step_stage_is_the_batch_of_the_running_iteration(impl, request):
    """`busy(E)` of a step engine counts the residents the iteration in flight serves,
    0 between iterations (the reference; the spec does not define it), where `queue(E)`
    counts every resident. Session 0 prefills alone in [0, 1]: session 1 reads busy 1 at
    0.5, and session 2 reads 1 at 1, its gate ending before the iteration in the event
    order. Each session reads 0 after its runs, at an iteration's end. The engine serves
    one resident in [0, 1], two in [1, 2], three in [2, 5], two in [5, 6], one in [6, 7]
    (decodes of 3, 4 and 5 tokens), none after: busy's mean over 40 is 17 / 40, against
    queue's 18.5 / 40 (session 1 resident from 0.5, session 2 from 1, before they are
    served)."""
    r = run(impl, BUSY)
    assert [v for _, _, v in values(r, "b0")] == [0.0, 1.0, 1.0]
    assert [v for _, _, v in values(r, "b1")] == [0.0, 0.0, 0.0]
    assert [v for _, _, v in values(r, "b2")] == [0.0, 0.0, 0.0]
    assert r.gauge("b").mean == pytest.approx(17 / 40)
    assert r.gauge("q").mean == pytest.approx(18.5 / 40)


REPLACED = """
pool reqs { cap 4; admit via engine; }
pool kv { cap 10; block 1; evict lru; preempt lifo; }
stage engine : step { budget 8; cost 1; memory kv; }
workload { arrive closed(1); }
session {
  observe start = now;
  set prompt = 4;
  hold reqs (1), kv (min(known, budget_left(engine))) reserve (known)
       at admission (known = computed < prompt ? prompt : computed + 1) {
    run engine prefill (known) growing kv;
    run engine decode (20 - (known - prompt)) growing kv;
  } cache (prompt);
}
"""


def test_a_session_that_ends_in_a_plan_is_replaced_at_the_next_event(impl, request):
    """One session at a time: it prefills 4 and decodes, one token an iteration, until its
    hold would grow past the cap of 10. The plan at 7 preempts it; re-queued, its hold
    reserves known = 11 > 10 and is rejected, so the session ends inside that plan. The
    closed population's replacement arrives then, but runs at the next event, the end
    of the preempting iteration at 8 (the spec's settle does not return to the ready
    sessions after the step stages' pass; the reference), and so on every 8."""
    r = run(impl, REPLACED)
    assert [t for _, t, _ in values(r, "start")] == [0.0, 8.0, 16.0, 24.0, 32.0, 40.0]


COMPUTED_INDEX = """
stage s[3] : delay;
workload { arrive batch(1); }
session {
  set j = 2;
  run s[INDEX] (1);
  observe a = now;
}
"""


@pytest.mark.parametrize("index", ["1 - j", "j - 1.5", "j / 0 - j / 0", "j + 1"])
def test_a_computed_index_is_a_whole_member_of_its_array(index):
    """An index computed during the run is held to a constant index's rule (a whole number
    from 0 to count - 1; `s[-1]`, `s[0.5]` do not link): -1, 0.5, NaN and 3 stop the
    run at the reference (pyserq 0.1.4 refuses them too; 0.1.2 took -1 and NaN as 0
    and 0.5 as 0)."""
    import serq

    compiled = serq.compile(source=COMPUTED_INDEX.replace("INDEX", index), horizon=10)
    with pytest.raises(ValueError, match=r"stage index .* is out of range: the array has 3"):
        serq.run(compiled)


def test_a_whole_computed_index_picks_its_member(impl):
    r = run(impl, COMPUTED_INDEX.replace("INDEX", "j - 2"))
    assert [row.completed for row in r.stages] == [1, 0, 0]
