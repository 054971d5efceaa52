"""`serq.cli` imports its pipeline with the cyclic garbage collector paused and freezes
what the imports made (`cli._load`): the collector is as the caller left it afterwards,
the imports are done once, and the command's output is the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = ROOT / "examples" / "mm1.sq"

PROBE = """
import gc, sys
{before}
freezes = []
freeze = gc.freeze
gc.freeze = lambda: freezes.append(gc.isenabled()) or freeze()
from serq import cli
status = cli.main(["check", sys.argv[1]])
frozen, first = gc.get_freeze_count(), len(freezes)
again = cli.main(["check", sys.argv[1]])
print(status, again, gc.isenabled(), frozen > 1000, first > 0, len(freezes) == first, any(freezes))
"""


def _probe(before: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(before=before), str(PROGRAM)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_collector_runs_again_after_the_imports_which_are_frozen_once():
    # both checks pass, the collector is on again, the imports' objects frozen (with the
    # collector paused), and the second command froze nothing more (the imports are done
    # once)
    assert _probe("") == ["0", "0", "True", "True", "True", "True", "False"]


def test_a_collector_the_caller_turned_off_stays_off():
    assert _probe("gc.disable()") == ["0", "0", "False", "True", "True", "True", "False"]
