"""Compile IR statement blocks into tuples of steps.

A step is a function `step(session) -> bool`: it does what its statement says and returns
True to go on with the next statement, or False when the session stopped (queued at a
pool, at a stage, waiting to grow, or ended). Control flow pushes frames (`Frame`) that the
world's session loop walks. Every block is compiled once, before the run starts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim.errors import SimError, bad_work, number
from serq.sim.exprs import ExprCompiler, key_tuple, keys_less
from serq.sim.flows import compile_flow_run
from serq.sim.holds import HoldSpec
from serq.sim.session import AT_STAGE, LOOP, Frame, Session
from serq.vocabulary import MAX_MEMBERS

Step = Callable[[Session], bool]
TURN_NO = SLOT["turn_no"]


class StatementCompiler:
    """Compiles the blocks of `program` for `world` (engine, recorder, holds, workload,
    `end_session`); draws in statements use `stream`."""

    def __init__(self, program: ir.Program, world: Any, exprs: ExprCompiler, stream: Any):
        self.program = program
        self.world = world
        self.exprs = exprs
        self.stream = stream
        self._blocks: dict[int, tuple[Step, ...]] = {}

    def block(self, index: int) -> tuple[Step, ...]:
        """The steps of block `index` of the program."""
        steps = self._blocks.get(index)
        if steps is None:
            steps = tuple(self.statement(s) for s in self.program.blocks[index])
            self._blocks[index] = steps
        return steps

    def expr(self, e: ir.Expr) -> Callable[[Any], float]:
        return self.exprs.compile(e, self.stream)

    def statement(self, stmt: ir.Stmt) -> Step:  # noqa: C901 - one case per statement
        """The step of one statement."""
        world = self.world
        if isinstance(stmt, ir.Set):
            return _set(stmt.slot, self.expr(stmt.value))
        if isinstance(stmt, ir.Observe):
            return _observe(stmt.stat, self.expr(stmt.value), world)
        if isinstance(stmt, ir.Turn):
            return world.workload.turn
        if isinstance(stmt, ir.Hold):
            return self._hold(stmt)
        if isinstance(stmt, ir.Run):
            return self._run(stmt)
        if isinstance(stmt, ir.Branch):
            return _branch(
                self.expr(stmt.test), self.block(stmt.then), self.block(stmt.otherwise), stmt.origin
            )
        if isinstance(stmt, ir.Loop):
            body = self.block(stmt.body)
            origin = stmt.origin

            def loop(s: Session) -> bool:
                s.frames.append(Frame(body, LOOP, origin=origin))
                return True

            return loop
        if isinstance(stmt, ir.Choose):
            keys = tuple(self.expr(k) for k in stmt.keys)
            return _choose(stmt.slot, self.expr(stmt.count), keys, stmt.origin)
        if isinstance(stmt, ir.End):

            def end(s: Session) -> bool:
                world.end_session(s)
                return False

            return end
        holds = world.holds
        pool = self.exprs.resolver(stmt.pool, self.stream)
        origin = stmt.origin
        if isinstance(stmt, ir.Grow):
            amount = self.expr(stmt.amount)
            return lambda s: holds.grow(s, pool(s.attrs), amount(s.attrs), origin)
        if isinstance(stmt, ir.Drop):

            def drop(s: Session) -> bool:
                p = pool(s.attrs)
                p.cache.drop(s)
                p.dirty = True
                return True

            return drop
        if isinstance(stmt, ir.Release):

            def release(s: Session) -> bool:
                holds.release(s, pool(s.attrs))
                return True

            return release
        if isinstance(stmt, ir.Load):
            amount = self.expr(stmt.amount)

            def load(s: Session) -> bool:
                p = pool(s.attrs)
                n = amount(s.attrs)
                holds.load(s, p, n, origin, f"load {p.name} ({number(n)})")
                return True

            return load
        raise TypeError(f"not a statement: {stmt!r}")

    def _hold(self, stmt: ir.Hold) -> Step:
        lease = None
        if stmt.lease is not None:
            pool = self.exprs.resolver(stmt.lease.pool, self.stream)
            lease = (pool, self.expr(stmt.lease.duration))
        spec = HoldSpec(
            tuple(self.exprs.resolver(p.pool, self.stream) for p in stmt.pools),
            tuple(self.expr(p.units) for p in stmt.pools),
            tuple(None if p.reserve is None else self.expr(p.reserve) for p in stmt.pools),
            None if stmt.reuse is None else self.expr(stmt.reuse),
            None if stmt.cache is None else self.expr(stmt.cache),
            lease,
            stmt.origin,
        )
        spec.body = self.block(stmt.body)
        spec.part_origins = tuple(p.origin for p in stmt.pools)
        join = self.world.holds.join
        return lambda s: join(s, spec)

    def _run(self, stmt: ir.Run) -> Step:
        if len(stmt.stages) > 1:
            return compile_flow_run(stmt, self.expr(stmt.work), self.exprs, self.world, self.stream)
        if stmt.mode != "plain" or stmt.growing is not None:
            from serq.sim.step import compile_run  # the step engine imports this module's peers

            return compile_run(self, stmt)
        ref = stmt.stages[0]
        work = self.expr(stmt.work)
        zero_run = self.world.zero_run
        origin = stmt.origin
        member = self.exprs.constant(ref)
        if member is not None:  # fast path: a stage known before the run needs no resolving

            def run_at(s: Session) -> bool:
                w = work(s.attrs)
                if not w > 0:
                    if w != w:  # NaN work; below 0 is no work, as the reference has it
                        raise bad_work(origin, w)
                    return zero_run(s)
                s.state = AT_STAGE
                member.arrive(s, w)
                return False

            return run_at
        stage = self.exprs.resolver(ref, self.stream)

        def run(s: Session) -> bool:
            a = s.attrs
            w = work(a)
            if not w > 0:  # a run of zero work completes at once
                if w != w:  # NaN work; below 0 is no work, as the reference has it
                    raise bad_work(origin, w)
                stage(a)  # its index is read all the same: checked, its draws made
                return zero_run(s)
            s.state = AT_STAGE
            stage(a).arrive(s, w)
            return False

        return run


def _set(slot: int, value: Callable[[Any], float]) -> Step:
    def set_(s: Session) -> bool:
        a = s.attrs
        a[slot] = value(a)
        return True

    return set_


def _observe(stat: int, value: Callable[[Any], float], world: Any) -> Step:
    record = world.recorder.observe
    engine = world.engine

    def observe(s: Session) -> bool:
        a = s.attrs
        record(stat, engine.now, s.serial, int(a[TURN_NO]), value(a))
        return True

    return observe


def _branch(test: Callable[[Any], float], then: tuple, otherwise: tuple, origin: Any) -> Step:
    def branch(s: Session) -> bool:
        v = test(s.attrs)
        if v == 1.0:
            if then:
                s.frames.append(Frame(then))
        elif v == 0.0:
            if otherwise:
                s.frames.append(Frame(otherwise))
        else:
            raise SimError(
                origin,
                f"the branch guard is {number(v)}, not 0 or 1; "
                "a draw is written `branch with (p)`",
            )
        return True

    return branch


def _choose(
    slot: int, count: Callable[[Any], float], keys: tuple[Callable[[Any], float], ...], origin: Any
) -> Step:
    key_of = key_tuple(keys)

    def choose(s: Session) -> bool:
        a = s.attrs
        n = count(a)
        if not (1 <= n <= MAX_MEMBERS and n == math.floor(n)):
            raise SimError(
                origin,
                f"choose over {number(n)} candidates: need a whole count from 1 to "
                f"{MAX_MEMBERS} (the largest family)",
            )
        best = 0
        best_key: tuple[float, ...] | None = None
        for j in range(int(n)):
            a[slot] = float(j)
            key = key_of(a)
            if best_key is None or (key < best_key and keys_less(key, best_key)):
                best, best_key = j, key
        a[slot] = float(best)
        return True

    return choose
