"""DPFTRL experts at N = 10⁴: native ``run`` vs a straightforward numpy implementation, in one run.

    python benches/compare_dpftrl.py [--quick] [--experts N]

Both learners play the same stream (64 rows of i.i.d. uniform [0, 1] losses, cycled), the same η
(``dual_bound=1``: Corollary 3.2's ``sqrt(ln N / T)``) and the same tree noise — Laplace (ε = 1, loss bound
``G = N`` in L1) and Gaussian (ε = 1, δ = 1e-6, the same ``G`` in L2): per round the numpy learner computes
``softmax(−η L̃)``, the loss ``⟨ℓ, x⟩`` and one push into :class:`baselines.NumpyTree` (padded binary
mechanism). Times are the best of repeats (shared 2-core machine: read the ratios).

Floors measured in the same run, per round:

* one pass of the weight vector through memory: reading ``N`` float64 (``np.sum`` over a block of many
  rows, divided by the rows, so Python overhead is amortised);
* the fresh noise a round needs: the padded tree draws ``1.5N`` single draws per push on average (``N`` for
  the new data node, ``N/2`` for the padding nodes the push opens; see ``aggregation/tree.rs``), timed as
  ``1.5N`` draws of ``dponline.noise.laplace`` / ``gaussian`` (the core's samplers, one call for 64 rounds:
  the bulk Laplace path the tree uses, the Gaussian ziggurat); the binary mechanism itself cannot go below ``N``
  (one node opens per push);
* the tree alone, padded and unpadded (``N`` fresh draws per push, the binary mechanism's minimum):
  ``TreeAggregator.push_many`` of 64 rows (the draws plus the passes over the rows; through
  Python, so with the allocation of the output block and the validation of the input);
* the same native run with ``epsilon=None``: every pass of the private round, no noise drawn.

The numpy learner draws its padding as ``r`` fresh draws per coordinate (``NumpyTree``), the textbook form.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import NumpyTree  # noqa: E402
from bench_cli import print_row, quick_parser  # noqa: E402

import dponline  # noqa: E402
from dponline.domains import Simplex  # noqa: E402
from dponline.losses import Linear  # noqa: E402


def best_time(fn, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def numpy_dp_ftrl(rows: np.ndarray, steps: int, horizon: int, eta: float, scale: float, noise: str) -> float:
    n = rows.shape[1]
    tree = NumpyTree(n, horizon, scale, noise=noise, rng=np.random.default_rng(0))
    released = tree.initial
    total = 0.0
    for t in range(steps):
        v = -eta * released
        w = np.exp(v - v.max())
        x = w / w.sum()
        row = rows[t % len(rows)]
        total += float(row @ x)
        released = tree.push(row)
    return total


def main() -> None:
    parser = quick_parser(__doc__)
    parser.add_argument("--experts", type=int, default=10_000)
    args = parser.parse_args()
    n = args.experts
    repeats = 2 if args.quick else 3
    native_steps = 500 if args.quick else 3_000
    numpy_steps = 100 if args.quick else 500
    horizon = 100_000
    rows = np.random.default_rng(0).uniform(0, 1, size=(64, n))
    family = Linear(rows, horizon=horizon, resample="cycle")

    table = []
    for delta in (0.0, 1e-6):
        table.append(measure(n, rows, family, horizon, delta, native_steps, numpy_steps, repeats))
        print_row(table[-1], digits=9)
    print()
    print(f"| per round, N = {n:,} experts | Laplace (δ = 0) µs | Gaussian (δ = 1e-6) µs |")
    print("|---|---:|---:|")
    lap, gau = table
    print(f"| dponline `DPFTRL.run` | {lap['native_us']:.1f} | {gau['native_us']:.1f} |")
    print(f"| straightforward numpy DP-FTRL | {lap['numpy_us']:.1f} | {gau['numpy_us']:.1f} |")
    print(f"| speed-up | {lap['speedup']:.1f}× | {gau['speedup']:.1f}× |")
    print(
        f"| `DPFTRL.run` with `epsilon=None` (same passes, no draws) | {lap['nonprivate_us']:.1f} | "
        f"{gau['nonprivate_us']:.1f} |"
    )
    print(f"| the padded tree alone (`push_many`) | {lap['tree_us']:.1f} | {gau['tree_us']:.1f} |")
    print(
        f"| the unpadded tree alone (N draws per push: the minimum) | {lap['plain_tree_us']:.1f} | "
        f"{gau['plain_tree_us']:.1f} |"
    )
    print(f"| 1.5N fresh draws (node + padding, on average) | {lap['noise_us']:.1f} | {gau['noise_us']:.1f} |")
    print(f"| run / 1.5N draws | {lap['native_vs_noise']:.2f}× | {gau['native_vs_noise']:.2f}× |")
    print(f"| floor: one pass of N float64 through memory | {lap['memory_us']:.2f} | {gau['memory_us']:.2f} |")
    print(f"| run / one pass | {lap['native_vs_memory']:.0f}× | {gau['native_vs_memory']:.0f}× |")


def measure(n, rows, family, horizon, delta, native_steps, numpy_steps, repeats) -> dict[str, float]:
    """µs per round of the native and numpy learners and of the two floors, at one δ."""

    def native(epsilon=1.0):
        learner = dponline.DPFTRL(
            Simplex(n), horizon=horizon, epsilon=epsilon, delta=delta, loss_bound=float(n), dual_bound=1.0, seed=0
        )
        learner.run(family, rounds=native_steps, checkpoints=1)

    probe = dponline.DPFTRL(Simplex(n), horizon=horizon, epsilon=1.0, delta=delta, loss_bound=float(n), dual_bound=1.0)
    eta, scale, draws = probe.params["eta"], probe.params["noise_scale"], probe.params["release_draws"]
    noise = probe.params["noise"]
    block = np.random.default_rng(1).uniform(size=(256, n))

    sampler = dponline.noise.laplace if noise == "laplace" else dponline.noise.gaussian
    tree = dponline.TreeAggregator(n, horizon, scale=scale, noise=noise, padded=True, seed=0)
    plain = dponline.TreeAggregator(n, horizon, scale=scale, noise=noise, padded=False, seed=0)

    def tree_alone():
        tree.push_many(rows)

    def plain_alone():
        plain.push_many(rows)

    # Interleaved, best of repeats.
    best = {k: math.inf for k in ("native", "silent", "numpy", "memory", "noise", "tree", "plain")}
    for _ in range(repeats):
        best["native"] = min(best["native"], best_time(native, 1) / native_steps)
        best["silent"] = min(best["silent"], best_time(lambda: native(None), 1) / native_steps)
        best["numpy"] = min(
            best["numpy"],
            best_time(lambda: numpy_dp_ftrl(rows, numpy_steps, horizon, eta, scale, noise), 1) / numpy_steps,
        )
        best["memory"] = min(best["memory"], best_time(block.sum, 3) / 256)
        best["noise"] = min(best["noise"], best_time(lambda: sampler(scale, 96 * n, seed=0), 1) / 64)
        best["tree"] = min(best["tree"], best_time(tree_alone, 1) / 64)
        best["plain"] = min(best["plain"], best_time(plain_alone, 1) / 64)
    t_native, t_numpy, t_memory, t_noise = best["native"], best["numpy"], best["memory"], best["noise"]
    return {
        "delta": delta,
        "native_us": t_native * 1e6,
        "numpy_us": t_numpy * 1e6,
        "speedup": t_numpy / t_native,
        "memory_us": t_memory * 1e6,
        "noise_us": t_noise * 1e6,
        "native_vs_noise": t_native / t_noise,
        "native_vs_memory": t_native / t_memory,
        "tree_us": best["tree"] * 1e6,
        "plain_tree_us": best["plain"] * 1e6,
        "nonprivate_us": best["silent"] * 1e6,
        "draws": draws,
    }


if __name__ == "__main__":
    main()
