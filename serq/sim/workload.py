"""The workload: when sessions arrive, what `init` and `turn` set, and trace replay.

Arrivals: `poisson(rate)` has one at 0, then exponential gaps; `renewal(gap)` arrives after
every gap (evaluated anew, positive and finite); `batch(n)` and `closed(n)` bring n at
time 0, and `closed` a new one whenever a session ends. A run's `arrivals N` stops an
open workload after N. A trace (`session,turn,new,out,think[,forced]`) is read once:
`ordered` gives session i the trace's session i (cycling), otherwise each session samples
one; every `turn;` loads the next row and sets `more` while another remains.
"""

from __future__ import annotations

import csv
import math
import random
from pathlib import Path
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim.errors import SimError
from serq.sim.exprs import ExprCompiler, arith_repr
from serq.sim.session import Session

TURN_NO = SLOT["turn_no"]
NEW, OUT, THINK, FORCED, MORE = (SLOT[n] for n in ("new", "out", "think", "forced", "more"))
Row = tuple[float, float, float, float]


def read_trace(trace: ir.Trace, base_dir: str) -> list[list[Row]]:
    """The sessions of `trace` (read relative to `base_dir`), each its rows in turn order."""
    path = Path(base_dir) / trace.path
    try:
        with path.open(newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise SimError(trace.origin, f"cannot read trace `{trace.path}`: {reason}") from None
    if not rows:
        raise SimError(trace.origin, f"trace `{trace.path}` is empty")
    header = [c.strip() for c in rows[0]]
    need = ["session", "turn", "new", "out", "think"]
    if header[:5] != need or len(header) > 6 or (len(header) == 6 and header[5] != "forced"):
        raise SimError(
            trace.origin,
            f"trace `{trace.path}`: the header must be session,turn,new,out,think[,forced]",
        )
    sessions: dict[str, list[tuple[float, int, Row]]] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise SimError(
                trace.origin,
                f"trace `{trace.path}` line {line}: expected "
                f"{len(header)} columns, found {len(row)}",
            )
        try:
            values = [float(c) for c in row[1:]]
        except ValueError:
            raise SimError(
                trace.origin, f"trace `{trace.path}` line {line}: a column is not a number"
            ) from None
        forced = values[4] if len(values) > 4 else 0.0
        turns = sessions.setdefault(row[0].strip(), [])
        turns.append((values[0], len(turns), (values[1], values[2], values[3], forced)))
    if not sessions:
        raise SimError(trace.origin, f"trace `{trace.path}` has no rows")
    return [[row for _, _, row in sorted(turns)] for turns in sessions.values()]


REPLACE_LIMIT = 100_000  # replacements at one instant before a closed population livelocks


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
        self.trace = None if program.trace is None else read_trace(program.trace, base_dir)
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

    def start(self) -> None:
        """Schedule the first arrivals; a batch or closed population arrives now."""
        arrival = self.arrival
        engine = self.engine
        if isinstance(arrival, ir.Batch | ir.Closed):
            n = arrival.size if isinstance(arrival, ir.Batch) else arrival.population
            for _ in range(n):
                self.world.new_session()
        elif isinstance(arrival, ir.Poisson):
            if self.limit != 0:
                engine.schedule(0.0, self._arrive)
        elif isinstance(arrival, ir.Renewal):
            if self.limit != 0:
                engine.schedule(self._next_gap(), self._arrive)

    def _next_gap(self) -> float:
        arrival = self.arrival
        if isinstance(arrival, ir.Poisson):
            return -math.log(1.0 - self._uniform()) / arrival.rate
        assert self._gap is not None and isinstance(arrival, ir.Renewal)
        gap = self._gap(self.world.blank)
        if not (gap > 0 and gap < math.inf):
            raise SimError(
                arrival.origin, f"arrival gap {arith_repr(gap)}: gaps must be positive and finite"
            )
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
            engine.schedule(engine.now + gap, self._arrive)

    def assign(self, s: Session) -> None:
        """Give a new session its trace session, if the workload has a trace."""
        trace = self.trace
        if trace is None:
            return
        if self.ordered:
            s.trace_rows = trace[s.serial % len(trace)]
        else:
            s.trace_rows = trace[int(self.stream.random() * len(trace))]

    def on_end(self, s: Session) -> None:
        """A session ended: a closed workload replaces it. A population whose sessions end
        and are replaced at one instant without end is a livelock: a run-time error."""
        arrival = self.arrival
        if isinstance(arrival, ir.Closed):
            now = self.engine.now
            if now == self._replaced_at:
                self._replaced += 1
                if self._replaced > max(REPLACE_LIMIT, 100 * arrival.population):
                    raise SimError(
                        arrival.origin,
                        f"the closed population's sessions end and are replaced at time "
                        f"{arith_repr(now)} without end: nothing lets time pass (a hold that "
                        f"can never fit is rejected, and its session ends)",
                    )
            else:
                self._replaced_at, self._replaced = now, 1
            self.world.new_session()

    def turn(self, s: Session) -> bool:
        """`turn;`: the next turn's attributes, then the `turn` block."""
        a = s.attrs
        a[TURN_NO] += 1.0
        rows = s.trace_rows
        if rows is not None:
            k = s.trace_pos
            if k < len(rows):
                a[NEW], a[OUT], a[THINK], a[FORCED] = rows[k]
                s.trace_pos = k + 1
                a[MORE] = 1.0 if k + 1 < len(rows) else 0.0
            else:
                a[MORE] = 0.0
        for step in self.turn_block:
            step(s)
        self.world.count_turn(s)
        return True
