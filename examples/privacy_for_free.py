"""Privacy for (nearly) free: regret against the horizon, private (ε = 1) and non-private, on a log-log plot.

Left: DP-FTRL (full information, Agarwal & Singh 2017) on the NYSE portfolio (36 stocks, days resampled), regret
against the best constant rebalanced portfolio, with the proved slope 1/2 (Theorem 3.1), at (ε, δ) = (1, 1e-6):
Gaussian noise, whose default mechanism (BLT) has nested releases, so its step size comes from the perturbation
bound, which charges the noise once. Right: PrivateBandit
(bandit feedback, Ene, Nguyen & Vladu 2021) on a synthetic 5-dimensional linear stream on the unit ball, regret
against the best fixed point, with the proved slope 3/4 (Lemma 3.1; Lemmas 5.2, 5.5 with privacy). Every
learner uses its defaults (the tightest proved calibration, the exact sampler); the dotted line is the non-private
learner's proved regret bound (its slope is the theorem's). Points are means over seeds.

    python examples/privacy_for_free.py [--horizons 1000 10000 100000 1000000] [--seeds 3] [--out FILE.png]
    python examples/privacy_for_free.py --quick     # tiny horizons, one seed (smoke run)
"""

import argparse

import numpy as np

import dponline
from dponline import losses, regret
from dponline.datasets import load_nyse
from dponline.domains import L2Ball, Simplex


def portfolio_regret(T: int, epsilon: float | None, seeds: int) -> tuple[float, float]:
    """Mean regret of DP-FTRL on T bootstrapped NYSE days against the best constant rebalanced portfolio, and the
    learner's regret bound (for the linearised losses, hence for the log-loss)."""
    R = load_nyse().relatives
    stream = losses.PortfolioLogLoss(R, relative_range=(0.5, 2.0), horizon=T, resample="bootstrap", seed=0)
    best = regret.best_constant_rebalanced_portfolio(stream).total_loss
    # Declared bounds (not measured): the centred gradient coordinates lie in ±(b/a − a/b)/2 for relatives in [a, b].
    bounds = losses.portfolio_gradient_bounds((0.5, 2.0), stream.dim, norm="l2", centred=True)
    learners = [
        dponline.DPFTRL(Simplex(stream.dim), horizon=T, epsilon=epsilon, delta=1e-6, **bounds, seed=s)
        for s in range(seeds)
    ]
    runs = [learner.run(stream).total_loss for learner in learners]
    return float(np.mean(runs) - best), float(learners[0].regret_bound())


def bandit_regret(T: int, epsilon: float | None, seeds: int) -> tuple[float, float]:
    """Mean regret of PrivateBandit on a 5-d linear stream on the unit ball (mean 0.5 in norm, jitter 0.3), and
    the learner's regret bound."""
    d = 5
    rows = np.full(d, 0.5 / np.sqrt(d)) + 0.3 * np.random.default_rng(12345).standard_normal((20_000, d))
    stream = losses.Linear(rows, norm_bound=1.0, horizon=T, resample="bootstrap", seed=1)
    best = regret.best_fixed(stream, domain=L2Ball(d, 1.0)).total_loss
    learners = [
        dponline.PrivateBandit(L2Ball(d, 1.0), horizon=T, epsilon=epsilon, lipschitz=1.0, seed=s) for s in range(seeds)
    ]
    runs = [learner.run(stream).total_loss for learner in learners]
    return float(np.mean(runs) - best), float(learners[0].regret_bound())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizons", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", default="privacy_for_free.png")
    parser.add_argument("--quick", action="store_true", help="horizons 200 and 2000, one seed")
    args = parser.parse_args()
    horizons, seeds = ([200, 2_000], 1) if args.quick else (sorted(args.horizons), args.seeds)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("DP-FTRL, NYSE portfolio (full information)", portfolio_regret, "1/2 (Thm 3.1)"),
        ("PrivateBandit, 5-d linear on the ball (bandit)", bandit_regret, "3/4 (Lemma 3.1)"),
    ]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    T = np.asarray(horizons, dtype=float)
    for ax, (title, measure, slope) in zip(axes, panels, strict=True):
        for epsilon, style in ((None, "o-"), (1.0, "s--")):
            name = "non-private" if epsilon is None else f"DP, ε = {epsilon:g}"
            values, bounds = np.array([measure(t, epsilon, seeds) for t in horizons]).T
            print(f"{title} — {name}: " + ", ".join(f"T={t}: {v:.4g}" for t, v in zip(horizons, values, strict=True)))
            # Regret can be slightly negative at tiny horizons on resampled data; log axes need > 0.
            ax.plot(T, np.maximum(values, 1e-3), style, label=name)
            if epsilon is None:  # the proved bound of the non-private learner: the slope the theory gives
                ax.plot(T, bounds, ":", color="grey", label=f"its proved bound, slope {slope}")
        ax.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="regret", title=title)
        ax.title.set_fontsize(9)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=80)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
