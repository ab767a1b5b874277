"""PrivateBandit (Ene, Nguyen & Vladu 2021, Algorithm 1): private projection-free bandit convex optimisation."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal

import numpy as np

from .. import _core, _validate, privacy
from .._options import CALIBRATIONS, MECHANISMS, NOISES, Calibration, Mechanism, Noise, Sampler
from .._seed import SeedLike
from ..domains import require_native
from ..errors import DPOnlineError, InvalidInputError
from ..privacy import PrivacyGuarantee
from ..regret import RegretBound
from ._base import (
    DomainLearner,
    MechanismArgs,
    PrefixSumLearner,
    RunResult,
    clipped_count,
    exact_learner_noise,
    mechanism_noise,
)
from ._tree_noise import _unit_probe

__all__ = ["PrivateBandit", "RunResult", "private_bandit_noise"]

Feasibility = Literal["fkm", "appendix-d"]


def private_bandit_noise(
    params: dict[str, Any],
    epsilon: float,
    delta: float,
    noise: Noise,
    calibration: Calibration,
    *,
    randomness: str = "",
    mechanism: Mechanism = "tree",
) -> tuple[float, PrivacyGuarantee, dict[str, float]]:
    """Noise scale of PrivateBandit's tree for a privacy target, following the paper's lemmas.

    * Laplace, ``δ = 0`` — Lemma 5.1: ``λ = T^{1/2} · n · L · log T / ε``.
    * Gaussian, ``δ > 0`` — Lemma 5.4: ``σ = T^{1/4} n^{1/2} L log T log(T/δ) / ε ·
      (log((n+T)/δ) + sqrt((1 + T^{1/2}/n) log((n+T)/δ)))``.

    ``n`` is the ambient dimension, ``log T`` (the tree depth) is ``log₂ T`` and the logarithms from tail
    bounds are natural. The lemmas assume ``|f_t| ≤ L·D``; with a declared ``loss_bound`` ``B`` the paper's
    ``L`` is read as ``B / D`` (identical when ``B = L·D``). Every input here is a declared constant or the
    schedule derived from them — nothing depends on the data.

    Why a floor: the lemmas bound the norm of a whole batch gradient; the quantity the privacy proof needs
    is the change of one tree input when one round's loss is replaced, ``2·(d/ζ)·B·‖u‖`` (only ``F_t u_t``
    changes; ``‖u‖₁ ≤ √n``), times the ``floor(log₂ T_round) + 1`` released nodes it enters. The batch sums are
    computed in floating point, so ``params["sensitivity_l1"]`` / ``["sensitivity_l2"]`` carry the factor
    ``params["rounding_inflation"] = (1 + γ_{2n+22})(1 + T_batch·γ_{T_batch−1})`` (``γ_k = k·2⁻⁵³/(1 − k·2⁻⁵³)``;
    Lemma *rounded batch sums* of ``PrivateBanditParams::rounding_inflation`` in the Rust core, from Higham 2002
    eq. (3.5) and §4.2): it bounds the change of the *computed* sum, whose rounding errors differ between
    neighbouring streams, and is ``≈ T_batch²·2⁻⁵³`` above 1 (``1.1e-12`` at ``T = 10⁴``, ``1.1e-9`` at ``10⁷``).
    The Lemma 5.1 statement exceeds that for ``T ≥ 16`` at the paper's ``ζ`` (its proof's ``T_batch·n^{1/2}·M`` is
    ``T^{3/4}nL``, not ``T^{1/2}nL`` as printed — the statement is nevertheless safe because only one round
    changes), but when ``ζ`` is smaller than line 1's or ``T`` is tiny it can fall short. The scale used is
    therefore ``max(lemma, exact requirement)``. ``calibration="analytic"`` uses the exact requirement alone
    (the Laplace mechanism on the released nodes; for Gaussian the analytic Gaussian mechanism of Balle &
    Wang 2018) and ``"zcdp"`` the zCDP accountant (Gaussian only). Both are always reported
    (``lemma_scale``, ``exact_scale``) so the cost of the lemma is visible.

    Another ``mechanism`` (``"honaker"``, ``"blt"``, see :mod:`dponline.aggregation`) is calibrated exactly from
    its encoder's largest column norms (a linear mechanism used once per input: Laplace by the L1 norm, Gaussian
    by the analytic Gaussian mechanism at the L2 norm); no lemma of the paper covers it, so
    ``calibration="paper"`` is refused, and the paper's regret proof (identically distributed noise per
    release) does not cover it either.

    Returns:
        ``(scale, guarantee, details)`` with ``details`` holding ``lemma_scale`` and ``exact_scale``.

    Raises:
        InvalidInputError: an unknown noise or calibration, ``"zcdp"`` with Laplace noise, Gaussian noise with
            ``δ = 0``, ``calibration="paper"`` with a mechanism other than the tree.
    """
    calibration = _validate.option("calibration", calibration, CALIBRATIONS)
    noise = _validate.option("noise", noise, NOISES)
    mechanism = _validate.option("mechanism", mechanism, MECHANISMS)
    if mechanism != "tree":
        scale, guarantee = mechanism_noise(
            mechanism,
            epsilon,
            delta,
            noise,
            calibration,
            sensitivity_l1=params["sensitivity_l1"],
            sensitivity_l2=params["sensitivity_l2"],
            releases=int(params["t_round"]),
            randomness=randomness,
        )
        return scale, guarantee, {"lemma_scale": float("nan"), "exact_scale": scale}
    T = float(params["horizon"])
    n = float(params["dim"])
    L_eff = params["loss_bound"] / params["diameter"]
    levels = privacy.levels_touched(int(params["t_round"]))
    log2T = max(math.log2(T), 1.0)
    release_l2 = params["sensitivity_l2"] * math.sqrt(levels)
    if noise == "laplace":
        if calibration == "zcdp":
            raise InvalidInputError("calibration='zcdp' needs Gaussian noise (delta > 0)")
        lemma = math.sqrt(T) * n * L_eff * log2T / epsilon
        exact = privacy.tree_laplace_scale(epsilon, params["sensitivity_l1"], int(params["t_round"]))
        source, delta_out = "Ene-Nguyen-Vladu 2021, Lemma 5.1", 0.0
    else:
        if not 0.0 < delta < 1.0:
            raise InvalidInputError(f"delta must be in (0, 1) for Gaussian noise, got {delta}")
        tail = math.log((n + T) / delta)
        lemma = (
            T**0.25
            * math.sqrt(n)
            * L_eff
            * log2T
            * math.log(T / delta)
            / epsilon
            * (tail + math.sqrt((1.0 + math.sqrt(T) / n) * tail))
        )
        if calibration == "zcdp":
            exact = privacy.zcdp_gaussian_sigma(epsilon, delta, release_l2)
        else:
            exact = privacy.gaussian_sigma_analytic(epsilon, delta, release_l2)
        source, delta_out = "Ene-Nguyen-Vladu 2021, Lemma 5.4", float(delta)
    if calibration == "paper":
        scale = max(lemma, exact)
        notes = (
            f"lemma scale {lemma:.4g} (the exact per-round sensitivity needs {exact:.4g})"
            if lemma >= exact
            else f"lemma scale {lemma:.4g} raised to the exact per-round requirement {exact:.4g}"
        )
    else:
        scale = exact
        notes = f"calibration={calibration!r} on the exact per-round sensitivity (lemma scale {lemma:.4g})"
        source = f"{source} (exact sensitivity, with the rounded-batch-sums bound, calibration={calibration!r})"
    guarantee = PrivacyGuarantee(
        epsilon=float(epsilon),
        delta=delta_out,
        source=source,
        randomness=randomness,
        notes=notes,
        noise_multiplier=scale / release_l2 if noise == "gaussian" else None,
    )
    return scale, guarantee, {"lemma_scale": lemma, "exact_scale": exact}


class PrivateBandit(PrefixSumLearner, DomainLearner):
    """Differentially private bandit convex optimisation without projections.

    Source: Ene, Nguyen & Vladu, "Projection-Free Bandit Optimization with Privacy Guarantees" (AAAI 2021),
    Algorithm 1 (an instance of their NoisyOCO template, Algorithm 2), with a shrunk domain (Appendix D) so
    that **every played point lies in the domain**. Rounds are grouped in ``T_round = ⌈T/T_batch⌉`` batches of
    ``T_batch = ⌈√T⌉``; within a batch the learner plays ``y_t = c + (1 − α)(x̃ + ζu_t − c)`` for uniform
    directions ``u_t`` of the domain's tangent space and accumulates the one-point gradient estimate
    ``(d/ζ) f_t(y_t) u_t`` (lines 5-12); batch sums go through the padded tree (line 13) and one Frank-Wolfe
    step per round (one LMO call) computes the next ``x̃`` from ``−η·`` the private prefix sum (line 14;
    the printed sign of line 14 is a typo, fixed by Algorithm 2 line 3).

    Parameters (line 1, ``d`` = dimension of the affine hull, ``D`` diameter, ``L`` Lipschitz, ``B`` loss
    bound, ``r`` the domain's certified inscribed radius around ``c``): ``ζ = D d^{1/2}/T^{1/4}`` and
    ``η = D/(T^{3/4} d^{1/2} L)``; whenever ``ζ`` differs from line 1's value, ``η`` is re-derived from the proof
    of Lemma 3.1, ``η = D/(κ√T_round)`` with ``κ = √T_batch·dB/ζ + T_batch·L`` (``params["eta_rule"]``).
    Feasibility (``feasibility=``): ``"fkm"`` (default) shrinks by ``α = ζ/(r+ζ)``, i.e. plays the convex
    combination ``c + (1−α)(x̃ − c) + α·r·u`` of ``x̃`` and ``c + r·u`` — feasible for every ``ζ``, so line 1's
    ``ζ`` is used as is (the shrunk-domain device of Flaxman, Kalai & McMahan 2005; it satisfies Lemma 2.2 for
    ``f'(x) = f(c + (1−α)(x−c))`` and adds at most ``T·α·L·D ≤ T·ζ·L·D/r`` regret, never more than Appendix D);
    ``"appendix-d"`` shrinks by ``α = ζ/r`` exactly as printed in Appendix D, which needs ``ζ < r`` and so caps
    ``ζ`` at ``r/2``.

    Regret (Lemmas 3.1, 5.2, 5.5): ``O(T^{3/4} n^{1/2} L D + T^{3/4} n^{3/2} L D log²T / ε)`` with Laplace noise
    and ``Õ((T^{3/4} n^{1/2} + T^{1/2} n) L D log^{O(1)}(1/δ) / ε)`` with Gaussian noise.

    Privacy: the sequence of played points is ``(ε, δ)``-DP with respect to replacing one round's loss
    function (see :attr:`privacy`; calibration in :func:`private_bandit_noise`). ``epsilon=None`` gives the
    non-private learner (Garber-Kretzu-style) through the same code path, with no noise.

    Args:
        domain: a :mod:`dponline.domains` domain with a certified ``inscribed_radius``.
        horizon: ``T >= 1``.
        epsilon: ε > 0, or ``None`` for the non-private baseline.
        delta: δ in [0, 1); ``0`` selects Laplace noise (Lemma 5.1), ``> 0`` Gaussian (Lemma 5.4).
        lipschitz: ``L > 0``, Lipschitz constant of the losses (Euclidean).
        loss_bound: bound ``B`` on ``|f_t|`` (default ``L·D``); larger losses are clipped to ``±B`` before
            they enter the gradient estimate (raising on them would itself leak), unless ``strict``.
        noise: override the noise family (``"laplace"``/``"gaussian"``).
        calibration: ``None`` (default): on the exact path (the default sampler) the exact calibration of the
            discrete mechanism, the tightest proved; with ``sampler="floating-point"`` Lemma 5.1 / 5.4 for the
            tree and the analytic Gaussian for the other mechanisms. ``"paper"``, ``"analytic"`` or ``"zcdp"``
            choose one — see :func:`private_bandit_noise`.
        smoothing_radius: override ``ζ`` (any ``ζ > 0`` with ``"fkm"``; in ``(0, r)`` with ``"appendix-d"``).
        feasibility: ``"fkm"`` (default) or ``"appendix-d"``, see above.
        mechanism: how the batch gradients' prefix sums are released: ``"tree"`` (default, the padded binary tree
            of the paper), or ``"honaker"`` / ``"blt"`` (:mod:`dponline.aggregation`; lower noise at equal
            privacy, exact calibration only — ``calibration="analytic"``). Regret: the paper's analysis uses
            the tree noise only through a bound on the expected L2 norm of each release's noise, so
            :meth:`regret_bound` covers these mechanisms with ``sampler="floating-point"`` (see there); on
            their exact path (the default sampler) the encoder's and decoder's rounding is not in that bound,
            and it raises.
        strict: raise :class:`InvalidInputError` on ``|loss| > B`` instead of clipping.
        seed: ``None``, int, ``SeedSequence`` or ``Generator``; same seed ⇒ identical actions via
            ``ask``/``tell`` and via ``run``.
        secure: ``True`` only asserts the default: without a seed the noise comes from ChaCha20 keyed by the
            operating system, never serialised and re-keyed on copy, unpickling and in a forked child (``seed``
            must then be ``None``).

    Every constant that sets the noise, the clipping or the step size comes from the declared arguments
    (``horizon``, ``epsilon``, ``delta``, ``lipschitz``, ``loss_bound``, the domain) — never from the losses. A
    seeded learner is private only while its seed is secret (``privacy.randomness == "seed"``); ``seed=None``
    keys the noise from the operating system.

    Raises:
        InvalidInputError: bad arguments (the message names the argument and its range), a domain without
            a certified inscribed ball.

    Example:
        >>> import dponline
        >>> from dponline.domains import Simplex
        >>> learner = dponline.PrivateBandit(Simplex(3), horizon=100, epsilon=1.0, lipschitz=1.0, seed=0)
        >>> x = learner.ask(); learner.tell(float(x @ [0.3, 0.1, 0.5]))
        >>> learner.t
        1
    """

    _core_type = _core.PrivateBandit

    def __init__(
        self,
        domain: _core.Domain,
        *,
        horizon: int,
        epsilon: float | None,
        lipschitz: float,
        delta: float = 0.0,
        loss_bound: float | None = None,
        noise: Noise | None = None,
        calibration: Calibration | None = None,
        smoothing_radius: float | None = None,
        feasibility: Feasibility = "fkm",
        mechanism: Mechanism = "tree",
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler | None = None,
    ) -> None:
        domain = require_native(domain, "PrivateBandit")
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
        lipschitz = _validate.real("lipschitz", lipschitz, low=0.0, low_open=True)
        loss_bound = _validate.optional_real("loss_bound", loss_bound, low=0.0, low_open=True)
        smoothing_radius = _validate.optional_real("smoothing_radius", smoothing_radius, low=0.0, low_open=True)
        feasibility = _validate.option("feasibility", feasibility, ("fkm", "appendix-d"))  # type: ignore[assignment]
        args = MechanismArgs.validated(epsilon, delta, calibration, mechanism, sampler, strict, secure, seed)
        epsilon, delta, calibration, mechanism, sampler = args.target()
        noise = _validate.option("noise", args.noise if noise is None else noise, NOISES)  # type: ignore[assignment]
        constants = _core.PrivateBanditParams(
            domain,
            horizon,
            lipschitz,
            loss_bound=loss_bound,
            smoothing_radius=smoothing_radius,
            feasibility=feasibility,
        )
        params = constants.as_dict()
        if epsilon is None:
            scale, guarantee, details = 0.0, None, {}
        elif sampler == "exact":
            # The tree's input (a batch gradient sum) moves by sensitivity_l1 / _l2 when one round changes; the exact
            # discrete calibration with the grid rounding, never below the lemma under calibration="paper".
            floor, details = 0.0, {"lemma_scale": float("nan")}
            if mechanism == "tree":
                floor, _, details = private_bandit_noise(
                    params,
                    epsilon,
                    delta,
                    noise,
                    "paper" if calibration in (None, "paper") else calibration,
                    mechanism=mechanism,
                )
            scale, guarantee = exact_learner_noise(
                mechanism,
                noise,
                calibration,
                epsilon=epsilon,
                delta=delta,
                sensitivity=params["sensitivity_l1" if noise == "laplace" else "sensitivity_l2"],
                releases=int(params["t_round"]),
                dim=int(params["dim"]),
                at_least=floor if calibration == "paper" else 0.0,
                source=(
                    f"Ene-Nguyen-Vladu 2021 Algorithm 1, exact per-round sensitivity of the batch gradient sums (as in "
                    f"the proof of Lemma {'5.1' if noise == 'laplace' else '5.4'}), inflated by the Lemma on rounded "
                    f"batch sums (floating-point summation error, Higham 2002 §4.2)"
                ),
                randomness=args.randomness,
            )
            details = {**details, "exact_scale": scale}
        else:
            scale, guarantee, details = private_bandit_noise(
                params,
                epsilon,
                delta,
                noise,
                calibration or ("paper" if mechanism == "tree" else "analytic"),
                randomness=args.randomness,
                mechanism=mechanism,
            )
            guarantee = dataclasses.replace(guarantee, sampler="floating-point")
        if guarantee is not None:
            if not scale <= _core.MAX_NOISE_SCALE:
                raise InvalidInputError(
                    f"epsilon={epsilon!r}, delta={delta!r}, lipschitz={lipschitz!r}, loss_bound={loss_bound!r} and "
                    f"horizon={horizon} need a noise scale of {scale:.3g}, beyond the largest float64 noise supported "
                    f"({_core.MAX_NOISE_SCALE:g}); rescale the losses"
                )
        core = _core.PrivateBandit(constants, noise=noise, scale=scale, **args.native())
        self._adopt(core, args, domain=domain, horizon=horizon, privacy=guarantee)
        self._details = details

    # -- protocol ---------------------------------------------------------------------------------------
    def ask(self) -> np.ndarray:
        """The point ``y_t`` to play, shape ``(dim,)``, float64; always in the domain.

        Asking again before :meth:`tell` returns the same point.

        Raises:
            HorizonExhaustedError: after ``horizon`` rounds.
            StateError: the learner is being used by another thread.
        """
        return self._core.ask()

    def tell(self, loss: float) -> None:
        """Report ``f_t(y_t)`` (bandit feedback: one real number) for the last asked point.

        Raises:
            ProtocolError: without a preceding :meth:`ask`, or a second ``tell`` for the same point.
            InvalidInputError: ``loss`` is not a real number, or ``|loss| > loss_bound`` with ``strict=True``.
            NonFiniteError: NaN or inf. In every case the learner is unchanged.
        """
        self._core.tell(_validate.real("loss", loss))

    def _final_point(self) -> np.ndarray:
        return self._core.anchor

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        """Algorithm 1 line 1 schedule (``t_round``, ``t_batch``, ``eta``, ``zeta``, ...), the sensitivities,
        and the noise (``noise``, ``noise_scale``; ``lemma_scale``/``exact_scale`` when private)."""
        return {**self._native_params(), **self._details}

    clipped = clipped_count("Number of losses clipped to ``±loss_bound`` so far.")

    def regret_bound(self) -> RegretBound:
        """The explicit regret bound behind Lemma 3.1, with the constants of its proof (Appendix C), beside the
        trivial bound.

        With ``κ = T_batch^{1/2}·M + T_batch·L`` (``params["kappa"]``)
        (Lemma C.2, ``M = (d/ζ)B``), ``N = sqrt(n·r·Var) ≥ E‖Z_R‖₂`` for one release's noise vector (the sum of
        ``r = max(1, ⌈log₂ T_round⌉)`` independent node draws of per-coordinate variance ``Var``; Jensen) and
        ``γ = η(N + κ) + √20·D/√T_batch`` (Corollary C.5, whose ``⌈log T⌉·μ`` bounds the same ``E‖Z_R‖₂`` by the
        triangle inequality), Lemma 4.1's proof gives
        ``(ω*(0) + ω(x*))/η + (η/2)·T_round·κ² + T_round·κ·γ`` for the batched smoothed losses, to which
        (C.1), (C.3) and the feasibility device add ``2·T·ζ·L + T·α·L·D`` (``α = params["shrink"]``; Appendix D's
        ``T·ζ·L·D/r`` when ``α = ζ/r``). Here ``ω*(0) ≤ 0`` and
        ``ω(x*) ≤ (‖c‖ + D)²/2`` (``c`` the domain's interior point). The bound holds for every ``η``, so also for
        the noise-aware default (``params["eta"]``).

        Trivial bound (``RegretBound.trivial``): ``T·min(L·D, 2B)`` — per round two points of the domain differ in
        loss by at most ``L·D`` (Lipschitz) and ``2B`` (``|f_t| ≤ B``). ``RegretBound.vacuous`` says when the
        bound is not below it (at small ``T``, or with heavy noise).

        Other mechanisms (``"honaker"``, ``"blt"``, ``sampler="floating-point"``): ``N = sqrt(n·Var·v_max)`` with
        ``v_max`` the mechanism's largest per-release unit variance over the ``T_round`` releases (exact: its
        ``max_unit_variance()``).
        *Lemma.* The noise enters the proof only through ``E‖Z_R‖₂`` of each single release: Lemma C.3 bounds
        ``E‖x̂_R − ∇ω*(−η s̃_{R−2})‖ ≤ η(E‖Z_{R−2}‖₂ + κ)`` (1-smoothness of ``ω*`` and the triangle inequality;
        the paper writes ``⌈log T⌉·μ`` for the tree's ``E‖Z‖₂``), and Lemma 4.1's step (3) uses it as
        ``E⟨g̃_R, x̃_R − ∇ω*(·)⟩ ≤ E[‖x̃_R − ∇ω*(·)‖·E[‖g̃_R‖ | past]] ≤ κγ`` (the gradient estimate's direction
        is drawn after the release, and ``E[‖g̃‖² | past] ≤ κ²``). Neither step uses independence or identical
        distribution across releases, and ``E‖Z_R‖₂ ≤ sqrt(E‖Z_R‖₂²) = sqrt(n·Var·v_R) ≤ N`` for every release of
        a linear mechanism with i.i.d. draws of variance ``Var`` (Jensen; ``v_R`` its unit variance).

        Raises:
            DPOnlineError: ``mechanism`` is ``"honaker"`` or ``"blt"`` on the exact path (the default sampler):
                its encoder/decoder rounding is not in ``N``; the message names ``sampler="floating-point"``.
        """
        p = self.params
        mechanism = self._core.mechanism
        if mechanism != "tree" and self._sampler != "floating-point":
            raise DPOnlineError(
                f"regret_bound: the bound covers the padded tree, and mechanism={mechanism!r} only with "
                "sampler='floating-point' (on the exact path its rounding is not in the noise-norm term); "
                f"use mechanism='tree', or mechanism={mechanism!r} with sampler='floating-point'"
            )
        T, D, L = p["horizon"], p["diameter"], p["lipschitz"]
        Tb, Tr, eta, zeta = p["t_batch"], p["t_round"], p["eta"], p["zeta"]
        kappa = p["kappa"]
        var = 2 * p["noise_scale"] ** 2 if p["noise"] == "laplace" else p["noise_scale"] ** 2
        if mechanism == "tree":
            unit = max(1, (int(Tr) - 1).bit_length())  # every padded release sums max(1, ceil(log2 T_round)) draws
        else:  # the largest unit variance of any release (Lemma above)
            unit = _unit_probe(mechanism, int(Tr)).max_unit_variance()
        release_norm = math.sqrt(p["dim"] * unit * var)
        gamma = eta * (release_norm + kappa) + math.sqrt(20) * D / math.sqrt(Tb)
        radius = float(np.linalg.norm(self._domain.interior_point)) + D
        omd = (radius * radius / 2) / eta + eta / 2 * Tr * kappa**2 + Tr * kappa * gamma
        bound = omd + 2 * T * zeta * L + T * p["shrink"] * L * D
        return RegretBound(
            bound,
            trivial=T * min(L * D, 2.0 * p["loss_bound"]),
            source="Ene-Nguyen-Vladu 2021 Lemma 3.1 with the constants of Appendix C"
            + ("" if mechanism == "tree" else f" (E||Z_R|| <= sqrt(n Var v_max), mechanism={mechanism!r})")
            + "; trivial: T*min(L*D, 2B)",
        )
