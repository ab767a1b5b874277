"""pytest-benchmark: ``TreeAggregator.push`` (one Python call per iteration) and ``push_many`` (blocks).

Groups ``tree-push-dim=…`` and ``tree-push_many-dim=…``; within a group compare Laplace against Gaussian.
``push_many`` timings are per block: divide by ``extra_info["rows"]`` for the per-row cost. Every tree has
``horizon = 10^7`` and the number of pushes is fixed by ``benchmark.pedantic`` well below it, so a tree can
never be exhausted during calibration.
"""

from __future__ import annotations

import numpy as np
import pytest

import dponline

HORIZON = 10**7
DIMS = (1, 100, 10_000)
NOISES = ("laplace", "gaussian")
# (rounds, iterations) of pedantic: pushes per benchmark = rounds · iterations (+ one warm-up round).
PUSH_PLAN = {1: (50, 2_000), 100: (50, 1_000), 10_000: (30, 50)}
# rows per push_many block, and (rounds, iterations).
BLOCK_PLAN = {1: (10_000, 20, 5), 100: (1_000, 20, 5), 10_000: (10, 20, 5)}


def _tree(dim: int, noise: str) -> dponline.TreeAggregator:
    return dponline.TreeAggregator(dim, HORIZON, scale=1.0, noise=noise, padded=True, seed=0)


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("dim", DIMS)
def test_push(benchmark, dim: int, noise: str) -> None:
    benchmark.group = f"tree-push-dim={dim}"
    benchmark.extra_info.update(rows=1, dim=dim, noise=noise, padded=True)
    tree = _tree(dim, noise)
    x = np.random.default_rng(0).uniform(-1.0, 1.0, dim)
    rounds, iterations = PUSH_PLAN[dim]
    out = benchmark.pedantic(tree.push, args=(x,), rounds=rounds, iterations=iterations, warmup_rounds=1)
    assert out.shape == (dim,)
    assert tree.t <= (rounds + 2) * iterations < HORIZON  # + warm-up round and one extra call


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("dim", DIMS)
def test_push_many(benchmark, dim: int, noise: str) -> None:
    rows, rounds, iterations = BLOCK_PLAN[dim]
    benchmark.group = f"tree-push_many-dim={dim}"
    benchmark.extra_info.update(rows=rows, dim=dim, noise=noise, padded=True)
    tree = _tree(dim, noise)
    X = np.random.default_rng(0).uniform(-1.0, 1.0, (rows, dim))
    out = benchmark.pedantic(tree.push_many, args=(X,), rounds=rounds, iterations=iterations, warmup_rounds=1)
    assert out.shape == (rows, dim)
    assert tree.t <= (rounds + 2) * iterations * rows < HORIZON
