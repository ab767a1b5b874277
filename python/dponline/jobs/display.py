"""``dponline display``: choose k display slots among 80 items on real click probabilities, privately.

Each round shows ``k`` of the 80 Open Bandit items; a user with per-item click probabilities ``p_a^t`` (built
from the logged rounds, :func:`dponline.datasets.open_bandit_round_probabilities`) clicks at least one with
probability ``f_t(S) = 1 − Π_{a∈S}(1 − p_a^t)``. Learners (Perez-Salazar & Cummings 2021): full information
(FI-DP, Algorithm 2) and bandit feedback (BanditDP, Algorithm 3), private at each ε and not, on common random
numbers, against greedy in hindsight with the (1 − 1/e) factor; and the continuous DR-submodular learner
(Algorithm 4, :class:`dponline.PrivateDRSubmodular`) on a partition matroid of the items — at most one item per
value of the categorical ``item_feature_3`` (7 categories, so up to 7 slots;
:func:`dponline.datasets.open_bandit_item_blocks`), its regret measured against greedy on that matroid. Prints
expected clicks and (1 − 1/e)-regret with 95% intervals over seeds and the guarantees (per replaced ``f_t``
and per logged round of the bootstrapped stream); writes ``display.csv`` and ``display.png``.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from .. import privacy
from ..datasets import open_bandit_item_blocks, open_bandit_round_probabilities
from ..domains import PartitionMatroid
from ..errors import InvalidInputError
from ..learners import PrivateDRSubmodular, PrivateSubmodular
from ..regret import APPROXIMATION, greedy_in_hindsight, matroid_greedy_in_hindsight, submodular_regret_curve
from ..submodular import ProbabilisticCoverage
from ._args import add_seed_flags, delta, epsilons, positive_int, randomness_text

__all__ = ["add_parser", "run"]

DR_FEATURE = 3
"""The categorical item feature whose values are the blocks of the DR-submodular learner's partition matroid."""
DR_CAPACITY = 1
"""Items per block (category) the DR-submodular learner may show."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dponline display``."""
    p = sub.add_parser("display", help="private choice of k display slots of 80 items on Open Bandit clicks")
    p.add_argument("--k", type=positive_int, default=3, help="slots per round (default 3)")
    p.add_argument("--horizon", type=positive_int, default=10**6, help="rounds (default 10^6, bootstrapped)")
    p.add_argument("--epsilon", type=epsilons, default=[1.0], help="privacy ε, or a list such as 1,10")
    p.add_argument("--delta", type=delta, default=1e-6, help="privacy δ (default 1e-6; must be > 0)")
    p.add_argument("--seeds", type=positive_int, default=3, help="runs per learner (default 3)")
    add_seed_flags(p, stream="bootstrap", learners="learners")
    p.add_argument("--out", default="dponline-display", help="output directory (default ./dponline-display)")
    p.set_defaults(func=run, parser=p)
    return p


def _interval(x: np.ndarray) -> tuple[float, float]:
    if len(x) < 2:
        return float(x.mean()), float("nan")
    half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
    return float(x.mean()), float(half)


def run(args: argparse.Namespace) -> int:
    """Run every learner for every seed; print the table, write ``display.csv`` and ``display.png``."""
    if args.delta <= 0:
        args.parser.error("--delta must be > 0: the submodular learners are (ε, δ)-DP (Theorems 5, 7)")
    P = open_bandit_round_probabilities()
    stream = ProbabilisticCoverage(P, horizon=args.horizon, resample="bootstrap", seed=args.stream_seed)
    greedy = greedy_in_hindsight(stream, args.k)
    root = np.random.SeedSequence().entropy if args.seed is None else args.seed
    configs = [(fb, eps) for fb in ("full", "bandit", "dr") for eps in [*args.epsilon, None]]
    blocks = [list(b) for b in open_bandit_item_blocks(DR_FEATURE)]
    capacities = [DR_CAPACITY] * len(blocks)
    matroid_greedy = matroid_greedy_in_hindsight(stream, blocks, capacities)
    records: list[dict[str, Any]] = []
    curves: dict[str, list[np.ndarray]] = {}
    guarantees: dict[str, Any] = {}
    marks = None
    for feedback, epsilon in configs:
        label = "DR-submodular" if feedback == "dr" else feedback
        name = f"{label}, " + ("non-private" if epsilon is None else f"ε={epsilon:g}")
        for k in range(args.seeds):
            seed = np.random.SeedSequence(root, spawn_key=(k,))
            learner: PrivateSubmodular | PrivateDRSubmodular
            try:
                if feedback == "dr":
                    domain = PartitionMatroid(blocks, capacities, base=False)
                    learner = PrivateDRSubmodular(
                        domain, horizon=args.horizon, epsilon=epsilon, delta=args.delta, seed=seed
                    )
                else:
                    learner = PrivateSubmodular(
                        P.shape[1],
                        args.k,
                        horizon=args.horizon,
                        epsilon=epsilon,
                        delta=args.delta,
                        feedback=feedback,
                        seed=seed,
                    )
            except InvalidInputError as exc:
                args.parser.error(str(exc))
            result = learner.run(stream, checkpoints=200)
            marks = result.checkpoints
            comparator = matroid_greedy if feedback == "dr" else greedy
            curve = submodular_regret_curve(stream, result.checkpoints, result.cumulative_loss, comparator)
            curves.setdefault(name, []).append(curve)
            records.append(
                {
                    "learner": name,
                    "feedback": "full" if feedback == "dr" else feedback,
                    "epsilon": epsilon,
                    "seed": k,
                    "clicks": -result.total_loss,
                    "regret": float(curve[-1]),
                }
            )
            if epsilon is not None and name not in guarantees:
                guarantees[name] = (learner.privacy, learner.privacy_per_source_row(stream))
    lines = [f"{'learner':<27} {'expected clicks':>20} {'(1-1/e)-regret vs greedy':>26}", "-" * 75]
    for name in curves:
        mine = [r for r in records if r["learner"] == name]
        c_mean, c_half = _interval(np.array([r["clicks"] for r in mine]))
        r_mean, r_half = _interval(np.array([r["regret"] for r in mine]))
        lines.append(f"{name:<27} {c_mean:>12.1f} ± {c_half:<6.1f} {r_mean:>17.1f} ± {r_half:<6.1f}")
    lines.append(
        f"{'greedy in hindsight':<27} {greedy.total_value:>12.1f}   ((1 − 1/e)·greedy = "
        f"{APPROXIMATION * greedy.total_value:.1f}; items {greedy.items.tolist()})"
    )
    lines.append(
        f"{'greedy on the matroid':<27} {matroid_greedy.total_value:>12.1f}   (DR-submodular lines: at most "
        f"{DR_CAPACITY} item per value of item_feature_{DR_FEATURE}, {len(blocks)} categories; items "
        f"{matroid_greedy.items.tolist()})"
    )
    lines.append("(mean ± half-width of the 95% t-interval over seeds)")
    lines.append("")
    lines.append("privacy (replacing one round's click function f_t):")
    for name, (per_round, per_row) in guarantees.items():
        lines.append(f"  {name}: (ε={per_round.epsilon:g}, δ={per_round.delta:.3g}) — {per_round.source}")
        lines.append(
            f"    per logged round (used in up to {privacy.row_multiplicity(stream)} rounds): "
            f"(ε={per_row.epsilon:.4g}, δ={per_row.delta:.3g})"
        )
    lines.append(f"  randomness: {randomness_text(args.seed)}")
    lines.append("  not private: clicks, regrets and the greedy comparator are evaluations computed from the data")
    print("\n".join(lines))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "display.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    _plot(out / "display.png", marks, curves, args.k, args.seeds)
    print(f"\nwrote {out / 'display.csv'}, {out / 'display.png'}")
    return 0


def _plot(path: Path, marks: Any, curves: dict[str, list[np.ndarray]], k: int, seeds: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=120)
    for name, runs in curves.items():
        stacked = np.vstack(runs)
        mean = stacked.mean(axis=0)
        (line,) = ax.plot(marks, mean, label=name, linewidth=1.2)
        if len(runs) > 1:
            half = stats.t.ppf(0.975, len(runs) - 1) * stacked.std(axis=0, ddof=1) / math.sqrt(len(runs))
            ax.fill_between(marks, mean - half, mean + half, color=line.get_color(), alpha=0.2, linewidth=0)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("round t")
    ax.set_ylabel("(1 − 1/e)-regret vs greedy in hindsight")
    ax.set_title(f"Open Bandit clicks, k = {k} of 80 items", fontsize=9)
    ax.legend(title=f"mean, band = 95% t-interval over {seeds} seed(s)", fontsize=7, title_fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
