"""`grow` on the generated code: a hold written inline grows inline, at once when the pool
has room and else among the pool's growers, and the run is the interpreter's to the last
bit (the report, and the same errors and warnings).

Before, a `grow` anywhere in a program kept every hold of it off the inline path. A pool
that preempts (`preempt lifo`, `preempt by`) still does: a preemption aborts a holder's
scope wherever it is."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from serq.sim import api as sim_api
from serq.sim import compiled
from serq.sim.compiled_holds import inline_holds
from tests.sim.both_paths import warnings_on_both_paths

sys.path.insert(0, str(Path(__file__).resolve().parent))

import grow_family  # noqa: E402

SAMPLE = range(0, 360, 3)  # 120 programs


def _both(text: str, name: str) -> list[tuple]:
    compiled_program, diagnostics = sim_api.compile_program(text, name)
    assert compiled_program is not None, diagnostics
    said = []
    for codegen in (True, False):
        report, ran = sim_api.execute(compiled_program, codegen=codegen)
        said.append(
            (None if report is None else report.json(), [(d.code, d.span, d.message) for d in ran])
        )
    return said


@pytest.mark.parametrize("k", SAMPLE)
def test_grow_family_gives_the_interpreters_report(k):
    generated, interpreted = _both(grow_family.program(k), f"g{k}.sq")
    assert generated == interpreted, f"program {k}:\n{grow_family.program(k)}"


def test_the_family_grows_inline_holds_and_waits(monkeypatch):
    """The sample writes grows of inline holds, and they wait among the growers often
    enough to test that code (each wait of the generated code makes a `GrowWait`)."""
    waits = []

    class CountedWait(compiled.GrowWait):
        __slots__ = ()

        def __init__(self, *args):
            waits.append(args)
            super().__init__(*args)

    monkeypatch.setattr(compiled, "GrowWait", CountedWait)
    inline = 0
    for k in SAMPLE[:40]:
        program, _ = sim_api.compile_program(grow_family.program(k), f"g{k}.sq")
        if program is None:
            continue
        inline += bool(inline_holds(program.program))
        sim_api.execute(program, codegen=True)
    assert inline >= 20
    assert len(waits) >= 100


HEAD = """pool kv {{ cap {cap}; {options} }}
stage f : fifo(2);
workload {{ arrive poisson(1.5); }}
"""
RUN = "run { horizon 300; warmup 10; seed 3; }\n"
GROWING = "session { hold kv (1) { run f (~exp(0.5)); grow kv (2); run f (~exp(0.5)); } }\n"


@pytest.mark.parametrize(
    ("options", "inline"),
    [("", True), ("block 2;", True), ("preempt lifo;", False), ("preempt by (admission);", False)],
)
def test_a_hold_that_grows_is_inline_unless_its_pool_preempts(options, inline):
    text = HEAD.format(cap="12", options=options) + GROWING + RUN
    program, _ = sim_api.compile_program(text, "t.sq")
    assert bool(inline_holds(program.program)) is inline
    generated, interpreted = _both(text, "t.sq")
    assert generated == interpreted


def test_growers_that_hold_all_the_pool_are_a_deadlock_on_both_paths():
    """Two sessions hold one unit each of a pool of two and both wait to grow by one: the
    growers' held units come from the generated code's locals (`held_inline`)."""
    text = HEAD.format(cap="2", options="") + GROWING.replace("(2)", "(1)") + RUN
    said = warnings_on_both_paths(text)
    codes = [code for code, *_ in said[0]]
    assert "W-deadlock" in codes
    assert "waiting to grow" in said[0][codes.index("W-deadlock")][3]


@pytest.mark.parametrize(
    ("stmt", "message"),
    [
        ("grow kv (-1);", "at least 0"),
        ("grow kv (0 / (now - now));", "at least 0"),
        ("grow kv (20);", "can never be satisfied"),
        ("release kv; grow kv (1);", "outside a hold"),
    ],
)
def test_a_growth_that_cannot_be_says_so_on_both_paths(stmt, message):
    text = HEAD.format(cap="12", options="") + f"session {{ hold kv (1) {{ {stmt} }} }}\n" + RUN
    generated, interpreted = _both(text, "t.sq")
    assert generated == interpreted
    assert generated[0] is None
    assert message in generated[1][0][2]


def test_an_inline_grow_beside_a_step_engine_gives_the_interpreters_report():
    """A step engine without a memory keeps the holds of other pools inline, their grows
    too; fast-forwarding changes nothing but the count of the iterations it skipped."""
    text = """pool kv { cap 40; block 2; }
stage E : step { budget 32; chunk 16; cost 0.25 + 0.0078125 * tokens; }
stage d : delay;
workload { arrive poisson(2); }
session {
  set arrived = now;
  hold kv (1) { run d (~exp(1)); grow kv (~uniform(0, 3)); run d (~exp(1)); }
  run E prefill (20);
  run E decode (30);
  hold kv (0.5) { grow kv (1); run d (0.5); }
  observe sojourn = now - arrived;
}
run { horizon 200; warmup 10; seed 2; }
"""
    program, _ = sim_api.compile_program(text, "t.sq")
    assert len(inline_holds(program.program)) == 2
    for fast_forward in (True, False):
        reports = []
        for codegen in (True, False):
            report, ran = sim_api.execute(program, codegen=codegen, fast_forward=fast_forward)
            assert report is not None, ran
            reports.append(report.json())
        assert reports[0] == reports[1]


@pytest.mark.parametrize("k", [*range(100, 160), 107, 143])
def test_grow_family_keeps_the_invariants(k):
    """Checked after every event, on both paths: a program's own error may stop a run,
    a broken invariant may not (107 and 143 left a few ulps below 0 in a pool's used,
    once flagged as broken)."""
    compiled_program, diagnostics = sim_api.compile_program(grow_family.program(k), "g.sq")
    assert compiled_program is not None, diagnostics
    for codegen in (True, False):
        _, ran = sim_api.execute(compiled_program, codegen=codegen, check_invariants=True)
        assert not any("invariant broken" in d.message for d in ran), k
