"""The collector's thresholds are raised while a program runs, and only then."""

from __future__ import annotations

import gc
import threading

import pytest

from serq.sim import collector
from serq.sim.api import compile_program, execute

PROGRAM = """\
stage s : fifo(1);
workload { arrive poisson(1.3); init { set t0 = now; } }
session { run s (~exp(1)); observe sojourn = now - t0; end; }
run { horizon 60000; }
"""


def test_a_run_has_the_run_thresholds_and_gives_the_callers_back():
    seen = []
    compiled, diagnostics = compile_program(PROGRAM, "over.sq")
    assert compiled is not None, diagnostics
    before = gc.get_threshold()
    gc.set_threshold(900, 11, 12)  # the caller's own, put back after the run
    try:
        report, diagnostics = execute(
            compiled, progress=lambda now: seen.append(gc.get_threshold())
        )
        assert report is not None, diagnostics
        assert seen and set(seen) == {collector.RUN_THRESHOLDS}
        assert gc.get_threshold() == (900, 11, 12)
    finally:
        gc.set_threshold(*before)


def test_a_failed_run_gives_the_thresholds_back():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector.for_runs():
        assert gc.get_threshold() == collector.RUN_THRESHOLDS
        raise RuntimeError
    assert gc.get_threshold() == before


def test_overlapping_runs_give_them_back_when_the_last_ends():
    before = gc.get_threshold()
    first_in, second_done = threading.Event(), threading.Event()
    inside = []

    def first():
        with collector.for_runs():
            first_in.set()
            second_done.wait(10)
            inside.append(gc.get_threshold())

    t = threading.Thread(target=first)
    t.start()
    first_in.wait(10)
    with collector.for_runs():
        pass
    second_done.set()  # the second run ended while the first goes on
    t.join(10)
    assert inside == [collector.RUN_THRESHOLDS]
    assert gc.get_threshold() == before
