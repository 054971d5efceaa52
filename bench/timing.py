"""What the benchmarks share: the best CPU time of repeated runs, and the summary line
of their ratios to the reference."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any


def cpu_best(run: Callable[[Any], Any], program: Any, repeat: int) -> float:
    """The least CPU time (`time.process_time`) of `repeat` calls of `run(program)`."""
    return cpu_best_each([(run, program)], repeat)[0]


def cpu_best_each(runs: Sequence[tuple[Callable[[Any], Any], Any]], repeat: int) -> list[float]:
    """The least CPU time of each `run(program)` of `runs` over `repeat` rounds in which
    they take turns, so that a slow spell of a shared machine falls on all of them alike
    rather than on one side of a ratio."""
    least = [float("inf")] * len(runs)
    for _ in range(repeat):
        for i, (run, program) in enumerate(runs):
            start = time.process_time()
            run(program)
            least[i] = min(least[i], time.process_time() - start)
    return least


def summary(ratios: dict[str, float], what: str) -> str:
    """ "median Mx, worst Wx (name), N what" of the ratios serq / pyserq by name."""
    worst = max(ratios, key=ratios.__getitem__)
    median = statistics.median(ratios.values())
    return f"median {median:.1f}x, worst {ratios[worst]:.1f}x ({worst}), {len(ratios)} {what}"
