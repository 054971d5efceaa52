"""The same sweep on a real `dask.distributed.LocalCluster` (worker processes), through a
`Client`, through the scheduler address (`--dask`, `SERQ_DASK_SCHEDULER`): the same bytes
as one local job."""

from __future__ import annotations

import serq
from serq import cli
from tests.sweeps.conftest import MM1, SHORT

SETS = {"lambda": "0.5:0.9:0.2"}


def test_a_dask_client_gives_the_bytes_of_one_job(cluster):
    from distributed import Client

    local = serq.sweep(MM1, sets=SETS, seeds=3, jobs=1, **SHORT)
    with Client(cluster) as client:
        distributed = serq.sweep(MM1, sets=SETS, seeds=3, executor=client, **SHORT)
        ran_on = client.run(lambda: __import__("os").getpid())
    assert len(set(ran_on.values())) == 2  # two worker processes
    assert distributed.complete and len(distributed.runs) == 9
    assert distributed.to_csv() == local.to_csv()
    assert distributed.to_csv(runs=True) == local.to_csv(runs=True)
    assert distributed.to_json() == local.to_json()


def test_serq_sweep_dask_writes_the_same_file(cluster, capsys, tmp_path, monkeypatch):
    argv = ["sweep", MM1, "--set", "lambda=0.5:0.9:0.2", "--seeds", "3", "--horizon", "400",
            "--warmup", "40", "--color", "never"]
    assert cli.main([*argv, "--jobs", "1", "--out", str(tmp_path / "local.csv")]) == 0
    assert cli.main([*argv, "--dask", cluster.scheduler_address,
                     "--out", str(tmp_path / "dask.csv")]) == 0
    monkeypatch.setenv("SERQ_DASK_SCHEDULER", cluster.scheduler_address)
    assert cli.main([*argv, "--out", str(tmp_path / "env.json")]) == 0
    assert cli.main([*argv, "--jobs", "1", "--out", str(tmp_path / "local.json")]) == 0
    err = capsys.readouterr().err
    assert f"dask {cluster.scheduler_address}" in err
    for a, b in (("local.csv", "dask.csv"), ("local.runs.csv", "dask.runs.csv"),
                 ("local.json", "env.json")):
        assert (tmp_path / a).read_bytes() == (tmp_path / b).read_bytes()
