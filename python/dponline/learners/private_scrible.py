"""PrivateSCRiBLe (Agarwal & Singh 2017, Theorem 4.5): ε-DP bandit linear optimisation on balls, boxes and the
simplex."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _core, _validate
from .._options import Sampler
from .._seed import SeedLike
from ..errors import InvalidInputError
from ..regret import RegretBound
from ._base import DomainLearner, FeedbackRelease, clipped_count

__all__ = ["PrivateSCRiBLe"]

_SOURCE = (
    "Agarwal-Singh 2017 Theorem 4.5 / Lemma 4.2 (Laplace(2B/eps) on each round's feedback in [-B, B]; one release "
    "per round)"
)


class PrivateSCRiBLe(FeedbackRelease, DomainLearner):
    """ε-differentially private bandit linear optimisation (SCRiBLe with Laplace-noised feedback).

    Source: Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017), Theorem 4.5:
    Algorithm 4 (release ``f̂_t = f_t + Lap(λ)``) around SCRiBLe (Abernethy, Hazan & Rakhlin 2012). Each round:
    ``x_t = argmin η⟨L̂, x⟩ + R(x)`` for a self-concordant barrier ``R``; pick an eigenvector ``e_i`` of
    ``∇²R(x_t)`` (eigenvalue ``λ_i``) uniformly and a sign ``s``; play ``y_t = x_t + s λ_i^{−1/2} e_i`` (on the
    Dikin ellipsoid, hence in the domain); observe ``f_t = ⟨ℓ_t, y_t⟩`` clipped to ``[−B, B]``; add
    ``n f̂_t s λ_i^{1/2} e_i`` to ``L̂``, where ``n`` is the number of eigen-directions, i.e. the dimension of the
    domain's affine hull (``params["estimator_dim"]``). Averaged over ``(i, s)`` the estimate is ``Π ℓ_t``, with
    ``Π`` the projection onto the hull's directions: unbiased for every loss difference ``⟨ℓ_t, x − x'⟩`` on
    the domain.

    Domains (``N`` = length of the points):

    * :class:`~dponline.domains.Box` ``[l, u]``: ``R = −Σ ln(u_i − x_i) + ln(x_i − l_i)``, ν = 2N, n = N;
      closed-form argmin, diagonal Hessian.
    * :class:`~dponline.domains.L2Ball` of radius ``r``: ``R = −ln(r² − ‖x‖²)``, ν = 1, n = N; closed forms.
    * :class:`~dponline.domains.Simplex`: ``R = −Σ ln x_i`` on the affine hull ``{Σx = 1}``, ν = N, n = N − 1.
      The argmin is ``x_i = 1/(η L̂_i + μ)`` with ``μ`` found by a monotone Newton iteration (≤ 200 steps, else
      :class:`~dponline.ConvergenceError`; about ``log₂ N + 6`` are needed). The Hessian on the hull,
      ``Π diag(1/x²) Π``, is diagonal plus rank one: the drawn eigenpair is computed alone from its secular
      equation (bisection; equal diagonal values deflate to Helmert vectors), ``O(N log N)`` plus ``O(N)`` per
      halving (about 50-100) per round — no ``O(N³)`` dense eigen-solver. Every played point satisfies
      ``|y_i − x_i| ≤ x_i`` and ``Σy = 1`` (the unit Dikin ellipsoid lies in the simplex); nothing is projected.

    The formulas are in the core module docs (``rust/dponline-core/src/learners/private_scrible.rs``).

    Privacy: ``λ = 2B/ε`` — replacing one round's loss changes its clipped feedback by at most ``2B``, and every
    other computation uses the data only through the releases (Lemma 4.2), so the played points are ε-DP per
    round's loss. A seeded learner is private only while its seed is secret. ``epsilon=None``: SCRiBLe.

    Step size and bound (``n`` = ``estimator_dim``): ``η = sqrt(ν ln T / (2 n² B'² T))`` with
    ``B' = B + 2λ ln T`` (the feedback range with probability ``≥ 1 − 1/T``), which balances the SCRiBLe bound
    ``ν ln T/η + 2η n² B'² T`` (Abernethy-Hazan-Rakhlin 2012, Theorem 5.1, with ``B'`` for the loss range);
    :meth:`regret_bound` adds ``B`` for the complement of the noise event. These constants are this library's
    derivation (the paper's text lost them).

    Args:
        domain: a ``Box``, an ``L2Ball`` or a ``Simplex``.
        horizon: ``T >= 1``.
        epsilon: ε > 0, or ``None``.
        loss_bound: ``B > 0``, a declared bound on ``|⟨ℓ_t, y⟩|`` over the domain (feedback clipped beyond).
        strict: raise on ``|loss| > B`` instead of clipping.
        sampler: ``"exact"`` (default) or ``"floating-point"``, as :class:`dponline.PrivateEXP3` with the feedback
            range ``[−B, B]`` (sensitivity ``2B``): exact, ``f̂_t = (round(f_t/γ) + Z_t)·γ``, ``Z_t ~ DLap(t)``,
            ``t = ⌈(⌈2B/γ⌉ + 1)/ε⌉`` — ε-DP for the released floats; the eigen-direction and sign draws and the
            barrier computations are floating-point post-processing with the learner's own randomness.
        seed, secure: as :class:`dponline.PrivateEXP3`.

    Raises:
        InvalidInputError: bad arguments or another domain; a ball radius or box half-width below 1e-150 (the
            barrier's Hessian, of order ``1/width²``, would leave float64: rescale the domain).
        ConvergenceError: the simplex argmin or eigenvalue iteration reached its cap (not expected); the learner
            is then unchanged (the round's noise draw is consumed, never used).

    Example:
        >>> import dponline
        >>> from dponline.domains import L2Ball
        >>> learner = dponline.PrivateSCRiBLe(L2Ball(3, 1.0), horizon=100, epsilon=1.0, loss_bound=1.0, seed=0)
        >>> y = learner.ask(); learner.tell(float(y @ [0.3, -0.2, 0.1]))
        >>> learner.t
        1
    """

    _core_type = _core.PrivateSCRiBLe

    def __init__(
        self,
        domain: _core.Domain,
        *,
        horizon: int,
        epsilon: float | None,
        loss_bound: float,
        strict: bool = False,
        sampler: Sampler = "exact",
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        if not isinstance(domain, _core.Domain) or domain.kind not in ("Box", "L2Ball", "Simplex"):
            raise InvalidInputError(f"domain must be a dponline.domains Box, L2Ball or Simplex, got {domain!r}")
        self._build_release(
            domain, horizon, epsilon, loss_bound, strict, sampler, seed, secure, sensitivity="2B", source=_SOURCE
        )
        self._domain = domain

    def ask(self) -> np.ndarray:
        """The point ``y_t`` to play, shape ``(n,)``; always in the domain. Asking again before :meth:`tell`
        returns the same point.

        Raises:
            HorizonExhaustedError: after ``horizon`` rounds.
        """
        return self._core.ask()

    def tell(self, loss: float) -> None:
        """Report ``⟨ℓ_t, y_t⟩`` (bandit feedback).

        Raises:
            ProtocolError: without a preceding :meth:`ask`.
            InvalidInputError: a bad value, or ``|loss| > loss_bound`` with ``strict=True``; the learner is then
                unchanged.
            NonFiniteError: a NaN or infinite loss; the learner is then unchanged.
        """
        self._core.tell(_validate.real("loss", loss))

    def _final_point(self) -> np.ndarray:
        return self._core.center

    @property
    def params(self) -> dict[str, Any]:
        """``eta``, ``nu``, ``noise_scale`` (λ), ``noisy_range`` (B'), ``loss_bound``, ``regret_bound``, ``dim`` (N),
        ``estimator_dim`` (n)."""
        return dict(self._core.params)

    clipped = clipped_count("Feedback values clipped to ``[−B, B]`` so far.")

    def regret_bound(self) -> RegretBound:
        """``ν ln T/η + 2η n² B'² T + B`` (see the class docs), beside the trivial bound ``2·B·T``
        (``RegretBound.trivial``: ``|⟨ℓ_t, y⟩| ≤ B`` on the domain) and whether it is below it."""
        p = self._core.params
        return RegretBound(
            float(p["regret_bound"]),
            trivial=2.0 * float(p["loss_bound"]) * self.horizon,
            source="Agarwal-Singh 2017 Theorem 4.5 (Abernethy-Hazan-Rakhlin 2012 Theorem 5.1 constants); "
            "trivial: 2*B*T",
        )
