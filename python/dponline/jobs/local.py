"""``dponline local``: user-specified local DP on real streams, the two scenarios of van der Hoeven (2019, §4).

Streams: Phishing and Shuttle (logistic loss, labels ±1, features in [−1, 1]) and the Trump approval polls
(squared loss: predict FiveThirtyEight's average from the five pollsters, both divided by 100).

* Scenario (a), ℓ2 randomiser ρ(z) ∝ exp(−ε‖z‖₂/(2G)): most providers add no noise and ⌈ln T⌉ of them (chosen
  at random) use the budget --epsilon (default 1), against every provider using it — Algorithm 2
  (UnconstrainedLearner), with online gradient descent (step tuned in hindsight over a grid, and untuned 1/√T)
  as baselines.
* Scenario (b), local Laplace randomiser: only the first two coordinates are sensitive (τ = --epsilon/2 each, the
  others released exactly), against τ = --epsilon/2 on every coordinate — Algorithm 3 (CoordinatewiseLearner)
  and AdaGrad on [−1, 1]^d.

Every learner also runs on the exact stream (no provider adds noise): its non-private twin. The do-nothing
baseline is predicting 0 every round. Regret is against the best fixed predictor in hindsight (L-BFGS on the
convex total loss; + = worse), in nats for the logistic loss and in squared-loss units for the polls, mean ±
half-width of the 95% t-interval over seeds. Each private learner ends with a verdict: whether it beats
predicting 0 and what the providers' noise costs against its twin, or that the difference is within noise.
"ε/provider" is the budget each provider spends (Lemma 1: Σ_j τ_j).

Outputs in --out, replaced all at once at the end: local.csv (one row per stream, scenario, learner and seed),
local_summary.csv (mean and 95% interval per stream, scenario and learner) and local.png. Run k of every learner
keys the simulated providers' noise with SeedSequence(--seed, spawn_key=(k,)) (OS entropy, never recorded,
without --seed; a real provider keys its own noise, secretly).
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
from ..experiments.outputs import exclusive_output, publish
from ..experiments.verdict import format_interval, format_number, interval, verdict
from ..local_dp import (
    AdaGrad,
    CoordinatewiseLearner,
    LocalStream,
    OnlineGradientDescent,
    UnconstrainedLearner,
)
from ._args import (
    add_execution_flags,
    map_runs,
    nonnegative_int,
    parser_options,
    positive_float,
    positive_int,
    randomness_text,
    root_seed,
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


EXACT = "no noise"
"""The scenario of the non-private twins: every provider releases its gradient exactly."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register ``dponline local``."""
    p = sub.add_parser(
        "local",
        help="user-specified local DP on real streams (van der Hoeven 2019, scenarios a, b)",
        **parser_options(__doc__),
    )
    p.add_argument("--seeds", type=positive_int, default=3, help="runs per learner (default 3)")
    p.add_argument(
        "--epsilon",
        "--heavy-eps",
        dest="epsilon",
        type=positive_float,
        default=1.0,
        help="budget of a privacy-conscious provider: ε in scenario (a), Σ τ_j over its two sensitive "
        "coordinates in scenario (b) (default 1)",
    )
    p.add_argument("--rounds", type=positive_int, default=20_000, help="rounds of Shuttle used (default 20000)")
    p.add_argument(
        "--seed",
        type=nonnegative_int,
        default=None,
        help="root seed of the simulated providers' noise (default: OS entropy, not recorded)",
    )
    p.add_argument("--out", default="dponline-local", help="output directory (default ./dponline-local)")
    add_execution_flags(p, scheduler=False)
    p.set_defaults(func=run, parser=p)
    return p


def _scenarios(heavy: float) -> list[str]:
    return [
        "(a) few heavy, l2",
        "(a) all heavy, l2",
        f"(a) {EXACT}, l2",
        "(b) sparse tau, laplace",
        "(b) dense tau, laplace",
        f"(b) {EXACT}, laplace",
    ]


def _task(task: tuple[str, int, int, float, int, float]) -> list[dict[str, Any]]:
    """Every scenario and learner of one stream for seed index ``k`` (a process-pool task)."""
    name, k, root, heavy, rounds, best = task
    X, y, loss = next((X, y, loss) for n, X, y, loss in streams(rounds) if n == name)
    T, d = X.shape
    seed = np.random.SeedSequence(root, spawn_key=(k,))
    rng = np.random.default_rng(np.random.SeedSequence(root, spawn_key=(k, 1)))
    g2 = math.sqrt(d)  # ‖x‖₂ <= √d and |ℓ'| <= 1 (logistic); squared-loss gradients are clipped to it
    few = rng.choice(T, size=math.ceil(math.log(T)), replace=False)
    records = []
    for scenario in _scenarios(heavy):
        if scenario.startswith("(a)"):
            eps = np.full(T, heavy)
            if "few" in scenario:
                eps = np.full(T, np.inf)
                eps[few] = heavy
            elif EXACT in scenario:
                eps = np.full(T, np.inf)
            stream = LocalStream(X, y, loss=loss, budgets=eps, mechanism="l2")
            learners = {
                "UnconstrainedLearner": UnconstrainedLearner(d, g2, seed=seed),
                "OGD untuned 1/sqrt(T)": OnlineGradientDescent(d, 1 / math.sqrt(T), G=g2, seed=seed),
            }
            rates = [*np.geomspace(1e-3, 1.0, 7), 1 / math.sqrt(T)]
            grid = [OnlineGradientDescent(d, lr, G=g2, seed=seed) for lr in rates]
        else:
            tau = np.full(d, heavy / 2)
            if "sparse" in scenario:
                tau[2:] = np.inf
            elif EXACT in scenario:
                tau[:] = np.inf
            stream = LocalStream(X, y, loss=loss, budgets=tau)
            learners = {
                "CoordinatewiseLearner": CoordinatewiseLearner(d, 1.0, seed=seed),
                "AdaGrad D=1": AdaGrad(d, 1.0, seed=seed),
            }
            grid = []
        totals = {label: learner.run(stream).total_loss for label, learner in learners.items()}
        if grid:
            totals["OGD tuned in hindsight"] = min(learner.run(stream).total_loss for learner in grid)
        spent = describe(stream)
        records += [
            {
                "stream": name,
                "scenario": scenario,
                "learner": label,
                "seed": k,
                "regret": total - best,
                "epsilon_per_provider": spent,
            }
            for label, total in totals.items()
        ]
    return records


def _predict_zero(y: np.ndarray, loss: str) -> float:
    """Total loss of predicting 0 every round: T·ln 2 (logistic) or ½Σy² (squared)."""
    return len(y) * math.log(2.0) if loss == "logistic" else float(0.5 * y @ y)


def run(args: argparse.Namespace) -> int:
    """Run both scenarios and the twins on every stream; print the table and verdicts, write the outputs."""
    with exclusive_output(args.out) as out:
        root = root_seed(args.seed)
        data = streams(args.rounds)
        best = {name: best_fixed(X, y, loss) for name, X, y, loss in data}
        zero = {name: _predict_zero(y, loss) - best[name] for name, X, y, loss in data}
        units = {name: "nats" if loss == "logistic" else "squared-loss units" for name, _, _, loss in data}
        tasks = [(name, k, root, args.epsilon, args.rounds, best[name]) for name, *_ in data for k in range(args.seeds)]
        records = [
            r for part in map_runs(_task, tasks, workers=args.workers, quiet=args.quiet, desc="local") for r in part
        ]
        summary = _summary(records)
        text = _report(records, summary, zero, units, args)
        written = publish(out, lambda stage: _write(stage, records, summary, zero, units))
    print(text)
    print(f"\nwrote {', '.join(str(p) for p in written)}")
    return 0


def _summary(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = list(dict.fromkeys((r["stream"], r["scenario"], r["learner"]) for r in records))
    rows = []
    for key in keys:
        mine = [r for r in records if (r["stream"], r["scenario"], r["learner"]) == key]
        iv = interval([r["regret"] for r in mine])
        rows.append(
            {
                "stream": key[0],
                "scenario": key[1],
                "learner": key[2],
                "runs": iv.n,
                "regret_mean": iv.mean,
                "regret_ci_low": iv.low,
                "regret_ci_high": iv.high,
                "epsilon_per_provider": mine[0]["epsilon_per_provider"],
            }
        )
    return rows


def _twin_scenario(scenario: str) -> str:
    return f"(a) {EXACT}, l2" if scenario.startswith("(a)") else f"(b) {EXACT}, laplace"


def _report(
    records: list[dict[str, Any]],
    summary: list[dict[str, Any]],
    zero: dict[str, float],
    units: dict[str, str],
    args: argparse.Namespace,
) -> str:
    lines = [
        f"Local DP (van der Hoeven 2019): regret vs the best fixed predictor (+ = worse), mean ± half-width of the "
        f"95% t-interval over {args.seeds} seed(s); nats for the logistic streams, squared-loss units for trump",
        "(ε per provider is local DP for that provider's gradient under the bound G; Shuttle's features are divided "
        "by an empirical scale computed from the whole file, a data-dependent constant that is not private)",
        "",
        f"{'stream':<9} {'scenario':<24} {'learner':<24} {'regret':>18}  ε/provider",
    ]
    lines.append("-" * (len(lines[-1]) + 30))
    for name in zero:
        for row in (r for r in summary if r["stream"] == name):
            value = format_interval(row["regret_mean"], (row["regret_ci_high"] - row["regret_ci_low"]) / 2)
            lines.append(
                f"{name:<9} {row['scenario']:<24} {row['learner']:<24} {value:>18}  {row['epsilon_per_provider']}"
            )
        lines.append(f"{name:<9} {'baseline':<24} {'predict 0':<24} {format_number(zero[name]):>18}  (no learning)")
    lines.append("")
    lines.append(f"  randomness: {randomness_text(args.seed)}")
    lines.append("  not private: the regrets above are evaluations computed from the data")
    lines.append(
        "  a parameter-free learner scoring exactly 'predict 0' is expected while the providers' noise hides the "
        "summed gradient signal: it moves only once that signal exceeds a few noise standard deviations (Theorem 1; "
        "see the learners' docstrings)"
    )
    lines.append("")
    for row in summary:
        if EXACT in row["scenario"]:
            continue
        mine = {
            r["seed"]: r["regret"]
            for r in records
            if (r["stream"], r["scenario"], r["learner"]) == (row["stream"], row["scenario"], row["learner"])
        }
        twin_scenario = _twin_scenario(row["scenario"])
        twin = {
            r["seed"]: r["regret"]
            for r in records
            if (r["stream"], r["scenario"], r["learner"]) == (row["stream"], twin_scenario, row["learner"])
        }
        label = f"{row['learner']}, {row['stream']} {row['scenario']}"
        lines.append(
            verdict(
                label,
                units[row["stream"]],
                ("predicting 0", [v - zero[row["stream"]] for v in mine.values()]),
                (f"{row['learner']} with {EXACT}", [mine[k] - twin[k] for k in sorted(mine.keys() & twin.keys())]),
            )
        )
    return "\n".join(lines)


def _write(
    out: Path,
    records: list[dict[str, Any]],
    summary: list[dict[str, Any]],
    zero: dict[str, float],
    units: dict[str, str],
) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = [out / "local.csv", out / "local_summary.csv", out / "local.png"]
    for path, rows in zip(paths, (records, summary), strict=False):
        with open(path, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    names = list(zero)
    per = max(sum(1 for r in summary if r["stream"] == n) for n in names)
    fig, axes = plt.subplots(1, len(names), figsize=(5.2 * len(names), 0.32 * per + 2.2), dpi=120, layout="constrained")
    colours = {
        "few heavy": "tab:blue",
        "all heavy": "tab:red",
        "sparse tau": "tab:green",
        "dense tau": "tab:purple",
        EXACT: "tab:gray",
    }
    for ax, name in zip(np.atleast_1d(axes), names, strict=True):
        mine = [r for r in summary if r["stream"] == name]
        ys = np.arange(len(mine))[::-1]
        means = np.array([r["regret_mean"] for r in mine])
        half = np.nan_to_num(np.array([(r["regret_ci_high"] - r["regret_ci_low"]) / 2 for r in mine]))
        colour = [next(c for k, c in colours.items() if k in r["scenario"]) for r in mine]
        ax.barh(ys, means, xerr=half, color=colour, capsize=2, error_kw={"linewidth": 0.8})
        ax.set_yticks(ys, [f"{r['scenario'][:3]} {r['learner']}" for r in mine], fontsize=8)
        ax.axvline(zero[name], color="black", linestyle="--", linewidth=1.0)
        # The axis stops at 2.5× predicting 0 so the useful range stays readable; longer bars are cut and labelled.
        right = 2.5 * zero[name] if zero[name] > 0 else float(np.max(means + half)) * 1.1
        ax.set_xlim(min(0.0, float(np.min(means - half)) * 1.1), right)
        for yv, m in zip(ys, means, strict=True):
            if m > right:
                ax.annotate(
                    f"{format_number(m)} →",
                    (right, yv),
                    xytext=(-3, 0),
                    textcoords="offset points",
                    ha="right",
                    va="center",
                    fontsize=7,
                    color="white",
                    fontweight="bold",
                )
            else:
                ax.annotate(
                    format_number(m),
                    (max(m, 0.0), yv),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=7,
                )
        ax.set_xlabel(f"regret vs best fixed predictor ({units[name]}; + = worse)", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.set_title(name, fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in colours.values()]
    handles.append(plt.Line2D([0], [0], color="black", linestyle="--"))
    labels = [*(f"{k}" for k in colours), "predict 0 (baseline)"]
    fig.legend(
        handles,
        labels,
        loc="outside lower center",
        ncols=len(labels),
        fontsize=8,
        title="scenario (bars: mean, whiskers: 95% t-interval over seeds; axis cut at 2.5× predict 0)",
        title_fontsize=8,
    )
    fig.savefig(paths[2])
    plt.close(fig)
    return paths
