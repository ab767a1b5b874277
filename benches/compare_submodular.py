"""Hedge over large ground sets and batched marginal gains vs numpy and apricot-select, side by side in one run.

    python benches/compare_submodular.py [--quick]

(apricot-select rows need ``pip install 'dponline[bench]'``; without it they are skipped with a message.)

Rows (best of interleaved repeats; 2 shared, noisy cores: only the ratios mean anything):

* Hedge, one full-information update + one sample at |U| ∈ {10³, 10⁶}:
  ``dponline`` (:class:`dponline.mwu.Hedge`: one fused pass over log-weights and leaves that also writes the
  block sums, the sums above the blocks, then a descent to a block and a scan of its 32 leaves) vs ``numpy``
  (log-weights += η g, subtract the max, exp, normalise, ``Generator.choice`` with ``p=``) vs ``one memory
  pass`` (``np.add(w, g, out=w)``: one read of two arrays and one write, no arithmetic beyond an add — the floor
  for any update that touches every weight) vs ``two state arrays`` (``np.add(w, g, out=w)`` then
  ``np.add(w2, g, out=w2)``: the memory traffic of an update that keeps two arrays of state, as Hedge keeps
  log-weights and leaves); and ``bandit update + sample`` (one coordinate changes:
  ``update_one``, O(32 + log(|U|/32)), then a sample) — the path that wins when few weights change.
* Batched marginal gains "gain of every a given the prefix S" for probabilistic coverage at |U| = 10⁴ and
  10⁶, |S| = 10: ``dponline`` (``SubmodularFamily.gains``) vs ``numpy`` (``p·Π_{b∈S}(1 − p_b)`` with the prefix
  zeroed).
* Batched marginal gains vs apricot-select's numba kernels (compiled before timing, JIT excluded; single-threaded,
  ``parallel=False, fastmath=True`` as apricot compiles them for its lazy greedy optimisers), same function, same
  prefix, results checked equal:
  - facility location ``F(S) = Σ_j max_{a∈S} X[a, j]`` over |U| items and m clients: dponline
    ``FacilityLocation(X.T).summed_gains(S)`` (the one-client rows summed) vs apricot's dense
    ``facilityLocation.calculate_gains`` (plus its ``gains -= current_values_sum``);
  - set coverage (each item covers 20 of 10⁵ elements, uniform weights): dponline ``WeightedCoverage.gains`` vs
    apricot's sparse ``maxCoverage.calculate_gains_sparse`` (threshold = one element's weight, so
    ``min(Σ, threshold)`` is coverage).
* One FI-DP round (ask + tell of a row) at |U| = 10⁴, k = 10 vs k gain passes (``family.gains``) on the same
  row.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

import dponline
from dponline.mwu import Hedge
from dponline.submodular import FacilityLocation, ProbabilisticCoverage, WeightedCoverage


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

    w2 = np.zeros(n)

    def two_arrays() -> None:
        np.add(w, g, out=w)
        np.add(w2, g, out=w2)

    hb = Hedge(n, eta, seed=2)
    items = rng.integers(0, n, size=1024).tolist()
    state_b = {"i": 0}

    def bandit() -> None:
        state_b["i"] = (state_b["i"] + 1) & 1023
        hb.update_one(items[state_b["i"]], 0.5)
        hb.sample(1)

    inner = max(1, 20_000 // max(1, n // 1000))
    times: dict[str, list[float]] = {
        "dponline": [],
        "numpy": [],
        "one memory pass": [],
        "two state arrays": [],
        "bandit update + sample": [],
    }
    for _ in range(repeats):  # interleaved
        times["dponline"].append(best_of(native, 1, inner))
        times["numpy"].append(best_of(numpy_hedge, 1, inner))
        times["one memory pass"].append(best_of(one_pass, 1, inner))
        times["two state arrays"].append(best_of(two_arrays, 1, inner))
        times["bandit update + sample"].append(best_of(bandit, 1, 2_000))
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
    times: dict[str, list[float]] = {"dponline": [], "numpy": []}
    for _ in range(repeats):
        times["dponline"].append(best_of(native, 1, inner))
        times["numpy"].append(best_of(numpy_gains, 1, inner))
    return [(name, min(v)) for name, v in times.items()]


def apricot_kernels() -> tuple[Callable[..., None], Callable[..., None]] | None:
    """apricot-select's facility-location (dense) and max-coverage (sparse) gain kernels, or None."""
    try:
        from apricot.functions import facilityLocation, maxCoverage  # type: ignore[import-not-found]
    except ImportError as exc:
        print(f"\napricot-select rows skipped ({exc}); pip install 'dponline[bench]'")
        return None
    # (dtypes, parallel, fastmath, cache): the flags apricot uses for its lazy greedy optimisers.
    fl = facilityLocation.calculate_gains(facilityLocation.dtypes, False, True, False)
    cov = maxCoverage.calculate_gains_sparse(maxCoverage.sdtypes, False, True, False)
    return fl, cov


def facility_rows(fl_kernel: Callable[..., None], n: int, m: int, repeats: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(4)
    X = rng.random((n, m))  # apricot's layout: one row per item, one column per client
    fam = FacilityLocation(np.ascontiguousarray(X.T))  # dponline's: one row (round) per client
    prefix = rng.choice(n, size=10, replace=False).tolist()
    current = X[prefix].max(axis=0)
    idxs = np.arange(n, dtype=np.int64)

    def apricot_gains() -> np.ndarray:
        gains = np.zeros(n)
        fl_kernel(X, gains, current, idxs)
        gains -= current.sum()
        return gains

    np.testing.assert_allclose(apricot_gains(), fam.summed_gains(prefix), rtol=0, atol=1e-9)  # also JIT warm-up
    times: dict[str, list[float]] = {"dponline": [], "apricot-select": []}
    for _ in range(repeats):
        times["dponline"].append(best_of(lambda: fam.summed_gains(prefix), 1, 20))
        times["apricot-select"].append(best_of(apricot_gains, 1, 20))
    return [(name, min(v)) for name, v in times.items()]


def coverage_rows(cov_kernel: Callable[..., None], n: int, m: int, repeats: int) -> list[tuple[str, float]]:
    import scipy.sparse

    rng = np.random.default_rng(5)
    per = 20
    covers = [rng.choice(m, size=per, replace=False) for _ in range(n)]
    fam = WeightedCoverage(np.full((1, m), 1.0 / m), covers)
    X = scipy.sparse.csr_matrix(
        (np.full(n * per, 1.0 / m), (np.repeat(np.arange(n), per), np.concatenate(covers))), shape=(n, m)
    )
    X.sort_indices()
    prefix = rng.choice(n, size=10, replace=False).tolist()
    threshold = 1.0 / m
    current = np.minimum(np.asarray(X[prefix].sum(axis=0)).ravel(), threshold)
    idxs = np.arange(n, dtype=np.int64)

    def apricot_gains() -> np.ndarray:
        gains = np.zeros(n)
        cov_kernel(X.data, X.indices, X.indptr, gains, current, threshold, idxs)
        return gains

    np.testing.assert_allclose(apricot_gains(), fam.gains(0, prefix), rtol=0, atol=1e-12)  # also JIT warm-up
    times: dict[str, list[float]] = {"dponline": [], "apricot-select": []}
    for _ in range(repeats):
        times["dponline"].append(best_of(lambda: fam.gains(0, prefix), 1, 20))
        times["apricot-select"].append(best_of(apricot_gains, 1, 20))
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

    times: dict[str, list[float]] = {"FI-DP round": [], f"{k} gain passes": []}
    for _ in range(repeats):
        times["FI-DP round"].append(best_of(fi_round, 1, 200))
        times[f"{k} gain passes"].append(best_of(k_passes, 1, 200))
    return [(name, min(v)) for name, v in times.items()]


def report(title: str, rows: list[tuple[str, float]]) -> None:
    base = rows[0][1]
    print(f"\n{title}")
    for name, sec in rows:
        print(f"  {name:<24} {sec * 1e6:12.1f} µs   ratio to dponline {sec / base:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 2 if args.quick else 9
    for n in (1_000, 1_000_000):
        report(f"Hedge full update + sample, |U| = {n:,}", hedge_rows(n, repeats))
    for n in (10_000, 1_000_000):
        report(f"batched marginal gains (probabilistic coverage), |U| = {n:,}, |S| = 10", gains_rows(n, repeats))
    kernels = apricot_kernels()
    if kernels is not None:
        fl_kernel, cov_kernel = kernels
        for n, m in ((1_000, 200), (2_000, 500)):
            report(
                f"facility-location gains vs apricot-select, |U| = {n:,} items, {m} clients, |S| = 10",
                facility_rows(fl_kernel, n, m, repeats),
            )
        report(
            "coverage gains vs apricot-select, |U| = 10,000 items x 20 of 100,000 elements, |S| = 10",
            coverage_rows(cov_kernel, 10_000, 100_000, repeats),
        )
    report("one FI-DP round vs k gain passes, |U| = 10,000, k = 10", round_rows(10_000, 10, repeats))


if __name__ == "__main__":
    main()
