"""User-specified local DP on real streams: the two scenarios of van der Hoeven (2019, §4).

    python examples/local_dp_streams.py [--seeds 3] [--rounds 20000]

Streams: Phishing and Shuttle (logistic loss, labels ±1, features in [−1, 1]) and the Trump approval polls
(squared loss: predict FiveThirtyEight's average from the five pollsters, both divided by 100).

* Scenario (a), ℓ2 randomiser ``ρ(z) ∝ exp(−ε‖z‖₂/(2G))``: most providers add no noise and ⌈ln T⌉ of them
  (chosen at random) use ε = 1 (``--heavy-eps``), against every provider using that ε — Algorithm 2
  (``UnconstrainedLearner``), with online gradient descent (step tuned in hindsight over a grid, and untuned
  ``1/√T``) as baselines.
* Scenario (b), local Laplace randomiser: only the first two coordinates are sensitive (τ = 0.5 each, the
  others released exactly), against τ = 0.5 on every coordinate — Algorithm 3 (``CoordinatewiseLearner``) and
  AdaGrad on ``[−1, 1]^d``.

Regret is against the best fixed predictor in hindsight (L-BFGS on the convex total loss), averaged over seeds.
``ε/provider`` is the budget each provider spends (Lemma 1: ``Σ_j τ_j``); "exact" = no noise (no privacy).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy import optimize, special

from dponline import datasets
from dponline.local_dp import (
    AdaGrad,
    CoordinatewiseLearner,
    LocalStream,
    OnlineGradientDescent,
    UnconstrainedLearner,
)


def best_fixed(X: np.ndarray, y: np.ndarray, loss: str) -> float:
    """The smallest total loss of a fixed predictor ``u`` (convex: L-BFGS to a tight tolerance)."""

    def f(u: np.ndarray) -> tuple[float, np.ndarray]:
        p = X @ u
        if loss == "logistic":
            m = -y * p
            return float(np.logaddexp(0, m).sum()), -(X * (y * special.expit(m))[:, None]).sum(axis=0)
        r = p - y
        return float(0.5 * r @ r), X.T @ r

    res = optimize.minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B", options={"gtol": 1e-10})
    return float(res.fun)


def streams(rounds: int) -> list[tuple[str, np.ndarray, np.ndarray, str]]:
    phishing = datasets.load_phishing()
    shuttle = datasets.load_shuttle()
    trump = datasets.load_trump_approval()
    return [
        ("phishing", phishing.features, phishing.labels, "logistic"),
        ("shuttle", shuttle.features[:rounds], shuttle.labels[:rounds], "logistic"),
        ("trump", trump.polls / 100.0, trump.average / 100.0, "squared"),
    ]


def describe(stream: LocalStream) -> str:
    """Budget spent per provider: ε (ℓ2) or Σ_j τ_j over the noisy coordinates (Lemma 1)."""
    b = stream.budgets
    finite = np.isfinite(b)
    private_rows = finite.any(axis=1)
    if not private_rows.any():
        return "none (exact release)"
    spent = np.where(finite, b, 0.0).sum(axis=1)[private_rows]
    text = f"eps {spent.max():g} for {private_rows.sum()}/{len(b)} providers"
    if stream.mechanism == "laplace" and not finite.all():
        text += f" on {finite[private_rows][0].sum()}/{b.shape[1]} coords (others exact)"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=20_000, help="rounds of Shuttle used")
    parser.add_argument("--heavy-eps", type=float, default=1.0, help="budget of the privacy-conscious providers")
    args = parser.parse_args()
    print("Local DP (van der Hoeven 2019): mean regret vs the best fixed predictor over", args.seeds, "seeds")
    print(f"{'stream':<9} {'scenario':<22} {'learner':<24} {'regret':>10}  eps/provider")
    for name, X, y, loss in streams(args.rounds):
        T, d = X.shape
        best = best_fixed(X, y, loss)
        heavy = args.heavy_eps
        k = math.ceil(math.log(T))
        g2 = math.sqrt(d)  # ‖x‖₂ <= √d and |ℓ'| <= 1 (logistic); squared-loss gradients are clipped to it
        rows = []
        for scenario in ("(a) few heavy, l2", "(a) all heavy, l2", "(b) sparse tau, laplace", "(b) dense tau, laplace"):
            results: dict[str, list[float]] = {}
            eps_text = ""
            for seed in range(args.seeds):
                rng = np.random.default_rng(seed)
                if scenario.startswith("(a)"):
                    eps = np.full(T, heavy)
                    if "few" in scenario:
                        eps = np.full(T, np.inf)
                        eps[rng.choice(T, size=k, replace=False)] = heavy
                    stream = LocalStream(X, y, loss=loss, budgets=eps, mechanism="l2")
                    learners = {
                        "UnconstrainedLearner": UnconstrainedLearner(d, g2, seed=seed),
                        "OGD untuned 1/sqrt(T)": OnlineGradientDescent(d, 1 / math.sqrt(T), G=g2, seed=seed),
                    }
                    rates = [*np.geomspace(1e-3, 1.0, 7), 1 / math.sqrt(T)]
                    grid = {lr: OnlineGradientDescent(d, lr, G=g2, seed=seed) for lr in rates}
                else:
                    tau = np.full(d, 0.5)
                    if "sparse" in scenario:
                        tau[2:] = np.inf
                    stream = LocalStream(X, y, loss=loss, budgets=tau)
                    learners = {
                        "CoordinatewiseLearner": CoordinatewiseLearner(d, 1.0, seed=seed),
                        "AdaGrad D=1": AdaGrad(d, 1.0, seed=seed),
                    }
                    grid = {}
                for label, learner in learners.items():
                    results.setdefault(label, []).append(learner.run(stream).total_loss - best)
                if grid:
                    tuned = min(learner.run(stream).total_loss for learner in grid.values())
                    results.setdefault("OGD tuned in hindsight", []).append(tuned - best)
                eps_text = describe(stream)
            for label, values in results.items():
                rows.append(f"{name:<9} {scenario:<22} {label:<24} {np.mean(values):10.1f}  {eps_text}")
        print("\n".join(rows))


if __name__ == "__main__":
    main()
