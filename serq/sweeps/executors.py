"""Where the runs of a sweep execute: this process, a local process pool, or a Dask cluster.

Every executor has the shape of `concurrent.futures`: `submit(run_task, task)` gives a
future, and the futures are read as they complete. `stream` hides which one it is and
yields each run's outcome once, in completion order (the caller puts them in grid order):

- `None` with `jobs=1`: in this process, one run after the other;
- `None` with `jobs>1`: a `ProcessPoolExecutor` of `jobs` workers, created and shut down here;
- any `concurrent.futures.Executor` the caller owns;
- a `distributed.Client`, or a scheduler address (`tcp://HOST:PORT`) to connect one to.
  Each run is a task with a key of its own, so a run Dask retries after losing a worker
  still reports once (a second result for a key already seen is dropped).

Ctrl-C (KeyboardInterrupt) cancels the runs not yet started and propagates; the outcomes
already yielded are the caller's to keep.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from serq.sweeps.worker import RunOutcome, RunTask, ignore_interrupts, run_task


def default_jobs() -> int:
    """The local pool's default size: the CPUs this process may use."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return max(os.cpu_count() or 1, 1)


def is_dask(executor: object) -> bool:
    """Whether `executor` is a `distributed.Client` (checked without importing dask)."""
    kind = type(executor)
    return kind.__name__ == "Client" and kind.__module__.startswith("distributed")


def describe(executor: object, jobs: int) -> str:
    """A few words on where the runs execute (for the progress line)."""
    if isinstance(executor, str):
        return f"dask {executor}"
    if executor is None:
        return "1 job" if jobs == 1 else f"{jobs} jobs"
    if is_dask(executor):
        return f"dask {getattr(executor.scheduler, 'address', '')}".rstrip()
    return type(executor).__name__


def stream(
    tasks: Sequence[RunTask],
    executor: object = None,
    jobs: int = 1,
    function: Callable[[RunTask], RunOutcome] | None = None,
) -> Iterator[RunOutcome]:
    """The outcome of every task of `tasks`, each once, as the runs finish on `executor`
    (see the module docstring; `jobs` sizes the local pool). `function` runs one task
    (default `worker.run_task`)."""
    function = function or run_task
    if isinstance(executor, str):
        yield from _dask_address(tasks, executor, function)
    elif executor is None and jobs <= 1:
        for task in tasks:
            yield function(task)
    elif executor is None:
        yield from _local_pool(tasks, jobs, function)
    elif is_dask(executor):
        yield from _dask(tasks, executor, function)
    elif hasattr(executor, "submit"):
        yield from _futures(tasks, executor, function)
    else:
        raise TypeError(
            f"not an executor: {executor!r} (give a concurrent.futures.Executor, "
            "a distributed.Client or a tcp:// address)"
        )


def _local_pool(
    tasks: Sequence[RunTask], jobs: int, function: Callable[[RunTask], RunOutcome]
) -> Iterator[RunOutcome]:
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        max_workers=min(jobs, max(len(tasks), 1)), initializer=ignore_interrupts
    )
    try:
        yield from _futures(tasks, pool, function)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _futures(
    tasks: Sequence[RunTask], executor: Any, function: Callable[[RunTask], RunOutcome]
) -> Iterator[RunOutcome]:
    from concurrent.futures import as_completed

    futures = [executor.submit(function, task) for task in tasks]
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:
        for future in futures:
            future.cancel()


def _dask_address(
    tasks: Sequence[RunTask], address: str, function: Callable[[RunTask], RunOutcome]
) -> Iterator[RunOutcome]:
    from distributed import Client

    with Client(address, set_as_default=False) as client:
        yield from _dask(tasks, client, function)


def _dask(
    tasks: Sequence[RunTask], client: Any, function: Callable[[RunTask], RunOutcome]
) -> Iterator[RunOutcome]:
    from distributed import as_completed

    sweep = uuid.uuid4().hex[:12]
    keys = [f"serq-run-{sweep}-{task.index}" for task in tasks]
    futures = client.map(function, list(tasks), key=keys, pure=False)
    seen: set[int] = set()
    try:
        for future in as_completed(futures, loop=client.loop):
            outcome = future.result()
            if outcome.index in seen:  # a retried run that reported twice
                continue
            seen.add(outcome.index)
            yield outcome
    finally:
        client.cancel([f for f in futures if not f.done()])
