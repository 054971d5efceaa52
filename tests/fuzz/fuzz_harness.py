"""A seeded mutation fuzzer over the corpus and the examples, for `serq check` and `serq run`.

Each mutant is a valid or invalid program from tests/corpus or examples/ with one to
three mutations applied to its bytes: random bytes (invalid UTF-8 and a byte-order
mark among them), a long line, deep nesting (brackets, `!`, unary minus, `loop { }`),
a deleted or a duplicated span, truncation, and numbers replaced by 0, -1, inf, 0/0,
1e300, 1e-300 or tiny pool caps. A front-end mutant goes through `serq check`; a
simulator mutant (numbers changed in a valid program) through `serq run --horizon 200`
as well. Both run in-process through the API, in worker processes, each mutant under
a limit of CPU time (SIGPROF: a machine busy with other work, such as the other worker
of a parallel test run, must not turn a slow mutant into a time-out). A mutant passes when every phase answers with diagnostics, and
they render as `serq check` prints them: an exception that escapes, an `E-internal`
diagnostic or a timeout is a failure (a stall diagnostic is a pass).

By hand: `python tests/fuzz/fuzz_harness.py --front 5000 --sim 1000 --seed 3`.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import re
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
EXAMPLES = ROOT / "examples"
FRONT_LIMIT = 20.0  # seconds of CPU time a check may take
SIM_LIMIT = 15.0  # seconds of CPU time a check and a run of horizon 200 may take

_NUMBER = re.compile(rb"(?<![A-Za-z_0-9.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_CAP = re.compile(rb"\bcap\s+[^;]+;")
NUMBERS = (b"0", b"-1", b"inf", b"(0/0)", b"1e300", b"1e-300", b"-0", b"0.5", b"(-inf)")
JUNK = (b"\xff", b"\xfe", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\x1b", b"\t")
TOKENS = (b"{", b"}", b"(", b")", b"[", b"]", b";", b",", b"~", b"!", b"-", b"?", b":", b'"')


def sources(valid_only: bool = False) -> list[Path]:
    """The programs mutants start from: every corpus program and example (the valid ones)."""
    folders = (
        ["valid", "valid_main"]
        if valid_only
        else ["valid", "valid_main", "invalid", "link_invalid"]
    )
    files = [p for f in folders for p in sorted((CORPUS / f).glob("**/*.sq"))]
    files += sorted(p for p in EXAMPLES.rglob("*.sq") if p.parent.name != "lib")
    return files


# ---------------------------------------------------------------- mutations


def _span(rng: random.Random, data: bytes) -> tuple[int, int]:
    a = rng.randrange(len(data) + 1)
    b = min(len(data), a + rng.choice((1, 2, 5, 20, 80, 400)))
    return a, b


def random_bytes(rng: random.Random, data: bytes) -> bytes:
    at = rng.randrange(len(data) + 1)
    pieces = [
        rng.choice(JUNK + TOKENS) if rng.random() < 0.7 else bytes([rng.randrange(256)])
        for _ in range(rng.randint(1, 4))
    ]
    if rng.random() < 0.15:
        return b"\xef\xbb\xbf" + data  # a byte-order mark where it belongs
    return data[:at] + b"".join(pieces) + data[at:]


def long_line(rng: random.Random, data: bytes) -> bytes:
    at = rng.choice([m.start() for m in _NUMBER.finditer(data)] or [0])
    n = rng.choice((1_000, 5_000, 20_000))
    filler = rng.choice((b"1+", b"x", b"(1)*", b"max(1,1)+", b" "))
    return data[:at] + filler * (n // len(filler)) + data[at:]


def deep_nesting(rng: random.Random, data: bytes) -> bytes:
    numbers = list(_NUMBER.finditer(data))
    depth = rng.choice((20, 99, 150, 1_000, 3_000))
    if numbers and rng.random() < 0.7:
        m = rng.choice(numbers)
        opener, closer = rng.choice(
            (
                (b"(", b")"),
                (b"!", b""),
                (b"-", b""),
                (b"- ", b""),
                (b"max(0, ", b")"),
                (b"(1 ? ", b" : 0)"),
            )
        )
        return data[: m.start()] + opener * depth + m.group() + closer * depth + data[m.end() :]
    at = data.find(b"session {")
    at = len(data) if at < 0 else at + len(b"session {")
    body = rng.choice((b"loop { ", b"branch (1) { "))
    return data[:at] + body * depth + b"end;" + b" }" * depth + data[at:]


def delete_span(rng: random.Random, data: bytes) -> bytes:
    a, b = _span(rng, data)
    return data[:a] + data[b:]


def duplicate_span(rng: random.Random, data: bytes) -> bytes:
    a, b = _span(rng, data)
    return data[:b] + data[a:b] + data[b:]


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def numbers(rng: random.Random, data: bytes) -> bytes:
    """Replace one to three numbers by 0, -1, inf, NaN, 1e300, ..., or a pool cap by 0 or 1."""
    for _ in range(rng.randint(1, 3)):
        if rng.random() < 0.2 and _CAP.search(data):
            caps = list(_CAP.finditer(data))
            m = rng.choice(caps)
            data = (
                data[: m.start()]
                + rng.choice((b"cap 0;", b"cap 1;", b"cap 1e-9;"))
                + data[m.end() :]
            )
            continue
        found = list(_NUMBER.finditer(data))
        if not found:
            return data
        m = rng.choice(found)
        data = data[: m.start()] + rng.choice(NUMBERS) + data[m.end() :]
    return data


FRONT_OPERATORS = (
    random_bytes,
    long_line,
    deep_nesting,
    delete_span,
    duplicate_span,
    truncate,
    numbers,
)
SIM_OPERATORS = (numbers, numbers, numbers, duplicate_span, delete_span)


@dataclass(frozen=True)
class Mutant:
    """One mutant: the program it came from, the mutations applied (by name) and its seed."""

    source: str
    operators: tuple[str, ...]
    seed: int
    data: bytes
    simulate: bool


def mutants(count: int, seed: int, simulate: bool) -> list[Mutant]:
    """`count` mutants, the same for the same `seed`."""
    files = sources(valid_only=simulate)
    texts = {p: p.read_bytes() for p in files}
    operators = SIM_OPERATORS if simulate else FRONT_OPERATORS
    out = []
    for i in range(count):
        rng = random.Random(seed * 1_000_003 + i)
        path = rng.choice(files)
        data = texts[path]
        applied = []
        for _ in range(rng.choice((1, 1, 2, 3))):
            op = rng.choice(operators)
            data = op(rng, data)
            applied.append(op.__name__)
        out.append(Mutant(str(path), tuple(applied), seed * 1_000_003 + i, data, simulate))
    return out


# ---------------------------------------------------------------- running


class _Timeout(BaseException):
    """The time limit of a mutant: a BaseException, so no `except Exception` in serq eats it."""


def _alarm(signum, frame):
    raise _Timeout


def check_mutant(mutant: Mutant) -> str | None:
    """Run `mutant` as `serq check` (and `serq run --horizon 200`); None if it passes, else
    what went wrong."""
    from serq import api
    from serq.sim import api as sim_api
    from serq.syntax.source_text import decode

    limit = SIM_LIMIT if mutant.simulate else FRONT_LIMIT
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, limit)
    stage = "check"
    try:
        text = decode(mutant.data)
        found = api.check_source(text, mutant.source)
        if mutant.simulate:
            stage = "compile"
            compiled, more = sim_api.compile_program(text, mutant.source, horizon=200.0, warmup=0.0)
            found = [*found, *more]
            if compiled is not None:
                stage = "run"
                _, ran = sim_api.execute(compiled)
                found = [*found, *ran]
        internal = [d for d in found if d.code == "E-internal"]
        if internal:
            return f"{stage}: E-internal: {internal[0].message}"
        stage = "render"
        sim_api.render(found, sim_api.sources(mutant.source, text, None, found))
        return None
    except _Timeout:
        return f"{stage}: no answer within {limit:g} s of CPU time"
    except Exception as error:
        last = traceback.extract_tb(error.__traceback__)[-1]
        return f"{stage}: {type(error).__name__}: {error} at {last.filename}:{last.lineno}"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _check_batch(batch: list[Mutant]) -> list[tuple[Mutant, str]]:
    out = []
    for mutant in batch:
        problem = check_mutant(mutant)
        if problem is not None:
            out.append((mutant, problem))
    return out


def run_mutants(items: list[Mutant], workers: int = 2) -> list[tuple[Mutant, str]]:
    """Every failure among `items`, checked in `workers` processes."""
    if workers <= 1:
        return _check_batch(items)
    batches = [items[i :: workers * 4] for i in range(workers * 4)]
    context = multiprocessing.get_context("fork")
    with context.Pool(workers, maxtasksperchild=1) as pool:
        results = pool.map(_check_batch, batches, chunksize=1)
    return [failure for batch in results for failure in batch]


def save(mutant: Mutant, folder: Path) -> Path:
    """Write `mutant`'s bytes to `folder` under a name that says where it came from."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{Path(mutant.source).stem}-{mutant.seed}.sq"
    path.write_bytes(mutant.data)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--front", type=int, default=2000)
    parser.add_argument("--sim", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--save", type=Path, help="write failing mutants to this folder")
    args = parser.parse_args(argv)
    failures = []
    for count, simulate in ((args.front, False), (args.sim, True)):
        start = time.monotonic()
        found = run_mutants(mutants(count, args.seed, simulate), args.workers)
        took = time.monotonic() - start
        kind = "simulator" if simulate else "front-end"
        print(f"{count} {kind} mutants: {len(found)} failures in {took:.1f} s")
        failures += found
    for mutant, problem in failures:
        where = save(mutant, args.save) if args.save else mutant.source
        print(f"{where} {'+'.join(mutant.operators)} seed {mutant.seed}: {problem}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
