"""Why (and where) BLT lowers DP-FTRL's regret on NYSE: the analysis behind
``tests/test_mechanisms.py::test_blt_lowers_dp_ftrl_regret_on_nyse``.

    python benches/mechanisms_regret_nyse.py [--seeds 20] [--draws 2000] [--eps 1 2 4 8 16]

DP-FTRL experts (entropy regulariser, default η = sqrt(ln n / T)), Gaussian noise at δ = 1e-6, loss vectors
clipped to ‖ℓ‖₂ <= sqrt(n), both mechanisms calibrated exactly (``calibration="analytic"``).

1. **The streams.** ``nyse_expert_losses`` (1 − r/max r) and the daily rank losses of the same relatives: the
   spread of the experts' cumulative losses, the regret of uniform play and of non-private FTRL.
2. **Prediction without running a mechanism.** For oblivious losses the expected loss of round t is
   ``⟨E softmax(−η(L_{t−1} + Z_{t−1})), ℓ_t⟩``: it depends on the marginal of the release noise only. Drawing
   ``--draws`` independent normals per round at each round's standard deviation (the padded tree's constant
   one, BLT's ``sqrt(variance(t−1))``) gives the expected regret of each mechanism.
3. **Measurement.** Mean and sd of the regret over ``--seeds`` seeds per mechanism, and the one-sided Welch test.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import stats
from scipy.special import logsumexp

import dponline
import dponline.datasets
from dponline.aggregation import BLT, TreeAggregator
from dponline.domains import Simplex
from dponline.losses import Linear


def rank_losses() -> np.ndarray:
    relatives = dponline.datasets.load_nyse().relatives
    return np.argsort(np.argsort(-relatives, axis=1), axis=1) / (relatives.shape[1] - 1)


def predicted_regret(losses: np.ndarray, sd: np.ndarray, draws: int, seed: int = 0) -> float:
    """Expected regret of Hedge on ``losses`` when release t−1 carries i.i.d. N(0, sd[t]²) noise per coordinate."""
    T, n = losses.shape
    eta = math.sqrt(math.log(n) / T)
    prev = np.vstack([np.zeros(n), np.cumsum(losses, axis=0)[:-1]])
    z = np.random.default_rng(seed).standard_normal((draws, n))
    total = 0.0
    for a in range(0, T, 32):
        b = min(T, a + 32)
        logits = -eta * (prev[a:b, None, :] + sd[a:b, None, None] * z[None])
        logits -= logsumexp(logits, axis=2, keepdims=True)
        total += np.einsum("tkn,tn->", np.exp(logits), losses[a:b]) / draws
    return total - losses.sum(axis=0).min()


def measured_regret(losses: np.ndarray, mechanism: str, epsilon: float | None, seed: int) -> float:
    T, n = losses.shape
    learner = dponline.DPFTRL(
        Simplex(n),
        horizon=T,
        epsilon=epsilon,
        delta=1e-6,
        loss_bound=math.sqrt(n),
        dual_bound=1.0,
        calibration="analytic",
        mechanism=mechanism,
        seed=seed,
    )
    return learner.run(Linear(losses), checkpoints=1).total_loss - losses.sum(axis=0).min()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--eps", type=float, nargs="+", default=[1.0, 2.0, 4.0, 8.0, 16.0])
    args = parser.parse_args()

    streams = {"nyse_expert_losses": np.asarray(dponline.datasets.nyse_expert_losses()), "rank": rank_losses()}
    for name, losses in streams.items():
        cum = losses.sum(axis=0)
        uniform = losses.mean(axis=1).sum() - cum.min()
        free = measured_regret(losses, "tree", None, 0)
        print(
            f"{name}: cumulative losses {cum.min():.2f}..{cum.max():.2f}, "
            f"uniform-play regret {uniform:.3f}, non-private regret {free:.3f}"
        )

    losses = streams["rank"]
    T, n = losses.shape
    print("\nrank losses, eps: predicted tree / BLT | measured tree (sd) / BLT (sd) | Welch t, p")
    for eps in args.eps:
        kw = {"epsilon": eps, "delta": 1e-6, "sensitivity": 2 * math.sqrt(n)}
        tree = TreeAggregator.calibrated(1, T, padded=True, calibration="analytic", **kw)
        blt = BLT.calibrated(1, T, buffers=6, objective="max", **kw)
        sd_tree = np.full(T, math.sqrt(tree.variance(0)))
        sd_blt = np.sqrt([blt.variance(t) for t in range(T)])
        p_tree = predicted_regret(losses, sd_tree, args.draws)
        p_blt = predicted_regret(losses, sd_blt, args.draws)
        r_tree = np.array([measured_regret(losses, "tree", eps, 10_000 + s) for s in range(args.seeds)])
        r_blt = np.array([measured_regret(losses, "blt", eps, 20_000 + s) for s in range(args.seeds)])
        test = stats.ttest_ind(r_tree, r_blt, equal_var=False, alternative="greater")
        print(
            f"eps={eps:g}: {p_tree:.2f} / {p_blt:.2f} | {r_tree.mean():.2f} ({r_tree.std(ddof=1):.2f}) / "
            f"{r_blt.mean():.2f} ({r_blt.std(ddof=1):.2f}) | t={test.statistic:.2f}, p={test.pvalue:.2g} "
            f"(per-release sd: tree {sd_tree[0]:.1f}, BLT max {sd_blt.max():.1f})"
        )


if __name__ == "__main__":
    main()
