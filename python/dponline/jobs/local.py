"""``dponline local``: user-specified local DP on real streams, the two scenarios of van der Hoeven (2019, §4).

    dponline local [--seeds 3] [--rounds 20000] [--heavy-eps 1] [--out DIR]

Streams: Phishing and Shuttle (logistic loss, labels ±1, features in [−1, 1]) and the Trump approval polls
(squared loss: predict FiveThirtyEight's average from the five pollsters, both divided by 100).

* Scenario (a), ℓ2 randomiser ``ρ(z) ∝ exp(−ε‖z‖₂/(2G))``: most providers add no noise and ⌈ln T⌉ of them
  (chosen at random) use ε = 1 (``--heavy-eps``), against every provider using that ε — Algorithm 2
  (``UnconstrainedLearner``), with online gradient descent (step tuned in hindsight over a grid, and untuned
  ``1/√T``) as baselines.
* Scenario (b), local Laplace randomiser: only the first two coordinates are sensitive (τ = 0.5 each, the
  others released exactly), against τ = 0.5 on every coordinate — Algorithm 3 (``CoordinatewiseLearner``) and
  AdaGrad on ``[−1, 1]^d``.

Regret is against the best fixed predictor in hindsight (L-BFGS on the convex total loss), mean ± standard error
over seeds. ``ε/provider`` is the budget each provider spends (Lemma 1: ``Σ_j τ_j``); "exact" = no noise (no
privacy). Writes ``local.csv`` (one row per stream, scenario, learner and seed) and ``local.png`` to ``--out``.
Seeds ``0..seeds-1`` key the providers' noise (simulated here: a real provider keys its own noise, secretly).
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize, special

from .. import datasets
from ..local_dp import (
    AdaGrad,
    CoordinatewiseLearner,
    LocalStream,
    OnlineGradientDescent,
    UnconstrainedLearner,
)
from ._args import positive_float, positive_int


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


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dponline local``."""
    p = sub.add_parser("local", help="user-specified local DP on real streams (van der Hoeven 2019, scenarios a, b)")
    p.add_argument("--seeds", type=positive_int, default=3, help="seeds per learner (default 3)")
    p.add_argument("--rounds", type=positive_int, default=20_000, help="rounds of Shuttle used (default 20000)")
    p.add_argument("--heavy-eps", type=positive_float, default=1.0, help="budget of the privacy-conscious providers")
    p.add_argument("--out", default="dponline-local", help="output directory (default ./dponline-local)")
    p.set_defaults(func=run, parser=p)
    return p


def run(args: argparse.Namespace) -> int:
    """Run both scenarios on every stream; print the table, write ``local.csv`` and ``local.png``."""
    records: list[dict[str, Any]] = []
    print("Local DP (van der Hoeven 2019): mean regret vs the best fixed predictor over", args.seeds, "seeds")
    print(
        "(ε per provider is local DP for that provider's gradient under the bound G; Shuttle's features are divided "
        "by an empirical scale computed from the whole file, a data-dependent constant that is not private)"
    )
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
                se = np.std(values, ddof=1) / math.sqrt(len(values)) if len(values) > 1 else float("nan")
                rows.append(f"{name:<9} {scenario:<22} {label:<24} {np.mean(values):10.1f} ± {se:<7.1f} {eps_text}")
                records += [
                    {"stream": name, "scenario": scenario, "learner": label, "seed": s, "regret": v, "eps": eps_text}
                    for s, v in enumerate(values)
                ]
        print("\n".join(rows))
    _write(Path(args.out), records)
    return 0


def _write(out: Path, records: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    with open(out / "local.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    streams_seen = list(dict.fromkeys(r["stream"] for r in records))
    fig, axes = plt.subplots(1, len(streams_seen), figsize=(4.2 * len(streams_seen), 4.2), dpi=110)
    for ax, name in zip(np.atleast_1d(axes), streams_seen, strict=True):
        mine = [r for r in records if r["stream"] == name]
        keys = list(dict.fromkeys((r["scenario"], r["learner"]) for r in mine))
        means = [np.mean([r["regret"] for r in mine if (r["scenario"], r["learner"]) == k]) for k in keys]
        ax.barh(range(len(keys)), means, color=["tab:blue" if "(a)" in k[0] else "tab:orange" for k in keys])
        ax.set_yticks(range(len(keys)), [f"{k[0]}: {k[1]}" for k in keys], fontsize=6)
        ax.set_xscale("symlog")
        ax.set_xlabel("regret vs best fixed predictor")
        ax.set_title(name, fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "local.png")
    plt.close(fig)
    print(f"\nwrote {out / 'local.csv'}, {out / 'local.png'}")
