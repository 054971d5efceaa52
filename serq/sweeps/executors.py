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
already yielded are the caller's to keep. Before it propagates, the runs in progress in
this process or in the local pool say why they had not finished: each is stopped as
`serq run` is by Ctrl-C and yielded as an outcome with `interrupted` set, its clock and
what had stopped moving (`worker.interrupted_outcome`). The pool's workers are sent
SIGINT (a terminal's Ctrl-C reaches them already; `kill -INT` the parent's alone does
not), and their answers are awaited for `GRACE` seconds at most; a second Ctrl-C, or the
end of the wait, terminates the workers still running. On a Dask cluster each worker is
asked (`Client.run`) to raise `KeyboardInterrupt` in the threads of this sweep's runs,
and their answers are awaited the same way; runs still going after `GRACE` seconds are
cancelled (Dask cannot stop a thread, so such a run may go on on its worker). A run in
progress that gave no answer within `GRACE` (stuck in a long call that no interrupt
reaches) is yielded all the same, interrupted with `late` saying what became of it: so
every run that was going is named. On another executor the runs in progress are
cancelled without a word.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from serq.sweeps.worker import (
    BEGUN,
    RunOutcome,
    RunTask,
    dask_interruptible,
    interrupted_outcome,
    interruptible,
    pool_worker,
    run_task,
    stop_dask_runs,
)

CONNECT = 10.0  # seconds to reach a Dask scheduler (Dask's default, 30, for a typo)
GRACE = 10.0  # seconds the runs in progress have, after Ctrl-C, to say why they had not ended
# what became of a run in progress that did not answer within `GRACE` (`RunOutcome.late`)
TERMINATED = "its worker was terminated"
CANCELLED = "it was cancelled, and may go on running on its Dask worker, unreported"


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
            try:
                outcome = function(task)
            except KeyboardInterrupt as stop:  # the run in progress: why it had not ended
                yield interrupted_outcome(task, stop)
                raise
            yield outcome
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
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # which runs have begun and ended, marked by the workers: after Ctrl-C, the runs a
    # worker that never answered was in (`_stop_pool`)
    workers_wanted = min(jobs, max(len(tasks), 1))
    try:
        progress = multiprocessing.get_context().Array(
            "b", max((task.index for task in tasks), default=-1) + 1, lock=False
        )
    except OSError as error:  # its shared memory: a full /dev/shm, a file size limit
        raise WorkersUnavailable(workers_wanted, error) from error
    pool = ProcessPoolExecutor(
        max_workers=workers_wanted, initializer=pool_worker, initargs=(progress,)
    )
    try:
        futures = {pool.submit(interruptible, function, task): task for task in tasks}
    except OSError as error:  # the workers start here: no fork (EAGAIN, ENOMEM)
        pool.shutdown(wait=False, cancel_futures=True)
        raise WorkersUnavailable(workers_wanted, error) from error
    workers = dict(getattr(pool, "_processes", None) or {})  # pid -> Process, all started
    state = "running"
    try:
        for future in as_completed(futures):
            yield _result(future, futures[future])
        state = "done"
    except KeyboardInterrupt:
        state = "stopping"
        yield from _stop_pool(futures, workers, progress)
        state = "stopped"
        raise
    finally:
        for future in futures:
            future.cancel()
        if state == "done":
            pool.shutdown(wait=True)
        else:
            if state != "stopped":  # a second Ctrl-C, or the consumer gone: stop them now
                _terminate(workers)
            pool.shutdown(wait=False, cancel_futures=True)
            _reap(workers)


def _result(future: Any, task: RunTask) -> RunOutcome:
    """The outcome of a pool's `future` of `task`: a SIGINT that reached its worker in the
    instant the run ended, past `interruptible`, is an interrupted run found nothing."""
    try:
        return future.result()
    except KeyboardInterrupt as stop:
        return interrupted_outcome(task, stop)


def _stop_pool(
    futures: dict[Any, RunTask], workers: dict[int, Any], progress: Any
) -> Iterator[RunOutcome]:
    """After Ctrl-C: cancel the runs not begun, interrupt those in progress (SIGINT to
    every worker; one waiting for work only notes it) and yield what each says, within
    `GRACE` seconds; the workers still running then are terminated, and each run that
    had begun there and not ended is yielded as `late`."""
    import signal
    from concurrent.futures import wait

    for future in futures:
        future.cancel()
    running = [f for f in futures if not f.done()]
    for process in workers.values():
        try:
            os.kill(process.pid, signal.SIGINT)
        except (OSError, AttributeError, TypeError):  # gone already
            pass
    done, late = wait(running, timeout=GRACE)
    for future in running:
        if future in done and not future.cancelled():
            try:
                outcome = _result(future, futures[future])
            except Exception:  # its worker ended abruptly: a run stopped, nothing said
                outcome = interrupted_outcome(futures[future], KeyboardInterrupt())
            if outcome.started:
                yield outcome
    if late:
        _terminate(workers)
        for future in running:
            index = futures[future].index
            if future in late and progress[index] == BEGUN:
                yield RunOutcome(index, interrupted=True, late=TERMINATED)


def _terminate(workers: dict[int, Any]) -> None:
    for process in workers.values():
        try:
            if process.is_alive():
                process.terminate()
        except (OSError, AttributeError, ValueError):
            pass


def _reap(workers: dict[int, Any]) -> None:
    """Wait for the pool's workers to end (each stopped run has returned by now, or was
    terminated), terminating any still there after `GRACE` seconds."""
    for process in workers.values():
        try:
            process.join(GRACE)
            if process.is_alive():
                process.terminate()
                process.join(1.0)
        except (OSError, AttributeError, ValueError, AssertionError):
            pass


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

    _check_address(address)
    try:
        client = Client(address, set_as_default=False, timeout=CONNECT)
    except (OSError, ValueError) as error:  # refused, no such host, timed out
        raise SchedulerUnreachable(address, str(error)) from None
    with client:
        yield from _dask(tasks, client, function)


def _check_address(address: str) -> None:
    """Raise `SchedulerUnreachable` for an address Dask cannot parse (an unknown scheme, no
    port), before a `Client` is made: a client that fails on one spends 20 s closing."""
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except ValueError as error:
        raise SchedulerUnreachable(address, str(error), malformed=True) from None


class SchedulerUnreachable(OSError):
    """The Dask scheduler at `address` could not be reached (`why`, in Dask's words)."""

    def __init__(self, address: str, why: str, malformed: bool = False) -> None:
        super().__init__(f"cannot reach the Dask scheduler `{address}`: {why}")
        self.address, self.why, self.malformed = address, why, malformed


class WorkersUnavailable(OSError):
    """The local pool of `jobs` worker processes could not be started (`error`)."""

    def __init__(self, jobs: int, error: OSError) -> None:
        why = error.strerror or str(error)
        super().__init__(f"cannot start {jobs} worker processes: {why}")
        self.jobs, self.why = jobs, why


def _dask(
    tasks: Sequence[RunTask], client: Any, function: Callable[[RunTask], RunOutcome]
) -> Iterator[RunOutcome]:
    from distributed import as_completed

    sweep = uuid.uuid4().hex[:12]
    keys = [f"serq-run-{sweep}-{task.index}" for task in tasks]
    run = functools.partial(dask_interruptible, function, sweep)
    futures = client.map(run, list(tasks), key=keys, pure=False)
    seen: set[int] = set()
    try:
        for future in as_completed(futures, loop=client.loop):
            outcome = future.result()
            if outcome.index in seen:  # a retried run that reported twice
                continue
            seen.add(outcome.index)
            yield outcome
    except KeyboardInterrupt:
        yield from _stop_dask(client, sweep, futures, seen)
        raise
    finally:
        client.cancel([f for f in futures if not f.done()])


def _stop_dask(client: Any, sweep: str, futures: list[Any], seen: set[int]) -> Iterator[RunOutcome]:
    """After Ctrl-C: every worker interrupts `sweep`'s runs in progress and begins no other
    (`worker.stop_dask_runs`); yield what each of those runs says, and any run that ended
    meanwhile, within `GRACE` seconds."""
    import time

    try:
        answers = client.run(stop_dask_runs, sweep, on_error="ignore")
    except Exception:  # the scheduler gone: nothing to ask
        return
    in_progress = {i for indices in answers.values() if isinstance(indices, list) for i in indices}
    deadline = time.monotonic() + GRACE
    while time.monotonic() < deadline and not all(f.done() for f in futures):
        time.sleep(0.02)  # `distributed.wait` wants a default client, which this may not be
    for future in futures:
        if future.status != "finished":
            continue
        try:
            outcome = future.result(timeout=GRACE)
        except Exception:  # lost with its worker: nothing said
            continue
        if outcome.started and outcome.index not in seen:
            seen.add(outcome.index)
            yield outcome
    for index in sorted(in_progress - seen):  # interrupted, and silent since
        seen.add(index)
        yield RunOutcome(index, interrupted=True, late=CANCELLED)
