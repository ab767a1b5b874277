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
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .experiment import Experiment, SweepInterrupted
from .results import Results

__all__ = ["run_job", "format_summary", "float_list"]


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


def format_summary(results: Results) -> str:
    """A plain-text table of :meth:`Results.summary`: final loss and regrets with their 95% intervals."""
    table = results.summary()
    lines = []
    head = f"{'learner':<24} {'runs':>4} {'failed':>6} {'t':>9} {'loss':>20}"
    comps = results.comparators
    for name in comps:
        head += f" {'regret vs ' + name:>22}"
    lines.append(head)
    lines.append("-" * len(head))

    def cell(prefix: str, row: Any) -> str:
        mean, low, high = row[f"{prefix}_mean"], row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"]
        if not math.isfinite(mean):
            return "-"
        if not math.isfinite(low):
            return f"{mean:.5g}"
        return f"{mean:.5g} ± {(high - low) / 2:.2g}"

    for config, (_, row) in zip(results.configurations, table.iterrows(), strict=True):
        t = "-" if row["t"] is None or (isinstance(row["t"], float) and math.isnan(row["t"])) else f"{int(row['t'])}"
        line = f"{config.label[:24]:<24} {int(row['runs']):>4} {int(row['failed']):>6} {t:>9} {cell('loss', row):>20}"
        for name in comps:
            line += f" {cell(f'regret_{name}', row):>22}"
        lines.append(line)
    lines.append("(mean ± half-width of the 95% t-interval over seeds)")
    return "\n".join(lines)


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

    Finished runs are cached under ``out/cache`` (unless ``cache=False``), so rerunning an interrupted job
    skips them. ``backend`` defaults to ``"dask"`` with a ``scheduler``, ``"inline"`` with ``workers=1``, and
    the process pool otherwise. ``report`` replaces the default summary table (:func:`format_summary`) with
    a job's own text.

    Raises:
        SweepInterrupted: on Ctrl-C, after writing the outputs of the runs that finished.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if backend is None:
        backend = "dask" if scheduler is not None else ("inline" if workers == 1 else "process")
    try:
        results = experiment.run(
            backend=backend,
            workers=workers,
            scheduler=scheduler,
            cache_dir=out / "cache" if cache else None,
            progress=not quiet,
        )
    except SweepInterrupted as stop:
        stop.results.save(out, format=format, svg=svg, plots=plots)
        print(f"\ninterrupted: {stop.results.execution['finished']} run(s) finished and kept in {out}; rerun to resume")
        raise
    written = results.save(out, format=format, svg=svg, plots=plots)
    print(f"\n{experiment.name}: {experiment.description}")
    print((report or format_summary)(results))
    n_failed = results.execution["failed"]
    if n_failed:
        print(f"\n{n_failed} run(s) failed; see metadata.json ('failures')")
    print(f"\nwrote {', '.join(str(p) for p in written)}")
    return results
