"""vLLM v1's own scheduler driven step by step: the scenarios of tests/oracle/vllm_model.py
run through the real `Scheduler.schedule()` / `update_from_output()` and KV cache manager,
on the step clock or a clock of seconds (`vllm_model.Clock`: each step lasts its batch's
cost), read back as the model's `Result` so that the two (and serq) can be compared
request for request.

This module imports vLLM, which the test suite does not install: it runs in an
environment of its own (see scripts/record_vllm_real.py, which records its outcomes as
data for tests/oracle/test_vllm_real.py). It runs vLLM 0.30.0 and 0.34.0. The driver
follows tests/sim/NOTES.md §23's mapping notes:

- `num_gpu_blocks = N + 1` for a pool of N blocks (vLLM's block pool keeps one null
  block), prefix caching on, `max_num_batched_tokens` the budget, `max_num_seqs`,
  `long_prefill_token_threshold` the chunk (vLLM 0.30 caps every prefill by it: the
  model's `Config(alone=False)`; vLLM 0.34 not a request that is alone: `alone=True`,
  lib/vllm.sq's `long_prefill`);
- one `schedule()` a step, a request added at the step it is sent, before that step's
  `schedule()`, requests sent at one step in the model's order (`vllm_model.Model._send`);
- a fake model runner: every scheduled token is computed, and a request whose computed
  tokens reach its `num_tokens` samples one token (the session's next token id, so that
  its next turn's prompt, the previous prompt, the outputs and new tokens, carries the
  same block hashes); `max_tokens` its output length, EOS ignored;
- the scheduling policy `Config.policy` ("fcfs", vLLM's default, or "priority"), each
  request's priority its turn's (`Turn.priority`) or else its session's (`Session.priority`)
  and its arrival time its place
  in the order of the sends (time, then session: two requests never tie on it);
- sessions share no token: every token id is drawn from the session's own range, and a
  forced miss replaces the first token of the prompt by a nonce (new hashes from there);
  a stop turn (`Turn.stop`) has `max_tokens` past its output length, with `EOS` as its
  stop token, and the runner samples `EOS` as its last token (vLLM's `check_stop` ends it
  as FINISHED_STOPPED, not length-capped; EOS is no session's token otherwise).

Per request it records every output token's step (`Driver.token_times`: the inter-token
latencies), the first- and last-token times (a token sampled in a step exists
when the step ends: t + 1 on the step clock), the preemptions, and the cached tokens at
its first and last admission (the computed tokens a schedule step admits it with, before
that step's chunk).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import vllm_model
from vllm_model import STEPS, Clock, Outcome, Result, Scenario

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")

import torch  # noqa: E402
import vllm  # noqa: E402
import vllm.triton_utils  # noqa: E402

# vLLM from 0.34 refuses an x86 CPU without triton-cpu as it checks the config, for the
# model runner's kernels; the scheduler runs none
vllm.triton_utils.HAS_TRITON = True
from vllm.config import CacheConfig, ModelConfig, SchedulerConfig, VllmConfig  # noqa: E402
from vllm.sampling_params import SamplingParams  # noqa: E402
from vllm.utils.hashing import sha256  # noqa: E402
from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash  # noqa: E402
from vllm.v1.core.sched.scheduler import Scheduler  # noqa: E402
from vllm.v1.kv_cache_interface import (  # noqa: E402
    FullAttentionSpec,
    KVCacheConfig,
    KVCacheGroupSpec,
)
from vllm.v1.outputs import ModelRunnerOutput  # noqa: E402
from vllm.v1.request import Request, RequestStatus  # noqa: E402
from vllm.v1.structured_output import StructuredOutputManager  # noqa: E402

VERSION = vllm.__version__
MAX_MODEL_LEN = 1 << 16
SESSION_TOKENS = 1 << 20  # token ids of session i: i * SESSION_TOKENS + ...
EOS = 2


def _model_dir() -> str:
    """A local model directory of one config.json (an OPT-125m), so that no hub is read."""
    import json
    import tempfile

    folder = os.path.join(tempfile.gettempdir(), "serq-vllm-real-model")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "config.json")
    if not os.path.exists(path):
        config = {
            "architectures": ["OPTForCausalLM"],
            "model_type": "opt",
            "bos_token_id": 2,
            "eos_token_id": EOS,
            "pad_token_id": 1,
            "hidden_size": 768,
            "ffn_dim": 3072,
            "num_attention_heads": 12,
            "num_hidden_layers": 12,
            "max_position_embeddings": MAX_MODEL_LEN,
            "word_embed_proj_dim": 768,
            "do_layer_norm_before": True,
            "torch_dtype": "float16",
            "vocab_size": 1 << 30,
        }
        with open(path, "w") as f:
            json.dump(config, f)
    return folder


def scheduler(config: vllm_model.Config) -> Scheduler:
    """vLLM's scheduler for the model's engine `config` (its `order` must be vLLM's)."""
    if config.order != "admission":
        raise ValueError("vLLM serves its running requests in admission order only")
    model_config = ModelConfig(
        model=_model_dir(),
        skip_tokenizer_init=True,
        dtype="float16",
        seed=0,
        max_model_len=MAX_MODEL_LEN,
    )
    scheduler_config = SchedulerConfig(
        max_num_seqs=config.max_seqs,
        max_num_batched_tokens=config.budget,
        max_model_len=MAX_MODEL_LEN,
        long_prefill_token_threshold=config.chunk,
        enable_chunked_prefill=True,
        policy=config.policy,
        is_encoder_decoder=False,
    )
    cache_config = CacheConfig(
        block_size=config.block_size,
        gpu_memory_utilization=0.9,
        cache_dtype="auto",
        enable_prefix_caching=True,
    )
    vllm_config = VllmConfig(
        scheduler_config=scheduler_config, model_config=model_config, cache_config=cache_config
    )
    num_blocks = config.num_blocks + 1  # and the null block
    kv_cache_config = KVCacheConfig(
        num_blocks=num_blocks,
        kv_cache_tensors=[],
        kv_cache_groups=[
            KVCacheGroupSpec(
                ["layer"],
                FullAttentionSpec(
                    block_size=config.block_size,
                    num_kv_heads=1,
                    head_size=1,
                    dtype=torch.float32,
                ),
            )
        ],
    )
    cache_config.num_gpu_blocks = num_blocks
    return Scheduler(
        vllm_config=vllm_config,
        kv_cache_config=kv_cache_config,
        log_stats=False,
        structured_output_manager=StructuredOutputManager(vllm_config),
        block_size=config.block_size,
    )


class Driver:
    """One scenario on vLLM's scheduler, step by step, on the step clock or on `clock`."""

    def __init__(self, scenario: Scenario, clock: Clock | None = None) -> None:
        self.scenario = scenario
        self.cfg = scenario.config
        self.clock = STEPS if clock is None else clock
        self.sched = scheduler(self.cfg)
        init_none_hash(sha256)
        self.hasher = get_request_block_hasher(self.cfg.block_size, sha256)
        n = len(scenario.sessions)
        self.context: list[list[int]] = [[] for _ in range(n)]  # the session's token ids
        self.next_id = [i * SESSION_TOKENS + 3 for i in range(n)]  # its next fresh token
        self.sends: list[tuple[float, float, int, tuple[int, int]]] = []
        self.seq = 0
        self.arrivals = 0  # the requests' arrival order (`Request.arrival_time`)
        self.arrival: dict[tuple[int, int], float] = {}
        self.requests: dict[str, dict[str, Any]] = {}
        self.preemptions = 0
        self.rejections = 0
        self.iterations = 0
        # every step's end on a clock of seconds (a token's time is its step's end: its
        # `tokens` are indices into it); on the step clock a token's time is its step
        self.ends: list[float] = []
        for i, s in enumerate(scenario.sessions):
            self._send(i, 0, s.at * self.clock.tick, 0)

    def _fresh(self, session: int, n: int) -> list[int]:
        first = self.next_id[session]
        self.next_id[session] = first + n
        return list(range(first, first + n))

    def _send(self, session: int, turn: int, at: float, begun: float) -> None:
        self.sends.append((at, begun, self.seq, (session, turn)))
        self.seq += 1

    def _add(self, session: int, turn: int) -> None:
        t = self.scenario.sessions[session].turns[turn]
        prompt = self.context[session] + self._fresh(session, t.new)
        if t.forced:  # a nonce at the head: no earlier block of the session matches
            prompt[0] = self._fresh(session, 1)[0]
        bs = self.cfg.block_size
        rid = f"{session}-{turn}"
        info: dict[str, Any] = {
            "session": session,
            "turn": turn,
            "prompt": prompt,
            "out": t.out,
            "stop": t.stop,
            "first": None,
            "last": None,
            "preemptions": 0,
            "cached": [],
            "outputs": [],
            "outputs_admitted": 0,
            "tokens": [],  # each output token's step (`ends`' index, or the time on steps)
        }
        self.requests[rid] = info
        if -(-len(prompt) // bs) > self.cfg.num_blocks:  # as the model refuses it
            self.rejections += 1
            info["rejected"] = True
            return
        request = Request(
            request_id=rid,
            prompt_token_ids=list(prompt),
            # a stop turn: a longer budget, and the stop token as its `out`-th token
            sampling_params=SamplingParams(
                max_tokens=t.out + t.stop, ignore_eos=True, stop_token_ids=[EOS] if t.stop else None
            ),
            pooling_params=None,
            arrival_time=self.arrival[(session, turn)],
            priority=self.scenario.sessions[session].priority if t.priority is None else t.priority,
            block_hasher=self.hasher,
        )
        self.sched.add_request(request)

    def run(self, horizon: int = 100_000) -> Result:
        """Step until every session has ended: each step starts when the one before it
        ends, or when the next request is sent if none runs or waits."""
        t: float = 0
        steps = 0
        while self.sends or self.sched.has_unfinished_requests():
            if steps >= horizon:
                raise RuntimeError(f"not drained by step {horizon}")
            end = self.step(t)
            steps += 1
            if end == t:  # nothing to schedule until the next send
                if not self.sends:
                    raise RuntimeError(f"stuck at {t}: requests wait, none can run")
                end = max(t, min(s[0] for s in self.sends))
            t = end
        return self.result()

    def step(self, t: float) -> float:
        """The step that starts at `t`; returns when it ends (`t` if it did nothing)."""
        arrived = sorted((s for s in self.sends if s[0] <= t), key=lambda s: s[:3])
        self.sends = [s for s in self.sends if s[0] > t]
        # their arrival times: in the order of their sends, then of their sessions (a
        # later step's sends come after every earlier one's), so that no two tie and the
        # priority policy's (priority, arrival_time) never falls to the request id
        for s in sorted(arrived, key=lambda s: (s[0], s[3][0])):
            self.arrival[s[3]] = float(self.arrivals)
            self.arrivals += 1
        for s in arrived:
            self._add(*s[3])
        if not self.sched.has_unfinished_requests():
            return t
        sched = self.sched
        out = sched.schedule()
        scheduled = out.num_scheduled_tokens
        preempted = getattr(out, "preempted_req_ids", None) or set()
        for rid in preempted:
            self.requests[rid]["preemptions"] += 1
            self.preemptions += 1
        if scheduled or preempted:
            self.iterations += 1
        # admitted this step: new requests and resumed ones (computed = hit + chunk now)
        for rid, n in scheduled.items():
            request = sched.requests[rid]
            info = self.requests[rid]
            admitted = len(info["cached"]) <= info["preemptions"]
            if admitted:
                info["cached"].append(request.num_computed_tokens - n)
                info["outputs_admitted"] = len(info["outputs"])
        end = t + self._cost(scheduled) if scheduled or preempted else t
        if scheduled or preempted:
            self.ends.append(end)
        key = int(end) if self.clock is STEPS else len(self.ends) - 1
        # the fake model runner
        req_ids = list(scheduled)
        sampled: list[list[int]] = []
        for rid in req_ids:
            request = sched.requests[rid]
            if request.num_computed_tokens >= request.num_tokens:
                info = self.requests[rid]
                if info["stop"] and len(info["outputs"]) == info["out"] - 1:
                    token = EOS  # the stop token: vLLM's check_stop ends the request
                else:
                    token = self._fresh(info["session"], 1)[0]
                sampled.append([token])
            else:
                sampled.append([])
        fields = {f.name for f in dataclasses.fields(ModelRunnerOutput)}
        runner = ModelRunnerOutput(
            req_ids=req_ids,
            sampled_token_ids=sampled,
            **(
                {"req_id_to_index": {rid: i for i, rid in enumerate(req_ids)}}
                if "req_id_to_index" in fields  # vLLM 0.30 (0.34 derives it)
                else {}
            ),
        )
        sched.update_from_output(out, runner)
        finished = []
        for rid, tokens in zip(req_ids, sampled, strict=True):
            if not tokens:
                continue
            info = self.requests[rid]
            info["outputs"].append(tokens[0])
            info["tokens"].append(key)
            if info["first"] is None:
                info["first"] = end
            if len(info["outputs"]) >= info["out"]:
                finished.append(rid)
        # the sessions go on as the model's do (`Model._update`): those whose last token
        # came with their prefill after the others
        going_on = sorted(
            finished,
            key=lambda rid: self.requests[rid]["outputs_admitted"] == self.requests[rid]["out"] - 1,
        )
        for rid in going_on:
            request = sched.requests.get(rid)
            if request is not None and request.status == RequestStatus.RUNNING:
                raise RuntimeError(f"request {rid} has all its tokens but still runs")
            self._finish(end, rid)
        return end

    def _cost(self, scheduled: dict[str, int]) -> float:
        """The step's length: the clock's cost of its batch, as serQ's step engine totals
        it (`decoders`, `kv_decode` the decoding requests' blocks after this step's
        allocation, in tokens, `prefilled` and `attention` the prefill chunks', t * (k +
        t / 2) for a chunk of t tokens after k computed). A request decodes once it has
        sampled a token since its latest admission: before, its tokens are its prefill
        (lib/vllm.sq's prefill run, a recompute after a preemption included)."""
        c = self.clock
        if c is STEPS:
            return 1  # whole steps (the recorded outcomes are ints)
        decoders = kv_decode = prefilled = attention = 0
        for rid, n in scheduled.items():
            info = self.requests[rid]
            if len(info["outputs"]) > info["outputs_admitted"]:
                decoders += 1
                blocks = self.sched.kv_cache_manager.get_block_ids(rid)[0]
                kv_decode += len(blocks) * self.cfg.block_size
            else:
                k = self.sched.requests[rid].num_computed_tokens - n
                prefilled += n
                attention += n * (k + n / 2)
        return c.c0 + c.d * decoders + c.e * kv_decode + c.a * prefilled + c.b * attention

    def _finish(self, t: float, rid: str) -> None:
        info = self.requests[rid]
        info["last"] = t
        session, turn = info["session"], info["turn"]
        self.context[session] = info["prompt"] + info["outputs"]
        turns = self.scenario.sessions[session].turns
        if turn + 1 < len(turns):
            self._send(session, turn + 1, t + turns[turn + 1].think * self.clock.tick, t)

    def result(self) -> Result:
        out = {}
        for info in self.requests.values():
            cached = info["cached"]
            out[(info["session"], info["turn"])] = Outcome(
                info["first"],
                info["last"],
                info["preemptions"],
                cached[0] if cached else None,
                cached[-1] if cached else None,
            )
        return Result(dict(sorted(out.items())), self.preemptions, self.rejections, self.iterations)

    def token_times(self) -> dict[tuple[int, int], list[float]]:
        """Every request's output tokens' times, in order."""
        ends = self.ends
        return {
            (info["session"], info["turn"]): [
                k if self.clock is STEPS else ends[k] for k in info["tokens"]
            ]
            for info in self.requests.values()
        }


def simulate(scenario: Scenario, clock: Clock | None = None, horizon: int = 100_000) -> Result:
    """vLLM's outcome of a scenario, on the step clock or on `clock`."""
    return Driver(scenario, clock).run(horizon)
