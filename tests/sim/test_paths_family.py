"""A sample of the paths family (tests/oracle/paths_family.py): random programs over what
the compiled event path writes inline (its stages, holds, loops, ends and arrivals), each
run on the compiled path and on the interpreter, which must agree to the last bit (the
same report, or the same error). `scripts/search_step.py --family paths --against
interpreter` runs larger ranges by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))

import differential  # noqa: E402
import paths_family  # noqa: E402

SAMPLE = range(0, 600, 5)  # 120 programs


@pytest.mark.parametrize("k", SAMPLE)
def test_compiled_path_equals_interpreter(k, tmp_path):
    path = tmp_path / f"g{k}.sq"
    path.write_text(paths_family.program(k), encoding="utf-8")
    verdict, detail = differential.paths(str(path))
    assert verdict in ("same", "serq-error"), f"program {k}: {verdict}: {detail}"


def test_family_exercises_inline_holds():
    """The sample holds pools inline often enough to test that code at all."""
    from serq.sim import api as sim_api
    from serq.sim.compiled_holds import inline_holds

    inline = 0
    for k in SAMPLE:
        compiled, _ = sim_api.compile_program(paths_family.program(k), f"g{k}")
        if compiled is not None:
            inline += len(inline_holds(compiled.program))
    assert inline >= 40


def test_family_releases_inline_holds_early():
    """The sample gives inline holds back early (`release` in the body of a hold of the
    member it names) often enough to test that code."""
    from serq import ir
    from serq.sim import api as sim_api
    from serq.sim.compiled_holds import inline_holds, member, released_in

    released = 0
    for k in SAMPLE:
        compiled, _ = sim_api.compile_program(paths_family.program(k), f"g{k}")
        if compiled is None:
            continue
        program = compiled.program
        inline = inline_holds(program)
        for block in program.blocks:
            for stmt in block:
                if isinstance(stmt, ir.Hold) and id(stmt) in inline:
                    parts = [member(p.pool) for p in stmt.pools]
                    released += any(
                        k is not None and released_in(program, stmt.body, k) for k in parts
                    )
    assert released >= 10


def test_a_deadlock_after_a_release_is_said_on_both_paths():
    """Session 1 gives its part of `A` back early, then waits for `B` while session 0,
    which holds `B`, waits for the `C` session 1 still holds: both paths name the same
    stall (what a session holds in an inline hold leaves out a part it gave back)."""
    from tests.sim.both_paths import failure_on_both_paths

    text = """pool A { cap 1; }
pool B { cap 1; }
pool C { cap 1; }
stage d : delay;
workload { arrive batch(2); }
session {
  branch (serial == 0) {
    hold B (1) { run d (3); hold C (1) { run d (1); } }
  } else {
    hold A (1), C (1) { release A; run d (2); hold B (1) { run d (1); } }
  }
}
run { horizon 50; warmup 0; seed 1; }
"""
    said = failure_on_both_paths(text)
    assert "2 sessions wait for ever" in said[0][2]
