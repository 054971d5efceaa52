"""Start-up: `serq check` of a small file, beside `python -c "import pyserq"` (issue 18).

Run by hand from the repository root:

    PYTHONPATH=. python bench/startup.py [--repeat R] [FILE]

Each command runs R times (10 by default) as a fresh process; its CPU time from process
start to exit (user + system, from `os.wait4`) is measured, and the least and the median
are printed. FILE is bench/shapes/mm1.sq by default; `serq check FILE, script` runs it
as the `serq` console script does (through `serq_entry`). `python -c pass` gives the
interpreter's own start (site and .pth files included), the floor under both. The goal
of issue 18 is at most 150 ms for `serq check`. Run `python -X importtime -m serq.cli
check FILE` to see where the imports go.

Bytecode: an installed package has its .pyc files, but this machine sets
PYTHONDONTWRITEBYTECODE=1, which would make every run compile every module from source.
The runs therefore use a private bytecode cache (PYTHONPYCACHEPREFIX in a temporary
directory, written by a first run of each command); `--source` measures without it.

The first `serq check` after the grammar changes builds the parser tables and caches
them (serq/syntax/parser.py); the runs measured start from a warm cache, and the last
line disables it (SERQ_GRAMMAR_CACHE=0) to show the cold cost. The caches are made
afresh in temporary directories, serq's (SERQ_CACHE_DIR) and Lark's (TMPDIR), by the
first run, as on a machine where serq has never run: what that first run writes is what
every later run reads (a parser pickled with Lark's objects in it once made every later
check import Lark).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "import sys; from serq_entry import entry; sys.exit(entry())"  # pip's, in short


def cpu(argv: list[str], env: dict[str, str]) -> float:
    """The CPU time (user + system, seconds) of one run of `argv`."""
    process = subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT
    )
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(argv)} failed")
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--source", action="store_true", help="no bytecode cache")
    parser.add_argument("file", nargs="?", default=str(ROOT / "bench" / "shapes" / "mm1.sq"))
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if not args.source:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="serq-startup-pycache-")
    env["SERQ_CACHE_DIR"] = tempfile.mkdtemp(prefix="serq-startup-cache-")
    env["TMPDIR"] = tempfile.mkdtemp(prefix="serq-startup-tmp-")  # Lark's cache
    cold = dict(env, SERQ_GRAMMAR_CACHE="0")
    py = sys.executable
    cases = (
        ("python -c pass", [py, "-c", "pass"], env),
        ('python -c "import pyserq"', [py, "-c", "import pyserq"], env),
        ("serq check FILE", [py, "-m", "serq.cli", "check", args.file], env),
        # what the console script runs (`serq_entry`, which catches a Ctrl-C in the imports)
        ("serq check FILE, script", [py, "-c", SCRIPT, "check", args.file], env),
        ("serq check FILE, no cache", [py, "-m", "serq.cli", "check", args.file], cold),
    )
    for _, argv, environment in cases:
        cpu(argv, environment)  # fill the bytecode and grammar caches
    bytecode = "from source" if args.source else "bytecode cached"
    print(f"{args.file}: CPU ms from process start, {args.repeat} runs each, {bytecode}")
    print(f"{'command':<28} {'least':>7} {'median':>7}")
    for name, argv, environment in cases:
        times = [cpu(argv, environment) * 1e3 for _ in range(args.repeat)]
        print(f"{name:<28} {min(times):>7.0f} {statistics.median(times):>7.0f}", flush=True)


if __name__ == "__main__":
    main()
