"""Issue 17's first paragraph, as a new user types it: each command answers at once, with
its diagnostic at its place, the right exit status and no traceback.

Each runs as a process with a time limit, so a hang fails the test instead of stalling it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def serq(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "serq.cli", *args, "--color", "never"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("value", "shown"), [("0", "0"), ("-1", "-1"), ("-0", "-0"), ("inf", "inf"), ("1/3-1/3", "0")]
)
def test_a_poisson_rate_set_out_of_its_domain_is_an_error_at_the_let(value, shown):
    # lambda=0 was an internal error, lambda=-1 hung
    done = serq("run", "examples/mm1.sq", "--set", f"lambda={value}")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        f"error[E-constant]: the poisson rate must be positive and finite, not {shown}: "
        f"`--set lambda={shown}` makes it so\n --> examples/mm1.sq:3:5"
    ) in done.stderr


def test_a_nan_rate_is_an_error_at_the_let():
    done = serq("run", "examples/mm1.sq", "--set", "lambda=0/0")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "`let lambda` is NaN: `--set lambda` makes it so\n --> examples/mm1.sq:3:5" in done.stderr


def test_an_infinite_horizon_is_an_error_not_a_hang():
    done = serq("run", "examples/mm1.sq", "--horizon", "inf")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "the horizon is inf and no `arrivals` bounds the run" in done.stderr
    assert "examples/mm1.sq:17:1" in done.stderr  # the run block


def test_a_hyperexponential_below_one_warns_at_the_draw(tmp_path):
    path = tmp_path / "h2.sq"
    path.write_text(
        "stage s : fifo(1);\nworkload { arrive poisson(0.5); }\n"
        "session { run s (~h2(1, 0.5)); }\nrun { horizon 200; }\n"
    )
    done = serq("run", str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert "warning[W-draw]: `~h2(1, 0.5)`" in done.stderr and "h2.sq:3:18" in done.stderr
    assert '"ended": 0' not in done.stdout  # the run did its work
