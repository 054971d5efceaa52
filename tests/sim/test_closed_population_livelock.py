"""A closed population whose sessions end and are replaced at one instant without end is
`E-run` at its `arrive`, named promptly: each replacement is a whole session's work (here
16 iterations of cost 0 and the cache's evictions), so the count of replacements the run
allows is what the diagnostic costs (§59: 100,000 of them took 20 to 50 s of CPU)."""

from __future__ import annotations

import warnings

from serq.sim.api import compile_program, execute

# every session prefills 200 tokens at 12.5 an iteration of cost 0 and ends at time 0
ZERO_TIME_SESSIONS = """pool kv { cap 640; block 2.5; }
stage engine : step { budget 12.5; cost 0; memory kv; }
workload { arrive closed(1); }
session { hold kv (1) { run engine prefill (200) growing kv; } cache (200); }
run { horizon 30; }
"""


def _failure(text: str, codegen: bool) -> list[tuple]:
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report, said = execute(compiled, codegen=codegen)
    assert report is None
    return [(d.code, d.span.line, d.span.column, d.message, d.notes) for d in said]


def test_a_population_replaced_at_once_by_sessions_of_many_iterations_is_named_promptly() -> None:
    said = [_failure(ZERO_TIME_SESSIONS, codegen) for codegen in (True, False)]
    assert said[0] == said[1]
    [(code, line, column, message, notes)] = said[0]
    assert (code, line, column) == ("E-run", 3, 12)
    assert "replaced at time 0 without end" in message
    assert notes == ("in session 10000; at simulated time 0",)


def test_nine_thousand_sessions_that_end_at_once_are_no_livelock() -> None:
    text = (
        "stage s : fifo(1);\nworkload { arrive closed(1); }\n"
        "session { branch (serial < 9000) { end; } else { run s (1); } }\n"
        "run { horizon 10; }\n"
    )
    compiled, diagnostics = compile_program(text, "t.sq")
    assert compiled is not None, diagnostics
    for codegen in (True, False):
        report, said = execute(compiled, codegen=codegen)
        assert report is not None and not said
        assert report.ended >= 9000
