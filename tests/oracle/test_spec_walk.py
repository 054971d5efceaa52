"""The spec-walk programs (tests/oracle/spec_walk) against the reference, whole.

Each program is written the way the spec writes its construct and is deterministic, so
serq and the reference (0.1.2 for the items dialect, 0.1.4 for `fn main`, with the
horizon of its `// horizon:` line and seed 1) must give the same whole report: every
sample, every pool and stage figure, the gauges and, in `fn main`, the claims. The
claims' and gauges' programs (`main_claim_*`, `g_gauge_*`, NOTES §73) are also pinned
where their results say something on their own.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import differential  # noqa: E402

FILES = sorted((HERE / "spec_walk").glob("*.sq"))
HORIZON = re.compile(r"^// horizon: (\S+)\s*$", re.M)


def _settings(text: str) -> dict[str, float]:
    """The run settings of a `fn main` program (its horizon line), none for the items."""
    if not re.search(r"^\s*fn main\(\)", text, re.M):
        return {}
    found = HORIZON.search(text)
    return {"horizon": float(found.group(1)) if found else 400.0, "seed": 1}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_same_as_the_reference(path: Path) -> None:
    settings = _settings(path.read_text(encoding="utf-8"))
    if settings and not differential.have_014():
        pytest.skip(differential.missing_014())
    verdict, detail = differential.compare(
        str(path), 60, main=bool(settings), full=True, **settings
    )
    assert verdict == "same", detail


def _claims(name: str) -> dict[str, tuple]:
    path = HERE / "spec_walk" / name
    report = differential.ours(str(path), full=True, **_settings(path.read_text()))["ok"]
    return {
        c["name"]: (c["result"], c["checked"], c["failures"], c["first"], c["note"])
        for c in report["claims"]
    }


def test_claim_results_say_each_outcome() -> None:
    """Every result a claim can have, each from a program whose run decides it."""
    some = _claims("main_claim_some.sq")
    assert some["chunked"][0] == "holds" and some["bounded"][0] == "holds"
    assert some["piggyback"][0] == "witnessed" and some["starved"][0] == "witnessed"
    assert some["never"][0] == "not_witnessed"
    assert some["never"][1] == some["never"][2] > 0  # every checked iteration failed
    ends = _claims("main_claim_aggregates.sq")
    assert ends["nothing"] == ("fails", 1, 1, 30, None)  # a failure's `first` is the end
    assert all(ends[n][:2] == ("holds", 1) for n in ("totals", "longest", "srpt", "late"))
    given = _claims("main_claim_given.sq")
    assert given["finished"][0] == "holds"
    # p = 4 + 3 serial: session 3 (p = 13) is the first to fail `p <= 10`; o = 2 + serial:
    # session 4 (o = 6) the first to fail the hidden `o < 6`; all arrive at 0
    assert given["small"] == ("out_of_scope", 0, 0, None, "session 3 fails `given`")
    assert given["short"] == ("out_of_scope", 0, 0, None, "session 4 fails `given`")
    live = _claims("main_claim_live.sq")
    assert live["all_done"][0] == "not_evaluated" and "live at the end" in live["all_done"][4]
    assert live["crowded"][0] == "not_witnessed"  # one slot: never two residents


def test_gauges_over_estimates_and_arrays_have_their_extremes() -> None:
    """The least and greatest value a gauge holds, over a pool's blocks and replicas."""
    path = HERE / "spec_walk" / "g_gauge_estimates.sq"
    gauges = differential.ours(str(path), full=True)["ok"]["gauges"]
    # holds of 4, 6 and 8 units on blocks of 4, under a cap of 24: at most 6 blocks in use
    assert gauges["blocks"]["max"] == 6 and gauges["blocks"]["min"] >= 1
    path = HERE / "spec_walk" / "g_gauge_imbalance.sq"
    gauges = differential.ours(str(path), full=True)["ok"]["gauges"]
    assert 0 < gauges["full"]["mean"] < 1 and gauges["full"]["max"] == 1
    assert gauges["spread"]["min"] == 0 and gauges["spread"]["max"] <= 32
