"""`StatsRecorder`: the `Recorder` that turns a run's calls into a `serq.report.Report`.

Time averages are integrals of piecewise-constant levels over [warmup, end], cut at the
warm-up: a level set before it counts only from the warm-up on. Samples and completions
count from the warm-up on (a time equal to it included); the counts of admissions,
pool events and iterations are the whole run's, as the reference reports them. A stage's
utilisation is its time-average `busy`, except that a fifo(c) stage is busy while any
job is present (the reference's utilisation; `busy` there is in service / c). A step
stage's iteration runs until its next one starts or until no job is present (the
interface says when an iteration starts, not when it ends).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable
from functools import reduce
from itertools import chain, compress, islice, repeat
from operator import add, mul, ne, sub
from typing import TYPE_CHECKING

import serq
from serq import ir
from serq.report import stats
from serq.report.model import Gauge, Observe, PoolRow, Report, Series, StageRow
from serq.sim.errors import number

if TYPE_CHECKING:
    from serq.ir import Program
    from serq.sim import Outcome

TESTS = ("==", "!=", "<", "<=", ">", ">=", "&&", "||")
NOTE_MIN_SAMPLES = 40  # a test observed as 0 this many times or more is noted
POOL_COUNTS = ("evicted_entries", "evicted_units", "preemptions", "spills", "rejected", "stuck")
NAN = math.nan
_WHOLE = float(2**53)
_frexp = math.frexp
_ldexp = math.ldexp


class _Level:
    """A quantity constant between changes, and its integral from the warm-up on."""

    __slots__ = ("value", "since", "area")

    def __init__(self, warmup: float) -> None:
        self.value = 0.0
        self.since = warmup  # integrated up to here; nothing before the warm-up
        self.area = 0.0

    def set(self, now: float, value: float) -> None:
        if now > self.since:
            self.area += self.value * (now - self.since)
            self.since = now
        self.value = value


# a span of at most this many iterations adds its terms one by one rather than asking
# `_gaps_added` whether one addition does (a call that costs more than short sums)
_SHORT = 16


def _hold(level: _Level, times: list[float], value: float) -> None:
    """`level.set(t, value)` at each of the increasing `times`, where `value` is the
    level's value already: each adds `value * (t - since)` to the area in turn (a term
    of 0 adds nothing, as `set` adds nothing when t is not past `since`)."""
    since = level.since
    begin = bisect_right(times, since)
    if begin < len(times):
        gaps = map(sub, islice(times, begin, None), chain((since,), islice(times, begin, None)))
        if value != 1.0:
            gaps = map(mul, repeat(value), gaps)
        level.area = reduce(add, gaps, level.area)
        level.since = times[-1]
    level.value = value


def _gaps_added(
    area: float, weighted: float, batch_time: float, decodes: int, first: float, last: float
) -> tuple[float, float, float] | None:
    """`area` and `batch_time` plus, and `weighted` plus `decodes` times, each `t - before`
    for increasing times from `first` to `last`, one term at a time, when none of those
    additions rounds: then each is `total + weight * (last - first)`, whatever the times
    between; None when an addition might round (the caller then adds the terms one by
    one).

    No addition rounds when `first` and `last` lie in one binade (so every gap is a
    whole multiple of its unit in the last place u, and so is their sum), the weighted
    sum is below 2**53 u (each weighted gap is exact), and the total has a unit of at
    most u and stays in its binade (each partial sum is a multiple of its unit there).
    A span is short against the clock, so this holds for all but a few spans."""
    if not first > 0.0:
        return None
    e = _frexp(first)[1]
    if _frexp(last)[1] != e:
        return None
    gap = last - first
    # the gaps' sum in units u, times the greatest weight (`decodes` is at least 1)
    if decodes * (gap / _ldexp(1.0, e - 53)) >= _WHOLE:
        return None
    sums = []
    for total, added in ((area, gap), (weighted, decodes * gap), (batch_time, gap)):
        if total == 0.0:
            sums.append(added)
            continue
        exponent = _frexp(total)[1]
        if exponent > e:  # the total's unit is coarser than the gaps'
            return None
        total += added
        if _frexp(total)[1] != exponent:
            return None
        sums.append(total)
    return sums[0], sums[1], sums[2]


def _terms_added(
    area: float, weighted: float, batch_time: float, decodes: int, first: float, times: list[float]
) -> tuple[float, float, float]:
    """`area` and `batch_time` each plus every gap between the increasing `times` (the
    first from `first`), `weighted` plus `decodes` times each, one term at a time in
    order, as `_hold` adds them (in one pass: cheaper than a reduce per sum for a span)."""
    before = first
    for t in times:
        gap = t - before
        area += gap
        weighted += decodes * gap
        batch_time += gap
        before = t
    return area, weighted, batch_time


class _Stage:
    __slots__ = (
        "present",
        "busy",
        "completed",
        "wait",
        "service",
        "iterations",
        "kinds",
        "decodes",
        "started",
        "ends",
        "carried",
        "batches",
        "batch_decodes",
        "batch_time",
        "skipped",
        "fifo",
        "on",
        "itl",
    )

    def __init__(self, warmup: float, fifo: bool) -> None:
        self.fifo = fifo  # busy while a job is present, whatever the servers
        self.present = _Level(warmup)
        self.busy = _Level(warmup)
        self.completed = 0
        self.wait = 0.0
        self.service = 0.0
        self.iterations = 0
        self.kinds = (_Level(warmup), _Level(warmup), _Level(warmup))  # prefill, decode, mixed
        self.decodes = _Level(warmup)
        self.started: float | None = None  # the running iteration's start, end and decodes
        self.ends: float | None = None
        self.carried = 0
        self.batches = 0  # iterations with decodes started after warm-up, ended
        self.batch_decodes = 0.0
        self.batch_time = 0.0
        self.skipped = 0  # iterations advanced in fast-forwarded spans
        # the kind level the running iteration holds at 1 (None: none, or none runs); the
        # other kind levels, and `decodes` when `carried` is 0, hold 0 (`iteration`)
        self.on: _Level | None = None
        # a step stage's inter-token latencies after warm-up (`StatsRecorder.itl`)
        self.itl = TokenGaps()


class TokenGaps:
    """A step stage's inter-token latencies: `counts`, each value with how many times it
    came (a span repeats a few values many times), and `fresh`, values that came once
    each, appended a token at a time (cheaper than counting) and moved into `counts`, in
    C, when there are `FRESH_MOST` of them and before they are read (`merged`)."""

    __slots__ = ("counts", "fresh")
    FRESH_MOST = 1 << 12  # 128 KiB of floats a stage at most

    def __init__(self) -> None:
        self.counts: Counter[float] = Counter()
        self.fresh: list[float] = []

    def merged(self) -> Counter[float]:
        """Every value so far, by how many times it came."""
        if self.fresh:
            self.counts.update(self.fresh)
            self.fresh.clear()
        return self.counts


class _Pool:
    __slots__ = (
        "used",
        "cached",
        "queued",
        "holders",
        "levels",
        "admissions",
        "waits",
        "wait",
        "counts",
    )

    def __init__(self, warmup: float) -> None:
        self.used = _Level(warmup)
        self.cached = _Level(warmup)
        self.queued = _Level(warmup)
        self.holders = _Level(warmup)
        # the four, which move together (`pool_state`), in one tuple
        self.levels = (self.used, self.cached, self.queued, self.holders)
        self.admissions = 0
        self.waits = 0
        self.wait = 0.0
        self.counts = dict.fromkeys(POOL_COUNTS, 0.0)


class StatsRecorder:
    """Keeps what the report of `program` needs, measured from `warmup` on; `progress`,
    if given, is called with the clock now and then."""

    def __init__(
        self, program: Program, warmup: float, progress: Callable[[float], None] | None = None
    ) -> None:
        self.program = program
        self.warmup = warmup
        self._progress = progress
        # per observe: the times, sessions, turns and values of its samples, typed arrays
        # that become the report's as they are
        self._samples = [
            (Series("d"), Series("q"), Series("q"), Series("d")) for _ in program.observes
        ]
        self._stages = [_Stage(warmup, isinstance(s.kind, ir.Fifo)) for s in program.stages]
        self._pools = [_Pool(warmup) for _ in program.pools]
        # times, values: the change points
        self._gauge_points = [(Series("d"), Series("d")) for _ in program.gauges]
        self._gauge_unordered: set[int] = set()  # gauges told of an instant before the last
        self._last_gauges: tuple[float, ...] | None = None
        self._live = _Level(warmup)

    # ------------------------------------------------------------ for the straight path

    def live_level(self) -> _Level:
        """The level of live sessions (`serq.sim.straight` updates it inline)."""
        return self._live

    def samples(self, stat: int) -> tuple[Series, Series, Series, Series]:
        """The times, sessions, turns and values of observe `stat` (for the straight path)."""
        return self._samples[stat]

    def has_progress(self) -> bool:
        """Whether a progress callback listens (the straight path then keeps its clock)."""
        return self._progress is not None

    def gauge_series(
        self, times: list[float], columns: list[list[float]], distinct: list[bool]
    ) -> None:
        """Every gauge's values (`columns`, one list per gauge, never NaN) at the ends of
        the increasing instants `times`, recorded as `gauges` at each would have: its
        change points only. `distinct[i]`: each value of gauge i differs from the one
        before it (each is a change)."""
        if self._last_gauges is None and all(distinct):
            # fast path: nothing recorded yet, so `gauges` would record the first values,
            # then each later one: the lists become the change points as they are
            for i, values in enumerate(columns):
                self._gauge_points[i] = (Series("d", times), Series("d", values))
            self._last_gauges = tuple(values[-1] for values in columns)
            return
        self.gauges(times[0], tuple(values[0] for values in columns))
        later = times[1:]
        for i, values in enumerate(columns):
            changed = list(map(ne, islice(values, 1, None), values))
            points, held = self._gauge_points[i]
            points.extend(compress(later, changed))
            held.extend(compress(islice(values, 1, None), changed))
        self._last_gauges = tuple(values[-1] for values in columns)

    def stage_record(self, stage: int) -> _Stage:
        """What is kept of stage `stage` (`serq.sim.straight` updates it inline)."""
        return self._stages[stage]

    # ------------------------------------------------------------ the Recorder calls

    def observe(self, stat: int, now: float, session: int, turn: int, value: float) -> None:
        if now >= self.warmup:
            times, sessions, turns, values = self._samples[stat]
            times.append(now)
            sessions.append(session)
            turns.append(turn)
            values.append(value)

    def stage_state(self, stage: int, now: float, present: int, busy: float) -> None:
        s = self._stages[stage]
        # fast path: `_Level.set` inlined on both levels (a call per event each)
        level = s.present
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = present
        level = s.busy
        if now > level.since:
            level.area += level.value * (now - level.since)
            level.since = now
        level.value = (1.0 if present else 0.0) if s.fifo else busy
        if present == 0 and s.started is not None:
            self.iteration_end(stage, now)

    def itl(self, stage: int) -> TokenGaps:
        """The inter-token latencies of step stage `stage`, which the stage counts in: a
        sample for each token a session is given after its first (a decode iteration's,
        or the last chunk of a prefill's), the time since its previous token from any
        engine, when the token comes at or after the warm-up; by value, how many."""
        return self._stages[stage].itl

    def stage_done(self, stage: int, now: float, wait: float, service: float) -> None:
        if now >= self.warmup:
            s = self._stages[stage]
            s.completed += 1
            s.wait += wait
            s.service += service

    def pool_state(
        self, pool: int, now: float, used: float, cached: float, queued: int, holders: int
    ) -> None:
        # fast path: `_Level.set` inlined on the four levels (they move together: one
        # `since`, and every level's area is up to it)
        u, c, q, h = self._pools[pool].levels
        since = u.since
        if now > since:
            dt = now - since
            u.area += u.value * dt
            c.area += c.value * dt
            q.area += q.value * dt
            h.area += h.value * dt
            u.since = c.since = q.since = h.since = now
        u.value = used
        c.value = cached
        q.value = queued
        h.value = holders

    def pool_states(
        self, pool: int, rows: list[tuple[float, float, float]], queued: int, holders: int
    ) -> None:
        """`pool_state` at each (time, used, cached) of `rows`, their times increasing,
        with the other levels as given: the same sums, term by term."""
        if not rows:
            return
        u, c, q, h = self._pools[pool].levels
        # in locals through the rows (the same operations in the same order), then back
        since = u.since
        au, ac, aq, ah = u.area, c.area, q.area, h.area
        vu, vc, vq, vh = u.value, c.value, q.value, h.value
        for now, value, held in rows:
            if now > since:
                dt = now - since
                au += vu * dt
                ac += vc * dt
                aq += vq * dt
                ah += vh * dt
                since = now
            vu = value
            vc = held
            vq = queued
            vh = holders
        u.since = c.since = q.since = h.since = since
        u.area, c.area, q.area, h.area = au, ac, aq, ah
        u.value, c.value, q.value, h.value = vu, vc, vq, vh

    def pool_admitted(self, pool: int, now: float, waited: float) -> None:
        p = self._pools[pool]
        p.admissions += 1
        if now >= self.warmup and not math.isnan(waited):  # NaN: admitted, did not queue here
            p.waits += 1
            p.wait += waited

    def pool_counts(self, pool: int, what: str, amounts: list[float]) -> None:
        """`pool_count(pool, what, amount)` for each of `amounts` in turn (not admissions)."""
        counts = self._pools[pool].counts
        counts[what] = reduce(add, amounts, counts[what])

    def pool_count(self, pool: int, what: str, amount: float = 1) -> None:
        if what == "admissions":  # to a pool of a hold other than its first (no queue wait)
            self._pools[pool].admissions += int(amount)
        else:
            self._pools[pool].counts[what] += amount

    def iteration(
        self,
        stage: int,
        now: float,
        prefills: int,
        decodes: int,
        tokens: float,
        ends: float | None = None,
    ) -> None:
        s = self._stages[stage]
        if s.started is not None:
            self.iteration_end(stage, now)
        s.iterations += 1
        # Between iterations every kind level and the decode count hold 0, so only the
        # levels that become positive are set. A level at 0 adds nothing to its area,
        # and where its `since` lags behind the clock, the next `set` moves it to the
        # same time as one at every change would (the clock never goes back).
        if decodes:
            on = s.kinds[2] if prefills else s.kinds[1]
        else:
            on = s.kinds[0] if prefills else None
        if on is not None:
            if now > on.since:
                on.since = now
            on.value = 1.0
            if decodes:
                level = s.decodes
                if now > level.since:
                    level.since = now
                level.value = decodes
        s.on = on
        s.started = now
        s.ends = ends
        s.carried = decodes

    def iteration_started(self, stage: int) -> float | None:
        """When the running iteration of step stage `stage` started (None: none runs)."""
        return self._stages[stage].started

    def iteration_end(self, stage: int, now: float) -> None:
        """The running iteration of step stage `stage`, if any, ends at `now`: its batch
        counts, and the levels it set go back to 0 (the one body of an iteration's end:
        `iteration` and `stage_state` call it too)."""
        s = self._stages[stage]
        started = s.started
        if started is None:
            return
        carried = s.carried
        if carried > 0 and started >= self.warmup:
            s.batches += 1
            s.batch_decodes += carried
            s.batch_time += now - started
        # the levels that are not 0 (`iteration`), to 0: `_Level.set` inlined (an
        # iteration's end each)
        level = s.on
        if level is not None:
            if now > level.since:
                level.area += level.value * (now - level.since)
                level.since = now
            level.value = 0.0
            s.on = None
        if carried:
            level = s.decodes
            if now > level.since:
                level.area += level.value * (now - level.since)
                level.since = now
            level.value = 0.0
        s.started = None

    def iterations(
        self,
        stage: int,
        starts: list[float],
        prefills: int,
        decodes: int,
        tokens: float,
        ends: float | None = None,
    ) -> None:
        """Iterations of the running one's shape (a decode batch of `decodes`), as
        `iteration` at each time of `starts` (increasing), each ending when the next
        starts, the last at `ends`: a fast-forwarded span. Every sum is made as one
        iteration at a time makes it, one term per iteration in order (`_hold`), so the
        report is bit for bit the same."""
        if not starts:
            return
        s = self._stages[stage]
        count = len(starts)
        s.iterations += count
        s.skipped += count
        started = s.started
        kinds = s.kinds
        level, dec = kinds[1], s.decodes
        if (
            started is not None
            and started >= self.warmup
            and prefills == 0
            and decodes > 0
            and s.carried == decodes
            and level.since == started == dec.since
            and level.value == 1.0
            and dec.value == decodes
            and kinds[0].value == kinds[2].value == 0.0
        ):
            # fast path: a decode-only span after the warm-up, as the running iteration:
            # the decode level, the decode count and the batch time all add each start
            # less the one before, in one pass (as one at a time, term by term)
            since = starts[-1]
            sums = None  # a short span: term by term, below
            if count > _SHORT:
                sums = _gaps_added(level.area, dec.area, s.batch_time, decodes, started, since)
            if sums is None:  # term by term in order, all three
                sums = _terms_added(level.area, dec.area, s.batch_time, decodes, started, starts)
            level.area, dec.area, s.batch_time = sums
            level.since = dec.since = since
            kinds[0].since = kinds[2].since = since  # their value is 0: no area
            s.batches += count
            s.batch_decodes += decodes * count
            s.started = since
            s.ends = ends
            return
        if started is not None:
            # the batches that end here started at `started`, then at all but the last of
            # `starts`; those started at or after the warm-up count (a suffix)
            warmup = self.warmup
            first = 0 if started >= warmup else min(bisect_left(starts, warmup) + 1, count)
            if first == 0 and s.carried > 0:
                s.batches += 1
                s.batch_decodes += s.carried
                s.batch_time += starts[0] - started
            later = count - max(first, 1)
            if decodes > 0 and later > 0:
                s.batches += later
                s.batch_decodes += decodes * later
                begin = count - later  # the batch_time terms, each a start less the one before
                s.batch_time = reduce(
                    add,
                    map(sub, islice(starts, begin, None), islice(starts, begin - 1, None)),
                    s.batch_time,
                )
        on = 0 if decodes == 0 else (1 if prefills == 0 else 2)
        for i, level in enumerate(s.kinds):
            _hold(level, starts, 1.0 if i == on and (prefills or decodes) else 0.0)
        _hold(s.decodes, starts, decodes)
        s.on = s.kinds[on] if prefills or decodes else None
        s.started = starts[-1]
        s.ends = ends
        s.carried = decodes

    def gauges(self, now: float, values: tuple[float, ...]) -> None:
        if values == self._last_gauges:
            return
        last = self._last_gauges
        self._last_gauges = values
        for i, value in enumerate(values):
            if last is not None and last[i] == value:
                continue
            times, held = self._gauge_points[i]
            if times and times[-1] == now:  # the same instant again: its last state counts
                held[-1] = value
                if len(held) > 1 and held[-2] == value:
                    times.pop()
                    held.pop()
            else:
                if times and now < times[-1]:  # the clock went back: `_gauge` checks the times
                    self._gauge_unordered.add(i)
                times.append(now)
                held.append(value)

    def arrival(self, now: float, session: int) -> None:
        live = self._live  # fast path: `_Level.set` inlined, once per session
        if now > live.since:
            live.area += live.value * (now - live.since)
            live.since = now
        live.value += 1

    def session_ended(self, now: float, session: int) -> None:
        live = self._live
        if now > live.since:
            live.area += live.value * (now - live.since)
            live.since = now
        live.value -= 1

    def turn(self, now: float, session: int) -> None:
        pass

    def progress(self, now: float) -> None:
        if self._progress is not None:
            self._progress(now)

    # ------------------------------------------------------------------ the report

    def finish(self, outcome: Outcome) -> Report:
        """The report of the run that ended with `outcome` (its end, horizon, seed and
        counts of events, arrivals, ended sessions and turns)."""
        end = outcome.end
        span = end - self.warmup

        def average(level: _Level) -> float:
            level.set(end, level.value)
            return level.area / span if span > 0 else NAN

        observes = {
            name: _observe(name, *self._samples[i]) for i, name in enumerate(self.program.observes)
        }
        claims = tuple(getattr(outcome, "claims", ()))  # a recorder's caller may have none
        gauges = {
            g.name: _gauge(
                g.name, *self._gauge_points[i], self.warmup, end, i not in self._gauge_unordered
            )
            for i, g in enumerate(self.program.gauges)
        }
        stages = tuple(
            self._stage_row(member, self._stages[i], end, average)
            for i, member in enumerate(self.program.stages)
        )
        pools = tuple(
            _pool_row(member, self._pools[i], average)
            for i, member in enumerate(self.program.pools)
        )
        return Report(
            serq_version=serq.__version__,
            horizon=outcome.horizon,
            end=end,
            warmup=self.warmup,
            seed=outcome.seed,
            events=outcome.events,
            arrivals=outcome.arrivals,
            ended=outcome.ended,
            turns=outcome.turns,
            mean_live=average(self._live),
            observes=observes,
            gauges=gauges,
            stages=stages,
            pools=pools,
            notes=(*_notes(self.program, observes), *_livelocks(pools), *_claim_notes(claims)),
            claims=claims,
        )

    def _stage_row(
        self, member: ir.Stage, s: _Stage, end: float, average: Callable[[_Level], float]
    ) -> StageRow:
        span = end - self.warmup
        done = s.completed
        step = isinstance(member.kind, ir.Step)
        latencies = s.itl.merged()
        batches, batch_decodes, batch_time = s.batches, s.batch_decodes, s.batch_time
        if s.started is not None and s.carried > 0 and s.started >= self.warmup:
            # the iteration running at the end is a batch of its whole length, as the
            # reference counts it (it counts a batch when the iteration starts)
            batches += 1
            batch_decodes += s.carried
            batch_time += (end if s.ends is None else s.ends) - s.started
        return StageRow(
            name=member.name,
            index=member.index,
            mean_number=average(s.present),
            utilization=average(s.busy),
            completed=done,
            throughput=done / span if span > 0 else NAN,
            mean_wait=s.wait / done if done else NAN,
            mean_service=s.service / done if done else NAN,
            iterations=s.iterations,
            prefill_only=average(s.kinds[0]) if step else 0.0,
            decode_only=average(s.kinds[1]) if step else 0.0,
            mixed=average(s.kinds[2]) if step else 0.0,
            mean_decodes=average(s.decodes) if step else 0.0,
            mean_decode_batch=batch_decodes / batches if batches else NAN,
            mean_decode_step=batch_time / batches if batches else NAN,
            mean_itl=stats.counted_mean(latencies),
            itl_p50=stats.counted_percentile(latencies, 0.5),
            itl_p99=stats.counted_percentile(latencies, 0.99),
            skipped=s.skipped,
        )


def _observe(name: str, times: Series, sessions: Series, turns: Series, values: Series) -> Observe:
    """The row of an observation, its samples the recorder's arrays themselves."""
    mean = stats.mean(values)
    return Observe(
        name=name,
        count=len(values),
        mean=mean,
        ci=stats.sample_ci(values),
        cv2=stats.cv2(values, mean),
        p99=stats.percentile(values, 0.99, mean),
        columns=(values, times, sessions, turns),
    )


def _gauge(
    name: str, times: Series, values: Series, warmup: float, end: float, increasing: bool
) -> Gauge:
    """The row of a gauge with change points `times` and `values`; `increasing`: the times
    are known to increase strictly (`gauges` replaces the point of an instant it is told
    of again, and the clock does not go back)."""
    summary = stats.step_summary(times, values, warmup, end, increasing=increasing)
    mean, ci, least, greatest = summary
    return Gauge(
        name=name,
        mean=mean,
        ci=ci,
        min=least,
        max=greatest,
        columns=(times, values),
    )


def _pool_row(member: ir.Pool, p: _Pool, average: Callable[[_Level], float]) -> PoolRow:
    counts = p.counts
    return PoolRow(
        name=member.name,
        index=member.index,
        mean_used=average(p.used),
        mean_cached=average(p.cached),
        mean_queue=average(p.queued),
        mean_holders=average(p.holders),
        mean_wait=p.wait / p.waits if p.waits else NAN,
        admissions=p.admissions,
        evicted_entries=int(counts["evicted_entries"]),
        evicted_units=counts["evicted_units"],
        preemptions=int(counts["preemptions"]),
        spills=int(counts["spills"]),
        rejected=int(counts["rejected"]),
        stuck=int(counts["stuck"]),
    )


def is_test(expr: ir.Expr) -> bool:
    """Whether `expr`'s outermost operator is a comparison, `&&`, `||` or `!`."""
    return (isinstance(expr, ir.Binary) and expr.op in TESTS) or (
        isinstance(expr, ir.Unary) and expr.op == "!"
    )


def _claim_notes(claims: tuple) -> list[str]:
    """A note for each claim that failed or was never witnessed: when, and what it read."""
    notes = []
    for row in claims:
        if row.result == "fails":
            read = ", ".join(f"{name} = {number(value)}" for name, value in row.values)
            when = "at the end" if row.kind == "at_end" else "first at"
            notes.append(
                f"claim `{row.name}` fails: {when} {number(row.first)}"
                + (f" ({read})" if read else "")
                + ("" if row.kind == "at_end" else f", {row.failures} of {row.checked} iterations")
            )
        elif row.result == "not_witnessed":
            notes.append(f"claim `{row.name}` is never witnessed in {row.checked} iterations")
    return notes


def _livelocks(pools: tuple[PoolRow, ...]) -> list[str]:
    """A note for each pool with sessions stuck: preempted again without progress."""
    return [
        f"pool {row.name if row.index is None else f'{row.name}[{row.index}]'}: {row.stuck} "
        f"session{'s' if row.stuck != 1 else ''} preempted again without progress "
        "(a livelock: a hold that can never grow to what its body needs)"
        for row in pools
        if row.stuck
    ]


def _notes(program: Program, observes: dict[str, Observe]) -> list[str]:
    """A note for each observed test that was 0 in every one of 40 or more samples."""
    tests: dict[int, bool] = {}
    for block in program.blocks:
        for stmt in block:
            if isinstance(stmt, ir.Observe):
                tests[stmt.stat] = tests.get(stmt.stat, True) and is_test(stmt.value)
    notes = []
    for stat, name in enumerate(program.observes):
        o = observes[name]
        if tests.get(stat) and o.count >= NOTE_MIN_SAMPLES and not any(o.columns[0]):
            notes.append(f"observe {name} is constant 0 over {o.count} samples")
    return notes
