"""``dponline portfolio``: private online portfolio selection on the NYSE data (the package's main job).

A preset of :mod:`dponline.experiments`: the stream is the 5,651 real NYSE days (or a bootstrap of them), each
day's price relatives clipped to a range declared before seeing the data (default ``[0.5, 2]``), so the bounds
that set the noise — ``|f_t| ≤ ln 2`` and the Lipschitz constant — do not depend on the stream. Learners, at
the same ``(ε, δ)`` and on common random numbers (run ``k`` of every learner shares seed ``k``):

* PrivateBandit (Ene-Nguyen-Vladu, bandit feedback) and its non-private version;
* DP-FTRL on the linearised log-loss with the entropy regulariser (Agarwal-Singh, full information) and its
  non-private version.

The private learners release their noisy prefix sums through ``--mechanism`` (default: each learner's own —
for DP-FTRL the lowest-noise mechanism with a proved regret bound, BLT for Gaussian noise and Honaker for Laplace,
its step size tuned to that bound; for PrivateBandit the papers' padded tree). ``tree``, ``honaker`` or ``blt``
set both; with ``--top-up`` DP-FTRL's releases are raised to identically distributed Gaussian noise (Agarwal-Singh's
Theorem 3.1 then holds too).

Comparators in hindsight: the best constant-rebalanced portfolio (BCRP), the uniform one (UCRP) and the best
single stock. The table reports log-wealth (a gain: higher is better) and regrets (+ = worse) in nats with
95% t-intervals over seeds, the noise (σ of the lemma and of the exact calibration), the privacy guarantee per
round and per source day (flagged when vacuous), how the randomness was keyed, and one verdict per private
learner: whether it beats the uniform portfolio (the do-nothing baseline) and what privacy costs against its
non-private twin, each with its 95% interval, or that the difference is within noise and about how many seeds
would resolve it.

Outputs in --out: runs.parquet, summary.csv, runs_index.csv, metadata.json, regret.png (and
price_of_privacy.png for several ε), replaced all at once at the end; finished runs are cached in OUT/cache so
an interrupted run resumes (an unseeded run's cache is keyed by run position, never by its seeds, and is deleted
once the job completes).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .. import losses, privacy, regret
from .._options import CALIBRATIONS, MECHANISMS
from ..datasets import load_nyse
from ..domains import Simplex
from ..errors import InvalidInputError
from ..experiments import Experiment, LearnerSpec, Results
from ..experiments.job import cell, float_list
from ..experiments.verdict import format_number, vacuous
from ..learners import DPFTRL, PrivateBandit
from . import _args

__all__ = ["add_parser", "build_experiment", "report", "run"]

_RANGE_DEFAULT = (0.5, 2.0)
_FLOAT_CAVEAT = "\n    floating-point noise: holds for the real-valued mechanism only (Mironov 2012)"


def _range(text: str) -> tuple[float, float]:
    values = float_list(text)
    if len(values) != 2 or not (0.0 < values[0] <= 1.0 <= values[1]):
        raise argparse.ArgumentTypeError(f"expected 'a,b' with 0 < a <= 1 <= b, got {text!r}")
    return values[0], values[1]


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dponline portfolio`` on the CLI's sub-parsers."""
    p = sub.add_parser(
        "portfolio",
        help="private online portfolio selection on the NYSE data (main job)",
        **_args.parser_options(__doc__),
    )
    p.add_argument(
        "--epsilon", type=_args.epsilons, default=[1.0], help="privacy ε, or a list such as 0.1,1,10 (default 1)"
    )
    p.add_argument(
        "--delta",
        type=_args.delta,
        default=1e-6,
        help="privacy δ (default 1e-6: Gaussian noise, Lemma 5.4; 0: Laplace noise, Lemma 5.1)",
    )
    p.add_argument(
        "--horizon",
        type=_args.positive_int,
        default=None,
        help="rounds T (default: the 5651 real days; larger T bootstraps)",
    )
    p.add_argument("--seeds", type=_args.positive_int, default=4, help="runs per learner (default 4)")
    p.add_argument(
        "--calibration",
        choices=CALIBRATIONS,
        default=None,
        help="noise calibration (default: the tightest proved one for the sampler, exact discrete noise; "
        "'paper': the lemmas' constants; both scales are printed)",
    )
    p.add_argument(
        "--mechanism",
        choices=MECHANISMS,
        default=None,
        help="prefix-sum mechanism of the private learners (default: each learner's own — DP-FTRL: 'blt' for "
        "Gaussian, 'honaker' for Laplace noise, the lowest-noise ones with a proved regret bound; PrivateBandit: "
        "'tree', the papers' padded tree)",
    )
    p.add_argument(
        "--top-up",
        action="store_true",
        help="with --mechanism honaker or blt and --delta > 0: DP-FTRL's releases topped up to the mechanism's "
        "largest per-release variance, so Agarwal-Singh's bound holds (floating-point Gaussian noise: the "
        "Mironov 2012 caveat)",
    )
    p.add_argument(
        "--relative-range",
        type=_range,
        default=_RANGE_DEFAULT,
        metavar="A,B",
        help="declared range of daily price relatives; values outside are clipped (default 0.5,2)",
    )
    p.add_argument(
        "--uncentred",
        action="store_true",
        help="feed DP-FTRL the raw gradients -r/<r,x> (default: centred at the midpoint of their declared range: "
        "on the simplex the same FTRL problem, but the declared bounds, hence the noise, shrink by (1 - a^2/b^2)/2)",
    )
    _args.add_seed_flags(p, stream="bootstrap", learners="learners' noise")
    p.add_argument("--out", default="dponline-results", help="output directory (default ./dponline-results)")
    _args.add_execution_flags(p)
    p.set_defaults(func=run, parser=p)
    return p


def _full_information_learners(
    domain: Simplex, horizon: int, stream: Any, args: argparse.Namespace
) -> list[LearnerSpec]:
    """DP-FTRL on the linearised log-loss (Agarwal-Singh) and its non-private version."""
    # The gradient of −ln⟨r, x⟩ is −r/⟨r, x⟩; with relatives in [a, b] every coordinate lies in [−b/a, −a/b].
    # By default DP-FTRL is fed g − c·1 with c the midpoint (declared, not measured): on the simplex this changes
    # no action and no regret, and the centred coordinates lie in ±(b/a − a/b)/2, which bounds the L∞ norm (the
    # entropy regulariser's dual norm: sets η) and n / √n times it the L1 / L2 norm (the tree's sensitivity for
    # Laplace / Gaussian noise). --uncentred: c = 0 and the bounds b/a, n·b/a, √n·b/a.
    # (losses.portfolio_gradient_bounds has the derivation.)
    bounds = losses.portfolio_gradient_bounds(
        args.relative_range,
        stream.dim,
        norm="l1" if args.delta == 0 else "l2",
        centred=not args.uncentred,
    )
    fixed = {
        "domain": domain,
        "horizon": horizon,
        "delta": args.delta,
        **bounds,
        "regularizer": "entropy",
        "calibration": args.calibration,
    }
    private: dict[str, Any] = {"mechanism": args.mechanism}  # None: DPFTRL's default
    if args.top_up:
        if args.mechanism == "tree" or args.delta == 0:
            raise InvalidInputError(
                "--top-up needs --mechanism honaker or blt and --delta > 0 (Gaussian noise; the padded tree's "
                "releases are identically distributed already)"
            )
        private.update(top_up=True, sampler="floating-point")
    return _args.with_non_private_twin("DP-FTRL (full information)", "FTRL, non-private", DPFTRL, fixed, **private)


def build_experiment(args: argparse.Namespace) -> Experiment:
    """The portfolio experiment the flags describe (validated: a bad value raises ``InvalidInputError``)."""
    data = load_nyse()
    rows = data.n_days
    horizon = args.horizon or rows
    if horizon <= rows:
        stream = losses.PortfolioLogLoss(data.relatives[:horizon], relative_range=args.relative_range)
        description = f"the first {horizon} NYSE trading days in order"
    else:
        stream = losses.PortfolioLogLoss(
            data.relatives,
            relative_range=args.relative_range,
            horizon=horizon,
            resample="bootstrap",
            seed=args.stream_seed,
        )
        description = f"{horizon} days bootstrapped from the {rows} NYSE days (stream seed {args.stream_seed})"
    a, b = args.relative_range
    description += f", relatives clipped to [{a:g}, {b:g}]"
    domain = Simplex(stream.dim)
    bandit = {
        "domain": domain,
        "horizon": horizon,
        "delta": args.delta,
        "lipschitz": stream.lipschitz,
        "loss_bound": stream.loss_bound,
        "calibration": args.calibration,
    }
    specs = [
        *_args.with_non_private_twin(
            "PrivateBandit", "bandit, non-private", PrivateBandit, bandit, mechanism=args.mechanism or "tree"
        ),
        *_full_information_learners(domain, horizon, stream, args),
    ]
    ucrp = np.full(stream.dim, 1.0 / stream.dim)
    best_stock = int(np.argmin(stream.row_counts().astype(np.float64) @ -np.log(stream.data)))
    stock = np.eye(stream.dim)[best_stock]
    comparators = {
        "BCRP": regret.best_constant_rebalanced_portfolio(stream),
        "UCRP": regret.Comparator(
            x=ucrp, total_loss=float(stream.cumulative_at(ucrp, [horizon])[0]), gap=0.0, method="uniform CRP"
        ),
        "best stock": regret.Comparator(
            x=stock,
            total_loss=float(stream.cumulative_at(stock, [horizon])[0]),
            gap=0.0,
            method=f"best single stock in hindsight (column {best_stock})",
        ),
    }
    # Common random numbers: the same sphere directions for the private and the non-private bandit learner.
    return _args.preset_experiment(
        args,
        stream,
        specs,
        checkpoints=min(1000, horizon),
        comparators=comparators,
        name="dponline portfolio",
        description=description,
        baseline="UCRP",
        unit="nats",
    )


def _scale(value: Any) -> str:
    """A noise scale for the table; ``-`` where the learner has none (no lemma for the mechanism: NaN, recorded as
    text in the cache)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return "-"
    return "-" if number != number else f"{number:.3g}"


def report(results: Results, args: argparse.Namespace, multiplicity: int) -> str:
    """The job's table: wealth and regrets in nats with 95% intervals, noise, privacy, verdicts."""
    table = results.summary()
    configs = results.configurations
    lines = [
        f"{'':<28} {'':>6} {'':>25} {'gain':>14} {'regret (+ = worse) vs':^47}",
        f"{'learner':<28} {'ε':>6} {'noise σ (lemma / exact)':>25} {'log-wealth':>14} "
        f"{'BCRP':>15} {'UCRP':>15} {'best stock':>15}",
    ]
    lines.append("-" * len(lines[1]))
    for config, (_, row) in zip(configs, table.iterrows(), strict=True):
        params = config.learner_params or {}
        eps = config.kwargs.get("epsilon")
        if eps is None:
            noise = "none"
        elif "lemma_scale" in params:
            noise = f"{_scale(params['lemma_scale'])} / {_scale(params['exact_scale'])}"
        else:
            noise = _scale(params.get("noise_scale"))
        lines.append(
            f"{config.name[:28]:<28} {'-' if eps is None else f'{eps:g}':>6} {noise:>25} "
            f"{cell(row, 'loss', scale=-1.0):>14} {cell(row, 'regret_bcrp', signed=True):>15} "
            f"{cell(row, 'regret_ucrp', signed=True):>15} {cell(row, 'regret_best_stock', signed=True):>15}"
        )
    for name, comp in results.metadata()["comparators"].items():
        label = "UCRP (uniform, baseline)" if name == "UCRP" else f"{name} (hindsight)"
        lines.append(f"{label:<28} {'':>6} {'':>25} {format_number(-comp['total_loss']):>14}")
    lines.append(
        "(log-wealth and regrets in nats; regret = learner's loss − comparator's, + = worse; mean ± half-width "
        "of the 95% t-interval over seeds; σ per coordinate of each tree node's noise)"
    )
    lines.append("")
    guarantees = [(c, c.privacy) for c in configs if c.privacy]
    if guarantees:
        guarantee = guarantees[0][1]
        lines.append("privacy (each private learner, at its ε):")
        for c, g in guarantees:
            lines.append(
                f"  {c.label}: (ε={g['epsilon']:g}, δ={g['delta']:g}) per {g['unit']} — {g['source']}"
                + vacuous(g["epsilon"], g["delta"])
                + (_FLOAT_CAVEAT if g.get("sampler") == "floating-point" else "")
            )
            row_g = c.privacy_per_source_row
            if isinstance(row_g, dict) and multiplicity > 1:
                lines.append(
                    f"    per NYSE day (a day is used in up to {multiplicity} rounds): "
                    f"(ε={row_g['epsilon']:.4g}, δ={row_g['delta']:.3g})" + vacuous(row_g["epsilon"], row_g["delta"])
                )
        lines.append(f"  neighbouring: {guarantee['neighbouring']}")
    lines.append(f"  randomness: {_args.randomness_text(args.seed)}")
    lines.append("  not private: the log-wealths, regrets and comparators above are evaluations computed from the data")
    lines.append("")
    lines.extend(results.verdicts("the uniform portfolio (UCRP)"))
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the job: build, sweep (cached, resumable), write outputs, print the report."""

    def build(a: argparse.Namespace) -> Experiment:
        experiment = build_experiment(a)
        multiplicity = privacy.row_multiplicity(experiment.stream)
        options["report"] = lambda r: report(r, a, multiplicity)
        return experiment

    options: dict[str, Any] = {}
    return _args.run_preset(args, build, args.out, report=lambda r: options["report"](r))
