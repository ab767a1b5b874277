"""The LMO catalogue vs the solvers a user would otherwise call, side by side in one run.

    python benches/compare_lmo_catalogue.py [--quick]

Each row times one LMO call (best of interleaved repeats; 2 shared, noisy cores: only the ratios mean anything)
and checks that both sides reach the same objective value. The ratio is row time / dponline time: above 1 a
peer is slower than dponline; for a floor row, its inverse is how many floors one LMO call costs.

* Birkhoff ``n = 300``: ``BirkhoffPolytope.lmo`` (column reduction, then shortest augmenting paths) vs SciPy's
  ``linear_sum_assignment`` (shortest augmenting paths in C++). Target: ≥ 0.8×.
* Nuclear-norm ball ``500 × 500``: ``NuclearNormBall.lmo`` (Lanczos on ``DᵀD``, residual ``≤ 1e-10‖DᵀD‖``)
  vs SciPy's ``svds(D, k=1)`` (ARPACK, default tolerance). Target: ≥ 2×. Floor: one product ``DᵀD q`` (NumPy
  ``D.T @ (D @ q)``), the cost of a Lanczos step; the row says how many such products the LMO costs.
* Flow polytope, 500 nodes, 3,000 arcs with cycles and integer capacities: ``FlowPolytope.lmo`` (network simplex
  from a stored feasible basis) vs networkx ``min_cost_flow`` (network simplex in Python). Target: ≥ 20×.
* Bipartite matching, 200 + 200 nodes, ~2,000 edges: ``BipartiteMatchingPolytope.lmo`` (successive shortest
  paths) vs networkx ``max_weight_matching`` on the negative-cost edges (blossom, Python). Target: ≥ 20×.
* k-sparse and hypersimplex, ``n = 10⁶``, ``k = 1,000``: ``KSparsePolytope.lmo`` / ``Hypersimplex.lmo`` vs NumPy
  ``argpartition`` building the same vertex. Target: within 1.5×. Floor: one pass ``np.abs(d)``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import networkx as nx
import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse.linalg import svds

from dponline.domains import (
    BipartiteMatchingPolytope,
    BirkhoffPolytope,
    FlowPolytope,
    Hypersimplex,
    KSparsePolytope,
    NuclearNormBall,
)

Row = tuple[str, Callable[[], object]]


def interleaved(rows: list[Row], repeats: int) -> list[float]:
    """Best seconds per call of each row, the rows run in turn ``repeats`` times."""
    best = [np.inf] * len(rows)
    for _ in range(repeats):
        for i, (_, fn) in enumerate(rows):
            began = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - began)
    return best


def report(title: str, rows: list[Row], repeats: int, target: str) -> None:
    times = interleaved(rows, repeats)
    print(f"\n{title}   (target: {target})")
    base = times[0]
    for (name, _), sec in zip(rows, times, strict=True):
        print(f"  {name:<44} {sec * 1e3:10.3f} ms   time ratio to dponline {sec / base:8.2f}")


def birkhoff(repeats: int) -> None:
    rng = np.random.default_rng(1)
    n = 300
    cost = rng.standard_normal((n, n))
    domain = BirkhoffPolytope(n)
    rows, cols = linear_sum_assignment(cost)
    assert abs(domain.lmo(cost.ravel()) @ cost.ravel() - cost[rows, cols].sum()) < 1e-9
    report(
        f"Birkhoff n = {n}: assignment",
        [
            ("dponline BirkhoffPolytope.lmo", lambda: domain.lmo(cost.ravel())),
            ("scipy linear_sum_assignment", lambda: linear_sum_assignment(cost)),
        ],
        repeats,
        ">= 0.8x",
    )


def nuclear(repeats: int) -> None:
    rng = np.random.default_rng(2)
    d = rng.standard_normal((500, 500))
    domain = NuclearNormBall(500, 500)
    sigma = np.linalg.svd(d, compute_uv=False)[0]
    assert abs(domain.lmo(d.ravel()) @ d.ravel() + sigma) < 1e-9 * sigma
    q = rng.standard_normal(500)
    report(
        "nuclear-norm ball 500 x 500: top singular pair",
        [
            ("dponline NuclearNormBall.lmo", lambda: domain.lmo(d.ravel())),
            ("scipy svds(k=1)", lambda: svds(d, k=1, random_state=0)),
            ("floor: one numpy D.T @ (D @ q)", lambda: d.T @ (d @ q)),
        ],
        repeats,
        ">= 2x svds",
    )


def flow(repeats: int) -> None:
    rng = np.random.default_rng(3)
    n, m = 500, 3000
    edges = [(i, i + 1) for i in range(n - 1)]
    while len(edges) < m:
        u, v = rng.choice(n, size=2, replace=False)
        edges.append((int(u), int(v)))
    caps = rng.integers(1, 10, size=m)
    cost = rng.integers(-3, 20, size=m)
    domain = FlowPolytope(n, edges, 0, n - 1, capacities=caps.astype(float), value=3.0)
    graph = nx.MultiDiGraph()
    graph.add_node(0, demand=-3)
    graph.add_node(n - 1, demand=3)
    for (u, v), c, w in zip(edges, caps, cost, strict=True):
        graph.add_edge(u, v, capacity=int(c), weight=int(w))
    assert domain.lmo(cost.astype(float)) @ cost == nx.min_cost_flow_cost(graph)
    report(
        f"flow polytope, {n} nodes, {m} arcs (cycles, integer capacities), value 3",
        [
            ("dponline FlowPolytope.lmo", lambda: domain.lmo(cost.astype(float))),
            ("networkx min_cost_flow", lambda: nx.min_cost_flow(graph)),
        ],
        max(2, repeats // 3),
        ">= 20x",
    )


def matching(repeats: int) -> None:
    rng = np.random.default_rng(4)
    n = 200
    edges = [(i, j) for i in range(n) for j in range(n) if rng.random() < 0.05]
    d = rng.standard_normal(len(edges))
    domain = BipartiteMatchingPolytope(n, n, edges)
    graph = nx.Graph()
    graph.add_weighted_edges_from((("L", i), ("R", j), -c) for (i, j), c in zip(edges, d, strict=True) if c < 0)
    best = sum(graph[u][v]["weight"] for u, v in nx.max_weight_matching(graph))
    assert abs(domain.lmo(d) @ d + best) < 1e-9
    report(
        f"bipartite matching, {n} + {n} nodes, {len(edges)} edges",
        [
            ("dponline BipartiteMatchingPolytope.lmo", lambda: domain.lmo(d)),
            ("networkx max_weight_matching", lambda: nx.max_weight_matching(graph)),
        ],
        max(2, repeats // 3),
        ">= 20x",
    )


def selection(repeats: int) -> None:
    rng = np.random.default_rng(5)
    n, k = 1_000_000, 1_000
    d = rng.standard_normal(n)
    sparse, hyper = KSparsePolytope(n, k), Hypersimplex(n, k)

    def numpy_sparse() -> np.ndarray:
        top = np.argpartition(-np.abs(d), k - 1)[:k]
        v = np.zeros(n)
        v[top] = -np.sign(d[top])
        return v

    def numpy_hyper() -> np.ndarray:
        v = np.zeros(n)
        v[np.argpartition(d, k - 1)[:k]] = 1.0
        return v

    np.testing.assert_array_equal(sparse.lmo(d), numpy_sparse())
    np.testing.assert_array_equal(hyper.lmo(d), numpy_hyper())
    floor: Row = ("floor: one numpy pass np.abs(d)", lambda: np.abs(d))
    report(
        f"k-sparse polytope, n = {n:,}, k = {k:,}",
        [("dponline KSparsePolytope.lmo", lambda: sparse.lmo(d)), ("numpy argpartition", numpy_sparse), floor],
        repeats,
        "within 1.5x",
    )
    report(
        f"hypersimplex, n = {n:,}, k = {k:,}",
        [("dponline Hypersimplex.lmo", lambda: hyper.lmo(d)), ("numpy argpartition", numpy_hyper), floor],
        repeats,
        "within 1.5x",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    repeats = 3 if args.quick else 11
    birkhoff(repeats)
    nuclear(repeats)
    flow(repeats)
    matching(repeats)
    selection(repeats)


if __name__ == "__main__":
    main()
