"""`serq.sweep` on this process and on a local process pool: grid order, the same bytes on
1 and 2 jobs, intervals over the runs' means, failed runs as rows, Ctrl-C."""

from __future__ import annotations

import json
import math

import pytest

import serq
from serq.sweeps import executors, plan
from serq.sweeps.tstat import t_quantile
from tests.sweeps.conftest import MM1, SHORT


def sweep(**kw):
    return serq.sweep(MM1, sets={"lambda": "0.5:0.9:0.2"}, seeds=3, **SHORT, **kw)


def test_rows_in_grid_order_and_intervals_over_replications():
    result = sweep(jobs=1)
    assert result.complete and result.parameters == ("lambda",) and result.seeds == (1, 2, 3)
    assert [(r["point"], r["lambda"], r["seed"]) for r in result.runs] == [
        (p, lam, s) for p, lam in enumerate((0.5, 0.7, 0.9)) for s in (1, 2, 3)
    ]
    for point in result.points:
        means = [r["sojourn"] for r in result.runs if r["point"] == point["point"]]
        assert point["runs"] == 3 and point["failed"] == 0 and point["error"] == ""
        assert point["sojourn"] == pytest.approx(sum(means) / 3, rel=1e-15)
        s = math.sqrt(sum((m - point["sojourn"]) ** 2 for m in means) / 2)
        assert point["sojourn_ci"] == pytest.approx(t_quantile(0.975, 2) * s / math.sqrt(3))
    distinct = {r["sojourn"] for r in result.runs}
    assert len(distinct) == 9  # every seed is its own run


def test_one_job_and_two_jobs_give_the_same_bytes(tmp_path):
    one, two = sweep(jobs=1), sweep(jobs=2)
    assert one.to_csv() == two.to_csv() and one.to_csv(runs=True) == two.to_csv(runs=True)
    assert one.to_json() == two.to_json()
    for name, result in (("one", one), ("two", two)):
        result.write(tmp_path / f"{name}.csv")
        result.write(tmp_path / f"{name}.json")
    for suffix in (".csv", ".runs.csv", ".json"):
        assert (tmp_path / f"one{suffix}").read_bytes() == (tmp_path / f"two{suffix}").read_bytes()


def test_a_concurrent_futures_executor_is_accepted():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        assert sweep(executor=pool).to_json() == sweep(jobs=1).to_json()


def test_seed_list_and_the_programs_own_seed():
    listed = serq.sweep(MM1, sets={"lambda": [0.5]}, seeds=[7, 3], jobs=1, **SHORT)
    assert [r["seed"] for r in listed.runs] == [7, 3]
    own = serq.sweep(MM1, sets={"lambda": 0.5}, jobs=1, **SHORT)
    assert [r["seed"] for r in own.runs] == [1]  # mm1.sq's run block: seed 1
    assert own.points[0]["sojourn_ci"] == math.inf
    assert own.runs[0]["sojourn"] == serq.run(
        serq.compile(MM1, sets={"lambda": 0.5}, seed=1, **SHORT)
    ).observe("sojourn").mean


def test_a_failed_point_is_a_row_and_the_sweep_goes_on(guarded):
    result = serq.sweep(guarded, sets={"c": "1,3,5,2"}, seeds=2, jobs=2)
    assert [p["c"] for p in result.points] == [1, 3, 5, 2]
    assert [(p["runs"], p["failed"]) for p in result.points] == [(2, 0), (0, 2), (0, 2), (2, 0)]
    bad = result.points[1]
    assert "E-run" in bad["error"] and "guard" in bad["error"] and "guarded.sq:4:" in bad["error"]
    assert math.isnan(bad["sojourn"]) and result.failed == 4
    document = json.loads(result.to_json())
    assert document["points"][1]["sojourn"] is None and document["complete"] is True


def test_a_point_that_does_not_check_stops_the_sweep_before_any_run(servers, monkeypatch):
    """`c=0` and `c=-1` (fifo(0), fifo(-1)) fail `serq check --set c=...`: the sweep says so
    naming each point, before running the good ones, wherever they are in the grid."""
    ran = []
    monkeypatch.setattr(executors, "run_task", lambda task: ran.append(task))
    with pytest.raises(ValueError) as error:
        serq.sweep(servers, sets={"c": "1,2,0,-1", "rate": "0.5,0.6"}, seeds=3, jobs=1)
    message = str(error.value)
    assert ran == []
    assert message.count("error[E-constant]") == 2 and "servers.sq:1:5" in message
    assert "at 2 of the 8 grid points: (c=0, rate=0.5), (c=0, rate=0.6)" in message
    assert "(c=-1, rate=0.5), (c=-1, rate=0.6)" in message
    assert "c=1," not in message and "c=2," not in message


def test_each_distinct_point_is_checked_once_whatever_the_seeds(servers, monkeypatch):
    from serq.sim import api as sim_api

    compiled, real = [], sim_api.compile_program
    monkeypatch.setattr(sim_api, "compile_program", lambda *a, **k: compiled.append(k["sets"]) or real(*a, **k))
    result = serq.sweep(servers, sets={"c": "1,2,1"}, seeds=4, jobs=1)
    assert len(result.runs) == 12 and result.failed == 0
    assert compiled == [{"c": "1"}, {"c": "2"}]  # the runs reuse what the check compiled


def test_values_the_program_cannot_take_stop_before_any_run(servers):
    with pytest.raises(ValueError, match="unknown `sets` argument or constant `nope`"):
        serq.sweep(servers, sets={"nope": "1,2"}, jobs=1)
    with pytest.raises(ValueError, match="not one expression|E-parse"):
        serq.sweep(servers, sets={"c": "1,2 3"}, jobs=1)
    with pytest.raises(ValueError, match="STEP is 0"):
        serq.sweep(servers, sets={"c": "1:2:0"}, jobs=1)
    for seeds in (0, [], [1, -2], [1.5]):
        with pytest.raises(ValueError, match="at least one seed"):
            serq.sweep(servers, seeds=seeds, jobs=1)


def test_a_program_with_errors_stops_before_any_run(tmp_path):
    broken = tmp_path / "broken.sq"
    broken.write_text("stage s : fifo(1);\nsession { run t (1); }\n", encoding="utf-8")
    checked, diagnostics, known = plan(broken.read_text(), str(broken), {})
    assert checked is None and diagnostics and str(broken) in known


def test_ctrl_c_keeps_the_runs_done(monkeypatch):
    calls = []

    def interrupted(task):
        if len(calls) == 4:
            raise KeyboardInterrupt
        calls.append(task.index)
        return real(task)

    real = executors.run_task
    monkeypatch.setattr(executors, "run_task", interrupted)
    result = sweep(jobs=1)
    assert not result.complete and len(result.runs) == 4
    assert [(p["point"], p["runs"]) for p in result.points] == [(0, 3), (1, 1)]


def test_sweep_result_in_a_notebook():
    result = sweep(jobs=1)
    html = result._repr_html_()
    assert html.startswith("<table>") and "<th>lambda</th>" in html and "sojourn" in html
    assert html.count("<tr>") == 1 + 3
    frame = result.to_pandas()
    assert list(frame.columns) == result.columns() and len(frame) == 3
    assert list(frame["lambda"]) == [0.5, 0.7, 0.9]
    assert len(result.to_pandas(runs=True)) == 9


STUCK = """\
let stuck = 0;
stage server : fifo(1);
workload { arrive poisson(0.5); }
session { set a = now; run server (serial == 3 && stuck > 0 ? inf : ~exp(1)); observe sojourn = now - a; }
run { horizon 200; warmup 0; seed 1; }
"""


def test_a_run_that_stopped_moving_says_so_in_its_row(tmp_path):
    """A point where the run finished but a server kept a job of infinite work: its rows
    carry the W-stall on one line (`warning`), in every format, and the table shows it; the
    other point's rows have none."""
    path = tmp_path / "stuck.sq"
    path.write_text(STUCK, encoding="utf-8")
    result = serq.sweep(str(path), sets={"stuck": "0:1:1"}, seeds=2, jobs=1)
    fine, stuck = result.points
    assert fine["warning"] == "" and fine["failed"] == 0
    assert stuck["failed"] == 0 and "W-stall" in stuck["warning"]
    assert "job of infinite work" in stuck["warning"] and "stuck.sq:2:" in stuck["warning"]
    assert [bool(r["warning"]) for r in result.runs] == [False, False, True, True]
    assert "warning" in result.to_csv().splitlines()[0].split(",")
    assert json.loads(result.to_json())["points"][1]["warning"] == stuck["warning"]
    assert "warning" in [c.header for c in result.table().columns]
    assert "job of infinite work" in result._repr_html_()


def test_only_an_error_names_the_grid_points_it_is_found_at():
    """A note names the points of an error found at some of them; a warning (the program's,
    found at the points that passed too) and an error found at every point name none."""
    from serq.diagnostics import Diagnostic, Span, codes
    from serq.sweeps.checks import _with_points
    from serq.sweeps.grid import Point

    where = Span.point("p.sq", 0, 1, 1)
    grid = [Point(k, (("c", str(k)),), (("c", k),)) for k in range(3)]
    error = Diagnostic.error(codes.CONSTANT, where, "bad")
    warning = Diagnostic.warning(codes.STALL, where, "stuck")
    assert _with_points(error, grid[2:], 3).notes == (
        "at the grid point (c=2); the sweep checks every point before it runs any",
    )
    assert "at 2 of the 3 grid points: (c=0), (c=2)" in _with_points(error, grid[::2], 3).notes[0]
    assert _with_points(error, grid, 3) is error and _with_points(warning, grid[2:], 3) is warning


# a job of infinite work at w = inf: the sessions behind it never drain, so the run fails
# (E-run) and its W-stall says why
UNDRAINED = """\
let w = 1;
stage s : fifo(1);
workload { arrive poisson(1); }
session { run s (w); }
run { horizon 50; arrivals 3; }
"""


def test_a_failed_run_keeps_its_warning_which_says_why(tmp_path):
    """A failed run's rows kept only its error: the W-stall behind it (what `serq run`
    prints beside the error) was lost, in the rows and the point."""
    path = tmp_path / "undrained.sq"
    path.write_text(UNDRAINED, encoding="utf-8")
    result = serq.sweep(str(path), sets={"w": "1,inf"}, seeds=1, jobs=1)
    fine, failed = result.points
    assert (fine["failed"], fine["error"], fine["warning"]) == (0, "", "")
    assert failed["failed"] == 1 and "E-run" in failed["error"]
    assert "W-stall" in failed["warning"] and "job of infinite work" in failed["warning"]
    assert "undrained.sq:2:" in failed["warning"]  # at the stage
    assert result.runs[1]["warning"] == failed["warning"]
