"""The workload: when sessions arrive, what `init` and `turn` set, and trace replay.

Arrivals: `poisson(rate)` has one at 0, then exponential gaps; `renewal(gap)` arrives after
every gap (evaluated anew, positive and finite); `batch(n)` and `closed(n)` bring n at
time 0, and `closed` a new one whenever a session ends. A run's `arrivals N` stops an
open workload after N. A trace (`session,turn,new,out,think[,forced]`) is read once, by
`serq.sim.trace`: `ordered` gives session i the trace's session i (cycling), otherwise
each session samples one; every `turn;` loads the next row and sets `more` while another
remains.
"""

from __future__ import annotations

import math
import random
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim.errors import SimError, number
from serq.sim.exprs import ExprCompiler
from serq.sim.session import Session
from serq.sim.trace import TraceTable, read_trace

TURN_NO = SLOT["turn_no"]
NEW, OUT, THINK, FORCED, MORE = (SLOT[n] for n in ("new", "out", "think", "forced", "more"))


# replacements at one instant before a closed population livelocks (or 100 a member of a
# larger one): each replacement is a whole session's work, a prefill of many iterations
# that cost 0, say, so the limit is what keeps the diagnostic prompt (about 0.2 ms a session
# there, a second or two in all); a chain of sessions that end at once by chance, with
# odds p, passes it with odds p ** 10_000 (e ** -10 at p = 0.999)
REPLACE_LIMIT = 10_000


def bad_gap(arrival: ir.Renewal, gap: float) -> SimError:
    """The error of a renewal gap that is not positive and finite."""
    return SimError(
        arrival.origin, f"arrival gap {number(gap)}: gaps must be positive and finite"
    )


class Workload:
    """The arrivals, `init`, `turn` and trace of one run; `world` creates the sessions."""

    def __init__(
        self,
        program: ir.Program,
        world: Any,
        exprs: ExprCompiler,
        arrivals_stream: random.Random,
        workload_stream: random.Random,
        base_dir: str,
    ) -> None:
        self.world = world
        self.engine = world.engine
        self.arrival = program.arrival
        self.limit: int | None = None
        self.stream = workload_stream
        self.trace: TraceTable | None = None
        if program.trace is not None:
            self.trace = read_trace(program.trace, base_dir)
        self.ordered = program.trace is not None and program.trace.ordered
        self._uniform = arrivals_stream.random
        self._gap = None
        self._rate = self.arrival.rate if isinstance(self.arrival, ir.Poisson) else None
        if isinstance(self.arrival, ir.Renewal):
            self._gap = exprs.compile(self.arrival.gap, arrivals_stream)
        self.init: tuple = ()
        self.turn_block: tuple = ()
        self._replaced_at = -math.inf  # the instant of the latest replacements, and their count
        self._replaced = 0

    def compile_blocks(self, init: tuple, turn: tuple) -> None:
        """Install the compiled `init` and `turn` blocks (set and observe only)."""
        self.init = init
        self.turn_block = turn

    @property
    def is_open(self) -> bool:
        """Whether sessions arrive until the horizon (poisson, renewal)."""
        return isinstance(self.arrival, ir.Poisson | ir.Renewal)

    def start(self, arrive: Any = None) -> None:
        """Schedule the first arrivals; a batch or closed population arrives now. The
        first arrival of an open workload is the event `arrive` (default `_arrive`, which
        schedules the next: the compiled path passes the kind its loop dispatches)."""
        arrival = self.arrival
        engine = self.engine
        if arrive is None:
            arrive = self._arrive
        if isinstance(arrival, ir.Batch | ir.Closed):
            n = arrival.size if isinstance(arrival, ir.Batch) else arrival.population
            for _ in range(n):
                self.world.new_session()
        elif isinstance(arrival, ir.Poisson):
            if self.limit != 0:
                engine.schedule(0.0, arrive)
        elif isinstance(arrival, ir.Renewal):
            if self.limit != 0:
                engine.schedule(self._next_gap(), arrive)

    def _next_gap(self) -> float:
        arrival = self.arrival
        if isinstance(arrival, ir.Poisson):
            return -math.log(1.0 - self._uniform()) / arrival.rate
        assert self._gap is not None and isinstance(arrival, ir.Renewal)
        gap = self._gap(self.world.blank)
        if not (gap > 0 and gap < math.inf):
            raise bad_gap(arrival, gap)
        return gap

    def _arrive(self, _: Any) -> None:
        world = self.world
        world.new_session()
        limit = self.limit
        if limit is None or world.arrivals < limit:
            engine = self.engine
            rate = self._rate
            if rate is not None:  # fast path: `_next_gap` of a poisson workload, inlined
                gap = -math.log(1.0 - self._uniform()) / rate
            else:
                gap = self._next_gap()
            t = engine.now + gap
            if t < math.inf:  # past the float range it never comes: the arrivals stop
                engine.schedule(t, self._arrive)

    def assign(self, s: Session) -> None:
        """Give a new session its trace session, if the workload has a trace."""
        trace = self.trace
        if trace is None:
            return
        if self.ordered:
            i = s.serial % len(trace)
        else:
            i = int(self.stream.random() * len(trace))
        s.trace_rows = trace.columns
        s.trace_pos = trace.starts[i]
        s.trace_end = trace.starts[i + 1]

    def on_end(self, s: Session) -> None:
        """A session ended: a closed workload replaces it. A population whose sessions end
        and are replaced at one instant without end is a livelock: a run-time error."""
        arrival = self.arrival
        if isinstance(arrival, ir.Closed):
            now = self.engine.now
            if now == self._replaced_at:
                self._replaced += 1
                if self._replaced > max(REPLACE_LIMIT, 100 * arrival.population):
                    error = SimError(
                        arrival.origin,
                        f"the closed population's sessions end and are replaced at time "
                        f"{number(now)} without end: nothing lets time pass (a hold that "
                        f"can never fit is rejected, and its session ends; or every run of "
                        f"a session takes no time: work 0, iterations that cost 0)",
                    )
                    error.serial = s.serial  # the session that ended last, on every path
                    raise error
            else:
                self._replaced_at, self._replaced = now, 1
            self.world.new_session()

    def turn(self, s: Session) -> bool:
        """`turn;`: the next turn's attributes, then the `turn` block."""
        a = s.attrs
        a[TURN_NO] += 1.0
        s.last_token = None  # a new request: its first token is no inter-token latency
        s.decoded = False
        columns = s.trace_rows  # the trace's (new, out, think, forced) columns
        if columns is not None:
            k = s.trace_pos
            end = s.trace_end
            if k < end:
                new, out, think, forced = columns
                a[NEW] = new[k]
                a[OUT] = out[k]
                a[THINK] = think[k]
                a[FORCED] = 0.0 if forced is None else forced[k]
                s.trace_pos = k = k + 1
                a[MORE] = 1.0 if k < end else 0.0
            else:
                a[MORE] = 0.0
        for step in self.turn_block:
            step(s)
        self.world.count_turn(s)
        return True
