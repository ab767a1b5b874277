"""Random graph instances shared by the LMO benchmarks (``test_bench_lmo.py``, ``compare_dpftpl.py``): the same
generator, so the same seed gives the same graph in both."""

from __future__ import annotations

import numpy as np


def random_graph(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """A connected graph on ``n`` nodes with ``m`` edges: a random spanning tree plus random extra edges; int array
    of shape ``(m, 2)``, each row ``(u, v)`` with ``u < v``, rows sorted."""
    order = rng.permutation(n)
    pairs = {tuple(sorted((int(order[i]), int(order[rng.integers(0, i)])))) for i in range(1, n)}
    while len(pairs) < m:
        u, v = rng.choice(n, size=2, replace=False)
        pairs.add(tuple(sorted((int(u), int(v)))))
    return np.array(sorted(pairs))


def random_dag(rng: np.random.Generator, n: int, m: int) -> tuple[np.ndarray, int, int]:
    """A DAG on ``n`` nodes with ``m`` edges and a Hamiltonian spine (so every node is on a source-target path),
    relabelled at random: ``(edges of shape (m, 2), source, target)``."""
    label = rng.permutation(n)
    pairs = {(i, i + 1) for i in range(n - 1)}
    while len(pairs) < m:
        i = int(rng.integers(0, n - 1))
        pairs.add((i, int(rng.integers(i + 1, min(i + 200, n)))))
    edges = np.array([(label[i], label[j]) for i, j in sorted(pairs)])
    return edges, int(label[0]), int(label[-1])
