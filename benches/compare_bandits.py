"""PrivateEXP3 per-step cost vs a numpy EXP3, river's ``bandit.Exp3`` and the raw RNG draws, in one run.

    python benches/compare_bandits.py [--quick]

For K in {10, 10³, 10⁴} arms, all learners play the same Bernoulli environment (loss means evenly spaced in
[0.1, 0.9]); steps/s are the best of interleaved repeats (on a shared 2-core machine only ratios mean anything):

* dponline ``PrivateEXP3.run`` (native, ε = 1 and ``epsilon=None``) against ``losses.BernoulliArms``;
* dponline ``ask``/``tell`` from Python (one call each per step);
* a straightforward numpy EXP3 with mixing (:func:`numpy_exp3_steps`): the full probability vector each step,
  ``rng.choice`` by inverse CDF, one Laplace draw — O(K) per step;
* river 0.26.1 ``bandit.Exp3`` (``pull``/``update``) if river is installed (``pip install river``);
  SMPyBandits is not measured (it does not install cleanly on this Python);
* the raw draws a step needs: one uniform (arm) and one Laplace (noise) from the core's generator, measured
  as ``dponline.noise.laplace`` per draw (a Laplace draw is one exponential plus one random bit, at least as
  costly as a uniform), times 2.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

import dponline
from dponline.losses import BernoulliArms


def best_rate(fn, steps: int, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(steps)
        best = min(best, time.perf_counter() - t0)
    return steps / best


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

    row["native_private"] = best_rate(native, native_steps, repeats)
    row["native_nonprivate"] = best_rate(lambda s: native(s, None), native_steps, repeats)

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

    def raw(steps):
        dponline.noise.laplace(1.0, 2 * steps, seed=0)

    row["raw_draws"] = best_rate(raw, native_steps, repeats)
    row["ratio_numpy"] = row["native_private"] / row["numpy"]
    if "river" in row:
        row["ratio_river"] = row["native_private"] / row["river"]
    row["cost_vs_raw_draws"] = row["raw_draws"] / row["native_private"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
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
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}), flush=True)
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
