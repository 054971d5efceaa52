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

Fast-forward (design/step-fast-forward.md): an iteration that gives every resident one
decode token and admits and preempts nobody is a candidate; at the end of its instant
(`World.settle` calls `extend`) the stage turns it into a span of the iterations that
repeat it, applied as one event. `fastforward.py` proves from the IR which engines may;
`step_spans.py` (`Spans`, a base of `StepStage`) works the spans out and applies them;
engines whose iterations interleave are spanned together (`serq.sim.joint`).
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Callable
from typing import Any

from serq import ir
from serq.diagnostics import Span
from serq.diagnostics import number_text as _num
from serq.ir import SLOT
from serq.ir.arith import fold
from serq.ir.expr import reads_only
from serq.sim.claims import demand as claims_demand
from serq.sim.compiled_stages import observed, reads_estimates
from serq.sim.errors import SimError, bad_work, out_of_domain
from serq.sim.exprs import constant_member, key_tuple
from serq.sim.fastforward import RESIDENT, contexts
from serq.sim.holds import innermost
from serq.sim.pools import TOKEN_EPS, GrowWait
from serq.sim.preempt import resident_by_keys
from serq.sim.ranked_queue import total, unordered
from serq.sim.recorder import TokenGaps
from serq.sim.session import AT_STAGE, READY
from serq.sim.stages import StageBase
from serq.sim.step_spans import Spans

Fn = Callable[[Any], float]
INF = float("inf")
COMPUTED = SLOT["computed"]
FRESH_MOST = TokenGaps.FRESH_MOST  # fresh gaps kept before they are merged


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


class StepStage(Spans, StageBase):
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
        "joining",
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
        # under `serve exclusive prefill`, what the decode batch leaves of the budget to a
        # decode that joins it as it is admitted (None: no such batch is being planned)
        self.joining: float | None = None
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
        if r.decoding and self.joining is not None and t > self.joining:
            t = self.joining  # it joins the decode batch, within what the batch left
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
        try:
            return self._admit_exclusive(tentative, budget)
        finally:
            self.joining = None

    def _admit_exclusive(self, tentative: list[Resident], budget: float) -> None:
        """Admit under `serve exclusive prefill` beside the decode batch `tentative`: the
        first admitted prefill runs alone; a request that only decodes joins the batch,
        within the budget the batch left (spec §7: the budget caps an iteration's tokens)."""
        holds = self.holds
        world = self.world
        for pool in self.served:
            while True:
                self.left = budget  # a waiting prefill sees the full budget
                self.joining = budget - sum(r.tokens for r in tentative)
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
