"""Direct access to the core's noise samplers, for tests, audits and experiments.

:func:`discrete_laplace` and :func:`discrete_gaussian` are **exact**: integer-valued draws of exactly the stated
law, made with integer arithmetic only (Canonne, Kamath & Steinke 2020), from the OS-keyed ChaCha20 generator
unless a seed is given. The float samplers below them (:func:`laplace`, :func:`gaussian` and their sums) are the
fast path for simulations; like every floating-point sampler they have the representation gaps of Mironov
(2012, "On significance of the least significant bits for differential privacy").

Every learner and mechanism in dponline draws its noise from these same samplers (in Rust). The sums
(``count > 1``) are exact in distribution and cost O(1) per coordinate: a sum of ``count`` i.i.d.
Gaussians is ``sqrt(count)·sigma·Z``; a sum of ``count`` i.i.d. ``Laplace(b)`` is the difference of two
``Gamma(count, b)`` draws. They provide the padding of the Agarwal-Singh tree (Ene-Nguyen-Vladu 2021,
Appendix A, Algorithm 4, line 3).
"""

from __future__ import annotations

import numpy as np

from . import _core
from ._seed import SeedLike

__all__ = ["discrete_laplace", "discrete_gaussian", "laplace", "gaussian", "laplace_sum", "gaussian_sum"]


def _integers(values: np.ndarray, size: int | None) -> np.ndarray | int:
    return int(values[0]) if size is None else values


def discrete_laplace(
    scale: float, size: int | None = None, *, seed: SeedLike = None, secure: bool = False
) -> np.ndarray | int:
    """Exact draws of the discrete Laplace distribution ``DLap(scale)`` on the integers.

    ``P(X = x) = (1 - e^(-1/b)) / (1 + e^(-1/b)) * e^(-|x|/b)`` for every integer ``x``, ``b = scale`` (taken as
    the exact binary value of the float); variance ``2 e^(-1/b) / (1 - e^(-1/b))^2`` (about ``2 b^2`` for large
    ``b``). Adding it to an integer query of L1 sensitivity ``k`` is ``k/b``-differentially private.

    Algorithm: Canonne, Kamath & Steinke 2020 ("The Discrete Gaussian for Differential Privacy", NeurIPS;
    arXiv 2004.00010), Algorithm 2 on Algorithm 1, in integer arithmetic only, so the law is exact (no
    floating-point rounding enters any decision). With ``b = t/s`` in lowest terms: a geometric ``G = U + t·V``
    (``U`` uniform on ``{0, …, t-1}`` accepted with probability ``e^(-U/t)``, by von Neumann's alternating
    series; ``V`` with ``P(V >= v) = e^(-v)``), then ``Y = floor(G/s)`` and a fair sign, a negative zero
    rejected. Shortcuts that keep the law exact (proofs in the Rust docs of ``dponline_core::noise::exact``):
    Bernoulli(a/b) decided from one 64-bit word by a 128-bit product, more words only in the ``2^-64``-likely
    tie; ``V`` from one word compared with certified thresholds ``floor(e^(-v)·2^64)``, the tie resolved with
    rigorous Taylor bounds in big-integer arithmetic.

    Args:
        scale: ``b``, a float in ``[2^-60, 2^52]``.
        size: number of draws; ``None`` for a single draw.
        seed: ``None`` (default): the cryptographically secure ChaCha20 generator keyed from the operating
            system (not reproducible): for fewer than 4096 draws, one process-wide generator keyed once and
            continued from call to call (a continued stream never repeats a word; it re-keys from the OS in a
            forked child), so a small call costs its draws and not a fresh key; for more, a freshly keyed one.
            An int, ``numpy.random.SeedSequence`` or ``Generator``: the reproducible xoshiro256++ generator
            (private only while the seed is secret).
        secure: ``True`` only asserts the default (``seed`` must then be ``None``).

    Returns:
        An int64 array of shape ``(size,)``, or a Python ``int`` when ``size`` is ``None``.

    Raises:
        InvalidInputError: ``scale`` is 0, negative, subnormal, below ``2^-60`` or above ``2^52`` (exact integer
            arithmetic supports no more), a bad ``size`` / ``seed``, or a seed with ``secure=True``.
        NonFiniteError: ``scale`` is NaN or infinite.
        MemoryError: ``size`` draws cannot be allocated.
    """
    values = _core.sample_discrete("laplace", scale, 1 if size is None else size, seed=seed, secure=secure)
    return _integers(values, size)


def discrete_gaussian(
    sigma: float, size: int | None = None, *, seed: SeedLike = None, secure: bool = False
) -> np.ndarray | int:
    """Exact draws of the discrete Gaussian ``N_Z(0, sigma^2)`` on the integers.

    ``P(X = x) = e^(-x^2/(2 sigma^2)) / sum_y e^(-y^2/(2 sigma^2))`` for every integer ``x`` (``sigma`` taken as
    the exact binary value of the float); variance ``sum_x x^2 e^(-x^2/2sigma^2) / sum_x e^(-x^2/2sigma^2)``,
    at most ``sigma^2`` and equal to it in float precision once ``sigma >= 2``. Adding it to an integer query of
    L2 sensitivity ``k`` is ``k^2/(2 sigma^2)``-zCDP (Canonne, Kamath & Steinke 2020).

    Algorithm: Canonne, Kamath & Steinke 2020, Algorithm 3: propose ``Y ~ DLap(t)`` (as
    :func:`discrete_laplace`) and accept with probability ``e^(-(|Y| - sigma^2/t)^2 / (2 sigma^2))``
    (Algorithm 1), exact for every ``t > 0``. For an integer ``sigma <= 2^31``, ``t = sigma`` and every quantity
    fits in 128 bits (the acceptance exponent is ``(|Y| - sigma)^2 / (2 sigma^2)``). A non-integer ``sigma``
    (``sigma^2`` is then a ratio of big integers) thins the integer sampler of ``s = ceil(sigma)``: ``Y ~
    N_Z(0, s^2)`` is accepted with probability ``e^(-Y^2 (1/(2 sigma^2) - 1/(2 s^2)))``, which leaves exactly
    ``N_Z(0, sigma^2)``; the exponent is bracketed in 64-bit arithmetic and computed on big integers only in
    the rare ties (about 2^-30 of the decisions). A draw takes about ``s/sigma`` proposals (at most about 2.5,
    for ``sigma`` just above an integer or below 1). A non-integer ``sigma > 2^31`` runs Algorithm 3 entirely
    on big integers, some 50 times slower.

    Args:
        sigma: a float in ``[2^-60, 2^52]``.
        size: number of draws; ``None`` for a single draw.
        seed: as :func:`discrete_laplace` (``None``: the secure generator).
        secure: ``True`` only asserts the default (``seed`` must then be ``None``).

    Returns:
        An int64 array of shape ``(size,)``, or a Python ``int`` when ``size`` is ``None``.

    Raises:
        InvalidInputError: ``sigma`` is 0, negative, subnormal, below ``2^-60`` or above ``2^52``, a bad
            ``size`` / ``seed``, or a seed with ``secure=True``.
        NonFiniteError: ``sigma`` is NaN or infinite.
        MemoryError: ``size`` draws cannot be allocated.
    """
    values = _core.sample_discrete("gaussian", sigma, 1 if size is None else size, seed=seed, secure=secure)
    return _integers(values, size)


def laplace(scale: float, size: int, *, seed: SeedLike = None, secure: bool = False) -> np.ndarray:
    """``size`` i.i.d. draws of Laplace(0, ``scale``) (density ``exp(-|x|/b)/(2b)``, variance ``2b²``).

    Args:
        scale: ``b >= 0``, finite, at most ``1e150`` (0 gives zeros).
        size: number of draws.
        seed: ``None`` (default: the OS-keyed ChaCha20 generator), an int, a ``numpy.random.SeedSequence`` or
            ``Generator`` (reproducible: private only while the seed is secret).
        secure: ``True`` only asserts the default (``seed`` must then be ``None``).

    Returns:
        float64 array of shape ``(size,)``.

    Raises:
        InvalidInputError: for a negative, non-finite or too large scale, or a bad size.
        MemoryError: ``size`` draws cannot be allocated (the message gives the bytes).
    """
    return _core.sample_noise("laplace", scale, size, seed=seed, secure=secure)


def gaussian(sigma: float, size: int, *, seed: SeedLike = None, secure: bool = False) -> np.ndarray:
    """``size`` i.i.d. draws of N(0, ``sigma``²). Arguments and errors as :func:`laplace`."""
    return _core.sample_noise("gaussian", sigma, size, seed=seed, secure=secure)


def laplace_sum(scale: float, count: int, size: int, *, seed: SeedLike = None, secure: bool = False) -> np.ndarray:
    """``size`` i.i.d. draws of the sum of ``count`` i.i.d. Laplace(0, ``scale``): Gamma(count, b) − Gamma(count, b).

    Variance ``2·count·b²``. Arguments and errors as :func:`laplace`.
    """
    return _core.sample_noise("laplace", scale, size, count=count, seed=seed, secure=secure)


def gaussian_sum(sigma: float, count: int, size: int, *, seed: SeedLike = None, secure: bool = False) -> np.ndarray:
    """``size`` i.i.d. draws of the sum of ``count`` i.i.d. N(0, sigma²), i.e. N(0, count·sigma²)."""
    return _core.sample_noise("gaussian", sigma, size, count=count, seed=seed, secure=secure)
