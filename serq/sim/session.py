"""A live session: its attributes, its continuation and where it is.

The continuation is a stack of block frames (`Frame`): the statements of a block and the
position in it, with what closing the block means (nothing, loop again, or the end of a
hold's scope). `state` says where the session is: ready, queued at a pool, at a stage,
waiting to grow, or ended; `where` is that pool or stage. A session is also a stage job:
the stage keeps the job's work and times in its slots.
"""

from __future__ import annotations

from typing import Any

from serq.diagnostics import Span

# Session states.
READY = 0
QUEUED = 1  # in a pool's admission queue
AT_STAGE = 2
GROWING = 3  # a grower waiting for room
ENDED = 4
RUNNING = 5

# Frame kinds.
PLAIN = 0
LOOP = 1
HOLD = 2


class Frame:
    """One block being executed: `stmts[pc]` is the next statement."""

    __slots__ = ("stmts", "n", "pc", "kind", "hold", "origin")

    def __init__(
        self, stmts: tuple, kind: int = PLAIN, hold: Any = None, origin: Span | None = None
    ) -> None:
        self.stmts = stmts
        self.n = len(stmts)
        self.pc = 0
        self.kind = kind
        self.hold = hold
        self.origin = origin


class Session:
    """A session of the workload: `attrs` by slot, with the session itself in the last one
    (what `cachedin` reads), and its frames, state and holds."""

    __slots__ = (
        "serial",
        "attrs",
        "frames",
        "gen",
        "state",
        "where",
        "waiter",
        "leases",
        "trace_rows",
        "trace_pos",
        "trace_end",
        "last_preempt",
        "preempted",
        "stuck",
        "admitted",
        "last_token",
        "token_stage",
        "decoded",
        # as a stage job
        "at",
        "work",
        "arrived",
        "started",
        "job_seq",
        "tag",
    )

    def __init__(self, serial: int, n_attrs: int) -> None:
        self.serial = serial
        attrs: list[Any] = [0.0] * (n_attrs + 1)
        attrs[n_attrs] = self
        self.attrs = attrs
        self.frames: list[Frame] = []
        # a plain program's one generator, in place of its frames (`serq.sim.compiled`)
        self.gen: Any = None
        self.state = READY
        self.where: Any = None
        self.waiter: Any = None  # the hold run or grow it waits on
        self.leases: dict[Any, list[Any]] = {}  # pool -> leased hold parts, oldest first
        self.trace_rows: Any = None  # the trace's columns: (new, out, think, forced)
        self.trace_pos = 0  # the row of its next turn in them
        self.trace_end = 0  # the row after its last turn
        self.last_preempt: float | None = None  # the position of its last preemption
        self.preempted: Any = None  # the spec of the hold that preemption aborted
        self.stuck = False
        self.admitted = 0  # the number of its latest admission (any pool): its serving order
        # when a step engine last gave it a token, and which engine (`StepStage._end`);
        # whether one was a decode's since its turn began (True), or else the engine
        # whose token its next one computes again after a preemption (`Holds.preempt`)
        self.last_token: float | None = None
        self.token_stage: Any = None
        self.decoded: Any = False
        self.at: Any = None
        self.work = 0.0
        self.arrived = self.started = 0.0
        self.job_seq = -1
        self.tag = 0.0

    def __repr__(self) -> str:
        return f"Session({self.serial})"


class SpillJob:
    """The anonymous stage job of a spill: it holds a stage and wakes nobody."""

    __slots__ = ("serial", "at", "work", "arrived", "started", "job_seq", "tag")

    def __init__(self) -> None:
        self.serial = -1
        self.at: Any = None
        self.work = 0.0
        self.arrived = self.started = 0.0
        self.job_seq = -1
        self.tag = 0.0
