"""The domain of every constant position, checked where the constant is written.

Each case is a program one constant away from a valid one; the error is `E-constant` at
the constant's expression, with the value it folds to. The values are drawn from the whole
domain the grammar admits (0, negatives, fractions, `inf`, a folded expression). A value
that a `--set` override gives is the override's error: at the `let` it changes, naming
it, with a label at the constant position. The near misses (the domain's edges that are
valid) link.
"""

from __future__ import annotations

import math

import pytest

from serq import api
from serq.sim import api as sim_api
from serq.vocabulary import SEED_MAX

STAGE = "stage s : fifo(1);\n"
SESSION = "session { run s (1); }\n"
STEP = "session { hold kv (1) { run s prefill (1); } }\n"
RUN = "run { horizon 10; }\n"


def program(
    *, arrive="poisson(1)", run=RUN, pool="pool kv { cap 10; }\n", stage=STAGE, session=SESSION
) -> str:
    return f"{pool}{stage}workload {{ arrive {arrive}; }}\n{session}{run}"


def errors(text: str, sets=None) -> list[tuple[int, int, str, str]]:
    linked, diagnostics = api.link_source(text, "t.sq", sets=sets)
    assert linked is None
    return [(d.span.line, d.span.column, d.code, d.message) for d in diagnostics]


def links(text: str, sets=None) -> None:
    linked, diagnostics = api.link_source(text, "t.sq", sets=sets)
    assert [d.message for d in diagnostics] == []
    assert linked is not None


WHOLE_SEED = f"a whole number from 0 to {SEED_MAX}"
CASES = [
    # arrive poisson(r): 0 < r < inf
    (program(arrive="poisson(0)"), 3, 27, "the poisson rate must be positive and finite, not 0"),
    (program(arrive="poisson(-1)"), 3, 27, "the poisson rate must be positive and finite, not -1"),
    (program(arrive="poisson(inf)"), 3, 27, "the poisson rate must be positive and finite, not inf"),
    (program(arrive="poisson(0.5 - 1 / 2)"), 3, 27, "the poisson rate must be positive and finite, not 0"),
    # closed(n), batch(n): positive whole numbers
    (program(arrive="closed(0)"), 3, 26, "the closed population must be a whole number from 1 to 1000000000, not 0"),
    (program(arrive="closed(1.5)"), 3, 26, "the closed population must be a whole number from 1 to 1000000000, not 1.5"),
    (program(arrive="batch(0)"), 3, 25, "the batch population must be a whole number from 1 to 1000000000, not 0"),
    (program(arrive="batch(-2)"), 3, 25, "the batch population must be a whole number from 1 to 1000000000, not -2"),
    (program(arrive="batch(inf)"), 3, 25, "the batch population must be a whole number from 1 to 1000000000, not inf"),
    # arrivals: a positive whole number
    (program(run="run { horizon 10; arrivals 0; }\n"), 5, 28, "the arrivals must be a whole number from 1 to 1000000000000, not 0"),
    (program(run="run { horizon 10; arrivals 2.5; }\n"), 5, 28, "the arrivals must be a whole number from 1 to 1000000000000, not 2.5"),
    # horizon: positive, finite unless `arrivals` bounds the run
    (program(run="run { horizon inf; }\n"), 5, 15, "the horizon must be positive and finite (or `arrivals N;` bounds the run), not inf"),
    (program(run="run { horizon 0; }\n"), 5, 15, "the horizon must be positive and finite (or `arrivals N;` bounds the run), not 0"),
    (program(run="run { horizon -5; arrivals 3; }\n"), 5, 15, "the horizon must be positive, not -5"),
    # warmup: 0 <= warmup < horizon
    (program(run="run { horizon 10; warmup 10; }\n"), 5, 26, "the warmup must be at least 0 and below the horizon 10, not 10"),
    (program(run="run { horizon 10; warmup -1; }\n"), 5, 26, "the warmup must be at least 0 and below the horizon 10, not -1"),
    (program(run="run { horizon 10; warmup inf; }\n"), 5, 26, "the warmup must be at least 0 and below the horizon 10, not inf"),
    # seed: the one range of the command line and the run block
    (program(run="run { horizon 10; seed -1; }\n"), 5, 24, f"the seed must be {WHOLE_SEED}, not -1"),
    (program(run="run { horizon 10; seed 0.5; }\n"), 5, 24, f"the seed must be {WHOLE_SEED}, not 0.5"),
    (program(run="run { horizon 10; seed inf; }\n"), 5, 24, f"the seed must be {WHOLE_SEED}, not inf"),
    (program(run="run { horizon 10; seed 1e20; }\n"), 5, 24, f"the seed must be {WHOLE_SEED}, not 1e+20"),
    # block positive (and finite), cap non-negative
    (program(pool="pool kv { cap 10; block 0; }\n"), 1, 25, "the block of pool `kv` must be positive and finite, not 0"),
    (program(pool="pool kv { cap 10; block -16; }\n"), 1, 25, "the block of pool `kv` must be positive and finite, not -16"),
    (program(pool="pool kv { cap 10; block inf; }\n"), 1, 25, "the block of pool `kv` must be positive and finite, not inf"),
    (program(pool="pool kv { cap -1; }\n"), 1, 15, "the cap of pool `kv` must be at least 0, not -1"),
    (program(pool="pool kv { cap -inf; }\n"), 1, 15, "the cap of pool `kv` must be at least 0, not -inf"),
    # fifo(c): a positive whole number
    (program(stage="stage s : fifo(0);\n"), 2, 16, "the servers of fifo stage `s` must be a whole number at least 1, not 0"),
    (program(stage="stage s : fifo(2.5);\n"), 2, 16, "the servers of fifo stage `s` must be a whole number at least 1, not 2.5"),
    (program(stage="stage s : fifo(-1);\n"), 2, 16, "the servers of fifo stage `s` must be a whole number at least 1, not -1"),
    # budget: positive
    (program(stage="stage s : step { budget 0; cost 1; }\n", session=STEP), 2, 25, "the budget of step stage `s` must be positive, not 0"),
    (program(stage="stage s : step { budget -8; cost 1; }\n", session=STEP), 2, 25, "the budget of step stage `s` must be positive, not -8"),
    (program(stage="stage s : step { budget 1 - 1; cost 1; }\n", session=STEP), 2, 25, "the budget of step stage `s` must be positive, not 0"),
    (program(stage="stage s : step { budget 0/0; cost 1; }\n", session=STEP), 2, 25, "the budget of step stage `s` must be positive, not NaN"),
    # a step cost that reads nothing: at least 0 and finite; a chunk: a number (0 or less:
    # no cap)
    (program(stage="stage s : step { budget 8; cost -1; }\n", session=STEP), 2, 33, "the cost of step stage `s` must be at least 0 and finite, not -1"),
    (program(stage="stage s : step { budget 8; cost 1 - 2; }\n", session=STEP), 2, 33, "the cost of step stage `s` must be at least 0 and finite, not -1"),
    (program(stage="stage s : step { budget 8; cost -inf; }\n", session=STEP), 2, 33, "the cost of step stage `s` must be at least 0 and finite, not -inf"),
    (program(stage="stage s : step { budget 8; cost 0/0; }\n", session=STEP), 2, 33, "the cost of step stage `s` must be at least 0 and finite, not NaN"),
    (program(stage="stage s : step { budget 8; cost inf; }\n", session=STEP), 2, 33, "the cost of step stage `s` must be at least 0 and finite, not inf"),
    (program(stage="stage s : step { budget 8; cost 1; chunk inf - inf; }\n", session=STEP), 2, 42, "the chunk of step stage `s` must be a number, not NaN"),
    # a ps capacity that reads nothing: positive
    (program(stage="stage s : ps(0);\n"), 2, 14, "the capacity of ps stage `s` must be positive, not 0"),
    (program(stage="stage s : ps(-0);\n"), 2, 14, "the capacity of ps stage `s` must be positive, not -0"),
    (program(stage="stage s : ps(-2.5);\n"), 2, 14, "the capacity of ps stage `s` must be positive, not -2.5"),
    (program(stage="stage s : ps(0/0);\n"), 2, 14, "the capacity of ps stage `s` must be positive, not NaN"),
    (program(stage="stage s : ps(min(0, 4));\n"), 2, 14, "the capacity of ps stage `s` must be positive, not 0"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "column", "message"), CASES)
def test_a_constant_outside_its_domain_is_an_error_at_its_expression(text, line, column, message):
    assert errors(text) == [(line, column, "E-constant", message)]


@pytest.mark.parametrize(
    "text",
    [
        program(arrive="poisson(1e-300)"),
        program(arrive="poisson(1e300)", run="run { horizon 10; arrivals 5; }\n"),
        program(arrive="poisson(1e10)", run="run { horizon 99; }\n"),  # 9.9e11 arrivals
        program(arrive="closed(1)"),
        program(arrive="batch(1000000000)"),
        program(run="run { horizon inf; arrivals 3; }\n"),  # `arrivals` bounds the run
        program(run="run { horizon 10; warmup 0; seed 0; }\n"),
        # the greatest seed a float holds below 2^64 (a literal folds to a float)
        program(run="run { horizon 10; warmup 9.999; seed 18446744073709549568; }\n"),
        program(pool="pool kv { cap 0; block 0.5; }\n"),
        program(pool="pool kv { cap inf; }\n"),
        program(stage="stage s : step { budget inf; cost 1; }\n", session=STEP),
        program(
            stage="stage s : step { budget 0.5; cost 1; chunk 0; }\n", session=STEP
        ),  # chunk <= 0: no cap
        program(stage="stage s : step { budget 1; cost 1; chunk -1; }\n", session=STEP),
        program(stage="stage s : step { budget 1; cost 0; chunk -inf; }\n", session=STEP),
        program(stage="stage s : step { budget 1; cost -0; }\n", session=STEP),
        program(stage="stage s : ps(1e-300);\n"),
        program(stage="stage s : ps(inf);\n"),
        program(stage="stage s : ps(1 - present);\n"),  # computed: checked as it runs
    ],
)
def test_the_edges_of_each_domain_link(text):
    links(text)


def test_no_horizon_in_the_block_is_left_to_the_command_line():
    links(program(run="run { seed 3; }\n"))


# ------------------------------------------------------------------- --set overrides

MM1 = """let lambda = 0.8;
let twice = 2 * lambda;
stage server : fifo(1);
workload { arrive poisson(twice); }
session { run server (~exp(1)); }
run { horizon 100; }
"""


@pytest.mark.parametrize(("value", "shown"), [(0, "0"), (-1, "-1"), ("inf", "inf"), ("1 - 1", "0")])
def test_an_override_out_of_domain_is_reported_at_the_let_it_changes(value, shown):
    linked, diagnostics = api.link_source(MM1, "mm1.sq", sets={"lambda": value})
    assert linked is None
    [d] = diagnostics
    folded = "0" if shown == "0" else ("-2" if shown == "-1" else "inf")
    assert (d.code, d.span.file, d.span.line, d.span.column) == ("E-constant", "mm1.sq", 1, 5)
    assert d.message == (
        f"the poisson rate must be positive and finite, not {folded}: "
        f"`--set lambda={shown}` makes it so"
    )
    [label] = d.labels
    assert (label.span.line, label.span.column) == (4, 27)
    assert label.text == f"the poisson rate is {folded} here"
    assert d.help == "give `--set lambda` a value that makes the poisson rate positive and finite"


def test_an_override_of_a_count_names_the_override():
    text = "let n = 4;\nstage s : fifo(n);\nworkload { arrive closed(n); }\n" + SESSION + RUN
    found = errors(text, sets={"n": 0})
    assert sorted(found) == [
        (1, 5, "E-constant", "the closed population must be a whole number from 1 to 1000000000, "
         "not 0: `--set n=0` makes it so"),
        (1, 5, "E-constant", "the servers of fifo stage `s` must be a whole number at least 1, "
         "not 0: `--set n=0` makes it so"),
    ]  # fmt: skip


def test_an_override_within_the_domain_links():
    links(MM1, sets={"lambda": 0.5})


@pytest.mark.parametrize("value", ["0/0", "inf - inf", float("nan")])
def test_a_nan_override_is_reported_at_the_let_it_changes(value):
    # it was reported in the override's own text, as a usage error
    linked, diagnostics = api.link_source(MM1, "mm1.sq", sets={"lambda": value})
    assert linked is None
    [d] = diagnostics
    assert (d.code, d.span.file, d.span.line, d.span.column) == ("E-constant", "mm1.sq", 1, 5)
    assert d.message == "`let lambda` is NaN: `--set lambda` makes it so"


ARGS = """use "std/args";
let r = args.number("rate", 0.5);
stage s : fifo(1);
workload { arrive poisson(r); }
session { run s (~exp(1)); }
run { horizon 100; }
"""


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "the poisson rate must be positive and finite, not 0: `--set rate=0` makes it so"),
        ("0/0", "`let r` is NaN: `--set rate` makes it so"),
    ],
)
def test_an_override_of_a_program_argument_names_the_argument(value, message):
    # it named the `let` (`--set r=0`), which the user never wrote
    linked, diagnostics = api.link_source(ARGS, "args.sq", sets={"rate": value})
    assert linked is None
    [d] = diagnostics
    assert (d.span.file, d.span.line, d.span.column, d.message) == ("args.sq", 2, 5, message)


# ------------------------------------------------------- the command line's overrides

MM1_RUN = """let lambda = 0.8;
stage server : fifo(1);
workload { arrive poisson(lambda); }
session { run server (~exp(1)); }
run {
  horizon 20000;
  warmup 1000;
}
"""


def _compile_error(text: str = MM1_RUN, **settings) -> tuple[int, int, str]:
    compiled, diagnostics = sim_api.compile_program(text, "t.sq", **settings)
    assert compiled is None
    [d] = diagnostics
    assert d.code == "E-constant"
    return d.span.line, d.span.column, d.message


def test_an_infinite_horizon_override_without_arrivals_is_an_error_at_the_run_block():
    # `serq run examples/mm1.sq --horizon inf` ran forever; then it was an error at 1:1
    assert _compile_error(horizon=float("inf")) == (
        5,
        1,
        "the horizon is inf and no `arrivals` bounds the run: it would never end "
        "(with `--horizon inf`)",
    )
    compiled, _ = sim_api.compile_program(MM1_RUN, "t.sq", horizon=float("inf"), arrivals=5)
    assert compiled is not None


def test_a_horizon_override_below_the_programs_warmup_points_at_the_warmup():
    # `serq run examples/mm1.sq --horizon 200`
    assert _compile_error(horizon=200.0) == (
        7,
        10,
        "warmup 1000 is not below the horizon 200 (with `--horizon 200`)",
    )
    assert _compile_error(warmup=30000.0) == (
        6,
        11,
        "warmup 30000 is not below the horizon 20000 (with `--warmup 30000`)",
    )


def test_settings_the_program_does_not_write_point_at_fn_main():
    text = "fn main() {\n  stage s : delay;\n  workload { arrive batch(1); }\n  server { run s (1); }\n}\n"
    assert _compile_error(text) == (1, 1, "the run has no horizon")
    assert _compile_error(text, horizon=10.0, warmup=20.0) == (
        1,
        1,
        "warmup 20 is not below the horizon 10 (with `--warmup 20` and `--horizon 10`)",
    )


def test_the_command_line_seed_has_the_run_blocks_range():
    assert _compile_error(seed=-1)[2] == "the seed -1 is out of range (with `--seed -1`)"
    assert _compile_error(seed=SEED_MAX + 1)[2] == (
        f"the seed {SEED_MAX + 1} is out of range (with `--seed {SEED_MAX + 1}`)"
    )
    compiled, _ = sim_api.compile_program(MM1_RUN, "t.sq", seed=SEED_MAX)
    assert compiled is not None and compiled.program.seed == SEED_MAX


def test_the_command_line_warmup_and_arrivals_are_checked():
    assert _compile_error(warmup=-1.0)[2] == "warmup -1 is negative (with `--warmup -1`)"
    # a NaN warm-up was said to be negative (mutants at seed 72, m537)
    assert _compile_error(warmup=math.nan)[2] == "warmup nan is not a number (with `--warmup nan`)"
    assert _compile_error(arrivals=0) == (5, 1, "0 arrivals (with `--arrivals 0`)")
    assert _compile_error(arrivals=10**13)[2] == (
        "10000000000000 arrivals (with `--arrivals 10000000000000`)"
    )


@pytest.mark.parametrize(
    ("arrive", "message"),
    [
        (
            "poisson(1e300)",
            "sessions arriving at rate 1e+300 until the horizon 200 would number about 2e+302, "
            "more than a run can make (at most 1,000,000,000,000 arrivals)",
        ),
        (
            "renewal(~h2(1e-300, 4))",
            "sessions arriving a mean gap of 1e-300 apart until the horizon 200 would number "
            "about 2e+302, more than a run can make (at most 1,000,000,000,000 arrivals)",
        ),
        (
            "renewal(1e-11)",
            "sessions arriving a mean gap of 1e-11 apart until the horizon 200 would number "
            "about 2e+13, more than a run can make (at most 1,000,000,000,000 arrivals)",
        ),
    ],
)
def test_an_open_workload_that_would_never_reach_its_horizon_is_an_error(arrive, message):
    # `poisson(1e300)` (found by the fuzzer) ran for ever: 2e302 arrivals before time 200
    text = program(arrive=arrive, run="run { horizon 200; }\n")
    assert errors(text) == [(3, 12, "E-constant", message)]  # `serq check` says so
    # without a horizon of its own, the command line's is counted
    text = program(arrive=arrive, run="")
    links(text)
    assert _compile_error(text, horizon=200.0) == (3, 12, message)
    compiled, _ = sim_api.compile_program(text, "t.sq", horizon=200.0, arrivals=10)
    assert compiled is not None  # bounded by `arrivals`


# ------------------------------------------------------------ choose, workload blocks


@pytest.mark.parametrize(
    ("count", "shown"),
    [("inf", "inf"), ("0", "0"), ("2.5", "2.5"), ("0/0", "NaN"), ("2e6", "2e+06")],
)
def test_a_constant_choose_count_outside_its_domain_is_an_error_at_it(count, shown):
    # `choose j in inf by (...)` was an E-internal OverflowError (found by the fuzzer)
    text = program(
        stage="stage s[3] : fifo(1);\n",
        session=f"session {{ choose j in {count} by (queue(s[j])); run s[j] (1); }}\n",
    )
    assert errors(text) == [
        (
            4,
            23,
            "E-constant",
            f"the count of `choose j` must be a whole number from 1 to 1000000, not {shown}",
        )
    ]


@pytest.mark.parametrize(
    ("clause", "column"),
    [
        ("turn { set n = 5; turn; }", 49),  # recursed until Python's stack ran out
        ("init { run s (1); }", 38),
        ("init { branch (1) { set n = 1; } }", 38),
        ("turn { hold kv (1) { set n = 1; } }", 38),
        ("init { end; }", 38),
    ],
)
def test_workload_blocks_only_set_and_observe(clause, column):
    word = clause.split()[0]
    text = (
        f"pool kv {{ cap 10; }}\n{STAGE}workload {{ arrive poisson(1); {clause} }}\n"
        f"session {{ turn; run s (1); }}\n{RUN}"
    )
    assert errors(text) == [
        (3, column, "E-structure", f"a workload's `{word}` block may only `set` and `observe`")
    ]
