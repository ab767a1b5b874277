"""The d-dimensional learners for locally privatised gradients: Algorithms 2 and 3 of van der Hoeven (2019) and
the baselines online gradient descent and AdaGrad."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from .. import _core, _validate
from .._seed import SeedLike
from ..errors import InvalidInputError
from ..learners._base import Learner, RunResult, clipped_count
from .potential import _PRIORS, Prior, theorem1_bound
from .stream import LocalStream

__all__ = ["LocalLearner", "CoordinatewiseLearner", "UnconstrainedLearner", "OnlineGradientDescent", "AdaGrad"]


class LocalLearner(Learner):
    """Base of the d-dimensional learners for locally privatised gradients (see the subclasses).

    Protocol: :meth:`ask` → ``w_t`` (shape ``(d,)``), :meth:`tell` ``(g̃_t)`` (the provider's noisy
    subgradient), or a native :meth:`run` over a :class:`LocalStream`. The learner adds no noise itself: the
    privacy is the providers' (:meth:`LocalStream.privacy`), so :attr:`privacy` is ``None``.
    """

    _core_type = _core.LocalLearner

    def _setup(
        self, dim: int, G: float, algorithm: str, *, strict: bool, seed: SeedLike, secure: bool, **options: Any
    ) -> None:
        """Validate the shared arguments and build the core learner; ``options`` (``prior``, ``b``, ``lr``,
        ``radius``: what the subclass takes) go to :class:`dponline._core.LocalLearner` as given, so the
        defaults of the ones a subclass does not take stay the core's."""
        dim = _validate.integer("dim", dim, low=1)
        G = _validate.real("G", G, low=0.0, low_open=True)
        strict, secure = _validate.flag("strict", strict), _validate.flag("secure", secure)
        self._core = _core.LocalLearner(dim, G, algorithm, strict=strict, seed=seed, secure=secure, **options)
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

    clipped = clipped_count("Rounds of :meth:`run` whose gradient was clipped to ``G``.")

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
        # converge) is undone natively with the rounds played before it (the core's `play_may_fail`), so a failed
        # run changes nothing; Ctrl-C still keeps the whole blocks played.
        return super().run(stream._core, rounds=rounds, checkpoints=checkpoints, progress=progress)

    def _final_point(self) -> np.ndarray:
        return np.array(self._core.current)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim}, G={self.G:g}, t={self.t})"


class _ParameterFreeLearner(LocalLearner):
    """Base of Algorithms 2 and 3 of van der Hoeven (2019), both built on Algorithm 1 with a prior of precision
    ``b`` (default ``G²``); the subclass names its ``_algorithm``. Args: see :class:`CoordinatewiseLearner`.

    Both predict (nearly) 0 while the summed gradient signal is within a few noise standard deviations of 0 —
    small budgets ``τ`` or short horizons; exactly the regret of predicting 0 then, by design (Theorem 1's bound is
    below predict-0 only once ``T|ḡ| ≳ sqrt(8T(ḡ² + s²) ln(·))``; see "When it predicts 0" in
    :class:`dponline.local_dp.PotentialLearner1D`)."""

    _algorithm: ClassVar[str]

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
        prior = _validate.option("prior", prior, _PRIORS)
        self._b = b
        self._setup(dim, G, self._algorithm, prior=prior, b=b, strict=strict, seed=seed, secure=secure)


class CoordinatewiseLearner(_ParameterFreeLearner):
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

    _algorithm = "coordinatewise"

    def regret_bound(self, u: Any, sum_sq: Any = None) -> float:
        """Theorem 2: ``Σ_j [1 + |u_j| max{11G ln(11G|u_j|) − 1 + ln(5G√π/(4√b)), sqrt(8(b + S_j) ln(16u_j²
        (b + S_j)^{3/2}√π/√b + 1))}]`` with ``S_j = Σ_t g̃_{t,j}²`` (default: the realised sums; pass the
        average over seeds for the expected-regret statement)."""
        u = _validate.real_array("u", u, (self.dim,))
        s = self.state["sum_sq"] if sum_sq is None else _validate.real_array("sum_sq", sum_sq, (self.dim,))
        return float(sum(theorem1_bound(uj, self.G, self._b, sj) for uj, sj in zip(u, s, strict=True)))


class UnconstrainedLearner(_ParameterFreeLearner):
    """Algorithm 2 of van der Hoeven (2019): the black-box reduction ``w_t = v_t · z_t``.

    ``z_t`` comes from projected gradient descent on the unit ℓ2 ball with the adaptive step
    ``η_t = √2 / sqrt(Σ_{s≤t} ‖g̃_s‖²)`` (Orabona & Pál 2018; regret ``≤ 2√2 sqrt(Σ‖g̃_t‖²)`` for diameter 2),
    and ``v_t`` from Algorithm 1 fed ``⟨z_t, g̃_t⟩``. Needs ``‖E g̃_t‖₂ ≤ G``: in :meth:`run` each subgradient is
    clipped to the ℓ2 ball of radius ``G``. Regret (Lemma 6 + Theorem 1): :meth:`regret_bound`.

    Args: as :class:`CoordinatewiseLearner` (``G`` bounds the ℓ2 norm here).
    """

    _algorithm = "unconstrained"

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
