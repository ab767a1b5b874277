"""PrivateSCRiBLe (Agarwal-Singh 2017, Theorem 4.5): calibration, feasibility, unbiased estimates, regret, state,
errors."""

import math
import pickle

import numpy as np
import pytest

import dponline
from dponline import PrivateSCRiBLe
from dponline.domains import Box, L2Ball, Simplex
from dponline.losses import Linear


@pytest.mark.parametrize("domain,nu", [(L2Ball(4, 2.0), 1.0), (Box([-1.0] * 4, [1.0, 2.0, 3.0, 4.0]), 8.0)])
def test_parameters_are_the_stated_ones(domain, nu):
    T, B, eps = 10_000, 3.0, 0.5
    learner = PrivateSCRiBLe(domain, horizon=T, epsilon=eps, loss_bound=B, seed=0)
    p = learner.params
    lam = 2 * B / eps  # feedback in [−B, B]: replacement sensitivity 2B
    assert p["noise_scale"] == pytest.approx(lam, rel=1e-15)
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
    total = 0.0
    for t in range(T):
        y = a.ask()
        total += float(C[t] @ y)
        a.tell(float(C[t] @ y))
    assert b.run(family).total_loss == pytest.approx(total, rel=1e-12)
    assert np.array_equal(a._core.center, b._core.center)
    c = PrivateSCRiBLe(L2Ball(3, 1.0), horizon=T, epsilon=1.0, loss_bound=1.0, seed=6)
    c.run(family, rounds=700)
    d = pickle.loads(pickle.dumps(c))
    assert c.run(family).total_loss == d.run(family).total_loss
    e = PrivateSCRiBLe(L2Ball(3, 1.0), horizon=5, epsilon=1.0, loss_bound=1.0, seed=0, strict=True)
    with pytest.raises(dponline.ProtocolError):
        e.tell(0.1)
    y = e.ask()
    before = pickle.dumps(e)
    for bad, err in [
        (np.nan, dponline.NonFiniteError),
        (2.0, dponline.InvalidInputError),
        ("x", dponline.InvalidInputError),
    ]:
        with pytest.raises(err):
            e.tell(bad)
    assert pickle.dumps(e) == before and np.array_equal(e.ask(), y)
    with pytest.raises(dponline.InvalidInputError, match="Box or L2Ball"):
        PrivateSCRiBLe(Simplex(3), horizon=5, epsilon=1.0, loss_bound=1.0)
