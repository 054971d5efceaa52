"""Bytes per observation sample, serq beside pyserq 0.1.2 (issue 18, item 4).

Run by hand from the repository root (pyserq 0.1.2 installed):

    PYTHONPATH=. python bench/memory.py [--customers N] [SHAPE ...]

Each shape of bench/shapes/ named (mm1, the straight path, and tandem2, the generated
event path, by default) runs for about N customers (500,000 by default: each observes once) in
a fresh child process per implementation, so that no run inherits another's heap. The
child compiles the program, reads its resident set size (VmRSS of /proc/self/status),
runs it once, and reads the peak resident set size (VmHWM) and the resident set size with
the report still held. Bytes per sample are (peak - before) / samples and (held - before)
/ samples, samples being the report's observation samples. For serq a second child also
traces the run with `tracemalloc` (its peak and what the report keeps, Python's own
allocations only: pyserq's are Rust's and it cannot see them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = ROOT / "bench" / "shapes"
RATE = {"mm1": 0.8, "mm1_init_end": 0.8, "tandem2": 0.8, "pool1": 1.6, "choose": 3.2}

CHILD = r"""
import json, sys, tracemalloc
sys.path.insert(0, {root!r})
which, path, horizon, trace = {which!r}, {path!r}, {horizon!r}, {trace!r}
impl = __import__(which)

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024

program = impl.compile(path, horizon=horizon, warmup=0)
before = status("VmRSS")
if trace:
    tracemalloc.start()
report = impl.run(program)
if trace:
    held, peak = tracemalloc.get_traced_memory()
    before = 0
else:
    peak, held = status("VmHWM"), status("VmRSS")
samples = sum(o.count for o in report.observes.values())
print(json.dumps({{"samples": samples, "peak": peak - before, "held": held - before}}))
"""


def measure(which: str, path: Path, horizon: float, trace: bool = False) -> dict:
    """Run `path` in a child process with `which` (pyserq or serq); its figures."""
    code = CHILD.format(root=str(ROOT), which=which, path=str(path), horizon=horizon, trace=trace)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=float, default=5e5)
    parser.add_argument("shapes", nargs="*", default=["mm1", "tandem2"])
    args = parser.parse_args()
    print(f"about {args.customers:,.0f} customers, one observation each; bytes per sample")
    head = ("shape", "impl", "samples", "peak B", "held B", "how")
    print("{:<13} {:<7} {:>9} {:>8} {:>8}  {}".format(*head))
    for name in args.shapes:
        path = SHAPES / f"{name}.sq"
        horizon = args.customers / RATE[name]
        for which, trace in (("pyserq", False), ("serq", False), ("serq", True)):
            m = measure(which, path, horizon, trace)
            n = m["samples"]
            how = "tracemalloc (Python heap)" if trace else "RSS peak (VmHWM) and held"
            print(
                f"{name:<13} {which:<7} {n:>9,} {m['peak'] / n:>8.1f} {m['held'] / n:>8.1f}  {how}",
                flush=True,
            )


if __name__ == "__main__":
    main()
