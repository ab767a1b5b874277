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
seeds, see :mod:`dponline.experiments`).

Every job prints its do-nothing baseline and the non-private twin of each private learner, and ends with one
``verdict —`` line per private learner (regret: + = worse; ± = 95% t-interval over seeds). Exit codes: 0 when
every run finished, 1 when some failed (the summary counts them), 2 for a usage, configuration or output error
(one line: a bad flag, an unwritable or busy ``--out``, a full disk), 130 when interrupted (one line; finished
runs of a sweep are kept in ``OUT/cache`` for a rerun to resume, and the previous outputs are unchanged).
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import time

from . import __version__
from .errors import InvalidInputError
from .experiments import SweepInterrupted, load_config
from .experiments.outputs import exclusive_output
from .jobs import _args, display, experts, local, portfolio
from .jobs._args import add_execution_flags, built, plain, run_sweep

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dponline`` command."""
    parser = argparse.ArgumentParser(
        prog="dponline", description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
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
        "(--scheduler). Finished runs are cached under OUT/cache: rerunning resumes an interrupted sweep. The table "
        "gives each configuration's regret (+ = worse, 95% t-intervals) against every comparator, and a verdict per "
        "private learner against the do-nothing baseline (sweep.baseline; default the uniform point of a simplex) "
        'and against its non-private twin (the same learner with epsilon = "none").',
    )
    s.add_argument("config", help="the sweep's TOML file")
    s.add_argument("--out", default="dponline-sweep", help="output directory (default ./dponline-sweep)")
    s.add_argument(
        "--seeds", type=_args.positive_int, default=None, help="runs per configuration (default: the file's)"
    )
    s.add_argument("--seed", type=_args.nonnegative_int, default=None, help="root seed (default: the file's root_seed)")
    s.add_argument("--epsilon", type=_args.epsilons, default=None, help="ε grid replacing the file's (0.1,1,10)")
    add_execution_flags(s)
    s.set_defaults(func=_sweep, parser=s)
    return parser


def _sweep(args: argparse.Namespace) -> int:
    with exclusive_output(args.out):  # refused before anything is computed
        experiment, options = built(
            args, lambda a: load_config(a.config, seeds=a.seeds, root_seed=a.seed, epsilon=a.epsilon)
        )
        status = run_sweep(args, experiment, args.out, format=options.format, svg=options.svg)
    return status


def _error(args: argparse.Namespace, message: str) -> int:
    print(f"{args.parser.prog}: error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dponline`` console script: run the job and map its end to an exit code (0 done,
    1 some runs failed, 2 usage or output error, 130 interrupted), with one line on standard error for 2 and
    130. As the command itself (``argv=None``), an interrupted job exits at once: the finished runs and any
    outputs are already on disk, and waiting for the process pool's threads at interpreter exit could hang."""
    status = _main(argv)
    if argv is None and status == 130:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    return status


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    began = time.perf_counter()
    try:
        status = args.func(args)
    except SweepInterrupted as stop:
        done = stop.results.execution["finished"]
        print(
            f"\n{args.parser.prog}: interrupted — {done} finished run(s) kept in the cache of {args.out}; rerun the "
            "same command to resume (the previous outputs are unchanged)",
            file=sys.stderr,
        )
        return 130
    except KeyboardInterrupt:
        print(
            f"\n{args.parser.prog}: interrupted — nothing written (the previous outputs are unchanged)", file=sys.stderr
        )
        return 130
    except InvalidInputError as exc:  # --out unwritable or held by another job, --k too large ...
        return _error(args, str(exc))
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return _error(
                args,
                f"no space left on the device writing {exc.filename or args.out}; the previous "
                "outputs are unchanged and no temporary file is left",
            )
        return _error(args, f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}")
    if not getattr(args, "quiet", False):
        print(f"done in {time.perf_counter() - began:.1f}s")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
