"""`run { arrivals N; }` whose horizon comes before the N sessions drained stops with an
E-run at the arrival clause that counts the sessions still live. With one left it said
"(1 sessions still live)" (round 18, tests/sim/NOTES.md §39); the count now agrees with
its noun, as the pools' rejections and the stalls already did, on both paths."""

from __future__ import annotations

import pytest

from tests.sim.both_paths import failure_on_both_paths

PROGRAM = """\
stage s : fifo(1);
workload {{ arrive renewal(1); }}
session {{ run s (serial == 0 ? 1 : {long}); observe t = now; }}
run {{ horizon 10; arrivals {n}; }}
"""


@pytest.mark.parametrize(
    "n, long, live",
    [(2, 100, "1 session"), (3, 100, "2 sessions"), (4, 1e9, "3 sessions")],
)
def test_the_sessions_still_live_are_counted_with_their_noun(n, long, live):
    said = failure_on_both_paths(PROGRAM.format(n=n, long=long))
    errors = [(code, span.line, message) for code, span, message in said if code == "E-run"]
    assert errors == [
        ("E-run", 2, f"horizon 10 reached before the {n} arrivals drained ({live} still live)")
    ], said
