"""Stopping a sweep's runs in progress from outside, so that each says why it had not ended.

A run stops as `serq run` does under Ctrl-C: a `KeyboardInterrupt` raised in the thread
that runs it, which `serq.sim` turns into an `Interrupted` with its clock and findings. In
a local pool's worker a signal raises it in the main thread; on a Dask worker, whose runs
execute in threads no signal reaches, `stop` raises it in the threads of a sweep's runs
(`PyThreadState_SetAsyncExc`). Each thread that runs a sweep's run is registered while it
runs (`run_registered`), so nothing is raised in a thread once its run has ended.

Python drops an exception raised in a finaliser or a garbage collector's callback (Dask's
workers have one, called at every collection), printing "Exception ignored". A stop that
lands there is noted by `sys.unraisablehook` (`keep_dropped_interrupts`) and raised again
in the same thread by a watcher thread a little later, once the thread has left the hook;
otherwise the run would go on, and end unreported when its worker is terminated.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.RLock()  # reentrant: a signal's handler or the hook may run inside it
_runs: dict[int, tuple[str, int]] = {}  # thread ident -> (sweep, run index) it executes
_asked: set[int] = set()  # threads whose run was sent its KeyboardInterrupt
_stopped: set[str] = set()  # sweeps stopped here: their runs not begun never begin
_dropped: dict[int, float] = {}  # asked threads whose stop Python dropped -> when
_watcher: threading.Thread | None = None  # raises the dropped stops again
_previous_hook: Callable[[Any], None] | None = None
AGAIN = 0.02  # seconds between a dropped stop and its raising again


def run_registered(sweep: str, call: Callable[[], T], index: int = -1) -> T:
    """`call()` with this thread registered as running the run `index` of `sweep`, which
    `stop` can interrupt; a stop that comes as the run ends is cleared, never raised after
    it."""
    ident = threading.get_ident()
    try:
        with _lock:
            _runs[ident] = (sweep, index)
            _asked.discard(ident)  # left by a stop that landed in a `finally` below
        return call()
    finally:
        with _lock:
            _runs.pop(ident, None)
            if ident in _asked:
                _asked.discard(ident)
                _async_raise(ident, None)


def stopped(sweep: str) -> bool:
    """Whether `stop(sweep)` was called in this process."""
    return sweep in _stopped


def stop(sweep: str) -> list[int]:
    """Interrupt `sweep`'s runs in progress in this process, once each, and mark `sweep`
    stopped (its runs not begun check `stopped`). The indices of the runs interrupted."""
    with _lock:
        _stopped.add(sweep)
        threads = [t for t, (s, _) in _runs.items() if s == sweep and t not in _asked]
        for ident in threads:
            _asked.add(ident)
            _async_raise(ident, KeyboardInterrupt)
        if threads:
            _watch()
        return [_runs[t][1] for t in threads]


def running() -> bool:
    """Whether this thread is in a registered run."""
    return threading.get_ident() in _runs


def asked() -> None:
    """Note that this thread's run is being sent its `KeyboardInterrupt` (by a signal's
    handler, which then raises it), so that one Python drops is raised again."""
    with _lock:
        _asked.add(threading.get_ident())
        _watch()


def keep_dropped_interrupts() -> None:
    """Install `_raise_dropped` as this process's `sys.unraisablehook` (once; any other
    unraisable exception goes on to the hook installed before it)."""
    global _previous_hook
    if sys.unraisablehook is not _raise_dropped:
        _previous_hook = sys.unraisablehook
        sys.unraisablehook = _raise_dropped


def _raise_dropped(unraisable: Any) -> None:
    import time

    ident = threading.get_ident()
    if isinstance(getattr(unraisable, "exc_value", None), KeyboardInterrupt):
        with _lock:
            if ident in _runs and ident in _asked:  # raised again by the watcher, not here:
                _dropped[ident] = time.monotonic()  # in this hook it would be dropped too
                return
    if _previous_hook is not None:
        _previous_hook(unraisable)


def _watch() -> None:
    """Start the watcher, unless it runs (called holding `_lock`)."""
    global _watcher
    if _watcher is None or not _watcher.is_alive():
        _watcher = threading.Thread(target=_raise_again, name="serq-stop-watcher", daemon=True)
        _watcher.start()


def _raise_again() -> None:
    """While a thread that was asked to stop runs, raise its stop again each time Python
    dropped it, `AGAIN` seconds after (it has left the hook by then)."""
    import time

    while True:
        time.sleep(AGAIN / 2)
        with _lock:
            if not any(t in _runs for t in _asked):
                _dropped.clear()
                return
            now = time.monotonic()
            for ident, when in list(_dropped.items()):
                if ident not in _runs or ident not in _asked:
                    del _dropped[ident]
                elif now - when >= AGAIN:
                    del _dropped[ident]
                    _async_raise(ident, KeyboardInterrupt)


def _async_raise(ident: int, exception: type[BaseException] | None) -> None:
    """Raise `exception` in thread `ident` at its next bytecode (None: clear one pending),
    as a signal's handler raises in the main thread."""
    import ctypes

    what = ctypes.py_object(exception) if exception is not None else None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), what)
