"""pytest-benchmark: the secure default (exact discrete noise on a power-of-two grid) against the floating-point
sampler it replaced, side by side in one run (issue 21: the default may cost at most 2x).

* group ``default-tree-push-dim=100``: ``TreeAggregator.push`` at d = 100 (padded, horizon 10^7, Laplace and
  Gaussian, scale 1), seeded (xoshiro256++) and unseeded (the OS-keyed generator), ``sampler="exact"`` (the
  default) vs ``sampler="floating-point"``; one Python call per iteration.
* group ``default-tree-push-vs-floor-dim=100-<noise>``: the exact push against its floor, both per block of
  1,000 pushes: ``push`` 1,000 times vs the exact draws those pushes must make — a padded push redraws the node
  rows at positions ``0..=k``, ``k = trailing_zeros(t)``, one of them handed down when ``k >= 1``, so ``1`` row
  when ``t`` is odd and ``k`` rows otherwise: 1.5 rows of ``d`` draws per push on average — drawn by
  ``dponline.noise.discrete_laplace`` / ``discrete_gaussian`` at the tree's scale in grid units (``2**30`` for
  scale 1) in one call (the sampler's own throughput, no per-call cost). The ratio is what a push costs beyond
  its draws (grid rounding, integer sums, the release).
* group ``default-blt-push-dim=100``: ``BLT.push`` at d = 100 (4 buffers, horizon 10^6, Gaussian σ = 1, seeded),
  ``sampler="exact"`` (the default: integer encoder, exact discrete Gaussian, float decoder) vs
  ``sampler="floating-point"``; one Python call per iteration.
* group ``default-private_bandit-run-T=1e6``: a whole ``PrivateBandit.run`` of T = 10^6 rounds on the NYSE
  portfolio losses (simplex, n = 36, ε = 1, δ = 1e-6), exact vs floating-point, the same calibration for both
  (``calibration="zcdp"`` is not available to the float tree, so both take the paper's, whose scale is the same
  up to the grid's rounding): the ratio is the sampler's cost alone.
* group ``default-private_submodular-run-n=1000-k=10-T=1e4``: a whole full-information ``PrivateSubmodular.run``
  (n = 1000 items, k = 10 experts, T = 10^4 rounds, ε = 1, δ = 1e-6, probabilistic coverage rows uniform in
  [0, 0.05], seeded and OS-keyed), ``sampler="exact"`` (the default: integer payoff sums, exact rejection draws)
  vs ``sampler="floating-point"`` (log-domain Hedge, sum-tree draws). Floor: both make the same k·n gains per
  round; the exact path replaces the float pass (exp per item) by an integer one and the O(log n) draw by about
  one proposal (the private weights are nearly uniform). Measured (one run, this 2-core machine, dev-release
  build): exact / floating-point = 1.33 (316 ms vs 237 ms median, seeded and OS-keyed alike).

The ratio per pair is exact / floating-point of the medians; ``python -m pytest benches/test_bench_exact_default.py
--benchmark-enable --benchmark-group-by=group`` prints them side by side.
"""

from __future__ import annotations

import numpy as np
import pytest

import dponline
from dponline.domains import Simplex

HORIZON = 10**7
DIM = 100
BANDIT_ROUNDS = 10**6
BLT_HORIZON = 10**6


@pytest.mark.parametrize("seeded", [True, False], ids=["seeded", "os-keyed"])
@pytest.mark.parametrize("sampler", ["exact", "floating-point"])
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_tree_push(benchmark, noise: str, sampler: str, seeded: bool) -> None:
    benchmark.group = f"default-tree-push-dim={DIM}-{noise}"
    benchmark.extra_info.update(dim=DIM, noise=noise, sampler=sampler, seeded=seeded)
    tree = dponline.TreeAggregator(DIM, HORIZON, scale=1.0, noise=noise, seed=0 if seeded else None, sampler=sampler)
    assert tree.sampler == sampler
    x = np.random.default_rng(0).uniform(-1.0, 1.0, DIM)
    rounds, iterations = 30, 1_000
    out = benchmark.pedantic(tree.push, args=(x,), rounds=rounds, iterations=iterations, warmup_rounds=1)
    assert out.shape == (DIM,) and tree.t < HORIZON


FLOOR_PUSHES = 1_000
#: Mean node rows a padded push redraws (module docs): 1 for odd t, trailing_zeros(t) otherwise.
ROWS_PER_PUSH = 1.5


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_tree_push_block(benchmark, noise: str) -> None:
    benchmark.group = f"default-tree-push-vs-floor-dim={DIM}-{noise}"
    benchmark.extra_info.update(dim=DIM, noise=noise, pushes=FLOOR_PUSHES)
    tree = dponline.TreeAggregator(DIM, HORIZON, scale=1.0, noise=noise, seed=0)
    assert tree.sampler == "exact" and tree.grid == 2.0**-30
    x = np.random.default_rng(0).uniform(-1.0, 1.0, DIM)

    def pushes() -> None:
        for _ in range(FLOOR_PUSHES):
            tree.push(x)

    benchmark.pedantic(pushes, rounds=20, iterations=1, warmup_rounds=1)
    assert tree.t < HORIZON


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_tree_push_floor(benchmark, noise: str) -> None:
    benchmark.group = f"default-tree-push-vs-floor-dim={DIM}-{noise}"
    draws = int(ROWS_PER_PUSH * DIM * FLOOR_PUSHES)
    benchmark.extra_info.update(dim=DIM, noise=noise, pushes=FLOOR_PUSHES, draws=draws)
    sample = dponline.noise.discrete_laplace if noise == "laplace" else dponline.noise.discrete_gaussian
    out = benchmark.pedantic(sample, args=(2.0**30, draws), kwargs={"seed": 0}, rounds=20, iterations=1)
    assert out.shape == (draws,)


@pytest.mark.parametrize("sampler", ["exact", "floating-point"])
def test_blt_push(benchmark, sampler: str) -> None:
    benchmark.group = f"default-blt-push-dim={DIM}"
    benchmark.extra_info.update(dim=DIM, sampler=sampler)
    blt = dponline.aggregation.BLT(DIM, BLT_HORIZON, scale=1.0, buffers=4, seed=0, sampler=sampler)
    assert blt.sampler == sampler
    x = np.random.default_rng(0).uniform(-1.0, 1.0, DIM)
    out = benchmark.pedantic(blt.push, args=(x,), rounds=30, iterations=1_000, warmup_rounds=1)
    assert out.shape == (DIM,) and blt.t < BLT_HORIZON


@pytest.mark.parametrize("sampler", ["exact", "floating-point"])
def test_private_bandit_run(benchmark, nyse_family, sampler: str) -> None:
    benchmark.group = "default-private_bandit-run-T=1e6"
    benchmark.extra_info.update(rounds=BANDIT_ROUNDS, sampler=sampler)

    def setup():
        learner = dponline.PrivateBandit(
            Simplex(nyse_family.dim),
            horizon=BANDIT_ROUNDS,
            epsilon=1.0,
            delta=1e-6,
            lipschitz=nyse_family.lipschitz,
            loss_bound=nyse_family.loss_bound,
            calibration="paper",
            seed=0,
            sampler=sampler,
        )
        return (learner,), {}

    def run(learner: dponline.PrivateBandit) -> dponline.RunResult:
        return learner.run(nyse_family, rounds=BANDIT_ROUNDS, checkpoints=1)

    result = benchmark.pedantic(run, setup=setup, rounds=1, warmup_rounds=0)
    assert result.rounds == BANDIT_ROUNDS


SUB_ITEMS, SUB_K, SUB_ROUNDS = 1000, 10, 10**4


@pytest.mark.parametrize("seeded", [True, False], ids=["seeded", "os-keyed"])
@pytest.mark.parametrize("sampler", ["exact", "floating-point"])
def test_private_submodular_run(benchmark, sampler: str, seeded: bool) -> None:
    benchmark.group = f"default-private_submodular-run-n={SUB_ITEMS}-k={SUB_K}-T=1e4"
    benchmark.extra_info.update(items=SUB_ITEMS, k=SUB_K, rounds=SUB_ROUNDS, sampler=sampler, seeded=seeded)
    rows = np.random.default_rng(0).uniform(0.0, 0.05, size=(SUB_ROUNDS, SUB_ITEMS))
    family = dponline.submodular.ProbabilisticCoverage(rows)

    def setup():
        learner = dponline.PrivateSubmodular(
            SUB_ITEMS,
            SUB_K,
            horizon=SUB_ROUNDS,
            epsilon=1.0,
            delta=1e-6,
            sampler=sampler,
            seed=0 if seeded else None,
        )
        return (learner,), {}

    def run(learner: dponline.PrivateSubmodular) -> dponline.RunResult:
        return learner.run(family, rounds=SUB_ROUNDS, checkpoints=1)

    result = benchmark.pedantic(run, setup=setup, rounds=3, warmup_rounds=0)
    assert result.rounds == SUB_ROUNDS
