"""PrivateBandit's native ``run`` vs a numpy implementation of Ene-Nguyen-Vladu Algorithm 1, in one run.

    python benches/compare_private_bandit.py [--quick] [--rounds N] [--long-horizon T]

1. Both learners play the same stream — NYSE price relatives (36 stocks) bootstrapped to ``N`` rounds,
   simplex ``n = 36``, loss ``−ln⟨r_t, x⟩`` — with the same schedule (the native learner's ``params``: η, ζ,
   r, shrink, T_batch) and the same Gaussian tree noise scale (ε = 1, δ = 1e-6). Steps/s are compared (best
   of several interleaved repeats: on a shared 2-core machine only the ratio means anything).
2. One run of the native learner over ``T = 10^7`` bootstrapped rounds, in a child process: wall-clock
   seconds and peak resident memory (``VmHWM``, else ``ru_maxrss``) of that process.

The numpy learner (:func:`numpy_private_bandit`) is Algorithm 1 written directly: per round one sphere
direction in the simplex's tangent space (Gaussian minus its mean, normalised), the Appendix D query point,
the one-point gradient estimate, and one Frank-Wolfe step with exact line search (simplex LMO = argmin);
per batch one push into :class:`baselines.NumpyTree` (padded binary mechanism).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import NumpyTree  # noqa: E402
from bench_cli import quick_parser  # noqa: E402

import dponline  # noqa: E402
from dponline.datasets import load_nyse  # noqa: E402
from dponline.domains import Simplex  # noqa: E402

EPSILON, DELTA = 1.0, 1e-6


def make_stream(horizon: int) -> tuple[np.ndarray, dponline.losses.LossFamily]:
    R = np.asarray(load_nyse().relatives, dtype=np.float64)
    return R, dponline.losses.PortfolioLogLoss(
        R, relative_range=(0.5, 2.0), horizon=horizon, resample="bootstrap", seed=0
    )


def make_learner(family: dponline.losses.LossFamily, horizon: int, seed: int = 0) -> dponline.PrivateBandit:
    return dponline.PrivateBandit(
        Simplex(family.dim),
        horizon=horizon,
        epsilon=EPSILON,
        delta=DELTA,
        lipschitz=family.lipschitz,
        loss_bound=family.loss_bound,
        seed=seed,
    )


def numpy_private_bandit(rows: np.ndarray, params: dict, center: np.ndarray, seed: int = 0) -> tuple[float, np.ndarray]:
    """Algorithm 1 (with Appendix D) in numpy over the loss rows ``rows`` (shape ``(T, n)``).

    Returns the total loss of the played points and the final ``x̃`` (like ``RunResult.final_point``).

    ``params`` is a native learner's ``params`` dict (schedule and ``noise``/``noise_scale``); ``center`` is
    the domain's interior point ``c`` (the simplex's barycentre).
    """
    horizon, n = rows.shape
    rng = np.random.default_rng(seed)
    t_batch, eta, zeta = int(params["t_batch"]), params["eta"], params["zeta"]
    keep = 1.0 - params["shrink"]  # 1 − ζ/r
    grad_scale = max(int(params["affine_dim"]), 1) / zeta  # d/ζ
    bound = params["loss_bound"]
    tree = NumpyTree(n, int(params["t_round"]), params["noise_scale"], params["noise"], rng)
    c = np.array(center, dtype=np.float64)
    x = c.copy()  # Frank-Wolfe iterate (x̃ of the batch being built)
    v = -eta * tree.initial  # Frank-Wolfe target −η·s̃_{R−1}
    g = np.zeros(n)  # g̃_R
    base = c.copy()  # c + (1 − ζ/r)(x̃_{R−1} − c): y_t = base + (1 − ζ/r)·ζ·u_t
    step = keep * zeta
    total, in_batch = 0.0, 0
    anchor = c.copy()
    normal, log, sqrt, argmin = rng.standard_normal, math.log, math.sqrt, np.argmin
    for t in range(horizon):
        u = normal(n)
        u -= u.mean()  # projection onto the tangent space {Σu = 0}
        u *= 1.0 / sqrt(u @ u)
        y = base + step * u
        loss = -log(rows[t] @ y)
        total += loss
        g += (grad_scale * min(max(loss, -bound), bound)) * u
        # One Frank-Wolfe step on ½‖x‖² − ⟨v, x⟩: s = lmo(x − v) = e_k, exact line search.
        k = argmin(x - v)
        d = -x
        d[k] += 1.0  # s − x
        dd = d @ d
        if dd > 0.0:
            gamma = min(max((v - x) @ d / dd, 0.0), 1.0)
            if gamma > 0.0:
                x += gamma * d
        in_batch += 1
        if in_batch == t_batch or t + 1 == horizon:
            release = tree.push(g)
            anchor = x.copy()
            base = c + keep * (anchor - c)
            v = -eta * release
            g[:] = 0.0
            in_batch = 0
    return total, anchor


def compare(rounds: int, repeats: int) -> dict:
    R, family = make_stream(rounds)
    rows = R[family.row_indices()]
    params = make_learner(family, rounds).params
    center = Simplex(family.dim).interior_point
    native, numpy_ = math.inf, math.inf
    native_loss = numpy_loss = math.nan
    for rep in range(repeats):
        for _ in range(5):  # the native run is short: several tries per repeat
            learner = make_learner(family, rounds, seed=rep)
            began = time.perf_counter()
            result = learner.run(family, checkpoints=1)
            native = min(native, time.perf_counter() - began)
            native_loss = result.total_loss / rounds
        began = time.perf_counter()
        numpy_loss = numpy_private_bandit(rows, params, center, seed=rep)[0] / rounds
        numpy_ = min(numpy_, time.perf_counter() - began)
    return {
        "rounds": rounds,
        "native_steps_per_s": rounds / native,
        "numpy_steps_per_s": rounds / numpy_,
        "native_mean_loss": native_loss,
        "numpy_mean_loss": numpy_loss,
        "params": params,
    }


def _maxrss_mb() -> float:
    """Peak resident set size of this process image, in MiB.

    ``VmHWM`` (Linux) rather than ``ru_maxrss``: Linux carries ``ru_maxrss`` across ``fork``/``exec``, so a
    child started by a large parent would report the parent's peak.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def long_run_child(horizon: int) -> None:
    """Run in a child process: one native run over ``horizon`` rounds; prints a JSON line."""
    R, family = make_stream(horizon)
    learner = make_learner(family, horizon)
    before = _maxrss_mb()
    began = time.perf_counter()
    result = learner.run(family, checkpoints=1000)
    seconds = time.perf_counter() - began
    print(
        json.dumps(
            {
                "horizon": horizon,
                "seconds": seconds,
                "native_seconds": result.seconds,
                "maxrss_before_mb": before,
                "maxrss_after_mb": _maxrss_mb(),
                "mean_loss": result.total_loss / horizon,
            }
        )
    )


def long_run(horizon: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(horizon)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = quick_parser(__doc__, "2·10^4 rounds and T = 10^6 (< 30 s)")
    parser.add_argument("--rounds", type=int, help="rounds of the side-by-side comparison (default 2·10^5)")
    parser.add_argument("--long-horizon", type=int, help="T of the long native run (default 10^7)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        long_run_child(args.child)
        return
    rounds = args.rounds or (20_000 if args.quick else 200_000)
    long_horizon = args.long_horizon or (10**6 if args.quick else 10**7)
    repeats = 2 if args.quick else 3

    cmp = compare(rounds, repeats)
    ratio = cmp["native_steps_per_s"] / cmp["numpy_steps_per_s"]
    p = cmp["params"]
    print(
        f"stream: NYSE (36 stocks) bootstrapped, T = {rounds:,}; T_batch = {p['t_batch']}, "
        f"{p['noise']} noise sigma = {p['noise_scale']:.4g} (epsilon = {EPSILON}, delta = {DELTA})"
    )
    long = long_run(long_horizon)

    print()
    print(
        f"| PrivateBandit, simplex n = 36, NYSE bootstrapped, Gaussian ε = {EPSILON:g}, δ = {DELTA:g} "
        "| measured | target |"
    )
    print("|---|---:|---:|")
    print(f"| dponline `run` (native), T = {rounds:,} | {_fmt_rate(cmp['native_steps_per_s'])} steps/s | |")
    print(f"| numpy Algorithm 1, same stream and schedule | {_fmt_rate(cmp['numpy_steps_per_s'])} steps/s | |")
    print(f"| speed-up native / numpy | **{ratio:.0f}×** | ≥ 50× |")
    print(
        f"| native `run`, T = {long_horizon:,}: wall-clock | {long['seconds']:.1f} s | "
        f"{'≤ 60 s' if long_horizon == 10**7 else '(≤ 60 s at T = 10^7)'} |"
    )
    print(
        f"| native `run`, T = {long_horizon:,}: peak RSS of the process | {long['maxrss_after_mb']:.0f} MB "
        f"({long['maxrss_before_mb']:.0f} MB before `run`) | < 200 MB |"
    )
    print(
        f"| mean loss per round, native / numpy (sanity) | {cmp['native_mean_loss']:.5f} / "
        f"{cmp['numpy_mean_loss']:.5f} | similar |"
    )
    print()
    print(
        f"Steps/s: best of {repeats} interleaved repeats on a shared 2-core machine: read the ratio, not the "
        "rates. Peak RSS is the whole Python process (interpreter, numpy, dponline, the NYSE data)."
    )


def _fmt_rate(rate: float) -> str:
    return f"{rate / 1e6:.3g} M" if rate >= 1e6 else f"{rate / 1e3:.3g} k"


if __name__ == "__main__":
    main()
