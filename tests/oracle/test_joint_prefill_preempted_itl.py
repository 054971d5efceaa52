"""Programs of the joint and step families whose inter-token latencies parted from
pyserq 0.1.2 because serq counted every prefill token after a preemption from the
session's previous token, where the references count only the one the engine that gave
the last token computes again (tests/sim/NOTES.md §34,
tests/sim/test_itl_prefill_preempted.py): joint 1499 (a prefill of 1 on D after the
prefiller P's token, preempted there; D's `mean_itl` 0.766 against 0.535), 201 and
1347; step 237065 and 233161. With the change each equals 0.1.2 in the whole report.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the families and the comparison
import differential  # noqa: E402
import joint_family  # noqa: E402
import step_family  # noqa: E402

pytest.importorskip("pyserq")

PROGRAMS = [("joint", 201), ("joint", 1347), ("joint", 1499), ("step", 237065), ("step", 233161)]


@pytest.mark.parametrize(("family", "k"), PROGRAMS)
def test_equal_to_the_reference(family, k, tmp_path):
    path = tmp_path / f"g{k}.sq"
    path.write_text({"joint": joint_family, "step": step_family}[family].program(k, "items"))
    verdict, detail = differential.compare(str(path), 60, full=True)
    assert verdict == "same", detail
