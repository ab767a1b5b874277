"""The ``dponline`` command.

``dponline portfolio`` runs the package's main job: private online portfolio selection on the NYSE data
shipped with the package (private and non-private learners with bandit and full-information feedback, loss
``−ln⟨r_t, x⟩`` over the probability simplex) against the best constant-rebalanced portfolio in hindsight
(BCRP), the uniform one (UCRP) and the best single stock; see :mod:`dponline.jobs.portfolio`.

``dponline experts`` and ``dponline bandit`` run the Agarwal-Singh learners on real expert and bandit data
(:mod:`dponline.jobs.experts`); ``dponline local`` the local-DP learners of van der Hoeven on real streams
(:mod:`dponline.jobs.local`); ``dponline display`` the private submodular learners of Perez-Salazar & Cummings
on Open Bandit clicks (:mod:`dponline.jobs.display`).

``dponline sweep CONFIG.toml`` runs any sweep a configuration file describes (learners × parameter grid ×
seeds, see :mod:`dponline.experiments`): exit code 0 when every run finished, 1 when some failed (the
summary counts them), 2 for a usage or configuration error, 130 when interrupted (finished runs are kept).
"""

from __future__ import annotations

import argparse
import time

from . import __version__
from .experiments import load_config
from .jobs import display, experts, local, portfolio
from .jobs._args import add_execution_flags, built, run_sweep

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dponline`` command."""
    parser = argparse.ArgumentParser(prog="dponline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"dponline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    portfolio.add_parser(sub)
    experts.add_parsers(sub)
    local.add_parser(sub)
    display.add_parser(sub)

    s = sub.add_parser(
        "sweep",
        help="run the sweep a TOML file describes (learners x parameter grid x seeds)",
        description="Run the sweep described by CONFIG.toml (format: README, 'Sweeps'): every learner at every "
        "grid point for every seed, on a process pool (default), in-process (--workers 1) or on a Dask cluster "
        "(--scheduler). Finished runs are cached under OUT/cache: rerunning resumes an interrupted sweep.",
    )
    s.add_argument("config", help="the sweep's TOML file")
    s.add_argument("--out", default="dponline-sweep", help="output directory (default ./dponline-sweep)")
    add_execution_flags(s)
    s.set_defaults(func=_sweep, parser=s)
    return parser


def _sweep(args: argparse.Namespace) -> int:
    experiment, options = built(args, lambda a: load_config(a.config))
    return run_sweep(args, experiment, args.out, format=options.format, svg=options.svg)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dponline`` console script."""
    args = build_parser().parse_args(argv)
    began = time.perf_counter()
    status = args.func(args)
    if not getattr(args, "quiet", False):
        print(f"done in {time.perf_counter() - began:.1f}s")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
