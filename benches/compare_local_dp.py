"""Local-DP learners (van der Hoeven 2019) via native ``run`` vs straightforward numpy, measured in one run.

    python benches/compare_local_dp.py [--quick]

Per-round cost at d ∈ {10, 1000} on a logistic stream with per-coordinate Laplace budgets τ = 1:

* ``run`` — the native loop of each learner (subgradient, clipping, d Laplace draws, update);
* ``numpy`` — the same round written with numpy one round at a time: Algorithm 3 evaluates eq. (7) for all
  d coordinates with ``scipy.special.erf`` (the printed formula, vectorised over coordinates; it overflows for
  large sums, which the timing ignores), Algorithm 2 evaluates it once, draws ``rng.laplace`` and updates;
* ``draws`` — the cost of the d Laplace draws a round needs, natively (``dponline.noise.laplace`` of
  ``T·d`` values in one call); ``randomizer`` — ``LocalLaplaceRandomizer.randomize`` on the whole ``(T, d)``
  block (per-coordinate scales, clipping, input/output copies).

Then the closed form of eq. (7) against adaptive quadrature (the same integrals), per prediction, natively
(a ``CoordinatewiseLearner`` with the conjugate prior vs the improper prior, whose predictions use quadrature)
and through the Python function ``_core.potential_log_prediction``.

Every figure is the best of interleaved repeats on shared, noisy cores: only the ratios mean anything.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
from scipy import special

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cli import quick_parser  # noqa: E402

from dponline import LocalLaplaceRandomizer, _core, noise  # noqa: E402
from dponline.local_dp import (  # noqa: E402
    AdaGrad,
    CoordinatewiseLearner,
    LocalStream,
    OnlineGradientDescent,
    UnconstrainedLearner,
)


def _stream(T: int, d: int, seed: int = 0) -> LocalStream:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(T, d))
    y = np.where(X @ rng.normal(size=d) > 0, 1.0, -1.0)
    return LocalStream(X, y, loss="logistic", budgets=1.0)


def _eq7(L: np.ndarray, B: np.ndarray, C: float, b: float) -> np.ndarray:
    """Eq. (7) as printed, vectorised (the naive evaluation: overflows and cancels for large L, B)."""
    with np.errstate(all="ignore"):
        s = np.sqrt(B)
        num = np.sqrt(np.pi) * L * np.exp((L + 2 * C * B) ** 2 / (4 * B)) * (
            special.erf((L - 2 * C * B) / (2 * s)) - special.erf((L + 2 * C * B) / (2 * s))
        ) + 2 * s * (np.exp(2 * C * L) - 1)
        den = special.erf(C * np.sqrt(b)) * np.exp(C * (L + C * B)) * 4 * B**1.5
        w = np.sqrt(b) * num / den
    return np.nan_to_num(w)


def numpy_coordinatewise(stream: LocalStream, G: float, seed: int = 0) -> float:
    X, y, tau = stream.features, stream.labels, stream.budgets
    T, d = X.shape
    C, b = 1 / (5 * G), G * G
    rng = np.random.default_rng(seed)
    L, Q = np.zeros(d), np.zeros(d)
    began = time.perf_counter()
    for t in range(T):
        w = _eq7(L, b + Q, C, b)
        p = X[t] @ w
        g = -y[t] * special.expit(-y[t] * p) * X[t]
        g = np.clip(g, -G, G) + rng.laplace(0.0, 2 * G / tau[t])
        L -= g
        Q += g * g
    return time.perf_counter() - began


def numpy_unconstrained(stream: LocalStream, G: float, seed: int = 0) -> float:
    X, y, tau = stream.features, stream.labels, stream.budgets
    T, d = X.shape
    C, b = 1 / (5 * G), G * G
    rng = np.random.default_rng(seed)
    z, L, Q, S = np.zeros(d), 0.0, 0.0, 0.0
    began = time.perf_counter()
    for t in range(T):
        v = float(_eq7(np.array([L]), np.array([b + Q]), C, b)[0])
        p = X[t] @ (v * z)
        g = -y[t] * special.expit(-y[t] * p) * X[t]
        n = np.linalg.norm(g)
        if n > G:
            g *= G / n
        g = g + rng.laplace(0.0, 2 * G / tau[t])
        h = float(z @ g)
        L -= h
        Q += h * h
        S += float(g @ g)
        z -= np.sqrt(2) / np.sqrt(S) * g
        n = np.linalg.norm(z)
        if n > 1:
            z /= n
    return time.perf_counter() - began


def native(make, stream: LocalStream) -> float:
    learner = make()
    return learner.run(stream, checkpoints=1).seconds


def draws(stream: LocalStream) -> float:
    began = time.perf_counter()
    noise.laplace(2.0, stream.horizon * stream.dim, seed=0)
    return time.perf_counter() - began


def randomizer(stream: LocalStream) -> float:
    r = LocalLaplaceRandomizer(stream.dim, seed=0)
    g = np.zeros((stream.horizon, stream.dim))
    began = time.perf_counter()
    r.randomize(g, stream.budgets)
    return time.perf_counter() - began


def best(f, repeats: int) -> float:
    return min(f() for _ in range(repeats))


def main() -> None:
    parser = quick_parser(__doc__)
    args = parser.parse_args()
    repeats = 2 if args.quick else 3
    print("per-round cost (microseconds) and ratios; logistic stream, Laplace budgets tau = 1")
    print(f"{'d':>6} {'learner':<16} {'run':>9} {'numpy':>9} {'numpy/run':>10} {'d draws':>9} {'run/draws':>10}")
    for d in (10, 1000):
        T = (20_000 if d == 10 else 4_000) // (4 if args.quick else 1)
        stream = _stream(T, d)
        t_draw = best(lambda s=stream: draws(s), repeats) / T
        t_rand = best(lambda s=stream: randomizer(s), repeats) / T
        cells = f"{t_rand * 1e6:9.2f} {'-':>9} {'-':>10} {t_draw * 1e6:9.2f} {t_rand / t_draw:9.1f}x"
        print(f"{d:>6} {'randomizer':<16} {cells}")
    for d in (10, 1000):
        T_native = (20_000 if d == 10 else 4_000) // (4 if args.quick else 1)
        T_numpy = (4_000 if d == 10 else 1_000) // (4 if args.quick else 1)
        stream = _stream(T_native, d)
        small = _stream(T_numpy, d)
        G = 1.0
        t_draw = best(lambda s=stream: draws(s), repeats) / T_native
        rows = [
            ("coordinatewise", lambda d=d, G=G: CoordinatewiseLearner(d, G, seed=0), numpy_coordinatewise),
            ("unconstrained", lambda d=d, G=G: UnconstrainedLearner(d, G * np.sqrt(d), seed=0), numpy_unconstrained),
            ("ogd", lambda d=d: OnlineGradientDescent(d, 0.1, seed=0), None),
            ("adagrad", lambda d=d: AdaGrad(d, 5.0, seed=0), None),
        ]
        for name, make, peer in rows:
            t_run = best(lambda m=make, s=stream: native(m, s), repeats) / T_native
            if peer is not None:
                gb = G if name == "coordinatewise" else G * np.sqrt(d)
                t_np = best(lambda p=peer, s=small, g=gb: p(s, g), repeats) / T_numpy
                np_text, ratio = f"{t_np * 1e6:9.2f}", f"{t_np / t_run:9.1f}x"
            else:
                np_text, ratio = f"{'-':>9}", f"{'-':>10}"
            print(
                f"{d:>6} {name:<16} {t_run * 1e6:9.2f} {np_text} {ratio:>10} {t_draw * 1e6:9.2f} {t_run / t_draw:9.1f}x"
            )
    print()
    print("eq. (7) closed form vs adaptive quadrature, per prediction")
    d, T = 100, (500 if args.quick else 2000)
    stream = _stream(T, d, seed=1)
    t_closed = best(lambda: native(lambda: CoordinatewiseLearner(d, 1.0, seed=0), stream), repeats)
    t_quad = best(lambda: native(lambda: CoordinatewiseLearner(d, 1.0, prior="improper", seed=0), stream), repeats)
    print(f"  native (CoordinatewiseLearner run, d={d}, T={T}; improper prior = quadrature):")
    print(
        f"    closed {t_closed / (T * d) * 1e9:8.1f} ns   quadrature {t_quad / (T * d) * 1e9:8.1f} ns   "
        f"ratio {t_quad / t_closed:6.1f}x"
    )
    grid = [(L, B) for L in (0.1, 3.0, 1e3, 1e9) for B in (1.0, 1e4, 1e10)]

    def calls(method: str) -> float:
        began = time.perf_counter()
        for _ in range(20):
            for L, B in grid:
                _core.potential_log_prediction(L, B, 1.0, method=method)
        return (time.perf_counter() - began) / (20 * len(grid))

    t_c, t_q = best(lambda: calls("closed"), repeats), best(lambda: calls("quadrature"), repeats)
    print(f"  Python call (incl. normaliser for quadrature), grid of {len(grid)} (L, B):")
    print(f"    closed {t_c * 1e6:8.2f} us   quadrature {t_q * 1e6:8.2f} us   ratio {t_q / t_c:6.1f}x")


if __name__ == "__main__":
    main()
