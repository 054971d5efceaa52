"""The straight loop against the generated code and the interpreter on random programs of
its shapes and their near variants (tests/sim/straight_family.py): the same report, every
sample and gauge point, or the same diagnostic."""

from __future__ import annotations

import warnings

import pytest

import serq
from serq.sim import straight
from tests.sim import straight_family

SEEDS = range(60)


def _outcome(text: str, on: bool, codegen: bool, monkeypatch: pytest.MonkeyPatch) -> str:
    """The report of `text` as text (its repr, every sample and gauge point) and the
    warnings of its run, or the diagnostic it stops with."""
    monkeypatch.setattr(straight, "ENABLED", on)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            report = serq.run(serq.compile(source=text, codegen=codegen))
        except ValueError as error:
            return f"error: {error}"
    samples = {n: (o.times, o.sessions, o.turns, o.samples) for n, o in report.observes.items()}
    points = {n: (g.times, g.values) for n, g in report.gauges.items()}
    return repr((report, samples, points, [str(w.message) for w in said]))


@pytest.mark.parametrize("seed", SEEDS)
def test_straight_loop_equals_both_event_paths(seed, monkeypatch):
    text = straight_family.program(seed)
    fast = _outcome(text, True, True, monkeypatch)
    generated = _outcome(text, False, True, monkeypatch)
    interpreted = _outcome(text, False, False, monkeypatch)
    assert fast == generated, text
    assert generated == interpreted, text


def test_the_family_reaches_the_straight_loop_and_beyond(monkeypatch):
    """Most programs take the straight loop, some decline it, some stop with a diagnostic."""
    taken = []
    real = straight.run
    monkeypatch.setattr(straight, "run", lambda *args: taken.append(1) or real(*args))
    straight_runs = errors = 0
    for seed in SEEDS:
        taken.clear()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                serq.run(serq.compile(source=straight_family.program(seed)))
        except ValueError:
            errors += 1
        straight_runs += bool(taken)
    assert straight_runs >= len(SEEDS) // 2
    assert straight_runs < len(SEEDS) - errors
    assert errors
