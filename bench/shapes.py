"""The shapes users write, serq beside pyserq 0.1.2 (issue 18): CPU time of `run()`.

Run by hand from the repository root (pyserq 0.1.2 installed):

    PYTHONPATH=. python bench/shapes.py [--customers N] [--repeat R] [SHAPE ...]

Each program of bench/shapes/ (or the SHAPEs named, file stems) is compiled once by each
implementation, with the horizon that brings about N customers (100,000 by default: a
warm-up of 100 s plus N over the customer rate of the table below, a customer being a
session, or a turn where sessions take several), and run in R rounds (3 by default) of
pyserq then serq, in one process, so that a slow spell of the machine falls on both sides
alike. A time is the CPU time (`time.process_time`) of one `run()`, report included,
compilation excluded; the best of R is kept. It prints per shape the customers the
reference's run counted, both times, serq's µs per customer and the ratio serq / pyserq,
then the median and the worst ratio (issue 18's goals: every shape at most 4x, the
median at most 3x).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import serq  # noqa: E402
from bench.timing import cpu_best_each, summary  # noqa: E402

SHAPES = ROOT / "bench" / "shapes"
WARMUP = 100.0  # seconds, every shape

# file stem: customers per simulated second (sessions, or turns), and what a customer is
RATES: dict[str, tuple[float, str]] = {
    "mm1": (0.8, "sessions"),
    "ps": (0.6, "sessions"),
    "mm1_init_end": (0.8, "sessions"),
    "mmc": (2.4, "sessions"),
    "tandem2": (0.8, "sessions"),
    "tandem3": (0.8, "sessions"),
    "pool1": (1.6, "sessions"),
    "pool2": (1.5, "sessions"),
    "hold_ps": (1.4, "sessions"),
    "branch_with": (0.8, "sessions"),
    "choose": (3.2, "sessions"),
    "route": (2.8, "sessions"),
    "closed": (0.8, "responses"),  # 5 users, think 4, serve 1: X = 0.80 (MVA)
    "loop_turn": (0.75, "turns"),  # 0.25 sessions a second, three turns each
    "gauges": (1.6, "sessions"),
    "priced_cache": (1.5, "sessions"),
    "trace": (0.582, "turns"),  # examples/traces/chat.csv: 14 turns per 6 sessions, every 4 s
    "vllm": (1.0, "turns"),  # 0.5 sessions a second, two turns each on average
}


def customers(report, kind: str) -> int:
    """What the report counts of the shape's customers."""
    if kind == "turns":
        return report.turns
    if kind == "responses":
        return report.observe("response").count
    return report.ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=float, default=1e5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("shapes", nargs="*", help="file stems of bench/shapes/ (default: all)")
    args = parser.parse_args()
    import pyserq

    names = args.shapes or list(RATES)
    missing = sorted({p.stem for p in SHAPES.glob("*.sq")} - set(RATES))
    if missing:
        sys.exit(f"bench/shapes/ has programs with no rate in RATES: {', '.join(missing)}")
    print(
        f"pyserq {pyserq.__version__}, serq {serq.__version__}, about {args.customers:,.0f} "
        f"customers, CPU time of run(), best of {args.repeat}"
    )
    head = ("shape", "horizon", "customers", "pyserq s", "serq s", "µs/cust", "ratio")
    print("{:<13} {:>9} {:>10} {:>9} {:>8} {:>8} {:>7}".format(*head))
    ratios = {}
    for name in names:
        rate, kind = RATES[name]
        file = str(SHAPES / f"{name}.sq")
        horizon = WARMUP + args.customers / rate
        options = {"horizon": horizon, "warmup": WARMUP}
        reports = []

        def theirs_run(program, reports=reports):
            reports.append(pyserq.run(program))

        sides = [
            (theirs_run, pyserq.compile(file, **options)),
            (serq.run, serq.compile(file, **options)),
        ]
        theirs, ours = cpu_best_each(sides, args.repeat)
        report = reports[-1]
        count = customers(report, kind)
        ratios[name] = ours / theirs
        print(
            f"{name:<13} {horizon:>9.0f} {count:>10,} {theirs:>9.3f} {ours:>8.3f} "
            f"{ours / count * 1e6:>8.2f} {ours / theirs:>6.1f}x",
            flush=True,
        )
    print(summary(ratios, "shapes"))


if __name__ == "__main__":
    main()
