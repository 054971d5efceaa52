"""Trace loading, serq against pyserq 0.1.2, side by side: time and peak memory.

    python bench/trace.py [ROWS] [--keep PATH] [--best N] [--pure]

writes a trace of ROWS rows (default 5,000,000, about 130 MB: sessions of 10 turns),
then loads it in a fresh process per implementation (serq's `read_trace`, pyserq's
`read_trace`, which builds Python tuples; then a whole compile and run to time 1 of a
program replaying it, in each, where pyserq keeps the trace in Rust) and prints the
CPU time and wall time of the load and the process's peak RSS (`ru_maxrss`, which
includes the interpreter: the baseline of an empty process is printed too), the best
of N runs of each (default 3; the runs alternate between the implementations, so a
change of the machine's load falls on both). `--pure` reads serq's trace without numpy
(`accelerate=False`). Run by hand; never from the tests.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import resource, sys, time
path, which, pure = sys.argv[1], sys.argv[2], sys.argv[3] == "pure"
if which == "serq":
    from serq import ir
    from serq.diagnostics import Span
    from serq.sim.workload import read_trace
    trace = ir.Trace(path, False, Span("<bench>", 0, 0, 1, 1, 1, 1))
    load = lambda: read_trace(trace, ".", accelerate=not pure)
elif which == "pyserq":
    import pyserq
    load = lambda: pyserq.read_trace(path)
elif which in ("serq-run", "pyserq-run"):  # a whole run that loads it: compile, run to 1
    source = (
        "stage s : fifo(1);\n"
        f'workload {{ arrive poisson(1); trace "{path}"; }}\n'
        "session { turn; run s (new); }\nrun { horizon 1; }\n"
    )
    if which == "serq-run":
        import serq
        load = lambda: [serq.run(serq.compile(source=source))]
    else:
        import pyserq
        load = lambda: [pyserq.run(pyserq.compile(source=source))]
else:
    load = lambda: []
start, cpu = time.perf_counter(), time.process_time()
sessions = load()
cpu, elapsed = time.process_time() - cpu, time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(len(sessions), cpu, elapsed, peak)
"""


def write_trace(path: Path, rows: int, turns: int = 10) -> None:
    rng = random.Random(1)
    with path.open("w", encoding="utf-8") as f:
        f.write("session,turn,new,out,think,forced\n")
        for i in range(rows):
            s, t = divmod(i, turns)
            f.write(
                f"{s},{t},{rng.randrange(1, 4000)},{rng.randrange(1, 800)},"
                f"{rng.random() * 30:.3f},0\n"
            )


def main(argv: list[str]) -> None:
    rows = int(argv[0]) if argv and not argv[0].startswith("-") else 5_000_000
    keep = argv[argv.index("--keep") + 1] if "--keep" in argv else None
    best = int(argv[argv.index("--best") + 1]) if "--best" in argv else 3
    pure = "pure" if "--pure" in argv else "numpy"
    whiches = ("baseline", "pyserq", "serq", "pyserq-run", "serq-run")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(keep) if keep else Path(tmp) / "trace.csv"
        if not path.exists():
            write_trace(path, rows)
        print(f"{path}: {path.stat().st_size / 1e6:.0f} MB, {rows} rows, best of {best}")
        results: dict[str, list[tuple[int, float, float, float]]] = {w: [] for w in whiches}
        for _ in range(best):
            for which in whiches:
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, str(path), which, pure],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout.split()
                n, cpu, wall, peak = int(out[0]), float(out[1]), float(out[2]), float(out[3])
                results[which].append((n, cpu, wall, peak))
        for which in whiches:
            n = results[which][0][0]
            cpu = min(r[1] for r in results[which])
            wall = min(r[2] for r in results[which])
            peak = min(r[3] for r in results[which])
            print(
                f"{which:10} {n:>9} sessions  CPU {cpu:6.2f} s  wall {wall:6.2f} s"
                f"  peak RSS {peak:6.0f} MB"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
