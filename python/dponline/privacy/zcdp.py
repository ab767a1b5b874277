"""Zero-concentrated differential privacy: the Gaussian mechanism's ρ and conversions to and from (ε, δ)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .. import _validate
from ..errors import InvalidInputError
from ._numerics import _delta_open, _feasible_root, _nonnegative, _numeric, _positive, _steps

__all__ = ["zcdp_gaussian_rho", "zcdp_to_dp", "dp_to_zcdp_rho", "zcdp_gaussian_sigma"]

_ZCDP_METHODS = ("cks", "bun-steinke")


@_numeric
def zcdp_gaussian_rho(sigma: float, sensitivity: float) -> float:
    """zCDP parameter of the Gaussian mechanism: ``ρ = Δ² / (2σ²)``.

    Args:
        sigma: standard deviation σ of the noise per coordinate, finite and > 0.
        sensitivity: L2 sensitivity Δ of the query, finite and > 0.

    Returns:
        ρ > 0: the mechanism is ρ-zCDP.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Bun & Steinke 2016, "Concentrated differential privacy: simplifications, extensions, and lower
    bounds", Proposition 1.6.
    """
    sig = _positive("sigma", sigma)
    sens = _positive("sensitivity", sensitivity)
    return sens * sens / (2.0 * sig * sig)


def _cks_bound(gap: np.ndarray | float, rho: float, log_inv_delta: float) -> np.ndarray | float:
    """The Canonne-Kamath-Steinke ε at order α = 1 + gap (gap > 0) for ρ-zCDP, i.e. RDP ε(α) = αρ.

    ``αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1)``, written in terms of gap = α − 1 so that orders close to 1
    lose no precision.
    """
    log_alpha = np.log1p(gap)
    return (1.0 + gap) * rho + np.log(gap) - log_alpha + (log_inv_delta - log_alpha) / gap


def _zcdp_epsilon(rho: float, log_inv_delta: float, method: str, orders: np.ndarray | None) -> float:
    """Validated core of :func:`zcdp_to_dp`; ``log_inv_delta = ln(1/δ) > 0``."""
    if method == "bun-steinke":
        return rho + 2.0 * math.sqrt(rho * log_inv_delta)
    if orders is not None:
        return max(0.0, float(np.min(_cks_bound(orders - 1.0, rho, log_inv_delta))))
    if rho == 0.0:
        return 0.0
    # d/dgap of the bound is (ρ·gap² + ln(1 + gap) − ln(1/δ)) / gap², whose numerator increases in gap: the
    # bound is unimodal with its minimum where ρ·gap² + ln(1 + gap) = ln(1/δ). That point lies between
    # min(sqrt(L/(2ρ)), e^(L/2) − 1) and min(sqrt(L/ρ), e^L − 1) (L = ln(1/δ)), since there the numerator
    # is <= 0 and >= 0 respectively. Minimise over u = ln(gap) within that bracket.
    lo = min(math.sqrt(log_inv_delta / (2.0 * rho)), math.expm1(0.5 * log_inv_delta))
    hi = min(math.sqrt(log_inv_delta / rho), math.expm1(log_inv_delta))
    from scipy import optimize  # imported on use: scipy costs a second at `import dponline`
    result = optimize.minimize_scalar(
        lambda u: float(_cks_bound(math.exp(u), rho, log_inv_delta)),
        bounds=(math.log(lo), math.log(hi)),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return max(0.0, float(result.fun))


@_numeric
def zcdp_to_dp(rho: float, delta: float, method: str = "cks", orders: Sequence[float] | None = None) -> float:
    """The ε for which a ρ-zCDP mechanism is (ε, δ)-DP.

    * ``method="cks"`` (default, tighter): ``ε = inf_{α>1} [αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1)]``,
      clipped at 0. This is the Canonne-Kamath-Steinke conversion of Rényi DP of order α, ε_R(α) = αρ,
      inverted for ε. It equals ``inf_α [αρ + (ln(1/δ) + (α−1) ln(1 − 1/α) − ln α)/(α − 1)]`` and is the
      per-order bound dp-accounting's RDP accountant uses. The infimum is taken over all α > 1 (the
      objective is unimodal), or over the given ``orders`` only.
    * ``method="bun-steinke"``: ``ε = ρ + 2 sqrt(ρ ln(1/δ))``. Always larger than the ``"cks"`` value.

    Args:
        rho: ρ, finite and >= 0 (ρ = 0 gives ε = 0).
        delta: δ in (0, 1).
        method: ``"cks"`` or ``"bun-steinke"``.
        orders: optional finite Rényi orders α > 1 to minimise over instead of all α > 1 (``"cks"`` only);
            any order gives a valid ε, the continuous minimum is the smallest.

    Returns:
        ε >= 0.

    Raises:
        InvalidInputError: for an argument outside its range, an unknown method, or ``orders`` that are
            empty, not all finite and > 1, or given with ``method="bun-steinke"``.

    Source: ``"cks"``: Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
    Proposition 12 (RDP to DP) and Corollary 13 (zCDP to DP). ``"bun-steinke"``: Bun & Steinke 2016,
    Proposition 1.3.
    """
    r = _nonnegative("rho", rho)
    log_inv_delta = -math.log(_delta_open(delta))
    method = _validate.option("method", method, _ZCDP_METHODS)
    grid = None
    if orders is not None:
        if method != "cks":
            raise InvalidInputError(f"orders can only be given with method='cks', got method={method!r}")
        grid = np.asarray(orders, dtype=float).ravel()
        if grid.size == 0 or not np.all(np.isfinite(grid)) or not np.all(grid > 1.0):
            raise InvalidInputError(f"orders must be a non-empty sequence of finite numbers > 1, got {orders!r}")
    return _zcdp_epsilon(r, log_inv_delta, method, grid)


@_numeric
def dp_to_zcdp_rho(epsilon: float) -> float:
    """zCDP parameter implied by pure ε-DP: ``ρ = ε²/2``.

    Args:
        epsilon: ε, finite and > 0.

    Returns:
        ρ: an ε-DP mechanism is (ε²/2)-zCDP.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Bun & Steinke 2016, Proposition 1.4.
    """
    eps = _positive("epsilon", epsilon)
    return 0.5 * eps * eps


@_numeric
def zcdp_gaussian_sigma(epsilon: float, delta: float, sensitivity: float, method: str = "cks") -> float:
    """The smallest σ whose Gaussian mechanism is (ε, δ)-DP through its zCDP guarantee.

    Finds the largest ρ with ``zcdp_to_dp(ρ, δ, method) <= ε`` and returns ``σ = Δ / sqrt(2ρ)``. For
    ``"bun-steinke"`` ρ is closed-form, ``ρ = ε² / (sqrt(ln(1/δ) + ε) + sqrt(ln(1/δ)))²``; for ``"cks"`` it
    is found by Brent's method (relative tolerance 1e-12, rounded towards more noise) starting from that
    value, which always meets the target because the CKS conversion is tighter.

    Args:
        epsilon: ε, finite and > 0.
        delta: δ in (0, 1).
        sensitivity: L2 sensitivity Δ of the query, finite and > 0.
        method: ``"cks"`` or ``"bun-steinke"``, as in :func:`zcdp_to_dp`.

    Returns:
        σ > 0. Never smaller than :func:`gaussian_sigma_analytic`, which is exact.

    Raises:
        InvalidInputError: for an argument outside its range or an unknown method.

    Source: Bun & Steinke 2016, Proposition 1.6 with :func:`zcdp_to_dp`.
    """
    eps = _positive("epsilon", epsilon)
    log_inv_delta = -math.log(_delta_open(delta))
    sens = _positive("sensitivity", sensitivity)
    method = _validate.option("method", method, _ZCDP_METHODS)
    rho = (eps / (math.sqrt(log_inv_delta + eps) + math.sqrt(log_inv_delta))) ** 2
    if method == "cks":

        def excess(r: float) -> float:
            return _zcdp_epsilon(r, log_inv_delta, "cks", None) - eps

        hi = 2.0 * rho
        for _ in _steps("bracketing rho"):
            if excess(hi) > 0.0:
                break
            hi *= 2.0
        rho = _feasible_root(excess, infeasible=hi, feasible=rho)
    return sens / math.sqrt(2.0 * rho)
