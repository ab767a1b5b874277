"""Comparators in hindsight and regret curves.

Regret of a run is ``Σ_t f_t(x_t) − min_{x ∈ D} Σ_t f_t(x)``. The comparator is computed once for the whole
horizon; the regret *curve* reports ``Σ_{s≤t} f_s(x_s) − Σ_{s≤t} f_s(x*)`` against that fixed ``x*`` at
checkpoints (equal to the regret at ``t = T``). Row multiplicities make a bootstrapped stream of 10⁷ rounds
cost no more than its distinct rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core, _validate
from .errors import InvalidInputError

__all__ = [
    "APPROXIMATION",
    "Comparator",
    "RegretBound",
    "SubmodularComparator",
    "best_fixed",
    "best_constant_rebalanced_portfolio",
    "greedy_in_hindsight",
    "matroid_greedy_in_hindsight",
    "regret_curve",
    "submodular_regret_curve",
]


class RegretBound(float):
    """A learner's regret bound beside the trivial one, so a bound that says nothing is never silent.

    The value is the bound itself (a ``float``: it compares, formats and adds as before); ``trivial`` is the
    largest regret any play can have under the same declared constants (``T·G·D`` and its analogues, given by each
    learner's ``regret_bound`` docstring), which playing the starting point (uniform weights, the centre of the
    domain) never exceeds. The bound *informs* only below it: ``vacuous`` is ``bound >= trivial``.

    Attributes:
        trivial: the largest possible regret for the learner's declared constants (same unit as the bound).
        source: where the bound comes from (paper, theorem) and how the trivial bound is obtained.
        vacuous: ``True`` when the bound is not below ``trivial`` (it then adds nothing to the trivial bound).
        informative: ``not vacuous``.
        ratio: ``bound / trivial`` (``inf`` when ``trivial == 0`` and the bound is positive).
    """

    trivial: float
    source: str

    def __new__(cls, bound: float, *, trivial: float, source: str = "") -> RegretBound:
        obj = super().__new__(cls, bound)
        obj.trivial = float(trivial)
        obj.source = source
        return obj

    @property
    def vacuous(self) -> bool:
        """Whether the bound is at least the trivial bound (it then says nothing)."""
        return float(self) >= self.trivial

    @property
    def informative(self) -> bool:
        """Whether the bound is below the trivial bound."""
        return not self.vacuous

    @property
    def ratio(self) -> float:
        """``bound / trivial``."""
        if self.trivial > 0:
            return float(self) / self.trivial
        return 0.0 if float(self) == 0.0 else float("inf")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_regret_bound, (float(self), self.trivial, self.source))

    def __repr__(self) -> str:
        state = "vacuous" if self.vacuous else "informative"
        return f"RegretBound({float(self)!r}, trivial={self.trivial!r}, {state})"


def _regret_bound(bound: float, trivial: float, source: str) -> RegretBound:
    return RegretBound(bound, trivial=trivial, source=source)


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


# -- submodular maximisation ----------------------------------------------------------------------------------

APPROXIMATION = 1.0 - 1.0 / np.e
"""``1 − 1/e``: the factor of the regret of online submodular maximisation (Streeter & Golovin 2009)."""


@dataclass(frozen=True)
class SubmodularComparator:
    """The greedy set in hindsight for a submodular family.

    Attributes:
        items: the greedy set, int64 ``(≤ k,)`` in the order greedy added the items.
        total_value: ``Σ_t f_t(items)`` over the family's horizon.
        values: ``Σ_t f_t`` after each greedy addition, float64 ``(len(items),)``.
        upper_bound: ``total_value / (1 − 1/e)`` — an upper bound on ``max_{|S|≤k} Σ_t f_t(S)``
            (Nemhauser, Wolsey & Fisher 1978).
        method: how it was computed.
    """

    items: np.ndarray
    total_value: float
    values: np.ndarray
    upper_bound: float
    method: str


def greedy_in_hindsight(family: _core.SubmodularFamily, k: int) -> SubmodularComparator:
    """Greedy maximisation of ``F(S) = Σ_t f_t(S)`` over ``|S| ≤ k`` with lazy evaluations (Minoux 1978).

    Greedy attains ``F(S_greedy) ≥ (1 − 1/e)·max_{|S|≤k} F(S)`` (Nemhauser, Wolsey & Fisher 1978), so
    ``(1 − 1/e)·F(S_greedy)`` is a lower bound on the ``(1 − 1/e)``-comparator ``(1 − 1/e)·max F`` and
    ``F(S_greedy)`` itself is at least that comparator: regret against ``F(S_greedy)`` upper-bounds the
    ``(1 − 1/e)``-regret. Rows are weighted by their multiplicities, so a bootstrapped horizon of 10⁷ rounds
    costs no more than its distinct rows.

    Raises:
        InvalidInputError: ``k`` outside ``1..|U|``.
    """
    k = _validate.integer("k", k, low=1)
    items, values, evaluations = family.lazy_greedy(k)
    total = float(values[-1]) if len(values) else 0.0
    return SubmodularComparator(
        items=np.asarray(items, dtype=np.int64),
        total_value=total,
        values=np.asarray(values, dtype=np.float64),
        upper_bound=total / APPROXIMATION,
        method=f"lazy greedy ({evaluations} marginal-gain evaluations)",
    )


def matroid_greedy_in_hindsight(family: _core.SubmodularFamily, blocks: Any, capacities: Any) -> SubmodularComparator:
    """Greedy maximisation of ``F(S) = Σ_t f_t(S)`` over the independent sets of a partition matroid (at most
    ``capacities[j]`` items from ``blocks[j]``), for a probabilistic-coverage family.

    Each step adds the item of largest marginal gain ``Σ_r c_r p_{r,a} Π_{b∈S}(1 − p_{r,b})`` (rows ``r`` weighted
    by their multiplicities ``c_r`` in the stream) whose block is not full, while a gain is positive. Greedy on a
    matroid attains ``F(S_greedy) ≥ ½·max F`` (Fisher, Nemhauser & Wolsey 1978), so ``upper_bound`` is
    ``2·total_value``; regret against ``F(S_greedy)`` upper-bounds regret against the best independent set only
    up to that factor (exactly as :func:`greedy_in_hindsight` does with ``1 − 1/e``).

    Raises:
        InvalidInputError: a family that is not probabilistic coverage, blocks that do not partition the ground
            set, capacities of another length or negative.
    """
    if family.kind != "probabilistic_coverage":
        raise InvalidInputError(f"matroid_greedy_in_hindsight needs a probabilistic-coverage family, got {family.kind}")
    n = family.ground_set_size
    blocks = [[int(a) for a in b] for b in blocks]
    caps = [int(c) for c in capacities]
    if len(caps) != len(blocks) or any(c < 0 for c in caps):
        raise InvalidInputError("capacities must have one non-negative entry per block")
    owner = np.full(n, -1, dtype=np.int64)
    for j, b in enumerate(blocks):
        for a in b:
            if not 0 <= a < n or owner[a] != -1:
                raise InvalidInputError(f"blocks must partition 0..{n - 1}")
            owner[a] = j
    if (owner < 0).any():
        raise InvalidInputError(f"blocks must partition 0..{n - 1}")
    P = np.asarray(family.data, dtype=np.float64)
    weight = np.asarray(family.row_counts(), dtype=np.float64)
    state = weight.copy()  # c_r Π_{b∈S}(1 − p_{r,b})
    used = np.zeros(len(blocks), dtype=np.int64)
    items: list[int] = []
    values: list[float] = []
    total = 0.0
    while True:
        gains = state @ P
        allowed = used[owner] < np.asarray(caps)[owner]
        allowed[items] = False
        if not allowed.any():
            break
        gains[~allowed] = -np.inf
        a = int(np.argmax(gains))
        if not gains[a] > 0:
            break
        items.append(a)
        used[owner[a]] += 1
        state = state * (1.0 - P[:, a])
        total = float(weight.sum() - state.sum())
        values.append(total)
    return SubmodularComparator(
        items=np.asarray(items, dtype=np.int64),
        total_value=total,
        values=np.asarray(values, dtype=np.float64),
        upper_bound=2.0 * total,
        method=f"greedy on a partition matroid ({len(blocks)} blocks, capacities {caps})",
    )


def submodular_regret_curve(
    family: _core.SubmodularFamily,
    checkpoints: np.ndarray,
    cumulative_loss: np.ndarray,
    comparator: SubmodularComparator,
    *,
    factor: float = APPROXIMATION,
) -> np.ndarray:
    """``factor·Σ_{s≤t} f_s(S*) − Σ_{s≤t} f_s(S_s)`` at each checkpoint, for a learner whose cumulative loss is
    ``−Σ f_s(S_s)`` (:class:`dponline.PrivateSubmodular`). ``S*`` is the comparator's set; with the default
    ``factor = 1 − 1/e`` and the greedy set this is the ``(1 − 1/e)``-regret against the greedy value — at most
    the ``(1 − 1/e)``-regret of Perez-Salazar & Cummings' Eq. (1) plus ``(1 − 1/e)·(max F − F(S_greedy))``;
    ``factor=1`` gives the plain regret against ``S*``. Shape ``(len(checkpoints),)``."""
    base = family.cumulative_at([int(a) for a in comparator.items], [int(c) for c in checkpoints])
    return factor * base + np.asarray(cumulative_loss, dtype=np.float64)
