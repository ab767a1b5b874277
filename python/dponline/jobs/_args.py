"""What the ``dponline`` jobs share: argparse types for their flags, the flags every sweep preset takes, and the
run of a preset's sweep with the command's exit codes.

Every type raises :class:`argparse.ArgumentTypeError`, which argparse turns into a usage error (exit code 2).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..errors import InvalidInputError
from ..experiments import Experiment, LearnerSpec, Results, SweepInterrupted, run_job
from ..experiments.job import float_list

__all__ = [
    "positive_int",
    "nonnegative_int",
    "positive_float",
    "delta",
    "epsilons",
    "add_seed_flags",
    "add_execution_flags",
    "preset_experiment",
    "randomness_text",
    "built",
    "run_sweep",
]

_T = TypeVar("_T")


def _integer(text: str, low: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer >= 1 (``--seeds``, ``--horizon``, ``--workers`` ...)."""
    return _integer(text, 1)


def nonnegative_int(text: str) -> int:
    """An integer >= 0 (``--seed``, ``--stream-seed``)."""
    return _integer(text, 0)


def positive_float(text: str) -> float:
    """A finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def delta(text: str) -> float:
    """A privacy δ in [0, 1)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number in [0, 1), got {text!r}") from None
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text!r}")
    return value


def epsilons(text: str) -> list[float]:
    """One privacy ε or a comma-separated list of them, each > 0 (``--epsilon 0.1,1,10``)."""
    values = float_list(text)
    if any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"every epsilon must be > 0, got {text!r}")
    return values


def add_seed_flags(parser: argparse.ArgumentParser, *, stream: str, learners: str) -> None:
    """``--stream-seed`` (the seed of the stream's ``stream``, default 0) and ``--seed`` (the root seed of the
    ``learners``, default operating-system entropy)."""
    parser.add_argument("--stream-seed", type=nonnegative_int, default=0, help=f"seed of the {stream} (default 0)")
    parser.add_argument(
        "--seed",
        type=nonnegative_int,
        default=None,
        help=f"root seed of the {learners} (default: OS entropy, not recorded; a seeded run is private only while "
        "its seed is secret)",
    )


def add_execution_flags(parser: argparse.ArgumentParser) -> None:
    """``--workers``, ``--scheduler`` and ``--quiet``: where and how a sweep runs (:func:`run_sweep`)."""
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="local worker processes (default: the CPUs available; 1 runs in this process)",
    )
    parser.add_argument("--scheduler", default=None, help="address of a Dask scheduler (tcp://host:8786)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def preset_experiment(args: argparse.Namespace, stream: Any, specs: list[LearnerSpec], **options: Any) -> Experiment:
    """A preset's sweep: ``specs`` on ``stream`` over the ``--epsilon`` grid, ``--seeds`` runs each, on common
    random numbers — run ``k`` of every learner and grid point gets ``SeedSequence(root, spawn_key=(k,))`` with
    ``root`` the ``--seed`` (OS entropy, never recorded, without it), so differences between learners are not
    seed noise. ``options`` go to :class:`~dponline.experiments.Experiment` (checkpoints, comparators, name ...)."""
    root = np.random.SeedSequence().entropy if args.seed is None else args.seed
    return Experiment(
        stream,
        specs,
        grid={"epsilon": args.epsilon},
        seeds=args.seeds,
        root_seed=args.seed,
        seed_fn=lambda i, j, k: np.random.SeedSequence(root, spawn_key=(k,)),
        **options,
    )


def randomness_text(seed: int | None) -> str:
    """How a job's noise was keyed, for its privacy lines."""
    if seed is None:
        return "keyed from operating-system entropy, not recorded"
    return f"root seed {seed} — private only while that seed is secret"


def built(args: argparse.Namespace, build: Callable[[argparse.Namespace], _T]) -> _T:
    """``build(args)``; an :class:`InvalidInputError` becomes a usage error naming the bad value (exit code 2)."""
    parser: argparse.ArgumentParser = args.parser
    try:
        return build(args)
    except InvalidInputError as exc:
        parser.error(str(exc))


def run_sweep(
    args: argparse.Namespace,
    experiment: Experiment,
    out: str,
    *,
    then: Callable[[Results], None] | None = None,
    **options: Any,
) -> int:
    """Run ``experiment`` with :func:`dponline.experiments.run_job` (``--workers``, ``--scheduler``, ``--quiet``
    from ``args``; ``options`` passed on), call ``then(results)`` after the job's summary, and return the
    command's exit code: 0 when every run finished, 1 when some failed, 130 when interrupted (the finished runs
    are kept). A bad value or an unwritable ``out`` is a usage error (exit code 2)."""
    parser: argparse.ArgumentParser = args.parser
    try:
        results = run_job(experiment, out, workers=args.workers, scheduler=args.scheduler, quiet=args.quiet, **options)
    except SweepInterrupted:
        return 130
    except (InvalidInputError, OSError) as exc:  # e.g. an unreachable --scheduler, an unwritable --out
        parser.error(str(exc))
    if then is not None:
        then(results)
    return 0 if results.execution["failed"] == 0 else 1
