"""DPFTRL (Agarwal & Singh 2017, Algorithm 1): follow the regularised leader on private prefix sums."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

import numpy as np

from .. import _core, _validate, privacy
from .._options import Calibration, Mechanism, Sampler
from .._seed import SeedLike
from ..domains import require_native
from ..errors import InvalidInputError
from ..privacy import PrivacyGuarantee
from ..regret import RegretBound
from ._base import DomainLearner, MechanismArgs, PrefixSumLearner, clipped_count
from ._tree_noise import (
    _TOP_UP_NOTE,
    _TOP_UP_SOURCE,
    _check_top_up,
    _exact_tree_noise,
    _finite_multiplier,
    _learner_noise,
    _release_max_sd,
    _release_rms,
    _require_identical_releases,
    dp_ftrl_noise,
    noise_width,
)

__all__ = ["DPFTPL", "DPFTRL", "dp_ftrl_noise", "noise_width"]


def _default_mechanism(
    mechanism: Mechanism | None, epsilon: float | None, delta: Any, calibration: Calibration | None
) -> Mechanism:
    """DPFTRL's ``mechanism=None``: the prefix-sum mechanism with the lowest noise among those for which a regret
    bound is proved (every one, by the Lipschitz bound): ``"blt"`` for Gaussian noise (``δ > 0``; its releases
    are nested, so its step size comes from the perturbation bound) and ``"honaker"`` for Laplace noise
    (``δ = 0``; BLT's L1 column norm makes its Laplace noise larger than the trees'). ``"tree"`` without noise
    (``epsilon=None``: the mechanism adds nothing, and non-private FTRL stays on the plain running sum) and under
    ``calibration="paper"`` (the paper's constants are for its padded tree)."""
    if mechanism is not None:
        return mechanism
    if epsilon is None or calibration == "paper":
        return "tree"
    try:
        positive = float(delta) > 0.0
    except (TypeError, ValueError):  # refused by the validation that follows, naming delta
        positive = False
    return "blt" if positive else "honaker"


class DPFTRL(PrefixSumLearner, DomainLearner):
    """Differentially private follow-the-regularised-leader with full information (experts, OLO, OCO).

    Source: Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017), Algorithm 1:
    ``x_t = argmin_{x∈X} η⟨x, L̃_{t−1}⟩ + R(x)``, where ``L̃_t`` is a private prefix sum of the loss vectors. The
    paper releases it with its padded tree (their Algorithm 2: every release carries exactly ``max(1, ⌈log₂T⌉)``
    noise draws per coordinate, ``L̃_0`` included; ``mechanism="tree"``); by default dponline uses the
    lowest-noise mechanism with a proved regret bound — exact BLT for Gaussian noise, the Honaker tree for
    Laplace noise (see Mechanisms).

    The argmin (``method``):

    * ``regularizer="entropy"`` (default on the :class:`~dponline.domains.Simplex`): ``x = softmax(−η L̃)`` —
      exponential weights / Hedge, computed in log-domain (never overflows);
    * ``regularizer="euclidean"`` (``R = ½‖x‖²``, default elsewhere): the exact Euclidean projection of
      ``−η L̃`` on the L2 ball (radial scaling), a box (clamping) and the simplex (sort-based, ``O(n log n)``;
      Held-Wolfe-Crowder 1974, Duchi et al. 2008); on every other domain (L1 ball, matroids, path polytopes)
      Frank-Wolfe with exact line search, ``lmo_calls`` LMO calls per round warm-started from the previous
      action.

    Step size: ``learning_rate`` or, by default, for nested releases (the padded tree, a top-up, and BLT with
    Gaussian noise — the default for ``δ > 0``; see Regret bounds) the noise-aware
    ``η = sqrt(D_R / (T G² + c·v + G·O))`` for the
    entropy (at most ``1/(√2 b)`` for Laplace(b) node noise) and ``η = sqrt(D_R / (T G² + n·v + G·O))`` for
    ``½‖x‖²``, where ``v`` is the per-coordinate variance of the last release's noise, ``c`` is ½ (Gaussian) or
    1 (Laplace) and ``O`` the exact path's rounding (``params["offset_sum"]``, 0 on the float path): the
    minimisers of the perturbation bound (:meth:`regret_bound_terms`, ``perturbation``); for the Honaker tree
    (the default for ``δ = 0``) and BLT with Laplace noise, the minimiser of the Lipschitz bound. While the noise
    dominates, ``η`` shrinks and the learner stays near the uniform weights / the centre instead of following
    the noise; without noise it is ``sqrt(D_R / (T G²))``, the minimiser of the FTRL bound ``D_R/η + η T G²``
    (Shalev-Shwartz 2012, Theorem 2.11) — the tuning of Agarwal-Singh Corollary 3.2 for
    experts (``D_R = ln n``) and its sphere/cube analogues (``D_R = r²/2`` on the ball of radius ``r``,
    ``½Σ max(l_i², u_i²) − ½Σ dist(0,[l_i,u_i])²`` on a box, ``½ − 1/(2n)`` for ``½‖x‖²`` on the simplex,
    ``½(‖c‖ + D)²`` on other domains). ``G`` is the bound on the dual norm of the loss vectors (``‖ℓ‖_∞`` for
    entropy, ``‖ℓ‖₂`` for ``½‖x‖²``): ``dual_bound`` if declared, else ``loss_bound`` (which bounds both dual
    norms). For experts with losses in ``[0, 1]^n`` declare ``loss_bound=n`` (privacy, L1) and
    ``dual_bound=1`` (step size): without noise ``η = sqrt(ln n / T)``, exactly Corollary 3.2's setting. See
    ``params`` (``eta``, ``eta_rule``, ``release_variance``).

    Losses: each ``tell`` takes the whole loss vector ``ℓ_t`` (shape ``(n,)``); the learner suffers
    ``⟨ℓ_t, x_t⟩``. Vectors with ``‖ℓ_t‖ > loss_bound`` — in L1 for Laplace noise (``δ = 0``), in L2 for Gaussian — are
    scaled onto the ball of radius ``G`` before they enter the tree, which is what makes the sensitivity ``2G``
    hold for any input (raising would itself leak), unless ``strict=True``. ``run`` plays a native family:
    a linear family (rows = loss vectors, :func:`dponline.losses.Linear`) on any domain, or a
    :func:`dponline.losses.PortfolioLogLoss` family on the simplex, where the loss vector is the gradient
    ``−r_t/⟨r_t, x_t⟩`` (clipped) — the private online-convex-optimisation reduction of Jain, Kothari &
    Thakurta (2012) and Smith & Thakurta (2013); ``run`` then reports the log-loss ``−ln⟨r_t, x_t⟩``.

    Privacy: the sequence of actions is ``(ε, δ)``-DP for streams that differ in one round's loss vector
    (:attr:`privacy`, :func:`dp_ftrl_noise`). The tree stays private when its inputs are chosen adaptively (a
    gradient at ``x_t`` depends on earlier releases): on two neighbouring streams, every input before the
    differing round ``s`` and every input after it is the same function of the earlier releases, so
    conditioned on the released history only the nodes containing round ``s`` differ, each by at most ``2G``;
    each released node is a Laplace (Gaussian) mechanism given the history, and the ``floor(log₂T)+1`` of them
    compose adaptively to the stated ε (the Gaussian nodes form one Gaussian mechanism of L2 sensitivity
    ``2G·sqrt(levels)``), while padding draws and actions are post-processing. A seeded learner is private
    only while its seed is secret (``privacy.randomness == "seed"``). ``epsilon=None`` is non-private FTRL on
    the same code path (no noise).

    Agarwal-Singh's regret bound needs only that the noise of every release has one and the same marginal (the
    sum of ``release_draws`` draws): the proof of Theorem 3.1 compares with a one-shot perturbation and allows
    noise that is "identically (though not necessarily independently) distributed". The padded tree's releases
    share nodes (data and padding alike), which that argument allows (oblivious losses).

    Mechanisms: ``mechanism=None`` (default) chooses the lowest-noise mechanism for which a regret bound is
    proved: ``"blt"`` for Gaussian noise (``δ > 0``), ``"honaker"`` for Laplace
    (``δ = 0``), the padded ``"tree"`` without noise or under ``calibration="paper"``. ``"tree"`` is the
    paper's padded tree; the calibration lemmas are for it. ``"honaker"`` and ``"blt"``
    (:mod:`dponline.aggregation`) release the same prefix sums with correlated noise whose per-release variance
    is lower and varies with ``t`` (BLT at ``T = 5651``: ≥ 11× below the padded tree at every release, at equal
    ``(ε, δ)``). They are calibrated exactly from the encoder's column norms — by default on the exact path
    (discrete noise; for BLT the integer encoder of :class:`dponline.aggregation.BLT`, whose rounding slack
    enters the sensitivity), with ``sampler="floating-point"`` by ``calibration="analytic"`` only
    (:func:`dponline.learners._base.mechanism_noise`) — so the privacy statement above holds unchanged (the
    adaptive-input argument is the same: one round's input moves one column of a fixed linear encoder).

    **Regret bounds.** Agarwal-Singh's Theorem 3.1 treats the identically distributed noise of every release as
    one fixed perturbation, so it covers the padded tree (and a top-up, below) only. The **perturbation bound**
    ``D_R/η + η T G² + η·c·v + η·G·O`` (entropy; ``η·n·v`` for ``½‖x‖²``) needs less: *nested* releases, whose
    noise laws grow by independent centred increments — ``N_t = N_{t−1} + W_t`` in law, ``Σ_t Var(W_t) ≤ v``.
    Identically distributed releases are nested, and so is **BLT with Gaussian noise** on either sampler: its
    decoder is Toeplitz, so release ``t``'s noise is release ``t−1``'s plus an independent ``r_t·z`` (``v`` is
    the last release's variance; ``v_t`` is nondecreasing). The proof (a potential argument, Abernethy, Lee,
    Sinha & Tewari 2014, with the FTRL action the gradient of the smoothed potential; the discrete Gaussian is
    ``σ²``-sub-Gaussian, Canonne-Kamath-Steinke 2020) is in the core's ``DpFtrlParams::perturbation_bound``;
    like Theorem 3.1 it holds against an oblivious adversary (losses fixed in advance; the linearised
    portfolio gradients depend on the actions, so there it guides the step size and the Lipschitz bound is the
    one that holds on every path). For every mechanism, sampler and noise the **Lipschitz bound** holds
    (:meth:`regret_bound_terms`, ``lipschitz``; the Lemma and its proof are in the core's
    ``DpFtrlParams::lipschitz_bound``): ``x ↦ softmax(−ηx)`` moves by at most ``η·(max z − min z)/2`` in L1 when
    ``x`` moves by ``z`` (``x ↦ Π(−ηx)`` by ``η‖z‖₂`` in L2), so ``E[regret] ≤ D_R/η + η T G_*² + η·G_*·S``
    with ``S ≥ Σ_{t<T} E dev(Z_t)`` computed from the mechanism's exact per-release unit variances ``v_t`` (a
    sub-Gaussian maximum for the discrete/continuous Gaussian, a fourth moment for the Laplace laws, plus the
    exact path's rounding; ``params["deviation_sum"]``). Against any adversary, oblivious or adaptive. The
    noise enters at every round, so this bound is linear in ``T`` and far larger than the perturbation bound;
    the default step size of the Honaker tree (and BLT with Laplace noise) minimises it, ``η = sqrt(D_R/(T G_*²
    + G_* S))`` (``eta_rule`` names the bound it minimises), which keeps the learner close to the uniform
    weights / the centre while the noise dominates. :meth:`regret_bound` returns the smallest bound that
    holds.

    **Top-up (``top_up=True``; Gaussian noise, ``sampler="floating-point"``, ``"honaker"`` or ``"blt"``).** The
    release after push ``t`` gets fresh independent ``N(0, σ²(v_max − v_t))`` noise per coordinate, where ``v_t``
    is the mechanism's unit variance of that release and ``v_max = max_{0≤t≤T} v_t`` (exact: the largest
    digit-weighted sum for the Honaker tree, ``v_T`` for BLT, whose ``v_t = Σ_{n<t} r_n²`` is nondecreasing;
    ``params["top_up_variance"]``). *Lemma.* Every topped-up release's noise is ``N(0, σ² v_max I)``: the
    mechanism's noise is a fixed linear combination of i.i.d. ``N(0, σ² I)`` draws, so ``N(0, σ² v_t I)``, and
    variances of independent Gaussians add. *Privacy* is unchanged: the top-up is independent of the data, so
    the topped-up releases are post-processing of the mechanism's. *Regret:* the proof of Theorem 3.1 (and of
    the ``perturbation`` bound) uses the noise only through each release's marginal (against an oblivious
    adversary the expected loss of round ``t`` is a function of the marginal of ``L̃_{t−1}``'s noise;
    correlations across releases never enter), so both hold with ``Z ~ N(0, σ² v_max I)``, and the default
    step size is tuned to that variance. The top-up costs noise: every release carries the largest variance,
    which for BLT is its last release's (BLT is still below the padded tree's ``draws·σ²`` at equal
    ``(ε, δ)``; measured in the README). For BLT it adds only Theorem 3.1's form: BLT's releases are nested
    already, with the same ``v``, so its perturbation bound and default step size are those of the top-up
    without the extra noise. Not available on the exact path (discrete Gaussians of different variances do
    not add up to one law) nor with Laplace noise (a Laplace combination with other weights is not one law
    either).

    Measured (``tests/test_mechanisms.py::test_blt_lowers_dp_ftrl_regret_on_nyse``, experts on the NYSE daily
    ranks, ε = 2, δ = 1e-6, both ``"analytic"``, 500 seeds each): mean regret 60.9 with the padded tree, 52.1
    with BLT (non-private 49.95).

    Args:
        domain: a :mod:`dponline.domains` domain.
        horizon: ``T >= 1``.
        epsilon: ε > 0, or ``None`` (non-private).
        delta: δ in [0, 1); 0 = Laplace noise and L1 bound, > 0 = Gaussian noise and L2 bound.
        loss_bound: ``G > 0``, the declared bound on ``‖ℓ_t‖`` (e.g. ``n`` for experts with losses in [0, 1]).
        regularizer: ``"entropy"`` (simplex only) or ``"euclidean"``; default entropy on the simplex.
        learning_rate: ``η > 0`` (default above).
        dual_bound: ``G_* > 0``, a declared bound on the dual norm of the loss vectors (default ``loss_bound``);
            vectors are also clipped to it (coordinates to ``±G_*`` for entropy, L2 norm otherwise), so it sets
            η and the regret bound without touching the privacy calibration.
        calibration: ``None`` (default): on the exact path (the default sampler) the exact calibration of the
            discrete mechanism, the tightest proved; with ``sampler="floating-point"`` the paper's Lemma 3.3 for the
            tree and the analytic Gaussian for the other mechanisms. ``"paper"`` (the paper's constants),
            ``"analytic"`` (tighter for Gaussian noise) or ``"zcdp"`` (Gaussian only) choose one.
        strict: raise on ``‖ℓ_t‖ > G`` instead of clipping.
        seed: ``None``, int, ``SeedSequence`` or ``Generator``.
        secure: ``True`` only asserts the default: without a seed the noise comes from ChaCha20 keyed by the
            operating system, never serialised and re-keyed on copy, unpickling and in a forked child (``seed``
            must then be ``None``).
        lmo_calls: Frank-Wolfe LMO calls per round on domains without an exact projection (default 4, at most
            10⁴: a round is one uninterruptible native step, and the error bound ``2D/√(k+2)`` is below 2% of
            ``D`` there).
        mechanism: ``None`` (default: ``"blt"`` for ``δ > 0``, ``"honaker"`` for ``δ = 0``, ``"tree"`` without
            noise or with ``calibration="paper"``), ``"tree"`` (the paper's padded tree), ``"honaker"`` or
            ``"blt"`` (see Mechanisms).
        top_up: top every release up to identically distributed Gaussian noise (see Mechanisms; needs ``δ > 0``,
            ``sampler="floating-point"`` and ``mechanism="honaker"`` or ``"blt"``). Default ``False``.
        loss_shift: a constant ``c`` declared before the data (Simplex only; default 0): every loss vector is fed
            as ``ℓ_t − c·1`` (then clipped), and ``loss_bound`` / ``dual_bound`` bound the *centred* vectors. On
            the simplex ``⟨x, c·1⟩ = c``, so the actions without noise and every regret are unchanged, while a
            box-shaped loss range ``[lo, hi]^n`` centred at ``c = (lo + hi)/2`` needs only ``G = n(hi − lo)/2``
            (L1) instead of ``n·max(|lo|, |hi|)``. :func:`dponline.losses.portfolio_gradient_bounds` gives ``c``
            and the bounds for the linearised portfolio loss. :attr:`noisy_cumulative_loss` is then the noisy sum
            of the centred vectors; ``run`` still reports the true losses.

    Raises:
        InvalidInputError: bad arguments; entropy on a domain other than the simplex; ``calibration`` other than
            ``"analytic"`` with a mechanism other than the tree; ``top_up=True`` with another combination than
            the one above.

    Example:
        >>> import dponline
        >>> from dponline.domains import Simplex
        >>> learner = dponline.DPFTRL(Simplex(3), horizon=100, epsilon=1.0, loss_bound=3.0, seed=0)
        >>> x = learner.ask(); learner.tell([0.3, 0.1, 0.5])
        >>> learner.t
        1
    """

    _core_type = _core.DPFTRL

    def __init__(
        self,
        domain: _core.Domain,
        *,
        horizon: int,
        epsilon: float | None,
        delta: float = 0.0,
        loss_bound: float,
        regularizer: Literal["entropy", "euclidean"] | None = None,
        learning_rate: float | None = None,
        dual_bound: float | None = None,
        calibration: Calibration | None = None,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
        lmo_calls: int = 4,
        mechanism: Mechanism | None = None,
        loss_shift: float = 0.0,
        sampler: Sampler | None = None,
        top_up: bool = False,
    ) -> None:
        mechanism = _default_mechanism(mechanism, epsilon, delta, calibration)
        args = MechanismArgs.validated(epsilon, delta, calibration, mechanism, sampler, strict, secure, seed)
        epsilon, delta, calibration, mechanism, sampler = args.target()
        top_up = _check_top_up(top_up, mechanism, epsilon, delta, sampler)
        domain = require_native(domain, "DPFTRL")
        loss_shift = _validate.real("loss_shift", loss_shift)
        if loss_shift != 0.0 and domain.kind != "Simplex":
            raise InvalidInputError(
                f"loss_shift must be 0 on a {domain.kind} (only on the Simplex is <x, 1> constant), got {loss_shift}"
            )
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
        loss_bound = _validate.real("loss_bound", loss_bound, low=0.0, low_open=True)
        learning_rate = _validate.optional_real("learning_rate", learning_rate, low=0.0, low_open=True)
        dual_bound = _validate.optional_real("dual_bound", dual_bound, low=0.0, low_open=True)
        lmo_calls = _validate.integer("lmo_calls", lmo_calls, low=1, high=10_000)
        if regularizer is None:
            regularizer = "entropy" if domain.kind == "Simplex" else "euclidean"
        regularizer = _validate.option("regularizer", regularizer, ("entropy", "euclidean"))  # type: ignore[assignment]
        if epsilon is None:
            noise_name, scale, guarantee = args.noise, 0.0, None
        else:
            noise_name, scale, guarantee = _learner_noise(args, loss_bound, horizon, domain.dim)
            if sampler == "floating-point":
                guarantee = dataclasses.replace(guarantee, sampler="floating-point")
            if loss_shift != 0.0 and guarantee is not None:
                fed = f"the mechanism is fed clip(l_t - c*1), declared c = loss_shift = {loss_shift:.17g}; G bounds it"
                guarantee = dataclasses.replace(guarantee, notes=f"{guarantee.notes}; {fed}")
        core = _core.DPFTRL(
            domain,
            horizon,
            loss_bound,
            norm="l1" if delta == 0 else "l2",
            regularizer=regularizer,
            noise=noise_name,
            scale=scale,
            learning_rate=learning_rate,
            dual_bound=dual_bound,
            lmo_calls=lmo_calls,
            loss_shift=loss_shift,
            **args.native(),
            top_up=top_up,
        )
        if top_up and guarantee is not None:
            guarantee = dataclasses.replace(guarantee, notes=f"{guarantee.notes}; {_TOP_UP_NOTE}")
        self._adopt(core, args, domain=domain, horizon=horizon, privacy=guarantee)

    # -- protocol ---------------------------------------------------------------------------------------
    def ask(self) -> np.ndarray:
        """The action ``x_t``, shape ``(n,)``, float64; always in the domain. Asking again before :meth:`tell`
        returns the same point.

        Raises:
            HorizonExhaustedError: after ``horizon`` rounds. StateError: used by another thread.
        """
        return self._core.ask()

    def tell(self, loss: Any) -> None:
        """Report this round's loss vector ``ℓ_t`` (or a gradient of a convex loss at ``x_t``), shape ``(n,)``.

        Raises:
            ProtocolError: without a preceding :meth:`ask`.
            InvalidInputError: wrong shape, non-numeric, or ``‖ℓ‖ > loss_bound`` with ``strict=True``.
            NonFiniteError: NaN or inf. In every case the learner is unchanged.
        """
        self._core.tell(_validate.real_array("loss", loss, (self._core.params["dim"],)))

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        """``eta`` (and ``eta_rule``), ``regularizer``, ``regularizer_range`` (``D_R``), ``loss_bound``, ``norm``,
        ``ftrl_bound``, ``lmo_calls``, the noise (``noise``, ``noise_scale``), ``release_draws``, ``method``,
        ``release_variance`` (the per-coordinate variance of the last release's noise, which the step size is
        tuned to), ``offset_sum`` (``O``, the exact path's rounding the bounds charge) and ``top_up_variance``
        (``v_max``, present only with ``top_up=True``)."""
        out = self._native_params("release_draws", "method")
        if self._core.top_up_variance is not None:
            out["top_up_variance"] = self._core.top_up_variance
        return out

    clipped = clipped_count("Number of loss vectors clipped to the declared bound so far.")

    @property
    def noisy_cumulative_loss(self) -> np.ndarray:
        """The latest release ``L̃_t`` of the tree (``L̃_0`` before any data), shape ``(n,)``."""
        return self._core.noisy_cumulative_loss

    def regret_bound_terms(self, *, samples: int = 20_000, seed: int = 0) -> dict[str, Any]:
        """The terms of :meth:`regret_bound`.

        * ``ftrl``: ``D_R/η + η T G_*²`` (Shalev-Shwartz 2012, Theorem 2.11: the non-private FTRL bound, ``G_*``
          the dual bound);
        * ``noise``: ``E_Z[max_x⟨Z, x⟩ − min_x⟨Z, x⟩]`` for ``Z`` the sum of ``release_draws`` i.i.d. node noises
          (Agarwal-Singh 2017, Theorem 3.1's additive privacy term; ``∞`` for releases that are not identically
          distributed: ``"honaker"`` / ``"blt"`` without ``top_up``). Closed forms: Gaussian on the ball
          (``2r·s·√2·Γ((n+1)/2)/Γ(n/2)``, ``s² = draws·σ²``), Gaussian or Laplace on a box
          (``Σ w_i·E|Z_i|``; for a sum of ``r`` Laplace(λ) ``E|Z_i| = 2λΓ(r+½)/(√π Γ(r))``), Gaussian on the
          simplex (the expected range of ``n`` normals, one-dimensional quadrature). Otherwise Monte Carlo with
          ``samples`` draws of the core's samplers; ``noise_stderr`` is its standard error (0 for closed forms);
        * ``frank_wolfe``: on Frank-Wolfe domains, ``T·G_*·2D/√(k+2)`` for ``k = lmo_calls`` (each action is within
          ``2D/√(k+2)`` of the exact argmin: Frank-Wolfe from any feasible start, Ene-Nguyen-Vladu Lemma C.4) —
          a worst-case term, linear in ``T``;
        * ``perturbation``: a second valid bound with the noise inside the FTRL analysis, ``D_R/η + η T G_*² +
          η·c·v + η·G_*·O`` (entropy; ``∞`` when ``η`` exceeds the cumulant bound's range) or ``D_R/η + η(T G_*²
          + n·v + G_*·O)`` (``½‖x‖²``), ``v`` the last release's per-coordinate noise variance
          (``params["release_variance"]``) and ``O`` the exact path's rounding (``params["offset_sum"]``): the
          smoothed-potential argument (Abernethy, Lee, Sinha & Tewari 2014) for nested releases — every
          release's noise law is the previous one's plus an independent centred increment; the proof is in the
          core's ``DpFtrlParams::perturbation_bound``. The padded tree, a top-up and BLT with Gaussian noise
          (``∞`` for the others); against an oblivious adversary;
        * ``lipschitz``: a third bound, for **every** mechanism and sampler, ``D_R/η + η T G_*² + η·G_*·S`` with
          ``S ≥ Σ_{t<T} E dev(Z_t)`` (``deviation_sum``) computed exactly from the mechanism's per-release unit
          variances ``v_t``, its noise scale and grid: ``x ↦ softmax(−ηx)`` moves by at most ``η·(max z − min z)/2``
          in L1 when ``x`` moves by ``z``, ``x ↦ Π(−ηx)`` by ``η‖z‖₂`` in L2, so each round costs at most
          ``η·G_*`` times the release's deviation beyond non-private FTRL; holds for adaptive losses too. The
          Lemma, its proof and the per-release bounds (sub-Gaussian maximum for the discrete/continuous Gaussian,
          fourth moment for the Laplace laws, Jensen in L2, the exact path's rounding) are in the core's
          ``DpFtrlParams::lipschitz_bound`` and ``deviation_sum``.

        :meth:`regret_bound` takes the smallest.

        Raises:
            InvalidInputError: bad ``samples`` / ``seed``; the bound overflows float64 (the declared constants are
                too large for it).
        """
        samples = _validate.integer("samples", samples, low=100)
        seed = _validate.integer("seed", seed, low=0)
        p = self.params
        T, n = p["horizon"], p["dim"]
        identical = self._core.mechanism == "tree" or self._core.top_up_variance is not None
        if identical:
            noise_mean, stderr, method = self._noise_term(p, samples, seed)
        else:
            noise_mean, stderr, method = math.inf, 0.0, "none (releases not identically distributed: Theorem 3.1 n/a)"
        fw = 0.0
        if p["method"] == "frank-wolfe":
            fw = T * p["dual_bound"] * 2.0 * self._domain.diameter / math.sqrt(p["lmo_calls"] + 2)
        lipschitz = p.get("lipschitz_bound", math.inf)
        best = min(p["ftrl_bound"] + noise_mean + 4 * stderr, p.get("perturbation_bound", math.inf), lipschitz)
        if not all(math.isfinite(v) for v in (stderr, fw, best + fw)):
            raise InvalidInputError(
                f"regret_bound: the bound overflows float64 (noise term {noise_mean:g}, Frank-Wolfe term {fw:g}, "
                f"Lipschitz bound {lipschitz:g}); rescale the domain or the losses"
            )
        return {
            "ftrl": p["ftrl_bound"],
            "noise": noise_mean,
            "noise_stderr": stderr,
            "noise_method": method,
            "frank_wolfe": fw,
            "perturbation": p.get("perturbation_bound", math.inf),
            "lipschitz": lipschitz,
            "deviation_sum": p.get("deviation_sum", math.inf),
            "source": "Agarwal-Singh 2017 Theorem 3.1 (FTRL regret + E[max<Z,x> - min<Z,x>]); "
            + ("" if p.get("top_up_variance") is None else _TOP_UP_SOURCE + "; ")
            + "FTRL term: Shalev-Shwartz 2012 Theorem 2.11; perturbation: the smoothed FTRL potential with a "
            "nested perturbation (Abernethy-Lee-Sinha-Tewari 2014; DpFtrlParams::perturbation_bound, nested "
            "releases, oblivious adversary); lipschitz: the Lipschitz FTRL Lemma "
            "(DpFtrlParams::lipschitz_bound, any mechanism and adversary)",
            "dim": n,
        }

    def regret_bound(self, *, samples: int = 20_000, seed: int = 0) -> RegretBound:
        """Expected-regret bound with linear losses bounded by ``G``: ``min(ftrl + noise, perturbation,
        lipschitz) + frank_wolfe`` of :meth:`regret_bound_terms`, with the Monte Carlo noise term (when used)
        raised by 4 standard errors. The first two hold against an oblivious adversary: Agarwal-Singh 2017
        Theorem 3.1 for identically distributed releases (the padded tree, a top-up), the perturbation bound for
        nested ones (those and BLT with Gaussian noise); the Lipschitz bound holds for every mechanism
        (``"tree"``, ``"honaker"``, ``"blt"``, both samplers) and any adversary.

        Returned beside the trivial bound (``RegretBound.trivial``): ``T·G_*·W`` with ``W`` the domain's width in
        the norm dual to ``G_*`` (2, the L1 diameter of the simplex, for the entropy; the L2 diameter otherwise),
        since ``⟨ℓ, x − u⟩ ≤ ‖ℓ‖_*·‖x − u‖``; ``RegretBound.vacuous`` says when the bound is not below it.

        Raises:
            as :meth:`regret_bound_terms`.
        """
        terms = self.regret_bound_terms(samples=samples, seed=seed)
        theorem = terms["ftrl"] + terms["noise"] + 4.0 * terms["noise_stderr"]
        p = self.params
        width = 2.0 if p["regularizer"] == "entropy" else float(self._domain.diameter)
        return RegretBound(
            min(theorem, terms["perturbation"], terms["lipschitz"]) + terms["frank_wolfe"],
            trivial=p["horizon"] * p["dual_bound"] * width,
            source=terms["source"] + "; trivial: T*G_**width",
        )

    def _noise_term(self, p: dict[str, Any], samples: int, seed: int) -> tuple[float, float, str]:
        if p.get("top_up_variance") is not None:  # every release's noise is N(0, release_variance·I)
            return noise_width(self._domain, "gaussian", math.sqrt(p["release_variance"]), 1, samples, seed)
        return noise_width(self._domain, p["noise"], p["noise_scale"], p["release_draws"], samples, seed)


class DPFTPL(PrefixSumLearner, DomainLearner):
    """Differentially private follow-the-perturbed-leader: one LMO call per round, on any domain.

    Source: Agarwal & Singh 2017, Algorithm 3 / Theorem 3.5: ``x_t = argmin_{x∈X} ⟨x, L̃_{t−1}⟩ = lmo(L̃_{t−1})``
    where ``L̃`` is the padded tree's Gaussian release of the loss vectors — the tree's own noise is FTPL's
    perturbation. Every action is a vertex returned by the domain's LMO (cheap where FTRL's convex program is
    not: matroids, path polytopes).

    Noise: per-node ``σ = max(σ_privacy, σ_regret)``. ``σ_privacy`` is :func:`dp_ftrl_noise` (Gaussian, loss
    vectors clipped to ``‖ℓ‖₂ ≤ G``). ``σ_regret`` makes the total perturbation of a release,
    ``s = σ·sqrt(draws)``, minimise the FTPL bound below: ``s* = sqrt(T G² D / (√(2π) W))`` with ``D`` the
    domain's diameter and ``W = E_z[max⟨z,x⟩ − min⟨z,x⟩]`` for a standard normal ``z`` (:func:`noise_width`).
    More noise than privacy needs only strengthens the guarantee, so :attr:`privacy` states the requested
    ``(ε, δ)``. ``σ_regret = 0`` on a single point (``W = 0``) and when no release carries noise (``horizon=1``
    with a mechanism other than the tree).

    Regret (expected, oblivious adversary, linear losses with ``‖ℓ_t‖₂ ≤ G``): ``s·W + T·G²·D/(s·√(2π))``. The
    first term is the perturbation's range (as in Theorem 3.1: the identically distributed releases act like
    one perturbation); the second is Kalai-Vempala's be-the-leader stability term, bounded per round by the
    range ``G·D`` of ``⟨ℓ_t, ·⟩`` on ``X`` times the total-variation distance ``≤ G/(s√(2π))`` between the
    perturbed cumulative losses before and after ``ℓ_t``. At ``s*`` it is ``2·sqrt(T G² D W / √(2π))``.

    ``epsilon=None`` is non-private FTPL (``σ = σ_regret``) on the same code path.

    Mechanisms: ``mechanism="tree"`` (default) is the paper's padded tree, and the regret bound above is for
    it. With ``"honaker"`` or ``"blt"`` the releases carry correlated perturbations whose size varies with
    ``t``; ``σ_privacy`` is the exact calibration of :class:`DPFTRL` (``calibration="analytic"`` only),
    and ``σ_regret`` makes the root mean square of the releases' perturbation sd equal ``s*``. No regret bound
    is proved for their raw releases: Theorem 3.5's range term and Kalai-Vempala's stability step both use one
    perturbation distribution for every release, so :meth:`regret_bound` raises. With ``top_up=True``
    (Gaussian, ``sampler="floating-point"``) every release is topped up to ``N(0, σ² v_max I)`` (the Lemma in
    :class:`DPFTRL`'s Mechanisms), ``σ_regret`` makes ``s = σ·sqrt(v_max)`` equal ``s*``, and the bound above holds
    with that ``s``: both terms use only each release's marginal (oblivious losses).

    Args:
        domain: a :mod:`dponline.domains` domain.
        horizon: ``T >= 1``.
        epsilon: ε > 0, or ``None``.
        delta: δ in (0, 1) (Gaussian noise; required when ``epsilon`` is given).
        loss_bound: ``G > 0``, the declared bound on ``‖ℓ_t‖₂`` (clipped beyond, unless ``strict``).
        calibration: ``"paper"``, ``"analytic"`` or ``"zcdp"`` for ``σ_privacy``.
        strict, seed, secure: as :class:`DPFTRL`.
        mechanism: ``"tree"`` (default), ``"honaker"`` or ``"blt"`` (see Mechanisms).
        sampler: ``"exact"`` (default) or ``"floating-point"``, as :class:`DPFTRL`.
        top_up: as :class:`DPFTRL` (see Mechanisms).

    Raises:
        InvalidInputError: bad arguments, ``δ = 0`` with ``epsilon`` given, ``calibration`` other than
            ``"analytic"`` with a mechanism other than the tree.

    Example:
        >>> import dponline
        >>> from dponline.domains import UniformMatroid
        >>> learner = dponline.DPFTPL(UniformMatroid(5, 2), horizon=100, epsilon=1.0, delta=1e-6, loss_bound=1.0)
        >>> x = learner.ask(); learner.tell([0.3, 0.1, 0.5, 0.0, 0.2])
        >>> int(x.sum())
        2
    """

    _core_type = _core.DPFTRL

    def __init__(
        self,
        domain: _core.Domain,
        *,
        horizon: int,
        epsilon: float | None,
        delta: float = 0.0,
        loss_bound: float,
        calibration: Calibration | None = None,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
        mechanism: Mechanism = "tree",
        sampler: Sampler | None = None,
        top_up: bool = False,
    ) -> None:
        args = MechanismArgs.validated(epsilon, delta, calibration, mechanism, sampler, strict, secure, seed)
        epsilon, delta, calibration, mechanism, sampler = args.target()
        top_up = _check_top_up(top_up, mechanism, epsilon, delta, sampler)
        domain = require_native(domain, "DPFTPL")
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
        loss_bound = _validate.real("loss_bound", loss_bound, low=0.0, low_open=True)
        # Standard deviation of one release's perturbation per unit of σ: sqrt(draws) for the padded tree,
        # sqrt(v_max) for a topped-up release, the root mean square over the releases L̃_0..L̃_{T−1} otherwise.
        if mechanism == "tree":
            release_sd = math.sqrt(max(1, (horizon - 1).bit_length()))
        elif top_up:
            release_sd = _release_max_sd(mechanism, horizon)
        else:
            release_sd = _release_rms(mechanism, horizon)
        width, _, _ = noise_width(domain, "gaussian", 1.0, 1, 20_000, 0)
        diameter = float(domain.diameter)
        if width > 0.0 and release_sd > 0.0:
            # G outside the root: G² over- or underflows for |log10 G| > 154.
            s_star = loss_bound * math.sqrt(horizon * diameter / (math.sqrt(2 * math.pi) * width))
            sigma_regret = s_star / release_sd
        else:
            # W = 0: a single point (every direction has the same minimiser), nothing to perturb. release_sd = 0:
            # no release carries a perturbation (horizon 1 with a non-tree mechanism: L̃_0 is exact).
            sigma_regret = 0.0
        if not math.isfinite(sigma_regret):
            raise InvalidInputError(
                f"DPFTPL: the regret-optimal perturbation loss_bound*sqrt(horizon*diameter/W) overflows float64 "
                f"(loss_bound={loss_bound:g}, horizon={horizon}, diameter={diameter:g}); rescale the losses"
            )
        sigma_privacy = 0.0
        sigma: float | None = None
        guarantee: PrivacyGuarantee | None = None
        if epsilon is not None:
            if delta == 0.0:
                raise InvalidInputError("DPFTPL uses Gaussian noise: delta must be in (0, 1) when epsilon is given")
            if sampler == "exact":
                _, sigma_privacy, exact = _exact_tree_noise(
                    mechanism, calibration, epsilon, delta, loss_bound, horizon, domain.dim, 0.0, seed, secure
                )
                # The perturbation is max(σ_privacy, σ_regret), on the grid: more noise only lowers the loss.
                _, sigma, guarantee = _exact_tree_noise(
                    mechanism, calibration, epsilon, delta, loss_bound, horizon, domain.dim, sigma_regret, seed, secure
                )
                guarantee = dataclasses.replace(
                    guarantee,
                    notes=f"{guarantee.notes}; sigma = max(privacy {sigma_privacy:.6g}, regret {sigma_regret:.6g}) "
                    f"on the grid, mechanism={mechanism!r}",
                )
            elif mechanism == "tree":
                _, sigma_privacy, guarantee = dp_ftrl_noise(
                    epsilon, delta, loss_bound, horizon, calibration or "paper", randomness=args.randomness
                )
                source = "Agarwal-Singh 2017 Theorem 3.5 / Lemma 3.3 (padded tree, Gaussian)"
                release_l2 = 2 * loss_bound * math.sqrt(privacy.levels_touched(horizon))
            else:
                _, sigma_privacy, guarantee = _learner_noise(args, loss_bound, horizon, domain.dim)
                source = guarantee.source
                release_l2 = sigma_privacy / float(guarantee.noise_multiplier)  # type: ignore[arg-type]
            if sampler == "floating-point":
                guarantee = PrivacyGuarantee(
                    epsilon=guarantee.epsilon,
                    delta=guarantee.delta,
                    source=source,
                    randomness=guarantee.randomness,
                    notes=f"sigma = max(privacy {sigma_privacy:.6g}, regret {sigma_regret:.6g}), "
                    f"mechanism={mechanism!r}",
                    noise_multiplier=_finite_multiplier(max(sigma_privacy, sigma_regret), release_l2),
                    sampler="floating-point",
                )
        if sigma is None:
            sigma = max(sigma_privacy, sigma_regret)
        core = _core.DPFTRL(
            domain,
            horizon,
            loss_bound,
            norm="l2",
            regularizer="none",
            noise="gaussian",
            scale=sigma,
            **args.native(),
            top_up=top_up,
        )
        if top_up and guarantee is not None:
            guarantee = dataclasses.replace(guarantee, notes=f"{guarantee.notes}; {_TOP_UP_NOTE}")
        self._adopt(core, args, domain=domain, horizon=horizon, privacy=guarantee)
        self._details = {
            "sigma_privacy": sigma_privacy,
            "sigma_regret": sigma_regret,
            "standard_width": width,
            "diameter": diameter,
            "release_sd": release_sd,
        }

    def ask(self) -> np.ndarray:
        """The action ``x_t = lmo(L̃_{t−1})``, shape ``(n,)``, a vertex of the domain. Errors as
        :meth:`DPFTRL.ask`."""
        return self._core.ask()

    def tell(self, loss: Any) -> None:
        """Report the loss vector ``ℓ_t``, shape ``(n,)``. Errors as :meth:`DPFTRL.tell`."""
        self._core.tell(_validate.real_array("loss", loss, (self._core.params["dim"],)))

    @property
    def params(self) -> dict[str, Any]:
        """``noise_scale`` (σ), ``sigma_privacy``, ``sigma_regret``, ``standard_width`` (W), ``diameter``,
        ``release_draws``, ``release_sd`` (a release's perturbation sd per unit σ: ``sqrt(release_draws)`` for
        the tree, the root mean square over releases otherwise), ``loss_bound``, ``horizon``, ``dim``."""
        out = {**self._native_params("release_draws", "method"), **self._details}
        if self._core.top_up_variance is not None:
            out["top_up_variance"] = self._core.top_up_variance
        return out

    clipped = clipped_count("Number of loss vectors clipped to the declared bound so far.")

    @property
    def noisy_cumulative_loss(self) -> np.ndarray:
        """The latest release ``L̃_t`` of the tree (``L̃_0`` before any data), shape ``(n,)``."""
        return self._core.noisy_cumulative_loss

    def regret_bound(self) -> RegretBound:
        """``s·W + T·G²·D/(s·√(2π))`` with ``s = σ·sqrt(draws)`` (see the class docs; Agarwal-Singh 2017
        Theorem 3.5 with Kalai-Vempala's stability argument), beside the trivial bound ``T·G·D``
        (``RegretBound.trivial``; ``|⟨ℓ, x − x*⟩| ≤ G·D`` per round) and whether it is below it.

        On a single point (``W = 0``) the bound is 0; without perturbation (``σ = 0``, when ``G·sqrt(T·D/W)``
        underflows) it is the trivial ``T·G·D``.

        With ``top_up=True``, ``s = σ·sqrt(v_max)`` (``params["top_up_variance"]``): every release's
        perturbation is ``N(0, s² I)``.

        Raises:
            DPOnlineError: ``"honaker"`` or ``"blt"`` without ``top_up=True`` (the argument needs identically
                distributed perturbations in every release); the message names the combinations with a bound.
            InvalidInputError: the bound overflows float64 (the declared constants are too large for it).
        """
        _require_identical_releases(self._core, "Theorem 3.5")
        p = self.params
        if p.get("top_up_variance") is None:
            s = p["noise_scale"] * math.sqrt(p["release_draws"])
        else:  # every topped-up release's perturbation is N(0, σ² v_max I)
            s = p["noise_scale"] * math.sqrt(p["top_up_variance"])
        T, G, W, D = p["horizon"], p["loss_bound"], p["standard_width"], p["diameter"]
        source = "Agarwal-Singh 2017 Theorem 3.5; trivial: T*G*D"
        if W == 0.0:  # a single point: every action is the comparator
            return RegretBound(0.0, trivial=0.0, source=source)
        if s == 0.0:  # no perturbation (σ = 0): only the trivial bound T·G·D (|<l, x - x*>| <= G·D per round)
            bound = T * G * D
        else:  # G·(G/s): G² over- or underflows for |log10 G| > 154
            bound = s * W + T * G * (G / s) * D / math.sqrt(2 * math.pi)
        if not math.isfinite(bound):
            raise InvalidInputError(f"regret_bound: the bound overflows float64 (loss_bound={G:g}, horizon={T})")
        return RegretBound(bound, trivial=T * G * D, source=source)
