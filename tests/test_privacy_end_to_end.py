"""Privacy end to end: a-priori constants, the privacy unit, seed secrecy and secure restore (issue 6)."""

from __future__ import annotations

import copy
import functools
import math
import pickle
from typing import Any

import numpy as np
import pytest

import dponline
from dponline import losses, privacy
from dponline.datasets import load_nyse
from dponline.domains import L2Ball, Simplex

RANGE = (0.5, 2.0)


def floating(make: Any) -> Any:
    """``make`` with ``sampler="floating-point"``: these tests check the float path they were written for."""
    return functools.partial(make, sampler="floating-point")


def _neighbour(R: np.ndarray) -> np.ndarray:
    # The verified attack of the issue: day 1000, stock 7 set to 0.05 (a 95% one-day drop).
    S = R.copy()
    S[1000, 7] = 0.05
    return S


def _published(family: dponline.losses.LossFamily, **kwargs) -> tuple:
    """Everything a job prints or saves next to the privacy claim, for a learner built on ``family``."""
    options = {"epsilon": 1.0, "delta": 1e-6, "seed": 0, **kwargs}
    learner = dponline.PrivateBandit(
        Simplex(family.dim),
        horizon=family.horizon,
        lipschitz=family.lipschitz,
        loss_bound=family.loss_bound,
        **options,
    )
    return (family.lipschitz, family.loss_bound, learner.params, str(learner.privacy), learner.privacy)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"calibration": "analytic", "sampler": "floating-point"},
        {"feasibility": "appendix-d"},
        {"delta": 0.0},
        {"sampler": "floating-point"},
    ],
)
def test_neighbouring_streams_publish_identical_constants(kwargs):
    R = load_nyse().relatives
    a = losses.PortfolioLogLoss(R, relative_range=RANGE)
    b = losses.PortfolioLogLoss(_neighbour(R), relative_range=RANGE)
    # The data-derived constants do move (that was the leak) ...
    assert a.empirical_bounds()["lipschitz"] != b.empirical_bounds()["lipschitz"]
    # ... but nothing published beside the privacy claim does.
    assert _published(a, **kwargs) == _published(b, **kwargs)


def test_neighbouring_linear_streams_publish_identical_constants():
    rng = np.random.default_rng(3)
    C = rng.normal(size=(400, 5))
    D = C.copy()
    D[17] *= 50.0
    a, b = losses.Linear(C, norm_bound=3.0), losses.Linear(D, norm_bound=3.0)
    assert a.lipschitz == b.lipschitz == 3.0
    make = lambda fam: dponline.PrivateBandit(  # noqa: E731
        L2Ball(5), horizon=400, epsilon=0.5, lipschitz=fam.lipschitz, loss_bound=3.0, seed=1
    )
    assert make(a).params == make(b).params and make(a).privacy == make(b).privacy
    assert np.linalg.norm(b.data, axis=1).max() <= 3.0 + 1e-12


def test_declared_portfolio_bounds_hold_on_the_clipped_stream():
    R = load_nyse().relatives
    fam = losses.PortfolioLogLoss(_neighbour(R), relative_range=RANGE)
    L, B = losses.portfolio_bounds(RANGE, 36)
    assert (fam.lipschitz, fam.loss_bound) == (L, B) == (1.5 * 6 / 1.0, math.log(2))
    assert fam.data.min() >= 0.5 and fam.data.max() <= 2.0
    # |f_t(x)| <= ln 2 and the tangent gradient norm <= L at random points of the simplex, for every day.
    x = np.random.default_rng(0).dirichlet(np.ones(36), size=40)
    dots = fam.data @ x.T
    assert np.abs(np.log(dots)).max() <= B + 1e-12
    grads = fam.data[:, None, :] / dots[:, :, None]
    tangent = grads - grads.mean(axis=2, keepdims=True)
    assert np.linalg.norm(tangent, axis=2).max() <= L + 1e-9
    with pytest.raises(dponline.InvalidInputError, match="relative_range"):
        losses.PortfolioLogLoss(R, relative_range=(1.5, 2.0))


def test_group_privacy_per_source_row_follows_the_formula():
    # Hand-computed multiplicities: 3 rows played for 7 rounds by cycling -> counts (3, 2, 2).
    fam = losses.PortfolioLogLoss(np.ones((3, 2)), relative_range=RANGE, horizon=7, resample="cycle")
    assert privacy.row_multiplicity(fam) == 3
    laplace = floating(dponline.PrivateBandit)(
        Simplex(2), horizon=7, epsilon=0.4, lipschitz=1.0, loss_bound=0.5, seed=0
    )
    group = laplace.privacy_per_source_row(fam)
    assert group.epsilon == pytest.approx(3 * 0.4) and group.delta == 0.0 and "3 x" in group.unit
    gauss = floating(dponline.PrivateBandit)(
        Simplex(2), horizon=7, epsilon=0.4, delta=1e-6, lipschitz=1.0, loss_bound=0.5, calibration="analytic", seed=0
    )
    z = gauss.privacy.noise_multiplier
    # Analytic calibration is exact: the per-round ε is recovered from the noise multiplier ...
    assert privacy.gaussian_epsilon_analytic(1e-6, z, 1.0) == pytest.approx(0.4, rel=1e-9)
    # ... and the per-row guarantee is the Gaussian mechanism at 3x the sensitivity.
    g3 = gauss.privacy_per_source_row(fam)
    assert g3.epsilon == pytest.approx(privacy.gaussian_epsilon_analytic(1e-6, z, 3.0), rel=1e-12)
    assert g3.delta == 1e-6 and g3.epsilon > 0.4
    # Generic (ε, δ) group privacy when the mechanism is unknown: (kε, k e^{(k-1)ε} δ).
    generic = privacy.PrivacyGuarantee(0.4, 1e-6, "x").group(3)
    assert (generic.epsilon, generic.delta) == pytest.approx((1.2, 3 * math.exp(0.8) * 1e-6))
    # A stream played in order: per row = per round.
    seq = losses.PortfolioLogLoss(np.ones((7, 2)), relative_range=RANGE)
    assert laplace.privacy_per_source_row(seq) == laplace.privacy


def test_bootstrapped_nyse_group_size_matches_row_counts():
    fam = losses.PortfolioLogLoss(
        load_nyse().relatives, relative_range=RANGE, horizon=10**6, resample="bootstrap", seed=0
    )
    counts = fam.row_counts()
    assert privacy.row_multiplicity(fam) == counts.max() > 150


def test_randomness_is_stated():
    kw = dict(horizon=50, epsilon=1.0, lipschitz=1.0)
    assert dponline.PrivateBandit(Simplex(3), seed=4, **kw).privacy.randomness == "seed"
    unseeded = dponline.PrivateBandit(Simplex(3), **kw)  # no seed: secure by default
    assert unseeded.privacy == dponline.PrivateBandit(Simplex(3), secure=True, **kw).privacy
    assert unseeded.privacy.randomness == "secure" and "never serialised" in unseeded.privacy.caveat
    assert "seed is secret" in str(dponline.PrivateBandit(Simplex(3), seed=4, **kw).privacy)


@pytest.mark.parametrize("duplicate", ["pickle twice", "copy", "deepcopy"])
def test_secure_learner_never_replays_noise(duplicate):
    learner = dponline.PrivateBandit(Simplex(4), horizon=400, epsilon=1.0, lipschitz=1.0, secure=True)
    for _ in range(37):
        learner.ask()
        learner.tell(0.2)
    if duplicate == "pickle twice":
        state = pickle.dumps(learner)
        a, b = pickle.loads(state), pickle.loads(state)
    else:
        a, b = learner, (copy.copy if duplicate == "copy" else copy.deepcopy)(learner)
    # Same feedback, independent noise and directions: the played points differ at once.
    assert not np.array_equal(a.ask(), b.ask())


def test_seeded_learner_copies_continue_identically():
    learner = dponline.PrivateBandit(Simplex(4), horizon=400, epsilon=1.0, lipschitz=1.0, seed=9)
    for _ in range(37):
        learner.ask()
        learner.tell(0.2)
    other = copy.deepcopy(learner)
    for _ in range(100):
        x, y = learner.ask(), other.ask()
        assert np.array_equal(x, y)
        learner.tell(float(x[0]))
        other.tell(float(y[0]))


def test_step_size_and_shrinkage_follow_the_formulas():
    # Simplex(5): d = 4, D = √2, r = 1/√20; T = 10⁴ → T_batch = T_round = 100.
    d, D, r, L, B, T = 4, math.sqrt(2), 1 / math.sqrt(20), 2.0, 0.5, 10_000
    fkm = dponline.PrivateBandit(Simplex(5), horizon=T, epsilon=None, lipschitz=L, loss_bound=B).params
    zeta = D * math.sqrt(d) / T**0.25
    assert fkm["zeta"] == pytest.approx(zeta, rel=1e-15) and fkm["eta_rule"] == "line 1"
    assert fkm["eta"] == pytest.approx(D / (T**0.75 * math.sqrt(d) * L), rel=1e-15)
    assert fkm["shrink"] == pytest.approx(zeta / (r + zeta), rel=1e-15)
    # Appendix D caps ζ at r/2 and re-derives η = D/(κ√T_round), κ = √T_batch·dB/ζ + T_batch·L.
    app = dponline.PrivateBandit(
        Simplex(5), horizon=T, epsilon=None, lipschitz=L, loss_bound=B, feasibility="appendix-d"
    ).params
    kappa = 10 * d * B / (r / 2) + 100 * L
    assert app["zeta"] == pytest.approx(r / 2) and app["shrink"] == pytest.approx(0.5)
    assert app["kappa"] == pytest.approx(kappa, rel=1e-12)
    assert app["eta"] == pytest.approx(D / (kappa * 10), rel=1e-12) and app["eta_rule"].startswith("Lemma 3.1")
    # A given smoothing radius also re-derives η from the proof.
    given = dponline.PrivateBandit(
        Simplex(5), horizon=T, epsilon=None, lipschitz=L, loss_bound=B, smoothing_radius=0.3
    ).params
    assert given["eta"] == pytest.approx(D / ((10 * d * B / 0.3 + 100 * L) * 10), rel=1e-12)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: Simplex(-2), dponline.InvalidInputError, "n must be an integer >= 0"),
        (lambda: Simplex(2.0), dponline.InvalidInputError, "n must be an integer"),
        (
            lambda: dponline.PrivateBandit(Simplex(3), horizon=10, epsilon=None, lipschitz=1.0, calibration="foo"),
            dponline.InvalidInputError,
            "calibration must be one of",
        ),
        (
            lambda: dponline.PrivateBandit(Simplex(3), horizon=10, epsilon="1", lipschitz=1.0),
            dponline.InvalidInputError,
            "epsilon must be a real number",
        ),
        (
            lambda: dponline.PrivateBandit(Simplex(3), horizon=10.0, epsilon=1.0, lipschitz=1.0),
            dponline.InvalidInputError,
            "horizon must be an integer",
        ),
        (
            lambda: dponline.TreeAggregator.calibrated(2, 10, epsilon=1.0, sensitivity=1.0, calibration="exact"),
            dponline.InvalidInputError,
            "calibration must be one of",
        ),
    ],
)
def test_one_validator_everywhere(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_numpy_scalars_are_accepted_and_strings_refused():
    for eps in (np.float32(1.0), np.int64(1), np.float64(0.5)):
        learner = dponline.PrivateBandit(Simplex(np.int64(3)), horizon=np.int32(20), epsilon=eps, lipschitz=1.0)
        assert learner.privacy.epsilon == float(eps)
        assert dponline.privacy.laplace_scale(eps, 1.0) == 1.0 / float(eps)
    learner = dponline.PrivateBandit(Simplex(3), horizon=20, epsilon=1.0, lipschitz=1.0, seed=0)
    learner.ask()
    before = pickle.dumps(learner)
    with pytest.raises(dponline.InvalidInputError, match="loss must be a real number"):
        learner.tell("0.1")
    with pytest.raises(dponline.NonFiniteError, match="loss must be finite, got nan"):
        learner.tell(np.float32("nan"))
    assert pickle.dumps(learner) == before
    learner.tell(np.float32(0.25))
    assert "checkpoints=" in repr(learner.run(losses.Linear(np.ones((20, 3)), norm_bound=2.0)))
