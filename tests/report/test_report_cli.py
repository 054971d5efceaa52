"""`serq run FILE`: the report on stdout, diagnostics on stderr, exit 0 / 1 / 2, no traceback.

A stand-in simulator (conftest's `stub_sim`) pins the command's own behaviour; the
end-to-end runs on the real simulator are in `test_report_reference.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from serq import cli
from serq.diagnostics import Diagnostic, Span, codes
from tests.report.conftest import FIFO

ROOT = Path(__file__).resolve().parents[2]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def fifo(tmp_path) -> str:
    path = tmp_path / "fifo.sq"
    path.write_text(FIFO, encoding="utf-8")
    return str(path)


def test_text_report(capsys, stub_sim, fifo):
    status, out, err = run(capsys, "run", fifo, "--color", "never")
    assert (status, err) == (0, "")
    assert "horizon 10  end 10  warmup 1  seed 1" in out
    assert "observe" in out and "done" in out and "server" in out
    assert "\x1b[" not in out


def test_color_always(capsys, stub_sim, fifo):
    status, out, _ = run(capsys, "run", fifo, "--color", "always")
    assert status == 0 and "\x1b[" in out


def test_json_report(capsys, stub_sim, fifo):
    status, out, err = run(capsys, "run", fifo, "--json")
    data = json.loads(out)
    assert (status, err, data["schema"], data["observes"]["done"]["count"]) == (0, "", 1, 3)


def test_overrides_reach_the_program(capsys, stub_sim, fifo):
    argv = ["run", fifo, "--seed", "9", "--horizon", "20", "--warmup", "0", "--arrivals", "3"]
    status, _, _ = run(capsys, *argv, "--set", "x=1", "--json")
    assert status == 2  # FIFO declares no `let x`: a usage error
    status, out, _ = run(capsys, *argv, "--json")
    program, base_dir = stub_sim.calls[-1]
    assert status == 0 and (program.seed, program.horizon, program.warmup, program.arrivals) == (
        9,
        20,
        0,
        3,
    )
    assert base_dir == str(Path(fifo).parent)
    assert json.loads(out)["warmup"] == 0


def test_set(capsys, stub_sim):
    mm1 = str(ROOT / "examples" / "mm1.sq")
    stub_sim.trace = lambda recorder: None
    status, _, err = run(capsys, "run", mm1, "--set", "lambda=1/2", "--json")
    assert (status, err) == (0, "")
    assert stub_sim.calls[-1][0].arrival.rate == 0.5
    status, _, err = run(capsys, "run", mm1, "--set", "nope=1", "--color", "never")
    assert status == 2  # a usage error
    assert "error[E-unknown-name]: unknown --set argument or constant `nope`" in err
    assert "--> <--set nope>:1:5" in err and "let nope = 1;" in err


@pytest.mark.parametrize("bad", ["lambda", "=1", "lambda="])
def test_set_needs_name_equals_value(capsys, stub_sim, bad):
    status, _, err = run(capsys, "run", str(ROOT / "examples" / "mm1.sq"), "--set", bad)
    assert status == 2 and "NAME=VALUE" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--seed", "-1"],
        ["--horizon", "0"],
        ["--warmup", "-1"],
        ["--arrivals", "x"],
        ["--warmup", "inf"],
    ],
)
def test_bad_options_are_usage_errors(capsys, stub_sim, fifo, argv):
    status, out, _ = run(capsys, "run", fifo, *argv)
    assert status == 2 and out == "" and not stub_sim.calls


def test_unreadable_file(capsys, stub_sim, tmp_path):
    status, out, err = run(capsys, "run", str(tmp_path / "missing.sq"), "--color", "never")
    assert (status, out) == (2, "") and "error[E-io]" in err


def test_program_errors(capsys, stub_sim, tmp_path):
    path = tmp_path / "bad.sq"
    path.write_text("stage s : fifo(1);\nsession { run q (1); }\n", encoding="utf-8")
    status, out, err = run(capsys, "run", str(path), "--color", "never")
    assert (status, out) == (1, "") and not stub_sim.calls
    assert f"--> {path}:2:" in err and "error[E-unknown-name]" in err


def test_warmup_not_below_horizon(capsys, stub_sim, fifo):
    status, _, err = run(capsys, "run", fifo, "--warmup", "10", "--color", "never")
    assert status == 1 and "is not below the horizon" in err


def test_run_errors(capsys, stub_sim, fifo):
    span = Span(fifo, 69, 80, 5, 3, 5, 14)
    stub_sim.errors = [Diagnostic.error(codes.RUNTIME, span, "the run failed here")]
    status, out, err = run(capsys, "run", fifo, "--color", "never")
    assert (status, out) == (1, "")
    assert "error[E-run]: the run failed here" in err and f"{fifo}:5:3" in err


def test_internal_failure_is_a_diagnostic_not_a_traceback(capsys, stub_sim, fifo):
    stub_sim.raises = ZeroDivisionError("oops")
    status, out, err = run(capsys, "run", fifo, "--color", "never")
    assert (status, out) == (1, "")
    assert "error[E-internal]" in err and "Traceback" not in err


def test_dump(capsys, stub_sim, fifo, tmp_path):
    out_dir = tmp_path / "dump"
    status, _, err = run(capsys, "run", fifo, "--dump", str(out_dir), "--json")
    assert (status, err) == (0, "")
    assert (out_dir / "observe" / "done.csv").read_text().splitlines()[:2] == [
        "time,session,turn,value",
        "2.0,0,0,2.0",
    ]
    assert (out_dir / "gauge" / "q.csv").exists() and (out_dir / "gauge" / "b.csv").exists()


def test_dump_that_cannot_be_written(capsys, stub_sim, fifo, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    status, out, err = run(capsys, "run", fifo, "--dump", str(blocker), "--color", "never")
    assert status == 2 and "error[E-io]: cannot write the dump" in err
    assert "done" in out  # the report was printed before the dump failed


def test_no_progress_bar_when_stderr_is_not_a_terminal(capsys, stub_sim, fifo):
    status, _, err = run(capsys, "run", fifo, "--json")
    assert status == 0 and err == ""


def test_progress_bar_draws_on_a_terminal(monkeypatch):
    import io

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    monkeypatch.setattr(cli.sys, "stderr", stream)
    bar = cli._ProgressBar(100.0)
    assert bar.enabled
    bar(10.0)  # too early: nothing yet
    assert bar._bar is None
    bar._next = 0.0
    bar(50.0)
    assert bar._bar is not None
    assert bar._bar.tasks[0].completed == 50.0
    bar.close()
