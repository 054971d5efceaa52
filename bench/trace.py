"""Trace loading, serq against pyserq 0.1.2, side by side: time and peak memory.

    python bench/trace.py [ROWS] [--keep PATH]

writes a trace of ROWS rows (default 5,000,000, about 100 MB: sessions of 10 turns),
then loads it in a fresh process per implementation (serq's `read_trace`, pyserq's
`read_trace`, which builds Python tuples; then a whole compile and run to time 1 of a
program replaying it, in each, where pyserq keeps the trace in Rust) and prints the
wall time of the load and the process's peak RSS
(`ru_maxrss`, which includes the interpreter: the baseline of an empty process is
printed too). Run by hand; never from the tests.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import resource, sys, time
path, which = sys.argv[1], sys.argv[2]
if which == "serq":
    from serq import ir
    from serq.diagnostics import Span
    from serq.sim.workload import read_trace
    trace = ir.Trace(path, False, Span("<bench>", 0, 0, 1, 1, 1, 1))
    load = lambda: read_trace(trace, ".")
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
start = time.perf_counter()
sessions = load()
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{which:8} {len(sessions):>9} sessions  {elapsed:7.2f} s  peak RSS {peak:7.0f} MB")
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
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(keep) if keep else Path(tmp) / "trace.csv"
        if not path.exists():
            write_trace(path, rows)
        print(f"{path}: {path.stat().st_size / 1e6:.0f} MB, {rows} rows")
        for which in ("baseline", "pyserq", "serq", "pyserq-run", "serq-run"):
            subprocess.run([sys.executable, "-c", CHILD, str(path), which], check=True)


if __name__ == "__main__":
    main(sys.argv[1:])
