"""The cyclic garbage collector's thresholds while a program runs.

CPython collects its youngest generation after every 700 net allocations of container
objects, and the whole heap once the objects that outlived two collections have grown by
a quarter. A run that builds a backlog (an overloaded stage, a batch of a million
arrivals, a replica past its cliff) keeps every waiting session alive: its session
object, attributes, frames and generator. The collector then walks that growing backlog
over and over and finds nothing to free: an overloaded M/M/1 spent half its time there,
and `arrive batch(100000)` at a step engine two thirds. Most of what a session leaves is
freed by reference counting when it ends (its generator's frames are cleared, and the
generated code keeps a session in its own attributes only where `cachedin` reads it
there, dropping it as the session ends); what still forms cycles (an engine's resident,
a lease, the interpreter's sessions) waits for the next young collection, which comes
after 50,000 net allocations instead of 700: a few megabytes at most, found as before.

`for_runs` raises the thresholds for as long as a run lasts, and puts back the caller's
own when the last of the runs that overlap (threads of a language server or a sweep)
ends. Nothing in a report depends on when the collector runs.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# 50,000 net allocations between young collections, and the default 10 and 10 above:
# measured on an overloaded M/M/1 (1.26 to 1.03 s), `batch(100000)` at a step engine
# (0.86 to 0.36 s), and the shapes of bench/shapes.py (no change)
RUN_THRESHOLDS = (50_000, 10, 10)

_lock = threading.Lock()
_runs = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def for_runs() -> Iterator[None]:
    """Run the body with the collector's thresholds for a run (`RUN_THRESHOLDS`)."""
    global _runs, _saved
    with _lock:
        if _runs == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(*RUN_THRESHOLDS)
        _runs += 1
    try:
        yield
    finally:
        with _lock:
            _runs -= 1
            if _runs == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
