"""Random deterministic vLLM scenarios (tests/oracle/vllm_model.py's `Scenario`), each
written as a serQ program the way examples/oracle/*.sq write theirs: lib/vllm.sq's
`vllm_request` on the step clock (cost 1), `arrive batch(n)` with every session's send
step and sizes chosen by `serial` in the program, the chunk through lib/vllm.sq's
`long_prefill` (or, with `Config.alone` off, the plain threshold), and multi-turn
sessions as vllm_replay.sq writes them: the next prompt is the context (previous prompt
and output) plus new tokens, sent `think` steps after the previous last token.

`outcome(plain, scenario)` reads a report (tests/oracle/differential.py's `outcome`, of
serq or pyserq) back into the model's `Result`, request for request.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

from vllm_model import STEPS, Clock, Config, Outcome, Result, Scenario, Session, Turn

LIB = Path(__file__).resolve().parents[2] / "examples" / "lib" / "vllm.sq"


def generate(k: int) -> Scenario:
    """Scenario `k`: its own random stream, so one scenario never depends on another."""
    rng = random.Random(f"vllm-scenario-{k}")
    bs = rng.choice((4, 8, 16, 16, 32))
    n = rng.choice((1, 2, 3, 3, 4, 5, 6, 8))
    multi = rng.random() < 0.4
    sessions = []
    for _ in range(n):
        turns = []
        for j in range(rng.choice((2, 3, 4)) if multi else 1):
            new = _size(rng, bs)
            out = rng.choice((1, 1, 2, 3)) if rng.random() < 0.2 else rng.randint(1, 60)
            think = 0 if j == 0 else rng.choice((0, 0, 1, 2, 5, rng.randint(0, 30)))
            turns.append(Turn(new, out, think))
        sessions.append(
            Session(rng.choice((0, 0, rng.randint(0, 12), rng.randint(0, 40))), tuple(turns))
        )
    need = _blocks_needed(sessions, bs)
    biggest = max(need)
    blocks = rng.choice(
        (
            max(1, biggest // 2),  # too few: rejections
            biggest,
            biggest + rng.randint(0, 3),
            biggest + rng.randint(0, sum(need)),
            sum(need) + 4,
            rng.randint(max(1, biggest // 2), biggest * 2),
        )
    )
    budget = rng.choice((8, 16, 24, 32, 48, 64, 96, 128, 256, rng.randint(1, 200)))
    max_seqs = rng.choice((1, 2, 3, 4, 8, 16))
    chunk = rng.choice((0, 0, 0, 0, 1, bs, 24, 32, 64, rng.randint(1, 100)))
    alone = rng.random() < 0.75
    return Scenario(Config(bs, blocks, budget, max_seqs, chunk, alone), _forced(k, sessions))


def _forced(k: int, sessions: list[Session]) -> tuple[Session, ...]:
    """Some turns of multi-turn scenarios made forced misses (a stream of their own, so
    the rest of scenario `k` is drawn as before they existed)."""
    rng = random.Random(f"vllm-forced-{k}")
    if rng.random() < 0.5:
        return tuple(sessions)
    return tuple(
        Session(s.at, tuple(replace(t, forced=rng.random() < 0.2) for t in s.turns))
        if len(s.turns) > 1
        else s
        for s in sessions
    )


def generate_edge(k: int) -> Scenario:
    """Scenario `k` of the edges: blocks of 1 and 2 tokens, budgets of a few tokens, one
    request at a time, many sessions sent at the same steps, turns sent the step their
    previous one ends, outputs of one token, prompts on block boundaries, memory for
    about one request."""
    rng = random.Random(f"vllm-edge-{k}")
    bs = rng.choice((1, 2, 4, 16))
    sessions = []
    for _ in range(rng.choice((2, 4, 8, 12))):
        turns = []
        for j in range(rng.choice((1, 1, 2, 3))):
            new = rng.choice((1, bs, 2 * bs, 2 * bs + 1, rng.randint(1, 64)))
            out = rng.choice((1, 1, 2, rng.randint(1, 40)))
            turns.append(Turn(new, out, 0 if j == 0 else rng.choice((0, 0, 0, 1))))
        sessions.append(Session(rng.choice((0, 0, 1, 2)), tuple(turns)))
    need = _blocks_needed(sessions, bs)
    blocks = rng.choice(
        (max(need), max(need) + 1, max(need) + rng.randint(0, 8), max(1, max(need) - 1))
    )
    budget = rng.choice((1, 2, 3, 5, 8, bs, bs + 1, 64))
    max_seqs = rng.choice((1, 1, 2, 3, 12))
    chunk = rng.choice((0, 0, 1, 2, bs, rng.randint(1, 10)))
    alone = rng.random() < 0.6
    return Scenario(Config(bs, blocks, budget, max_seqs, chunk, alone), tuple(sessions))


def generate_domain(k: int) -> Scenario:
    """Scenario `k` over the whole domain, its corners drawn often: no chunk cap (0) half
    the time, budgets of 1 token, below a block and of one block, pools too small for one
    request or just large enough, one running request, prompts and outputs of 1 token,
    and long multi-turn sessions (up to 10 turns); forced misses as `generate`'s."""
    rng = random.Random(f"vllm-domain-{k}")
    bs = rng.choice((1, 2, 4, 8, 16, 32))
    sessions = []
    long_sessions = rng.random() < 0.3
    for _ in range(rng.choice((1, 1, 2, 3, 4, 6))):
        turns = []
        count = rng.randint(5, 10) if long_sessions else rng.choice((1, 1, 2, 3))
        for j in range(count):
            new = rng.choice((1, 1, bs, bs + 1, max(1, bs - 1), rng.randint(1, 40)))
            out = rng.choice((1, 1, 2, rng.randint(1, 30)))
            think = 0 if j == 0 else rng.choice((0, 0, 1, rng.randint(0, 10)))
            turns.append(Turn(new, out, think))
        sessions.append(Session(rng.choice((0, 0, 1, rng.randint(0, 20))), tuple(turns)))
    need = _blocks_needed(sessions, bs)
    biggest = max(need)
    blocks = rng.choice(
        (max(1, biggest - 1), max(1, biggest // 2), biggest, biggest + 1, sum(need) + 2)
    )
    budget = rng.choice((1, 1, max(1, bs - 1), bs, bs + 1, 2 * bs, rng.randint(1, 300)))
    max_seqs = rng.choice((1, 1, 2, 3, 16))
    chunk = rng.choice((0, 0, 0, 0, 0, 1, max(1, bs - 1), bs, rng.randint(1, 64)))
    alone = rng.random() < 0.6
    return Scenario(Config(bs, blocks, budget, max_seqs, chunk, alone), _forced(k, sessions))


def generate_large(k: int) -> Scenario:
    """Scenario `k` at the scale of a replica under load: 10 to 40 sessions of up to six
    turns sent over 200 steps, prompts of a few tokens to 1,500, outputs of one token to
    300, thinks of 0 to 50 steps, a pool from just enough for the largest session to
    eight times that, budgets of 64 to 8,192 tokens, up to 64 running requests, a chunk
    cap half the time; forced misses one turn in ten."""
    rng = random.Random(f"vllm-large-{k}")
    bs = rng.choice((8, 16, 16, 32))
    sessions = []
    for _ in range(rng.randint(10, 40)):
        turns = []
        for j in range(rng.randint(1, 6)):
            new = rng.choice((rng.randint(1, 64), rng.randint(64, 600), rng.randint(600, 1500)))
            out = rng.choice((1, rng.randint(2, 40), rng.randint(40, 300)))
            think = 0 if j == 0 else rng.choice((0, 1, rng.randint(2, 50)))
            turns.append(Turn(new, out, think, j > 0 and rng.random() < 0.1))
        sessions.append(Session(rng.randint(0, 200), tuple(turns)))
    need = max(_blocks_needed(sessions, bs))
    blocks = rng.randint(need, need * rng.choice((1, 2, 4, 8)))
    max_seqs = rng.choice((4, 8, 16, 64))
    budget = max(max_seqs, rng.choice((64, 256, 512, 2048, 8192)))
    chunk = rng.choice((0, 0, 64, 256, 512))
    alone = rng.random() < 0.5
    return Scenario(Config(bs, blocks, budget, max_seqs, chunk, alone), tuple(sessions))


def generate_stop(k: int) -> Scenario:
    """Scenario `k` of requests that end by a stop token (`Turn.stop`: an output shorter
    than its `max_tokens`, by 1 to 2,000 tokens, nine turns in ten), among the corners no
    other family draws on purpose: prompts of exactly one block (or a whole number of
    them), a budget of exactly one prompt (the first session's, or one block), one running
    request (`max_num_seqs` 1) half the time, and multi-turn sessions whose next prompt
    carries the stop token. The scheduler does not read `max_tokens` (the output length is
    hidden, spec §7), so vLLM must give what it gives when the same outputs end at their
    budget, and so must serq, whose program is the family's others'."""
    rng = random.Random(f"vllm-stop-{k}")
    bs = rng.choice((2, 4, 8, 16, 16, 32))
    sessions = []
    for _ in range(rng.choice((1, 2, 3, 4, 6))):
        turns = []
        for j in range(rng.choice((1, 2, 3))):
            new = rng.choice((bs, bs, 2 * bs, bs * rng.randint(1, 6), rng.randint(1, 3 * bs)))
            out = rng.choice((1, 2, rng.randint(1, 30), rng.randint(1, 80)))
            think = 0 if j == 0 else rng.choice((0, 0, 1, rng.randint(0, 10)))
            stop = (
                rng.choice((1, rng.randint(1, 100), rng.randint(100, 2000)))
                if rng.random() < 0.9
                else 0
            )
            turns.append(Turn(new, out, think, False, stop))
        sessions.append(Session(rng.choice((0, 0, 1, rng.randint(0, 20))), tuple(turns)))
    need = _blocks_needed(sessions, bs)
    biggest = max(need)
    blocks = rng.choice((biggest, biggest + 1, biggest + rng.randint(0, sum(need)), sum(need) + 2))
    max_seqs = rng.choice((1, 1, 1, 2, 3, 8))
    one_prompt = sessions[0].turns[0].new
    budget = max(max_seqs, rng.choice((one_prompt, one_prompt, bs, rng.randint(1, 256))))
    chunk = rng.choice((0, 0, 0, bs, one_prompt, rng.randint(1, 64)))
    alone = rng.random() < 0.6
    return Scenario(Config(bs, blocks, budget, max_seqs, chunk, alone), tuple(sessions))


def generate_burst(k: int) -> Scenario:
    """Scenario `k` of decode-bound bursts, as a benchmark sends them (`vllm bench serve
    --request-rate inf` on the random dataset): one to three bursts, each of 6 to 48
    requests sent at one instant, short prompts (1 token to two blocks) and long outputs
    (40 to 400 tokens, every output at least the prompt), the lengths of a burst its
    input and output lengths spread by a range ratio of 0 (every request the same: they
    all end in one step), 0.1 or 0.5; single turns, or a second turn sent the step the
    first ends (think 0, a new burst of its own). The pool is sized from the requests at
    their last token: the largest alone, or an eighth to a half of them all (decode
    growth preempts, again and again, requests that have sampled tokens), or all of
    them; `max_num_seqs` 1 to 256, the budget from `max_num_seqs` to 8,192."""
    rng = random.Random(f"vllm-burst-{k}")
    bs = rng.choice((4, 8, 16, 16, 32))
    sessions = []
    multi = rng.random() < 0.25
    at = 0
    for _ in range(rng.choice((1, 1, 2, 3))):
        input_len = rng.choice((1, bs // 2, bs, 2 * bs, rng.randint(1, 2 * bs)))
        output_len = max(input_len, rng.choice((40, 64, 128, 256, rng.randint(40, 400))))
        ratio = rng.choice((0, 0, 0.1, 0.5))

        def spread(n: int, ratio: float = ratio) -> int:
            return rng.randint(max(1, round(n * (1 - ratio))), max(1, round(n * (1 + ratio))))

        for _ in range(rng.choice((6, 8, 16, 24, 32, 48))):
            new, out = spread(input_len), spread(output_len)
            turns = [Turn(new, max(new, out))]
            if multi:
                new2 = spread(input_len)
                turns.append(Turn(new2, max(new2, spread(output_len // 2))))
            sessions.append(Session(at, tuple(turns)))
        at += rng.choice((1, rng.randint(2, 50), rng.randint(50, 400)))
    need = _blocks_needed(sessions, bs)
    blocks = max(
        max(need),
        rng.choice(
            (max(need), sum(need) // 8, sum(need) // 4, sum(need) // 2, sum(need) + 2),
        ),
    )
    max_seqs = rng.choice((1, 8, 16, 32, 64, 256))
    budget = max(max_seqs, rng.choice((64, 256, 512, 2048, 8192)))
    chunk = rng.choice((0, 0, 0, bs, 64))
    alone = rng.random() < 0.5
    return Scenario(Config(bs, blocks, budget, max_seqs, chunk, alone), tuple(sessions))


def scheduled_victim(k: int) -> Scenario:
    """Hand-made scenario `k` (0 or 1) of vLLM's priority policy where the victim of a
    growth was scheduled earlier in the same step (tests/sim/NOTES.md §51): session 0
    (priority 1, sent at 0, a prompt of 32 or 30 tokens, 8 a step) runs first; session 1
    (priority 0, sent at 1, 3 tokens and 3 outputs) is admitted after it, and at step 3
    its decode needs a second block of a full pool of 9: the victim is session 0, already
    scheduled its chunk of that step (24 to 32, or to 30)."""
    prompt = (32, 30)[k]
    config = Config(4, 9, 16, 2, 8, False, policy="priority")
    return Scenario(config, (Session(0, (Turn(prompt, 1),), 1), Session(1, (Turn(3, 3),), 0)))


def with_order(k: int, scenario: Scenario) -> Scenario:
    """Scenario `k` served newest first or prefill first (serQ's `serve by`, the model's
    `Config.order`): not vLLM's order, a check of the step engine's other serve orders."""
    order = random.Random(f"order-{k}").choice(("newest", "prefill_first"))
    return replace(scenario, config=replace(scenario.config, order=order))


def with_priority(k: int, scenario: Scenario) -> Scenario:
    """Scenario `k` under vLLM's priority policy (`--scheduling-policy priority`): each
    session's requests get a priority drawn from a few values (two to four of them, so
    that sessions tie on it and the arrival order decides among them), from a stream of
    its own (the rest of the scenario is drawn as before)."""
    rng = random.Random(f"vllm-priority-{k}")
    values = rng.choice(((0, 1), (0, 1, 2), (-1, 0, 3), (0, 0, 1), (5, 1, 3, 2)))
    sessions = tuple(replace(s, priority=rng.choice(values)) for s in scenario.sessions)
    return replace(scenario, config=replace(scenario.config, policy="priority"), sessions=sessions)


def with_turn_priority(k: int, scenario: Scenario) -> Scenario:
    """Scenario `k` under vLLM's priority policy with a priority drawn for each request
    (vLLM's priority is a request's, `Turn.priority`), from a few values as
    `with_priority`'s: a session's turns keep one priority or change it, turn by turn
    (half the sessions draw each turn anew, the others one priority for all their turns,
    so that a changed priority meets unchanged ones); a stream of its own."""
    rng = random.Random(f"vllm-turn-priority-{k}")
    values = rng.choice(((0, 1), (0, 1, 2), (-1, 0, 3), (0, 0, 1), (5, 1, 3, 2)))
    sessions = []
    for s in scenario.sessions:
        fixed = rng.choice(values) if rng.random() < 0.5 else None
        turns = tuple(
            replace(t, priority=rng.choice(values) if fixed is None else fixed) for t in s.turns
        )
        sessions.append(replace(s, turns=turns))
    return replace(
        scenario, config=replace(scenario.config, policy="priority"), sessions=tuple(sessions)
    )


def per_turn_priority(scenario: Scenario) -> bool:
    """Whether the scenario gives its requests priorities of their own (`Turn.priority`)."""
    return any(t.priority is not None for s in scenario.sessions for t in s.turns)


def _size(rng: random.Random, bs: int) -> int:
    """A prompt: small, on a block boundary or one either side, or long."""
    kind = rng.random()
    if kind < 0.25:
        return rng.randint(1, 20)
    if kind < 0.5:
        return max(1, bs * rng.randint(1, 8) + rng.choice((-1, 0, 1)))
    return rng.randint(1, 300)


def _blocks_needed(sessions: list[Session], bs: int) -> list[int]:
    """Blocks each request would hold at its last token."""
    need = []
    for s in sessions:
        context = 0
        for t in s.turns:
            prompt = context + t.new
            need.append(-(-(prompt + t.out - 1) // bs))
            context = prompt + t.out
    return need


# -- the serQ program ---------------------------------------------------------------


def _by(var: str, values: list[str], offset: int = 0) -> str:
    """`var == 0 ? v0 : var == 1 ? v1 : ... : v_last`, or v0 if all are equal; past 64
    values, split in halves first (`var < m ? (...) : (...)`), so that a program of a
    hundred sessions and more stays within the 100 levels an item may nest
    (docs/limits.md)."""
    if len(set(values)) == 1:
        return values[0]
    if len(values) > 64:
        m = len(values) // 2
        low, high = _by(var, values[:m], offset), _by(var, values[m:], offset + m)
        return f"{var} < {offset + m} ? ({low}) : ({high})"
    parts = [f"{var} == {offset + i} ? {v} : " for i, v in enumerate(values[:-1])]
    return "".join(parts) + values[-1]


def _per_turn(scenario: Scenario, field: str) -> str:
    return _per_turn_values(
        [[int(getattr(t, field)) for t in s.turns] for s in scenario.sessions], "k"
    )


def _per_turn_values(by_session: list[list[int]], var: str, offset: int = 0) -> str:
    """A value a turn: by `serial`, then by `var` (the turn's number from `offset`)."""
    per_session = []
    for values in by_session:
        text = _by(var, [str(v) for v in values], offset)
        per_session.append(text if len(set(values)) == 1 else f"({text})")
    return _by("serial", per_session)


# vLLM's priority policy (scheduler.py, `SchedulingPolicy.PRIORITY`; tests/sim/NOTES.md
# §47): the waiting queue ordered by (priority, arrival_time), a preempted request back in
# it by the same keys (not at its head), and the victim of a growth that does not fit the
# running request with the largest (priority, arrival_time), wherever it stands in the
# running list. A request's arrival time is its send's (`arrived`), sessions sent at one
# instant in serial order (the driver's arrival order).
PRIORITY_QUEUE = ("  queue by (priority, arrived, serial);",)
PRIORITY_PREEMPT = ("  preempt by (-priority, -arrived, -serial) requeue tail;",)

# Where a program with a priority a request (`Turn.priority`) sets it: "turn", the
# workload's `turn` block, at each `turn;` (its `turn_no` the request's number from 1);
# "session", the session's loop, before each request (its `k` from 0).
TURN_PRIORITY = "turn"

# The model's running orders as serve clauses (vLLM's is admission order, the default).
SERVE = {
    "admission": (),
    "newest": ("  serve by (-admission);",),
    "prefill_first": ("  serve by (decoding);",),
}


def program(
    scenario: Scenario,
    where: str | Path,
    title: str = "",
    clock: Clock = STEPS,
    warmup: float = 0,
) -> str:
    """The scenario as a serQ program to be written in the folder `where`, on the step
    clock or on `clock` (its cost the engine's, its tick the unit of sends and thinks),
    its report measured from `warmup` (the outcome can be read back only from 0)."""
    c = scenario.config
    stepped = clock == STEPS
    cost = "1" if stepped else "c0 + d * decoders + e * kv_decode + a * prefilled + b * attention"
    ticks = "" if stepped else " * tick"
    constants = (
        []
        if stepped
        else [
            f"let tick = {clock.tick!r}; // seconds, the unit of sends and thinks",
            f"let c0 = {clock.c0!r}; // seconds per step",
            f"let d = {clock.d!r}; // per decoding request",
            f"let e = {clock.e!r}; // per token of decoding KV",
            f"let a = {clock.a!r}; // per prefilled token",
            f"let b = {clock.b!r}; // per unit of prefill attention",
        ]
    )
    priority = c.policy == "priority"
    per_turn = priority and per_turn_priority(scenario)
    if per_turn and TURN_PRIORITY not in ("turn", "session"):
        raise ValueError(f"no place {TURN_PRIORITY!r} to set a request's priority")
    if per_turn:
        # every turn its own (a turn without one has its session's)
        by_turn = [
            [s.priority if t.priority is None else t.priority for t in s.turns]
            for s in scenario.sessions
        ]
    if c.policy not in ("fcfs", "priority"):
        raise ValueError(f"no program for the scheduling policy {c.policy!r}")
    lib = os.path.relpath(LIB, where)
    chunk = "long_prefill(reqs, chunk)" if c.alone else "chunk"
    at = _by("serial", [str(s.at) for s in scenario.sessions])
    turns = _by("serial", [str(len(s.turns)) for s in scenario.sessions])
    lines = [
        f"// {title or 'A vLLM scenario'} (tests/oracle/vllm_scenarios.py): the one-request",
        "// vLLM engine of lib/vllm.sq on the step clock (cost 1: every time is a scheduler",
        "// step), checked against the scheduler model tests/oracle/vllm_model.py.",
        f'use "{lib}";',
        "",
        f"let bs = {c.block_size};",
        f"let chunk = {c.chunk};{' // (0: none)' if c.chunk == 0 else ''}",
        *constants,
        "",
        "pool reqs {",
        f"  cap {c.max_seqs};",
        "  admit via engine;",
        *PRIORITY_QUEUE * priority,
        "}",
        "",
        "pool kv {",
        f"  cap {c.num_blocks} * bs;",
        "  block bs;",
        "  evict lru;",
        *(PRIORITY_PREEMPT if priority else ("  preempt lifo;",)),
        "}",
        "",
        "stage engine : step {",
        f"  budget {c.budget};",
        f"  cost {cost};",
        f"  chunk {chunk};",
        *SERVE[c.order],
        "  memory kv;",
        "}",
        "",
        "stage send : delay;",
        "",
        "workload {",
        f"  arrive batch({len(scenario.sessions)});",
        "  hidden o;",
        "  init {",
        f"    set at = {at};",
        f"    set turns = {turns};",
        *(
            [f"    set priority = {_by('serial', [str(x.priority) for x in scenario.sessions])};"]
            if priority and not per_turn
            else []
        ),
        "  }",
        *(
            [
                "  turn { // each request's priority (vLLM's is a request's)",
                f"    set priority = {_per_turn_values(by_turn, 'turn_no', 1)};",
                "  }",
            ]
            if per_turn and TURN_PRIORITY == "turn"
            else []
        ),
        "}",
        "",
        "session {",
        f"  run send (at{ticks});",
        "  set K = 0;",
        "  set k = 0;",
        "  loop {",
        "    turn; // a new request: its inter-token latencies start afresh",
        *(
            [f"    set priority = {_per_turn_values(by_turn, 'k')}; // this request's"]
            if per_turn and TURN_PRIORITY == "session"
            else []
        ),
        "    set arrived = now;",
        f"    set prompt = K + ({_per_turn(scenario, 'new')});",
        f"    set o = {_per_turn(scenario, 'out')};",
        f"    vllm_request(o, {_per_turn(scenario, 'forced')});",
        "    observe last = now;",
        "    observe response = now - arrived;",
        "    observe hit = c;",
        "    observe hit_first = c_first;",
        "    set K = prompt + o;",
        "    set k = k + 1;",
        "    branch (k < turns) {",
        f"      run send (({_per_turn(scenario, 'think')}){ticks});",
        "    } else {",
        "      end;",
        "    }",
        "  }",
        "}",
        "",
        "run {",
        "  horizon 1000000;",
        f"  warmup {warmup!r};",
        "  seed 1;",
        "}",
        "",
    ]
    return "\n".join(lines)


# -- a report read back as the model's Result -----------------------------------------


def outcome(plain: dict[str, Any], scenario: Scenario, clock: Clock = STEPS) -> Result:
    """The report's outcome (differential.outcome's plain data) per request (session,
    turn): the first `ttft` sample's time, `last`, the admissions (`resumed` samples)
    less one (plus one for a request refused after a preemption), `hit` (the cached
    tokens at the last admission). A turn's samples are told apart by time: turn k is
    sent at `arrived_k` (the send step, then the previous last step plus the think),
    admitted at or after it and gives its tokens after it, at or before its last step."""
    obs = plain["observes"]

    def samples(name: str) -> dict[int, list[tuple[float, float]]]:
        by: dict[int, list[tuple[float, float]]] = {}
        if name in obs:
            sessions, values, times = obs[name]
            for s, v, t in zip(sessions, values, times, strict=True):
                by.setdefault(s, []).append((t, v))
        return by

    ttft, resumed, last, hit, hit_first = (
        samples(n) for n in ("ttft", "resumed", "last", "hit", "hit_first")
    )
    time = _int if clock == STEPS else _same  # steps, or the clock's seconds
    requests = {}
    for i, s in enumerate(scenario.sessions):
        sent = s.at * clock.tick
        lasts = last.get(i, [])
        for k, turn in enumerate(s.turns):
            if k > 0:
                if k > len(lasts):
                    break
                sent = lasts[k - 1][0] + turn.think * clock.tick
            end = lasts[k][0] if k < len(lasts) else None
            admissions = [
                t for t, _ in resumed.get(i, []) if t >= sent and (end is None or t < end)
            ]
            if not admissions and end is None:
                requests[(i, k)] = Outcome(None, None, 0, None, None)  # refused
                break
            firsts = [t for t, _ in ttft.get(i, []) if t > sent and (end is None or t <= end)]
            cached = int(hit[i][k][1]) if end is not None else None
            first_cached = int(hit_first[i][k][1]) if end is not None and i in hit_first else None
            requests[(i, k)] = Outcome(
                time(min(firsts)) if firsts else None,
                time(end),
                len(admissions) - 1 + (end is None),
                first_cached,
                cached,
            )
    kv = plain["pools"][1]
    return Result(requests, kv[1], kv[2], plain["stages"][0][0])


def _int(x: float | None) -> int | None:
    return None if x is None else int(x)


def _same(x: float | None) -> float | None:
    return x


def comparable(result: Result) -> Result:
    """The model's result with what the program observes: the cached tokens at the first
    and the last admission of a request that ended."""
    requests = {
        key: Outcome(
            o.first,
            o.last,
            o.preemptions,
            o.cached_first if o.last else None,
            o.cached_last if o.last else None,
        )
        for key, o in result.requests.items()
    }
    return Result(requests, result.preemptions, result.rejections, result.iterations)


# -- what a report gives its reader ----------------------------------------------------

# The figures a user reads off a report, each as the sorted list of its samples (so that
# every statistic of it, the count, mean, percentiles and maximum, is compared at once):
# the time to first token of every request (`ttft`, one sample a request), its finish
# time (`last`) and its end-to-end latency (`response`, the finish less the send, vLLM's
# e2e request latency), the preemptions (the kv pool's count), the prefix-cache hit
# tokens, at the first admission (`hit_first`: vLLM's num_cached_tokens, what its metrics
# report) and at the last (`hit`, lib/vllm.sq's `c`), and the engine's mean inter-token
# latency (the report's `mean_itl`; vLLM's is the mean gap between a request's
# consecutive output tokens, over every request: every gap sums to its last token's time
# less its first's, over its outputs less one), as one sample.
# Where vLLM's every token time is known (a record's `tokens`, from round 20 on), the
# inter-token latencies' distribution too: the report's `itl_p50` and `itl_p99` (one
# sample each, none when null) and every latency the engine counted (`itl_gaps`, sorted:
# the count and every percentile), against vLLM's gaps between a request's consecutive
# output tokens (vLLM's `inter_token_latency`: a preemption's gap included; a request's
# first token has none; warm-up 0). A figure that one side lacks is not compared.
FIGURES = (
    "ttft",
    "finish",
    "e2e",
    "preemptions",
    "hit_first",
    "hit",
    "itl",
    "itl_p50",
    "itl_p99",
    "itl_gaps",
)


def _fig(x: float) -> float:
    return float(f"{x:.12g}")


def report_figures(plain: dict[str, Any]) -> dict[str, list[float]]:
    """The figures of a report (`differential.outcome`'s plain data, or vllm_compare's
    exact one), from its observations' samples as they are, not read back per request."""
    obs = plain["observes"]

    def values(name: str, times: bool = False) -> list[float]:
        if name not in obs:
            return []
        return sorted(_fig(x) for x in obs[name][2 if times else 1])

    return {
        "ttft": values("ttft"),
        "finish": values("last", times=True),
        "e2e": values("response"),
        "preemptions": [plain["pools"][1][1]],
        "hit_first": values("hit_first"),
        "hit": values("hit"),
        "itl": [] if math.isnan(plain.get("mean_itl", math.nan)) else [plain["mean_itl"]],
        **{
            name: [] if math.isnan(plain[name]) else [plain[name]]
            for name in ("itl_p50", "itl_p99")
            if name in plain
        },
        **({"itl_gaps": sorted(plain["itl_gaps"])} if "itl_gaps" in plain else {}),
    }


def token_gaps(tokens: dict[tuple[int, int], list[float]], warmup: float = 0) -> list[float]:
    """vLLM's inter-token latencies, sorted: every gap between two consecutive output
    tokens of a request (a request's tokens' times, `Driver.token_times`) whose later
    token comes at or after `warmup` (as a report counts them from its warm-up)."""
    return sorted(
        b - a
        for times in tokens.values()
        for a, b in zip(times, times[1:], strict=False)
        if b >= warmup
    )


def nearest_rank(values: list[float], q: float) -> list[float]:
    """The `q`-quantile of sorted `values` as serq's report takes it (nearest rank, the
    ⌈q·n⌉-th smallest), as a figure: none of no values."""
    n = len(values)
    return [values[min(max(math.ceil(q * n), 1), n) - 1]] if n else []


def figures(
    result: Result,
    scenario: Scenario,
    clock: Clock = STEPS,
    tokens: dict[tuple[int, int], list[float]] | None = None,
) -> dict[str, list[float]]:
    """The same figures from a Result (vLLM's, the model's): a request's time to first
    token is its first token's time less its send (the session's `at`, or the previous
    turn's last token plus the think), as vLLM's metrics take it, once a request. With
    `tokens` (every request's output tokens' times), the inter-token latencies'
    distribution too (`token_gaps`)."""
    ttft, finish, e2e, hit_first, hit = [], [], [], [], []
    gaps, count = 0.0, 0
    for (i, k), o in result.requests.items():
        if o.last is None:
            continue
        s = scenario.sessions[i]
        if k == 0:
            sent = s.at * clock.tick
        else:
            sent = result.requests[(i, k - 1)].last + s.turns[k].think * clock.tick
        if o.first is not None:
            ttft.append(_fig(o.first - sent))
            gaps += o.last - o.first
            count += s.turns[k].out - 1
        finish.append(_fig(o.last))
        e2e.append(_fig(o.last - sent))
        hit_first.append(_fig(o.cached_first))
        hit.append(_fig(o.cached_last))
    return {
        "ttft": sorted(ttft),
        "finish": sorted(finish),
        "e2e": sorted(e2e),
        "preemptions": [result.preemptions],
        "hit_first": sorted(hit_first),
        "hit": sorted(hit),
        "itl": [gaps / count] if count else [],
        **({} if tokens is None else _distribution(token_gaps(tokens))),
    }


def _distribution(gaps: list[float]) -> dict[str, list[float]]:
    return {
        "itl_p50": nearest_rank(gaps, 0.5),
        "itl_p99": nearest_rank(gaps, 0.99),
        "itl_gaps": gaps,
    }


def figures_difference(a: dict[str, list[float]], b: dict[str, list[float]]) -> str | None:
    """The first figure where two reports part (count, mean and the first sample apart),
    or None."""
    for name in FIGURES:
        if name not in a or name not in b:
            continue  # a record without every token's time, say
        x, y = a[name], b[name]
        if name == "itl" and len(x) == len(y) == 1 and math.isclose(x[0], y[0], rel_tol=1e-9):
            continue  # a mean: its sums are taken in different orders
        if x != y:
            first = next(
                (i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q),
                min(len(x), len(y)),
            )
            return (
                f"{name}: {len(x)} samples, mean {_mean(x)} vs {len(y)}, mean {_mean(y)}; "
                f"sorted sample {first} apart"
            )
    return None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
