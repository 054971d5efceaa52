"""The differential search of the step engine against pyserq 0.1.2, over the whole value
range (tests/oracle/step_family.py), or with `--family pools` of the pools and the other
stages (tests/oracle/pool_family.py). Run by hand; the CI runs a sample of each
(tests/oracle/test_step_family.py, test_pool_family.py).

    PYTHONPATH=. python scripts/search_step.py --start 0 --count 500 --out /tmp/search
    PYTHONPATH=. python scripts/search_step.py --dialect main ...   (fn main, pyserq 0.1.4)
    PYTHONPATH=. python scripts/search_step.py --family pools ...   (pools, fifo, ps, delay)
    PYTHONPATH=. python scripts/search_step.py --family forms ...   (every statement form;
        `--dialect random` draws from every law, for `--against interpreter` only)
    PYTHONPATH=. python scripts/search_step.py --against interpreter ...   (serq's compiled
        event path against its interpreter, `codegen=False`: no reference needed)
    PYTHONPATH=. python scripts/search_step.py --family paths --against interpreter ...
        (random programs over what the compiled path writes inline: its stages, holds,
        loops and ends; tests/oracle/paths_family.py)
    PYTHONPATH=. python scripts/search_step.py --family serving ...   (two sides and the
        serving vocabulary, tests/oracle/serving_family.py; `--family queues`: queues,
        entries, pulls and links, queue_family.py; both compared on the whole report,
        with `--dialect main` against pyserq 0.1.4, and with `--dialect random`
        statistically over `--seeds` seeds, `--dialect main-random` the same in the
        `fn main` dialect against 0.1.4)
    PYTHONPATH=. python scripts/search_step.py --family ties ...   (many events at one
        instant, tests/oracle/ties_family.py, on the whole report; `--dialect random`
        with `--against interpreter`)
    PYTHONPATH=. python scripts/search_step.py --family joint ...   (two to four step
        engines: replicas behind a router, prefill and decode engines with a KV transfer,
        tests/oracle/joint_family.py, on the whole report, with `--dialect main` against
        pyserq 0.1.4; `--against interpreter` runs it three ways: generated code,
        interpreter, every iteration stepped)

prints a line per program that does not simply agree and a tally; the programs that
differ are written to OUT/<verdict>/g<k>.sq.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "oracle"))

import differential  # noqa: E402
import forms_family  # noqa: E402
import inline_family  # noqa: E402
import joint_family  # noqa: E402
import paths_family  # noqa: E402
import pool_family  # noqa: E402
import queue_family  # noqa: E402
import serving_family  # noqa: E402
import step_family  # noqa: E402
import ties_family  # noqa: E402
import turns_family  # noqa: E402

FAMILIES = {
    "step": step_family,
    "pools": pool_family,
    "forms": forms_family,
    "paths": paths_family,
    "serving": serving_family,
    "queues": queue_family,
    "turns": turns_family,
    "ties": ties_family,
    "inline": inline_family,
    "joint": joint_family,
}
# the families compared on the whole report (every pool and stage figure, the gauges)
WHOLE = {"serving", "queues", "turns", "ties", "inline", "joint"}
# the dialects compared in distribution (`differential.compare_statistics`): the items
# programs against pyserq 0.1.2, the `fn main` ones (serving and queues) against 0.1.4
RANDOM = ("random", "main-random")
MAIN_RANDOM = ("serving", "queues")  # the families that draw in the `fn main` dialect
# the families whose `--against interpreter` also steps every engine iteration
# (`fast_forward=False`) and compares the three runs, every sample
STEPPED = {"joint"}


SERQ_TIMEOUT = 120
HORIZON = re.compile(r"^// horizon: (\S+)", re.M)  # a `fn main` program's, if it says


def _over(signum: int, frame: object) -> None:
    raise TimeoutError


def _unalarmed(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` with serq's alarm paused while it runs: the reference's wait (its own CPU
    limit, and `WALL_FACTOR` times that on the wall clock) is not serq's time, and on a
    busy machine it alone reached `SERQ_TIMEOUT`, a reference that hangs tallied as a
    serq time-out (NOTES §73)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        left = signal.alarm(0)
        try:
            return fn(*args, **kwargs)
        finally:
            if left:
                signal.alarm(left)

    return run


# `differential.compare` calls the reference through the module's name
differential.reference = _unalarmed(differential.reference)


def one(
    job: tuple[int, str, str, str, int, float | None, float],
) -> tuple[int, str, str, str]:
    k, dialect, family, against, seeds, horizon, wait = job
    text = FAMILIES[family].program(k, dialect)
    with tempfile.NamedTemporaryFile("w", suffix=".sq", delete=False) as f:
        f.write(text)
    # serq runs here, without the reference's child timeout
    signal.alarm(SERQ_TIMEOUT * (seeds if dialect in RANDOM else 1))
    try:
        if against == "interpreter":
            settings = {"horizon": 400.0, "seed": 1} if dialect == "main" else {}
            verdict, detail = differential.paths(f.name, family in STEPPED, **settings)
        elif dialect == "main":  # against pyserq 0.1.4, which has no run block there
            found = HORIZON.search(text)
            horizon = float(found.group(1)) if found else 400.0
            whole = family in WHOLE
            verdict, detail = differential.compare(
                f.name, wait, main=True, full=whole, horizon=horizon, seed=1
            )
        elif dialect == "main-random":  # against pyserq 0.1.4, over `seeds` spread seeds
            found = HORIZON.search(text)
            settings = {"horizon": float(found.group(1)) if found else 300.0}
            if horizon is not None:
                settings["horizon"] = horizon
            verdict, detail = differential.compare_statistics(f.name, seeds, main=True, **settings)
        elif dialect == "random" and family in WHOLE:
            settings = {} if horizon is None else {"horizon": horizon}
            verdict, detail = differential.compare_statistics(f.name, seeds, **settings)
        else:
            verdict, detail = differential.compare(f.name, wait, full=family in WHOLE)
    except TimeoutError:
        verdict, detail = "serq-timeout", f"serq ran over {SERQ_TIMEOUT} s"
    finally:
        signal.alarm(0)
        os.unlink(f.name)
    return k, verdict, detail, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--dialect", choices=("items", "main", *RANDOM), default="items")
    ap.add_argument("--family", choices=tuple(FAMILIES), default="step")
    ap.add_argument("--against", choices=("reference", "interpreter"), default="reference")
    ap.add_argument("--seeds", type=int, default=8, help="seeds a side, for --dialect random")
    ap.add_argument("--horizon", type=float, default=None, help="for --dialect random")
    ap.add_argument(
        "--timeout", type=float, default=60.0, help="seconds the reference may run a program"
    )
    args = ap.parse_args()
    if args.dialect == "main-random" and (
        args.family not in MAIN_RANDOM or args.against != "reference"
    ):
        ap.error(
            f"--dialect main-random is for --family {' or '.join(MAIN_RANDOM)}"
            " against the reference"
        )
    if (
        args.dialect.startswith("main")
        and args.against == "reference"
        and not differential.have_014()
    ):
        ap.error(differential.missing_014())
    tally: collections.Counter[str] = collections.Counter()
    with ProcessPoolExecutor(
        args.jobs, initializer=signal.signal, initargs=(signal.SIGALRM, _over)
    ) as pool:
        for k, verdict, detail, text in pool.map(
            one,
            [
                (k, args.dialect, args.family, args.against, args.seeds, args.horizon, args.timeout)
                for k in range(args.start, args.start + args.count)
            ],
            chunksize=4,
        ):
            tally[verdict] += 1
            if verdict != "same":
                print(f"g{k}: {verdict}: {detail}", flush=True)
                if args.out is not None:
                    where = args.out / verdict
                    where.mkdir(parents=True, exist_ok=True)
                    (where / f"g{k}.sq").write_text(text)
    print(dict(tally))


if __name__ == "__main__":
    main()
