"""Experiments: sweeps of learners × parameter grid × seeds on one stream, on one machine or a Dask cluster.

* :class:`Experiment` — a stream (a :mod:`dponline.losses` family), :class:`LearnerSpec` learners, a parameter
  grid and a number of seeds; validated before any run; comparators in hindsight computed once.
  ``Experiment.run(backend=..., cache_dir=...)`` returns :class:`Results`.
* :class:`Results` — ``frame()`` (tidy: one row per learner, parameters, seed, checkpoint), ``runs()``,
  ``summary()`` (mean, standard error, 95% t-interval over seeds), ``metadata()``, ``save()``, ``plot()``.
* :func:`load_config` — a TOML sweep file to an :class:`Experiment`; :func:`run_job` — run, write, print
  (what ``dponline sweep`` and every CLI job do).
* :class:`Reference` — a comparator given by its own cumulative-loss curve; :mod:`.plots` — the one plotting
  module (regret curves, price of privacy) of every job.

Example:
    >>> import dponline
    >>> from dponline.datasets import load_nyse
    >>> from dponline.domains import Simplex
    >>> from dponline.experiments import Experiment, LearnerSpec
    >>> stream = dponline.losses.PortfolioLogLoss(load_nyse().relatives[:300])
    >>> fixed = dict(domain=Simplex(36), horizon=300, lipschitz=10.0, loss_bound=0.7)
    >>> exp = Experiment(
    ...     stream,
    ...     [LearnerSpec("private", dponline.PrivateBandit, fixed),
    ...      LearnerSpec("non-private", dponline.PrivateBandit, {**fixed, "epsilon": None})],
    ...     grid={"epsilon": [1.0, 10.0]}, seeds=2, checkpoints=10)
    >>> results = exp.run(backend="inline", progress=False)
    >>> results.summary()[["learner", "epsilon", "runs"]].values.tolist()
    [['private', 1.0, 2], ['private', 10.0, 2], ['non-private', nan, 2]]
    >>> fig, paths = results.plot("price_of_privacy")  # or results.save("out-dir", svg=True)
"""

from __future__ import annotations

from .._extras import require_installed
from .cache import RunCache, stream_identity
from .config import OutputOptions, build_domain, experiment_from_config, load_config, resolve_learner
from .experiment import Experiment, SweepInterrupted
from .job import float_list, format_summary, run_job
from .results import Results
from .spec import Configuration, LearnerSpec, Reference

# The harness writes Parquet tables, plots and progress bars, and locks its output folder: refuse early, naming
# the extra, when one is missing.
require_installed(("pandas", "pyarrow", "matplotlib", "tqdm", "filelock"), "dponline.experiments")

__all__ = [
    "Experiment",
    "LearnerSpec",
    "Configuration",
    "Reference",
    "Results",
    "RunCache",
    "SweepInterrupted",
    "stream_identity",
    "load_config",
    "experiment_from_config",
    "OutputOptions",
    "resolve_learner",
    "build_domain",
    "run_job",
    "format_summary",
    "float_list",
]
