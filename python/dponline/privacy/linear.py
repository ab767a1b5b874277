"""Calibration of linear prefix-sum mechanisms (trees, k-ary trees, matrix factorisations) under single
participation."""

from __future__ import annotations

from .. import _validate
from .._options import LINEAR_CALIBRATIONS, NOISES, LinearCalibration, Noise
from ..errors import InvalidInputError
from ._numerics import _delta_half_open, _delta_open, _positive
from .gaussian import gaussian_epsilon_analytic, gaussian_sigma_analytic
from .guarantee import PrivacyGuarantee
from .zcdp import zcdp_gaussian_sigma

__all__ = ["linear_laplace_scale", "linear_gaussian_sigma", "linear_privacy"]

_LINEAR_LAPLACE_SOURCE = (
    "Laplace mechanism on the encoded stream A·x (Dwork-McSherry-Nissim-Smith 2006), L1 sensitivity "
    "= row sensitivity × largest L1 column norm of A"
)
_LINEAR_GAUSSIAN_SOURCE = (
    "Gaussian mechanism on the encoded stream A·x, L2 sensitivity = row sensitivity × largest L2 column norm "
    "of A (single participation); Balle-Wang 2018 Theorem 8"
)


def linear_laplace_scale(epsilon: float, sensitivity: float, column_l1: float) -> float:
    """Laplace scale per noise draw making a linear prefix-sum mechanism ε-DP: ``b = Δ₁ · c₁ / ε``.

    A linear mechanism releases (a post-processing of) ``A x + z`` with i.i.d. Laplace ``z``; replacing one
    row moves ``A x`` by at most ``Δ₁ · c₁`` in L1, where ``c₁`` is the largest L1 column norm of the encoder
    ``A`` (``sensitivity_l1`` of the mechanism). Exact.

    Args:
        epsilon: ε, finite and > 0.
        sensitivity: L1 sensitivity Δ₁ of one row, finite and > 0.
        column_l1: the encoder's largest L1 column norm, finite and > 0.

    Returns:
        The Laplace scale of every draw, per coordinate.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: the Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006) applied to ``A x``.
    """
    eps = _positive("epsilon", epsilon)
    return _positive("sensitivity", sensitivity) * _positive("column_l1", column_l1) / eps


def linear_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float, column_l2: float, calibration: LinearCalibration = "analytic"
) -> float:
    """Gaussian σ per noise draw making a linear prefix-sum mechanism (ε, δ)-DP under single participation.

    The mechanism is one Gaussian mechanism on ``A x`` with L2 sensitivity ``Δ₂ · c₂`` (``c₂`` the largest L2
    column norm of ``A``, ``sensitivity_l2`` of the mechanism), so:

    * ``"analytic"``: ``σ = gaussian_sigma_analytic(ε, δ, Δ₂ · c₂)`` — exact, the least noise;
    * ``"zcdp"``: ``σ = zcdp_gaussian_sigma(ε, δ, Δ₂ · c₂)``.

    Args:
        epsilon: ε, finite and > 0.
        delta: δ in (0, 1).
        sensitivity: L2 sensitivity Δ₂ of one row, finite and > 0.
        column_l2: the encoder's largest L2 column norm, finite and > 0.
        calibration: ``"analytic"`` or ``"zcdp"``.

    Returns:
        σ of every draw, per coordinate.

    Raises:
        InvalidInputError: for an argument outside its range or an unknown calibration.

    Source: Balle & Wang 2018 Theorem 8; Bun & Steinke 2016 Proposition 1.6 with Canonne, Kamath & Steinke
    2020 Corollary 13 (``"zcdp"``).
    """
    calibration = _validate.option("calibration", calibration, LINEAR_CALIBRATIONS)
    release_sensitivity = _positive("sensitivity", sensitivity) * _positive("column_l2", column_l2)
    if calibration == "zcdp":
        return zcdp_gaussian_sigma(epsilon, delta, release_sensitivity)
    return gaussian_sigma_analytic(epsilon, delta, release_sensitivity)


def linear_privacy(
    noise: Noise, scale: float, sensitivity: float, column_norm: float, *, delta: float = 0.0
) -> PrivacyGuarantee:
    """The guarantee a linear prefix-sum mechanism with the given per-draw noise delivers.

    * Laplace: ``ε = Δ₁ · c₁ / scale``, δ = 0 (``column_norm`` = the largest L1 column norm ``c₁``).
    * Gaussian: ``ε = gaussian_epsilon_analytic(δ, scale, Δ₂ · c₂)`` (``column_norm`` = the largest L2 column
      norm ``c₂``), exact at the given δ.

    Args:
        noise: ``"laplace"`` or ``"gaussian"``.
        scale: per-draw Laplace scale or Gaussian σ, finite and > 0.
        sensitivity: sensitivity of one row (L1 for Laplace, L2 for Gaussian), finite and > 0.
        column_norm: the encoder's largest column norm in the matching norm, finite and > 0.
        delta: 0 for Laplace, in (0, 1) for Gaussian.

    Returns:
        The :class:`PrivacyGuarantee` of the whole release sequence.

    Raises:
        InvalidInputError: for an argument outside its range or a δ that does not fit the noise.

    Source: as :func:`linear_laplace_scale` and :func:`linear_gaussian_sigma`.
    """
    noise = _validate.option("noise", noise, NOISES)
    sc = _positive("scale", scale)
    sens = _positive("sensitivity", sensitivity)
    norm = _positive("column_norm", column_norm)
    return _release_guarantee(
        noise,
        sc,
        sens * norm,
        delta,
        sources=(_LINEAR_LAPLACE_SOURCE, _LINEAR_GAUSSIAN_SOURCE),
        notes=f"{noise} scale={sc:g}, encoder column norm={norm:g}",
        noise_multiplier=True,
    )


def _release_guarantee(
    noise: str,
    scale: float,
    release_sensitivity: float,
    delta: float,
    *,
    sources: tuple[str, str],
    notes: str,
    pure_why: str = "",
    noise_multiplier: bool,
) -> PrivacyGuarantee:
    """The one home of the guarantee of i.i.d. per-draw noise ``scale`` on a linear encoding whose release
    sensitivity (row sensitivity × the encoder's largest column norm in the noise's norm) is
    ``release_sensitivity``; shared by :func:`linear_privacy` and :func:`dponline.privacy.tree_privacy`, which
    validate their arguments first.

    * Laplace: ``ε = release_sensitivity / scale``, δ = 0 (a nonzero δ is refused; ``pure_why`` says why).
    * Gaussian: ``ε = gaussian_epsilon_analytic(δ, scale, release_sensitivity)`` (Balle-Wang 2018 Theorem 8),
      with ``scale / release_sensitivity`` as the noise multiplier when ``noise_multiplier``.

    ``sources`` are the (Laplace, Gaussian) proof sources. Raises ``InvalidInputError`` for a δ that does not
    fit the noise."""
    if noise == "laplace":
        if _delta_half_open(delta) != 0.0:
            raise InvalidInputError(f"delta must be 0 for Laplace noise{pure_why}, got {delta!r}")
        return PrivacyGuarantee(epsilon=release_sensitivity / scale, delta=0.0, source=sources[0], notes=notes)
    d = _delta_open(delta)
    return PrivacyGuarantee(
        epsilon=gaussian_epsilon_analytic(d, scale, release_sensitivity),
        delta=d,
        source=sources[1],
        notes=notes,
        noise_multiplier=scale / release_sensitivity if noise_multiplier else None,
    )


def linear_float_noise(
    noise: Noise,
    calibration: LinearCalibration | None,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    column_l1: float,
    column_l2: float,
) -> tuple[float, PrivacyGuarantee]:
    """The noise of a linear mechanism on the floating-point path for an (ε, δ) target, and its guarantee: a
    Laplace mechanism on the encoder's largest L1 column norm (:func:`linear_laplace_scale`), or a Gaussian one on
    its L2 column norm (:func:`linear_gaussian_sigma`; ``calibration=None`` means ``"analytic"``).

    Raises:
        InvalidInputError: ``"zcdp"`` with Laplace noise, another noise, bad arguments.
    """
    if calibration is None:
        calibration = "analytic"
    if noise == "laplace":
        if calibration == "zcdp":
            raise InvalidInputError("calibration='zcdp' needs Gaussian noise (delta > 0)")
        scale = linear_laplace_scale(epsilon, sensitivity, column_l1)
        return scale, linear_privacy("laplace", scale, sensitivity, column_l1)
    if noise == "gaussian":
        scale = linear_gaussian_sigma(epsilon, delta, sensitivity, column_l2, calibration=calibration)
        return scale, PrivacyGuarantee(
            epsilon=float(epsilon),
            delta=float(delta),
            source=f"{_LINEAR_GAUSSIAN_SOURCE}, calibration={calibration!r}",
            notes=f"gaussian sigma={scale:g}, encoder column norm={column_l2:g}",
            noise_multiplier=scale / (sensitivity * column_l2),
        )
    raise InvalidInputError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
