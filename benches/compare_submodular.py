"""Hedge over large ground sets and batched marginal gains vs numpy, measured side by side in one run.

    python benches/compare_submodular.py [--quick]

Rows (best of interleaved repeats; 2 shared, noisy cores: only the ratios mean anything):

* Hedge, one full-information update + one sample at |U| ∈ {10³, 10⁶}:
  ``dponline`` (:class:`dponline.mwu.Hedge`: one log-domain pass + sum-tree rebuild + O(log n) sample) vs
  ``numpy`` (log-weights += η g, subtract the max, exp, normalise, ``Generator.choice`` with ``p=``) vs
  ``one memory pass`` (``np.add(w, g, out=w)``: one read of two arrays and one write, no arithmetic beyond an
  add — the floor for any update that touches every weight).
* Batched marginal gains "gain of every a given the prefix S" for probabilistic coverage at |U| = 10⁴ and
  10⁶, |S| = 10: ``dponline`` (``SubmodularFamily.gains``) vs ``numpy`` (``p·Π_{b∈S}(1 − p_b)`` with the prefix
  zeroed).
* One FI-DP round (ask + tell of a row) at |U| = 10⁴, k = 10 vs k gain passes (``family.gains``) on the same
  row.

apricot-select's kernels were not measured (it was not installed for this run).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import dponline
from dponline.mwu import Hedge
from dponline.submodular import ProbabilisticCoverage


def best_of(fn: Callable[[], None], repeats: int, inner: int) -> float:
    """Best mean seconds per call over ``repeats`` batches of ``inner`` calls."""
    best = np.inf
    for _ in range(repeats):
        began = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - began) / inner)
    return best


def hedge_rows(n: int, repeats: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(0)
    g = rng.random(n)
    eta = 1e-3
    h = Hedge(n, eta, seed=1)

    def native() -> None:
        h.update_full(g)
        h.sample(1)

    state = {"lw": np.zeros(n)}
    gen = np.random.default_rng(1)

    def numpy_hedge() -> None:
        lw = state["lw"]
        lw += eta * g
        lw -= lw.max()
        p = np.exp(lw)
        p /= p.sum()
        gen.choice(n, p=p)

    w = np.zeros(n)

    def one_pass() -> None:
        np.add(w, g, out=w)

    inner = max(1, 20_000 // max(1, n // 1000))
    times = {"dponline": [], "numpy": [], "one memory pass": []}
    for _ in range(repeats):  # interleaved
        times["dponline"].append(best_of(native, 1, inner))
        times["numpy"].append(best_of(numpy_hedge, 1, inner))
        times["one memory pass"].append(best_of(one_pass, 1, inner))
    return [(name, min(v)) for name, v in times.items()]


def gains_rows(n: int, repeats: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(2)
    P = 0.1 * rng.random((4, n))
    fam = ProbabilisticCoverage(P)
    prefix = rng.choice(n, size=10, replace=False).tolist()
    row = P[1]

    def native() -> None:
        fam.gains(1, prefix)

    def numpy_gains() -> None:
        q = np.prod(1.0 - row[prefix])
        out = q * row
        out[prefix] = 0.0

    inner = max(1, 20_000 // max(1, n // 1000))
    times = {"dponline": [], "numpy": []}
    for _ in range(repeats):
        times["dponline"].append(best_of(native, 1, inner))
        times["numpy"].append(best_of(numpy_gains, 1, inner))
    return [(name, min(v)) for name, v in times.items()]


def round_rows(n: int, k: int, repeats: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(3)
    P = 0.1 * rng.random((4, n))
    fam = ProbabilisticCoverage(P)
    learner = dponline.PrivateSubmodular(n, k, horizon=10**7, epsilon=1.0, delta=1e-6, seed=0)
    row = P[1]
    prefix = list(range(k))

    def fi_round() -> None:
        learner.ask()
        learner.tell(row)

    def k_passes() -> None:
        for i in range(k):
            fam.gains(1, prefix[:i])

    times = {"FI-DP round": [], f"{k} gain passes": []}
    for _ in range(repeats):
        times["FI-DP round"].append(best_of(fi_round, 1, 200))
        times[f"{k} gain passes"].append(best_of(k_passes, 1, 200))
    return [(name, min(v)) for name, v in times.items()]


def report(title: str, rows: list[tuple[str, float]]) -> None:
    base = rows[0][1]
    print(f"\n{title}")
    for name, sec in rows:
        print(f"  {name:<18} {sec * 1e6:12.1f} µs   ratio to dponline {sec / base:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 2 if args.quick else 5
    for n in (1_000, 1_000_000):
        report(f"Hedge full update + sample, |U| = {n:,}", hedge_rows(n, repeats))
    for n in (10_000, 1_000_000):
        report(f"batched marginal gains (probabilistic coverage), |U| = {n:,}, |S| = 10", gains_rows(n, repeats))
    report("one FI-DP round vs k gain passes, |U| = 10,000, k = 10", round_rows(10_000, 10, repeats))


if __name__ == "__main__":
    main()
