"""Ctrl-C of a sweep names every run that was in progress, also one that gave no answer.

A run stopped by Ctrl-C answers with its clock and what it had found (the tests beside
this one). One stuck where no interrupt reaches it (a long call into C, a report of a
hundred million samples) does not answer within `executors.GRACE`: its local worker is
then terminated, or on Dask the run is cancelled and may go on on its worker. Before
round 21 such a run was dropped without a word, so the user could not tell which point
had hung. Now it is an interrupted run with `late` saying what became of it, and
`serq sweep` and `serq.sweep` name it.

A run here is a stand-in for the stuck one: it marks the file it is given as it begins,
then swallows every `KeyboardInterrupt` for a few seconds; the grace is shortened to one
second so that the tests take a few.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
import warnings
from contextlib import redirect_stderr
from pathlib import Path
from types import SimpleNamespace

import pytest

import serq
from serq.sweeps import command, executors, worker
from serq.sweeps.grid import Point
from serq.sweeps.results import InterruptedRun, SweepResult
from tests.sweeps.conftest import MM1, SHORT

STUCK = 4.0  # seconds a stuck run swallows interrupts


def stubborn(task: worker.RunTask) -> worker.RunOutcome:
    """Run 0 ends at once; any other marks itself begun in the directory
    `$STUBBORN_MARKER` and ignores Ctrl-C."""
    if task.index == 0:
        return worker.RunOutcome(0)
    deadline = time.monotonic() + STUCK
    while True:
        try:  # the marker too: Ctrl-C comes once it is there, and may land anywhere after
            (Path(os.environ["STUBBORN_MARKER"]) / str(task.index)).touch()
            while time.monotonic() < deadline:
                time.sleep(0.02)
            return worker.RunOutcome(task.index)
        except KeyboardInterrupt:  # one a worker (`worker.pool_worker`, `stopping.stop`)
            continue


def _tasks(n: int) -> list[worker.RunTask]:
    return [worker.RunTask(i, 0, "", "x.sq", (), 1) for i in range(n)]


def _begun(marker: Path, runs: int = 1) -> None:
    """Wait until `runs` stuck runs have begun."""
    deadline = time.monotonic() + 60
    while len(list(marker.iterdir())) < runs:
        assert time.monotonic() < deadline, "the stuck runs never began"
        time.sleep(0.02)


def _interrupt(runs, first: worker.RunOutcome) -> list[worker.RunOutcome]:
    """Ctrl-C between two outcomes of the stream `runs`, as `serq.sweeps.execute` has it:
    the outcomes the stream yields after it."""
    assert first.index == 0
    said = []
    try:
        said.append(runs.throw(KeyboardInterrupt()))
        said.extend(runs)
    except KeyboardInterrupt:
        pass
    return said


@pytest.fixture
def grace(monkeypatch) -> None:
    monkeypatch.setattr(executors, "GRACE", 1.0)


@pytest.fixture
def marker(tmp_path, monkeypatch) -> Path:
    """Where a stuck run marks itself as it begins (the pool's workers inherit the
    variable)."""
    path = tmp_path / "begun"
    path.mkdir()
    monkeypatch.setenv("STUBBORN_MARKER", str(path))
    return path


def test_a_pool_run_that_never_answers_is_named_terminated(marker, grace):
    runs = executors.stream(_tasks(4), None, jobs=2, function=stubborn)
    first = next(runs)
    _begun(marker, 2)
    asked = time.monotonic()
    said = _interrupt(runs, first)
    # runs 1 and 2 were stuck in the two workers; run 3, queued behind them, never
    # began: not named
    assert sorted((o.index, o.interrupted, o.late) for o in said) == [
        (1, True, executors.TERMINATED), (2, True, executors.TERMINATED)
    ]
    assert time.monotonic() - asked < STUCK  # the grace, not the stuck run, set the wait


def _point_marker(path: str | None) -> None:
    """Set `$STUBBORN_MARKER` to `path` (None: unset) in this process (a Dask worker's)."""
    if path is None:
        os.environ.pop("STUBBORN_MARKER", None)
    else:
        os.environ["STUBBORN_MARKER"] = path


def test_a_dask_run_that_never_answers_is_named_cancelled(cluster, marker, grace):
    import cloudpickle
    from distributed import Client

    module = sys.modules[__name__]
    cloudpickle.register_pickle_by_value(module)  # Dask ships `stubborn` whole
    try:
        with Client(cluster) as client:
            client.run(_point_marker, str(marker))
            runs = executors.stream(_tasks(2), client, function=stubborn)
            first = next(runs)
            _begun(marker)
            said = _interrupt(runs, first)
            assert [(o.index, o.interrupted, o.late) for o in said] == [
                (1, True, executors.CANCELLED)
            ]
            time.sleep(STUCK)  # the stuck run's thread free again for the next tests
            client.run(_point_marker, None)
    finally:
        cloudpickle.unregister_pickle_by_value(module)


def test_serq_sweep_says_which_run_never_answered(grace):
    run = InterruptedRun(Point(3, (("rate", "2"),), (("rate", "2"),)), 7, None, (),
                         executors.TERMINATED)
    result = SweepResult((), (), (), (7,), [], [], False, (run,))
    args = SimpleNamespace(file="x.sq", defs=())
    err = io.StringIO()
    with redirect_stderr(err):
        command._say_interrupted(result, args, "", False)
    assert err.getvalue() == (
        "serq sweep: the run at (rate=2), seed 7 gave no answer within 1 s of Ctrl-C, "
        "so its clock is unknown: its worker was terminated\n"
    )


def test_serq_sweep_from_python_warns_of_a_run_that_never_answered(
    marker, grace, monkeypatch
):
    monkeypatch.setattr(executors, "run_task", stubborn)
    main = threading.get_ident()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def ctrl_c() -> None:
        _begun(marker)
        signal.pthread_kill(main, signal.SIGINT)

    try:
        threading.Thread(target=ctrl_c, daemon=True).start()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = serq.sweep(MM1, sets={"lambda": "0.5"}, seeds=2, jobs=2, **SHORT)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not result.complete
    assert [(r.seed, r.late) for r in result.interrupted] == [(2, executors.TERMINATED)]
    told = [str(w.message) for w in caught if issubclass(w.category, serq.RunWarning)]
    assert told == [
        "the run at (lambda=0.5), seed 2 gave no answer within 1 s of Ctrl-C, so its clock "
        "is unknown: its worker was terminated"
    ]
