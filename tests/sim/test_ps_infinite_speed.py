"""A ps stage at a rate of inf: the jobs there end at that instant, a job of infinite
work too (NOTES.md §24 at its end, and §27).

The spec gives each job φ(present)/present; when that is inf, how much work a job gets
in an instant of no length is inf · 0, which the spec leaves open. pyserq 0.1.2 ends the
job with the smallest finish tag, and after a job that ended so the next one too, at that
instant, whatever the capacity with one job fewer; serq now does the same. With two jobs
that is every job present, which is all §24's programs had, and serq ended every job
present whatever their number; with more, the capacity decides again from the job after
the next: at `ps(present > 3 ? inf : 1)` four jobs end two of them at once, five three.
Before §24, serq ended only the jobs whose tags the stage reached before its rate fell (a
job of work 5 beside one of 3 at `ps(present >= 2 ? inf : 1)` ended at 2), never ended a
job of infinite work there, and, once such a job had sat at `ps(inf)` while time passed,
gave every later job an infinite finish tag, so that no job ever ended again.
"""

from __future__ import annotations

import json

import pytest

from serq.sim import api as sim_api
from serq.sim import straight


def _program(stage: str, arrive: str, body: str, horizon: float = 50) -> str:
    if "run d " in body:
        stage += "\nstage d : delay;"
    return f"""
{stage}
workload {{ arrive {arrive}; }}
session {{
{body}
}}
run {{ horizon {horizon}; warmup 0; seed 1; }}
"""


# ps(inf) on its own, a job of infinite work first and one of work 1 every second after
# (from t = 1):
# the straight loop's shape. Every job ends as it arrives.
ALONE = _program(
    "stage up : ps(inf);",
    "renewal(1)",
    "  set t = now;\n  run up (serial == 0 ? inf : 1);\n  observe rt = now - t;",
    horizon=5,
)
# Two jobs, 5 and 3, at a capacity of inf while both are there: both end at 0.
FALLS = _program(
    "stage up : ps(present >= 2 ? inf : 1);",
    "batch(2)",
    "  set t = now;\n  run up (serial == 0 ? 5 : 3);\n  observe rt = now - t;",
)
# The same one at a time: 5 from t = 1, 3 from t = 2 (both end at 2, the later first, its
# tag the smaller), then the stage starts afresh: 3 from t = 3, 3 from t = 4.
FALLS_IN_TURN = _program(
    "stage up : ps(present >= 2 ? inf : 1);",
    "renewal(1)",
    "  set t = now;\n  run up (serial == 0 ? 5 : 3);\n  observe rt = now - t;",
    horizon=4,
)
# The order: smallest finish tag first, the job of infinite work last.
ORDER = _program(
    "stage up : ps(present >= 2 ? inf : 1);",
    "batch(4)",
    "  run up (serial == 0 ? 5 : serial == 1 ? 3 : serial == 2 ? inf : 4);\n"
    "  observe who = serial;",
)
# After the instant the stage starts afresh: a job of 3 alone at capacity 1 takes 3.
AFTER = _program(
    "stage up : ps(present >= 2 ? inf : 1);",
    "batch(3)",
    "  run d (serial == 2 ? 10 : 0);\n  set t = now;\n  run up (serial == 0 ? 5 : 3);\n"
    "  observe rt = now - t;",
)
# A job of infinite work shares capacity 1 with one of 3 (which ends at 6), then is
# alone at inf: it ends at 6 too.
SHARED_FIRST = _program(
    "stage up : ps(present >= 2 ? 1 : inf);",
    "batch(2)",
    "  set t = now;\n  run up (serial == 0 ? inf : 3);\n  observe rt = now - t;",
)
# Four jobs of 1 to 4 at a capacity of inf while more than three are there: the first
# ends at 0, and so does the next (a job that ended at infinite speed is followed at that
# instant, whatever the capacity with one fewer), then capacity 1 shares out the rest.
FALLS_AFTER_TWO = _program(
    "stage up : ps(present > 3 ? inf : 1);",
    "batch(4)",
    "  set t = now;\n  run up (serial + 1);\n  observe rt = now - t;",
)
# Five such jobs: three end at 0 (the capacity is inf with five and four), then 2 and 3.
FALLS_AFTER_THREE = _program(
    "stage up : ps(present > 3 ? inf : 1);",
    "batch(5)",
    "  set t = now;\n  run up (serial + 1);\n  observe rt = now - t;",
)
# The straight loop's shape: jobs of 0.5 every 0.25 from t = 0.25 at a capacity of inf
# with three; at 0.75 the first two end (0.125 and 0.375 left), the third is alone then
# and takes the 0.125 it has left past them.
FALLS_IN_STREAM = _program(
    "stage up : ps(present > 2 ? inf : 1);",
    "renewal(0.25)",
    "  set t = now;\n  run up (0.5);\n  observe rt = now - t;",
    horizon=0.95,
)
# A flow over two ps(inf) stages has a rate of inf, and ends at once whatever its work.
FLOW = """
stage a : ps(inf);
stage b : ps(inf);
share maxmin;
workload { arrive batch(3); }
session {
  set t = now;
  run a, b (serial == 0 ? inf : 3);
  observe rt = now - t;
}
run { horizon 50; warmup 0; seed 1; }
"""

CASES = {
    "alone": (ALONE, "rt", [1.0, 2.0, 3.0, 4.0, 5.0], [0.0] * 5),
    "falls": (FALLS, "rt", [0.0, 0.0], [0.0, 0.0]),
    "falls_in_turn": (FALLS_IN_TURN, "rt", [2.0, 2.0, 4.0, 4.0], [0.0, 1.0, 1.0, 0.0]),
    "order": (ORDER, "who", [0.0] * 4, [1.0, 3.0, 0.0, 2.0]),
    "after": (AFTER, "rt", [0.0, 0.0, 13.0], [0.0, 0.0, 3.0]),
    "shared_first": (SHARED_FIRST, "rt", [6.0, 6.0], [6.0, 6.0]),
    "flow": (FLOW, "rt", [0.0] * 3, [0.0] * 3),
    "falls_after_two": (FALLS_AFTER_TWO, "rt", [0.0, 0.0, 2.0, 3.0], [0.0, 0.0, 2.0, 3.0]),
    "falls_after_three": (
        FALLS_AFTER_THREE,
        "rt",
        [0.0, 0.0, 0.0, 2.0, 3.0],
        [0.0, 0.0, 0.0, 2.0, 3.0],
    ),
    "falls_in_stream": (FALLS_IN_STREAM, "rt", [0.75, 0.75, 0.875], [0.5, 0.25, 0.125]),
}


def _runs(text: str, monkeypatch) -> list[tuple]:
    """The report, the warnings and the run itself on every path: the generated code and
    the interpreter, each with the straight loop and without it."""
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    runs = []
    for enabled in (True, False):
        monkeypatch.setattr(straight, "ENABLED", enabled)
        for codegen in (True, False):
            report, ran = sim_api.execute(compiled, codegen=codegen)
            assert report is not None, ran
            runs.append((report, [d.code for d in ran]))
    return runs


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_job_at_a_rate_of_inf_ends_at_that_instant(case, monkeypatch):
    text, name, times, samples = CASES[case]
    runs = _runs(text, monkeypatch)
    first = json.loads(runs[0][0].json())
    for report, codes in runs:
        assert json.loads(report.json()) == first
        assert codes == []  # no job of infinite work is left: no W-stall
        seen = report.observe(name)
        assert list(seen.times) == times
        assert list(seen.samples) == samples
        assert report.ended == len(samples)


@pytest.mark.parametrize("case", sorted(set(CASES) - {"flow"}))
def test_as_the_reference_ends_them(case, tmp_path):
    """pyserq 0.1.2 gives the same times and order (its flows over ps(inf) give NaN
    times, which serq does not follow)."""
    pyserq = pytest.importorskip("pyserq")
    text, name, times, samples = CASES[case]
    path = tmp_path / "t.sq"
    path.write_text(text)
    seen = pyserq.run(pyserq.compile(str(path))).observe(name)
    assert list(seen.times) == times
    assert list(seen.samples) == samples


def test_a_job_of_infinite_work_at_a_finite_rate_still_never_ends(monkeypatch):
    """The instant of infinite speed is the only exception to W-stall's rule."""
    text = _program(
        "stage up : ps(2);",
        "batch(2)",
        "  set t = now;\n  run up (serial == 0 ? inf : 3);\n  observe rt = now - t;",
    )
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled, codegen=codegen)
        assert report is None
        assert sorted(d.code for d in ran) == ["E-run", "W-stall"]


@pytest.mark.parametrize("case", ["alone", "falls_in_turn", "falls_in_stream"])
def test_the_straight_loop_takes_them(case, monkeypatch):
    """These shapes are the straight loop's, so its own copy of the rule is the one the
    first test checks there."""
    taken = []
    real = straight.run
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1) or real(*args))
    compiled, diagnostics = sim_api.compile_program(CASES[case][0], "t.sq")
    assert compiled is not None, diagnostics
    report, ran = sim_api.execute(compiled)
    assert report is not None, ran
    assert taken
