"""PrivateDRSubmodular (Perez-Salazar & Cummings 2021, Algorithm 4): private online DR-submodular maximisation."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from .. import _core, _validate, privacy
from .._options import MECHANISMS, Calibration, Mechanism, Sampler
from .._seed import SeedLike
from ..errors import DPOnlineError, InvalidInputError
from ..privacy import PrivacyGuarantee
from ..regret import RegretBound
from ._base import DomainLearner, MechanismArgs, PrefixSumLearner, RunResult, clipped_count
from ._tree_noise import _learner_noise
from .private_submodular import _NEIGHBOURING, _UNIT

__all__ = ["PrivateDRSubmodular", "dr_submodular_privacy"]

_SOURCE = "Perez-Salazar & Cummings 2021, Theorem 9"


def dr_submodular_privacy(
    epsilon: float,
    delta: float,
    copies: int,
    gradient_bound: float,
    horizon: int,
    calibration: Calibration | None = "paper",
    mechanism: Mechanism = "tree",
    *,
    randomness: str = "",
    sampler: Sampler = "floating-point",
    dim: int = 1,
) -> tuple[str, float, PrivacyGuarantee]:
    """Per-draw noise of every PFTAL copy of :class:`PrivateDRSubmodular`, and the learner's guarantee.

    Lemma 4 (with Lemma 6) of Perez-Salazar & Cummings: the ``K`` copies, each ``ε/K``-DP given the outputs of the
    copies before it, are ``ε``-DP together — basic (adaptive) composition; with Gaussian noise each copy is
    ``(ε/K, δ/K)``-DP and the copies compose to ``(ε, δ)``. Each copy is a prefix-sum mechanism whose round-``t``
    input (the gradient, clipped to ``‖g‖ ≤ G``) moves by at most ``2G`` when ``f_t`` is replaced; its noise is
    :func:`dponline.learners.dp_ftrl_noise` at ``(ε/K, δ/K)`` for the padded tree (``δ = 0``: Laplace,
    Agarwal-Singh Lemma 3.3, ``G`` an L1 bound — the paper's pure ``ε``; ``δ > 0``: Gaussian, ``G`` an L2 bound,
    ``calibration`` ``"paper"``/``"analytic"``/``"zcdp"``), or the exact calibration of the other mechanisms
    (``calibration="analytic"`` only). With ``sampler="exact"`` each copy is the exact discrete mechanism on
    ``dim``-vectors (:func:`~dponline.learners._base.exact_learner_noise`: discrete Laplace exact ε, discrete
    Gaussian through zCDP and Canonne-Kamath-Steinke, the grid rounding in the sensitivity; ``calibration=None``
    is that tightest one, ``"paper"`` keeps the paper's scale as a floor); the composition is the same. The
    learner passes its own ``sampler`` (default ``"exact"`` there); this function's default is the float path.

    Returns:
        ``(noise, scale, guarantee)``.

    Raises:
        InvalidInputError: arguments out of range, ``"zcdp"`` with ``δ = 0``, a calibration the mechanism does not
            accept.
    """
    epsilon = _validate.real("epsilon", epsilon, low=0.0, low_open=True)
    delta = _validate.real("delta", delta, low=0.0, high=1.0, high_open=True)
    copies = _validate.integer("copies", copies, low=1, high=4096)
    gradient_bound = _validate.real("gradient_bound", gradient_bound, low=0.0, low_open=True)
    horizon = _validate.integer("horizon", horizon, low=1)
    mechanism = _validate.option("mechanism", mechanism, MECHANISMS)
    eps_copy, delta_copy = epsilon / copies, delta / copies
    per_copy_args = MechanismArgs(eps_copy, delta_copy, calibration, mechanism, sampler, False, False, None)
    noise, scale, per_copy = _learner_noise(per_copy_args, gradient_bound, horizon, dim)
    total = privacy.basic_composition([per_copy] * copies)
    guarantee = PrivacyGuarantee(
        epsilon=total.epsilon,
        delta=total.delta,
        source=f"{_SOURCE} (Lemmas 4 and 6: {copies} PFTAL copies at eps/K, basic composition)",
        neighbouring=_NEIGHBOURING,
        unit=_UNIT,
        randomness=randomness,
        sampler=sampler,
        notes=(
            f"each copy: (eps={eps_copy:.6g}, delta={delta_copy:.3g}) by {per_copy.source}; {noise} scale "
            f"{scale:.6g} per draw, gradients clipped to {gradient_bound:g} "
            f"({'L1' if noise == 'laplace' else 'L2'}), sensitivity 2G per copy"
        ),
    )
    return noise, scale, guarantee


class PrivateDRSubmodular(PrefixSumLearner, DomainLearner):
    """Differentially private online maximisation of probabilistic coverage over a matroid, via its multilinear
    extension (continuous DR-submodular maximisation), played as sets.

    Source: Perez-Salazar & Cummings, "Differentially Private Online Submodular Maximization" (AISTATS 2021),
    Algorithm 4 and Theorem 9 (Appendix C: Lemmas 4-7), built on the online Frank-Wolfe of Chen, Hassani &
    Karbasi (2018) and the private follow-the-approximate-leader (PFTAL) of Thakurta & Smith (2013).

    Each round ``t`` brings click probabilities ``p^t ∈ [0, 1]^n`` and the coverage function
    ``f_t(S) = 1 − Π_{a∈S}(1 − p_a^t)``, whose multilinear extension ``F_t(x) = 1 − Π_a (1 − p_a^t x_a)`` is
    monotone DR-submodular with gradient ``∂F_t/∂x_a = p_a^t Π_{b≠a}(1 − p_b^t x_b)`` (computed in ``O(n)`` by
    prefix and suffix products, exact when a factor is 0).

    * ``K`` copies ``E_0..E_{K−1}`` of PFTAL, ``K = ⌈sqrt(√T / ln^{2.5} T)⌉`` (Algorithm 4; at least 1, ``ln T``
      read as ``max(ln T, 1)``) unless ``copies`` is given. Copy ``k`` plays ``v_t^k`` in the domain; the learner's
      fractional point is ``x_t = (1/K) Σ_k v_t^k``, and copy ``k`` is fed the gradient ``∇F_t(x_t^k)`` at the
      partial average ``x_t^k = (1/K) Σ_{j<k} v_t^j``, clipped to the declared ``‖g‖ ≤ G``.
    * One PFTAL copy: the clipped gradients enter a private prefix-sum mechanism (``mechanism="tree"``, the
      padded binary tree of the paper's PFTAL, by default; ``"honaker"``, ``"blt"``); after ``t`` rounds it plays
      ``v = argmin_{v∈X} −⟨G̃_t, v⟩ + (H·max(t, 1)/2)‖v − c‖² = Π_X(c + G̃_t / (H·max(t, 1)))`` — Thakurta &
      Smith's approximate leader for the linear gains regularised by ``(H/2)‖v − c‖²``. The paper centres the
      regulariser at ``c = 0`` (``center="origin"``); by default (``center="uniform"``) ``c_a = k_j/|B_j|`` for
      the items of block ``B_j`` (capacity ``k_j``), the marginals of a uniformly random full independent set.
      While the noise dominates the prefix sums the copies then play near ``c`` — a random full set after
      rounding, what a random choice collects — instead of near the empty set, which collects nothing. FTRL's
      bound keeps its form with ``R_c² = max_{x∈X} ‖x − c‖² = Σ_j k_j·max(q_j, 1 − q_j)``, ``q_j = k_j/|B_j|``
      (``params["center_radius_squared"]``, at most the rank); the privacy is unchanged (post-processing of the
      releases). ``argmin="projection"`` (default)
      computes the projection onto the matroid polytope exactly (block by block, bisection to adjacent floats);
      ``argmin="frank-wolfe"`` takes ``lmo_calls`` warm-started Frank-Wolfe steps with the domain's LMO.
      ``H`` (``regularization``) defaults to the minimiser of the explicit per-copy bound of
      :meth:`regret_bound_terms`, from declared constants only.
    * Rounding: ``x_t`` is rounded to the played set ``S_t`` by randomized pipage rounding in each block
      (Calinescu-Chekuri-Pál-Vondrák 2011): every ``S_t`` is independent in the matroid,
      ``P(a ∈ S_t) = x_{t,a}`` and ``E[f_t(S_t)] ≥ F_t(x_t)`` (``F_t`` is convex along ``e_i − e_j``).

    Domain: :class:`dponline.domains.UniformMatroid` or :class:`dponline.domains.PartitionMatroid` in
    independence form (``base=False``: Algorithm 4 needs ``0`` in the domain).

    Privacy: ``(ε, δ)``-DP with respect to replacing one round's ``f_t`` (its probability row) — Theorem 9 /
    Lemma 4, each copy at ``ε/K`` (``δ/K``) and basic composition across the ``K`` copies; see
    :func:`dr_submodular_privacy`. ``delta=0`` (default) is the paper's pure ``ε`` with Laplace noise and ``G``
    an L1 bound (default ``G = n``: every partial derivative is at most ``p_a ≤ 1``); ``delta > 0`` uses Gaussian
    noise with ``G`` an L2 bound (default ``G = sqrt(n)``). A seeded learner is private only while its seed is
    secret. ``epsilon=None`` is the non-private algorithm on the same code path (no noise).

    Regret: Theorem 9 states ``O(T^{3/4} sqrt(ln^{2.5} T)/ε)`` with unstated constants (dimension, gradient and
    diameter hidden), so it cannot be evaluated; :meth:`regret_bound` evaluates Lemma 7 (Chen et al.) with an
    explicit bound for each copy instead (see :meth:`regret_bound_terms`).

    Loss convention: :meth:`run` reports the per-round loss ``−f_t(S_t)``.

    Args:
        domain: a uniform or partition matroid polytope with ``base=False``.
        horizon: ``T >= 1``.
        epsilon: ``ε > 0``, or ``None`` (non-private).
        delta: ``δ ∈ [0, 1)``; 0 = Laplace (pure ``ε``), > 0 = Gaussian.
        gradient_bound: declared ``G > 0`` (default ``n`` for ``δ = 0``, ``sqrt(n)`` otherwise).
        copies: ``K`` (default: the paper's).
        regularization: ``H > 0`` (default: the minimiser of the per-copy bound).
        center: ``"uniform"`` (default) or ``"origin"`` (the paper's ``(H/2)‖v‖²``): where each copy's regulariser
            is centred (see above).
        calibration: ``None`` (default): on the exact path (the default sampler) the exact calibration of the
            discrete mechanism, the tightest proved; with ``sampler="floating-point"`` the paper's for the tree and
            the analytic Gaussian for the other mechanisms. ``"paper"``, ``"analytic"`` or ``"zcdp"`` (Gaussian
            only; non-tree mechanisms accept ``"analytic"`` only) choose one.
        mechanism: ``"tree"`` (default), ``"honaker"`` or ``"blt"``.
        argmin: ``"projection"`` (default) or ``"frank-wolfe"``.
        lmo_calls: Frank-Wolfe steps per copy and round (``argmin="frank-wolfe"``; default 4).
        strict: raise :class:`InvalidInputError` for probabilities outside ``[0, 1]`` instead of clipping them.
        seed: ``None``, int, ``SeedSequence`` or ``Generator``.
        secure: ``True`` only asserts the default: without a seed the noise comes from ChaCha20 keyed by the
            operating system, never serialised and re-keyed on copy, unpickling and in a forked child (``seed``
            must then be ``None``).

    Raises:
        InvalidInputError: bad arguments; a domain that is not a matroid polytope in independence form.
        MemoryError: the ``K`` copies' mechanism state (``K·n·(2⌊log₂T⌋ + 5)`` doubles or more for the padded
            tree) cannot be allocated.

    Example:
        >>> import numpy as np, dponline
        >>> from dponline.domains import PartitionMatroid
        >>> domain = PartitionMatroid([[0, 1, 2], [3, 4]], [1, 1], base=False)
        >>> learner = dponline.PrivateDRSubmodular(domain, horizon=100, epsilon=1.0, seed=0)
        >>> S = learner.ask()                      # at most one item of {0, 1, 2} and one of {3, 4}
        >>> clicks = learner.tell(np.full(5, 0.1))  # this round's click probabilities
        >>> learner.t, learner.params["copies"]
        (1, 1)
    """

    _core_type = _core.PrivateDRSubmodular
    _family = (_core.SubmodularFamily, "a dponline.submodular.ProbabilisticCoverage family")

    def __init__(
        self,
        domain: _core.Domain,
        *,
        horizon: int,
        epsilon: float | None,
        delta: float = 0.0,
        gradient_bound: float | None = None,
        copies: int | None = None,
        regularization: float | None = None,
        center: Literal["uniform", "origin"] = "uniform",
        calibration: Calibration | None = None,
        mechanism: Mechanism = "tree",
        argmin: Literal["projection", "frank-wolfe"] = "projection",
        lmo_calls: int = 4,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
        sampler: Sampler | None = None,
    ) -> None:
        if not isinstance(domain, (_core.UniformMatroid, _core.PartitionMatroid)):
            raise InvalidInputError(
                f"domain must be a UniformMatroid or PartitionMatroid (base=False), got {type(domain).__name__}"
            )
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
        args = MechanismArgs.validated(epsilon, delta, calibration, mechanism, sampler, strict, secure, seed)
        epsilon, delta = args.epsilon, args.delta
        n = int(domain.dim)
        default_bound = float(n) if delta == 0 else math.sqrt(n)
        gradient_bound = _validate.optional_real("gradient_bound", gradient_bound, low=0.0, low_open=True)
        gradient_bound = default_bound if gradient_bound is None else gradient_bound
        copies = None if copies is None else _validate.integer("copies", copies, low=1, high=4096)
        regularization = _validate.optional_real("regularization", regularization, low=0.0, low_open=True)
        argmin = _validate.option("argmin", argmin, ("projection", "frank-wolfe"))  # type: ignore[assignment]
        center = _validate.option("center", center, ("uniform", "origin"))  # type: ignore[assignment]
        lmo_calls = _validate.integer("lmo_calls", lmo_calls, low=1, high=2**32 - 1)
        declared = _core.PrivateDRSubmodularParams(
            domain,
            horizon,
            gradient_bound,
            norm="l1" if delta == 0 else "l2",
            copies=copies,
            regularization=regularization,
            center=center,
            argmin=argmin,
            lmo_calls=lmo_calls,
        )
        k = int(declared.as_dict()["copies"])
        if epsilon is None:
            noise_name, scale, guarantee = args.noise, 0.0, None
        else:
            noise_name, scale, guarantee = dr_submodular_privacy(
                epsilon,
                delta,
                k,
                gradient_bound,
                horizon,
                args.calibration,
                args.mechanism,
                randomness=args.randomness,
                sampler=args.sampler,
                dim=n,
            )
        core = _core.PrivateDRSubmodular(declared, noise=noise_name, scale=scale, **args.native())
        self._adopt(core, args, domain=domain, horizon=horizon, privacy=guarantee)

    # -- protocol ---------------------------------------------------------------------------------------
    def ask(self) -> np.ndarray:
        """The set ``S_t`` to play: int64 array of increasing item ids, independent in the matroid. Asking again
        before :meth:`tell` returns the same set.

        Raises:
            HorizonExhaustedError: after ``horizon`` rounds. StateError: used by another thread.
        """
        return self._core.ask()

    def tell(self, p: Any) -> float:
        """Report round ``t``'s click probabilities ``p^t`` — float64 ``(n,)`` in ``[0, 1]`` (clipped into it unless
        ``strict=True``). Returns ``f_t(S_t) = 1 − Π_{a∈S_t}(1 − p_a^t)``.

        Raises:
            ProtocolError: without a preceding :meth:`ask`.
            InvalidInputError: wrong shape or type; values outside ``[0, 1]`` with ``strict=True``.
            NonFiniteError: NaN or inf. In every case the learner is unchanged.
        """
        return float(self._core.tell(_validate.real_array("p", p, (self._core.params["ground_set_size"],))))

    def run(
        self, losses: Any, *, rounds: int | None = None, checkpoints: int = 1000, progress: bool = False
    ) -> RunResult:
        """Play ``rounds`` rounds against a :class:`dponline.submodular.ProbabilisticCoverage` family natively (GIL
        released); see :meth:`Learner.run`. ``total_loss = −Σ_t f_t(S_t)``; ``final_point`` is the fractional
        point ``(1/K) Σ_k v^k`` of the next round.

        Raises:
            InvalidInputError: ``losses`` is not a probabilistic-coverage family of the right ground-set size.
            ProtocolError, HorizonExhaustedError, StateError: as :meth:`Learner.run`.
        """
        return super().run(losses, rounds=rounds, checkpoints=checkpoints, progress=progress)

    def _final_point(self) -> np.ndarray:
        return self._core.fractional_point

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        """``copies`` (``K``, with ``copies_rule``), ``regularization`` (``H``), ``gradient_bound`` (``G``) and its
        ``norm``, ``radius_squared`` (``R²``, the matroid's rank), ``center`` and ``center_radius_squared``
        (``R_c²``), ``noise_norm`` (``N``), ``argmin``,
        ``lmo_calls``, ``diameter``, ``copy_regret_bound``, and the noise (``noise``, ``noise_scale``,
        ``mechanism``)."""
        return self._native_params("mechanism")

    @property
    def point(self) -> np.ndarray:
        """The fractional point ``x_t`` of the asked round (float64 ``(n,)``; zeros before the first :meth:`ask`)."""
        return self._core.point

    def copy_point(self, k: int) -> np.ndarray:
        """Copy ``k``'s current point ``v^k`` (float64 ``(n,)``), ``0 <= k < copies``.

        Raises:
            InvalidInputError: ``k`` not an integer in ``[0, copies)``.
        """
        copies = int(self._core.params["copies"])
        return self._core.copy_point(_validate.integer("k", k, low=0, high=copies - 1))

    clipped = clipped_count("Rounds whose probability row (outside ``[0, 1]``) or gradient (beyond ``G``) was clipped.")

    def regret_bound_terms(self, *, smoothness: float | None = None) -> dict[str, Any]:
        """The terms of :meth:`regret_bound`.

        Lemma 7 (Chen, Hassani & Karbasi 2018, restated in Appendix C): ``(1 − 1/e)``-regret ``≤ (1/K) Σ_k r_k +
        β R² T/(2K)``, with ``r_k`` the regret of copy ``k`` against its linear gains, ``β`` the smoothness of the
        ``F_t`` and ``R² = max_{x∈X} ‖x‖²`` (the rank). Per copy (``copy``; all copies share one bound), with
        ``G`` bounding the L2 norm of the gradients, ``N = sqrt(n·draws·Var)`` the padded tree's bound on
        ``E‖Z‖₂`` and ``λ_t = H·max(t, 1)``:

        * ``ftrl``: ``H T R_c²/2 + G²(2 + ln T)/(2H)`` — FTRL with the regularisers ``(λ_{t−1}/2)‖v − c‖²``,
          ``R_c² = max_{x∈X} ‖x − c‖²`` (Orabona 2019, Corollary 7.9; ``c ∈ X``);
        * ``noise``: ``G·N·(2 + ln T)/H`` — the release noise moves each projection by at most ``‖Z‖/λ``;
        * ``frank_wolfe``: ``T·G·2D/sqrt(lmo_calls + 2)`` for ``argmin="frank-wolfe"`` (0 for the projection);
        * ``smoothness``: ``β R² T/(2K)``. ``β`` defaults to ``n``, a bound from ``p ∈ [0, 1]^n`` alone: the Hessian
          of ``F_t`` has zero diagonal and ``|∂²F/∂x_a∂x_b| ≤ p_a p_b``, so ``β ≤ ‖p‖² ≤ n``. A smaller declared
          ``smoothness`` (e.g. ``n·p_max²`` for probabilities known to be at most ``p_max``) tightens the bound
          and changes nothing in the algorithm.

        The bound holds for the expected fractional value ``Σ F_t(x_t)``, hence for ``E Σ f_t(S_t)`` (pipage
        rounding), against ``(1 − 1/e)·max_{x∈X} Σ_t F_t(x)``.

        Raises:
            DPOnlineError: ``mechanism`` other than the padded tree (``N`` is the tree's).
            InvalidInputError: a bad ``smoothness``.
            InvalidInputError: the bound exceeds the float64 range (a huge ``smoothness``).
        """
        p = self.params
        if p["mechanism"] != "tree" and p["noise_scale"] > 0:
            raise DPOnlineError(
                f"regret_bound covers the padded tree only, not mechanism={p['mechanism']!r} (its noise term N is "
                "the padded tree's); use mechanism='tree', or epsilon=None"
            )
        n = p["ground_set_size"]
        beta = float(n) if smoothness is None else _validate.real("smoothness", smoothness, low=0.0)
        T, K = float(p["horizon"]), float(p["copies"])
        G, H, N, R2 = p["gradient_bound"], p["regularization"], p["noise_norm"], p["radius_squared"]
        Rc2 = p["center_radius_squared"]
        if p["norm"] == "l1":
            G = min(G, math.sqrt(n))  # ‖g‖₂ ≤ ‖g‖₁, and ‖∇F‖₂ ≤ sqrt(n) for p in [0, 1]
        log_term = 2.0 + math.log(T)
        ftrl = 0.5 * H * T * Rc2 + G * G * log_term / (2.0 * H)
        noise = G * N * log_term / H
        fw = 0.0
        if p["argmin"] == "frank-wolfe":
            fw = T * G * 2.0 * p["diameter"] / math.sqrt(p["lmo_calls"] + 2)
        copy = ftrl + noise + fw
        smooth = beta * R2 * T / (2.0 * K)
        if not math.isfinite(copy + smooth):
            raise InvalidInputError(
                f"the regret bound overflows float64 (copy {copy:g}, smoothness term {smooth:g}): declare a smaller "
                "smoothness"
            )
        return {
            "ftrl": ftrl,
            "noise": noise,
            "frank_wolfe": fw,
            "copy": copy,
            "smoothness": smooth,
            "total": copy + smooth,
            "source": "Perez-Salazar & Cummings 2021 Lemma 7 (Chen et al. 2018) with an explicit PFTAL bound; "
            "Theorem 9's constants are not stated",
        }

    def regret_bound(self, *, smoothness: float | None = None) -> RegretBound:
        """Bound on the expected ``(1 − 1/e)``-regret ``(1 − 1/e)·max_{x∈X} Σ_t F_t(x) − E Σ_t f_t(S_t)``:
        ``total`` of :meth:`regret_bound_terms` (Theorem 9's own constants are not stated in the paper), beside the
        trivial bound ``(1 − 1/e)·T`` (``RegretBound.trivial``: coverage values lie in ``[0, 1]``) and whether it is
        below it.

        Raises:
            as :meth:`regret_bound_terms`.
        """
        terms = self.regret_bound_terms(smoothness=smoothness)
        return RegretBound(
            terms["total"],
            trivial=(1.0 - 1.0 / math.e) * self.horizon,
            source=terms["source"] + "; trivial: (1-1/e)*T",
        )
