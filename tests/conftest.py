"""Fixtures for every test folder: pyserq 0.1.4, the reference for `fn main` programs.

0.1.4 runs in a child process, so that it never shares an interpreter with pyserq 0.1.2
(installed as `pyserq`). It is looked for in $PYSERQ_014_PATH, by default
.cache/pyserq-0.1.4 in the repository, where scripts/test.sh installs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

PYSERQ_014 = os.environ.get(
    "PYSERQ_014_PATH", str(Path(__file__).resolve().parents[1] / ".cache" / "pyserq-0.1.4")
)


# Every child script starts with this: 0.1.4 imported from argv[1], or the reason it cannot be.
PRELUDE = """\
import json, sys
sys.path.insert(0, sys.argv[1])
try:
    import pyserq
except ImportError as e:
    print(json.dumps({"import_error": str(e)})); sys.exit(0)
"""

# A child script for `run014`: "ran" when 0.1.4 compiles the source on its stdin (a
# horizon of 10 given), else the message of its refusal.
COMPILES_014 = """
source = json.load(sys.stdin)
try:
    pyserq.compile(source=source, horizon=10)
    print(json.dumps("ran"))
except ValueError as e:
    print(json.dumps(str(e)))
"""


@pytest.fixture(scope="session")
def run014() -> Callable[..., Any]:
    """`run014(child, payload, timeout=300)` runs the script `child` after `PRELUDE` (which
    imports 0.1.4 as `pyserq`), with `payload` as JSON on its stdin, and returns the JSON of
    the last line it prints. Skips when 0.1.4 is missing or cannot be imported."""
    if not (Path(PYSERQ_014) / "pyserq").is_dir():
        pytest.skip(f"pyserq 0.1.4 not found in {PYSERQ_014} (set PYSERQ_014_PATH)")

    def run(child: str, payload: Any, timeout: float = 300) -> Any:
        proc = subprocess.run(
            [sys.executable, "-c", PRELUDE + child, PYSERQ_014],
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        if isinstance(out, dict) and "import_error" in out:
            pytest.skip(f"pyserq 0.1.4 cannot be imported from {PYSERQ_014}: {out['import_error']}")
        return out

    return run
