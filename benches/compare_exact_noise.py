"""Exact discrete samplers vs numpy's float samplers and OpenDP's exact ones, side by side in one run.

    python benches/compare_exact_noise.py [--quick] [--draws 1000000]

Rows (ns per draw, best of interleaved repeats at ``--draws`` draws per call):

* ``numpy laplace`` / ``numpy normal`` — ``numpy.random.Generator.laplace`` / ``.normal`` (PCG64, float64): the
  references of the targets (issue 21: ``discrete_laplace`` >= 0.25x numpy's laplace throughput,
  ``discrete_gaussian`` >= 0.10x numpy's normal);
* ``dponline discrete_laplace`` / ``discrete_gaussian`` — ``dponline.noise``, exact (Canonne-Kamath-Steinke
  2020), seeded (xoshiro256++) and secure (``seed=None``: ChaCha20 keyed from the OS, the default), at an
  integer scale of 1, a large one (``2^30``, the grid scale every exact mechanism uses) and a non-integer one
  (1.7 / 2.5: the discrete Gaussian's big-integer path);
* ``opendp`` — OpenDP 0.16's vectorised exact mechanisms on an integer vector of zeros (``make_laplace`` /
  ``make_gaussian`` on ``vector_domain(atom_domain(T=int))``), at ``--opendp-draws`` draws (it is about
  10^3 times slower; its time includes turning the Python list into a Rust vector and back, a few percent).

The generator's own cost per 64-bit word (the floor of any sampler on it) is printed by the Rust timing test
``cargo test -p dponline-core --profile dev-release --lib -- --ignored exact_draw_speed --nocapture``, with the
words each sampler reads per draw. Absolute times on the shared 2-core machines are noise: read the ratios.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from dponline import noise


def best_ns(fn: Callable[[], object], draws: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - began)
    return best / draws * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--opendp-draws", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="10^5 draws, 2 repeats, 2000 OpenDP draws")
    args = parser.parse_args()
    if args.quick:
        args.draws, args.repeats, args.opendp_draws = 100_000, 2, 2_000
    n = args.draws
    rng = np.random.default_rng(0)
    rows: dict[str, Callable[[], object]] = {
        "numpy laplace(1)": lambda: rng.laplace(0.0, 1.0, n),
        "numpy normal(1)": lambda: rng.normal(0.0, 1.0, n),
    }
    for label, seed in (("seeded", 1), ("secure", None)):
        for scale in (1.0, 2.0**30, 2.5):
            rows[f"discrete_laplace({scale:g}) {label}"] = lambda s=scale, sd=seed: noise.discrete_laplace(
                s, n, seed=sd
            )
        for sigma in (1.0, 2.0**30, 1.7):
            rows[f"discrete_gaussian({sigma:g}) {label}"] = lambda s=sigma, sd=seed: noise.discrete_gaussian(
                s, n, seed=sd
            )
    times = {name: float("inf") for name in rows}
    for _ in range(args.repeats):  # interleaved: every row sees the same machine load
        for name, fn in rows.items():
            times[name] = min(times[name], best_ns(fn, n, 1))
    lap, nor = times["numpy laplace(1)"], times["numpy normal(1)"]
    print(f"{n} draws per call, best of {args.repeats} interleaved repeats")
    print(f"{'sampler':38s} {'ns/draw':>9s} {'throughput vs numpy':>20s}")
    for name, ns in times.items():
        ref = lap if "laplace" in name else nor
        target = (
            "" if name.startswith("numpy") else ("  (target >= 0.25)" if "laplace" in name else "  (target >= 0.10)")
        )
        print(f"{name:38s} {ns:9.1f} {ref / ns:19.3f}x{target}")
    try:
        import opendp.prelude as dp
    except ImportError:
        print("opendp: not installed (pip install 'opendp==0.16.*'), skipped")
        return
    dp.enable_features("contrib")
    m = args.opendp_draws
    zeros = [0] * m
    lap_m = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=1.0)
    gau_m = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=1.0)
    for name, meas, ours in (
        ("opendp discrete laplace(1)", lap_m, "discrete_laplace(1) secure"),
        ("opendp discrete gaussian(1)", gau_m, "discrete_gaussian(1) secure"),
    ):
        ns = best_ns(lambda mm=meas: mm(zeros), m, max(1, args.repeats // 2))
        print(f"{name:38s} {ns:9.1f}   dponline secure is {ns / times[ours]:.0f}x faster ({m} draws)")


if __name__ == "__main__":
    main()
