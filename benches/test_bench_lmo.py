"""LMO speed against what a user would otherwise call, one benchmark group per problem so the ratios show
up side by side in one run.

Run with ``pytest benches/test_bench_lmo.py --benchmark-enable`` (benchmarks are disabled by default).

* ``uniform-matroid n=1e6``: ``UniformMatroid.lmo`` vs ``numpy.argpartition`` (plus writing the indicator).
* ``spanning-tree n=1e4 m=1e5``: ``GraphicMatroid.lmo`` vs ``scipy.sparse.csgraph.minimum_spanning_tree``
  (building the sparse matrix for the new weights is part of the call) and ``networkx.minimum_spanning_tree``
  (weights already stored on the graph, which favours networkx).
* ``dag-path n=1e4 m=1e5``: ``PathPolytope.lmo`` vs a dynamic program over ``networkx.topological_sort``
  (networkx has no DAG shortest path for negative weights; weights already stored on the graph);
  ``dag-path n=2e3 m=2e4``: vs ``networkx.bellman_ford_path_length``, what networkx offers for negative
  weights (too slow for the larger graph).

Every baseline's answer is checked against ours before timing.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from instances import random_dag, random_graph
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import minimum_spanning_tree

from dponline.domains import GraphicMatroid, PathPolytope, UniformMatroid

SEED = 7
SLOW = {"rounds": 3, "iterations": 1, "warmup_rounds": 0}


# ------------------------------------------------------------------------------------------ uniform matroid

N_UNIFORM, K_UNIFORM = 1_000_000, 10_000


@pytest.fixture(scope="module")
def uniform():
    d = np.random.default_rng(SEED).standard_normal(N_UNIFORM)
    return UniformMatroid(N_UNIFORM, K_UNIFORM), d


def numpy_top_k(d: np.ndarray, k: int) -> np.ndarray:
    v = np.zeros(d.shape[0])
    v[np.argpartition(d, k - 1)[:k]] = 1.0
    return v


@pytest.mark.benchmark(group="uniform-matroid n=1e6 k=1e4")
def test_uniform_dponline(benchmark, uniform):
    domain, d = uniform
    v = benchmark(domain.lmo, d)
    np.testing.assert_array_equal(v, numpy_top_k(d, K_UNIFORM))


@pytest.mark.benchmark(group="uniform-matroid n=1e6 k=1e4")
def test_uniform_numpy_argpartition(benchmark, uniform):
    _, d = uniform
    v = benchmark(numpy_top_k, d, K_UNIFORM)
    assert v.sum() == K_UNIFORM


# ------------------------------------------------------------------------------------------ spanning trees

N_GRAPH, M_GRAPH = 10_000, 100_000


@pytest.fixture(scope="module")
def graph():
    rng = np.random.default_rng(SEED)
    edges = random_graph(rng, N_GRAPH, M_GRAPH)
    w = rng.uniform(-1.0, 1.0, size=M_GRAPH)
    return edges, w


def scipy_mst_weight(edges: np.ndarray, w: np.ndarray) -> float:
    # scipy drops zero entries, so shift the weights positive (a constant shift keeps the same tree).
    shift = 2.0
    matrix = coo_matrix((w + shift, (edges[:, 0], edges[:, 1])), shape=(N_GRAPH, N_GRAPH)).tocsr()
    return float(minimum_spanning_tree(matrix).sum()) - shift * (N_GRAPH - 1)


@pytest.mark.benchmark(group="spanning-tree n=1e4 m=1e5")
def test_mst_dponline(benchmark, graph):
    edges, w = graph
    domain = GraphicMatroid(N_GRAPH, edges)
    tree = benchmark(domain.lmo, w)
    assert tree @ w == pytest.approx(scipy_mst_weight(edges, w), abs=1e-6)


@pytest.mark.benchmark(group="spanning-tree n=1e4 m=1e5")
def test_mst_scipy(benchmark, graph):
    edges, w = graph
    benchmark(scipy_mst_weight, edges, w)


@pytest.mark.benchmark(group="spanning-tree n=1e4 m=1e5")
def test_mst_networkx(benchmark, graph):
    edges, w = graph
    g = nx.Graph()
    g.add_weighted_edges_from((int(u), int(v), float(x)) for (u, v), x in zip(edges, w, strict=True))
    tree = benchmark.pedantic(nx.minimum_spanning_tree, args=(g,), **SLOW)
    assert tree.size(weight="weight") == pytest.approx(scipy_mst_weight(edges, w), abs=1e-6)


# --------------------------------------------------------------------------------------------- DAG paths


def weighted_dag(n: int, m: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """:func:`instances.random_dag` with standard-normal edge weights: ``(edges, weights, source, target)``."""
    rng = np.random.default_rng(SEED)
    edges, source, target = random_dag(rng, n, m)
    return edges, rng.normal(0.0, 1.0, size=len(edges)), source, target


@pytest.fixture(scope="module")
def big_dag():
    return weighted_dag(10_000, 100_000)


@pytest.fixture(scope="module")
def small_dag():
    return weighted_dag(2_000, 20_000)


def digraph(edges: np.ndarray, w: np.ndarray) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_weighted_edges_from((int(u), int(v), float(x)) for (u, v), x in zip(edges, w, strict=True))
    return g


def networkx_topological_dp(g: nx.DiGraph, s: int, t: int) -> float:
    """Shortest s-t path length by dynamic programming over ``networkx.topological_sort``: the linear-time
    algorithm a networkx user would write (networkx has no DAG shortest path for negative weights)."""
    dist = {s: 0.0}
    for u in nx.topological_sort(g):
        if u in dist:
            du = dist[u]
            for v, data in g.succ[u].items():
                c = du + data["weight"]
                if c < dist.get(v, np.inf):
                    dist[v] = c
    return dist[t]


def check_and_time_ours(benchmark, dag) -> None:
    edges, w, s, t = dag
    domain = PathPolytope(int(edges.max()) + 1, edges, s, t)
    path = benchmark(domain.lmo, w)
    assert path @ w == pytest.approx(networkx_topological_dp(digraph(edges, w), s, t), abs=1e-6)


@pytest.mark.benchmark(group="dag-path n=1e4 m=1e5")
def test_dag_dponline(benchmark, big_dag):
    check_and_time_ours(benchmark, big_dag)


@pytest.mark.benchmark(group="dag-path n=1e4 m=1e5")
def test_dag_networkx_topological_dp(benchmark, big_dag):
    edges, w, s, t = big_dag
    benchmark.pedantic(networkx_topological_dp, args=(digraph(edges, w), s, t), **SLOW)


@pytest.mark.benchmark(group="dag-path n=2e3 m=2e4")
def test_small_dag_dponline(benchmark, small_dag):
    check_and_time_ours(benchmark, small_dag)


@pytest.mark.benchmark(group="dag-path n=2e3 m=2e4")
def test_small_dag_networkx_bellman_ford(benchmark, small_dag):
    edges, w, s, t = small_dag
    g = digraph(edges, w)
    length = benchmark.pedantic(nx.bellman_ford_path_length, args=(g, s, t), **SLOW)
    assert length == pytest.approx(networkx_topological_dp(g, s, t), abs=1e-6)
