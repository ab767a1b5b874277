"""User-specified local differential privacy for unconstrained online learning (van der Hoeven 2019).

Source: D. van der Hoeven, "User-Specified Local Differential Privacy in Unconstrained Adaptive Online
Learning", NeurIPS 2019 (``shared/papers/001_b4b7b13171319a52.txt``).

In the *local* model every data provider privatises its own subgradient before the learner sees it:
round ``t``'s provider releases ``g̃_t = g_t + ξ_t`` with symmetric zero-mean noise of its own choosing (its
budget is never revealed), and the learner adapts to whatever noise arrives.

* :class:`LocalLaplaceRandomizer` — the local Laplace randomiser of §2.1 (per-coordinate budgets, Lemma 1)
  and the ℓ2 variant ``ρ(z) ∝ exp(−ε‖z‖₂/2)`` (Song et al. 2015, Theorem 1).
* :class:`PotentialLearner1D` — Algorithm 1, the one-dimensional parameter-free potential learner
  (eqs. 5-7, Theorem 1).
* :class:`LocalStream` — providers (features, labels, loss, per-round budgets) for native runs.
* :class:`CoordinatewiseLearner` (Algorithm 3, Theorem 2), :class:`UnconstrainedLearner` (Algorithm 2,
  Lemma 6), and the baselines :class:`OnlineGradientDescent` and :class:`AdaGrad`, all with ``ask``/``tell``
  and a native ``run`` in which each provider's subgradient is computed, clipped to ``G`` and privatised.

The learners add no noise: privacy is the providers' (local model), see :meth:`LocalStream.privacy`; each
learner's :attr:`~LocalLearner.privacy` is therefore ``None``. In a simulation the learner's ``seed`` keys the
providers' noise; a seeded simulation is private only while its seed is secret.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from . import _core, _validate
from ._seed import SeedLike
from .errors import DPOnlineError, InvalidInputError
from .learners._base import Learner, RunResult, randomness_of
from .privacy import PrivacyGuarantee

__all__ = [
    "LocalLaplaceRandomizer",
    "PotentialLearner1D",
    "LocalStream",
    "LocalLearner",
    "CoordinatewiseLearner",
    "UnconstrainedLearner",
    "OnlineGradientDescent",
    "AdaGrad",
    "theorem1_bound",
    "NEIGHBOURING_LOCAL_COORDINATE",
    "NEIGHBOURING_LOCAL_L2",
    "UNIT_LOCAL",
    "ACTION_LIMIT",
]

ACTION_LIMIT = 1e100
"""Largest ``|w|`` a potential learner plays; beyond it the action saturates (counted as ``saturated``)."""

UNIT_LOCAL = "one provider's gradient / one round"
"""The privacy unit of the local randomisers."""

NEIGHBOURING_LOCAL_COORDINATE = (
    "any two subgradients g, g' of one provider with |g_j| <= G for every coordinate j (inputs are clipped "
    "to [-G, G] first), local model: the guarantee holds against the learner and anyone who sees the release"
)
NEIGHBOURING_LOCAL_L2 = (
    "any two subgradients g, g' of one provider with ||g||_2 <= G (inputs are clipped to the G-ball first), "
    "local model: the guarantee holds against the learner and anyone who sees the release"
)

Mechanism = Literal["laplace", "l2"]
Prior = Literal["conjugate", "uniform", "improper"]


def _float_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float64 array of any shape (NaN/inf kept: the caller checks), or :class:`InvalidInputError`
    for strings, complex numbers, ragged lists and other objects NumPy cannot convert."""
    if isinstance(value, (str, bytes)) or _validate._is_complex(value):
        raise InvalidInputError(f"{name} must be an array of real numbers, got {_validate._shown(value)}")
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{name} must be convertible to a float64 array: {exc}") from None


def _budget_matrix(budgets: Any, rows: int, per: int, name: str = "budgets") -> np.ndarray:
    """``budgets`` broadcast to a C-contiguous float64 ``(rows, per)`` array (``+inf`` allowed, NaN not)."""
    arr = _float_array(name, budgets)
    if per == 1 and arr.ndim == 1:
        arr = arr[:, None]
    try:
        out = np.broadcast_to(arr, (rows, per))
    except ValueError:
        raise InvalidInputError(f"{name} must broadcast to shape ({rows}, {per}), got shape {arr.shape}") from None
    return np.ascontiguousarray(out)


class LocalLaplaceRandomizer:
    """The local Laplace randomiser of van der Hoeven (2019, §2.1) and its ℓ2 variant.

    Each call releases ``g̃ = clip_G(g) + ξ`` for one or many rounds in one native call:

    * ``mechanism="laplace"`` (the local Laplace randomiser): per-coordinate budgets ``τ_{t,j} > 0``, noise
      density ``ρ_t(z) ∝ exp(−Σ_j τ_{t,j}|z_j| / (2G))`` — independent ``Laplace(2G/τ_{t,j})`` per coordinate.
      For ``|g_j| ≤ G`` the release is ``ε_t``-local DP with ``ε_t = Σ_j τ_{t,j}`` (Lemma 1, stated for
      ``G = 1``; applied to ``g/G``), and coordinate ``j`` alone is ``τ_{t,j}``-local DP. ``τ = inf`` releases
      that coordinate exactly (no noise, no privacy for it). Inputs are clipped to ``[−G, G]`` per coordinate.
    * ``mechanism="l2"``: one budget ``ε_t`` per round, ``ρ_t(z) ∝ exp(−ε_t‖z‖₂ / (2G))`` — a direction uniform
      on the sphere times a radius ``Gamma(d, 2G/ε_t)``; ``ε_t``-local DP for ``‖g‖₂ ≤ G`` (Song et al. 2015,
      Theorem 1, quoted in §2.1 and §4). Inputs are clipped to the ℓ2 ball of radius ``G``.

    Both noises are symmetric with mean zero, so ``E[g̃] = g`` for inputs within the bound — the only
    property of the noise Algorithms 1-3 use.

    Args:
        dim: vector length ``d >= 1``.
        bound: the declared bound ``G > 0`` (default 1, the paper's normalisation).
        mechanism: ``"laplace"`` (default) or ``"l2"``.
        strict: raise :class:`InvalidInputError` for inputs beyond ``G`` instead of clipping them.
        seed: ``None`` (OS entropy), int, ``SeedSequence`` or ``Generator``. A seeded randomiser is private
            only while its seed is secret.
        secure: draw noise from ChaCha20 keyed by the OS (not reproducible; never pickled — a restored copy
            reseeds). Floating-point samplers remain subject to Mironov (2012).

    Raises:
        InvalidInputError: bad arguments.

    Example:
        >>> import numpy as np, dponline
        >>> r = dponline.LocalLaplaceRandomizer(3, seed=0)
        >>> r.randomize(np.array([0.5, -0.2, 1.0]), [1.0, 0.5, np.inf]).shape
        (3,)
        >>> r.privacy([1.0, 0.5, 2.0]).epsilon
        3.5
    """

    def __init__(
        self,
        dim: int,
        *,
        bound: float = 1.0,
        mechanism: Mechanism = "laplace",
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        dim = _validate.integer("dim", dim, low=1)
        bound = _validate.real("bound", bound, low=0.0, low_open=True)
        mechanism = _validate.option("mechanism", mechanism, ("laplace", "l2"))  # type: ignore[assignment]
        strict, secure = _validate.flag("strict", strict), _validate.flag("secure", secure)
        self._core = _core.LocalRandomizer(
            dim, bound=bound, mechanism=mechanism, strict=strict, seed=seed, secure=secure
        )
        self._randomness = randomness_of(seed, secure)

    # -- release ----------------------------------------------------------------------------------------
    def randomize(self, gradients: Any, budgets: Any) -> np.ndarray:
        """Release ``clip_G(g_t) + ξ_t`` for each round.

        Args:
            gradients: shape ``(d,)`` (one round) or ``(n, d)``; finite.
            budgets: ``"laplace"``: ``τ``, broadcastable to ``(n, d)`` (a scalar, ``(d,)``, ``(n, 1)``,
                ``(n, d)``); ``"l2"``: ``ε``, broadcastable to ``(n,)``. Every entry ``> 0``; ``inf`` = no
                noise.

        Returns:
            float64 array of the shape of ``gradients``.

        Raises:
            InvalidInputError: wrong shapes, a budget ``<= 0`` (or so small that ``2G/τ > 1e250``), an input
                beyond ``G`` with ``strict=True``.
            NonFiniteError: NaN/inf in ``gradients`` or NaN in ``budgets``. In every case nothing is drawn and
                the randomiser is unchanged.
        """
        g = _float_array("gradients", gradients)
        single = g.ndim == 1
        g2 = np.ascontiguousarray(g[None, :] if single else g)
        if g2.ndim != 2 or g2.shape[1] != self.dim:
            raise InvalidInputError(f"gradients must have shape ({self.dim},) or (n, {self.dim}), got {g.shape}")
        per = self.dim if self.mechanism == "laplace" else 1
        taus = _budget_matrix(budgets, g2.shape[0], per)
        out = self._core.randomize(g2, taus)
        return out[0] if single else out

    def epsilons(self, budgets: Any, rounds: int | None = None) -> np.ndarray:
        """``ε_t`` of each round: ``Σ_j τ_{t,j}`` (Lemma 1) or the ℓ2 budget; ``inf`` when a coordinate is
        released exactly. Shape ``(n,)`` (``rounds`` sets ``n`` for budgets without a round axis)."""
        arr = _float_array("budgets", budgets)
        if np.isnan(arr).any() or (arr <= 0).any():
            raise InvalidInputError("budgets must be > 0 (inf = no noise), without NaN")
        if rounds is not None:
            rounds = _validate.integer("rounds", rounds, low=0)
        if self.mechanism == "l2":
            n = rounds if rounds is not None else (arr.shape[0] if arr.ndim else 1)
            return _budget_matrix(arr, n, 1)[:, 0]
        n = rounds if rounds is not None else (arr.shape[0] if arr.ndim == 2 else 1)
        with np.errstate(over="ignore"):  # finite budgets whose sum overflows: inf, i.e. no privacy
            return _budget_matrix(arr, n, self.dim).sum(axis=1)

    def privacy(self, budget: Any) -> PrivacyGuarantee | None:
        """The local guarantee of one round released with ``budget`` (``τ`` of shape ``(d,)`` or a scalar for
        ``"laplace"``; ``ε`` for ``"l2"``), or ``None`` when nothing is private (every budget infinite).

        With some ``τ_j = inf`` the guarantee covers the other coordinates only: ``ε = Σ_{τ_j<∞} τ_j`` for
        neighbouring inputs that agree on the exactly released coordinates (stated in ``neighbouring``).
        """
        if self.mechanism == "l2":
            arr = _float_array("budget", budget)
            if arr.size != 1:
                raise InvalidInputError(f"budget must be one number for the l2 mechanism, got shape {arr.shape}")
            eps = float(arr.reshape(()))
            if not eps > 0:
                raise InvalidInputError(f"budget must be > 0 (inf = no noise), got {eps}")
            if math.isinf(eps):
                return None
            return PrivacyGuarantee(
                epsilon=eps,
                delta=0.0,
                source="Song et al. 2015 Theorem 1 (l2 randomiser), van der Hoeven 2019 §2.1",
                neighbouring=NEIGHBOURING_LOCAL_L2.replace("G", f"G={self.bound:g}", 1),
                unit=UNIT_LOCAL,
                randomness=self._randomness,
                notes=f"noise density proportional to exp(-eps ||z||_2 / (2G)), G = {self.bound:g}",
            )
        tau = _budget_matrix(budget, 1, self.dim)[0]
        if np.any(tau <= 0) or np.isnan(tau).any():
            raise InvalidInputError("budget entries must be > 0 (inf = no noise), without NaN")
        finite = np.isfinite(tau)
        if not finite.any():
            return None
        neighbouring = NEIGHBOURING_LOCAL_COORDINATE.replace("G", f"G={self.bound:g}", 1)
        notes = f"per-coordinate Laplace scales 2G/tau_j, G = {self.bound:g}; coordinate j alone is tau_j-local DP"
        if not finite.all():
            exact = np.flatnonzero(~finite).tolist()
            neighbouring += f"; coordinates {exact} (tau = inf) are released exactly and must agree"
            notes += f"; coordinates {exact} carry no privacy"
        with np.errstate(over="ignore"):
            epsilon = float(tau[finite].sum())
        if not math.isfinite(epsilon):
            raise InvalidInputError(f"the finite budgets sum beyond the float range: {_validate._shown(tau)}")
        return PrivacyGuarantee(
            epsilon=epsilon,
            delta=0.0,
            source="van der Hoeven 2019, Lemma 1 (local Laplace randomiser)",
            neighbouring=neighbouring,
            unit=UNIT_LOCAL,
            randomness=self._randomness,
            notes=notes,
        )

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def dim(self) -> int:
        """Vector length ``d``."""
        return int(self._core.dim)

    @property
    def bound(self) -> float:
        """The declared bound ``G``."""
        return float(self._core.bound)

    @property
    def mechanism(self) -> str:
        """``"laplace"`` or ``"l2"``."""
        return str(self._core.mechanism)

    @property
    def rounds(self) -> int:
        """Rounds (rows) released so far."""
        return int(self._core.rounds)

    @property
    def clipped(self) -> int:
        """Rows clipped to the bound so far."""
        return int(self._core.clipped)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_core"] = self._core.to_bytes()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["_core"] = _core.LocalRandomizer.from_bytes(state["_core"])
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"LocalLaplaceRandomizer(dim={self.dim}, bound={self.bound:g}, mechanism={self.mechanism!r})"


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


class PotentialLearner1D:
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
            prior = _validate.option("prior", prior, ("conjugate", "uniform", "improper"))  # type: ignore[assignment]
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

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_core"] = self._core.to_bytes()
        if self._density is not None:
            state["_density"] = pickle.dumps(self._density)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["_core"] = _core.PotentialLearner1D.from_bytes(state["_core"])
        if state.get("_density") is not None:
            state["_density"] = pickle.loads(state["_density"])  # noqa: S301 - our own pickle of the prior
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"PotentialLearner1D(G={self._G:g}, prior={self.prior!r}, t={self.t})"


# -- streams and d-dimensional learners ------------------------------------------------------------------------

Loss = Literal["logistic", "squared", "absolute"]


class LocalStream:
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

    Raises:
        InvalidInputError: shapes, an unknown loss/mechanism, budgets ``<= 0``.
        NonFiniteError: NaN/inf features or labels, NaN budgets.
    """

    def __init__(
        self,
        features: Any,
        labels: Any,
        *,
        loss: Loss,
        budgets: Any = np.inf,
        mechanism: Mechanism = "laplace",
    ) -> None:
        X = _float_array("features", features)
        if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
            raise InvalidInputError(f"features must be a non-empty 2-D array (n, d), got shape {X.shape}")
        X = _validate.real_array("features", X, X.shape)
        y = _validate.real_array("labels", labels, (X.shape[0],))
        loss = _validate.option("loss", loss, ("logistic", "squared", "absolute"))  # type: ignore[assignment]
        mechanism = _validate.option("mechanism", mechanism, ("laplace", "l2"))  # type: ignore[assignment]
        per = X.shape[1] if mechanism == "laplace" else 1
        taus = _budget_matrix(budgets, X.shape[0], per)
        self._core = _core.LocalStream(
            np.ascontiguousarray(X), np.ascontiguousarray(y[:, None]), taus, loss=loss, mechanism=mechanism
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
        r = LocalLaplaceRandomizer(self.dim, bound=G, mechanism=self.mechanism)  # type: ignore[arg-type]
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

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_core"] = self._core.to_bytes()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state["_core"] = _core.LocalStream.from_bytes(state["_core"])
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return f"LocalStream(n={self.horizon}, d={self.dim}, loss={self.loss!r}, mechanism={self.mechanism!r})"


class LocalLearner(Learner):
    """Base of the d-dimensional learners for locally privatised gradients (see the subclasses).

    Protocol: :meth:`ask` → ``w_t`` (shape ``(d,)``), :meth:`tell` ``(g̃_t)`` (the provider's noisy
    subgradient), or a native :meth:`run` over a :class:`LocalStream`. The learner adds no noise itself: the
    privacy is the providers' (:meth:`LocalStream.privacy`), so :attr:`privacy` is ``None``.
    """

    _core_type = _core.LocalLearner

    def _setup(
        self,
        dim: int,
        G: float,
        algorithm: str,
        *,
        prior: str = "conjugate",
        b: float = 1.0,
        lr: float = 1.0,
        radius: float = 1.0,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        dim = _validate.integer("dim", dim, low=1)
        G = _validate.real("G", G, low=0.0, low_open=True)
        strict, secure = _validate.flag("strict", strict), _validate.flag("secure", secure)
        self._core = _core.LocalLearner(
            dim, G, algorithm, prior=prior, b=b, lr=lr, radius=radius, strict=strict, seed=seed, secure=secure
        )
        self._privacy = None
        self._horizon = 2**63 - 1
        self._G = G
        self._dim = dim

    @property
    def dim(self) -> int:
        """Dimension ``d``."""
        return self._dim

    @property
    def G(self) -> float:
        """The declared gradient bound."""
        return self._G

    @property
    def clipped(self) -> int:
        """Rounds of :meth:`run` whose gradient was clipped to ``G``."""
        return int(self._core.clipped)

    @property
    def saturated(self) -> int:
        """Algorithm-1 predictions that saturated at ``±1e100``."""
        return int(self._core.saturated)

    @property
    def state(self) -> dict[str, Any]:
        """Running sums (``sum_sq``, ``neg_sum``, ...), as a dict."""
        return dict(self._core.state())

    def ask(self) -> np.ndarray:
        """The action ``w_t``, float64 ``(d,)``; asking again before :meth:`tell` returns the same action.

        Raises:
            ConvergenceError: quadrature of the improper prior did not converge.
        """
        return self._core.ask()

    def tell(self, noisy_gradient: Any) -> None:
        """Absorb the provider's noisy subgradient ``g̃_t`` (shape ``(d,)``, finite) of the asked action.

        Raises:
            ProtocolError: without a preceding :meth:`ask`.
            InvalidInputError: wrong shape. NonFiniteError: NaN/inf (or sums that would overflow). In every
                case the learner is unchanged.
        """
        self._core.tell(noisy_gradient)

    def run(  # type: ignore[override]
        self, stream: LocalStream, *, rounds: int | None = None, checkpoints: int = 1000, progress: bool = False
    ) -> RunResult:
        """Play ``rounds`` rounds of ``stream`` natively (round ``t`` of the learner is row ``t``): the subgradient
        is computed, clipped to ``G`` and privatised with the row's budgets inside the native loop (GIL released,
        Ctrl-C between blocks of 65,536 rounds; the learner then stays consistent and resumable).

        Raises:
            ProtocolError: an action is pending. HorizonExhaustedError: beyond the stream.
            InvalidInputError: a stream of another dimension; with ``strict=True`` a feature row beyond ``G``.
            NonFiniteError: a round's loss or subgradient overflows at the played action (huge labels or
                features). ConvergenceError: quadrature of the improper prior. In every case the learner is left
                as it was before the call.
        """
        if not isinstance(stream, LocalStream):
            raise InvalidInputError(f"stream must be a dponline.local_dp.LocalStream, got {type(stream).__name__}")
        # A round that fails mid-run (a loss that overflows at the played action, a quadrature that does not
        # converge) stops the native loop after the rounds already played: restore the state from before the
        # call, so a failed run changes nothing (Ctrl-C still keeps the whole blocks played).
        before = self._core.to_bytes()
        try:
            return super().run(stream._core, rounds=rounds, checkpoints=checkpoints, progress=progress)
        except DPOnlineError:
            self._core = self._core_type.from_bytes(before)
            raise

    def _final_point(self) -> np.ndarray:
        return np.array(self._core.current)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, G={self.G:g}, t={self.t})"


class CoordinatewiseLearner(LocalLearner):
    """Algorithm 3 of van der Hoeven (2019): one Algorithm-1 learner per coordinate, ``w_{t,j} = v_{t,j}``.

    Needs ``|E g̃_{t,j}| ≤ G`` per coordinate: in :meth:`run` each subgradient is clipped coordinate-wise to
    ``[−G, G]`` (to the ℓ2 ball of radius ``G`` with the ℓ2 mechanism). Suited to sparse gradients and sparse
    privacy budgets (§4, scenario (b)): each coordinate adapts to its own noise. Regret: Theorem 2
    (:meth:`regret_bound`).

    Args:
        dim: ``d >= 1``.
        G: the declared bound (> 0).
        prior: Algorithm 1's prior, ``"conjugate"`` (default, as in Algorithm 3), ``"uniform"`` or
            ``"improper"`` (quadrature: slow).
        b: conjugate prior precision (default ``G²``).
        strict: with ``run``, raise if a feature row exceeds ``G`` (then the logistic and absolute losses never
            need clipping) instead of clipping.
        seed, secure: key the simulated providers' noise in :meth:`run`.

    Example:
        >>> import numpy as np, dponline
        >>> from dponline.local_dp import CoordinatewiseLearner, LocalStream
        >>> X = np.random.default_rng(0).uniform(-1, 1, (500, 3)); y = np.sign(X[:, 0] + 0.1)
        >>> result = CoordinatewiseLearner(3, 1.0, seed=0).run(LocalStream(X, y, loss="logistic", budgets=1.0))
        >>> result.rounds
        500
    """

    def __init__(
        self,
        dim: int,
        G: float,
        *,
        prior: Prior = "conjugate",
        b: float | None = None,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        G = _validate.real("G", G, low=0.0, low_open=True)
        b = G * G if b is None else _validate.real("b", b, low=0.0, low_open=True)
        prior = _validate.option("prior", prior, ("conjugate", "uniform", "improper"))  # type: ignore[assignment]
        self._b = b
        self._setup(dim, G, "coordinatewise", prior=prior, b=b, strict=strict, seed=seed, secure=secure)

    def regret_bound(self, u: Any, sum_sq: Any = None) -> float:
        """Theorem 2: ``Σ_j [1 + |u_j| max{11G ln(11G|u_j|) − 1 + ln(5G√π/(4√b)), sqrt(8(b + S_j) ln(16u_j²
        (b + S_j)^{3/2}√π/√b + 1))}]`` with ``S_j = Σ_t g̃_{t,j}²`` (default: the realised sums; pass the
        average over seeds for the expected-regret statement)."""
        u = _validate.real_array("u", u, (self.dim,))
        s = self.state["sum_sq"] if sum_sq is None else _validate.real_array("sum_sq", sum_sq, (self.dim,))
        return float(sum(theorem1_bound(uj, self.G, self._b, sj) for uj, sj in zip(u, s, strict=True)))


class UnconstrainedLearner(LocalLearner):
    """Algorithm 2 of van der Hoeven (2019): the black-box reduction ``w_t = v_t · z_t``.

    ``z_t`` comes from projected gradient descent on the unit ℓ2 ball with the adaptive step
    ``η_t = √2 / sqrt(Σ_{s≤t} ‖g̃_s‖²)`` (Orabona & Pál 2018; regret ``≤ 2√2 sqrt(Σ‖g̃_t‖²)`` for diameter 2),
    and ``v_t`` from Algorithm 1 fed ``⟨z_t, g̃_t⟩``. Needs ``‖E g̃_t‖₂ ≤ G``: in :meth:`run` each subgradient is
    clipped to the ℓ2 ball of radius ``G``. Regret (Lemma 6 + Theorem 1): :meth:`regret_bound`.

    Args: as :class:`CoordinatewiseLearner` (``G`` bounds the ℓ2 norm here).
    """

    def __init__(
        self,
        dim: int,
        G: float,
        *,
        prior: Prior = "conjugate",
        b: float | None = None,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        G = _validate.real("G", G, low=0.0, low_open=True)
        b = G * G if b is None else _validate.real("b", b, low=0.0, low_open=True)
        prior = _validate.option("prior", prior, ("conjugate", "uniform", "improper"))  # type: ignore[assignment]
        self._b = b
        self._setup(dim, G, "unconstrained", prior=prior, b=b, strict=strict, seed=seed, secure=secure)

    def regret_bound(self, u: Any, sum_sq: float | None = None, sum_sq_norms: float | None = None) -> float:
        """Lemma 6: ``R_T(u) = R^V_T(‖u‖) + ‖u‖ R^Z_T(u/‖u‖)``, bounded by Theorem 1 for ``‖u‖`` at
        ``S_v = Σ⟨z_t, g̃_t⟩²`` plus ``‖u‖ · 2√2 sqrt(Σ‖g̃_t‖²)`` (projected OGD with adaptive steps on the unit
        ball, Orabona 2019 Theorem 4.14 with ``D = 2``). Defaults: the realised sums."""
        u = _validate.real_array("u", u, (self.dim,))
        st = self.state
        sv = st["sum_sq"] if sum_sq is None else _validate.real("sum_sq", sum_sq, low=0.0)
        sn = st["sum_sq_norms"] if sum_sq_norms is None else _validate.real("sum_sq_norms", sum_sq_norms, low=0.0)
        norm = math.hypot(*u)  # scaled: no overflow of the squares for |u_j| up to 1e308
        bound = theorem1_bound(norm, self.G, self._b, sv) + norm * 2.0 * math.sqrt(2.0) * math.sqrt(sn)
        if not math.isfinite(bound):
            raise InvalidInputError(f"the Lemma 6 bound at ||u|| = {norm:g} exceeds the float range")
        return bound


class OnlineGradientDescent(LocalLearner):
    """Baseline: unconstrained online gradient descent ``w_{t+1} = w_t − η g̃_t`` with a fixed step ``η``.

    Its regret ``‖u‖²/(2η) + (η/2) Σ‖g̃_t‖²`` needs ``η`` tuned to the unknown ``‖u‖`` and noise (§2.3); tune it
    over a grid in hindsight for a comparison. ``G`` is the clipping bound in :meth:`run` (coordinate-wise with
    the Laplace mechanism).
    """

    def __init__(
        self, dim: int, lr: float, *, G: float = 1.0, strict: bool = False, seed: SeedLike = None, secure: bool = False
    ) -> None:
        lr = _validate.real("lr", lr, low=0.0, low_open=True)
        self._setup(dim, G, "ogd", lr=lr, strict=strict, seed=seed, secure=secure)


class AdaGrad(LocalLearner):
    """Baseline: diagonal AdaGrad (Duchi, Hazan & Singer 2011) on the box ``[−D, D]^d``,
    ``w_{t+1,j} = Π_{[−D,D]}(w_{t,j} − √2 D g̃_{t,j} / sqrt(Σ_{s≤t} g̃_{s,j}²))``; expected regret
    ``O(D Σ_j sqrt(Σ_t E g̃_{t,j}²))`` for ``max_j |u_j| ≤ D`` — ``D`` must be guessed (§4, scenario (b)).
    """

    def __init__(
        self,
        dim: int,
        radius: float,
        *,
        G: float = 1.0,
        strict: bool = False,
        seed: SeedLike = None,
        secure: bool = False,
    ) -> None:
        radius = _validate.real("radius", radius, low=0.0, low_open=True)
        self._setup(dim, G, "adagrad", radius=radius, strict=strict, seed=seed, secure=secure)
