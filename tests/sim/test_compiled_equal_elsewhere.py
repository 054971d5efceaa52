"""The compiled event path against the interpreter on the programs kept outside
test_compiled_equal.py's folders: the benchmarks' shapes (bench/shapes, bench/wide,
bench/cliffs: the programs issue 18's speed figures are measured on) and the reference
cross-checks' programs written as the spec writes them (tests/oracle/spec_walk,
tests/oracle/main_programs, tests/corpus/valid_main). Each gives the same report, to the
last bit, and the same diagnostics on both paths (`both_paths.assert_paths_agree`), cut
to about 20,000 events. A file of its own, so that a parallel run gives it a worker of
its own (`--dist loadfile`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sim.both_paths import assert_paths_agree

ROOT = Path(__file__).resolve().parents[2]
# the benchmarks are about speed: one seed each; the spec's programs at three
BENCHMARKS = sorted(
    path
    for folder in ("shapes", "wide", "cliffs")
    for path in (ROOT / "bench" / folder).glob("*.sq")
)
SPEC_PROGRAMS = sorted(
    [
        *(ROOT / "tests" / "oracle" / "spec_walk").glob("*.sq"),
        *(ROOT / "tests" / "oracle" / "main_programs").glob("*.sq"),
        *(ROOT / "tests" / "corpus" / "valid_main").glob("*.sq"),
    ]
)


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_folders_hold_programs():
    """Each folder still holds what the tests below take (a moved folder fails here,
    not silently)."""
    assert len(BENCHMARKS) >= 80
    assert len(SPEC_PROGRAMS) >= 35


@pytest.mark.parametrize("path", BENCHMARKS, ids=_name)
def test_benchmark_shapes_agree(path, monkeypatch):
    assert_paths_agree(path, (1,), monkeypatch)


@pytest.mark.parametrize("path", SPEC_PROGRAMS, ids=_name)
def test_spec_programs_agree(path, monkeypatch):
    assert_paths_agree(path, (1, 7, 2026), monkeypatch)
