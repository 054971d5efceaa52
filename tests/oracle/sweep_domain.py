"""Sweep the parameters of the programs users run over the whole domain the grammar admits,
on serq's three execution paths, in `serq sweep`, and in the reference.

The programs: examples/ (and so lib/vllm.sq through its users), tests/oracle/main_programs,
bench/shapes, bench/wide, tests/corpus/valid and valid_main (the spec's constructs), and
every complete `fn main` program of the spec (mutants.spec_programs), copied into a scratch
tree beside the files they use. A program's parameters are what a user sweeps: every
`let NAME = …` (`--set NAME=`), every `args.number("NAME", d)` (`--set NAME=`), every `def
NAME() = …` (`--def NAME=`), and, lifted into a `let` of their own (as a user would before
sweeping), the literal numbers of the positions users size: an arrival rate or population,
a fifo or ps capacity, a pool's cap and block, an engine's budget, chunk and cost.

Each parameter takes every value of `DOMAIN` (0, -0, negatives, 1e-9, loads just below, at
and past saturation, 1e9, 1e300, inf, -inf, NaN) and a few near its own (x/2, 2x, 1.25x,
x+1, x-1). Each (program, parameter, value) is compiled once and run, at a horizon short
enough for a run to take well under a second (mutants.base_settings with `EVENT_LIMIT`),
on the three paths: the generated code (with the straight loop where it takes the
program), the generated code with the straight loop off, and the interpreter
(`codegen=False`). Verdicts, worst first:

- paths-differ: the three reports (every field of Report.json(), every sample, time,
  session and turn of every observation) or their diagnostics are not identical;
- serq-crash / serq-internal: a Python exception or an E-internal diagnostic;
- no-position: an error diagnostic without a position in the program (offset 0 of line 1);
- serq-timeout: a path ran past `SERQ_LIMIT` seconds;
- sweep-differs: `serq sweep` over the parameter's values (in process, one job) refused
  the grid where every value compiles alone, or ran it where one does not; or, over the
  values that compile, gave a row that is not the single run's (each observation's and
  gauge's mean, the error, the warning);
- then against the reference (0.1.2, or 0.1.4 at PYSERQ_014_PATH for `fn main`), with
  the same `sets=`/`defs=`: same / differ (deterministic programs, the whole reports,
  differential.report_differences), ran-both (a program with draws: only that both
  ran, and that the report fields that are NaN or null are the same ones: `nan-differs`
  otherwise), serq-error (serq refused or stopped, the reference ran), reference-error,
  both-error, reference-timeout.

    export PYSERQ_014_PATH=/work/main/.cache/pyserq-0.1.4  # else no `fn main` program runs
    PYTHONPATH=. python tests/oracle/sweep_domain.py --out /tmp/sweep.jsonl
    PYTHONPATH=. python tests/oracle/sweep_domain.py --only 'examples/mm1' --verbose
    PYTHONPATH=. python tests/oracle/sweep_domain.py --reference none --no-sweep  (paths only)

The full sweep is a script: about 16 minutes for the classic programs (`--dialect classic
--reference deterministic`) and 5 for the `fn main` ones (`--dialect main`, with
PYSERQ_014_PATH) on one core; tests/oracle/test_sweep_domain.py keeps a cheap slice of it
in the suite. tests/sim/NOTES.md §28 has the tallies and the classes.
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import differential  # noqa: E402
import mutants  # noqa: E402

FOLDERS = (
    "examples",
    "tests/oracle/main_programs",
    "bench/shapes",
    "bench/wide",
    "tests/corpus/valid",
    "tests/corpus/valid_main",
)
DOMAIN = (
    "0", "-0", "-1", "-1e300", "1e-9", "0.5", "0.99", "1", "1.01", "3",
    "1e9", "1e300", "inf", "-inf", "0/0",
)  # fmt: skip
EVENT_LIMIT = 4_000  # events of the unswept program at the horizon the sweep runs to
SERQ_LIMIT = 4.0  # seconds a serq path may take on one value
REFERENCE_LIMIT = 6.0
REFUSED_LIMIT = 2.0  # the reference's limit on a value serq refuses (it often runs on)
# `--every-way`: two more serq runs of the generated code, each compared with the others
# (the report without `skipped`, every sample, every diagnostic)
EVERY_WAY = False
MORE_WAYS = (
    ("no-fast-forward", {"fast_forward": False}),
    ("invariants", {"check_invariants": True}),
)
# the positions users size, each holding a literal number: lifted into a `let`
_LIFTABLE = re.compile(
    r"\b(?:poisson|renewal|closed|batch|fifo|ps)\s*\(\s*(?=[\d.])"
    r"|\b(?:cap|block|budget|chunk|cost)\s+(?=[\d.])"
)
_NUMBER_AT = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?(?=\s*[;)])")
_LET = re.compile(r"\blet\s+(\w+)\s*=\s*")
_ARG = re.compile(r'\bargs\.number\(\s*"(\w+)"\s*,\s*([^)]*)\)')
_DEF0 = re.compile(r"\bdef\s+(\w+)\s*\(\s*\)\s*=\s*")
LIFTED_MAX = 4  # lifted literals per program


@dataclass(frozen=True)
class Parameter:
    """One thing a user sweeps in a program: `kind` "let", "arg" (`args.number`) or "def",
    its `name` as the override gives it, its own value `base`, and for a lifted literal
    the program `text` with the `let` written in (None: the program as it is)."""

    kind: str
    name: str
    base: str
    text: str | None = None


def parameters(text: str, main: bool) -> list[Parameter]:
    """The parameters of the program `text` (module docstring), each name once."""
    blank = mutants._blanked(text)
    found: dict[str, Parameter] = {}
    for m in _LET.finditer(blank):
        end = mutants._close(blank, m.end(), ";")
        if end is None:
            continue
        expr = text[m.end() : end].strip()
        arg = _ARG.search(expr)
        if arg:
            found.setdefault(arg.group(1), Parameter("arg", arg.group(1), arg.group(2).strip()))
        else:
            found.setdefault(m.group(1), Parameter("let", m.group(1), expr))
    for m in _DEF0.finditer(blank):
        end = mutants._close(blank, m.end(), ";")
        if end is not None:
            found.setdefault("def " + m.group(1), Parameter("def", m.group(1), text[m.end() : end]))
    return list(found.values()) + lifted(text, blank, main)


def lifted(text: str, blank: str, main: bool) -> list[Parameter]:
    """The literal numbers of the sized positions, each lifted into `let sweep_K = …;`
    (after `fn main() {` in a `fn main` program, else at the top), one kind of position
    first, at most `LIFTED_MAX`."""
    spots = []
    for m in _LIFTABLE.finditer(blank):
        number = _NUMBER_AT.match(blank, m.end())
        if number:
            spots.append((m.group().split("(")[0].split()[0], number.span()))
    firsts = {kind: span for kind, span in reversed(spots)}  # the first of each kind
    chosen = list(firsts.items())[::-1]
    chosen += [s for s in spots if s not in chosen]
    out = []
    for kind, (a, b) in sorted(chosen[:LIFTED_MAX], key=lambda s: s[1], reverse=True):
        name = f"sweep_{kind}{len(out)}"
        body = text[:a] + name + text[b:]
        head = re.search(r"fn main\(\)\s*\{", blank) if main else None
        at = head.end() if head and head.end() <= a else 0
        declared = f"\n  let {name} = {text[a:b]};\n" if head else f"let {name} = {text[a:b]};\n"
        out.append(Parameter("let", name, text[a:b], body[:at] + declared + body[at:]))
    return out


def written(text: str, name: str, value: str) -> str:
    """`text` with `let NAME`'s expression replaced by `value`: how the reference of the
    `fn main` dialect gets a `let`'s value (0.1.4 takes `sets=` for `args.number` only)."""
    blank = mutants._blanked(text)
    m = re.search(rf"\blet\s+{re.escape(name)}\s*=\s*", blank)
    end = mutants._close(blank, m.end(), ";") if m else None
    if m is None or end is None:
        return text
    return text[: m.end()] + f"({value})" + text[end:]


def values(base: str) -> list[str]:
    """The values a parameter whose own value is `base` takes: `base` first, then the
    domain, then the values near it."""
    out = [base, *DOMAIN]
    try:
        x = float(base)
    except ValueError:
        x = None
    if x is not None and math.isfinite(x):
        for y in (x / 2, 2 * x, 1.25 * x, x + 1, x - 1):
            out.append(f"{y:.12g}")
    return list(dict.fromkeys(out))


# ---------------------------------------------------------------- one value, every path


@dataclass
class Outcome:
    """What one (program, parameter, value) gave: the `verdict`, a `detail`, and serq's
    report (`means`: each observation's and gauge's mean, `error`, `warning`) for the
    sweep's check."""

    verdict: str
    detail: str = ""
    means: dict[str, float] = field(default_factory=dict)
    error: bool = False
    warning: bool = False
    counts: dict[str, Any] = field(default_factory=dict)
    compiled: bool = True  # False: serq refused the value at the link (no run)


def _said(diagnostics: list[Any]) -> list[tuple]:
    return [(d.code, d.span, d.message, tuple(d.notes), d.help) for d in diagnostics]


def _samples(report: Any) -> dict[str, Any]:
    return {
        name: [list(o.sessions), list(map(repr, o.samples)), list(map(repr, o.times)), o.turns]
        for name in sorted(report.observes)
        for o in [report.observe(name)]
    }


def _positioned(diagnostics: list[Any]) -> str | None:
    """The first error diagnostic without a position in the program, as text."""
    from serq.diagnostics import Severity

    for d in diagnostics:
        if d.severity >= Severity.ERROR and d.span.start == 0 and d.span.end == 0:
            return f"{d.code}: {d.message[:200]}"
    return None


def serq_paths(text: str, path: str, overrides: dict[str, Any], settings: dict[str, Any]):
    """Compile once and run on the three paths: (verdict, detail, report-or-None,
    diagnostics) with verdict "ok", "serq-error" or a failure of the module docstring."""
    from serq.diagnostics import Severity
    from serq.sim import straight
    from serq.sim.api import compile_program, execute

    try:
        compiled, diagnostics = mutants._timed(
            SERQ_LIMIT, compile_program, text, path, **overrides, **settings
        )
    except mutants._Timeout:
        return "serq-timeout", "compile", None, []
    except Exception as error:  # noqa: BLE001 - a crash is what we look for
        return "serq-crash", "compile: " + mutants._crash(error), None, []
    if compiled is None:
        if any(d.code == "E-internal" for d in diagnostics):
            return "serq-internal", "compile: " + differential._first_error(diagnostics), None, []
        missing = _positioned(diagnostics)
        if missing:
            return "no-position", "compile: " + missing, None, diagnostics
        return "serq-error", "compile: " + differential._first_error(diagnostics), None, diagnostics
    runs = []
    ways = [
        ("generated", True, True, {}),
        ("no-straight", True, False, {}),
        ("interpreter", False, True, {}),
    ]
    if EVERY_WAY:
        ways += [(name, True, True, options) for name, options in MORE_WAYS]
    for name, codegen, straight_on, options in ways:
        straight.ENABLED = straight_on
        try:
            report, said = mutants._timed(SERQ_LIMIT, execute, compiled, codegen=codegen, **options)
        except mutants._Timeout:
            return "serq-timeout", name, None, []
        except Exception as error:  # noqa: BLE001
            return "serq-crash", f"{name}: {mutants._crash(error)}", None, []
        finally:
            straight.ENABLED = True
        whole = None
        if report is not None:
            data = json.loads(report.json())
            whole = (differential._unskipped(data) if EVERY_WAY else data, _samples(report))
        runs.append((name, report, whole, said))
    first = runs[0]
    for other in runs[1:]:
        if _said(first[3]) != _said(other[3]):
            return "paths-differ", f"diagnostics: {first[0]} | {other[0]}", None, []
        if first[2] != other[2]:
            where = differential._json_difference(first[2], other[2], "")
            return "paths-differ", f"{first[0]} | {other[0]}: {where}", None, []
    report, said = first[1], first[3]
    if any(d.code == "E-internal" for d in said):
        return "serq-internal", differential._first_error(said), None, []
    if report is None or any(d.severity >= Severity.ERROR for d in said):
        missing = _positioned(said)
        if missing:
            return "no-position", missing, None, said
        return "serq-error", differential._first_error(said), None, said
    return "ok", "", report, said


def _nan_paths(data: Any, where: str = "") -> set[str]:
    """The places in a full outcome whose value is NaN or null."""
    if isinstance(data, dict):
        return {p for k, v in data.items() for p in _nan_paths(v, f"{where}.{k}")}
    if isinstance(data, list):
        if where.startswith(".samples"):
            return set()
        return {p for i, v in enumerate(data) for p in _nan_paths(v, f"{where}[{i}]")}
    if data is None or data == "nan" or (isinstance(data, float) and math.isnan(data)):
        return {where}
    return set()


def judge(
    source: mutants.Source,
    path: str,
    text: str,
    overrides: dict[str, Any],
    settings: dict[str, Any],
    reference: str,
    reference_text: str | None = None,
) -> Outcome:
    """The verdict of one value (module docstring); the reference runs `reference_text`
    without the overrides when it is given (a `let`'s value written in, `written`)."""
    from serq.diagnostics import Severity

    kind, detail, report, said = serq_paths(text, path, overrides, settings)
    if kind not in ("ok", "serq-error"):
        return Outcome(kind, detail)
    out = Outcome(kind, detail, error=report is None, compiled=not detail.startswith("compile:"))
    if report is not None:
        out.means = {n: o.mean for n, o in report.observes.items()}
        out.means.update({"gauge " + n: g.mean for n, g in report.gauges.items()})
        out.warning = any(d.severity == Severity.WARNING for d in said)
        whole = json.loads(report.json())
        out.counts = {k: whole.get(k) for k in ("arrivals", "ended", "events", "end")}
        out.counts["warnings"] = [d.code for d in said if d.severity == Severity.WARNING]
    if reference == "none" or (reference == "deterministic" and source.random):
        out.verdict = "ran" if report is not None else kind
        return out
    limit = REFERENCE_LIMIT if report is not None else REFUSED_LIMIT
    if reference_text is None:
        theirs = differential.reference(path, limit, source.main, True, **overrides, **settings)
    else:
        beside = Path(path).with_name(f"_reference_{Path(path).name}")
        beside.write_text(reference_text, encoding="utf-8")
        try:
            theirs = differential.reference(str(beside), limit, source.main, True, **settings)
        finally:
            beside.unlink()
    error = theirs.get("error")
    if error == "timeout":
        out.verdict, out.detail = "reference-timeout", "serq: " + (detail or "ran")
    elif error is not None:
        if report is None:
            out.verdict, out.detail = "both-error", f"{detail} | {error}"
        else:
            out.verdict, out.detail = "reference-error", error
    elif report is None:
        out.verdict = "serq-error"
    else:
        mine = json.loads(json.dumps(differential.outcome(report, True)))
        if source.random:
            ours, refs = _nan_paths(mine), _nan_paths(theirs["ok"])
            gone = {
                p
                for p in refs ^ ours
                if not any(k in p for k in differential.ONLY_014)
                and not p.startswith(".claims")  # a claim's result is a draw's outcome too
            }
            out.verdict = "nan-differs" if gone else "ran-both"
            out.detail = ", ".join(sorted(gone)[:4])
        else:
            found = differential.report_differences(mine, theirs["ok"])
            out.verdict = "differ" if found else "same"
            out.detail = "; ".join(found[:3])
    return out


# ---------------------------------------------------------------- the sweep command


def sweep_rows(
    text: str, path: str, parameter: Parameter, texts: list[str], settings: dict[str, Any]
) -> list[tuple[bool, bool, dict[str, float]] | None] | str:
    """`serq sweep` over `texts` of `parameter` in this process: each run row as (error,
    warning, means), or the reason the sweep did not start (its plan refused)."""
    from serq import sweeps

    seeds = [settings["seed"]] if "seed" in settings else None
    run = {k: v for k, v in settings.items() if k != "seed"}
    plan, diagnostics, _ = sweeps.plan(text, path, {parameter.name: texts}, seeds=seeds, **run)
    if plan is None:
        return "plan: " + differential._first_error(diagnostics)
    result = sweeps.execute(plan, None, 1)
    rows: list[tuple[bool, bool, dict[str, float]] | None] = []
    for row in result.runs:
        means = {m: row[m] for m in result.observations}
        means.update({"gauge " + g: row[g] for g in result.gauges})
        rows.append((bool(row["error"]), bool(row["warning"]), means))
    return rows


def _same_mean(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return (a is None or math.isnan(a)) and (b is None or math.isnan(b))
    return a == b or (math.isnan(a) and math.isnan(b))


def sweep_check(outcomes: list[Outcome], rows: Any) -> str | None:
    """Where the sweep's rows part from the single runs' outcomes; None when they agree.
    The sweep checks every value before it runs any: it refuses the grid (`rows` is the
    reason) exactly when some value does not compile alone."""
    refused = [k for k, one in enumerate(outcomes) if not one.compiled]
    if isinstance(rows, str):
        if not refused:
            return f"the sweep refused ({rows}) where every value compiles alone"
        return None
    if refused:
        return f"the sweep ran where value {refused[0]} does not compile alone"
    for k, (one, row) in enumerate(zip(outcomes, rows, strict=True)):
        if one.verdict not in ("ok", "serq-error", "ran", "same", "differ", "ran-both",
                               "nan-differs", "reference-error", "both-error",
                               "reference-timeout"):  # fmt: skip
            continue
        error, warning, means = row
        if error != one.error:
            return f"value {k}: sweep error {error}, single run error {one.error}"
        if error:
            continue
        if warning != one.warning:
            return f"value {k}: sweep warning {warning}, single run {one.warning}"
        for name, mean in one.means.items():
            if not _same_mean(means.get(name), mean):
                return f"value {k}: {name} sweep {means.get(name)} | single {mean}"
    return None


# ---------------------------------------------------------------- driving it


def programs(
    scratch: Path, only: str | None, folders: list[str] | None = None
) -> list[mutants.Source]:
    """The programs of the module docstring, copied into `scratch`; with `folders`
    (relative to the repository), those folders' programs alone."""
    mutants.FOLDERS = tuple(folders) if folders else FOLDERS
    if folders:
        return [
            s
            for s in mutants.sources(scratch)
            if any(s.name.startswith(f.rstrip("/") + "/") for f in folders)
            and (only is None or re.search(only, s.name))
            and (differential.have_014() or not s.main)
        ]
    have_014 = (Path(differential.PYSERQ_014) / "pyserq").is_dir()
    return [
        s
        for s in mutants.sources(scratch)
        if (only is None or re.search(only, s.name)) and (have_014 or not s.main)
    ]


def sweep_program(
    source: mutants.Source,
    cache: dict[str, Any],
    reference: str = "all",
    check_sweep: bool = True,
    limit: int | None = None,
) -> Iterator[tuple[Parameter, str, Outcome]]:
    """Every (parameter, value, outcome) of `source`, and a ("sweep", detail) outcome
    after each parameter whose `serq sweep` rows differ from the single runs."""
    settings = mutants.base_settings(source, cache)
    if settings is None:
        return
    text = source.path.read_text(encoding="utf-8")
    for parameter in parameters(text, source.main)[:limit]:
        body = parameter.text or text
        path = source.path
        if parameter.text is not None:
            path = source.path.with_name(f"_sweep_{source.path.stem}_{parameter.name}.sq")
            path.write_text(body, encoding="utf-8")
        try:
            texts = values(parameter.base)
            outcomes = []
            for value in texts:
                key = "defs" if parameter.kind == "def" else "sets"
                overrides = {key: {parameter.name: value}}
                theirs = None
                if source.main and parameter.kind == "let":
                    theirs = written(body, parameter.name, value)
                outcome = judge(source, str(path), body, overrides, settings, reference, theirs)
                outcomes.append(outcome)
                yield parameter, value, outcome
            if check_sweep and parameter.kind != "def":
                kept = [k for k, o in enumerate(outcomes) if o.verdict != "serq-timeout"]
                # every value (the sweep refuses the grid when one does not compile), then
                # the values that compile, whose rows must be the single runs'
                grids = [kept, [k for k in kept if outcomes[k].compiled]]
                try:
                    detail = None
                    for grid in grids[: 1 if len(grids[1]) == len(kept) else 2]:
                        rows = mutants._timed(
                            SERQ_LIMIT * len(grid) + 5,
                            sweep_rows,
                            body,
                            str(path),
                            parameter,
                            [texts[k] for k in grid],
                            settings,
                        )
                        detail = detail or sweep_check([outcomes[k] for k in grid], rows)
                except mutants._Timeout:
                    detail = "sweep timed out"
                except Exception as error:  # noqa: BLE001
                    detail = "sweep crashed: " + mutants._crash(error)
                if detail:
                    yield parameter, "*", Outcome("sweep-differs", detail)
        finally:
            if parameter.text is not None:
                path.unlink()


GOOD = ("same", "ran", "ran-both", "serq-error", "both-error")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=None, help="programs whose name matches a regex")
    parser.add_argument("--out", type=Path, default=None, help="a JSON line per value")
    parser.add_argument("--scratch", type=Path, default=None, help="keep the tree and cache")
    parser.add_argument(
        "--reference",
        choices=("all", "deterministic", "none"),
        default="all",
        help="which programs also run in the reference",
    )
    parser.add_argument("--no-sweep", action="store_true")
    parser.add_argument("--dialect", choices=("all", "classic", "main"), default="all")
    parser.add_argument("--params", type=int, default=None, help="parameters per program")
    parser.add_argument("--verbose", action="store_true", help="a line for every value")
    parser.add_argument(
        "--folder",
        action="append",
        default=None,
        help="sweep this folder's programs (relative to the repository) instead; repeatable",
    )
    parser.add_argument(
        "--every-way",
        action="store_true",
        help="also run each value with fast_forward=False and check_invariants=True",
    )
    args = parser.parse_args(argv)
    global EVERY_WAY
    EVERY_WAY = args.every_way
    scratch = args.scratch or Path(tempfile.mkdtemp(prefix="serq-sweep-"))
    scratch.mkdir(parents=True, exist_ok=True)
    cache_file = scratch / "settings.json"
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    mutants.EVENT_LIMIT = EVENT_LIMIT
    tally: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    log = args.out.open("a", encoding="utf-8") if args.out else None
    started = time.monotonic()
    for source in programs(scratch, args.only, args.folder):
        if args.dialect != "all" and source.main != (args.dialect == "main"):
            continue
        dialect = "fn main (0.1.4)" if source.main else "classic (0.1.2)"
        for parameter, value, outcome in sweep_program(
            source, cache, args.reference, not args.no_sweep, args.params
        ):
            tally[dialect][outcome.verdict] += 1
            line = f"{source.name} {parameter.kind} {parameter.name}={value}: {outcome.verdict}"
            if args.verbose or outcome.verdict not in GOOD:
                print(f"{line}: {outcome.detail[:300]}", flush=True)
            if log:
                record = {
                    "program": source.name,
                    "kind": parameter.kind,
                    "name": parameter.name,
                    "value": value,
                    "verdict": outcome.verdict,
                    "detail": outcome.detail[:500],
                    **outcome.counts,
                }
                log.write(json.dumps(record) + "\n")
                log.flush()
        cache_file.write_text(json.dumps(cache))
    print(f"done in {time.monotonic() - started:.0f} s")
    for dialect, counts in sorted(tally.items()):
        print(f"  {dialect}: {sum(counts.values())} {dict(counts)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
