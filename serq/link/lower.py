"""Lowering: a kernel program and its `Scope` to the IR `Program`.

Input: a kernel (no sugar left) whose names `resolve.declare` has collected; the
references are resolved by `expressions.Resolver`. Output: the
program, or None when any error was found, with every error reported in one pass (a
failed part is replaced by a placeholder so the rest is still checked).

What lowering checks itself is what the IR cannot exist without: the constant positions
(cap, block, a family's size, a fifo's servers, the arrival rate or population, the run
block) fold to numbers, whole where the IR counts; families named by `admit via`,
`memory` and `spill` join member for member or one for all; one session. The rules of
the spec that the IR could express but forbids (moments, hidden, lints, structure) are
`serq.link.checks`'.

Invariants of the result: `init`, `turn` and `session` are blocks 0, 1 and 2, and the
other blocks follow in the order a depth-first walk meets them (an absent `else` is an
empty block); attribute slots are the built-ins, then the order assignments are met in
that walk; every member id is in range; no `Num` is NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from serq import ir
from serq.diagnostics import Label, Span, codes
from serq.diagnostics import number_text as _num
from serq.link.expressions import Resolver
from serq.link.flood import arrival_flood
from serq.link.resolve import Family, Scope
from serq.syntax import ast
from serq.vocabulary import ARRIVALS_MAX, MAX_MEMBERS, SEED_MAX, SEED_MIN

_MODES = {None: "plain", "prefill": "prefill", "decode": "decode"}
_KERNEL_ITEMS = (
    ast.Let,
    ast.Pool,
    ast.Stage,
    ast.Workload,
    ast.Session,
    ast.RunSettings,
    ast.Share,
    ast.Gauge,
    ast.Claim,
    ast.ErrorItem,
)


def lower(kernel: ast.Module, scope: Scope) -> ir.Program | None:
    """The IR of `kernel` over `scope`, or None when an error (reported in `scope`) was found."""
    return _Lowering(kernel, scope).program()


class _Lowering:
    def __init__(self, kernel: ast.Module, scope: Scope) -> None:
        self.kernel = kernel
        self.scope = scope
        self.r = Resolver(scope)
        self.blocks: list[tuple[ir.Stmt, ...] | None] = []
        self.broken = False  # the parser skipped text: no program, but keep checking

    def error(self, code: codes.Code, span: Span, message: str, **kw) -> None:
        self.r.fail(code, span, message, **kw)

    # ----------------------------------------------------------------- program

    def program(self) -> ir.Program | None:
        items = self.kernel.items
        self.broken = any(isinstance(i, ast.ErrorItem) for i in items)
        for item in items:
            self.leftover(item)
        pools = tuple(m for i in items if isinstance(i, ast.Pool) for m in self.pool(i))
        stages = tuple(m for i in items if isinstance(i, ast.Stage) for m in self.stage(i))
        workloads = [i for i in items if isinstance(i, ast.Workload)]
        for extra in workloads[1:]:  # both references refuse it ("duplicate workload")
            self.error(
                codes.STRUCTURE,
                extra.span,
                "a second `workload`: a program has one (put its clauses in the first)",
                labels=(Label(workloads[0].span, "the first workload"),),
            )
        arrival, trace, hidden = self.workload(workloads)
        init = self.reserve()
        turn = self.reserve()
        session = self.reserve()
        self.fill(init, _clause_statements(workloads, ast.Init))
        self.fill(turn, _clause_statements(workloads, ast.TurnBlock))
        sessions = [i for i in items if isinstance(i, ast.Session)]
        for extra in sessions[1:]:
            self.error(
                codes.STRUCTURE,
                extra.span,
                "a program has one session",
                labels=(Label(sessions[0].span, "the first session"),),
            )
        self.fill(session, list(sessions[0].body.body) if sessions else [])
        horizon, warmup, seed, arrivals = self.run_settings(items)
        shares = [i.policy for i in items if isinstance(i, ast.Share)]
        gauges = tuple(
            ir.Gauge(i.name.name, self.r.expr(i.value), i.span)
            for i in items
            if isinstance(i, ast.Gauge)
        )
        claims = tuple(c for i in items if isinstance(i, ast.Claim) for c in self.claim(i, stages))
        if self.r.failed or self.broken or self.scope.diagnostics:
            return None
        program = ir.Program(
            attrs=tuple(self.scope.attrs),
            hidden=hidden,
            observes=tuple(self.scope.observes),
            pools=pools,
            stages=stages,
            arrival=arrival,
            trace=trace,
            init=init,
            turn=turn,
            session=session,
            blocks=self.table(),
            horizon=horizon,
            warmup=warmup,
            seed=seed,
            arrivals=arrivals,
            share=shares[-1] if shares else None,
            gauges=gauges,
            claims=claims,
        )
        flood = arrival_flood(program)
        if flood is not None:
            where, message, help_ = flood
            self.error(codes.CONSTANT, where, message, help=help_)
            return None
        return program

    def claim(self, item: ast.Claim, stages: tuple[ir.Stage, ...]) -> list[ir.Claim]:
        """The IR of one claim: an iteration claim names one step stage member."""
        name = item.name.name
        given = None if item.given is None else self.r.expr(item.given)
        pred = self.r.expr(item.pred)
        stage: int | None = None
        if item.stage is not None:
            ref = self.r.resource(item.stage, "stage")
            if ref is None:
                return []
            index = 0
            if ref.index is not None:
                if not isinstance(ref.index, ir.Num):
                    self.error(
                        codes.INDEX,
                        ref.origin,
                        f"claim `{name}`: the stage of a claim is a member named by a "
                        "constant index",
                    )
                    return []
                index = int(ref.index.value)
            stage = ref.base + index
            if stage < len(stages) and not isinstance(stages[stage].kind, ir.Step):
                self.error(
                    codes.WRONG_KIND,
                    ref.origin,
                    f"claim `{name}`: `{stages[stage].name}` is not a step stage, and a claim "
                    "over iterations reads a step stage's iterations",
                    labels=(Label(stages[stage].origin, "declared here"),),
                )
                return []
        return [ir.Claim(name, given, item.kind, stage, pred, item.span)]

    def leftover(self, item: ast.Item) -> None:
        """Report an item the kernel should not hold any more (a bug of the expander)."""
        if not isinstance(item, _KERNEL_ITEMS):
            self.error(
                codes.INTERNAL,
                item.span,
                f"the kernel still holds a `{type(item).__name__}` (a bug in serq's expander)",
            )

    # ------------------------------------------------------------ pools, stages

    def pool(self, item: ast.Pool) -> list[ir.Pool]:
        family = self.scope.pools[item.name.name]
        if family.item is not item:  # a duplicate, reported by `declare`
            return []
        name = item.name.name
        cap, evict, preempt, queue = math.inf, ir.Lru(), "none", ir.By(())
        preempt_keys: tuple[ir.Expr, ...] = ()
        requeue, reserve_held = "head", False
        spill: tuple[Family, Family, ir.Expr, ir.Expr, Span] | None = None
        admit: Family | None = None
        for option in item.options:
            if isinstance(option, ast.Spill):
                to = self.family(option.pool, "pool", family, "spill")
                via = self.family(option.stage, "stage", family, "spill")
                via = self.stage_kind(
                    option.stage, via, step=False, option=f"spill {option.pool.name} via"
                )
                work, when = self.r.expr(option.amount), self.r.expr(option.when)
                if to is not None and via is not None:
                    spill = (to, via, work, when, option.span)
                continue
            if not isinstance(option, ast.Option):
                self.broken = True
                continue
            key = option.key
            if key == "cap" and option.value is not None:
                what = f"the cap of pool `{name}`"
                value = self.r.constant(option.value, what)
                if value is not None and not value >= 0:
                    self.r.out_of_domain(option.value, what, "at least 0", value)
                    value = None
                cap = math.inf if value is None else value
            elif key == "block":
                pass  # folded by `declare` (Family.block)
            elif key == "evict lru":
                evict = ir.Lru()
            elif key == "evict by":
                evict = ir.By(tuple(self.r.expr(k) for k in option.keys))
            elif key in ("preempt none", "preempt lifo"):
                preempt, preempt_keys, requeue = key.split()[1], (), "head"
            elif key == "preempt by":
                preempt = "by"
                preempt_keys = tuple(self.r.expr(k) for k in option.keys)
                requeue = "head" if option.target is None else option.target.name
            elif key == "reserve held":
                reserve_held = True
            elif key == "queue fifo":
                queue = ir.By(())
            elif key == "queue by":
                queue = ir.By(tuple(self.r.expr(k) for k in option.keys))
            elif key == "admit via" and option.target is not None:
                admit = self.family(option.target, "stage", family, "admit via")
                admit = self.stage_kind(option.target, admit, step=True, option="admit via")
            else:
                self.unexpected(option, f"pool `{name}`")
        members = []
        for i in range(family.count):
            spilled = None
            if spill is not None:
                to, via, work, when, span = spill
                spilled = ir.Spill(self.member(to, i), self.member(via, i), work, when, span)
            members.append(
                ir.Pool(
                    name=name,
                    index=i if family.array else None,
                    cap=cap,
                    block=family.block,
                    evict=evict,
                    preempt=preempt,
                    queue=queue,
                    spill=spilled,
                    admit_via=None if admit is None else self.member(admit, i),
                    origin=item.name.span,
                    preempt_keys=preempt_keys,
                    requeue=requeue,
                    reserve_held=reserve_held,
                )
            )
        return members

    def stage(self, item: ast.Stage) -> list[ir.Stage]:
        family = self.scope.stages[item.name.name]
        if family.item is not item:
            return []
        name = item.name.name
        kind = item.kind
        lowered: ir.Fifo | ir.Ps | ir.Delay | ir.Step
        memory: Family | None = None
        if isinstance(kind, ast.Fifo):
            servers = 1
            if kind.servers is not None:
                what = f"the servers of fifo stage `{name}`"
                servers = self.r.whole(kind.servers, what, low=1) or 1
            lowered = ir.Fifo(servers)
        elif isinstance(kind, ast.Ps):
            capacity, folded = self.r.folded(kind.capacity)
            lowered = ir.Ps(capacity, kind.capacity.span)
            if folded is not None and not folded > 0:  # a capacity that reads nothing
                what = f"the capacity of ps stage `{name}`"
                self.r.out_of_domain(kind.capacity, what, "positive", folded)
        elif isinstance(kind, ast.Delay):
            lowered = ir.Delay()
        else:
            lowered, memory = self.step(kind, family)
        members = []
        for i in range(family.count):
            if isinstance(lowered, ir.Step) and memory is not None:
                lowered = replace(lowered, memory=self.member(memory, i))
            members.append(ir.Stage(name, i if family.array else None, lowered, item.name.span))
        return members

    def step(self, kind: ast.Step, family: Family) -> tuple[ir.Step, Family | None]:
        name = family.name
        budget: ir.Expr | None = None
        cost: ir.Expr | None = None
        chunk: ir.Expr | None = None
        serve: ir.By | ir.ExclusivePrefill = ir.By(())
        memory: Family | None = None
        spans: dict[str, Span] = {}
        for option in kind.options:
            if not isinstance(option, ast.Option):
                self.broken = True
                continue
            key, value = option.key, option.value
            if value is not None:
                spans[key] = value.span
            if key == "budget" and value is not None:
                budget, folded = self.r.folded(value)
                if folded is not None and not folded > 0:
                    what = f"the budget of step stage `{name}`"
                    self.r.out_of_domain(value, what, "positive", folded)
            elif key == "cost" and value is not None:
                cost, folded = self.r.folded(value)
                if folded is not None and not 0 <= folded < math.inf:  # inf: never ends
                    what = f"the cost of step stage `{name}`"
                    self.r.out_of_domain(value, what, "at least 0 and finite", folded)
            elif key == "chunk" and value is not None:
                chunk, folded = self.r.folded(value)
                if folded is not None and folded != folded:  # 0 or below: no cap
                    what = f"the chunk of step stage `{name}`"
                    self.r.out_of_domain(value, what, "a number", folded)
            elif key == "serve admission":
                serve = ir.By(())
            elif key == "serve by":
                serve = ir.By(tuple(self.r.expr(k) for k in option.keys))
            elif key == "serve decode first":
                decoding_last = ir.Cond(ir.Ctx("decoding"), ir.Num(0.0), ir.Num(1.0))
                serve = ir.By((decoding_last,))
            elif key == "serve exclusive prefill":
                serve = ir.ExclusivePrefill()
            elif key == "memory" and option.target is not None:
                memory = self.family(option.target, "pool", family, "memory")
            else:
                self.unexpected(option, f"step stage `{name}`")
        if cost is None:
            self.error(
                codes.STRUCTURE,
                family.span,
                f"step stage `{name}` has no `cost`",
                help="write `cost EXPR;` in its `step { }`: the time of an iteration",
            )
        budget = budget or ir.Num(math.inf)  # no budget: no limit on an iteration's tokens
        step = ir.Step(
            budget,
            cost or ir.Num(0.0),
            chunk,
            serve,
            None,
            spans.get("budget"),
            spans.get("cost"),
            spans.get("chunk"),
        )
        return step, memory

    def family(self, ident: ast.Ident, kind: str, owner: Family, option: str) -> Family | None:
        """The family `ident` names in `owner`'s `option`, if it joins `owner`'s members one
        for one or one for all."""
        target = self.r.family(ident, kind)
        if target is None:
            return None
        if target.count not in (1, owner.count):
            self.error(
                codes.STRUCTURE,
                ident.span,
                f"`{option}` names a family of {target.count}, and {owner.kind} "
                f"`{owner.name}` is a family of {owner.count}",
                labels=(
                    Label(target.span, f"{target.count} members"),
                    Label(owner.span, f"{owner.count} members"),
                ),
                help="join families one for one (equal sizes), or one for all (a family of one)",
            )
            return None
        return target

    def stage_kind(
        self, ident: ast.Ident, target: Family | None, *, step: bool, option: str
    ) -> Family | None:
        """`target` if it is a step engine (`step`) or is not one (not `step`), else None
        with E-wrong-kind at `ident`: `admit via` hands a queue to a step engine's
        scheduler (a fifo, ps or delay stage has none: the queue waited for ever), and a
        spill's write is a job of seconds, which a step engine, run by tokens in a mode,
        cannot take (serq failed with E-internal; pyserq 0.1.2 panics)."""
        if target is None or isinstance(target.item.kind, ast.Step) == step:
            return target
        kind = target.item.kind
        word = {ast.Fifo: "a fifo", ast.Ps: "a ps", ast.Delay: "a delay"}.get(type(kind), "a")
        if step:
            message = (
                f"`{option} {target.name}`: stage `{target.name}` is {word} stage, which has "
                "no scheduler to admit a queue: `admit via` names a step engine"
            )
        else:
            message = (
                f"`{option} {target.name}`: stage `{target.name}` is a step engine, which runs "
                "tokens in a mode, not a spill's write: a spill goes via a fifo, ps or delay "
                "stage"
            )
        self.error(
            codes.WRONG_KIND, ident.span, message, labels=(Label(target.span, "declared here"),)
        )
        return None

    @staticmethod
    def member(family: Family, i: int) -> int:
        return family.base + (i if family.count > 1 else 0)

    def unexpected(self, option: ast.Option, where: str) -> None:
        self.error(codes.INTERNAL, option.span, f"`{option.key}` is no option of {where}")

    # ---------------------------------------------------------------- workload

    def workload(
        self, workloads: list[ast.Workload]
    ) -> tuple[ir.Arrival | None, ir.Trace | None, tuple[int, ...]]:
        arrival: ir.Arrival | None = None
        trace: ir.Trace | None = None
        hidden: dict[int, None] = {}
        for workload in workloads:
            self.clauses_once(workload)
            for clause in workload.clauses:
                if isinstance(clause, ast.Arrive):
                    arrival = self.arrival(clause)
                elif isinstance(clause, ast.Trace):
                    trace = ir.Trace(clause.path, clause.ordered, clause.span)
                elif isinstance(clause, ast.Hidden):
                    # a name no statement assigns is `serq.link.checks`' (E-hidden)
                    slots = (self.scope.attrs.get(n.name) for n in clause.names)
                    hidden.update(dict.fromkeys(s for s in slots if s is not None))
                elif isinstance(clause, ast.ErrorOption):
                    self.broken = True
                elif not isinstance(clause, (ast.Init, ast.TurnBlock)):
                    self.error(
                        codes.INTERNAL,
                        clause.span,
                        f"the kernel's workload still holds a `{type(clause).__name__}` "
                        "(a bug in serq's expander)",
                    )
        return arrival, trace, tuple(hidden)

    def clauses_once(self, workload: ast.Workload) -> None:
        """A second `arrive`, `trace`, `init` or `turn` in one workload: the spec's workload
        has one of each (the references keep the last silently, the first's statements
        gone; serq ran both `init`s and both `turn`s)."""
        first: dict[type, ast.WorkloadClause] = {}
        for clause in workload.clauses:
            word = _ONCE.get(type(clause))
            if word is None:
                continue
            seen = first.setdefault(type(clause), clause)
            if seen is not clause:
                self.error(
                    codes.STRUCTURE,
                    clause.span.first(len(word)),
                    f"a second `{word}` in `workload`: a workload has one",
                    labels=(Label(seen.span.first(len(word)), "the first is here"),),
                    help=f"keep one `{word}`"
                    + ("" if word in ("arrive", "trace") else ", with the statements of both"),
                )

    def arrival(self, clause: ast.Arrive) -> ir.Arrival | None:
        process, arg, span = clause.process, clause.arg, clause.span
        if process == "none" or arg is None:
            return None
        if process == "poisson":
            rate = self.r.constant(arg, "the poisson rate")
            if rate is not None and not 0 < rate < math.inf:
                self.r.out_of_domain(arg, "the poisson rate", "positive and finite", rate)
                rate = None
            return ir.Poisson(0.0 if rate is None else rate, span)
        if process == "renewal":
            return ir.Renewal(self.r.expr(arg, constant=True, draws=True), span)
        population = self.r.whole(arg, f"the {process} population", low=1, high=10**9) or 0
        if process == "closed":
            return ir.Closed(population, span)
        return ir.Batch(population, span)

    def run_settings(
        self, items: tuple[ast.Item, ...]
    ) -> tuple[float | None, float, int, int | None]:
        """horizon, warmup, seed and arrivals of the run blocks (a repeated one: the last),
        each in its domain: a positive horizon, finite unless `arrivals` bounds the run,
        `0 <= warmup < horizon`, a seed in `SEED_MIN ..= SEED_MAX`, a positive `arrivals`."""
        horizon: float | None = None
        warmup, seed, arrivals = 0.0, 1, None
        written: dict[str, ast.Expr] = {}
        for item in items:
            if not isinstance(item, ast.RunSettings):
                continue
            for setting in item.settings:
                if not isinstance(setting, ast.Option) or setting.value is None:
                    self.broken = True
                    continue
                key, value = setting.key, setting.value
                if key == "horizon":
                    horizon = self.r.constant(value, "the horizon")
                elif key == "warmup":
                    warmup = self.r.constant(value, "the warmup") or 0.0
                elif key == "seed":
                    seed = self.r.whole(value, "the seed", low=SEED_MIN, high=SEED_MAX) or 0
                elif key == "arrivals":
                    arrivals = self.r.whole(value, "the arrivals", low=1, high=ARRIVALS_MAX)
                else:
                    self.unexpected(setting, "the run block")
                    continue
                written[key] = value
        if horizon is not None:
            bounded = arrivals is not None or "arrivals" in written
            if not horizon > 0 or (horizon == math.inf and not bounded):
                rule = "positive"
                if not bounded:
                    rule = "positive and finite (or `arrivals N;` bounds the run)"
                self.r.out_of_domain(written["horizon"], "the horizon", rule, horizon)
                horizon = None
        if "warmup" in written and not 0 <= warmup < (math.inf if horizon is None else horizon):
            rule = "at least 0"
            if horizon is not None:
                rule = f"at least 0 and below the horizon {_num(horizon)}"
            self.r.out_of_domain(written["warmup"], "the warmup", rule, warmup)
        return horizon, warmup, seed, arrivals

    # --------------------------------------------------------------- statements

    def table(self) -> tuple[tuple[ir.Stmt, ...], ...]:
        """The block table, every reserved block filled."""
        blocks = tuple(b for b in self.blocks if b is not None)
        assert len(blocks) == len(self.blocks), "a reserved block was never filled"
        return blocks

    def reserve(self) -> int:
        self.blocks.append(None)
        return len(self.blocks) - 1

    def fill(self, block: int, stmts: list[ast.Stmt]) -> None:
        self.blocks[block] = tuple(s for s in (self.stmt(s) for s in stmts) if s is not None)

    def block(self, body: ast.Block | None) -> int:
        block = self.reserve()
        self.fill(block, list(body.body) if body is not None else [])
        return block

    def stmt(self, s: ast.Stmt) -> ir.Stmt | None:
        r = self.r
        span = s.span
        if isinstance(s, ast.Turn):
            return ir.Turn(span)
        if isinstance(s, ast.Set):
            return ir.Set(self.scope.attrs[s.target.name], r.expr(s.value), span)
        if isinstance(s, ast.Observe):
            return ir.Observe(self.scope.observes[s.target.name], r.expr(s.value), span)
        if isinstance(s, ast.Hold):
            return self.hold(s)
        if isinstance(s, ast.Grow):
            return self.with_pool(s.pool, lambda p: ir.Grow(p, r.expr(s.amount), span))
        if isinstance(s, ast.Drop):
            return self.with_pool(s.pool, lambda p: ir.Drop(p, span))
        if isinstance(s, ast.Release):
            return self.with_pool(s.pool, lambda p: ir.Release(p, span))
        if isinstance(s, ast.Load):
            return self.with_pool(s.pool, lambda p: ir.Load(p, r.expr(s.amount), span))
        if isinstance(s, ast.Run):
            return self.run(s)
        if isinstance(s, ast.Branch):
            test = r.expr(s.test)
            return ir.Branch(test, self.block(s.then), self.block(s.otherwise), span)
        if isinstance(s, ast.Loop):
            return ir.Loop(self.block(s.body), span)
        if isinstance(s, ast.Choose):
            count, folded = r.folded(s.count)
            if folded is not None and not (
                1 <= folded <= MAX_MEMBERS and folded == math.floor(folded)
            ):
                what = f"the count of `choose {s.target.name}`"
                rule = f"a whole number from 1 to {MAX_MEMBERS}"
                r.out_of_domain(s.count, what, rule, folded)
            keys = tuple(r.expr(k) for k in s.keys)
            return ir.Choose(self.scope.attrs[s.target.name], count, keys, span)
        if isinstance(s, ast.End):
            return ir.End(span)
        if isinstance(s, ast.ErrorStmt):
            self.broken = True
            return None
        self.error(
            codes.INTERNAL,
            span,
            f"the kernel still holds a `{type(s).__name__}` statement (a bug in serq's expander)",
        )
        return None

    def with_pool(self, ref: ast.Ref, make: Callable[[ir.Ref], ir.Stmt]) -> ir.Stmt | None:
        """The statement `make` builds on the pool `ref` names (its other parts resolved
        even when the pool fails, for their errors)."""
        pool = self.r.resource(ref, "pool")
        stmt = make(pool or _NO_REF)
        return stmt if pool is not None else None

    def hold(self, s: ast.Hold) -> ir.Hold:
        pools = []
        for hp in s.pools:
            pool = self.r.resource(hp.pool, "pool")
            units = self.r.expr(hp.units)
            reserve = None if hp.reserve is None else self.r.expr(hp.reserve)
            pools.append(ir.HoldPool(pool or _NO_REF, units, reserve, hp.span))
        reuse = None if s.reuse is None else self.r.expr(s.reuse)
        body = self.block(s.body)
        cache = None if s.cache is None else self.r.expr(s.cache)
        lease = None
        if s.lease is not None:
            pool = self.r.resource(s.lease.pool, "pool")
            duration = self.r.expr(s.lease.duration)
            lease = ir.Lease(pool or _NO_REF, duration, s.lease.span)
        return ir.Hold(tuple(pools), reuse, body, cache, lease, s.span)

    def run(self, s: ast.Run) -> ir.Run:
        stages = tuple(self.r.resource(ref, "stage") for ref in s.stages)
        if not stages:
            self.error(codes.STRUCTURE, s.span, "`run` names no stage")
        work = self.r.expr(s.work)
        growing = None if s.growing is None else self.r.resource(s.growing, "pool")
        mode = _MODES.get(s.mode)
        if mode is None:
            self.error(codes.INTERNAL, s.span, f"`run` with the mode `{s.mode}`")
            mode = "plain"
        return ir.Run(tuple(st or _NO_REF for st in stages), mode, work, growing, s.span)


# The workload's clauses that it has at most one of, and their words.
_ONCE = {ast.Arrive: "arrive", ast.Trace: "trace", ast.Init: "init", ast.TurnBlock: "turn"}


def _clause_statements(workloads: list[ast.Workload], kind: type) -> list[ast.Stmt]:
    return [s for w in workloads for c in w.clauses if isinstance(c, kind) for s in c.body.body]


# A placeholder for a reference that failed (the program is not built then).
_NO_REF = ir.Ref("pool", 0, 1, None, Span("<none>", 0, 0, 1, 1, 1, 1))
