"""`serq sweep`: the newcomer's command, the files by suffix, exit statuses, Ctrl-C."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys

import pytest

import serq
from serq import cli
from serq.sweeps import executors
from tests.cpu_wait import wait_for_cpu
from tests.sweeps.conftest import MM1, ROOT, SHORT


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_the_newcomers_sweep_finds_the_mm1_sojourn(capsys, tmp_path):
    # the README's command (`serq sweep examples/mm1.sq --set lambda=0.5:0.9:0.1 --seeds 5
    # --out r.csv`) on a quarter of mm1.sq's horizon, to keep the suite quick
    out = tmp_path / "r.csv"
    status, table, err = run(
        capsys, "sweep", MM1, "--set", "lambda=0.5:0.9:0.1", "--seeds", "5", "--out", str(out),
        "--horizon", "5000", "--warmup", "500", "--jobs", "2", "--color", "never",
    )
    assert status == 0, err
    assert "lambda" in table and "sojourn" in table and "0.7" in table
    assert "25 of 25 runs (5 points × 5 seeds)" in err
    rows = list(csv.DictReader(out.open()))
    assert [row["lambda"] for row in rows] == ["0.5", "0.6", "0.7", "0.8", "0.9"]
    for row in rows:
        lam, mean, half = float(row["lambda"]), float(row["sojourn"]), float(row["sojourn_ci"])
        assert abs(mean - 1 / (1 - lam)) <= half, row  # M/M/1 with mu = 1
    runs = list(csv.DictReader((tmp_path / "r.runs.csv").open()))
    assert len(runs) == 25 and runs[0].keys() == {"point", "lambda", "seed", "sojourn", "error", "warning"}


@pytest.mark.parametrize("suffix", [".json", ".parquet"])
def test_other_formats(capsys, tmp_path, suffix):
    out = tmp_path / f"r{suffix}"
    argv = ["sweep", MM1, "--set", "lambda=0.5,0.8", "--seed-list", "4,2", "--horizon", "300", "--warmup", "30",
            "--jobs", "1", "--out", str(out)]
    assert run(capsys, *argv)[0] == 0
    if suffix == ".json":
        document = json.loads(out.read_text())
        assert document["seeds"] == [4, 2] and len(document["runs"]) == 4
        assert [p["lambda"] for p in document["points"]] == [0.5, 0.8]
    else:
        import pyarrow.parquet as pq

        points = pq.read_table(out).to_pylist()
        runs = pq.read_table(tmp_path / "r.runs.parquet").to_pylist()
        assert [p["lambda"] for p in points] == [0.5, 0.8] and len(runs) == 4
        assert [r["seed"] for r in runs] == [4, 2, 4, 2]


def test_usage_errors(capsys, tmp_path):
    status, _, err = run(capsys, "sweep", MM1, "--set", "lambda=1", "--out", str(tmp_path / "r.txt"))
    assert status == 2 and "suffix" in err
    status, _, err = run(capsys, "sweep", MM1, "--set", "lambda=0.5:x:0.1", "--color", "never")
    assert status == 2 and "error[E-parse]" in err and "<--set lambda>:1:12" in err
    assert "lambda=0.5:x:0.1" in err  # the value, with a caret under the fault
    status, _, err = run(capsys, "sweep", MM1, "--set", "mu=1,2", "--color", "never")
    assert status == 2 and "unknown --set argument or constant `mu`" in err
    status, _, err = run(capsys, "sweep", str(tmp_path / "none.sq"))
    assert status == 2 and "no such file" in err
    assert run(capsys, "sweep", MM1, "--seeds", "0")[0] == 2


def test_a_failed_run_exits_1_after_writing_its_row(capsys, guarded, tmp_path):
    out = tmp_path / "r.csv"
    status, table, err = run(capsys, "sweep", guarded, "--set", "c=1,3", "--jobs", "1",
                             "--out", str(out), "--color", "never")
    assert status == 1 and "1 failed" in err and "E-run" in table
    rows = list(csv.DictReader(out.open()))
    assert rows[0]["error"] == "" and "E-run" in rows[1]["error"]


@pytest.mark.parametrize(
    ("values", "status", "fault"),
    [
        ("c=1,2,0", 1, "error[E-constant]: the servers of fifo stage `server` must be"),  # out of domain
        ("c=1,2,now", 2, "error[E-constant]: `now` is a context variable"),  # reads what it may not
        ("c=1,2,server", 2, "error[E-unknown-name]: unknown name `server`"),  # cannot be applied
    ],
)
def test_a_late_point_that_does_not_check_runs_nothing(capsys, servers, tmp_path, values, status, fault):
    """The grid is checked point by point first, as `serq check --set` would: a bad third
    value stops the sweep with its diagnostic naming the point, and the status `serq check`
    gives that value (1 for a value out of its constant's domain, 2 for an override that
    cannot be applied); nothing runs, nothing is written."""
    out = tmp_path / "r.csv"
    got, table, err = run(capsys, "sweep", servers, "--set", values, "--seeds", "2", "--jobs", "1",
                          "--out", str(out), "--color", "never")
    value = values.split(",")[-1]
    assert (got, table) == (status, "") and fault in err, err
    assert f"note: at the grid point (c={value}); the sweep checks every point" in err
    assert "serq sweep:" not in err and not out.exists()
    alone = cli.main(["check", servers, "--set", f"c={value}", "--color", "never"])
    capsys.readouterr()
    assert alone == status  # the same status as `serq check` at that point


def test_ctrl_c_writes_the_runs_done(capsys, monkeypatch, tmp_path):
    real, calls = executors.run_task, []

    def interrupted(task):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(task)
        return real(task)

    monkeypatch.setattr(executors, "run_task", interrupted)
    out = tmp_path / "r.csv"
    status, _, err = run(capsys, "sweep", MM1, "--set", "lambda=0.5,0.6", "--seeds", "2",
                         "--horizon", "300", "--warmup", "30", "--jobs", "1", "--out", str(out))
    assert status == 130 and "interrupted" in err and "3 of 4 runs" in err
    assert len(list(csv.DictReader((tmp_path / "r.runs.csv").open()))) == 3
    assert [r["runs"] for r in csv.DictReader(out.open())] == ["2", "1"]


def test_sigint_stops_the_pool_and_keeps_the_file(tmp_path):
    out = tmp_path / "r.csv"
    argv = [sys.executable, "-m", "serq.cli", "sweep", MM1, "--set", "lambda=0.5:0.9:0.1",
            "--seeds", "200", "--jobs", "2", "--out", str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for_cpu(child.pid, 3.0)  # the pool at work, however loaded the machine is
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=60)
    assert child.returncode == 130, err.decode()
    assert b"Traceback" not in err and b"interrupted" in err
    runs = list(csv.DictReader((tmp_path / "r.runs.csv").open()))
    assert len(runs) < 1000
    points = list(csv.DictReader(out.open()))
    assert sum(int(p["runs"]) + int(p["failed"]) for p in points) == len(runs)


RATE_DEF = """\
let rate = 0.5;
def r(x) { x * rate }
stage server : fifo(1);
workload { arrive poisson(r(1)); }
session { set a = now; run server (~exp(1)); observe sojourn = now - a; }
run { horizon 200; warmup 0; seed 1; }
"""


def test_a_def_that_does_not_check_at_a_later_point_runs_nothing(capsys, tmp_path):
    """`--def r=x-rate` is a positive rate at `rate=0.5` and -1 at `rate=2`: the sweep
    reports it at the point, drawn in the `--def`'s own text, before running the first."""
    path = tmp_path / "rate.sq"
    path.write_text(RATE_DEF, encoding="utf-8")
    status, table, err = run(capsys, "sweep", str(path), "--set", "rate=0.5,2", "--def", "r=x-rate",
                             "--jobs", "1", "--color", "never")
    assert (status, table) == (1, "")
    assert "the poisson rate must be positive and finite, not -1" in err
    assert "let r = x-rate;" in err and "note: at the grid point (rate=2)" in err


def test_a_bad_value_of_a_program_with_syntax_errors_is_a_usage_error_as_for_check(capsys, tmp_path):
    """`serq check --set c='1;2'` of a program with a syntax error reports both and exits 2:
    so does a sweep with that value anywhere in its grid (it reported the syntax error
    alone, status 1: found by tests/fuzz/tools_search.py, seed 40, a pasted mutant)."""
    path = tmp_path / "broken.sq"
    path.write_text("let c = 1;\nstage server : fifo(c)\nworkload { arrive poisson(0.5); }\n", encoding="utf-8")
    status, table, err = run(capsys, "sweep", str(path), "--set", "c=1,1;2", "--jobs", "1", "--color", "never")
    assert (status, table) == (2, "")
    assert "expected `;`, found `workload`" in err and "<--set c>:1:11" in err
    assert "note: at the grid point (c=1;2)" in err
    assert run(capsys, "check", str(path), "--set", "c=1;2")[0] == 2


def test_one_point_and_one_seed_are_counted_in_the_singular(capsys):
    status, _, err = run(
        capsys, "sweep", MM1, "--set", "lambda=0.5", "--horizon", "200", "--warmup", "20",
        "--jobs", "1", "--color", "never",
    )
    assert status == 0, err
    assert "1 of 1 runs (1 point × 1 seed)" in err


@pytest.mark.parametrize(
    ("out", "why"),
    [("missing/r.csv", "the directory `{tmp}/missing` does not exist"),
     ("file.txt/r.csv", "`{tmp}/file.txt` is not a directory")],
    ids=["missing", "a-file"],
)
def test_an_out_file_that_cannot_be_written_stops_the_sweep_before_its_runs(
    out, why, tmp_path, capsys
):
    """Before round 20 the runs went first and their rows were lost at the end."""
    (tmp_path / "file.txt").write_text("x", encoding="utf-8")
    target = str(tmp_path / out)
    status = cli.main(["sweep", MM1, "--set", "lambda=0.5", "--horizon", "400", "--warmup",
                       "40", "--out", target, "--color", "never"])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""  # no table: nothing ran
    message = f"error[E-io]: cannot write `{target}`: " + why.format(tmp=tmp_path)
    assert message in captured.err and "Traceback" not in captured.err


def test_a_seed_listed_twice_is_refused_before_the_runs(capsys):
    """A repeated seed repeats its runs, which the intervals would count as replications:
    refused on the command line and from Python, before any run."""
    code, _, err = run(capsys, "sweep", MM1, "--set", "lambda=0.5", "--seed-list", "1,2,1")
    assert code == 2 and "seed 1 is listed twice" in err
    with pytest.raises(ValueError, match="seed 3 is listed twice"):
        serq.sweep(MM1, sets={"lambda": "0.5"}, seeds=[3, 4, 3], **SHORT)
