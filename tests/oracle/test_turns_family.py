"""A sample of the turns family (tests/oracle/turns_family.py) in CI: sessions taking turns
at pools in loops, with busy() and queued() in observations, gauges and choose keys. Each
program runs in serq and in pyserq 0.1.2, compared on the whole report, and on serq's two
event paths, which must agree to the last bit (`scripts/search_step.py --family turns`
runs larger ranges; tests/sim/NOTES.md §19 has the round that made it).

Every program of the sample agrees with the reference but the ones listed, each for a
reason the notes give.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the family and the comparison
import differential  # noqa: E402
import turns_family  # noqa: E402

SAMPLE = range(40)
KNOWN = {
    # a hold of inf units at a pool of cap inf, released: 0.1.2's level becomes
    # inf - inf and it admits nobody after (NOTES §18, "An infinite hold released")
    12: ("differ", ".ended: serq 4 | reference 0"),
    # units of -1: the spec's domain, an E-run in serq; 0.1.2 runs them
    33: ("serq-error", "the units of `hold m1` is -1; it must be at least 0"),
}


@pytest.mark.parametrize("k", SAMPLE)
def test_turns_family_program_agrees_with_the_reference(k, tmp_path):
    pytest.importorskip("pyserq")
    path = tmp_path / f"g{k}.sq"
    path.write_text(turns_family.program(k))
    differential.expect(*differential.compare(str(path), full=True), KNOWN.get(k))


@pytest.mark.parametrize("k", range(0, 400, 4))
def test_turns_family_compiled_path_equals_interpreter(k, tmp_path):
    path = tmp_path / f"g{k}.sq"
    path.write_text(turns_family.program(k))
    verdict, detail = differential.paths(str(path))
    assert verdict in ("same", "serq-error"), f"program {k}: {verdict}: {detail}"


def test_the_turns_family_admits_holds_where_they_join():
    """Most programs write an inline hold that may admit its session where it joins (the
    generated code's `go` test), the path this family is for."""
    from serq.sim import api as sim_api

    admitting = 0
    for k in range(40):
        compiled, _ = sim_api.compile_program(turns_family.program(k), f"g{k}")
        assert compiled is not None, k
        source, _ = sim_api.python_source(compiled)
        admitting += source is not None and "= not _k_ready and not (" in source
    assert admitting >= 25


def test_the_turns_family_draws_the_whole_domain():
    """Caps of 0, fractions and inf; units of 0, fractions, inf and -1; works of 0, inf
    and negatives; busy() and queued() in gauges and choose keys; every arrival kind."""
    texts = [turns_family.program(k) for k in range(300)]
    for needle in (
        "cap 0;",
        "cap 0.5;",
        "cap inf;",
        "(0) {",
        "(0.5) {",
        "(inf) {",
        "(-1) {",
        "(0);",
        "(inf);",
        "(-0.5);",
        "gauge g0 = busy(",
        "gauge g0 = queued(",
        "by (busy(",
        "arrive closed(",
        "arrive renewal(",
        "arrive batch(",
        "queue by (-serial);",
    ):
        assert any(needle in t for t in texts), needle
