"""examples/sweeps/: its program sweeps (briefly), and its README's command is the one that
made the committed results and plot."""

from __future__ import annotations

import csv

import serq
from tests.sweeps.conftest import ROOT

FOLDER = ROOT / "examples" / "sweeps"


def test_the_spacing_sweep_runs():
    result = serq.sweep(
        str(FOLDER / "vllm_spacing.sq"), sets={"spacing": "3,5"}, jobs=1, horizon=60, warmup=10
    )
    assert result.complete and not result.failed
    # `resumed` is lib/vllm.sq's, one sample per admission
    assert result.observations == ("resumed", "ttft", "hit_rate", "response")
    assert [p["spacing"] for p in result.points] == [3, 5]


def test_the_readme_shows_the_command_and_its_results():
    readme = (FOLDER / "README.md").read_text(encoding="utf-8")
    assert "serq sweep vllm_spacing.sq --set spacing=2:5:0.25" in readme
    assert "serq plot cliff.csv --x spacing --y ttft --hue blocks --log-y -o cliff.png" in readme
    assert "![" in readme and (FOLDER / "cliff.png").stat().st_size > 10_000
    rows = list(csv.DictReader((FOLDER / "cliff.csv").open()))
    assert {row["blocks"] for row in rows} == {"1000", "2000"} and len(rows) == 26
