"""Prefix-sum mechanisms side by side: per-push cost, BLT set-up cost, released RMSE vs T.

    python benches/compare_mechanisms.py [--quick] [--plot PATH]

1. **Per-push cost** of every mechanism (``push_many`` in blocks, Gaussian noise, ``T = 2^24``) at
   dim ∈ {1, 100, 10⁴}, relative to ``raw draws``: ``dim`` exact discrete Gaussian draws per step at the
   mechanisms' scale in grid units (``dponline.noise.discrete_gaussian(2**30)``: scale 1 on the grid
   ``2**-30``, the default exact sampler's), i.e. the noise one node per step needs. The binary tree draws 1
   (plain) or 1.5 on average (padded) vectors per push, Honaker ≈ 2, ``k``-ary ``1`` (plain) or ``k/(k−1)``
   (Honaker), BLT 1 plus ``2·buffers`` multiply-adds. Best of interleaved repeats; only the ratios mean
   anything (shared machine).
2. **BLT set-up**: time of the parameter optimiser for T ∈ {2¹⁰, 2²⁰, 10⁷} and 4 / 6 buffers.
3. **Released RMSE vs T** at (ε = 1, δ = 1e-6), row sensitivity 1, Gaussian noise calibrated exactly
   (``calibration="analytic"`` for every mechanism: σ = analytic Gaussian σ at L2 sensitivity
   ``sensitivity_l2``): mean over rounds and worst round of the per-coordinate RMSE, from the analytic
   variances. Also the pure-ε Laplace table (ε = 1) for the trees, and dpcrpy's binary mechanism and Honaker
   tree (their own reported MSE) where dpcrpy is installed (``pip install -e ".[bench]"``), for T <= 2¹⁴.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import quick_parser  # noqa: E402

import dponline  # noqa: E402
from dponline.aggregation import BLT, HonakerTree, KaryTree, TreeAggregator  # noqa: E402

HORIZON = 1 << 24
DIMS = (1, 100, 10_000)

# name -> factory(dim, horizon, **noise kwargs)
FACTORIES: dict[str, Callable[..., object]] = {
    "binary tree (padded)": lambda dim, T, **kw: TreeAggregator(dim, T, padded=True, **kw),
    "binary tree": lambda dim, T, **kw: TreeAggregator(dim, T, padded=False, **kw),
    "Honaker tree": lambda dim, T, **kw: HonakerTree(dim, T, **kw),
    "4-ary Honaker": lambda dim, T, **kw: KaryTree(dim, T, k=4, **kw),
    "16-ary plain": lambda dim, T, **kw: KaryTree(dim, T, k=16, readout="plain", **kw),
    "BLT 4 buffers": lambda dim, T, **kw: BLT(dim, T, buffers=4, **kw),
    "BLT 6 buffers": lambda dim, T, **kw: BLT(dim, T, buffers=6, **kw),
}


def _time_pushes(mech: object, X: np.ndarray, steps: int) -> float:
    block = X.shape[0]
    full, rest = divmod(steps, block)
    began = time.perf_counter()
    for _ in range(full):
        mech.push_many(X)  # type: ignore[attr-defined]
    if rest:
        mech.push_many(X[:rest])  # type: ignore[attr-defined]
    return time.perf_counter() - began


def _time_draws(dim: int, steps: int) -> float:
    per_chunk = max(1, (1 << 18) // dim)
    full, rest = divmod(steps, per_chunk)
    began = time.perf_counter()
    for c in range(full):
        dponline.noise.discrete_gaussian(2.0**30, per_chunk * dim, seed=c)
    if rest:
        dponline.noise.discrete_gaussian(2.0**30, rest * dim, seed=full)
    return time.perf_counter() - began


def push_costs(budget: float, repeats: int) -> str:
    lines = [
        "| mechanism (Gaussian, T = 2^24) | " + " | ".join(f"dim = {d:,}" for d in DIMS) + " |",
        "|---|" + "---:|" * len(DIMS),
    ]
    per_push: dict[tuple[str, int], float] = {}
    for dim in DIMS:
        steps = max(16, int(budget * 2e7 / dim))  # ~ budget seconds at ~20 M coordinates/s
        block = max(1, min(steps, (1 << 16) // dim))
        X = np.random.default_rng(0).uniform(-1, 1, (block, dim))
        mechs = {name: make(dim, HORIZON, scale=1.0, noise="gaussian", seed=0) for name, make in FACTORIES.items()}
        best = dict.fromkeys([*FACTORIES, "raw draws"], math.inf)
        for _ in range(repeats):
            for name, mech in mechs.items():
                best[name] = min(best[name], _time_pushes(mech, X, steps) / steps)
            best["raw draws"] = min(best["raw draws"], _time_draws(dim, steps) / steps)
        for name, value in best.items():
            per_push[name, dim] = value
        print(f"  dim={dim}: {steps} steps per measurement", file=sys.stderr)
    for name in [*FACTORIES, "raw draws"]:
        cells = []
        for d in DIMS:
            ns = per_push[name, d] * 1e9
            ratio = per_push[name, d] / per_push["raw draws", d]
            cells.append(f"{ns:,.0f} ns ({ratio:.2f}×)" if name != "raw draws" else f"{ns:,.0f} ns")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def blt_setup(horizons: tuple[int, ...]) -> str:
    lines = ["| T | buffers | set-up | BFGS iterations | loss (sens² × max error) |", "|---:|---:|---:|---:|---:|"]
    for T in horizons:
        for d in (4, 6):
            began = time.perf_counter()
            blt = BLT(1, T, scale=1.0, buffers=d)
            elapsed = time.perf_counter() - began
            iterations, loss = blt.fit
            lines.append(f"| {T:,} | {d} | {elapsed * 1e3:.1f} ms | {iterations} | {loss:.2f} |")
    return "\n".join(lines)


def _profile(mech: object) -> np.ndarray:
    T = mech.horizon  # type: ignore[attr-defined]
    return np.array([mech.variance(t) for t in range(1, T + 1)])  # type: ignore[attr-defined]


def rmse_table(horizons: tuple[int, ...]) -> tuple[str, dict[str, list[tuple[int, float]]]]:
    kw = {"epsilon": 1.0, "delta": 1e-6, "sensitivity": 1.0}
    makers: dict[str, Callable[[int], object]] = {
        "binary tree (padded)": lambda T: TreeAggregator.calibrated(1, T, calibration="analytic", **kw),
        "binary tree": lambda T: TreeAggregator.calibrated(1, T, padded=False, calibration="analytic", **kw),
        "Honaker tree": lambda T: HonakerTree.calibrated(1, T, **kw),
        "4-ary Honaker": lambda T: KaryTree.calibrated(1, T, k=4, **kw),
        "16-ary plain": lambda T: KaryTree.calibrated(1, T, k=16, readout="plain", **kw),
        "BLT 4 buffers (max)": lambda T: BLT.calibrated(1, T, buffers=4, **kw),
        "BLT 6 buffers (mean)": lambda T: BLT.calibrated(1, T, buffers=6, objective="mean", **kw),
    }
    series: dict[str, list[tuple[int, float]]] = {name: [] for name in makers}
    lines = [
        "| mechanism (ε=1, δ=1e-6) | " + " | ".join(f"T = 2^{int(math.log2(T))}" for T in horizons) + " |",
        "|---|" + "---:|" * len(horizons),
    ]
    reference: dict[int, np.ndarray] = {}
    rows: dict[str, list[str]] = {name: [] for name in makers}
    for T in horizons:
        for name, make in makers.items():
            v = _profile(make(T))
            if name == "binary tree":
                reference[T] = v
            series[name].append((T, math.sqrt(v.mean())))
        for name, make in makers.items():
            v = _profile(make(T))
            ref = reference[T]
            rows[name].append(
                f"{math.sqrt(v.mean()):.1f} / {math.sqrt(v.max()):.1f} "
                f"({ref.mean() / v.mean():.2f}× / {ref.max() / v.max():.2f}×)"
            )
    for name in makers:
        lines.append(f"| {name} | " + " | ".join(rows[name]) + " |")
    lines.append("")
    lines.append(
        "Cells: mean-over-rounds RMSE / worst-round RMSE per coordinate (variance ratio vs the plain binary "
        "tree: mean / worst)."
    )
    return "\n".join(lines), series


def laplace_table(horizons: tuple[int, ...]) -> str:
    kw = {"epsilon": 1.0, "sensitivity": 1.0}
    makers: dict[str, Callable[[int], object]] = {
        "binary tree": lambda T: TreeAggregator.calibrated(1, T, padded=False, **kw),
        "Honaker tree": lambda T: HonakerTree.calibrated(1, T, **kw),
        "8-ary Honaker": lambda T: KaryTree.calibrated(1, T, k=8, **kw),
        "16-ary plain": lambda T: KaryTree.calibrated(1, T, k=16, readout="plain", **kw),
        "16-ary Honaker": lambda T: KaryTree.calibrated(1, T, k=16, **kw),
    }
    lines = [
        "| mechanism (Laplace, ε=1) | " + " | ".join(f"T = 2^{int(math.log2(T))}" for T in horizons) + " |",
        "|---|" + "---:|" * len(horizons),
    ]
    ref = {T: _profile(makers["binary tree"](T)).mean() for T in horizons}
    for name, make in makers.items():
        cells = []
        for T in horizons:
            v = _profile(make(T))
            cells.append(f"{math.sqrt(v.mean()):.1f} ({ref[T] / v.mean():.2f}×)")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def dpcrpy_table(horizons: tuple[int, ...]) -> str:
    try:
        from dpcrpy.framework import noiMech
        from dpcrpy.treeMethods.binMech import BinMech
        from dpcrpy.treeMethods.honaker import Honaker
    except ImportError:
        return '(dpcrpy not installed: `pip install -e ".[bench]"`)'
    lines = [
        "| T | dpcrpy BinMech | dponline binary tree | dpcrpy Honaker | dponline HonakerTree |",
        "|---:|---:|---:|---:|---:|",
    ]
    kw = {"epsilon": 1.0, "delta": 1e-6, "sensitivity": 1.0}
    for T in horizons:
        k = int(math.log2(T))
        sigma = TreeAggregator.calibrated(1, T, padded=False, calibration="analytic", **kw).scale
        cells = []
        for cls in (BinMech, Honaker):
            # dpcrpy rescales its plug-in by sqrt(kOrder + 1): pass σ/sqrt(k+1) so every node has noise σ.
            mech = cls(kOrder=k, noiMech=noiMech.GaussNoiMech(sigma0=sigma / math.sqrt(k + 1)))
            mse = np.array([mech.dpRelease(0.0)[1] for _ in range(T)])
            cells.append(math.sqrt(mse.mean()))
        ours = [
            math.sqrt(_profile(TreeAggregator.calibrated(1, T, padded=False, calibration="analytic", **kw)).mean()),
            math.sqrt(_profile(HonakerTree.calibrated(1, T, **kw)).mean()),
        ]
        lines.append(f"| 2^{k} | {cells[0]:.2f} | {ours[0]:.2f} | {cells[1]:.2f} | {ours[1]:.2f} |")
    lines.append("")
    lines.append("Mean-over-rounds RMSE per coordinate at (ε=1, δ=1e-6), equal node σ (dpcrpy's own MSE report).")
    return "\n".join(lines)


def plot(series: dict[str, list[tuple[int, float]]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, points in series.items():
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("horizon T")
    ax.set_ylabel("mean RMSE per coordinate (ε=1, δ=1e-6)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__, "short budgets and horizons (< 30 s)")
    parser.add_argument("--plot", help="write the RMSE-vs-T plot to this file")
    args = parser.parse_args(argv)
    budget, repeats = (0.02, 2) if args.quick else (0.2, 3)
    horizons = (2**10, 2**14) if args.quick else tuple(2**k for k in range(8, 21, 2))
    began = time.perf_counter()
    print("## Per-push cost (relative to raw exact draws of dim discrete Gaussians, the default sampler)\n")
    print(push_costs(budget, repeats))
    print("\n## BLT optimiser set-up\n")
    print(blt_setup((2**10, 2**20) if args.quick else (2**10, 2**20, 10**7)))
    print("\n## Released RMSE vs T (Gaussian)\n")
    text, series = rmse_table(horizons)
    print(text)
    print("\n## Released RMSE vs T (Laplace, pure ε)\n")
    print(laplace_table(horizons))
    print("\n## dpcrpy\n")
    print(dpcrpy_table((2**8, 2**10) if args.quick else (2**10, 2**14)))
    if args.plot:
        plot(series, args.plot)
    print(f"\n(total {time.perf_counter() - began:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
