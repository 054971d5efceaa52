"""Step engine speed: examples/vllm.sq (vLLM v1 under a multi-turn chat, spec §7) for 1,000
simulated seconds, light and loaded, next to pyserq 0.1.2 (the reference) in one process.

Run by hand from the repository root:

    PYTHONPATH=. python bench/step.py

Each case is compiled once per implementation and run three times; the best run time
(compilation excluded) is printed with the ratio serq / pyserq, for serq with
fast-forwarding (the default) and without it, with the share of iterations the
fast-forward skipped; then a cProfile of serq on the loaded case (top 15 by internal time).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyserq  # noqa: E402

import serq  # noqa: E402

PROGRAM = str(Path(__file__).resolve().parents[1] / "examples" / "vllm.sq")
HORIZON = 1000
# Issue 10's two loads: light (Lambda 0.3, 10,000 blocks) and loaded (Lambda 0.5, 3,000
# blocks, the cache evicts); "heavy" (Lambda 2, 250 blocks) also preempts.
CASES = {
    "light": {"Lambda": 0.3, "blocks": 10000},
    "loaded": {"Lambda": 0.5, "blocks": 3000},
    "heavy": {"Lambda": 2.0, "blocks": 250},
}
REPEATS = 3


def best_run(implementation, sets: dict, **options) -> tuple[float, object]:
    """The best of REPEATS run times of `implementation` (pyserq or serq) on one case, and
    the last report; `options` go to serq's `run`."""
    program = implementation.compile(PROGRAM, horizon=HORIZON, sets=sets)
    best, report = float("inf"), None
    for _ in range(REPEATS):
        start = time.perf_counter()
        report = implementation.run(program, **options)
        best = min(best, time.perf_counter() - start)
    return best, report


def summary(report) -> str:
    """Iterations, preemptions and the mean hit rate, to show both ran the same load."""
    kv = report.pools[1]
    return (
        f"iterations {report.stages[0].iterations:>7}  preemptions {kv.preemptions:>4}  "
        f"hit {report.observe('hit_rate').mean:.3f}"
    )


def main() -> None:
    print(f"{PROGRAM} for {HORIZON} s, best of {REPEATS} (run time only)")
    print(f"{'case':<8}{'pyserq s':>10}{'serq s':>10}{'ratio':>8}{'one by one':>12}{'ratio':>8}")
    for name, sets in CASES.items():
        theirs, their_report = best_run(pyserq, sets)
        ours, our_report = best_run(serq, sets)
        slow, _ = best_run(serq, sets, fast_forward=False)
        print(
            f"{name:<8}{theirs:>10.3f}{ours:>10.3f}{ours / theirs:>7.2f}x"
            f"{slow:>12.3f}{slow / theirs:>7.2f}x"
        )
        engine = our_report.stages[0]
        print(f"  pyserq  {summary(their_report)}")
        print(f"  serq    {summary(our_report)}  skipped {engine.skipped / engine.iterations:.1%}")
    program = serq.compile(PROGRAM, horizon=HORIZON, sets=CASES["loaded"])
    profile = cProfile.Profile()
    profile.runcall(serq.run, program)
    print("\nserq, loaded case: top 15 by internal time")
    pstats.Stats(profile).sort_stats("tottime").print_stats(15)


if __name__ == "__main__":
    main()
