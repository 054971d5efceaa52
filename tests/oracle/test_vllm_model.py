"""The vLLM v1 scheduler model (vllm_model.py) as an oracle for the step engine.

1. The model reproduces every hand-worked scenario of tests/sim/test_vllm_oracle.py
   (EXPECTED there), including the one where the real scheduler's running loop ends at a
   self-preemption and the reference serves on (serve_newest_first_preempt).
2. Small scenarios worked by hand pin what the search found (tests/sim/NOTES.md §23): a
   request preempted during its recompute and the allocation at admission, where
   lib/vllm.sq now follows vLLM, and the free queue, where vLLM's own scheduler (0.30.0,
   tests/oracle/test_vllm_real.py) takes a block that holds nothing before a cached
   one, as a serQ pool does (NOTES §38).
3. A CI sample of the random scenarios (vllm_scenarios.py): the model against serq's four
   runs (generated code and interpreter, fast-forward on and off) and pyserq 0.1.2, request
   for request, every verdict pinned (`scripts/search_vllm_model.py` runs the search),
   and a sample of the domain's corners (`vllm_scenarios.generate_domain`).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the model, the scenarios and the comparison
sys.path.insert(0, str(HERE.parent / "sim"))  # the hand-worked table
import vllm_compare  # noqa: E402
import vllm_scenarios  # noqa: E402
from test_vllm_oracle import EXPECTED  # noqa: E402
from vllm_model import Config, Outcome, Scenario, Session, Turn, simulate  # noqa: E402


def _single(at: list[int], prompt: list[int], out: list[int]) -> tuple[Session, ...]:
    return tuple(Session(a, (Turn(p, o),)) for a, p, o in zip(at, prompt, out, strict=True))


_SIX = _single([0, 1, 3, 4, 7, 9], [150, 40, 200, 60, 90, 30], [60, 120, 40, 80, 30, 100])
_TWO = _single([0, 1], [20, 40], [30, 30])

# examples/oracle/<name>.sq as scenarios: block size, blocks, budget, max_seqs, chunk
# (through lib/vllm.sq's long_prefill, so a request alone has no cap), serve order.
HAND: dict[str, Scenario] = {
    "self_preemption": Scenario(Config(16, 4, 64, 4, 0), _single([0], [40], [40])),
    "chunked_prefill": Scenario(
        Config(16, 64, 32, 8, 0), _single([0, 0, 2], [20, 24, 200], [30, 30, 10])
    ),
    "request_cap": Scenario(
        Config(16, 64, 64, 2, 0),
        _single([0, 0, 0, 1, 1], [30, 20, 25, 10, 15], [8, 12, 5, 6, 4]),
    ),
    "head_of_line": Scenario(
        Config(16, 10, 256, 8, 0), _single([0, 1, 2, 2], [100, 120, 10, 10], [30, 10, 5, 5])
    ),
    "chunk_cap": Scenario(Config(16, 64, 64, 8, 24), _single([0, 0, 1], [100, 70, 10], [6, 6, 6])),
    "mixed39": Scenario(Config(16, 39, 96, 4, 64), _SIX),
    "serve_admission": Scenario(Config(16, 30, 96, 4, 64), _SIX),
    "serve_prefill_first": Scenario(Config(16, 30, 96, 4, 64, order="prefill_first"), _SIX),
    "serve_newest_first": Scenario(Config(16, 64, 96, 4, 64, order="newest"), _SIX),
    "serve_newest_first_preempt": Scenario(Config(16, 5, 32, 4, 0, order="newest"), _TWO),
    "serve_newest_first_victim": Scenario(Config(16, 6, 32, 4, 0, order="newest"), _TWO),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_model_reproduces_the_hand_worked_scenario(name):
    """EXPECTED counts a request's admissions less one: a request refused after its
    preemption (self_preemption) counts 0 there and 1 in the model."""
    result = simulate(HAND[name])
    requests = {
        session: (
            None if o.first is None else float(o.first),
            None if o.last is None else float(o.last),
            o.preemptions - (o.last is None and o.preemptions > 0),
        )
        for (session, _), o in result.requests.items()
    }
    got = (requests, result.preemptions, result.rejections, result.iterations)
    assert got == EXPECTED[name]


# Two requests of 100 tokens, 10 blocks of 16, budget 256, a plain threshold of 32.
# vLLM allocates the first chunk: step 0 admits both with 2 blocks each (each reserves
# 7 of the free 10, then 8), they grow to 4 and to 6 blocks; at step 2 r1 finds none
# free and preempts itself (4 blocks, 64 tokens cached). r0 prefills its last 4 at step
# 3 (taking r1's block 3 from the free queue's head: r1 keeps 48 cached) and decodes at 4:
# tokens at 4 and 5. r1 comes back at 5 with 48 cached: 32, then 20, first token 7, last 8.
# lib/vllm.sq's header before NOTES §23 (C) allocated min(known, hit + budget_left) =
# 100 tokens, 7 blocks, for r0 at step 0, so r1 (7 to reserve, 3 free) waited until r0
# ended at 5: 32, 32, 32, 4, first token 9, last 10, no preemption.
FIRST_CHUNK = Scenario(Config(16, 10, 256, 4, 32, alone=False), _single([0, 0], [100, 100], [2, 2]))
FIRST_CHUNK_VLLM = {(0, 0): Outcome(4, 5, 0, 0, 0), (1, 0): Outcome(7, 8, 1, 0, 48)}
FIRST_CHUNK_OLD_HEADER = {(0, 0): Outcome(4, 5, 0, 0, 0), (1, 0): Outcome(9, 10, 0, 0, 0)}

# 4 blocks of 4, one request at a time. s0 (9 tokens, 1 out) leaves blocks 0, 1 cached
# and 2 partial. s1 (5 tokens) takes 3 and 2 (free, holding nothing) and leaves 3 cached
# and 2 partial. s2 (4 tokens) takes block 2, which holds nothing (vLLM 0.30.0 frees such
# a block to the free queue's head), and s0's next turn (13 tokens, sent at 6) finds 8
# cached, as in a serQ pool, which evicts only when its free capacity is short. One free
# queue in LRU order (the model's reading of vLLM before NOTES §38, `one_queue`) has the
# queue 1, 0, 2, 3 when s2 comes: s2 takes block 1, evicting s0's second block, and the
# turn finds 4.
FREE_QUEUE = Scenario(
    Config(4, 4, 64, 1, 0),
    (
        Session(0, (Turn(9, 1), Turn(3, 1, 5))),
        Session(1, (Turn(5, 1),)),
        Session(2, (Turn(4, 1),)),
    ),
)
FREE_QUEUE_HIT = {"vllm": 8, "one_queue": 4}


def test_vllm_allocates_the_first_chunk_at_admission(tmp_path):
    """lib/vllm.sq allocates the hit and lets the first chunk grow the hold (NOTES §23, C)."""
    assert simulate(FIRST_CHUNK).requests == FIRST_CHUNK_VLLM
    old = replace(FIRST_CHUNK, config=replace(FIRST_CHUNK.config, first_chunk=False))
    got = {k: replace(o, cached_first=0) for k, o in simulate(old).requests.items()}
    assert got == FIRST_CHUNK_OLD_HEADER
    verdict, sides = vllm_compare.compare(FIRST_CHUNK, tmp_path, reference=_has_reference())
    assert verdict == "same", sides


def test_vllm_takes_a_block_that_holds_nothing_before_a_cached_one():
    assert simulate(FREE_QUEUE).requests[(0, 1)].cached_last == FREE_QUEUE_HIT["vllm"]
    one_queue = replace(FREE_QUEUE, config=replace(FREE_QUEUE.config, one_queue=True))
    assert simulate(one_queue).requests[(0, 1)].cached_last == FREE_QUEUE_HIT["one_queue"]


def test_serq_and_the_reference_evict_as_vllm(tmp_path):
    """Both implementations evict as vLLM does, and as a serQ pool does: a block that
    holds nothing first (NOTES §23, D, and §38)."""
    verdict, sides = vllm_compare.compare(FREE_QUEUE, tmp_path, reference=_has_reference())
    assert verdict == "same", sides


# 8 blocks of 2, budget 8, a plain threshold of 1 token. r2 (4 tokens) has its first
# token at 5 (num_tokens 5) and is preempted at once by the growth of r1 and r0; it
# comes back at 8 with nothing cached and recomputes its 5 tokens one a step, and is
# preempted again at 12, its recompute unfinished. vLLM keeps the sampled token: r2
# still needs 3 blocks (5 tokens), which r1 leaves only at 15; its remaining outputs
# end at 23, 2 preemptions. lib/vllm.sq read `known = computed < prompt ? prompt :
# computed + 1` from the position of the last preemption alone, forgot the sampled
# token, came back at 11 with 4 tokens to reserve and was preempted a third time.
RESUMED_TWICE = Scenario(
    Config(2, 8, 8, 4, 1, alone=False),
    (Session(1, (Turn(4, 4),)), Session(0, (Turn(1, 15),)), Session(1, (Turn(4, 5),))),
)
RESUMED_TWICE_VLLM = {
    (0, 0): Outcome(5, 8, 0, 0, 0),
    (1, 0): Outcome(1, 15, 0, 0, 0),
    (2, 0): Outcome(5, 23, 2, 0, 0),
}


def test_a_request_preempted_during_its_recompute_keeps_its_outputs(tmp_path):
    """lib/vllm.sq's `known` is the most the request has known (NOTES §23, B)."""
    assert simulate(RESUMED_TWICE).requests == RESUMED_TWICE_VLLM
    verdict, sides = vllm_compare.compare(RESUMED_TWICE, tmp_path, reference=_has_reference())
    assert verdict == "same", sides


def _report_figures(scenario: Scenario, tmp_path: Path) -> dict:
    path = tmp_path / "figures.sq"
    path.write_text(vllm_scenarios.program(scenario, tmp_path, "figures"))
    ours, figures = vllm_compare.run_serq(path, scenario, True, True, figures=True)
    assert not isinstance(ours, str), ours
    return figures


def test_a_report_takes_one_time_to_first_token_a_request(tmp_path):
    """vLLM takes a request's time to first token once, at its first output. r2 of
    RESUMED_TWICE is preempted at 5, after its first token; lib/vllm.sq observed `ttft`
    in the hold's body after the prefill, so its recompute observed a second one (19),
    and the report's mean TTFT of three requests was over four samples.
    It observes it now only while `known` is the prompt (no token sampled yet)."""
    figures = _report_figures(RESUMED_TWICE, tmp_path)
    assert figures["ttft"] == [1, 4, 4]
    expected = vllm_scenarios.figures(
        vllm_scenarios.comparable(simulate(RESUMED_TWICE)), RESUMED_TWICE
    )
    assert {name: figures[name] for name in expected} == expected  # the model keeps no token


def test_a_report_gives_the_hit_at_the_first_admission_as_vllm_counts_it(tmp_path):
    """vLLM reports a request's cached tokens (num_cached_tokens) from its first
    admission; r1 of FIRST_CHUNK finds nothing then and 48 when it comes back after its
    preemption. lib/vllm.sq's `c` is the last admission's (48), `c_first` the first's (0)."""
    figures = _report_figures(FIRST_CHUNK, tmp_path)
    assert figures["hit_first"] == [0, 0]
    assert figures["hit"] == [0, 48]
    expected = vllm_scenarios.figures(vllm_scenarios.comparable(simulate(FIRST_CHUNK)), FIRST_CHUNK)
    assert {name: figures[name] for name in expected} == expected


# 3 blocks of 4, budget 64, a plain threshold of 1 token. s0 (4 tokens, 1 output) ends
# with its prefill in step 3, the step s1 (2 tokens, 3 outputs) ends its decode; their
# next turns (6 tokens, 2 blocks, one of them a hit) fit one at a time, so the first to
# queue is served first. lib/vllm.sq reveals s0's output length by a decode run of no
# work, an event at that instant, so s1's session goes on first and queues first
# (serQ's order at one instant, in serq and pyserq alike); the model ended both in the
# order the step served them and put s0 first (scenario 300060 of the edge search).
SAME_STEP_ENDS = Scenario(
    Config(4, 3, 64, 4, 1, alone=False),
    (Session(0, (Turn(4, 1), Turn(1, 1))), Session(0, (Turn(2, 3), Turn(1, 1)))),
)
SAME_STEP_ENDS_FIRST = {(0, 1): 8, (1, 1): 6}


def test_a_request_ending_with_its_prefill_goes_on_after_the_others(tmp_path):
    """The model lets the sessions of a step's finished requests go on in serQ's order:
    those that end with their prefill last (NOTES §30)."""
    got = simulate(SAME_STEP_ENDS).requests
    assert {k: got[k].first for k in SAME_STEP_ENDS_FIRST} == SAME_STEP_ENDS_FIRST
    verdict, sides = vllm_compare.compare(SAME_STEP_ENDS, tmp_path, reference=_has_reference())
    assert verdict == "same", sides


# 6 blocks of 4, budget 64, served newest first (not vLLM's order). s1 (sent at 0) and
# s0 (sent at 1) end in the same step, s0 served first; a serQ hold gives its blocks back
# as its session goes on, so s0's blocks are freed (and so evicted) before s1's, and s1's
# next turn finds its 8 tokens. Freed in running order (the model's rule under vLLM's own
# order), s1's blocks came first, s0's next turn evicted one of them and s1 found 4
# (reduced from scenario 300423 of the search with orders).
NEWEST_FREE = Scenario(
    Config(4, 6, 64, 4, 0, order="newest"),
    (Session(1, (Turn(7, 5), Turn(2, 3, 1))), Session(0, (Turn(7, 6), Turn(1, 1, 1)))),
)


def test_under_another_order_a_steps_finished_requests_are_freed_as_they_go_on(tmp_path):
    """Under a serve order other than vLLM's, the model frees a step's finished requests
    in the order their sessions go on, as serQ releases their holds (NOTES §30)."""
    assert simulate(NEWEST_FREE).requests[(1, 1)].cached_last == 8
    verdict, sides = vllm_compare.compare(NEWEST_FREE, tmp_path, reference=False)
    assert verdict == "same", sides


SAMPLE = range(100)


def _has_reference() -> bool:
    try:
        import pyserq  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("k", SAMPLE)
def test_random_scenario_agrees_with_the_model(k, tmp_path):
    scenario = vllm_scenarios.generate(k)
    verdict, sides = vllm_compare.compare(scenario, tmp_path, f"s{k}", _has_reference())
    assert verdict == "same", sides


ORDERS = range(30)


@pytest.mark.parametrize("k", ORDERS)
def test_random_scenario_served_in_another_order_agrees_with_the_model(k, tmp_path):
    """serQ's `serve by (-admission)` and `serve by (decoding)` against the model's running
    loop in that order (not vLLM's; serq only: pyserq 0.1.2 panics on some, NOTES §10)."""
    scenario = vllm_scenarios.with_order(k, vllm_scenarios.generate(k))
    verdict, sides = vllm_compare.compare(scenario, tmp_path, f"o{k}", reference=False)
    assert verdict == "same", sides


DOMAIN = range(300000, 300040)
# vllm_scenarios.generate_domain: the corners (no cap, budgets of 1 and below a block,
# pools too small for one request, max_seqs 1, outputs of 1, long sessions).


@pytest.mark.parametrize("k", DOMAIN)
def test_scenario_at_the_corners_of_the_domain_agrees_with_the_model(k, tmp_path):
    scenario = vllm_scenarios.generate_domain(k)
    verdict, sides = vllm_compare.compare(scenario, tmp_path, f"d{k}", _has_reference())
    assert verdict == "same", sides


def test_the_sample_draws_what_the_brief_asks_for():
    """No cap often, the alone form and the plain one, multi-turn sessions with think
    steps and forced misses, and, in the model, preemptions, rejections and cache hits after preemption."""
    scenarios = [vllm_scenarios.generate(k) for k in SAMPLE]
    results = [simulate(s) for s in scenarios]
    assert sum(s.config.chunk == 0 for s in scenarios) >= 25
    assert {s.config.alone for s in scenarios} == {True, False}
    assert any(t.think > 0 for s in scenarios for x in s.sessions for t in x.turns[1:])
    assert sum(any(t.forced for x in s.sessions for t in x.turns) for s in scenarios) >= 10
    assert sum(r.preemptions > 0 for r in results) >= 15
    assert sum(r.rejections > 0 for r in results) >= 10
    assert any(o.preemptions and o.cached_last for r in results for o in r.requests.values())


def test_the_domain_sample_reaches_its_corners():
    """The domain sample has each corner several times, and the model preempts and
    refuses in it."""
    scenarios = [vllm_scenarios.generate_domain(k) for k in DOMAIN]
    results = [simulate(s) for s in scenarios]
    configs = [s.config for s in scenarios]
    assert sum(c.chunk == 0 for c in configs) >= 10
    assert sum(c.budget == 1 for c in configs) >= 5
    assert sum(1 < c.budget < c.block_size for c in configs) >= 1
    assert sum(c.max_seqs == 1 for c in configs) >= 5
    assert sum(max(len(x.turns) for x in s.sessions) >= 5 for s in scenarios) >= 5
    turns = [t for s in scenarios for x in s.sessions for t in x.turns]
    assert any(t.out == 1 for t in turns) and any(t.new == 1 for t in turns)
    assert sum(r.rejections > 0 for r in results) >= 5
    assert sum(r.preemptions > 0 for r in results) >= 5
