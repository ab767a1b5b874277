"""Privacy accounting for the exact discrete mechanisms: integer noise added to an integer query.

The mechanisms this calibrates add :func:`dponline.noise.discrete_laplace` or
:func:`dponline.noise.discrete_gaussian` noise, coordinate-wise and independently, to an integer vector
``q(x) ∈ Z^d`` (e.g. data quantised to a power-of-two grid: the core's ``noise::grid``). Neighbouring inputs
change ``q`` by an integer vector ``v`` with ``‖v‖₁ <= Δ₁`` (Laplace) or ``‖v‖₂ <= Δ₂`` (Gaussian): the
*integer* sensitivities, which after quantisation include the rounding (``⌈Δ₁/γ⌉ + d`` and ``Δ₂/γ + √d`` grid
units; the Lemma in the core's ``noise::grid`` docs).

**Discrete Laplace.** Lemma: adding independent ``DLap(t)`` to each coordinate of an integer query of L1
sensitivity ``Δ₁`` is ``(Δ₁/t)``-DP, exactly (not a bound: the worst ratio is attained). *Proof.* For output
``z`` and inputs whose queries differ by ``v``, the ratio of probabilities is ``Π_j e^{(|z_j − q'_j| − |z_j −
q_j|)/t} <= e^{Σ_j |v_j|/t} <= e^{Δ₁/t}`` by the triangle inequality, with equality for ``z`` beyond both
queries. (The geometric mechanism of Ghosh, Roughgarden & Sundararajan 2009, "Universally utility-maximizing
privacy mechanisms", in ``d`` dimensions; Canonne, Kamath & Steinke 2020, Section 1.)

**Discrete Gaussian.** Adding independent ``N_Z(0, σ²)`` to each coordinate of an integer query of L2
sensitivity ``Δ₂`` is ``ρ = Δ₂²/(2σ²)``-zCDP: for integer means ``μ, ν`` the Rényi divergence of order ``α`` of
``N_Z(μ, σ²)`` from ``N_Z(ν, σ²)`` is at most ``α(μ − ν)²/(2σ²)`` — the continuous Gaussian's value (Canonne,
Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy", Section 2, the discrete Gaussian's
concentrated-DP guarantee; it uses that the normaliser ``Σ_y e^{−(y − μ)²/2σ²}`` is the same for every integer
``μ``) — and Rényi divergences of independent coordinates add, so ``D_α <= α‖v‖₂²/(2σ²)``. ``ρ``-zCDP gives
``(ε, δ)``-DP through the conversion the package already uses, :func:`~dponline.privacy.zcdp_to_dp` with
``method="cks"`` (CKS 2020, Proposition 12 and Corollary 13), which is what this module computes:
``δ(ε) = inf_{α>1} e^{(α−1)(αρ−ε)} (1 − 1/α)^α / (α − 1)``.

*What is not used.* CKS also give the exact ``δ(ε)`` of the one-dimensional discrete Gaussian (a sum over its
pmf), tighter than the zCDP route; for a vector query the worst integer shift of a given L2 norm is not one
coordinate, so that formula does not bound the multivariate mechanism, and this module uses the zCDP bound in
every dimension. (A sharper multivariate approximate-DP statement of CKS with a correction term was not
available to check when this was written; it is not used.)

**The cost of the discrete accounting.** The zCDP route needs more noise than the analytic continuous Gaussian
(Balle & Wang 2018, exact for the continuous mechanism), for the same ``(ε, δ)`` and ``Δ₂ = 1``:

=========  ======  =====================  ======================  ==========
ε          δ       analytic Gaussian σ    discrete (zCDP, CKS) σ  difference
=========  ======  =====================  ======================  ==========
0.1        1e-6    36.30                  39.46                   +8.7%
0.5        1e-6    8.058                  8.677                   +7.7%
1          1e-6    4.225                  4.531                   +7.2%
1          1e-9    5.495                  5.779                   +5.2%
4          1e-6    1.194                  1.268                   +6.2%
10         1e-6    0.5411                 0.5699                  +5.3%
=========  ======  =====================  ======================  ==========

On the grid (``σ`` in ``[2³⁰, 2³¹]`` units) rounding ``σ`` up to an integer adds at most ``2⁻³⁰`` relative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInputError
from ._numerics import _count, _delta_open, _nonnegative, _numeric, _positive, _steps
from .gaussian import gaussian_sigma_analytic
from .guarantee import PrivacyGuarantee
from .zcdp import zcdp_gaussian_rho, zcdp_gaussian_sigma

__all__ = [
    "discrete_laplace_scale",
    "discrete_laplace_epsilon",
    "discrete_gaussian_rho",
    "discrete_gaussian_delta",
    "discrete_gaussian_sigma",
    "ExactCalibration",
    "exact_linear_noise",
    "grid_for_scale",
    "grid_sensitivity_l1",
    "grid_sensitivity_l2",
]


@_numeric
def discrete_laplace_scale(epsilon: float, sensitivity_l1: float) -> float:
    """The smallest scale ``t`` for which discrete Laplace noise is ε-DP: ``t = Δ₁/ε``.

    Args:
        epsilon: ε, finite and > 0.
        sensitivity_l1: the integer L1 sensitivity ``Δ₁`` of the query (grid units), finite and > 0.

    Returns:
        ``t > 0`` (in the query's units).

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: the Lemma of this module (the geometric mechanism; Ghosh, Roughgarden & Sundararajan 2009).
    """
    return _positive("sensitivity_l1", sensitivity_l1) / _positive("epsilon", epsilon)


@_numeric
def discrete_laplace_epsilon(scale: float, sensitivity_l1: float) -> float:
    """The exact ε of discrete Laplace noise of scale ``t`` on a query of integer L1 sensitivity: ``Δ₁/t``.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: the Lemma of this module.
    """
    return _positive("sensitivity_l1", sensitivity_l1) / _positive("scale", scale)


@_numeric
def discrete_gaussian_rho(sigma: float, sensitivity_l2: float) -> float:
    """zCDP parameter of discrete Gaussian noise ``N_Z(0, σ²)`` per coordinate: ``ρ = Δ₂²/(2σ²)``.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Canonne, Kamath & Steinke 2020, Section 2 (the discrete Gaussian's zCDP), with additivity of Rényi
    divergence over independent coordinates (module docs).
    """
    return zcdp_gaussian_rho(sigma, sensitivity_l2)


@_numeric
def discrete_gaussian_delta(epsilon: float, sigma: float, sensitivity_l2: float) -> float:
    """A δ for which discrete Gaussian noise ``N_Z(0, σ²)`` per coordinate is (ε, δ)-DP on an integer query of
    L2 sensitivity ``Δ₂``: the CKS conversion of ``ρ = Δ₂²/(2σ²)``-zCDP,
    ``δ = inf_{α>1} e^{(α−1)(αρ−ε)} (1 − 1/α)^α / (α − 1)`` (capped at 1).

    The infimum is at the root of ``(2α − 1)ρ − ε + ln(1 − 1/α) = 0`` (the derivative of the exponent, which
    increases in α), found by Brent's method; any α gives a valid δ.

    Args:
        epsilon: ε, finite and >= 0.
        sigma: σ of the noise (grid units), finite and > 0.
        sensitivity_l2: the integer L2 sensitivity ``Δ₂`` (grid units), finite and > 0.

    Returns:
        δ in (0, 1].

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Canonne, Kamath & Steinke 2020, Section 2 (zCDP of the discrete Gaussian), Proposition 12 and
    Corollary 13 (zCDP to (ε, δ)).
    """
    eps = _nonnegative("epsilon", epsilon)
    rho = zcdp_gaussian_rho(sigma, sensitivity_l2)

    def log_delta(alpha: float) -> float:
        return (alpha - 1.0) * (alpha * rho - eps) + alpha * math.log1p(-1.0 / alpha) - math.log(alpha - 1.0)

    def slope(alpha: float) -> float:
        return (2.0 * alpha - 1.0) * rho - eps + math.log1p(-1.0 / alpha)

    lo, hi = 1.0 + 1e-12, max(2.0, (eps + 1.0) / (2.0 * rho) + 2.0)
    for _ in _steps("bracketing the Renyi order"):
        if slope(hi) >= 0.0:
            break
        hi *= 2.0
    from scipy import optimize  # imported on use: scipy costs a second at `import dponline`
    alpha = optimize.brentq(slope, lo, hi, xtol=1e-15, rtol=1e-14) if slope(lo) < 0.0 else lo
    return min(1.0, math.exp(log_delta(alpha)))


def discrete_gaussian_sigma(epsilon: float, delta: float, sensitivity_l2: float) -> int:
    """The smallest integer σ (grid units) whose discrete Gaussian noise is (ε, δ)-DP by
    :func:`discrete_gaussian_delta` on an integer query of L2 sensitivity ``Δ₂``.

    ``σ = ⌈Δ₂ / sqrt(2ρ*)⌉`` with ``ρ*`` the largest ρ whose CKS conversion meets (ε, δ)
    (:func:`dponline.privacy.zcdp_gaussian_sigma`), then raised while the evaluated δ exceeds the target (float
    safety). About 5-9% more than the analytic continuous Gaussian's σ at usual (ε, δ) (module table).

    Args:
        epsilon: ε, finite and > 0.
        delta: δ in (0, 1).
        sensitivity_l2: the integer L2 sensitivity ``Δ₂`` (grid units), finite and > 0.

    Returns:
        σ >= 1, an int.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: as :func:`discrete_gaussian_delta`.
    """
    target = _delta_open(delta)
    sigma = max(1, math.ceil(zcdp_gaussian_sigma(epsilon, target, sensitivity_l2, "cks")))
    for _ in _steps("raising sigma to meet delta"):
        if discrete_gaussian_delta(epsilon, sigma, sensitivity_l2) <= target:
            return sigma
        sigma += 1
    raise AssertionError("unreachable: _steps raises")  # pragma: no cover


GRID_BITS = 30
"""The noise scale in grid units lies in ``[2**30, 2**31)`` (mirrors the core's ``noise::grid::GRID_BITS``)."""

_GRID_SOURCE = (
    "exact discrete mechanism on the power-of-two grid: inputs rounded (grid Lemma: +dim in L1, +sqrt(dim) in L2 "
    "per row), integer node values"
)


def grid_for_scale(scale: float) -> float:
    """The grid step ``γ = 2**(floor(log2 scale) − 30)`` the core's exact path builds for a noise ``scale``
    (``noise::grid::Grid::for_scale``): the scale is ``[2**30, 2**31)`` grid units.

    Raises:
        InvalidInputError: unless ``scale`` is finite and in ``[1e-150, 1e150]``.
    """
    sc = _positive("scale", scale)
    if not 1e-150 <= sc <= 1e150:
        raise InvalidInputError(f"scale must be finite and in [1e-150, 1e150] for the exact sampler, got {scale!r}")
    _, exponent = math.frexp(sc)  # sc = m·2**exponent, m in [0.5, 1): floor(log2 sc) = exponent − 1
    return math.ldexp(1.0, exponent - 1 - GRID_BITS)


def grid_sensitivity_l1(sensitivity: float, gamma: float, dim: int) -> int:
    """L1 sensitivity in grid units of one row after rounding: ``⌈Δ₁/γ⌉ + dim`` (the grid Lemma of the core's
    ``noise::grid``: ``‖round(x/γ) − round(x'/γ)‖₁ <= ‖x − x'‖₁/γ + dim``; an integer bound on an integer norm)."""
    return math.ceil(_positive("sensitivity", sensitivity) / gamma) + _count("dim", dim)


def grid_sensitivity_l2(sensitivity: float, gamma: float, dim: int) -> float:
    """L2 sensitivity in grid units of one row after rounding: ``Δ₂/γ + sqrt(dim)`` (the grid Lemma), with the
    core's margins for floating-point clipping (``(dim + 16)·2**-52`` relative) and rounding (``1 + 2**-50``)."""
    units = _positive("sensitivity", sensitivity) / gamma
    d = _count("dim", dim)
    return (units + units * (d + 16) * 2.0**-52 + math.sqrt(d)) * (1.0 + 2.0**-50)


@dataclass(frozen=True)
class ExactCalibration:
    """The noise of an exact mechanism and what it delivers (:func:`exact_linear_noise`).

    Attributes:
        noise: ``"laplace"`` (discrete Laplace) or ``"gaussian"`` (discrete Gaussian).
        scale: the noise scale in value units, ``units · gamma`` (what the mechanism is built with: the core
            rounds nothing further).
        gamma: the grid step.
        units: the scale in grid units, an integer in ``[2**30, 2**31)``.
        integer_sensitivity: the L1 (Laplace) or L2 (Gaussian) sensitivity of the integer node vector, grid units.
        epsilon: the target ε, which the mechanism meets (the exact ε of the discrete Laplace,
            ``integer_sensitivity / units``, is at most it and is given in the guarantee's notes).
        delta: δ (0 for Laplace).
        noise_multiplier: ``units / integer_sensitivity`` for the Gaussian, else ``None``.
    """

    noise: str
    scale: float
    gamma: float
    units: int
    integer_sensitivity: float
    epsilon: float
    delta: float
    noise_multiplier: float | None

    def guarantee(self, source: str, **fields: Any) -> PrivacyGuarantee:
        """The :class:`PrivacyGuarantee` (``sampler="exact"``) of the mechanism, citing ``source`` for the encoder."""
        if self.noise == "laplace":
            how = "discrete Laplace: eps = integer L1 sensitivity / t exactly (geometric mechanism, GRS 2009)"
        else:
            how = "discrete Gaussian: rho-zCDP converted by Canonne-Kamath-Steinke 2020 Prop. 12 / Cor. 13"
        notes = (
            f"{self.noise} scale={self.scale:.10g} ({self.units} units of grid {self.gamma:g}), integer sensitivity "
            f"{self.integer_sensitivity:.10g} units"
        )
        if self.noise == "laplace":
            notes += f", exact eps = {self.integer_sensitivity / self.units:.10g}"

        return PrivacyGuarantee(
            epsilon=self.epsilon,
            delta=self.delta,
            source=f"{source}; {_GRID_SOURCE}; {how}",
            notes=notes,
            noise_multiplier=self.noise_multiplier,
            sampler="exact",
            **fields,
        )


@_numeric
def exact_linear_noise(
    noise: str,
    epsilon: float,
    delta: float,
    sensitivity: float,
    column_norm: float,
    dim: int,
    *,
    at_least: float = 0.0,
    slack: float = 0.0,
) -> ExactCalibration:
    """The tightest proved noise of an exact prefix-sum mechanism (tree, ``k``-ary or Honaker tree on the core's
    exact path) for an (ε, δ) target.

    The mechanism releases functions of the integer node values ``Σ_{s∈v} round(x_s/γ) + z_v``; one row enters
    ``c`` nodes (the encoder's column, 0/1 entries: ``column_norm`` is its L1 norm ``c`` for Laplace, its L2 norm
    ``sqrt(c)`` for Gaussian). (BLT: real encoder entries evaluated in integers, ``column_norm`` its encoder's
    column norm and ``slack`` the rounding of its Lemma, added to the bounds below.) With the grid Lemma, the
    integer node vector has

    * L1 sensitivity ``c·(⌈Δ₁/γ⌉ + dim)``, and discrete Laplace noise ``DLap(t)`` is exactly
      ``ε = c·(⌈Δ₁/γ⌉ + dim)/t``-DP (this module's Lemma): ``t`` is the least integer meeting the target;
    * L2 sensitivity ``sqrt(c)·(Δ₂/γ + sqrt(dim))``, and ``N_Z(0, σ²)`` is ``ρ = Δ²/(2σ²)``-zCDP (Canonne, Kamath
      & Steinke 2020): ``σ`` is the least integer whose CKS conversion meets (ε, δ)
      (:func:`discrete_gaussian_sigma`).

    The grid is the core's for the resulting scale (``[2**30, 2**31)`` units); the two are solved together
    (a few iterations at most: the rounding terms are below ``2**-20`` of the scale for any usual ``dim``).

    Args:
        noise: ``"laplace"`` or ``"gaussian"``.
        epsilon: target ε > 0.
        delta: target δ: 0 for Laplace, in (0, 1) for Gaussian.
        sensitivity: Δ₁ (Laplace) or Δ₂ (Gaussian) of one row between neighbouring streams, > 0.
        column_norm: the encoder's largest column L1 (Laplace) or L2 (Gaussian) norm, > 0.
        dim: vector dimension (>= 1).
        at_least: a lower bound on the scale (value units), e.g. a paper's larger calibration kept for
            reproduction; the result meets both.
        slack: extra integer sensitivity (grid units, >= 0) from rounding inside the encoder, added to the
            column norm times the grid Lemma's bound: 0 for the trees (0/1 encoders); for BLT the slack of its
            encoder-rounding Lemma (core ``aggregation::blt``: ``2ηT·dim`` in L1, ``2η·sqrt(T·dim)`` in L2).

    Returns:
        An :class:`ExactCalibration`.

    Raises:
        InvalidInputError: an argument out of range, or a scale outside the exact path's ``[1e-150, 1e150]``.

    Source: the Lemma and the CKS accounting of this module; the grid Lemma of the core's ``noise::grid``.
    """
    eps = _positive("epsilon", epsilon)
    sens = _positive("sensitivity", sensitivity)
    norm = _positive("column_norm", column_norm)
    d = _count("dim", dim)
    floor = _nonnegative("at_least", at_least)
    extra = _nonnegative("slack", slack)
    if noise == "laplace":
        if _nonnegative("delta", delta) != 0.0:
            raise InvalidInputError(f"delta must be 0 for discrete Laplace noise, got {delta!r}")
        scale = max(sens * norm / eps, floor)
    elif noise == "gaussian":
        target = _delta_open(delta)
        scale = max(gaussian_sigma_analytic(eps, target, sens * norm), floor)
    else:
        raise InvalidInputError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
    for _ in _steps("fitting the scale to its grid"):
        gamma = grid_for_scale(scale)
        if noise == "laplace":
            integer = norm * grid_sensitivity_l1(sens, gamma, d) + extra
            units = max(math.ceil(integer / eps), math.ceil(floor / gamma))
        else:
            integer = norm * grid_sensitivity_l2(sens, gamma, d) + extra
            units = max(discrete_gaussian_sigma(eps, target, integer), math.ceil(floor / gamma))
        fitted = units * gamma
        if grid_for_scale(fitted) == gamma:
            if noise == "laplace":
                return ExactCalibration("laplace", fitted, gamma, units, integer, eps, 0.0, None)
            return ExactCalibration("gaussian", fitted, gamma, units, integer, eps, target, units / integer)
        scale = fitted
    raise AssertionError("unreachable: _steps raises")  # pragma: no cover


def exact_noise(
    noise: str,
    calibration: str | None,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    column_l1: float,
    column_l2: float,
    dim: int,
    at_least: float = 0.0,
    rounding_slack: tuple[float, float] = (0.0, 0.0),
) -> ExactCalibration:
    """The noise of a mechanism on the exact path (``sampler="exact"``) for an (ε, δ) target.

    ``calibration``: ``None`` or ``"zcdp"`` — the tightest proved calibration of the discrete mechanism
    (:func:`dponline.privacy.exact_linear_noise`: discrete Laplace exact ε; discrete Gaussian through zCDP with
    the Canonne-Kamath-Steinke conversion); ``"paper"`` — the same (the caller passes the paper's scale as
    ``at_least``, so the noise is never below the paper's formula, kept to reproduce it); ``"analytic"`` — the
    continuous Gaussian's exact calibration, which does not bound the discrete Gaussian: refused for Gaussian noise
    (for Laplace it is the default's). ``rounding_slack``: the mechanism's ``(L1, L2)`` encoder-rounding slack per
    changed coordinate (``Mechanism.rounding_slack``; ``(0, 0)`` for the trees), added ``dim`` times in L1 and
    ``sqrt(dim)`` times in L2.

    Raises:
        InvalidInputError: ``"analytic"`` with Gaussian noise, ``"zcdp"`` with Laplace noise, bad arguments.
    """
    if noise == "gaussian" and calibration == "analytic":
        raise InvalidInputError(
            "calibration='analytic' is the continuous Gaussian's (Balle-Wang 2018) and does not bound the discrete "
            "Gaussian of sampler='exact': use calibration='zcdp' (the default, Canonne-Kamath-Steinke 2020) or "
            "sampler='floating-point'"
        )
    if noise == "laplace" and calibration == "zcdp":
        raise InvalidInputError("calibration='zcdp' needs Gaussian noise (delta > 0)")
    return exact_linear_noise(
        noise,
        epsilon,
        delta,
        sensitivity,
        column_l1 if noise == "laplace" else column_l2,
        dim,
        at_least=at_least,
        slack=rounding_slack[0] * dim if noise == "laplace" else rounding_slack[1] * math.sqrt(dim),
    )
