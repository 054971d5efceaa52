"""scripts/search_step.py's limit on serq's time leaves out the wait for the reference.

The search gives each program `SERQ_TIMEOUT` seconds of alarm; `differential.compare`
waits for the reference inside that time, up to `WALL_FACTOR` times its CPU limit, which
on a busy machine is the whole alarm. A reference that hangs (a closed population
replaced without end at one instant, which serq names in 2 s) was tallied as a serq
time-out (NOTES §73). The alarm now pauses while the reference runs.
"""

from __future__ import annotations

import importlib.util
import signal
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _search_step() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "search_step", ROOT / "scripts" / "search_step.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_alarm_pauses_while_the_reference_runs() -> None:
    search = _search_step()
    before = signal.signal(signal.SIGALRM, search._over)
    try:
        signal.alarm(1)
        search._unalarmed(time.sleep)(1.5)  # past the alarm: no TimeoutError
        left = signal.alarm(0)
        assert left == 1  # the second it had left, given back
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)


def test_compare_reaches_the_reference_through_the_pause() -> None:
    search = _search_step()
    assert search.differential.reference.__wrapped__ is not None
    assert search.differential.reference.__name__ == "reference"
