"""Near variants of the shapes users write, serq beside pyserq 0.1.2: CPU time of `run()`.

Run by hand from the repository root (pyserq 0.1.2 installed):

    PYTHONPATH=. python bench/wide.py [--customers N] [--repeat R] [PROGRAM ...]

bench/shapes.py times one program per shape; a speed goal met there can still collapse
on a near variant (a trailing `end;`, a fifo(16), a `queue by`). bench/wide/ holds such
variants, each headed by `// near: SHAPE`, the bench/shapes/ program it varies. For each
program of bench/wide/ (or the PROGRAMs named, file stems) and for each shape named
there, the horizon is stretched from the file's until the reference's run counts about
N customers (20,000 by default; a customer is a session that ended, a turn, or a sample
of the most observed `observe`, whichever the run counts most of), keeping the file's
warm-up; then both sides run R rounds (3 by default) that take turns, compilation
excluded, and the best of each is kept. It prints per program the customers, both
times, serq's µs per customer, the ratio serq / pyserq, the ratio of its near shape
measured the same way, and `CLIFF` where the ratio is more than 1.5 times the shape's
or more than 8x; then the median and the worst ratio.
"""

from __future__ import annotations

import argparse
import re
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import serq  # noqa: E402
from bench.timing import cpu_best_each, summary  # noqa: E402

WIDE = ROOT / "bench" / "wide"
SHAPES = ROOT / "bench" / "shapes"
HORIZON = re.compile(r"^\s*horizon\s+([0-9.eE+]+)\s*;", re.M)
WARMUP = re.compile(r"^\s*warmup\s+([0-9.eE+]+)\s*;", re.M)
NEAR = re.compile(r"^//\s*near:\s*(\w+)", re.M)
MOST = 1000.0  # the most a horizon is stretched
CLIFF_NEAR = 1.5  # a ratio above this many times its near shape's is a cliff
CLIFF_ALL = 8.0  # and so is any ratio above this


def customers(report) -> int:
    """What a run counts of its customers: sessions ended, turns, or samples of the most
    observed `observe` (a closed population's sessions never end)."""
    samples = max((o.count for o in report.observes.values()), default=0)
    return max(report.ended, report.turns, samples)


def stretched(pyserq, path: Path, wanted: float) -> tuple[float, float]:
    """The horizon at which the reference's run of `path` counts about `wanted`
    customers, and the file's warm-up."""
    text = path.read_text(encoding="utf-8")
    horizon = float(HORIZON.search(text).group(1))
    warmup = float(WARMUP.search(text).group(1))
    report = pyserq.run(pyserq.compile(str(path), horizon=horizon))
    scale = min(max(wanted / max(customers(report), 1), 1e-3), MOST)
    return warmup + (horizon - warmup) * scale, warmup


def timed(pyserq, path: Path, wanted: float, repeat: int) -> tuple[float, int, float, float]:
    """(horizon, customers, pyserq's time, serq's time) of `path` at about `wanted`
    customers, each time the best of `repeat` rounds that take turns."""
    horizon, warmup = stretched(pyserq, path, wanted)
    options = {"horizon": horizon, "warmup": warmup}
    reports: list = []

    def theirs_run(program, reports=reports):
        reports.append(pyserq.run(program))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", serq.RunWarning)
        theirs, ours = cpu_best_each(
            [
                (theirs_run, pyserq.compile(str(path), **options)),
                (serq.run, serq.compile(str(path), **options)),
            ],
            repeat,
        )
    return horizon, customers(reports[-1]), theirs, ours


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=float, default=2e4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("programs", nargs="*", help="file stems of bench/wide/ (default: all)")
    args = parser.parse_args()
    import pyserq

    paths = [WIDE / f"{name}.sq" for name in args.programs] or sorted(WIDE.glob("*.sq"))
    print(
        f"pyserq {pyserq.__version__}, serq {serq.__version__}, about {args.customers:,.0f} "
        f"customers, CPU time of run(), best of {args.repeat}"
    )
    head = ("program", "near", "customers", "pyserq s", "serq s", "µs/cust", "ratio", "near")
    print("{:<20} {:<13} {:>9} {:>9} {:>8} {:>8} {:>7} {:>6}".format(*head))
    near_ratios: dict[str, float] = {}
    ratios: dict[str, float] = {}
    cliffs = []
    for path in paths:
        near = NEAR.search(path.read_text(encoding="utf-8")).group(1)
        if near not in near_ratios:
            _, _, theirs, ours = timed(pyserq, SHAPES / f"{near}.sq", args.customers, args.repeat)
            near_ratios[near] = ours / theirs
        _, count, theirs, ours = timed(pyserq, path, args.customers, args.repeat)
        ratio = ratios[path.stem] = ours / theirs
        cliff = ratio > CLIFF_NEAR * near_ratios[near] or ratio > CLIFF_ALL
        if cliff:
            cliffs.append(path.stem)
        print(
            f"{path.stem:<20} {near:<13} {count:>9,} {theirs:>9.3f} {ours:>8.3f} "
            f"{ours / max(count, 1) * 1e6:>8.2f} {ratio:>6.1f}x {near_ratios[near]:>5.1f}x"
            + ("  CLIFF" if cliff else ""),
            flush=True,
        )
    print(summary(ratios, "programs"))
    print(f"cliffs: {', '.join(cliffs) or 'none'}")


if __name__ == "__main__":
    main()
