"""The optional extras stay optional: `import serq`, `serq run` and a local `serq sweep` to
CSV never import dask, matplotlib, pandas or pyarrow."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.sweeps.conftest import MM1, ROOT

HEAVY = ("dask", "distributed", "matplotlib", "pandas", "pyarrow")

CHILD = """\
import json, sys
import serq
from serq import cli
argv = json.loads(sys.argv[1])
status = cli.main(argv) if argv else 0
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(json.loads(sys.argv[2])))
print(json.dumps([status, heavy]), file=sys.stderr)
"""


def loaded_after(tmp_path, *argv: str) -> tuple[int, list[str]]:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(list(argv)), json.dumps(HEAVY)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    return tuple(json.loads(child.stderr.strip().splitlines()[-1]))


def test_import_serq(tmp_path):
    assert loaded_after(tmp_path) == (0, [])


def test_serq_run(tmp_path):
    argv = ["run", MM1, "--horizon", "200", "--warmup", "10", "--color", "never"]
    assert loaded_after(tmp_path, *argv) == (0, [])


def test_serq_sweep_on_the_local_pool(tmp_path):
    argv = ["sweep", MM1, "--set", "lambda=0.5,0.6", "--seeds", "2", "--horizon", "200",
            "--warmup", "10", "--jobs", "2", "--out", str(tmp_path / "r.csv")]
    assert loaded_after(tmp_path, *argv) == (0, [])
