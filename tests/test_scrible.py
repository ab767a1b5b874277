"""PrivateSCRiBLe (Agarwal-Singh 2017, Theorem 4.5): calibration, feasibility, unbiased estimates, regret, state,
errors."""

import math
import pickle

import numpy as np
import pytest
from conftest import check_bad_tells_refused, checked_feedback_scale

import dponline
from dponline import PrivateSCRiBLe
from dponline.domains import Box, L1Ball, L2Ball, Simplex
from dponline.losses import Linear


def _ask_tell_total(learner: PrivateSCRiBLe, C: np.ndarray) -> float:
    """The total loss of ``learner`` played round by round (ask, tell ``⟨ℓ_t, y_t⟩``) on the rows of ``C``."""
    total = 0.0
    for row in C:
        y = learner.ask()
        total += float(row @ y)
        learner.tell(float(row @ y))
    return total


@pytest.mark.parametrize("domain,nu", [(L2Ball(4, 2.0), 1.0), (Box([-1.0] * 4, [1.0, 2.0, 3.0, 4.0]), 8.0)])
@pytest.mark.parametrize("sampler", ["exact", "floating-point"])
def test_parameters_are_the_stated_ones(domain, nu, sampler):
    T, B, eps = 10_000, 3.0, 0.5
    learner = PrivateSCRiBLe(domain, horizon=T, epsilon=eps, loss_bound=B, sampler=sampler, seed=0)
    p = learner.params
    # feedback in [−B, B]: replacement sensitivity 2B
    lam = checked_feedback_scale(p["noise_scale"], 2 * B / eps, eps, sampler)
    r = B + 2 * lam * math.log(T)
    assert p["noisy_range"] == pytest.approx(r, rel=1e-14) and p["nu"] == nu
    eta = math.sqrt(nu * math.log(T) / (2 * 16 * r * r * T))
    assert p["eta"] == pytest.approx(eta, rel=1e-14)
    assert learner.regret_bound() == pytest.approx(nu * math.log(T) / eta + 2 * eta * 16 * r * r * T + B, rel=1e-12)
    assert learner.privacy.epsilon == eps and "Theorem 4.5" in learner.privacy.source


@pytest.mark.parametrize("domain", [L2Ball(5, 1.0), Box([-1.0, 0.0, 2.0, -3.0, 0.0], [1.0, 0.5, 4.0, 3.0, 1.0])])
def test_every_played_point_is_feasible(domain, rng):
    learner = PrivateSCRiBLe(domain, horizon=3000, epsilon=0.5, loss_bound=2.0, seed=3)
    c = rng.normal(size=5)
    for _ in range(3000):
        y = learner.ask()
        assert np.isfinite(y).all() and domain.contains(y, 1e-9)
        learner.tell(float(c @ y))


def test_non_private_estimates_are_unbiased():
    """With ε = None and a fixed L̂ (horizon 1 keeps x fixed), the mean of n f s λ^{1/2} e_i over the exploration
    equals ℓ: check through the FTRL point after one round, averaged over seeds, on the ball."""
    ell = np.array([0.4, -0.3, 0.2])
    sums = np.zeros(3)
    trials = 4000
    for seed in range(trials):
        learner = PrivateSCRiBLe(L2Ball(3, 1.0), horizon=2, epsilon=None, loss_bound=10.0, seed=seed)
        y = learner.ask()
        learner.tell(float(ell @ y))
        # x_2 = −τ L̂/‖L̂‖ with L̂ the one-round estimate; recover L̂'s direction and length from τ.
        x = learner._core.center
        eta = learner.params["eta"]
        tau = np.linalg.norm(x)
        a = 2 * tau / (1 - tau * tau) if tau > 0 else 0.0  # invert τ = a/(1 + sqrt(1 + a²)) (r = 1)
        sums += -(a / eta) * x / tau if tau > 0 else 0.0
    mean = sums / trials
    # Each estimate has norm n·|f|·λ^{1/2} <= 3·(‖ℓ‖·1)·sqrt(2 + 0) ≈ 2.3 at x = 0: sd of the mean ≈ 2.3/sqrt(4000).
    assert np.abs(mean - ell).max() < 5 * 2.5 / math.sqrt(trials)


@pytest.mark.parametrize("eps", [None, 1.0])
def test_regret_is_below_the_bound(eps):
    T, n = 50_000, 3
    c = np.array([[0.5, -0.3, 0.2]])
    family = Linear(c, horizon=T, resample="cycle")
    domain = L2Ball(n, 1.0)
    best = -np.linalg.norm(c) * T
    learner = PrivateSCRiBLe(domain, horizon=T, epsilon=eps, loss_bound=1.0, seed=1)
    regret = learner.run(family, checkpoints=1).total_loss - best
    assert regret <= learner.regret_bound()
    if eps is None:
        assert regret < 0.5 * T * np.linalg.norm(c)  # it learns: well below the regret of playing the centre


def test_ask_tell_equals_run_pickling_and_errors(rng):
    T = 2000
    C = rng.normal(size=(T, 3)) / 3
    family = Linear(C)
    a = PrivateSCRiBLe(Box([-1.0] * 3, [1.0] * 3), horizon=T, epsilon=1.0, loss_bound=1.0, seed=5)
    b = PrivateSCRiBLe(Box([-1.0] * 3, [1.0] * 3), horizon=T, epsilon=1.0, loss_bound=1.0, seed=5)
    assert b.run(family).total_loss == pytest.approx(_ask_tell_total(a, C), rel=1e-12)
    assert np.array_equal(a._core.center, b._core.center)
    c = PrivateSCRiBLe(L2Ball(3, 1.0), horizon=T, epsilon=1.0, loss_bound=1.0, seed=6)
    c.run(family, rounds=700)
    d = pickle.loads(pickle.dumps(c))
    assert c.run(family).total_loss == d.run(family).total_loss
    e = PrivateSCRiBLe(L2Ball(3, 1.0), horizon=5, epsilon=1.0, loss_bound=1.0, seed=0, strict=True)
    check_bad_tells_refused(
        e,
        0.1,
        [(np.nan, dponline.NonFiniteError), (2.0, dponline.InvalidInputError), ("x", dponline.InvalidInputError)],
    )
    with pytest.raises(dponline.InvalidInputError, match="Box, L2Ball or Simplex"):
        PrivateSCRiBLe(L1Ball(3, 1.0), horizon=5, epsilon=1.0, loss_bound=1.0)


# --- the simplex: R = −Σ ln x_i on the affine hull {Σx = 1}, ν = N, n = N' = N − 1 exploration directions ---


def test_simplex_parameters_use_the_hull_dimension():
    T, B, eps, N = 10_000, 1.0, 0.5, 6
    p = PrivateSCRiBLe(Simplex(N), horizon=T, epsilon=eps, loss_bound=B, sampler="floating-point", seed=0).params
    n = N - 1  # the estimator's factor and the n of η: the affine hull's dimension
    r = B + 2 * (2 * B / eps) * math.log(T)
    assert p["nu"] == N and p["dim"] == N and p["estimator_dim"] == n
    eta = math.sqrt(N * math.log(T) / (2 * n * n * r * r * T))
    assert p["eta"] == pytest.approx(eta, rel=1e-14)
    assert p["regret_bound"] == pytest.approx(N * math.log(T) / eta + 2 * eta * n * n * r * r * T + B, rel=1e-12)


@pytest.mark.parametrize("N,eps", [(2, 0.5), (5, 0.5), (40, None), (40, 2.0)])
def test_simplex_every_played_point_is_feasible(N, eps, rng):
    """Every y_t lies in the simplex to 1e-12 (no projection: the unit Dikin ellipsoid is inside), including
    late rounds where the FTRL point is near a vertex and some x_i are tiny."""
    T = 4000
    domain = Simplex(N)
    learner = PrivateSCRiBLe(domain, horizon=T, epsilon=eps, loss_bound=1.0, seed=3)
    c = rng.uniform(0.0, 1.0, size=N)
    c[0] = 0.0  # a clear best vertex, so x_t concentrates
    smallest = 1.0
    for _ in range(T):
        y = learner.ask()
        assert np.isfinite(y).all() and domain.contains(y, 1e-12)
        assert y.min() >= -1e-12 and abs(y.sum() - 1.0) <= 1e-12
        smallest = min(smallest, float(learner._core.center.min()))
        learner.tell(float(c @ y))
    if eps is None:
        assert smallest < 0.1 / N  # the run moved well away from the centre 1/N


def test_simplex_estimates_are_unbiased_on_the_hull():
    """Non-private, horizon 3: after rounds 1 and 2 the FTRL points x_2, x_3 determine Π L̂ exactly
    (η L̂_i + μ = 1/x_i, and every estimate lies in 1^⊥), so ℓ̂_2 = Π(1/x_3 − 1/x_2)/η. Its mean over seeds must be
    Π ℓ = ℓ − mean(ℓ) (N' = N − 1 directions; with the factor N instead of N' it would be N/N' · Π ℓ). Round 2 is
    played from a non-uniform x_2, so the secular-equation eigenvectors are exercised."""
    ell = np.array([0.4, -0.3, 0.2, 0.1])
    target = ell - ell.mean()
    trials = 20_000
    est = np.empty((trials, 4))
    for seed in range(trials):
        learner = PrivateSCRiBLe(Simplex(4), horizon=3, epsilon=None, loss_bound=10.0, seed=seed)
        learner.tell(float(ell @ learner.ask()))
        x2 = learner._core.center
        learner.tell(float(ell @ learner.ask()))
        x3 = learner._core.center
        diff = 1.0 / x3 - 1.0 / x2
        est[seed] = (diff - diff.mean()) / learner.params["eta"]
    assert np.abs(est.sum(axis=1)).max() < 1e-9  # in 1^⊥
    mean, sd = est.mean(axis=0), est.std(axis=0)
    # 5.3 sd: two-sided normal tail 1e-7 per coordinate.
    assert np.all(np.abs(mean - target) < 5.3 * sd / math.sqrt(trials)), (mean, target)
    # Power: N/N' · Π ℓ (the full-dimension factor) would be rejected.
    assert np.any(np.abs(mean - 4 / 3 * target) > 5.3 * sd / math.sqrt(trials))


@pytest.mark.parametrize("eps", [None, 1.0])
def test_simplex_regret_is_below_the_bound(eps):
    T, N = 50_000, 4
    c = np.array([[0.5, 0.2, 0.8, 0.4]])  # in [0, 1]^N: |⟨ℓ, y⟩| <= 1 on the simplex
    learner = PrivateSCRiBLe(Simplex(N), horizon=T, epsilon=eps, loss_bound=1.0, seed=1)
    regret = learner.run(Linear(c, horizon=T, resample="cycle"), checkpoints=1).total_loss - c.min() * T
    assert regret <= learner.regret_bound()
    if eps is None:
        assert regret < 0.25 * (c.mean() - c.min()) * T  # it learns: far below the uniform point's regret


def test_simplex_ask_tell_equals_run_pickling_and_errors(rng):
    T, N = 1500, 5
    C = rng.uniform(-1.0, 1.0, size=(T, N))
    family = Linear(C)
    a = PrivateSCRiBLe(Simplex(N), horizon=T, epsilon=1.0, loss_bound=1.0, seed=5)
    b = PrivateSCRiBLe(Simplex(N), horizon=T, epsilon=1.0, loss_bound=1.0, seed=5)
    assert b.run(family).total_loss == pytest.approx(_ask_tell_total(a, C), rel=1e-12)
    # Same draws; the feedback differs only in the rounding of ⟨ℓ, y⟩ (numpy's dot vs the core's sum).
    np.testing.assert_allclose(a._core.center, b._core.center, rtol=1e-10, atol=0)
    c = PrivateSCRiBLe(Simplex(N), horizon=T, epsilon=1.0, loss_bound=1.0, seed=6)
    c.run(family, rounds=600)
    d = pickle.loads(pickle.dumps(c))
    assert c.run(family).total_loss == d.run(family).total_loss
    assert np.array_equal(c._core.center, d._core.center)
    e = PrivateSCRiBLe(Simplex(N), horizon=5, epsilon=1.0, loss_bound=1.0, seed=0, strict=True)
    with pytest.raises(dponline.ProtocolError):
        e.tell(0.1)
    y = e.ask()
    before = pickle.dumps(e)
    for bad, err in [(np.inf, dponline.NonFiniteError), (-1.5, dponline.InvalidInputError)]:
        with pytest.raises(err):
            e.tell(bad)
    assert pickle.dumps(e) == before and np.array_equal(e.ask(), y)
    with pytest.raises(dponline.InvalidInputError, match="dimension"):
        PrivateSCRiBLe(Simplex(N), horizon=T, epsilon=1.0, loss_bound=1.0).run(Linear(C[:, :3]))
    with pytest.raises(dponline.InvalidInputError):
        PrivateSCRiBLe(Simplex(N), horizon=T, epsilon=0.0, loss_bound=1.0)


@pytest.mark.parametrize("domain", [L2Ball(1, 1e-300), L2Ball(2, 5e-324), Box([0.0, 0.0], [1e-300, 1.0])])
def test_domains_too_small_for_the_barrier_are_refused(domain):
    """Fuzz regression (tests/test_fuzz_agarwal_singh.py): on a ball of radius 1e-300 (or a box that narrow) the
    barrier's Hessian ``~1/r²`` overflowed and ``ask()`` returned NaN; such domains are now refused. Balls of
    radius down to 1e-150 work (``ask()`` was NaN below r = 1e-77: ``σ²`` underflowed in the Hessian)."""
    with pytest.raises(dponline.InvalidInputError, match="rescale the domain"):
        PrivateSCRiBLe(domain, horizon=5, epsilon=None, loss_bound=1.0, seed=7)
    for r in (1e-100, 1e-150):
        learner = PrivateSCRiBLe(L2Ball(2, r), horizon=5, epsilon=1.0, loss_bound=1.0, seed=7)
        for _ in range(5):
            y = learner.ask()
            assert np.all(np.isfinite(y)) and L2Ball(2, r).contains(y, 1e-6 * r)
            learner.tell(0.5)


def test_a_family_whose_total_loss_overflows_is_refused_with_the_learner_unchanged():
    """Fuzz regression (tests/test_fuzz_agarwal_singh.py): see the same test of DPFTRL."""
    learner = PrivateSCRiBLe(L2Ball(2, 1.0), horizon=10, epsilon=1.0, loss_bound=1.0, seed=0)
    before = pickle.dumps(learner)
    with pytest.raises(dponline.InvalidInputError, match="rescale the losses"):
        learner.run(Linear(np.full((1, 2), 1e308), horizon=10, resample="cycle"), rounds=2)
    assert pickle.dumps(learner) == before
    assert np.isfinite(learner.run(Linear(np.full((1, 2), 1e300), horizon=10, resample="cycle")).total_loss)


def test_run_refuses_objects_that_are_not_loss_families():
    """Fuzz regression: ``run(BernoulliArms(...))`` leaked pyo3's TypeError."""
    learner = PrivateSCRiBLe(L2Ball(2, 1.0), horizon=5, epsilon=None, loss_bound=1.0)
    with pytest.raises(dponline.InvalidInputError, match="losses must be"):
        learner.run(dponline.losses.BernoulliArms([0.5, 0.5], horizon=5, seed=1))
