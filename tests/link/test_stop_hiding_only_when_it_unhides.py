"""The quick fix "stop hiding `o`" is offered only where it unhides `o`.

editing_search at seed 25 pasted hidden_evict_key.sq's workload (with `hidden o;`) into
hidden_ps_capacity.sq, whose own workload hides `o` too: the read of `o` in the ps
capacity offered "stop hiding `o`", which took out the first `hidden` and left the
second, so the E-hidden stayed. With `o` hidden twice the read offers no such fix (the
"hidden twice" error's own fix takes the second out; the read's fix comes back then).
"""

from __future__ import annotations

from serq import api

ONCE = """stage svc : ps(o);
workload { arrive poisson(1); hidden o; turn { set o = 5; } }
session { turn; run svc (1); end; }
run { horizon 10; }
"""
TWICE = ONCE.replace(
    "workload {", "workload { arrive poisson(1); hidden o; turn { set o = 5; } }\nworkload {", 1
)


def _read(text: str):
    return next(
        d for d in api.check_source(text, "/nowhere/h.sq") if "is read in a ps" in d.message
    )


def test_hidden_once_the_read_offers_to_stop_hiding():
    assert _read(ONCE).fix.title == "stop hiding `o`"


def test_hidden_twice_the_read_offers_no_fix_that_leaves_it_hidden():
    assert _read(TWICE).fix is None
    twice = [d for d in api.check_source(TWICE, "/nowhere/h.sq") if "hidden twice" in d.message]
    assert twice and twice[0].fix.title == "remove the second `o`"
