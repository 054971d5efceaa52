"""Our IR against the reference's: every top-level corpus program links to the IR pyserq 0.1.2
prints, once our names are written in its shape.

The two IRs carry the same information under other names (IR v10: `{"Binary": ["Add", a,
b]}`, context variables `Ntok`, `Kvb`, ..., a run's further stages as `also`); `program()`
below renames ours into theirs and drops our origins, and the test compares the two JSON
objects whole: attributes and their slots, statistics, pools and stages member by member,
every folded constant, the block table and its order. The `fn main` programs are compared
with pyserq 0.1.4 (IR v12) in one subprocess, when it is installed.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from serq import api, ir

pyserq = pytest.importorskip("pyserq")

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
TOP_LEVEL = sorted((CORPUS / "valid").glob("*.sq")) + sorted((ROOT / "examples").glob("*.sq"))
MAIN = sorted((CORPUS / "valid_main").glob("*.sq"))
PYSERQ_014 = os.environ.get("PYSERQ_014_PATH", str(ROOT / ".cache" / "pyserq-0.1.4"))
HORIZON_RE = re.compile(r"^// horizon: (\S+)\s*$", re.M)

# ------------------------------------------------- our IR in the reference's shape

CTX = {
    "now": "Now",
    "size": "Size",
    "age": "Age",
    "last": "Last",
    "waiting": "Queued",
    "present": "N",
    "residents": "Nres",
    "decoders": "Ndec",
    "kv_decode": "Kvb",
    "kv_prefill": "Kvp",
    "tokens": "Ntok",
    "prefilled": "Npre",
    "attention": "Attn",
    "decoding": "Decoding",
    "admission": "Admission",
    "remaining": "Remaining",
    "waited": "Waited",
}
BINARY = {
    "+": "Add",
    "-": "Sub",
    "*": "Mul",
    "/": "Div",
    "^": "Pow",
    "==": "Eq",
    "!=": "Ne",
    "<": "Lt",
    "<=": "Le",
    ">": "Gt",
    ">=": "Ge",
    "&&": "And",
    "||": "Or",
}
UNARY = {"-": "Neg", "!": "Not"}
FUNC = {
    "cachedin": "CachedIn",
    "budget_left": "BudgetLeft",
    "est_lambda": "EstLambda",
    "est_rho": "EstRho",
    "est_wait": "EstWait",
}


def _camel(name: str) -> str:
    return FUNC.get(name, name[:1].upper() + name[1:])


def num(x: float) -> float | str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def ref(r: ir.Ref) -> dict:
    return {"base": r.base, "count": r.count, "index": None if r.index is None else expr(r.index)}


def expr(e: ir.Expr) -> dict:
    match e:
        case ir.Num(value):
            return {"Num": num(value)}
        case ir.Attr(slot):
            return {"Attr": slot}
        case ir.Ctx(name):
            return {"Ctx": CTX[name]}
        case ir.Unary(op, operand):
            return {"Unary": [UNARY[op], expr(operand)]}
        case ir.Binary(op, left, right):
            return {"Binary": [BINARY[op], expr(left), expr(right)]}
        case ir.Cond(test, then, otherwise):
            return {"Cond": [expr(test), expr(then), expr(otherwise)]}
        case ir.Call(func, args):
            return {"Call": [_camel(func), [{"Expr": expr(a)} for a in args]]}
        case ir.Observable(func, target, args):
            first = {target.kind.capitalize(): ref(target)}
            return {"Call": [_camel(func), [first, *({"Expr": expr(a)} for a in args)]]}
        case ir.Draw(dist, args):
            return {"Sample": [_camel(dist), [expr(a) for a in args]]}
        case ir.Cost(target, value):
            resource = {"base": target.base, "count": target.count}
            return {"Cost": [{target.kind.capitalize(): resource}, expr(value)]}
    raise TypeError(e)


def _opt(e: ir.Expr | None) -> dict | None:
    return None if e is None else expr(e)


def stmt(s: ir.Stmt) -> object:
    match s:
        case ir.Turn():
            return "Turn"
        case ir.End():
            return "End"
        case ir.Set(slot, value):
            return {"Set": [slot, expr(value)]}
        case ir.Observe(stat, value):
            return {"Observe": [stat, expr(value)]}
        case ir.Hold(pools, reuse, body, cache, lease):
            return {
                "Hold": {
                    "pools": [[ref(p.pool), expr(p.units), _opt(p.reserve)] for p in pools],
                    "reuse": _opt(reuse),
                    "body": body,
                    "cache": _opt(cache),
                    "lease": None if lease is None else [ref(lease.pool), expr(lease.duration)],
                }
            }
        case ir.Grow(pool, amount):
            return {"Grow": [ref(pool), expr(amount)]}
        case ir.Load(pool, amount):
            return {"Load": [ref(pool), expr(amount)]}
        case ir.Drop(pool):
            return {"Drop": ref(pool)}
        case ir.Release(pool):
            return {"Release": ref(pool)}
        case ir.Run(stages, mode, work, growing):
            out = {
                "stage": ref(stages[0]),
                "mode": mode.capitalize(),
                "work": expr(work),
                "growing": None if growing is None else ref(growing),
            }
            if len(stages) > 1:
                out["also"] = [ref(r) for r in stages[1:]]
            return {"Run": out}
        case ir.Branch(test, then, otherwise):
            return {"Branch": [expr(test), then, otherwise]}
        case ir.Loop(body):
            return {"Loop": body}
        case ir.Choose(slot, count, keys):
            return {"Choose": {"var": slot, "count": expr(count), "key": [expr(k) for k in keys]}}
    raise TypeError(s)


def _member(name: str, index: int | None) -> dict:
    return {"name": name} if index is None else {"name": name, "index": index}


def pool(p: ir.Pool) -> dict:
    evict = "Lru" if isinstance(p.evict, ir.Lru) else {"By": [expr(k) for k in p.evict.keys]}
    spill = None
    if p.spill is not None:
        s = p.spill
        spill = {"to": s.to, "via": s.via, "work": expr(s.work), "when": expr(s.when)}
    return {
        **_member(p.name, p.index),
        "cap": num(p.cap),
        "block": p.block,
        "evict": evict,
        "preempt": p.preempt.capitalize(),
        "queue": [expr(k) for k in p.queue.keys] or None,
        "spill": spill,
        "admit_via": p.admit_via,
    }


def stage(s: ir.Stage) -> dict:
    match s.kind:
        case ir.Fifo(servers):
            kind: object = {"Fifo": servers}
        case ir.Ps(capacity):
            kind = {"Ps": expr(capacity)}
        case ir.Delay():
            kind = "Delay"
        case ir.Step(budget, cost, chunk, serve, memory):
            if isinstance(serve, ir.ExclusivePrefill):
                served: object = "ExclusivePrefill"
            else:
                served = {"By": [expr(k) for k in serve.keys]}
            step = {
                "budget": expr(budget),
                "cost": expr(cost),
                "chunk": expr(chunk) if chunk is not None else {"Num": 0.0},
                "serve": served,
                "memory": memory,
            }
            kind = {"Step": step}
    return {**_member(s.name, s.index), "kind": kind}


def arrival(a: ir.Arrival | None) -> object:
    match a:
        case None:
            return "None"
        case ir.Poisson(rate):
            return {"Poisson": num(rate)}
        case ir.Renewal(gap):
            return {"Renewal": expr(gap)}
        case ir.Closed(population):
            return {"Closed": population}
        case ir.Batch(size):
            return {"Batch": size}
    raise TypeError(a)


def program(p: ir.Program) -> dict:
    """`p` as the reference's IR v10 JSON object."""
    out: dict = {
        "version": 10,
        "attrs": list(p.attrs),
        "observes": list(p.observes),
        "pools": [pool(x) for x in p.pools],
        "stages": [stage(x) for x in p.stages],
        "arrival": arrival(p.arrival),
        "trace": None if p.trace is None else p.trace.path,
        "trace_ordered": p.trace is not None and p.trace.ordered,
        "init": p.init,
        "turn": p.turn,
        "session": p.session,
        "blocks": [[stmt(s) for s in block] for block in p.blocks],
        "horizon": p.horizon,
        "warmup": p.warmup,
        "seed": p.seed,
    }
    if p.arrivals is not None:
        out["arrivals"] = p.arrivals
    for slot, name in enumerate(ir.BUILTIN_ATTRS):
        out["slot_" + ("turn" if name == "turn_no" else name)] = slot
    out["hidden"] = list(p.hidden)
    if p.share is not None:
        out["share"] = {"maxmin": "MaxMin", "bottleneck": "Bottleneck"}[p.share]
    if p.gauges:
        out["gauges"] = [{"name": g.name, "expr": expr(g.value)} for g in p.gauges]
    return out


# --------------------------------------------------------------------- the tests


def _linked(path: Path) -> ir.Program:
    program, diagnostics = api.link_source(path.read_text(encoding="utf-8"), str(path))
    assert not diagnostics, [d.message for d in diagnostics]
    assert program is not None
    return program


def _differences(ours, theirs, path="", out=None):
    """Where two JSON values differ, as `path: ours != theirs` lines (at most 10)."""
    out = [] if out is None else out
    if len(out) >= 10:
        return out
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs)):
            if key not in ours or key not in theirs:
                out.append(f"{path}/{key}: only in {'theirs' if key not in ours else 'ours'}")
            else:
                _differences(ours[key], theirs[key], f"{path}/{key}", out)
    elif isinstance(ours, list) and isinstance(theirs, list):
        if len(ours) != len(theirs):
            out.append(f"{path}: {len(ours)} items != {len(theirs)} items")
        else:
            for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
                _differences(a, b, f"{path}[{i}]", out)
    else:
        numbers = all(type(v) in (int, float) for v in (ours, theirs))
        if ours != theirs or not numbers and type(ours) is not type(theirs):
            out.append(f"{path}: {json.dumps(ours)[:120]} != {json.dumps(theirs)[:120]}")
    return out


@pytest.mark.parametrize("path", TOP_LEVEL, ids=lambda p: p.name)
def test_same_ir_as_the_reference(path):
    ours = program(_linked(path))
    theirs = json.loads(pyserq.compile(str(path)).to_json())
    assert _differences(ours, theirs) == []


def test_the_comparison_sees_a_difference():
    ours = program(_linked(CORPUS / "valid" / "pool_options.sq"))
    theirs = json.loads(pyserq.compile(str(CORPUS / "valid" / "pool_options.sq")).to_json())
    theirs["pools"][2]["cap"] = 1000.0
    theirs["blocks"][2].pop()
    assert _differences(ours, theirs) == [
        "/blocks[2]: 5 items != 4 items",
        "/pools[2]/cap: 1024.0 != 1000.0",
    ]


def test_the_summary_of_a_large_program():
    """The counts and constants a reader checks first, on the vLLM engine."""
    linked = _linked(CORPUS / "valid" / "vllm_engine.sq")
    theirs = json.loads(pyserq.compile(str(CORPUS / "valid" / "vllm_engine.sq")).to_json())
    assert len(linked.pools) == len(theirs["pools"]) == 2
    assert len(linked.stages) == len(theirs["stages"]) == 2
    assert list(linked.attrs) == theirs["attrs"]
    assert len(linked.blocks) == len(theirs["blocks"])
    assert [p.cap for p in linked.pools] == [p["cap"] for p in theirs["pools"]] == [64.0, 32000.0]
    assert linked.pools[1].block == theirs["pools"][1]["block"] == 16.0
    assert (linked.horizon, linked.warmup, linked.seed) == (200.0, 20.0, 3)
    assert linked.hidden == tuple(theirs["hidden"])


def test_fn_main_programs_match_pyserq_014():
    if not (Path(PYSERQ_014) / "pyserq").is_dir():
        pytest.skip(f"pyserq 0.1.4 is not installed at {PYSERQ_014}")
    jobs = {}
    for path in MAIN:
        program_, diagnostics = api.link_source(path.read_text(encoding="utf-8"), str(path))
        if program_ is None:
            continue  # a program the expander cannot take yet is the expander's test
        match = HORIZON_RE.search(path.read_text(encoding="utf-8"))
        jobs[str(path)] = (program_, float(match.group(1)) if match else 10.0)
    script = (
        "import json, sys, pyserq\n"
        "jobs = json.loads(sys.argv[1])\n"
        "print(json.dumps({p: json.loads(pyserq.compile(p, horizon=h).to_json())"
        " for p, h in jobs.items()}))\n"
    )
    argument = json.dumps({p: h for p, (_, h) in jobs.items()})
    env = {**os.environ, "PYTHONPATH": PYSERQ_014}
    out = subprocess.run(
        [sys.executable, "-c", script, argument], env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    references = json.loads(out.stdout)
    assert len(references) >= 5
    for path, (linked, horizon) in jobs.items():
        theirs = references[path]
        for key in ("version", "attr_types", "sides"):  # IR v12's additions
            theirs.pop(key, None)
        for pool_ in theirs["pools"]:  # v12 spells `preempt lifo` as its victim order
            if pool_["preempt"] != "None":
                pool_["preempt"] = "Lifo"
        ours = program(linked)
        del ours["version"]
        ours["horizon"] = horizon
        assert _differences(ours, theirs) == [], path
