"""The Laplace mechanism's noise scale."""

from __future__ import annotations

from ._numerics import _numeric, _positive

__all__ = ["laplace_scale"]


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
