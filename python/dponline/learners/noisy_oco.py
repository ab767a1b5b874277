"""NoisyOCO (Ene, Nguyen & Vladu 2021, Algorithm 2): private projection-free online convex optimisation with full
information."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .. import _core, _validate, privacy
from .._options import Calibration, Mechanism, Sampler
from .._seed import SeedLike
from ..domains import require_native
from ..errors import InvalidInputError
from ..privacy import PrivacyGuarantee
from ..regret import RegretBound
from ._base import DomainLearner, MechanismArgs, PrefixSumLearner, clipped_count
from ._tree_noise import path_noise

__all__ = ["NoisyOCO", "noisy_oco_noise"]

_SOURCE = "Ene-Nguyen-Vladu 2021 Theorem 2.3 (TreeBasedAgg) on NoisyOCO's gradients (Algorithm 2 line 5)"


def noisy_oco_noise(
    params: dict[str, Any],
    epsilon: float,
    delta: float,
    calibration: Calibration | None,
    *,
    mechanism: Mechanism = "tree",
    sampler: Sampler = "exact",
    randomness: str = "",
) -> tuple[str, float, PrivacyGuarantee]:
    """Per-draw noise of NoisyOCO's prefix-sum mechanism for an ``(ε, δ)`` target.

    Neighbouring streams differ in one round's loss function. Only that round's input to the mechanism changes
    (later gradients are functions of earlier releases, so the argument of :class:`dponline.DPFTRL` for adaptive
    inputs applies), and both gradients are clipped to ``‖g‖₂ ≤ L``: the input moves by at most
    ``2L`` in L2 (``params["sensitivity_l2"]``) and ``2√n·L`` in L1 (``params["sensitivity_l1"]``).

    * ``δ = 0`` — Laplace noise, L1 sensitivity ``2√n·L``; ``δ > 0`` — Gaussian noise, L2 sensitivity ``2L``.
    * ``calibration=None`` — the tightest proved calibration: on the exact path (``sampler="exact"``) the discrete
      Laplace's exact ε or the discrete Gaussian through zCDP with the grid rounding
      (:func:`~dponline.learners._base.exact_learner_noise`); on the floating-point path the exact Laplace tree
      (:func:`dponline.privacy.tree_laplace_scale`) or the analytic Gaussian (``"analytic"``).
    * ``calibration="paper"`` — ENV Theorem 2.3's constants (``λ ≥ Y₁ log T/ε``, ``σ ≥ (Y₂/ε) log T log(log T/δ)``,
      read by :func:`dponline.privacy.tree_laplace_scale` / :func:`dponline.privacy.tree_gaussian_sigma` with the
      exact level count and the replacement sensitivity), never below what the exact proof needs (padded tree
      only).
    * ``"analytic"`` / ``"zcdp"`` — as :func:`dponline.privacy.tree_gaussian_sigma` (Gaussian); ``"analytic"`` is
      refused on the exact path with Gaussian noise (it does not bound the discrete Gaussian).

    Another ``mechanism`` (``"honaker"``, ``"blt"``) is calibrated exactly from its encoder's column norms
    (:func:`~dponline.learners._base.mechanism_noise` on the floating-point path; the exact path as above).

    Args:
        params: ``dponline._core.NoisyOCOParams(...).as_dict()`` of the learner (declared constants only).
        epsilon: ε > 0. delta: δ in [0, 1).
        calibration: ``None``, ``"paper"``, ``"analytic"`` or ``"zcdp"``.
        mechanism: ``"tree"``, ``"honaker"`` or ``"blt"``. sampler: ``"exact"`` or ``"floating-point"``.
        randomness: ``"seed"`` or ``"secure"`` (:func:`dponline.privacy.randomness_of`).

    Returns:
        ``(noise, scale, guarantee)``: ``"laplace"`` or ``"gaussian"``, the per-draw scale, the guarantee.

    Raises:
        InvalidInputError: ``"paper"`` with a mechanism other than the tree, ``"zcdp"`` with Laplace noise,
            ``"analytic"`` with exact Gaussian noise, arguments out of range.
    """
    noise_name = "laplace" if delta == 0.0 else "gaussian"
    horizon, dim = int(params["horizon"]), int(params["dim"])
    sensitivity = float(params["sensitivity_l1" if noise_name == "laplace" else "sensitivity_l2"])
    if calibration == "paper" and mechanism != "tree":
        raise InvalidInputError(
            f"calibration='paper' is not available with mechanism={mechanism!r}: ENV Theorem 2.3 covers only the "
            "padded tree; leave calibration unset (the tightest proved calibration)"
        )
    if noise_name == "laplace" and calibration == "zcdp":
        raise InvalidInputError("calibration='zcdp' needs Gaussian noise (delta > 0)")
    if sampler == "exact" or mechanism != "tree":
        l1, l2 = float(params["sensitivity_l1"]), float(params["sensitivity_l2"])
        exact = sampler == "exact"
        noise_name, scale, guarantee = path_noise(
            mechanism,
            calibration,
            epsilon,
            delta,
            l1,
            l2,
            horizon,
            dim,
            exact=exact,
            source=_SOURCE,
            randomness=randomness,
        )
        return noise_name, scale, guarantee if exact else dataclasses.replace(guarantee, sampler="floating-point")
    levels = privacy.levels_touched(horizon)
    if noise_name == "laplace":
        scale = privacy.tree_laplace_scale(epsilon, sensitivity, horizon)
        notes = f"lambda = 2 sqrt(n) L levels/eps = {scale:.6g} (n={dim}, levels={levels}, T={horizon})"
        guarantee = PrivacyGuarantee(
            epsilon=float(epsilon), delta=0.0, source=_SOURCE, randomness=randomness, notes=notes
        )
    else:
        scale = privacy.tree_gaussian_sigma(epsilon, delta, sensitivity, horizon, calibration or "analytic")
        guarantee = PrivacyGuarantee(
            epsilon=float(epsilon),
            delta=float(delta),
            source=f"{_SOURCE}, calibration={calibration or 'analytic'!r}",
            randomness=randomness,
            notes=f"sigma = {scale:.6g} (2L = {sensitivity:g} in L2, levels={levels}, T={horizon})",
            noise_multiplier=scale / (sensitivity * float(np.sqrt(levels))),
        )
    return noise_name, scale, dataclasses.replace(guarantee, sampler="floating-point")


class NoisyOCO(PrefixSumLearner, DomainLearner):
    """Differentially private online convex optimisation with full information and only a linear minimisation
    oracle: NoisyOCO (Ene-Nguyễn-Vladu Algorithm 2) on any domain.

    Source: Ene, Nguyen & Vladu, "Projection-Free Bandit Optimization with Privacy Guarantees" (AAAI 2021),
    Algorithm 2 (NoisyOCO) and Lemma 4.1, with the ``NoisyMap`` of their Algorithm 1 (conditional gradient on the
    tree-aggregated gradient sums, Lemmas C.3-C.4) and full-information ``NoisyGrad``. Per round ``t``:

    * line 3: ``x̃_t = NoisyMap(−η s_{t−1})`` — ``lmo_calls`` Frank-Wolfe steps (exact line search, warm-started)
      towards ``Π_X(c − η s̃_{t−1})``, where ``s̃_{t−1}`` is the mechanism's private release of the gradient sum
      and ``c`` the domain's interior point (ENV's mirror map ``½‖x‖²`` centred at ``c``);
    * line 4: output ``x̃_t`` (:meth:`ask`) and query ``g̃_t = ∇f_t(x̃_t)`` (:meth:`tell`), clipped to
      ``‖g‖₂ ≤ lipschitz``;
    * line 5: ``s_t = s_{t−1} + g̃_t``, released as ``s̃_t`` by the padded tree (ENV's TreeBasedAgg) or another
      mechanism of :mod:`dponline.aggregation`.

    Every action is a convex combination of LMO vertices and the interior point, hence in the domain.

    Step size: ``learning_rate`` or, by default, ``η = sqrt(D_ω² / (T L²/2 + L T μ̄))`` with ``D_ω² = D²/2``
    and ``μ̄`` the mean bound on the release error ``E‖s̃_t − s_t‖₂`` (``sqrt(n·v)`` for a release of
    per-coordinate variance ``v``, plus the exact path's grid rounding): the minimiser of the bound below, as the
    proof of ENV Lemma 3.1 tunes ``η`` with the noise inside ``γ``. Without noise it is Algorithm 2 line 1,
    ``D/(L√T)`` (``κ = L``); under heavy noise ``η`` shrinks and the learner stays near ``c``.

    Regret (:meth:`regret_bound`; expectation over the noise, any sequence of convex losses with
    ``‖∇f_t‖₂ ≤ L``, even adaptive): Lemma 4.1's proof with ``κ = L`` and
    ``γ_t = 2D/√(k+2) + η E‖s̃_{t−1} − s_{t−1}‖₂`` gives ::

        D²/(2η) + η T L²/2 + η L Σ_t E‖s̃_t − s_t‖₂ + T L · 2D/√(k+2)

    (mirror, stability, noise, Frank-Wolfe terms); any play's regret is at most the trivial ``T L D``, which
    :meth:`regret_bound` reports beside it (``RegretBound``). ``k = lmo_calls``: the
    Frank-Wolfe term is linear in ``T`` unless ``k`` grows like ``T`` (the price of a projection-free map without
    batching; :class:`PrivateBandit` batches instead). With the padded tree and ``k ≳ T`` the bound is
    ``O(D √(T L (L + μ̄)))``, ``μ̄ = Θ(√(n log T)·σ)``.

    Privacy: the sequence of actions is ``(ε, δ)``-DP for streams that differ in one round's loss function (the
    unit: one round), :attr:`privacy`, calibrated by :func:`noisy_oco_noise` — Laplace noise with L1 sensitivity
    ``2√n·L`` when ``δ = 0``, Gaussian with L2 sensitivity ``2L`` when ``δ > 0``. The privacy needs only the
    declared ``lipschitz`` (gradients beyond it are clipped, which is why they are not refused unless
    ``strict=True``: raising would itself leak). A seeded learner is private only while its seed is secret.
    ``epsilon=None`` is the non-private NoisyOCO (projection-free dual averaging) on the same code path.

    Args:
        domain: a :mod:`dponline.domains` domain of dimension ``n`` (any: only its LMO, diameter and interior
            point are used).
        horizon: ``T >= 1``.
        epsilon: ε > 0, or ``None`` (non-private).
        delta: δ in [0, 1); 0 = Laplace noise, > 0 = Gaussian noise.
        lipschitz: ``L > 0``, the declared bound on ``‖∇f_t‖₂`` (Euclidean), in loss units per unit of ``x``.
        learning_rate: ``η > 0`` (default above).
        lmo_calls: Frank-Wolfe LMO calls per round, 1 to 10⁵ (default 4).
        calibration: ``None`` (the tightest proved), ``"paper"`` (ENV Theorem 2.3), ``"analytic"`` or ``"zcdp"``
            (:func:`noisy_oco_noise`).
        mechanism: ``"tree"`` (default, ENV's TreeBasedAgg), ``"honaker"`` or ``"blt"``.
        strict: raise on ``‖g‖₂ > lipschitz`` instead of clipping.
        sampler: ``"exact"`` (default; discrete noise on a power-of-two grid) or ``"floating-point"``; ``None``
            picks the default for the mechanism (:func:`~dponline.learners._base.resolve_sampler`).
        secure: ``True`` only asserts the default (OS-keyed noise, re-keyed on copy, fork and unpickling; ``seed``
            must then be ``None``).
        seed: ``None``, int, ``SeedSequence`` or ``Generator``.

    Raises:
        InvalidInputError: bad arguments (the message names the argument), a calibration the mechanism or
            sampler does not support, a noise scale beyond 1e150.

    Example:
        >>> import dponline
        >>> from dponline.domains import BirkhoffPolytope
        >>> learner = dponline.NoisyOCO(BirkhoffPolytope(3), horizon=100, epsilon=1.0, lipschitz=3.0, seed=0)
        >>> x = learner.ask(); learner.tell(np.arange(9.0) / 9)
        >>> x.shape, learner.t
        ((9,), 1)
    """

    _core_type = _core.NoisyOCO

    def __init__(
        self,
        domain: _core.Domain,
        *,
        horizon: int,
        epsilon: float | None,
        lipschitz: float,
        delta: float = 0.0,
        learning_rate: float | None = None,
        lmo_calls: int = 4,
        calibration: Calibration | None = None,
        mechanism: Mechanism = "tree",
        strict: bool = False,
        sampler: Sampler | None = None,
        secure: bool = False,
        seed: SeedLike = None,
    ) -> None:
        domain = require_native(domain, "NoisyOCO")
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
        lipschitz = _validate.real("lipschitz", lipschitz, low=0.0, low_open=True)
        learning_rate = _validate.optional_real("learning_rate", learning_rate, low=0.0, low_open=True)
        lmo_calls = _validate.integer("lmo_calls", lmo_calls, low=1, high=100_000)
        args = MechanismArgs.validated(epsilon, delta, calibration, mechanism, sampler, strict, secure, seed)
        epsilon, delta = args.epsilon, args.delta
        constants = _core.NoisyOCOParams(domain, horizon, lipschitz, learning_rate=learning_rate, lmo_calls=lmo_calls)
        if epsilon is None:
            noise_name, scale, guarantee = args.noise, 0.0, None
        else:
            noise_name, scale, guarantee = noisy_oco_noise(
                constants.as_dict(),
                epsilon,
                delta,
                args.calibration,
                mechanism=args.mechanism,
                sampler=args.sampler,
                randomness=args.randomness,
            )
            if not scale <= _core.MAX_NOISE_SCALE:
                raise InvalidInputError(
                    f"epsilon={epsilon!r}, delta={delta!r}, lipschitz={lipschitz!r} and horizon={horizon} need a "
                    f"noise scale of {scale:.3g}, beyond the largest supported ({_core.MAX_NOISE_SCALE:g}); rescale "
                    "the losses"
                )
        core = _core.NoisyOCO(constants, noise=noise_name, scale=scale, **args.native())
        self._adopt(core, args, domain=domain, horizon=horizon, privacy=guarantee)

    # -- protocol ---------------------------------------------------------------------------------------
    def ask(self) -> np.ndarray:
        """The action ``x̃_t`` (Algorithm 2 line 4), float64 of shape ``(n,)``, in the domain. Asking again before
        :meth:`tell` returns the same point.

        Raises:
            HorizonExhaustedError: after ``horizon`` rounds. StateError: used by another thread.
        """
        return self._core.ask()

    def tell(self, gradient: Any) -> None:
        """Report ``∇f_t(x̃_t)`` (any subgradient of the round's convex loss at the asked point; for a linear loss
        ``⟨c, x⟩``, the vector ``c``), array-like of shape ``(n,)``; clipped to ``‖g‖₂ ≤ lipschitz``.

        Raises:
            ProtocolError: without a preceding :meth:`ask`.
            InvalidInputError: wrong shape, non-numeric, or ``‖g‖₂ > lipschitz`` with ``strict=True``.
            NonFiniteError: NaN or inf. In every case the learner is unchanged.
        """
        self._core.tell(_validate.real_array("gradient", gradient, (self._core.params["dim"],)))

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        """``eta`` (and ``eta_rule``), ``lipschitz``, ``diameter``, ``mirror_range`` (``D_ω² = D²/2``),
        ``lmo_calls``, ``frank_wolfe_error`` (``2D/√(k+2)``), ``noise_norm`` (``μ̄``), the sensitivities, the noise
        (``noise``, ``noise_scale``), ``mechanism`` and ``grid`` (the exact path's step, or ``None``)."""
        return self._native_params("mechanism", "grid")

    clipped = clipped_count("Number of gradients clipped to ``lipschitz`` so far.")

    @property
    def noisy_cumulative_gradient(self) -> np.ndarray:
        """The latest release ``s̃_t`` of the gradient sum (``s̃_0`` before any data), float64 ``(n,)``."""
        return self._core.noisy_cumulative_gradient

    def release_variance(self, t: int) -> float:
        """Exact per-coordinate noise variance of the release ``s̃_t`` (``0 <= t <= horizon``).

        Raises:
            InvalidInputError: ``t`` out of range."""
        return float(self._core.release_variance(_validate.integer("t", t, low=0, high=self.horizon)))

    def regret_bound_terms(self) -> dict[str, float]:
        """The terms of :meth:`regret_bound`: ``mirror`` (``D²/(2η)``), ``stability`` (``ηTL²/2``), ``noise``
        (``ηL·Σ_t E‖s̃_t − s_t‖₂``, exact per-release variances, plus the grid rounding on the exact path),
        ``frank_wolfe`` (``TL·2D/√(k+2)``), their sum ``total``, and ``trivial`` (``TLD``).

        Raises:
            InvalidInputError: a mechanism other than the padded tree with ``horizon > 2**24`` (its releases are
                summed one by one)."""
        return dict(self._core.regret_bound_terms())

    def regret_bound(self) -> RegretBound:
        """Expected-regret bound, in loss units (ENV Lemma 4.1's proof for Algorithm 2 with full information; see
        the class docs): ``mirror + stability + noise + frank_wolfe`` of :meth:`regret_bound_terms`, beside the
        trivial bound ``T·L·D`` (``RegretBound.trivial``: ``⟨g_t, x̃_t − x*⟩ ≤ L·D`` per round);
        ``RegretBound.vacuous`` says when it is not below it (e.g. with few ``lmo_calls``: the Frank-Wolfe term).

        Raises:
            InvalidInputError: as :meth:`regret_bound_terms`, or a bound that overflows float64."""
        terms = self._core.regret_bound_terms()
        if not math.isfinite(terms["total"]):
            raise InvalidInputError(
                f"regret_bound: the bound overflows float64 ({terms}); rescale the losses or the domain"
            )
        return RegretBound(
            terms["total"],
            trivial=terms["trivial"],
            source="Ene-Nguyen-Vladu 2021 Lemma 4.1 (proof, Appendix B) with kappa = L, Lemmas C.3-C.4 "
            "(Frank-Wolfe error 2D/sqrt(k+2), Jaggi 2013); trivial: T*L*D",
        )
