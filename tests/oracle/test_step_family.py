"""A sample of the step-engine differential search (scripts/search_step.py) in CI: the
first programs of tests/oracle/step_family.py, each run in serq and in pyserq 0.1.2 and
compared exactly (tests/sim/NOTES.md §11 has the whole search).

Every program agrees but the ones listed, each for a reason the notes give: a
self-preemption under a serve order other than admission, which ends vLLM's running loop
and not the reference's (F); a deadlock of growths under `preempt none`, where serq stops
with a diagnostic and the reference runs on without progress; a panic of the reference.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the family and the comparison
import differential  # noqa: E402
import step_family  # noqa: E402

pytest.importorskip("pyserq")

SAMPLE = range(40)
KNOWN = {
    6: "stall",
    10: "self-preemption",
    26: "reference panics",
    30: "stall",
    33: "stall",
    34: "stall",
    37: "stall",
}


@pytest.mark.parametrize("k", SAMPLE)
def test_family_program_agrees_with_the_reference(k, tmp_path):
    path = tmp_path / f"g{k}.sq"
    path.write_text(step_family.program(k))
    verdict, detail = differential.compare(str(path))
    why = KNOWN.get(k)
    if why is None:
        assert verdict == "same", detail
    elif why == "stall":
        assert verdict == "serq-error" and "the run can never move again" in detail, detail
    elif why == "self-preemption":
        assert verdict == "differ" and "stages" in detail, detail
    else:
        assert verdict == "reference-error" and "no entry found for key" in detail, detail


def test_the_family_draws_the_whole_chunk_domain():
    """Chunks of 0, below 0, inf and fractions, plain and through long_prefill, occur."""
    texts = [step_family.program(k) for k in range(300)]
    for needle in (
        "chunk 0;",
        "chunk -1;",
        "chunk -inf;",
        "chunk 0.5;",
        "long_prefill(reqs, 0)",
        "chunk inf;",
        "long_prefill(reqs, 2.5)",
    ):
        assert any(needle in t for t in texts), needle
