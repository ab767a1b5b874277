"""Domains: every LMO against brute force and against networkx / numpy on larger instances, membership of
LMO outputs, the certified inscribed ball, the tangent projection, errors, and pickling."""

from __future__ import annotations

import itertools
import pickle

import networkx as nx
import numpy as np
import pytest
from conftest import check_certified_ball, check_tangent_projector, directions

import dponline
from dponline.domains import (
    Box,
    Domain,
    GraphicMatroid,
    L1Ball,
    L2Ball,
    PartitionMatroid,
    PathPolytope,
    Simplex,
    UniformMatroid,
)

SEED = 20261122


# ---------------------------------------------------------------------------------------------- helpers


def check_against_vertices(domain: Domain, vertices: np.ndarray, rng: np.random.Generator) -> None:
    """The LMO returns a vertex achieving the brute-force minimum, and the domain contains it."""
    for d in directions(rng, domain.dim, 40):
        v = domain.lmo(d)
        best = (vertices @ d).min()
        assert v @ d == pytest.approx(best, abs=1e-9)
        assert (np.abs(vertices - v).max(axis=1) == 0).any(), "not a vertex"
        assert domain.contains(v)
        np.testing.assert_array_equal(domain.lmo(d), v)


def indicator(m: int, members) -> np.ndarray:
    x = np.zeros(m)
    x[list(members)] = 1.0
    return x


def is_forest(num_nodes: int, edges, subset) -> bool:
    parent = list(range(num_nodes))

    def find(a: int) -> int:
        while parent[a] != a:
            a = parent[a]
        return a

    for e in subset:
        ru, rv = find(edges[e][0]), find(edges[e][1])
        if ru == rv:
            return False
        parent[ru] = rv
    return True


def st_paths(num_nodes: int, edges, source: int, target: int) -> np.ndarray:
    """Indicator vectors of all directed source-target paths (depth-first enumeration)."""
    out: dict[int, list[tuple[int, int]]] = {v: [] for v in range(num_nodes)}
    for i, (u, v) in enumerate(edges):
        out[u].append((v, i))
    found = []
    stack = [(source, ())]
    while stack:
        v, used = stack.pop()
        if v == target:
            found.append(indicator(len(edges), used))
            continue
        stack.extend((w, (*used, e)) for w, e in out[v])
    return np.array(found)


def random_dag(rng: np.random.Generator, n: int, p: float):
    """A random DAG on n nodes (relabelled, so the node order is not topological) with a source-target path."""
    label = rng.permutation(n)
    edges = {(int(label[i]), int(label[i + 1])) for i in range(n - 1)}
    for i, j in itertools.combinations(range(n), 2):
        if rng.random() < p:
            edges.add((int(label[i]), int(label[j])))
    return sorted(edges), int(label[0]), int(label[-1])


def random_connected_graph(rng: np.random.Generator, n: int, m: int):
    """A random simple connected graph: a random spanning tree plus uniform extra edges."""
    order = rng.permutation(n)
    edges = {tuple(sorted((int(order[i]), int(order[rng.integers(0, i)])))) for i in range(1, n)}
    while len(edges) < m:
        u, v = rng.choice(n, size=2, replace=False)
        edges.add(tuple(sorted((int(u), int(v)))))
    return sorted(edges)


def small_domains() -> list[Domain]:
    """One small instance of every domain kind (graph domains with parallel edges and dead edges)."""
    return [
        Simplex(5),
        L1Ball(4, radius=2.0),
        L2Ball(3, radius=0.5),
        Box([-1.0, 0.0, 2.0], [1.0, 0.5, 3.0]),
        UniformMatroid(7, 3),
        UniformMatroid(7, 3, base=False),
        PartitionMatroid([[4, 0, 2], [1], [6, 3, 5, 7]], [1, 1, 2]),
        PartitionMatroid([[4, 0, 2], [1], [6, 3, 5, 7]], [1, 1, 2], base=False),
        GraphicMatroid(5, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (1, 4)]),
        GraphicMatroid(6, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 3)], base=False),
        PathPolytope(7, [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 4), (3, 4), (3, 4), (3, 5), (6, 2)], 0, 4),
        PathPolytope.from_undirected(6, [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (3, 4), (2, 4), (4, 5)], 0, 5),
    ]


# ----------------------------------------------------------------------------------- LMO vs brute force


def test_simplex_l1_box_against_their_vertices():
    rng = np.random.default_rng(SEED)
    check_against_vertices(Simplex(6), np.eye(6), rng)
    check_against_vertices(L1Ball(4, radius=2.0), np.vstack([2 * np.eye(4), -2 * np.eye(4)]), rng)
    lower, upper = np.array([-1.0, 0.0, 2.0, -5.0]), np.array([1.0, 0.5, 3.0, 5.0])
    corners = np.array([np.where(mask, upper, lower) for mask in itertools.product([0, 1], repeat=4)])
    check_against_vertices(Box(lower, upper), corners, rng)


def test_l2_ball_lmo_is_the_scaled_negative_direction():
    rng = np.random.default_rng(SEED)
    ball = L2Ball(5, radius=3.0)
    for d in directions(rng, 5, 40):
        np.testing.assert_allclose(ball.lmo(d), -3.0 * d / np.linalg.norm(d), atol=1e-12)
    np.testing.assert_array_equal(ball.lmo(np.zeros(5)), [3.0, 0, 0, 0, 0])


@pytest.mark.parametrize("base", [True, False])
@pytest.mark.parametrize(("n", "k"), [(2, 1), (6, 2), (7, 5), (8, 1)])
def test_uniform_matroid_against_all_subsets(n, k, base):
    sizes = [k] if base else range(k + 1)
    vertices = np.array([indicator(n, s) for j in sizes for s in itertools.combinations(range(n), j)])
    check_against_vertices(UniformMatroid(n, k, base=base), vertices, np.random.default_rng(SEED + n))


@pytest.mark.parametrize("base", [True, False])
def test_partition_matroid_against_all_products(base):
    blocks, caps = [[4, 0, 2], [1, 8], [6, 3, 5, 7]], [1, 1, 2]
    per_block = []
    for block, k in zip(blocks, caps, strict=True):
        sizes = [k] if base else range(k + 1)
        per_block.append([[block[i] for i in s] for j in sizes for s in itertools.combinations(range(len(block)), j)])
    vertices = np.array([indicator(9, sum(choice, [])) for choice in itertools.product(*per_block)])
    check_against_vertices(PartitionMatroid(blocks, caps, base=base), vertices, np.random.default_rng(SEED))


GRAPHS = [
    (4, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]),
    (5, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (1, 4)]),
    (6, [(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3), (0, 5)]),
]


@pytest.mark.parametrize(("num_nodes", "edges"), GRAPHS)
def test_graphic_matroid_against_all_trees_and_forests(num_nodes, edges):
    m = len(edges)
    forests = [
        s for j in range(num_nodes) for s in itertools.combinations(range(m), j) if is_forest(num_nodes, edges, s)
    ]
    trees = [s for s in forests if len(s) == num_nodes - 1]
    rng = np.random.default_rng(SEED)
    check_against_vertices(GraphicMatroid(num_nodes, edges), np.array([indicator(m, s) for s in trees]), rng)
    check_against_vertices(
        GraphicMatroid(num_nodes, edges, base=False), np.array([indicator(m, s) for s in forests]), rng
    )


def test_path_polytope_against_all_paths():
    rng = np.random.default_rng(SEED)
    for n in [5, 7, 9]:
        edges, s, t = random_dag(rng, n, 0.5)
        check_against_vertices(PathPolytope(n, edges, s, t), st_paths(n, edges, s, t), rng)
    undirected = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (3, 4), (2, 4), (4, 5), (5, 1)]
    domain = PathPolytope.from_undirected(6, undirected, 0, 5)
    check_against_vertices(domain, st_paths(6, domain.edges, 0, 5), rng)


# --------------------------------------------------------------------- larger instances vs numpy / networkx


@pytest.mark.parametrize("n", [10_000, 200_000])  # the larger one takes the sampled selection path
def test_uniform_matroid_matches_argpartition(n):
    rng = np.random.default_rng(SEED)
    k = 1234
    base, indep = UniformMatroid(n, k), UniformMatroid(n, k, base=False)
    for shift in [0.0, 1.0, 3.0]:  # with shift 3 fewer than k entries are negative
        d = rng.standard_normal(n) + shift
        smallest = np.sort(np.argpartition(d, k - 1)[:k])
        np.testing.assert_array_equal(np.flatnonzero(base.lmo(d)), smallest)
        negative = np.flatnonzero(d < 0)
        expected = negative if len(negative) <= k else smallest
        np.testing.assert_array_equal(np.flatnonzero(indep.lmo(d)), expected)
        assert base.contains(base.lmo(d)) and indep.contains(indep.lmo(d))


@pytest.mark.parametrize("multigraph", [False, True])
def test_spanning_tree_weight_matches_networkx(multigraph):
    rng = np.random.default_rng(SEED)
    n = 80
    edges = random_connected_graph(rng, n, 400)
    if multigraph:
        edges += edges[:50]  # parallel copies get their own weights
    domain = GraphicMatroid(n, edges)
    graph = nx.MultiGraph() if multigraph else nx.Graph()
    for _ in range(5):
        w = rng.uniform(-1.0, 1.0, size=len(edges))
        graph.clear()
        for (u, v), wi in zip(edges, w, strict=True):
            graph.add_edge(u, v, weight=wi)
        expected = nx.minimum_spanning_tree(graph).size(weight="weight")
        tree = domain.lmo(w)
        assert tree.sum() == n - 1
        assert tree @ w == pytest.approx(expected, abs=1e-9)


def test_forest_weight_is_the_negative_part_of_the_networkx_spanning_forest():
    # Kruskal over all edges meets the negative ones first, in the same order, so the minimum-weight forest
    # is the set of negative edges of a minimum spanning forest.
    rng = np.random.default_rng(SEED)
    n = 60
    edges = random_connected_graph(rng, n, 250)
    edges = [e for e in edges if not (e[0] < 10 and e[1] >= 10)]  # split off a component
    domain = GraphicMatroid(n, edges, base=False)
    for _ in range(5):
        w = rng.uniform(-1.0, 1.0, size=len(edges))
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_weighted_edges_from((u, v, wi) for (u, v), wi in zip(edges, w, strict=True))
        forest = nx.minimum_spanning_tree(graph)
        expected = sum(min(data["weight"], 0.0) for _, _, data in forest.edges(data=True))
        assert domain.lmo(w) @ w == pytest.approx(expected, abs=1e-9)
        assert domain.contains(domain.lmo(w))


def test_dag_shortest_path_matches_bellman_ford():
    rng = np.random.default_rng(SEED)
    n = 150
    edges, s, t = random_dag(rng, n, 0.08)
    domain = PathPolytope(n, edges, s, t)
    for _ in range(5):
        w = rng.normal(-0.2, 1.0, size=len(edges))
        graph = nx.DiGraph()
        graph.add_weighted_edges_from((u, v, wi) for (u, v), wi in zip(edges, w, strict=True))
        expected = nx.bellman_ford_path_length(graph, s, t)
        path = domain.lmo(w)
        assert path @ w == pytest.approx(expected, abs=1e-9)
        assert domain.contains(path)


# ------------------------------------------------------------------------ geometry of every domain


@pytest.mark.parametrize("domain", small_domains(), ids=lambda d: d.kind)
def test_certified_ball_stays_inside(domain):
    # The spanning-tree polytope has no certified radius.
    check_certified_ball(domain, np.random.default_rng(SEED), 300, uncertified="GraphicMatroid")


@pytest.mark.parametrize("domain", small_domains(), ids=lambda d: d.kind)
def test_project_tangent_is_an_orthogonal_projection_of_rank_affine_dim(domain):
    rng = np.random.default_rng(SEED)
    check_tangent_projector(domain)
    for _ in range(10):
        x, y = domain.lmo(rng.standard_normal(domain.dim)), domain.lmo(rng.standard_normal(domain.dim))
        np.testing.assert_allclose(domain.project_tangent(x - y), x - y, atol=1e-10)


def test_diameters_bound_the_vertex_distances():
    rng = np.random.default_rng(SEED)
    for domain in small_domains():
        vertices = np.array([domain.lmo(d) for d in directions(rng, domain.dim, 30)])
        gaps = np.linalg.norm(vertices[:, None, :] - vertices[None, :, :], axis=-1)
        assert gaps.max() <= domain.diameter + 1e-12


# --------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: GraphicMatroid(3, [(0, 1), (1, 3)]), "edge 1 = (1, 3)"),
        (lambda: GraphicMatroid(3, [(0, 1), (2, 2)]), "self-loop"),
        (lambda: GraphicMatroid(3, [(0, -1)]), "negative node index"),
        (lambda: GraphicMatroid(5, [(0, 1), (2, 3)]), "3 connected components"),
        (lambda: GraphicMatroid(3, []), "no edges"),
        (lambda: PathPolytope(3, [(0, 1), (1, 5)], 0, 2), "edge 1 = (1, 5)"),
        (lambda: PathPolytope(4, [(0, 1), (1, 2), (2, 1), (2, 3)], 0, 3), "directed cycle"),
        (lambda: PathPolytope(3, [(0, 1), (2, 1)], 0, 2), "no directed path from source 0 to target 2"),
        (lambda: PathPolytope(3, [(0, 1)], 1, 1), "same node"),
        (lambda: PathPolytope(3, [(0, 1)], 0, 7), "target 7 is not a node"),
        (lambda: PathPolytope.from_undirected(4, [(0, 1), (2, 3)], 0, 3), "no directed path"),
    ],
)
def test_malformed_graphs_raise_invalid_graph_error(build, message):
    with pytest.raises(dponline.InvalidGraphError, match="invalid graph") as info:
        build()
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_the_reported_cycle_is_a_cycle():
    edges = [(0, 1), (1, 2), (2, 3), (3, 1), (3, 4)]
    with pytest.raises(dponline.InvalidGraphError) as info:
        PathPolytope(5, edges, 0, 4)
    cycle = [int(v) for v in str(info.value).split("cycle ")[1].split(";")[0].split(" -> ")]
    assert cycle[0] == cycle[-1]
    assert all((a, b) in edges for a, b in itertools.pairwise(cycle))


@pytest.mark.parametrize("domain", small_domains(), ids=lambda d: d.kind)
def test_bad_directions_are_refused(domain):
    d = np.zeros(domain.dim)
    d[-1] = np.nan
    with pytest.raises(dponline.NonFiniteError, match="direction"):
        domain.lmo(d)
    d[-1] = np.inf
    with pytest.raises(dponline.NonFiniteError):
        domain.lmo(d)
    with pytest.raises(dponline.InvalidInputError, match="length"):
        domain.lmo(np.zeros(domain.dim + 1))
    with pytest.raises(dponline.NonFiniteError, match="u"):
        domain.project_tangent(np.full(domain.dim, np.nan))


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: Simplex(1), "n"),
        (lambda: L1Ball(3, radius=0.0), "radius"),
        (lambda: L2Ball(0), "n"),
        (lambda: Box([0.0, 1.0], [1.0, 1.0]), "upper"),
        (lambda: Box([0.0], [1.0, 2.0]), "upper"),
        (lambda: UniformMatroid(4, 4), "k"),
        (lambda: UniformMatroid(4, 0, base=False), "k"),
        (lambda: PartitionMatroid([[0, 1], [1]], [1, 1]), "blocks"),
        (lambda: PartitionMatroid([[0, 1]], [3]), "capacities"),
    ],
)
def test_bad_arguments_name_themselves(build, name):
    with pytest.raises(dponline.InvalidInputError, match=f"^{name}"):
        build()


def test_box_bounds_must_be_finite():
    with pytest.raises(dponline.NonFiniteError, match="lower"):
        Box([0.0, -np.inf], [1.0, 1.0])


def test_domain_is_abstract():
    with pytest.raises(TypeError):
        Domain()


# -------------------------------------------------------------------------------------------- pickling


@pytest.mark.parametrize("domain", small_domains(), ids=lambda d: d.kind)
def test_pickle_round_trip_keeps_class_and_lmo(domain):
    rng = np.random.default_rng(SEED)
    restored = pickle.loads(pickle.dumps(domain))
    assert type(restored) is type(domain)
    assert repr(restored) == repr(domain)
    np.testing.assert_array_equal(restored.interior_point, domain.interior_point)
    assert restored.inscribed_radius == domain.inscribed_radius
    for d in directions(rng, domain.dim, 10):
        np.testing.assert_array_equal(restored.lmo(d), domain.lmo(d))


def test_state_of_another_kind_is_refused():
    _, (state,) = Simplex(3).__reduce__()
    with pytest.raises(dponline.StateError, match="Simplex"):
        L1Ball._from_state(state)
    with pytest.raises(dponline.StateError):
        Simplex._from_state(b"\x01garbage")
