"""``dponline experts`` and ``dponline bandit``: the Agarwal-Singh learners on real data, as sweep presets.

* ``experts`` — prediction with expert advice, full information: DP-FTRL with the entropy regulariser
  (Agarwal-Singh Algorithm 1, Corollary 3.2) at each ε, its non-private version, and DP-FTPL (Algorithm 3) when
  δ > 0, on the 538 Trump-approval pollsters (each pollster an expert, loss = its squared error against the 538
  average, normalised by a declared 10-point range) or on NYSE with one expert per stock (loss
  ``1 − r_{t,i}/max_j r_{t,j}``). Losses lie in ``[0, 1]`` by construction, so the declared bounds are
  ``‖ℓ‖₁ ≤ n`` (Laplace), ``‖ℓ‖₂ ≤ √n`` (Gaussian) and ``‖ℓ‖_∞ ≤ 1`` (the step size).
* ``bandit`` — multi-armed bandit with 80 arms whose click probabilities are the smoothed item click-through
  rates of the Open Bandit Dataset sample (loss = no click): PrivateEXP3 (Algorithms 4-5) at each ε and plain
  EXP3. The stream is a table of Bernoulli draws (seeded by ``--stream-seed``) bootstrapped to the horizon.

Comparators: the best fixed expert / arm in hindsight, and the do-nothing baseline ``uniform`` — uniform
weights over the experts, or a uniformly random arm (its expected loss). The table gives every learner's loss
and regret (+ = worse) with 95% t-intervals over seeds, and one verdict per private learner: whether it beats
the baseline and what privacy costs against its non-private twin, or that the difference is within noise and
about how many seeds would resolve it. Outputs as for every sweep (``runs.parquet``, ``summary.csv``,
``metadata.json``, regret and price-of-privacy plots), replaced all at once at the end; finished runs are
cached in OUT/cache so an interrupted run resumes.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

import numpy as np

from .. import datasets, losses
from .._options import CALIBRATIONS
from ..domains import Simplex
from ..experiments import Experiment, format_summary
from ..experiments.verdict import vacuous
from ..learners import DPFTPL, DPFTRL, PrivateEXP3
from . import _args

__all__ = ["add_parsers", "experts_experiment", "bandit_experiment"]

_BANDIT_TABLE_ROWS = 20_000


def _common(p: argparse.ArgumentParser, *, delta_default: float) -> None:
    p.add_argument("--epsilon", type=_args.epsilons, default=[1.0], help="privacy ε, or a list such as 0.1,1,10")
    p.add_argument("--horizon", type=_args.positive_int, default=None, help="rounds T (default: the data's length)")
    p.add_argument("--seeds", type=_args.positive_int, default=4, help="runs per learner (default 4)")
    _args.add_seed_flags(p, stream="resampling", learners="learners' noise")
    p.add_argument("--out", default=None, help="output directory (default ./dponline-<job>)")
    _args.add_execution_flags(p)
    if delta_default >= 0:
        p.add_argument(
            "--delta",
            type=_args.delta,
            default=delta_default,
            help=f"privacy δ (default {delta_default:g}: Laplace noise, DP-FTRL only; δ > 0: Gaussian noise, and "
            "DP-FTPL too, which needs δ > 0)",
        )


def add_parsers(sub: Any) -> None:
    """Register ``dponline experts`` and ``dponline bandit``."""
    e = sub.add_parser(
        "experts",
        help="private prediction with expert advice on real data (DP-FTRL, DP-FTPL)",
        **_args.parser_options(__doc__),
    )
    e.add_argument("--data", choices=["trump", "nyse"], default="trump", help="the experts' losses (default trump)")
    e.add_argument(
        "--calibration",
        choices=CALIBRATIONS,
        default=None,
        help="noise calibration (default: the tightest proved one for the sampler; 'paper': the lemma's constants)",
    )
    _common(e, delta_default=0.0)
    e.set_defaults(func=_run, build=experts_experiment, parser=e, job="experts")
    b = sub.add_parser(
        "bandit",
        help="private multi-armed bandit on Open Bandit click rates (PrivateEXP3)",
        **_args.parser_options(__doc__),
    )
    _common(b, delta_default=-1.0)
    b.set_defaults(func=_run, build=bandit_experiment, parser=b, job="bandit")


def _resampled(matrix: np.ndarray, horizon: int | None, seed: int) -> tuple[Any, str]:
    rows = matrix.shape[0]
    if horizon is None or horizon <= rows:
        T = horizon or rows
        return losses.Linear(matrix[:T]), f"the first {T} rounds in order"
    stream = losses.Linear(matrix, horizon=horizon, resample="bootstrap", seed=seed)
    return stream, f"{horizon} rounds bootstrapped from {rows} (stream seed {seed})"


def experts_experiment(args: argparse.Namespace) -> Experiment:
    """The experts sweep the flags describe."""
    if args.data == "trump":
        matrix = np.asarray(datasets.trump_approval_expert_losses())
        what = "538 Trump approval, 5 pollsters as experts (squared error vs the 538 average, declared 10-point range)"
    else:
        matrix = np.asarray(datasets.nyse_expert_losses())
        what = "NYSE, 36 stocks as experts (loss 1 − r/max r)"
    stream, order = _resampled(matrix, args.horizon, args.stream_seed)
    n, T = stream.dim, int(stream.horizon)
    fixed = {
        "domain": Simplex(n),
        "horizon": T,
        "delta": args.delta,
        "regularizer": "entropy",
        # Losses in [0, 1]^n: ‖ℓ‖₁ ≤ n, ‖ℓ‖₂ ≤ √n, ‖ℓ‖_∞ ≤ 1 (declared by construction, not measured).
        "loss_bound": float(n) if args.delta == 0 else math.sqrt(n),
        "dual_bound": 1.0,
        "calibration": args.calibration,
    }
    specs = _args.with_non_private_twin("DP-FTRL", "FTRL, non-private", DPFTRL, fixed)
    if args.delta > 0:
        ftpl = {"domain": fixed["domain"], "horizon": T, "delta": args.delta, "loss_bound": math.sqrt(n)}
        specs += _args.with_non_private_twin("DP-FTPL", "FTPL, non-private", DPFTPL, ftpl)
    return _args.preset_experiment(
        args,
        stream,
        specs,
        checkpoints=min(500, T),
        domain=fixed["domain"],
        name="dponline experts",
        description=f"{what}: {order}",
        unit="loss units",
    )


def bandit_experiment(args: argparse.Namespace) -> Experiment:
    """The bandit sweep the flags describe."""
    clicks = np.asarray(datasets.open_bandit_click_probabilities())
    draws = np.random.default_rng(args.stream_seed).random((_BANDIT_TABLE_ROWS, clicks.size))
    matrix = (draws >= clicks).astype(np.float64)  # loss 1 = no click
    horizon = args.horizon or 10**6
    stream = losses.Linear(matrix, horizon=horizon, resample="bootstrap", seed=args.stream_seed)
    fixed = {"arms": clicks.size, "horizon": horizon, "loss_bound": 1.0}
    specs = _args.with_non_private_twin("PrivateEXP3", "EXP3, non-private", PrivateEXP3, fixed)
    return _args.preset_experiment(
        args,
        stream,
        specs,
        checkpoints=500,
        domain=Simplex(clicks.size),
        name="dponline bandit",
        description=f"80 Open Bandit items as arms (smoothed click rates; loss = no click), {horizon} rounds "
        f"bootstrapped from {_BANDIT_TABLE_ROWS} seeded Bernoulli rounds (stream seed {args.stream_seed})",
        unit="clicks",
    )


_BASELINE_NAMES = {
    "experts": {"uniform": "uniform weights", "best": "best expert"},
    "bandit": {"uniform": "a uniformly random arm", "best": "best arm"},
}


def _run(args: argparse.Namespace) -> int:
    names = _BASELINE_NAMES[args.job]
    args.out = args.out or f"dponline-{args.job}"
    return _args.run_preset(
        args, args.build, args.out, report=lambda r: format_summary(r, names=names, notes=_privacy_lines(r, args))
    )


def _privacy_lines(results: Any, args: argparse.Namespace) -> str:
    lines = ["privacy (per round's loss vector / observed loss, replacement of one round):"]
    for c in results.configurations:
        if c.privacy:
            g = c.privacy
            lines.append(
                f"  {c.label}: (ε={g['epsilon']:g}, δ={g['delta']:g}) — {g['source']}"
                + vacuous(g["epsilon"], g["delta"])
            )
    if args.job == "experts" and args.delta == 0:
        lines.append(
            "  DP-FTPL skipped: its Gaussian perturbation (Agarwal-Singh Algorithm 3) needs δ > 0; pass --delta 1e-6 "
            "to run it"
        )
    lines.append(f"  randomness: {_args.randomness_text(args.seed)}")
    lines.append("  not private: losses and regrets are evaluations computed from the data")
    return "\n".join(lines)
