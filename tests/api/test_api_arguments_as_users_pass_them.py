"""`serq.compile`, `serq.run` and `serq.sweep` with the values notebook users pass by
mistake (NOTES §52): each is refused with an error naming the argument, or read as the
number it is; never a bare error from deep inside, never a silent other number."""

from __future__ import annotations

import json
import math
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import serq

MM1 = str(Path(__file__).resolve().parents[2] / "examples" / "mm1.sq")
SHORT = {"horizon": 60, "warmup": 5}


def _mean(**settings: object) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = serq.run(serq.compile(MM1, **{**SHORT, **settings}))  # type: ignore[arg-type]
    return report.observe("sojourn").mean  # type: ignore[union-attr]


@pytest.mark.parametrize("name", ["horizon", "warmup", "seed", "arrivals"])
@pytest.mark.parametrize("value", ["100", True, False, [1], 1 + 0j, Path("x")])
def test_compile_refuses_a_setting_of_the_wrong_kind_naming_it(name: str, value: object) -> None:
    with pytest.raises(TypeError, match=f"compile: `{name}` is a"):
        serq.compile(MM1, **{**SHORT, name: value})  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["seed", "arrivals"])
@pytest.mark.parametrize("value", [1.5, 150.0, -0.0, math.inf, math.nan, np.float64(3)])
def test_a_whole_number_setting_refuses_floats(name: str, value: object) -> None:
    with pytest.raises(TypeError, match=f"`{name}` is a whole number, not"):
        serq.compile(MM1, **{**SHORT, name: value})  # type: ignore[arg-type]


def test_seed_true_was_a_different_run_from_seed_1_and_is_refused() -> None:
    with pytest.raises(TypeError, match="not bool True"):
        serq.compile(MM1, seed=True, **SHORT)


def test_numpy_numbers_are_the_numbers_they_hold() -> None:
    plain = _mean(seed=7)
    assert _mean(seed=np.int64(7)) == plain
    assert _mean(seed=np.uint64(7), horizon=np.float64(60), warmup=np.int32(5)) == plain
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = serq.run(serq.compile(MM1, seed=np.int64(7), horizon=np.float32(60), warmup=5))
    assert type(report.seed) is int and type(report.horizon) is float
    json.loads(report.json())  # numpy numbers in a report could not be written


def test_numpy_values_in_sets_are_numbers() -> None:
    assert _mean(sets={"lambda": np.float64(0.5)}) == _mean(sets={"lambda": 0.5})
    assert _mean(sets={"lambda": np.int64(1)}) == _mean(sets={"lambda": 1})
    assert _mean(sets={"lambda": np.float32(0.5)}) == _mean(sets={"lambda": 0.5})


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        ([("lambda", 0.5)], "`sets` is a dict"),
        ("lambda=0.5", "`sets` is a dict"),
        ({"lambda": None}, r"`sets\['lambda'\]` is a number or an expression's text"),
        ({"lambda": [0.5]}, r"`sets\['lambda'\]` is a number or an expression's text"),
        ({1: 0.5}, "a name in `sets` is a str"),
    ],
)
def test_compile_refuses_sets_of_the_wrong_shape(sets: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        serq.compile(MM1, sets=sets, **SHORT)  # type: ignore[arg-type]


def test_compile_refuses_defs_of_the_wrong_shape() -> None:
    with pytest.raises(TypeError, match=r"`defs\['cost'\]` is an expression's text"):
        serq.compile(MM1, defs={"cost": 0.5}, **SHORT)  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="`defs` is a dict"):
        serq.compile(MM1, defs=["cost"], **SHORT)  # type: ignore[arg-type]


def test_a_path_object_compiles_and_bytes_are_refused() -> None:
    assert serq.compile(Path(MM1), **SHORT).path == MM1
    with pytest.raises(TypeError, match="`path` is a file name"):
        serq.compile(MM1.encode(), **SHORT)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="decode it first"):
        serq.compile(source=Path(MM1).read_bytes(), **SHORT)  # type: ignore[arg-type]


def test_numbers_past_any_float_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="`horizon` is past the largest float"):
        serq.compile(MM1, horizon=10**400)
    with pytest.raises(ValueError, match="the seed 1000"):
        serq.compile(MM1, seed=10**400, **SHORT)


def test_run_refuses_what_compile_did_not_give() -> None:
    for wrong in (MM1, None, serq.run(serq.compile(MM1, **SHORT))):
        with pytest.raises(TypeError, match="run takes the program `serq.compile` returns"):
            serq.run(wrong)  # type: ignore[arg-type]


def test_a_report_pickles_and_its_json_round_trips() -> None:
    from serq.report import from_json

    report = serq.run(serq.compile(MM1, **SHORT))
    again = pickle.loads(pickle.dumps(report))
    assert again.json() == report.json()
    assert list(again.observe("sojourn").samples) == list(report.observe("sojourn").samples)
    assert from_json(report.json()).json() == report.json()


def _sweep(**given: object) -> serq.SweepResult:
    arguments = {"sets": {"lambda": "0.5,0.6"}, "jobs": 1, **SHORT, **given}
    return serq.sweep(MM1, **arguments)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("given", "error", "message"),
    [
        ({"seeds": True}, TypeError, "`seeds` is a count N"),
        ({"seeds": 2.0}, TypeError, "`seeds` is a count N"),
        ({"seeds": "3"}, TypeError, "`seeds` is a count N"),
        ({"seeds": [True, 2]}, ValueError, "each a whole number from 0"),
        ({"seeds": [1.5]}, ValueError, "each a whole number from 0"),
        ({"seeds": [2**64]}, ValueError, "each a whole number from 0 to 18446744073709551615"),
        ({"seeds": [-1]}, ValueError, "each a whole number from 0"),
        ({"seeds": 10**9}, ValueError, "1,000,000,000 seeds, more than 1,000,000 runs"),
        ({"jobs": 0}, ValueError, "`jobs` is a number of processes ≥ 1"),
        ({"jobs": "2"}, TypeError, "`jobs` is a number of processes"),
        ({"jobs": 1.5}, TypeError, "`jobs` is a number of processes"),
        ({"horizon": "100"}, TypeError, "`horizon` is a number"),
        ({"arrivals": 1.5}, TypeError, "`arrivals` is a whole number"),
        ({"sets": {"lambda": None}}, TypeError, "or a list of them"),
        ({"sets": {"lambda": {0.5}}}, TypeError, "or a list of them"),
        ({"sets": {"lambda": math.nan}}, ValueError, "NaN"),
        ({"sets": {"lambda": [0.5, math.nan]}}, ValueError, "NaN"),
        ({"sets": "lambda=0.5"}, TypeError, "`sets` is a dict"),
    ],
)
def test_sweep_refuses_what_users_pass_by_mistake(
    given: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        _sweep(**given)


def test_sweep_takes_numpy_seeds_and_values() -> None:
    plain = _sweep(seeds=[1, 2])
    assert _sweep(seeds=np.arange(1, 3)).points == plain.points
    assert _sweep(seeds=np.int64(2)).points == plain.points
    values = _sweep(sets={"lambda": np.linspace(0.5, 0.6, 2)}, seeds=[1, 2])
    assert values.points == plain.points
    assert _sweep(sets={"lambda": [np.float32(0.5)]}, seeds=[1]).points[0]["lambda"] == 0.5


def test_sweep_of_more_runs_than_the_limit_is_refused_before_building_them() -> None:
    from serq.sweeps import plan

    text = Path(MM1).read_text()
    checked, found, _ = plan(text, MM1, {"lambda": "0.1:0.9:0.00001"}, seeds=100, **SHORT)
    assert checked is None and "more than 1,000,000 runs" in found[0].message


def test_a_sweep_result_pickles() -> None:
    result = _sweep(seeds=2)
    again = pickle.loads(pickle.dumps(result))
    assert again.to_json() == result.to_json()
