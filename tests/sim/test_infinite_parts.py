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
