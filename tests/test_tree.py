"""TreeAggregator: exactness, noise structure (draw counts, covariances), sensitivity, state, errors."""

import functools
import math
import pickle
import resource
from typing import Any

import numpy as np
import pytest
from conftest import DUPLICATIONS, Z, duplicated, tree_noise_nodes

import dponline
from dponline import TreeAggregator, privacy
from dponline.audit import epsilon_lower_bound


def floating(make: Any) -> Any:
    """``make`` with ``sampler="floating-point"``: these tests check the float path they were written for."""
    return functools.partial(make, sampler="floating-point")


def ceil_log2(T: int) -> int:
    return (T - 1).bit_length()


@pytest.mark.parametrize("padded", [True, False])
def test_zero_noise_equals_cumsum_exactly(padded, rng):
    X = rng.normal(size=(200, 5))
    tree = TreeAggregator(5, 200, scale=0.0, padded=padded, seed=0)
    out = np.array([tree.push(x) for x in X[:100]])
    out = np.vstack([out, tree.push_many(X[100:])])
    assert np.array_equal(out, np.cumsum(X, axis=0))
    assert np.array_equal(tree.initial(), np.zeros(5))


def _noise_rows(T: int, padded: bool, noise: str, dim: int = 20_000, scale: float = 1.0) -> np.ndarray:
    """Releases on all-zero data: row t-1 is the noise of the release after push t (dim i.i.d. coordinates)."""
    tree = TreeAggregator(dim, T, scale=scale, noise=noise, padded=padded, seed=T)
    return tree.push_many(np.zeros((T, dim)))


@pytest.mark.parametrize("noise,var,kurt", [("gaussian", 1.0, 3.0), ("laplace", 2.0, 6.0)])
@pytest.mark.parametrize("padded", [True, False])
def test_variance_matches_the_draw_count(noise, var, kurt, padded):
    T = 23
    rows = _noise_rows(T, padded, noise)
    tree = TreeAggregator(1, T, scale=1.0, noise=noise, padded=padded)
    for t in range(1, T + 1):
        draws = ceil_log2(T) if padded else bin(t).count("1")
        assert tree.draws_at(t) == draws
        assert tree.noise_variance(t) == pytest.approx(draws * var, rel=1e-15)
        m = rows.shape[1]
        # A sum of k draws has kurtosis 3 + (kurt - 3)/k; the sample variance has rel. sd sqrt((kurt' - 1)/m).
        k_sum = 3 + (kurt - 3) / draws
        assert abs(rows[t - 1].var() / (draws * var) - 1) < Z * np.sqrt((k_sum - 1) / m), t


def test_initial_release_carries_ceil_log_t_draws():
    T, dim = 1000, 50_000
    tree = TreeAggregator(dim, T, scale=1.0, noise="gaussian", seed=3)
    v = tree.initial().var()
    assert abs(v / ceil_log2(T) - 1) < Z * np.sqrt(2 / dim)
    assert tree.noise_variance(0) == ceil_log2(T)


@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("T", [16, 23])
def test_noise_covariance_follows_the_documentedtree_noise_nodes(padded, T):
    """White-box audit: Cov(N_s, N_t) = (number of nodes the two releases share) · Var(draw). Unpadded, the
    shared nodes are the common dyadic-cover nodes; padded, also the padding nodes alive at both (handed-down
    ones included: at (5, 6) the padding node of position 1 at release 5 is the one of position 0 at 6)."""
    rows = _noise_rows(T, padded, "gaussian")
    m = rows.shape[1]
    ref = TreeAggregator(1, T, scale=1.0, padded=padded, noise="gaussian")
    pairs = [(4, 5), (4, 7), (6, 7), (7, 8), (8, 12), (12, 15), (3, 16), (15, 16), (1, 2), (9, 11), (5, 6), (9, 10)]
    if T == 23:
        pairs += [(16, 17), (17, 23), (20, 21), (2, 22)]
    for s, t in pairs:
        assert len(tree_noise_nodes(t, T, padded)) == ref.draws_at(t)
        if not padded:
            assert {(j, e) for _, j, e in tree_noise_nodes(t, T, False)} == {
                (j, e >> j) for j, e in TreeAggregator.cover(t)
            }
        shared = len(tree_noise_nodes(s, T, padded) & tree_noise_nodes(t, T, padded))
        cov = np.mean(rows[s - 1] * rows[t - 1])
        # For jointly Gaussian (X, Y): Var(XY) = Var X · Var Y + Cov².
        sd = np.sqrt((ref.noise_variance(s) * ref.noise_variance(t) + shared**2) / m)
        assert abs(cov - shared) < Z * sd, (s, t, cov, shared)


def _laplace_sum_kurtosis_sd(L: int, m: int) -> float:
    """Asymptotic sd of the sample excess kurtosis m4/m2² − 3 of m i.i.d. sums of L standard Laplace draws.

    Cumulants of Lap(1) = E₁ − E₂: κ_n = 2(n−1)! for even n (0 for odd), times L for the sum; the moments
    follow from the cumulants, and the delta method for symmetric laws gives
    Var ≈ (β8 − β4² − 4β4(β6 − β4) + 4β4²(β4 − 1))/m with β_k = μ_k/μ2^(k/2)."""
    k2, k4, k6, k8 = (2 * L * math.factorial(n - 1) for n in (2, 4, 6, 8))
    m2 = k2
    m4 = k4 + 3 * k2**2
    m6 = k6 + 15 * k4 * k2 + 15 * k2**3
    m8 = k8 + 28 * k6 * k2 + 35 * k4**2 + 210 * k4 * k2**2 + 105 * k2**4
    b4, b6, b8 = m4 / m2**2, m6 / m2**3, m8 / m2**4
    return math.sqrt((b8 - b4**2 - 4 * b4 * (b6 - b4) + 4 * b4**2 * (b4 - 1)) / m)


@pytest.mark.parametrize("T", [16, 23, 1000])
def test_padded_releases_are_sums_of_exactly_the_padded_number_of_laplace_draws(T):
    """The marginal of every padded release (padding nodes, module docs of aggregation/tree.rs) is a
    sum of exactly L = ⌈log₂T⌉ i.i.d. Laplace draws: variance 2L and excess kurtosis 3/L (Lap has 3)."""
    dim = 200_000
    L = ceil_log2(T)
    tree = TreeAggregator(dim, T, scale=1.0, noise="laplace", padded=True, seed=T + 1)
    pushed = 0
    for t in sorted({0, 1, 2, 3, 7, 8, T // 2, T - 1, T}):
        out = tree.initial() if t == 0 else tree.push_many(np.zeros((t - pushed, dim)))[-1]
        pushed = max(pushed, t)
        v = out.var()
        kurt = np.mean(out**4) / v**2 - 3
        # Sample variance of a law with kurtosis 3 + 3/L: relative sd sqrt((2 + 3/L)/m).
        assert abs(v / (2 * L) - 1) < Z * np.sqrt((2 + 3 / L) / dim), (t, v)
        assert abs(kurt - 3 / L) < Z * _laplace_sum_kurtosis_sd(L, dim), (t, kurt, 3 / L)


def test_neighbouring_streams_change_few_releasedtree_noise_nodes(rng):
    """Sensitivity audit (noise off): replacing one row changes at most floor(log2 T) + 1 ≤ ⌈log₂T⌉ + 1
    of the released nodes, and every release is the sum of its cover's nodes."""
    for T in [1, 2, 7, 8, 16, 100, 128]:
        X = rng.normal(size=(T, 3))
        released = {node for t in range(1, T + 1) for node in TreeAggregator.cover(t)}

        def node_sums(data, released=released):
            return {(lvl, end): data[end - 2**lvl : end].sum(axis=0) for lvl, end in released}

        tree = TreeAggregator(3, T, scale=0.0, seed=0)
        out = tree.push_many(X)
        base = node_sums(X)
        for t in range(1, T + 1):
            np.testing.assert_allclose(out[t - 1], sum(base[n] for n in TreeAggregator.cover(t)), atol=1e-12)
        worst = 0
        for s in range(T):
            Y = X.copy()
            Y[s] += 10.0
            changed = sum(not np.array_equal(base[k], v) for k, v in node_sums(Y).items())
            worst = max(worst, changed)
        assert worst == privacy.levels_touched(T) == T.bit_length()
        assert worst <= ceil_log2(T) + 1


def test_ten_million_pushes_in_bounded_memory():
    T = 10**7
    tree = TreeAggregator(1, T, scale=1.0, noise="gaussian", seed=1)
    nbytes = tree.state_nbytes
    assert nbytes < 1024
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    chunk = np.ones((10**6, 1))
    for _ in range(10):
        last = tree.push_many(chunk)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert tree.t == T and tree.state_nbytes == nbytes
    assert grown_mb < 64, grown_mb
    assert abs(last[-1, 0] - T) < Z * np.sqrt(tree.noise_variance(T))
    with pytest.raises(dponline.HorizonExhaustedError, match="horizon=10000000"):
        tree.push([1.0])


def test_determinism_and_seeds():
    X = np.arange(30.0).reshape(10, 3)
    a = TreeAggregator(3, 10, scale=1.0, seed=42).push_many(X)
    b = TreeAggregator(3, 10, scale=1.0, seed=42).push_many(X)
    c = TreeAggregator(3, 10, scale=1.0, seed=43).push_many(X)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    s1 = TreeAggregator(3, 10, scale=1.0, secure=True).push_many(X)
    s2 = TreeAggregator(3, 10, scale=1.0, secure=True).push_many(X)
    assert not np.array_equal(s1, s2)
    assert TreeAggregator(3, 10, scale=1.0, secure=True).secure


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("dim", [1, 5])
def test_push_and_push_many_in_any_blocks_release_the_same_bits(noise, padded, dim):
    # One native block per push_many call: splitting the rows differently, or pushing them one at a time,
    # must not change a single release (the same draws in the same order), from L̃_0 on.
    X = np.random.default_rng(1).normal(size=(100, dim))
    make = lambda: TreeAggregator(dim, 128, scale=1.0, noise=noise, padded=padded, seed=9)  # noqa: E731
    whole = make()
    one_by_one = make()
    assert np.array_equal(whole.initial(), one_by_one.initial())
    ref = whole.push_many(X)
    assert np.array_equal(np.vstack([one_by_one.push(x) for x in X]), ref)
    chunked = make()
    assert np.array_equal(np.vstack([chunked.push_many(X[a:b]) for a, b in ((0, 1), (1, 7), (7, 64), (64, 100))]), ref)


def test_pickle_mid_stream_continues_bit_identically():
    tree = TreeAggregator.calibrated(4, 64, epsilon=1.0, sensitivity=1.0, seed=5)
    X = np.random.default_rng(0).normal(size=(64, 4))
    tree.push_many(X[:21])
    clone = pickle.loads(pickle.dumps(tree))
    assert clone.privacy == tree.privacy and clone.t == 21
    assert np.array_equal(clone.push_many(X[21:]), tree.push_many(X[21:]))


@pytest.mark.parametrize("duplicate", DUPLICATIONS)
def test_secure_trees_never_replay_noise(duplicate):
    # Restoring one secure pickle twice (or copying a secure tree) and pushing the same rows must give
    # different releases: the ChaCha20 key is never serialised, a restored copy reseeds from the OS.
    tree = TreeAggregator.calibrated(4, 64, epsilon=1.0, sensitivity=1.0, secure=True)
    X = np.random.default_rng(0).normal(size=(64, 4))
    tree.push_many(X[:21])
    a, b = duplicated(tree, duplicate)
    assert a.secure and b.secure and a.t == b.t == 21 and a.privacy == b.privacy
    ra, rb = a.push_many(X[21:]), b.push_many(X[21:])
    # Same data, independent noise: every coordinate of every release differs.
    assert not np.any(ra == rb)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"scale": -1.0}, "scale must be finite and >= 0"),
        ({"scale": float("inf")}, "scale must be finite and >= 0"),
        ({"scale": 1.0, "noise": "cauchy"}, "noise must be 'laplace' or 'gaussian'"),
    ],
)
def test_bad_construction(kwargs, match):
    with pytest.raises(dponline.InvalidInputError, match=match):
        TreeAggregator(2, 5, **kwargs)
    with pytest.raises(dponline.InvalidInputError, match="dim must be an integer >= 1"):
        TreeAggregator(0, 5, scale=1.0)
    with pytest.raises(dponline.InvalidInputError, match="horizon must be an integer >= 1"):
        TreeAggregator(1, 0, scale=1.0)


def test_calibrated_scales_follow_theorem_2_3():
    # Laplace: λ = sensitivity · (floor(log2 T) + 1) / ε; T = 1000 → 10 levels.
    tree = floating(TreeAggregator.calibrated)(3, 1000, epsilon=0.5, sensitivity=2.0, seed=0)
    assert tree.noise == "laplace" and tree.scale == pytest.approx(2.0 * 10 / 0.5)
    assert tree.privacy.epsilon == 0.5 and tree.privacy.delta == 0.0
    # Gaussian: paper σ = Δ·B·ln(B/δ)/ε, B = 11 at T = 1024 (a power of two: the root adds a level).
    g = floating(TreeAggregator.calibrated)(3, 1024, epsilon=1.0, delta=1e-6, sensitivity=1.0, seed=0)
    assert g.noise == "gaussian"
    assert g.scale == pytest.approx(
        max(11 * np.log(11 / 1e-6), privacy.gaussian_sigma_analytic(1.0, 1e-6, np.sqrt(11)))
    )
    tight = floating(TreeAggregator.calibrated)(
        3, 1024, epsilon=1.0, delta=1e-6, sensitivity=1.0, calibration="analytic"
    )
    assert tight.scale < g.scale


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"epsilon": 1.0, "delta": 1.0, "noise": "gaussian"}, "delta"),
        ({"epsilon": 1.0, "delta": -0.1}, "delta"),
        ({"epsilon": 1.0, "noise": "gaussian"}, "delta"),
    ],
)
def test_calibrated_refuses_bad_targets(kwargs, match):
    with pytest.raises(dponline.InvalidInputError, match=match):
        TreeAggregator.calibrated(2, 10, sensitivity=1.0, **kwargs)


def test_black_box_privacy_audit_of_the_laplace_tree():
    """Empirical ε lower bound on neighbouring streams stays under the claimed ε — and the test has power.

    T = 4 (a power of two: the first row enters the released nodes [1], [1,2] and the root [1..4]), one
    coordinate per trial, 2·10⁶ trials. The event {release_1, release_2, release_4 all ≥ 1} attains the
    worst-case likelihood ratio of the unpadded tree, e^{3/λ}: with the calibrated λ = 3/ε the bound is ε;
    with the ⌈log₂T⌉ = 2 levels that a literal reading of "log T" would give, it would be 1.5·ε."""
    T, trials, eps = 4, 2_000_000, 1.0
    tree_a = floating(TreeAggregator.calibrated)(trials, T, epsilon=eps, sensitivity=1.0, padded=False, seed=101)
    tree_b = floating(TreeAggregator.calibrated)(trials, T, epsilon=eps, sensitivity=1.0, padded=False, seed=202)
    assert tree_a.scale == pytest.approx(3.0)
    X_a = np.zeros((T, trials))
    X_a[0] = 1.0  # neighbouring streams: the first row is 1 in one, 0 in the other
    rel_a, rel_b = tree_a.push_many(X_a), tree_b.push_many(np.zeros((T, trials)))

    def hits(rel):
        return int(np.count_nonzero((rel[0] >= 1) & (rel[1] >= 1) & (rel[3] >= 1)))

    estimate = epsilon_lower_bound(hits(rel_a), hits(rel_b), trials)
    assert estimate <= eps
    assert estimate > 0.9  # the audit is nearly tight, so a 1.5·ε mechanism would fail the first assertion
    # A tree calibrated with ⌈log₂T⌉ = 2 levels (λ = 2, true ε = 1.5) is caught:
    weak_a = floating(TreeAggregator)(trials, T, scale=2.0, padded=False, seed=303).push_many(X_a)
    weak_b = floating(TreeAggregator)(trials, T, scale=2.0, padded=False, seed=404).push_many(np.zeros((T, trials)))
    assert epsilon_lower_bound(hits(weak_a), hits(weak_b), trials) > eps
