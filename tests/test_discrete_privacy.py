"""Accounting of the exact discrete mechanisms, checked against the definitions by direct summation of pmfs."""

import math

import numpy as np
import pytest
from scipy import special

from dponline import privacy
from dponline.errors import InvalidInputError, NonFiniteError
from dponline.privacy import (
    discrete_gaussian_delta,
    discrete_gaussian_rho,
    discrete_gaussian_sigma,
    discrete_laplace_epsilon,
    discrete_laplace_scale,
)


def _gaussian_pmf(sigma: float, shift: int, k: int) -> np.ndarray:
    xs = np.arange(-k, k + 1, dtype=float)
    w = np.exp(-((xs - shift) ** 2) / (2 * sigma**2))
    return w / w.sum()


def _laplace_pmf(t: float, shift: int, k: int) -> np.ndarray:
    xs = np.arange(-k, k + 1, dtype=float)
    w = np.exp(-np.abs(xs - shift) / t)
    return w / w.sum()


@pytest.mark.parametrize("t", [0.7, 2.0, 5.0])
@pytest.mark.parametrize("shift", [1, 3])
def test_discrete_laplace_epsilon_is_the_worst_log_ratio(t, shift):
    # Far from the truncation edge the log-ratio of the pmfs of DLap(t) centred at 0 and at the shift reaches
    # exactly shift/t and never more.
    k = 400
    p, q = _laplace_pmf(t, 0, k), _laplace_pmf(t, shift, k)
    inner = slice(100, -100)
    worst = float(np.max(np.abs(np.log(p[inner]) - np.log(q[inner]))))
    assert worst == pytest.approx(discrete_laplace_epsilon(t, shift), rel=1e-9)
    assert discrete_laplace_scale(shift / t, shift) == pytest.approx(t)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("shift", [1, 2])
def test_discrete_gaussian_renyi_divergence_is_at_most_the_zcdp_bound(sigma, shift):
    # D_alpha(N_Z(0) || N_Z(shift)) by summation <= alpha * rho, rho = shift^2 / (2 sigma^2).
    # In logs: the normaliser of N_Z(mu, sigma^2) is the same for every integer mu.
    k = int(40 * sigma) + 10 + 40 * shift
    xs = np.arange(-k, k + 1, dtype=float)
    log_z = float(special.logsumexp(-(xs**2) / (2 * sigma**2)))
    log_p = -(xs**2) / (2 * sigma**2) - log_z
    log_q = -((xs - shift) ** 2) / (2 * sigma**2) - log_z
    rho = discrete_gaussian_rho(sigma, shift)
    for alpha in [1.5, 2.0, 5.0, 20.0]:
        d = float(special.logsumexp(alpha * log_p + (1 - alpha) * log_q)) / (alpha - 1)
        assert d <= alpha * rho * (1 + 1e-12)
        assert d >= 0.9 * alpha * rho or sigma < 1  # nearly tight once sigma >= 1


@pytest.mark.parametrize("sigma", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("shift", [1, 2])
@pytest.mark.parametrize("eps", [0.25, 1.0, 3.0])
def test_discrete_gaussian_delta_bounds_the_exact_1d_profile(sigma, shift, eps):
    # The exact delta(eps) of the 1-D mechanism: sum_x max(0, P(x) - e^eps Q(x)), both orders (symmetric).
    k = int(40 * sigma) + 10
    p, q = _gaussian_pmf(sigma, 0, k), _gaussian_pmf(sigma, shift, k)
    exact = float(np.sum(np.maximum(0.0, p - math.exp(eps) * q)))
    bound = discrete_gaussian_delta(eps, sigma, shift)
    assert exact <= bound
    # The zCDP route is not far from exact where delta is small.
    if exact > 1e-12:
        assert bound <= 30 * exact


def test_discrete_gaussian_delta_matches_the_cks_conversion_used_by_the_package():
    # zcdp_to_dp(rho, delta) inverts delta(eps) at the same rho.
    for sigma, sens in [(3.0, 1.0), (10.0, 2.0), (2.0**30, 2.0**27)]:
        rho = discrete_gaussian_rho(sigma, sens)
        for eps in [0.3, 1.0, 2.5]:
            d = discrete_gaussian_delta(eps, sigma, sens)
            if 1e-300 < d < 0.5:
                assert privacy.zcdp_to_dp(rho, d) == pytest.approx(eps, rel=1e-6)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (4.0, 1e-6)])
def test_discrete_gaussian_sigma_is_the_smallest_integer_meeting_the_target(eps, delta):
    for sens in [1.0, 7.0, 1000.0]:
        s = discrete_gaussian_sigma(eps, delta, sens)
        assert isinstance(s, int)
        assert discrete_gaussian_delta(eps, s, sens) <= delta
        if s > 1:
            assert discrete_gaussian_delta(eps, s - 1, sens) > delta
        # Never below the analytic continuous Gaussian (exact for the continuous mechanism), and within 10%.
        analytic = privacy.gaussian_sigma_analytic(eps, delta, sens)
        assert analytic <= s <= 1.1 * analytic + 1


def test_bad_arguments_are_refused():
    with pytest.raises(InvalidInputError, match="epsilon"):
        discrete_laplace_scale(0.0, 1.0)
    with pytest.raises(InvalidInputError, match="sensitivity_l1"):
        discrete_laplace_scale(1.0, -1.0)
    with pytest.raises(InvalidInputError, match="delta"):
        discrete_gaussian_sigma(1.0, 0.0, 1.0)
    with pytest.raises(NonFiniteError):
        discrete_gaussian_delta(float("nan"), 1.0, 1.0)
    with pytest.raises(InvalidInputError, match="sigma"):
        discrete_gaussian_delta(1.0, 0.0, 1.0)
