"""The surface AST: what the author wrote, every node with its span.

Each class is a frozen, slotted dataclass whose docstring is the surface syntax
it stands for; its last field is `span`, the range of the source it came from.
Names that the author writes (declarations and references) are `Ident`s, so an
editor can point at each of them. Broken text yields `ErrorItem`, `ErrorStmt`
and `ErrorOption` nodes where the parser had to skip, and the rest of the tree
is whole.

Sugar stays sugar here (`prefill`, `request`, queues, `at admission`, `branch
with`, aggregates, `def` calls): `serq.expand` rewrites it into the kernel.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from serq.diagnostics import Span


@dataclass(frozen=True, slots=True)
class Ident:
    """NAME: a name as written, declared or referred to."""

    name: str
    span: Span


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Number:
    """42, 0.5, 1e-3"""

    value: float
    text: str
    span: Span
    aggregate: bool = field(default=False, compare=False)  # `Binary.aggregate`


@dataclass(frozen=True, slots=True)
class Name:
    """x: an attribute, a let, a context variable, `inf`, a binding or a parameter."""

    ident: Ident
    span: Span
    aggregate: bool = field(default=False, compare=False)  # `Binary.aggregate`

    @property
    def name(self) -> str:
        return self.ident.name


@dataclass(frozen=True, slots=True)
class RefPart:
    """NAME [ '[' expr ']' ]: one step of a reference."""

    ident: Ident
    index: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Ref:
    """kv[k], P[i].kv, D.nic.latency[j]: a reference to a declared pool, stage or queue."""

    parts: tuple[RefPart, ...]
    span: Span
    aggregate: bool = field(default=False, compare=False)  # `Binary.aggregate`

    @property
    def dotted(self) -> str:
        """The reference without its indices: `P.kv` for `P[i].kv`."""
        return ".".join(p.ident.name for p in self.parts)


@dataclass(frozen=True, slots=True)
class Unary:
    """-e, !e"""

    op: str
    operand: Expr
    span: Span
    aggregate: bool = field(default=False, compare=False)  # `Binary.aggregate`


@dataclass(frozen=True, slots=True)
class Binary:
    """a OP b, with OP one of || && == != < <= > >= + - * / ^"""

    op: str
    left: Expr
    right: Expr
    span: Span
    # written out from an aggregate (a join of its terms, or its one term): whether the
    # aggregate's body is evaluated is not assumed (serq-workload.txt, hidden); where a
    # node came from, so not part of what it is (equality, hash)
    aggregate: bool = field(default=False, compare=False)


@dataclass(frozen=True, slots=True)
class Conditional:
    """c ? a : b"""

    test: Expr
    then: Expr
    otherwise: Expr
    span: Span
    aggregate: bool = field(default=False, compare=False)  # `Binary.aggregate`


@dataclass(frozen=True, slots=True)
class Call:
    """f(a, ...): a built-in function, an observable, or a `def` of an expression."""

    func: Ident
    args: tuple[Expr, ...]
    span: Span
    aggregate: bool = field(default=False, compare=False)  # `Binary.aggregate`


@dataclass(frozen=True, slots=True)
class Draw:
    """~exp(mean), ~det(x), ~uniform(lo, hi), ~erlang(k, mean), ~h2(mean, cv2), ~bernoulli(p)"""

    dist: Ident
    args: tuple[Expr, ...]
    span: Span
    aggregate: bool = field(default=False, compare=False)  # `Binary.aggregate`


@dataclass(frozen=True, slots=True)
class Aggregate:
    """max j in n (e), min j in n (e), sum j in n (e)"""

    func: str
    var: Ident
    count: Expr
    body: Expr
    span: Span


Expr = Union[Number, Name, Ref, Unary, Binary, Conditional, Call, Draw, Aggregate]


# ----------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Block:
    """{ stmt* }"""

    body: tuple[Stmt, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Turn:
    """turn;"""

    span: Span


@dataclass(frozen=True, slots=True)
class Request:
    """request; or request GATEWAY;"""

    gateway: Ident | None
    span: Span


@dataclass(frozen=True, slots=True)
class Set:
    """set NAME = expr;"""

    target: Ident
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Observe:
    """observe NAME = expr;"""

    target: Ident
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class HoldPool:
    """POOL ( units ) [reserve ( expr )]"""

    pool: Ref
    units: Expr
    reserve: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Binding:
    """NAME = expr, in `at admission ( ... )`"""

    name: Ident
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Lease:
    """lease POOL ( seconds )"""

    pool: Ref
    duration: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Hold:
    """hold P (u) [reserve (r)], ... [reuse (e)] [at admission (x = e, ...)] block
    [cache (e)] [lease P (t)] [;]"""

    pools: tuple[HoldPool, ...]
    reuse: Expr | None
    bindings: tuple[Binding, ...]
    at_admission: Span | None
    body: Block
    cache: Expr | None
    lease: Lease | None
    span: Span


@dataclass(frozen=True, slots=True)
class Grow:
    """grow POOL ( expr );"""

    pool: Ref
    amount: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Drop:
    """drop POOL;"""

    pool: Ref
    span: Span


@dataclass(frozen=True, slots=True)
class Release:
    """release POOL;"""

    pool: Ref
    span: Span


@dataclass(frozen=True, slots=True)
class Load:
    """load POOL ( expr );"""

    pool: Ref
    amount: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Run:
    """run [STAGE, ...] [prefill | decode] ( work ) [growing POOL];

    No stage names the queue's own (inside a queue entry); several make one flow."""

    stages: tuple[Ref, ...]
    mode: str | None
    work: Expr
    growing: Ref | None
    span: Span


@dataclass(frozen=True, slots=True)
class Branch:
    """branch ( test ) block [else block]"""

    test: Expr
    then: Block
    otherwise: Block | None
    span: Span


@dataclass(frozen=True, slots=True)
class BranchWith:
    """branch with ( p ) block [else block]"""

    probability: Expr
    then: Block
    otherwise: Block | None
    span: Span


@dataclass(frozen=True, slots=True)
class Loop:
    """loop block"""

    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class Choose:
    """choose NAME in n by ( key, ... );"""

    target: Ident
    count: Expr
    keys: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class End:
    """end;"""

    span: Span


@dataclass(frozen=True, slots=True)
class Mark:
    """mark NAME;"""

    name: Ident
    span: Span


@dataclass(frozen=True, slots=True)
class CallTo:
    """to POOL ( expr ), after an entry call"""

    pool: Ref
    amount: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class EntryCall:
    """Q[i].VERB ( args ) [from Q[j]] [to POOL ( e )];"""

    target: Ref
    args: tuple[Expr, ...]
    source: Ref | None
    to: CallTo | None
    span: Span


@dataclass(frozen=True, slots=True)
class DefCall:
    """NAME ( args );: a `def` of statements, in place."""

    name: Ident
    args: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Serving:
    """prefill|decode|tool [ '[' j ']' | on STAGE, ... ] work [growing POOL];"""

    verb: str
    index: Expr | None
    on: tuple[Ref, ...]
    work: Expr
    growing: Ref | None
    span: Span


@dataclass(frozen=True, slots=True)
class Transfer:
    """transfer [ '[' j ']' | on STAGE, ... ] work from POOL to POOL ( n );"""

    index: Expr | None
    on: tuple[Ref, ...]
    work: Expr
    source: Ref
    dest: Ref
    amount: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ErrorStmt:
    """A statement the parser could not read (its error is among the diagnostics)."""

    span: Span


Stmt = Union[
    Turn,
    Request,
    Set,
    Observe,
    Hold,
    Grow,
    Drop,
    Release,
    Load,
    Run,
    Branch,
    BranchWith,
    Loop,
    Choose,
    End,
    Mark,
    EntryCall,
    DefCall,
    Serving,
    Transfer,
    ErrorStmt,
]


# ------------------------------------------------------------ options, kinds


@dataclass(frozen=True, slots=True)
class Option:
    """KEYWORD [expr | ( expr, ... ) | NAME];: one option of a pool, step stage or run block.

    `key` is the option's words (`cap`, `evict lru`, `evict by`, `queue fifo`,
    `queue by`, `preempt none`, `admit via`, `budget`, `serve by`, `memory`,
    `horizon`, ...); `value` its expression, `keys` its key list, `target`
    the name it refers to (`admit via S`, `memory P`)."""

    key: str
    value: Expr | None
    keys: tuple[Expr, ...]
    target: Ident | None
    span: Span


@dataclass(frozen=True, slots=True)
class Spill:
    """spill POOL via STAGE ( amount ) when ( test );"""

    pool: Ident
    stage: Ident
    amount: Expr
    when: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ErrorOption:
    """An option the parser could not read."""

    span: Span


PoolOption = Union[Option, Spill, ErrorOption]


@dataclass(frozen=True, slots=True)
class Fifo:
    """fifo [ ( servers ) ]"""

    servers: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Ps:
    """ps ( capacity )"""

    capacity: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Delay:
    """delay"""

    span: Span


@dataclass(frozen=True, slots=True)
class Step:
    """step { budget e; cost e; [chunk e;] [serve ...;] [memory POOL;] }"""

    options: tuple[Option | ErrorOption, ...]
    span: Span


StageKind = Union[Fifo, Ps, Delay, Step]


# ---------------------------------------------------------------------- items


@dataclass(frozen=True, slots=True)
class Let:
    """let NAME = expr; or let NAME = args.number("ARG", default); (`use "std/args";`)

    With `argument`, the let is an input of the program named by that string, given on
    the command line (`--set ARG=VALUE`) or through the API (`sets=`); `value` is then
    the default."""

    name: Ident
    value: Expr
    span: Span
    argument: Ident | None = None


@dataclass(frozen=True, slots=True)
class Use:
    """use "file.sq";"""

    path: str
    path_span: Span
    span: Span


@dataclass(frozen=True, slots=True)
class DefExpr:
    """def NAME ( params ) = expr;"""

    name: Ident
    params: tuple[Ident, ...]
    body: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class DefBlock:
    """def NAME ( params ) block"""

    name: Ident
    params: tuple[Ident, ...]
    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class Pool:
    """pool NAME [ '[' N ']' ] { option* }"""

    name: Ident
    size: Expr | None
    options: tuple[PoolOption, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Stage:
    """stage NAME [ '[' N ']' ] : kind;"""

    name: Ident
    size: Expr | None
    kind: StageKind
    span: Span


@dataclass(frozen=True, slots=True)
class Arrive:
    """arrive poisson (rate); | renewal (gap); | closed (n); | batch (n); | none;"""

    process: str
    arg: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Trace:
    """trace "file.csv" [ordered];"""

    path: str
    path_span: Span
    ordered: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Init:
    """init block"""

    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class TurnBlock:
    """turn block (a workload clause)"""

    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class WorkloadSession:
    """session block (the session's side, inside workload)"""

    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class Hidden:
    """hidden NAME, ...;"""

    names: tuple[Ident, ...]
    span: Span


WorkloadClause = Union[Arrive, Trace, Init, TurnBlock, WorkloadSession, Hidden, ErrorOption]


@dataclass(frozen=True, slots=True)
class Workload:
    """workload { clause* }"""

    clauses: tuple[WorkloadClause, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Session:
    """session block"""

    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class Server:
    """server block"""

    body: Block
    span: Span


@dataclass(frozen=True, slots=True)
class QueuePool:
    """pool NAME { option* }, inside a queue"""

    name: Ident
    options: tuple[PoolOption, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class QueueServe:
    """serve kind [latency e];"""

    kind: StageKind
    latency: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class QueueNic:
    """nic kind;"""

    kind: StageKind
    span: Span


@dataclass(frozen=True, slots=True)
class Entry:
    """VERB [ ( NAME, ... ) ] [from NAME] block: an entry of one of the queue's roles"""

    verb: Ident
    params: tuple[Ident, ...]
    source: Ident | None
    body: Block
    span: Span


QueueMember = Union[QueuePool, QueueServe, QueueNic, Entry, ErrorOption]


@dataclass(frozen=True, slots=True)
class Queue:
    """queue NAME [ '[' N ']' ] [ : ROLE, ... ] { member* }"""

    name: Ident
    size: Expr | None
    roles: tuple[Ident, ...]
    members: tuple[QueueMember, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class RunSettings:
    """run { horizon e; warmup e; seed e; arrivals e; }"""

    settings: tuple[Option | ErrorOption, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Share:
    """share maxmin; | share bottleneck;"""

    policy: str
    span: Span


@dataclass(frozen=True, slots=True)
class Pull:
    """READER pull SOURCE [latency e] share maxmin|bottleneck;"""

    reader: Ident
    source: Ident
    latency: Expr | None
    policy: str
    span: Span


@dataclass(frozen=True, slots=True)
class Gauge:
    """gauge NAME = expr;"""

    name: Ident
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Claim:
    """claim NAME [given (cond)]: every iteration of STAGE (pred); | some iteration of
    STAGE (pred); | at end (pred);: a property the run checks and reports.

    `kind` is one of `CLAIM_KINDS`; `stage` is the stage of an iteration claim (None for
    `at end`)."""

    name: Ident
    given: Expr | None
    kind: str
    stage: Name | Ref | None
    pred: Expr
    span: Span


CLAIM_KINDS = ("every_iteration", "some_iteration", "at_end")


@dataclass(frozen=True, slots=True)
class ErrorItem:
    """Text the parser could not read as an item."""

    span: Span


Item = Union[
    Let,
    Use,
    DefExpr,
    DefBlock,
    Pool,
    Stage,
    Workload,
    Session,
    Server,
    Queue,
    RunSettings,
    Share,
    Pull,
    Gauge,
    Claim,
    ErrorItem,
]


@dataclass(frozen=True, slots=True)
class FnMain:
    """fn main() { item* }: the wrapper of the fn-main dialect."""

    name: Ident
    items: tuple[Item, ...]
    head: Span
    span: Span


@dataclass(frozen=True, slots=True)
class Module:
    """A whole file: items, and in the fn-main dialect the wrapper with the items inside it."""

    file: str
    items: tuple[Item, ...]
    main: FnMain | None
    span: Span

    def all_items(self) -> tuple[Item, ...]:
        """Every item of the file in source order, those inside `fn main` included."""
        if self.main is None:
            return self.items
        inner = self.main.items
        start = self.main.span.start
        before = tuple(i for i in self.items if i.span.start < start)
        after = tuple(i for i in self.items if i.span.start >= start)
        return before + inner + after


Node = Union[
    Expr,
    Stmt,
    Item,
    Ident,
    RefPart,
    Block,
    HoldPool,
    Binding,
    Lease,
    CallTo,
    Option,
    Spill,
    ErrorOption,
    StageKind,
    WorkloadClause,
    QueueMember,
    FnMain,
    Module,
]

# The surface forms that never reach the kernel (spec §2: they are sugar, and
# `serq.expand` rewrites each away).
SUGAR = (
    Serving,
    Transfer,
    Request,
    Queue,
    Pull,
    BranchWith,
    DefCall,
    DefExpr,
    DefBlock,
    Use,
    Server,
    WorkloadSession,
    Aggregate,
    EntryCall,
    Mark,
    FnMain,
)
