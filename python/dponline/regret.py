"""Comparators in hindsight and regret curves.

Regret of a run is ``Σ_t f_t(x_t) − min_{x ∈ D} Σ_t f_t(x)``. The comparator is computed once for the whole
horizon; the regret *curve* reports ``Σ_{s≤t} f_s(x_s) − Σ_{s≤t} f_s(x*)`` against that fixed ``x*`` at
checkpoints (equal to the regret at ``t = T``). Row multiplicities make a bootstrapped stream of 10⁷ rounds
cost no more than its distinct rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _core
from .errors import InvalidInputError

__all__ = ["Comparator", "best_fixed", "best_constant_rebalanced_portfolio", "regret_curve"]


@dataclass(frozen=True)
class Comparator:
    """The best fixed decision in hindsight.

    Attributes:
        x: the comparator, shape ``(dim,)``.
        total_loss: ``Σ_t f_t(x)`` over the family's horizon.
        gap: an upper bound on ``total_loss − min`` (0 for linear losses; the Frank-Wolfe gap otherwise).
        method: how it was computed.
    """

    x: np.ndarray
    total_loss: float
    gap: float
    method: str


def best_fixed(
    losses: _core.LossFamily,
    domain: _core.Domain | None = None,
    *,
    iterations: int = 20_000,
    tol: float = 1e-12,
) -> Comparator:
    """The comparator for a loss family: the LMO on the cumulative loss for linear losses (``domain``
    required; exact), the best constant-rebalanced portfolio for portfolio losses (the simplex is implied;
    ``iterations`` and ``tol`` as :func:`best_constant_rebalanced_portfolio`).

    Raises:
        InvalidInputError: a linear family without ``domain``.
    """
    if losses.kind == "linear":
        if domain is None:
            raise InvalidInputError("domain is required for linear losses")
        counts = losses.row_counts().astype(np.float64)
        total = counts @ losses.data
        x = domain.lmo(total)
        return Comparator(x=x, total_loss=float(total @ x), gap=0.0, method="LMO on the cumulative loss")
    return best_constant_rebalanced_portfolio(losses, iterations=iterations, tol=tol)


def best_constant_rebalanced_portfolio(
    losses: _core.LossFamily, *, iterations: int = 20_000, tol: float = 1e-12
) -> Comparator:
    """The best constant-rebalanced portfolio (BCRP, Cover 1991): ``argmin_{x ∈ Δ} Σ_t −ln⟨r_t, x⟩``.

    Solved by pairwise Frank-Wolfe on the simplex (mass moves from the worst held asset to the best one)
    with exact line search (bisection on the convex one-dimensional derivative), on the distinct rows
    weighted by their multiplicities. Stops when the Frank-Wolfe gap, an upper bound on the suboptimality
    per round, is below ``tol`` or after ``iterations`` steps.

    Returns:
        :class:`Comparator` with ``gap`` the final total Frank-Wolfe gap (an upper bound on
        ``total_loss − min``).
    """
    if losses.kind != "portfolio":
        raise InvalidInputError("the BCRP needs a portfolio (log-loss) family")
    R = losses.data
    w = losses.row_counts().astype(np.float64)
    keep = w > 0
    R, w = R[keep], w[keep] / w[keep].sum()
    n = R.shape[1]
    x = np.full(n, 1.0 / n)
    gap = np.inf
    for _ in range(iterations):
        a = R @ x
        grad = -(w / a) @ R
        s = int(np.argmin(grad))
        gap = float(grad @ x - grad[s])
        if gap <= tol:
            break
        held = np.flatnonzero(x > 0)
        worst = int(held[np.argmax(grad[held])])
        if worst == s:
            break
        b = R[:, s] - R[:, worst]
        hi = x[worst]

        def slope(g: float, a: np.ndarray = a, b: np.ndarray = b) -> float:
            return float(-(w * b / (a + g * b)).sum())

        if slope(hi) <= 0:
            step = hi
        else:
            lo_g, hi_g = 0.0, hi
            for _ in range(60):
                mid = 0.5 * (lo_g + hi_g)
                lo_g, hi_g = (mid, hi_g) if slope(mid) < 0 else (lo_g, mid)
            step = 0.5 * (lo_g + hi_g)
        x[s] += step
        x[worst] -= step
    T = losses.horizon
    return Comparator(
        x=x,
        total_loss=float(T * (w @ -np.log(R @ x))),
        gap=float(T * gap),
        method="pairwise Frank-Wolfe (BCRP)",
    )


def regret_curve(
    losses: _core.LossFamily, checkpoints: np.ndarray, cumulative_loss: np.ndarray, comparator: Comparator
) -> np.ndarray:
    """Regret against the fixed comparator at each checkpoint: learner's cumulative loss minus the
    comparator's, shape ``(k,)``. The checkpoints must be sorted rounds of the family."""
    base = losses.cumulative_at(comparator.x, [int(c) for c in checkpoints])
    return np.asarray(cumulative_loss, dtype=np.float64) - base
