"""The vLLM examples against pyserq 0.1.2: exact where the program draws nothing, within
confidence intervals where it does (the multi-turn engine, lightly and heavily loaded).

The random ones are written as the reference writes its own: lib/vllm.sq's
`vllm_request`, the engine's chunk through lib/vllm.sq's `long_prefill` with `let chunk =
0;` (no cap; a request alone takes the whole budget), the multi-turn one from its two
sides (`workload { session { ... request; ... } }` and `server { ... }`). Before chunk 0
meant no cap, these programs completed no request at all."""

from __future__ import annotations

from pathlib import Path

import pytest

import serq

pyserq = pytest.importorskip("pyserq")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SAFETY = 2.5  # combined 95 % intervals


def both(name: str, **options):
    path = str(EXAMPLES / name)
    ours = serq.run(serq.compile(path, **options))
    theirs = pyserq.run(pyserq.compile(path, **options))
    return ours, theirs


@pytest.mark.parametrize("name", ["vllm_request.sq", "vllm_replay.sq"])
def test_deterministic_examples_equal_the_reference(name):
    ours, theirs = both(name)
    assert sorted(ours.observes) == sorted(theirs.observes)
    for obs in theirs.observes:
        a, b = ours.observe(obs), theirs.observe(obs)
        assert list(a.samples) == list(b.samples), obs
        assert list(a.times) == list(b.times), obs
    for mine, row in zip(ours.stages, theirs.stages, strict=True):
        assert mine.iterations == row.iterations
    for mine, row in zip(ours.pools, theirs.pools, strict=True):
        assert (mine.preemptions, mine.admissions) == (row.preemptions, row.admissions)


LOADS = {
    "light": {"Lambda": 0.5},
    "loaded": {"Lambda": 2.0, "blocks": 250},
}


@pytest.mark.parametrize("load", LOADS)
def test_multi_turn_engine_within_intervals(load):
    ours, theirs = both("vllm.sq", horizon=1500, warmup=100, sets=LOADS[load])
    for obs in ("hit_rate", "ttft", "response", "prefill_tokens"):
        a, b = ours.observe(obs), theirs.observe(obs)
        assert abs(a.mean - b.mean) <= SAFETY * (a.ci + b.ci), (obs, a.mean, b.mean)
    kv_ours = next(p for p in ours.pools if p.name == "kv")
    kv_theirs = next(p for p in theirs.pools if p.name == "kv")
    if load == "loaded":
        assert kv_ours.preemptions > 0 and kv_theirs.preemptions > 0
        assert kv_ours.evicted_entries > 0 and kv_theirs.evicted_entries > 0


@pytest.mark.parametrize("name", ["vllm_single_turn.sq", "vllm_subagents.sq", "vllm_chat.sq"])
def test_workloads_within_intervals(name):
    ours, theirs = both(name)
    assert ours.observe("prefill_tokens").count >= 40  # requests complete
    for obs in theirs.observes:
        a, b = ours.observe(obs), theirs.observe(obs)
        if b.count < 40 or a.ci != a.ci or b.ci != b.ci:
            continue
        assert abs(a.mean - b.mean) <= SAFETY * (a.ci + b.ci) + 1e-12, (obs, a.mean, b.mean)
