"""Property-based fuzzing of the foundation (issue 13), with Hypothesis: domains, Frank-Wolfe, sphere sampling,
noise, the binary tree, loss families, PrivateBandit and the privacy functions. The later modules have their own
suites with the same contract: ``test_fuzz_agarwal_singh.py``, ``test_fuzz_submodular.py`` and
``test_fuzz_local_and_mechanisms.py`` (shared strategies and checks in ``tests/_fuzz.py``).

Every public constructor and method gets generated arguments — shapes, dtypes (NumPy scalars included), extreme
floats (1e308, 5e-324, subnormals, NaN, ±inf), empty and huge sizes, degenerate graphs and partitions, calls out
of protocol order — and each call must either return a valid result (finite, of the right shape, feasible by the
domain's own ``contains``) or raise :class:`dponline.DPOnlineError` / :class:`MemoryError`. A stateful object
whose method raised must be byte-identical (pickle) to what it was before the call.

Profiles (``tests/conftest.py``): ``ci`` (default, a bounded number of examples per test, derandomised) and
``long`` (``HYPOTHESIS_PROFILE=long``, 9,000 examples per property).
"""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _fuzz import (
    HUGE,
    arrays,
    assert_finite,
    attempt,
    check_constructed,
    check_domain,
    finite_floats,
    finite_vectors,
    ints,
    moderate,
    reals,
    seeds,
    small_ints,
    state_of,
    tolerance,
    unchanged_if_failed,
    valid_domains,
    vectors,
)
from hypothesis import assume, given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dponline
from dponline import privacy
from dponline.domains import (
    Box,
    GraphicMatroid,
    L1Ball,
    L2Ball,
    PartitionMatroid,
    PathPolytope,
    Simplex,
    UniformMatroid,
)

# -- domains -------------------------------------------------------------------------------------------
nodes = st.integers(-1, 7)
edge_lists = st.one_of(
    st.lists(st.tuples(nodes, nodes), max_size=12),
    st.lists(st.lists(nodes, min_size=0, max_size=3), max_size=4),
    st.sampled_from([None, "edges", [(0, 1.5)], [(0, 2**70)], np.array([[0, 1], [1, 2]])]),
)


@st.composite
def domain_calls(draw: st.DrawFn) -> tuple[str, Callable[[], Any]]:
    kind = draw(
        st.sampled_from(["simplex", "l1", "l2", "box", "uniform", "partition", "graphic", "path", "undirected"])
    )
    if kind == "simplex":
        n = draw(ints)
        return f"Simplex({n!r})", lambda: Simplex(n)
    if kind in ("l1", "l2"):
        n, radius = draw(ints), draw(st.one_of(st.none(), reals))
        cls = L1Ball if kind == "l1" else L2Ball
        return f"{cls.__name__}({n!r}, radius={radius!r})", lambda: cls(n, radius=radius)
    if kind == "box":
        shape = draw(st.sampled_from([(0,), (1,), (3,), (2, 2)]))
        lo, hi = draw(arrays(st.just(shape))), draw(arrays(st.just(shape)))
        return f"Box({lo!r}, {hi!r})", lambda: Box(lo, hi)
    if kind == "uniform":
        n, k, base = draw(ints), draw(ints), draw(st.sampled_from([True, False, None, 1]))
        return f"UniformMatroid({n!r}, {k!r}, base={base!r})", lambda: UniformMatroid(n, k, base=base)
    if kind == "partition":
        blocks = draw(
            st.one_of(
                st.lists(st.lists(st.integers(-1, 8), max_size=4), max_size=4), st.sampled_from([None, [[0.5]], "ab"])
            )
        )
        caps = draw(
            st.one_of(
                st.lists(st.one_of(small_ints, st.sampled_from(HUGE)), max_size=5), st.sampled_from([None, [1.5]])
            )
        )
        base = draw(st.booleans())
        return f"PartitionMatroid({blocks!r}, {caps!r}, base={base})", lambda: PartitionMatroid(blocks, caps, base=base)
    num_nodes, edges = draw(st.one_of(st.integers(-1, 8), st.sampled_from(HUGE))), draw(edge_lists)
    if kind == "graphic":
        base = draw(st.booleans())
        return f"GraphicMatroid({num_nodes!r}, {edges!r}, base={base})", lambda: GraphicMatroid(
            num_nodes, edges, base=base
        )
    s, t = draw(nodes), draw(nodes)
    if kind == "path":
        return f"PathPolytope({num_nodes!r}, {edges!r}, {s}, {t})", lambda: PathPolytope(num_nodes, edges, s, t)
    return (
        f"PathPolytope.from_undirected({num_nodes!r}, {edges!r}, {s}, {t})",
        lambda: PathPolytope.from_undirected(num_nodes, edges, s, t),
    )


@given(domain_calls())
def test_domain_constructors(call: tuple[str, Callable[[], Any]]) -> None:
    text, build = call
    note(text)
    ok, d = attempt(build)
    if ok:
        check_domain(d)


@given(valid_domains(), st.data())
def test_domain_methods(d: Any, data: st.DataObject) -> None:
    n = d.dim
    direction = data.draw(vectors(n), "direction")
    ok, v = attempt(lambda: d.lmo(direction))
    if ok:
        assert v.shape == (n,)
        assert_finite(v)
        assert d.contains(v, tolerance(d))
    x = data.draw(vectors(n), "x")
    atol = data.draw(st.one_of(st.just(1e-9), reals), "atol")
    ok, inside = attempt(lambda: d.contains(x, atol))
    if ok:
        assert isinstance(inside, bool)
        arr = np.asarray(x, dtype=np.float64) if isinstance(x, np.ndarray) and x.dtype.kind in "fiub" else None
        if arr is not None and arr.shape == (n,) and not np.all(np.isfinite(arr)):
            assert not inside, "contains() accepted a point with NaN/inf"
    u = data.draw(vectors(n), "u")
    ok, w = attempt(lambda: d.project_tangent(u))
    if ok:
        assert w.shape == (n,)
        assert_finite(w)


@given(valid_domains(), st.data())
def test_frank_wolfe(d: Any, data: st.DataObject) -> None:
    n = d.dim
    v = data.draw(st.one_of(finite_vectors(n), vectors(n)), "v")
    iterations = data.draw(st.one_of(st.integers(0, 60), ints), "iterations")
    huge = isinstance(iterations, (int, np.integer)) and not isinstance(iterations, bool) and iterations > 10**4
    assume(not huge)  # a huge but legal iteration count is a long computation, not an error (Ctrl-C stops it)
    ok, fw = attempt(lambda: dponline.frank_wolfe(d, v, iterations))
    if ok:
        assert fw.x.shape == (n,)
        assert_finite(fw.x)
        assert d.contains(fw.x, tolerance(d))
        assert not math.isnan(fw.gap)
        assert fw.vertices.shape[1] == n and fw.weights.shape == (fw.vertices.shape[0],)
        assert np.all(fw.weights >= 0) and abs(fw.weights.sum() - 1) < 1e-9
        for vertex in fw.vertices:
            assert d.contains(vertex, tolerance(d))


@given(st.data())
def test_sample_sphere(data: st.DataObject) -> None:
    dim, size = data.draw(ints, "dim"), data.draw(ints, "size")
    ball = data.draw(st.sampled_from([False, True, None, 1]), "ball")
    domain = data.draw(st.one_of(st.none(), valid_domains()), "domain")
    seed = data.draw(seeds, "seed")
    ok, u = attempt(lambda: dponline.sample_sphere(dim, size, ball=ball, domain=domain, seed=seed))
    if ok:
        assert u.shape == (int(size), int(dim))
        assert_finite(u)
        norms = np.linalg.norm(u, axis=1)
        if ball:
            assert np.all(norms <= 1 + 1e-12)
        else:
            np.testing.assert_allclose(norms, 1.0, rtol=1e-9)


# -- noise ---------------------------------------------------------------------------------------------
@given(st.sampled_from(["laplace", "gaussian", "laplace_sum", "gaussian_sum"]), reals, ints, ints, seeds, st.booleans())
def test_noise_functions(name: str, scale: Any, size: Any, count: Any, seed: Any, secure: bool) -> None:
    fn = getattr(dponline.noise, name)
    if name.endswith("_sum"):
        ok, out = attempt(lambda: fn(scale, count, size, seed=seed, secure=secure))
    else:
        ok, out = attempt(lambda: fn(scale, size, seed=seed, secure=secure))
    if ok:
        assert out.shape == (int(size),) and out.dtype == np.float64
        assert_finite(out)


# -- TreeAggregator ------------------------------------------------------------------------------------
@given(ints, ints, reals, st.sampled_from(["laplace", "gaussian", "cauchy"]), st.sampled_from([True, False, 0]), seeds)
def test_tree_constructor(dim: Any, horizon: Any, scale: Any, noise: Any, padded: Any, seed: Any) -> None:
    ok, tree = attempt(
        lambda: dponline.TreeAggregator(dim, horizon, scale=scale, noise=noise, padded=padded, seed=seed)
    )
    if ok:
        assert tree.t == 0 and tree.dim == int(dim) and tree.horizon == int(horizon)
        assert_finite(tree.initial())
        assert tree.initial().shape == (tree.dim,)


@given(
    ints,
    ints,
    st.fixed_dictionaries(
        {
            "epsilon": reals,
            "sensitivity": reals,
            "delta": reals,
            "noise": st.sampled_from([None, "laplace", "gaussian", "x"]),
            "calibration": st.sampled_from(["paper", "analytic", "zcdp", "y"]),
        }
    ),
)
def test_tree_calibrated(dim: Any, horizon: Any, kwargs: dict[str, Any]) -> None:
    ok, tree = attempt(lambda: dponline.TreeAggregator.calibrated(dim, horizon, seed=0, **kwargs))
    if ok:
        assert math.isfinite(tree.scale) and tree.scale > 0
        assert math.isfinite(tree.privacy.epsilon)


tree_ops = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.integers(0, 4)),
        st.tuples(st.just("push_many"), st.integers(0, 6)),
        st.tuples(st.just("noise_variance"), st.integers(-1, 10)),
        st.tuples(st.just("draws_at"), st.integers(-1, 10)),
        st.tuples(st.just("cover"), st.integers(-1, 2**65)),
        st.tuples(st.just("copy"), st.integers(0, 2)),
    ),
    max_size=12,
)


@given(
    st.integers(1, 4),
    st.integers(1, 9),
    st.sampled_from([0.0, 1.0, 1e-300, 1e150]),
    st.sampled_from(["laplace", "gaussian"]),
    st.booleans(),
    tree_ops,
    st.data(),
)
def test_tree_protocol(
    dim: int, horizon: int, scale: float, noise: str, padded: bool, ops: list, data: st.DataObject
) -> None:
    # The exact sampler (the default) refuses scales below 1e-150 (beyond exact arithmetic): float path for those.
    sampler = "floating-point" if scale == 1e-300 else data.draw(st.sampled_from(["exact", "floating-point"]))
    tree = dponline.TreeAggregator(dim, horizon, scale=scale, noise=noise, padded=padded, seed=1, sampler=sampler)
    for op, arg in ops:
        if op == "push":
            x = data.draw(st.one_of(finite_vectors(dim), vectors(dim)))
            ok, out = unchanged_if_failed(tree, lambda x=x, tree=tree: tree.push(x))
            if ok:
                assert out.shape == (dim,)
                assert_finite(out)
        elif op == "push_many":
            xs = data.draw(
                st.one_of(
                    hnp.arrays(np.float64, (arg, dim), elements=finite_floats),
                    arrays(st.just((arg, dim))),
                    arrays(st.just((arg,))),
                )
            )
            ok, out = unchanged_if_failed(tree, lambda xs=xs, tree=tree: tree.push_many(xs))
            if ok:
                assert out.shape == (arg, dim)
                assert_finite(out)
        elif op == "noise_variance":
            ok, v = unchanged_if_failed(tree, lambda arg=arg, tree=tree: tree.noise_variance(arg))
            if ok:
                assert math.isfinite(v) and v >= 0
        elif op == "draws_at":
            unchanged_if_failed(tree, lambda arg=arg, tree=tree: tree.draws_at(arg))
        elif op == "cover":
            ok, c = attempt(lambda arg=arg, tree=tree: tree.cover(arg))
            if ok:
                assert sum(2**level for level, _ in c) == arg
        else:
            clone = [copy.copy, copy.deepcopy, lambda t: pickle.loads(pickle.dumps(t))][arg](tree)
            assert state_of(clone) == state_of(tree)
            tree = clone


# -- loss families -------------------------------------------------------------------------------------
@given(st.data())
def test_loss_families(data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["linear", "portfolio"]))
    rows, n = data.draw(st.integers(0, 4)), data.draw(st.integers(0, 4))
    matrix = data.draw(
        st.one_of(
            hnp.arrays(np.float64, (rows, n), elements=finite_floats),
            arrays(st.just((rows, n))),
            arrays(st.just((rows,))),
        )
    )
    horizon = data.draw(st.one_of(st.none(), ints))
    resample = data.draw(st.sampled_from([None, "cycle", "bootstrap", "other"]))
    seed = data.draw(st.one_of(st.none(), st.integers(0, 2**64 - 1), st.just(-1)))
    if kind == "linear":
        bound = data.draw(st.one_of(st.none(), reals))
        ok, fam = attempt(
            lambda: dponline.losses.Linear(matrix, norm_bound=bound, horizon=horizon, resample=resample, seed=seed)
        )
    else:
        rng_ = data.draw(st.one_of(st.none(), st.tuples(reals, reals), st.just("x")))
        ok, fam = attempt(
            lambda: dponline.losses.PortfolioLogLoss(
                matrix, relative_range=rng_, horizon=horizon, resample=resample, seed=seed
            )
        )
    if not ok:
        return
    for value in (fam.lipschitz, fam.loss_bound):
        assert value is None or (math.isfinite(value) and value > 0)
    x = data.draw(st.one_of(finite_vectors(fam.dim, moderate), vectors(fam.dim)))
    t = data.draw(st.one_of(st.integers(-1, 5), ints))
    ok, v = attempt(lambda: fam.value(t, x))
    if ok:
        assert math.isfinite(v)
    if fam.horizon <= 10**5:
        counts = fam.row_counts()
        assert counts.sum() == fam.horizon
    marks = data.draw(st.lists(st.integers(0, min(fam.horizon, 50)), max_size=4))
    ok, cum = attempt(lambda: fam.cumulative_at(x, marks))
    if ok:
        assert cum.shape == (len(marks),)
        assert_finite(cum)


# -- PrivateBandit -------------------------------------------------------------------------------------
bandit_kwargs = st.fixed_dictionaries(
    {
        "horizon": st.one_of(st.integers(1, 200), ints),
        "epsilon": st.one_of(st.none(), st.just(1.0), reals),
        "lipschitz": st.one_of(st.just(1.0), reals),
    },
    optional={
        "delta": st.one_of(st.just(1e-6), reals),
        "loss_bound": st.one_of(st.none(), reals),
        "noise": st.sampled_from([None, "laplace", "gaussian", "other"]),
        "calibration": st.sampled_from(["paper", "analytic", "zcdp", "x"]),
        "smoothing_radius": st.one_of(st.none(), reals),
        "feasibility": st.sampled_from(["fkm", "appendix-d", "x"]),
        "strict": st.sampled_from([True, False, 1]),
        "seed": seeds,
    },
)


@given(valid_domains(), bandit_kwargs)
def test_private_bandit_constructor(d: Any, kwargs: dict[str, Any]) -> None:
    ok, learner = attempt(lambda: dponline.PrivateBandit(d, **kwargs))
    if not ok:
        return
    check_constructed(learner)
    x = learner.ask()
    assert x.shape == (d.dim,)
    assert_finite(x)
    assert d.contains(x, tolerance(d))


bandit_ops = st.lists(
    st.one_of(
        st.just(("ask", None)),
        st.tuples(st.just("tell"), st.one_of(finite_floats, reals)),
        st.tuples(st.just("run"), st.one_of(st.integers(0, 300), st.sampled_from([-1, 2**64, 1.5, None]))),
        st.just(("pickle", None)),
        st.just(("regret_bound", None)),
    ),
    max_size=25,
)


@given(
    valid_domains(),
    st.integers(1, 400),
    st.sampled_from([None, 1.0, 1e-3]),
    st.sampled_from([1.0, 1e-6, 1e6]),
    st.sampled_from([0.0, 1e-6]),
    st.booleans(),
    bandit_ops,
)
def test_private_bandit_protocol(
    d: Any, horizon: int, epsilon: Any, lipschitz: float, delta: float, strict: bool, ops: list
) -> None:
    ok, learner = attempt(
        lambda: dponline.PrivateBandit(
            d, horizon=horizon, epsilon=epsilon, lipschitz=lipschitz, delta=delta, strict=strict, seed=7
        )
    )
    assume(ok)  # domains without a certified inscribed ball are refused (tested in the constructor property)
    fam = dponline.losses.Linear(np.linspace(-1, 1, 3 * d.dim).reshape(3, d.dim), horizon=400, resample="cycle")
    for op, arg in ops:
        if op == "ask":
            ok, x = unchanged_if_failed(learner, learner.ask)
            if ok:
                assert x.shape == (d.dim,)
                assert_finite(x)
                assert d.contains(x, tolerance(d)), x
        elif op == "tell":
            unchanged_if_failed(learner, lambda arg=arg, learner=learner: learner.tell(arg))
        elif op == "run":
            ok, result = unchanged_if_failed(
                learner, lambda arg=arg, learner=learner: learner.run(fam, rounds=arg, checkpoints=3)
            )
            if ok:
                assert math.isfinite(result.total_loss)
                assert_finite(result.cumulative_loss)
                assert_finite(result.final_point)
        elif op == "pickle":
            clone = pickle.loads(pickle.dumps(learner))
            assert state_of(clone) == state_of(learner)
            learner = clone
        else:
            ok, bound = attempt(learner.regret_bound)
            if ok:
                assert math.isfinite(bound)


# -- privacy -------------------------------------------------------------------------------------------
PRIVACY_CALLS: dict[str, Callable[..., Any]] = {
    "laplace_scale": lambda e, d, s, k: privacy.laplace_scale(e, s),
    "gaussian_sigma_classical": lambda e, d, s, k: privacy.gaussian_sigma_classical(e, d, s),
    "gaussian_delta": lambda e, d, s, k: privacy.gaussian_delta(e, s, k),
    "gaussian_sigma_analytic": lambda e, d, s, k: privacy.gaussian_sigma_analytic(e, d, s),
    "gaussian_epsilon_analytic": lambda e, d, s, k: privacy.gaussian_epsilon_analytic(d, s, k),
    "zcdp_gaussian_rho": lambda e, d, s, k: privacy.zcdp_gaussian_rho(s, k),
    "zcdp_to_dp": lambda e, d, s, k: privacy.zcdp_to_dp(e, d),
    "zcdp_to_dp_bun_steinke": lambda e, d, s, k: privacy.zcdp_to_dp(e, d, method="bun-steinke"),
    "dp_to_zcdp_rho": lambda e, d, s, k: privacy.dp_to_zcdp_rho(e),
    "zcdp_gaussian_sigma": lambda e, d, s, k: privacy.zcdp_gaussian_sigma(e, d, s),
    "advanced_composition": lambda e, d, s, k: privacy.advanced_composition(e, d, k, s),
    "levels_touched": lambda e, d, s, k: privacy.levels_touched(k),
    "tree_laplace_scale": lambda e, d, s, k: privacy.tree_laplace_scale(e, s, k),
    "tree_gaussian_sigma": lambda e, d, s, k: privacy.tree_gaussian_sigma(e, d, s, k),
    "tree_gaussian_sigma_zcdp": lambda e, d, s, k: privacy.tree_gaussian_sigma(e, d, s, k, calibration="zcdp"),
    "tree_privacy": lambda e, d, s, k: privacy.tree_privacy("gaussian", s, e, k, delta=d),
    "tree_privacy_laplace": lambda e, d, s, k: privacy.tree_privacy("laplace", s, e, k),
    "group": lambda e, d, s, k: privacy.PrivacyGuarantee(e, d, "test").group(k),
    "group_gaussian": lambda e, d, s, k: privacy.PrivacyGuarantee(e, d, "test", noise_multiplier=s).group(k),
    "basic_composition": lambda e, d, s, k: privacy.basic_composition([privacy.PrivacyGuarantee(e, d, "a")] * 3),
}
probabilities = st.one_of(st.sampled_from([1e-6, 0.5, 5e-324, 1e-300, 1 - 1e-16, 0.0, 1.0]), reals)


@given(st.sampled_from(sorted(PRIVACY_CALLS)), reals, probabilities, reals, ints)
def test_privacy_functions(name: str, epsilon: Any, delta: Any, scale: Any, count: Any) -> None:
    ok, out = attempt(lambda: PRIVACY_CALLS[name](epsilon, delta, scale, count))
    if not ok:
        return
    if isinstance(out, privacy.PrivacyGuarantee):
        assert math.isfinite(out.epsilon) and 0 <= out.delta <= 1
    elif isinstance(out, float):
        assert math.isfinite(out) and out >= 0, out
        if "sigma" in name or "scale" in name or "rho" in name:
            assert out > 0, out


@pytest.mark.parametrize("secure", [False, True])
def test_seeded_objects_pickle_deterministically(secure: bool) -> None:
    """The premise of the byte-identical checks above: seeded objects pickle to the same bytes every time."""
    kwargs: dict[str, Any] = {"secure": True} if secure else {"seed": 3}
    tree = dponline.TreeAggregator(2, 8, scale=1.0, **kwargs)
    if secure:
        assert pickle.loads(pickle.dumps(tree)).push(np.zeros(2)).tolist() != tree.push(np.zeros(2)).tolist()
    else:
        assert pickle.dumps(tree) == pickle.dumps(tree)
