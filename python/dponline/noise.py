"""Direct access to the core's noise samplers, for tests, audits and experiments.

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

__all__ = ["laplace", "gaussian", "laplace_sum", "gaussian_sum"]


def laplace(scale: float, size: int, *, seed: SeedLike = None, secure: bool = False) -> np.ndarray:
    """``size`` i.i.d. draws of Laplace(0, ``scale``) (density ``exp(-|x|/b)/(2b)``, variance ``2b²``).

    Args:
        scale: ``b >= 0``, finite, at most ``1e150`` (0 gives zeros).
        size: number of draws.
        seed: ``None``, an int, a ``numpy.random.SeedSequence`` or ``Generator``.
        secure: draw from the OS-keyed ChaCha20 generator (then ``seed`` must be ``None``).

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
