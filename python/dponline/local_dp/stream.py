"""A stream of data providers, each with its features, label and privacy budgets, for native runs."""

from __future__ import annotations

from typing import Any, Literal, get_args

import numpy as np

from .. import _core, _state, _validate
from .._options import Sampler
from ..errors import InvalidInputError
from ..privacy import PrivacyGuarantee
from .randomizer import (
    _MECHANISMS,
    LocalLaplaceRandomizer,
    Mechanism,
    _budget_matrix,
    _float_array,
    resolve_sampler,
)

__all__ = ["LocalStream"]

Loss = Literal["logistic", "squared", "absolute"]
_LOSSES: tuple[Loss, ...] = get_args(Loss)


class LocalStream(_state.NativeState):
    """A stream of data providers for the local-DP learners: round ``t`` is provider ``t`` with features
    ``x_t``, label ``y_t`` and its own privacy budgets.

    In a native :meth:`LocalLearner.run` round ``t`` plays ``w_t``, suffers ``ℓ(⟨w_t, x_t⟩, y_t)`` and the provider
    releases ``g̃_t = clip_G(ℓ'(⟨w_t, x_t⟩, y_t) x_t) + ξ_t`` with noise of its budgets (the learner's ``seed``
    keys the simulated providers' noise).

    Args:
        features: ``(n, d)`` float64, finite.
        labels: ``(n,)`` float64, finite (``±1`` for the logistic loss).
        loss: ``"logistic"`` (``ln(1 + e^{−y p})``), ``"squared"`` (``½(p − y)²``) or ``"absolute"``
            (``|p − y|``).
        budgets: ``mechanism="laplace"``: per-round per-coordinate ``τ_{t,j}``, broadcastable to ``(n, d)``;
            ``"l2"``: ``ε_t``, broadcastable to ``(n,)``. Every entry ``> 0``; ``inf`` = no noise (default).
        mechanism: ``"laplace"`` (Lemma 1) or ``"l2"`` (§4's ``ρ ∝ exp(−ε‖z‖/2)``).
        sampler: how the simulated providers draw their noise, as :class:`LocalLaplaceRandomizer`: ``None``
            (default: ``"exact"`` for ``"laplace"``, ``"floating-point"`` for ``"l2"``), ``"exact"`` or
            ``"floating-point"``.

    Raises:
        InvalidInputError: shapes, an unknown loss/mechanism/sampler, ``sampler="exact"`` with ``"l2"``, budgets
            ``<= 0``.
        NonFiniteError: NaN/inf features or labels, NaN budgets.
    """

    _core_type = _core.LocalStream

    def __init__(
        self,
        features: Any,
        labels: Any,
        *,
        loss: Loss,
        budgets: Any = np.inf,
        mechanism: Mechanism = "laplace",
        sampler: Sampler | None = None,
    ) -> None:
        X = _float_array("features", features)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise InvalidInputError(f"features must be a non-empty 2-D array (n, d), got shape {X.shape}")
        X = _validate.real_array("features", X, X.shape)
        y = _validate.real_array("labels", labels, (X.shape[0],))
        loss = _validate.option("loss", loss, _LOSSES)
        mechanism = _validate.option("mechanism", mechanism, _MECHANISMS)
        sampler = resolve_sampler(mechanism, sampler)
        per = X.shape[1] if mechanism == "laplace" else 1
        taus = _budget_matrix(budgets, X.shape[0], per)
        self._core = _core.LocalStream(
            np.ascontiguousarray(X),
            np.ascontiguousarray(y[:, None]),
            taus,
            loss=loss,
            mechanism=mechanism,
            sampler=sampler,
        )
        self._features, self._labels, self._budgets = X, y, taus
        for a in (self._features, self._labels, self._budgets):
            a.setflags(write=False)

    @property
    def horizon(self) -> int:
        """Rounds ``n``."""
        return int(self._core.horizon)

    @property
    def dim(self) -> int:
        """Feature dimension ``d``."""
        return int(self._core.dim)

    @property
    def loss(self) -> str:
        """The loss name."""
        return str(self._core.loss)

    @property
    def mechanism(self) -> str:
        """``"laplace"`` or ``"l2"``."""
        return str(self._core.mechanism)

    @property
    def sampler(self) -> str:
        """``"exact"`` or ``"floating-point"``: how the providers' noise is drawn."""
        return str(self._core.sampler)

    @property
    def features(self) -> np.ndarray:
        """``(n, d)``, read-only."""
        return self._features

    @property
    def labels(self) -> np.ndarray:
        """``(n,)``, read-only."""
        return self._labels

    @property
    def budgets(self) -> np.ndarray:
        """``(n, d)`` (``"laplace"``) or ``(n, 1)`` (``"l2"``), read-only."""
        return self._budgets

    def epsilons(self) -> np.ndarray:
        """``ε_t`` spent by each provider: ``Σ_j τ_{t,j}`` (Lemma 1) or the ℓ2 budget; ``inf`` = no privacy for
        at least one coordinate. Shape ``(n,)``."""
        with np.errstate(over="ignore"):  # finite budgets whose sum overflows: inf, i.e. no privacy
            return self._budgets.sum(axis=1)

    def privacy(self, t: int, G: float) -> PrivacyGuarantee | None:
        """Provider ``t``'s local guarantee when gradients are clipped to ``G`` (the learner's declared bound);
        ``None`` if it adds no noise. See :meth:`LocalLaplaceRandomizer.privacy`."""
        t = _validate.integer("t", t, low=0, high=self.horizon - 1)
        r = LocalLaplaceRandomizer(
            self.dim,
            bound=G,
            mechanism=self.mechanism,  # type: ignore[arg-type]
            sampler=self.sampler,  # type: ignore[arg-type]
        )
        return r.privacy(self._budgets[t] if self.mechanism == "laplace" else self._budgets[t, 0])

    def cumulative_loss(self, u: Any, checkpoints: Any = None) -> np.ndarray:
        """``Σ_{t<n} ℓ_t(u)`` of a fixed comparator at each checkpoint ``n`` (default: the whole stream)."""
        u = _validate.real_array("u", u, (self.dim,))
        if checkpoints is None:
            marks = [self.horizon]
        elif isinstance(checkpoints, (str, bytes)) or not hasattr(checkpoints, "__iter__"):
            raise InvalidInputError(f"checkpoints must be a list of round numbers, got {_validate._shown(checkpoints)}")
        else:
            marks = [_validate.integer("checkpoints", c, low=0, high=self.horizon) for c in checkpoints]
        return self._core.cumulative_at(np.ascontiguousarray(u), marks)

    def subgradient(self, t: int, w: Any) -> tuple[float, np.ndarray]:
        """``(ℓ_t(w), ℓ'(⟨w, x_t⟩, y_t)·x_t)`` — the provider's exact (unclipped, noise-free) subgradient."""
        w = _validate.real_array("w", w, (self.dim,))
        t = _validate.integer("t", t, low=0, high=self.horizon - 1)
        return self._core.subgradient(t, np.ascontiguousarray(w))

    def __repr__(self) -> str:
        return (
            f"LocalStream(n={self.horizon}, d={self.dim}, loss={self.loss!r}, mechanism={self.mechanism!r}, "
            f"sampler={self.sampler!r})"
        )
