"""The terminal: Ctrl-C, a closed stdout, and `--seed` outside its range."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serq.cli import main
from serq.vocabulary import SEED_MAX, SEED_MIN
from tests.cpu_wait import wait_for_cpu

ROOT = Path(__file__).resolve().parents[2]
FOREVER = (
    "stage server : fifo(1);\n"
    "workload { arrive poisson(0.9); }\n"
    "session { run server (~exp(1)); }\n"
    "run { horizon 1e12; seed 1; }\n"
)


def _start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "serq.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_ctrl_c_during_run_exits_130_with_one_line(tmp_path):
    path = tmp_path / "forever.sq"
    path.write_text(FOREVER)
    worker = _start("run", str(path))
    # well into the simulation (its imports and compile take a fraction of a second of
    # CPU), however loaded the machine is
    wait_for_cpu(worker.pid, 1.5)
    worker.send_signal(signal.SIGINT)
    out, err = worker.communicate(timeout=60)
    assert worker.returncode == 130
    # one line, with the clock the run had reached when it has reported one
    [line] = err.decode().splitlines()
    assert re.fullmatch(r"serq: interrupted( at t = [0-9.e+]+)?", line), line


@pytest.mark.parametrize("json", [True, False])
def test_closed_stdout_ends_quietly(json):
    args = ["run", "examples/vllm.sq", "--horizon", "400"] + (["--json"] if json else [])
    worker = _start(*args)
    worker.stdout.read(1)
    worker.stdout.close()
    err = worker.stderr.read().decode()
    status = worker.wait(timeout=120)
    assert "Traceback" not in err and "Exception" not in err, err
    assert status in (0, 141)  # 0: the report fit in the pipe before it closed


@pytest.mark.parametrize("seed", [str(SEED_MIN - 1), str(SEED_MAX + 1), "1.5", "x"])
def test_seed_out_of_range_is_a_usage_error(seed, capsys):
    assert main(["run", "examples/mm1.sq", "--seed", seed]) == 2
    assert "not a seed" in capsys.readouterr().err


def test_extreme_seeds_run(capsys):
    for seed in (SEED_MIN, SEED_MAX):
        status = main(
            [
                "run",
                "examples/mm1.sq",
                "--seed",
                str(seed),
                "--horizon",
                "20",
                "--warmup",
                "0",
                "--json",
            ]
        )
        assert status == 0
        assert f'"seed": {seed}' in capsys.readouterr().out


def test_ctrl_c_while_the_pipeline_imports_exits_130_with_one_line(monkeypatch, capsys):
    # the imports took a third of a second before `main` handled Ctrl-C: a traceback
    from serq import cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_load", interrupted)
    assert main(["check", "examples/mm1.sq"]) == 130
    assert capsys.readouterr().err.splitlines() == ["serq: interrupted"]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
def test_ctrl_c_early_in_a_command_exits_130(tmp_path):
    path = tmp_path / "forever.sq"
    path.write_text(FOREVER)
    worker = _start("run", str(path))
    time.sleep(0.5)  # the interpreter has started; the pipeline may still be importing
    worker.send_signal(signal.SIGINT)
    _, err = worker.communicate(timeout=60)
    assert worker.returncode == 130
    [line] = err.decode().splitlines()  # the run may have started: then with its clock
    assert re.fullmatch(r"serq: interrupted( at t = [0-9.e+]+)?", line), line


@pytest.mark.parametrize("value", ["0", "-1", "1.5", "1e-3", "1000000000001", "1.000000000001e12"])
def test_arrivals_out_of_range_is_a_usage_error(value, capsys):
    assert main(["run", "examples/mm1.sq", "--arrivals", value]) == 2
    assert "not a number of arrivals (1 to 1000000000000)" in capsys.readouterr().err


def test_a_horizon_that_clashes_with_the_program_is_an_error_at_its_warmup(capsys):
    # `serq run examples/mm1.sq --horizon 200`: was reported at line 1, column 1
    assert main(["run", "examples/mm1.sq", "--horizon", "200", "--color", "never"]) == 1
    err = capsys.readouterr().err
    assert "warmup 1000 is not below the horizon 200 (with `--horizon 200`)" in err
    assert "examples/mm1.sq:19:10" in err
