"""Loss families evaluated natively by the learners' ``run`` loops (no Python call per round).

A family is a finite matrix of rows — one per round of a real or synthetic stream — and a row order that
maps round ``t`` to a row: in sequence, cycling, or a seeded bootstrap (rows drawn uniformly with
replacement, counter-based so any round is O(1) to reach). The bootstrap turns the 5,650 NYSE days into a
stream of any length with the same per-round distribution.
"""

from __future__ import annotations

import numpy as np

from ._core import LossFamily

__all__ = ["LossFamily", "Linear", "PortfolioLogLoss"]


def _family(kind: str, data: np.ndarray, horizon: int | None, resample: str | None, seed: int | None) -> LossFamily:
    order = "sequential" if resample is None else resample
    return LossFamily(kind, data, horizon=horizon, order=order, seed=seed)


def Linear(  # noqa: N802 - a family constructor, named like the loss it builds
    C: np.ndarray, *, horizon: int | None = None, resample: str | None = None, seed: int | None = None
) -> LossFamily:
    """Linear losses ``f_t(x) = ⟨c_t, x⟩`` for the rows ``c_t`` of ``C``.

    Args:
        C: float array of shape ``(rows, n)``; finite.
        horizon: number of rounds (default: ``rows``; larger horizons need ``resample``).
        resample: ``None`` (rows in order), ``"cycle"`` or ``"bootstrap"`` (uniform with replacement).
        seed: integer seed of the bootstrap (required for ``"bootstrap"``).

    Returns:
        A :class:`LossFamily` of kind ``"linear"``; its ``lipschitz`` is ``max_t ‖c_t‖₂``.

    Raises:
        InvalidInputError: wrong shape, ``horizon > rows`` without resampling, or a missing seed.
        NonFiniteError: NaN or inf in ``C``.
    """
    return _family("linear", C, horizon, resample, seed)


def PortfolioLogLoss(  # noqa: N802 - a family constructor, named like the loss it builds
    R: np.ndarray, *, horizon: int | None = None, resample: str | None = None, seed: int | None = None
) -> LossFamily:
    """Online portfolio selection losses ``f_t(x) = −ln⟨r_t, x⟩`` for price relatives ``r_t > 0``.

    The wealth of a constant-rebalanced portfolio ``x`` after ``T`` rounds is ``exp(−Σ_t f_t(x))``
    (Cover 1991). The family's ``lipschitz`` is ``max_t ‖r_t‖₂ / min_i r_{t,i}`` (the largest gradient norm
    over the simplex) and ``value_bound`` is ``max_t max(|ln min_i r_t|, |ln max_i r_t|)``. Both are computed
    from the data: right for experiments, but a deployment whose privacy matters must fix them a priori.

    Args:
        R: float array of shape ``(rows, n)``, all entries finite and ``> 0``.
        horizon, resample, seed: as :func:`Linear`.

    Raises:
        InvalidInputError: non-positive relatives, wrong shape, bad horizon/resample/seed.
        NonFiniteError: NaN or inf in ``R``.
    """
    return _family("portfolio", R, horizon, resample, seed)
