"""PrivateEXP3 per-step cost vs a numpy EXP3, river's ``bandit.Exp3`` and the raw RNG draws, in one run.

    python benches/compare_bandits.py [--quick]

For K in {10, 10³, 10⁴} arms, all learners play the same Bernoulli environment (loss means evenly spaced in
[0.1, 0.9]); steps/s are the best of repeats (the native learner and the raw draws interleaved; on a shared
2-core machine only ratios mean anything):

* dponline ``PrivateEXP3.run`` (native, ε = 1 and ``epsilon=None``) against ``losses.BernoulliArms``;
* dponline ``ask``/``tell`` from Python (one call each per step);
* a straightforward numpy EXP3 with mixing (:func:`numpy_exp3_steps`): the full probability vector each step,
  ``rng.choice`` by inverse CDF, one Laplace draw — O(K) per step;
* river 0.26.1 ``bandit.Exp3`` (``pull``/``update``) if river is installed (``pip install river``);
  SMPyBandits is not measured (it does not install cleanly on this Python);
* the raw draws a step needs by the issue's count — two uniforms and one Laplace — natively: the core draws
  them ``steps`` times in one loop from one reproducible generator (``_core.exp3_raw_step_draws``; the
  learner draws one uniform and one Laplace per step, pre-drawn in blocks of 64), so "cost / raw draws" is a
  native/native ratio.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import print_row, quick_parser  # noqa: E402

import dponline  # noqa: E402
from dponline import _core  # noqa: E402
from dponline.losses import BernoulliArms  # noqa: E402


def best_rate(fn, steps: int, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(steps)
        best = min(best, time.perf_counter() - t0)
    return steps / best


def best_rates(fns: dict, steps: int, repeats: int) -> dict[str, float]:
    """Steps/s of each function, the best of ``repeats`` rounds that run every function once (interleaved,
    so a burst of load on the shared machine hits all of them alike)."""
    best = dict.fromkeys(fns, math.inf)
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn(steps)
            best[name] = min(best[name], time.perf_counter() - t0)
    return {name: steps / b for name, b in best.items()}


def numpy_exp3_steps(K: int, steps: int, means: np.ndarray, eta: float, gamma: float, lam: float) -> None:
    rng = np.random.default_rng(0)
    L = np.zeros(K)
    for _ in range(steps):
        w = np.exp(-eta * (L - L.min()))
        p = (1 - gamma) * w / w.sum() + gamma / K
        arm = int(np.searchsorted(np.cumsum(p), rng.random() * p.sum()))
        arm = min(arm, K - 1)
        loss = float(rng.random() < means[arm])
        L[arm] += (loss + rng.laplace(0.0, lam)) / p[arm]


def measure(K: int, native_steps: int, repeats: int, quick: bool, river_bandit) -> dict[str, object]:
    """Steps/s of every learner at ``K`` arms (see the module docs)."""
    means = np.linspace(0.1, 0.9, K)
    env = BernoulliArms(means, horizon=native_steps * (repeats + 2), seed=1)
    row: dict[str, object] = {"K": K}

    def native(steps, eps=1.0):
        learner = dponline.PrivateEXP3(K, horizon=steps, epsilon=eps, seed=0)
        learner.run(env, rounds=steps, checkpoints=1)

    def raw(steps):
        _core.exp3_raw_step_draws(steps, 0)

    # The native learner and the native raw draws interleaved, in short blocks, many rounds: their ratio is
    # the headline number.
    short = native_steps // 4
    rates = best_rates(
        {"native_private": native, "native_nonprivate": lambda s: native(s, None), "raw_draws": raw},
        short,
        4 * repeats + 1,
    )
    row.update(rates)

    def ask_tell(steps):
        learner = dponline.PrivateEXP3(K, horizon=steps, epsilon=1.0, seed=0)
        for t in range(steps):
            learner.tell(env.loss(t, learner.ask()))

    row["ask_tell"] = best_rate(ask_tell, native_steps // 20, repeats)
    p = dponline.PrivateEXP3(K, horizon=native_steps, epsilon=1.0).params
    numpy_steps = max(500, 20_000 // K) if quick else max(2_000, 200_000 // K)
    row["numpy"] = best_rate(
        lambda s: numpy_exp3_steps(K, s, means, p["eta"], p["gamma"], p["noise_scale"]), numpy_steps, repeats
    )
    if river_bandit is not None:

        def river_steps(steps):
            policy = river_bandit.Exp3(gamma=p["gamma"], seed=0)
            arms = list(range(K))
            rng = np.random.default_rng(0)
            for _ in range(steps):
                arm = policy.pull(arms)
                policy.update(arm, float(rng.random() >= means[arm]))  # river maximises rewards

        row["river"] = best_rate(river_steps, max(200, 20_000 // K), repeats)

    row["ratio_numpy"] = row["native_private"] / row["numpy"]
    if "river" in row:
        row["ratio_river"] = row["native_private"] / row["river"]
    row["cost_vs_raw_draws"] = row["raw_draws"] / row["native_private"]
    return row


def main() -> None:
    parser = quick_parser(__doc__)
    args = parser.parse_args()
    repeats = 2 if args.quick else 3
    native_steps = 200_000 if args.quick else 2_000_000
    try:
        from river import bandit as river_bandit
    except ImportError:  # pragma: no cover - optional peer
        river_bandit = None
    rows = []
    for K in (10, 1_000, 10_000):
        row = measure(K, native_steps, repeats, args.quick, river_bandit)
        rows.append(row)
        print_row(row)
    print()
    print(
        "| K | native run ε=1 | native run ε=None | ask/tell | numpy EXP3 | river Exp3 | raw draws | vs numpy "
        "| vs river | cost / raw draws |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        river = f"{r['river'] / 1e3:.1f} k" if "river" in r else "—"
        vs_river = f"{r['ratio_river']:.0f}×" if "ratio_river" in r else "—"
        print(
            f"| {r['K']:,} | {r['native_private'] / 1e6:.2f} M | {r['native_nonprivate'] / 1e6:.2f} M | "
            f"{r['ask_tell'] / 1e3:.0f} k | {r['numpy'] / 1e3:.1f} k | {river} | {r['raw_draws'] / 1e6:.1f} M | "
            f"{r['ratio_numpy']:.0f}× | {vs_river} | {r['cost_vs_raw_draws']:.1f}× |"
        )


if __name__ == "__main__":
    main()
