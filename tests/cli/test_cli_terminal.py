"""The terminal: Ctrl-C, a closed stdout, and `--seed` outside its range."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serq.cli import main
from serq.vocabulary import SEED_MAX, SEED_MIN

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
    time.sleep(3.0)  # well into the simulation: its import and compile take under a second
    worker.send_signal(signal.SIGINT)
    out, err = worker.communicate(timeout=60)
    assert worker.returncode == 130
    assert err.decode().splitlines() == ["serq: interrupted"]


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
