"""Fixtures of the simulator tests: one `impl` fixture over the two implementations.

Every test takes `impl`, parametrized over "reference" (pyserq 0.1.2, the Rust oracle,
which validates the test itself) and "serq" (`serq.compile` / `serq.run`, skipped with a
reason while they, or `serq.sim.simulate` behind them, cannot be imported). Both have the one API:
`compile(path=None, *, source=None, seed=None, horizon=None, warmup=None, arrivals=None,
sets={})` and `run(program) -> Report`, so `impl.run(path, **options)` compiles and runs
in one call and returns the report. Runs are cached per implementation and arguments
(a report is only read), so that several tests can check one long run.

`reference` is pyserq alone, for the differential tests; `same_as_reference(text)` asserts
that a program text gives pyserq 0.1.2's report, every sample and point included
(tests/oracle/differential.py; skipped where pyserq is not installed). `batch_means(samples)` is the
95 % confidence interval the reference reports for an observation (20 batches of equal
length, Student's t with 19 degrees of freedom), computed here from the samples, so a
statistical tolerance never depends on the implementation's own CI. `PROGRAMS` is
tests/sim/programs, `EXAMPLES` examples/.
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "programs"
EXAMPLES = ROOT / "examples"
ORACLE = ROOT / "tests" / "oracle"

# Student's t quantile for a two-sided 95 % interval with 19 degrees of freedom.
_T19 = 2.093  # as the reference rounds it
_BATCHES = 20


@dataclass
class Impl:
    """One implementation of serQ: its name, `compile` and `run`, and a cache of runs."""

    name: str
    compile: Callable[..., Any]
    simulate: Callable[[Any], Any]
    _runs: dict[tuple, Any] = field(default_factory=dict, repr=False)

    def run(self, path: str | Path | None = None, *, source: str | None = None, **options):
        """Compile the program at `path` (or the text `source`) with `options` (seed,
        horizon, warmup, arrivals, sets) and run it; the report of an identical earlier
        call is returned again."""
        key = (
            str(path) if path is not None else None,
            source,
            tuple(sorted((k, _freeze(v)) for k, v in options.items())),
        )
        if key not in self._runs:
            self._runs[key] = self.run_fresh(path, source=source, **options)
        return self._runs[key]

    def run_fresh(self, path: str | Path | None = None, *, source: str | None = None, **options):
        """As `run`, without the cache: a new compilation and a new run."""
        path_arg = str(path) if path is not None else None
        return self.simulate(self.compile(path_arg, source=source, **options))


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted(value.items()))
    return value


def _reference() -> Impl:
    pyserq = pytest.importorskip("pyserq", reason="pyserq 0.1.2 (the reference) is not installed")
    if not pyserq.__version__.startswith("0.1.2"):
        pytest.skip(f"the reference is pyserq 0.1.2, found {pyserq.__version__}")
    return Impl("reference", pyserq.compile, pyserq.run)


def _serq() -> Impl:
    try:
        from serq import compile as serq_compile
        from serq import run as serq_run
        from serq.sim import simulate  # noqa: F401  (what serq.run calls)
    except ImportError as e:
        pytest.skip(
            f"serq cannot run programs yet ({e}): serq.compile / serq.run and the "
            "simulator behind them, serq.sim.simulate, are still being written"
        )
    return Impl("serq", serq_compile, serq_run)


_IMPLS: dict[str, Impl] = {}


def _impl(name: str) -> Impl:
    if name not in _IMPLS:
        _IMPLS[name] = _reference() if name == "reference" else _serq()
    return _IMPLS[name]


@pytest.fixture(params=["reference", "serq"])
def impl(request) -> Impl:
    """The implementation under test: pyserq 0.1.2, then serq."""
    return _impl(request.param)


@pytest.fixture
def reference() -> Impl:
    """pyserq 0.1.2 alone, the other side of a differential test."""
    return _impl("reference")


def batch_means_ci(samples: list[float]) -> tuple[float, float]:
    """The mean of `samples` and the half-width of its 95 % batch-means interval."""
    n = len(samples) // _BATCHES
    assert n >= 2, f"{len(samples)} samples are too few for {_BATCHES} batches"
    means = [statistics.fmean(samples[i * n : (i + 1) * n]) for i in range(_BATCHES)]
    return statistics.fmean(samples), _T19 * statistics.stdev(means) / math.sqrt(_BATCHES)


@pytest.fixture
def batch_means() -> Callable[[list[float]], tuple[float, float]]:
    return batch_means_ci


@pytest.fixture
def same_as_reference(tmp_path: Path) -> Callable[..., None]:
    """`check(text, name="t.sq", **options)`: the program `text`, written to `name`, gives
    the reference's whole report (`differential.compare(..., full=True, **options)`); the
    test skips there when pyserq is not installed, after what it checked before."""

    def check(text: str, name: str = "t.sq", **options: Any) -> None:
        pytest.importorskip("pyserq")
        if str(ORACLE) not in sys.path:
            sys.path.insert(0, str(ORACLE))
        import differential  # noqa: PLC0415

        path = tmp_path / name
        path.write_text(text)
        assert differential.compare(str(path), full=True, **options) == ("same", "")

    return check
