"""The experiments harness: process pool vs sequential wall time, and the harness's own overhead per run.

    python benches/compare_sweep.py                       # smoke run, T = 2·10^4 (a few seconds)
    python benches/compare_sweep.py --horizon 1000000     # the issue's measurement (about a minute on 2 cores)

The sweep: PrivateBandit with Laplace noise (δ = 0, Lemma 5.1) and with Gaussian noise (δ = 10⁻⁶, Lemma 5.4)
— 2 learners — at 4 values of ε, 4 seeds each (32 runs), on the NYSE price relatives bootstrapped to ``T``
rounds (simplex, n = 36), 1,000 checkpoints per run. The Lipschitz constant and loss bound are declared
(10, 0.7), not computed from the data. Measured side by side in one process:

1. **plain loop** — the 32 runs as a user would write them: build each learner with the sweep's seed, call
   ``run`` (no harness);
2. **harness, inline** — ``Experiment.run(backend="inline")`` with an on-disk cache, then ``frame()`` and
   ``summary()``. The harness's overhead per run (tasks, cache keys and writes, regret curves, tables) is
   measured as the difference of the Python-side time (wall time minus the seconds spent inside the native
   loops, which both modes report) between (2) and (1), divided by the number of runs — so that noise in the
   native loops on a shared machine does not swamp it — and reported relative to the mean run time;
3. **harness, process pool** — ``Experiment.run(backend="process")`` with one worker per available CPU
   (forkserver start method, including worker start-up) and a fresh cache: plain-loop time / pool time is the
   speed-up (ideal: the number of cores).

Each mode runs ``--repeats`` times, interleaved; the best time of each is reported. ``cpu_per_wall_*`` is the
CPU time the runs got per wall-clock second (1 = one busy core): on a shared machine whose load average
exceeds its core count, the pool's speed-up is bounded by the CPU share the scheduler grants, not by the
harness — read it together with ``load_average_1min_at_end``. Both harness modes
produce the same table as the plain loop (checked).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np
import pandas as pd

import dponline
from dponline.datasets import load_nyse
from dponline.domains import Simplex
from dponline.experiments import Experiment, LearnerSpec
from dponline.experiments.backends import _cpu_count

EPSILONS = [0.3, 1.0, 3.0, 10.0]
LIPSCHITZ, LOSS_BOUND = 10.0, 0.7  # declared constants
CHECKPOINTS = 1000


def build(horizon: int, seeds: int) -> Experiment:
    stream = dponline.losses.PortfolioLogLoss(load_nyse().relatives, horizon=horizon, resample="bootstrap", seed=0)
    fixed = {"domain": Simplex(36), "horizon": horizon, "lipschitz": LIPSCHITZ, "loss_bound": LOSS_BOUND}
    return Experiment(
        stream,
        [
            LearnerSpec("laplace", dponline.PrivateBandit, {**fixed, "delta": 0.0}),
            LearnerSpec("gaussian", dponline.PrivateBandit, {**fixed, "delta": 1e-6}),
        ],
        grid={"epsilon": EPSILONS},
        seeds=seeds,
        checkpoints=CHECKPOINTS,
        name="compare_sweep",
    )


def plain_loop(exp: Experiment) -> tuple[float, float, list[np.ndarray]]:
    """The runs without the harness: (wall seconds, seconds inside the native loops, cumulative losses)."""
    began = time.perf_counter()
    native = 0.0
    curves = []
    for c in exp.configurations:
        for k in range(exp.seeds):
            learner = dponline.PrivateBandit(**c.kwargs, seed=exp.seed(c.spec, c.point, k))
            result = learner.run(exp.stream, checkpoints=exp.checkpoints)
            native += result.seconds
            curves.append(result.cumulative_loss)
    return time.perf_counter() - began, native, curves


def harness(exp: Experiment, backend: str, workers: int) -> tuple[float, float, float, pd.DataFrame]:
    """(wall seconds, seconds inside the native loops, CPU seconds of the runs, frame)."""
    with tempfile.TemporaryDirectory() as cache:
        began = time.perf_counter()
        results = exp.run(backend=backend, workers=workers, cache_dir=cache, progress=False)
        frame = results.frame()
        results.summary()
        wall = time.perf_counter() - began
        runs = results.runs()
        return wall, float(runs.run_seconds.sum()), float(runs.cpu_seconds.sum()), frame


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=20_000, help="rounds T per run (default 2·10^4; try 10^6)")
    parser.add_argument("--seeds", type=int, default=4, help="seeds per (learner, ε) (default 4)")
    parser.add_argument("--workers", type=int, default=None, help="process-pool size (default: available CPUs)")
    parser.add_argument("--repeats", type=int, default=2, help="interleaved repeats per mode (default 2)")
    args = parser.parse_args(argv)
    workers = args.workers or _cpu_count()

    harness(build(100, 1), "inline", 1)  # one-time imports (pandas, scipy.stats, tqdm) are not per-run costs
    began = time.perf_counter()
    exp = build(args.horizon, args.seeds)
    setup = time.perf_counter() - began
    n = exp.n_runs
    best = {"plain": np.inf, "inline": np.inf, "process": np.inf}
    native = np.inf
    python_side = {"plain": np.inf, "inline": np.inf}  # wall minus native-loop seconds: Python-side costs
    parallelism = {"inline": 0.0, "process": 0.0}  # CPU seconds of the runs per wall second
    cpu_per_run = {"inline": np.inf, "process": np.inf}
    for _ in range(args.repeats):
        t, nat, curves = plain_loop(exp)
        best["plain"], native = min(best["plain"], t), min(native, nat)
        python_side["plain"] = min(python_side["plain"], t - nat)
        for backend in ("inline", "process"):
            t, nat, cpu, frame = harness(exp, backend, workers)
            best[backend] = min(best[backend], t)
            parallelism[backend] = max(parallelism[backend], cpu / t)
            cpu_per_run[backend] = min(cpu_per_run[backend], cpu / exp.n_runs)
            if backend == "inline":
                python_side["inline"] = min(python_side["inline"], t - nat)
            got = frame.groupby(["learner", "epsilon", "seed"], sort=False).cumulative_loss.apply(np.asarray)
            assert all(np.array_equal(a, b) for a, b in zip(got, curves, strict=True)), backend
    per_run = best["plain"] / n
    overhead = (python_side["inline"] - python_side["plain"]) / n
    report = {
        "horizon": args.horizon,
        "runs": n,
        "workers": workers,
        "setup_seconds (validation builds + BCRP, once)": round(setup, 3),
        "plain_loop_seconds": round(best["plain"], 3),
        "native_loop_seconds": round(native, 3),
        "harness_inline_seconds": round(best["inline"], 3),
        "harness_process_seconds": round(best["process"], 3),
        "speedup_process_vs_plain": round(best["plain"] / best["process"], 2),
        "speedup_process_vs_inline": round(best["inline"] / best["process"], 2),
        "mean_run_seconds": round(per_run, 4),
        "wall_difference_inline_minus_plain_per_run_seconds": round((best["inline"] - best["plain"]) / n, 5),
        "harness_overhead_per_run_seconds": round(overhead, 5),
        "harness_overhead_per_run_percent": round(100 * overhead / per_run, 2),
        "cpu_seconds_per_run_inline": round(cpu_per_run["inline"], 4),
        "cpu_seconds_per_run_process": round(cpu_per_run["process"], 4),
        "cpu_per_wall_inline": round(parallelism["inline"], 2),
        "cpu_per_wall_process": round(parallelism["process"], 2),
        "load_average_1min_at_end": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
