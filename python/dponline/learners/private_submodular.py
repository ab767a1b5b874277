"""PrivateSubmodular (Perez-Salazar & Cummings 2021): private online monotone submodular maximisation."""

from __future__ import annotations

import math
import warnings
from typing import Any, Literal

import numpy as np

from .. import _core, _validate
from .._options import HEDGE_CALIBRATIONS, SAMPLERS, HedgeCalibration, Sampler
from .._seed import SeedLike
from ..errors import ExplorationCappedWarning, InvalidInputError, ProtocolError
from ..privacy import PrivacyGuarantee
from ..regret import RegretBound
from ._base import Learner, RunResult, clipped_count, randomness_of

__all__ = ["PrivateSubmodular", "SubmodularExperts", "submodular_privacy"]

_PAPER = "Perez-Salazar & Cummings 2021"
_UNIT = "one round's function f_t"
_NEIGHBOURING = "streams of set functions that differ in one round's f_t (replaced by any other)"
_FLOAT_NOTE = (
    "floating-point step: the mechanism itself, each Hedge expert's draw from its exponential weights (computed and "
    "sampled in floating point, sampler='floating-point')"
)
_EXACT_NOTE = (
    "exact exponential mechanism: each expert's payoffs are rounded onto the grid 2^-b (b = min(20, 64 - bit "
    "length of T)) and summed in integers (the rounding maps [0, 1] into the grid points of [0, 1], so the "
    "quality's sensitivity stays 1: the Lemma of the core's mwu::ExactHedge), eta is rounded down to a dyadic "
    "eta' <= eta (params['eta_exact']), and every draw is exactly proportional to exp(eta' u_i) of the rounded "
    "utilities u_i (uniform proposal accepted with an exact Bernoulli(exp(-eta'(u_max - u_i))), "
    "Canonne-Kamath-Steinke 2020 Algorithm 1); each draw is thus 2 eta'-DP <= 2 eta-DP as in Proposition 2"
)
_EXACT_SOURCE = "; exact draws (dponline.mwu ExactHedge Lemma: rounded payoffs keep sensitivity 1, eta' <= eta)"
_ZCDP_SOURCE = (
    "Proposition 2's draws composed in zCDP: each 2*eta-bounded range (Durfee-Rogers 2019), so eta^2/2-zCDP "
    "(Cesar-Rogers 2021); k*m draws compose to rho = k*m*eta^2/2 (Bun-Steinke 2016 Lemma 2.3), (eps, delta)-DP by "
    "Canonne-Kamath-Steinke 2020 Corollary 13"
)


def submodular_privacy(
    epsilon: float,
    delta: float,
    horizon: int,
    feedback: str,
    exploration: str,
    *,
    randomness: str = "",
    sampler: Sampler = "exact",
    calibration: HedgeCalibration = "zcdp",
) -> PrivacyGuarantee:
    """The guarantee of :class:`PrivateSubmodular` for the declared arguments.

    * ``feedback="full"`` — Algorithm 2 is ``(ε, δ)``-DP (Theorem 5; Lemma 1 with Proposition 2).
    * ``feedback="bandit"``, ``exploration="online"`` — Algorithm 3 is ``(ε, δ + e^{−8T^{1/3}})``-DP (Theorem 7):
      the extra term bounds the probability of more than ``2γT`` explore rounds. (Hoeffding's inequality gives
      ``P(M ≥ 2γT) ≤ e^{−2γ²T}``; with the paper's ``γ``, ``γ²T = k²(16|U| ln|U|)^{4/3} T^{1/3} ≥ 4 T^{1/3}``
      for every ``|U| ≥ 2``, so ``e^{−8T^{1/3}}`` holds. When ``γ`` is capped at 1 at least ``2γT`` explore
      rounds are impossible and the term is conservative.)
    * ``feedback="bandit"``, ``exploration="presampled"`` — ``(ε, δ)`` (Appendix B.2: ``η`` is set from the
      number ``M`` of explore rounds drawn before the data, so Theorem 5 applies to the ``M + 1`` releases).

    The private step is every expert's draw from its exponential weights (the exponential mechanism of
    Proposition 2); the neighbouring relation is replacing one round's function ``f_t``. ``m`` is the number of
    rounds whose draws depend on the data (``T``; ``2γT`` for online exploration; ``M + 1`` presampled), each
    with ``k`` draws. ``calibration`` sets ``η`` for that budget:

    * ``"zcdp"`` (default): the largest ``η`` for which the ``k·m`` draws compose to ``(ε, δ)``. A draw with a
      sensitivity-1 quality is ``2η``-bounded range (Durfee & Rogers 2019), hence ``η²/2``-zCDP (Cesar & Rogers
      2021); the draws compose to ``ρ = k·m·η²/2`` (Bun & Steinke 2016, Lemma 2.3, adaptive composition), and
      ``ρ``-zCDP is ``(ε, δ)``-DP by Canonne, Kamath & Steinke 2020, Corollary 13. So ``η = sqrt(2ρ*/(k·m))``,
      ``ρ*`` the largest budget within ``(ε, δ)`` (``params["rho"]``; :func:`dponline.privacy.zcdp_to_dp`
      converts it back). At ``ε = 1``, ``δ = 10⁻⁶`` this is at least ``4.6·sqrt(k)`` times the paper's rate.
    * ``"paper"``: the paper's ``η = ε / (k·sqrt(32·m·ln(k/δ)))`` (Lemma 1: advanced composition per expert,
      basic composition over the ``k`` experts), to reproduce its experiments.

    The extra ``δ`` of online exploration is the same for both (the probability of more than ``2γT`` explore
    rounds).
    ``sampler="exact"`` (default): the draws are exact for payoffs rounded onto a power-of-two grid — the
    rounding keeps the quality's sensitivity at exactly 1 and ``η`` is rounded down, so the same ``(ε, δ)``
    holds for the draws as made (see :class:`PrivateSubmodular`, ``sampler``). ``sampler="floating-point"``:
    the guarantee is that of the real-valued mechanism and carries the Mironov 2012 caveat
    (:attr:`PrivacyGuarantee.caveat`).

    Raises:
        InvalidInputError: bad arguments.
    """
    epsilon = _validate.real("epsilon", epsilon, low=0.0, low_open=True)
    delta = _validate.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    horizon = _validate.integer("horizon", horizon, low=1)
    feedback = _validate.option("feedback", feedback, ("full", "bandit"))
    exploration = _validate.option("exploration", exploration, ("online", "presampled"))
    sampler = _validate.option("sampler", sampler, SAMPLERS)  # type: ignore[assignment]
    calibration = _validate.option("calibration", calibration, HEDGE_CALIBRATIONS)  # type: ignore[assignment]
    step_note, source_note = (_EXACT_NOTE, _EXACT_SOURCE) if sampler == "exact" else (_FLOAT_NOTE, "")
    zcdp = calibration == "zcdp"

    def rate(m: str) -> str:
        if zcdp:
            return f"eta = sqrt(2 rho / (k {m})), rho the largest zCDP budget within (eps, delta)"
        return f"eta = eps / (k sqrt(32 {m} ln(k/delta)))"

    def guarantee(delta_out: float, source: str, notes: str) -> PrivacyGuarantee:
        return PrivacyGuarantee(
            epsilon=epsilon,
            delta=delta_out,
            source=f"{_PAPER}, {source}" + (f"; {_ZCDP_SOURCE}" if zcdp else "") + source_note,
            neighbouring=_NEIGHBOURING,
            unit=_UNIT,
            randomness=randomness,
            notes=notes,
            sampler=sampler,
        )

    if feedback == "full":
        return guarantee(
            delta,
            "Algorithm 2 (FI-DP), Proposition 2" if zcdp else "Theorem 5 (Algorithm 2, FI-DP; Lemma 1, Proposition 2)",
            f"{rate('T')}; {step_note}",
        )
    if exploration == "online":
        extra = math.exp(-8.0 * horizon ** (1.0 / 3.0))
        return guarantee(
            min(1.0, delta + extra),
            "Algorithm 3 (BanditDP), Theorem 7's explore-count bound" if zcdp else "Theorem 7 (Algorithm 3, BanditDP)",
            f"delta + exp(-8 T^(1/3)) = {delta:g} + {extra:.3g}; {rate('(2 gamma T)')}; {step_note}",
        )
    return guarantee(
        delta,
        "Appendix B.2 (presampled exploration)" + ("" if zcdp else " with Theorem 5"),
        f"{rate('(M + 1)')}, M ~ Binomial(T, gamma) drawn before the data; {step_note}",
    )


class SubmodularExperts:
    """What the learners that play ``k`` experts' picks share (:class:`PrivateSubmodular`,
    :class:`~dponline.PrivateSubmodularFTRL`): the asked set, the picks and each expert's distribution."""

    _core: Any
    _bandit: bool = False  # whether the learner is told only f_t(S_t)

    def ask(self) -> np.ndarray:
        """The set ``S_t`` to play: int64 array of at most ``k`` distinct item ids in ``[0, |U|)``.

        Asking again before :meth:`tell` returns the same set.

        Raises:
            HorizonExhaustedError: after ``horizon`` rounds.
            StateError: the learner is being used by another thread.
        """
        return self._core.ask()

    def _final_point(self) -> np.ndarray:
        return np.asarray(self._core.picks, dtype=np.int64)

    @property
    def picks(self) -> np.ndarray:
        """The experts' current picks ``a^1..a^k`` (int64, with repetitions)."""
        return self._core.picks

    def _tell_function(self, f: Any) -> float:
        """Full information from a set function ``f(items) -> float`` (or, with bandit feedback, its value at the
        asked set): ``k·(|U| + 1)`` queries for the gains of every expert's prefix, checked for monotonicity and
        submodularity within ``1e-9``; nothing is told until every query has returned."""
        if not self._core.pending:
            raise ProtocolError("tell() must follow ask(): one feedback per asked set")
        S = self.ask()  # the pending set again (asking again does not resample)

        def value(items: list[int]) -> float:
            return _validate.real("f(S)", f(list(dict.fromkeys(items))))

        payoff = value(S.tolist())
        if self._bandit:
            self._core.tell_payoff(payoff)
            return min(1.0, max(0.0, payoff))
        picks = self.picks.tolist()
        n = int(self._core.params["ground_set_size"])
        gains = np.empty((len(picks), n))
        for i in range(len(picks)):
            prefix = picks[:i]
            base = value(prefix)
            gains[i] = [value(prefix + [a]) - base for a in range(n)]
        if (gains < -1e-9).any():
            raise InvalidInputError("the set function is not monotone: a marginal gain is negative")
        if len(picks) > 1 and (gains[1:] > gains[:-1] + 1e-9).any():
            raise InvalidInputError("the set function is not submodular: a marginal gain grows along the prefixes")
        return float(self._core.tell_gains(gains, payoff))

    def expert_probabilities(self, i: int) -> np.ndarray:
        """Expert ``i``'s distribution over the items for its next pick (0-based, ``i < k``), float64 ``(|U|,)``;
        for :class:`PrivateSubmodular`'s exact sampler, the exact draws' law ``∝ exp(η' u_i)`` evaluated in
        floating point (for display).

        Raises:
            InvalidInputError: ``i`` not an integer in ``[0, k)``.
        """
        k = int(self._core.params["k"])
        return self._core.expert_probabilities(_validate.integer("i", i, low=0, high=k - 1))


class PrivateSubmodular(SubmodularExperts, Learner):
    """Differentially private online monotone submodular maximisation under a cardinality constraint.

    Source: Perez-Salazar & Cummings, "Differentially Private Online Submodular Maximization" (AISTATS 2021).
    Each round the learner plays a set ``S_t`` of at most ``k`` of the ``|U|`` items and earns ``f_t(S_t)`` for a
    monotone submodular ``f_t : 2^U → [0, 1]``. It runs ``k`` ordered Hedge experts over ``U`` (their
    Algorithm 1, :class:`dponline.mwu.Hedge`); expert ``i`` learns the item of best marginal gain given the
    picks of experts ``1..i−1`` (Streeter & Golovin 2009). With full information,
    :class:`~dponline.PrivateSubmodularFTRL` runs the same reduction with DP-FTRL experts, whose privacy costs far
    less at long horizons.

    * ``feedback="full"`` — Algorithm 2 (FI-DP): every expert samples ``a_t^i``, the learner plays
      ``S_t = ∪_i {a_t^i}`` and, told the row of ``f_t``, feeds expert ``i`` the marginal gains
      ``g_t^i(a) = f_t(S_t^{i−1} + a) − f_t(S_t^{i−1})``, ``S_t^i = ∪_{j≤i} {a_t^j}``, at rate
      ``η = sqrt(2ρ*/(k·T))`` (``calibration="zcdp"``, the default) or the paper's ``ε / (k·sqrt(32·T·ln(k/δ)))``
      (``calibration="paper"``).
    * ``feedback="bandit"`` — Algorithm 3 (BanditDP): with probability ``γ = min(1, k·((16|U| ln|U|)²/T)^{1/3})``
      (the cap binds for ``T ≤ k³(16|U| ln|U|)²``, e.g. about ``8.5·10⁸`` for ``k = 3``, ``|U| = 80``: the
      learner then explores every round, and the constructor warns with
      :class:`~dponline.errors.ExplorationCappedWarning` naming the horizon from which ``γ < 1``) a round
      explores — uniform ``i ∈ [k]`` and ``a ∈ U``, play ``S_t^{i−1} ∪ {a}``, feed ``f_t(S_t)`` to expert ``i`` on
      coordinate ``a``, then every expert resamples; otherwise the current set is played again.
      ``η = sqrt(2ρ*/(k·2γT))``, or the paper's ``ε / (k·sqrt(32·(2γT)·ln(k/δ)))``.
    * ``exploration="presampled"`` (bandit) — Appendix B.2: ``M ~ Binomial(T, γ)`` explore rounds are drawn
      before the data and ``η = sqrt(2ρ*/(k·(M+1)))``, or the paper's ``ε / (k·sqrt(32·(M+1)·ln(k/δ)))``. The
      explore rounds (a uniform ``M``-subset of the rounds given ``M``) are drawn sequentially — round ``t``
      explores with probability ``m/(T − t)`` while ``m`` remain — which has the same law as drawing them up
      front, in ``O(1)`` memory.

    ``epsilon=None`` is the non-private Streeter-Golovin learner on the same code path, with
    ``η = sqrt(ln|U| / T)`` (full information) or ``η = sqrt(k|U| ln|U| / (γT))`` (bandit; the minimiser of the
    bound in the proof of Lemma 3), ``ln|U|`` read as ``max(ln|U|, ln 2)``. All constants come from the declared
    arguments (``ground_set_size``, ``k``, ``horizon``, ``epsilon``, ``delta``), never from the data.

    Regret (``(1 − 1/e)``-regret ``R_T = (1 − 1/e)·max_{|S|≤k} Σ_t f_t(S) − Σ_t f_t(S_t)``): Theorem 6,
    ``E[R_T] ≤ k(ηT + ln|U|/η) = O(k² ln|U| sqrt(T ln(k/δ)) / ε)`` (full information); Theorem 8,
    ``O(sqrt(ln(k/δ))/ε · (k(|U| ln|U|)^{1/3})² T^{2/3})`` (bandit). :meth:`regret_bound` gives the explicit
    bounds of the proofs.

    Privacy: see :attr:`privacy` and :func:`submodular_privacy` — ``(ε, δ)`` for full information and presampled
    exploration, ``(ε, δ + e^{−8T^{1/3}})`` for online exploration, with respect to replacing one round's function
    ``f_t``. The paper proves them with advanced composition (Theorems 5, 7); the default ``calibration="zcdp"``
    accounts for the same draws in zCDP (each is a bounded-range exponential mechanism), which allows a rate
    at least ``4.6·sqrt(k)`` times the paper's at ``ε = 1``, ``δ = 10⁻⁶`` (8.35 times for ``k = 3``), for the same
    guarantee. ``ρ*`` is ``params["rho"]``. A seeded learner is private only while its seed is secret.

    Loss convention: :meth:`run` reports the per-round **loss** ``−f_t(S_t)`` (so ``total_loss = −Σ_t f_t(S_t)``
    and :func:`dponline.regret.submodular_regret_curve` is the cumulative loss minus the comparator's).

    Args:
        ground_set_size: ``|U| >= 1``.
        k: cardinality, ``1 <= k <= |U|``.
        horizon: ``T >= 1``.
        epsilon: ``ε > 0``, or ``None`` for the non-private learner (an ``ε`` so large that ``η > 1e100`` is
            refused).
        delta: ``δ ∈ (0, 1)`` (required when private; ignored otherwise).
        feedback: ``"full"`` or ``"bandit"``.
        exploration: ``"online"`` (default) or ``"presampled"`` (bandit only).
        calibration: how ``η`` is set from ``(ε, δ)`` (:func:`submodular_privacy`): ``"zcdp"`` (default; the
            largest rate the draws allow through zCDP) or ``"paper"`` (the paper's formula). Ignored when
            ``epsilon=None``.
        strict: raise :class:`InvalidInputError` for feedback outside ``[0, 1]`` instead of clipping it.
        sampler: how each expert draws from its exponential weights (the exponential mechanism of Proposition 2,
            composed by Lemma 1: the step the privacy rests on). ``None`` (default) means ``"exact"`` when private
            and ``"floating-point"`` for ``epsilon=None`` (nothing to protect).

            * ``"exact"``: every payoff (marginal gain, or bandit payoff) is clamped to ``[0, 1]`` and rounded to
              the grid ``2^-b``, ``b = min(20, 64 − bit length of T)`` (``params["payoff_grid"]``), and summed per
              item in 64-bit integers: rounding maps ``[0, 1]`` onto grid points of ``[0, 1]``, so replacing one
              ``f_t`` still moves every rounded utility ``u_i`` by at most 1 — the sensitivity has no rounding
              slack. ``η`` is rounded down, from the declared arguments only, to a dyadic ``η' = m·2^(b−63) ≤ η``
              with a 64-bit ``m`` (``params["eta_exact"]``; relative change below ``1/m``, about ``3·10⁻⁹`` at
              ``η = 4·10⁻⁵``). A draw proposes a uniform item and accepts it with an exact
              Bernoulli(``exp(−η'(u_max − u_i))``) (Canonne, Kamath & Steinke 2020, Algorithm 1), so it is
              distributed exactly ``∝ exp(η' u_i)``: the exponential mechanism at ``η' ≤ η`` is ``2η'``-DP and
              the paper's ``(ε, δ)`` holds for the sets as drawn, without the floating-point caveat. Cost: at
              most ``|U|`` proposals per draw on average, fewer than 2 at the private rates (weights nearly
              uniform); the number of proposals depends on the weights — a timing channel, outside the threat
              model. ``η`` must lie in ``[2^(b−63), 2^(b+1))`` (about ``[1.1·10⁻¹³, 2·10⁶)``).
            * ``"floating-point"``: log-domain weights and a float sum tree, ``O(log |U|)`` draws, bit-identical
              to earlier versions for a given seed; the guarantee is that of the real-valued mechanism
              (Mironov 2012 caveat in :attr:`PrivacyGuarantee.caveat`).
        seed: ``None``, int, ``SeedSequence`` or ``Generator``; same seed ⇒ the same sets via ``ask``/``tell``
            and via ``run``.
        secure: ``True`` only asserts the default: without a seed the noise comes from ChaCha20 keyed by the
            operating system, never serialised and re-keyed on copy, unpickling and in a forked child (``seed``
            must then be ``None``).

    Raises:
        InvalidInputError: bad arguments (``k = 0``, ``k > |U|``, ``δ ∉ (0, 1)`` when private, an unknown
            ``sampler``, with ``sampler="exact"`` an ``η`` outside its range (naming ``eta``), ...).
        MemoryError: the ``k`` experts' weights (about ``24·k·|U|`` bytes) cannot be allocated.

    Example:
        >>> import numpy as np, dponline
        >>> learner = dponline.PrivateSubmodular(5, 2, horizon=100, epsilon=1.0, delta=1e-6, seed=0)
        >>> S = learner.ask()
        >>> payoff = learner.tell(np.full(5, 0.1))  # full information: the row of f_t (click probabilities)
        >>> learner.t, len(S) <= 2
        (1, True)
    """

    _core_type = _core.PrivateSubmodular
    # Algorithm 3's explore count M ~ Binomial(T, γ), drawn at construction (exploration="presampled"), and the
    # rates set from it (Appendix B.2); the core refuses a decoded schedule whose rates M and ε, δ do not imply.
    _drawn_params = ("presampled_explores", "eta", "eta_exact")
    _family = (_core.SubmodularFamily, "a dponline.submodular family (SubmodularFamily)")

    def __init__(
        self,
        ground_set_size: int,
        k: int,
        *,
        horizon: int,
        epsilon: float | None,
        delta: float | None = None,
        feedback: Literal["full", "bandit"] = "full",
        exploration: Literal["online", "presampled"] = "online",
        calibration: HedgeCalibration = "zcdp",
        strict: bool = False,
        sampler: Sampler | None = None,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        if sampler is None:
            sampler = "floating-point" if epsilon is None else "exact"
        sampler = _validate.option("sampler", sampler, SAMPLERS)  # type: ignore[assignment]
        n = _validate.integer("ground_set_size", ground_set_size, low=1, high=2**40)
        k = _validate.integer("k", k, low=1, high=n)
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
        feedback = _validate.option("feedback", feedback, ("full", "bandit"))  # type: ignore[assignment]
        exploration = _validate.option("exploration", exploration, ("online", "presampled"))  # type: ignore[assignment]
        if feedback == "full" and exploration != "online":
            raise InvalidInputError("exploration='presampled' applies to feedback='bandit' only")
        strict, secure = _validate.flag("strict", strict), _validate.flag("secure", secure)
        calibration = _validate.option("calibration", calibration, HEDGE_CALIBRATIONS)  # type: ignore[assignment]
        if epsilon is None:
            guarantee = None
            delta = 0.0
        else:
            epsilon = _validate.real("epsilon", epsilon, low=0.0, low_open=True)
            if delta is None:
                raise InvalidInputError("delta is required when epsilon is given (delta in (0, 1))")
            delta = _validate.real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
            guarantee = submodular_privacy(
                epsilon,
                delta,
                horizon,
                feedback,
                exploration,
                randomness=randomness_of(seed, secure),
                sampler=sampler,
                calibration=calibration,
            )
        self._core = _core.PrivateSubmodular(
            n,
            k,
            horizon,
            epsilon=epsilon,
            delta=delta,
            feedback=feedback,
            exploration=exploration,
            calibration=calibration,
            strict=strict,
            sampler=sampler,
            seed=seed,
            secure=secure,
        )
        self._sampler = sampler
        self._horizon = horizon
        self._privacy = guarantee
        self._feedback = feedback
        self._bandit = feedback == "bandit"
        gamma_paper = float(self._core.params.get("gamma_paper", 0.0))
        if feedback == "bandit" and gamma_paper >= 1.0:
            # gamma = k((16|U| ln|U|)^2 / T)^(1/3) falls below 1 only from T' = T * gamma_paper^3 on.
            warnings.warn(
                f"PrivateSubmodular(feedback='bandit'): the exploration rate gamma = k((16|U| ln|U|)^2/T)^(1/3) = "
                f"{gamma_paper:.3g} is capped at 1 at horizon={horizon}: every round explores (uniform sets) and the "
                f"learner cannot exploit; gamma < 1 from horizon > {math.ceil(horizon * gamma_paper**3):.3g}",
                ExplorationCappedWarning,
                stacklevel=3,  # the caller of the constructor (through Learner's __init__ wrapper)
            )

    # -- protocol ---------------------------------------------------------------------------------------
    def tell(self, feedback: Any, *, kind: str = "probabilistic_coverage") -> float:
        """Report round ``t``'s feedback for the asked set.

        * full information, fast path: ``feedback`` is the row of ``f_t`` — float64 ``(|U|,)`` in ``[0, 1]`` — of
          the family ``kind`` (``"probabilistic_coverage"``: click probabilities ``p^t``;
          ``"facility_location"``: similarities ``s^t``). The learner evaluates the marginal gains natively.
        * full information, any set function: ``feedback`` is a callable ``f(items) -> float`` on lists of item
          ids (``f([]) = 0``). The learner queries it ``k·(|U| + 1)`` times for the gains of every expert's
          prefix — not the fast path. Gains below ``−1e-9`` (not monotone) or growing along the prefixes
          ``S^0 ⊆ S^1 ⊆ ...`` by more than ``1e-9`` (not submodular) raise; those are the only checks made.
        * bandit: ``feedback`` is the payoff ``f_t(S_t)`` (a real number), or a callable evaluated at ``S_t``.

        Returns ``f_t(S_t)`` (clipped). Values outside ``[0, 1]`` are clipped into it (counted in
        :attr:`clipped`) unless ``strict=True``.

        Raises:
            ProtocolError: without a preceding :meth:`ask`.
            InvalidInputError: wrong shape or type, an unknown ``kind``, out-of-range values with ``strict``, a
                callable that is not monotone submodular on the queried sets.
            NonFiniteError: NaN or inf. In every case the learner is unchanged.

        An exception raised by a callable ``feedback`` itself propagates unchanged, and the learner is unchanged
        too (it is told nothing until every query has returned).
        """
        if callable(feedback):
            return self._tell_function(feedback)
        if self._feedback == "full":
            kind = _validate.option("kind", kind, ("probabilistic_coverage", "facility_location"))
            return float(self._core.tell_row(feedback, kind))
        payoff = _validate.real("payoff", feedback)
        self._core.tell_payoff(payoff)
        return min(1.0, max(0.0, payoff))

    def run(
        self, losses: Any, *, rounds: int | None = None, checkpoints: int = 1000, progress: bool = False
    ) -> RunResult:
        """Play ``rounds`` rounds against a :mod:`dponline.submodular` family natively (GIL released); see
        :meth:`Learner.run`. The per-round loss is ``−f_t(S_t)``: ``total_loss = −Σ_t f_t(S_t)``, and
        ``final_point`` holds the experts' picks (int64).

        Raises:
            InvalidInputError: ``losses`` is not a submodular family or has another ground-set size.
            ProtocolError, HorizonExhaustedError, StateError: as :meth:`Learner.run`.
        """
        return super().run(losses, rounds=rounds, checkpoints=checkpoints, progress=progress)

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        """Schedule: ``eta``, ``gamma`` (capped at 1), ``gamma_paper`` (uncapped), ``presampled_explores``,
        ``k``, ``ground_set_size``, ``horizon``, ``epsilon``, ``delta``, ``feedback``, ``exploration``,
        ``sampler``, and for ``sampler="exact"`` ``eta_exact`` (the rounded ``η' ≤ η`` the draws use) and
        ``payoff_grid`` (``2^-b``; both ``None`` otherwise)."""
        return dict(self._core.params)

    @property
    def explores(self) -> int:
        """Explore rounds so far (bandit)."""
        return int(self._core.explores)

    clipped = clipped_count("Feedback values clipped into ``[0, 1]`` so far.")

    def regret_bound(self) -> RegretBound:
        """Explicit bound on the expected ``(1 − 1/e)``-regret from the proofs, beside the trivial bound
        ``(1 − 1/e)·T`` (``RegretBound.trivial``: payoffs in ``[0, 1]``, so ``(1 − 1/e)·OPT ≤ (1 − 1/e)·T``) and
        whether it is below it.

        * full information (Theorem 6's proof, Hedge bound of Theorem 3 with payoffs in ``[0, 1]``):
          ``k·(ηT + ln|U|/η)``;
        * bandit (Lemmas 2 and 3): ``k·(ηT + k|U| ln|U|/(γη) + (k|U|/γ)·T·e^{−8γ²T}) + γT``.

        Here ``ln|U|`` is the natural logarithm (``max(ln|U|, ln 2)``, as for ``η``).

        Raises:
            InvalidInputError: the bound exceeds the float64 range (an ``ε`` so small that ``ln|U|/η`` overflows).
        """
        p = self.params
        T, n, k, eta = float(p["horizon"]), float(p["ground_set_size"]), float(p["k"]), float(p["eta"])
        log_n = max(math.log(n), math.log(2.0))
        trivial, source = (
            (1.0 - 1.0 / math.e) * T,
            "Perez-Salazar & Cummings 2021 Theorems 6/8 (proofs); trivial: (1-1/e)*T",
        )
        if p["feedback"] == "full":
            bound = k * (eta * T + log_n / eta)
        else:
            gamma = float(p["gamma"])
            if gamma <= 0:
                return RegretBound(0.0, trivial=trivial, source=source)
            tail = (k * n / gamma) * T * math.exp(-8.0 * gamma * gamma * T)
            bound = k * (eta * T + k * n * log_n / (gamma * eta) + tail) + gamma * T
        if not math.isfinite(bound):
            raise InvalidInputError(f"the regret bound overflows float64 (eta = {eta:g}): declare a larger epsilon")
        return RegretBound(bound, trivial=trivial, source=source)

    def __repr__(self) -> str:
        p = self._core.params
        eps = self._epsilon_text()
        return (
            f"PrivateSubmodular({p['ground_set_size']}, {p['k']}, horizon={self.horizon}, epsilon={eps}, "
            f"feedback={p['feedback']!r}, t={self.t})"
        )
