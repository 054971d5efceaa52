"""A local pool's worker killed from outside (the kernel's out-of-memory killer, `kill
-9`) stops `serq sweep` with a sentence and status 1, the runs done written.

Before round 19 it ended in `concurrent.futures.process.BrokenProcessPool`'s traceback
(status 1, nothing written): seen when a point whose run never ends grew a worker to
8.7 GB and the kernel killed it.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys

from tests.cpu_wait import _cpu, _tree, wait_for_cpu
from tests.sweeps.conftest import ROOT
from tests.sweeps.test_sweep_ctrl_c_says_why_runs_had_not_ended import ENDLESS


def test_a_worker_killed_stops_the_sweep_with_the_runs_done(tmp_path):
    path = tmp_path / "endless.sq"
    path.write_text(ENDLESS, encoding="utf-8")
    out = tmp_path / "r.csv"
    argv = [sys.executable, "-m", "serq.cli", "sweep", str(path), "--set", "endless=0,inf",
            "--seeds", "2", "--jobs", "2", "--out", str(out), "--color", "never"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    try:
        wait_for_cpu(child.pid, 6.0)  # both workers in the endless point's runs
        worker = max((p for p in _tree(child.pid) if p != child.pid), key=_cpu)  # at work
        os.kill(worker, signal.SIGKILL)
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
    text = err.decode()
    assert child.returncode == 1, text
    assert "Traceback" not in text and "BrokenProcessPool" not in text, text
    assert text.rstrip().endswith(
        "serq sweep: a worker process ended abruptly (killed by a signal, perhaps for lack "
        "of memory), so the sweep stopped; the runs done are kept"
    ), text
    assert "2 of 4 runs (2 points × 2 seeds)" in text
    points = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [(p["endless"], p["runs"]) for p in points] == [("0", "2")]
