"""IR statements, pools, stages, the workload and the program.

A program's statements live in `Program.blocks`, a table of statement lists; a statement
with a body (`hold`, `branch`, `loop`) names its blocks by index, so a run walks no tree.
Pools and stages are listed member by member: a family `kv[N]` is N consecutive entries
of one name with `index` 0 .. N-1, and a scalar is one entry with `index` None. Every
statement and every node that holds expressions has an `origin`, the source span it
came from, so a run-time error can point at the program.
"""

from __future__ import annotations

from dataclasses import dataclass

from serq.diagnostics import Span
from serq.ir.expr import Expr, Ref

# Session attributes every program has, in their slots 0 .. 8 (the trace's are 0 without one).
BUILTIN_ATTRS = ("cached", "serial", "turn_no", "new", "out", "think", "more", "forced", "computed")
SLOT = {name: slot for slot, name in enumerate(BUILTIN_ATTRS)}
RUN_MODES = ("plain", "prefill", "decode")
PREEMPTS = ("none", "lifo", "by")
REQUEUES = ("head", "tail")
CLAIM_KINDS = ("every_iteration", "some_iteration", "at_end")
SHARES = ("maxmin", "bottleneck")

# ----------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Turn:
    """turn;"""

    origin: Span


@dataclass(frozen=True, slots=True)
class Set:
    """set NAME = value; (and what `mark` and admission bindings became)"""

    slot: int
    value: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class Observe:
    """observe NAME = value;: a sample of statistic `stat` of `Program.observes`"""

    stat: int
    value: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class HoldPool:
    """POOL (units) [reserve (reserve)], one pool of a hold"""

    pool: Ref
    units: Expr
    reserve: Expr | None
    origin: Span


@dataclass(frozen=True, slots=True)
class Lease:
    """lease POOL (duration)"""

    pool: Ref
    duration: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class Hold:
    """hold P (u) [reserve (r)], ... [reuse (e)] { body } [cache (e)] [lease P (t)]"""

    pools: tuple[HoldPool, ...]
    reuse: Expr | None
    body: int
    cache: Expr | None
    lease: Lease | None
    origin: Span


@dataclass(frozen=True, slots=True)
class Grow:
    """grow POOL (amount);"""

    pool: Ref
    amount: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class Drop:
    """drop POOL;"""

    pool: Ref
    origin: Span


@dataclass(frozen=True, slots=True)
class Release:
    """release POOL;"""

    pool: Ref
    origin: Span


@dataclass(frozen=True, slots=True)
class Load:
    """load POOL (amount);"""

    pool: Ref
    amount: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class Run:
    """run STAGE [, STAGE]* [prefill | decode] (work) [growing POOL]; `mode` is one of
    `RUN_MODES`; several stages make one flow."""

    stages: tuple[Ref, ...]
    mode: str
    work: Expr
    growing: Ref | None
    origin: Span


@dataclass(frozen=True, slots=True)
class Branch:
    """branch (test) { then } else { otherwise }; both are block indices (an absent else
    is an empty block)."""

    test: Expr
    then: int
    otherwise: int
    origin: Span


@dataclass(frozen=True, slots=True)
class Loop:
    """loop { body }"""

    body: int
    origin: Span


@dataclass(frozen=True, slots=True)
class Choose:
    """choose NAME in count by (keys);"""

    slot: int
    count: Expr
    keys: tuple[Expr, ...]
    origin: Span


@dataclass(frozen=True, slots=True)
class End:
    """end;"""

    origin: Span


Stmt = (
    Turn | Set | Observe | Hold | Grow | Drop | Release | Load | Run | Branch | Loop | Choose | End
)

# --------------------------------------------------------------- pools, stages


@dataclass(frozen=True, slots=True)
class Lru:
    """evict lru: release time, then release order."""


@dataclass(frozen=True, slots=True)
class By:
    """by (keys): ascending keys, ties in the declared order (`queue fifo` and
    `serve admission` are `By(())`)."""

    keys: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class ExclusivePrefill:
    """serve exclusive prefill: one prefill alone or a decode-only batch."""


@dataclass(frozen=True, slots=True)
class Spill:
    """spill POOL via STAGE (work) when (test): `to` a pool member, `via` a stage member."""

    to: int
    via: int
    work: Expr
    when: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class Pool:
    """One member of `pool NAME [N] { ... }`: `cap` may be inf, `block` None when the pool
    has none, `preempt` one of `PREEMPTS`, `admit_via` a stage member. `preempt` "by"
    chooses the victim by ascending `preempt_keys` (ties: the most recently admitted) and
    puts it back at the `requeue` end of the queue (one of `REQUEUES`); `reserve_held`
    keeps each holder's reservation counted until it releases (`reserve held;`)."""

    name: str
    index: int | None
    cap: float
    block: float | None
    evict: Lru | By
    preempt: str
    queue: By
    spill: Spill | None
    admit_via: int | None
    origin: Span
    preempt_keys: tuple[Expr, ...] = ()
    requeue: str = "head"
    reserve_held: bool = False


@dataclass(frozen=True, slots=True)
class Fifo:
    """fifo (servers)"""

    servers: int


@dataclass(frozen=True, slots=True)
class Ps:
    """ps (capacity); `origin` is the capacity expression's span, where a run-time
    capacity that is not positive is reported."""

    capacity: Expr
    origin: Span | None = None


@dataclass(frozen=True, slots=True)
class Delay:
    """delay"""


@dataclass(frozen=True, slots=True)
class Step:
    """step { budget; cost; [chunk;] [serve;] [memory POOL;] }: `chunk` None is no cap,
    `memory` a pool member. The `*_origin` spans are the expressions', where a run-time
    value outside its domain is reported (None: the stage's name)."""

    budget: Expr
    cost: Expr
    chunk: Expr | None
    serve: By | ExclusivePrefill
    memory: int | None
    budget_origin: Span | None = None
    cost_origin: Span | None = None
    chunk_origin: Span | None = None


@dataclass(frozen=True, slots=True)
class Stage:
    """One member of `stage NAME [N] : kind;`."""

    name: str
    index: int | None
    kind: Fifo | Ps | Delay | Step
    origin: Span


# -------------------------------------------------------------------- workload


@dataclass(frozen=True, slots=True)
class Poisson:
    """arrive poisson (rate);"""

    rate: float
    origin: Span


@dataclass(frozen=True, slots=True)
class Renewal:
    """arrive renewal (gap); the gap reads constants and draws."""

    gap: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class Closed:
    """arrive closed (population);"""

    population: int
    origin: Span


@dataclass(frozen=True, slots=True)
class Batch:
    """arrive batch (size);"""

    size: int
    origin: Span


Arrival = Poisson | Renewal | Closed | Batch


@dataclass(frozen=True, slots=True)
class Trace:
    """trace "path" [ordered];: `path` as written, relative to the file of `origin`."""

    path: str
    ordered: bool
    origin: Span


@dataclass(frozen=True, slots=True)
class Gauge:
    """gauge NAME = value;"""

    name: str
    value: Expr
    origin: Span


@dataclass(frozen=True, slots=True)
class Claim:
    """claim NAME [given (given)]: KIND (pred);: `kind` one of `CLAIM_KINDS`, `stage` the
    step stage member of an iteration claim (None for `at end`); `given` reads one
    session's attributes, `pred` the iteration's context or the run's aggregates."""

    name: str
    given: Expr | None
    kind: str
    stage: int | None
    pred: Expr
    origin: Span


# --------------------------------------------------------------------- program


@dataclass(frozen=True, slots=True)
class Program:
    """A linked program.

    `attrs` are the session attributes by slot (`BUILTIN_ATTRS` first), `hidden` the slots
    the scheduler may not read, `observes` the statistics of `observe`. `init`, `turn` and
    `session` index `blocks`. `arrival` None is no arrivals (`arrive none`, or no
    workload); `horizon` None is one the run must be given (the `fn main` dialect has no
    run block); `share` is None when the program declares none."""

    attrs: tuple[str, ...]
    hidden: tuple[int, ...]
    observes: tuple[str, ...]
    pools: tuple[Pool, ...]
    stages: tuple[Stage, ...]
    arrival: Arrival | None
    trace: Trace | None
    init: int
    turn: int
    session: int
    blocks: tuple[tuple[Stmt, ...], ...]
    horizon: float | None
    warmup: float
    seed: int
    arrivals: int | None
    share: str | None
    gauges: tuple[Gauge, ...]
    claims: tuple[Claim, ...] = ()
