"""The domain of every constant position, checked where the constant is written.

Each case is a program one constant away from a valid one; the error is `E-constant` at
the constant's expression, with the value it folds to. The values are drawn from the whole
domain the grammar admits (0, negatives, fractions, `inf`, a folded expression). A value
that a `--set` override gives is the override's error: at the `let` it changes, naming
it, with a label at the constant position. The near misses (the domain's edges that are
valid) link.
"""

from __future__ import annotations

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
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "column", "message"), CASES)
def test_a_constant_outside_its_domain_is_an_error_at_its_expression(text, line, column, message):
    assert errors(text) == [(line, column, "E-constant", message)]


@pytest.mark.parametrize(
    "text",
    [
        program(arrive="poisson(1e-300)"),
        program(arrive="poisson(1e300)"),
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


# ------------------------------------------------------- the command line's overrides


def _compile_error(**settings) -> str:
    compiled, diagnostics = sim_api.compile_program(program(), "t.sq", **settings)
    assert compiled is None
    [d] = diagnostics
    assert d.code == "E-constant"
    return d.message


def test_an_infinite_horizon_override_without_arrivals_is_an_error():
    # `serq run examples/mm1.sq --horizon inf` ran forever
    assert _compile_error(horizon=float("inf")) == (
        "the horizon is inf and no `arrivals` bounds the run: it would never end"
    )
    compiled, _ = sim_api.compile_program(program(), "t.sq", horizon=float("inf"), arrivals=5)
    assert compiled is not None


def test_the_command_line_seed_has_the_run_blocks_range():
    assert _compile_error(seed=-1) == "the seed -1 is out of range"
    assert _compile_error(seed=SEED_MAX + 1) == f"the seed {SEED_MAX + 1} is out of range"
    compiled, _ = sim_api.compile_program(program(), "t.sq", seed=SEED_MAX)
    assert compiled is not None and compiled.program.seed == SEED_MAX


def test_the_command_line_warmup_and_arrivals_are_checked():
    assert _compile_error(warmup=-1.0) == "warmup -1 is negative"
    assert _compile_error(warmup=10.0) == "warmup 10 is not below the horizon 10"
    assert _compile_error(arrivals=0) == "0 arrivals"
