"""A hold that can never fit a pool (its units, or its reserve, above the cap) rejects
its session, which ends (spec: "a request that can never fit ... is rejected"). That ran
to the horizon in silence, the report's `rejected` column the only trace, also when every
session was rejected; pyserq 0.1.4 refuses a constant hold above the cap before the run,
0.1.2 rejects as serq does. It is now a W-reject warning at the hold's part for the pool,
naming how many sessions the pool rejected and the first (tests/sim/NOTES.md §32). Each
program runs on every path: generated code with and without the straight-line path, the
interpreter, and each of them stepping every engine iteration.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.sim.both_paths import runs_on_every_path

ROOT = Path(__file__).resolve().parents[2]

PLAIN = """\
pool kv { cap 10; }
stage s : fifo(1);
workload { arrive poisson(1); }
session { hold kv (20) { run s (1); } }
run { horizon 20; }
"""
# the second pool of the hold never fits some sessions: 9 units round up to 12 blocks' worth
SECOND = """\
pool a { cap 4; }
pool kv { cap 10; block 4; }
stage s : fifo(1);
workload { arrive poisson(1); }
session { hold a (1), kv (serial < 3 ? 8 : 9) reserve (0) { run s (0.5); } }
run { horizon 20; warmup 5; seed 1; }
"""
# the reserve, not the units, passes the cap; `fn main` and a program argument
MAIN = """\
use "std/args";
fn main() {
  let need = args.number("need", 12);
  pool kv { cap 10; }
  stage s : fifo(1);
  workload { arrive batch(3); }
  server { hold kv (1) reserve (need) { run s (cost(s, 1)); } }
}
"""
# lib/vllm.sq's request: a preempted request that outgrew the memory reserves `known`,
# above the cap, and is rejected when it executes its hold again
VLLM = """\
use "lib/vllm.sq";
let bs = 16;
pool reqs { cap 8; admit via engine; }
pool kv { cap 4 * bs; block bs; evict lru; preempt lifo; }
stage engine : step { budget 512; cost 0.01 + 0.0001 * tokens; memory kv; }
workload { arrive poisson(0.5); hidden o; init { set K = 0; } turn { set prompt = 40; set o = 100; } }
session { turn; set arrived = now; vllm_request(o, 0); }
run { horizon 30; }
"""


def _runs(text: str, path: str = "t.sq", **settings) -> list[tuple[list, dict]]:
    """Each path's diagnostics (code, line, column, message) and the pools' `rejected`."""
    return [
        (
            [(d.code, *_line_col(text, d.span.start), d.message) for d in ran],
            {p.name: p.rejected for p in report.pools},
        )
        for report, ran in runs_on_every_path(text, path, **settings)
    ]


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _one_warning(runs: list[tuple[list, dict]]) -> tuple:
    assert all(r == runs[0] for r in runs), runs  # the same on every path
    said, rejected = runs[0]
    assert [s[0] for s in said] == ["W-reject"], said
    return said[0], rejected


def test_a_hold_above_the_cap_is_a_warning_at_the_hold():
    (_, line, col, message), rejected = _one_warning(_runs(PLAIN))
    assert (line, col) == (4, 16)  # `kv (20)`
    n = rejected["kv"]
    assert n > 10
    assert message.startswith(f"pool `kv` rejected {n} sessions: this hold can never fit it")
    assert "the cap 10" in message and "(the first, session 0, at t = 0)" in message


def test_the_warning_is_at_the_part_of_the_pool_it_never_fits():
    (_, line, col, message), rejected = _one_warning(_runs(SECOND))
    assert (line, col) == (5, 23)  # `kv (serial < 3 ? 8 : 9)`, not `a (1)`
    assert rejected["a"] == 0 and rejected["kv"] == 18
    assert "rejected 18 sessions" in message and "the first, session 3," in message


def test_a_reserve_above_the_cap_in_fn_main_with_a_program_argument():
    (_, line, col, message), rejected = _one_warning(_runs(MAIN, horizon=50.0))
    assert (line, col) == (7, 17) and rejected["kv"] == 3
    assert "rejected 3 sessions" in message
    # within the cap, no session is rejected and nothing is said
    for said, rejected in _runs(MAIN, horizon=50.0, sets={"need": "10"}):
        assert said == [] and rejected["kv"] == 0


def test_a_preempted_request_that_outgrew_the_memory_is_named_in_the_library():
    for report, ran in runs_on_every_path(VLLM, str(ROOT / "examples" / "t.sq")):
        rejected = {p.name: p.rejected for p in report.pools}["kv"]
        assert rejected > 0
        assert [(d.code, d.span.file.endswith("vllm.sq")) for d in ran] == [("W-reject", True)]
        assert f"rejected {rejected} sessions" in ran[0].message


def test_the_command_line_prints_the_report_and_the_warning(tmp_path):
    path = tmp_path / "t.sq"
    path.write_text(PLAIN)
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "run", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0
    assert "rejected" in done.stdout
    assert "warning[W-reject]" in done.stderr and f"{path}:4:16" in done.stderr


@pytest.mark.parametrize("units", ["10", "2.5 * 4", "0"])
def test_a_hold_within_the_cap_says_nothing(units):
    for said, rejected in _runs(PLAIN.replace("(20)", f"({units})")):
        assert said == [] and rejected["kv"] == 0
