"""The step engine: `stage E : step { budget B; cost C; chunk c; serve ...; memory POOL; }`.

A step stage runs iterations, vLLM's scheduler steps (spec §3 "Stages", §7). An idle
stage with residents, or with a waiting queue it serves (`admit via E`), starts one when
the world settles and no other event is pending at the instant (`World.settle` calls
`start_iterations`, one pass at the end of a settle). Budget
and chunk read the totals of the residents before the plan, the cost those of the batch
it scheduled; a resident's KV (kv_decode, kv_prefill) is its hold's allocation, as the
reference counts it (tests/sim/NOTES.md §10). Planning an iteration (`StepStage._plan`):

1. the residents, in the serve order (the keys ascending, ties in admission order), each
   take one token when decoding and up to `chunk` when prefilling (`cap`: a chunk at
   most 0 is no cap), until the budget is spent; a growing run first grows its hold to
   the position it will reach, block by block, preempting the most recently admitted
   resident of any engine on that memory (`preempt lifo`); a resident that preempted
   itself ends the pass over the residents, as vLLM's running loop breaks there (spec
   §7, scheduler.py:742-813); under `preempt none` a growth that does not fit takes
   nothing and waits among the pool's growers, which the settle grows in the order they
   stalled;
2. unless something was preempted, the stage admits the heads of the queues it serves,
   in pool declaration order, while budget is left (`budget_left(E)` is what is left);
   an admitted session runs at once, and its run here takes its share of this iteration;
   the first head that does not fit stops the admissions;
3. the iteration lasts C; its tokens apply when it ends. An iteration that schedules no
   token is none, unless it preempted.

`serve exclusive prefill` is `_plan_exclusive`.

Fast-forward (design/step-fast-forward.md, `fastforward.py` for what is proven from the
IR): an iteration that gives every resident one decode token and admits and preempts
nobody is a candidate; at the end of its instant (`World.settle` calls `extend`) the
stage works out how many iterations repeat it before anything else can happen (a
resident finishes, another event is due, the horizon, a block crossing that does not fit
or, with sessions waiting, would evict a queue head's cached prefix) and schedules one
event (`_end_span`), which applies the crossings at their own times and the tokens of
all. Every iteration of a span starts before the next other event; the last may run past
it, and the span is then applied as that one starts, which goes on as an ordinary
iteration. A span may end with the iteration in which residents take the fraction of a
token they have left (`_tail`). Positions and allocations may be fractional: a span
replays the additions of 1.0 that one iteration at a time would make (`serq.sim.ones`),
so positions, crossings, the clock and the report are bit for bit those of stepping
(tests/sim/NOTES.md §9). Engines whose iterations interleave are spanned together
(`serq.sim.joint`).
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections import Counter
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from heapq import heapify, heappop, heapreplace
from itertools import accumulate, chain, islice, repeat
from math import floor
from operator import sub
from typing import Any

from serq import ir
from serq.diagnostics import Span
from serq.diagnostics import number_text as _num
from serq.ir import SLOT
from serq.ir.arith import fold
from serq.ir.expr import reads_only
from serq.sim.cache import EPS
from serq.sim.claims import demand as claims_demand
from serq.sim.compiled_stages import observed, reads_estimates
from serq.sim.errors import SimError, bad_work, out_of_domain
from serq.sim.exprs import constant_member, key_tuple
from serq.sim.fastforward import RESIDENT, contexts
from serq.sim.holds import innermost
from serq.sim.ones import exact_ones, ones_past, plus_ones
from serq.sim.pools import TOKEN_EPS, GrowWait
from serq.sim.preempt import resident_by_keys
from serq.sim.ranked_queue import total, unordered
from serq.sim.recorder import TokenGaps
from serq.sim.session import AT_STAGE, READY
from serq.sim.stages import StageBase

Fn = Callable[[Any], float]
INF = float("inf")
_NOBODY: frozenset[Any] = frozenset()  # no waiting session's cache hit to keep
COMPUTED = SLOT["computed"]
EXACT = float(2**52)  # integral floats below this add and subtract whole numbers exactly
SPAN_MOST = 1 << 16  # iterations in one span at most (its lists stay small; the next goes on)
POSITION_MOST = EXACT - 2 * SPAN_MOST  # a span's positions start below this


class Resident:
    """A job at a step stage: its session, its run's mode and tokens left, the hold part it
    grows (or None), its admission number and the tokens the planned iteration gives it."""

    __slots__ = (
        "session",
        "decoding",
        "remaining",
        "part",
        "grows",
        "admission",
        "tokens",
        "order",
        "stall",
    )

    def __init__(
        self, session: Any, decoding: bool, remaining: float, part: Any, grows: bool
    ) -> None:
        self.session = session
        self.grows = grows
        self.decoding = decoding
        self.remaining = remaining
        self.part = part
        self.admission = 0
        self.tokens = 0.0
        self.order = 0
        self.stall: Any = None  # the pool's GrowWait of a stalled growth (`preempt none`)

    def part_on(self, pool: Any) -> Any:
        """The innermost unreleased part of the session's holds on `pool` (`innermost`):
        `part` when it is one on `pool`, since a resident's frames do not change while it
        waits in its run (a preemption or a release that ends one takes it off the stage
        first), and the part its run found on arriving was the innermost then."""
        part = self.part
        if part is None or part.pool is not pool or part.released:
            return innermost(self.session, pool)
        return part

    def position(self) -> float:
        """The position K of the resident's KV (0 without a hold part)."""
        part = self.part
        if part is None:
            return 0.0
        return part.consumed if part.position is None else part.position


class StepStage(StageBase):
    """One step stage member; `bind` gives it the world, its memory and the pools it
    serves once they exist."""

    __slots__ = (
        "name",
        "origin",
        "budget_origin",
        "cost_origin",
        "chunk_origin",
        "budget",
        "budget_value",
        "cost",
        "chunk",
        "keys",
        "key_of",
        "exclusive",
        "memory_index",
        "memory",
        "served",
        "world",
        "holds",
        "blank",
        "residents",
        "by_session",
        "busy",
        "batch",
        "planning",
        "left",
        "scheduled",
        "preempted",
        "admitting",
        "admitted",
        "verdict",
        "spans",
        "claims",
        "_pending",
        "_pending_end",
        "_budget0",
        "_chunk",
        "_order",
        "_ordered",
        "steady",
        "stalled",
        "sums",
        "kv_cost",
        "_compile",
        "measuring",
        "quiet_left",
        "reads_left",
        "_bulk",
        "itl",
        "itl_from",
        "_quiet_setups",
    )

    def __init__(
        self,
        stage: ir.Stage,
        index: int,
        engine: Any,
        recorder: Any,
        wake: Callable[[Any], None],
        compile_expr: Callable[[ir.Expr], tuple[Fn, float | None]],
    ) -> None:
        super().__init__(index, engine, recorder, wake)
        kind = stage.kind
        assert isinstance(kind, ir.Step)
        self.name = stage.name if stage.index is None else f"{stage.name}[{stage.index}]"
        self.origin = stage.origin
        # where a budget, cost or chunk outside its domain is reported: its expression
        self.budget_origin = kind.budget_origin or stage.origin
        self.cost_origin = kind.cost_origin or stage.origin
        self.chunk_origin = kind.chunk_origin or stage.origin
        self.exclusive = isinstance(kind.serve, ir.ExclusivePrefill)
        keys = () if self.exclusive else kind.serve.keys
        # the expressions are compiled by `bind`, once the pools exist: a pool they read
        # (`queued(reqs)` in a chunk) is then bound by name, its count written inline
        self._compile = (compile_expr, kind, keys)
        # whether the serve order changes only when the residents do (`_serve_order`)
        self.steady = bool(keys) and all(_steady_serve_key(k) for k in keys)
        read: set[str] = set()
        for expr in (kind.budget, kind.chunk, *keys):
            if expr is not None:
                read |= contexts(expr)
        # whether budget, chunk or a serve key reads a sum `_context` makes
        self.sums = not read.isdisjoint(("decoders", "kv_decode", "kv_prefill"))
        # whether the cost reads the batch's KV or prefill totals (`start` sums them only
        # then, or for a claim over iterations, which may read them too)
        self.kv_cost = not contexts(kind.cost).isdisjoint(
            ("kv_decode", "kv_prefill", "prefilled", "attention")
        )
        # whether budget, chunk, cost or a serve key reads `budget_left` (`bind`)
        self.reads_left = any(
            "budget_left" in observed(e)
            for e in (kind.budget, kind.cost, kind.chunk, *keys)
            if e is not None
        )
        self.measuring = True  # whether the program reads an online estimate (`bind`)
        self.quiet_left = False  # whether `budget_left` may skip `_context` (`bind`)
        # the recorder's `iterations`, `pool_states` and `pool_counts`, None where it has
        # not one (a span then tells it one at a time; `bind`)
        self._bulk: tuple[Any, Any, Any] = (None, None, None)
        # the inter-token latencies the recorder keeps (`StatsRecorder.itl`), from the
        # warm-up on; None when it keeps none
        self.itl: TokenGaps | None = None
        self.itl_from = INF
        self._quiet_setups: dict[Any, tuple] = {}  # per pool, `_quiet_setup`'s
        self.memory_index = kind.memory
        self.memory: Any = None
        self.served: list[Any] = []
        self.world: Any = None
        self.holds: Any = None
        self.blank: list[Any] = []
        self.residents: list[Resident] = []  # in arrival order
        self.by_session: dict[Any, Resident] = {}
        self.busy = False  # an iteration is running
        self.batch: list[Resident] = []  # the residents it serves
        self.planning = False
        self.left = 0.0  # the budget left while planning
        self.scheduled: list[Resident] = []
        self.preempted = False
        self.admitting = False
        self.admitted = False  # the plan admitted a session
        self.verdict: Any = None  # a fastforward.Verdict when spans may be skipped
        self.spans: list[StepStage] = []  # the world's candidates for `extend`
        self.claims: Any = None  # the run's `Claims` when a claim reads this stage's iterations
        self._pending = -1  # the end event of a candidate iteration
        self._pending_end = INF  # and its time
        self._budget0 = 0.0
        self._chunk = INF
        self._order = 0
        self._ordered: list[Resident] | None = None  # the residents by admission, kept
        self.stalled: tuple[float, float, Any] | None = None  # since when, budget, where

    def bind(self, world: Any) -> None:
        """Attach the world, the memory pool and the pools whose queues this stage serves;
        compile the budget, cost, chunk and serve keys."""
        compile_expr, kind, keys = self._compile
        self.budget = compile_expr(kind.budget)[0]
        # a budget that is a number (`budget B;` with a `let`) is not evaluated at each plan
        self.budget_value = kind.budget.value if isinstance(kind.budget, ir.Num) else None
        self.cost = compile_expr(kind.cost)[0]
        # a chunk that is never a cap (`long_prefill(reqs, 0)`) is none: not read at each plan
        chunk = kind.chunk
        self.chunk = None if chunk is None or _never_caps(chunk) else compile_expr(chunk)[0]
        self.keys = tuple(compile_expr(k)[0] for k in keys)
        self.key_of = key_tuple(self.keys)
        self.world = world
        self.holds = world.holds
        self.measuring = reads_estimates(world.program)
        recorder = self.recorder
        self._bulk = tuple(
            getattr(recorder, name, None) for name in ("iterations", "pool_states", "pool_counts")
        )
        itl = getattr(recorder, "itl", None)
        self.itl = None if itl is None else itl(self.index)  # a recorder may keep none
        self.itl_from = world.warmup
        # `_context` sets the totals an expression of an engine's (or a claim over its
        # iterations) may read after calling `budget_left`; where none calls it, a
        # budget and chunk that read no sum need only `residents`
        self.quiet_left = not (
            self.sums or world.program.claims or any(st.reads_left for st in world.steps)
        )
        self.blank = world.blank
        self.spans = world.spans
        if self.memory_index is not None:
            self.memory = world.pools[self.memory_index]
        self.served = [
            world.pools[i]
            for i, pool in enumerate(world.program.pools)
            if pool.admit_via == self.index
        ]

    # ------------------------------------------------------------------ observables

    def busy_count(self) -> float:
        """`busy(E)`: the residents the iteration in flight serves, 0 between iterations
        (the references'; `queue(E)` counts every resident; tests/sim/NOTES.md §17)."""
        return float(len(self.batch)) if self.busy else 0.0

    def work_left(self) -> float:
        total = -0.0
        for r in self.residents:
            total += r.remaining
        return total

    def budget_left(self) -> float:
        """The budget the planned iteration has left; outside a plan, what a plan started
        now would leave once the residents took their tokens (spec §3: reading it "plans an
        iteration"; the reference agrees), growth, preemption and admission aside. Every
        resident counts, under `serve exclusive prefill` too, as the reference reads it;
        the sum of the tokens, at most the budget, does not depend on the serve order."""
        if self.planning:
            return self.left
        if self.quiet_left:  # fast path: nothing reads the sums `_context` makes (`bind`)
            self.engine.residents = float(len(self.residents))
        else:
            self._context()
        blank = self.blank
        left = self.budget(blank)
        residents = self.residents
        if residents:
            chunk = self.cap(blank)
            for r in residents:
                if left <= 0:
                    break
                remaining = r.remaining
                if r.decoding:
                    t = 1.0 if remaining >= 1.0 else remaining
                else:
                    t = chunk if chunk < remaining else remaining
                if t > 0:
                    left -= t if t < left else left
        return left

    def cap(self, blank: Any) -> float:
        """The per-request chunk cap now: `chunk` read before the plan, none (inf) without
        one or when it is at most 0, as vLLM's long_prefill_token_threshold 0 is none
        (spec §7; `def long_prefill(reqs, c) = residents + queued(reqs) > 1 ? c : 0;`
        leaves a request alone the whole budget). Any positive value caps, 0.5 included."""
        chunk = self.chunk
        if chunk is None:
            return INF
        c = chunk(blank)
        if c != c:
            raise out_of_domain(self.chunk_origin, f"the chunk of `{self.name}`", c, "a number")
        return c if c > 0 else INF

    def wants(self) -> bool:
        """Whether an idle stage has anything to plan: residents or a waiting queue."""
        if self.residents:
            return True
        for pool in self.served:
            if pool.queue or pool.front:
                return True
        return False

    # ------------------------------------------------------------------ jobs

    def arrive_run(
        self, s: Any, work: float, decoding: bool, growing: Any, origin: Span | None = None
    ) -> None:
        """Session `s` starts a run of `work` tokens here (decoding or prefilling),
        growing its innermost hold on pool `growing` (or None); `origin` is the run's
        statement, where a growth outside every hold of the pool is reported."""
        part = None
        if growing is not None:
            part = innermost(s, growing)
            if part is None:
                where = self.origin if origin is None else origin
                raise SimError(where, f"a run growing `{growing.name}` outside its hold")
            if part.position is None:
                part.position = part.consumed
        elif self.memory is not None:
            part = innermost(s, self.memory)
        r = Resident(s, decoding, work, part, growing is not None)
        self._order += 1
        r.order = self._order
        r.admission = self._admission(s)
        now = self.engine.now
        s.state = AT_STAGE
        s.at = self
        s.arrived = s.started = now  # the reference counts no wait at a step stage
        self.residents.append(r)
        ordered = self._ordered
        if ordered is not None and self.keys:  # sorted again by the keys (`_serve_order`)
            self._ordered = None
        elif ordered is not None:  # a new list, in its place by admission (`_serve_order`)
            if not ordered or ordered[-1].admission <= r.admission:
                # fast path: its order is the newest, so it sorts after every resident
                # admitted no later (as `insort` puts it)
                self._ordered = ordered + [r]
            else:
                ordered = ordered.copy()
                insort(ordered, r, key=_by_admission)
                self._ordered = ordered
        self.by_session[s] = r
        self.present += 1
        self.recorder.stage_state(self.index, now, self.present, 1.0)
        if growing is not None:
            # positioned from its arrival: a run that preempts itself as it arrives
            # (admitted in a plan) caches min(ℓ, its position), the prefix it consumed,
            # as pyserq 0.1.4 does (0.1.2 cached its allocation: docs/vocabulary.md)
            part.run.positioned = True
        if self.planning and self.admitting:
            self._take(r, admitted=True)

    def arrive(self, job: Any, work: float) -> None:
        self.arrive_run(job, work, False, None)

    def _admission(self, s: Any) -> float:
        """The resident's admission number: the session's latest admission, to any pool
        (spec §3: "by the session's latest admission, the residents' serving order"),
        whether or not it holds the memory now; after every admitted session, in the order
        they came, when it was never admitted (pyserq 0.1.2 serves them so)."""
        if s.admitted:
            return float(s.admitted)
        return float(self._order) + 1e15

    def cancel(self, job: Any) -> None:
        r = self.by_session.pop(job)
        self.residents.remove(r)
        ordered = self._ordered
        if ordered is not None:  # a new list without it (`_serve_order`)
            ordered = ordered.copy()
            ordered.remove(r)
            self._ordered = ordered
        if r.stall is not None:  # it waits among its pool's growers no more
            r.part.pool.growers.remove(r.stall)
            r.stall = None
        if r.tokens:
            self.left += r.tokens
            r.tokens = 0.0
            self.scheduled.remove(r)
        job.at = None
        self.present -= 1
        self.recorder.stage_state(
            self.index, self.engine.now, self.present, 1.0 if self.present else 0.0
        )

    # ------------------------------------------------------------------ iterations

    def _context(self) -> None:
        """Set the totals `residents decoders kv_decode kv_prefill` of the residents: the
        KV of a resident is its hold's allocation (on the pool it grows, else on the
        memory), as the reference counts it (tests/sim/NOTES.md §10)."""
        engine = self.engine
        decoders = 0
        kv_decode = kv_prefill = 0.0
        for r in self.residents:
            part = r.part
            k = 0.0 if part is None else part.alloc
            if r.decoding:
                decoders += 1
                kv_decode += k
            else:
                kv_prefill += k
        engine.residents = float(len(self.residents))
        engine.decoders = float(decoders)
        engine.kv_decode = kv_decode
        engine.kv_prefill = kv_prefill

    def start(self) -> bool:
        """Plan and start an iteration now; False when it schedules nothing (no iteration)."""
        engine = self.engine
        residents = self.residents
        if self.sums:
            self._context()
        else:  # fast path: budget, chunk and serve keys read no sum over the residents
            engine.residents = float(len(residents))
        blank = self.blank
        budget = self.budget_value
        if budget is None:
            budget = self.budget(blank)
        if not budget >= 0:  # 0 plans nothing: the stall rule's, not a domain error
            raise out_of_domain(
                self.budget_origin, f"the budget of `{self.name}`", budget, "at least 0"
            )
        chunk = INF if self.chunk is None else self.cap(blank)
        self.planning = True
        self.left = budget
        self.scheduled = []
        self.preempted = self.admitted = False
        try:
            if self.exclusive:
                self._plan_exclusive(budget, chunk)
            else:
                self._plan(chunk)
        finally:
            self.planning = self.admitting = False
        scheduled = self.scheduled
        if self.admitted or self.preempted:
            self.world.replanned = engine.now
        if not scheduled and not self.preempted:
            if not self.admitted:
                # since the first plan of nothing; the budget and the place of the latest
                # (a budget of 0 is the budget expression's doing; anything else the stage's)
                since = engine.now if self.stalled is None else self.stalled[0]
                where = self.origin if budget > 0 else self.budget_origin
                self.stalled = (since, budget, where)
            return False
        self.stalled = None
        now = engine.now
        # the cost reads the batch: its tokens, and its residents' KV after the growth
        tokens = 0.0
        decodes = 0
        if self.kv_cost or self.claims is not None:
            prefilled = attention = kv_decode = kv_prefill = 0.0
            for r in scheduled:
                t = r.tokens
                tokens += t
                part = r.part
                if r.decoding:
                    decodes += 1
                    if part is not None:
                        kv_decode += part.alloc
                    continue
                prefilled += t
                if part is not None:
                    kv_prefill += part.alloc
                    # K: the position before the chunk, 0 for a hold with none
                    k = 0.0 if part.position is None else part.position
                    attention += t * (k + t / 2)
                else:
                    attention += t * (t / 2)
            engine.kv_decode = kv_decode
            engine.kv_prefill = kv_prefill
            engine.prefilled = prefilled
            engine.attention = attention
        else:  # fast path: the cost reads no KV or prefill total (nothing else reads them)
            for r in scheduled:
                tokens += r.tokens
                if r.decoding:
                    decodes += 1
        prefills = len(scheduled) - decodes
        engine.residents = n = float(len(residents))
        engine.decoders = float(decodes)
        engine.tokens = tokens
        if self.claims is not None:  # a claim over iterations reads the planned iteration
            self.claims.iteration(
                self.index, claims_demand(self.residents, chunk), self.world.arrivals
            )
        c = self.cost(blank)
        if not c >= 0:  # the clock never runs backwards
            raise out_of_domain(
                self.cost_origin, f"the cost of an iteration of `{self.name}`", c, "at least 0"
            )
        if c == 0.0:  # a run that never ends at iterations of no time: the clock stops
            for r in scheduled:
                if _never_ends(r.remaining, r.tokens):
                    raise SimError(self.origin, _no_progress(self, r, r.tokens))
        self.busy = True
        self.batch = scheduled
        end = now + c
        if end == INF:  # it never ends: the engine stops here (a W-stall, or the stall)
            self.world.stalled(self.cost_origin, now, _endless_iteration(self, c))
        self.recorder.iteration(self.index, now, prefills, decodes, tokens, end)
        seq = engine.schedule(end, self._end, scheduled)
        if (
            self.verdict is not None
            and not prefills
            and tokens == decodes == n  # one token each
            and not self.preempted
            and not self.admitted
            and end > now
        ):
            self._pending = seq
            self._pending_end = end
            self._budget0 = budget
            self.spans.append(self)
        return True

    def _why_nothing(self, budget: float) -> str:
        """Why a plan scheduled, preempted and admitted nothing, with what the stage holds:
        for the stall diagnostic (`stall`)."""
        residents = self.residents
        waiting = sum(len(p.queue) + len(p.front) for p in self.served)
        decoding = sum(1 for r in residents if r.decoding)
        held = _count(len(residents), "resident")
        if residents:
            held += f" ({decoding} decoding, {len(residents) - decoding} prefilling)"
        held += f" and {_count(waiting, 'waiting session')}"
        if not budget > 0:
            why = f"its budget is {_num(budget)}, so no token can be scheduled"
        elif residents and all(r.stall is not None for r in residents):
            pool = residents[0].part.pool
            why = (
                f"every resident waits to grow its hold on pool {pool.name} (preempt none), "
                f"which has {_num(pool.cap - pool.allocated)} of {_num(pool.cap)} units free"
            )
        elif residents:
            why = "no resident's growth fits and none can be preempted"
        else:
            heads = [p for p in self.served if p.head() is not None]
            names = ", ".join(p.name for p in heads)
            why = f"the head of the queue at {names} does not fit"
        return f"stage {self.name} holds {held}, and {why}"

    def stall(self) -> tuple[float, Any, str] | None:
        """Since when, where and why this stage has planned nothing, if it still has
        something to plan and no iteration runs (why: what it holds now, not when it
        stopped); None when it is not stalled."""
        if self.stalled is None or self.busy or not self.wants():
            return None
        since, budget, where = self.stalled
        return since, where, self._why_nothing(budget)

    def _serve_order(self) -> list[Resident]:
        """The residents in the serve order: a list no one changes (a resident that arrives
        or leaves makes a new one), kept when there are no keys (admission numbers do not
        change): an arrival is put in its place and a run that finishes taken out, and
        any other departure sorts them again. Kept too under `steady` keys, which read
        only what a resident keeps while it stays (`decoding`, `admission`, its session's
        attributes: the session waits in the run), unless a key is NaN (ordered as the
        reference orders it, `ranked_queue.total`, and sorted again each time): an
        arrival sorts them again, a run that finishes is taken out."""
        residents = self.residents
        if not self.keys:
            ordered = self._ordered
            if ordered is None:
                ordered = self._ordered = sorted(residents, key=_by_admission)
            return ordered
        engine = self.engine
        key_of = self.key_of
        self._context()
        keyed = []
        for r in residents:
            engine.decoding = 1.0 if r.decoding else 0.0
            engine.admission = r.admission - 1.0  # the key counts from 0
            engine.remaining = r.remaining
            keyed.append((key_of(r.session.attrs), r.admission, r.order, r))
        if any(unordered(item[0]) for item in keyed):  # a NaN, ordered as pyserq orders it
            keyed.sort(key=lambda item: (total(item[0]), item[1], item[2]))
            return [item[3] for item in keyed]
        keyed.sort(key=_first_three)
        ordered = [item[3] for item in keyed]
        if self.steady:
            self._ordered = ordered
        return ordered

    def _plan(self, chunk: float) -> None:
        by_session = self.by_session
        scheduled = self.scheduled
        # fast path: the order `_serve_order` keeps
        ordered = self._ordered if self.steady or not self.keys else None
        if ordered is None:
            ordered = self._serve_order()
        ceil = math.ceil
        add = scheduled.append
        left = self.left
        preempted = False  # a resident may have left by a preemption in `_grow`
        for r in ordered:
            if left <= 0:
                break
            if preempted and r.session not in by_session:
                continue  # preempted earlier in this plan
            # fast path: `_tokens` inlined
            remaining = r.remaining
            if r.decoding:
                t = 1.0 if remaining >= 1.0 else remaining
            else:
                t = chunk if chunk < remaining else remaining
            if t > left:
                t = left
            if t <= 0:
                continue
            if r.grows:
                # fast path: `_grow` when the target is inside the allocation (no call)
                part = r.part
                target = part.position + t  # a growing run's part has one (`arrive_run`)
                if target - part.alloc > TOKEN_EPS or r.stall is not None:
                    pool = part.pool
                    b = pool.block
                    if b is not None and target - target == 0.0:  # finite
                        target = ceil(target / b) * b
                    need = target - part.alloc
                    if (
                        r.stall is None
                        and not pool.reserve_held
                        and pool.allocated + pool.held + need <= pool.limit
                    ):  # fast path: `_grow` of a growth that fits at once
                        if pool.infinite:  # beside a part of inf units (`Pool.infinite`)
                            pool.infinite_grow(part.alloc, need)
                        part.alloc += need
                        pool.allocated += need
                        pool.dirty = True
                        if pool.allocated + pool.cache.total > pool.cap:
                            self.left = left  # as `_grow` sees it
                            pool.evict(self.recorder)
                        r.tokens = t
                        left -= t
                        add(r)
                        continue
                    self.left = left
                    grown = self._grow(r, t, preempt=True)
                    left = self.left  # a preemption gives a victim's tokens back
                    preempted = self.preempted
                    if not grown:
                        if r.session not in by_session:
                            break  # it preempted itself: vLLM's running loop ends there
                        continue  # it waits (preempt none): the others are still served
            r.tokens = t
            left -= t
            add(r)
        self.left = left
        if not self.preempted:
            self.admitting = True
            self._chunk = chunk
            for pool in self.served:  # fast path: no call while every served queue is empty
                if pool.queue or pool.front:
                    self._admit_all(chunk)
                    break

    def _tokens(self, r: Resident, chunk: float) -> float:
        if r.decoding:
            t = 1.0 if r.remaining >= 1.0 else r.remaining
        else:
            t = chunk if chunk < r.remaining else r.remaining
        return t if t <= self.left else self.left

    def _take(self, r: Resident, admitted: bool) -> None:
        """Schedule `r`, which arrived while the stage was admitting."""
        if self.left <= 0 or r.tokens:
            return
        t = self._tokens(r, self._chunk)
        if t > 0 and self._grow(r, t, preempt=True):
            r.tokens = t
            self.left -= t
            self.scheduled.append(r)

    def _admit_all(self, chunk: float) -> None:
        """Admit the heads of the served queues while they fit and budget is left."""
        world = self.world
        holds = self.holds
        ready = world.ready
        for pool in self.served:
            if not pool.queue and not pool.front:
                continue  # fast path: `head` of an empty queue
            while self.left > 0:
                run = pool.head()
                if run is None:
                    break
                if not holds._fits(run):
                    return
                holds._admit(run)
                self.admitted = True
                while ready:
                    s = ready.popleft()
                    world.run_session(s)
                if self.preempted:
                    return  # an admitted run preempted: no further admission

    def _grow(self, r: Resident, t: float, preempt: bool) -> bool:
        """Grow `r`'s hold to cover position + t, all at once (vLLM's allocate_slots),
        preempting the most recently admitted resident while it does not fit; False when
        it cannot (it preempted itself, or it may not preempt)."""
        if not r.grows:
            return True
        part = r.part
        pool = part.pool
        if r.stall is not None:
            return False  # a grower of its pool: a settle grows it, in stall order
        # fast path: `Resident.position` and `Pool.round_up` inlined
        target = (part.consumed if part.position is None else part.position) + t
        if not target - part.alloc > TOKEN_EPS:
            return True  # within the allocation, or past it by at most TOKEN_EPS
        b = pool.block
        if b is not None and -INF < target < INF:
            target = math.ceil(target / b) * b
        need = target - part.alloc
        if need <= 0:  # a target within a block's rounding of the allocation
            return True
        reserve_held = pool.reserve_held
        # fast path: `Pool.growth` is `need` where no reservation is held
        while (
            pool.allocated + pool.held + (pool.growth(part, need) if reserve_held else need)
            > pool.limit  # the cap, up to rounding (`Pool.limit`)
        ):
            if not pool.lifo:
                # preempt none: it waits, growing nothing (the reference grows no part of
                # a growth that does not fit), among the pool's growers: the settle grows
                # them in the order they stalled, the head blocking the rest (spec §3).
                # The run resumes where it was: its position does not move (pyserq 0.1.2
                # moves it by what the growth lacked; tests/sim/NOTES.md §7)
                r.stall = GrowWait(r.session, part, r.position() + t - part.alloc, r)
                pool.growers.append(r.stall)
                return False
            if not preempt:
                return False
            victim = self._victim(pool)
            if victim is None:
                return False
            self.preempted = True
            # the victim caches min(ℓ, its position), beyond its allocation when the
            # prefix it consumed is larger (pyserq 0.1.4; 0.1.2 cached the allocation)
            self.holds.preempt(victim.run, pool)
            if victim.run.session is r.session:
                return False
        if pool.infinite:  # beside a part of inf units (`Pool.infinite`)
            pool.infinite_grow(part.alloc, need)
        part.alloc += need
        pool.allocated += need
        if reserve_held:
            pool.grew(part, need)
        pool.dirty = True
        if pool.allocated + pool.cache.total > pool.cap:  # else `evict` has nothing to do
            pool.evict(self.recorder)
        return True

    def _victim(self, pool: Any) -> Any:
        """The innermost part on `pool` of the most recently admitted resident of any
        step stage whose memory `pool` is (spec §3, preempt lifo). A resident holding
        `pool` has its session's latest admission number, which no other session has, so
        where a stage keeps its residents in admission order (`_serve_order` without
        keys) its newest holder is the last of them that holds the pool. A pool that is
        another engine's memory (a run here growing it) gives way with that engine's
        residents; only a pool that is no engine's memory with its newest holder."""
        if pool is not self.memory:
            engine = next((st for st in self.world.steps if st.memory is pool), None)
            return pool.victim(innermost) if engine is None else engine._victim(pool)
        if pool.preempt_key_of is not None:
            return resident_by_keys(pool, self.world.steps)
        best = None
        newest = -INF
        for stage in self.world.steps:  # every engine whose memory this pool is
            if stage.memory is not pool:
                continue
            ordered = None if stage.keys else stage._ordered
            if ordered is not None:  # fast path: from the newest back, the first holder
                for r in reversed(ordered):
                    part = r.part_on(pool)
                    if part is not None and not part.leased:
                        if r.admission > newest:
                            best, newest = part, r.admission
                        break
                continue
            for r in stage.residents:
                part = r.part_on(pool)
                if part is not None and not part.leased and r.admission > newest:
                    best, newest = part, r.admission
        return best

    def _plan_exclusive(self, budget: float, chunk: float) -> None:
        """serve exclusive prefill: one prefill alone (a resident one first), or a
        decode-only batch that a fitting waiting prefill displaces."""
        self._chunk = chunk
        prefills = [r for r in sorted(self.residents, key=_by_admission) if not r.decoding]
        if prefills:
            for r in prefills:
                t = self._tokens(r, chunk)
                if t > 0 and self._grow(r, t, preempt=True):
                    r.tokens = t
                    self.left -= t
                    self.scheduled.append(r)
                    return
                if self.preempted:
                    return
            # no resident prefill can go on (each waits to grow): none is selected, and
            # admission goes on with no decode batch (the reference; tests/sim/NOTES.md
            # §16: a stalled growth is the pool's grower, not the plan's)
        else:
            for r in sorted(self.residents, key=_by_admission):
                if self.left <= 0:
                    break
                if r.session not in self.by_session:
                    continue
                t = self._tokens(r, chunk)
                if t <= 0:
                    continue
                if not self._grow(r, t, preempt=True):
                    if r.session not in self.by_session:
                        break
                    continue
                r.tokens = t
                self.left -= t
                self.scheduled.append(r)
            if self.preempted or self.left <= 0:
                return
        tentative = self.scheduled
        self.scheduled = []
        self.admitting = True
        holds = self.holds
        world = self.world
        for pool in self.served:
            while True:
                self.left = budget  # a waiting prefill sees the full budget
                run = pool.head()
                if run is None:
                    break
                if not holds._fits(run):
                    return self._keep(tentative, budget)
                holds._admit(run)
                self.admitted = True
                while world.ready:
                    world.run_session(world.ready.popleft())
                if any(not r.decoding for r in self.scheduled):
                    for r in tentative:  # a prefill is selected: it runs alone
                        r.tokens = 0.0
                    return None
                if not self.scheduled:
                    if self.preempted:  # no admission in an iteration that preempted
                        return self._keep(tentative, budget)
                    # admitted, but its run is not here (it waits at another pool): no
                    # prefill is selected, so admission goes on (as the reference)
                    continue
                tentative = tentative + self.scheduled  # a request that only decodes joins
                self.scheduled = []
                if budget - sum(r.tokens for r in tentative) <= 0:
                    return self._keep(tentative, budget)
        return self._keep(tentative, budget)

    def _keep(self, batch: list[Resident], budget: float) -> None:
        """The decode batch `batch` is the iteration (no prefill displaced it)."""
        self.scheduled = batch
        self.left = budget - sum(r.tokens for r in batch)

    # ------------------------------------------------------------------ fast-forward

    def extend(self) -> None:
        """The instant a candidate iteration started is over: turn it into a span of the
        iterations that repeat it, when there are at least two."""
        engine = self.engine
        world = self.world
        if world.replanned == engine.now:
            # a plan of this instant ran the sessions it admitted or preempted after the
            # pools' retry and the engines' starts: one may wait at a pool where it fits
            # now, or have arrived at an engine that already planned nothing, and the next
            # event, which a span would skip, admits or starts it (as the references do)
            return
        heap = engine._heap
        joint = world.joint
        if joint is not None and joint(self):  # with the other engines' (`serq.sim.joint`)
            return
        end = self._pending_end
        bound = self._next_other(heap)
        if not (end < bound and end <= engine.until):
            # iteration 1 would not start before the next other event or would start after
            # the horizon: `_span` would find fewer than two (as `_started` counts them)
            return
        if not heap or heap[0][1] != self._pending:
            return  # not pending (it ends before any other event, so it would be first)
        span = self._span(end, heap[0][3], bound)
        if span is None:
            return
        heappop(heap)  # the candidate's end, replaced by the span's
        if span[4]:  # its last iteration runs past the next event: applied as it starts
            engine.schedule(span[1][-2], self._end_span, span)
        else:
            engine.schedule(span[1][-1], self._end_span, span)

    def _next_other(self, heap: list[tuple]) -> float:
        """The time of the first pending event other than the candidate's end (inf when
        none): the heap's first, or the lesser of its two children when that is it."""
        if not heap:
            return INF
        if heap[0][1] != self._pending:
            return heap[0][0]
        n = len(heap)
        if n > 2:
            return min(heap[1], heap[2])[0]
        return heap[1][0] if n > 1 else INF

    def _span(self, first_end: float, scheduled: Any, bound: float) -> tuple | None:
        """(m, ends, crossings, scheduled, runs_on, fractions) for the m >= 2 iterations
        that repeat the one planned now, ending at `first_end`, before the next other event
        at `bound` (inf when none): `ends` are their end times
        (each the next one's start), `crossings` the block crossings (iteration, serve
        rank, resident, units) in the order the iterations would grow them; None when
        m < 2. Every iteration starts before the next other event and not after the
        horizon; `runs_on` says the last one ends after either (it is still running when
        the event comes, so `_end_span` applies the span as it starts). `fractions` is
        None, or the last iteration is a `_tail` and it lists the residents that take a
        fraction of a token in it, with their tokens."""
        residents = self.residents
        n = len(residents)
        if not scheduled or n != len(scheduled):
            return None
        limit = INF  # the fewest tokens left: no resident finishes before the last
        kv = 0.0
        for r in residents:  # the order `_context` sums the KV in
            if r.tokens != 1.0 or not r.decoding or r.stall is not None:
                return None
            remaining = r.remaining
            if remaining < limit:
                limit = remaining
            # below 2**53 taking 1.0 from at least 1.0 is exact; a position below
            # POSITION_MOST stays below 2**52 through a span (`ones`: replayed additions)
            if not remaining < EXACT:
                return None
            part = r.part
            if part is None:
                continue  # position 0
            p = part.consumed if part.position is None else part.position  # `position`
            if not 0.0 <= p < POSITION_MOST:
                return None
            if part.alloc < part.reserve and r.grows and part.pool.reserve_held:
                # its growths would use up its held reservation (`Pool.growth`, `grew`),
                # which the crossings do not count: a span only beyond it
                return None
            kv += part.alloc
        most = int(min(limit, SPAN_MOST))
        if most < 1 or not kv < EXACT:
            return None
        world = self.world
        verdict = self.verdict
        # the waiting sessions whose cache hit an admission attempt reads: the head of
        # each queue (only a head is tried, and no queue changes inside a span), every
        # session of a queue with keys (a hit may order it), and the growers
        heads: Any = _NOBODY  # a set of its own once someone waits
        waiting = False
        for pool in world.pools:
            if pool.queue or pool.front or pool.growers:
                if not waiting:
                    heads = set()
                    waiting = True
                if pool.front:
                    heads.add(pool.front[0].session)
                elif pool.keys:
                    heads.update(run.session for run in pool.queue)
                elif pool.queue:
                    heads.add(pool.queue[0].session)
                if pool.growers:
                    heads.update(grower.session for grower in pool.growers)
        if waiting and (not verdict.with_waiters or self.exclusive):
            return None
        # a resident with a fraction of a token left after `most` iterations takes it in
        # one more (`_tail`), when nobody waits and the budget is the same
        # (not under claims: its tokens and demand are not the span's)
        tail = (
            most + TOKEN_EPS < limit < most + 1  # within TOKEN_EPS of `most`: done at it
            and not waiting
            and not verdict.budget_varies
            and self.claims is None
        )
        if most == 1:
            if not tail:
                return None
            ends, crossings = [first_end], []
        elif verdict.cost_varies:  # the KV the costs read moves at the crossings
            engine = self.engine
            room = min(bound, engine.until) - first_end
            if room < INF:  # as many as fit at the first cost, and one that runs past the
                # bound: a span of costs that fall below it ends early, and the iterations
                # after it go on as usual
                most = min(most, int(room / (first_end - engine.now)) + 3)
            crossings, whole = self._crossings(scheduled, most, heads)
            ends = self._ends_varying(
                first_end,
                bound,
                n,
                kv,
                most,
                waiting,
                crossings,
                scheduled,
                whole and kv == floor(kv),
            )
        else:
            ends = self._ends(first_end, bound, n, kv, most, waiting)
            if ends is None:
                return None
            crossings = self._whole_crossings(scheduled, len(ends), heads)
            if crossings is None:  # `_crossings`, whose flag nothing reads here
                crossings = self._some_crossings(scheduled, len(ends), heads)
        m = len(ends)
        if crossings and crossings[-1][0] < 0:  # a crossing that does not fit ends it
            m = min(m, -crossings.pop()[0])
            del ends[m:]
        if crossings and crossings[-1][0] >= m:
            del crossings[bisect_left(crossings, m, key=_first) :]
        until = self.engine.until
        fractions = None
        if tail and m == most and ends[-1] < bound and ends[-1] <= until:
            fractions = self._tail(m, ends, crossings, scheduled)
            if fractions is not None:
                m += 1
        if m < 2:
            return None
        last = ends[-1]
        return (m, ends, crossings, scheduled, not (last < bound and last <= until), fractions)

    def _tail(
        self, k: int, ends: list[float], crossings: list[tuple], scheduled: list[Resident]
    ) -> list[tuple[Resident, float]] | None:
        """Iteration k of a span, after k that gave every resident one token, in which the
        residents with less than one token left take what they have left and the others
        one: its growth (in serve order, from the positions and the allocations the span
        leaves) is added to `crossings` and its end to `ends`, as planning it would make
        them, and the residents that take a fraction are returned with it; None (nothing
        added) when its growth does not fit or its cost is not positive and finite."""
        engine = self.engine
        grown: dict[Any, float] = {}  # the allocations the span's crossings leave
        for crossing in crossings:
            part = crossing[2].part
            grown[part] = grown.get(part, part.alloc) + crossing[3]
        tokens = kv = 0.0
        found = []
        fractions = []
        ceil = math.ceil
        for rank, r in enumerate(scheduled):  # as `_plan` and `start` take them
            left = r.remaining - k  # exact (`_end_span`)
            t = 1.0 if left >= 1.0 else left
            part = r.part
            if part is not None:
                alloc = grown.get(part, part.alloc)
                if r.grows:
                    position = part.consumed if part.position is None else part.position
                    target = plus_ones(position, k) + t
                    if target - alloc > TOKEN_EPS:  # as `_grow`
                        b = part.pool.block
                        if b is not None and -INF < target < INF:
                            target = ceil(target / b) * b
                        need = target - alloc
                        if need > 0:
                            found.append((k, rank, r, need))
                            alloc += need
                kv += alloc
            tokens += t
            if t != 1.0:
                fractions.append((r, t))
        used: dict[Any, float] = {}
        for _, _, r, need in found:  # each growth fits next to those before it
            pool = r.part.pool
            if pool not in used:
                used[pool] = pool.allocated
                for crossing in crossings:
                    if crossing[2].part.pool is pool:
                        used[pool] += crossing[3]
            # fits as `_grow` tests it (the reservations held count), and evicts only
            # what a span may
            if used[pool] + pool.held + need > pool.cap:
                return None
            allocated = used[pool] + need
            if allocated > pool.cap or allocated + self._kept(pool, _NOBODY, 0.0) > pool.cap:
                return None
            used[pool] = allocated
        n = float(len(scheduled))
        engine.residents = engine.decoders = n
        engine.kv_decode = kv
        engine.kv_prefill = engine.prefilled = engine.attention = 0.0
        engine.tokens = tokens
        c = self.cost(self.blank)
        if not 0.0 < c < INF:
            return None
        ends.append(ends[-1] + c)
        crossings += found
        return fractions

    def _totals(self, n: int) -> None:
        """The iteration totals of a span's iterations, but kv_decode: n residents, all
        decoding one token each, no prefill."""
        engine = self.engine
        engine.residents = engine.decoders = engine.tokens = float(n)
        engine.kv_prefill = engine.prefilled = engine.attention = 0.0

    def _ends(
        self, first_end: float, bound: float, n: int, kv: float, most: int, waiting: bool
    ) -> list[float] | None:
        """The end times of the iterations 0..m-1 that repeat iteration 0 (m <= `most`),
        for a budget and a cost that do not read kv_decode: each the previous end plus
        the cost, as one iteration at a time adds them; each starts before the next other
        event (at `bound`) and at or before the horizon (the last may end after them)."""
        engine = self.engine
        blank = self.blank
        until = engine.until
        self._totals(n)
        engine.kv_decode = kv
        budget = self.budget_value
        if budget is None:
            budget = self.budget(blank)
        if not budget >= n or (waiting and budget != self._budget0):
            return None
        c = self.cost(blank)
        if not 0.0 < c < INF:
            return None
        room = min(bound, until) - first_end
        count = most - 1 if room == INF else min(most - 1, int(room / c) + 2)
        ends = list(accumulate(repeat(c, count), initial=first_end))
        del ends[_started(ends, bound, until) :]
        return ends

    def _ends_varying(
        self,
        first_end: float,
        bound: float,
        n: int,
        kv: float,
        most: int,
        waiting: bool,
        crossings: list[tuple],
        scheduled: list[Resident],
        whole: bool,
    ) -> list[float]:
        """`_ends` for a budget or cost that reads kv_decode, the residents' allocations:
        iteration j's budget reads them grown by the iterations before j, summed in
        resident order (`_context`), its cost grown by j too, summed in serve order
        (`start`). Between crossings both are constant, so they are evaluated once per
        stretch. Whole allocations sum exactly in any order (`whole`: the residents' KV
        `kv` and every crossing's units are whole numbers): the sums then move by each
        crossing's units; otherwise both are summed again, in their orders, as `_context`
        and `start` sum them."""
        engine = self.engine
        blank = self.blank
        until = engine.until
        room = min(bound, until) - first_end  # the costs needed to pass it, roughly
        self._totals(n)
        budget_fn, cost_fn = self.budget, self.cost
        if not whole:  # each resident's allocation as the crossings grow it
            alloc = {r: r.part.alloc for r in scheduled if r.part is not None}
            residents = [r for r in self.residents if r.part is not None]
            parted = [r for r in scheduled if r.part is not None]
            kv_cost = 0.0
            for r in parted:
                kv_cost += alloc[r]
        else:
            kv_cost = kv
        # the costs of iterations 1, 2, ... in order, as stretches of one cost each (not
        # a list of every cost: `accumulate` reads them once)
        costs: list[Iterable[float]] = []
        spent = 0.0
        i, count = 0, len(crossings)
        if count and crossings[-1][0] < 0:  # the span ends at that iteration at the latest
            count -= 1
            most = min(most, -crossings[-1][0])
        j = 1
        budget_varies = self.verdict.budget_varies
        if not budget_varies:  # fast path: one budget for the whole span
            engine.kv_decode = kv
            budget = budget_fn(blank)
            if not budget >= n or (waiting and budget != self._budget0):
                most = 1
            elif whole:  # fast path: the sum moves by each crossing's units
                # iterations j .. next-1 cost what iteration j's growth leaves (`most`
                # already stops near the bound: `_span`)
                for i in range(count):
                    crossing = crossings[i]
                    nxt = crossing[0]
                    if nxt >= most:
                        break
                    if nxt != j:
                        engine.kv_decode = kv
                        c = cost_fn(blank)
                        if not 0.0 < c < INF:
                            most = j
                            break
                        costs.append(repeat(c, nxt - j))
                        j = nxt
                    kv += crossing[3]
                if j < most:
                    engine.kv_decode = kv
                    c = cost_fn(blank)
                    if 0.0 < c < INF:
                        costs.append(repeat(c, most - j))
                most = 1
        while j < most and spent <= room:
            if budget_varies:  # iteration j's budget: grown by the iterations before j
                engine.kv_decode = kv
                budget = budget_fn(blank)
                if not budget >= n or (waiting and budget != self._budget0):
                    break
            grew = i < count and crossings[i][0] == j
            if grew:  # iteration j's own growth, which its cost reads
                while i < count and crossings[i][0] == j:
                    need = crossings[i][3]
                    if whole:
                        kv += need
                    else:
                        r = crossings[i][2]
                        alloc[r] += need
                    i += 1
                if whole:
                    kv_cost = kv
                else:
                    kv = kv_cost = 0.0
                    for r in residents:
                        kv += alloc[r]
                    for r in parted:
                        kv_cost += alloc[r]
            engine.kv_decode = kv_cost
            c = cost_fn(blank)  # iteration j's, and the same for j+1 .. nxt-1
            if not 0.0 < c < INF:
                break
            costs.append((c,))
            spent += c
            j += 1
            nxt = most  # iterations j .. nxt-1 grow nothing
            if i < count and crossings[i][0] >= 0:
                nxt = min(crossings[i][0], most)
            if j >= nxt:
                continue
            if grew and budget_varies:  # their budget reads what iteration j - 1 grew
                engine.kv_decode = kv
                budget = budget_fn(blank)
                if not budget >= n or (waiting and budget != self._budget0):
                    break
            run = nxt - j
            if room != INF:
                run = min(run, int((room - spent) / c) + 2)
            costs.append(repeat(c, run))
            spent += c * run
            j += run
        # the clock adds them one at a time, in order, as iteration by iteration would
        ends = list(accumulate(chain.from_iterable(costs), initial=first_end))
        del ends[max(_started(ends, bound, until), 1) :]
        return ends

    def _crossings(
        self, scheduled: list[Resident], m: int, heads: AbstractSet[Any]
    ) -> tuple[list[tuple], bool]:
        """The block crossings of iterations 1..m-1, in the order they happen, and whether
        every one grows a whole number of units; when one cannot happen inside a span (it
        does not fit, or it would evict what a span may not: `_kept`), the list ends with
        (-j, ...) for its iteration j."""
        found = self._whole_crossings(scheduled, m, heads)
        if found is not None:
            return found, True  # each grows one block, a whole number of units
        found = self._some_crossings(scheduled, m, heads)
        return found, all(c[3] == floor(c[3]) for c in found)

    def _some_crossings(
        self, scheduled: list[Resident], m: int, heads: AbstractSet[Any]
    ) -> list[tuple]:
        """`_crossings` in general: each resident's crossings listed, then sorted."""
        found = []
        growers = 0  # the residents that cross
        blocks: Any = None  # the one pool all cross in by whole blocks, else False
        for rank, r in enumerate(scheduled):
            if not r.grows:
                continue
            part = r.part
            pool = part.pool
            p = r.position()
            alloc = part.alloc
            b = pool.block
            growers += 1
            if (
                b is not None
                and b == math.floor(b)
                and p == math.floor(p)
                and alloc % b == 0
                and alloc - p >= 1
            ):
                # fast path: whole blocks from an edge; one block every b iterations
                step = int(b)
                found += [(j, rank, r, b) for j in range(int(alloc - p), m, step)]
                if blocks is None:
                    blocks = pool
                elif blocks is not pool:
                    blocks = False
                continue
            if (
                b is not None
                and b >= 1.0
                and math.frexp(b)[0] == 0.5
                and alloc % b == 0
                and alloc < EXACT
                and p - math.floor(p) > TOKEN_EPS  # an edge is never passed by that little
                and ones_past(p, alloc) >= 2
            ):
                # fast path: whole blocks of a power of two, a fractional position: the
                # target passes the edge when the position plus one does (dividing by b is
                # exact), by at most 1, so a crossing grows one block; replayed positions
                # find each crossing (`ones_past`), unless a higher binade rounded the
                # fraction to TOKEN_EPS or below (1e-9 + 128), where `_grow` grows later
                edge, mine = alloc, []
                while (j := ones_past(p, edge) - 1) < m:
                    if not _passes(p, j, edge):
                        break
                    mine.append((j, rank, r, b))
                    edge += b
                else:
                    found += mine
                    if blocks is None:
                        blocks = pool
                    elif blocks is not pool:
                        blocks = False
                    continue
            blocks = False
            j = 1
            # fast path: once its own growth passes its pool's cap (by more than the
            # sums' rounding), the span ends at that crossing at the latest (the loop
            # below): the later ones are not listed (a span of 65,536 iterations at a cap
            # of a few blocks listed every one, 3.4x the time of stepping them)
            used, over = pool.allocated, pool.cap * (1.0 + 2.0**-20)
            while j < m:
                j = _crossing(p, alloc, j, m)
                if j >= m:
                    break
                need = _target(p, j, b) - alloc
                found.append((j, rank, r, need))
                alloc += need
                used += need
                if used > over:
                    break
                j += 1
        if not found:
            return found
        if growers > 1:
            found.sort()  # by iteration, then serve rank (unique: no resident is compared)
        pool = found[0][2].part.pool
        b = pool.block
        if blocks is pool:
            # fast path: one pool, a whole block per crossing: count the crossings that fit
            kept = self._kept(pool, heads, b * len(found))
            # a crossing fits next to the reservations held, and evicts only what it may
            room = pool.cap - pool.allocated - max(kept, pool.held)
            if room == INF or pool.cap == INF:  # an infinite cap: every crossing fits
                return found  # (the room is NaN while a part of inf units is held)
            if room == math.floor(room):  # whole numbers: the loop below, by arithmetic
                fit = int(room // b) if room >= 0 else 0
                if fit < len(found):
                    j = found[fit][0]
                    del found[fit:]
                    found.append((-j, 0, None, 0.0))
                return found
        used: dict[Any, float] = {}
        kept: dict[Any, float] = {}
        for i, (j, _, r, need) in enumerate(found):
            pool = r.part.pool
            if pool not in kept:
                grown = sum(c[3] for c in found if c[2].part.pool is pool)
                kept[pool] = self._kept(pool, heads, grown)
            before = used.get(pool, pool.allocated)
            allocated = before + need
            if (
                before + pool.held + need > pool.cap  # `_grow`'s test, reservations held
                or allocated > pool.cap
                or allocated + kept[pool] > pool.cap
            ):
                del found[i:]
                found.append((-j, 0, r, 0.0))
                break
            used[pool] = allocated
        return found

    def _whole_crossings(
        self, scheduled: list[Resident], m: int, heads: AbstractSet[Any]
    ) -> list[tuple] | None:
        """`_crossings` when every resident that crosses grows one pool by whole blocks
        from an allocation at a block edge, its position whole or (blocks of a power of
        two) fractional with every addition of the span exact, and the room is whole:
        each then crosses, growing one block, every b iterations from its first (the
        target passes an edge when the position plus one does), so the crossings are
        counted by arithmetic and only those that fit are listed, merged in order. None
        when that does not hold."""
        firsts = []  # (first crossing, serve rank, resident) of those that cross before m
        total = 0  # the crossings before m
        pool = None
        floor = math.floor
        for rank, r in enumerate(scheduled):
            if not r.grows:
                continue
            part = r.part
            p = part.consumed if part.position is None else part.position
            alloc = part.alloc
            if pool is None:
                pool = part.pool
                b = pool.block
                if b is None or b != floor(b):
                    return None
                step = int(b)
            elif part.pool is not pool:
                return None
            if alloc % b:
                return None
            if p == floor(p):
                first = alloc - p
                if not first >= 1:
                    return None
                first = int(first)
            else:
                if (
                    not 1.0 <= b < EXACT
                    or math.frexp(b)[0] != 0.5
                    or not alloc < EXACT
                    or exact_ones(p) < m  # position p + m, the last compared, is exact
                    or not p - floor(p) > TOKEN_EPS  # an edge passed by that little: no growth
                ):
                    return None
                # the additions are exact, so the first that passes alloc is
                # floor(alloc - p) + 1, and alloc - p is exact where alloc <= 2p (Sterbenz)
                first = int(alloc - p) if alloc <= p + p else ones_past(p, alloc) - 1
                if first < 1:
                    return None
            if first < m:
                firsts.append((first, rank, r))
                total += (m - 1 - first) // step + 1
        if not total:
            return []
        # the crossings fit next to the reservations held, and evict only what they may
        room = pool.cap - pool.allocated - max(self._kept(pool, heads, b * total), pool.held)
        if room == INF or pool.cap == INF:  # an infinite cap: every crossing fits (the
            fit = total  # room is NaN while a part of inf units is held)
        elif room != floor(room):
            return None
        else:
            fit = int(room // b) if room >= 0 else 0
        want = total if fit >= total else fit + 1
        if len(firsts) == 1:
            first, rank, r = firsts[0]
            found = [(j, rank, r, b) for j in range(first, m, step)[:want]]
        elif want == total:  # fast path: all of them, sorted (by iteration, then serve rank)
            found = []
            add = found.append
            for first, rank, r in firsts:
                for j in range(first, m, step):
                    add((j, rank, r, b))
            found.sort()
        else:  # the residents' sequences merged, by iteration then serve rank
            heap = firsts
            heapify(heap)
            found = []
            while len(found) < want:
                j, rank, r = heap[0]
                found.append((j, rank, r, b))
                if j + step < m:
                    heapreplace(heap, (j + step, rank, r))
                else:
                    heappop(heap)
        if fit < total:
            j = found[fit][0]
            del found[fit:]
            found.append((-j, 0, None, 0.0))
        return found

    def _kept(self, pool: Any, heads: AbstractSet[Any], grown: float) -> float:
        """The cached units of `pool` a span's crossings (`grown` units in all) may not
        evict: all of them where the engine may not evict inside a span (a spill, a key
        that reads the engine's progress); with sessions waiting, an LRU cache from the
        first entry one of `heads` owns on (the hit an admission attempt reads must not
        move: `_span`), else none."""
        cache = pool.cache
        if not self.verdict.evicts or cache.on_evict is not None:
            return cache.total
        if not heads:
            return 0.0
        if cache.keys:
            return cache.total
        need = pool.allocated + grown + cache.total - pool.cap  # the most it would evict
        free = 0.0  # the evictable prefix, in eviction (release) order
        for entry in cache.entries.values():
            if free >= need or (entry.owner is not None and entry.owner in heads):
                break
            free += entry.units
        return max(cache.total - free, 0.0)

    def _end_span(self, span: tuple) -> None:
        """The last iteration of a span ends: apply the block crossings at their own
        times, count the iterations, then end the last one as `_end` does. When it runs
        past the next event (`runs_on`), this is its start instead: the iterations
        before it end, and it runs on as one planned now would."""
        m, ends, crossings, scheduled, runs_on, fractions = span
        if crossings and not self.cross_quietly(ends, crossings, scheduled):
            grow_at_instants(self.world, [(ends[c[0] - 1], c) for c in crossings])
        self.advance(m, ends, scheduled, fractions, crossings)
        engine = self.engine
        if runs_on:  # the ends of iterations 0..m-2 (this event is the last of them)
            engine.events += m - 2
            self.run_on(ends[-1], scheduled)
        else:
            engine.events += m - 1
            self._end(scheduled)

    def cross_quietly(self, ends: list[float], crossings: list[tuple], scheduled: Any) -> bool:
        """Apply a span's `crossings` by `_cross_quietly` when they may be (no gauge reads
        their instants, and they grow one pool); False, nothing done, when not."""
        if self.world.gauges:
            return False
        pool = crossings[0][2].part.pool
        for r in scheduled:  # one pool grows: the crossings' own residents' parts
            if r.grows and r.part.pool is not pool:
                return False
        engine = self.engine
        now = engine.now
        self._cross_quietly(ends, crossings, pool)  # which sets the clock to a crossing's
        engine.now = now  # when an eviction reads it
        return True

    def advance(
        self,
        m: int,
        ends: list[float],
        scheduled: Any,
        fractions: list[tuple] | None,
        crossings: list[tuple],
    ) -> None:
        """Count a span's iterations 1..m-1 and give every resident the tokens of 0..m-2
        (the last one's are given as it ends); a tail's fractions are its tokens. The
        cost changes only at the span's `crossings` (`_ends_varying`)."""
        starts = ends[:-1]
        n = len(scheduled)
        bulk = self._bulk[0]
        if bulk is not None:
            bulk(self.index, starts, 0, n, float(n), ends[-1])
        else:
            for t, end in zip(starts, ends[1:], strict=True):
                self.recorder.iteration(self.index, t, 0, n, float(n), end)
        k = m - 1
        if self.claims is not None:  # the claims over its iterations, checked at each
            self.claims.span(self.index, k, float(n))
        if self.itl is not None:
            self._span_tokens(ends, k, scheduled, crossings)
        for r in scheduled:  # k more additions of 1.0 to each, as one at a time makes them
            if r.grows:
                part = r.part
                p = part.position
                # fast path: `plus_ones` of a whole position, whose additions are exact
                part.position = p + k if p == floor(p) else plus_ones(p, k)
            r.remaining -= k  # exact: below 2**53, 1.0 from at least 1.0 is (`_span`)
        if fractions:  # the last iteration is a tail (`_tail`)
            for r, t in fractions:
                r.tokens = t

    def _span_tokens(
        self, ends: list[float], k: int, scheduled: Any, crossings: list[tuple]
    ) -> None:
        """The inter-token latencies of a span's iterations that end at `ends[:k]` (all
        but its last): every resident takes a token in each, so after the first (the time
        since its session's last token) every resident's are the gaps between them, from
        the warm-up on (`_end`)."""
        itl = self.itl.counts
        start = bisect_left(ends, self.itl_from, 0, k)  # the first token at or after warm-up
        end = ends[k - 1]
        fresh = self.itl.fresh
        for r in scheduled:
            s = r.session
            last = s.last_token
            s.last_token = end
            s.token_stage = self
            s.decoded = True
            if start == 0 and last is not None:
                fresh.append(ends[0] - last)
        a = max(start, 1)
        if a >= k:
            return
        n = len(scheduled)
        if 0.0 < ends[a - 1] and end < _BINADES_END:
            if not self.verdict.cost_varies:
                _count_steps(ends, a - 1, k, n, itl)  # a constant cost apart, in C's floats
                return
            if _frexp(ends[a - 1])[1] == _frexp(end)[1]:  # a cost constant between crossings
                _count_stretches(ends, a, k, crossings, n, itl)
                return
        _count_gaps(islice(ends, a, k), islice(ends, a - 1, k), n, itl)

    def run_on(self, end: float, scheduled: Any) -> None:
        """The last iteration of a span, which has started, ends at `end` as one planned
        then ends; with several engines fast-forwarded together it is a candidate again
        (`serq.sim.joint`)."""
        seq = self.engine.schedule(end, self._end, scheduled)
        if self.world.joint is not None:
            self._pending = seq
            self._pending_end = end

    def _quiet_setup(self, pool: Any) -> tuple[Any, bool, bool, Any, bool]:
        """What `_cross_quietly` needs of `pool` and the run, the same at every span (set
        when the run starts): how the levels are told, whether at each crossing, whether
        an eviction reads the clock, how evictions are counted, and whether one block is
        evicted inline."""
        world = self.world
        recorder = self.recorder
        cache = pool.cache
        check = world.check_invariants
        batch = None if check else self._bulk[1]
        eager = batch is None  # each crossing told at once (the invariants checked at each)
        if eager:
            state = recorder.pool_state

            def batch(index: int, rows: list[tuple], queued: int, holders: int) -> None:
                for t, u, c in rows:
                    state(index, t, u, c, queued, holders)
                    if check:  # not a flush of the pools: the clock is the span's end
                        world.check()

        timed = bool(cache.keys) or cache.on_evict is not None  # an eviction reads the clock
        # the units each eviction takes, counted together at the end (`pool_counts`, the
        # same sum in the same order) when the recorder can
        counts = None if eager else self._bulk[2]
        block = cache.block
        # an LRU cache of blocks without a spill: `evict_to`'s loop when it takes one block
        # from the oldest entry, which keeps more than that, is inline (`_cross_quietly`)
        one_block = not timed and counts is not None and block is not None and block > 0
        return batch, eager, timed, counts, one_block

    def _cross_quietly(self, ends: list[float], crossings: list[tuple], pool: Any) -> None:
        """`_end_span`'s crossings when they all grow one pool and no gauge reads the
        instants: the pool's level is recorded at each crossing's time, evicting first
        where the cache must make room (`Pool.evict`, inline); the levels are told to the
        recorder together (`pool_states`), each at its time, as `pool_state` would be
        (before an eviction that reads the clock or spills, those so far)."""
        engine = self.engine
        recorder = self.recorder
        index = pool.index
        cache = pool.cache
        cap = pool.cap
        queued = len(pool.queue) + len(pool.front)
        holders = pool.n_holders
        setup = self._quiet_setups.get(pool)
        if setup is None:
            setup = self._quiet_setups[pool] = self._quiet_setup(pool)
        batch, eager, timed, counts, one_block = setup
        evict_to = cache.evict_to
        count = recorder.pool_count
        evicted: list[float] = []
        end = engine.now  # the span's end: an eviction that reads the clock is given its own
        block = cache.block
        entries = cache.entries
        oldest = None  # the oldest entry, which only this loop changes (while not None)
        rows: list[tuple[float, float, float]] = []  # (time, used, cached) at each crossing
        allocated = pool.allocated
        total = cache.total
        for j, _, r, need in crossings:
            t = ends[j - 1]  # iteration j starts when j - 1 ends
            r.part.alloc += need
            allocated += need
            if allocated + total > cap:
                if one_block:
                    bound = (cap - allocated) + EPS  # `evict_to(cap - allocated)`'s
                    if total > bound and entries:
                        if oldest is None:
                            oldest = next(iter(entries.values()))
                        take = oldest.units
                        rest = total - block
                        # more than a block in the oldest entry, less than a block more than
                        # the bound (no run of blocks at once), and one block ends the loop
                        # (and more than float noise left behind: `evict_to` removes it)
                        if take > block + EPS and not total - bound > block and not rest > bound:
                            oldest.units = take - block
                            total = rest
                            evicted.append(block)
                            rows.append((t, allocated, total))
                            continue
                oldest = None  # `evict_to` may remove it
                if timed:
                    if rows:
                        batch(index, rows, queued, holders)
                        rows = []
                    engine.now = t
                pool.allocated = allocated
                cache.total = total
                removed, units = evict_to(cap - allocated)  # counted at each, as one at a time
                if eager:  # `batch` checks the invariants at the span's end, the clock
                    engine.now = end  # of every other crossing's check (and of the event)
                if units:
                    if removed:
                        count(index, "evicted_entries", removed)
                    if counts is not None:
                        evicted.append(units)
                    else:
                        count(index, "evicted_units", units)
                total = cache.total
            rows.append((t, allocated, total))
            if eager:
                pool.allocated = allocated
                batch(index, rows, queued, holders)
                rows = []
        pool.allocated = allocated
        if pool.infinite:  # beside a part of inf units (`Pool.infinite`): each growth
            for _, _, r, need in crossings:  # (its part already grown, inf if it was)
                pool.infinite_grow(r.part.alloc, need)
        cache.total = total
        if evicted:
            counts(index, "evicted_units", evicted)
        if rows:
            batch(index, rows, queued, holders)
        pool.dirty = False

    def _end(self, scheduled: list[Resident]) -> None:
        """The iteration ends: its tokens apply; finished runs leave."""
        now = self.engine.now
        self.busy = False
        # the iteration's shape lasts until now, not until the next one starts: the
        # residents may stall on a growth and the stage not iterate (as the reference)
        self.recorder.iteration_end(self.index, now)
        if self.claims is not None:
            self.claims.iteration_end(self.index, sum(r.tokens for r in scheduled))
        finished = []
        itl = self.itl
        if itl is not None:
            fresh = itl.fresh
            if len(fresh) >= FRESH_MOST:
                itl.merged()
        counted = now >= self.itl_from  # its tokens' latencies count (from the warm-up)
        # a run whose tokens round away, and whether another's finite work went down: the
        # remnant of a budget another run left (1/3 less the last 0.33333333333333326 a
        # prefill took) rounds away once, and only an iteration in which no run moves
        # says that the budget is too small for the work; a chunk that rounds away gives
        # the same at every iteration, whatever the others do
        unmoved = None
        moved = False
        for r in scheduled:
            t = r.tokens
            if not t:
                continue  # preempted (or displaced) after planning
            r.tokens = 0.0
            if r.grows:
                r.part.position += t
            remaining = r.remaining
            r.remaining = left = remaining - t
            if left <= TOKEN_EPS:
                finished.append(r)
                moved = True
            elif left == remaining and not _never_ends(remaining, t):  # else to the horizon
                if not r.decoding and t == self.cap(self.blank):
                    raise SimError(self.origin, _no_progress(self, r, t))
                if unmoved is None:
                    unmoved = (r, t)
                continue
            else:
                moved = moved or left != remaining
                if not r.decoding:
                    continue  # a prefill chunk gives no token but its last
            if itl is not None:  # a token: the time since the session's last one
                s = r.session
                last = s.last_token
                s.last_token = now
                s.token_stage = self
                if r.decoding:
                    s.decoded = True
                else:
                    decoded = s.decoded
                    if decoded is not True:
                        # a first token (no decode before it): none, unless a preemption
                        # made it the one this engine gave last, computed again; once (the
                        # references, tests/sim/NOTES.md §34)
                        s.decoded = False
                        if decoded is not self:
                            continue
                if last is not None and counted:
                    fresh.append(now - last)
        if unmoved is not None and not moved:
            raise SimError(self.origin, _no_progress(self, *unmoved))
        if finished:
            for r in finished:
                s = r.session
                del self.by_session[s]
                self.residents.remove(r)
                self.present -= 1
            ordered = self._ordered
            if ordered is not None:  # a new list without them (`_serve_order`)
                if len(finished) == 1:
                    ordered = ordered.copy()
                    ordered.remove(finished[0])
                    self._ordered = ordered
                else:
                    self._ordered = [r for r in ordered if r not in finished]
            self.recorder.stage_state(self.index, now, self.present, 1.0 if self.present else 0.0)
            for r in finished:
                s = r.session
                s.at = None
                wait, service = s.started - s.arrived, now - s.started
                if self.measuring:  # the online estimates, when the program reads one
                    self.measure(s.started, wait, service)
                self.recorder.stage_done(self.index, now, wait, service)
                s.state = READY
                self.wake(s)
        elif not self.present:
            self.recorder.stage_state(self.index, now, 0, 0.0)


def grow_at_instants(world: Any, rows: list[tuple[float, tuple]]) -> None:
    """Apply span crossings `(time, (j, rank, resident, units))`, in the order of their
    times, each at its own time: the growth, then the evictions it makes, then at the end
    of each instant the pools' levels and (but at the instant of the event applying them)
    the gauges. The clock is put back after."""
    engine = world.engine
    recorder = world.recorder
    now = engine.now
    i, count = 0, len(rows)
    while i < count:
        t = engine.now = rows[i][0]
        j = rows[i][1][0]  # one iteration's crossings (two may start at one time)
        while i < count and rows[i][1][0] == j and rows[i][0] == t:
            _, _, r, need = rows[i][1]
            part = r.part
            pool = part.pool
            if pool.infinite:  # beside a part of inf units (`Pool.infinite`)
                pool.infinite_grow(part.alloc, need)
            part.alloc += need
            pool.allocated += need
            pool.dirty = True
            pool.evict(recorder)
            i += 1
        world._flush_pools()  # the levels and gauges of the end of instant t
        if t != now:  # the instant of the span's event ends after it
            world.end_instant(t)
    engine.now = now


def _count_gaps(later: Iterable[float], earlier: Iterable[float], n: int, counts: Counter) -> None:
    """Count into `counts`, `n` times each, the gaps `later - earlier`, pair by pair."""
    gaps = map(sub, later, earlier)
    if n == 1:
        counts.update(gaps)  # counted in C
    else:
        for gap, count in Counter(gaps).items():
            counts[gap] += count * n


_frexp = math.frexp
FRESH_MOST = TokenGaps.FRESH_MOST
_BINADES_END = 2.0**1023  # `_count_steps` takes ends below it (the next binade's bound is a float)


def _count_steps(ends: list[float], i: int, k: int, n: int, counts: Counter[float]) -> None:
    """Count into `counts`, `n` times each, the gaps between `ends[i:k]`, which one constant
    cost apart as floats add it (`_ends`: each end the previous one plus the cost, rounded),
    and positive. Within a binade [2**e, 2**(e+1)) the sum rounds to the binade's grid, so
    every step there is the cost rounded to it (or, where the cost lies halfway between
    two points of it, one or the other): where the first gap times their number is the
    distance the ends cover (both exact: the ends are within a factor of 2, the product a
    point of the grid), they are all that gap, counted at once; else one at a time. A gap
    that crosses into the next binade is counted alone."""
    while i < k - 1:
        top = 2.0 ** (math.frexp(ends[i])[1])  # the binade of ends[i] ends below this
        j = bisect_left(ends, top, i, k) - 1  # the last end within it
        if j > i:
            gap = ends[i + 1] - ends[i]
            if ends[j] - ends[i] == (j - i) * gap:
                counts[gap] += (j - i) * n
            else:
                _count_gaps(ends[i + 1 : j + 1], ends[i:j], n, counts)
        if j + 1 < k:  # the step out of the binade
            counts[ends[j + 1] - ends[j]] += n
        i = j + 1


def _count_stretches(
    ends: list[float], a: int, k: int, crossings: list[tuple], n: int, counts: Counter[float]
) -> None:
    """Count into `counts`, `n` times each, the gaps `ends[j] - ends[j - 1]` for j in
    a..k-1, where the ends from `ends[a - 1]` on lie in one binade (positive) and the
    cost the clock adds changes only at an iteration that crosses a block (`crossings`,
    in iteration order): between two such, each gap is that cost rounded to the binade's
    grid, down or up (`_count_steps`), so where a stretch's first gap times their number
    is the distance its ends cover, every gap of it is that one; else they are counted
    one at a time."""
    lo = a
    before = ends[a - 1]  # the end the stretch's first gap starts from
    bounds = [crossing[0] for crossing in crossings]
    bounds.append(k)  # the last stretch ends at k
    for hi in bounds:  # the stretch is lo..hi-1
        if hi > k:
            hi = k
        if hi <= lo:
            continue  # before the first counted gap, or another crossing of lo's
        last = ends[hi - 1]
        gap = ends[lo] - before
        if last - before == (hi - lo) * gap:
            counts[gap] += (hi - lo) * n
        else:
            _count_gaps(islice(ends, lo, hi), islice(ends, lo - 1, hi), n, counts)
        if hi == k:
            return
        lo = hi
        before = last


def _started(ends: list[float], bound: float, until: float) -> int:
    """How many of the iterations ending at `ends` (each starting when the one before
    ends, the first now) start before `bound` and at or before `until`: those that end
    so, and the one after them, which runs past."""
    m = min(bisect_left(ends, bound), len(ends))  # those ending before the bound
    while m and ends[m - 1] > until:
        m -= 1
    return min(m + 1, len(ends))


def _target(p: float, j: int, b: float | None) -> float:
    """What iteration j of a span grows a resident's hold to, from position p before
    iteration 0: its position then plus its token, up to whole blocks of b (`_grow`)."""
    target = plus_ones(p, j + 1)
    if b is not None:
        target = math.ceil(target / b) * b
    return target


def _passes(p: float, j: int, alloc: float) -> bool:
    """Whether iteration j of a span grows a resident's hold of `alloc` units, from
    position p before iteration 0: its position then plus its token passes `alloc` by
    more than TOKEN_EPS (`_grow`)."""
    return plus_ones(p, j + 1) - alloc > TOKEN_EPS


def _crossing(p: float, alloc: float, j: int, m: int) -> int:
    """The first iteration from j on, below m, that grows the hold past `alloc`
    (`_passes`: the one `_grow` then grows at), or m when none does. The position never
    decreases from one iteration to the next, so the first is found by bisection, from a
    first guess at the iteration whose position passes `alloc` (`ones_past`)."""
    if not _passes(p, m - 1, alloc):
        return m
    guess = ones_past(p, alloc) - 1  # its position plus one passes alloc
    if j <= guess < m and _passes(p, guess, alloc):
        if guess == j or not _passes(p, guess - 1, alloc):
            return guess
        high = guess
    else:
        high = m - 1
        if j <= guess < m:
            j = guess + 1
    while j < high:  # the hold grows at high, and not before j
        mid = (j + high) // 2
        if _passes(p, mid, alloc):
            high = mid
        else:
            j = mid + 1
    return high


def _never_ends(remaining: float, t: float) -> bool:
    """Whether a run with `remaining` tokens left, given `t` in an iteration, never ends: its
    work is inf, or a whole token or more rounds away from it (work past 2**53 tokens,
    which a float no longer counts down, and which could not end before 2**53 iterations).
    It takes its tokens at every iteration to the horizon, as the references run it; a
    share below one token that rounds away says instead that the budget or the chunk is
    too small for the work (`StepStage._end`)."""
    return remaining == math.inf or (t >= 1.0 and remaining - t == remaining)


def _no_progress(stage: StepStage, r: Resident, t: float) -> str:
    """The message of an iteration whose tokens leave a run's remaining work as it was."""
    what = "chunk" if not r.decoding and t == stage.cap(stage.blank) else "budget"
    head = (
        f"stage {stage.name} can make no progress: an iteration gives session "
        f"{_num(r.session.serial)} {t!r} tokens of the {_num(r.remaining)} its "
        f"{'decode' if r.decoding else 'prefill'} has left"
    )
    if _never_ends(r.remaining, t):  # (only at an iteration of cost 0: `StepStage.start`)
        return head + " and costs 0: the run never ends and the clock never moves"
    return head + f", which rounds away (the {what} is too small for the run's work)"


def _count(n: int, word: str) -> str:
    return f"no {word}" if n == 0 else f"{n} {word}{'' if n == 1 else 's'}"


def _endless_iteration(stage: StepStage, cost: float) -> str:
    """Why `stage` stopped at an iteration that ends at time inf (its cost is inf, or the
    clock plus it passes the float range)."""
    return (
        f"an iteration of `{stage.name}` costs {_num(cost)}, so it never ends: the engine "
        f"serves nothing after it ({_count(len(stage.batch), 'session')} in it)"
    )


# what a chunk's test may read and still be skipped (`_never_caps`): the engine's totals,
# and the counts of constant members, none of which can fail, draw or set anything
_QUIET_CONTEXTS = frozenset(
    ("now", "residents", "decoders", "kv_decode", "kv_prefill", "tokens", "prefilled", "attention")
)
_QUIET_OBSERVABLES = frozenset(
    ("used", "free", "holders", "queued", "blocksize", "queue", "busy", "work")
)


def _quiet(e: ir.Expr) -> bool:
    """Whether evaluating `e` can neither fail nor draw nor change anything."""
    if isinstance(e, ir.Num | ir.Attr):
        return True
    if isinstance(e, ir.Ctx):
        return e.name in _QUIET_CONTEXTS
    if isinstance(e, ir.Unary):
        return _quiet(e.operand)
    if isinstance(e, ir.Binary):
        return _quiet(e.left) and _quiet(e.right)
    if isinstance(e, ir.Cond):
        return _quiet(e.test) and _quiet(e.then) and _quiet(e.otherwise)
    if isinstance(e, ir.Call):
        return e.func in ("min", "max", "abs") and all(_quiet(x) for x in e.args)
    if isinstance(e, ir.Observable):
        return (
            e.func in _QUIET_OBSERVABLES
            and not e.args
            and isinstance(e.target, ir.Ref)
            and constant_member(e.target)
        )
    return False


def _never_caps(chunk: ir.Expr) -> bool:
    """Whether a chunk expression always gives a number at most 0, no cap (`cap`): a
    constant one, or a choice between such whose tests are `_quiet` (vLLM's
    `long_prefill(reqs, 0)`: `residents + queued(reqs) > 1 ? 0 : 0`)."""
    value = fold(chunk)
    if value is not None:
        return value <= 0
    if isinstance(chunk, ir.Cond):
        return _quiet(chunk.test) and _never_caps(chunk.then) and _never_caps(chunk.otherwise)
    return False


def _steady_serve_key(key: ir.Expr) -> bool:
    """Whether a serve key reads nothing but constants, the session's attributes and the
    resident's `decoding` and `admission`, which stay as they are while it is resident."""
    return reads_only(key, RESIDENT)


def _by_admission(r: Resident) -> tuple[float, int]:
    return (r.admission, r.order)


def _first(item: tuple) -> Any:
    return item[0]


def _first_three(item: tuple) -> tuple:
    return item[:3]


def start_iterations(stages: list[StepStage], engine: Any) -> bool:
    """Start an iteration on every idle step stage that has something to plan, unless
    another event is pending at this instant (one pass, in stage order: a settle's
    last step); True if any started. The pending event is looked for once, before the
    pass: an iteration of cost 0 that a stage starts in it ends at this instant, and
    does not keep the stages after it from starting (the reference; NOTES §18)."""
    if engine.peek() <= engine.now:
        return False
    started = False
    for stage in stages:
        if not stage.busy and stage.wants():
            if stage.start():
                started = True
    return started


def compile_run(compiler: Any, stmt: ir.Run) -> Callable[[Any], bool]:
    """The step of `run S prefill|decode (work) [growing POOL]` at a step stage. A member
    named by a constant is resolved here, once (resolving it reads nothing)."""
    exprs = compiler.exprs
    work = compiler.expr(stmt.work)
    member0 = exprs.constant(stmt.stages[0])
    stage_of = None if member0 is not None else exprs.resolver(stmt.stages[0], compiler.stream)
    pool0 = grow_of = None
    if stmt.growing is not None:
        pool0 = exprs.constant(stmt.growing)
        if pool0 is None:
            grow_of = exprs.resolver(stmt.growing, compiler.stream)
    decoding = stmt.mode == "decode"
    origin = stmt.origin
    zero_run = compiler.world.zero_run

    def run(s: Any) -> bool:
        a = s.attrs
        w = work(a)
        if not w > 0:  # a run of zero work completes at once
            if w != w:  # NaN work; below 0 is no work, as the reference has it
                raise bad_work(origin, w)
            if stage_of is not None:  # its index is read all the same (checked, drawn)
                stage_of(a)
            return zero_run(s)
        member = member0 if stage_of is None else stage_of(a)
        if not isinstance(member, StepStage):
            raise SimError(origin, "a prefill or decode run needs a step stage")
        member.arrive_run(s, w, decoding, pool0 if grow_of is None else grow_of(a), origin)
        return False

    return run
