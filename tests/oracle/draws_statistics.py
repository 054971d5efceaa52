"""Compare the programs with draws against the reference in distribution, at their own
load and at loads near the edge of stability, and say which fields are empty on one
side only.

A program with draws cannot be compared sample for sample (serq and pyserq draw from
different streams). Each program (`mutants.RANDOM`) of the folders given runs over
N seeds on both sides (`differential.statistics_seeds`, far apart: 0.1.4's runs at
consecutive seeds share their sessions' draws; `compare_statistics`'s rule: every mean within
`z` standard errors, Welch), at the horizon `mutants.base_settings` chooses, first at
its own parameters, then with its load parameter (an arrival rate, gap or population:
a `let`, an `args.number` or a lifted literal, `sweep_domain.parameters`) scaled so that
its busiest stage's utilisation in serq's run is near each of `EDGE`.

Beside the means, every field that is NaN or null in a report (`sweep_domain._nan_paths`)
is counted per side: a field empty in some seeds of one side and in none of the other
is listed with both counts, since it is how a mean that one run never had shows up (a
`ci` of fewer than its samples, a stage no session reached).

    PYTHONPATH=. python tests/oracle/draws_statistics.py --folder examples --seeds 10
    PYTHONPATH=. python tests/oracle/draws_statistics.py --only mm1 --verbose
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import differential  # noqa: E402
import mutants  # noqa: E402
import sweep_domain  # noqa: E402

FOLDERS = ("tests/oracle/spec_walk", "tests/corpus/valid", "tests/corpus/valid_main", "examples")
EDGE = (0.9, 0.97, 1.02)  # the utilisations the load is scaled to
_ARRIVE = re.compile(r"\barrive\s+([^;]*);")
_LET_VALUE = re.compile(r"\blet\s+(\w+)\s*=\s*([^;]*);")
_INVERSE = re.compile(r"gap|renewal|interval|think|mean|spac", re.I)  # a larger value is less load
_LOAD_KIND = re.compile(r"^sweep_(poisson|renewal|closed|batch)\d")
_WHOLE = re.compile(r"pop|users|clients|^n$|closed|batch|count", re.I)  # a count of sessions


@dataclass
class Side:
    """One side's runs of one program at one load: each seed's report JSON or error."""

    reports: list[dict[str, Any]]
    errors: list[str]


def load_parameter(text: str, main: bool) -> sweep_domain.Parameter | None:
    """The parameter that sets `text`'s load: a `let` or `args.number` that the arrival
    statement reads (a rate, gap or population), else its lifted literal; None when the
    arrivals read neither."""
    blank = mutants._blanked(text)
    read = set()
    for m in _ARRIVE.finditer(blank):
        read |= set(re.findall(r"[A-Za-z_]\w*", m.group(1)))
    found = sweep_domain.parameters(text, main)
    lets = {m.group(1): m.group(2) for m in _LET_VALUE.finditer(blank)}
    for _ in range(3):  # a let the arrivals read through another let
        read |= {w for name in list(read) for w in re.findall(r"[A-Za-z_]\w*", lets.get(name, ""))}
    for p in found:
        if p.text is None and p.kind in ("let", "arg") and p.name in read:
            return p
    for p in found:
        if p.text is not None and _LOAD_KIND.match(p.name):
            return p
    return None


def scaled(p: sweep_domain.Parameter, factor: float, text: str = "") -> str:
    """`p`'s value times `factor` (divided, for a gap), a whole number for a population:
    by its name, or by what reads it in `text` (`closed(…)`, `batch(…)`, `renewal(…)`)."""
    try:
        base = float(p.base)
    except ValueError:
        base = None
    inverse = _INVERSE.search(p.name) is not None or _reads(text, p.name, "renewal")
    whole = _WHOLE.search(p.name) is not None or _reads(text, p.name, "closed|batch")
    if base is None:
        return f"({p.base}) {'/' if inverse else '*'} {factor:.6g}"
    value = base / factor if inverse else base * factor
    if whole:
        return str(max(1, round(value)))
    return f"{value:.6g}"


def _reads(text: str, name: str, laws: str) -> bool:
    """Whether an arrival law of `laws` in `text` reads `name` in its argument."""
    pattern = rf"\b(?:{laws})\s*\([^;]*\b{re.escape(name)}\b"
    return any(re.search(pattern, m.group(1)) for m in _ARRIVE.finditer(text))


def _body(source: mutants.Source, p: sweep_domain.Parameter | None, value: str | None):
    """(text, sets) of `source` with `p` at `value` (the text as it is when `p` is None)."""
    text = source.path.read_text(encoding="utf-8")
    if p is None or value is None:
        return text, {}
    body = p.text or text
    if p.kind == "arg":
        return body, {"sets": {p.name: value}}
    return sweep_domain.written(body, p.name, value), {}


def ours(path: str, seeds: list[int], settings: dict[str, Any]) -> Side:
    """serq's reports of `path` over `seeds`."""
    runs = differential._runs_of_ours(path, seeds, settings)
    return Side([r["ok"] for r in runs if "ok" in r], [r["error"] for r in runs if "error" in r])


def theirs(path: str, seeds: list[int], settings: dict[str, Any], main: bool, wait: float) -> Side:
    """The reference's reports of `path` over `seeds` (a child process)."""
    side = differential.PYSERQ_014 if main else ""
    child = differential._SEEDS_CHILD.format(side=side, seeds=seeds, settings=settings)
    try:
        done = subprocess.run(
            [sys.executable, "-c", child, path], capture_output=True, text=True, timeout=wait
        )
    except subprocess.TimeoutExpired:
        return Side([], ["timeout"])
    lines = [x for x in done.stdout.splitlines() if x.startswith("[")]
    if not lines:
        return Side([], ["no output: " + (done.stderr.strip().splitlines() or ["?"])[-1]])
    runs = json.loads(lines[-1])
    return Side([r["ok"] for r in runs if "ok" in r], [r["error"] for r in runs if "error" in r])


def means(a: list[dict[str, Any]], b: list[dict[str, Any]], z: float) -> list[str]:
    """The figures whose means part beyond `z` standard errors, over the seeds where
    both the figure exists (a figure some seeds lack is compared where it is)."""
    fa = [differential.figures(r) for r in a]
    fb = [differential.figures(r) for r in b]
    out = []
    for key in sorted(set().union(*fa) & set().union(*fb)):
        x = [f[key] for f in fa if key in f and not math.isnan(f[key])]
        y = [f[key] for f in fb if key in f and not math.isnan(f[key])]
        if len(x) < 2 or len(y) < 2:
            continue
        verdict = differential._welch(x, y, z)
        if verdict:
            out.append(f"{key}: {verdict}")
    return out


def empties(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[str]:
    """The fields NaN or null in some seeds of one side and none of the other, with the
    counts of seeds on each side."""
    ca: dict[str, int] = {}
    cb: dict[str, int] = {}
    for reports, count in ((a, ca), (b, cb)):
        for r in reports:
            for p in sweep_domain._nan_paths(_named(r)):
                count[p] = count.get(p, 0) + 1
    out = []
    for p in sorted(set(ca) | set(cb)):
        if (ca.get(p, 0) == 0) != (cb.get(p, 0) == 0):
            out.append(f"{p}: serq {ca.get(p, 0)}/{len(a)} | reference {cb.get(p, 0)}/{len(b)}")
    return out


def _named(report: dict[str, Any]) -> dict[str, Any]:
    """`report` with its stage and pool rows keyed by name (two reports list the same
    rows, but a name says more than an index), without the implementation's own fields."""
    out = {k: v for k, v in report.items() if k not in differential.NOT_COMPARED}
    for kind in ("stages", "pools"):
        rows = out.get(kind) or []
        out[kind] = {
            (r["name"] if r.get("index") is None else f"{r['name']}[{r['index']}]"): {
                k: v for k, v in r.items() if k not in differential.ONLY_014
            }
            for r in rows
        }
    return out


def busiest(report: dict[str, Any]) -> float:
    """The largest finite utilisation of a stage in `report` (0 when none has one)."""
    found = [
        r.get("utilization")
        for r in report.get("stages", [])
        if isinstance(r.get("utilization"), (int, float)) and math.isfinite(r["utilization"])
    ]
    return max(found, default=0.0)


def one(
    source: mutants.Source, settings: dict[str, Any], label: str, text: str, sets: dict, args
) -> dict[str, Any]:
    """Both sides' runs of `text` (the program of `source`) and what parts them."""
    seeds = differential.statistics_seeds(args.seeds)
    run = {**{k: v for k, v in settings.items() if k != "seed"}, **sets}
    path = source.path.with_name(f"_stat_{source.path.stem}.sq")
    path.write_text(text, encoding="utf-8")
    try:
        started = time.monotonic()
        a = ours(str(path), seeds, run)
        b = theirs(str(path), seeds, run, source.main, args.wait)
    finally:
        path.unlink()
    row: dict[str, Any] = {"program": source.name, "load": label, "seconds": 0.0}
    row["seconds"] = round(time.monotonic() - started, 1)
    if a.errors or b.errors:
        row["verdict"] = "error"
        row["detail"] = (
            f"serq {a.errors[:1]} ({len(a.errors)}) | reference {b.errors[:1]} ({len(b.errors)})"
        )
    row["differ"] = means(a.reports, b.reports, args.z) if a.reports and b.reports else []
    row["empty"] = empties(a.reports, b.reports) if a.reports and b.reports else []
    row.setdefault("verdict", "differ" if row["differ"] else "same")
    row["busiest"] = round(busiest(a.reports[0]), 4) if a.reports else None
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", action="append", default=None)
    parser.add_argument("--only", default=None, help="programs whose name matches a regex")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--z", type=float, default=5.0)
    parser.add_argument("--wait", type=float, default=300.0, help="seconds for the reference")
    parser.add_argument("--all", action="store_true", help="the programs without draws too")
    parser.add_argument("--no-edge", action="store_true", help="only the program's own load")
    parser.add_argument("--out", type=Path, default=None, help="a JSON line per comparison")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    folders = args.folder or list(FOLDERS)
    scratch = Path(tempfile.mkdtemp(prefix="serq-stats-"))
    cache: dict[str, Any] = {}
    sink = args.out.open("a", encoding="utf-8") if args.out else None
    for source in sweep_domain.programs(scratch, args.only, folders):
        if not (source.random or args.all):
            continue
        settings = mutants.base_settings(source, cache)
        if settings is None:
            print(f"{source.name}: serq cannot run it", flush=True)
            continue
        text, _ = _body(source, None, None)
        rows = [one(source, settings, "own", text, {}, args)]
        p = load_parameter(text, source.main)
        rho = rows[0]["busiest"] or 0.0
        if p is not None and not args.no_edge:
            targets = [t / rho for t in EDGE] if rho > 0.05 else [2.0, 4.0]
            for factor in targets:
                value = scaled(p, factor, p.text or text)
                body, sets = _body(source, p, value)
                rows.append(one(source, settings, f"{p.name}={value}", body, sets, args))
        for row in rows:
            if sink:
                sink.write(json.dumps(row) + "\n")
                sink.flush()
            line = f"{row['program']} [{row['load']}] rho={row['busiest']}: {row['verdict']}"
            print(line + f" ({row['seconds']} s)", flush=True)
            if row["verdict"] != "same" or args.verbose:
                for item in row.get("detail", "").split("\n") if row.get("detail") else []:
                    print("    " + item[:300])
                for item in row["differ"]:
                    print("    differ " + item[:300])
            for item in row["empty"]:
                print("    empty " + item[:300])
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parents[1]))
    sys.exit(main())
