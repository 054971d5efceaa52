"""Run one program in serq and in pyserq 0.1.2 and compare what both report, exactly.

`outcome(report)` reduces a report of either implementation to the same plain data:
every observation's samples, times and sessions, every pool's counters, every stage's
iterations and completions, the run's counts. `compare(path)` runs both (pyserq in a
child process, so a panic or a hang of the reference cannot take the caller down) and
says how they part: "same", "differ", "serq-error" (serq refused to run it: a stall or
a value out of its domain, with the message), "reference-error" (pyserq panicked or
refused) or "timeout".
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

POOL_FIELDS = ("admissions", "preemptions", "rejected", "evicted_entries", "stuck")
STAGE_FIELDS = ("iterations", "completed")


def outcome(report: Any) -> dict[str, Any]:
    """The comparable content of a report of serq or of pyserq."""
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
import json, sys
if {side!r}:
    sys.path.insert(0, {side!r})
sys.path.insert(1, {here!r})
import pyserq
from differential import outcome
path = sys.argv[1]
try:
    r = pyserq.run(pyserq.compile(path, **{settings!r}))
    print(json.dumps({{"ok": outcome(r)}}))
except BaseException as e:
    print(json.dumps({{"error": type(e).__name__ + ": " + str(e)[:300]}}))
"""


HERE = Path(__file__).resolve().parent
# pyserq 0.1.4, the reference of the `fn main` dialect, beside 0.1.2 (scripts/test.sh)
PYSERQ_014 = os.environ.get("PYSERQ_014_PATH", str(HERE.parents[1] / ".cache" / "pyserq-0.1.4"))


def reference(
    path: str, timeout: float = 60.0, main: bool = False, **settings: Any
) -> dict[str, Any]:
    """The reference's outcome of `path` in a child process, {"ok": ...} or {"error": ...}:
    pyserq 0.1.2, or 0.1.4 for a `fn main` program (`main`), compiled with `settings`."""
    side = PYSERQ_014 if main else ""
    child = _CHILD.format(here=str(HERE), side=side, settings=settings)
    try:
        done = subprocess.run(
            [sys.executable, "-c", child, path],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": "timeout"}
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if not lines:
        return {"error": "no output: " + done.stderr.strip().splitlines()[-1][:300]}
    return json.loads(lines[-1])


def ours(path: str, **settings: Any) -> dict[str, Any]:
    """serq's outcome of `path`: {"ok": ...} or {"error": the first diagnostic}."""
    from serq.sim.api import compile_program, execute

    with open(path, encoding="utf-8") as f:
        text = f.read()
    compiled, diagnostics = compile_program(text, path, **settings)
    if compiled is None:
        return {"error": "compile: " + diagnostics[0].message}
    report, diagnostics = execute(compiled)
    if report is None:
        return {"error": diagnostics[0].message}
    return {"ok": json.loads(json.dumps(outcome(report)))}


def compare(
    path: str, timeout: float = 60.0, main: bool = False, **settings: Any
) -> tuple[str, str]:
    """(verdict, detail) for the program at `path` (module docstring); `main` compares a
    `fn main` program with pyserq 0.1.4, both compiled with `settings`."""
    mine = ours(path, **settings)
    theirs = reference(path, timeout, main, **settings)
    if "error" in theirs:
        if theirs["error"] == "timeout":
            return "timeout", ""
        if "error" in mine:
            return "both-error", f"{mine['error']} | {theirs['error']}"
        return "reference-error", theirs["error"]
    if "error" in mine:
        return "serq-error", mine["error"]
    if mine["ok"] == theirs["ok"]:
        return "same", ""
    return "differ", first_difference(mine["ok"], theirs["ok"])


def paths(path: str, **settings: Any) -> tuple[str, str]:
    """(verdict, detail) of `path` run on the compiled event path (the default) and on the
    interpreter (`codegen=False`), both with `settings`: "same" when the JSON reports and
    the diagnostics (code, span, message, notes) are equal to the last bit, "differ" with
    the first difference, "serq-error" (the same error on both paths, with its message)
    or "compile-error"."""
    from serq.sim.api import compile_program, execute

    with open(path, encoding="utf-8") as f:
        text = f.read()
    compiled, diagnostics = compile_program(text, path, **settings)
    if compiled is None:
        return "compile-error", diagnostics[0].message if diagnostics else "?"
    runs = []
    for codegen in (True, False):
        report, diagnostics = execute(compiled, codegen=codegen)
        said = [(d.code, d.span, d.message, tuple(d.notes)) for d in diagnostics]
        runs.append((None if report is None else json.loads(report.json()), said))
    (a, da), (b, db) = runs
    if da != db:
        return "differ", f"diagnostics: compiled {da[:2]} interpreter {db[:2]}"
    if a != b:
        return "differ", _json_difference(a, b, "")
    if a is None:
        return "serq-error", da[0][2] if da else "?"
    if any(d[0] == "E-internal" for d in da):
        return "serq-error", da[0][2]
    return "same", ""


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
