"""What the ``dponline`` jobs share: argparse types for their flags, the flags every sweep preset takes, and the
run of a preset's sweep with the command's exit codes.

Every type raises :class:`argparse.ArgumentTypeError`, which argparse turns into a usage error (exit code 2).
"""

from __future__ import annotations

import argparse
import math
import re
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..errors import InvalidInputError
from ..experiments import Experiment, LearnerSpec, Results, run_job
from ..experiments.job import float_list
from ..experiments.outputs import OutputBusyError, exclusive_output

__all__ = [
    "positive_int",
    "nonnegative_int",
    "positive_float",
    "delta",
    "epsilons",
    "add_seed_flags",
    "add_execution_flags",
    "preset_experiment",
    "with_non_private_twin",
    "randomness_text",
    "built",
    "run_sweep",
    "run_preset",
    "plain",
    "parser_options",
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


def add_execution_flags(parser: argparse.ArgumentParser, *, scheduler: bool = True) -> None:
    """``--workers``, ``--scheduler`` (unless ``scheduler=False``) and ``--quiet``: where and how a job runs."""
    parser.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        help="local worker processes (default: the CPUs available; 1 runs in this process)",
    )
    if scheduler:
        parser.add_argument("--scheduler", default=None, help="address of a Dask scheduler (tcp://host:8786)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


_ROLE = re.compile(r":(?:mod|class|func|meth|attr|data|exc|obj):`~?([^`]+)`")


def plain(doc: str) -> str:
    """A docstring as the plain text of a ``--help`` description: reST roles (``:mod:`x```) and literals
    (````x````) reduced to their text, the first line's indentation removed."""
    text = _ROLE.sub(lambda m: m.group(1), textwrap.dedent(doc).strip())
    return text.replace("``", "")


def parser_options(doc: str) -> dict[str, Any]:
    """The ``add_parser`` keywords that print a job's whole docstring as plain text under ``--help``."""
    return {"description": plain(doc), "formatter_class": argparse.RawDescriptionHelpFormatter}


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


def with_non_private_twin(
    label: str, twin: str, learner: Callable[..., Any], fixed: dict[str, Any], **private: Any
) -> list[LearnerSpec]:
    """A preset's private learner and its non-private twin: ``learner`` on ``fixed`` plus ``private`` (options
    only the private run takes, e.g. ``mechanism``) under ``label``, then ``learner`` on ``fixed`` with
    ``epsilon=None`` under ``twin``. On common random numbers (:func:`preset_experiment`) their difference is
    what privacy costs."""
    return [LearnerSpec(label, learner, {**fixed, **private}), LearnerSpec(twin, learner, {**fixed, "epsilon": None})]


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
    command's exit code: 0 when every run finished, 1 when some failed. Ctrl-C (``SweepInterrupted``), an
    unwritable or busy ``out`` and a full disk propagate to :func:`dponline.cli.main` (exit codes 130 and 2).
    A bad value is a usage error (exit code 2)."""
    parser: argparse.ArgumentParser = args.parser
    try:
        results = run_job(
            experiment,
            out,
            workers=args.workers,
            scheduler=getattr(args, "scheduler", None),
            quiet=args.quiet,
            **options,
        )
    except OutputBusyError:
        raise
    except InvalidInputError as exc:  # e.g. an unreachable --scheduler
        parser.error(str(exc))
    if then is not None:
        then(results)
    return 0 if results.execution["failed"] == 0 else 1


def run_preset(
    args: argparse.Namespace,
    build: Callable[[argparse.Namespace], Experiment],
    out: str,
    **options: Any,
) -> int:
    """Hold ``out`` (checked writable and locked *before* anything is computed), build the preset's
    experiment from the flags (a bad value: usage error) and :func:`run_sweep` it. The plots default to the regret
    curves, and the price of privacy for several ε."""
    options.setdefault("plots", ["regret", "price_of_privacy"] if len(args.epsilon) > 1 else ["regret"])
    with exclusive_output(out):
        experiment = built(args, build)
        return run_sweep(args, experiment, out, **options)
