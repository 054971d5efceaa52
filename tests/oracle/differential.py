"""Run one program in serq and in pyserq 0.1.2 and compare what both report, exactly.

`outcome(report)` reduces a report of either implementation to the same plain data:
every observation's samples, times and sessions, every pool's counters, every stage's
iterations and completions, the run's counts; `outcome(report, full=True)` is the whole
report (every pool and stage figure, the gauges, the run's counts and time averages) with
every observation's samples, times, sessions and turns. `compare(path)` runs both
(pyserq in a child process, so a panic or a hang of the reference cannot take the caller
down) and says how they part: "same", "differ", "serq-error" (serq refused to run it: a
stall or a value out of its domain, with the message), "reference-error" (pyserq
panicked or refused) or "timeout". `compare_statistics(path, seeds)` runs a random
program over seeds on both and says whether every mean agrees within its error.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

POOL_FIELDS = ("admissions", "preemptions", "rejected", "evicted_entries", "stuck")
STAGE_FIELDS = ("iterations", "completed")


# The report's fields that are an implementation's own: its version, its event count (a
# span of fast-forwarded iterations is events too), the skipped iterations, the notes.
NOT_COMPARED = frozenset({"schema", "serq_version", "events", "skipped", "notes"})


def outcome(report: Any, full: bool = False) -> dict[str, Any]:
    """The comparable content of a report of serq or of pyserq (the module docstring)."""
    if full:
        whole = {k: v for k, v in json.loads(report.json()).items() if k not in NOT_COMPARED}
        whole["samples"] = {
            name: [
                list(o.sessions),
                [_r(x) for x in o.samples],
                [_r(x) for x in o.times],
                list(o.turns),
            ]
            for name in sorted(report.observes)
            for o in [report.observe(name)]
        }
        return whole
    observes = {}
    for name in sorted(report.observes):
        o = report.observe(name)
        observes[name] = [list(o.sessions), [_r(x) for x in o.samples], [_r(x) for x in o.times]]
    return {
        "observes": observes,
        "pools": [[getattr(p, f) for f in POOL_FIELDS] for p in report.pools],
        "stages": [[getattr(s, f, None) for f in STAGE_FIELDS] for s in report.stages],
        "counts": [report.arrivals, report.ended],
    }


def _r(x: float) -> float | str:
    """A number as it is compared: to 12 significant digits, inf and nan by name."""
    if math.isnan(x) or math.isinf(x):
        return str(x)
    return float(f"{x:.12g}")


_CHILD = """
import json, resource, sys
from math import inf, nan  # run settings of inf and NaN, as repr writes them
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu} + 1))  # its CPU time is the limit
if {side!r}:
    sys.path.insert(0, {side!r})
sys.path.insert(1, {here!r})
import time
import pyserq
from differential import outcome
path = sys.argv[1]
try:
    started = time.process_time()
    r = pyserq.run(pyserq.compile(path, **{settings!r}))
    cpu = time.process_time() - started
    print(json.dumps({{"ok": outcome(r, {full!r}), "cpu": cpu}}))
except BaseException as e:
    print(json.dumps({{"error": type(e).__name__ + ": " + str(e)[:300]}}))
"""


HERE = Path(__file__).resolve().parent
# The reference's limit is CPU time: on a busy machine (a CI's two cores shared with the
# tests' other worker) a program of 1.1 s of CPU took over 20 s of wall-clock time, a
# "timeout" that the mutants' test reads as serq missing a stop. The wall clock waits
# this many times the limit, for a child that sleeps.
WALL_FACTOR = 4
# pyserq 0.1.4, the reference of the `fn main` dialect, beside 0.1.2 (scripts/test.sh)
PYSERQ_014 = os.environ.get("PYSERQ_014_PATH", str(HERE.parents[1] / ".cache" / "pyserq-0.1.4"))


def have_014() -> bool:
    """Whether pyserq 0.1.4 is where `PYSERQ_014` says (scripts/test.sh installs it)."""
    return (Path(PYSERQ_014) / "pyserq").is_dir()


def missing_014() -> str:
    """What a comparison with 0.1.4 says when `have_014` is false."""
    return f"pyserq 0.1.4 not found in {PYSERQ_014} (run scripts/test.sh or set PYSERQ_014_PATH)"


def reference(
    path: str, timeout: float = 60.0, main: bool = False, full: bool = False, **settings: Any
) -> dict[str, Any]:
    """The reference's outcome of `path` in a child process, {"ok": ..., "cpu": seconds
    of its compile and run} or {"error": ...}: pyserq 0.1.2, or 0.1.4 for a `fn main`
    program (`main`), compiled with `settings`; `full` the whole report (`outcome`)."""
    side = PYSERQ_014 if main else ""
    if main and not have_014():  # else 0.1.2 would read it and refuse `fn main`
        return {"error": missing_014()}
    cpu = max(1, math.ceil(timeout))
    child = _CHILD.format(here=str(HERE), side=side, settings=settings, full=full, cpu=cpu)
    try:
        done = subprocess.run(
            [sys.executable, "-c", child, path],
            capture_output=True,
            text=True,
            timeout=timeout * WALL_FACTOR,
        )
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    if done.returncode in (-signal.SIGXCPU, -signal.SIGKILL):  # past its CPU time
        return {"error": "timeout"}
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if not lines:  # a crash: its last word, or the signal that killed it (a segfault)
        said = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        return {"error": "no output: " + said[-1][:300]}
    return json.loads(lines[-1])


def ours(path: str, full: bool = False, **settings: Any) -> dict[str, Any]:
    """serq's outcome of `path`: {"ok": ...} or {"error": the first diagnostic}; `full`
    the whole report (`outcome`)."""
    from serq.sim.api import compile_program, execute

    with open(path, encoding="utf-8") as f:
        text = f.read()
    compiled, diagnostics = compile_program(text, path, **settings)
    if compiled is None:
        return {"error": "compile: " + _first_error(diagnostics)}
    report, diagnostics = execute(compiled)
    if report is None:
        return {"error": _first_error(diagnostics)}
    return {"ok": json.loads(json.dumps(outcome(report, full)))}


def _first_error(diagnostics: list[Any]) -> str:
    """The message of the first error among `diagnostics` (warnings come first at times)."""
    from serq.diagnostics import Severity

    errors = [d for d in diagnostics if d.severity == Severity.ERROR] or diagnostics
    return errors[0].message if errors else "?"


def compare(
    path: str, timeout: float = 60.0, main: bool = False, full: bool = False, **settings: Any
) -> tuple[str, str]:
    """(verdict, detail) for the program at `path` (module docstring); `main` compares a
    `fn main` program with pyserq 0.1.4, both compiled with `settings`; `full` compares
    the whole reports (`outcome`), numbers to a relative 1e-9."""
    mine = ours(path, full, **settings)
    theirs = reference(path, timeout, main, full, **settings)
    if "error" in theirs:
        if theirs["error"] == "timeout":
            return "timeout", "serq: " + mine.get("error", "ran")
        if "error" in mine:
            return "both-error", f"{mine['error']} | {theirs['error']}"
        return "reference-error", theirs["error"]
    if "error" in mine:
        return "serq-error", mine["error"]
    if full:
        found = report_differences(mine["ok"], theirs["ok"])
        if not found:
            return "same", ""
        queued = [p["name"] for p in theirs["ok"]["pools"] if p.get("over_cap")]
        if queued:  # 0.1.4 queued a hold that can never fit, which the spec rejects
            found.insert(0, f"reference over_cap at {', '.join(queued)}")
        return "differ", "; ".join(found[:3])
    if mine["ok"] == theirs["ok"]:
        return "same", ""
    return "differ", first_difference(mine["ok"], theirs["ok"])


def expect(verdict: str, detail: str, known: tuple[str, str] | None) -> None:
    """Assert a family program's verdict: "same", or for a program whose difference the
    NOTES record, `known`: its verdict and a part of its detail."""
    if known is None:
        assert verdict == "same", detail
    else:
        assert verdict == known[0] and known[1] in detail, detail


# Fields of the reference's report that serq does not share: what 0.1.4 added after
# serq-language.txt (`over_cap`: 0.1.4 queues a hold that can never fit, where the spec
# rejects it; `idle_with_work`).
ONLY_014 = frozenset({"over_cap", "idle_with_work"})
# ... and the inter-token latencies' percentiles, which the reference estimates with a
# streaming sketch (exact up to about twenty samples, near the exact value above: a run of
# 49 latencies 1.02 ... 1.50 gets a p99 of 1.4963); serq reports the exact nearest-rank
# percentiles. Their mean is compared.
ESTIMATED = frozenset({"itl_p50", "itl_p99"})


def report_differences(mine: Any, theirs: Any, where: str = "") -> list[str]:
    """Where two full outcomes part, as `where: serq | reference` lines: keys of the
    reference's that serq lacks, lists of another length, numbers further apart than a
    relative 1e-9 (and an absolute 1e-12), anything else unequal."""
    if isinstance(theirs, dict):
        if not isinstance(mine, dict):
            return [f"{where}: serq {str(mine)[:80]} | reference {str(theirs)[:80]}"]
        out = []
        for key, value in theirs.items():
            if key in ONLY_014 or key in ESTIMATED:
                continue
            if key not in mine:
                out.append(f"{where}.{key}: missing in serq")
            else:
                out += report_differences(mine[key], value, f"{where}.{key}")
        return out
    if isinstance(theirs, list):
        if not isinstance(mine, list) or len(mine) != len(theirs):
            return [f"{where}: serq {str(mine)[:160]} | reference {str(theirs)[:160]}"]
        out = []
        for i, (a, b) in enumerate(zip(mine, theirs, strict=True)):
            out += report_differences(a, b, f"{where}[{i}]")
        return out
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (mine, theirs))
    if numbers and math.isclose(mine, theirs, rel_tol=1e-9, abs_tol=1e-12):
        return []
    if mine == theirs:
        return []
    return [f"{where}: serq {mine} | reference {theirs}"]


def paths(path: str, stepped: bool = False, **settings: Any) -> tuple[str, str]:
    """(verdict, detail) of `path` run on the compiled event path (the default) and on the
    interpreter (`codegen=False`), both with `settings`: "same" when the JSON reports and
    the diagnostics (code, span, message, notes) are equal to the last bit, "differ" with
    the first difference, "serq-error" (the same error on both paths, with its message)
    or "compile-error". `stepped` adds a third run, the compiled path stepping every
    engine iteration (`fast_forward=False`), and compares every sample of the three
    (times, sessions, turns, values, by `repr`) and every field but `skipped`."""
    from serq.sim.api import compile_program, execute

    with open(path, encoding="utf-8") as f:
        text = f.read()
    compiled, diagnostics = compile_program(text, path, **settings)
    if compiled is None:
        return "compile-error", diagnostics[0].message if diagnostics else "?"
    runs = []
    ways = [(True, True), (False, True)] + ([(True, False)] if stepped else [])
    for codegen, fast in ways:
        report, diagnostics = execute(compiled, codegen=codegen, fast_forward=fast)
        said = [(d.code, d.span, d.message, tuple(d.notes)) for d in diagnostics]
        runs.append((_whole(report, stepped), said))
    (a, da), (b, db) = runs[:2]
    if da != db:
        return "differ", f"diagnostics: compiled {da[:2]} interpreter {db[:2]}"
    if a != b:
        return "differ", _json_difference(a, b, "")
    if stepped and runs[2] != runs[0]:
        c, dc = runs[2]
        if dc != da:
            return "differ", f"diagnostics: fast-forwarded {da[:2]} stepped {dc[:2]}"
        return "differ", "stepped: " + _json_difference(a, c, "")
    if a is None:
        return "serq-error", da[0][2] if da else "?"
    if any(d[0] == "E-internal" for d in da):
        return "serq-error", da[0][2]
    return "same", ""


def _whole(report: Any, stepped: bool) -> Any:
    """A run's report as compared by `paths`: its JSON, with `stepped` without the counts
    of skipped iterations and with every sample and gauge point."""
    if report is None:
        return None
    data = json.loads(report.json())
    if not stepped:
        return data
    data = _unskipped(data)
    data["samples"] = {
        name: [repr(list(getattr(o, a))) for a in ("times", "sessions", "turns", "samples")]
        for name, o in report.observes.items()
    }
    data["gauge_points"] = {
        name: [repr(list(g.times)), repr(list(g.values))] for name, g in report.gauges.items()
    }
    return data


def _unskipped(value: Any) -> Any:
    """A report's JSON without `skipped` (the one field that says how it was run)."""
    if isinstance(value, dict):
        return {k: _unskipped(v) for k, v in value.items() if k != "skipped"}
    if isinstance(value, list):
        return [_unskipped(v) for v in value]
    return value


def _json_difference(a: Any, b: Any, where: str) -> str:
    """The first place two JSON values part, as `where: a | b`."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                return _json_difference(a.get(key), b.get(key), f"{where}.{key}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return _json_difference(x, y, f"{where}[{i}]")
    return f"{where}: compiled {str(a)[:200]} | interpreter {str(b)[:200]}"


def first_difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    """Where two outcomes first part, in words."""
    for key in ("counts", "pools", "stages"):
        if a[key] != b[key]:
            return f"{key}: serq {a[key]} reference {b[key]}"
    for name in sorted(set(a["observes"]) | set(b["observes"])):
        x, y = a["observes"].get(name), b["observes"].get(name)
        if x != y:
            if x is None or y is None:
                return f"observe {name}: only in one"
            for i, (p, q) in enumerate(
                zip(zip(*x, strict=True), zip(*y, strict=True), strict=False)
            ):
                if p != q:
                    return f"observe {name} sample {i}: serq {p} reference {q}"
            return f"observe {name}: {len(x[0])} samples against {len(y[0])}"
    return "?"


# ------------------------------------------------------------------ random programs

_SEEDS_CHILD = """
import json, sys
if {side!r}:
    sys.path.insert(0, {side!r})
import pyserq
out = []
for seed in {seeds!r}:
    try:
        r = pyserq.run(pyserq.compile(sys.argv[1], seed=seed, **{settings!r}))
        out.append({{"ok": json.loads(r.json())}})
    except BaseException as e:
        out.append({{"error": type(e).__name__ + ": " + str(e)[:300]}})
print(json.dumps(out))
"""


def figures(report: dict[str, Any]) -> dict[str, float]:
    """The numbers of a report's JSON that a random program's runs are compared on, by
    name: the run's counts and mean live, each observation's count and mean, each pool's
    and stage's figures and counts, each gauge's mean. A figure the report leaves empty
    (`null`, a mean of no sample) is left out, and so are the ITL percentiles, which the
    reference estimates (`ESTIMATED`: a median of 0.0101318 where every gap is 0.0101)."""
    out: dict[str, float] = {}
    for key in ("arrivals", "ended", "turns", "mean_live"):
        out[key] = report[key]
    for name, o in report["observes"].items():
        out[f"observe {name} count"] = o["count"]
        out[f"observe {name} mean"] = o["mean"]
    for kind in ("pools", "stages"):
        for row in report[kind]:
            label = row["name"] if row.get("index") is None else f"{row['name']}[{row['index']}]"
            for field, value in row.items():
                if field not in ("name", "index") and field not in ONLY_014 | ESTIMATED:
                    out[f"{kind[:-1]} {label} {field}"] = value
    for name, g in (report.get("gauges") or {}).items():
        out[f"gauge {name} mean"] = g["mean"]
    return {k: float(v) for k, v in out.items() if isinstance(v, (int, float))}


def _runs_of_ours(path: str, seeds: list[int], settings: dict[str, Any]) -> list[dict]:
    from serq.sim.api import compile_program, execute

    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for seed in seeds:
        compiled, diagnostics = compile_program(text, path, seed=seed, **settings)
        if compiled is None:
            return [{"error": "compile: " + _first_error(diagnostics)}]
        report, diagnostics = execute(compiled)
        if report is None:
            out.append({"error": _first_error(diagnostics)})
        else:
            out.append({"ok": json.loads(report.json())})
    return out


# pyserq 0.1.4 draws a session's numbers from a stream keyed by the run's seed plus the
# session's serial: session i of seed 2 draws what session i + 1 of seed 1 drew, so its
# runs at consecutive seeds share all but one of their sessions' draws and their means
# barely vary (NOTES §73; 0.1.2 does not). Seeds this far apart share no session's stream.
SEED_SPACING = 1_000_003


def statistics_seeds(count: int) -> list[int]:
    """The seeds a comparison in distribution runs each side with: `count` of them, 1 and
    then `SEED_SPACING` apart, so that no two of the reference's runs share a stream."""
    return [1 + k * SEED_SPACING for k in range(count)]


def compare_statistics(
    path: str,
    seeds: int = 8,
    timeout: float = 600.0,
    main: bool = False,
    z: float = 5.0,
    **settings: Any,
) -> tuple[str, str]:
    """(verdict, detail) of a random program run with `seeds` seeds on both sides
    (`statistics_seeds`):
    "same" when every figure (`figures`) of the one has a mean over the seeds within `z`
    standard errors of the other's (Welch), or within a relative 1e-9 when neither side
    varies; "differ" with the figures that are not; the verdicts of `compare` for errors.
    `z` is wide because a program has some hundred figures, each tested at once."""
    seed_list = statistics_seeds(seeds)
    mine = _runs_of_ours(path, seed_list, settings)
    side = PYSERQ_014 if main else ""
    child = _SEEDS_CHILD.format(side=side, seeds=seed_list, settings=settings)
    try:
        done = subprocess.run(
            [sys.executable, "-c", child, path], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    lines = [x for x in done.stdout.splitlines() if x.startswith("[")]
    if not lines:
        return "reference-error", "no output: " + (done.stderr.strip().splitlines() or ["?"])[-1]
    theirs = json.loads(lines[-1])
    ours_errors = [r["error"] for r in mine if "error" in r]
    their_errors = [r["error"] for r in theirs if "error" in r]
    if their_errors and ours_errors:
        return "both-error", f"{ours_errors[0]} | {their_errors[0]}"
    if their_errors:
        return "reference-error", their_errors[0]
    if ours_errors:
        return "serq-error", ours_errors[0]
    a = [figures(r["ok"]) for r in mine]
    b = [figures(r["ok"]) for r in theirs]
    if len(a) < 2 or len(b) < 2:
        return "same" if a == b else "differ", "fewer than two seeds"
    found = []
    for key in sorted(set(a[0]) & set(b[0])):
        x = [f[key] for f in a if key in f]
        y = [f[key] for f in b if key in f]
        if len(x) < len(a) or len(y) < len(b):
            continue  # a mean some seeds do not have: whether it exists is itself random
        verdict = _welch(x, y, z)
        if verdict:
            found.append(f"{key}: {verdict}")
    missing = sorted(set.intersection(*map(set, b)) - set.union(*map(set, a)))
    found += [f"{key}: only in the reference" for key in missing]
    return ("differ", "; ".join(found[:4])) if found else ("same", "")


def _welch(x: list[float], y: list[float], z: float) -> str:
    """'' when the means of `x` and `y` agree (module docstring of `compare_statistics`),
    else the two means and their standard errors in words."""
    mx, my = sum(x) / len(x), sum(y) / len(y)
    if any(math.isinf(v) or math.isnan(v) for v in (mx, my)):
        return "" if str(mx) == str(my) else f"serq {mx} | reference {my}"
    vx = sum((v - mx) ** 2 for v in x) / (len(x) - 1)
    vy = sum((v - my) ** 2 for v in y) / (len(y) - 1)
    se = math.sqrt(vx / len(x) + vy / len(y))
    if math.isclose(mx, my, rel_tol=1e-9, abs_tol=1e-12):
        return ""
    if se > 0 and abs(mx - my) <= z * se:
        return ""
    return f"serq {mx:.6g} ± {math.sqrt(vx / len(x)):.3g} | reference {my:.6g} ± {math.sqrt(vy / len(y)):.3g}"
