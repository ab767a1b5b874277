"""Private online ranking of the Open Bandit items into its 3 display positions, through dponline.experiments.

    python examples/ranking.py [--horizon 1000000] [--epsilon 1] [--delta 1e-6] [--seeds 3] [--seed N] [--out DIR]

Each round the site shows a ranking: one of the 80 items at each of the 3 positions, no item twice — a matching
of the items to the positions, a vertex of :class:`dponline.domains.BipartiteMatchingPolytope` with one
coordinate per (item, position) pair (coordinate ``3a + p``). Under a position-based click model a user clicks
the item ``a`` shown at position ``p`` with probability ``θ_p · p_t[a]``: ``p_t`` are the round's click
probabilities built from the logged Open Bandit rounds (:func:`dponline.datasets.open_bandit_round_probabilities`,
rounds bootstrapped beyond the 10,000 logged ones) and ``θ = (1, 1/log₂3, 1/2)`` is the DCG position discount, a
modelling choice: the sample's clicks per position (13, 14 and 11 in about 3,300 impressions each) cannot
estimate one. A ranking's expected clicks are then linear in it, and the loss of round ``t`` is
``⟨c_t, x⟩`` with ``c_t[a, p] = −θ_p · min(p_t[a], P)`` for the click-probability cap ``P = 0.05`` declared
before looking at the data (the largest probability is 0.035, so nothing is clipped). The declared bounds the
learners' noise depends on follow from ``P`` and ``θ`` alone: ``‖c_t‖₂ ≤ P·sqrt(80·Σθ_p²)`` and
``|⟨c_t, x⟩| ≤ P·Σθ_p``.

Learners, private at each ε and not, on common random numbers (run ``k`` of every learner uses seed ``k``):

* DP-FTPL (Agarwal & Singh 2017, Algorithm 3), full information: after each round it sees ``c_t`` (every item's
  click probability at every position) and plays the LMO — a minimum-cost matching — of the noisy cumulative loss;
* PrivateBandit (Ene, Nguyen & Vladu 2021, Algorithm 1), bandit feedback: it sees only the expected clicks of the
  ranking it showed, and plays points of the polytope (fractional rankings, i.e. distributions over rankings).

Regret is measured against the best fixed ranking in hindsight (the matching LMO on the cumulative loss) and
against the uniformly random ranking (every item equally likely at every position, the policy that logged the
data). The table reports expected clicks with 95% intervals over seeds, both regrets, the privacy guarantee per
round and per logged round, and a verdict per private learner.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

import dponline
from dponline import losses, privacy, regret
from dponline.datasets import open_bandit_round_probabilities
from dponline.domains import BipartiteMatchingPolytope
from dponline.experiments import Experiment, LearnerSpec, Results, run_job
from dponline.experiments.job import cell
from dponline.experiments.verdict import format_number

POSITIONS = 3
DISCOUNT = np.array([1.0 / math.log2(p + 2) for p in range(POSITIONS)])
"""θ_p, the DCG discount of position p (0-based)."""
CAP = 0.05
"""P, the declared cap on a click probability."""


def build_experiment(args: argparse.Namespace) -> Experiment:
    """The ranking experiment: stream, domain, learners, comparators."""
    probabilities = open_bandit_round_probabilities()
    n_items = probabilities.shape[1]
    costs = -(np.minimum(probabilities, CAP)[:, :, None] * DISCOUNT[None, None, :]).reshape(len(probabilities), -1)
    norm_bound = CAP * math.sqrt(n_items * float(DISCOUNT @ DISCOUNT))
    loss_bound = CAP * float(DISCOUNT.sum())
    stream = losses.Linear(costs, norm_bound=norm_bound, horizon=args.horizon, resample="bootstrap", seed=0)
    domain = BipartiteMatchingPolytope(n_items, POSITIONS, [(a, p) for a in range(n_items) for p in range(POSITIONS)])
    full = {"domain": domain, "horizon": args.horizon, "delta": args.delta, "loss_bound": norm_bound}
    bandit = {
        "domain": domain,
        "horizon": args.horizon,
        "delta": args.delta,
        "lipschitz": norm_bound,
        "loss_bound": loss_bound,
    }
    specs = [
        LearnerSpec("DP-FTPL (full information)", dponline.DPFTPL, full),
        LearnerSpec("FTPL, non-private", dponline.DPFTPL, {**full, "epsilon": None}),
        LearnerSpec("PrivateBandit", dponline.PrivateBandit, bandit),
        LearnerSpec("bandit, non-private", dponline.PrivateBandit, {**bandit, "epsilon": None}),
    ]
    uniform = np.full(domain.dim, 1.0 / n_items)
    comparators = {
        "best ranking": regret.best_fixed(stream, domain),
        "uniform": regret.Comparator(
            x=uniform,
            total_loss=float(stream.cumulative_at(uniform, [args.horizon])[0]),
            gap=0.0,
            method="uniformly random ranking (the logging policy)",
        ),
    }
    root = np.random.SeedSequence().entropy if args.seed is None else args.seed
    return Experiment(
        stream,
        specs,
        grid={"epsilon": args.epsilon},
        seeds=args.seeds,
        root_seed=args.seed,
        seed_fn=lambda i, j, k: np.random.SeedSequence(root, spawn_key=(k,)),
        checkpoints=min(200, args.horizon),
        comparators=comparators,
        name="Open Bandit ranking",
        baseline="uniform",
        unit="clicks",
        description=(
            f"{args.horizon} rounds bootstrapped from the 10,000 logged Open Bandit rounds; 80 items into "
            f"{POSITIONS} positions, position-based clicks with the DCG discount; losses = minus expected clicks"
        ),
    )


def report(results: Results, args: argparse.Namespace, multiplicity: int) -> str:
    """Expected clicks and regrets with 95% intervals, privacy, and a verdict per private learner."""
    table = results.summary()
    lines = [
        f"{'':<28} {'':>5} {'(gain)':>18} {'regret (+ = worse) vs':^42}",
        f"{'learner':<28} {'ε':>5} {'expected clicks':>18} {'best ranking':>24} {'uniform':>17}",
    ]
    lines.append("-" * len(lines[1]))
    for config, (_, row) in zip(results.configurations, table.iterrows(), strict=True):
        eps = config.kwargs.get("epsilon")
        lines.append(
            f"{config.name[:28]:<28} {'-' if eps is None else f'{eps:g}':>5} {cell(row, 'loss', scale=-1.0):>18} "
            f"{cell(row, 'regret_best_ranking', signed=True):>24} {cell(row, 'regret_uniform', signed=True):>17}"
        )
    for name, comp in results.metadata()["comparators"].items():
        label = "best ranking (hindsight)" if name == "best ranking" else "uniform ranking"
        lines.append(f"{label:<28} {'':>5} {format_number(-comp['total_loss']):>18}")
    lines.append(
        "(expected clicks over the horizon; regret = comparator's clicks − learner's, + = worse; mean ± half-width "
        "of the 95% t-interval over seeds)"
    )
    lines.append("")
    lines.append("privacy (replacing one round's click probabilities):")
    for config in results.configurations:
        g = config.privacy
        if not g:
            continue
        guarantee = f"(ε={g['epsilon']:g}, δ={g['delta']:g}) per {g['unit']}"
        lines.append(f"  {config.label}: DP with {guarantee} — {g['source']}")
        per_row = config.privacy_per_source_row
        if isinstance(per_row, dict):
            lines.append(
                f"    per logged round (used in up to {multiplicity} rounds): "
                f"(ε={per_row['epsilon']:.4g}, δ={per_row['delta']:.3g})"
            )
    seed_line = (
        "keyed from operating-system entropy, not recorded"
        if args.seed is None
        else (f"root seed {args.seed} — private only while that seed is secret")
    )
    lines.append(f"  randomness: {seed_line}")
    lines.append("  not private: the clicks, regrets and comparators above are evaluations computed from the data")
    lines.append("")
    lines.extend(results.verdicts("the uniform ranking"))
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("--horizon", type=int, default=10**6, help="rounds (default 10^6, bootstrapped)")
    parser.add_argument("--epsilon", type=float, nargs="+", default=[1.0], help="privacy ε (default 1)")
    parser.add_argument("--delta", type=float, default=1e-6, help="privacy δ (default 1e-6)")
    parser.add_argument("--seeds", type=int, default=3, help="runs per learner (default 3)")
    parser.add_argument("--seed", type=int, default=None, help="root seed (default: OS entropy, not recorded)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: the CPUs)")
    parser.add_argument("--out", default="dponline-ranking", help="output directory (default ./dponline-ranking)")
    args = parser.parse_args(argv)
    try:
        experiment = build_experiment(args)
    except dponline.InvalidInputError as exc:
        parser.error(str(exc))
    multiplicity = privacy.row_multiplicity(experiment.stream)
    results = run_job(
        experiment,
        args.out,
        workers=args.workers,
        quiet=True,
        plots=["regret"],
        report=lambda r: report(r, args, multiplicity),
    )
    return 0 if results.execution["failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
