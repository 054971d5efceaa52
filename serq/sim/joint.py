"""Fast-forwarding several step engines at once.

A span (`StepStage.extend`, design/step-fast-forward.md) repeats one engine's candidate
iteration until the next other event. With two engines or more, each busy one's next
iteration end is such an event for the others: their iterations interleave, so every
span of one engine is cut short by the next iteration end of another, and nearly every
iteration is stepped one at a time (four replicas of examples/vllm.sq's engine skipped 2%
of their iterations, where one alone skips 95%).

Yet while nobody waits at any pool, an iteration of one engine that only gives each of
its residents a decode token changes nothing another engine reads: their memory pools are
their own, and their budgets, costs and serve keys read nothing an iteration moves
(`fastforward.analyse`). So the engines whose pending iteration is a candidate, the
*members*, are fast-forwarded together, each by its own span, up to a common bound:

- the first pending event that is not a member's iteration end (an arrival, a delay that
  ends, an engine that is not repeating), and the horizon;
- the end of the first member span that stops on its own (a resident finishes there, or
  a crossing does not fit): what happens then may reach the others;
- the first instant at which iterations of two members end together: the order of what
  they schedule there is stepping's, by sequence numbers no span has.

A member whose candidate iteration started at an earlier instant is planned from what it
holds now (`StepStage._span` checks its residents against that iteration's batch): no
event but the members' fires before its next iteration starts, so that is what stepping
would plan then. A window too short to pay for itself (`SHORTEST`) is not tried.

One event, as the last member's last iteration starts, applies every member's span: the
crossings at their own times (in one time order across the members where a gauge reads
them), the iterations, and then each member's last iteration runs on past the bound, its
end scheduled in the order those iterations started, as stepping schedules them.

It applies when two step engines or more may fast-forward, no claim reads iterations, and
the engines' memory pools are distinct (a shared one lets one engine's growth preempt
another's resident).
"""

from __future__ import annotations

from bisect import bisect_left
from heapq import heapify, heappop, heappush
from typing import Any

from serq.sim.step import StepStage
from serq.sim.step_spans import _first, _started, grow_at_instants

INF = float("inf")
SHORTEST = 4  # the fewest iterations of `first` a window is tried for


def eligible(world: Any) -> bool:
    """Whether `world`'s step engines may be fast-forwarded together (module docstring)."""
    members = [st for st in world.steps if st.verdict is not None]
    if len(members) < 2 or world.claims is not None:
        return False
    memories = [st.memory for st in members if st.memory is not None]
    return len(set(map(id, memories))) == len(memories)


def extend(first: StepStage) -> bool:
    """Turn `first`'s candidate iteration, and every other engine's pending candidate, into
    spans up to a common bound; False (nothing changed) when there are not two members
    or the spans would not run past their first iteration."""
    world = first.world
    for pool in world.pools:  # a waiting session may be admitted, or grow, at any iteration
        if pool.queue or pool.front or pool.growers:
            return False
    heap = first.engine._heap
    candidates = {st._pending: st for st in world.steps if st.verdict is not None}
    now = first.engine.now
    other = _first_other(heap, candidates)  # the first pending event not a member's end
    if other - now < SHORTEST * (first._pending_end - now):
        return False  # a window this short costs more than stepping through it
    members: dict[StepStage, tuple] = {}
    for entry in heap:
        st = candidates.get(entry[1])
        if st is not None:
            members[st] = entry
    if first not in members or len(members) < 2:
        return False
    if len({entry[0] for entry in members.values()}) < len(members):
        return False  # two iterations end together: engines in step (costs of whole numbers)
    spans = _spans(members, other, first.engine.until)
    if spans is None:
        return False
    seqs = {entry[1] for st, entry in members.items() if st in spans}
    heap[:] = [entry for entry in heap if entry[1] not in seqs]
    heapify(heap)
    # by the start of their last iterations, the order in which those were planned
    window = sorted(spans.items(), key=_last_start)
    for st, _ in window:
        st._pending = -1
    first.engine.schedule(window[-1][1][1][-2], _apply, window)
    return True


def _first_other(heap: list[tuple], candidates: dict[int, StepStage]) -> float:
    """The time of the first event of `heap` whose sequence number is no candidate's (inf
    when none). The heap's order puts it at the root or below candidates' entries only,
    so it is found walking down from the root through those, the least first: a few
    entries, where the candidates are few, rather than the whole heap."""
    if not heap:
        return INF
    top = heap[0]
    if top[1] not in candidates:
        return top[0]
    n = len(heap)
    frontier = [(heap[i][0], i) for i in (1, 2) if i < n]
    heapify(frontier)
    while frontier:
        time, i = heappop(frontier)
        if heap[i][1] not in candidates:
            return time
        for j in (2 * i + 1, 2 * i + 2):
            if j < n:
                heappush(frontier, (heap[j][0], j))
    return INF


def _last_start(item: tuple[StepStage, tuple]) -> float:
    return item[1][1][-2]


def _apply(window: list[tuple[StepStage, tuple]]) -> None:
    """The event of a window, as its last member's last iteration starts: every member's
    crossings at their own times (in one time order across the members when a gauge
    reads them or a crossing grows another pool than its engine's memory), their
    iterations but the last, and the last ones' ends, scheduled in the order they
    started."""
    world = window[0][0].world
    rows = []
    for st, (_, ends, crossings, scheduled, _, _) in window:
        if crossings and not st.cross_quietly(ends, crossings, scheduled):
            rows += [(ends[c[0] - 1], c) for c in crossings]
    if rows:
        rows.sort(key=_time)  # stable: a member's own crossings stay in their order
        grow_at_instants(world, rows)
    events = -1  # this event is counted as the loop fires it
    for st, (m, ends, crossings, scheduled, _, fractions) in window:
        st.advance(m, ends, scheduled, fractions, crossings)
        events += m - 1
        st.run_on(ends[-1], scheduled)
    world.engine.events += events


def _time(row: tuple[float, tuple]) -> float:
    return row[0]


def _spans(
    members: dict[StepStage, tuple], bound: float, until: float
) -> dict[StepStage, tuple] | None:
    """Each member's span up to the common bound (the module docstring), every one running
    on past it; None when fewer than two members can span. A member that cannot is left
    to step, and its iteration end bounds the others. Each span is worked out once, up to
    the first event that is not a member's, and cut to the common bound: a span cut
    short is the span that bound gives (its iterations and crossings a prefix)."""
    spans: dict[StepStage, tuple] = {}
    for st, entry in members.items():
        span = st._span(st._pending_end, entry[3], bound)
        if span is None:  # it steps: its iteration end is another event
            bound = min(bound, entry[0])
        else:
            spans[st] = span
    while len(spans) >= 2:
        # the first span that stops before the bound (a resident finishes there), and the
        # first instant where iterations of two members end together
        stops = min((span[1][-1] for span in spans.values() if not span[4]), default=INF)
        least = min(bound, stops)
        least = min(least, _first_tie(spans, least))
        cut = {}
        for st, span in spans.items():
            short = _cut(span, least, until)
            if short is not None:
                cut[st] = short
            else:
                least = min(least, members[st][0])
        if len(cut) == len(spans):  # no tie is left before `least`, the first of them
            return cut
        spans = {st: span for st, span in spans.items() if st in cut}
        bound = least
    return None


def _cut(span: tuple, bound: float, until: float) -> tuple | None:
    """`span` cut to the iterations that start before `bound` (and at or before `until`),
    its last one running on past the bound; None when fewer than two are left."""
    m, ends, crossings, scheduled, runs_on, fractions = span
    k = _started(ends, bound, until)
    if k < 2:
        return None
    if k == m and runs_on:
        return span
    ends = ends[:k]
    if crossings and crossings[-1][0] >= k:
        crossings = crossings[: bisect_left(crossings, k, key=_first)]
    return (k, ends, crossings, scheduled, True, fractions if k == m else None)


def _first_tie(spans: dict[StepStage, tuple], limit: float) -> float:
    """The first time before `limit` at which iterations of two members end together
    (inf when none; the last iteration of each, which ends at or after the bound it will
    be cut to, does not count)."""
    seen: set[float] = set()
    tie = INF
    for span in spans.values():
        ends = span[1]
        times = set(ends[: min(len(ends) - 1, bisect_left(ends, limit))])
        common = seen & times
        if common:
            tie = min(tie, min(common))
        seen |= times
    return tie
