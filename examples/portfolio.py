"""Private online portfolio selection with bandit feedback, from the Python API (ten lines of real work).

python examples/portfolio.py [--horizon 200000]
"""

import argparse

import numpy as np

import dponline
from dponline import losses, regret
from dponline.datasets import load_nyse
from dponline.domains import Simplex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=int, default=200_000)
    args = parser.parse_args()

    R = load_nyse().relatives  # (5651, 36) daily price relatives
    # Declared before seeing the data: no stock halves or doubles in a day. This fixes |f_t| <= ln 2 and the
    # Lipschitz constant a priori, so nothing that sets the noise depends on the stream being protected.
    stream = losses.PortfolioLogLoss(R, relative_range=(0.5, 2.0), horizon=args.horizon, resample="bootstrap", seed=0)
    # seed=None: noise keyed from the operating system (a fixed seed is private only while it stays secret).
    learner = dponline.PrivateBandit(
        Simplex(36),
        horizon=args.horizon,
        epsilon=1.0,
        delta=1e-6,
        lipschitz=stream.lipschitz,
        loss_bound=stream.loss_bound,
    )
    result = learner.run(stream)  # native loop, GIL released
    best = regret.best_constant_rebalanced_portfolio(stream)
    ucrp = stream.cumulative_at(np.full(36, 1 / 36), [args.horizon])[0]
    print(learner.privacy)
    print(f"per NYSE day (each used up to {dponline.privacy.row_multiplicity(stream)} times):")
    print(f"  {learner.privacy_per_source_row(stream)}")
    print(f"log-wealth: learner {-result.total_loss:.1f}, UCRP {-ucrp:.1f}, BCRP {-best.total_loss:.1f}")
    print(f"regret {result.total_loss - best.total_loss:.1f} over {args.horizon} rounds in {result.seconds:.2f}s")


if __name__ == "__main__":
    main()
