"""The ``dponline`` command.

``dponline portfolio`` runs the package's main job: private online portfolio selection with bandit
feedback on the NYSE data shipped with the package (Ene-Nguyen-Vladu's PrivateBandit over the probability
simplex, loss ``−ln⟨r_t, x⟩``), against the non-private learner, the best constant-rebalanced portfolio in
hindsight (BCRP) and the uniform constant-rebalanced portfolio (UCRP).

``dponline sweep CONFIG.toml`` runs any sweep a configuration file describes (learners × parameter grid ×
seeds, see :mod:`dponline.experiments`): exit code 0 when every run finished, 1 when some failed (the
summary counts them), 2 for a usage or configuration error, 130 when interrupted (finished runs are kept).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__, losses, regret
from .datasets import load_nyse
from .domains import Simplex
from .learners import PrivateBandit

__all__ = ["main"]


def _wealth(log_wealth: float) -> str:
    return f"{math.exp(log_wealth):.4g}" if log_wealth < 700 else f"e^{log_wealth:.1f}"


def _portfolio(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    data = load_nyse()
    rows = data.n_days
    horizon = args.horizon or rows
    if horizon <= rows:
        family = losses.PortfolioLogLoss(data.relatives[:horizon], relative_range=(0.5, 2.0))
        stream = f"the first {horizon} NYSE trading days, in order"
    else:
        family = losses.PortfolioLogLoss(
            data.relatives, relative_range=(0.5, 2.0), horizon=horizon, resample="bootstrap", seed=args.stream_seed
        )
        stream = f"{horizon} days bootstrapped from the {rows} NYSE days (seed {args.stream_seed})"
    n = data.n_assets
    domain = Simplex(n)
    lipschitz = family.lipschitz
    loss_bound = family.loss_bound
    best = regret.best_constant_rebalanced_portfolio(family)
    ucrp_loss = float(family.cumulative_at(np.full(n, 1.0 / n), [horizon])[0])

    configs = [("private", args.epsilon, args.delta), ("non-private", None, 0.0)]
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in configs}
    curves: dict[str, list[np.ndarray]] = {name: [] for name, _, _ in configs}
    checkpoints = None
    learners: dict[str, PrivateBandit] = {}
    bar = tqdm(total=2 * args.seeds, unit="run", desc="dponline portfolio", disable=args.quiet)
    for seed in range(args.seeds):
        for name, eps, delta in configs:
            learner = PrivateBandit(
                domain,
                horizon=horizon,
                epsilon=eps,
                delta=delta,
                lipschitz=lipschitz,
                loss_bound=loss_bound,
                calibration=args.calibration,
                seed=np.random.SeedSequence([seed, eps is None]),
            )
            result = learner.run(family, checkpoints=min(10_000, horizon))
            checkpoints = result.checkpoints
            curve = regret.regret_curve(family, result.checkpoints, result.cumulative_loss, best)
            curves[name].append(curve)
            learners[name] = learner
            runs[name].append(
                {
                    "seed": seed,
                    "total_loss": result.total_loss,
                    "log_wealth": -result.total_loss,
                    "regret": result.total_loss - best.total_loss,
                    "seconds": result.seconds,
                    "clipped": result.clipped,
                }
            )
            bar.update(1)
    bar.close()

    table = []
    for name, eps, delta in configs:
        rs = runs[name]
        learner = learners[name]
        reg = np.array([r["regret"] for r in rs])
        table.append(
            {
                "learner": name,
                "T": horizon,
                "n": n,
                "epsilon": eps,
                "delta": delta if eps is not None else None,
                "noise": f"{learner.params['noise']} {learner.params['noise_scale']:.3g}"
                if eps is not None
                else "none",
                "log_wealth": float(np.mean([r["log_wealth"] for r in rs])),
                "regret": float(reg.mean()),
                "regret_sd": float(reg.std(ddof=1)) if len(reg) > 1 else 0.0,
                "regret_per_round": float(reg.mean() / horizon),
                "seconds": float(np.mean([r["seconds"] for r in rs])),
            }
        )

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    private = learners["private"]
    summary = {
        "dponline": __version__,
        "job": "portfolio",
        "stream": stream,
        "horizon": horizon,
        "assets": n,
        "seeds": args.seeds,
        "lipschitz": lipschitz,
        "privacy": None
        if private.privacy is None
        else {
            "epsilon": private.privacy.epsilon,
            "delta": private.privacy.delta,
            "source": private.privacy.source,
            "notes": private.privacy.notes,
        },
        "params": {k: (v if not isinstance(v, np.generic) else v.item()) for k, v in private.params.items()},
        "bcrp": {"log_wealth": -best.total_loss, "weights": best.x.tolist(), "gap": best.gap},
        "ucrp": {"log_wealth": -ucrp_loss},
        "summary": table,
        "runs": runs,
    }
    (out / "results.json").write_text(json.dumps(summary, indent=2))
    assert checkpoints is not None
    with open(out / "regret.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        header = ["t"]
        for name, _, _ in configs:
            header += [f"{name}_mean", f"{name}_min", f"{name}_max"]
        writer.writerow(header)
        stacked = {name: np.vstack(curves[name]) for name, _, _ in configs}
        for i, t in enumerate(checkpoints):
            row: list[Any] = [int(t)]
            for name, _, _ in configs:
                col = stacked[name][:, i]
                row += [f"{col.mean():.6g}", f"{col.min():.6g}", f"{col.max():.6g}"]
            writer.writerow(row)
    marks = [int(c) for c in checkpoints]
    ucrp_curve = family.cumulative_at(np.full(n, 1.0 / n), marks) - family.cumulative_at(best.x, marks)
    _plot(out / "regret.png", checkpoints, stacked, ucrp_curve, args, stream)

    _print_table(table, best, ucrp_loss, args, out, stream)
    return 0


def _plot(
    path: Path,
    checkpoints: np.ndarray,
    stacked: dict[str, np.ndarray],
    ucrp_curve: np.ndarray,
    args: argparse.Namespace,
    stream: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    labels = {
        "private": f"PrivateBandit (ε={args.epsilon:g}, δ={args.delta:g})",
        "non-private": "non-private",
    }
    for name, curves in stacked.items():
        mean = curves.mean(axis=0)
        (line,) = ax.plot(checkpoints, mean, label=labels[name])
        if len(curves) > 1:
            ax.fill_between(
                checkpoints,
                curves.min(axis=0),
                curves.max(axis=0),
                color=line.get_color(),
                alpha=0.2,
                linewidth=0,
            )
    ax.plot(checkpoints, ucrp_curve, color="grey", linestyle="--", linewidth=1, label="uniform CRP (reference)")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret vs BCRP (log-wealth)")
    ax.set_title(f"NYSE portfolio, bandit feedback: {stream}", fontsize=8)
    ax.legend(title=f"mean, band = min–max over {args.seeds} seed(s)", fontsize=8, title_fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _print_table(
    table: list[dict[str, Any]],
    best: regret.Comparator,
    ucrp_loss: float,
    args: argparse.Namespace,
    out: Path,
    stream: str,
) -> None:
    print(f"\nOnline portfolio selection with bandit feedback — {stream}")
    head = (
        f"{'learner':<12} {'T':>9} {'n':>3} {'ε':>5} {'δ':>7} {'noise':>18} {'wealth':>10} "
        f"{'regret':>10} {'regret/T':>9} {'seconds':>8}"
    )
    print(head)
    print("-" * len(head))
    for row in table:
        eps = "-" if row["epsilon"] is None else f"{row['epsilon']:g}"
        delta = "-" if row["delta"] is None else f"{row['delta']:g}"
        print(
            f"{row['learner']:<12} {row['T']:>9} {row['n']:>3} {eps:>5} {delta:>7} {row['noise']:>18} "
            f"{_wealth(row['log_wealth']):>10} {row['regret']:>10.4g} {row['regret_per_round']:>9.3g} "
            f"{row['seconds']:>8.2f}"
        )
    print(f"{'BCRP':<12} {'':>9} {'':>3} {'':>5} {'':>7} {'(hindsight)':>18} {_wealth(-best.total_loss):>10}")
    print(f"{'UCRP':<12} {'':>9} {'':>3} {'':>5} {'':>7} {'(uniform)':>18} {_wealth(-ucrp_loss):>10}")
    print(f"\nwrote {out / 'results.json'}, {out / 'regret.csv'}, {out / 'regret.png'}")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``dponline`` command."""
    parser = argparse.ArgumentParser(prog="dponline", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"dponline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser(
        "portfolio",
        help="private online portfolio selection on the NYSE data (main job)",
        description=__doc__.split("\n\n")[1],
    )
    p.add_argument("--epsilon", type=float, default=1.0, help="privacy ε (default 1)")
    p.add_argument(
        "--delta",
        type=float,
        default=1e-6,
        help="privacy δ (default 1e-6: Gaussian noise, Lemma 5.4; 0: Laplace, Lemma 5.1)",
    )
    p.add_argument(
        "--horizon",
        type=int,
        default=None,
        help="rounds T (default: the 5651 real days; larger T bootstraps the days)",
    )
    p.add_argument("--seeds", type=int, default=3, help="learner seeds per configuration (default 3)")
    p.add_argument(
        "--calibration",
        choices=["paper", "analytic", "zcdp"],
        default="paper",
        help="noise calibration (default: the paper's lemmas)",
    )
    p.add_argument("--stream-seed", type=int, default=0, help="seed of the bootstrap stream (default 0)")
    p.add_argument("--out", default="dponline-results", help="output directory (default ./dponline-results)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_portfolio)

    s = sub.add_parser(
        "sweep",
        help="run the sweep a TOML file describes (learners x parameter grid x seeds)",
        description="Run the sweep described by CONFIG.toml (format: README, 'Sweeps'): every learner at every "
        "grid point for every seed, on a process pool (default), in-process (--workers 1) or on a Dask cluster "
        "(--scheduler). Finished runs are cached under OUT/cache: rerunning resumes an interrupted sweep.",
    )
    s.add_argument("config", help="the sweep's TOML file")
    s.add_argument("--out", default="dponline-sweep", help="output directory (default ./dponline-sweep)")
    s.add_argument("--scheduler", default=None, help="address of a Dask scheduler (tcp://host:8786)")
    s.add_argument(
        "--workers",
        type=_positive_int,
        default=None,
        help="local worker processes (default: the CPUs available; 1 runs in this process)",
    )
    s.add_argument("--quiet", action="store_true", help="no progress bar")
    s.set_defaults(func=_sweep, parser=s)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def _sweep(args: argparse.Namespace) -> int:
    from .errors import InvalidInputError
    from .experiments import SweepInterrupted, load_config, run_job

    try:
        experiment, options = load_config(args.config)
    except InvalidInputError as exc:
        args.parser.error(str(exc))  # usage message, exit code 2
    try:
        results = run_job(
            experiment,
            args.out,
            workers=args.workers,
            scheduler=args.scheduler,
            format=options.format,
            svg=options.svg,
            quiet=args.quiet,
        )
    except SweepInterrupted:
        return 130
    except (InvalidInputError, OSError) as exc:  # e.g. an unreachable --scheduler, an unwritable --out
        args.parser.error(str(exc))
    return 0 if results.execution["failed"] == 0 else 1


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dponline`` console script."""
    args = build_parser().parse_args(argv)
    if args.command == "portfolio":
        if args.seeds < 1:
            print("dponline: --seeds must be >= 1", file=sys.stderr)
            return 2
    began = time.perf_counter()
    status = args.func(args)
    if not getattr(args, "quiet", False):
        print(f"done in {time.perf_counter() - began:.1f}s")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
