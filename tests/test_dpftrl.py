"""DPFTRL (Agarwal-Singh 2017, Algorithm 1): calibration, padded releases, exactness against numpy FTRL,
feasibility, regret on real and synthetic streams, linearised portfolio losses, state and errors."""

import functools
import math
import pickle
from typing import Any

import numpy as np
import pytest
from conftest import Z

import dponline
from dponline import DPFTRL, datasets, privacy
from dponline.audit import epsilon_lower_bound
from dponline.domains import Box, L1Ball, L2Ball, Simplex, UniformMatroid
from dponline.losses import Linear, PortfolioLogLoss


def floating(make: Any) -> Any:
    """``make`` with ``sampler="floating-point"``: these tests check the float path they were written for."""
    return functools.partial(make, sampler="floating-point")


def ceil_log2(T: int) -> int:
    return (T - 1).bit_length()


# -- calibration ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "T,G,eps,expected",
    [
        (1000, 4.0, 0.5, 2 * 4.0 * 10 / 0.5),  # floor(log2 1000) + 1 = 10 levels
        (1024, 1.0, 2.0, 2 * 1.0 * 11 / 2.0),  # a power of two: the root adds a level
        (1, 3.0, 1.0, 2 * 3.0 * 1 / 1.0),
    ],
)
def test_laplace_scale_is_lemma_3_3(T, G, eps, expected):
    learner = floating(DPFTRL)(Simplex(4), horizon=T, mechanism="tree", epsilon=eps, loss_bound=G, seed=0)
    assert learner.params["noise"] == "laplace"
    assert learner.params["norm"] == "l1"
    assert learner.params["noise_scale"] == pytest.approx(expected, rel=1e-15)
    assert learner.privacy.epsilon == eps and learner.privacy.delta == 0.0
    assert "Lemma 3.3" in learner.privacy.source
    assert learner.privacy.randomness == "seed"


def test_gaussian_sigma_follows_the_tree_calibrations():
    T, G, eps, delta = 1000, 1.0, 1.0, 1e-5
    paper = floating(DPFTRL)(
        L2Ball(3, 1.0), horizon=T, mechanism="tree", epsilon=eps, delta=delta, loss_bound=G, seed=0
    )
    # Hand-computed: max(2G·B·ln(B/δ)/ε, analytic) with B = 10 levels; the first term dominates here.
    assert paper.params["noise_scale"] == pytest.approx(2 * 10 * math.log(10 / 1e-5), rel=1e-12)
    assert paper.params["norm"] == "l2"
    for cal in ("analytic", "zcdp"):
        other = floating(DPFTRL)(
            L2Ball(3, 1.0), horizon=T, mechanism="tree", epsilon=eps, delta=delta, loss_bound=G, calibration=cal, seed=0
        )
        assert other.params["noise_scale"] == privacy.tree_gaussian_sigma(eps, delta, 2 * G, T, cal)
        assert other.params["noise_scale"] < paper.params["noise_scale"]
    # The analytic σ makes the whole release exactly (ε, δ): the Gaussian mechanism of sensitivity 2G·sqrt(B).
    sigma = privacy.tree_gaussian_sigma(eps, delta, 2 * G, T, "analytic")
    assert privacy.gaussian_delta(eps, sigma, 2 * G * math.sqrt(10)) == pytest.approx(delta, rel=1e-6)
    with pytest.raises(dponline.InvalidInputError, match="zcdp"):
        floating(DPFTRL)(Simplex(3), horizon=10, mechanism="tree", epsilon=1.0, loss_bound=1.0, calibration="zcdp")


@pytest.mark.parametrize("noise,delta,var", [("laplace", 0.0, 2.0), ("gaussian", 1e-6, 1.0)])
def test_every_release_carries_the_padded_number_of_draws(noise, delta, var):
    """On all-zero losses L̃_t is pure noise: its per-coordinate variance is ⌈log₂T⌉ · Var(one draw) at every t."""
    T, n = 23, 20_000
    learner = DPFTRL(L2Ball(n, 1.0), horizon=T, mechanism="tree", epsilon=1.0, delta=delta, loss_bound=1.0, seed=7)
    scale = learner.params["noise_scale"]
    draws = ceil_log2(T)
    assert learner.params["release_draws"] == draws
    kurt = 3.0 + (3.0 if noise == "laplace" else 0.0) / draws  # kurtosis of a sum of `draws` draws
    tol = Z * math.sqrt((kurt - 1) / n)
    releases = [learner.noisy_cumulative_loss]
    for _ in range(T):
        learner.ask()
        learner.tell(np.zeros(n))
        releases.append(learner.noisy_cumulative_loss)
    for t, rel in enumerate(releases):
        assert abs(rel.var() / (draws * var * scale**2) - 1) < tol, t


# -- exactness against straightforward numpy FTRL (epsilon=None) ---------------------------------------------


def _numpy_ftrl(losses: np.ndarray, eta: float, argmin) -> np.ndarray:
    actions, cum = [], np.zeros(losses.shape[1])
    for row in losses:
        actions.append(argmin(-eta * cum))
        cum = cum + row
    return np.array(actions)


def _softmax(v: np.ndarray) -> np.ndarray:
    w = np.exp(v - v.max())
    return w / w.sum()


def _project_simplex_bisection(v: np.ndarray) -> np.ndarray:
    """Π_simplex(v) = max(v − θ, 0) with Σ = 1, θ by bisection (independent of the sort-based algorithm)."""
    lo, hi = v.min() - 1.0, v.max()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.maximum(v - mid, 0).sum() > 1:
            lo = mid
        else:
            hi = mid
    return np.maximum(v - 0.5 * (lo + hi), 0)


def _ask_tell(learner, losses):
    actions = []
    for row in losses:
        actions.append(learner.ask())
        learner.tell(row)
    return np.array(actions)


def test_non_private_entropy_equals_exponential_weights():
    L = datasets.trump_approval_expert_losses()
    learner = DPFTRL(Simplex(5), horizon=len(L), epsilon=None, loss_bound=5.0)
    assert learner.privacy is None and learner.params["noise_scale"] == 0.0
    ours = _ask_tell(learner, L)
    ref = _numpy_ftrl(L, learner.params["eta"], _softmax)
    assert np.abs(ours - ref).max() < 1e-12


@pytest.mark.parametrize(
    "domain,argmin",
    [
        (L2Ball(6, 0.7), lambda v: v * min(1.0, 0.7 / np.linalg.norm(v)) if np.linalg.norm(v) > 0 else v),
        (Box([-1.0, 0.0, -2.0, 0.5, -1.0, -1.0], [1.0, 2.0, 0.0, 1.5, 1.0, 3.0]), None),
        (Simplex(6), _project_simplex_bisection),
    ],
)
def test_non_private_euclidean_equals_projected_ftrl(domain, argmin, rng):
    if argmin is None:
        lower, upper = domain.lmo(np.ones(6)), domain.lmo(-np.ones(6))

        def argmin(v):
            return np.clip(v, lower, upper)

    losses = rng.uniform(-1, 1, size=(400, 6)) / 6
    learner = DPFTRL(domain, horizon=400, epsilon=None, loss_bound=1.0, regularizer="euclidean", learning_rate=0.3)
    ours = _ask_tell(learner, losses)
    ref = _numpy_ftrl(losses, 0.3, argmin)
    assert np.abs(ours - ref).max() < 1e-12


def test_non_private_frank_wolfe_tracks_the_projection():
    """On a domain without a closed-form projection, the warm-started Frank-Wolfe step is within the gap
    bound of the exact projection (the L1 ball: compare with the projection via the simplex)."""
    rng = np.random.default_rng(3)
    losses = rng.uniform(-1, 1, size=(300, 5)) / 5

    def project_l1(v):
        if np.abs(v).sum() <= 1:
            return v
        u = _project_simplex_bisection(np.abs(v))
        return np.sign(v) * u

    learner = DPFTRL(L1Ball(5, 1.0), horizon=300, epsilon=None, loss_bound=1.0, learning_rate=0.5, lmo_calls=50)
    assert learner.params["method"] == "frank-wolfe"
    ours = _ask_tell(learner, losses)
    ref = _numpy_ftrl(losses, 0.5, project_l1)
    # 50 LMO calls from a warm start: ‖x − x*‖ <= 2D/sqrt(52) (D = 2), and far better in practice.
    assert np.abs(ours - ref).max() < 2 * 2 / math.sqrt(52)
    assert np.median(np.linalg.norm(ours - ref, axis=1)) < 0.05


# -- feasibility ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "domain,reg",
    [
        (Simplex(7), "entropy"),
        (Simplex(7), "euclidean"),
        (L2Ball(7, 2.0), "euclidean"),
        (Box([-1.0] * 7, [1.0] * 7), "euclidean"),
        (L1Ball(7, 1.0), "euclidean"),
        (UniformMatroid(7, 3), "euclidean"),
    ],
)
@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_every_action_is_feasible(domain, reg, delta, rng):
    losses = rng.normal(size=(300, 7)) * 5  # many clipped
    learner = DPFTRL(domain, horizon=300, epsilon=0.1, delta=delta, loss_bound=1.0, regularizer=reg, seed=1)
    for row in losses:
        x = learner.ask()
        assert np.isfinite(x).all() and domain.contains(x, 1e-9), x
        learner.tell(row)
    assert learner.clipped > 0


def test_entropy_outside_the_simplex_is_refused():
    with pytest.raises(dponline.InvalidInputError, match="entropy"):
        DPFTRL(L2Ball(3, 1.0), horizon=10, epsilon=1.0, loss_bound=1.0, regularizer="entropy")


# -- regret --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "loader,epsilon", [(datasets.trump_approval_expert_losses, 1.0), (datasets.nyse_expert_losses, 1.0)]
)
def test_regret_on_real_expert_data_is_below_the_computed_bound(loader, epsilon):
    L = loader()
    T, n = L.shape
    best = L.sum(axis=0).min()
    family = Linear(L)
    regrets = []
    for seed in range(5):
        learner = DPFTRL(Simplex(n), horizon=T, epsilon=epsilon, loss_bound=float(n), seed=seed)
        regrets.append(learner.run(family).total_loss - best)
    bound = learner.regret_bound()
    assert max(regrets) <= bound
    # The bound is not vacuous in the other direction: it is below the trivial T·max loss gap only for the
    # non-private learner on these short streams; the private term is reported separately.
    terms = learner.regret_bound_terms()
    assert terms["noise"] > 0 and terms["ftrl"] > 0


def test_regret_slope_on_a_long_adversarial_stream():
    """Alternating losses (0, 1), (1, 0): follow-the-leader suffers linear regret, FTRL with η ∝ 1/sqrt(T)
    suffers ≈ ηT/8 ∝ sqrt(T). The private learner's noise term does not grow with T (privacy for free)."""
    horizons = [2**k for k in range(14, 22, 2)]
    rows = np.array([[0.0, 1.0], [1.0, 0.0]])
    regrets = []
    for T in horizons:
        family = Linear(rows, horizon=T, resample="cycle")
        vals = []
        for seed in range(4):
            learner = DPFTRL(Simplex(2), horizon=T, mechanism="tree", epsilon=20.0, loss_bound=2.0, seed=seed)
            vals.append(learner.run(family, checkpoints=1).total_loss - T / 2)
        regrets.append(np.mean(vals))
    slope = np.polyfit(np.log(horizons), np.log(regrets), 1)[0]
    assert 0.4 <= slope <= 0.6, (slope, regrets)
    # At the largest T the private regret is within 10% of the non-private ηT/8 = sqrt(T ln 2)/16.
    assert regrets[-1] == pytest.approx(math.sqrt(horizons[-1] * math.log(2)) / 16, rel=0.1)
    # A constant step size (no tuning to T) has slope 1 on the same stream: the test can fail.
    fixed = []
    for T in horizons:
        learner = DPFTRL(Simplex(2), horizon=T, epsilon=None, loss_bound=2.0, learning_rate=0.01)
        fixed.append(learner.run(Linear(rows, horizon=T, resample="cycle"), checkpoints=1).total_loss - T / 2)
    assert np.polyfit(np.log(horizons), np.log(fixed), 1)[0] > 0.9


# -- linearised portfolio losses -----------------------------------------------------------------------------


def test_portfolio_run_is_exponentiated_gradient_on_the_clipped_gradients():
    R = np.asarray(datasets.load_nyse().relatives[:400], dtype=float)
    n = R.shape[1]
    family = PortfolioLogLoss(R, relative_range=(0.5, 2.0))
    G = 2.0 * n  # ‖r/⟨r,x⟩‖₁ <= n·b/a for relatives in [a, b] = [0.5, 2]
    learner = DPFTRL(Simplex(n), horizon=len(R), epsilon=None, loss_bound=G)
    result = learner.run(family, checkpoints=1)
    Rc = np.clip(R, 0.5, 2.0)
    eta, cum, total = learner.params["eta"], np.zeros(n), 0.0
    for r in Rc:
        x = _softmax(-eta * cum)
        total -= math.log(r @ x)
        g = -r / (r @ x)
        if np.abs(g).sum() > G:
            g *= G / np.abs(g).sum()
        cum += g
    assert result.total_loss == pytest.approx(total, rel=1e-12)
    # After the last round the learner keeps x_T (no action is needed for round T + 1).
    assert np.abs(learner.run(family, rounds=0).final_point - x).max() < 1e-12
    private = DPFTRL(Simplex(n), horizon=len(R), epsilon=1.0, loss_bound=G, seed=0)
    assert np.isfinite(private.run(family, checkpoints=1).total_loss)
    with pytest.raises(dponline.InvalidInputError, match="Simplex"):
        DPFTRL(L2Ball(n, 1.0), horizon=len(R), epsilon=None, loss_bound=G).run(family)


# -- centred losses on the simplex ---------------------------------------------------------------------------


def test_portfolio_gradient_bounds_are_the_centred_box():
    """Coordinates of −r/⟨r, x⟩ lie in [−b/a, −a/b]; centred at the midpoint they lie in ±h, h = (b/a − a/b)/2."""
    from dponline.losses import portfolio_gradient_bounds

    a, b, n = 0.5, 2.0, 36
    c = portfolio_gradient_bounds((a, b), n)
    h = (b / a - a / b) / 2  # 1.875
    assert c == {"loss_shift": pytest.approx(-(b / a + a / b) / 2, rel=1e-15), "loss_bound": n * h, "dual_bound": h}
    assert portfolio_gradient_bounds((a, b), n, norm="l2")["loss_bound"] == pytest.approx(math.sqrt(n) * h)
    u = portfolio_gradient_bounds((a, b), n, centred=False)
    assert u == {"loss_shift": 0.0, "loss_bound": n * b / a, "dual_bound": b / a}
    # Random relatives (some at the ends) and points: every centred coordinate lies in ±h.
    rng = np.random.default_rng(0)
    for _ in range(2000):
        r = rng.uniform(a, b, size=5)
        r[rng.integers(5)] = rng.choice([a, b])
        x = rng.dirichlet(np.full(5, 0.2))
        g = -r / (r @ x) - c["loss_shift"]
        assert np.abs(g).max() <= h * (1 + 1e-12)
    # The ends are attained, so no narrower centred box holds: r = (b, a) against x = e_2 gives g_1 = −b/a;
    # r = (a, b) against x = e_2 gives g_1 = −a/b.
    assert (-b / a - c["loss_shift"]) == pytest.approx(-h, rel=1e-15)
    assert (-a / b - c["loss_shift"]) == pytest.approx(h, rel=1e-15)


def test_centring_leaves_non_private_actions_unchanged():
    """ε = None and one fixed η: feeding g − c·1 instead of g changes no action (⟨x, 1⟩ = 1 on the simplex)."""
    from dponline.losses import portfolio_gradient_bounds

    R = np.asarray(datasets.load_nyse().relatives[:600], dtype=float)
    n = R.shape[1]
    family = PortfolioLogLoss(R, relative_range=(0.5, 2.0))
    centred, plain = portfolio_gradient_bounds((0.5, 2.0), n), portfolio_gradient_bounds((0.5, 2.0), n, centred=False)
    eta = 0.05
    a = DPFTRL(Simplex(n), horizon=len(R), epsilon=None, learning_rate=eta, **centred)
    b = DPFTRL(Simplex(n), horizon=len(R), epsilon=None, learning_rate=eta, **plain)
    ra, rb = a.run(family, checkpoints=len(R)), b.run(family, checkpoints=len(R))
    assert ra.clipped == 0 and rb.clipped == 0  # the declared bounds hold on the data (as derived)
    np.testing.assert_allclose(ra.cumulative_loss, rb.cumulative_loss, rtol=1e-12, atol=1e-12)
    assert np.abs(ra.final_point - rb.final_point).max() < 1e-12
    # The tree sums the centred vectors: the cumulative sums differ by exactly T·c per coordinate.
    np.testing.assert_allclose(
        a.noisy_cumulative_loss, b.noisy_cumulative_loss - len(R) * centred["loss_shift"], rtol=1e-12
    )
    # ask/tell: the same through tell (the shift is applied to told vectors too); strict applies to g − c·1.
    s = DPFTRL(Simplex(3), horizon=5, epsilon=1.0, loss_bound=0.3, loss_shift=-2.0, strict=True, seed=0)
    s.ask()
    s.tell([-2.1, -1.95, -2.0])  # ‖ℓ − c·1‖₁ = 0.15 <= 0.3 although ‖ℓ‖₁ = 6.05
    s.ask()
    with pytest.raises(dponline.InvalidInputError, match="loss_shift"):
        s.tell([0.0, 0.0, 0.0])
    # ℓ − c·1 beyond the f64 range is clipped like any long vector, never inf/NaN.
    big = DPFTRL(Simplex(3), horizon=5, epsilon=1.0, loss_bound=1.0, loss_shift=1e308, seed=0)
    big.ask()
    big.tell([-1e308, 0.0, 0.0])
    assert np.isfinite(big.ask()).all() and np.isfinite(big.noisy_cumulative_loss).all() and big.clipped == 1
    with pytest.raises(dponline.InvalidInputError, match="loss_shift"):
        DPFTRL(L2Ball(3, 1.0), horizon=5, epsilon=1.0, loss_bound=1.0, loss_shift=1.0)
    with pytest.raises(dponline.InvalidInputError):
        DPFTRL(Simplex(3), horizon=5, epsilon=1.0, loss_bound=1.0, loss_shift=np.nan)


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_centring_shrinks_the_calibrated_noise_by_the_derived_factor(delta):
    """Noise scale ∝ G (Laplace λ = 2G·levels/ε; Gaussian σ ∝ G): centring scales it by (1 − a²/b²)/2, and the
    privacy notes say what was fed."""
    from dponline.losses import portfolio_gradient_bounds

    n, T, (a, b) = 36, 5000, (0.5, 2.0)
    norm = "l1" if delta == 0 else "l2"
    kw = dict(horizon=T, epsilon=1.0, delta=delta, seed=0)
    centred = floating(DPFTRL)(Simplex(n), **kw, **portfolio_gradient_bounds((a, b), n, norm=norm))
    plain = floating(DPFTRL)(Simplex(n), **kw, **portfolio_gradient_bounds((a, b), n, norm=norm, centred=False))
    factor = (1 - a * a / (b * b)) / 2  # 0.46875
    assert centred.params["noise_scale"] == pytest.approx(factor * plain.params["noise_scale"], rel=1e-12)
    assert centred.params["eta"] == pytest.approx(plain.params["eta"] / factor, rel=1e-12)  # G_* = h, not b/a
    assert centred.privacy.epsilon == plain.privacy.epsilon
    assert "loss_shift = -2.125" in centred.privacy.notes and "loss_shift" not in plain.privacy.notes
    assert centred.params["loss_shift"] == -2.125


# -- protocol, state, errors ---------------------------------------------------------------------------------


def test_ask_tell_equals_run_and_pickling_resumes_bit_identically(rng):
    L = rng.uniform(0, 1, size=(500, 8))
    family = Linear(L)

    def make():
        return DPFTRL(Simplex(8), horizon=500, epsilon=1.0, loss_bound=8.0, seed=42)

    a, b = make(), make()
    total = 0.0
    for row in L:
        x = a.ask()
        total += float(row @ x)
        a.tell(row)
    result = b.run(family)
    assert result.total_loss == pytest.approx(total, rel=1e-12)
    assert np.array_equal(a.noisy_cumulative_loss, b.noisy_cumulative_loss)
    c = make()
    c.run(family, rounds=200)
    d = pickle.loads(pickle.dumps(c))
    rest_c = c.run(family)
    rest_d = d.run(family)
    assert rest_c.total_loss == rest_d.total_loss
    assert np.array_equal(c.noisy_cumulative_loss, d.noisy_cumulative_loss)


def test_bad_input_errors_leave_state_unchanged():
    learner = DPFTRL(Simplex(3), horizon=5, epsilon=1.0, loss_bound=1.0, seed=0, strict=True)
    with pytest.raises(dponline.ProtocolError):
        learner.tell([0.0, 0.0, 0.0])
    x = learner.ask()
    before = pickle.dumps(learner)
    for bad, err in [
        ([0.0, np.nan, 0.0], dponline.NonFiniteError),
        ([0.0, np.inf, 0.0], dponline.NonFiniteError),
        ([0.0, 0.0], dponline.InvalidInputError),
        ("abc", dponline.InvalidInputError),
        ([1.0, 1.0, 1.0], dponline.InvalidInputError),  # beyond the bound with strict=True
    ]:
        with pytest.raises(err):
            learner.tell(bad)
    assert pickle.dumps(learner) == before
    assert np.array_equal(learner.ask(), x)
    learner.tell([0.1, 0.2, 0.3])
    with pytest.raises(dponline.ProtocolError):
        learner.tell([0.1, 0.2, 0.3])
    with pytest.raises(dponline.ProtocolError):
        learner.ask()
        learner.run(Linear(np.zeros((5, 3))))
    for kwargs in [{"horizon": 0}, {"loss_bound": -1.0}, {"epsilon": 0.0}, {"delta": 1.0}, {"learning_rate": 0.0}]:
        args = {"horizon": 5, "epsilon": 1.0, "loss_bound": 1.0, **kwargs}
        with pytest.raises(dponline.InvalidInputError):
            DPFTRL(Simplex(3), **args)


def test_clipping_without_strict_counts_and_stays_private():
    learner = DPFTRL(Simplex(3), horizon=10, epsilon=None, loss_bound=1.0)
    learner.ask()
    learner.tell([3.0, 0.0, 0.0])
    assert learner.clipped == 1
    # The clipped vector entered the tree: (1, 0, 0) scaled onto the radius G·(1 − c), c = 2(n + 16)u, of the core's
    # Lemma "rounded clip" (the exact norm of the float row stays within G).
    first, *rest = learner.noisy_cumulative_loss
    assert rest == [0.0, 0.0] and 1.0 - 2 * 19 * 2.0**-53 * (1 + 1e-9) <= first < 1.0


# -- DPFTPL (Algorithm 3 / Theorem 3.5) ----------------------------------------------------------------------


def test_dpftpl_sigma_is_the_larger_of_privacy_and_regret():
    T, G = 4096, 1.0
    draws = ceil_log2(T)
    # Simplex(2): W = E[max − min] of two standard normals = 2/sqrt(pi); D = sqrt(2).
    W, D = 2 / math.sqrt(math.pi), math.sqrt(2)
    s_star = math.sqrt(T * G**2 * D / (math.sqrt(2 * math.pi) * W))
    free = floating(dponline.DPFTPL)(Simplex(2), horizon=T, epsilon=None, loss_bound=G, seed=0)
    assert free.privacy is None
    assert free.params["standard_width"] == pytest.approx(W, rel=1e-8)
    assert free.params["noise_scale"] == pytest.approx(s_star / math.sqrt(draws), rel=1e-8)
    private = floating(dponline.DPFTPL)(Simplex(2), horizon=T, epsilon=1.0, delta=1e-6, loss_bound=G, seed=0)
    sigma_privacy = privacy.tree_gaussian_sigma(1.0, 1e-6, 2 * G, T, "paper")
    assert private.params["sigma_privacy"] == sigma_privacy
    assert private.params["noise_scale"] == max(sigma_privacy, s_star / math.sqrt(draws))
    weak = floating(dponline.DPFTPL)(
        Simplex(2), horizon=T, epsilon=1e4, delta=0.5, loss_bound=G, calibration="analytic"
    )
    assert weak.params["noise_scale"] == pytest.approx(s_star / math.sqrt(draws), rel=1e-8)  # regret wins
    with pytest.raises(dponline.InvalidInputError, match="delta"):
        floating(dponline.DPFTPL)(Simplex(2), horizon=T, epsilon=1.0, loss_bound=G)


def test_dpftpl_on_extreme_but_valid_inputs_is_finite():
    """Fuzz regressions (tests/test_fuzz_agarwal_singh.py): the regret-optimal σ was ``sqrt(T·G²·D/…)``, whose
    ``G²`` overflowed (OverflowError leaked for G = 1.34e154; now the samplers' scale cap refuses it) or
    underflowed (σ = 0, regret_bound divided by 0); a single-point domain (W = 0) gave σ = inf;
    ``mechanism="honaker"`` at ``horizon=1`` (the only release is exact) divided by zero."""
    from dponline.domains import PathPolytope

    for G in (1e140, 5.6246976373199514e-294):
        learner = floating(dponline.DPFTPL)(Simplex(2), horizon=1, epsilon=None, loss_bound=G)
        assert 0 < learner.params["noise_scale"] < math.inf
        assert 0 <= learner.regret_bound() < math.inf
    with pytest.raises(dponline.InvalidInputError, match="scale"):  # σ ≈ G beyond the samplers' 1e150 cap
        floating(dponline.DPFTPL)(Simplex(2), horizon=1, epsilon=None, loss_bound=1.3407807929942597e154)
    point = PathPolytope(2, [(0, 1)], 0, 1)  # one edge, one path: a single point
    for eps in (None, 1.0):
        learner = floating(dponline.DPFTPL)(point, horizon=1, epsilon=eps, delta=1e-6, loss_bound=1e6)
        assert learner.regret_bound() == 0.0 and np.array_equal(learner.ask(), point.lmo(np.zeros(point.dim)))
    learner = floating(dponline.DPFTPL)(Simplex(2), horizon=1, epsilon=None, loss_bound=1.0, mechanism="honaker")
    assert learner.params["sigma_regret"] == 0.0 and Simplex(2).contains(learner.ask(), 1e-12)
    # Horizons beyond 2^53: FTPL's unused step size sqrt(0/T)/G underflowed to 0 and the valid horizon was refused
    # ("learning_rate must be > 0"); at 2^63 - 1 the honaker release-sd probe overflowed int64 (OverflowError).
    for horizon, mechanism in ((2**62, "tree"), (2**63 - 1, "tree"), (2**63 - 1, "honaker")):
        learner = floating(dponline.DPFTPL)(
            Simplex(3), horizon=horizon, epsilon=1.0, delta=1e-6, loss_bound=1.0, mechanism=mechanism,
            calibration="analytic",
        )  # fmt: skip
        assert Simplex(3).contains(learner.ask(), 1e-12) and learner.params["eta"] == 1.0


def test_dpftpl_plays_the_lmo_of_the_previous_release(rng):
    domain = UniformMatroid(9, 3)
    learner = dponline.DPFTPL(domain, horizon=500, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=4)
    for _ in range(500):
        expected = domain.lmo(learner.noisy_cumulative_loss) if learner.t else None
        x = learner.ask()
        assert domain.contains(x, 0.0) and x.sum() == 3 and set(np.unique(x)) <= {0.0, 1.0}
        if expected is not None:
            assert np.array_equal(x, expected)
        learner.tell(rng.uniform(-1, 1, 9) / 3)


def test_dpftpl_regret_is_below_its_bound(rng):
    T, n = 20_000, 10
    C = rng.uniform(0, 1, size=(T, n)) / math.sqrt(n)
    C[:, 3] -= 0.05
    family = Linear(C)
    best = family.cumulative_at(Simplex(n).lmo(C.sum(axis=0)), [T])[0]
    for eps in (None, 1.0):
        regrets = []
        for seed in range(3):
            learner = dponline.DPFTPL(Simplex(n), horizon=T, epsilon=eps, delta=1e-6, loss_bound=1.0, seed=seed)
            regrets.append(learner.run(family, checkpoints=1).total_loss - best)
        assert max(regrets) <= learner.regret_bound()
    a = dponline.DPFTPL(Simplex(n), horizon=T, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=9)
    b = pickle.loads(pickle.dumps(a))
    assert a.run(family).total_loss == b.run(family).total_loss


def test_secure_learners_never_replay_noise():
    learner = DPFTRL(Simplex(4), horizon=100, epsilon=1.0, loss_bound=4.0, secure=True)
    assert learner.privacy.randomness == "secure"
    learner.ask()
    learner.tell([0.1, 0.2, 0.3, 0.4])
    a, b = pickle.loads(pickle.dumps(learner)), pickle.loads(pickle.dumps(learner))
    for learner_copy in (a, b):
        learner_copy.ask()
        learner_copy.tell([0.0, 0.0, 0.0, 0.0])
    assert not np.array_equal(a.noisy_cumulative_loss, b.noisy_cumulative_loss)


def test_declared_dual_bound_gives_corollary_3_2_step_and_clips_coordinates():
    """Experts with losses in [0, 1]^n: loss_bound = n (privacy), dual_bound = 1. Without noise η = sqrt(ln n / T)
    (Corollary 3.2); with noise the default is noise-aware, η = sqrt(ln n / (T + c·v)) with c = 1 for Laplace
    and v the variance of one release's noise (capped at 1/(√2 b)); learning_rate= reproduces the paper."""
    L = datasets.trump_approval_expert_losses()
    T, n = L.shape
    assert DPFTRL(Simplex(n), horizon=T, epsilon=None, loss_bound=float(n), dual_bound=1.0).params[
        "eta"
    ] == pytest.approx(math.sqrt(math.log(n) / T), rel=1e-15)
    learner = DPFTRL(Simplex(n), horizon=T, mechanism="tree", epsilon=1.0, loss_bound=float(n), dual_bound=1.0, seed=0)
    p = learner.params
    b = p["noise_scale"]
    assert p["release_variance"] == pytest.approx(p["release_draws"] * 2 * b * b, rel=1e-12)
    noise_aware = min(math.sqrt(math.log(n) / (T + p["release_variance"] + p["offset_sum"])), 1 / (math.sqrt(2) * b))
    assert p["eta"] == pytest.approx(noise_aware, rel=1e-12) and p["eta"] < math.sqrt(math.log(n) / T)
    assert "noise-aware" in p["eta_rule"]
    paper_eta = math.sqrt(math.log(n) / T)
    paper = DPFTRL(
        Simplex(n),
        horizon=T,
        mechanism="tree",
        epsilon=1.0,
        loss_bound=float(n),
        dual_bound=1.0,
        learning_rate=paper_eta,
    )
    assert paper.params["eta_rule"] == "learning_rate"
    terms = learner.regret_bound_terms()
    assert 0 < terms["perturbation"] < terms["ftrl"] + terms["noise"]  # the tighter of the two valid bounds
    assert (
        learner.params["noise_scale"]
        == DPFTRL(Simplex(n), horizon=T, mechanism="tree", epsilon=1.0, loss_bound=float(n)).params["noise_scale"]
    )  # privacy calibration untouched
    best = L.sum(axis=0).min()
    regret = learner.run(Linear(L)).total_loss - best
    assert regret <= learner.regret_bound()
    free = DPFTRL(Simplex(3), horizon=5, epsilon=None, loss_bound=3.0, dual_bound=1.0, strict=True)
    free.ask()
    with pytest.raises(dponline.InvalidInputError, match="dual"):
        free.tell([2.0, 0.0, 0.0])
    lenient = DPFTRL(Simplex(3), horizon=5, epsilon=None, loss_bound=3.0, dual_bound=1.0)
    lenient.ask()
    lenient.tell([2.0, -0.5, 0.0])
    assert np.array_equal(lenient.noisy_cumulative_loss, [1.0, -0.5, 0.0]) and lenient.clipped == 1


@pytest.mark.parametrize("mechanism", ["honaker", "blt"])
def test_dpftrl_with_other_mechanisms_is_calibrated_from_column_norms(mechanism):
    G, T = 2.0, 512
    kw = dict(horizon=T, epsilon=1.0, loss_bound=G, calibration="analytic", mechanism=mechanism, seed=0)
    l1, l2 = dponline._core.mechanism_column_norms(mechanism, T)
    lap = floating(dponline.DPFTRL)(Simplex(4), delta=0.0, **kw)
    assert lap.params["noise_scale"] == pytest.approx(2 * G * l1, rel=1e-12)
    gau = floating(dponline.DPFTRL)(Simplex(4), delta=1e-6, **kw)
    sigma = dponline.privacy.gaussian_sigma_analytic(1.0, 1e-6, 2 * G * l2)
    assert gau.params["noise_scale"] == pytest.approx(sigma, rel=1e-12) and gau._core.mechanism == mechanism
    with pytest.raises(dponline.InvalidInputError, match="only the padded tree"):
        floating(dponline.DPFTRL)(Simplex(4), delta=1e-6, **{**kw, "calibration": "paper"})
    # Theorem 3.1 needs identically distributed releases, the perturbation bound nested ones (Gaussian BLT's
    # are: Toeplitz decoder); the Lipschitz bound holds for every mechanism.
    terms = gau.regret_bound_terms()
    assert math.isinf(terms["noise"]) and math.isfinite(terms["lipschitz"])
    if mechanism == "honaker":
        assert math.isinf(terms["perturbation"]) and float(gau.regret_bound()) == terms["lipschitz"]
    else:
        assert float(gau.regret_bound()) == terms["perturbation"] < terms["lipschitz"]
    losses_ = np.random.default_rng(0).uniform(size=(T, 4))
    result = gau.run(dponline.losses.Linear(losses_))
    assert np.isfinite(result.total_loss) and Simplex(4).contains(result.final_point, 1e-12)


# -- black-box privacy audit (Laplace) -------------------------------------------------------------------------


def _released_differences(epsilon: float, first_row: np.ndarray, trials: int, seed: int) -> np.ndarray:
    """``trials`` independent DP-FTRL experts learners (N = 2, T = 3, G = 1, Laplace) fed ``first_row``, then
    zeros; returns, per run, ``D_t = ln(x_{t+1}[1] / x_{t+1}[0]) / η`` for t = 1, 2 — the noisy cumulative loss
    difference that the played actions x_2, x_3 reveal (x = softmax(−η L̃) is a monotone function of it).

    Vectorised over runs: the native object of :class:`dponline.DPFTRL` is built directly (13 µs a run instead of
    70 µs through the wrapper's validation), with the wrapper's own arguments; one numpy Generator seeds all runs
    (each construction draws four fresh words from it)."""
    from dponline import _core

    domain = Simplex(2)
    ref = DPFTRL(domain, horizon=3, mechanism="tree", epsilon=epsilon, loss_bound=1.0, seed=np.random.default_rng(seed))
    p = ref.params
    assert p["noise"] == "laplace" and p["release_draws"] == 2 and p["method"] == "softmax"
    args = dict(
        norm="l1", regularizer="entropy", noise="laplace", scale=p["noise_scale"], learning_rate=None,
        dual_bound=None, lmo_calls=4, mechanism="tree", strict=False, secure=False,
    )  # fmt: skip
    zero = np.zeros(2)
    gen = np.random.default_rng(seed)
    out = np.empty((trials, 2))
    for i in range(trials):
        core = _core.DPFTRL(domain, 3, 1.0, seed=gen, **args)
        if i == 0:  # the native object is the wrapper's engine: same seed, same actions
            ref.ask()
            ref.tell(first_row)
            core.ask()
            core.tell(first_row)
            assert np.array_equal(core.ask(), ref.ask())
            core = _core.DPFTRL(domain, 3, 1.0, seed=np.random.default_rng(seed + 1), **args)
        core.ask()
        core.tell(first_row)
        x2 = core.ask()
        core.tell(zero)
        x3 = core.ask()
        out[i] = np.log(x2[1] / x2[0]), np.log(x3[1] / x3[0])
    return out / p["eta"]


@pytest.mark.slow
def test_black_box_privacy_audit_of_laplace_dpftrl():
    """Empirical ε lower bound from the played actions on neighbouring loss sequences stays under the claimed ε,
    and the audit has power.

    Two experts, T = 3, G = 1 (L1): levels = floor(log₂3) + 1 = 2, λ = 2G·2/ε, every release carries
    ⌈log₂3⌉ = 2 draws per coordinate. The sequences differ in round 1 only: ℓ_1 = (1, 0) vs (0, 1) (L1 distance
    2G, the worst case); rounds 2, 3 are 0. Row 1 enters the nodes [1] and [1, 2], which are exactly the nodes of
    the releases L̃_1, L̃_2 behind the actions x_2, x_3 — every node it touches is observed. The event
    {D_1 ≥ τ, D_2 ≥ τ} on the revealed differences D_t = L̃_t[0] − L̃_t[1] (mean +1 in a, −1 in b) has likelihood
    ratio → e^{2·2G/λ} = e^ε in the tail; but each D carries four Laplace(λ) draws (two per coordinate: the
    padding, and L̃_1, L̃_2 share their padding node — aggregation/tree.rs), whose tail ratio converges slowly,
    so at τ = −1 + 3λ and 2·10⁵ runs per sequence the expected bound is only ≈ 0.28ε (Monte Carlo over the
    exact noise model, 4·10⁶ draws; no threshold does better at this budget).
    Power: a learner built for 4ε (λ/4) is caught against the claimed ε (expected bound ≈ 1.32ε at
    τ = −1 + 4.75λ and 6·10⁴ runs; a learner built for 3ε would give ≈ 0.94ε and would not be caught at this
    budget)."""
    eps = 1.0

    def estimate(built_for: float, threshold: float, trials: int, seed: int) -> float:
        tau = -1.0 + threshold * 4.0 / built_for  # λ = 4/ε for G = 1, T = 3
        d_a = _released_differences(built_for, np.array([1.0, 0.0]), trials, seed)
        d_b = _released_differences(built_for, np.array([0.0, 1.0]), trials, seed + 7)
        hits_a = int(np.count_nonzero((d_a >= tau).all(axis=1)))
        hits_b = int(np.count_nonzero((d_b >= tau).all(axis=1)))
        return epsilon_lower_bound(hits_a, hits_b, trials)

    honest = estimate(eps, 3.0, 200_000, 11)
    assert honest <= eps
    assert honest > 0.2 * eps  # the event is informative (expected ≈ 0.28ε)
    assert estimate(4 * eps, 4.75, 60_000, 23) > eps


def test_families_whose_losses_overflow_are_refused_with_the_learner_unchanged():
    """Fuzz regressions (tests/test_fuzz_agarwal_singh.py): linear rows whose summed loss overflows gave
    ``total_loss=inf``; portfolio relatives of 5e-324 gave ``<r, x> = 0``, an infinite loss and a NaN gradient in the
    tree. Both are refused before the run plays anything."""
    learner = DPFTRL(Box([-1.0, -1.0], [1.0, 1.0]), horizon=10, epsilon=1.0, loss_bound=1.0, seed=0)
    before = pickle.dumps(learner)
    with pytest.raises(dponline.InvalidInputError, match="rescale the losses"):
        learner.run(Linear(np.full((1, 2), 1e308), horizon=10, resample="cycle"), rounds=2)
    portfolio = DPFTRL(Simplex(2), horizon=10, epsilon=1.0, loss_bound=2.0, seed=0)
    before_portfolio = pickle.dumps(portfolio)
    for R in ([[5e-324, 5e-324]], [[1e-300, 1e300]]):
        with pytest.raises(dponline.InvalidInputError, match="rescale the losses"):
            portfolio.run(PortfolioLogLoss(np.array(R), horizon=10, resample="cycle"), rounds=1)
    assert pickle.dumps(learner) == before and pickle.dumps(portfolio) == before_portfolio
    result = portfolio.run(PortfolioLogLoss(np.array([[1e-100, 1e100]]), horizon=10, resample="cycle"))
    assert np.isfinite(result.total_loss) and np.all(np.isfinite(portfolio.noisy_cumulative_loss))


@pytest.mark.parametrize("n", [2, 3, 7])
def test_euclidean_simplex_projection_of_a_huge_release_is_feasible(n):
    """Fuzz regression (tests/test_fuzz_agarwal_singh.py): with ``η·L̃ ≈ 1e16`` the sort-based projection lost the
    ``−1`` of its threshold to rounding and returned the zero vector (outside the simplex); a run on a portfolio
    family then divided by ``<r, x> = 0``. The projection is now taken of the vector shifted to ``max = 0``."""
    for seed in range(5):
        learner = DPFTRL(
            Simplex(n), horizon=1, epsilon=1e-3, delta=1e-6, loss_bound=1e6, regularizer="euclidean",
            learning_rate=1e6, seed=seed,
        )  # fmt: skip
        x = learner.ask()
        assert Simplex(n).contains(x, 1e-9) and abs(x.sum() - 1) < 1e-12, x


def test_run_refuses_objects_that_are_not_loss_families():
    """Fuzz regression: ``run`` with an object that has an integer ``horizon`` but is not a loss family (e.g.
    :func:`dponline.losses.BernoulliArms`) leaked pyo3's TypeError."""
    arms = dponline.losses.BernoulliArms([0.5, 0.5], horizon=5, seed=1)
    for learner in (
        DPFTRL(Simplex(2), horizon=5, epsilon=None, loss_bound=1.0),
        dponline.DPFTPL(Simplex(2), horizon=5, epsilon=None, loss_bound=1.0),
    ):
        with pytest.raises(dponline.InvalidInputError, match="losses must be"):
            learner.run(arms)


def test_relative_range_must_not_be_a_single_point_and_lmo_calls_are_capped():
    """``relative_range=(1, 1)`` (every loss 0, every noise-setting bound 0) is refused up front with the
    reason; ``lmo_calls`` beyond 10⁴ (one uninterruptible native round) is refused."""
    relatives = np.ones((3, 2))
    with pytest.raises(dponline.InvalidInputError, match="a < b"):
        PortfolioLogLoss(relatives, relative_range=(1.0, 1.0))
    with pytest.raises(dponline.InvalidInputError, match="a < b"):
        dponline.losses.portfolio_gradient_bounds((1.0, 1.0), 2)
    PortfolioLogLoss(relatives, relative_range=(1.0, 1.5))  # one side degenerate is fine
    with pytest.raises(dponline.InvalidInputError, match="lmo_calls"):
        DPFTRL(L2Ball(2), horizon=5, epsilon=None, loss_bound=1.0, lmo_calls=10_001)


@pytest.mark.parametrize(
    "case",
    [
        ("simplex entropy, Laplace", dict(regularizer="entropy", delta=0.0), "simplex"),
        ("simplex entropy, Gaussian", dict(regularizer="entropy", delta=1e-6), "simplex"),
        ("ball euclidean, Gaussian", dict(regularizer="euclidean", delta=1e-6), "ball"),
    ],
    ids=lambda c: c[0],
)
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_noise_aware_step_size_bound_holds_and_never_loses_to_the_start(case, epsilon):
    """The default (noise-aware) η: the mean regret over seeds stays below regret_bound() (an expected-regret
    bound), and it minimises the perturbation bound, so its bound is below the noise-blind η's."""
    _, kwargs, where = case
    T, n, seeds = 2_000, 6, 6
    rng = np.random.default_rng(11)
    L = rng.uniform(-1, 1, (T, n)) + np.linspace(-0.3, 0.3, n)  # a weak signal: the first coordinate is best
    L = np.clip(L, -1, 1)
    domain = Simplex(n) if where == "simplex" else L2Ball(n)
    bound_g = 1.0 if where == "simplex" else float(np.sqrt(n))
    # The noise-blind learner below differs from these only in its learning rate.
    common = dict(horizon=T, mechanism="tree", epsilon=epsilon, loss_bound=float(n), dual_bound=bound_g, **kwargs)
    learners = [DPFTRL(domain, seed=s, **common) for s in range(seeds)]
    best = (
        L.sum(axis=0).min()
        if where == "simplex"
        else -np.linalg.norm(L.sum(axis=0))  # the unit ball's best fixed point
    )
    totals = np.array([lr.run(Linear(L)).total_loss for lr in learners])
    assert totals.mean() - best <= learners[0].regret_bound()
    p = learners[0].params
    blind = DPFTRL(domain, learning_rate=math.sqrt(p["regularizer_range"] / T) / p["dual_bound"], **common)
    assert p["eta"] < blind.params["eta"]
    assert learners[0].regret_bound_terms()["perturbation"] < blind.regret_bound_terms()["perturbation"]


@pytest.mark.parametrize("delta,expected", [(1e-6, "blt"), (0.0, "honaker")])
def test_default_mechanism_has_the_lowest_noise_among_those_with_a_proved_bound(delta, expected):
    """mechanism=None: BLT for Gaussian noise, Honaker for Laplace — the smallest release deviation sum S (what the
    Lipschitz bound, proved for every mechanism, charges) at equal (ε, δ), both samplers; a finite regret_bound().
    Without noise, and under the paper's calibration (its constants are the padded tree's), the padded tree."""
    kw = dict(horizon=4096, epsilon=1.0, delta=delta, loss_bound=4.0, dual_bound=1.0, seed=0)
    for sampler in ("exact", "floating-point"):
        extra = {} if sampler == "exact" else {"calibration": "analytic"}
        default = DPFTRL(Simplex(4), sampler=sampler, **kw, **extra)
        assert default._core.mechanism == expected
        assert math.isfinite(default.regret_bound())
        # Gaussian BLT's releases are nested (perturbation bound); Honaker's only have the Lipschitz bound.
        rule = "(perturbation bound)" if delta > 0 else "(Lipschitz bound)"
        assert default.params["eta_rule"].endswith(rule)
        sums = {
            m: DPFTRL(Simplex(4), mechanism=m, sampler=sampler, **kw, **extra).params["deviation_sum"]
            for m in ("tree", "honaker", "blt")
        }
        assert default.params["deviation_sum"] == min(sums.values()) == sums[expected]
    assert DPFTRL(Simplex(4), **{**kw, "epsilon": None})._core.mechanism == "tree"
    paper = DPFTRL(Simplex(4), calibration="paper", **kw)
    assert paper._core.mechanism == "tree"
