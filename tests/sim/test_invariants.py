"""`serq run --check-invariants`: every example and corpus program runs with the
simulator's invariants checked after every event, and a broken one is an `E-run`.

The invariants: each pool's used and cached are never negative and never sum above its
cap, the clock never goes back, and sessions are conserved (arrived = ended + live).
The programs run to a short horizon (200, or their own if shorter) from no warm-up, so
that the whole corpus stays quick; a program's own run-time error is allowed (some
corpus programs stop by design), an invariant broken or an internal error is not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import serq
from serq import api
from serq.sim import api as sim_api
from serq.sim.errors import SimError
from serq.sim.recording import NullRecorder
from serq.sim.world import World

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = [
    *sorted(p for p in (ROOT / "examples").rglob("*.sq") if p.parent.name != "lib"),
    *sorted((ROOT / "tests" / "corpus" / "valid").glob("*.sq")),
    *sorted((ROOT / "tests" / "corpus" / "valid_main").glob("*.sq")),
    *sorted((ROOT / "tests" / "sim" / "programs").glob("*.sq")),
]


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_program_keeps_the_invariants(path):
    text = path.read_text(encoding="utf-8")
    program, diagnostics = api.link_source(text, str(path))
    assert program is not None, [d.message for d in diagnostics]
    horizon = min(program.horizon or 200.0, 200.0)  # a `fn main` program has none of its own
    compiled, _ = sim_api.compile_program(text, str(path), warmup=0.0, horizon=horizon)
    assert compiled is not None
    _, ran = sim_api.execute(compiled, check_invariants=True)
    assert [d.message for d in ran if d.code == "E-internal"] == []
    assert [d.message for d in ran if "invariant broken" in d.message] == []


PROGRAM = """pool kv { cap 10; }
stage s : fifo(1);
workload { arrive poisson(1); }
session { hold kv (2) { run s (1); } }
run { horizon 50; }
"""


def _world() -> World:
    compiled, _ = sim_api.compile_program(PROGRAM, "t.sq")
    assert compiled is not None
    return World(compiled.program, NullRecorder(), 1, 0.0, None, ".", True)


@pytest.mark.parametrize(
    ("tamper", "says"),
    [
        (lambda w: setattr(w.pools[0], "allocated", -1.0), "pool `kv` has used -1.0"),
        (lambda w: setattr(w.pools[0], "allocated", 11.0), "above its cap 10.0"),
        (lambda w: setattr(w, "live", w.live + 1), "sessions arrived"),
    ],
)
def test_a_broken_invariant_is_an_error_saying_which(tamper, says):
    world = _world()
    world.run(5.0)
    world.check()  # a real run keeps them
    tamper(world)
    with pytest.raises(SimError, match="invariant broken") as raised:
        world.check()
    assert says in raised.value.message


def test_a_rounding_of_fractional_parts_is_not_a_broken_invariant():
    """Fractional growths taken and given back leave a pool's used a few ulps below 0
    (grow family programs 107 and 143): within the slack the cap check has too."""
    world = _world()
    world.run(5.0)
    world.pools[0].allocated = -2.220446049250313e-16
    world.check()
    world.pools[0].allocated = -1e-6
    with pytest.raises(SimError, match="has used -1e-06"):
        world.check()


def test_the_clock_going_back_is_caught():
    world = _world()
    world.run(5.0)
    world.check()
    world.engine.now = 1.0
    with pytest.raises(SimError, match="the clock went back"):
        world.check()


def test_the_api_and_the_command_line_take_the_flag(tmp_path, capsys):
    program = serq.compile(source=PROGRAM)
    assert serq.run(program, check_invariants=True).observes == serq.run(program).observes
    path = tmp_path / "p.sq"
    path.write_text(PROGRAM)
    from serq.cli import main

    assert main(["run", str(path), "--check-invariants", "--color", "never"]) == 0


SPAN = """pool slot { cap 1; admit via engine; }
pool kv { cap 64; block 1; }
stage engine : step { budget 8; cost 1; memory kv; }
workload { arrive batch(1); }
session {
  hold slot (1), kv (1) {
    run engine prefill (1) growing kv;
    run engine decode (3) growing kv;
  }
}
run { horizon 10; warmup 0; seed 1; }
"""
STEPPED = [
    p
    for p in sorted((ROOT / "tests" / "sim" / "programs").glob("*.sq"))
    if p.name.startswith(("det_step", "step_", "ff_"))
]


@pytest.mark.parametrize(
    "source", [SPAN, *STEPPED], ids=lambda s: s.name if isinstance(s, Path) else "span"
)
def test_checking_the_invariants_changes_no_report(source):
    """The check reads the state and records nothing: a fast-forwarded span whose decode
    crosses blocks of its KV pool told the recorder each crossing and then, under the
    check, flushed the pools at the clock of the span's end, before the next crossing's
    earlier time, so the level between two crossings was lost (the span's kv `mean_used`
    0.9 against 1)."""
    text = source if isinstance(source, str) else source.read_text(encoding="utf-8")
    compiled, _ = sim_api.compile_program(text, "t.sq", horizon=200.0)
    assert compiled is not None
    for codegen in (True, False):
        runs = []
        for check in (False, True):
            report, ran = sim_api.execute(compiled, codegen=codegen, check_invariants=check)
            runs.append((report and report.json(), [(d.code, d.message) for d in ran]))
        assert runs[0] == runs[1], codegen
