"""A differential mutation search: valid programs with a few constants changed, run in serq
and in the reference.

The programs are every valid program the project has (examples/, tests/corpus/valid and
valid_main, tests/sim/programs, tests/oracle/main_programs, bench/shapes) and every
complete program of the spec (a `fn main() { … }` in /work/shared/spec/*.txt, or
`$SERQ_SPEC_DIR`, extracted to the scratch folder, never into the repository). A mutant
replaces one to three of a program's constants by a value of the domain the grammar
admits: 0, -1, -0, 0.5, 1e-9, 1e6, inf, -inf, 0/0, or a near one (x/2, 2x, x+1). What it
replaces is a number, or a whole small expression: a `budget`, `cost`, `chunk`, `cap` or
`block`, a `let` or a `set`, one term of a sum, an argument of a statement or a call (a
run's work, a hold's units, a reserve, a cache, a rate, a think time), or the run's
horizon or warm-up (given as run settings to both sides).

Every program runs at a horizon short enough for both sides to finish in seconds: the
largest of 3, 10, 30, 100, 300 (and its own) at which serq's run of the unmutated program
takes at most `EVENT_LIMIT` events, a count that does not depend on the machine.

Each mutant runs in serq on the compiled event path, on the interpreter
(`codegen=False`) and on the compiled path stepping every step-engine iteration
(`fast_forward=False`), each under a time limit, and in pyserq (0.1.2, or 0.1.4 for a
`fn main` program) in a child process. Verdicts, worst first:

- paths-differ: two of serq's paths part (reports or diagnostics): always serq's bug;
- serq-crash, serq-internal: a Python exception, or an `E-internal` diagnostic;
- serq-timeout: serq ran past its limit (a time-out of both sides is `timeout`);
- serq-error, reference-error, both-error: who refused or stopped the run;
- differ / same: a deterministic program's whole reports (differential.outcome, full);
- ran-both: a program with draws, which both ran; with `--seeds N` it is compared in
  distribution instead (every mean over N seeds a side within 5 standard errors:
  same-stat / differ-stat).

A mutant of a program whose unmutated run already differs from the reference is tallied
with `(source differs)`. A mutant whose run on the compiled path takes more than `SLOW`
times the reference's CPU time (its compile and run) and at least `SLOW_FLOOR` seconds
is listed at the end as slow (`--times FILE` keeps every mutant's CPU times).

    PYTHONPATH=. python tests/oracle/mutants.py --count 500 --seed 1 --out /tmp/mutants
    PYTHONPATH=. python tests/oracle/mutants.py --random --seeds 8 ...   (draws, in distribution)
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import differential  # noqa: E402

SPEC_DIR = Path(os.environ.get("SERQ_SPEC_DIR", "/work/shared/spec"))
# the folders of valid programs, relative to the repository
FOLDERS = (
    "examples",
    "tests/corpus/valid",
    "tests/corpus/valid_main",
    "tests/sim/programs",
    "tests/oracle/main_programs",
    "bench/shapes",
)
HORIZONS = (3.0, 10.0, 30.0, 100.0, 300.0)
EVENT_LIMIT = 20_000  # events of the unmutated program at the horizon its mutants run to
SERQ_LIMIT = 15.0  # seconds of CPU time each serq path may take on a mutant
REFERENCE_LIMIT = 20.0  # seconds the reference may take
SLOW = 10.0  # a mutant is slow past this ratio of serq's CPU time to the reference's
SLOW_FLOOR = 0.5  # ... and this many CPU seconds of serq's
MAIN_HORIZON = re.compile(r"^// horizon: (\S+)\s*$", re.M)
# draws and random arrivals: such a program's numbers are not compared exactly
RANDOM = re.compile(
    r"~(?:exp|uniform|erlang|h2|bernoulli)\b|\bpoisson\s*\(|\bbranch\s+with\b"
    r'|\btrace\s+"[^"]*"\s*;'
)

# ---------------------------------------------------------------- the programs


@dataclass(frozen=True)
class Source:
    """A valid program: its name (repository-relative, or `spec/...`), its file in the
    scratch tree (beside the files it uses), its dialect and whether it draws."""

    name: str
    path: Path
    main: bool
    random: bool


def spec_programs(spec_dir: Path = SPEC_DIR) -> list[tuple[str, str]]:
    """Every complete program of the spec: (name, text) of each `fn main() { … }` with its
    braces balanced, and its horizon from a `--horizon H` on the lines after it."""
    out = []
    for txt in sorted(spec_dir.glob("*.txt")):
        text = txt.read_text(encoding="utf-8")
        for k, m in enumerate(re.finditer(r"fn main\(\)\s*\{", text)):
            depth, end = 0, None
            for i in range(m.end() - 1, len(text)):
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                if depth == 0:
                    end = i + 1
                    break
            if end is None:
                continue
            after = re.search(r"--horizon (\S+)", text[end : end + 400])
            head = f"// horizon: {after.group(1)}\n" if after else ""
            out.append((f"spec/{txt.stem}_{k}.sq", head + text[m.start() : end] + "\n"))
    return out


def sources(scratch: Path) -> list[Source]:
    """Copy every folder of valid programs into `scratch` (so that `use` and traces find
    their files) with the spec's programs, and list the programs."""
    tree = scratch / "tree"
    out = []
    for folder in FOLDERS:
        if not (tree / folder).exists():
            shutil.copytree(ROOT / folder, tree / folder)
        for p in sorted((tree / folder).rglob("*.sq")):
            if p.parent.name == "lib" or p.name.startswith("_mutant"):
                continue
            out.append(p)
    (tree / "spec").mkdir(parents=True, exist_ok=True)
    for name, text in spec_programs():
        (tree / name).write_text(text, encoding="utf-8")
        out.append(tree / name)
    found = []
    for p in out:
        text = p.read_text(encoding="utf-8")
        main = re.search(r"^\s*fn main\(\)", text, re.M) is not None
        found.append(Source(str(p.relative_to(tree)), p, main, RANDOM.search(text) is not None))
    return found


# ---------------------------------------------------------------- mutations

DOMAIN = ("0", "(-1)", "(-0)", "0.5", "1e-9", "1e6", "inf", "(-inf)", "(0/0)")
_NUMBER = re.compile(r"(?<![A-Za-z_0-9.])(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?![A-Za-z_0-9.])")
_SKIP = re.compile(r'//[^\n]*|/\*.*?\*/|"[^"\n]*"', re.S)
_RUN_SETTING = re.compile(r"\b(?:horizon|warmup|seed)\s+[^;{}]*;")
# a slot `KEYWORD EXPR ;`, `let NAME = EXPR ;`, `set NAME = EXPR ;`
_SLOT = re.compile(r"\b(?:budget|cost|chunk|cap|block)\s+(?!by\b)|\b(?:let|set)\s+\w+\s*=\s*")
# an argument list after a word: `run s (`, `hold m (`, `cache (`, `~exp(`, `min(` ...
# the calls whose bare-name arguments are pools or stages, not values
OBSERVABLES = frozenset(
    "cost budget_left used free cachedin holders queued queue busy work price est_lambda"
    " est_rho est_wait blocksize".split()
)
_ARGS = re.compile(r"[A-Za-z_][\w.]*\]?\s*\(")


def _blanked(text: str) -> str:
    """`text` with its comments, strings and run horizon/warm-up blanked (same length)."""
    out = _SKIP.sub(lambda m: " " * len(m.group()), text)
    return _RUN_SETTING.sub(lambda m: " " * len(m.group()), out)


def _close(text: str, start: int, stops: str) -> int | None:
    """The end of the expression from `start`: the first of `stops` at depth 0."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                return i if c in stops else None
            depth -= 1
        elif depth == 0 and c in stops:
            return i
        elif c == ";" and depth == 0:
            return None
    return None


def expressions(text: str) -> list[tuple[int, int]]:
    """The spans of the whole small expressions a mutant may replace (module docstring)."""
    blank = _blanked(text)
    spans = []
    for m in _SLOT.finditer(blank):
        end = _close(blank, m.end(), ";")
        if end is not None and end > m.end():
            spans.append((m.end(), end))
    for m in _ARGS.finditer(blank):
        word = m.group().rstrip("( \t\n")
        if word in ("branch", "by", "fn", "def") or blank[m.start() - 4 : m.start()] == "def ":
            continue
        start = m.end()
        while True:
            end = _close(blank, start, ",)")
            if end is None:
                break
            arg = blank[start:end]
            named = word in OBSERVABLES and re.fullmatch(
                r"\s*[A-Za-z_][\w.]*\s*(\[[^]]*\])?\s*", arg
            )
            if (
                arg.strip()
                and not named
                and "="
                not in arg.replace("==", "").replace("<=", "").replace(">=", "").replace("!=", "")
            ):
                spans.append((start, end))
            if blank[end] == ")":
                break
            start = end + 1
    for a, b in list(spans):  # the terms of a sum
        terms, depth, last = [], 0, a
        for i in range(a, b):
            c = blank[i]
            depth += c in "([" and 1 or (c in ")]" and -1) or 0
            if depth == 0 and c == "+" and i > a and blank[i - 1] not in "eE":
                terms.append((last, i))
                last = i + 1
        if terms:
            terms.append((last, b))
            spans += [t for t in terms if blank[t[0] : t[1]].strip()]
    return sorted(set(spans))


def numbers(text: str) -> list[tuple[int, int]]:
    """The spans of the numbers a mutant may replace (not in comments, strings, the run's
    horizon and warm-up, or an array's size or index)."""
    blank = _blanked(text)
    out = []
    for m in _NUMBER.finditer(blank):
        before = blank[: m.start()].rstrip()[-1:]
        after = blank[m.end() :].lstrip()[:1]
        if before == "[" and after == "]":
            continue
        out.append(m.span())
    return out


def _fmt(x: float) -> str:
    if math.isnan(x):
        return "(0/0)"
    if math.isinf(x):
        return "inf" if x > 0 else "(-inf)"
    s = repr(float(x))
    s = s[:-2] if s.endswith(".0") and "e" not in s else s
    return f"({s})" if s.startswith("-") else s


def replacement(rng: random.Random, old: str) -> str:
    """A value for the expression `old`: one of the domain's, or a near one."""
    if rng.random() < 0.6:
        return rng.choice(DOMAIN)
    try:
        x = float(old)
    except ValueError:
        e = old.strip()
        return rng.choice((f"({e}) / 2", f"2 * ({e})", f"({e}) + 1"))
    return _fmt(rng.choice((x / 2, 2 * x, x + 1)))


SETTINGS_DOMAIN = (0.0, -1.0, -0.0, 0.5, 1e-9, 1e6, math.inf, -math.inf, math.nan)


@dataclass
class Mutant:
    """A program with its mutations (`applied`, as `what: old -> new`) and the run
    settings both sides get."""

    source: Source
    text: str
    settings: dict[str, Any]
    base: dict[str, Any]
    applied: list[str] = field(default_factory=list)


def mutate(rng: random.Random, source: Source, text: str, settings: dict[str, Any]) -> Mutant:
    """One to three mutations of `text` (and perhaps its run settings)."""
    mutant = Mutant(source, text, dict(settings), settings)
    for _ in range(rng.choice((1, 1, 2, 3))):
        kind = rng.random()
        if kind < 0.08 and "horizon" in mutant.settings:
            name = "warmup" if rng.random() < 0.4 and "warmup" in mutant.settings else "horizon"
            old = mutant.settings[name]
            new = rng.choice(SETTINGS_DOMAIN + (old / 2, 2 * old, old + 1))
            mutant.settings[name] = new
            mutant.applied.append(f"{name}: {old!r} -> {new!r}")
            continue
        spans = numbers(mutant.text) if kind < 0.55 else expressions(mutant.text)
        if not spans:
            continue
        a, b = rng.choice(spans)
        old = mutant.text[a:b]
        new = replacement(rng, old)
        if rng.random() < 0.1 and kind >= 0.55:
            new = "0"  # a term dropped
        line = mutant.text.count("\n", 0, a) + 1
        mutant.text = mutant.text[:a] + new + mutant.text[b:]
        mutant.applied.append(f"line {line}: {' '.join(old.split())[:60]} -> {new[:60]}")
    return mutant


# ---------------------------------------------------------------- running


class _Timeout(BaseException):
    """A run past its limit (a BaseException, so no `except Exception` in serq eats it)."""


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def _timed(limit: float, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """`fn(*args, **kwargs)`, stopped after `limit` seconds of this process's CPU time (not
    of the wall clock: a machine busy with other work must not turn a slow mutant into a
    time-out)."""
    old = signal.signal(signal.SIGPROF, _alarm)
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        return fn(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)


def _crash(error: BaseException) -> str:
    last = traceback.extract_tb(error.__traceback__)[-1]
    where = f"{Path(last.filename).name}:{last.lineno}"
    return f"{type(error).__name__}: {str(error)[:200]} at {where}"


# serq's paths, each of which must give the same report and diagnostics exactly: the
# compiled event path (the default), the interpreter, and the compiled path stepping every
# step-engine iteration (no fast-forward, alone or of several engines together)
PATHS = (("compiled", True, True), ("interpreter", False, True), ("stepped", True, False))
# the CPU seconds of the last mutant's run on each path, and the reference's
CPU: dict[str, float] = {}


def _whole(report: Any, forward: bool) -> dict[str, Any]:
    """Everything `report` says, to the bit: its JSON (without the count of skipped
    iterations when not fast-forwarded, the one field that says how it ran), every sample
    of every observation and every gauge's change points (floats by `repr`)."""
    whole = json.loads(report.json())
    if not forward:
        whole.pop("skipped", None)
    samples = {
        name: [repr(list(getattr(o, a))) for a in ("times", "sessions", "turns", "samples")]
        for name, o in report.observes.items()
    }
    gauges = {
        name: [repr(list(g.times)), repr(list(g.values))] for name, g in report.gauges.items()
    }
    return {"report": whole, "samples": samples, "gauges": gauges}


def serq_side(path: str, full: bool, settings: dict[str, Any], limit: float = SERQ_LIMIT):
    """serq's verdict on `path` (its run on every path of PATHS): ("ok", outcome, events)
    or (kind, message, None) with kind one of paths-differ, serq-crash, serq-internal,
    serq-timeout, serq-error."""
    from serq.sim.api import compile_program, execute

    text = Path(path).read_text(encoding="utf-8")
    try:
        compiled, diagnostics = _timed(limit, compile_program, text, path, **settings)
    except _Timeout:
        return "serq-timeout", "compile", None
    except Exception as error:  # noqa: BLE001 - a crash is what we look for
        return "serq-crash", "compile: " + _crash(error), None
    if compiled is None:
        internal = [d for d in diagnostics if d.code == "E-internal"]
        if internal:
            return "serq-internal", "compile: " + internal[0].message, None
        return "serq-error", "compile: " + differential._first_error(diagnostics), None
    runs = []
    for name, codegen, forward in PATHS:
        started = time.process_time()
        try:
            report, diagnostics = _timed(
                limit, execute, compiled, codegen=codegen, fast_forward=forward
            )
        except _Timeout:
            return "serq-timeout", f"{name} path", None
        except Exception as error:  # noqa: BLE001
            return "serq-crash", f"{name} path: {_crash(error)}", None
        CPU[name] = time.process_time() - started
        said = [(d.code, d.span, d.message, tuple(d.notes)) for d in diagnostics]
        runs.append((report, None if report is None else _whole(report, forward), said))
    (report, a, da) = runs[0]
    for (name, _, forward), (_, b, db) in zip(PATHS[1:], runs[1:], strict=True):
        if da != db:
            return "paths-differ", f"diagnostics: compiled {da[:1]} | {name} {db[:1]}", None
        if a is not None and not forward:
            a = {**a, "report": {k: v for k, v in a["report"].items() if k != "skipped"}}
        if a != b:
            return "paths-differ", f"{name}: " + differential._json_difference(a, b, ""), None
    internal = [d for d in da if d[0] == "E-internal"]
    if internal:
        return "serq-internal", internal[0][2], None
    if report is None:
        errors = [d for d in da if d[0].startswith("E")] or da
        return "serq-error", f"{errors[0][0]}: {errors[0][2]}" if errors else "?", None
    return (
        "ok",
        json.loads(json.dumps(differential.outcome(report, full))),
        a["report"].get("events"),
    )


def judge(source: Source, path: str, settings: dict[str, Any], seeds: int = 0) -> tuple[str, str]:
    """(verdict, detail) of the program at `path` (module docstring); a program with
    draws that both sides ran is compared in distribution over `seeds` seeds a side
    when `seeds` is above 1 (differential.compare_statistics: "same-stat",
    "differ-stat")."""
    full = True
    CPU.clear()
    kind, mine, _ = serq_side(path, full, settings)
    if kind in ("paths-differ", "serq-crash", "serq-internal"):
        return kind, mine
    theirs = differential.reference(path, REFERENCE_LIMIT, source.main, full, **settings)
    if "cpu" in theirs:
        CPU["reference"] = theirs["cpu"]
    error = theirs.get("error")
    if kind == "serq-timeout":
        return ("timeout" if error == "timeout" else "serq-timeout"), mine
    if error == "timeout":
        return "reference-timeout", "serq: " + (mine if kind != "ok" else "ran")
    if error is not None:
        return ("both-error", f"{mine} | {error}") if kind != "ok" else ("reference-error", error)
    if kind != "ok":
        return "serq-error", mine
    if source.random:
        if seeds < 2:
            return "ran-both", ""
        varied = {k: v for k, v in settings.items() if k != "seed"}
        try:
            verdict, detail = _timed(
                SERQ_LIMIT * seeds,
                differential.compare_statistics,
                path,
                seeds,
                REFERENCE_LIMIT * seeds,
                source.main,
                **varied,
            )
        except _Timeout:
            return "serq-timeout", f"{seeds} seeds"
        return {"same": "same-stat", "differ": "differ-stat"}.get(verdict, verdict), detail
    found = differential.report_differences(mine, theirs["ok"])
    if not found:
        return "same", ""
    return "differ", "; ".join(found[:3])


def base_settings(source: Source, cache: dict[str, Any]) -> dict[str, Any] | None:
    """The run settings of `source`'s mutants: the horizon (module docstring), the warm-up
    scaled with it, seed 1 for a `fn main` program; None when serq cannot run it at all.
    Kept in `cache` by the program's text."""
    text = source.path.read_text(encoding="utf-8")
    key = source.name + ":" + hashlib.sha1(text.encode()).hexdigest()[:12]
    if key in cache:
        return cache[key]
    from serq.sim.api import compile_program, execute

    given: dict[str, Any] = {}
    if source.main:
        found = MAIN_HORIZON.search(text)
        given = {"horizon": float(found.group(1)) if found else 400.0, "seed": 1}
    compiled, _ = compile_program(text, str(source.path), **given)
    chosen = None
    if compiled is not None and compiled.program.horizon is not None:
        h0 = float(compiled.program.horizon)
        w0 = float(compiled.program.warmup or 0.0)
        for h in [h for h in HORIZONS if h < h0] + [h0]:
            settings = {**given, "horizon": h, "warmup": w0 * h / h0 if h < h0 else w0}
            try:
                attempt, _ = compile_program(text, str(source.path), **settings)
                report, _ = _timed(30.0, execute, attempt) if attempt else (None, None)
            except (_Timeout, Exception):  # noqa: BLE001
                break
            if report is None:
                continue
            events = json.loads(report.json()).get("events", 0)
            if chosen is None or events <= EVENT_LIMIT:
                chosen = settings
            if events > EVENT_LIMIT:
                break
    cache[key] = chosen
    return chosen


def draw(count: int, seed: int, scratch: Path, cache: dict[str, Any], only: str | None = None):
    """`count` mutants (the same for the same `seed` and programs), in order."""
    have_014 = differential.have_014()
    found = [
        s
        for s in sources(scratch)
        if (only is None or re.search(only, s.name)) and (have_014 or not s.main)
    ]
    for i in range(count):
        rng = random.Random(seed * 1_000_003 + i)
        source = rng.choice(found)
        settings = base_settings(source, cache)
        if settings is None:
            continue
        text = source.path.read_text(encoding="utf-8")
        yield i, mutate(rng, source, text, settings)


def run_mutant(i: int, mutant: Mutant, seeds: int = 0) -> tuple[str, str]:
    """Write `mutant` beside its program, judge it (`seeds`: see `judge`), remove it."""
    path = mutant.source.path.parent / f"_mutant{os.getpid()}_{i}.sq"
    path.write_text(mutant.text, encoding="utf-8")
    try:
        return judge(mutant.source, str(path), mutant.settings, seeds)
    finally:
        path.unlink()


def save(out: Path, verdict: str, i: int, mutant: Mutant, detail: str) -> Path:
    """Write a mutant that did not simply agree to OUT/<verdict>/, headed by its origin."""
    folder = out / verdict.replace(" ", "_").replace("(", "").replace(")", "")
    folder.mkdir(parents=True, exist_ok=True)
    name = Path(mutant.source.name).stem
    path = folder / f"m{i}_{name}.sq"
    head = [
        f"// mutant {i} of {mutant.source.name}",
        *(f"//   {a}" for a in mutant.applied),
        f"// settings: {json.dumps({k: repr(v) for k, v in mutant.settings.items()})}",
        f"// {verdict}: {detail[:300]}",
    ]
    path.write_text("\n".join(head) + "\n" + mutant.text, encoding="utf-8")
    for extra in mutant.source.path.parent.glob("*.csv"):  # its traces, beside it
        if not (folder / extra.name).exists():
            shutil.copy(extra, folder / extra.name)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--count", type=int, default=200, help="how many mutants to run, from --start on"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--start", type=int, default=0, help="skip the first mutants (m0 ... m<start - 1>)"
    )
    parser.add_argument("--out", type=Path, default=None, help="write mutants that differ")
    parser.add_argument("--scratch", type=Path, default=None, help="keep the tree and cache")
    parser.add_argument("--only", default=None, help="programs whose name matches a regex")
    parser.add_argument(
        "--seeds", type=int, default=0, help="compare a program with draws over this many seeds"
    )
    parser.add_argument("--random", action="store_true", help="only the programs with draws")
    parser.add_argument("--verbose", action="store_true", help="a line for every mutant")
    parser.add_argument("--times", type=Path, default=None, help="CPU times, a JSON line each")
    args = parser.parse_args(argv)
    if not differential.have_014():  # the draw then differs from a run with it
        print(f"{differential.missing_014()}: the `fn main` programs are left out", file=sys.stderr)
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="serq-mutants-"))
    scratch.mkdir(parents=True, exist_ok=True)
    cache_file = scratch / "settings.json"
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    baseline: dict[str, tuple[str, str]] = {}
    tally: collections.Counter[str] = collections.Counter()
    by_folder: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    started = time.monotonic()
    slow: list[str] = []
    times = args.times.open("a", encoding="utf-8") if args.times else None
    for i, mutant in draw(args.start + args.count, args.seed, scratch, cache, args.only):
        if i < args.start:
            continue
        name = mutant.source.name
        if name not in baseline:
            baseline[name] = judge(mutant.source, str(mutant.source.path), mutant.base, args.seeds)
            cache_file.write_text(json.dumps(cache))
        if args.random and not mutant.source.random:
            continue
        verdict, detail = run_mutant(i, mutant, args.seeds)
        if verdict in ("differ", "differ-stat") and baseline[name][0] not in ("same", "same-stat"):
            verdict += " (source differs)"
        tally[verdict] += 1
        cpu = {k: round(v, 4) for k, v in CPU.items()}
        if times is not None:
            times.write(json.dumps({"i": i, "name": name, "verdict": verdict, "cpu": cpu}) + "\n")
        mine, theirs = cpu.get("compiled", 0.0), cpu.get("reference")
        if theirs is not None and mine >= SLOW_FLOOR and mine > SLOW * theirs:
            slow.append(f"m{i} {name}: {mine:.2f} s against {theirs:.3f} s: {mutant.applied}")
        by_folder[
            name.split("/")[0] if not name.startswith("tests") else "/".join(name.split("/")[:2])
        ][verdict] += 1
        if args.verbose or verdict not in ("same", "ran-both", "same-stat"):
            where = save(args.out, verdict, i, mutant, detail) if args.out else name
            print(
                f"m{i} {where}: {verdict}: {' | '.join(mutant.applied)}: {detail[:240]}", flush=True
            )
    print(f"{sum(tally.values())} mutants in {time.monotonic() - started:.0f} s: {dict(tally)}")
    for folder, counts in sorted(by_folder.items()):
        print(f"  {folder}: {sum(counts.values())} {dict(counts)}")
    for line in slow:
        print(f"  slow {line}")
    differing = {k: v for k, v in baseline.items() if v[0] not in ("same", "ran-both", "same-stat")}
    for name, (verdict, detail) in sorted(differing.items()):
        print(f"  unmutated {name}: {verdict}: {detail[:200]}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
