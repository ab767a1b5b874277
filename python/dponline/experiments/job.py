"""Jobs: run an :class:`Experiment`, write its outputs, print its summary.

A CLI job is a thin preset: a function that builds an :class:`Experiment` from its flags and hands it to
:func:`run_job` (``dponline sweep`` builds it from a TOML file)::

    def my_job(args):
        experiment = Experiment(stream, [LearnerSpec(...)], grid={"epsilon": args.epsilon}, seeds=args.seeds)
        results = run_job(experiment, args.out, workers=args.workers, scheduler=args.scheduler, quiet=args.quiet)
        return 0
"""

from __future__ import annotations

import math
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .cache import RunCache
from .experiment import Experiment
from .outputs import exclusive_output
from .results import Results, column_name
from .verdict import format_interval, format_number

__all__ = ["run_job", "format_summary", "float_list", "cell"]


def float_list(text: str) -> list[float]:
    """An argparse ``type`` for flags such as ``--epsilon 0.1,0.3,1,3``: comma-separated finite numbers.

    Raises:
        argparse.ArgumentTypeError: an empty item or one that is not a finite number (argparse turns it into a
            usage error, exit code 2). Ranges (``ε > 0`` …) are checked by the learners when the
            :class:`Experiment` is built.
    """
    import argparse

    values = []
    for item in text.split(","):
        try:
            value = float(item)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected finite numbers, got {item.strip()!r}")
        values.append(value)
    return values


def cell(row: Any, metric: str, *, signed: bool = False, scale: float = 1.0) -> str:
    """``mean ± half`` of ``metric`` in a :meth:`Results.summary` row, rounded to its 95% interval
    (:func:`.verdict.format_interval`); ``-`` when nothing finished."""
    mean, low, high = (row[f"{metric}_{s}"] * scale for s in ("mean", "ci_low", "ci_high"))
    if not math.isfinite(mean):
        return "-"
    return format_interval(mean, abs(high - low) / 2, signed=signed)


def format_summary(
    results: Results, *, names: dict[str, str] | None = None, notes: str = "", gain: str | None = None
) -> str:
    """A plain-text table of :meth:`Results.summary` — final loss and regret against every comparator (+ =
    worse) with their 95% intervals, each comparator's own loss, and a verdict per private learner
    (:meth:`Results.verdicts`). ``names`` gives comparators a readable name in the text; ``notes`` (a job's
    privacy lines ...) go between the table and the verdicts; ``gain`` names the negated loss (a gain, higher
    is better: ``"expected clicks"``) printed instead of the loss."""
    names = names or {}
    table = results.summary()
    unit = results.metadata().get("unit", "loss units")
    comps = results.comparators
    width = max(24, *(len(c.label) for c in results.configurations))
    first = f"{gain} (gain)" if gain else "loss"
    sign = -1.0 if gain else 1.0
    head = f"{'learner':<{width}} {'runs':>4} {'failed':>6} {first:>22}"
    for name in comps:
        head += f" {'regret vs ' + names.get(name, name):>24}"
    lines = [head, "-" * len(head)]
    for config, (_, row) in zip(results.configurations, table.iterrows(), strict=True):
        line = (
            f"{config.label:<{width}} {int(row['runs']):>4} {int(row['failed']):>6} {cell(row, 'loss', scale=sign):>22}"
        )
        for name in comps:
            line += f" {cell(row, f'regret_{column_name(name)}', signed=True):>24}"
        lines.append(line)
    for name, comp in results.metadata()["comparators"].items():
        total = (
            f"{gain} {format_number(-comp['total_loss'])}"
            if gain
            else f"total loss {format_number(comp['total_loss'])}"
        )
        label = f"{names.get(name, name)}: {total} ({comp['method']})"
        lines.append(label)
    lines.append(
        f"({'gain' if gain else 'loss'} and regret in {unit}; regret = learner's loss − comparator's: + = worse; "
        "mean ± half-width of the 95% t-interval over seeds)"
    )
    if notes:
        lines += ["", notes]
    verdicts = results.verdicts(names.get(str(results.metadata().get("baseline")), None))
    if verdicts:
        lines.append("")
        lines.extend(verdicts)
    return "\n".join(lines)


def _preload() -> None:
    """Import what saving and plotting need (pandas, pyarrow, matplotlib with its Agg backend) — about a second
    of a job's start-up — while the runs go on: the main process of a process-pool or Dask sweep only waits for
    its workers then, and an in-process run releases the GIL in its native loop. A failed import is left for
    the save to report."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401
        import pandas  # noqa: F401
        import pyarrow.parquet  # noqa: F401
    except Exception:  # noqa: S110 - the save imports them again and reports the error there
        pass


def run_job(
    experiment: Experiment,
    out: str | os.PathLike[str],
    *,
    backend: str | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    cache: bool = True,
    format: str = "parquet",  # noqa: A002 - the natural name of the option
    svg: bool = False,
    plots: Sequence[str] | None = None,
    quiet: bool = False,
    report: Callable[[Results], str] | None = None,
) -> Results:
    """Run ``experiment`` and write its outputs to ``out`` (see :meth:`Results.save`); print the summary.

    ``out`` is held for the whole job (:func:`.outputs.exclusive_output`: a second job on the same folder
    refuses with :class:`.outputs.OutputBusyError`) and the outputs are replaced at the end, all at once
    (:func:`.outputs.publish`). Finished runs are cached under ``out/cache`` (unless ``cache=False``), so
    rerunning an interrupted job skips them; an unseeded sweep's runs (keyed by position, never by their
    OS-drawn seeds) are deleted once the job completes without failures, so the next run draws fresh noise.
    ``backend`` defaults to ``"dask"`` with a ``scheduler``, ``"inline"`` with ``workers=1``, and the process
    pool otherwise. ``report`` replaces the default summary table (:func:`format_summary`) with a job's own
    text.

    Raises:
        SweepInterrupted: on Ctrl-C; the finished runs are in the cache, the previous outputs unchanged.
        OutputBusyError, InvalidInputError: ``out`` is held by another job or cannot be written.
        OSError: writing failed (a full disk); the previous outputs are unchanged.
    """
    if backend is None:
        backend = "dask" if scheduler is not None else ("inline" if workers == 1 else "process")
    with exclusive_output(out) as folder:
        cache_dir = folder / "cache" if cache else None
        if cache_dir is not None:
            RunCache(experiment.cache_directory(cache_dir)).clean_temporary()
        preload = threading.Thread(target=_preload, name="dponline-preload", daemon=True)
        preload.start()
        results = experiment.run(
            backend=backend,
            workers=workers,
            scheduler=scheduler,
            cache_dir=cache_dir,
            progress=not quiet,
        )
        preload.join()
        written = results.save(folder, format=format, svg=svg, plots=plots)
        n_failed = results.execution["failed"]
        if cache_dir is not None and experiment.root_seed is None and n_failed == 0:
            shutil.rmtree(experiment.cache_directory(cache_dir), ignore_errors=True)
    print(f"\n{experiment.name}: {experiment.description}")
    print((report or format_summary)(results))
    if n_failed:
        print(f"\n{n_failed} run(s) failed; see metadata.json ('failures')")
    print(f"\nwrote {', '.join(str(p) for p in written)}")
    return results
