"""Ctrl-C of a sweep on a Dask cluster: each run in progress says why it had not ended,
as in a local pool (tests/sweeps/test_sweep_ctrl_c_says_why_runs_had_not_ended.py).

A Dask worker runs its tasks in threads that no signal reaches; before round 20 the runs
in progress were cancelled (and went on, unreported, on their workers). Now every worker
raises `KeyboardInterrupt` in the threads of the sweep's runs (`worker.stop_dask_runs`),
which stops each as `serq run` is stopped, and begins none of its runs after that.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import pytest

import serq
from serq.sweeps import stopping, worker
from tests.cpu_wait import _cpu
from tests.sweeps.conftest import ROOT
from tests.sweeps.test_sweep_ctrl_c_says_why_runs_had_not_ended import (
    ENDLESS,
    _kept,
    _says_why,
)


@pytest.fixture
def endless(tmp_path) -> str:
    path = tmp_path / "endless.sq"
    path.write_text(ENDLESS, encoding="utf-8")
    return str(path)


def _worker_pids(cluster) -> list[int]:
    from distributed import Client

    with Client(cluster) as client:
        return list(client.run(os.getpid).values())


def _when_busy(pids: list[int], seconds: float, then) -> threading.Thread:
    """Call `then()` once the processes `pids` have used `seconds` more CPU between them
    (the endless runs at work, whatever the machine's load), within two minutes."""
    before = sum(_cpu(p) for p in pids)

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sum(_cpu(p) for p in pids) - before < seconds:
            time.sleep(0.05)
        then()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def test_serq_sweep_dask_says_why_each_run_in_progress_had_not_ended(cluster, endless, tmp_path):
    out = str(tmp_path / "r.csv")
    argv = [sys.executable, "-m", "serq.cli", "sweep", endless, "--set", "endless=0,inf",
            "--seeds", "2", "--dask", cluster.scheduler_address, "--out", out,
            "--color", "never"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _when_busy(_worker_pids(cluster), 3.0, lambda: child.send_signal(signal.SIGINT))
        asked = time.monotonic()
        _, err = child.communicate(timeout=180)
        took = time.monotonic() - asked
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    err = err.decode()
    assert child.returncode == 130, err
    _says_why(err, endless, [1, 2])
    assert "2 of 4 runs (2 points × 2 seeds)" in err and f"dask {cluster.scheduler_address}" in err
    assert took < 150, took
    _kept(out)


def test_serq_sweep_on_a_client_keeps_the_interrupted_runs(cluster, endless):
    """From Python: the result lists the runs in progress with what they had found, and
    the workers are free again (a sweep after it runs at once)."""
    from distributed import Client

    main = threading.get_ident()
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with Client(cluster) as client:
            pids = list(client.run(os.getpid).values())
            _when_busy(pids, 3.0, lambda: signal.pthread_kill(main, signal.SIGINT))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = serq.sweep(endless, sets={"endless": "0,inf"}, seeds=2,
                                    executor=client)
            assert not result.complete and sorted(r["seed"] for r in result.runs) == [1, 2]
            assert sorted(run.seed for run in result.interrupted) == [1, 2]
            for run in result.interrupted:
                assert run.point.sets == (("endless", "inf"),) and run.now > 0
                assert [d.code for d in run.found] == ["W-stall", "W-stall"]
            told = [str(w.message) for w in caught if issubclass(w.category, serq.RunWarning)]
            assert len(told) == 4
            again = serq.sweep(endless, sets={"endless": "0"}, seeds=2, executor=client)
            assert again.complete and len(again.runs) == 2
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_dask_run_of_a_stopped_sweep_is_not_begun(monkeypatch):
    task = worker.RunTask(0, 0, ENDLESS, "endless.sq", (), 1)
    monkeypatch.setattr(stopping, "_stopped", {"s1"})
    called = []
    outcome = worker.dask_interruptible(called.append, "s1", task)
    assert (outcome.interrupted, outcome.started, called) == (True, False, [])


def test_stop_dask_runs_interrupts_the_sweeps_own_threads_once():
    """Two runs in threads, of two sweeps: stopping one sweep interrupts its run alone,
    once (a second stop does not cut the findings short), and the other ends normally."""
    task = worker.RunTask(0, 0, ENDLESS, "endless.sq", (("endless", "inf"),), 1)
    started = threading.Barrier(3)
    outcomes: dict[str, worker.RunOutcome] = {}
    stop_other = threading.Event()

    def spin(_task):
        started.wait()
        while not stop_other.is_set():
            time.sleep(0.001)
        return worker.RunOutcome(_task.index)

    def interrupted_after_a_second_stop(_task):
        started.wait()
        try:
            while True:
                time.sleep(0.001)
        except KeyboardInterrupt:
            assert worker.stop_dask_runs("a") == []  # asked already: not again
            time.sleep(0.05)
            raise

    def go(name, function):
        outcomes[name] = worker.dask_interruptible(function, name, task)

    threads = [threading.Thread(target=go, args=("a", interrupted_after_a_second_stop)),
               threading.Thread(target=go, args=("b", spin))]
    for thread in threads:
        thread.start()
    started.wait()
    assert worker.stop_dask_runs("a") == [0]  # the index of the run it interrupted
    threads[0].join(10)
    stop_other.set()
    threads[1].join(10)
    assert outcomes["a"].interrupted and outcomes["a"].started
    assert not outcomes["b"].interrupted
    assert stopping._runs == {} and stopping._asked == set()


def test_a_stop_that_python_drops_in_a_finaliser_is_raised_again(monkeypatch):
    """A stop landing in a finaliser (or Dask's garbage-collector callback) is printed and
    dropped by Python; the run it was meant for is stopped all the same."""

    class Finaliser:
        def __del__(self):
            raise KeyboardInterrupt  # where the stop lands

    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)
    stopping.keep_dropped_interrupts()
    stopped = []

    def run() -> None:
        stopping.asked()  # as the pool worker's signal handler does, before it raises
        Finaliser()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.001)

    def go() -> None:
        try:
            stopping.run_registered("f", run)
        except KeyboardInterrupt:
            stopped.append(True)

    thread = threading.Thread(target=go)
    started = time.monotonic()
    thread.start()
    thread.join(20)
    assert stopped == [True] and time.monotonic() - started < 5
    assert stopping._runs == {} and stopping._asked == set()
