"""The LMO catalogue (Birkhoff, bipartite matching, flow, nuclear-norm ball, spectraplex, submodular base
polytope, k-sparse, hypersimplex, LP fallback): every LMO against an independent oracle on random instances
(SciPy's assignment and LP solvers, networkx matchings and min-cost flows, NumPy SVD/eigh, brute force), ties,
degenerate and infeasible inputs, the certified ball, the tangent projection, Frank-Wolfe convergence, errors
naming their argument, pickling, and which learners accept which domains."""

from __future__ import annotations

import itertools
import pickle

import networkx as nx
import numpy as np
import pytest
from conftest import check_certified_ball, check_tangent_projector, directions
from scipy.optimize import linear_sum_assignment, linprog

import dponline
from dponline.domains import (
    BipartiteMatchingPolytope,
    BirkhoffPolytope,
    FlowPolytope,
    Hypersimplex,
    KSparsePolytope,
    LinearProgramPolytope,
    NuclearNormBall,
    Spectraplex,
    SubmodularBasePolytope,
    UniformMatroid,
)
from dponline.optimization import frank_wolfe
from dponline.submodular import FacilityLocation, ProbabilisticCoverage, WeightedCoverage

SEED = 20261126


def coverage_table(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random weighted-coverage function on ``n`` items, tabulated by bitmask (an independent evaluation)."""
    covers = [set(rng.choice(6, size=rng.integers(1, 4), replace=False).tolist()) for _ in range(n)]
    weights = rng.random(6)
    table = np.zeros(2**n)
    for mask in range(2**n):
        union = set().union(*(covers[a] for a in range(n) if mask >> a & 1))
        table[mask] = sum(weights[j] for j in union)
    return table


def small_domains() -> list:
    """One small instance of each new domain kind."""
    rng = np.random.default_rng(SEED)
    table = coverage_table(4, rng)
    return [
        KSparsePolytope(5, 2, radius=1.5),
        BirkhoffPolytope(3),
        BipartiteMatchingPolytope(3, 4, [(0, 0), (0, 1), (1, 1), (1, 2), (2, 3), (2, 0), (0, 0)]),
        FlowPolytope(
            5,
            [(0, 1), (0, 2), (1, 2), (2, 1), (1, 4), (2, 3), (3, 4), (3, 1)],
            0,
            4,
            capacities=[2.0, 1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0],
            value=2.5,
        ),
        FlowPolytope(5, [(0, 1), (0, 2), (1, 2), (1, 4), (2, 3), (3, 4), (2, 4)], 0, 4),
        NuclearNormBall(3, 4, radius=2.0),
        Spectraplex(3),
        SubmodularBasePolytope(ProbabilisticCoverage(rng.random((3, 5)))),
        SubmodularBasePolytope(lambda s: table[sum(1 << a for a in s)], n=4),
        SubmodularBasePolytope.concave_of_cardinality([0.0, 1.0, 1.5, 1.75, 2.0]),
    ]


# ------------------------------------------------------------------------------------------- assignment


@pytest.mark.parametrize("n", [2, 7, 60, 200])
def test_birkhoff_matches_linear_sum_assignment(n):
    rng = np.random.default_rng(SEED + n)
    domain = BirkhoffPolytope(n)
    for trial in range(6):
        cost = rng.standard_normal((n, n)) if trial % 2 == 0 else rng.integers(-2, 3, size=(n, n)).astype(float)
        x = domain.lmo(cost.ravel()).reshape(n, n)
        rows, cols = linear_sum_assignment(cost)
        assert (x.sum(axis=0) == 1).all() and (x.sum(axis=1) == 1).all() and set(np.unique(x)) <= {0.0, 1.0}
        assert (x * cost).sum() == pytest.approx(cost[rows, cols].sum(), abs=1e-9)
        assert domain.contains(x.ravel())


def test_birkhoff_survives_huge_costs():
    cost = np.array([[1e308, -1e308], [-1e308, 1e308]])
    np.testing.assert_array_equal(BirkhoffPolytope(2).lmo(cost.ravel()), [0.0, 1.0, 1.0, 0.0])


# ---------------------------------------------------------------------------------------------- matching


def random_bipartite(rng: np.random.Generator, n_left: int, n_right: int, p: float) -> list[tuple[int, int]]:
    edges = [(i, j) for i in range(n_left) for j in range(n_right) if rng.random() < p]
    return edges or [(0, 0)]


@pytest.mark.parametrize(("n_left", "n_right", "p"), [(3, 4, 0.6), (20, 15, 0.3), (60, 60, 0.1)])
def test_matching_weight_matches_networkx(n_left, n_right, p):
    rng = np.random.default_rng(SEED)
    edges = random_bipartite(rng, n_left, n_right, p)
    domain = BipartiteMatchingPolytope(n_left, n_right, edges)
    for trial in range(6):
        d = rng.standard_normal(len(edges)) if trial % 2 else rng.integers(-3, 2, size=len(edges)).astype(float)
        graph = nx.Graph()
        graph.add_weighted_edges_from((("L", i), ("R", j), -c) for (i, j), c in zip(edges, d, strict=True) if c < 0)
        matching = nx.max_weight_matching(graph)
        best = sum(graph[u][v]["weight"] for u, v in matching)
        x = domain.lmo(d)
        assert x @ d == pytest.approx(-best, abs=1e-9)
        assert domain.contains(x) and set(np.unique(x)) <= {0.0, 1.0}


def test_matching_with_parallel_edges_takes_the_cheaper_copy():
    domain = BipartiteMatchingPolytope(2, 2, [(0, 0), (0, 0), (1, 1), (0, 1)])
    np.testing.assert_array_equal(domain.lmo([-1.0, -2.0, -1.0, 0.5]), [0.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(domain.lmo([1.0, 0.0, 2.0, 0.0]), [0.0, 0.0, 0.0, 0.0])


# -------------------------------------------------------------------------------------------------- flows


def random_flow_instance(rng: np.random.Generator, n: int, m: int):
    """A random digraph with cycles and parallel edges, integer capacities, and a path 0 -> n-1."""
    edges = [(i, i + 1) for i in range(n - 1)]
    while len(edges) < m:
        u, v = rng.choice(n, size=2, replace=False)
        edges.append((int(u), int(v)))
    caps = rng.integers(1, 4, size=len(edges)).astype(float)
    return edges, caps


@pytest.mark.parametrize(("n", "m"), [(6, 14), (30, 120), (80, 400)])
def test_flow_cost_matches_networkx_min_cost_flow(n, m):
    rng = np.random.default_rng(SEED + n)
    edges, caps = random_flow_instance(rng, n, m)
    domain = FlowPolytope(n, edges, 0, n - 1, capacities=caps, value=1.0)
    for _ in range(4):
        cost = rng.integers(-5, 10, size=len(edges))
        graph = nx.MultiDiGraph()
        graph.add_node(0, demand=-1)
        graph.add_node(n - 1, demand=1)
        for (u, v), c, w in zip(edges, caps, cost, strict=True):
            graph.add_edge(u, v, capacity=int(c), weight=int(w))
        expected = nx.min_cost_flow_cost(graph)
        x = domain.lmo(cost.astype(float))
        assert x @ cost == pytest.approx(expected, abs=1e-9)
        assert domain.contains(x)


def test_flow_matches_linprog_with_fractional_data():
    rng = np.random.default_rng(SEED)
    n, (edges, caps) = 12, random_flow_instance(rng, 12, 40)
    caps = caps * rng.uniform(0.3, 1.0, size=len(caps))
    value = 0.7
    domain = FlowPolytope(n, edges, 0, n - 1, capacities=caps, value=value)
    incidence = np.zeros((n, len(edges)))
    for e, (u, v) in enumerate(edges):
        incidence[u, e], incidence[v, e] = 1.0, -1.0
    supply = np.zeros(n)
    supply[0], supply[-1] = value, -value
    for d in directions(rng, len(edges), 5):
        res = linprog(d, A_eq=incidence, b_eq=supply, bounds=list(zip(np.zeros_like(caps), caps, strict=True)))
        x = domain.lmo(d)
        assert x @ d == pytest.approx(res.fun, abs=1e-7)
        assert domain.contains(x)


def test_uncapacitated_flows_scale_the_path_polytope():
    edges = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (2, 4), (3, 4), (3, 4), (1, 4)]
    flows = FlowPolytope(5, edges, 0, 4, value=3.0)
    paths = dponline.domains.PathPolytope(5, edges, 0, 4)
    rng = np.random.default_rng(SEED)
    for d in directions(rng, len(edges), 10):
        assert flows.lmo(d) @ d == pytest.approx(3.0 * paths.lmo(d) @ d, abs=1e-12)
    for d in rng.standard_normal((10, len(edges))):  # no ties: the same vertex
        np.testing.assert_allclose(flows.lmo(d), 3.0 * paths.lmo(d), atol=1e-12)
    assert flows.affine_dim == paths.affine_dim
    assert flows.value == 3.0 and flows.edges == edges


def test_flow_fixed_edges_and_degenerate_values():
    # value = max flow: the cut edges out of the source are saturated everywhere; the 0-capacity edge is fixed.
    domain = FlowPolytope(
        4, [(0, 1), (0, 2), (1, 3), (2, 3), (1, 2), (2, 1)], 0, 3, capacities=[1, 1, 5, 5, 0, 2], value=2.0
    )
    assert domain.affine_dim == 1
    projector = np.array([domain.project_tangent(row) for row in np.eye(6)])
    assert np.abs(projector[[0, 1, 4]]).max() == 0.0
    with pytest.raises(dponline.InvalidInputError, match="single point"):
        FlowPolytope(3, [(0, 1), (1, 2)], 0, 2)


# --------------------------------------------------------------------------------- spectral domains


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (1, 7), (9, 1), (20, 20), (35, 12), (12, 50)])
def test_nuclear_norm_lmo_matches_numpy_svd(rows, cols):
    rng = np.random.default_rng(SEED + rows)
    domain = NuclearNormBall(rows, cols, radius=2.5)
    for trial in range(5):
        d = rng.standard_normal((rows, cols)) if trial else rng.integers(-1, 2, size=(rows, cols)).astype(float)
        x = domain.lmo(d.ravel())
        sigma = np.linalg.svd(d, compute_uv=False)[0]
        assert x @ d.ravel() == pytest.approx(-2.5 * sigma, rel=1e-9, abs=1e-12)
        assert np.linalg.matrix_rank(x.reshape(rows, cols)) <= 1
        assert domain.contains(x)
    assert domain.shape == (rows, cols)


def test_nuclear_norm_ties_and_degenerate_directions():
    domain = NuclearNormBall(4, 4)
    q, _ = np.linalg.qr(np.random.default_rng(SEED).standard_normal((4, 4)))
    x = domain.lmo(q.ravel())  # every singular value is 1: any top pair is optimal
    assert x @ q.ravel() == pytest.approx(-1.0, abs=1e-10)
    zero = domain.lmo(np.zeros(16))
    assert np.linalg.norm(zero) == pytest.approx(1.0) and domain.contains(zero)


@pytest.mark.parametrize("n", [2, 5, 30, 80])
def test_spectraplex_lmo_matches_numpy_eigh(n):
    rng = np.random.default_rng(SEED + n)
    domain = Spectraplex(n)
    for d in directions(rng, n * n, 4):
        x = domain.lmo(d)
        sym = (d.reshape(n, n) + d.reshape(n, n).T) / 2
        assert x @ d == pytest.approx(np.linalg.eigvalsh(sym)[0], abs=1e-9 * (1 + np.abs(sym).max() * n))
        np.testing.assert_allclose(x.reshape(n, n), x.reshape(n, n).T, atol=1e-15)
        assert domain.contains(x)


# ------------------------------------------------------------------------ k-sparse and the hypersimplex


def test_k_sparse_and_hypersimplex_match_argpartition():
    rng = np.random.default_rng(SEED)
    n, k = 5000, 37
    sparse, hyper = KSparsePolytope(n, k, radius=0.5), Hypersimplex(n, k)
    assert isinstance(hyper, UniformMatroid) and hyper.affine_dim == n - 1
    for _ in range(5):
        d = rng.standard_normal(n)
        top = np.argpartition(-np.abs(d), k - 1)[:k]
        expected = np.zeros(n)
        expected[top] = -0.5 * np.sign(d[top])
        np.testing.assert_array_equal(sparse.lmo(d), expected)
        np.testing.assert_array_equal(np.flatnonzero(hyper.lmo(d)), np.sort(np.argpartition(d, k - 1)[:k]))


def test_k_sparse_against_all_vertices():
    n, k = 5, 2
    vertices = []
    for support in itertools.combinations(range(n), k):
        for signs in itertools.product([-1.0, 1.0], repeat=k):
            v = np.zeros(n)
            v[list(support)] = signs
            vertices.append(v)
    vertices = np.array(vertices)
    domain = KSparsePolytope(n, k)
    for d in directions(np.random.default_rng(SEED), n, 20):
        x = domain.lmo(d)
        assert x @ d == pytest.approx((vertices @ d).min(), abs=1e-12)
        assert (np.abs(vertices - x).max(axis=1) == 0).any()


# ------------------------------------------------------------------------------- submodular base polytope


def base_polytope_by_linprog(table: np.ndarray, n: int, d: np.ndarray) -> float:
    """min ⟨d, x⟩ over {x(S) ≤ f(S) ∀S, x(U) = f(U)} by SciPy's LP solver, every constraint written out."""
    masks = np.arange(1, 2**n - 1)
    rows = ((masks[:, None] >> np.arange(n)) & 1).astype(float)
    res = linprog(d, A_ub=rows, b_ub=table[masks], A_eq=np.ones((1, n)), b_eq=[table[-1]], bounds=(None, None))
    return res.fun


def family_table(family, n: int) -> np.ndarray:
    """F(S) = Σ_rows f_row(S) by the family's own evaluation, for every subset."""
    return np.array(
        [
            sum(family.value(t, [a for a in range(n) if mask >> a & 1]) for t in range(family.horizon))
            for mask in range(2**n)
        ]
    )


@pytest.mark.parametrize(
    "build",
    [
        lambda rng: ProbabilisticCoverage(rng.random((4, 6)) * (rng.random((4, 6)) < 0.7)),
        lambda rng: FacilityLocation(rng.random((3, 6))),
        lambda rng: WeightedCoverage(
            rng.dirichlet(np.ones(8), size=2) * 0.9, [rng.choice(8, size=3, replace=False) for _ in range(6)]
        ),
    ],
    ids=["probabilistic_coverage", "facility_location", "weighted_coverage"],
)
def test_base_polytope_of_families_matches_linprog(build):
    rng = np.random.default_rng(SEED)
    family = build(rng)
    n = 6
    domain = SubmodularBasePolytope(family)
    table = family_table(family, n)
    for d in directions(rng, n, 8):
        x = domain.lmo(d)
        assert x @ d == pytest.approx(base_polytope_by_linprog(table, n, d), abs=1e-7)
        assert domain.contains(x)
    # The Shapley value: the average of the greedy vertices over all n! orders.
    shapley = np.zeros(n)
    for order in itertools.permutations(range(n)):
        for k, a in enumerate(order):
            shapley[a] += table[sum(1 << b for b in order[: k + 1])] - table[sum(1 << b for b in order[:k])]
    np.testing.assert_allclose(domain.interior_point, shapley / 720, atol=1e-12)
    assert domain.inscribed_radius is None  # not certified for families


def test_base_polytope_of_a_callable_is_tabulated_once():
    rng = np.random.default_rng(SEED)
    table = coverage_table(5, rng)
    calls = []

    def f(s: frozenset) -> float:
        calls.append(s)
        return float(table[sum(1 << a for a in s)])

    domain = SubmodularBasePolytope(f, n=5)
    assert len(calls) == 32
    for d in directions(rng, 5, 6):
        assert domain.lmo(d) @ d == pytest.approx(base_polytope_by_linprog(table, 5, d), abs=1e-7)
    assert len(calls) == 32, "the LMO never calls back into Python"
    assert domain.inscribed_radius is not None  # exact for tables
    restored = pickle.loads(pickle.dumps(domain))  # the table is pickled, not the function
    np.testing.assert_array_equal(restored.lmo(np.arange(5.0)), domain.lmo(np.arange(5.0)))


@pytest.mark.parametrize(
    ("f", "message"),
    [
        (lambda s: 1.0 + len(s), "f(∅) = 1"),
        (lambda s: -float(len(s)), "monotone"),
        (lambda s: float(len(s)) ** 2, "submodular: marginal gains that never increase"),
        (lambda s: float(len(s)), "one point"),
        (lambda s: "x", "must return a real number"),
    ],
)
def test_bad_callables_are_named(f, message):
    with pytest.raises(dponline.InvalidInputError, match=r"^f ") as info:
        SubmodularBasePolytope(f, n=3)
    assert message in str(info.value)


def test_callable_arguments():
    with pytest.raises(dponline.NonFiniteError, match="^f must be finite"):
        SubmodularBasePolytope(lambda s: float("nan") if s else 0.0, n=3)
    with pytest.raises(dponline.InvalidInputError, match="n .* required"):
        SubmodularBasePolytope(len)
    with pytest.raises(dponline.InvalidInputError, match="^n must be"):
        SubmodularBasePolytope(len, n=21)
    with pytest.raises(dponline.InvalidInputError, match="^f must be a dponline.submodular.SubmodularFamily"):
        SubmodularBasePolytope(3)
    with pytest.raises(dponline.InvalidInputError, match="^g must be"):
        SubmodularBasePolytope.concave_of_cardinality([0.0, 1.0, 3.0])


# ------------------------------------------------------------------------------------------ LP fallback


def test_linear_program_polytope_reproduces_the_birkhoff_polytope():
    n = 4
    a_eq = np.vstack([np.kron(np.eye(n), np.ones(n)), np.kron(np.ones(n), np.eye(n))])
    lp = LinearProgramPolytope(-np.eye(n * n), np.zeros(n * n), a_eq, np.ones(2 * n))
    native = BirkhoffPolytope(n)
    assert lp.affine_dim == native.affine_dim
    np.testing.assert_allclose(lp.interior_point, native.interior_point, atol=1e-9)
    assert lp.inscribed_radius == pytest.approx(native.inscribed_radius, rel=1e-7)
    for d in directions(np.random.default_rng(SEED), n * n, 5):
        assert lp.lmo(d) @ d == pytest.approx(native.lmo(d) @ d, abs=1e-9)
        assert lp.contains(lp.lmo(d))
    for u in np.random.default_rng(SEED).standard_normal((5, n * n)):
        np.testing.assert_allclose(lp.project_tangent(u), native.project_tangent(u), atol=1e-10)


def test_linear_program_polytope_finds_implicit_equalities():
    # x + y <= 1 and -x - y <= -1 make x + y = 1; with 0 <= x, y <= 1 a segment.
    lp = LinearProgramPolytope([[1, 1], [-1, -1], [-1, 0], [0, -1], [1, 0], [0, 1]], [1, -1, 0, 0, 1, 1])
    assert lp.affine_dim == 1
    np.testing.assert_allclose(lp.interior_point, [0.5, 0.5], atol=1e-9)
    assert lp.inscribed_radius == pytest.approx(np.sqrt(0.5), rel=1e-7)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([[1.0, 0.0]], [1.0]), "unbounded"),
        (([[1.0], [-1.0]], [0.0, -1.0]), "empty set"),
        (([[1.0, 0.0]], [1.0, 2.0]), "^b_ub must have shape"),
        (([[1.0, 0.0]], None), "given together"),
        ((None, None, [[1.0, 1.0]], [1.0]), "unbounded"),
        (([[1.0], [-1.0]], [0.0, 0.0]), "single point"),
    ],
)
def test_linear_program_polytope_refuses_bad_input(args, match):
    with pytest.raises(dponline.InvalidInputError, match=match):
        LinearProgramPolytope(*args)
    with pytest.raises(dponline.NonFiniteError, match="^A_ub"):
        LinearProgramPolytope([[np.nan]], [1.0])


# ---------------------------------------------------------------------------- geometry of every new domain


@pytest.mark.parametrize("domain", small_domains(), ids=lambda d: d.kind)
def test_certified_ball_stays_inside(domain):
    check_certified_ball(domain, np.random.default_rng(SEED), 200, uncertified="SubmodularBasePolytope")


@pytest.mark.parametrize("domain", small_domains(), ids=lambda d: d.kind)
def test_projection_diameter_and_frank_wolfe(domain):
    rng = np.random.default_rng(SEED)
    check_tangent_projector(domain)
    vertices = np.array([domain.lmo(d) for d in directions(rng, domain.dim, 15)])
    for x, y in itertools.pairwise(vertices):
        np.testing.assert_allclose(domain.project_tangent(x - y), x - y, atol=1e-9)
    gaps = np.linalg.norm(vertices[:, None] - vertices[None], axis=-1)
    assert gaps.max() <= domain.diameter + 1e-12
    # Frank-Wolfe for the projection of a far target: gap <= (27/4) D² / (k + 2) (Jaggi 2013, Theorem 2). The
    # gap is >= 0 up to the Lanczos tolerance of the spectral LMOs (1e-10 relative).
    v = domain.interior_point + 2 * domain.diameter * rng.standard_normal(domain.dim)
    for k in [10, 300]:
        result = frank_wolfe(domain, v, k)
        assert -1e-9 * domain.diameter**2 <= result.gap <= 6.75 * domain.diameter**2 / (k + 2)
        assert domain.contains(result.x)


@pytest.mark.parametrize("domain", small_domains(), ids=lambda d: d.kind)
def test_bad_directions_and_pickling(domain):
    d = np.zeros(domain.dim)
    d[0] = np.nan
    with pytest.raises(dponline.NonFiniteError, match="direction"):
        domain.lmo(d)
    with pytest.raises(dponline.InvalidInputError, match="direction must be a 1-D array"):
        domain.lmo(np.zeros((domain.dim, 1)))
    restored = pickle.loads(pickle.dumps(domain))
    assert type(restored) is type(domain) and repr(restored) == repr(domain)
    for d in directions(np.random.default_rng(SEED), domain.dim, 5):
        np.testing.assert_array_equal(restored.lmo(d), domain.lmo(d))


@pytest.mark.parametrize(
    ("build", "name", "error"),
    [
        (lambda: BirkhoffPolytope(1), "n", dponline.InvalidInputError),
        (lambda: Spectraplex(1), "n", dponline.InvalidInputError),
        (lambda: NuclearNormBall(0, 3), "rows", dponline.InvalidInputError),
        (lambda: NuclearNormBall(3, 3, radius=-1.0), "radius", dponline.InvalidInputError),
        (lambda: KSparsePolytope(3, 4), "k", dponline.InvalidInputError),
        (lambda: BipartiteMatchingPolytope(2, 2, [(0, 2)]), "invalid graph", dponline.InvalidGraphError),
        (lambda: BipartiteMatchingPolytope(2, 2, [(-1, 0)]), "invalid graph", dponline.InvalidGraphError),
        (
            lambda: FlowPolytope(3, [(0, 1), (1, 2)], 0, 2, capacities=[1.0, -1.0]),
            "capacities",
            dponline.InvalidInputError,
        ),
        (lambda: FlowPolytope(3, [(0, 1), (1, 2)], 0, 2, capacities=[1.0]), "capacities", dponline.InvalidInputError),
        (
            lambda: FlowPolytope(3, [(0, 1), (1, 2)], 0, 2, capacities=[1.0, np.inf]),
            "capacities",
            dponline.NonFiniteError,
        ),
        (
            lambda: FlowPolytope(3, [(0, 1), (1, 2), (0, 2)], 0, 2, capacities=[1, 1, 1], value=5.0),
            "value",
            dponline.InvalidInputError,
        ),
        (lambda: FlowPolytope(3, [(0, 1), (1, 2)], 0, 2, value=0.0), "value", dponline.InvalidInputError),
        (lambda: FlowPolytope(3, [(0, 1), (2, 1)], 0, 2), "invalid graph", dponline.InvalidGraphError),
        (lambda: FlowPolytope(3, [(0, 1), (1, 0), (1, 2)], 0, 2), "invalid graph", dponline.InvalidGraphError),
    ],
)
def test_bad_arguments_name_themselves(build, name, error):
    with pytest.raises(error, match=f"^{name}"):
        build()


def test_infeasible_flow_values_report_the_maximum_flow():
    with pytest.raises(dponline.InvalidInputError, match=r"the maximum flow is 2"):
        FlowPolytope(3, [(0, 1), (1, 2), (0, 2)], 0, 2, capacities=[1, 1, 1], value=5.0)


# ---------------------------------------------------------------------------- which learners accept what


def test_private_bandit_refuses_uncertified_domains_and_says_who_accepts_them():
    rng = np.random.default_rng(SEED)
    base = SubmodularBasePolytope(ProbabilisticCoverage(rng.random((3, 5))))
    trees = dponline.domains.GraphicMatroid(4, [(0, 1), (1, 2), (2, 3), (3, 0)])
    for domain, reason in [(base, "submodular minimisation"), (trees, "spanning-tree")]:
        with pytest.raises(dponline.InvalidInputError, match="certified inscribed ball") as info:
            dponline.PrivateBandit(domain, horizon=100, epsilon=1.0, lipschitz=1.0, seed=0)
        assert reason in str(info.value) and "DPFTPL and DPFTRL accept it" in str(info.value)
        dponline.DPFTPL(domain, horizon=100, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=0).ask()


def test_learners_refuse_the_lp_fallback_with_the_reason():
    lp = LinearProgramPolytope(np.vstack([np.eye(2), -np.eye(2)]), np.ones(4))
    for build in [
        lambda: dponline.PrivateBandit(lp, horizon=100, epsilon=1.0, lipschitz=1.0, seed=0),
        lambda: dponline.DPFTPL(lp, horizon=100, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=0),
        lambda: dponline.DPFTRL(lp, horizon=100, epsilon=1.0, loss_bound=1.0, seed=0),
    ]:
        with pytest.raises(dponline.InvalidInputError, match="solves its LMO in Python") as info:
            build()
        assert "best_fixed" in str(info.value)
    losses = dponline.losses.Linear(np.random.default_rng(SEED).standard_normal((10, 2)))
    assert dponline.regret.best_fixed(losses, lp).total_loss <= 0


@pytest.mark.parametrize("domain", [d for d in small_domains() if d.inscribed_radius is not None], ids=lambda d: d.kind)
def test_learners_run_natively_on_every_new_domain(domain):
    rng = np.random.default_rng(SEED)
    losses = dponline.losses.Linear(rng.uniform(-1, 1, size=(64, domain.dim)) / domain.dim)
    for learner in [
        dponline.PrivateBandit(domain, horizon=65, epsilon=1.0, lipschitz=1.0, seed=1),
        dponline.DPFTPL(domain, horizon=65, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=1),
    ]:
        result = learner.run(losses)
        assert np.isfinite(result.total_loss)
        assert domain.contains(learner.ask())
