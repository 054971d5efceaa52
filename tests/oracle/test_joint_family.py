"""A sample of the search of several step engines against the reference in CI
(`scripts/search_step.py --family joint`, tests/sim/NOTES.md §31 has the whole search):
the first programs of tests/oracle/joint_family.py (replicas behind a router, prefill
and decode engines with a KV transfer), each run in serq and in pyserq 0.1.2, the whole
reports compared; and a few run three ways in serq (generated code, interpreter, every
iteration stepped); and the first programs' `fn main` twins against pyserq 0.1.4.

Every program agrees but the ones listed, each for the reason NOTES §31 gives: V (0.1.2
caches a preempted growing run's allocation, serq its position; the program equals
0.1.2 once its holds say `reuse (0)`), E (a resident planned in one engine's running
iteration preempted by another engine's growth on the memory they share: its token
counts in 0.1.2's iteration and not in serq's), a load beyond the hold's allocation that
both refuse, and a panic of the reference.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the family and the comparison
import differential  # noqa: E402
import joint_family  # noqa: E402

pytest.importorskip("pyserq")

SAMPLE = range(40)
KNOWN = {
    2: ("reference-error", "no entry found for key"),
    14: ("differ", ".stages[0].mean_number: serq 0.7777777777777778 | reference 0.9658"),
    20: ("differ", ".observes.ttft.count: serq 16 | reference 6"),
    23: ("differ", ".pools[2].evicted_units: serq 18 | reference 26"),
    26: ("differ", ".observes.ttft.count: serq 7458 | reference 369"),
    34: ("both-error", "a load must fit the allocation"),
    38: ("differ", ".stages[0].decode_only: serq 0.005 | reference 0.01"),
}
# V: equal to 0.1.2 with `reuse (0)` on every hold that consumes a cached prefix
V = (14, 26)


def with_reuse_zero(text: str) -> str:
    """`text` with `reuse (0)` on the family's holds (no consumed prefix, so no position
    beyond the allocation to cache at a preemption)."""
    text = text.replace("reserve (known)\n", "reserve (known) reuse (0)\n")
    return re.sub(r"(hold \S+ \(1\), \S+ \((?:[^()]|\([^()]*\))*\)) \{", r"\1 reuse (0) {", text)


def _compare(text: str, tmp_path: Path, name: str) -> tuple[str, str]:
    path = tmp_path / name
    path.write_text(text)
    return differential.compare(str(path), 60.0, full=True)


@pytest.mark.parametrize("k", SAMPLE)
def test_family_program_agrees_with_the_reference(k, tmp_path):
    verdict, detail = _compare(joint_family.program(k), tmp_path, f"g{k}.sq")
    differential.expect(verdict, detail, KNOWN.get(k))


@pytest.mark.parametrize("k", V)
def test_v_programs_agree_without_a_consumed_prefix(k, tmp_path):
    text = with_reuse_zero(joint_family.program(k))
    assert text != joint_family.program(k)
    verdict, detail = _compare(text, tmp_path, f"g{k}_reuse0.sq")
    assert verdict == "same", detail


def test_e_differs_only_in_the_running_iteration_of_the_victim(tmp_path):
    """g38: four replicas on one memory; at 6 E[2]'s growth preempts session 4, planned
    for half a token in E[0]'s running iteration. 0.1.2 counts that iteration as decoding
    one request, serq as decoding none; every sample and every other figure agree."""
    path = tmp_path / "g38.sq"
    path.write_text(joint_family.program(38))
    mine, theirs = (
        differential.ours(str(path), True),
        differential.reference(str(path), 60.0, full=True),
    )
    found = differential.report_differences(mine["ok"], theirs["ok"])
    assert [line.split(":")[0] for line in found] == [
        ".stages[0].decode_only",
        ".stages[0].mean_decodes",
        ".stages[0].mean_decode_step",
    ]


@pytest.mark.parametrize("k", range(12))
def test_fn_main_twin_agrees_with_pyserq_014(k, tmp_path, run014):
    """The same choices in the `fn main` dialect against 0.1.4 (NOTES §31)."""
    text = joint_family.program(k, "main")
    path = tmp_path / f"m{k}.sq"
    path.write_text(text)
    horizon = float(re.search(r"^// horizon: (\S+)", text, re.M).group(1))
    verdict, detail = differential.compare(str(path), main=True, full=True, horizon=horizon, seed=1)
    assert verdict == "same", detail


@pytest.mark.parametrize("k", range(8))
def test_three_paths_agree(k, tmp_path):
    """Generated code, interpreter and stepping every iteration: every sample alike."""
    path = tmp_path / f"g{k}.sq"
    path.write_text(joint_family.program(k))
    verdict, detail = differential.paths(str(path), stepped=True)
    assert verdict in ("same", "serq-error"), detail


def test_the_family_draws_the_whole_domain():
    texts = "\n".join(joint_family.program(k) for k in range(200))
    for needle in (
        "(replicas)",
        "(pd)",
        "stage E[R] : step",
        "stage P[NP] : step",
        "stage D[ND] : step",
        "pool kv {",
        "pool kv[R] {",
        "pool kvP {",
        "pool kvD[ND] {",
        "pool arrivedD[ND]",
        "let R = 4;",
        "choose j in R by (holders(reqs[j]) + queued(reqs[j]));",
        "choose j in R by (used(kv[j]));",
        "choose j in R by (-cachedin(kv[j]), holders(reqs[j]));",
        "set j = (serial + t) - R * floor((serial + t) / R);",
        "transfer on egress[i], ingress[j]",
        "transfer on link",
        "lease kvP[i] (inf)",
        "lease kvP (0)",
        "at admission (known = computed < p ? p : computed + 1,",
        "chunk 0;",
        "chunk -1;",
        "chunk 0.5;",
        "chunk inf;",
        "budget 1;",
        "budget 1.5;",
        "budget inf;",
        "cost max(",
        "cost 0;",
        "preempt none;",
        "cap 300.5;",
        "cap inf;",
        "let bs = 2.5;",
        " + 0.25 + t",
        "run think (0);",
        "server {",
        "request;",
        "serve exclusive prefill;",
        "serve by (-admission);",
        "gauge spread",
    ):
        assert needle in texts, needle
