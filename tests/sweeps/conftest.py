"""Programs the sweep tests share: M/M/1 on a short horizon, and one whose servers a
--set can make invalid."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MM1 = str(ROOT / "examples" / "mm1.sq")
SHORT = {"horizon": 400.0, "warmup": 40.0}  # runs of a few milliseconds

SERVERS = """\
let c = 1;
let rate = 0.5;
stage server : fifo(c);
workload { arrive poisson(rate); }
session { set a = now; run server (~exp(1)); observe sojourn = now - a; }
run { horizon 200; warmup 0; seed 1; }
"""


@pytest.fixture
def servers(tmp_path) -> str:
    path = tmp_path / "servers.sq"
    path.write_text(SERVERS, encoding="utf-8")
    return str(path)
