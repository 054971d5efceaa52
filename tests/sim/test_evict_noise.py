"""Eviction by blocks that are not whole numbers (tests/sim/NOTES.md §28): the float noise a
block-by-block eviction leaves of an entry is no entry.

Ten blocks of 1.1 cached as 11.000000000000002, evicted one block at a time, leave
1.8e-15: serq kept that as an entry (`evicted_entries` 0, `cachedin` 1.8e-15), where both
references count the entry evicted and `cachedin` reads 0, and keep the noise in the
cache's total (`mean_cached`). Found by tests/oracle/sweep_domain.py sweeping `bs` of
examples/oracle/head_of_line.sq to 1.01. Each program here runs on both event paths,
fast-forwarded and stepped, and against pyserq 0.1.2 when it is installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from serq.sim.api import compile_program, execute

# session 0 caches n blocks of b; session 1 takes the whole cap at 1 (n blocks, the units
# rounded up), evicting them all; session 0 reads its prefix at 6
CACHED_THEN_EVICTED = """\
pool kv {{ cap {n} * {b}; block {b}; evict {evict}; }}
stage s : delay;
workload {{ arrive batch(2); }}
session {{
  run s (serial);
  hold kv (({n} - 0.5) * {b}) {{ run s (1); }} cache (serial == 0 ? {n} * {b} : 0);
  run s (5);
  observe left = cachedin(kv);
}}
run {{ horizon 100; warmup 0; seed 1; }}
"""
FAMILY = [
    (b, n, evict)
    for b in ("0.1", "0.3", "1.1", "1.01")
    for n in (3, 10, 1000)
    for evict in ("lru", "by (size)")
]


def _program(b: str, n: int, evict: str) -> str:
    return CACHED_THEN_EVICTED.format(b=b, n=n, evict=evict)


def _runs(text: str, path: str = "t.sq", **sets: str) -> list[dict]:
    """The JSON reports of `text` on both event paths, fast-forwarded and stepped."""
    compiled, diagnostics = compile_program(text, path, sets=sets)
    assert compiled is not None, diagnostics
    out = []
    for codegen in (True, False):
        for fast_forward in (True, False):
            report, ran = execute(compiled, codegen=codegen, fast_forward=fast_forward)
            assert report is not None, [d.message for d in ran]
            whole = json.loads(report.json())
            whole["stages"] = [{**s, "skipped": None} for s in whole["stages"]]
            whole["events"] = whole["skipped"] = None  # a span is events too
            whole["left"] = (
                list(report.observe("left").samples) if "left" in report.observes else []
            )
            out.append(whole)
    return out


@pytest.mark.parametrize(("b", "n", "evict"), FAMILY)
def test_the_noise_of_an_evicted_entry_is_no_entry(b, n, evict):
    runs = _runs(_program(b, n, evict))
    assert all(run == runs[0] for run in runs[1:])
    kv = runs[0]["pools"][0]
    assert kv["evicted_entries"] == 1
    assert runs[0]["left"] == [0.0, 0.0]


@pytest.mark.parametrize(("b", "n", "evict"), FAMILY[::3])
def test_the_noise_is_the_references(b, n, evict, same_as_reference):
    same_as_reference(_program(b, n, evict), "evict.sq")


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("bs", ["1.1", "1.01", "1.25"])
def test_the_step_engines_memory(bs, tmp_path):
    """examples/oracle/head_of_line.sq with fractional blocks: the engine's memory evicts a
    preempted request's prefix block by block (the fast-forward's inline eviction too)."""
    source = ROOT / "examples/oracle/head_of_line.sq"
    runs = _runs(source.read_text(encoding="utf-8"), str(source), bs=bs)
    assert all(run == runs[0] for run in runs[1:])
    assert runs[0]["pools"][1]["evicted_entries"] == 1
    pytest.importorskip("pyserq")
    sys.path.insert(0, str(ROOT / "tests/oracle"))
    import differential  # noqa: PLC0415

    mine = json.loads(json.dumps(differential.ours(str(source), True, sets={"bs": bs})))
    theirs = differential.reference(str(source), 60.0, False, True, sets={"bs": bs})
    assert differential.report_differences(mine["ok"], theirs["ok"]) == []
