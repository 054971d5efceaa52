"""`preempt by (keys) requeue tail|head`: the victim a growth that does not fit preempts.

The candidates are those `preempt lifo` has (the residents holding the pool of every
step stage whose memory it is, else the pool's holders), leases excluded. Each one's
keys are read with `decoding` (1 for a decoding resident), `admission` (its place among
the candidates in the order of their latest admissions, from 0: pyserq 0.1.4 reads the
index in its running list there, where a serve key reads the admission number itself,
`StepStage._serve_order`) and `position` (where its hold on the pool is now) set; the
smallest keys lose (a NaN ordered as pyserq orders it, `ranked_queue.total`: one with its
sign bit set, as `0 / 0` has it, before every number, one without after), and among
equal keys the most recently admitted, as under
`preempt lifo` (pyserq 0.1.4: `preempt by (1)` is `preempt lifo`). Where the victim
goes back in the queue is `Holds.preempt`'s (`Pool.requeue_tail`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from serq.sim.ranked_queue import total, unordered

INF = float("inf")


def by_keys(pool: Any, innermost: Callable[[Any, Any], Any]) -> Any:
    """The victim among `pool`'s holders (no engine's memory), or None."""
    engine = pool.engine
    keyed = []
    rank = 0.0  # the candidate's place, from 0 (the module's `admission`)
    for session in pool.sessions:  # in the order of their latest admission: later wins ties
        part = innermost(session, pool)
        if part is None or part.leased:
            continue
        engine.decoding = 0.0
        engine.admission = rank
        rank += 1.0
        engine.position = part.consumed if part.position is None else part.position
        keyed.append((pool.preempt_key_of(session.attrs), part))
    if any(unordered(key) for key, _ in keyed):  # a NaN, ordered as pyserq orders it
        keyed = [(total(key), part) for key, part in keyed]
    best = None
    best_key: tuple = ()
    for key, part in keyed:
        if best is None or key <= best_key:
            best, best_key = part, key
    return best


def resident_by_keys(pool: Any, steps: list[Any]) -> Any:
    """The victim among the residents of the step stages in `steps` whose memory `pool`
    is, or None."""
    engine = pool.engine
    candidates = []
    for stage in steps:
        if stage.memory is not pool:
            continue
        for r in stage.residents:
            part = r.part_on(pool)
            if part is not None and not part.leased:
                candidates.append((r, part))
    candidates.sort(key=lambda c: c[0].admission)
    keyed = []
    for rank, (r, part) in enumerate(candidates):
        engine.decoding = 1.0 if r.decoding else 0.0
        engine.admission = float(rank)  # its place among the candidates, from 0
        engine.position = part.consumed if part.position is None else part.position
        keyed.append((pool.preempt_key_of(r.session.attrs), r.admission, part))
    if any(unordered(key) for key, _, _ in keyed):  # a NaN, ordered as pyserq orders it
        keyed = [(total(key), admission, part) for key, admission, part in keyed]
    best = None
    best_key: tuple = ()
    newest = -INF
    for key, admission, part in keyed:
        if best is None or key < best_key or (key == best_key and admission > newest):
            best, best_key, newest = part, key, admission
    return best
