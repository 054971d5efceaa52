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
from array import array
from pathlib import Path
from typing import Any

from serq import ir
from serq.ir import SLOT
from serq.sim.errors import SimError
from serq.sim.exprs import ExprCompiler, arith_repr
from serq.sim.session import Session

TURN_NO = SLOT["turn_no"]
NEW, OUT, THINK, FORCED, MORE = (SLOT[n] for n in ("new", "out", "think", "forced", "more"))


def read_trace(trace: ir.Trace, base_dir: str) -> list[array]:
    """The sessions of `trace` (read relative to `base_dir`), each its turns in turn order
    as one flat array of (new, out, think, forced) per turn.

    The file is read as a stream, one row at a time, and each session is kept in a
    compact array of doubles: the memory is that of the turns kept (32 bytes a turn),
    never of the file's text. A malformed row is an error naming the file, line and
    column."""
    path = Path(base_dir) / trace.path
    name = trace.path
    try:
        f = path.open(newline="", encoding="utf-8")
    except OSError as e:
        raise SimError(trace.origin, f"cannot read trace `{name}`: {e.strerror or e}") from None
    with f:
        try:
            return _sessions(csv.reader(f), trace.origin, name)
        except UnicodeDecodeError as e:
            reason = f"it is not UTF-8 text (byte {e.start} of a block)"
            raise SimError(trace.origin, f"cannot read trace `{name}`: {reason}") from None


def _sessions(reader: Any, origin: Any, name: str) -> list[array]:
    header = next(reader, None)
    if header is None:
        raise SimError(origin, f"trace `{name}` is empty")
    header = [c.strip() for c in header]
    need = ["session", "turn", "new", "out", "think"]
    if header[:5] != need or len(header) > 6 or (len(header) == 6 and header[5] != "forced"):
        raise SimError(
            origin, f"trace `{name}`: the header must be session,turn,new,out,think[,forced]"
        )
    width = len(header)
    sessions: dict[str, array] = {}  # per session: turn, new, out, think[, forced] per row
    get = sessions.get
    for row in reader:
        if len(row) != width:
            if not row or all(not c.strip() for c in row):
                continue
            raise SimError(
                origin,
                f"trace `{name}` line {reader.line_num}, column "
                f"{_column(row, min(len(row), width))}: "
                f"expected {width} columns, found {len(row)}",
            )
        key = row[0].strip()
        turns = get(key)
        if turns is None:
            turns = sessions[key] = array("d")
        try:
            turns.extend(map(float, row[1:]))  # fast path: the floats parsed in C
        except ValueError:
            bad = next(i for i in range(1, width) if not _is_number(row[i]))
            raise SimError(
                origin,
                f"trace `{name}` line {reader.line_num}, column {_column(row, bad)}: "
                f"`{row[bad].strip()}` in column `{header[bad]}` is not a number",
            ) from None
    if not sessions:
        raise SimError(origin, f"trace `{name}` has no rows")
    return [_in_turn_order(turns, width - 1) for turns in sessions.values()]


def _in_turn_order(turns: array, stride: int) -> array:
    """A session's rows (turn, new, out, think[, forced], `stride` numbers each) as (new,
    out, think, forced) per turn, in turn order (rows of one turn keep the file's order)."""
    n = len(turns) // stride
    keys = turns[0::stride]
    out = array("d", bytes(8 * 4 * n))  # forced is 0 where the trace has no such column
    if list(keys) == sorted(keys):  # fast path: in order, columns moved in C
        for c in range(1, stride):
            out[c - 1 :: 4] = turns[c::stride]
        return out
    order = sorted(range(n), key=keys.__getitem__)
    for c in range(1, stride):
        column = turns[c::stride]
        out[c - 1 :: 4] = array("d", [column[i] for i in order])
    return out


def _column(row: list[str], index: int) -> int:
    """The 1-based column where field `index` of `row` starts, or where the row ends."""
    if index >= len(row):
        return len(",".join(row)) + 1
    return 1 + sum(len(c) + 1 for c in row[:index])


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


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
        rows = s.trace_rows  # (new, out, think, forced) per turn, flat
        if rows is not None:
            k = s.trace_pos
            if k < len(rows):
                a[NEW], a[OUT], a[THINK], a[FORCED] = rows[k : k + 4]
                s.trace_pos = k = k + 4
                a[MORE] = 1.0 if k < len(rows) else 0.0
            else:
                a[MORE] = 0.0
        for step in self.turn_block:
            step(s)
        self.world.count_turn(s)
        return True
