"""Streams of monotone submodular set functions, evaluated natively with batched marginal gains.

A family is a matrix of rows — one per round of a real or synthetic stream, one column per item of the ground
set ``U``, every entry in ``[0, 1]`` — and a row order (in sequence, cycling, or a seeded bootstrap), as for
:mod:`dponline.losses`. Each row defines ``f_t : 2^U → [0, 1]`` with ``f_t(∅) = 0``, monotone and submodular:

* :func:`ProbabilisticCoverage`: ``f_t(S) = 1 − Π_{a∈S}(1 − p_a^t)``, the probability that a user who clicks
  each displayed item independently with probability ``p_a^t`` clicks at least one (the motivating example of
  Perez-Salazar & Cummings 2021). Gain of ``a ∉ S``: ``p_a^t · Π_{b∈S}(1 − p_b^t)``.
* :func:`WeightedCoverage`: ``f_t(S) = Σ_{j ∈ ∪_{a∈S} C(a)} w_j^t`` for element weights ``w^t`` (each row
  summing to at most 1) and a fixed incidence ``C(a)`` of the elements each item covers. Gain of ``a``: the
  weight of the elements ``a`` covers that ``S`` does not (one pass over the incidence). Only through
  ``run`` (a full-information ``tell`` takes the row-scalar kinds).
* :func:`FacilityLocation`: ``f_t(S) = max_{a∈S} s_a^t`` for similarities ``s^t ∈ [0, 1]^U`` of round ``t``'s
  client to the items. Gain: ``max(0, s_a^t − max_{b∈S} s_b^t)``.

``family.gains(t, prefix)`` returns the marginal gain of every item given ``prefix`` in one ``O(|U|)`` pass;
``family.summed_gains(prefix)`` the gains for the summed function ``F = Σ_{t<horizon} f_t`` (one pass over the
distinct rows, each weighted by how often it is played; counting the plays of a bootstrap order takes ``O(horizon)``
per call, in order or cycling it is closed-form); ``family.lazy_greedy(k)`` maximises ``F`` greedily (see
:func:`dponline.regret.greedy_in_hindsight`). These horizon-long scans (and ``row_counts``, ``cumulative_at``) run
with the GIL released and stop on Ctrl-C with ``KeyboardInterrupt``.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _validate
from ._core import SubmodularFamily
from .errors import InvalidInputError

__all__ = ["SubmodularFamily", "ProbabilisticCoverage", "FacilityLocation", "WeightedCoverage"]


def _family(
    kind: str, data: np.ndarray, horizon: int | None, resample: str | None, seed: int | None
) -> SubmodularFamily:
    rounds, order, seed = _validate.row_schedule(horizon, resample, seed)
    return SubmodularFamily(kind, data, horizon=rounds, order=order, seed=seed)


def _element_id(j: object) -> int:
    """An element id of ``covers``: an integer (NumPy integers included), never a float, string or bool."""
    if isinstance(j, (bool, np.bool_)):
        raise TypeError(f"element ids must be integers, got {j!r}")
    return operator.index(j)  # type: ignore[arg-type]


def ProbabilisticCoverage(  # noqa: N802 - a family constructor, named like the function it builds
    P: np.ndarray,
    *,
    horizon: int | None = None,
    resample: str | None = None,
    seed: int | None = None,
) -> SubmodularFamily:
    """Probabilistic coverage ``f_t(S) = 1 − Π_{a∈S}(1 − p_a^t)`` for the rows ``p^t`` of ``P``.

    Args:
        P: float array of shape ``(rows, |U|)``, every entry finite and in ``[0, 1]`` (click probabilities,
            e.g. :func:`dponline.datasets.open_bandit_round_probabilities`).
        horizon, resample, seed: the rounds and the order of the rows, as :func:`dponline.losses.Linear`.

    Returns:
        A :class:`SubmodularFamily` of kind ``"probabilistic_coverage"``.

    Raises:
        InvalidInputError: wrong shape, an entry outside ``[0, 1]``, ``horizon > rows`` without resampling, a
            missing seed.
        NonFiniteError: NaN or inf in ``P``.

    Example:
        >>> import numpy as np
        >>> from dponline.submodular import ProbabilisticCoverage
        >>> f = ProbabilisticCoverage(np.array([[0.5, 0.5, 0.1]]))
        >>> round(f.value(0, [0, 1]), 3), f.gains(0, [0]).round(3).tolist()
        (0.75, [0.0, 0.25, 0.05])
    """
    P = _validate.real_array("P", P, (None, None))
    return _family("probabilistic_coverage", P, horizon, resample, seed)


def FacilityLocation(  # noqa: N802 - a family constructor, named like the function it builds
    S: np.ndarray,
    *,
    horizon: int | None = None,
    resample: str | None = None,
    seed: int | None = None,
) -> SubmodularFamily:
    """One-client facility location ``f_t(S) = max_{a∈S} s_a^t`` (0 for the empty set) for the rows ``s^t``.

    Args:
        S: float array of shape ``(rows, |U|)``, every entry finite and in ``[0, 1]`` (similarities).
        horizon, resample, seed: as :func:`ProbabilisticCoverage`.

    Returns:
        A :class:`SubmodularFamily` of kind ``"facility_location"``.

    Raises:
        InvalidInputError, NonFiniteError: as :func:`ProbabilisticCoverage`.
    """
    S = _validate.real_array("S", S, (None, None))
    return _family("facility_location", S, horizon, resample, seed)


def WeightedCoverage(  # noqa: N802 - a family constructor, named like the function it builds
    W: np.ndarray,
    covers: object,
    *,
    horizon: int | None = None,
    resample: str | None = None,
    seed: int | None = None,
) -> SubmodularFamily:
    """Weighted coverage ``f_t(S) = Σ_{j ∈ ∪_{a∈S} covers[a]} W[t, j]``.

    Args:
        W: float array of shape ``(rows, elements)``, entries finite and in ``[0, 1]``, every row summing to at
            most 1 (so ``f_t ≤ 1``).
        covers: one sequence of element ids (in ``[0, elements)``) per item; the ground set is
            ``range(len(covers))``. Duplicates are ignored.
        horizon, resample, seed: as :func:`ProbabilisticCoverage`.

    Returns:
        A :class:`SubmodularFamily` of kind ``"weighted_coverage"``.

    Raises:
        InvalidInputError: wrong shape, weights outside ``[0, 1]`` or a row summing to more than 1, an element
            id out of range, no items.
        NonFiniteError: NaN or inf in ``W``.

    Example:
        >>> import numpy as np
        >>> from dponline.submodular import WeightedCoverage
        >>> f = WeightedCoverage(np.array([[0.5, 0.3, 0.2]]), [[0, 1], [1, 2], [2]])
        >>> round(f.value(0, [0, 2]), 3), f.gains(0, [0]).round(3).tolist()
        (1.0, [0.0, 0.2, 0.2])
    """
    W = _validate.real_array("W", W, (None, None))
    try:
        items = [sorted({_element_id(j) for j in c}) for c in covers]  # type: ignore[attr-defined]
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"covers must be a sequence of sequences of element ids ({exc})") from None
    if any(j < 0 for c in items for j in c):
        raise InvalidInputError("covers must hold element ids in [0, elements)")
    order = "sequential" if resample is None else _validate.option("resample", resample, ("cycle", "bootstrap"))
    if horizon is not None:
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
    if seed is not None:
        seed = _validate.integer("seed", seed, low=0, high=2**64 - 1)
    return SubmodularFamily.weighted_coverage(W, items, horizon=horizon, order=order, seed=seed)
