"""`check_invariants` at the block crossings of a span whose evictions read the clock.

A span of a step engine's iterations applies the block crossings of its growing holds
together at its end (`StepStage._cross_quietly`), each at its own time; under
`check_invariants` each crossing's pool level is told, and the invariants checked, at
once. An eviction that reads the clock (an `evict by` key; a pool that spills does not
span, and is here as the case that never did this) is given the crossing's time, while a
crossing that evicted nothing was checked at the span's end: the check after the next
eviction found the clock gone back and stopped a correct run with "invariant broken (a
bug in serq)" (tests/sim/NOTES.md §67, every `evict by` variant of the step template).
Every check is at the span's end, the clock put back after such an eviction (not at the
crossings' times: beside another engine's events, tutorial/07_pd.sq, those go back too).
"""

from __future__ import annotations

import json

import pytest

from serq.sim.api import compile_program, execute

# one session at a time decodes 40 tokens, growing its hold block by block past the cap
# that the previous sessions' cached prefixes fill, within one span
PROGRAM = """
pool kv {
  cap 64;
  block 16;
  EVICT
  preempt lifo;
}
stage engine : step {
  budget 8;
  cost 1;
  memory kv;
}
stage pcie : delay;
pool host {
  cap 1000;
  block 16;
}
workload {
  arrive renewal(100);
}
session {
  hold kv (16) {
    run engine decode (40) growing kv;
  } cache (56);
  end;
}
run {
  horizon 250;
}
"""

EVICTS = [
    "evict by (size);",
    "evict by (now - last);",
    "evict lru;\n  spill host via pcie (size * 0.01) when (1);",
]


def _unskipped(value):
    if isinstance(value, dict):
        return {k: _unskipped(v) for k, v in value.items() if k != "skipped"}
    if isinstance(value, list):
        return [_unskipped(v) for v in value]
    return value


@pytest.mark.parametrize("evict", EVICTS)
@pytest.mark.parametrize("codegen", [True, False])
def test_checked_run_is_the_run(evict: str, codegen: bool) -> None:
    compiled, diagnostics = compile_program(PROGRAM.replace("EVICT", evict), "t.sq")
    assert compiled is not None, diagnostics
    reports = []
    for options in ({}, {"check_invariants": True}, {"fast_forward": False},
                    {"fast_forward": False, "check_invariants": True}):
        report, said = execute(compiled, codegen=codegen, **options)
        assert report is not None and not said, [d.message for d in said]
        reports.append(_unskipped(json.loads(report.json())))
    assert all(r == reports[0] for r in reports)
    assert reports[0]["pools"][0]["evicted_units"] > 0
