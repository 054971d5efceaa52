"""The programs of bench/shapes/ (the shapes `bench/shapes.py` times) stay valid programs
that serq and the reference (pyserq 0.1.2) run alike.

Each shape runs on both for a short horizon, about SHORT customers at the rate
bench/shapes.py gives it, with a different seed on each side. Both reports must have the
same observations, gauges, stage rows and pool rows and the same end; the number of
customers must agree within COUNT_SDS standard deviations of a Poisson count (a bound
closed populations and traces also keep); every observation's mean and every gauge's
mean must lie within SAFETY combined 95 % intervals of the reference's (the observations'
batch means computed here from the samples, the gauges' the reports' own, as
test_differential.py does). The one deterministic shape, trace.sq (renewal arrivals and
a trace, nothing drawn), must give the reference's run exactly. Every shape is
`serq fmt` clean and has a rate in the bench's table.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from serq.formatter import format_source
from tests.sim.test_differential import assert_same_run, rows

ROOT = Path(__file__).resolve().parents[2]
SHAPES = ROOT / "bench" / "shapes"
SHORT = 4000  # customers per shape
SAFETY = 2.5  # combined intervals (test_differential.py's calibration)
COUNT_SDS = 5.0
DETERMINISTIC = {"trace"}


def _bench():
    spec = importlib.util.spec_from_file_location("bench_shapes", ROOT / "bench" / "shapes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BENCH = _bench()
NAMES = sorted(p.stem for p in SHAPES.glob("*.sq"))


def test_every_shape_has_a_rate_and_there_are_enough():
    """bench/shapes.py times every program of bench/shapes/, at least fourteen of them."""
    assert set(NAMES) == set(BENCH.RATES)
    assert len(NAMES) >= 14


@pytest.mark.parametrize("name", NAMES)
def test_shape_is_formatted(name):
    text = (SHAPES / f"{name}.sq").read_text()
    formatted = format_source(text, str(SHAPES / f"{name}.sq"))
    assert formatted.ok, formatted.diagnostics
    assert formatted.text == text


def _options(name: str, seed: int) -> dict:
    rate, _ = BENCH.RATES[name]
    warmup = 0.0 if name in DETERMINISTIC else BENCH.WARMUP
    return {"horizon": warmup + SHORT / rate, "warmup": warmup, "seed": seed}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_deterministic_shape_is_the_reference_run(reference, name):
    """trace.sq draws nothing: serq's run is the reference's, sample for sample."""
    import serq

    path = SHAPES / f"{name}.sq"
    ours = serq.run(serq.compile(str(path), **_options(name, 1)))
    theirs = reference.run(path, **_options(name, 1))
    assert ours.turns >= SHORT * 0.9
    assert_same_run(ours, theirs)
    assert_same_run(serq.run(serq.compile(str(path), **_options(name, 2))), ours)


@pytest.mark.parametrize("name", sorted(set(NAMES) - DETERMINISTIC))
def test_random_shape_agrees_with_the_reference(impl, reference, batch_means, name):
    """A random shape's observations and gauges have the reference's means, within SAFETY
    combined intervals, and it serves about as many customers."""
    path = SHAPES / f"{name}.sq"
    ours = impl.run(path, **_options(name, 41))
    theirs = reference.run(path, **_options(name, 42))
    assert ours.end == theirs.end
    assert sorted(rows(ours, "stages"), key=str) == sorted(rows(theirs, "stages"), key=str)
    assert sorted(rows(ours, "pools"), key=str) == sorted(rows(theirs, "pools"), key=str)
    _, kind = BENCH.RATES[name]
    mine, their_count = BENCH.customers(ours, kind), BENCH.customers(theirs, kind)
    assert their_count >= SHORT * 0.8, f"the short run served only {their_count} customers"
    assert abs(mine - their_count) <= COUNT_SDS * math.sqrt(mine + their_count), (
        f"{mine} customers against the reference's {their_count}"
    )
    assert sorted(ours.observes) == sorted(theirs.observes) and ours.observes
    for obs in sorted(theirs.observes):
        mean_a, ci_a = batch_means(list(ours.observe(obs).samples))
        mean_b, ci_b = batch_means(list(theirs.observe(obs).samples))
        tolerance = SAFETY * math.hypot(ci_a, ci_b)
        assert abs(mean_a - mean_b) <= tolerance, (
            f"{name} observe {obs}: mean {mean_a:.5g} against the reference's {mean_b:.5g} "
            f"(tolerance {tolerance:.3g})"
        )
    assert sorted(ours.gauges) == sorted(theirs.gauges)
    for gauge in sorted(theirs.gauges):
        a, b = ours.gauge(gauge), theirs.gauge(gauge)
        tolerance = SAFETY * math.hypot(a.ci, b.ci)
        assert abs(a.mean - b.mean) <= tolerance, (
            f"{name} gauge {gauge}: mean {a.mean:.5g} against the reference's {b.mean:.5g} "
            f"(tolerance {tolerance:.3g})"
        )
