"""A count an option takes may be written as a number whose value is a whole number
(`--arrivals 1e3`, `--seeds 1e9`), as `--horizon 1e9` and the run block's `arrivals 1e3;`
are read: they said "not a whole number: '1e9'" (round 28, NOTES §64). Read as a decimal,
so a seed near 2^64 is the integer written, never a float's rounding of it; a fraction,
inf, NaN and an exponent past every count stay usage errors."""

from __future__ import annotations

import argparse

import pytest

from serq.cli import _arrivals, _count, _positive_count, _seed, main


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1e3", 1000),
        ("1000.0", 1000),
        ("0.5e1", 5),
        ("1e19", 10**19),
        ("1.8446744073709551615e19", 2**64 - 1),  # a float would round it to 2**64
        ("-0", 0),
        ("0e5", 0),
    ],
)
def test_a_whole_number_written_as_a_number(text, value):
    assert _seed(text) == value
    if value >= 1:
        assert _positive_count(text) == value


@pytest.mark.parametrize(
    "text",
    ["1.5", "1e-3", "1e-999999999", "1e999999999", "inf", "Infinity", "nan", "sNaN", "x", ""],
)
def test_what_is_not_one_stays_a_usage_error(text):
    for parse in (_seed, _count, _positive_count, _arrivals):
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_seeds_1e9_is_refused_as_too_many_runs_not_as_no_number(capsys):
    status = main(["sweep", "examples/mm1.sq", "--set", "lambda=0.5", "--seeds", "1e9"])
    err = capsys.readouterr().err
    assert status == 1 and "1,000,000,000 seeds, more than 1,000,000 runs" in err


def test_arrivals_1e3_runs_as_the_run_block_would(capsys):
    argv = ["run", "examples/mm1.sq", "--arrivals", "1e2", "--horizon", "inf", "--warmup", "0"]
    assert main([*argv, "--json"]) == 0
    out = capsys.readouterr().out
    assert (
        main(
            [
                "run",
                "examples/mm1.sq",
                "--arrivals",
                "100",
                "--horizon",
                "inf",
                "--warmup",
                "0",
                "--json",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out == out
