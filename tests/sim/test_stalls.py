"""Every way a run stops moving ends with a diagnostic that says where sessions wait.

The programs are the ones docs/domains-and-stalls.md states each rule with (checked
here to be in it, verbatim); each must stop with its `E-run`, at its place, in its words.
The step engine's own stall (an iteration that schedules nothing with residents) is the
step engine's rule and not tested here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from serq.sim import api as sim_api
from serq.sim.world import LOOP_WITHOUT_TIME
from tests.sim.both_paths import failure_on_both_paths, warnings_on_both_paths

DOC = (Path(__file__).resolve().parents[2] / "docs" / "domains-and-stalls.md").read_text()

NO_EVENT = """pool kv { cap 10; preempt none; }
stage s : fifo(1);
workload { arrive batch(2); }
session { hold kv (4) { run s (1); grow kv (3); run s (1); } }
run { horizon 100; }
"""
NEVER_GROWS = """pool kv { cap 10; preempt none; }
stage s : fifo(1);
workload { arrive batch(2); }
session { hold kv (6) { run s (1); grow kv (6); run s (1); } }
run { horizon 100; }
"""
ONE_INSTANT = """pool kv { cap 16; preempt lifo; }
stage E : step { budget 64; cost 0; memory kv; }
workload { arrive batch(1); }
session { hold kv (8) { run E prefill (8) growing kv; run E decode (20) growing kv; } cache (28); }
run { horizon 100; }
"""
PS_ZERO = """stage p : ps(1 - present);
workload { arrive poisson(1); }
session { run p (1); }
run { horizon 100; }
"""
CRAWL = """workload { arrive closed(5); }
stage svc : ps(1e300);
session { run svc (~exp(1)); end; }
run { horizon 30; }
"""
TINY_BLOCKS = """pool kv { cap 4; block 1e-300; evict by (size); }
stage s : fifo(1);
workload { arrive renewal(1); }
session { hold kv (3) { run s (0.5); } cache (3); }
run { horizon 20; }
"""
HOLD_LOOP = """pool p { cap 4; }
workload { arrive poisson(1); }
session { loop { hold p (1) { set x = 1; } } }
run { horizon 100; }
"""
CLOCK_STOPS = """stage d : delay;
workload { arrive batch(1); }
session { run d (1e20); loop { run d (1); } }
run { horizon 1e21; }
"""

CASES = [
    (
        NO_EVENT,
        (1, 6),
        "the run stalls at 2: no event is pending and 2 sessions wait for ever (2 waiting "
        "to grow at pool `kv`); nothing that could free them will happen",
        "at simulated time 2",
    ),
    (
        NEVER_GROWS,
        (4, 36),
        "`grow kv (6)` can never be satisfied: the hold would need 12 of pool `kv`, whose "
        "cap is 10, and under `preempt none` it would wait forever",
        "in session 0; at simulated time 1",
    ),
    (
        ONE_INSTANT,
        (4, 11),
        "a livelock at one instant: 203 preemptions at pool `kv` without time passing; "
        "a hold that can never grow to what its body needs is preempted and re-admitted "
        "at once, forever",
        "at simulated time 0",
    ),
    (
        PS_ZERO,
        (1, 14),
        "the capacity of ps stage `p` with 1 job is 0; it must be positive",
        None,
    ),
    (
        TINY_BLOCKS,
        (1, 6),
        "pool `kv`: evicting 2.000000000000001 units block by block takes "
        "2.0000000000000007e+300 blocks of 1e-300, more than serq steps through (10,000,000): "
        "the eviction keys or the spill are taken again after every block",
        "in session 1; at simulated time 2",
    ),
]


@pytest.mark.parametrize(("text", "where", "message", "note"), CASES)
def test_a_stall_is_a_diagnostic_that_says_where_and_why(text, where, message, note):
    assert text.strip() in DOC  # the rule is stated with this program
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    report, ran = sim_api.execute(compiled)
    assert report is None
    [d] = ran
    assert (d.code, (d.span.line, d.span.column), d.message) == ("E-run", where, message)
    if note is not None:
        assert d.notes == (note,)


def test_sessions_queued_behind_a_hold_that_never_ends_are_named():
    text = """pool kv { cap 10; }
stage s : fifo(1);
workload { arrive batch(3); }
session { hold kv (6) { run s (1); grow kv (0); hold kv (6) { run s (1); } } }
run { horizon 100; }
"""
    compiled, _ = sim_api.compile_program(text, "t.sq")
    report, [d] = sim_api.execute(compiled)
    assert report is None
    assert d.message.startswith("the run stalls at 1: no event is pending and 3 sessions")
    assert "queued for pool `kv` (used 6 of 10)" in d.message


def test_a_grow_that_fits_once_others_leave_waits_and_the_run_ends_normally():
    text = """pool kv { cap 10; preempt none; }
stage s : fifo(1);
workload { arrive batch(2); }
session { hold kv (4) { run s (serial + 1); branch (serial == 0) { grow kv (5); } run s (1); } }
run { horizon 100; }
"""
    compiled, _ = sim_api.compile_program(text, "t.sq")
    report, ran = sim_api.execute(compiled)
    assert ran == [] and report is not None and report.ended == 2


def test_a_clock_that_crawls_is_stopped():
    # a ps stage of capacity 1e300 and a closed population: every event moves the clock
    # by ~1e-300, so no zero-time rule saw it, and the run never ended
    text = CRAWL
    assert text.strip() in DOC
    compiled, _ = sim_api.compile_program(text, "t.sq")
    report, [d] = sim_api.execute(compiled)
    assert report is None
    assert (d.code, d.span.line, d.span.column) == ("E-run", 1, 12)
    assert d.message.startswith("the clock crawls: 65,536 events moved it from 0 to ")
    assert "and at that pace the horizon 30 is about " in d.message


def test_a_burst_of_events_at_one_instant_is_not_a_crawl():
    # 300,000 sessions at time 0, each a few events, then a calm run: the clock does not
    # move during the burst, which the pace does not judge
    text = """stage d : delay;
workload { arrive batch(300000); }
session { run d (1e-9 * serial); run d (1000); }
run { horizon 2000; }
"""
    compiled, _ = sim_api.compile_program(text, "t.sq")
    report, ran = sim_api.execute(compiled)
    assert ran == [] and report is not None and report.ended == 300000


def test_the_pace_projects_from_what_the_clock_did():
    from serq.sim.core import PROGRESS_EVERY
    from serq.sim.errors import SimError
    from serq.sim.pace import Pace

    seen = []
    pace = Pace(1e6, seen.append)
    for k in range(10):  # 1e-6 a PROGRESS_EVERY events: 2^16 * 1e12 events in all, fine
        pace(k * 1e-6)
    assert seen == [k * 1e-6 for k in range(10)]
    crawl = Pace(100.0)
    crawl(0.0)  # a burst at time 0: not judged
    with pytest.raises(SimError) as caught:
        crawl(1e-290)
    assert caught.value.message.startswith(
        f"the clock crawls: {2 * PROGRESS_EVERY:,} events moved it from 0 to 1e-290, and at "
        "that pace the horizon 100 is about 1e+297 events away"
    )


LATE_CRAWL = """stage s : delay;
workload { arrive batch(1); }
session {
  run s (1);
  loop { run s (1e-13); }
}
run { horizon 1000000; warmup 0; seed 1; }
"""


def test_a_clock_that_crawls_late_is_stopped_on_both_paths():
    # once the clock is at 1, a loop of work 1e-13 moves it 1e-13 an event: 1e19 events to
    # the horizon. The pace since time 0 (one unit of time in the first event) saw
    # nothing and the run went on for ever in silence; the recent events' pace sees it
    assert LATE_CRAWL.strip() in DOC
    [(code, span, message)] = failure_on_both_paths(LATE_CRAWL)
    assert (code, span.line, span.column) == ("E-run", 2, 12)
    assert message.startswith("the clock crawls: 65,536 events moved it from 1.0000000")
    assert "and at that pace the horizon 1000000 is about 1e+19 events away" in message


def test_a_run_of_infinite_horizon_is_not_judged_by_its_pace():
    # `horizon inf` with `arrivals N` ends when its sessions do; projected to the
    # infinite horizon, the first 65,536 events of any such run were a crawl
    text = """stage d : fifo(1);
workload { arrive renewal(1); }
session { run d (0.5); }
run { horizon inf; warmup 0; seed 1; arrivals 40000; }
"""
    compiled, _ = sim_api.compile_program(text, "t.sq")
    for codegen in (True, False):
        report, said = sim_api.execute(compiled, codegen=codegen)
        assert said == [] and report is not None
        assert (report.arrivals, report.ended, report.end) == (40000, 40000, 40000.5)


def test_the_recent_pace_is_taken_over_at_least_half_the_events():
    from serq.sim.core import PROGRESS_EVERY
    from serq.sim.errors import SimError
    from serq.sim.pace import Pace

    pace = Pace(1e6)
    for k in range(1, 100):  # a normal pace: a unit of time every PROGRESS_EVERY events
        pace(float(k))
    assert pace.marks[-1] == (64 * PROGRESS_EVERY, 64.0)
    burst = Pace(1e6)
    burst(1.0)
    for _ in range(50):  # then the clock stops: not a crawl (the instant's rule)
        burst(1.0)
    late = Pace(1e6)
    for k in range(1, 5):
        late(float(k))
    for k in range(1, 4):  # calls 5 to 7 judged over calls 3 to 7: a move of 2 and more
        late(4.0 + k * 1e-13)
    with pytest.raises(SimError) as caught:  # call 8 over calls 5 to 8: 4e-13
        late(4.0 + 4e-13)
    assert caught.value.message.startswith(
        f"the clock crawls: {4 * PROGRESS_EVERY:,} events moved it from 4 to 4.0000000000004"
    )


def test_a_clock_that_stops_is_a_stall_on_both_paths(monkeypatch):
    """Positive work too small to move a large clock ends at the same instant; a loop of
    it fires events at one instant for ever. Both event paths count the events of an
    instant and stop at the same one (the limit lowered here for speed)."""
    from serq.sim import compiled_loop, core

    assert CLOCK_STOPS in DOC
    monkeypatch.setattr(core, "INSTANT_LIMIT", 1000)
    monkeypatch.setattr(compiled_loop, "INSTANT_LIMIT", 1000)
    code, span, message = failure_on_both_paths(CLOCK_STOPS, "<stop>")[0]
    assert code == "E-run"
    assert message.startswith("the clock stops at 1e+20: 1,001 events at that instant")
    assert (span.line, span.column) == (3, 25)  # the loop that repeats the work


@pytest.mark.parametrize("sessions", [1, 3])
def test_a_loop_around_a_hold_admitted_at_once_is_a_livelock_on_both_paths(sessions):
    """A loop whose only blocking point is a hold that fits is admitted again and again at
    one instant: the settle counts its rounds (and the generated code, which admits a
    lone session where it joins, the loop's turns), and both paths stop at the loop.
    Several sessions taking turns at a pool of cap 1 never leave the settle's first
    round: the count of admissions at one instant stops them."""
    text = HOLD_LOOP if sessions == 1 else HOLD_LOOP.replace("cap 4", "cap 1").replace(
        "poisson(1)", f"batch({sessions})"
    )
    assert HOLD_LOOP.strip() in DOC
    code, line, column, message, notes = _fails_alike_on_both_paths(text)
    assert (code, line, column, message) == (
        "E-run", 3, 11, LOOP_WITHOUT_TIME
    )
    assert notes[0].startswith(f"in session {0 if sessions == 1 else 1};")


def test_a_loop_at_a_ps_stage_of_capacity_inf_stops_the_clock_on_both_paths(monkeypatch):
    """A ps stage of capacity inf serves a job at once: a loop of runs there is a run of
    events at one instant, stopped as a clock that stops, with the same words on both
    paths (the limit lowered here for speed)."""
    from serq.sim import compiled_loop, core

    monkeypatch.setattr(core, "INSTANT_LIMIT", 1000)
    monkeypatch.setattr(compiled_loop, "INSTANT_LIMIT", 1000)
    text = (
        "stage s : ps(inf);\nworkload { arrive poisson(1); }\n"
        "session { loop { run s (1); } }\nrun { horizon 100; }\n"
    )
    code, line, column, message, notes = _fails_alike_on_both_paths(text)
    assert code == "E-run"
    assert message.startswith("the clock stops at ")
    assert "a run at a ps stage of capacity inf" in message
    assert (line, column) == (3, 11)  # the loop, in the session whose runs repeat
    assert notes[0].startswith("in session 0;")


@pytest.mark.parametrize("arrive", ["batch(3)", "closed(2)", "renewal(1)"])
def test_a_clock_that_stops_names_the_loop_that_repeats(monkeypatch, arrive):
    """The clock-stop error names the loop of a session whose work repeats at the instant
    (one of those ready, pending or at the ps stage), the same on both paths; a session
    in no loop (a closed population whose sessions end at once and come back) leaves it
    at the workload, which repeats them."""
    from serq.sim import compiled_loop, core

    monkeypatch.setattr(core, "INSTANT_LIMIT", 1000)
    monkeypatch.setattr(compiled_loop, "INSTANT_LIMIT", 1000)
    text = (
        f"stage s : ps(inf);\nstage d : delay;\nworkload {{ arrive {arrive}; }}\n"
        "session {\n  run d (1);\n  loop {\n    run s (1);\n    run d (0);\n  }\n}\n"
        "run { horizon 100; }\n"
    )
    code, line, column, message, _ = _fails_alike_on_both_paths(text)
    assert (code, line, column) == ("E-run", 6, 3)
    assert message.startswith("the clock stops at ")
    closed = (
        "stage s : ps(inf);\nworkload { arrive closed(2); }\nsession { run s (1); }\n"
        "run { horizon 100; }\n"
    )
    code, line, column, message, _ = _fails_alike_on_both_paths(closed)
    assert (code, line, column) == ("E-run", 2, 12)
    assert message.startswith("the clock stops at 0: ")


ZERO_COST_ENGINE = """pool kv { cap inf; admit via engine; }
stage engine : step { budget 1; cost 0; memory kv; }
workload { arrive batch(1); }
session { hold kv (1) { run engine prefill (1e8) growing kv; } }
run { horizon 10; }
"""


@pytest.mark.parametrize(
    "edit",
    [
        (),
        (("budget 1; cost 0;", "budget 1e-9; cost (-0); serve exclusive prefill;"),
         ("(1e8)", "(12)")),
        (("arrive batch(1);", "arrive renewal(1);"),),
        (("pool kv { cap inf;", "stage E2 : step { budget 4; cost 1; }\npool kv { cap inf;"),),
    ],
)
def test_a_clock_stopped_by_iterations_of_no_time_names_the_engine(monkeypatch, edit):
    """A step engine whose iterations cost 0 runs them one after another at one instant: a
    prefill of 10^8 tokens at a budget of 1 is 10^8 events there. With no session in a
    loop the clock-stop error points at the engine's cost and names the engine, the same
    on both paths, stepped or not (it pointed at the workload's `arrive`)."""
    from serq.sim import compiled_loop, core

    assert ZERO_COST_ENGINE in DOC
    monkeypatch.setattr(core, "INSTANT_LIMIT", 1000)
    monkeypatch.setattr(compiled_loop, "INSTANT_LIMIT", 1000)
    text = ZERO_COST_ENGINE
    for a, b in edit:
        text = text.replace(a, b)
    code, line, column, message, _ = _fails_alike_on_both_paths(text)
    # the cost's expression (inside its parentheses)
    where = text.index("cost 0") + 5 if "cost 0" in text else text.index("cost (-0)") + 6
    assert (code, line) == ("E-run", text.count("\n", 0, where) + 1)
    assert column == where - text.rfind("\n", 0, where)
    assert message.startswith("the clock stops at ")
    assert message.endswith(
        "; here step stage `engine` runs iterations that cost 0, one after another"
    )
    compiled_program, _ = sim_api.compile_program(text, "t.sq")
    report, ran = sim_api.execute(compiled_program, fast_forward=False)
    assert report is None and [(d.span.line, d.message) for d in ran] == [(line, message)]


def _fails_alike_on_both_paths(text: str) -> tuple:
    """The one diagnostic the run of `text` ends with, (code, line, column, message,
    notes), the same on the generated code and on the interpreter."""
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    said = []
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is None
        [d] = ran
        said.append((d.code, d.span.line, d.span.column, d.message, d.notes))
    assert said[0] == said[1]
    return said[0]


ENDLESS = {
    # one fifo(1) server, the straight path's shape: everything after it queues
    "fifo": (
        "stage s : fifo(1);\nworkload { arrive poisson(1); }\n"
        "session { run s (serial == 3 ? inf : ~exp(0.5)); observe d = now; }\n"
        "run { horizon 50; seed 1; }\n",
        "stage `s` has kept a server for session 3's job of infinite work since t = ",
        "; it never completes, and ",
    ),
    # the same on the general path (an init block and a trailing `end;`), work 1/0
    "fifo(2)": (
        "stage s : fifo(2);\nworkload { arrive poisson(1); init { set t0 = now; } }\n"
        "session { run s (serial == 3 ? 1 / 0 : ~exp(0.5)); observe d = now - t0; end; }\n"
        "run { horizon 50; seed 1; }\n",
        "stage `s` has kept a server for session 3's job of infinite work since t = ",
        "; it never completes",
    ),
    "ps": (
        "stage s : ps(1);\nworkload { arrive poisson(0.5); }\n"
        "session { run s (serial == 3 || serial == 7 ? inf : ~exp(0.5)); }\n"
        "run { horizon 50; seed 1; }\n",
        "stage `s` has shared its capacity with session 3's job of infinite work (and 1 more)",
        "; it never completes",
    ),
    # a flow over two ps stages (`run a, b (w)`), named at its first stage
    "flow": (
        "stage up : ps(1);\nstage down : ps(2);\nshare maxmin;\n"
        "workload { arrive poisson(0.5); }\n"
        "session { run up, down (serial == 2 ? inf : ~exp(0.5)); }\n"
        "run { horizon 50; seed 1; }\n",
        "stage `up` has shared its capacity with session 2's job of infinite work since t = ",
        "; it never completes",
    ),
    # a delay inside a hold: the pool is held for ever, the others queue at it
    "delay": (
        "pool p { cap 1; }\nstage d : delay;\nworkload { arrive poisson(1); }\n"
        "session { hold p (1) { run d (serial == 3 ? inf : 0.5); } }\n"
        "run { horizon 50; seed 1; }\n",
        "stage `d` has held session 3's job of infinite work since t = ",
        "; the session never comes back",
    ),
}


@pytest.mark.parametrize("name", sorted(ENDLESS))
@pytest.mark.parametrize("codegen", [True, False])
@pytest.mark.parametrize("straight_path", [True, False])
def test_a_job_of_infinite_work_is_a_warning_with_the_report(
    monkeypatch, name, codegen, straight_path
):
    """A run of work inf is legal and never completes: the run goes on to the horizon and
    the report comes with a `W-stall` at the stage, naming the first such job, on every
    event path (the straight loop, the generated code, the interpreter)."""
    from serq.sim import straight

    monkeypatch.setattr(straight, "ENABLED", straight_path)
    text, start, end = ENDLESS[name]
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    report, ran = sim_api.execute(compiled, codegen=codegen)
    assert report is not None and report.end == 50
    [d] = ran
    assert (d.code, d.span.line) == ("W-stall", text[: text.index(" : ")].count("\n") + 1)
    assert d.message.startswith(start) and end in d.message, d.message
    # the numbers are the reference's: a warning changes none
    plain = sim_api.execute(compiled, codegen=not codegen)[0]
    assert plain.json() == report.json()


def test_sessions_behind_a_job_of_infinite_work_with_no_event_left_stall():
    """With no arrival left, the job of infinite work is all that is pending: nothing
    can move again. The run fails, and the warning names the job."""
    text = (
        "stage s : fifo(1);\nworkload { arrive batch(2); }\n"
        "session { run s (inf); }\nrun { horizon 100; }\n"
    )
    compiled, _ = sim_api.compile_program(text, "t.sq")
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is None
        warning, error = sorted(ran, key=lambda d: d.code, reverse=True)
        assert warning.code == "W-stall" and "session 0's job of infinite work" in warning.message
        assert error.code == "E-run"
        assert "2 sessions wait for ever (1 in a job of infinite work)" in error.message


CROSSED = """pool a { cap 1; }
pool b { cap 1; }
stage d : delay;
workload { arrive renewal(1); }
session {
  branch (serial == 0) {
    hold a (1) { run d (2); hold b (1) { run d (1); } }
  } else {
    hold b (1) { run d (0.2); hold a (1) { run d (1); } }
  }
}
run { horizon 100; }
"""


def test_a_circular_wait_that_arrivals_run_past_is_named_on_both_paths():
    """Session 0 holds `a` and waits for `b` from 3; session 1 holds `b` and waits for `a`
    from 2.2; every later arrival queues at `b`. Arrivals keep the run going to the
    horizon, so no stall rule sees it: the run ends with `W-deadlock` at the first pool
    with waiters, and the report is printed (no session ever ends)."""
    assert CROSSED.strip() in DOC
    warnings, ended = warnings_on_both_paths(CROSSED)
    assert ended == 0
    assert warnings == [
        (
            "W-deadlock",
            1,
            6,
            "100 sessions wait at the pools for ever (1 at pool `a` (used 1 of 1); 99 at "
            "pool `b` (used 1 of 1)): none of their holds fits, and every unit the pools "
            "hold is held by one of them, so nothing will ever be released; the run went "
            "on to the end with the arrivals joining them",
        )
    ]


@pytest.mark.parametrize(
    "edit",
    [
        # the pools taken in one order: no circular wait
        ("hold b (1) { run d (0.2); hold a (1)", "hold a (1) { run d (0.2); hold b (1)"),
        # room for both: nobody waits for ever
        ("pool a { cap 1; }", "pool a { cap 2; }"),
        # units that read the pool may fit later: the rule proves nothing and says nothing
        ("hold a (1) { run d (1); }", "hold a (holders(a)) { run d (1); }"),
    ],
)
def test_no_circular_wait_is_named_where_the_rule_proves_none(edit):
    text = CROSSED.replace(*edit)
    warnings, _ = warnings_on_both_paths(text)
    assert [w for w in warnings if w[0] == "W-deadlock"] == []


def test_holders_that_wait_to_grow_into_each_other_are_a_deadlock_on_both_paths():
    """Under `preempt none` two holders each wait to grow into what the other holds while
    every later session queues behind them: `W-deadlock` counts the growers among the
    waiting sessions. Under `preempt lifo` the rule says nothing (a newcomer's growth could
    preempt a holder)."""
    text = (
        "pool kv { cap 10; preempt none; }\nstage s : fifo(1);\n"
        "workload { arrive poisson(1); }\n"
        "session { hold kv (4) { run s (0.5); grow kv (3); run s (0.5); } }\n"
        "run { horizon 100; seed 1; }\n"
    )
    compiled, _ = sim_api.compile_program(text, "t.sq")
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is not None
        [d] = ran
        assert (d.code, d.span.line) == ("W-deadlock", 1)
        assert ", 2 waiting to grow at pool `kv` (used 8 of 10)" in d.message
    lifo, _ = sim_api.compile_program(text.replace("preempt none", "preempt lifo"), "t.sq")
    for codegen in (True, False):
        report, ran = sim_api.execute(lifo, codegen=codegen)
        assert report is not None and [d.code for d in ran] == []


def test_a_session_waiting_for_its_own_hold_is_a_circular_wait():
    """A hold of 2 nested in the session's own hold of 3 at a pool of cap 4 waits for
    units its own session holds: session 0 waits from 1, and every later session queues
    behind it, none fitting beside its 3 (the suite's generated program 181 is of this
    shape). With an outer hold of 2, session 1 would fit beside session 0 but for the
    queue's head: the rule proves nothing there and says nothing."""
    text = """pool p { cap 4; }
stage d : delay;
workload { arrive renewal(1); }
session { hold p (3) { hold p (2) { run d (1); } } }
run { horizon 10; }
"""
    warnings, ended = warnings_on_both_paths(text)
    assert ended == 0
    [(code, line, column, message)] = warnings
    assert (code, line, column) == ("W-deadlock", 1, 6)
    assert message.startswith(
        "10 sessions wait at the pools for ever (10 at pool `p` (used 3 of 4))"
    )
    warnings, _ = warnings_on_both_paths(text.replace("hold p (3)", "hold p (2)"))
    assert warnings == []
