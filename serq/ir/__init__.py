"""The IR: a linked serQ program, the contract between the front end and the simulator.

Every class is a frozen, slotted dataclass (so `match` works on it). `Program` holds the
session attributes by slot, the statistics, the pools and stages member by member, the
workload, a table of statement blocks and the run settings; expressions have every name
resolved (`Num`, `Attr`, `Ctx`, `Ref`). Statements and the nodes that hold expressions
carry an `origin` span. `to_json` / `from_json` serialise it (versioned by `IR_VERSION`),
and `arith` defines the arithmetic that folding and evaluation share.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from serq.ir import arith
from serq.ir.expr import (
    BINARY_OPS,
    CLAIM_AGGREGATES,
    POOL_OBSERVABLES,
    STAGE_OBSERVABLES,
    UNARY_OPS,
    Aggregate,
    Attr,
    Binary,
    Call,
    Cond,
    Cost,
    Ctx,
    Draw,
    Expr,
    Num,
    Observable,
    Ref,
    Unary,
)
from serq.ir.program import (
    BUILTIN_ATTRS,
    CLAIM_KINDS,
    PREEMPTS,
    REQUEUES,
    RUN_MODES,
    SHARES,
    SLOT,
    Arrival,
    Batch,
    Branch,
    By,
    Choose,
    Claim,
    Closed,
    Delay,
    Drop,
    End,
    ExclusivePrefill,
    Fifo,
    Gauge,
    Grow,
    Hold,
    HoldPool,
    Lease,
    Load,
    Loop,
    Lru,
    Observe,
    Poisson,
    Pool,
    Program,
    Ps,
    Release,
    Renewal,
    Run,
    Set,
    Spill,
    Stage,
    Step,
    Stmt,
    Trace,
    Turn,
)

__all__ = [
    "IR_VERSION",
    "IRFormatError",
    "to_json",
    "from_json",
    "arith",
    # expressions
    "Expr",
    "Num",
    "Attr",
    "Ctx",
    "Unary",
    "Binary",
    "Cond",
    "Ref",
    "Call",
    "Observable",
    "Cost",
    "Draw",
    "Aggregate",
    "CLAIM_AGGREGATES",
    "UNARY_OPS",
    "BINARY_OPS",
    "POOL_OBSERVABLES",
    "STAGE_OBSERVABLES",
    # statements
    "Claim",
    "CLAIM_KINDS",
    "REQUEUES",
    "Stmt",
    "Turn",
    "Set",
    "Observe",
    "HoldPool",
    "Lease",
    "Hold",
    "Grow",
    "Drop",
    "Release",
    "Load",
    "Run",
    "Branch",
    "Loop",
    "Choose",
    "End",
    # pools, stages, workload, program
    "Lru",
    "By",
    "ExclusivePrefill",
    "Spill",
    "Pool",
    "Fifo",
    "Ps",
    "Delay",
    "Step",
    "Stage",
    "Arrival",
    "Poisson",
    "Renewal",
    "Closed",
    "Batch",
    "Trace",
    "Gauge",
    "Program",
    "BUILTIN_ATTRS",
    "SLOT",
    "RUN_MODES",
    "PREEMPTS",
    "SHARES",
]

_CODEC = ("IR_VERSION", "IRFormatError", "from_json", "to_json")
if TYPE_CHECKING:
    from serq.ir.codec import IR_VERSION, IRFormatError, from_json, to_json


def __getattr__(name: str) -> Any:
    """The JSON codec (`to_json`, `from_json`, `IR_VERSION`, `IRFormatError`), loaded on
    first use: linking a program does not need it."""
    if name not in _CODEC:
        raise AttributeError(f"module 'serq.ir' has no attribute {name!r}")
    from serq.ir import codec

    value = getattr(codec, name)
    globals()[name] = value
    return value
