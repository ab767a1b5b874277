"""The Gaussian mechanism: the classical σ, and the exact δ(ε) with its inverses (the analytic Gaussian mechanism)."""

from __future__ import annotations

import math

from ..errors import InvalidInputError
from ._numerics import _delta_open, _feasible_root, _nonnegative, _numeric, _positive, _steps

__all__ = ["gaussian_sigma_classical", "gaussian_delta", "gaussian_sigma_analytic", "gaussian_epsilon_analytic"]


@_numeric
def gaussian_sigma_classical(epsilon: float, delta: float, sensitivity: float) -> float:
    """Classical Gaussian-mechanism noise: ``σ = Δ₂ · sqrt(2 ln(1.25/δ)) / ε``, valid only for ε < 1.

    Args:
        epsilon: ε in (0, 1).
        delta: δ in (0, 1).
        sensitivity: L2 sensitivity Δ₂ of the query, finite and > 0.

    Returns:
        The standard deviation σ of N(0, σ²) noise per coordinate.

    Raises:
        InvalidInputError: for an argument outside its range, in particular ε >= 1 (use
            :func:`gaussian_sigma_analytic`, which is valid for every ε > 0 and always needs less noise).

    Source: Dwork & Roth 2014, "The Algorithmic Foundations of Differential Privacy", Theorem A.1.
    """
    eps = _positive("epsilon", epsilon)
    if eps >= 1.0:
        raise InvalidInputError(
            f"epsilon must be in (0, 1) for the classical Gaussian mechanism (Dwork-Roth Theorem A.1), "
            f"got {eps!r}; use gaussian_sigma_analytic for any epsilon > 0"
        )
    d = _delta_open(delta)
    return _positive("sensitivity", sensitivity) * math.sqrt(2.0 * math.log(1.25 / d)) / eps


def _log_gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """``ln δ(ε)`` of the Gaussian mechanism (Balle-Wang Theorem 8), for σ > 0; ``-inf`` when δ rounds to 0.

    δ = Φ(a) − e^ε Φ(b) with a = Δ/(2σ) − εσ/Δ, b = −Δ/(2σ) − εσ/Δ is computed as
    Φ(a) · (1 − exp(ε + ln Φ(b) − ln Φ(a))), which keeps full relative precision for tiny δ.
    """
    from scipy import special  # imported on use: scipy costs a second at `import dponline`

    ratio = sensitivity / sigma
    shift = epsilon / ratio
    log_upper = float(special.log_ndtr(0.5 * ratio - shift))
    log_lower = epsilon + float(special.log_ndtr(-0.5 * ratio - shift))
    if log_lower >= log_upper:
        return -math.inf
    return log_upper + math.log(-math.expm1(log_lower - log_upper))


@_numeric
def gaussian_delta(epsilon: float, sigma: float, sensitivity: float) -> float:
    """The exact δ(ε) of the Gaussian mechanism: the smallest δ for which it is (ε, δ)-DP.

    ``δ = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ)``, Φ the standard normal CDF.

    Args:
        epsilon: ε, finite and >= 0 (ε = 0 gives the total-variation distance).
        sigma: standard deviation σ of the noise per coordinate, finite and >= 0 (σ = 0 gives δ = 1).
        sensitivity: L2 sensitivity Δ of the query, finite and > 0.

    Returns:
        δ in [0, 1].

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Balle & Wang 2018, "Improving the Gaussian mechanism for differential privacy: analytical
    calibration and optimal denoising", Theorem 8.
    """
    eps = _nonnegative("epsilon", epsilon)
    sig = _nonnegative("sigma", sigma)
    sens = _positive("sensitivity", sensitivity)
    if sig == 0.0:
        return 1.0
    return math.exp(_log_gaussian_delta(eps, sig, sens))


@_numeric
def gaussian_sigma_analytic(epsilon: float, delta: float, sensitivity: float) -> float:
    """The smallest σ for which the Gaussian mechanism is (ε, δ)-DP (the analytic Gaussian mechanism).

    Solves ``gaussian_delta(ε, σ, Δ) = δ`` for σ (δ(ε) decreases in σ) by bracketing and Brent's method to
    relative tolerance 1e-12, rounded up.

    Args:
        epsilon: ε, finite and > 0 (any size, unlike :func:`gaussian_sigma_classical`).
        delta: δ in (0, 1).
        sensitivity: L2 sensitivity Δ of the query, finite and > 0.

    Returns:
        σ > 0.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Balle & Wang 2018, Theorem 8 and Algorithm 1 (here solved by root finding instead of their
    case analysis).
    """
    eps = _positive("epsilon", epsilon)
    log_target = math.log(_delta_open(delta))
    sens = _positive("sensitivity", sensitivity)

    def excess(sigma: float) -> float:
        return _log_gaussian_delta(eps, sigma, sens) - log_target

    lo = hi = sens / eps
    for _ in _steps("bracketing sigma from above"):
        if not excess(hi) > 0.0:
            break
        lo, hi = hi, 2.0 * hi
    for _ in _steps("bracketing sigma from below"):
        if excess(lo) > 0.0:
            break
        lo, hi = 0.5 * lo, lo
    return _feasible_root(excess, infeasible=lo, feasible=hi)


@_numeric
def gaussian_epsilon_analytic(delta: float, sigma: float, sensitivity: float) -> float:
    """The smallest ε >= 0 for which the Gaussian mechanism with noise σ is (ε, δ)-DP.

    Args:
        delta: δ in (0, 1).
        sigma: standard deviation σ of the noise per coordinate, finite and > 0.
        sensitivity: L2 sensitivity Δ of the query, finite and > 0.

    Returns:
        ε >= 0 (0 when even ε = 0 already meets δ), to relative tolerance 1e-12, rounded up.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Balle & Wang 2018, Theorem 8 (δ(ε) decreases in ε, so the inverse is a root search).
    """
    log_target = math.log(_delta_open(delta))
    sig = _positive("sigma", sigma)
    sens = _positive("sensitivity", sensitivity)

    def excess(eps: float) -> float:
        return _log_gaussian_delta(eps, sig, sens) - log_target

    if excess(0.0) <= 0.0:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in _steps("bracketing epsilon"):
        if not excess(hi) > 0.0:
            break
        lo, hi = hi, 2.0 * hi
    return _feasible_root(excess, infeasible=lo, feasible=hi)
