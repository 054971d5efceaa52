"""The markdown of `serq.run` (`serq_lsp.commands.report_markdown`) on a real report: a
step stage's row carries its inter-token latency."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from serq_lsp.commands import report_markdown

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """\
stage E : step { budget 8; cost 1 + 0.125 * tokens; }
stage D : delay;
workload { arrive batch(1); }
session { run E prefill (10); run D (5); run E decode (4); }
run { horizon 100; warmup 0; seed 1; }
"""


def test_a_step_stage_row_has_its_inter_token_latency(tmp_path):
    path = tmp_path / "itl.sq"
    path.write_text(PROGRAM)
    done = subprocess.run(
        [sys.executable, "-m", "serq.cli", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    stages = report_markdown(done.stdout).split("## Stages")[1].split("##")[0]
    header, _, *rows = stages.strip().splitlines()
    columns = [c.strip() for c in header.strip("|").split("|")]
    assert columns[-2:] == ["mean_itl", "itl_p99"]
    cells = {r.split("|")[1].strip(): [c.strip() for c in r.strip("|").split("|")] for r in rows}
    # the prefill's token, 5 s of delay, then four decode tokens of 1.125 s each
    assert cells["E"][-2:] == ["2.375", "6.125"]
    assert cells["D"][-2:] == ["–", "–"]
