"""Private running totals of a real stream with the binary mechanism.

Each NYSE trading day contributes one vector: the fraction of the 36 stocks that rose and the fraction that
fell that day. Replacing one day changes the stream by at most 2 in L1 and sqrt(2) in L2. A TreeAggregator
releases the running totals after every day under (ε, δ)-DP for replacing one day; we compare the released
totals with the exact ones, for the paper's calibration and the default one (the tightest proved for the exact
discrete mechanism: discrete Laplace, or the discrete Gaussian through zCDP).

    python examples/tree_aggregation.py [--epsilon 1.0] [--delta 1e-6] [--days 5651]
"""

import argparse

import numpy as np

import dponline
from dponline.datasets import load_nyse


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--days", type=int, default=None)
    args = parser.parse_args()

    R = load_nyse().relatives[: args.days]
    X = np.column_stack([(R > 1).mean(axis=1), (R < 1).mean(axis=1)])
    T = len(X)
    exact = np.cumsum(X, axis=0)
    print(f"{T} NYSE days; exact totals after the last day: {exact[-1, 0]:.1f} up, {exact[-1, 1]:.1f} down")
    calibrations = ["paper", None]
    for calibration in calibrations:
        tree = dponline.TreeAggregator.calibrated(
            2,
            T,
            epsilon=args.epsilon,
            delta=args.delta,
            calibration=calibration,
            seed=0,
            sensitivity=2.0 if args.delta == 0 else np.sqrt(2.0),
        )
        released = tree.push_many(X)
        err = np.abs(released - exact)
        print(f"\ncalibration={calibration or 'default'!r}: {tree.privacy}")
        print(
            f"  {tree.noise} noise, scale {tree.scale:.3g} per node, {tree.draws_at(T)} draws per release, "
            f"sd {np.sqrt(tree.noise_variance(T)):.1f}"
        )
        for t in (T // 4, T // 2, T):
            print(f"  day {t:>5}: up {exact[t - 1, 0]:8.1f} exact, {released[t - 1, 0]:8.1f} released")
        print(f"  mean |error| over all releases {err.mean():.1f}")


if __name__ == "__main__":
    main()
