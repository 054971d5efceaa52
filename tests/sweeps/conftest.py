"""Programs the sweep tests share: M/M/1 on a short horizon, one whose servers a --set can
make invalid (a point that does not check), and one whose branch guard a --set can make
fail at run time (a point that checks but whose runs fail); and a Dask cluster."""

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


GUARDED = """\
let c = 1;
stage server : fifo(1);
workload { arrive poisson(0.5); }
session { set a = now; branch (floor(~uniform(0, c))) { run server (~exp(1)); } observe sojourn = now - a; }
run { horizon 200; warmup 0; seed 1; }
"""  # c of 1 or 2 runs; from 3 on the guard is sometimes 2: an E-run, which no check finds


@pytest.fixture
def guarded(tmp_path) -> str:
    path = tmp_path / "guarded.sq"
    path.write_text(GUARDED, encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def cluster():
    """A real Dask cluster of two worker processes, one thread each (a module's tests
    share it)."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as running:
        yield running
