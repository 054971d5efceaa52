"""A run interrupted by Ctrl-C names every part of the deployment that had stopped moving.

The live notice of round 18 (a1c3635, d7ad2c7, c80dc95) named a livelock only: a hold
that can never grow, preempted and executed again with nothing else holding the pool.
The other ways a run stops moving were found only when it reached its horizon, so a
run interrupted before then (Ctrl-C in `serq run`, a notebook's stop in `serq.run`, the
editor's Run at its time limit) said "interrupted at t = T" and nothing else, though
part of the deployment had stopped long before:

- a job of infinite work keeping a fifo server, the arrivals piling up behind it;
- sessions waiting at the pools for ever (W-deadlock) while the arrivals go on;
- a step iteration that never ends (its W-stall was found as it started, and said at
  the end only);
- a session preempted again and again beside another holder that never releases (the
  report's `stuck` note, which an interrupted run never prints);
- a clock that stopped (work that takes no time, repeated), which fails the run only
  after 10,000,000 events at one instant, about 20 s here.

The run now raises `serq.sim.Interrupted` (a KeyboardInterrupt) with what the end of the
run would say for the state it reached (and `execute` a note of a clock that had not
moved over its latest progress calls); `serq run` prints it, `serq.run` warns of it;
and the iteration that never ends is noticed at once, as a livelock is.
"""

from __future__ import annotations

import warnings

import pytest

from serq import cli
from serq.cli import main
from serq.sim import Interrupted
from serq.sim import api as sim_api
from tests.cli.test_livelock_notice import _Tty

# session 3's run at `s` never completes; every later arrival waits behind it
INFINITE_JOB = """\
stage s : fifo(1);
stage t : fifo(1);
workload { arrive poisson(1); }
session { run t (0.5); run s (serial == 3 ? inf : 0.5); }
run { horizon 1e9; }
"""

# sessions 0 and 1 take the pools in opposite orders; the others go on past them
DEADLOCK = """\
pool a { cap 1; }
pool b { cap 1; }
stage s : fifo(1);
workload { arrive poisson(1); }
session {
  branch (serial == 0) {
    hold a (1) { run s (1); hold b (1) { run s (1); } }
  } else {
    branch (serial == 1) { hold b (1) { run s (1); hold a (1) { run s (1); } } } else { run s (0.1); }
  }
}
run { horizon 1e9; }
"""

# the fourth resident makes the iteration's cost inf: engine E never serves again
ENDLESS_ITERATION = """\
pool kv { cap 100; }
stage E : step { budget 8; cost residents > 3 ? inf : 1; memory kv; }
workload { arrive poisson(1); }
session { hold kv (4) { run E prefill (4) growing kv; run E decode (4) growing kv; } }
run { horizon 1e9; }
"""

# session 0 holds 4 of kv for ever (a delay of inf); session 1 grows to 8 beside it and is
# preempted and executed again at every round: a livelock the warning does not name
# (something else holds the pool), counted in the report's `stuck`
STUCK_BESIDE = """\
pool kv { cap 10; preempt lifo; }
stage s : fifo(1);
stage d : delay;
workload { arrive batch(2); }
session {
  hold kv (4) { run d (serial == 0 ? inf : 0); run s (1); grow kv (4); run s (1); }
}
run { horizon 1e12; }
"""


def _interrupted(text: str, codegen: bool, at: float = 1000.0) -> Interrupted:
    """The `Interrupted` of a run of `text` stopped once its clock passes `at`."""
    compiled, diagnostics = sim_api.compile_program(text, "stopped.sq")
    assert compiled is not None and not diagnostics

    def progress(now: float) -> None:
        if now > at:
            raise KeyboardInterrupt  # the user's Ctrl-C

    with pytest.raises(Interrupted) as caught:
        sim_api.execute(compiled, progress=progress, codegen=codegen)
    assert caught.value.now > at
    return caught.value


@pytest.mark.parametrize("codegen", [True, False])
def test_a_job_of_infinite_work(codegen):
    stop = _interrupted(INFINITE_JOB, codegen)
    [found] = stop.found
    assert (found.code, found.span.line, found.span.column) == ("W-stall", 1, 7)
    assert "stage `s` has kept a server for session 3's job of infinite work" in found.message
    assert found.message.endswith("behind it until the run was interrupted")


@pytest.mark.parametrize("codegen", [True, False])
def test_sessions_waiting_at_the_pools_for_ever(codegen):
    stop = _interrupted(DEADLOCK, codegen)
    [found] = stop.found
    assert (found.code, found.span.line) == ("W-deadlock", 1)
    assert "wait at the pools for ever" in found.message
    # every live session in the wait, or the two beside the others then live
    assert "(1 at pool `a` (used 1 of 1" in found.message
    assert found.message.endswith(("until it was interrupted", "until the run was interrupted"))


@pytest.mark.parametrize("codegen", [True, False])
def test_an_iteration_that_never_ends(codegen):
    stop = _interrupted(ENDLESS_ITERATION, codegen)
    [found] = stop.found
    assert (found.code, found.span.line) == ("W-stall", 2)
    assert found.message.startswith("an iteration of `E` costs inf, so it never ends")
    assert found.message.endswith("from t = 2 to the interruption")


@pytest.mark.parametrize("codegen", [True, False])
def test_a_session_stuck_beside_another_holder(codegen):
    stop = _interrupted(STUCK_BESIDE, codegen)
    endless, stuck = stop.found
    assert endless.code == "W-stall" and "session 0's job of infinite work" in endless.message
    assert (stuck.severity.label, stuck.code, stuck.span.line) == ("note", "W-stall", 6)
    assert "1 session was preempted again" in stuck.message
    assert "while other sessions held the pool (the first, session 1" in stuck.message


def test_the_iteration_that_never_ends_is_noticed_as_it_starts():
    compiled, _ = sim_api.compile_program(
        ENDLESS_ITERATION.replace("horizon 1e9", "horizon 100"), "endless.sq"
    )
    told = []
    report, ran = sim_api.execute(compiled, notice=told.append)
    assert report is not None
    assert [d.code for d in told] == [d.code for d in ran] == ["W-stall"]
    assert told[0].span == ran[0].span
    assert told[0].message + " to the end of the run" == ran[0].message


def test_a_run_that_ends_says_the_same_as_before():
    """The end of a run keeps its words: 'to the end' where the interruption says when."""
    compiled, _ = sim_api.compile_program(
        DEADLOCK.replace("horizon 1e9", "horizon 100"), "deadlock.sq"
    )
    report, ran = sim_api.execute(compiled)
    assert report is not None
    [found] = ran
    assert found.code == "W-deadlock"
    assert found.message.endswith("the run went on to the end with the arrivals joining them")


def test_serq_run_prints_them_before_its_interrupted_line(tmp_path, monkeypatch):
    path = tmp_path / "deadlock.sq"
    path.write_text(DEADLOCK)
    stream = _Tty()
    monkeypatch.setattr(cli.sys, "stderr", stream)
    # no bar: on a loaded machine the run passes the bar's half second, and the bar's
    # redraws (cursor codes a terminal obeys) would be in the captured lines
    monkeypatch.setattr(cli._ProgressBar, "DELAY", float("inf"))
    called = cli._ProgressBar.__call__

    def ctrl_c_later(self, now):
        called(self, now)
        if now > 1000:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli._ProgressBar, "__call__", ctrl_c_later)
    assert main(["run", str(path), "--color", "never"]) == 130
    lines = stream.getvalue().splitlines()
    assert any(line.startswith("warning[W-deadlock]: ") for line in lines), lines
    assert f" --> {path}:1:6" in lines
    assert lines[-1].startswith("serq: interrupted at t = ")


def test_serq_run_from_python_warns_of_them_before_the_interrupt(tmp_path, monkeypatch):
    import serq

    path = tmp_path / "job.sq"
    path.write_text(INFINITE_JOB)
    program = serq.compile(str(path))

    def progress(now: float) -> None:
        if now > 1000:
            raise KeyboardInterrupt

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            serq.run(program, progress=progress)
    messages = [str(w.message) for w in caught if issubclass(w.category, serq.RunWarning)]
    assert len(messages) == 1 and "job of infinite work" in messages[0]
    assert "1 | stage s : fifo(1);" in messages[0]


# work of 1e-300 at a ps stage of 1e300 ends at the instant it starts: the clock stays at
# 0, and the run fails only after 10,000,000 events there (about 20 s)
CLOCK_STOPPED = """\
stage s : ps(1e300);
workload { arrive poisson(1); }
session { loop { run s (1e-300); } }
run { horizon 1e9; }
"""


@pytest.mark.parametrize("codegen", [True, False])
def test_a_clock_that_stopped(codegen):
    compiled, diagnostics = sim_api.compile_program(CLOCK_STOPPED, "stopped.sq")
    assert compiled is not None and not diagnostics
    calls = []

    def progress(now: float) -> None:
        calls.append(now)
        if len(calls) == 4:
            raise KeyboardInterrupt

    with pytest.raises(Interrupted) as caught:
        sim_api.execute(compiled, progress=progress, codegen=codegen)
    assert calls == [0.0] * 4 and caught.value.now == 0
    [found] = caught.value.found
    assert (found.severity.label, found.code, found.span.line) == ("note", "W-stall", 2)
    assert found.message.startswith(
        "the clock had not moved for at least 131,072 events when the run was interrupted "
        "at t = 0"
    )


def test_a_clock_that_moves_is_not_said_to_have_stopped():
    stop = _interrupted(INFINITE_JOB, True)
    assert [d.code for d in stop.found] == ["W-stall"]  # the job alone


def test_serq_run_on_a_terminal_notices_the_iteration_that_never_ends(tmp_path, monkeypatch):
    """The notice comes as the iteration starts; with nothing else pending the run then
    fails at once on its stall, so the line does not promise the horizon."""
    path = tmp_path / "endless.sq"
    path.write_text(ENDLESS_ITERATION.replace("poisson(1)", "batch(4)"))
    stream = _Tty()
    monkeypatch.setattr(cli.sys, "stderr", stream)
    assert main(["run", str(path), "--color", "never"]) == 1
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith(
        f"serq: warning[W-stall] at {path}:2:33, the run goes on (Ctrl-C stops it): "
        "an iteration of `E` costs inf, so it never ends"
    ), lines[0]
    assert lines[1].startswith("error[E-run]: the run stalls at 0")
    assert "horizon" not in lines[0]
