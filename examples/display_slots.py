"""Private online choice of k display slots among 80 items on real click probabilities (Open Bandit Dataset).

python examples/display_slots.py [--horizon 1000000] [--k 3] [--epsilon 1.0] [--plot regret.png]

Each round shows k items; a user with click probabilities p_a^t clicks at least one with probability
f_t(S) = 1 − Π_{a∈S}(1 − p_a^t). Full information (FI-DP, Algorithm 2) and bandit feedback (BanditDP,
Algorithm 3) of Perez-Salazar & Cummings (2021), private and not, against greedy in hindsight.
"""

import argparse

import numpy as np

import dponline
from dponline.datasets import open_bandit_round_probabilities
from dponline.regret import APPROXIMATION, greedy_in_hindsight, submodular_regret_curve
from dponline.submodular import ProbabilisticCoverage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--plot", default=None, help="write the (1 − 1/e)-regret curves to this PNG")
    args = parser.parse_args()

    P = open_bandit_round_probabilities()  # (10000, 80) per-round click probabilities
    stream = ProbabilisticCoverage(P, horizon=args.horizon, resample="bootstrap", seed=0)
    greedy = greedy_in_hindsight(stream, args.k)
    print(f"greedy in hindsight: items {greedy.items.tolist()}, clicks {greedy.total_value:.1f}")
    curves = {}
    for feedback in ("full", "bandit"):
        for epsilon in (args.epsilon, None):
            learner = dponline.PrivateSubmodular(
                80, args.k, horizon=args.horizon, epsilon=epsilon, delta=1e-6, feedback=feedback, seed=1
            )
            result = learner.run(stream, checkpoints=200)
            curve = submodular_regret_curve(stream, result.checkpoints, result.cumulative_loss, greedy)
            name = f"{feedback}, " + ("non-private" if epsilon is None else f"{learner.privacy.epsilon:g}-DP")
            curves[name] = (result.checkpoints, curve)
            print(
                f"{name:>22}: clicks {-result.total_loss:10.1f}  (1-1/e)-regret {curve[-1]:10.1f}  "
                f"eta {learner.params['eta']:.3g}  gamma {learner.params['gamma']:.3g}  {result.seconds:.2f}s"
            )
    print(f"(1 - 1/e) x greedy = {APPROXIMATION * greedy.total_value:.1f}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for name, (t, curve) in curves.items():
            ax.plot(t, curve, label=name)
        ax.plot(t, np.zeros_like(t), color="grey", lw=0.5)
        ax.set_xlabel("round t")
        ax.set_ylabel("(1 - 1/e)-regret vs greedy")
        ax.set_title(f"Open Bandit clicks, k = {args.k} of 80 items")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
