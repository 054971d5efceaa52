"""IR expressions: numbers, attribute slots, context variables, calls, draws, pool and stage
references.

Every name has been resolved: a `let` constant or `inf` is a `Num`, a session attribute an
`Attr` slot, a pool or stage a `Ref` to its members in `Program.pools` / `Program.stages`.
Nothing here is evaluated; `serq.ir.arith` holds the arithmetic both the linker's folding
and the simulator use.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from serq.diagnostics import Span

UNARY_OPS = ("-", "!")
BINARY_OPS = ("||", "&&", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "^")
# Observables by the kind of resource their first argument names.
POOL_OBSERVABLES = ("used", "free", "cachedin", "holders", "queued")
STAGE_OBSERVABLES = (
    "queue",
    "busy",
    "work",
    "budget_left",
    "price",
    "est_lambda",
    "est_rho",
    "est_wait",
)
RESOURCE_KINDS = ("pool", "stage")


@dataclass(frozen=True, slots=True)
class Num:
    """42, a `let` constant, `inf`: a number, folded at link time (never NaN)."""

    value: float


@dataclass(frozen=True, slots=True)
class Attr:
    """x: the session attribute in `slot` of `Program.attrs`."""

    slot: int


@dataclass(frozen=True, slots=True)
class Ctx:
    """now, size, present, tokens, ...: a context variable, by its name in the spec."""

    name: str


@dataclass(frozen=True, slots=True)
class Unary:
    """-e, !e"""

    op: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class Binary:
    """a OP b, with OP one of `BINARY_OPS`"""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class Cond:
    """c ? a : b"""

    test: Expr
    then: Expr
    otherwise: Expr


@dataclass(frozen=True, slots=True)
class Ref:
    """kv, kv[i], P.kv[j]: a pool or stage (`kind`) whose family starts at member `base`
    of `Program.pools` or `Program.stages` and has `count` members; `index` picks one
    (None: the family has one member). A constant index is folded and in range."""

    kind: str
    base: int
    count: int
    index: Expr | None
    origin: Span


@dataclass(frozen=True, slots=True)
class Call:
    """min(a, b), floor(x), ...: a function of numbers."""

    func: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Observable:
    """used(kv), queue(s[i]), price(s, t, d), ...: the deployment's state at `target`, with
    the further arguments `args` (price's two times)."""

    func: str
    target: Ref
    args: tuple[Expr, ...]
    origin: Span


@dataclass(frozen=True, slots=True)
class Cost:
    """cost(X, e): the quantity `value` stated in the unit of the pool or stage `target`
    (the `fn main` dialect); its value is `value`."""

    target: Ref
    value: Expr


@dataclass(frozen=True, slots=True)
class Draw:
    """~exp(mean), ~det(x), ~uniform(lo, hi), ~erlang(k, mean), ~h2(mean, cv2), ~bernoulli(p)"""

    dist: str
    args: tuple[Expr, ...]
    origin: Span


@dataclass(frozen=True, slots=True)
class Aggregate:
    """total(obs), count(obs), largest(obs), prefix_total(obs): an aggregate of every sample
    of observation `stat` (warm-up included), read by a claim `at end`; `func` is one of
    `CLAIM_AGGREGATES`."""

    func: str
    stat: int


CLAIM_AGGREGATES = ("total", "count", "largest", "prefix_total")

Expr = Num | Attr | Ctx | Unary | Binary | Cond | Call | Observable | Cost | Draw | Aggregate


def contains(node: Any, test: Callable[[Any], bool]) -> bool:
    """Whether `test` holds for the IR value `node` or any value within it (the fields of
    its dataclasses, the items of its tuples and lists), walked without recursion."""
    stack: list[Any] = [node]
    while stack:
        item = stack.pop()
        if test(item):
            return True
        if isinstance(item, tuple | list):
            stack.extend(item)
        elif hasattr(item, "__dataclass_fields__") and not isinstance(item, type):
            stack.extend(getattr(item, name) for name in item.__dataclass_fields__)
    return False


def reads_only(
    node: Any, contexts: frozenset[str] = frozenset(), slots_but: frozenset[int] = frozenset()
) -> bool:
    """Whether `node` reads nothing but constants, the attributes of its session (but the
    slots in `slots_but`) and the context variables in `contexts`: no draw, observable or
    aggregate, which could read another value the next time with the session unchanged."""

    def moves(item: Any) -> bool:
        if isinstance(item, Draw | Observable | Aggregate):
            return True
        if isinstance(item, Ctx):
            return item.name not in contexts
        return isinstance(item, Attr) and item.slot in slots_but

    return not contains(node, moves)
