"""An executable model of vLLM v1's scheduler and KV cache manager on a step clock: the
oracle the serQ program of spec §7 (examples/lib/vllm.sq, `vllm_request`) is checked
against (tests/oracle/test_vllm_model.py).

Written from the table of spec §7 and the rules of vLLM v1 (upstream 0c87a197; line
references are the spec's), not from vLLM's source. One call of `Model.step` is one
`Scheduler.schedule()` followed by a fake model runner that computes every scheduled
token and samples one output token for each request whose scheduled tokens reach its
`num_tokens` (`update_from_output`). Step `t` runs from time `t` to `t + 1`: a request
sent at `t` is in the waiting queue when step `t` schedules, and a token sampled in step
`t` exists at time `t + 1` (the serQ programs run with `cost 1`).

The rules, in the order `schedule()` applies them:

- Running requests first, in running order (admission order; `Config.order` can serve
  them in another order, as serQ's `serve by` does, for the hand-worked scenarios), while
  token budget is left (scheduler.py:577, 624-823). Each is given
  `num_tokens - num_computed_tokens` tokens, capped by `long_prefill_token_threshold` when
  that is above 0 (0 is no cap) and by the budget left (scheduler.py:612-616).
- `allocate_slots` block by block (kv_cache_manager.py:371-608): the request needs
  `cdiv(num_computed + new, block_size)` blocks; the missing ones are taken from the head
  of the free queue, dropping a cached block's hash (eviction). If too few are free, the
  last running request (`running[-1]`) is preempted (scheduler.py:742-813): its blocks
  go back to the free queue, `num_computed_tokens = 0`, it is prepended to the waiting
  queue; if it was already scheduled this step, its tokens are given back. If the
  victim is the request itself, the running loop ends.
- Waiting requests, only if the step preempted nobody (scheduler.py:869), while budget
  is left and fewer than `max_num_seqs` run (scheduler.py:877-879), first come first
  served: the prefix cache hit is looked up when the request is scheduled
  (scheduler.py:932-939), the longest run of cached full blocks over at most
  `num_tokens - 1` tokens (kv_cache_manager.py:289-300); admission needs room for the
  whole `num_tokens` (scheduler_reserve_full_isl, kv_cache_manager.py:515-531) but
  allocates the hit plus the chunk only. A request that does not fit blocks the ones
  behind it (scheduler.py:1228-1235).
- Blocks: a block is hashed (cached) once it is full of tokens that are scheduled, prompt
  and generated alike. A request's blocks are freed last block first; those that hold a
  hash are appended to the free queue's tail, the others put at its head
  (`BlockPool.free_blocks` in vLLM 0.30.0), so an allocation takes a block that holds no
  cached prefix while there is one, and else evicts the least recently freed, a
  request's tail before its head. A hit touches its blocks (out of the free queue). A
  finished request's blocks stay cached in the free queue. (Checked against vLLM 0.30.0's
  own scheduler, tests/oracle/vllm_real.py: `Config.one_queue` True is the one queue in
  LRU order that this model assumed before, which vLLM does not do.)
- Multi-turn sessions: a session's next prompt is its previous prompt, the previous
  output and new tokens, so its blocks carry the same hashes (session, block index) as
  the previous turn's, unless the turn is a forced miss (a nonce at the head: new
  hashes from there on; the old blocks stay cached, unmatched); sessions share nothing
  (spec §7: cross-session sharing is out of scope).

Where serQ's semantics decide a case vLLM leaves to its driver or never meets:

- A request whose `num_tokens` needs more blocks than the pool has is rejected when it
  reaches the head of the waiting queue (serQ refuses a hold that can never fit; the
  real scheduler would wait for ever, the "rejection" of the brief).
- Requests sent at the same step join the waiting queue in the order their send began
  (first turns before later ones, then by the step the previous turn ended, then by the
  order they ended in), as serQ's events at one instant are ordered. Of the requests
  that end in one step, those whose last token is sampled as their prefill ends go on
  after the others (in the order the step served them): lib/vllm.sq reveals the hidden
  output length by a decode run, which for them has no work, an event at that instant
  that puts their sessions behind the ones already going on. Under a serve order other
  than vLLM's (`Config.order`), the step's finished requests are also freed in that
  order, as serQ's holds give their blocks back when their sessions go on; under vLLM's
  they are freed in running order, as vLLM frees them.
- `Config.alone`: lib/vllm.sq's `long_prefill(reqs, c)` gives no cap to a request that
  is alone (one request running or waiting when the step begins); the hand-worked
  scenarios of tests/sim/test_vllm_oracle.py are written with it. False is the plain
  threshold. Both are vLLM's, of different versions: 0.34.0 lifts the threshold for a
  request alone, 0.30.0 does not (tests/oracle/test_vllm_real.py).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Turn:
    """One request of a session: `new` prompt tokens on top of the context, `out` output
    tokens, sent `think` steps after the previous turn's last token (turn 0: ignored);
    `forced`, a forced miss: a nonce at the head of the prompt, so no block of the
    session's earlier turns matches (its own blocks do after a preemption); `stop` above 0:
    the request ends by a stop token, its `out`-th token, under a `max_tokens` of `out +
    stop` (an output shorter than its budget; 0: it ends at `max_tokens = out`). The
    scheduler never reads the budget (spec §7: the output length is hidden), so the model
    ignores `stop`; only the driver of vLLM itself (vllm_real.py) uses it. `priority`, if
    not None, is this request's priority under vLLM's priority policy instead of its
    session's (vLLM's priority is a request's: it may change from turn to turn)."""

    new: int
    out: int
    think: int = 0
    forced: bool = False
    stop: int = 0
    priority: int | None = None


@dataclass(frozen=True)
class Session:
    """A session sent at step `at`, its turns in order; `priority` the priority of each of
    its requests under vLLM's priority policy (`Config.policy`: the smaller first), unless
    the turn has one of its own (`Turn.priority`)."""

    at: int
    turns: tuple[Turn, ...]
    priority: int = 0


@dataclass(frozen=True)
class Config:
    """The engine: KV blocks of `block_size` tokens, `num_blocks` of them, a token budget
    per step, `max_seqs` running requests, the long-prefill threshold `chunk` (0: none),
    `alone` (lib/vllm.sq's long_prefill: no cap for a request alone) and the order of the
    running loop: "admission" (vLLM), "newest" (serve by (-admission)), "prefill_first"
    (serve by (decoding)); `policy`, vLLM's `--scheduling-policy`: "fcfs" or "priority"
    (the model knows only "fcfs": tests/sim/NOTES.md §47). `first_chunk` False allocates at admission what lib/vllm.sq's
    header does, the hit and the rest of the prompt as far as the budget left reaches,
    instead of vLLM's first chunk (which the threshold caps too). `one_queue` True takes
    the head of one free queue in LRU order (fresh blocks, a request's partial last block
    and cached blocks alike) instead of vLLM's rule, a block that holds no cached prefix
    before any cached one (which is also a serQ pool's: it evicts only when its free
    capacity is too small)."""

    block_size: int
    num_blocks: int
    budget: int
    max_seqs: int
    chunk: int = 0
    alone: bool = True
    order: str = "admission"
    first_chunk: bool = True
    one_queue: bool = False
    policy: str = "fcfs"


@dataclass(frozen=True)
class Scenario:
    config: Config
    sessions: tuple[Session, ...]


@dataclass(frozen=True)
class Clock:
    """Time for a scenario: a step lasts c0 + d * decoders + e * kv_decode + a * prefilled
    + b * attention (spec §8's fit of the A100 engine), a send or a think of k (the
    scenario's numbers) lasts k * tick. The step clock is every step 1 and a tick 1."""

    tick: float
    c0: float
    d: float
    e: float
    a: float
    b: float


STEPS = Clock(1, 1, 0, 0, 0, 0)


@dataclass(frozen=True)
class Outcome:
    """One request's outcome: first-token and last-token steps (None: never), its
    preemptions, the tokens the cache gave it at its first and its last admission."""

    first: int | None
    last: int | None
    preemptions: int
    cached_first: int | None
    cached_last: int | None


@dataclass(frozen=True)
class Result:
    """Per request (session, turn) its outcome; the preemptions, rejections and steps
    that scheduled a token or preempted (serQ's iterations)."""

    requests: dict[tuple[int, int], Outcome]
    preemptions: int
    rejections: int
    iterations: int


@dataclass(eq=False)
class Request:
    session: int
    turn: int
    prompt: int
    out: int
    prefix: tuple[int, int]  # the hashes' namespace: (session, forced misses so far)
    outputs: int = 0  # tokens sampled so far
    computed: int = 0  # num_computed_tokens
    blocks: list[int] = field(default_factory=list)
    admitted: int = -1  # admission sequence number (running order)
    first: int | None = None
    last: int | None = None
    preemptions: int = 0
    cached: list[int] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)  # the steps it was admitted at
    outputs_admitted: int = 0  # outputs it had at its last admission

    @property
    def ends_with_prefill(self) -> bool:
        """Its last token is (to be) sampled as its prefill from the last admission ends:
        lib/vllm.sq's decode run after it has no work."""
        return self.outputs_admitted == self.out - 1

    @property
    def num_tokens(self) -> int:
        """vLLM's request.num_tokens: the prompt and every token sampled so far."""
        return self.prompt + self.outputs

    @property
    def prefilling(self) -> bool:
        return self.computed < self.prompt


class BlockPool:
    """The KV blocks: a free queue (LRU order, head first) and the hash of each cached
    block, a (session, forced misses, block index) triple."""

    def __init__(self, num_blocks: int, one_queue: bool = False) -> None:
        self.one_queue = one_queue
        self.free: OrderedDict[int, None] = OrderedDict((b, None) for b in range(num_blocks))
        self.hash_of: dict[int, tuple[int, int, int]] = {}
        # a hash's blocks: a block recomputed after a preemption can carry the hash of
        # an older copy still in the free queue (vLLM's BlockHashToBlockMap keeps both)
        self.blocks_of: dict[tuple[int, int, int], list[int]] = {}

    def cached_run(self, prefix: tuple[int, int], most: int) -> list[int]:
        """The longest run of cached blocks of this prefix from index 0, at most `most`."""
        run: list[int] = []
        while len(run) < most and (*prefix, len(run)) in self.blocks_of:
            run.append(self.blocks_of[(*prefix, len(run))][0])
        return run

    def touch(self, blocks: list[int]) -> None:
        for b in blocks:
            del self.free[b]

    def take(self, n: int) -> list[int]:
        """Pop `n` blocks from the head of the free queue, evicting their hashes."""
        taken = []
        for _ in range(n):
            b = self._victim()
            del self.free[b]
            h = self.hash_of.pop(b, None)
            if h is not None:
                self.blocks_of[h].remove(b)
                if not self.blocks_of[h]:
                    del self.blocks_of[h]
            taken.append(b)
        return taken

    def _victim(self) -> int:
        """The block an allocation takes: the first block that holds no cached prefix,
        if any (vLLM keeps those at the free queue's head), else the head; with
        `one_queue` the head."""
        if not self.one_queue:
            for b in self.free:
                if b not in self.hash_of:
                    return b
        return next(iter(self.free))

    def give_back(self, blocks: list[int]) -> None:
        """Free a request's blocks, its last block first (block_pool.py:776-805; where
        the uncached ones go is `_victim`'s to say)."""
        for b in reversed(blocks):
            self.free[b] = None

    def cache(self, req: Request, tokens: int, block_size: int) -> None:
        """Hash the request's blocks that `tokens` fill."""
        for i in range(min(tokens // block_size, len(req.blocks))):
            b = req.blocks[i]
            if b not in self.hash_of:
                self.hash_of[b] = (*req.prefix, i)
                self.blocks_of.setdefault((*req.prefix, i), []).append(b)


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


class Model:
    """The scheduler, its block pool and the sessions' clock."""

    def __init__(self, scenario: Scenario) -> None:
        if scenario.config.policy != "fcfs":  # not learnt: vllm_real.py runs vLLM's own
            raise ValueError(f"the model knows no scheduling policy {scenario.config.policy!r}")
        self.cfg = scenario.config
        self.sessions = scenario.sessions
        self.pool = BlockPool(self.cfg.num_blocks, self.cfg.one_queue)
        self.running: list[Request] = []
        self.waiting: list[Request] = []
        self.sends: list[tuple[int, int, int, Request]] = []  # (step, begun, seq, request)
        self.seq = 0
        self.admissions = 0
        self.done: dict[tuple[int, int], Request] = {}
        self.context: dict[int, int] = {}
        self.misses: dict[int, int] = {}
        self.preemptions = 0
        self.rejections = 0
        self.iterations = 0
        for i, s in enumerate(self.sessions):
            self.context[i] = 0
            self.misses[i] = 0
            self._send(i, 0, s.at, 0)

    def _send(self, session: int, turn: int, step: int, begun: int) -> None:
        t = self.sessions[session].turns[turn]
        prompt = self.context[session] + t.new
        self.misses[session] += t.forced
        req = Request(session, turn, prompt, t.out, (session, self.misses[session]))
        self.sends.append((step, begun, self.seq, req))
        self.seq += 1

    def run(self, horizon: int = 100_000) -> Result:
        t = 0
        while (self.sends or self.waiting or self.running) and t < horizon:
            self.step(t)
            t += 1
        if self.sends or self.waiting or self.running:
            raise RuntimeError(f"not drained by step {horizon}")
        return self.result()

    def result(self) -> Result:
        out = {}
        for key, r in sorted(self.done.items()):
            out[key] = Outcome(
                r.first,
                r.last,
                r.preemptions,
                r.cached[0] if r.cached else None,
                r.cached[-1] if r.cached else None,
            )
        return Result(out, self.preemptions, self.rejections, self.iterations)

    # -- one step ---------------------------------------------------------------------

    def step(self, t: int) -> None:
        arrived = sorted((s for s in self.sends if s[0] <= t), key=lambda s: s[:3])
        self.sends = [s for s in self.sends if s[0] > t]
        for s in arrived:
            self._join(t, s[3], at_head=False)
        if not self.running and not self.waiting:
            return
        cap = self.cfg.chunk
        if self.cfg.alone and len(self.running) + len(self.waiting) <= 1:
            cap = 0
        budget = self.cfg.budget
        scheduled: dict[Request, int] = {}
        preempted = self._schedule_running(t, cap, budget, scheduled)
        budget = self.cfg.budget - sum(scheduled.values())
        if not preempted:
            self._schedule_waiting(t, cap, budget, scheduled)
        if scheduled or preempted:
            self.iterations += 1
        self._update(t, scheduled)

    def _tokens(self, req: Request, cap: int, budget: int) -> int:
        n = req.num_tokens - req.computed
        if 0 < cap < n:
            n = cap
        return min(n, budget)

    def _serve_order(self) -> list[Request]:
        order = self.cfg.order
        if order == "admission":
            return list(self.running)
        if order == "newest":
            return sorted(self.running, key=lambda r: -r.admitted)
        if order == "prefill_first":
            return sorted(self.running, key=lambda r: (not r.prefilling, r.admitted))
        raise ValueError(order)

    def _schedule_running(
        self, t: int, cap: int, budget: int, scheduled: dict[Request, int]
    ) -> bool:
        """The running loop; True if it preempted."""
        preempted = False
        for req in self._serve_order():
            if budget <= 0:
                break
            if req not in self.running:  # preempted earlier in this step
                continue
            n = self._tokens(req, cap, budget)
            while not self._grow(req, req.computed + n):
                victim = self.running.pop()  # running[-1]
                budget += scheduled.pop(victim, 0)
                self._preempt(t, victim)
                preempted = True
                if victim is req:
                    return True  # the running loop ends
            scheduled[req] = n
            budget -= n
        return preempted

    def _schedule_waiting(
        self, t: int, cap: int, budget: int, scheduled: dict[Request, int]
    ) -> None:
        bs = self.cfg.block_size
        while self.waiting and budget > 0:
            if len(self.running) >= self.cfg.max_seqs:
                break
            req = self.waiting[0]
            hit_blocks = self.pool.cached_run(req.prefix, (req.num_tokens - 1) // bs)
            hit = len(hit_blocks) * bs
            n = min(req.num_tokens - hit, budget)
            if 0 < cap < req.num_tokens - hit:
                n = min(cap, budget)
            if cdiv(req.num_tokens, bs) > len(self.pool.free):
                break  # head-of-line blocking
            self.waiting.pop(0)
            self.pool.touch(hit_blocks)
            req.blocks = list(hit_blocks)
            req.computed = hit
            req.cached.append(hit)
            req.steps.append(t)
            req.outputs_admitted = req.outputs
            rest = n if self.cfg.first_chunk else min(req.num_tokens - hit, budget)
            self._grow(req, hit + rest, hit + n)
            req.admitted = self.admissions
            self.admissions += 1
            self.running.append(req)
            scheduled[req] = n
            budget -= n

    def _join(self, t: int, req: Request, at_head: bool) -> None:
        """A request joins the waiting queue (a preempted one at its head), or is refused
        there if its num_tokens could never fit (serQ refuses such a hold as it queues)."""
        if cdiv(req.num_tokens, self.cfg.block_size) > self.cfg.num_blocks:
            self.rejections += 1
            self._finish(t, req, ended=False)
        elif at_head:
            self.waiting.insert(0, req)
        else:
            self.waiting.append(req)

    def _grow(self, req: Request, tokens: int, scheduled: int | None = None) -> bool:
        """allocate_slots: blocks for `tokens`, hashing the ones the `scheduled` tokens
        (default `tokens`) fill; False if too few are free."""
        need = cdiv(tokens, self.cfg.block_size) - len(req.blocks)
        if need > len(self.pool.free):
            return False
        if need > 0:
            req.blocks.extend(self.pool.take(need))
        upto = tokens if scheduled is None else scheduled
        self.pool.cache(req, min(upto, req.num_tokens), self.cfg.block_size)
        return True

    def _preempt(self, t: int, req: Request) -> None:
        self.pool.give_back(req.blocks)
        req.blocks = []
        req.computed = 0
        req.preemptions += 1
        self.preemptions += 1
        self._join(t, req, at_head=True)

    def _update(self, t: int, scheduled: dict[Request, int]) -> None:
        """The fake model runner: every scheduled token is computed; a request that
        reaches its num_tokens samples one; one that has all its outputs finishes."""
        finished = []
        for req, n in scheduled.items():
            req.computed += n
            if req.computed < req.num_tokens:
                continue
            req.outputs += 1
            if req.first is None:
                req.first = t + 1
            if req.outputs >= req.out:
                finished.append(req)
        # the sessions go on in the order the step served them, but a request that ends
        # with its prefill goes on after the others: its session runs lib/vllm.sq's decode
        # of no work first, an event at the same instant (serQ's order, the sessions in
        # the order they became ready)
        going_on = sorted(finished, key=lambda r: r.ends_with_prefill)
        # vLLM frees them in running order; under another serve order (not vLLM's) the
        # model follows serQ, where each hold gives its blocks back as its session goes on
        if self.cfg.order == "admission":
            freed = sorted(finished, key=lambda r: r.admitted)
        else:
            freed = going_on
        for req in freed:
            self.running.remove(req)
            self.pool.give_back(req.blocks)
            req.blocks = []
        for req in going_on:
            self._finish(t + 1, req, ended=True)

    def _finish(self, t: int, req: Request, ended: bool) -> None:
        """Record the request; a session whose request ended sends its next turn."""
        self.done[(req.session, req.turn)] = req
        if not ended:
            return
        req.last = t
        turns = self.sessions[req.session].turns
        self.context[req.session] = req.prompt + req.out
        if req.turn + 1 < len(turns):
            self._send(req.session, req.turn + 1, t + turns[req.turn + 1].think, t)


def simulate(scenario: Scenario, horizon: int = 100_000) -> Result:
    """The model's outcome of a scenario."""
    return Model(scenario).run(horizon)
