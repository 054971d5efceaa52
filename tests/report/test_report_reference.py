"""The report of the real simulator against the reference's (pyserq 0.1.2) on deterministic
programs: every field the recorder computes agrees, to rounding (events and the version
aside), the step stages' inter-token latencies too. Skipped while `serq.sim.simulate` is missing.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from serq import cli
from tests.report.conftest import FIFO, NOTED_PROGRAM, POOLS, STEP, real_simulate

pytestmark = pytest.mark.skipif(real_simulate() is None, reason="serq.sim.simulate is missing")

ROOT = Path(__file__).resolve().parents[2]
NOT_OURS = {
    "schema",
    "skipped",
    "notes",
    "serq_version",
    "events",
}

FIFO3 = """
stage gate : delay;
stage work : fifo(3);
workload { arrive batch(7); }
session {
  run gate (serial * 0.5);
  set t = now;
  run work (~det(2 + serial));
  observe sojourn = now - t;
}
gauge n = queue(work);
gauge full = busy(work) == 3;
run { horizon 12; warmup 1.5; seed 1; }
"""

PS = """
stage s : ps(2);
workload { arrive batch(5); }
session { run s (~det(1 + serial)); observe done = now; }
gauge q = queue(s);
run { horizon 9; warmup 0.5; seed 3; }
"""

CUT = """
stage server : fifo(1);
workload { arrive batch(6); }
session { run server (~det(1.5)); observe done = now; }
gauge q = queue(server);
run { horizon 5; warmup 2; seed 1; }
"""

PROGRAMS = {"fifo": FIFO, "pools": POOLS, "fifo3": FIFO3, "ps": PS, "cut": CUT, "step": STEP}


def _diff(mine, theirs, path=""):
    if isinstance(theirs, dict):
        return [
            d
            for k, v in theirs.items()
            if k not in NOT_OURS
            for d in _diff(mine[k], v, f"{path}.{k}")
        ]
    if isinstance(theirs, list):
        if len(mine) != len(theirs):
            return [f"{path}: {len(mine)} rows, the reference {len(theirs)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(mine, theirs, strict=True))
            for d in _diff(a, b, f"{path}[{i}]")
        ]
    if theirs is None or mine is None or isinstance(theirs, str):
        return [] if mine == theirs else [f"{path}: {mine!r}, the reference {theirs!r}"]
    close = math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-12)
    return [] if close else [f"{path}: {mine!r}, the reference {theirs!r}"]


def _run_both(text: str):
    pyserq = pytest.importorskip("pyserq")
    import serq

    theirs = pyserq.run(pyserq.compile(source=text))
    try:
        mine = serq.run(serq.compile(source=text))
    except ValueError as error:
        if "not simulated yet" in str(error):
            pytest.skip(f"the simulator does not run this yet: {str(error).splitlines()[0]}")
        raise
    return mine, theirs


@pytest.mark.parametrize("name", PROGRAMS)
def test_the_report_agrees_with_the_reference(name):
    mine, theirs = _run_both(PROGRAMS[name])
    assert _diff(json.loads(mine.json()), json.loads(theirs.json())) == []


@pytest.mark.parametrize("name", PROGRAMS)
def test_samples_and_change_points_agree(name):
    mine, theirs = _run_both(PROGRAMS[name])
    for o in theirs.observes.values():
        m = mine.observe(o.name)
        assert (list(m.times), list(m.sessions), list(m.turns), list(m.samples)) == (
            o.times,
            o.sessions,
            o.turns,
            o.samples,
        )
    for g in theirs.gauges.values():
        assert (list(mine.gauge(g.name).times), list(mine.gauge(g.name).values)) == (
            g.times,
            g.values,
        )


def test_a_test_never_held_is_noted():
    import serq

    report = serq.run(serq.compile(source=NOTED_PROGRAM))
    assert report.notes == ("observe hit is constant 0 over 50 samples",)


@pytest.mark.parametrize("example", sorted((ROOT / "examples").glob("*.sq")), ids=lambda p: p.name)
def test_every_example_runs_from_the_command_line(example, capsys):
    status = cli.main(["run", str(example), "--horizon", "300", "--warmup", "50", "--json"])
    captured = capsys.readouterr()
    if status == 1 and "not simulated yet" in captured.err:
        pytest.skip("the simulator does not run this yet")
    assert status == 0, captured.err
    report = json.loads(captured.out)
    assert report["schema"] == 1 and report["end"] == 300


def test_a_run_that_stopped_moving_warns_and_returns_its_report(tmp_path):
    """`serq.run` returns the report of a run that finished with a warning, and warns with
    `serq.RunWarning`, whose message is the rendered diagnostic with its position; a clean
    run warns nothing."""
    import warnings

    import serq

    path = tmp_path / "stuck.sq"
    path.write_text(
        "stage server : fifo(1);\nworkload { arrive poisson(1); }\n"
        "session { run server (serial == 3 ? inf : ~exp(2)); }\nrun { horizon 50; seed 1; }\n",
        encoding="utf-8",
    )
    with pytest.warns(serq.RunWarning) as caught:
        report = serq.run(serq.compile(str(path)))
    assert report.ended == 3 and len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("warning[W-stall]: stage `server` has kept a server for session 3")
    assert f"--> {path}:1:7" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        serq.run(serq.compile(str(ROOT / "examples" / "mm1.sq"), horizon=2000))
