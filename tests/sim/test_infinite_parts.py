"""A part of inf units at a pool of cap inf, beside other holders, on both event paths.

A hold of inf units fits a pool of cap inf, and while it is held the pool's level,
`used`, is inf. When it goes while others still hold, the level is what they hold: inf
less inf would be NaN (the inline family's program 139, reduced; tests/sim/NOTES.md
§21). The same for a part grown to inf, and a growth of an infinite part, which leaves it
infinite. Each program runs on the generated code and on the interpreter, with the
invariants checked, and both must give the same report.
"""

from __future__ import annotations

import json
import math

import pytest

from serq.sim import api as sim_api


def _samples(text: str) -> dict[str, list[float]]:
    """Every observation's samples of `text`, the same on both paths with the invariants
    checked (and the same report without the check)."""
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    reports = []
    for codegen in (True, False):
        for check in (True, False):
            report, ran = sim_api.execute(compiled, codegen=codegen, check_invariants=check)
            assert report is not None, ran
            reports.append(report)
    first = json.loads(reports[0].json())
    assert all(json.loads(r.json()) == first for r in reports[1:])
    return {name: list(reports[0].observe(name).samples) for name in sorted(reports[0].observes)}


def test_an_infinite_part_released_beside_others_leaves_their_level():
    """Session 0 holds inf for 1, sessions 1 and 2 hold 1 each for 2 and 3: `used` is
    inf, then 2, then 1, then 0, never NaN."""
    seen = _samples(
        """
pool m { cap inf; }
stage d : delay;
workload { arrive batch(3); }
session {
  hold m (serial == 0 ? inf : 1) { run d (1 + serial); observe inside = used(m); }
  observe after = used(m);
}
run { horizon 10; warmup 0; seed 1; }
"""
    )
    assert seen["inside"] == [math.inf, 2.0, 1.0]
    assert seen["after"] == [2.0, 1.0, 0.0]


def test_two_infinite_parts_keep_the_level_infinite_until_both_are_gone():
    seen = _samples(
        """
pool m { cap inf; }
stage d : delay;
workload { arrive batch(4); }
session {
  hold m (serial < 2 ? inf : 0.5) { run d (1 + serial); }
  observe after = used(m);
}
run { horizon 10; warmup 0; seed 1; }
"""
    )
    assert seen["after"] == [math.inf, 1.0, 0.5, 0.0]


def test_a_part_grown_to_inf_and_an_infinite_part_grown_again():
    """`grow m (inf)` makes session 0's part infinite; its `grow m (1)` after leaves it
    so (inf less inf is no growth); when it goes, session 1's 2.5 units are the level."""
    seen = _samples(
        """
pool m { cap inf; block 0.5; }
stage d : delay;
workload { arrive batch(2); }
session {
  hold m (serial == 0 ? 1 : 2) {
    branch (serial == 0) { grow m (inf); observe grown = used(m); run d (1); grow m (1); }
    else { run d (2); grow m (0.5); }
    observe inside = used(m);
    run d (1);
  }
  observe after = used(m);
}
run { horizon 10; warmup 0; seed 1; }
"""
    )
    assert seen["grown"] == [math.inf]
    assert seen["inside"] == [math.inf, math.inf]
    assert seen["after"] == [2.5, 0.0]


ENGINE_BESIDE_AN_INFINITE_PART = """
pool kv { cap inf; block 16; }
stage engine : step { budget 64; cost 0.01 + 0.001 * tokens; memory kv; }
stage think : delay;
workload { arrive poisson(4); }
session {
  branch (serial == 0) {
    hold kv (HELD) { run think (5.003); }
    end;
  }
  hold kv (10) {
    run engine prefill (40) growing kv;
    run engine decode (20) growing kv;
  }
  observe done = now;
}
GAUGE
run { horizon 20; warmup 6; seed 1; }
"""


@pytest.mark.parametrize("gauge", ["gauge used = used(kv);", ""])
def test_an_engine_growing_its_memory_beside_an_infinite_part(gauge):
    """While session 0 holds inf units of the engine's memory (cap inf), the residents'
    KV grows, planned and across fast-forwarded spans: the room is inf less inf, and every
    growth still fits; when the infinite part goes, the level is what the residents hold,
    as with a part of 1e9 units instead (whole numbers: the same level exactly). Before,
    a span's room test stopped the run (E-internal), and the growths were left out of the
    level to come back to (used went below 0). With a gauge of the level a span's
    crossings are applied one instant at a time, without one all at once."""
    reports = []
    for held in ("inf", "1e9"):
        compiled, diagnostics = sim_api.compile_program(
            ENGINE_BESIDE_AN_INFINITE_PART.replace("HELD", held).replace("GAUGE", gauge),
            "t.sq",
        )
        assert compiled is not None, diagnostics
        for fast_forward in (True, False):
            for codegen in (True, False):
                report, ran = sim_api.execute(
                    compiled, fast_forward=fast_forward, codegen=codegen, check_invariants=True
                )
                assert report is not None, ran
                data = json.loads(report.json())
                data.pop("skipped", None)  # what fast-forwarding skipped, not a result
                reports.append(data)
    assert all(r == reports[0] for r in reports[1:])
    assert reports[0]["stages"][0]["completed"] > 0
    assert 0 < reports[0]["pools"][0]["mean_used"] < math.inf
