"""The exact samplers ``dponline.noise.discrete_laplace`` / ``discrete_gaussian``: chi-square fits to the exact pmf
at α = 1e-6 (fixed seeds), exact variances, symmetry, the secure default, seeds, refusals."""

import math

import numpy as np
import pytest
from conftest import ALPHA, Z
from scipy import stats

from dponline import noise
from dponline.errors import InvalidInputError, NonFiniteError

N = 1 << 19


def _laplace_cdf(scale: float):
    p = math.exp(-1.0 / scale)

    def cdf(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        # P(X >= k) = p^k / (1 + p) for k >= 1; P(X <= x) = p^(-x) / (1 + p) for x < 0.
        return np.where(x < 0, p ** (-x) / (1 + p), 1 - p ** (x + 1) / (1 + p))

    return cdf


def _laplace_variance(scale: float) -> float:
    p = math.exp(-1.0 / scale)
    return 2 * p / (1 - p) ** 2


def _gaussian_pmf(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of N_Z(0, sigma^2) by direct summation (mass beyond 40 sigma below 1e-300)."""
    k = int(math.ceil(40 * sigma)) + 2
    xs = np.arange(-k, k + 1)
    w = np.exp(-(xs.astype(float) ** 2) / (2 * sigma**2))
    return xs, w / w.sum()


def _gaussian_cdf(sigma: float):
    if sigma > 100:
        # Midpoint rule: P(X <= x) = Phi((x + 1/2)/sigma) up to O(1/sigma^2) (Euler-Maclaurin).
        return lambda x: stats.norm.cdf((np.asarray(x, dtype=float) + 0.5) / sigma)
    xs, pmf = _gaussian_pmf(sigma)
    cum = np.cumsum(pmf)
    return lambda x: np.interp(np.asarray(x, dtype=float), xs, cum, left=0.0, right=1.0)


def _chi_square_pvalue(x: np.ndarray, scale: float, cdf) -> float:
    """Chi-square test on integer bins cut at multiples of ``scale``, merged until each expects >= 20 draws."""
    z = np.array([-6, -4, -3, -2, -1.5, -1, -0.7, -0.4, -0.2, -0.1, 0, 0.1, 0.2, 0.4, 0.7, 1, 1.5, 2, 3, 4, 6])
    cuts = np.unique(np.concatenate([np.round(z * scale), np.arange(-3, 4)]).astype(np.int64))
    probs = np.diff(np.concatenate([[0.0], cdf(cuts), [1.0]]))
    counts = np.bincount(np.searchsorted(cuts, x, side="left"), minlength=len(probs))
    n = len(x)
    merged_p, merged_c, acc_p, acc_c = [], [], 0.0, 0
    for p, c in zip(probs, counts, strict=True):
        acc_p, acc_c = acc_p + p, acc_c + c
        if acc_p * n >= 20:
            merged_p.append(acc_p)
            merged_c.append(acc_c)
            acc_p, acc_c = 0.0, 0
    merged_p[-1] += acc_p
    merged_c[-1] += acc_c
    assert len(merged_p) >= 2
    expected = n * np.array(merged_p)
    stat = float((((np.array(merged_c) - expected) ** 2) / expected).sum())
    return float(stats.chi2.sf(stat, len(merged_p) - 1))


def _check_moments(x: np.ndarray, var: float, kurtosis: float) -> None:
    n = len(x)
    m2 = float(np.mean(x.astype(float) ** 2))
    assert abs(m2 / var - 1) < Z * math.sqrt((kurtosis - 1) / n)
    assert abs(x.mean()) < Z * math.sqrt(var / n)
    # Symmetry: among nonzero draws, positive with probability 1/2.
    pos, nonzero = int((x > 0).sum()), int((x != 0).sum())
    assert stats.binomtest(pos, nonzero, 0.5).pvalue > ALPHA


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.5, 7.0, 1000.3, 2.0**30])
def test_discrete_laplace_fits_its_pmf(scale):
    x = noise.discrete_laplace(scale, N, seed=11)
    assert x.dtype == np.int64 and x.shape == (N,)
    assert _chi_square_pvalue(x, scale, _laplace_cdf(scale)) > ALPHA
    _check_moments(x, _laplace_variance(scale), kurtosis=6.0)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 1.7, 3.0, 10.25, 2.0**30])
def test_discrete_gaussian_fits_its_pmf(sigma):
    n = N if sigma in (1.0, 3.0, 2.0**30) else N // 8  # the big-integer path (non-integer sigma) is slower
    x = noise.discrete_gaussian(sigma, n, seed=12)
    assert x.dtype == np.int64
    assert _chi_square_pvalue(x, sigma, _gaussian_cdf(sigma)) > ALPHA
    if sigma <= 100:
        xs, pmf = _gaussian_pmf(sigma)
        var = float((xs.astype(float) ** 2 * pmf).sum())
        assert var <= sigma**2 * (1 + 1e-14)
    else:
        var = sigma**2
    _check_moments(x, var, kurtosis=3.0 if sigma >= 1 else 6.0)


def test_exact_variance_is_below_sigma_squared_for_small_sigma():
    # Var N_Z(0, 1/4) = 2e^-2 / (1 + 2e^-2) + O(e^-8) ≈ 0.2130, well below 1/4.
    x = noise.discrete_gaussian(0.5, N, seed=13)
    xs, pmf = _gaussian_pmf(0.5)
    var = float((xs.astype(float) ** 2 * pmf).sum())
    assert var < 0.22
    assert abs(x.var() / var - 1) < Z * math.sqrt(5 / N)


def test_secure_default_draws_the_law():
    # seed=None: ChaCha20 keyed from the OS, so two calls differ; the law at level 1e-9 (the draws are not
    # reproducible, so the level is smaller than the seeded tests' 1e-6).
    a = noise.discrete_gaussian(4.0, N)
    b = noise.discrete_gaussian(4.0, N)
    assert not np.array_equal(a, b)
    assert _chi_square_pvalue(a, 4.0, _gaussian_cdf(4.0)) > 1e-9  # not seeded: a level of 1e-9
    c = noise.discrete_laplace(3.0, N)
    assert _chi_square_pvalue(c, 3.0, _laplace_cdf(3.0)) > 1e-9


def test_small_secure_calls_continue_one_stream_that_draws_the_law():
    # Calls of fewer than 4096 unseeded draws continue one process-wide OS-keyed generator instead of keying one
    # per call: together the calls still fit the law, and no call repeats another's draws.
    parts = [noise.discrete_laplace(3.0, 20, secure=True) for _ in range(N // 20)]
    assert len({p.tobytes() for p in parts}) == len(parts)
    assert _chi_square_pvalue(np.concatenate(parts), 3.0, _laplace_cdf(3.0)) > 1e-9  # not seeded: a level of 1e-9
    singles = np.array([noise.discrete_gaussian(4.0) for _ in range(N // 50)])
    assert _chi_square_pvalue(singles, 4.0, _gaussian_cdf(4.0)) > 1e-9


def test_seeds_reproduce_and_single_draws_are_ints():
    assert np.array_equal(noise.discrete_laplace(2.0, 100, seed=5), noise.discrete_laplace(2.0, 100, seed=5))
    ss = np.random.SeedSequence(9)
    assert np.array_equal(noise.discrete_gaussian(2.0, 50, seed=ss), noise.discrete_gaussian(2.0, 50, seed=ss))
    assert not np.array_equal(noise.discrete_gaussian(2.0, 50, seed=1), noise.discrete_gaussian(2.0, 50, seed=2))
    one = noise.discrete_gaussian(3.0, seed=1)
    assert type(one) is int
    assert isinstance(noise.discrete_laplace(3.0), int)
    assert noise.discrete_laplace(1.0, 0, seed=1).shape == (0,)


@pytest.mark.parametrize("fn", [noise.discrete_laplace, noise.discrete_gaussian])
@pytest.mark.parametrize("bad", [0.0, -1.0, 1e308, 5e-324, 1e-300, 2.0**53, 1e-19])
def test_bad_scales_are_refused(fn, bad):
    name = "scale" if fn is noise.discrete_laplace else "sigma"
    with pytest.raises(InvalidInputError, match=name):
        fn(bad, 10, seed=1)


@pytest.mark.parametrize("fn", [noise.discrete_laplace, noise.discrete_gaussian])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_scales_are_refused(fn, bad):
    with pytest.raises(NonFiniteError):
        fn(bad, 10)


def test_bad_sizes_and_seeds_are_refused():
    with pytest.raises(InvalidInputError, match="size"):
        noise.discrete_laplace(1.0, -1)
    with pytest.raises(InvalidInputError, match="seed"):
        noise.discrete_gaussian(1.0, 3, seed=-1)
    with pytest.raises(InvalidInputError, match="secure=True"):
        noise.discrete_laplace(1.0, 3, seed=1, secure=True)
