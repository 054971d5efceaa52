"""The compiled event path (`serq.sim.compiled`) against the interpreter: identical runs.

Every example, every valid program of the corpus and every program of tests/sim/programs
runs twice per seed, once with its sessions as generated code (the default) and once on
the interpreter (`codegen=False`, `serq run --no-compile`); the JSON reports (every
observation's samples, times, sessions and turns, every time average, count and gauge
point) and the diagnostics (a run-time error's message, place and notes) must be equal
to the last bit. The programs that `straight.py`'s loop would take run on both event
paths too (`straight.ENABLED` off), so the compiled path is compared on them as well.
A long run is cut to a horizon that keeps the file at about a minute.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import serq
from serq.sim import api as sim_api
from serq.sim import straight
from tests.sim.both_paths import assert_paths_agree, run_once

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = sorted(
    [
        *(ROOT / "examples").rglob("*.sq"),
        *(ROOT / "tests" / "corpus" / "valid").glob("*.sq"),
        *(ROOT / "tests" / "sim" / "programs").rglob("*.sq"),
    ]
)
SEEDS = (1, 7, 2026)


# Programs for the corners of the generated code: each of its run-time errors, holds
# preempted inside loops, ends inside nested holds, a zero-work livelock, leases.
CORNERS = {
    "loop_forever": """
stage s : fifo(1);
workload { arrive poisson(1); }
session { set x = 0; loop { set x = x + 1; } }
run { horizon 10; }
""",
    "zero_work_livelock": """
stage s : fifo(1);
workload { arrive closed(2); }
session { run s (1); loop { branch (serial >= 0) { run s (0); } } }
run { horizon 10; }
""",
    "branch_guard": """
stage s : fifo(1);
workload { arrive poisson(1); }
session { run s (~exp(1)); branch (now > 3 ? 2 : 1) { observe ok = 1; } }
run { horizon 20; }
""",
    "nan_work": """
stage s : fifo(1);
workload { arrive poisson(1); }
session { run s (now > 5 ? 0 / 0 : 1); }
run { horizon 20; }
""",
    "stage_index": """
stage s[2] : fifo(1);
workload { arrive poisson(1); }
session { set i = now > 8 ? 3 : floor(~uniform(0, 2)); run s[i] (~exp(2)); }
run { horizon 20; }
""",
    "preempt_in_loops": """
pool kv { cap 200; block 4; evict lru; preempt lifo; }
stage s : fifo(2);
stage t : delay;
workload { arrive poisson(0.3); init { set k = 0; } turn { set n = 1 + min(floor(~exp(8)), 80); } }
session {
  loop {
    turn;
    hold kv (n) {
      loop {
        grow kv (4);
        run s (~exp(1));
        set k = k + 1;
        branch (k - 5 * floor(k / 5) == 4) { end; }
        branch with (0.3) { run t (0); } else { }
      }
    } cache (n);
    run t (~exp(1));
    observe turns = turn_no;
  }
}
run { horizon 300; warmup 10; }
""",
    "holds_nested_end": """
pool a { cap 3; }
pool b { cap 2; }
stage s : ps(2);
stage d : delay;
workload { arrive poisson(1.5); }
session {
  set t0 = now;
  hold a (1) {
    run s (~exp(1));
    hold b (1) {
      branch with (0.2) { end; }
      run s (~h2(1, 4));
      release a;
    }
    choose c in 2 by (now);
    run d (~exp(1));
  }
  hold a (5) { observe never = 1; }
  observe t = now - t0;
}
gauge used_a = used(a);
run { horizon 500; warmup 20; }
""",
    # the population's livelock names the session that ended last on both paths (the
    # interpreter ended a session that ran off its end outside the scope of its serial)
    "closed_zero_time": """
stage s : delay;
workload { arrive closed(1); }
session { observe x = 1; }
run { horizon 10; }
""",
    "closed_zero_time_lease": """
pool m { cap 4; }
stage s : delay;
workload { arrive closed(2); }
session { hold m (1) { run s (0); } cache (1) lease m (inf); }
run { horizon 10; }
""",
    "closed_empty_loop_body": """
stage s : fifo(1);
workload { arrive closed(3); }
session { loop { run s (~exp(1)); observe r = now; } }
run { horizon 200; }
""",
}


@pytest.mark.parametrize("name", sorted(CORNERS))
def test_compiled_equals_interpreter_at_corners(name, monkeypatch):
    monkeypatch.setattr(straight, "ENABLED", False)
    for seed in SEEDS:
        program, diagnostics = sim_api.compile_program(CORNERS[name], f"<{name}>", seed=seed)
        assert program is not None, [d.message for d in diagnostics]
        ours = run_once(program, True)
        assert ours == run_once(program, False), f"seed {seed}"


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: str(p.relative_to(ROOT)))
def test_compiled_equals_interpreter(path, monkeypatch):
    assert_paths_agree(path, SEEDS, monkeypatch)


def test_straight_shapes_equal():
    """The programs of straight.py's loop: the compiled path is the same run too."""
    for name in ("mm1.sq", "ps.sq"):
        program = serq.compile(str(ROOT / "examples" / name), horizon=3000)
        assert serq.run(program).json() == serq.run(program, codegen=False).json()
