"""Calibration of the binary tree mechanism (tree aggregation) for private prefix sums."""

from __future__ import annotations

import math

from .. import _validate
from .._options import CALIBRATIONS, NOISES, Calibration, Noise
from ..errors import InvalidInputError
from ._numerics import _count, _delta_open, _numeric, _positive
from .gaussian import gaussian_sigma_analytic
from .guarantee import PrivacyGuarantee
from .linear import _release_guarantee
from .zcdp import zcdp_gaussian_sigma

__all__ = ["levels_touched", "tree_laplace_scale", "tree_gaussian_sigma", "tree_privacy"]

_TREE_SOURCE = (
    "Ene-Nguyen-Vladu 2021 Theorem 2.3 (Jain-Kothari-Thakurta 2012 Thm 9; Agarwal-Singh 2017 Lemma 3.3) "
    "with the exact level count"
)


def levels_touched(horizon: int) -> int:
    """Largest number of released tree nodes one input row enters: ``floor(log2 T) + 1``.

    The row pushed at round s lies in one dyadic block ``(e − 2^j, e]`` per level j, and the block is ever
    released only if it ends at or before T, which needs ``2^j <= T``. Round s = 1 attains the count. It
    equals ``ceil(log2 T)`` unless T is a power of two, where the root adds a level.

    Args:
        horizon: number of rounds T, an integer >= 1.

    Returns:
        ``T.bit_length()``.

    Raises:
        InvalidInputError: for a horizon that is not an integer >= 1.

    Source: the binary mechanism (Dwork-Naor-Pitassi-Rothblum 2010; Chan-Shi-Song 2011) as in
    Ene-Nguyen-Vladu 2021, Appendix A, Algorithm 5; the count Theorem 2.3 there writes as ``log T``.
    """
    return _count("horizon", horizon).bit_length()


@_numeric
def tree_laplace_scale(epsilon: float, sensitivity: float, horizon: int) -> float:
    """Per-node Laplace scale making the whole tree release ε-DP: ``λ = Δ₁ · levels_touched(T) / ε``.

    The released nodes are a Laplace mechanism whose L1 sensitivity is ``Δ₁ · levels_touched(T)``, so this
    is exact, and it is Theorem 2.3's ``λ >= Y₁ log T / ε`` with ``log T`` read as the exact level count.

    Args:
        epsilon: ε, finite and > 0.
        sensitivity: L1 sensitivity Δ₁ of one row, ``max ‖x − x'‖₁`` over neighbouring rows, finite and > 0.
        horizon: number of rounds T, an integer >= 1.

    Returns:
        The Laplace scale λ of each node's noise, per coordinate.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Ene-Nguyen-Vladu 2021 Theorem 2.3 (Jain-Kothari-Thakurta 2012 Thm 9; Agarwal-Singh 2017
    Lemma 3.3) with the exact level count.
    """
    eps = _positive("epsilon", epsilon)
    sens = _positive("sensitivity", sensitivity)
    return sens * levels_touched(horizon) / eps


@_numeric
def tree_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, horizon: int, calibration: Calibration = "paper"
) -> float:
    """Per-node Gaussian σ making the whole tree release (ε, δ)-DP. With B = ``levels_touched(T)``:

    * ``"paper"``: ``max(Δ₂ · B · ln(B/δ) / ε, σ_analytic)``. The first term is Theorem 2.3's
      ``σ >= (Y₂/ε) log T log(log T/δ)``, reading the depth factor ``log T`` as B (never below the paper's
      count) and the inner log as natural. That statement is asymptotic and its constants were not checked
      for every (ε, δ), so the result is never less noise than the exact Gaussian-mechanism requirement.
    * ``"analytic"``: the released nodes form one Gaussian mechanism (each row changes B nodes, each by at
      most Δ₂ in L2, with independent N(0, σ²) noise per node coordinate), whose L2 sensitivity is
      ``Δ₂ · sqrt(B)``; ``σ = gaussian_sigma_analytic(ε, δ, Δ₂ · sqrt(B))``. Exact, hence the least noise.
    * ``"zcdp"``: ``ρ = Δ₂² B / (2σ²)`` converted with Canonne-Kamath-Steinke:
      ``σ = zcdp_gaussian_sigma(ε, δ, Δ₂ · sqrt(B))``.

    Args:
        epsilon: ε, finite and > 0.
        delta: δ in (0, 1) (δ = 0 is impossible with Gaussian noise).
        sensitivity: L2 sensitivity Δ₂ of one row, ``max ‖x − x'‖₂`` over neighbouring rows, finite and > 0.
        horizon: number of rounds T, an integer >= 1.
        calibration: ``"paper"``, ``"analytic"`` or ``"zcdp"``.

    Returns:
        The standard deviation σ of each node's noise, per coordinate.

    Raises:
        InvalidInputError: for an argument outside its range, δ = 0, or an unknown calibration.

    Source: Ene-Nguyen-Vladu 2021 Theorem 2.3 (Jain-Kothari-Thakurta 2012 Thm 9; Agarwal-Singh 2017
    Lemma 3.3); Balle & Wang 2018 Theorem 8; Bun & Steinke 2016 Proposition 1.6 with Canonne, Kamath &
    Steinke 2020 Corollary 13.
    """
    eps = _positive("epsilon", epsilon)
    d = _delta_open(delta)
    sens = _positive("sensitivity", sensitivity)
    levels = levels_touched(horizon)
    calibration = _validate.option("calibration", calibration, CALIBRATIONS)
    release_sensitivity = sens * math.sqrt(levels)
    if calibration == "zcdp":
        return zcdp_gaussian_sigma(eps, d, release_sensitivity)
    sigma_analytic = gaussian_sigma_analytic(eps, d, release_sensitivity)
    if calibration == "analytic":
        return sigma_analytic
    return max(sens * levels * math.log(levels / d) / eps, sigma_analytic)


@_numeric
def tree_privacy(
    noise: Noise, scale: float, sensitivity: float, horizon: int, *, delta: float = 0.0
) -> PrivacyGuarantee:
    """The guarantee a tree with the given per-node noise actually delivers. With B = ``levels_touched(T)``:

    * Laplace: ``ε = Δ₁ · B / scale``, δ = 0 (the inverse of :func:`tree_laplace_scale`).
    * Gaussian: ``ε = gaussian_epsilon_analytic(δ, scale, Δ₂ · sqrt(B))``, the exact ε at the given δ.

    Args:
        noise: ``"laplace"`` or ``"gaussian"``.
        scale: per-node Laplace scale or Gaussian σ, finite and > 0 (scale 0 gives no privacy).
        sensitivity: sensitivity of one row, L1 for Laplace and L2 for Gaussian, finite and > 0.
        horizon: number of rounds T, an integer >= 1.
        delta: δ; must be 0 for Laplace and in (0, 1) for Gaussian.

    Returns:
        The :class:`PrivacyGuarantee` of the whole release sequence.

    Raises:
        InvalidInputError: for an argument outside its range, an unknown noise, scale 0, or a δ that does
            not fit the noise.

    Source: as :func:`tree_laplace_scale` and :func:`tree_gaussian_sigma` (``"analytic"``).
    """
    noise = _validate.option("noise", noise, NOISES)
    if _validate.real("scale", scale) == 0.0:
        raise InvalidInputError("scale 0 gives no privacy: scale must be finite and > 0")
    sc = _positive("scale", scale)
    sens = _positive("sensitivity", sensitivity)
    rounds = _count("horizon", horizon)
    levels = levels_touched(rounds)
    # The tree's encoder has largest column norms B (L1) and sqrt(B) (L2), B = levels_touched(T).
    return _release_guarantee(
        noise,
        sc,
        sens * (levels if noise == "laplace" else math.sqrt(levels)),
        delta,
        sources=(
            _TREE_SOURCE,
            "Balle-Wang 2018 Theorem 8 on the released tree nodes (L2 sensitivity × sqrt(levels_touched))",
        ),
        notes=f"horizon={rounds}, levels_touched={levels}, {noise} scale={sc:g}",
        pure_why=" (the tree is pure ε-DP)",
        noise_multiplier=False,
    )
