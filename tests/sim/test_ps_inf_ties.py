"""Jobs that join a ps(inf) stage at one instant finish at that instant in the order they
started (spec §3: "jobs of a ps stage with equal finish tags finish in the order they
started"; at ps(inf) every job's service takes no time).

pyserq 0.1.2 finishes them in another order when the first job's completion was already
scheduled as the others joined: four sessions leaving a delay at t = 1 one event after
another finish there as 1, 2, 3, 0 (at ps(1e9) as 0, 1, 2, 3). What fits: its virtual
time advances by 0 · inf, a NaN with the sign bit set, which its order puts before every
number, so every job after the first has a NaN finish tag and goes ahead of it. The spec
decides for the order of starting (NOTES.md §21; inline family program 1808, reduced).
"""

from __future__ import annotations

import json

from serq.sim import api as sim_api

PROGRAM = """
stage s : ps(inf);
stage think : delay;
workload { arrive batch(4); }
session {
  run think (1);
  run s (1);
  observe f = serial;
}
run { horizon 40; warmup 0; seed 1; }
"""


def test_jobs_joining_ps_inf_at_one_instant_finish_in_the_order_they_started():
    compiled, diagnostics = sim_api.compile_program(PROGRAM, "t.sq")
    assert compiled is not None, diagnostics
    runs = []
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is not None, ran
        runs.append(json.loads(report.json()))
        f = report.observe("f")
        assert list(f.times) == [1.0] * 4
        assert list(f.samples) == [0.0, 1.0, 2.0, 3.0]
    assert runs[0] == runs[1]
