"""Loss families evaluated natively by the learners' ``run`` loops (no Python call per round).

A family is a finite matrix of rows — one per round of a real or synthetic stream — and a row order that
maps round ``t`` to a row: in sequence, cycling, or a seeded bootstrap (rows drawn uniformly with
replacement, counter-based so any round is O(1) to reach). The bootstrap turns the 5,650 NYSE days into a
stream of any length with the same per-round distribution.
"""

from __future__ import annotations

import math

import numpy as np

from . import _validate
from ._core import BernoulliArms as _BernoulliArms
from ._core import LossFamily
from .errors import InvalidInputError

__all__ = ["LossFamily", "Linear", "PortfolioLogLoss", "portfolio_bounds", "portfolio_gradient_bounds", "BernoulliArms"]


def _family(
    kind: str,
    data: object,
    horizon: int | None,
    resample: str | None,
    seed: int | None,
    lipschitz: float | None = None,
    loss_bound: float | None = None,
) -> LossFamily:
    rounds, order, seed = _validate.row_schedule(horizon, resample, seed)
    return LossFamily(kind, data, horizon=rounds, order=order, seed=seed, lipschitz=lipschitz, loss_bound=loss_bound)


def Linear(  # noqa: N802 - a family constructor, named like the loss it builds
    C: np.ndarray,
    *,
    norm_bound: float | None = None,
    horizon: int | None = None,
    resample: str | None = None,
    seed: int | None = None,
) -> LossFamily:
    """Linear losses ``f_t(x) = ⟨c_t, x⟩`` for the rows ``c_t`` of ``C``.

    Args:
        C: float array of shape ``(rows, n)``; finite.
        norm_bound: a bound ``G`` on ``‖c_t‖₂`` declared before seeing the data. Rows longer than ``G`` are
            scaled down onto the ball of radius ``G`` (part of the loss definition), and the family's
            :attr:`lipschitz` is ``G``. ``None`` declares nothing (a private learner then needs its own bounds).
        horizon: number of rounds (default: ``rows``; larger horizons need ``resample``).
        resample: ``None`` (rows in order), ``"cycle"`` or ``"bootstrap"`` (uniform with replacement).
        seed: integer seed of the bootstrap (required for ``"bootstrap"``).

    Returns:
        A :class:`LossFamily` of kind ``"linear"``.

    Raises:
        InvalidInputError: wrong shape, ``horizon > rows`` without resampling, a missing seed, a bad bound.
        NonFiniteError: NaN or inf in ``C``.
    """
    C = _validate.real_array("C", C, (None, None))
    if norm_bound is not None:
        bound = _validate.real("norm_bound", norm_bound, low=0.0, low_open=True)
        if C.size:
            # Scaled so that rows of 1e308 neither overflow their norm nor are zeroed: x / max|x| has norm in
            # [1, sqrt(n)], and a row is replaced by (x / max|x|)·(G / ‖x / max|x|‖) only when ‖x‖ > G.
            peak = np.abs(C).max(axis=1, keepdims=True)
            unit = C / np.where(peak > 0, peak, 1.0)
            unit_norm = np.linalg.norm(unit, axis=1, keepdims=True)
            with np.errstate(over="ignore", under="ignore"):
                too_long = peak * unit_norm > bound  # inf > bound is True, as it should be
                C = np.where(too_long, unit * (bound / np.where(unit_norm > 0, unit_norm, 1.0)), C)
        norm_bound = bound
    return _family("linear", C, horizon, resample, seed, lipschitz=norm_bound)


def _relative_range(relative_range: tuple[float, float]) -> tuple[float, float]:
    """The declared ``(a, b)`` of price relatives, checked: ``0 < a <= 1 <= b`` finite and ``a < b`` (with
    ``a = b = 1`` every loss is 0 and every bound that sets noise would be 0)."""
    lo, hi = relative_range
    a = _validate.real("relative_range[0]", lo, low=0.0, high=1.0, low_open=True)
    b = _validate.real("relative_range[1]", hi, low=1.0)
    if a == b:
        raise InvalidInputError("relative_range must have a < b: with a = b = 1 every loss is 0 (nothing to learn)")
    return a, b


def portfolio_bounds(relative_range: tuple[float, float], n: int) -> tuple[float, float]:
    """The a-priori bounds of the portfolio loss when every price relative lies in ``[a, b]``.

    * ``|f_t(x)| = |ln⟨r_t, x⟩| ≤ max(|ln a|, |ln b|)`` on the simplex (``⟨r_t, x⟩ ∈ [a, b]``);
    * Lipschitz constant along the simplex (its affine hull, where the learners move):
      ``‖(I − 11ᵀ/n) r_t‖₂ / ⟨r_t, x⟩ ≤ (b − a)·√n / (2a)``, since the centred vector of ``n`` numbers in
      ``[a, b]`` has norm at most ``(b − a)√n / 2``.

    Returns:
        ``(lipschitz, loss_bound)``.

    Raises:
        InvalidInputError: unless ``0 < a <= 1 <= b`` are finite with ``a < b``, or ``n < 2``.
    """
    a, b = _relative_range(relative_range)
    n = _validate.integer("n", n, low=2)
    return (b - a) * np.sqrt(n) / (2.0 * a), max(abs(np.log(a)), abs(np.log(b)))


def portfolio_gradient_bounds(
    relative_range: tuple[float, float], n: int, *, norm: str = "l1", centred: bool = True
) -> dict[str, float]:
    """A-priori bounds on the linearised portfolio loss vectors that DP-FTRL feeds its tree, as keyword
    arguments of :class:`dponline.DPFTRL` (``loss_shift``, ``loss_bound``, ``dual_bound``).

    With every relative in ``[a, b]`` and ``x`` in the simplex, ``⟨r, x⟩ ∈ [a, b]``, so each coordinate of the
    gradient ``g = −r/⟨r, x⟩`` lies in ``[−b/a, −a/b]``.

    * ``centred=True`` (default): ``c = −(b/a + a/b)/2``, the interval's midpoint; the centred vector ``g − c·1``
      has every coordinate in ``[−h, h]``, ``h = (b/a − a/b)/2``, so ``‖g − c·1‖_∞ ≤ h`` (``dual_bound``),
      ``‖·‖₁ ≤ n·h`` and ``‖·‖₂ ≤ √n·h`` (``loss_bound`` for ``norm="l1"`` / ``"l2"``). On the simplex
      ``⟨x, c·1⟩ = c``: DP-FTRL's actions without noise and its regret are unchanged, and its noise scale is
      proportional to ``loss_bound``, which shrinks by ``h/(b/a) = (1 − a²/b²)/2`` (0.469 for ``(0.5, 2)``).
      Each bound is attained (``r = b·e_i`` or ``a·e_i`` against a vertex), so none is loose in the worst case.
    * ``centred=False``: ``c = 0``, ``‖g‖_∞ ≤ b/a``, ``‖g‖₁ ≤ n·b/a``, ``‖g‖₂ ≤ √n·b/a``.

    Args:
        relative_range: the declared ``(a, b)``, ``0 < a <= 1 <= b``, ``a < b`` (as :func:`PortfolioLogLoss`).
        n: number of assets, ``>= 2``.
        norm: ``"l1"`` (Laplace noise, ``delta=0``) or ``"l2"`` (Gaussian).
        centred: subtract the midpoint.

    Returns:
        ``{"loss_shift": c, "loss_bound": G, "dual_bound": G_*}``.

    Raises:
        InvalidInputError: a bad range, ``n < 2`` or an unknown norm.
    """
    a, b = _relative_range(relative_range)
    n = _validate.integer("n", n, low=2)
    norm = _validate.option("norm", norm, ("l1", "l2"))
    centred = _validate.flag("centred", centred)
    if centred:
        shift, half = -0.5 * (b / a + a / b), 0.5 * (b / a - a / b)
    else:
        shift, half = 0.0, b / a
    if half == 0.0:  # a = b = 1: every centred gradient is 0; any positive bound is valid
        half = 1.0
    scale = float(n) if norm == "l1" else math.sqrt(n)
    return {"loss_shift": float(shift), "loss_bound": float(scale * half), "dual_bound": float(half)}


def PortfolioLogLoss(  # noqa: N802 - a family constructor, named like the loss it builds
    R: np.ndarray,
    *,
    relative_range: tuple[float, float] | None = None,
    horizon: int | None = None,
    resample: str | None = None,
    seed: int | None = None,
) -> LossFamily:
    """Online portfolio selection losses ``f_t(x) = −ln⟨r_t, x⟩`` for price relatives ``r_t > 0``.

    The wealth of a constant-rebalanced portfolio ``x`` after ``T`` rounds is ``exp(−Σ_t f_t(x))``
    (Cover 1991).

    With ``relative_range=(a, b)`` — declared before seeing the data, e.g. ``(0.5, 2.0)``: no stock halves or
    doubles in a day — every relative is clipped into ``[a, b]``. The clipping is part of the loss the
    learner faces (and of the comparators computed on this family), and it is what makes the bounds a
    privacy proof needs hold a priori: :attr:`loss_bound` ``= max(|ln a|, |ln b|)`` and :attr:`lipschitz`
    ``= (b − a)√n/(2a)`` (see :func:`portfolio_bounds`). Without it the family declares no bound.
    ``empirical_bounds()`` gives the data-derived constants (``max_t ‖r_t‖₂ / min_i r_{t,i}`` and
    ``max_t max(|ln min_i r_t|, |ln max_i r_t|)``) for inspection only — they depend on the stream and
    must never set a private learner's noise, clipping or step size.

    Args:
        R: float array of shape ``(rows, n)``, all entries finite and ``> 0``.
        relative_range: ``(a, b)`` with ``0 < a <= 1 <= b`` and ``a < b``, or ``None``.
        horizon, resample, seed: as :func:`Linear`.

    Raises:
        InvalidInputError: non-positive relatives, wrong shape, bad range/horizon/resample/seed.
        NonFiniteError: NaN or inf in ``R``.
    """
    R = _validate.real_array("R", R, (None, None))
    lipschitz = loss_bound = None
    if relative_range is not None:
        pair = not isinstance(relative_range, (str, bytes)) and hasattr(relative_range, "__len__")
        if not pair or len(relative_range) != 2:
            raise InvalidInputError(f"relative_range must be a pair (a, b) or None, got {relative_range!r}")
        if (R <= 0).any():
            raise InvalidInputError("relatives must be > 0 everywhere (price relatives)")
        lipschitz, loss_bound = portfolio_bounds(tuple(relative_range), R.shape[1])  # type: ignore[arg-type]
        R = np.clip(R, relative_range[0], relative_range[1])
    return _family("portfolio", R, horizon, resample, seed, lipschitz=lipschitz, loss_bound=loss_bound)


def BernoulliArms(  # noqa: N802 - an environment constructor, named like the environment it builds
    means: object,
    *,
    horizon: int,
    seed: int,
) -> _BernoulliArms:
    """A native ``K``-armed Bernoulli bandit environment for :class:`dponline.PrivateEXP3`'s ``run``.

    Arm ``i`` has loss 1 with probability ``means[i]`` and 0 otherwise, independently over rounds and arms. The
    draws are counter-based (a hash of ``(seed, t, i)``), so the environment is stateless, any round is O(1)
    to reach, and two learners run on the same environment see the same losses. For click data pass
    ``1 − click_probability`` (a click is a loss of 0).

    The bandit learners also accept a linear family (:func:`Linear`) of shape ``(rows, K)``: the loss of the
    played arm at round ``t`` is entry ``arm`` of round ``t``'s row.

    Args:
        means: loss means, shape ``(K,)``, ``K >= 2``, each in ``[0, 1]``.
        horizon: number of rounds, ``>= 1``.
        seed: integer seed of the environment, ``>= 0``.

    Raises:
        InvalidInputError: a mean outside ``[0, 1]``, fewer than 2 arms, bad horizon or seed.
        NonFiniteError: NaN or inf in ``means``.
    """
    values = _validate.real_array("means", means, (None,))
    horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
    seed = _validate.integer("seed", seed, low=0, high=2**64 - 1)
    return _BernoulliArms(values.tolist(), horizon=horizon, seed=seed)
