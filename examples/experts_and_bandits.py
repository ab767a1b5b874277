"""Private learning with expert advice and with bandit feedback, on real data (Agarwal & Singh 2017).

    python examples/experts_and_bandits.py [--bandit-horizon T]

1. Experts: the 5 pollsters of the Trump approval data (loss = normalised squared error against the 538
   average, 1,001 days). DPFTRL (entropy regulariser, Laplace tree noise) at several ε vs non-private Hedge;
   regret against the best pollster in hindsight, and the computed bound.
2. Portfolio: DPFTRL on the linearised log-loss of the NYSE stream (36 stocks) — full-information private
   online convex optimisation — final wealth vs the uniform constant-rebalanced portfolio.
3. Bandit: 80 arms whose click probabilities come from the Open Bandit Dataset sample; PrivateEXP3 at several
   ε vs plain EXP3; pseudo-regret against the best arm.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

import dponline
from dponline import datasets
from dponline.domains import Simplex
from dponline.losses import Linear, PortfolioLogLoss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bandit-horizon", type=int, default=10**6)
    args = parser.parse_args()

    L = datasets.trump_approval_expert_losses()
    T, n = L.shape
    best = L.sum(axis=0).min()
    print(f"Experts: Trump approval, T={T}, {n} pollsters, best pollster's loss {best:.2f}")
    for eps in (None, 10.0, 1.0):
        # Losses in [0, 1]^n: L1 bound n for privacy, coordinate bound 1 for the step size (Corollary 3.2).
        learner = dponline.DPFTRL(Simplex(n), horizon=T, epsilon=eps, loss_bound=float(n), dual_bound=1.0, seed=0)
        regret = learner.run(Linear(L)).total_loss - best
        label = "non-private" if eps is None else f"DP (ε={eps:g})"
        print(f"  {label}: regret {regret:.2f} (bound {learner.regret_bound():.0f})")

    R = np.asarray(datasets.load_nyse().relatives, dtype=float)
    family = PortfolioLogLoss(R, relative_range=(0.5, 2.0))
    ucrp = math.exp(-family.cumulative_at(np.full(R.shape[1], 1 / R.shape[1]), [len(R)])[0])
    print(f"Portfolio: NYSE, T={len(R)}, {R.shape[1]} stocks, uniform CRP wealth {ucrp:.2f}")
    for eps in (None, 1.0):
        # Gradients −r/⟨r,x⟩ with r in [0.5, 2]: each coordinate within ±4, L1 norm within 4n.
        learner = dponline.DPFTRL(
            Simplex(R.shape[1]), horizon=len(R), epsilon=eps, loss_bound=4.0 * R.shape[1], dual_bound=4.0, seed=0
        )
        wealth = math.exp(-learner.run(family).total_loss)
        label = "non-private" if eps is None else f"DP (ε={eps:g})"
        print(f"  {label}: wealth {wealth:.2f}")

    clicks = datasets.open_bandit_click_probabilities()
    losses = 1.0 - clicks
    Tb = args.bandit_horizon
    table = Linear(losses[None, :], horizon=Tb, resample="cycle")
    print(f"Bandit: Open Bandit click probabilities, {len(clicks)} arms, T={Tb}")
    for eps in (None, 1.0):
        learner = dponline.PrivateEXP3(len(clicks), horizon=Tb, epsilon=eps, seed=0)
        regret = learner.run(table).total_loss - Tb * losses.min()
        label = "non-private EXP3" if eps is None else f"DP (ε={eps:g})"
        print(f"  {label}: pseudo-regret {regret:.0f} (bound {learner.regret_bound():.0f})")


if __name__ == "__main__":
    main()
