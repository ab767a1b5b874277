"""Privacy accounting for dponline: guarantees, noise calibration, conversions and composition.

Everything here is pure Python (``math``, NumPy, SciPy); nothing needs the compiled core.

Conventions used by every function:

* ``epsilon`` is in nats (natural logarithm); ``delta`` is a probability.
* ``sensitivity`` is the largest change of the mechanism's input between neighbouring datasets: in L1 for
  Laplace noise, in L2 for Gaussian noise. Unless stated otherwise, neighbouring inputs differ in one
  round's input, replaced by another (so rows with ``‖x‖ <= Y`` have sensitivity ``2Y``).
* Bad input raises :class:`~dponline.errors.InvalidInputError` (a ``ValueError``) whose message names the
  argument and its allowed range; NaN or infinity raises its subclass
  :class:`~dponline.errors.NonFiniteError`.
* Numerical inverses (σ from (ε, δ), ε from (δ, σ), ρ from (ε, δ)) are solved to a relative tolerance of
  1e-12 and then rounded to the safe side, so the returned value meets its target as evaluated.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy import optimize, special

from . import _core, _validate
from .errors import ConvergenceError, DPOnlineError, InvalidInputError

__all__ = [
    "PrivacyGuarantee",
    "NEIGHBOURING_ROUND",
    "UNIT_ROUND",
    "row_multiplicity",
    "randomness_of",
    "laplace_scale",
    "gaussian_sigma_classical",
    "gaussian_delta",
    "gaussian_sigma_analytic",
    "gaussian_epsilon_analytic",
    "zcdp_gaussian_rho",
    "zcdp_to_dp",
    "dp_to_zcdp_rho",
    "zcdp_gaussian_sigma",
    "basic_composition",
    "advanced_composition",
    "levels_touched",
    "tree_laplace_scale",
    "tree_gaussian_sigma",
    "tree_privacy",
    "linear_laplace_scale",
    "linear_gaussian_sigma",
    "linear_privacy",
]

_RTOL = 1e-12
_R = TypeVar("_R")
_ZCDP_METHODS = ("cks", "bun-steinke")
_TREE_CALIBRATIONS = ("paper", "analytic", "zcdp")
_NOISES = ("laplace", "gaussian")
_LINEAR_CALIBRATIONS = ("analytic", "zcdp")

_TREE_SOURCE = (
    "Ene-Nguyen-Vladu 2021 Theorem 2.3 (Jain-Kothari-Thakurta 2012 Thm 9; Agarwal-Singh 2017 Lemma 3.3) "
    "with the exact level count"
)


NEIGHBOURING_ROUND = "streams that differ in one round's loss (one round's input replaced by any other)"
"""The neighbouring relation of every online learner in dponline."""

UNIT_ROUND = "one round's loss"
"""The privacy unit of every online learner in dponline."""

_RANDOMNESS = {
    "": "",
    "os": "noise keyed from operating-system entropy (seed=None)",
    "seed": "seeded noise: private only while the seed is secret (anyone with the seed and the code can "
    "reproduce the noise)",
    "secure": "noise from ChaCha20 keyed by the operating system (secure=True; never serialised)",
}


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ)-differential-privacy guarantee, what it protects, and where it comes from.

    Attributes:
        epsilon: ε >= 0, finite (nats).
        delta: δ in [0, 1].
        source: the paper and theorem the guarantee follows from.
        neighbouring: the neighbouring relation the guarantee is stated for (default: streams differing in one
            round's loss).
        unit: what one neighbouring step changes — the privacy unit (default ``"one round's loss"``; a group
            guarantee names its group, e.g. one source row of a resampled stream).
        randomness: how the noise was keyed: ``"os"`` (``seed=None``), ``"seed"`` (private only while the seed
            is secret), ``"secure"`` (OS-keyed ChaCha20), or ``""`` (not stated).
        notes: free text (parameters, caveats).
        noise_multiplier: for a Gaussian mechanism, σ divided by the L2 sensitivity of the whole release; lets
            :meth:`group` compute the exact group guarantee. ``None`` otherwise.

    Raises:
        InvalidInputError: for ε < 0, δ outside [0, 1], an unknown ``randomness``, or a non-string text field.
        NonFiniteError: for a NaN or infinite ε or δ.
    """

    epsilon: float
    delta: float
    source: str
    neighbouring: str = NEIGHBOURING_ROUND
    unit: str = UNIT_ROUND
    randomness: str = ""
    notes: str = ""
    noise_multiplier: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _nonnegative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", _validate.real("delta", self.delta, low=0.0, high=1.0))
        for name in ("source", "neighbouring", "unit", "randomness", "notes"):
            if not isinstance(getattr(self, name), str):
                raise InvalidInputError(f"{name} must be a str, got {getattr(self, name)!r}")
        _validate.option("randomness", self.randomness, tuple(_RANDOMNESS))
        if self.noise_multiplier is not None:
            object.__setattr__(self, "noise_multiplier", _positive("noise_multiplier", self.noise_multiplier))

    @property
    def caveat(self) -> str:
        """What the guarantee assumes about the randomness, in words (empty when not stated)."""
        return _RANDOMNESS[self.randomness]

    def group(self, k: int) -> PrivacyGuarantee:
        """The guarantee for a group of ``k`` units (e.g. a source row used in ``k`` rounds).

        * pure ε-DP: ``kε`` (Dwork & Roth 2014, Theorem 2.2);
        * a Gaussian mechanism (``noise_multiplier`` known): exact, the Gaussian mechanism at ``k`` times the
          sensitivity — ``ε_k = gaussian_epsilon_analytic(δ, noise_multiplier, k)`` at the same δ (Balle & Wang
          2018, Theorem 8);
        * otherwise: ``(kε, k·e^{(k−1)ε}·δ)`` (Vadhan 2017, "The complexity of differential privacy",
          Lemma 2.2).

        Args:
            k: group size, an integer >= 1.

        Returns:
            A new :class:`PrivacyGuarantee` whose ``unit`` names the group.

        Raises:
            InvalidInputError: ``k`` not an integer >= 1.
        """
        size = _count("k", k)
        if size == 1:
            return self
        unit = f"{size} x ({self.unit})"
        common = {"neighbouring": self.neighbouring, "unit": unit, "randomness": self.randomness}
        if self.delta == 0.0:
            return PrivacyGuarantee(
                epsilon=size * self.epsilon,
                delta=0.0,
                source=f"group privacy of {size} (Dwork-Roth Theorem 2.2) applied to: {self.source}",
                notes=self.notes,
                **common,
            )
        if self.noise_multiplier is not None and 0.0 < self.delta < 1.0:
            # The exact group ε can be below a conservative per-round claim (a calibration with slack);
            # never report a group guarantee stronger than the per-unit one.
            exact = gaussian_epsilon_analytic(self.delta, self.noise_multiplier, float(size))
            return PrivacyGuarantee(
                epsilon=max(self.epsilon, exact),
                delta=self.delta,
                source=f"Gaussian mechanism at {size}x the sensitivity (Balle-Wang 2018 Thm 8) for: {self.source}",
                notes=self.notes,
                noise_multiplier=self.noise_multiplier / size,
                **common,
            )
        # k·e^{(k−1)ε}·δ in log space: it saturates at 1 instead of overflowing for large (k−1)ε.
        log_delta = math.log(size) + (size - 1) * self.epsilon + math.log(self.delta)
        return PrivacyGuarantee(
            epsilon=size * self.epsilon,
            delta=1.0 if log_delta >= 0.0 else math.exp(log_delta),
            source=f"group privacy of {size} (Vadhan 2017 Lemma 2.2) applied to: {self.source}",
            notes=self.notes,
            **common,
        )

    def to_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict, with the randomness caveat spelled out."""
        out: dict[str, object] = dict(self.__dict__)
        out["caveat"] = self.caveat
        return out

    def __str__(self) -> str:
        text = f"(ε={self.epsilon:g}, δ={self.delta:g})-DP per {self.unit} [{self.source}]"
        if self.randomness == "seed":
            text += " — seeded: private only while the seed is secret"
        return text


def randomness_of(seed: object, secure: bool) -> str:
    """How an object's noise is keyed, for :attr:`PrivacyGuarantee.randomness`: ``"secure"``, ``"os"`` (no seed)
    or ``"seed"`` (the guarantee then holds only while the seed is secret)."""
    if secure:
        return "secure"
    return "os" if seed is None else "seed"


def row_multiplicity(losses: object) -> int:
    """The largest number of rounds any source row of a loss stream is used in (1 for a stream played in order).

    A guarantee per round is, per source row, a group guarantee over this many rounds
    (:meth:`PrivacyGuarantee.group`).

    Args:
        losses: a :mod:`dponline.losses` family (anything with ``row_counts()``), or a
            :func:`dponline.losses.BernoulliArms` environment (fresh independent draws every round: 1).

    Raises:
        InvalidInputError: an object without ``row_counts``.
    """
    if isinstance(losses, _core.BernoulliArms):
        return 1
    counts = getattr(losses, "row_counts", None)
    if counts is None:
        raise InvalidInputError(f"losses must be a loss family with row_counts(), got {type(losses).__name__}")
    values = np.asarray(counts())
    return max(1, int(values.max())) if values.size else 1


# --------------------------------------------------------------------------------------------------------
# Numerical safety (issue 13): no overflow exception, no inf/NaN and no zero noise ever leaves this module

_MAX_STEPS = 2200  # doublings/halvings: 2**2200 exceeds the ratio of any two positive float64 numbers
_POSITIVE_RESULTS = frozenset(
    {
        "laplace_scale",
        "gaussian_sigma_classical",
        "gaussian_sigma_analytic",
        "zcdp_gaussian_sigma",
        "zcdp_gaussian_rho",
        "dp_to_zcdp_rho",
        "tree_laplace_scale",
        "tree_gaussian_sigma",
    }
)


def _steps(routine: str, limit: int = _MAX_STEPS):  # type: ignore[no-untyped-def]
    """``range(limit)`` that raises :class:`ConvergenceError` naming ``routine`` when it is exhausted."""
    yield from range(limit)
    raise ConvergenceError(f"{routine} did not converge within {limit} iterations")


def _numeric(fn: Callable[..., _R]) -> Callable[..., _R]:
    """Make a calibration/accounting function total on finite inputs.

    Float overflow/underflow inside the formulas becomes :class:`InvalidInputError` naming the function and its
    arguments (the user's arguments are too extreme for float64), a root finder that fails becomes
    :class:`ConvergenceError`, and a result that is not finite — or a noise scale, σ or ρ that underflows to
    0, which would release data without noise — is refused the same way instead of being returned.
    """

    @functools.wraps(fn)
    def checked(*args: object, **kwargs: object) -> _R:
        shown = ", ".join([*(repr(a) for a in args), *(f"{k}={v!r}" for k, v in kwargs.items())])
        try:
            result = fn(*args, **kwargs)
        except DPOnlineError:
            raise
        except (OverflowError, ZeroDivisionError, FloatingPointError, ValueError) as e:
            raise InvalidInputError(f"{fn.__name__}({shown}): arguments too extreme for float64 ({e})") from None
        except RuntimeError as e:
            raise ConvergenceError(f"{fn.__name__}({shown}): {e}") from None
        values = [result] if isinstance(result, float) else []
        if isinstance(result, PrivacyGuarantee):
            values = [result.epsilon, result.delta]
        for v in values:
            if not math.isfinite(v) or (fn.__name__ in _POSITIVE_RESULTS and v <= 0.0):
                raise InvalidInputError(
                    f"{fn.__name__}({shown}): the result ({v!r}) is not representable as a finite positive float64; "
                    "the arguments are too extreme"
                )
        return result

    return checked


# --------------------------------------------------------------------------------------------------------
# Input validation


def _positive(name: str, value: object) -> float:
    return _validate.real(name, value, low=0.0, low_open=True)


def _nonnegative(name: str, value: object) -> float:
    return _validate.real(name, value, low=0.0)


def _delta_open(value: object) -> float:
    """δ in (0, 1): for the formulas that need δ > 0."""
    return _validate.real("delta", value, low=0.0, high=1.0, low_open=True, high_open=True)


def _delta_half_open(value: object) -> float:
    """δ in [0, 1)."""
    return _validate.real("delta", value, low=0.0, high=1.0, high_open=True)


def _count(name: str, value: object) -> int:
    return _validate.integer(name, value, low=1)


def _feasible_root(excess: Callable[[float], float], infeasible: float, feasible: float) -> float:
    """The root of a monotone ``excess`` between ``excess(infeasible) > 0 >= excess(feasible)``.

    Solved with Brent's method to relative tolerance ``_RTOL``, then moved towards ``feasible`` in steps of
    ``_RTOL`` (relative) until ``excess <= 0``, so the answer never misses its target by rounding.
    """
    lo, hi = sorted((infeasible, feasible))
    root = optimize.brentq(excess, lo, hi, xtol=np.finfo(float).tiny, rtol=_RTOL)
    step = 1.0 + _RTOL if feasible > infeasible else 1.0 - _RTOL
    for _ in _steps("moving the root to the feasible side", 10_000):
        if not excess(root) > 0.0:
            return root
        root *= step
    raise AssertionError("unreachable: _steps raises")  # pragma: no cover


# --------------------------------------------------------------------------------------------------------
# Laplace and Gaussian mechanisms


@_numeric
def laplace_scale(epsilon: float, sensitivity: float) -> float:
    """Scale ``b`` of Laplace noise that makes a query with L1 sensitivity Δ₁ ε-DP: ``b = Δ₁ / ε``.

    Args:
        epsilon: ε, finite and > 0.
        sensitivity: L1 sensitivity Δ₁ of the query, finite and > 0.

    Returns:
        The scale ``b`` of Laplace(0, b) noise (density ``exp(-|x|/b) / (2b)``) per coordinate.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Dwork, McSherry, Nissim & Smith 2006, "Calibrating noise to sensitivity in private data
    analysis", the Laplace mechanism (Dwork & Roth 2014, Theorem 3.6).
    """
    return _positive("sensitivity", sensitivity) / _positive("epsilon", epsilon)


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


# --------------------------------------------------------------------------------------------------------
# Zero-concentrated differential privacy


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


# --------------------------------------------------------------------------------------------------------
# Composition


@_numeric
def basic_composition(guarantees: Sequence[PrivacyGuarantee]) -> PrivacyGuarantee:
    """Guarantee of running mechanisms with the given guarantees on the same data: ε and δ add up.

    Holds for adaptive composition (each mechanism may depend on the earlier outputs).

    Args:
        guarantees: a non-empty sequence of :class:`PrivacyGuarantee`, all with the same ``neighbouring``.

    Returns:
        ``(Σε, min(1, Σδ))``-DP.

    Raises:
        InvalidInputError: for an empty sequence, an element that is not a :class:`PrivacyGuarantee`, or
            differing neighbouring relations.

    Source: Dwork, Kenthapadi, McSherry, Mironov & Naor 2006, "Our data, ourselves"; Dwork & Roth 2014,
    Theorem 3.16.
    """
    items = list(guarantees)
    if not items:
        raise InvalidInputError("guarantees must be a non-empty sequence of PrivacyGuarantee, got none")
    for item in items:
        if not isinstance(item, PrivacyGuarantee):
            raise InvalidInputError(f"guarantees must contain only PrivacyGuarantee, got {item!r}")
    relations = {item.neighbouring for item in items}
    if len(relations) > 1:
        raise InvalidInputError(f"guarantees must share one neighbouring relation, got {sorted(relations)!r}")
    return PrivacyGuarantee(
        epsilon=math.fsum(item.epsilon for item in items),
        delta=min(1.0, math.fsum(item.delta for item in items)),
        source="basic composition (Dwork-Kenthapadi-McSherry-Mironov-Naor 2006; Dwork-Roth Theorem 3.16)",
        neighbouring=relations.pop(),
        notes=f"{len(items)} mechanisms",
    )


@_numeric
def advanced_composition(epsilon: float, delta: float, k: int, delta_prime: float) -> PrivacyGuarantee:
    """k-fold adaptive composition of (ε, δ)-DP mechanisms: ``(ε', kδ + δ')``-DP with
    ``ε' = sqrt(2k ln(1/δ')) · ε + kε(e^ε − 1)``.

    For large ε or small k, ε' can exceed the basic-composition bound kε; both are valid.

    Args:
        epsilon: ε of each mechanism, finite and > 0.
        delta: δ of each mechanism, in [0, 1).
        k: number of mechanisms, an integer >= 1.
        delta_prime: the extra failure probability δ', in (0, 1).

    Returns:
        ``PrivacyGuarantee(ε', min(1, kδ + δ'))``.

    Raises:
        InvalidInputError: for an argument outside its range (NonFiniteError for NaN/inf).

    Source: Perez-Salazar & Cummings 2021, "Differentially private online submodular maximization",
    Theorem 4, which restates the advanced composition theorem of Dwork, Rothblum & Vadhan 2010.
    """
    eps = _positive("epsilon", epsilon)
    d = _delta_half_open(delta)
    n = _count("k", k)
    d_prime = _validate.real("delta_prime", delta_prime, low=0.0, high=1.0, low_open=True, high_open=True)
    eps_total = math.sqrt(2.0 * n * math.log(1.0 / d_prime)) * eps + n * eps * math.expm1(eps)
    return PrivacyGuarantee(
        epsilon=eps_total,
        delta=min(1.0, n * d + d_prime),
        source="Perez-Salazar-Cummings 2021 Theorem 4 (advanced composition, Dwork-Rothblum-Vadhan 2010)",
        notes=f"k={n} mechanisms, each ({eps:g}, {d:g})-DP, delta_prime={d_prime:g}",
    )


# --------------------------------------------------------------------------------------------------------
# Tree aggregation (the binary mechanism)


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
    epsilon: float, delta: float, sensitivity: float, horizon: int, calibration: str = "paper"
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
    calibration = _validate.option("calibration", calibration, _TREE_CALIBRATIONS)
    release_sensitivity = sens * math.sqrt(levels)
    if calibration == "zcdp":
        return zcdp_gaussian_sigma(eps, d, release_sensitivity)
    sigma_analytic = gaussian_sigma_analytic(eps, d, release_sensitivity)
    if calibration == "analytic":
        return sigma_analytic
    return max(sens * levels * math.log(levels / d) / eps, sigma_analytic)


@_numeric
def tree_privacy(noise: str, scale: float, sensitivity: float, horizon: int, *, delta: float = 0.0) -> PrivacyGuarantee:
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
    noise = _validate.option("noise", noise, _NOISES)
    if _validate.real("scale", scale) == 0.0:
        raise InvalidInputError("scale 0 gives no privacy: scale must be finite and > 0")
    sc = _positive("scale", scale)
    sens = _positive("sensitivity", sensitivity)
    rounds = _count("horizon", horizon)
    levels = levels_touched(rounds)
    notes = f"horizon={rounds}, levels_touched={levels}, {noise} scale={sc:g}"
    if noise == "laplace":
        if _delta_half_open(delta) != 0.0:
            raise InvalidInputError(f"delta must be 0 for Laplace noise (the tree is pure ε-DP), got {delta!r}")
        return PrivacyGuarantee(epsilon=sens * levels / sc, delta=0.0, source=_TREE_SOURCE, notes=notes)
    d = _delta_open(delta)
    return PrivacyGuarantee(
        epsilon=gaussian_epsilon_analytic(d, sc, sens * math.sqrt(levels)),
        delta=d,
        source="Balle-Wang 2018 Theorem 8 on the released tree nodes (L2 sensitivity × sqrt(levels_touched))",
        notes=notes,
    )


# --------------------------------------------------------------------------------------------------------
# Linear prefix-sum mechanisms (trees, k-ary trees, matrix factorisations) under single participation

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
    epsilon: float, delta: float, sensitivity: float, column_l2: float, calibration: str = "analytic"
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
    calibration = _validate.option("calibration", calibration, _LINEAR_CALIBRATIONS)
    release_sensitivity = _positive("sensitivity", sensitivity) * _positive("column_l2", column_l2)
    if calibration == "zcdp":
        return zcdp_gaussian_sigma(epsilon, delta, release_sensitivity)
    return gaussian_sigma_analytic(epsilon, delta, release_sensitivity)


def linear_privacy(
    noise: str, scale: float, sensitivity: float, column_norm: float, *, delta: float = 0.0
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
    noise = _validate.option("noise", noise, _NOISES)
    sc = _positive("scale", scale)
    sens = _positive("sensitivity", sensitivity)
    norm = _positive("column_norm", column_norm)
    notes = f"{noise} scale={sc:g}, encoder column norm={norm:g}"
    if noise == "laplace":
        if _delta_half_open(delta) != 0.0:
            raise InvalidInputError(f"delta must be 0 for Laplace noise, got {delta!r}")
        return PrivacyGuarantee(epsilon=sens * norm / sc, delta=0.0, source=_LINEAR_LAPLACE_SOURCE, notes=notes)
    d = _delta_open(delta)
    return PrivacyGuarantee(
        epsilon=gaussian_epsilon_analytic(d, sc, sens * norm),
        delta=d,
        source=_LINEAR_GAUSSIAN_SOURCE,
        notes=notes,
        noise_multiplier=sc / (sens * norm),
    )
