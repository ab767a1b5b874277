"""What a worker process runs: one learner on the stream, returning a small picklable record.

Kept light on imports (no pandas, no matplotlib) so that spawned process-pool workers and Dask workers start
quickly. Everything a task carries pickles: the learner factory by reference, its keyword arguments (domains
and loss families pickle), and the run's ``numpy.random.SeedSequence``.
"""

from __future__ import annotations

import hashlib
import pickle
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RunTask", "PackedStream", "execute", "init_worker", "failed_record"]

_STREAM: Any = None
_UNPACKED: dict[str, Any] = {}


class PackedStream:
    """A loss family pickled in-band to bytes, for transports (Dask) that move numpy buffers out of band:
    the family's constructor needs an aligned, contiguous array, which a zero-copy buffer need not be.
    Unpacked once per worker process."""

    def __init__(self, stream: Any) -> None:
        self.blob = pickle.dumps(stream, protocol=4)
        self.digest = hashlib.sha256(self.blob).hexdigest()

    def unpack(self) -> Any:
        if self.digest not in _UNPACKED:
            _UNPACKED.clear()
            _UNPACKED[self.digest] = pickle.loads(bytes(self.blob))
        return _UNPACKED[self.digest]


@dataclass(frozen=True)
class RunTask:
    """One run of a sweep: ``factory(**kwargs, seed=seed).run(stream, checkpoints=checkpoints)``.

    Attributes:
        index: position of the run in the sweep (learner spec, then grid point, then seed index).
        key: the run's cache key (see :meth:`Experiment.run_key`).
        spec, point, seed_index: where the run sits in the sweep; its seed depends on these only.
        factory: a learner class or a module-level function returning a learner.
        kwargs: the learner's keyword arguments (fixed parameters and the grid point).
        seed: the run's ``SeedSequence``.
        checkpoints: number of checkpoints passed to ``run``.
    """

    index: int
    key: str
    spec: int
    point: int
    seed_index: int
    factory: Callable[..., Any]
    kwargs: dict[str, Any]
    seed: np.random.SeedSequence
    checkpoints: int


def init_worker(stream: Any) -> None:
    """Process-pool initializer: keep the stream (sent once per worker) and leave Ctrl-C to the parent."""
    global _STREAM
    _STREAM = stream
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def failed_record(task: RunTask, error: BaseException, seconds: float = 0.0) -> dict[str, Any]:
    """The record of a run that raised ``error``."""
    return {
        "index": task.index,
        "key": task.key,
        "status": "failed",
        "error": f"{type(error).__name__}: {error}",
        "traceback": "".join(traceback.format_exception(type(error), error, error.__traceback__)),
        "seconds": seconds,
    }


def execute(task: RunTask, stream: Any = None) -> dict[str, Any]:
    """Build the learner, run it on the stream and return its record (never raises an ``Exception``).

    ``stream`` defaults to the one installed by :func:`init_worker`. A run that raises is returned as a
    ``"failed"`` record carrying the error; ``KeyboardInterrupt`` propagates.
    """
    if stream is None:
        stream = _STREAM
    if isinstance(stream, PackedStream):
        stream = stream.unpack()
    began, cpu = time.perf_counter(), time.process_time()
    try:
        learner = task.factory(**task.kwargs, seed=task.seed)
        result = learner.run(stream, checkpoints=task.checkpoints)
        return {
            "index": task.index,
            "key": task.key,
            "status": "ok",
            "checkpoints": np.asarray(result.checkpoints, dtype=np.int64),
            "cumulative_loss": np.asarray(result.cumulative_loss, dtype=np.float64),
            "total_loss": float(result.total_loss),
            "rounds": int(getattr(result, "rounds", int(result.checkpoints[-1]) if len(result.checkpoints) else 0)),
            "clipped": int(getattr(result, "clipped", 0)),
            "run_seconds": float(getattr(result, "seconds", float("nan"))),
            "seconds": time.perf_counter() - began,
            "cpu_seconds": time.process_time() - cpu,
        }
    except Exception as exc:  # a failed run is recorded and the sweep goes on
        return failed_record(task, exc, time.perf_counter() - began)
