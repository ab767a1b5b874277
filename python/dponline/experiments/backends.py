"""Where the runs of a sweep execute: in this process, on a local process pool, or on a Dask cluster."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from ..errors import InvalidInputError
from ._worker import PackedStream, RunTask, execute, failed_record, init_worker
from .outputs import sigint_deferred

__all__ = ["BACKENDS", "execute_tasks"]

BACKENDS = ("inline", "process", "dask")


def execute_tasks(
    tasks: list[RunTask], stream: Any, backend: str, workers: int, scheduler: Any, start_method: str | None
) -> Iterator[dict[str, Any]]:
    """Every task's record, in the order the runs finish, from ``backend`` (one of :data:`BACKENDS`); an
    iterator with ``close()`` stops the pool or cancels the Dask futures if the consumer stops early."""
    if not tasks:
        return iter(())
    if backend == "inline":
        return (execute(t, stream) for t in tasks)
    if backend == "process":
        return _process_pool(tasks, stream, min(workers, len(tasks)), _mp_context(start_method))
    return _dask(tasks, stream, scheduler)


def _describe(scheduler: Any) -> str | None:
    if scheduler is None or isinstance(scheduler, str):
        return scheduler
    address = getattr(getattr(scheduler, "scheduler", None), "address", None)
    return str(address) if address else repr(scheduler)


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _mp_context(start_method: str | None) -> Any:
    """``forkserver`` where available (workers fork from a server that imported dponline once, so a second
    sweep in the same session starts its workers at once), else ``spawn``; both pickle everything a worker
    gets, and neither forks a process that may be running threads."""
    methods = multiprocessing.get_all_start_methods()
    if start_method is None:
        start_method = "forkserver" if "forkserver" in methods else "spawn"
    if start_method not in ("spawn", "forkserver") or start_method not in methods:
        allowed = [m for m in ("spawn", "forkserver") if m in methods]
        raise InvalidInputError(f"start_method: must be one of {', '.join(allowed)}; got {start_method!r}")
    context = multiprocessing.get_context(start_method)
    if start_method == "forkserver":
        # _forkserver ignores Ctrl-C in the server, so the workers it forks ignore it from birth (the parent
        # handles Ctrl-C and stops them; a worker interrupted while starting would print a traceback).
        context.set_forkserver_preload(["dponline.experiments._worker", "dponline.experiments._forkserver"])
    return context


def _process_pool(tasks: list[RunTask], stream: Any, workers: int, context: Any) -> Iterator[dict[str, Any]]:
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=init_worker,
        initargs=(stream,),
    )
    done = False
    try:
        futures: dict[Any, RunTask] = {}
        # Ctrl-C waits until every task is submitted: submitting starts the workers, and a worker whose start was
        # cut short would print a traceback once this process is gone.
        with sigint_deferred():
            for n, task in enumerate(tasks):
                try:
                    futures[pool.submit(execute, task)] = task
                except Exception as exc:  # no worker can start (a dead forkserver, a broken pool): record them all
                    cause = RuntimeError(
                        f"the worker processes could not start ({type(exc).__name__}: {exc}); the error that stopped "
                        "them went to standard error. Run with backend='inline' to see it in this process."
                    )
                    cause.__cause__ = exc
                    failed = [failed_record(unsent, cause) for unsent in tasks[n:]]
                    break
            else:
                failed = []
        yield from failed
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # the worker died (BrokenProcessPool, ...): record, go on
                yield failed_record(futures[future], exc)
        done = True
    finally:
        if done:
            pool.shutdown(wait=False)  # every result is in: let the idle workers exit on their own
        else:  # Ctrl-C or the consumer stopped: drop queued runs and stop the running ones now
            stop_pool(pool)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Drop a pool's queued tasks and stop its workers at once, waiting until they are gone (a worker still
    starting would otherwise fail, with a traceback, to read what the exiting parent sent it)."""
    processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown() forgets them
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        proc.terminate()
    for proc in processes:
        proc.join(timeout=5.0)


def _dask(tasks: list[RunTask], stream: Any, scheduler: Any) -> Iterator[dict[str, Any]]:
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise InvalidInputError("the Dask backend needs the 'dask' extra: pip install 'dponline[dask]'") from exc
    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    futures: dict[Any, RunTask] = {}
    done = False
    try:
        [remote] = client.scatter([PackedStream(stream)], broadcast=True, hash=False)
        futures = {client.submit(execute, t, remote, pure=False): t for t in tasks}
        for future in dask_completed(list(futures)):
            try:
                yield future.result()
            except Exception as exc:  # a lost worker, ...: record, go on
                yield failed_record(futures[future], exc)
        done = True
    finally:
        if not done and futures:
            client.cancel(list(futures))
        if own:
            client.close()
