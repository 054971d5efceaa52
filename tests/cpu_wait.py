"""Wait until a child process tree has done some work: a test that interrupts a run must
interrupt it in the run, not in its imports, and a fixed sleep is too short on a loaded
machine. CPU time (from /proc) measures the work done, whatever the load."""

from __future__ import annotations

import os
import time

TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """User + system CPU seconds of process `pid` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants, now."""
    parents: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(ppid, []).append(int(name))
    found, stack = [], [pid]
    while stack:
        p = stack.pop()
        found.append(p)
        stack.extend(parents.get(p, ()))
    return found


def wait_for_cpu(pid: int, seconds: float, timeout: float = 120.0) -> None:
    """Return once the process `pid` and its children have used `seconds` of CPU between
    them (or after `timeout` seconds of waiting)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sum(_cpu(p) for p in _tree(pid)) >= seconds:
            return
        time.sleep(0.05)
