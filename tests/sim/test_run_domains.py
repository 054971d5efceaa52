"""Values checked where they are computed: an `E-run` at the construct, with the value.

Each program computes one value outside its domain at run time (from an attribute, so
the linker cannot fold it); the run stops with `E-run` at the expression's construct, the
message names the value, and a note gives the session and the simulated time. A draw
`~h2(m, cv2)` with cv2 < 1 is drawn as `~h2(m, 1)`, as pyserq 0.1.2 draws it, with a
`W-draw` warning at the draw; a statistic beyond the float range is reported as inf.
"""

from __future__ import annotations

import math
import statistics

import pytest

from serq.sim import api as sim_api
from tests.sim.both_paths import warnings_on_both_paths


def outcome(text: str):
    compiled, diagnostics = sim_api.compile_program(text, "t.sq")
    assert compiled is not None, [d.message for d in diagnostics]
    return sim_api.execute(compiled)


def run_error(text: str):
    report, diagnostics = outcome(text)
    assert report is None
    [d] = [d for d in diagnostics if d.code == "E-run"]
    return d


def session(
    body: str, *, pool: str = "pool kv { cap 100; }\n", stage: str = "stage s : fifo(1);\n"
) -> str:
    # serial 0 arrives at 1, serial 1 at 2, ...: `1 - serial` is 1, 0, -1, ...
    return (
        f"{pool}{stage}workload {{ arrive renewal(1); }}\n"
        f"session {{\n  set x = 1 - serial;\n  {body}\n}}\nrun {{ horizon 100; }}\n"
    )


CASES = [
    # units of hold, grow, load, reserve
    ("hold kv (x) { run s (1); }", 6, 8, "the units of `hold kv` is -1; it must be at least 0", 2, "3"),
    ("hold kv (1) reserve (x) { run s (1); }", 6, 8, "the reserve of `hold kv` is -1; it must be at least 0", 2, "3"),
    ("hold kv (1) { grow kv (x); run s (1); }", 6, 17, "the units of `grow kv` is -1; it must be at least 0", 2, "3"),
    ("hold kv (4) { load kv (x); run s (1); }", 6, 17, "the units of `load kv` is -1; it must be at least 0", 2, "3"),
    ("hold kv (0 / (x + 1)) { run s (1); }", 6, 8, "the units of `hold kv` is NaN; it must be at least 0", 2, "3"),
    # NaN work
    ("run s (0 / (x + 1));", 6, 3, "the work of the run is NaN; it must be a number", 2, "3"),
    # draws outside their law
    ("run s (~exp(x));", 6, 10, "the mean of `~exp` is 0; it must be positive and finite", 1, "2"),
    ("run s (~exp(1 / x));", 6, 10, "the mean of `~exp` is inf; it must be positive and finite", 1, "2"),
    ("run s (~uniform(1, x));", 6, 10, "the high end of `~uniform` is 0; it must be finite and at least the low end, 1", 1, "2"),
    ("run s (~uniform(0, 1 / x));", 6, 10, "the high end of `~uniform` is inf; it must be finite and at least the low end, 0", 1, "2"),
    ("run s (~uniform(-1 / x, 1));", 6, 10, "the low end of `~uniform` is -inf; it must be a finite number", 1, "2"),
    ("run s (~erlang(x, 1));", 6, 10, "the phases of `~erlang` is 0; it must be at least 1 and finite", 1, "2"),
    ("run s (~erlang(1 / x, 1));", 6, 10, "the phases of `~erlang` is inf; it must be at least 1 and finite", 1, "2"),
    ("run s (~erlang(2, x));", 6, 10, "the mean of `~erlang` is 0; it must be positive and finite", 1, "2"),
    ("run s (~h2(x, 4));", 6, 10, "the mean of `~h2` is 0; it must be positive and finite", 1, "2"),
    ("run s (~h2(1, 0 / (x + 1)));", 6, 10, "the cv2 of `~h2` is NaN; it must be a finite number", 2, "3"),
    ("run s (~h2(1, 1 / x));", 6, 10, "the cv2 of `~h2` is inf; it must be a finite number", 1, "2"),
    # the clauses of a hold
    ("hold kv (1) { run s (1); } cache (0 / (x + 1));", 6, 3, "the length of the hold's cache is NaN; it must be a number", 2, "4"),
    ("hold kv (1) { run s (1); } lease kv (x);", 6, 3, "the duration of `lease kv` is -1; it must be at least 0", 2, "4"),
    ("hold kv (1) { run s (1); } lease kv (0 / (x + 1));", 6, 3, "the duration of `lease kv` is NaN; it must be at least 0", 2, "4"),
    ("hold kv (1) reuse (0 / (x + 1)) { run s (1); } cache (1);", 6, 3, "the `reuse` of the hold is NaN; it must be a number", 2, "3"),
    # a computed choose count (a constant one is a link error)
    ("choose j in 1 / x by (j); run s (1);", 6, 3, "choose over inf candidates: need a whole count from 1 to 1000000 (the largest family)", 1, "2"),
    ("run s (1 + ~bernoulli(x - 1.5));", 6, 14, "the probability of `~bernoulli` is -0.5; it must be in [0, 1]", 0, "1"),
    ("run s (1 + ~bernoulli(x + 2));", 6, 14, "the probability of `~bernoulli` is 3; it must be in [0, 1]", 0, "1"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "line", "column", "message", "serial", "time"), CASES)
def test_a_value_outside_its_domain_stops_the_run_at_its_construct(
    body, line, column, message, serial, time
):
    d = run_error(session(body))
    assert (d.span.line, d.span.column, d.message) == (line, column, message)
    assert d.notes == (f"in session {serial}; at simulated time {time}",)


def test_a_draw_with_constant_arguments_outside_its_law_fails_when_drawn():
    d = run_error(session("observe y = ~uniform(2, 1); run s (1);"))
    assert (d.span.line, d.span.column) == (6, 15)
    assert (
        d.message
        == "the high end of `~uniform` is 1; it must be finite and at least the low end, 2"
    )
    assert d.notes == ("in session 0; at simulated time 1",)


def test_a_constant_draw_outside_its_law_that_is_never_drawn_does_not_fail():
    text = session("branch (serial > 1000) { observe y = ~exp(-1); } run s (1);")
    report, diagnostics = outcome(text)
    assert report is not None and diagnostics == []


@pytest.mark.parametrize(
    ("clauses", "where", "message", "time"),
    [
        # a negative cost: the clock ran backwards, each iteration ending before it started
        (
            "budget 16; cost 1 - tokens;",
            (2, 34),
            "the cost of an iteration of `E` is -7; it must be at least 0",
            1,
        ),
        (
            "budget 16 - 10 * now; cost 1;",
            (2, 25),
            "the budget of `E` is -4; it must be at least 0",
            2,
        ),
        (
            "budget 16; cost 1; chunk (now - 1) / (now - 1);",
            (2, 43),
            "the chunk of `E` is NaN; it must be a number",
            1,
        ),
    ],
    ids=["negative cost", "negative budget", "NaN chunk"],
)
def test_a_step_expression_outside_its_domain_stops_the_run_at_it(clauses, where, message, time):
    text = f"""pool kv {{ cap 100; }}
stage E : step {{ {clauses} memory kv; }}
workload {{ arrive renewal(1); }}
session {{ hold kv (8) {{ run E prefill (8) growing kv; }} }}
run {{ horizon 100; }}
"""
    d = run_error(text)
    assert (d.span.line, d.span.column) == where  # the expression
    assert d.message == message
    assert d.notes == (f"at simulated time {time}",)


@pytest.mark.parametrize(
    ("capacity", "shown"),
    [
        ("present - 1", "0"),
        ("1 - present", "0"),
        ("-2 * present", "-2"),
        ("0 / (present - 1)", "NaN"),
    ],
)
def test_a_ps_stage_without_capacity_stops_the_run(capacity, shown):
    # ps(0) stalled to the horizon without a word (a constant capacity is now a link error,
    # tests/link/test_link_domains.py)
    text = f"stage p : ps({capacity});\nworkload {{ arrive renewal(1); }}\nsession {{ run p (1); }}\nrun {{ horizon 100; }}\n"
    d = run_error(text)
    assert (d.span.line, d.span.column) == (1, 14)  # the capacity expression
    assert d.message == f"the capacity of ps stage `p` with 1 job is {shown}; it must be positive"
    assert d.notes == ("at simulated time 1",)


def test_negative_hold_units_no_longer_create_capacity():
    d = run_error(session("hold kv (x - 5) { run s (1); }"))
    assert d.message == "the units of `hold kv` is -4; it must be at least 0"


def test_negative_work_is_a_run_of_no_work_as_the_reference_has_it():
    report, diagnostics = outcome(session("run s (x); observe t = now;"))
    assert report is not None and diagnostics == []


# ------------------------------------------------------------------- ~h2 with cv2 < 1

H2 = """stage s : fifo(1);
workload {{ arrive batch(1); }}
session {{ loop {{ observe x = ~h2(2, {cv2}); run s (1); }} }}
run {{ horizon 20000; seed 3; }}
"""


@pytest.mark.parametrize("cv2", ["0.5", "0", "-1", "-inf"])
def test_h2_below_one_draws_an_exponential_and_warns_at_the_draw(cv2):
    report, diagnostics = outcome(H2.format(cv2=cv2))
    assert report is not None
    [w] = diagnostics
    assert (w.code, w.severity.label, w.span.line, w.span.column) == ("W-draw", "warning", 3, 30)
    assert w.message == (
        f"`~h2(2, {cv2})`: no hyperexponential has a cv2 below 1; this draws `~h2(2, 1)`, "
        "an exponential of mean 2, not the variance asked for"
    )
    x = report.observe("x")
    assert x.count > 19000
    # the draws of ~h2(2, 1): the same seed gives the same values
    same, _ = outcome(H2.format(cv2="1"))
    assert report.observe("x").mean == same.observe("x").mean
    assert abs(x.mean - 2) < 0.1 and abs(x.cv2 - 1) < 0.1


def test_h2_below_one_matches_the_reference_in_distribution(reference):
    ours, _ = outcome(H2.format(cv2="0.5"))
    theirs = reference.run(source=H2.format(cv2="0.5"))
    # the reference draws ~h2(2, 1) too: its samples are those of cv2 = 1 exactly
    assert list(theirs.observe("x").samples) == list(
        reference.run(source=H2.format(cv2="1")).observe("x").samples
    )
    a, b = ours.observe("x"), theirs.observe("x")
    assert abs(a.mean - b.mean) < 3 * (a.ci + b.ci)
    assert abs(a.cv2 - b.cv2) < 0.15


def test_a_computed_cv2_below_one_warns_once_at_the_draw():
    text = H2.replace("~h2(2, {cv2})", "~h2(2, 0.5 + serial)").format()
    report, diagnostics = outcome(text)
    assert report is not None
    assert [(d.code, d.span.line) for d in diagnostics] == [("W-draw", 3)]


GUARDED = """let scv = {scv};
stage s : fifo(1);
workload {{ arrive poisson(0.5); }}
session {{
  set w = scv == 0 ? ~det(1) : scv == 1 ? ~exp(1) : ~h2(1, scv);
  run s (w);
  observe w = w;
}}
run {{ horizon 400; seed 3; }}
"""


@pytest.mark.parametrize("scv", ["0", "1", "0.5", "4"])
def test_a_draw_in_a_branch_a_constant_test_never_takes_warns_of_nothing(scv):
    """`scv == 0 ? ~det(m) : ~h2(m, scv)` is how a program guards a law against a
    parameter it cannot take: with scv = 0 (a `let`, or `--set`) the `~h2(1, 0)` is never
    drawn and warns of nothing, on both paths; with 0.5 it is drawn, and warns."""
    said, ended = warnings_on_both_paths(GUARDED.format(scv=scv))
    assert ended > 100
    assert [(code, line) for code, line, _, _ in said] == (
        [("W-draw", 5)] if scv == "0.5" else []
    )


# ------------------------------------------------------------------ overflowing floats


def test_a_statistic_beyond_the_float_range_is_reported_not_a_crash():
    text = """stage s : fifo(1);
workload { arrive renewal(1); }
session { run s (1); observe v = 1e200 * serial; observe u = 1e200; observe w = -1e308 * serial; }
gauge g = 1e300 * queue(s);
run { horizon 100; }
"""
    report, diagnostics = outcome(text)
    assert report is not None and diagnostics == []
    assert report.observe("u").mean == pytest.approx(1e200)
    assert report.observe("v").mean == pytest.approx(
        statistics.fmean([1e200 * i for i in range(99)])
    )
    assert report.observe("v").ci == float("inf")
    assert report.observe("w").mean == float("-inf")
    assert report.json()  # the JSON renders


# ----------------------------------------------------------------- ~erlang of many phases

ERLANG = """stage s : delay;
workload {{ arrive batch(4000); }}
session {{ observe x = ~erlang({k}, 2); run s (1); }}
run {{ horizon 10; seed 5; }}
"""


@pytest.mark.parametrize("k", ["65", "1000", "1e9", "1e300"])
def test_an_erlang_of_many_phases_is_drawn_at_once_with_its_law(k):
    # ~erlang(1000, m) drew inf (the product of 1000 uniforms underflows) and stalled the
    # run; ~erlang(1e9, m) took minutes a draw; ~erlang(inf, m) was an E-internal
    report, diagnostics = outcome(ERLANG.format(k=k))
    assert report is not None and diagnostics == []
    x = report.observe("x")
    assert abs(x.mean - 2) < 0.01
    assert x.cv2 == pytest.approx(1 / float(k), rel=0.1, abs=1e-6)


def test_an_erlang_of_few_phases_multiplies_one_uniform_a_phase():
    from serq.sim import draws

    uniforms = iter([0.5, 0.25, 0.75])
    value = draws.erlang(lambda: next(uniforms), 3, 6)
    assert value == -(6 / 3) * math.log(0.5 * 0.75 * 0.25)


def test_a_statistic_of_tiny_values_is_reported_not_a_crash():
    # a mean of 2e-300 squared to 0 in the cv2: a ZeroDivisionError (found by the fuzzer)
    text = """stage s : fifo(1);
workload { arrive renewal(1); }
session { run s (1); observe v = 1e-300 * (1 + serial); observe w = 2e-300; }
run { horizon 100; }
"""
    report, diagnostics = outcome(text)
    assert report is not None and diagnostics == []
    v, w = report.observe("v"), report.observe("w")
    assert v.cv2 == pytest.approx(statistics.variance(range(1, 100)) / 50**2)
    assert w.cv2 == 0
