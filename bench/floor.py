"""How fast a run could be in CPython: bench/shapes/tandem2.sq written out by hand, beside
serq's generated code and pyserq 0.1.2 (issue 18's goals).

Run by hand from the repository root:

    PYTHONPATH=. python bench/floor.py

The hand-written loop `tandem` does the work the program asks for and no more: the same
draws (an exponential gap, two exponential works a customer), one heap of completions
beside the next arrival in two locals, the two fifo(1) stages' queues, their levels'
time integrals and their sums of waits and services, and each sojourn appended to typed
arrays. It keeps no session object, no generator and no frame: a customer is a list of
five numbers that the heap entries carry, and the stage it is at tells what comes next.
It builds no report (serq's run includes its report, a few milliseconds here) and checks
nothing (no NaN work, no clock that stops). Its streams are its own, so its numbers are
not the program's; the counts of customers are about the same.

`tandem_reported` adds what serq's report and guards need and the bare loop leaves out
(the session counts and the integral of live sessions, each event counted, the guard
against a stopped clock, each work checked, each sample's turn): the floor of any serq
path that still runs Python bytecode per event and gives the same report.

The four take turns in three rounds (`bench.timing.cpu_best_each`); it prints the best
CPU time of each and its ratio to pyserq's.
"""

from __future__ import annotations

import heapq
import math
import random
import sys
from array import array
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pyserq  # noqa: E402

import serq  # noqa: E402
from bench.timing import cpu_best_each  # noqa: E402

PROGRAM = str(ROOT / "bench" / "shapes" / "tandem2.sq")
HORIZON = 62600.0  # about 50,000 customers, as bench/shapes.py runs it
WARMUP = 100.0
RATE, MEAN_A, MEAN_B = 0.8, 1.0, 0.8


def tandem(horizon: float = HORIZON, warmup: float = WARMUP) -> int:
    """Two fifo(1) stages in tandem under Poisson arrivals, by hand; the sojourns kept."""
    gap_u = random.Random(1).random
    work_u = random.Random(2).random
    log, push, pop = math.log, heapq.heappush, heapq.heappop
    heap: list[tuple] = []
    seq = 0
    t_arr = -log(1.0 - gap_u()) / RATE
    s_arr = seq
    seq += 1
    # a stage: present, in service, the queue, and its level integrals and sums:
    # since, present area, busy area, completed, wait sum, service sum
    first = [0, 0, deque(), 0.0, 0.0, 0.0, 0, 0.0, 0.0]
    second = [0, 0, deque(), 0.0, 0.0, 0.0, 0, 0.0, 0.0]
    times, sessions, values = array("d"), array("q"), array("d")
    serial = 0
    while True:
        # a customer: [serial, arrived in the system, arrived at the stage, started, work]
        if heap and (heap[0][0] < t_arr or (heap[0][0] == t_arr and heap[0][1] < s_arr)):
            now, _, st, c = pop(heap)
            if now > horizon:
                break
            present = st[0]
            st[0] = present - 1
            if st[2]:
                nxt = st[2].popleft()
                nxt[3] = now
                push(heap, (now + nxt[4], seq, st, nxt))
                seq += 1
            else:
                st[1] -= 1
            if now > st[3]:
                dt = now - st[3]
                st[4] += present * dt
                if present:
                    st[5] += dt
                st[3] = now
            if now >= warmup:
                st[6] += 1
                st[7] += c[3] - c[2]
                st[8] += now - c[3]
            if st is second:
                if now >= warmup:
                    times.append(now)
                    sessions.append(c[0])
                    values.append(now - c[1])
                continue
            st = second
            c[4] = w = -MEAN_B * log(1.0 - work_u())
        else:
            now = t_arr
            if now > horizon:
                break
            t_arr = now - log(1.0 - gap_u()) / RATE
            s_arr = seq
            seq += 1
            c = [serial, now, now, 0.0, 0.0]
            serial += 1
            st = first
            c[4] = w = -MEAN_A * log(1.0 - work_u())
        # the customer joins stage `st`
        c[2] = now
        present = st[0]
        st[0] = present + 1
        if st[1] < 1:
            st[1] += 1
            c[3] = now
            push(heap, (now + w, seq, st, c))
            seq += 1
        else:
            st[2].append(c)
        if now > st[3]:
            dt = now - st[3]
            st[4] += present * dt
            if present:
                st[5] += dt
            st[3] = now
    return len(values)


def tandem_reported(horizon: float = HORIZON, warmup: float = WARMUP) -> int:
    """`tandem` plus the bookkeeping serq's report and guards need, still by hand: the
    counts of arrivals, live and ended sessions, the time integral of the live sessions,
    each event counted (and the progress looked at every 65,536), the guard against a
    clock that stops, the check of each work for NaN or no work, and each sample's turn
    (serq keeps time, session, turn and value). Still no session object, generator or
    frame: what a generator-free design of serq's generated code could at best cost."""
    gap_u = random.Random(1).random
    work_u = random.Random(2).random
    log, push, pop = math.log, heapq.heappush, heapq.heappop
    heap: list[tuple] = []
    seq = 0
    t_arr = -log(1.0 - gap_u()) / RATE
    s_arr = seq
    seq += 1
    first = [0, 0, deque(), 0.0, 0.0, 0.0, 0, 0.0, 0.0]
    second = [0, 0, deque(), 0.0, 0.0, 0.0, 0, 0.0, 0.0]
    times, sessions, turns, values = array("d"), array("q"), array("q"), array("d")
    arrivals = live = ended = events = same = 0
    live_since = live_area = live_value = 0.0
    now = 0.0
    while True:
        if heap and (heap[0][0] < t_arr or (heap[0][0] == t_arr and heap[0][1] < s_arr)):
            t, _, st, c = pop(heap)
            arriving = False
        else:
            t = t_arr
            arriving = True
        if t > horizon:
            break
        events += 1
        if not events & 65535:
            pass  # the progress and the pace guard look at the clock here
        if t != now:
            now = t
            same = 0
        else:
            same += 1
            if same >= 10_000_000:
                raise RuntimeError("the clock stops")
        if not arriving:
            present = st[0]
            st[0] = present - 1
            if st[2]:
                nxt = st[2].popleft()
                nxt[3] = now
                push(heap, (now + nxt[4], seq, st, nxt))
                seq += 1
            else:
                st[1] -= 1
            if now > st[3]:
                dt = now - st[3]
                st[4] += present * dt
                if present:
                    st[5] += dt
                st[3] = now
            if now >= warmup:
                st[6] += 1
                st[7] += c[3] - c[2]
                st[8] += now - c[3]
            if st is second:
                if now >= warmup:
                    times.append(now)
                    sessions.append(c[0])
                    turns.append(0)
                    values.append(now - c[1])
                live -= 1
                if now >= warmup:
                    ended += 1
                if now > live_since:
                    live_area += live_value * (now - live_since)
                    live_since = now
                live_value -= 1.0
                continue
            st = second
            w = -MEAN_B * log(1.0 - work_u())
        else:
            t_arr = now - log(1.0 - gap_u()) / RATE
            s_arr = seq
            seq += 1
            c = [arrivals, now, now, 0.0, 0.0]
            arrivals += 1
            live += 1
            if now > live_since:
                live_area += live_value * (now - live_since)
                live_since = now
            live_value += 1.0
            st = first
            w = -MEAN_A * log(1.0 - work_u())
        if not w > 0.0:  # serq checks each work: NaN fails, no work passes at once
            raise RuntimeError("a work that is not positive")
        c[4] = w
        c[2] = now
        present = st[0]
        st[0] = present + 1
        if st[1] < 1:
            st[1] += 1
            c[3] = now
            push(heap, (now + w, seq, st, c))
            seq += 1
        else:
            st[2].append(c)
        if now > st[3]:
            dt = now - st[3]
            st[4] += present * dt
            if present:
                st[5] += dt
            st[3] = now
    return len(values)


def main() -> None:
    p = serq.compile(PROGRAM, horizon=HORIZON)
    q = pyserq.compile(PROGRAM, horizon=HORIZON)
    runs = [
        (pyserq.run, q),
        (serq.run, p),
        (lambda _: tandem(), None),
        (lambda _: tandem_reported(), None),
    ]
    best = cpu_best_each(runs, 3)
    print(f"{PROGRAM} to {HORIZON:g} ({tandem():,} sojourns by hand), best of 3, CPU s")
    names = ("pyserq 0.1.2", "serq", "by hand", "by hand, reported")
    for name, t in zip(names, best, strict=True):
        print(f"{name:18s} {t:8.4f}  {t / best[0]:5.2f}x")


if __name__ == "__main__":
    main()
