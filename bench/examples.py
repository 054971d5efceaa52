"""Every example program, serq beside pyserq 0.1.2: CPU time of `run()`.

Run by hand from the repository root (pyserq 0.1.2 installed):

    PYTHONPATH=. python bench/examples.py [--least-ms MS] [--repeat R] [FILE ...]
    PYTHONPATH=. python bench/examples.py --reference DIR examples/vocabulary/*.sq ...

bench/shapes.py times the shapes issue 18 names, each written for the bench; this runs
the programs users start from (examples/*.sq, or the FILEs given) as they are, so that a
shape the bench does not have shows up here. Each program's horizon is stretched (at
most 500 times) until the reference's run takes about MS milliseconds of CPU (50 by
default), so that both times are well above the clock's grain; then each side runs R
times (3 by default) in one process, compilation excluded, and the best is kept. A
program the reference cannot run (a `fn main` program, the newer vocabulary) is listed
as skipped, and one whose run ends by itself before 2 ms however long the horizon (a
fixed number of requests) is printed but left out of the summary: its ratio is what
starting a run costs. It prints both times and the ratio serq / pyserq per program, then
the median and the worst.

`--reference DIR` times against the pyserq found in DIR instead (pyserq 0.1.4, installed
there with `pip install --no-deps --target DIR pyserq==0.1.4`), which runs the `fn main`
dialect and the newer vocabulary; a program without a `run` block takes its horizon
from a `// horizon: T` line, as examples/vocabulary's do.
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
from bench.timing import cpu_best, cpu_best_each, summary  # noqa: E402

COMMENTED = re.compile(r"^//\s*horizon:\s*([0-9.eE+]+)\s*$", re.M)  # a `fn main` program's
MOST = 500.0  # the most a horizon is stretched
GRAIN = 0.002  # a reference run shorter than this at the stretched horizon ends by itself


def _horizon(path: Path) -> float | None:
    """The horizon of `path`'s `run` block as serq links it (however the block is laid
    out, a `let` constant or an expression), else its `// horizon: T` line, else None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            horizon = serq.compile(str(path)).program.horizon
        except ValueError:  # it does not compile (a `fn main` program: its comment)
            horizon = None
    if horizon is not None and 0 < horizon < float("inf"):
        return float(horizon)
    found = COMMENTED.search(path.read_text(encoding="utf-8"))
    return None if found is None else float(found.group(1))


def stretched(pyserq, path: Path, least: float) -> float | None:
    """The horizon at which the reference's run of `path` takes about `least` seconds."""
    horizon = _horizon(path)
    if horizon is None:
        return None
    taken = cpu_best(pyserq.run, pyserq.compile(str(path), seed=1, horizon=horizon), 1)
    scale = min(max(least / max(taken, 1e-5), 1.0), MOST)
    return horizon * scale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--least-ms", type=float, default=50.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference", metavar="DIR", help="import pyserq from DIR")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.reference:
        sys.path.insert(0, args.reference)
    import pyserq

    files = [Path(f) for f in args.files] or sorted((ROOT / "examples").glob("*.sq"))
    print(f"pyserq {pyserq.__version__}, CPU time of run(), best of {args.repeat}")
    print(f"{'program':<34}{'horizon':>10}{'pyserq s':>10}{'serq s':>9}{'ratio':>8}")
    ratios: dict[str, float] = {}
    for path in files:
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        try:
            horizon = stretched(pyserq, path, args.least_ms / 1e3)
            if horizon is None:
                print(f"{str(name):<34}  skipped: no horizon")
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", serq.RunWarning)
                theirs, ours = cpu_best_each(
                    [
                        (pyserq.run, pyserq.compile(str(path), seed=1, horizon=horizon)),
                        (serq.run, serq.compile(str(path), seed=1, horizon=horizon)),
                    ],
                    args.repeat,
                )
        except BaseException as error:  # either refuses it or stops with an error (at
            # the stretched horizon too), or the reference panics (pyo3's PanicException)
            if isinstance(error, KeyboardInterrupt | SystemExit):
                raise
            print(f"{str(name):<34}  skipped: {str(error).splitlines()[0][:60]}")
            continue
        row = f"{str(name):<34}{horizon:>10.0f}{theirs:>10.3f}{ours:>9.3f}{ours / theirs:>7.1f}x"
        if theirs < GRAIN:  # a run of fixed size: the ratio is the cost of starting a run
            print(f"{row}  (a run of fixed size, left out)", flush=True)
            continue
        ratios[str(name)] = ours / theirs
        print(row, flush=True)
    if ratios:
        print(summary(ratios, "programs"))


if __name__ == "__main__":
    main()
