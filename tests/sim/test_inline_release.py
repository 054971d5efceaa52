"""`release` on the generated code: a part given back early by an inline hold, and the
interpreter's step for the others, which looks for the holds around the session.

Before the generated code wrote `release` inline, a pool released anywhere was not
inline; a `grow`, `load` or `release` that no hold gives anything back to then reached
the interpreter's step with frames it cannot read (an internal error, not the program's
diagnostic). Each program here runs on both paths, which must agree to the last bit."""

from __future__ import annotations

import pytest

import serq
from serq.sim import api as sim_api
from serq.sim.compiled_holds import inline_holds
from tests.sim.both_paths import failure_on_both_paths

HEAD = """pool p0 {{ cap {cap}; {options} }}
pool p1 {{ cap 4; }}
stage d : delay;
stage f : fifo(1);
workload {{ arrive poisson(1.5); }}
"""
RUN = "run { horizon 300; warmup 10; seed 4; }\n"

SESSIONS = {  # `{cache}`: the outer hold's cache clause, where the pool caches
    # given back before the last run, then nothing at the end
    "early": "hold p0 (1), p1 (2) { run f (~exp(0.5)); release p0; run d (~exp(1)); }{cache};",
    # twice: the second finds nothing to give
    "twice": "hold p0 (1) { release p0; run d (1); release p0; }{cache};",
    # in a branch: given back on one way only
    "branch": "hold p0 (0.5) { branch with (0.5) { release p0; } run f (~exp(0.6)); }{cache};",
    # in a loop, then `end;` inside the hold
    "loop": "set n = 0; hold p0 (1) { loop { run f (~exp(0.3)); set n = n + 1; "
    "branch (n >= 2) { release p0; end; } } }{cache};",
    # of the outer hold, from inside an inner one
    "nested": "hold p0 (1) { hold p1 (1) { run f (~exp(0.5)); release p0; run d (1); } }{cache};",
    # of a pool the hold does not hold: the interpreter's step, which gives nothing
    "other": "hold p0 (1) { release p1; run f (~exp(0.6)); }{cache};",
    # outside any hold
    "outside": "release p1; hold p0 (1) { run f (~exp(0.6)); }{cache};",
}
POOLS = {
    "plain": ("2", ""),
    "cached": ("8", "block 0.5; evict lru;"),
    "keyed": ("1.5", "queue by (-serial);"),
    "zero": ("0", ""),
}


@pytest.mark.parametrize("pool", sorted(POOLS))
@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_release_gives_the_interpreters_report(name, pool):
    cap, options = POOLS[pool]
    cache = " cache (2.5)" if "evict" in options else ""  # what the release leaves cached
    body = SESSIONS[name].replace("{cache}", cache)
    text = HEAD.format(cap=cap, options=options) + f"session {{ {body} }}\n" + RUN
    reports = []
    for codegen in (True, False):
        try:
            reports.append(serq.run(serq.compile(source=text, codegen=codegen)).json())
        except ValueError as error:  # the same error on both paths
            reports.append(str(error))
    assert reports[0] == reports[1]


def test_a_release_of_the_holds_own_member_stays_inline():
    text = (
        HEAD.format(cap="2", options="")
        + f"session {{ {SESSIONS['early'].replace('{cache}', '')} }}\n"
        + RUN
    )
    compiled, _ = sim_api.compile_program(text, "t.sq")
    assert len(inline_holds(compiled.program)) == 1


def test_a_step_outside_any_hold_says_so_on_both_paths():
    text = HEAD.format(cap="2", options="") + "session { run d (1); grow p0 (1); }\n" + RUN
    said = failure_on_both_paths(text)
    assert said[0][0] == "E-run"
    assert "outside a hold" in said[0][2]


def test_a_load_outside_any_hold_does_not_link():
    # a link error since the seventh round (NOTES.md §24), as in pyserq 0.1.2
    text = HEAD.format(cap="2", options="") + "session { run d (1); load p0 (1); }\n" + RUN
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is None
    assert [(d.code, "outside a hold" in d.message) for d in diagnostics] == [("E-structure", True)]
