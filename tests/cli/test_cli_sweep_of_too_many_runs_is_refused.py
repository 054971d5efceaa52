"""`serq sweep --seeds 1000000000` (a typo) made a billion tasks before running any and
ran out of memory; a sweep of more than `MAX_RUNS` runs is now refused first (§52)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")


def _sweep(*options: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "serq.cli", "sweep", MM1, "--horizon", "20"]
    return subprocess.run(
        [*command, "--warmup", "1", "--jobs", "1", *options],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_a_billion_seeds_is_refused_before_anything_runs() -> None:
    done = _sweep("--set", "lambda=0.5", "--seeds", "1000000000")
    assert done.returncode == 1, done.stderr
    assert "1 point × 1,000,000,000 seeds, more than 1,000,000 runs" in done.stderr
    assert "Traceback" not in done.stderr


def test_two_fine_ranges_are_refused_by_their_product() -> None:
    done = _sweep("--set", "lambda=0.1:0.9:0.00001", "--seeds", "20")
    assert done.returncode == 1, done.stderr
    assert "80,001 points × 20 seeds" in done.stderr
