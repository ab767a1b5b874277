"""Composition: the guarantee of several mechanisms run on the same data."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import _validate
from ..errors import InvalidInputError
from ._numerics import _count, _delta_half_open, _numeric, _positive
from .guarantee import PrivacyGuarantee

__all__ = ["basic_composition", "advanced_composition"]


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
