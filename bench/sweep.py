"""Sweep speed: the same sweep on 1 local job and on 2 (and optionally N), with the speed-up.

Run by hand from the repository root:

    PYTHONPATH=. python bench/sweep.py [--jobs 1,2] [--repeat 2]

The sweep is examples/vllm.sq (vLLM v1 under a multi-turn chat) over Lambda 0.5, 1, 1.5,
2 with 2 seeds, 8 runs of 300 simulated seconds each: enough work per run (about a second)
that the pool's start-up and the compile of each point in each worker are small beside it.
Each job count is timed `--repeat` times (the best is kept), wall clock from the call of
`serq.sweep` to its result, with the CPU time spent (workers included: the work the pool
adds is the difference), and the results are checked equal to the 1-job ones (the same
bytes), so the timing is of the same work.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import serq  # noqa: E402

PROGRAM = str(Path(__file__).resolve().parents[1] / "examples" / "vllm.sq")
SETS = {"Lambda": "0.5:2:0.5"}
SEEDS = 2
HORIZON, WARMUP = 300.0, 30.0


def cpu_seconds() -> float:
    """The CPU time of this process and of its children that have ended."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(jobs: int) -> tuple[float, float, str]:
    """The wall time and the CPU time (workers included) of the sweep on `jobs` local
    jobs, and its results as CSV."""
    start, cpu = time.perf_counter(), cpu_seconds()
    result = serq.sweep(PROGRAM, sets=SETS, seeds=SEEDS, jobs=jobs, horizon=HORIZON, warmup=WARMUP)
    elapsed, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    assert result.complete and not result.failed
    return elapsed, cpu, result.to_csv() + result.to_csv(runs=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1,2", help="job counts to time, comma-separated")
    parser.add_argument("--repeat", type=int, default=2, help="timings per job count")
    args = parser.parse_args()
    counts = [int(j) for j in args.jobs.split(",")]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{PROGRAM}: {SETS} × {SEEDS} seeds, horizon {HORIZON:g}; {os.cpu_count()} CPUs, "
          f"load average {load} (a speed-up needs idle CPUs: compare on a quiet machine)")
    best: dict[int, float] = {}
    reference: str | None = None
    for jobs in counts:
        times, cpus = [], []
        for _ in range(args.repeat):
            elapsed, cpu, text = timed(jobs)
            reference = reference or text
            assert text == reference, f"{jobs} jobs gave other results"
            times.append(elapsed)
            cpus.append(cpu)
        best[jobs] = min(times)
        runs = ", ".join(f"{t:.2f}" for t in times)
        cpu_text = ", ".join(f"{c:.2f}" for c in cpus)
        print(f"{jobs} job(s): best {best[jobs]:.2f} s wall (runs: {runs}; CPU s: {cpu_text})")
    base = best.get(1)
    if base is not None:
        for jobs, elapsed in best.items():
            if jobs != 1:
                print(f"speed-up of {jobs} jobs over 1: {base / elapsed:.2f}x")


if __name__ == "__main__":
    main()
