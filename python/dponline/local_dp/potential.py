"""Algorithm 1 of van der Hoeven (2019): the one-dimensional parameter-free potential learner, and the
Theorem 1 bound."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any, Literal, get_args

from .. import _core, _state, _validate
from ..errors import InvalidInputError

__all__ = ["PotentialLearner1D", "theorem1_bound", "ACTION_LIMIT"]

ACTION_LIMIT = 1e100
"""Largest ``|w|`` a potential learner plays; beyond it the action saturates (counted as ``saturated``)."""

Prior = Literal["conjugate", "uniform", "improper"]
_PRIORS: tuple[Prior, ...] = get_args(Prior)


def theorem1_bound(u: float, G: float, b: float, sum_sq: float) -> float:
    """Theorem 1 of van der Hoeven (2019) evaluated at ``Σ g̃_t² = sum_sq``:

    ``1 + |u|·max{11G ln(11G|u|) − 1 + ln(5G√π/(4√b)), sqrt(8(b + S) ln(16|u|²(b + S)^{3/2}√π/√b + 1))}``

    with ``S = sum_sq``. The theorem bounds the *expected* regret with ``E[·]`` inside the square root; since
    the square-root term is concave in ``S``, evaluating it at ``E[S]`` (or at the average over seeds) gives
    an upper bound on the expected value of the realised expression. ``1`` for ``u = 0``.
    """
    au = abs(float(u))
    if au == 0.0:
        return 1.0
    # Logarithms of products are sums of logarithms, so no intermediate overflows for huge |u|, G, b or S.
    ln_au, ln_g, ln_b = math.log(au), math.log(G), math.log(b)
    first = (
        11.0 * G * (ln_au + math.log(11.0) + ln_g) - 1.0 + math.log(5.0 * math.sqrt(math.pi) / 4.0) + ln_g - ln_b / 2
    )
    s = b + float(sum_sq)
    inner = math.log(16.0 * math.sqrt(math.pi)) + 2.0 * ln_au + 1.5 * math.log(s) - ln_b / 2
    log_term = inner + math.log1p(math.exp(-inner)) if inner > 0 else math.log1p(math.exp(inner))
    second = math.sqrt(8.0 * s) * math.sqrt(log_term)
    bound = 1.0 + au * max(first, second)
    if not math.isfinite(bound):
        raise InvalidInputError(f"the Theorem 1 bound at |u| = {au:g}, S = {float(sum_sq):g} exceeds the float range")
    return bound


class PotentialLearner1D(_state.NativeState):
    """Algorithm 1 of van der Hoeven (2019): a parameter-free one-dimensional learner for noisy gradients.

    With ``C = 1/(5G)``, ``L_t = −Σ_{s<t} g̃_s`` and ``Q_t = Σ_{s<t} g̃_s²`` the learner plays (eq. 5)

        ``w_t = E_{v∼P}[ v · exp(L_t v − Q_t v²) ]``,  ``v ∈ [−C, C]``.

    It needs no learning rate and no bound on the comparator; the noise only has to be symmetric with
    ``|E g̃_t| ≤ G`` (Lemma 4/5). Priors:

    * ``"conjugate"`` (default): ``dP/dv ∝ exp(−b v²)`` (eq. 6, Koolen & van Erven 2015). The prediction is the
      closed form eq. (7) with ``B_t = b + Q_t``, evaluated in log-space through the scaled complementary
      error function (``erfcx``) and its continued fraction, in three regimes chosen so that nothing
      overflows or cancels for ``|L_t|, B_t`` up to ``10¹²`` and beyond (see
      ``rust/dponline-core/src/local_dp/potential.rs``). Regret: Theorem 1 (:meth:`regret_bound`).
    * ``"uniform"``: uniform on ``[−C, C]`` (Jun & Orabona 2019); the same closed form with ``B_t = Q_t``.
    * ``"improper"``: ``dP/dv = 1/|v|`` (§3, Appendix C): ``w_t = ∫_{−C}^{C} sign(v) e^{L_t v − Q_t v²} dv``,
      by adaptive Gauss-Kronrod quadrature.
    * a callable ``ν(v) -> float ≥ 0`` on ``[−C, C]``: the prior ``ν/Z``, ``Z`` and every prediction by
      adaptive quadrature (tolerance ``1e-13`` relative, at most 4000 subintervals, then
      :class:`~dponline.errors.ConvergenceError`). A callable is pickled by reference (a module-level function
      pickles; a lambda does not).

    **When it predicts 0.** With noisy gradients ``g̃_t = g_t + Z_t`` (``E Z_t = 0``, variance ``s²`` per round, e.g.
    ``8G²/τ²`` for the coordinate-wise Laplace randomiser) the potential is a function of ``L_t = −Σ g̃`` and
    ``Q_t = Σ g̃² ≈ t(ḡ² + s²)``: the conjugate prediction is about ``(L_t/2B_t)·sqrt(b/B_t)·exp(L_t²/(4B_t))``, which
    stays near 0 while ``|L_t| ≲ sqrt(B_t)`` — while the summed signal ``t|ḡ|`` is within a few noise standard
    deviations ``sqrt(t)·s``. That is the design, not a defect: Theorem 1 bounds the regret against ``u`` by about
    ``|u|·sqrt(8 Q_T ln(|u| Q_T))``, while predicting 0 has regret ``|u|·T|ḡ|``, so the bound is below predict-0 only
    from ``T ≳ 8(ḡ² + s²)·ln(·)/ḡ²``; at smaller horizons (small budgets ``τ``, i.e. large ``s``) the learner stays at
    0, which costs about the regret of predicting 0.

    Predictions whose magnitude would exceed ``1e100`` (only after long one-signed feedback: ``|w_t|`` can grow
    like ``e^{t/5}``) saturate at ``±1e100`` and are counted in :attr:`saturated`.

    Args:
        G: the bound ``|E g̃_t| ≤ G`` (declared before the data, > 0).
        prior: ``"conjugate"``, ``"uniform"``, ``"improper"`` or a callable density.
        b: the conjugate prior's precision ``b > 0`` (default ``G²``); ignored by the other priors.

    Raises:
        InvalidInputError: bad ``G``, ``b`` or ``prior``.

    Example:
        >>> import dponline
        >>> learner = dponline.PotentialLearner1D(1.0)
        >>> learner.ask()
        0.0
        >>> learner.tell(-0.5); learner.ask() > 0
        True
    """

    _core_type = _core.PotentialLearner1D

    def __init__(
        self,
        G: float,
        *,
        prior: Prior | Callable[[float], float] = "conjugate",
        b: float | None = None,
    ) -> None:
        G = _validate.real("G", G, low=0.0, low_open=True)
        b = G * G if b is None else _validate.real("b", b, low=0.0, low_open=True)
        self._density: Callable[[float], float] | None = None
        self._ln_z = 0.0
        if callable(prior):
            self._density = prior
            self._core = _core.PotentialLearner1D(G, prior="external", b=b)
            self._ln_z = _core.potential_log_normaliser(G, prior)
        else:
            prior = _validate.option("prior", prior, _PRIORS)
            self._core = _core.PotentialLearner1D(G, prior=prior, b=b)
        self._G = G
        self._b = b

    # -- protocol ---------------------------------------------------------------------------------------
    def log_prediction(self) -> tuple[float, float]:
        """``(sign, ln|w_t|)`` — the prediction without saturation (``ln|w_t|`` may exceed 230)."""
        if self._density is not None:
            return self._core.log_prediction_with(self._density, self._ln_z)
        return self._core.log_prediction()

    def ask(self) -> float:
        """The prediction ``w_t`` (a float, saturated at ``±1e100``).

        Raises:
            ConvergenceError: quadrature (improper or callable prior) did not converge.
            InvalidInputError, NonFiniteError: a callable prior returned a negative or non-finite value.
        """
        if self._density is None:
            return float(self._core.ask())
        sign, ln_abs = self.log_prediction()
        if sign == 0.0:
            return 0.0
        return sign * (ACTION_LIMIT if ln_abs > math.log(ACTION_LIMIT) else math.exp(ln_abs))

    def tell(self, g: float) -> None:
        """Absorb the noisy gradient ``g̃_t`` (any finite real: noise makes it unbounded).

        Raises:
            NonFiniteError: NaN/inf, or a value whose square overflows the running sum (state unchanged).
            InvalidInputError: not a real number.
        """
        self._core.tell(_validate.real("g", g))

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def G(self) -> float:
        """The declared bound ``G``."""
        return self._G

    @property
    def C(self) -> float:
        """``C = 1/(5G)``, the half-width of the prior's support."""
        return float(self._core.c)

    @property
    def b(self) -> float:
        """The conjugate prior's precision (unused by other priors)."""
        return self._b

    @property
    def prior(self) -> str:
        """``"conjugate"``, ``"uniform"``, ``"improper"`` or ``"callable"``."""
        return "callable" if self._density is not None else str(self._core.prior)

    @property
    def t(self) -> int:
        """Feedback absorbed so far."""
        return int(self._core.t)

    @property
    def neg_sum(self) -> float:
        """``L_t = −Σ g̃_s``."""
        return float(self._core.neg_sum)

    @property
    def sum_sq(self) -> float:
        """``Q_t = Σ g̃_s²``."""
        return float(self._core.sq_sum)

    @property
    def saturated(self) -> int:
        """Predictions that saturated at ``±1e100``."""
        return int(self._core.saturated)

    def regret_bound(self, u: float, sum_sq: float | None = None) -> float:
        """Theorem 1's bound on the expected (linearised) regret against ``u`` (conjugate prior), evaluated at
        ``Σ g̃_t² = sum_sq`` (default: the realised :attr:`sum_sq`). See :func:`theorem1_bound`.

        Raises:
            InvalidInputError: the prior is not the conjugate prior (Theorem 1 is stated for it).
        """
        if self.prior != "conjugate":
            raise InvalidInputError(f"Theorem 1 is stated for the conjugate prior, not {self.prior!r}")
        u = _validate.real("u", u)
        s = self.sum_sq if sum_sq is None else _validate.real("sum_sq", sum_sq, low=0.0)
        return theorem1_bound(u, self._G, self._b, s)

    # -- pickling (dponline._state.NativeState; a Python prior is pickled beside the core's state) ------------
    def _pack_state(self, state: dict[str, Any]) -> dict[str, Any]:
        if self._density is not None:
            state["_density"] = pickle.dumps(self._density)
        return state

    def _unpack_state(self, state: dict[str, Any]) -> dict[str, Any]:
        if state.get("_density") is not None:
            state["_density"] = pickle.loads(state["_density"])  # noqa: S301 - our own pickle of the prior
        return state

    def __repr__(self) -> str:
        return f"PotentialLearner1D(G={self._G:g}, prior={self.prior!r}, t={self.t})"
