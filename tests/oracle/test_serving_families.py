"""A sample of the serving and queue differential searches in CI (`scripts/search_step.py
--family serving | queues`, tests/sim/NOTES.md §17 has the whole search): programs of
tests/oracle/serving_family.py and queue_family.py, each run in serq and in the
reference, pyserq 0.1.2 (or 0.1.4 for the `fn main` dialect), every report field and
every observation compared exactly; and two random programs compared over seeds.

Every program agrees but the ones listed, each for a reason NOTES §17 or §18 gives.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the families and the comparison
import differential  # noqa: E402
import queue_family  # noqa: E402
import serving_family  # noqa: E402

pytest.importorskip("pyserq")

HORIZON = re.compile(r"^// horizon: (\S+)", re.M)


def _compare(family, k: int, dialect: str, tmp_path: Path) -> tuple[str, str]:
    text = family.program(k, dialect)
    path = tmp_path / f"g{k}.sq"
    path.write_text(text)
    if dialect == "main":
        horizon = float(HORIZON.search(text).group(1))
        return differential.compare(str(path), main=True, full=True, horizon=horizon, seed=1)
    return differential.compare(str(path), full=True)


# Programs 0-11 of each family, with the verdicts of NOTES §17 for those that do not agree:
# a growth that can never be satisfied, or a stall, which serq names and the reference
# runs past in silence; a load beyond its hold's allocation, refused by both; a run
# preempting itself as it arrives, which 0.1.2 leaves unpositioned (NOTES §14 V); an
# engine's plan over a pool of infinite cap (`serq/sim/step.py`, `_crossings`, pending).
SERVING = {
    1: ("serq-error", "can never be satisfied"),
    5: ("skip", "a livelock at one instant: the reference hangs"),
    11: ("serq-error", "the run can never move again"),
}
SERVING_MAIN = {
    1: ("serq-error", "can never be satisfied"),
    11: ("serq-error", "the run can never move again"),
}
QUEUES = {
    6: ("differ", ".ended: serq 1 | reference 3"),
}
# a read that the decoder's plan starts at a NIC or link declared above the engine: both
# references end it only at the next event (NOTES §18, x_ps_above_engine.sq)
QUEUES_MAIN = {
    3: ("differ", ".observes.transfer_time.mean"),
}


def _check(verdict: str, detail: str, known: tuple[str, str] | None) -> None:
    if known is None:
        assert verdict == "same", detail
    else:
        assert (verdict, known[1] in detail) == (known[0], True), f"{verdict}: {detail}"


@pytest.mark.parametrize("k", [k for k in range(12) if SERVING.get(k, ("",))[0] != "skip"])
def test_serving_program_agrees_with_the_reference(k, tmp_path):
    _check(*_compare(serving_family, k, "det", tmp_path), SERVING.get(k))


@pytest.mark.parametrize("k", range(12))
def test_fn_main_serving_program_agrees_with_pyserq_014(k, tmp_path, run014):
    _check(*_compare(serving_family, k, "main", tmp_path), SERVING_MAIN.get(k))


@pytest.mark.parametrize("k", range(12))
def test_queue_program_agrees_with_the_reference(k, tmp_path):
    _check(*_compare(queue_family, k, "det", tmp_path), QUEUES.get(k))


@pytest.mark.parametrize("k", range(12))
def test_fn_main_queue_program_agrees_with_pyserq_014(k, tmp_path, run014):
    _check(*_compare(queue_family, k, "main", tmp_path), QUEUES_MAIN.get(k))


@pytest.mark.parametrize("k", [2, 3])
def test_random_serving_program_agrees_in_distribution(k, tmp_path):
    """Seeds 1-4 a side: every mean within 5 standard errors (`compare_statistics`)."""
    path = tmp_path / f"r{k}.sq"
    path.write_text(serving_family.program(k, "random"))
    verdict, detail = differential.compare_statistics(str(path), seeds=4, horizon=200.0)
    assert verdict == "same", detail


@pytest.mark.parametrize(("family", "k"), [(serving_family, 2), (queue_family, 0)])
def test_fn_main_random_program_agrees_with_pyserq_014_in_distribution(family, k, tmp_path, run014):
    """`main-random` draws in the `fn main` dialect (no run block, `turn;` runs the
    server); seeds 1 and 1_000_004, ... a side (NOTES §73: 0.1.4's consecutive seeds share
    their sessions' streams): every mean within 5 standard errors."""
    text = family.program(k, "main-random")
    assert "fn main() {" in text and "run {" not in text and "~exp(" in text
    path = tmp_path / f"r{k}.sq"
    path.write_text(text)
    verdict, detail = differential.compare_statistics(str(path), 4, main=True, horizon=200.0)
    assert verdict == "same", detail


def test_the_families_draw_the_whole_vocabulary_and_domain():
    """Every form the brief names, and constants of 0, below 0, inf and fractions, occur
    in the first programs of the families."""
    texts = "\n".join(
        [serving_family.program(k, d) for k in range(120) for d in ("det", "main", "random")]
        + [queue_family.program(k) for k in range(120)]
    )
    for needle in (
        "prefill (",
        "decode on",
        "transfer (",
        "transfer on egress, ingress",
        "transfer[",
        "tool (",
        "prefill[j]",
        "request;",
        "request gw;",
        "queue gw : gateway",
        ": prefill {",
        ": decode {",
        ": link {",
        "decode (prompt) from src",
        "from P[i]",
        "mark first_token;",
        "D.first_token",
        "nic ps(",
        "D pull P",
        "latency",
        "share maxmin",
        "share bottleneck",
        "at admission (",
        "branch with (",
        "max q in N (",
        "choose j in",
        "spill host via",
        "lease kv",
        "reserve (",
        "reuse (",
        "cache (",
        "grow m (",
        "load m (",
        "drop m;",
        "release kvP;",
        "gauge g",
        "trace ",
        " arrivals ",
        "arrive batch(",
        "arrive closed(",
        "arrive renewal(",
        "arrive poisson(",
        "arrive none;",
        "fn main()",
        "cost(kv, ",
        "chunk long_prefill(reqs, chunk);",
        "let chunk = 0;",
        "let chunk = -1;",
        "let chunk = inf;",
        "let chunk = 0.5;",
        "cap inf",
        "cap 300.5",
        "block 2.5",
        "lease kvP (0)",
        "lease kvP (1.5)",
        "evict by (",
        "preempt none",
        "serve exclusive prefill",
        "serve by (remaining)",
    ):
        assert needle in texts, needle
