"""The mutation fuzzer in CI: 2,000 front-end and 300 simulator mutants, no traceback, no hang.

See tests/fuzz/fuzz_harness.py for the mutations and what passing means. The counts
can be raised by hand with SERQ_FUZZ_FRONT and SERQ_FUZZ_SIM (and the seed with
SERQ_FUZZ_SEED); the defaults are the issue's floor. Any failure fails the test: an
exception, an `E-internal` diagnostic or a mutant without an answer in its time limit,
in `check` (parse, expand, link, the diagnostics rendered) or in the run. What a larger
run by hand finds is reduced into tests/fuzz/found/, one program a finding, each of which
must pass too (`KNOWN` lists the ones whose fix belongs to code another change owns).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzz_harness as harness  # noqa: E402

FRONT = int(os.environ.get("SERQ_FUZZ_FRONT", "2000"))
SIM = int(os.environ.get("SERQ_FUZZ_SIM", "300"))
SEED = int(os.environ.get("SERQ_FUZZ_SEED", "1"))
WORKERS = min(2, os.cpu_count() or 1)
FOUND = Path(__file__).resolve().parent / "found"


def _report(failures) -> str:
    return "\n".join(
        f"{m.source} {'+'.join(m.operators)} seed {m.seed}: {problem}" for m, problem in failures
    )


def test_front_end_mutants():
    items = harness.mutants(FRONT, SEED, simulate=False)
    assert len(items) == FRONT
    failures = harness.run_mutants(items, WORKERS)
    assert not failures, _report(failures)


def test_simulator_mutants():
    items = harness.mutants(SIM, SEED, simulate=True)
    assert len(items) == SIM
    failures = harness.run_mutants(items, WORKERS)
    assert not failures, _report(failures)


def test_the_mutations_are_those_of_the_issue():
    """Item 8's operators: random bytes (invalid UTF-8 and a BOM among them), long lines,
    deep nesting, deleted and duplicated spans, truncation, numbers set to 0, -1, inf,
    0/0, 1e300 (and more) and tiny caps; every one is drawn for the front-end mutants."""
    names = {op.__name__ for op in harness.FRONT_OPERATORS}
    assert names == {
        "random_bytes",
        "long_line",
        "deep_nesting",
        "delete_span",
        "duplicate_span",
        "truncate",
        "numbers",
    }
    assert {b"\xff", b"\xef\xbb\xbf", b"\xed\xa0\x80"} <= set(harness.JUNK)
    assert {b"0", b"-1", b"inf", b"(0/0)", b"1e300"} <= set(harness.NUMBERS)
    drawn = {op for m in harness.mutants(FRONT, SEED, simulate=False) for op in m.operators}
    assert drawn == names
    drawn = {op for m in harness.mutants(SIM, SEED, simulate=True) for op in m.operators}
    assert drawn == {op.__name__ for op in harness.SIM_OPERATORS}


# Reproducers whose fix is in code this change may not touch: strict, so that the fix
# turns them into plain passes.
KNOWN: dict[str, str] = {}  # (cap_inf_block_step: fixed in serq/sim/step.py's crossings)


@pytest.mark.parametrize("path", sorted(FOUND.glob("*.sq")), ids=lambda p: p.stem)
def test_found_reproducers(path, request):
    """Each program the fuzzer found is answered: diagnostics, never a traceback or a hang."""
    if path.stem in KNOWN:
        request.applymarker(pytest.mark.xfail(strict=True, reason=KNOWN[path.stem]))
    problem = harness.check_mutant(harness.Mutant(str(path), (), 0, path.read_bytes(), True))
    assert problem is None
