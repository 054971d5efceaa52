"""Claims at run time: properties the run checks while it goes, as pyserq 0.1.4 does.

- `given (COND)` is read once per session, when it arrives (after `init`, before its
  first turn): the first session that fails it takes the claim out of scope, and the
  claim is checked no more (`out_of_scope`, "session N fails `given`").
- `every iteration of E (P)` and `some iteration of E (P)` are read when an iteration of
  step stage E starts, once it is planned (`StepStage.start` calls `iteration`): P reads
  the iteration's context as the cost does (`tokens`, `prefilled`, `attention`, the
  residents' totals), `demand` (the tokens the residents would take with no budget: one
  for a decoder, up to the chunk for a prefill), `served` (the tokens the stage's
  finished iterations gave), `arrived` (the sessions arrived so far), `now`, and the
  deployment's state. `first` is the start of the first failing iteration (of the first
  witness for `some`).
- `at end (P)` is read when the run ends, unless sessions are still live then
  (`not_evaluated`); its aggregates count every sample of the observation, the warm-up's
  too: `total`, `count`, `largest` (0 for none) and `prefix_total`, the sum of the
  prefix sums of the samples in ascending order (Σ_k (n - k + 1)·x_(k), x_(1) ≤ x_(2) ≤ …:
  the total completion time of jobs of those lengths served shortest first).
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable
from typing import Any

from serq import ir
from serq.report.model import ClaimRow
from serq.report.stats import fsum

Fn = Callable[[Any], float]


class _Claim:
    __slots__ = (
        "claim",
        "given",
        "pred",
        "reads",
        "checked",
        "failures",
        "first",
        "values",
        "witnessed",
        "note",
    )

    def __init__(self, claim: ir.Claim, given: Fn | None, pred: Fn, reads: list) -> None:
        self.claim = claim
        self.given = given
        self.pred = pred
        self.reads = reads  # (name, fn) of what the note shows at the first failure
        self.checked = 0
        self.failures = 0
        self.first = math.nan
        self.values: tuple[tuple[str, float], ...] = ()
        self.witnessed = False
        self.note: str | None = None  # set when out of scope


class Claims:
    """The claims of one run; `world` calls `arrived`, step stages `iteration`, and the
    report `rows`."""

    def __init__(self, program: ir.Program, engine: Any, exprs: Any, blank: list) -> None:
        self.engine = engine
        self.blank = blank
        # the samples of each observation a claim aggregates, 8 bytes each
        self.samples: dict[int, array] = {}
        self.by_stage: dict[int, list[_Claim]] = {}
        self.givens: list[_Claim] = []
        self.all: list[_Claim] = []
        self.served: dict[int, float] = {}
        # per stage, whether each claim checked at its latest iteration held (`span`)
        self.latest: dict[int, list[tuple[_Claim, bool]]] = {}
        exprs.ns["_agg"] = self.aggregate
        for claim in program.claims:
            given = None if claim.given is None else exprs.compile(claim.given)
            reads = [(text, exprs.compile(e)) for text, e in _reads(claim.pred, program)]
            c = _Claim(claim, given, exprs.compile(claim.pred), reads)
            self.all.append(c)
            if given is not None:
                self.givens.append(c)
            if claim.stage is not None:
                self.by_stage.setdefault(claim.stage, []).append(c)
                self.served.setdefault(claim.stage, 0.0)
            for e in _walk(claim.pred):
                if isinstance(e, ir.Aggregate):
                    self.samples.setdefault(e.stat, array("d"))

    # ------------------------------------------------------------------ hooks

    def observed(self, stat: int, value: float) -> None:
        """A sample of observation `stat` (any time, the warm-up's too)."""
        kept = self.samples.get(stat)
        if kept is not None:
            kept.append(value)

    def arrived(self, s: Any) -> None:
        """Session `s` arrived (its `init` done): read every claim's `given` on it."""
        for c in self.givens:
            if c.note is None and c.given(s.attrs) == 0:
                c.note = f"session {s.serial} fails `given`"

    def iteration(self, stage: int, demand: float, arrived: int) -> None:
        """An iteration of step stage member `stage` starts, planned, its context set."""
        engine = self.engine
        engine.demand = demand
        engine.served = self.served[stage]
        engine.arrived = float(arrived)
        blank = self.blank
        latest = self.latest[stage] = []
        for c in self.by_stage[stage]:
            if c.note is not None:
                continue
            c.checked += 1
            if c.pred(blank) != 0:
                latest.append((c, True))
                if not c.witnessed and c.claim.kind == "some_iteration":
                    c.first = engine.now
                c.witnessed = True
                continue
            latest.append((c, False))
            c.failures += 1
            if c.failures == 1 and c.claim.kind == "every_iteration":
                c.first = engine.now
                c.values = tuple((text, fn(blank)) for text, fn in c.reads)

    def span(self, stage: int, count: int, tokens: float) -> None:
        """A fast-forwarded span of `stage` skipped `count` iterations of `tokens` each,
        alike the one `iteration` checked last, whose claims read only what is the same at
        every one of them (`fastforward.claim_changes`): each is checked `count` times
        more, with its answer there. (`served` grows by their tokens, at once: none of
        these claims reads it.)"""
        for c, held in self.latest[stage]:
            c.checked += count
            if not held:
                c.failures += count
        if stage in self.served:
            self.served[stage] += tokens * count

    def iteration_end(self, stage: int, tokens: float) -> None:
        """An iteration of `stage` ended, having served `tokens`."""
        if stage in self.served:
            self.served[stage] += tokens

    def aggregate(self, func: str, stat: int) -> float:
        values = self.samples.get(stat, array("d"))
        if func == "count":
            return float(len(values))
        if func == "total":  # fsum: inf beside -inf is NaN, a sum past the range ±inf
            return fsum(values)
        if func == "largest":
            # a NaN is no sample's size: the greatest of the others (NaN when all are NaN),
            # as pyserq 0.1.4 has it; `max` kept a first NaN and skipped a later one
            numbers = [v for v in values if v == v]
            return max(numbers) if numbers else (math.nan if values else 0.0)
        ordered = sorted(values)  # prefix_total: the prefix sums, smallest sample first
        return fsum([(len(ordered) - k) * x for k, x in enumerate(ordered)])

    # ------------------------------------------------------------------ the report

    def rows(self, end: float, live: int) -> tuple[ClaimRow, ...]:
        """Every claim's outcome, the run having ended at `end` with `live` sessions."""
        out = []
        for c in self.all:
            kind = c.claim.kind
            note = c.note
            if kind == "at_end" and note is None:
                if live:
                    note = f"{live} session{'s' if live != 1 else ''} live at the end"
                else:
                    self.engine.now = end
                    c.checked = 1
                    if self.blank and c.pred(self.blank) == 0:
                        c.failures = 1
                        c.first = end
                        c.values = tuple((t, fn(self.blank)) for t, fn in c.reads)
                    out.append(_row(c, "fails" if c.failures else "holds", None))
                    continue
            if note is not None:
                result = "out_of_scope" if c.note is not None else "not_evaluated"
            elif kind == "every_iteration":
                result = "fails" if c.failures else "holds"
            else:
                result = "witnessed" if c.witnessed else "not_witnessed"
            out.append(_row(c, result, note))
        return tuple(out)


def _row(c: _Claim, result: str, note: str | None) -> ClaimRow:
    claim = c.claim
    return ClaimRow(claim.name, claim.kind, result, c.checked, c.failures, c.first, note, c.values)


def demand(residents: list, chunk: float) -> float:
    """The tokens `residents` would take in one iteration with no budget."""
    total = 0.0
    for r in residents:
        remaining = r.remaining
        if r.decoding:
            total += 1.0 if remaining >= 1.0 else remaining
        else:
            total += chunk if chunk < remaining else remaining
    return total


def _walk(e: ir.Expr):
    yield e
    for child in _children(e):
        yield from _walk(child)


def _children(e: ir.Expr) -> tuple:
    if isinstance(e, ir.Unary):
        return (e.operand,)
    if isinstance(e, ir.Binary):
        return (e.left, e.right)
    if isinstance(e, ir.Cond):
        return (e.test, e.then, e.otherwise)
    if isinstance(e, ir.Call | ir.Observable | ir.Draw):
        return e.args
    if isinstance(e, ir.Cost):
        return (e.value,)
    return ()


def _reads(pred: ir.Expr, program: ir.Program) -> list[tuple[str, ir.Expr]]:
    """What a claim's predicate reads that is not a constant, each once, with its text."""
    out: dict[str, ir.Expr] = {}
    for e in _walk(pred):
        if isinstance(e, ir.Ctx):
            out.setdefault(e.name, e)
        elif isinstance(e, ir.Aggregate):
            out.setdefault(f"{e.func}({program.observes[e.stat]})", e)
        elif isinstance(e, ir.Observable) and isinstance(e.target.index, ir.Num | None):
            index = 0 if e.target.index is None else int(e.target.index.value)
            items = program.pools if e.target.kind == "pool" else program.stages
            member = items[e.target.base + index]
            name = member.name if member.index is None else f"{member.name}[{member.index}]"
            out.setdefault(f"{e.func}({name})", e)
    return list(out.items())
