"""Flows: `run a, b (w)`, one job holding several ps stages at once (spec §3, Stages).

A flow's work goes down at one rate at all its stages. The rates are set by the program's
share from the stages' capacities φ, and recomputed whenever a flow starts or ends:

- `share maxmin` fills progressively: every unfrozen flow's rate rises together until some
  stage's capacity is used up; the flows through it freeze there, the others go on.
- `share bottleneck` gives each flow min over its stages s of φ_s / n_s (n_s the flows at
  s), leaving unused what that does not use at the other stages.

Every member of a stage array that some multi-stage run names is a `FlowStage` for the
whole run, so a single-stage run (or a spill) there is a flow of one stage. One
`FlowNetwork` holds every flow of the program. Like a ps stage, it does not schedule its
next completion at each change: it joins the world's pending ps stages and reschedules
after the settle, with the rates of the state the instant left (then it reports each
stage's utilisation, Σ rate / φ). One flow completes per event, the one with the earliest
end time (now plus its work left over its rate, rounded to the clock), ties in start order;
it completes at every one of its stages.

The network keeps its flows by route (`Route`: the flows over one sequence of stages,
which both shares give one rate) and each stage its flows, so that a change costs what it
touches: the share is worked out over the live routes, not the flows, leaving out the
stages of capacity inf (they constrain nobody), a flow's rate is set only when its route's
changes, and only the stages whose flows came, went or changed rate are summed and
reported. The arithmetic is the whole recomputation's, in the same order, to the bit
(`FROM_SCRATCH` switches the whole recomputation back on, for the tests to compare).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import count
from typing import Any

from serq import ir
from serq.sim.compiled_stages import reads_estimates
from serq.sim.errors import SimError, bad_work
from serq.sim.session import AT_STAGE
from serq.sim.stages import INF, PsStage, StageBase

_SATURATED = 1e-12  # relative slack under which a stage counts as full (maxmin)
FROM_SCRATCH = False  # recompute every rate and report every stage at each change (tests)


class Flow:
    """One job's flow: its stages, its work left and its rate."""

    __slots__ = ("job", "stages", "left", "rate", "seq", "route")

    def __init__(self, job: Any, stages: tuple[FlowStage, ...], work: float, seq: int):
        self.job = job
        self.stages = stages
        self.left = work
        self.rate = 0.0
        self.seq = seq
        self.route: Route | None = None


class Route:
    """The flows over one sequence of stages, in start order, and the rate they share."""

    __slots__ = ("stages", "finite", "flows", "rate", "given", "moved")

    def __init__(self, stages: tuple[FlowStage, ...]):
        self.stages = stages
        # the stages that can constrain it, each as often as it crosses them
        self.finite = tuple(st for st in stages if st.capacity < INF)
        self.flows: dict[Flow, None] = {}
        self.rate = 0.0  # the share's latest
        self.given = 0.0  # the rate its flows were given
        self.moved = False  # a flow came or went since the last reschedule


def maxmin_rates(flows: list[Flow], stages: list[FlowStage]) -> None:
    """Set every flow's rate by progressive filling over the capacities of `stages`.

    The flows of one route (the same stages in the same order) rise and freeze
    together, so the filling goes route by route, a route counting its flows at each
    of its stages; only the stages some flow crosses take part (the others have no one
    to share among). Each round's step is the least residual share, the same whatever
    order the stages are visited in, and each stage's residual the same arithmetic."""
    routes: dict[tuple[FlowStage, ...], list[Flow]] = {}
    for f in flows:
        f.rate = 0.0
        found = routes.get(f.stages)
        if found is None:
            routes[f.stages] = [f]
        else:
            found.append(f)
    users: dict[FlowStage, int] = {}
    for route, members in routes.items():
        n = len(members)
        for st in route:
            users[st] = users.get(st, 0) + n
    residual = {st: st.capacity for st in users}
    live = list(routes.items())
    level = 0.0
    while live:
        step = INF
        for st, n in users.items():
            if n:
                inc = residual[st] / n
                if inc < step:
                    step = inc
        if step == INF:  # the routes left cross only stages of capacity inf
            for _, members in live:
                for f in members:
                    f.rate = INF
            break
        level += step
        full = set()
        for st, n in users.items():
            if n:
                left = residual[st] = residual[st] - step * n
                if left <= _SATURATED * st.capacity and left < INF:  # inf: never full
                    full.add(st)
        if not full:
            continue
        rest = []
        for route, members in live:  # a route through a full stage freezes at this level
            if full.isdisjoint(route):
                rest.append((route, members))
                continue
            for f in members:
                f.rate = level
            n = len(members)
            for st in route:
                users[st] -= n
        live = rest


def bottleneck_rates(flows: list[Flow], stages: list[FlowStage]) -> None:
    """Set every flow's rate to its equal share at its tightest stage."""
    for f in flows:
        f.rate = min(st.capacity / st.present for st in f.stages)


SHARES: dict[str, Callable[[list[Flow], list[FlowStage]], None]] = {
    "maxmin": maxmin_rates,
    "bottleneck": bottleneck_rates,
}


def maxmin_routes(live: Iterable[Route]) -> None:
    """`maxmin_rates` over the live routes: each route's rate, the same arithmetic.

    A stage of capacity inf never sets a step (its residual share is inf) nor fills, so
    it is left out, and a route crossing only such stages goes at inf (as the whole
    filling ends it). The order the routes and stages are met in changes no value: each
    step is a least residual share, each residual its own stage's arithmetic. The stages
    keep their users and residual while it runs (`FlowStage.users`, `.residual`)."""
    crossed: list[FlowStage] = []
    active: list[tuple[Route, int]] = []
    for r in live:
        finite = r.finite
        if not finite:
            r.rate = INF
            continue
        n = len(r.flows)
        for st in finite:
            if st.users:
                st.users += n
            else:
                st.users = n
                st.residual = st.capacity
                crossed.append(st)
        active.append((r, n))
    level = 0.0
    while active:
        step = INF
        for st in crossed:
            n = st.users
            if n:
                inc = st.residual / n
                if inc < step:
                    step = inc
        level += step
        full = []
        for st in crossed:
            n = st.users
            if n:
                left = st.residual = st.residual - step * n
                if left <= _SATURATED * st.capacity:
                    st.full = True
                    full.append(st)
        if not full:
            continue
        rest = []
        for route in active:  # a route through a full stage freezes at this level
            r, n = route
            for st in r.finite:
                if st.full:
                    break
            else:
                rest.append(route)
                continue
            r.rate = level
            for st in r.finite:
                st.users -= n
        for st in full:
            st.full = False
        active = rest


def bottleneck_routes(live: Iterable[Route]) -> None:
    """`bottleneck_rates` over the live routes (a stage of capacity inf gives inf)."""
    for r in live:
        rate = INF
        for st in r.finite:
            share = st.capacity / st.present
            if share < rate:
                rate = share
        r.rate = rate


ROUTE_SHARES: dict[Callable, Callable[[Iterable[Route]], None]] = {
    maxmin_rates: maxmin_routes,
    bottleneck_rates: bottleneck_routes,
}


class FlowNetwork:
    """Every flow of one run over its flow stages; joins `pending` like a ps stage."""

    __slots__ = (
        "engine",
        "share",
        "fill",
        "stages",
        "flows",
        "routes",
        "live",
        "touched",
        "index",
        "dirty",
        "pending",
        "t_last",
        "version",
        "measuring",
        "_order",
    )

    def __init__(self, engine: Any, share: Callable, pending: list[Any]):
        self.engine = engine
        self.share = share
        self.fill = ROUTE_SHARES[share]
        self.stages: list[FlowStage] = []
        self.flows: dict[Any, Flow] = {}  # by job, in start order
        self.routes: dict[tuple[FlowStage, ...], Route] = {}  # every route met
        self.live: dict[Route, None] = {}  # the routes with flows
        self.touched: list[FlowStage] = []  # stages to sum and report at the reschedule
        self.index = 0  # its place among the pending ps stages: its first stage's
        self.dirty = False
        self.pending = pending
        self.t_last = 0.0
        self.version = 0
        self.measuring = True  # keep the online estimates (only where the program reads one)
        self._order = count().__next__

    def advance(self, now: float) -> None:
        """Take the work done since the last change off every flow."""
        dt = now - self.t_last
        if dt:
            for f in self.flows.values():
                f.left -= f.rate * dt
            self.t_last = now

    def _changed(self) -> None:
        if not self.dirty:
            self.dirty = True
            self.pending.append(self)

    def _touch(self, stages: tuple[FlowStage, ...]) -> None:
        touched = self.touched
        for st in stages:
            if not st.touched:
                st.touched = True
                touched.append(st)

    def start(self, job: Any, stages: tuple[FlowStage, ...], work: float) -> None:
        """`job` starts a flow of `work` over `stages` now."""
        now = self.engine.now
        self.advance(now)
        job.at = stages[0]
        job.work = work
        job.arrived = job.started = now
        f = self.flows[job] = Flow(job, stages, work, self._order())
        route = self.routes.get(stages)
        if route is None:
            route = self.routes[stages] = Route(stages)
        f.route = route
        route.flows[f] = None
        route.moved = True
        self.live[route] = None
        for st in stages:
            st.present += 1
            members = st.members
            members[f] = members.get(f, 0) + 1
        self._touch(stages)
        self._changed()

    def _remove(self, f: Flow) -> None:
        """Take `f` off its route and stages."""
        route = f.route
        del route.flows[f]
        route.moved = True
        if not route.flows:
            del self.live[route]
        for st in f.stages:
            st.present -= 1
            st.members.pop(f, None)
        self._touch(f.stages)
        self._changed()

    def cancel(self, job: Any) -> None:
        """Take `job`'s flow away unfinished."""
        self.advance(self.engine.now)
        job.at = None
        self._remove(self.flows.pop(job))

    def reschedule(self) -> None:
        """Recompute the rates, report the stages and schedule the next completion."""
        if FROM_SCRATCH:
            self._reschedule_from_scratch()
            return
        self.dirty = False
        now = self.engine.now
        self.advance(now)
        live = self.live
        touched = self.touched
        if live:
            self.fill(live)
            for r in live:
                rate = r.rate
                if rate != r.given or r.moved:  # its flows' rates, and their stages' sums
                    r.given = rate
                    r.moved = False
                    for f in r.flows:
                        f.rate = rate
                    for st in r.finite:
                        if not st.touched:
                            st.touched = True
                            touched.append(st)
        if touched:  # in any order: each stage's record is its own
            record = touched[0].recorder.stage_state
            for st in touched:
                st.touched = False
                capacity = st.capacity
                present = st.present
                if capacity < INF:
                    # Σ rate / φ, summed in start order as the whole recomputation does
                    total = 0.0
                    for f, times in st.members.items():
                        rate = f.rate
                        total += rate
                        while times > 1:  # a route crossing the stage again
                            total += rate
                            times -= 1
                    st.rate_sum = total
                    busy = total / capacity
                else:  # a stage of capacity inf carries none of it
                    busy = 0.0
                state = (present, busy)
                if state != st.reported:
                    st.reported = state
                    record(st.index, now, present, busy)
            touched.clear()
        self._schedule_next(now)

    def _schedule_next(self, now: float) -> None:
        """Schedule the completion of the flow that ends first."""
        self.version += 1
        best = None
        best_end = INF
        for f in self.flows.values():
            # a flow of work inf never finishes, but at a rate of inf (every stage of it
            # `ps(inf)`), where any work is done at once, as at a ps stage
            rate = f.rate
            if rate > 0 and (f.job.work < INF or rate == INF):
                # its end time, as the reference compares them: two flows whose times to
                # go differ by less than the clock can tell end together, and the earlier
                # start goes first; work left by rounding (below 0, or inf / inf) is none
                dt = f.left / rate
                end = now + dt if dt > 0.0 else now
                if end < best_end:  # ties: the earlier start, first in `flows`
                    best, best_end = f, end
        if best is not None:
            self.engine.schedule(best_end, self._done, (self.version, best))

    def _reschedule_from_scratch(self) -> None:
        """`reschedule` recomputing every flow's rate and every stage's sum (`FROM_SCRATCH`)."""
        self.dirty = False
        now = self.engine.now
        self.advance(now)
        for r in self.live:
            r.moved = True  # the incremental path, switched back on, sets every rate
        for st in self.touched:
            st.touched = False
        self.touched.clear()
        flows = list(self.flows.values())
        if flows:
            self.share(flows, self.stages)
        for st in self.stages:
            st.rate_sum = 0.0
        for f in flows:
            for st in f.stages:
                st.rate_sum += f.rate
        record = self.stages[0].recorder.stage_state
        for st in self.stages:
            # Σ rate / φ; a stage of capacity inf carries none of it (a flow crossing only
            # such stages has rate inf, and ends at once)
            state = (st.present, st.rate_sum / st.capacity if st.capacity < INF else 0.0)
            if state != st.reported:  # fast path: most changes touch a few stages
                st.reported = state
                record(st.index, now, *state)
        self._schedule_next(now)

    def _done(self, arg: tuple[int, Flow]) -> None:
        version, f = arg
        if version != self.version:
            return
        now = self.engine.now
        self.advance(now)
        job = f.job
        del self.flows[job]
        self._remove(f)
        job.at = None
        started = job.started
        measuring = self.measuring
        for st in f.stages:
            if measuring:
                st.measure(started, 0.0, now - started)
            st.recorder.stage_done(st.index, now, 0.0, now - started)
        f.stages[0].wake(job)

    def work_left(self, stage: FlowStage) -> float:
        """The work the flows at `stage` have left now; a flow at a rate of inf has none
        (it ends at this instant, as a job at a ps stage of infinite speed does), not the
        NaN of its work less inf · 0."""
        dt = self.engine.now - self.t_last
        total = -0.0
        for f in stage.members:  # in start order, as in `flows`
            rate = f.rate
            total += f.left - rate * dt if rate < INF else 0.0
        return total


class FlowStage(StageBase):
    """A ps(φ) stage member of an array held by a multi-stage run: every job on it is a
    flow of the network (a single-stage run, a flow of one stage)."""

    __slots__ = (
        "network",
        "capacity",
        "rate_sum",
        "reported",
        "members",
        "touched",
        "users",
        "residual",
        "full",
    )

    def __init__(self, ps: PsStage, network: FlowNetwork, capacity: float):
        super().__init__(ps.index, ps.engine, ps.recorder, ps.wake)
        self.network = network
        self.capacity = capacity
        self.rate_sum = 0.0
        self.reported = (0, 0.0)
        self.members: dict[Flow, int] = {}  # its flows in start order: how often each crosses it
        self.touched = False  # in the network's `touched`
        self.users = 0  # `maxmin_routes`' own: the unfrozen flows here, while it runs
        self.residual = 0.0  # and the capacity they have left
        self.full = False

    def arrive(self, job, work):
        self.network.start(job, (self,), work)

    def cancel(self, job):
        self.network.cancel(job)

    def busy_count(self):
        return float(self.present)

    def work_left(self):
        return self.network.work_left(self)


def flow_families(program: ir.Program) -> list[tuple[int, int]]:
    """The stage arrays (first member, members) some multi-stage run of `program` names."""
    families: dict[int, int] = {}
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Run) and len(stmt.stages) > 1:
                for ref in stmt.stages:
                    families[ref.base] = ref.count
    return sorted(families.items())


def install(program: ir.Program, stages: list[StageBase], pending: list[Any]) -> None:
    """Replace, in `stages`, every member of an array held by a multi-stage run with a
    `FlowStage` of one network (nothing when the program has no such run).

    Raises:
        SimError: a member is not ps(φ) with a constant φ above 0, or the program
            declares no share.
    """
    families = flow_families(program)
    if not families:
        return
    if program.share not in SHARES:
        raise SimError(
            program.stages[families[0][0]].origin,
            "a program with runs over several stages must declare its share",
        )
    network: FlowNetwork | None = None
    for base, n in families:
        for k in range(base, base + n):
            ps = stages[k]
            phi = ps.phi_const if isinstance(ps, PsStage) else None
            if phi is None or not phi > 0:
                raise SimError(
                    program.stages[k].origin,
                    f"stage `{program.stages[k].name}` is held by a flow: it must be ps(φ) "
                    "with a constant φ above 0",
                )
            if network is None:
                network = FlowNetwork(ps.engine, SHARES[program.share], pending)
                network.index = k
                network.measuring = reads_estimates(program)
            st = FlowStage(ps, network, phi)
            network.stages.append(st)
            stages[k] = st


def compile_flow_run(
    stmt: ir.Run, work: Callable[[Any], float], exprs: Any, world: Any, stream: Any
) -> Callable:
    """The step of `run a, b, ... (w)`: a flow over the named stages, started now (a run of
    zero work goes through `world.zero_run`); a computed index draws from `stream`."""
    resolvers = tuple(exprs.resolver(ref, stream) for ref in stmt.stages)
    zero_run = world.zero_run
    pair = len(resolvers) == 2
    r0, r1 = resolvers[:2] if pair else (None, None)

    origin = stmt.origin

    def run_flow(s: Any) -> bool:
        a = s.attrs
        w = work(a)
        if not w > 0:  # a run of zero work completes at once
            if w != w:  # NaN work; below 0 is no work, as the reference has it
                raise bad_work(origin, w)
            for r in resolvers:  # the indices are read all the same: checked, draws made
                r(a)
            return zero_run(s)
        stages = (r0(a), r1(a)) if pair else tuple(r(a) for r in resolvers)
        s.state = AT_STAGE
        stages[0].network.start(s, stages, w)
        return False

    return run_flow
