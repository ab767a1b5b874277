"""The core's samplers: goodness of fit at α = 1e-6, moments within theory-derived bounds, seeds."""

import numpy as np
import pytest
from conftest import ALPHA, Z
from scipy import stats

import dponline
from dponline import noise

N = 400_000


def _check_variance(x: np.ndarray, var: float, kurtosis: float) -> None:
    # Sample variance of n draws has relative sd sqrt((kurtosis - 1)/n) (kurtosis = 4th standardised moment).
    n = len(x)
    assert abs(x.var(ddof=1) / var - 1) < Z * np.sqrt((kurtosis - 1) / n)
    assert abs(x.mean()) < Z * np.sqrt(var / n)


@pytest.mark.parametrize("scale", [0.3, 2.0])
def test_laplace_fits(scale):
    x = noise.laplace(scale, N, seed=1)
    assert stats.kstest(x, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    _check_variance(x, 2 * scale**2, kurtosis=6.0)


@pytest.mark.parametrize("sigma", [0.5, 3.0])
def test_gaussian_fits(sigma):
    x = noise.gaussian(sigma, N, seed=2)
    assert stats.kstest(x, stats.norm(scale=sigma).cdf).pvalue > ALPHA
    assert stats.cramervonmises(x[:50_000], stats.norm(scale=sigma).cdf).pvalue > ALPHA
    _check_variance(x, sigma**2, kurtosis=3.0)


@pytest.mark.parametrize("count", [2, 7, 23])
def test_gaussian_sum_is_gaussian_with_count_times_variance(count):
    x = noise.gaussian_sum(1.5, count, N, seed=3)
    assert stats.kstest(x, stats.norm(scale=1.5 * np.sqrt(count)).cdf).pvalue > ALPHA


@pytest.mark.parametrize("count", [2, 7, 23])
def test_laplace_sum_matches_summed_draws(count):
    # Reference: numpy's Laplace draws summed one by one (an independent implementation).
    b = 0.8
    ours = noise.laplace_sum(b, count, 100_000, seed=4)
    reference = np.random.default_rng(5).laplace(scale=b, size=(100_000, count)).sum(axis=1)
    assert stats.ks_2samp(ours, reference).pvalue > ALPHA
    # Kurtosis of a sum of `count` Laplace variables: 3 + 3/count.
    _check_variance(ours, 2 * count * b**2, kurtosis=3 + 3 / count)


def test_a_wrong_scale_would_be_detected():
    # A 5% scale error moves the CDF by up to 0.5·(e^{-x/1.05} − e^{-x}) ≈ 0.0088 at x ≈ 1, twice the KS
    # critical value sqrt(ln(2/α)/(2N)) ≈ 0.0043 at N = 4e5, α = 1e-6: detected with overwhelming power.
    x = noise.laplace(1.0, N, seed=6)
    assert stats.kstest(x, stats.laplace(scale=1.05).cdf).pvalue < ALPHA


def test_seeds_reproduce_and_differ():
    assert np.array_equal(noise.gaussian(1, 100, seed=7), noise.gaussian(1, 100, seed=7))
    assert not np.array_equal(noise.gaussian(1, 100, seed=7), noise.gaussian(1, 100, seed=8))
    ss = np.random.SeedSequence(9)
    assert np.array_equal(noise.laplace(1, 10, seed=ss), noise.laplace(1, 10, seed=np.random.SeedSequence(9)))
    g1, g2 = np.random.default_rng(10), np.random.default_rng(10)
    assert np.array_equal(noise.laplace(1, 10, seed=g1), noise.laplace(1, 10, seed=g2))
    assert not np.array_equal(noise.laplace(1, 10, seed=g1), noise.laplace(1, 10, seed=g1))  # advanced


def test_secure_is_not_reproducible_and_refuses_a_seed():
    assert not np.array_equal(noise.laplace(1, 64, secure=True), noise.laplace(1, 64, secure=True))
    with pytest.raises(dponline.InvalidInputError, match="secure=True"):
        noise.laplace(1, 4, seed=1, secure=True)


@pytest.mark.parametrize("scale", [-1.0, float("nan"), float("inf")])
def test_bad_scale_is_refused(scale):
    with pytest.raises(dponline.InvalidInputError, match="scale must be finite and >= 0"):
        noise.laplace(scale, 3)


@pytest.mark.parametrize("seed", [-1, 1.5, "x", True])
def test_bad_seed_is_refused(seed):
    with pytest.raises(dponline.InvalidInputError, match="seed"):
        noise.gaussian(1.0, 3, seed=seed)
