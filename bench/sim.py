"""Simulator speed against the reference: M/M/1 and M/G/1-PS, serq beside pyserq.

Run by hand from the repository root (pyserq 0.1.2 installed):

    PYTHONPATH=. python bench/sim.py [--customers N] [--repeat R]

Each example runs to the horizon that brings about N customers (one million by default:
1,250,000 for M/M/1 at λ = 0.8), in one process with both simulators. Compiling is outside
the timing; a run is `pyserq.run(...)` or `serq.run(...)`, report included, timed in CPU
(`time.process_time`) in R rounds (3 by default) in which the two take turns
(`bench.timing.cpu_best_each`). It prints the best of each, per customer, and serq's time
over pyserq's (the goal of issue 5 is at most 4).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import serq  # noqa: E402
from bench.timing import cpu_best_each  # noqa: E402

CASES = (("M/M/1", "examples/mm1.sq", 0.8), ("M/G/1-PS", "examples/ps.sq", 0.6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=float, default=1e6)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import pyserq

    print(f"pyserq {pyserq.__version__}, serq {serq.__version__}, best of {args.repeat}")
    head = ("model", "horizon", "pyserq s", "serq s", "µs/cust", "ratio")
    print("{:<10} {:>10} {:>9} {:>8} {:>8} {:>6}".format(*head))
    for name, path, rate in CASES:
        horizon = args.customers / rate
        file = str(ROOT / path)
        theirs, ours = cpu_best_each(
            [
                (pyserq.run, pyserq.compile(file, horizon=horizon)),
                (serq.run, serq.compile(file, horizon=horizon)),
            ],
            args.repeat,
        )
        per = ours / args.customers * 1e6
        print(
            f"{name:<10} {horizon:>10.0f} {theirs:>9.3f} {ours:>8.3f} {per:>8.2f} "
            f"{ours / theirs:>5.1f}x"
        )


if __name__ == "__main__":
    main()
