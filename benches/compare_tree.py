"""TreeAggregator vs the Python alternatives, measured side by side in one run.

    python benches/compare_tree.py [--quick] [--noise gaussian|laplace]

Methods (padded binary mechanism unless stated, horizon ``T = 2^24`` for all):

* ``dponline push_many`` — native loop over a block of rows (GIL released);
* ``dponline push`` — one Python call per step;
* ``numpy per step`` — :class:`baselines.NumpyTree`, O(dim·log T) numpy work per step;
* ``pure Python per step`` — :class:`baselines.PyScalarTree`, plain floats (dim = 1 only);
* ``numpy offline block`` — :func:`baselines.numpy_offline_release`: the whole block vectorised over rows
  (needs all rows in advance, like ``push_many``; extra row, not an online algorithm);
* ``dpcrpy BinMech`` — dpcrpy 1.0's binary mechanism, per step (unpadded; vector noise via a plug-in for
  dim > 1, see :func:`baselines.dpcrpy_binmech`);
* ``raw draws`` — ``dponline.noise.gaussian(1.0, dim·steps)`` per step: the cost of ``dim`` Gaussian draws
  with the core's RNG (a padded push needs ``2·dim`` draws).

Every measurement is the best of several interleaved repeats (2 shared, noisy cores): only the ratios mean
anything. Step counts adapt to a time budget per measurement.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import NumpyTree, PyScalarTree, dpcrpy_binmech, numpy_offline_release  # noqa: E402
from bench_cli import quick_parser  # noqa: E402

import dponline  # noqa: E402

HORIZON = 1 << 24  # >= 10^7; dpcrpy's BinMech needs a power of two
DIMS = (1, 100, 10_000)
SCALE = 1.0
POOL = 64  # distinct input rows cycled through by the per-step loops


def _rows(dim: int, count: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, (count, dim))


# Each runner takes (dim, steps, noise) and returns the elapsed seconds of exactly ``steps`` steps
# (construction and input generation excluded).
Runner = Callable[[int, int, str], float]


def _time_blocks(release: Callable[[np.ndarray], object], X: np.ndarray, steps: int) -> float:
    """Seconds for ``steps`` rows released in blocks (the timed loop of the block runners): ``release(X)`` as
    often as whole blocks fit in ``steps``, then once on the first ``steps mod len(X)`` rows."""
    full, rest = divmod(steps, len(X))
    tail = X[:rest]
    began = time.perf_counter()
    for _ in range(full):
        release(X)
    if rest:
        release(tail)
    return time.perf_counter() - began


def _time_per_step(step: Callable[[Any], object], pool: list[Any], steps: int) -> float:
    """Seconds for ``steps`` calls of ``step``, one input row each, cycling through ``pool`` (``POOL`` rows): the
    timed loop of the per-step runners."""
    began = time.perf_counter()
    for i in range(steps):
        step(pool[i & (POOL - 1)])
    return time.perf_counter() - began


def run_push_many(dim: int, steps: int, noise: str) -> float:
    block = max(1, min(steps, (1 << 16) // dim if dim < (1 << 16) else 1))
    tree = dponline.TreeAggregator(dim, HORIZON, scale=SCALE, noise=noise, padded=True, seed=0)
    return _time_blocks(tree.push_many, _rows(dim, block), steps)


def run_push(dim: int, steps: int, noise: str) -> float:
    tree = dponline.TreeAggregator(dim, HORIZON, scale=SCALE, noise=noise, padded=True, seed=0)
    return _time_per_step(tree.push, list(_rows(dim, POOL)), steps)


def run_numpy_step(dim: int, steps: int, noise: str) -> float:
    tree = NumpyTree(dim, HORIZON, SCALE, noise, np.random.default_rng(0))
    return _time_per_step(tree.push, list(_rows(dim, POOL)), steps)


def run_py_scalar(dim: int, steps: int, noise: str) -> float:
    assert dim == 1
    tree = PyScalarTree(HORIZON, SCALE, noise, seed=0)
    return _time_per_step(tree.push, [float(r[0]) for r in _rows(1, POOL)], steps)


def run_numpy_offline(dim: int, steps: int, noise: str) -> float:
    block = max(1, min(steps, (1 << 19) // dim))
    rng = np.random.default_rng(0)
    return _time_blocks(lambda X: numpy_offline_release(X, HORIZON, SCALE, noise, rng), _rows(dim, block), steps)


def run_dpcrpy(dim: int, steps: int, noise: str) -> float:
    np.random.seed(0)  # noqa: NPY002 - dpcrpy draws from numpy's global legacy generator
    rows = _rows(dim, POOL)
    pool = [float(r[0]) for r in rows] if dim == 1 else list(rows)
    return _time_per_step(dpcrpy_binmech(dim, HORIZON, SCALE, noise).dpRelease, pool, steps)


def run_raw_draws(dim: int, steps: int, noise: str) -> float:
    # Per step: ``dim`` Gaussian draws with the core's RNG, drawn in chunks of about 2^18 values.
    per_chunk = max(1, (1 << 18) // dim)
    full, rest = divmod(steps, per_chunk)
    gaussian = dponline.noise.gaussian
    began = time.perf_counter()
    for c in range(full):
        gaussian(1.0, per_chunk * dim, seed=c)
    if rest:
        gaussian(1.0, rest * dim, seed=full)
    return time.perf_counter() - began


METHODS: dict[str, Runner] = {
    "dponline push_many": run_push_many,
    "dponline push": run_push,
    "numpy per step": run_numpy_step,
    "pure Python per step": run_py_scalar,
    "numpy offline block": run_numpy_offline,
    "dpcrpy BinMech": run_dpcrpy,
    "raw draws (dim Gaussians)": run_raw_draws,
}
PYTHON_PEERS = ("numpy per step", "dpcrpy BinMech", "pure Python per step")  # online, one call per step
DIM1_ONLY = {"pure Python per step"}


def _applies(name: str, dim: int) -> bool:
    return dim == 1 or name not in DIM1_ONLY


def calibrate(runner: Runner, dim: int, noise: str, budget: float) -> int:
    """Steps so that one measurement takes about ``budget`` seconds."""
    steps = 8
    while True:
        elapsed = runner(dim, steps, noise)
        if elapsed >= budget / 20 or steps >= HORIZON // 4:
            break
        steps = min(HORIZON // 4, steps * (8 if elapsed < budget / 200 else 2))
    return int(min(HORIZON // 4, max(1, steps * budget / max(elapsed, 1e-9))))


def measure(noise: str, budget: float, repeats: int) -> dict[tuple[str, int], float]:
    """Steps/s for every (method, dim): best of ``repeats`` interleaved runs."""
    rates: dict[tuple[str, int], float] = {}
    for dim in DIMS:
        methods = {name: fn for name, fn in METHODS.items() if _applies(name, dim)}
        steps = {name: calibrate(fn, dim, noise, budget) for name, fn in methods.items()}
        best = dict.fromkeys(methods, math.inf)
        for _ in range(repeats):
            for name, fn in methods.items():
                best[name] = min(best[name], fn(dim, steps[name], noise) / steps[name])
        for name in methods:
            rates[name, dim] = 1.0 / best[name]
        print(f"  dim={dim}: " + ", ".join(f"{n} {steps[n]} steps" for n in methods), file=sys.stderr)
    return rates


def _fmt_rate(rate: float) -> str:
    if rate >= 1e6:
        return f"{rate / 1e6:.3g} M"
    if rate >= 1e3:
        return f"{rate / 1e3:.3g} k"
    return f"{rate:.3g}"


def _fmt_ratio(x: float) -> str:
    if x >= 100:
        return f"{x:,.0f}×"
    return f"{x:.3g}×"


def table(rates: dict[tuple[str, int], float], noise: str) -> str:
    ref = "dponline push_many"
    lines = [
        f"| method ({noise}, padded, T = 2^24) | " + " | ".join(f"dim = {d:,}" for d in DIMS) + " |",
        "|---|" + "---:|" * len(DIMS),
    ]
    for name in METHODS:
        cells = []
        for d in DIMS:
            if (name, d) not in rates:
                cells.append("—")
                continue
            r = rates[name, d]
            cells.append(f"{_fmt_rate(r)} steps/s" + ("" if name == ref else f" ({_fmt_ratio(rates[ref, d] / r)})"))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__, "short budget (< 30 s)")
    parser.add_argument("--noise", choices=("gaussian", "laplace"), default="gaussian")
    args = parser.parse_args(argv)
    budget, repeats = (0.05, 2) if args.quick else (0.5, 5)
    began = time.perf_counter()
    rates = measure(args.noise, budget, repeats)
    print()
    print(table(rates, args.noise))
    print()
    print(
        "(×) = how many times faster dponline push_many is. Steps/s are best of "
        f"{repeats} interleaved repeats on a shared machine: read the ratios, not the absolute rates."
    )
    print()
    pm1 = rates["dponline push_many", 1]
    for group in (PYTHON_PEERS[:2], PYTHON_PEERS):
        peers = {p: rates[p, 1] for p in group}
        fastest = max(peers, key=peers.__getitem__)
        print(
            f"push_many vs the fastest of {' / '.join(group)} at dim=1 ({fastest}): "
            f"{pm1 / peers[fastest]:.0f}×  (target >= 100×)"
        )
    print(
        f"push_many vs numpy offline block (all rows in advance) at dim=1: {pm1 / rates['numpy offline block', 1]:.1f}×"
    )
    raw100 = rates["raw draws (dim Gaussians)", 100]
    print(
        f"dponline push cost / raw draw cost, dim=100: {raw100 / rates['dponline push', 100]:.2f}×  "
        f"(target <= 3×; a padded push draws 2·dim values)"
    )
    print(f"dponline push_many cost / raw draw cost, dim=100: {raw100 / rates['dponline push_many', 100]:.2f}×")
    print(f"\ntotal {time.perf_counter() - began:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
