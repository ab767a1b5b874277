"""What every learner wrapper shares: the native ``run`` with progress and Ctrl-C, pickling, privacy reporting.

A learner wrapper subclasses :class:`Learner`, builds its native state machine in ``__init__`` as ``self._core``
(a ``dponline._core`` class with ``t``, ``run(family, rounds, checkpoints, progress)``, ``to_bytes`` and a
static ``from_bytes``), sets ``self._privacy`` and ``self._horizon``, and adds its own ``ask``/``tell``.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .. import _core, _state, _validate, privacy, regret
from .._extras import require
from .._options import CALIBRATIONS, MECHANISMS, SAMPLERS, Calibration, Mechanism, Sampler
from .._seed import SeedLike
from .._state import check_agrees, declared_of
from ..errors import InvalidInputError, StateError
from ..privacy import PrivacyGuarantee, randomness_of, row_multiplicity

__all__ = [
    "DomainLearner",
    "FeedbackRelease",
    "Learner",
    "PrefixSumLearner",
    "MechanismArgs",
    "clipped_count",
    "RunResult",
    "randomness_of",
    "mechanism_noise",
    "exact_learner_noise",
    "resolve_sampler",
]

_MAX_CHECKPOINTS = 10_000


def _recording(init: Any) -> Any:
    """Wrap a learner's ``__init__`` so that the object keeps its declared arguments (``_declared``) for pickling
    (:func:`declared_of`)."""
    signature = inspect.signature(init)

    @functools.wraps(init)
    def recorded(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        # The outermost constructor records last (a subclass calling super().__init__ overrides its parent).
        self._declared = declared_of(signature, (self, *args), kwargs)

    return recorded


@functools.lru_cache(maxsize=64)
def _column_norms(mechanism: str, releases: int) -> tuple[float, float]:
    """The encoder's largest (L1, L2) column norms (cached: for BLT each call runs the parameter optimiser, a
    deterministic function of the name and horizon)."""
    return _core.mechanism_column_norms(mechanism, releases)


def resolve_sampler(sampler: Sampler | None, mechanism: Mechanism) -> Sampler:
    """A learner's ``sampler=``: ``None`` means ``"exact"`` (exact discrete noise on a power-of-two grid, the
    secure default) for every mechanism — the trees, and BLT through its integer encoder
    (:class:`dponline.aggregation.BLT`); the guarantee states which.

    Raises:
        InvalidInputError: an unknown sampler.
    """
    del mechanism  # every mechanism has an exact path
    if sampler is None:
        return "exact"
    return _validate.option("sampler", sampler, SAMPLERS)


@dataclass(frozen=True)
class MechanismArgs:
    """The validated arguments that the learners on a prefix-sum mechanism share (PrivateBandit, DPFTRL, DPFTPL,
    NoisyOCO, PrivateDRSubmodular): the privacy target, the mechanism, its sampler and the generator."""

    epsilon: float | None
    delta: float
    calibration: Calibration | None
    mechanism: Mechanism
    sampler: Sampler
    strict: bool
    secure: bool
    seed: SeedLike

    @classmethod
    def validated(
        cls,
        epsilon: float | None,
        delta: float,
        calibration: Calibration | None,
        mechanism: Mechanism,
        sampler: Sampler | None,
        strict: bool,
        secure: bool,
        seed: SeedLike,
        /,
    ) -> MechanismArgs:
        """The arguments checked: ``epsilon`` ``None`` or > 0, ``delta`` in ``[0, 1)``, known option names
        (``sampler=None`` resolved by :func:`resolve_sampler`), boolean flags.

        Raises:
            InvalidInputError: naming the first argument refused.
        """
        mechanism = _validate.option("mechanism", mechanism, MECHANISMS)
        sampler = resolve_sampler(sampler, mechanism)
        if calibration is not None:
            calibration = _validate.option("calibration", calibration, CALIBRATIONS)
        strict, secure = _validate.flag("strict", strict), _validate.flag("secure", secure)
        delta = _validate.real("delta", delta, low=0.0, high=1.0, high_open=True)
        if epsilon is not None:
            epsilon = _validate.real("epsilon", epsilon, low=0.0, low_open=True)
        return cls(epsilon, delta, calibration, mechanism, sampler, strict, secure, seed)

    def target(self) -> tuple[float | None, float, Calibration | None, Mechanism, Sampler]:
        """``(epsilon, delta, calibration, mechanism, sampler)``."""
        return self.epsilon, self.delta, self.calibration, self.mechanism, self.sampler

    @property
    def noise(self) -> str:
        """The default noise of the target: Laplace for ``delta = 0``, Gaussian otherwise."""
        return "laplace" if self.delta == 0 else "gaussian"

    @property
    def randomness(self) -> str:
        """The guarantee's ``randomness`` (:func:`dponline.privacy.randomness_of`)."""
        return randomness_of(self.seed, self.secure)

    def native(self) -> dict[str, Any]:
        """The keyword arguments of the native constructor that these set."""
        return {
            "mechanism": self.mechanism,
            "strict": self.strict,
            "seed": self.seed,
            "secure": self.secure,
            "sampler": self.sampler,
        }


@functools.lru_cache(maxsize=64)
def _rounding_slack(mechanism: str, releases: int) -> tuple[float, float]:
    """The exact path's encoder-rounding slack ``(L1, L2)`` per coordinate (``(0, 0)`` for the trees; for BLT
    its Lemma's, :attr:`dponline.aggregation.BLT.rounding_slack`); cached like :func:`_column_norms`."""
    return _core.mechanism_rounding_slack(mechanism, releases)


def exact_learner_noise(
    mechanism: Mechanism,
    noise: str,
    calibration: Calibration | None,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    releases: int,
    dim: int,
    at_least: float,
    source: str,
    randomness: str,
) -> tuple[float, PrivacyGuarantee]:
    """A tree-based learner's per-draw noise on the exact path, and its guarantee (``sampler="exact"``).

    The learner's prefix sums are a mechanism whose one input per round moves by at most ``sensitivity`` (L1 for
    Laplace, L2 for Gaussian) between neighbouring streams; the mechanism's column norms at ``releases`` inputs
    give the node vector's sensitivity, with the rounding of the grid Lemma (and, for BLT, the rounding slack of its
    integer encoder): :func:`dponline.aggregation.exact_noise`
    (discrete Laplace exact ε; discrete Gaussian through zCDP with the Canonne-Kamath-Steinke conversion). The
    noise is never below ``at_least`` (a paper's scale under ``calibration="paper"``, or a regret-motivated floor).

    Returns:
        ``(scale, guarantee)``: the scale on its grid, to build the learner with.

    Raises:
        InvalidInputError: as :func:`dponline.aggregation.exact_noise`.
    """
    from ..aggregation import exact_noise

    col_l1, col_l2 = _column_norms(mechanism, int(releases))
    fit = exact_noise(
        noise,  # type: ignore[arg-type]
        calibration,
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
        column_l1=col_l1,
        column_l2=col_l2,
        dim=dim,
        at_least=at_least,
        rounding_slack=_rounding_slack(mechanism, int(releases)),
    )
    return fit.scale, fit.guarantee(f"{source} (mechanism={mechanism!r})", randomness=randomness)


def mechanism_noise(
    mechanism: Mechanism,
    epsilon: float,
    delta: float,
    noise: str,
    calibration: Calibration,
    *,
    sensitivity_l1: float,
    sensitivity_l2: float,
    releases: int,
    randomness: str = "",
) -> tuple[float, PrivacyGuarantee]:
    """Exact per-draw noise of a learner's prefix sums released by a non-tree ``mechanism`` (``"honaker"``,
    ``"blt"``).

    A linear mechanism used once per input is a Laplace mechanism at its encoder's largest L1 column norm, or a
    Gaussian mechanism at its L2 column norm (Balle & Wang 2018, Theorem 8): the scale is
    ``sensitivity_l1 · col₁ / ε`` or ``gaussian_sigma_analytic(ε, δ, sensitivity_l2 · col₂)``, with the
    learner's per-round input sensitivities. No lemma of the papers covers these mechanisms, so only
    ``calibration="analytic"`` is accepted; their regret proofs (identically distributed noise per release) do
    not cover them either.

    Raises:
        InvalidInputError: a calibration other than ``"analytic"``, Gaussian noise with ``δ = 0``.
    """
    if calibration != "analytic":
        raise InvalidInputError(
            f"calibration={calibration!r} is not available with mechanism={mechanism!r}: the paper's lemmas cover "
            "only the padded tree; pass calibration='analytic' (exact, from the mechanism's column norms)"
        )
    col_l1, col_l2 = _column_norms(mechanism, int(releases))
    source = f"exact calibration of the {mechanism} mechanism (linear mechanism, single participation)"
    if noise == "laplace":
        scale = sensitivity_l1 * col_l1 / epsilon
        delta_out, multiplier = 0.0, None
        source = f"Laplace mechanism on the L1 column norm: {source}"
    else:
        if not 0.0 < delta < 1.0:
            raise InvalidInputError(f"delta must be in (0, 1) for Gaussian noise, got {delta}")
        release_l2 = sensitivity_l2 * col_l2
        scale = privacy.gaussian_sigma_analytic(epsilon, delta, release_l2)
        delta_out, multiplier = float(delta), scale / release_l2
        source = f"Balle-Wang 2018 Thm 8 on the L2 column norm: {source}"
    guarantee = PrivacyGuarantee(
        epsilon=float(epsilon),
        delta=delta_out,
        source=source,
        randomness=randomness,
        notes=f"mechanism={mechanism!r}, column norms L1={col_l1:.6g}, L2={col_l2:.6g}",
        noise_multiplier=multiplier,
    )
    return scale, guarantee


@dataclass(repr=False)
class RunResult:
    """What a learner's :meth:`Learner.run` returns.

    Attributes:
        checkpoints: rounds after which the cumulative loss was recorded, int64 array of shape ``(k,)``
            (absolute round numbers of the learner).
        cumulative_loss: cumulative loss of the played points since the start of this run at each checkpoint,
            float64 ``(k,)``.
        total_loss: loss summed over all rounds of this run.
        rounds: rounds played.
        clipped: rounds whose feedback exceeded the declared bound and was clipped before use. Not private: an
            exact count over the raw losses (like ``cumulative_loss`` and ``total_loss``, which evaluate the
            played points on them); only the actions and ``final_point`` are covered by the learner's guarantee.
        seconds: wall-clock duration of the native loop.
        final_point: the learner's current iterate at the end, shape ``(dim,)``.
    """

    checkpoints: np.ndarray
    cumulative_loss: np.ndarray
    total_loss: float
    rounds: int
    clipped: int
    seconds: float
    final_point: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __repr__(self) -> str:
        return (
            f"RunResult(rounds={self.rounds}, total_loss={self.total_loss:.6g}, clipped={self.clipped}, "
            f"seconds={self.seconds:.3g}, checkpoints={len(self.checkpoints)})"
        )

    def regret(self, losses: Any, comparator: regret.Comparator | regret.SubmodularComparator) -> np.ndarray:
        """Regret against a fixed comparator at each checkpoint, float64 ``(k,)``: the learner's cumulative loss
        over this run minus the comparator's over the same rounds of ``losses``.

        ``comparator`` is a :class:`~dponline.regret.Comparator` (:func:`~dponline.regret.best_fixed`: plain
        regret) or a :class:`~dponline.regret.SubmodularComparator` (:func:`~dponline.regret.greedy_in_hindsight`:
        the ``(1 − 1/e)``-regret of :func:`~dponline.regret.submodular_regret_curve`). A run that started after
        round 0 is compared over its own rounds. Not private: it evaluates the data (like ``cumulative_loss``).

        Raises:
            InvalidInputError: a comparator of another kind, or checkpoints beyond the horizon of ``losses``.
        """
        start = int(self.checkpoints[-1]) - self.rounds if self.rounds else 0
        marks = [start, *(int(c) for c in self.checkpoints)]
        if isinstance(comparator, regret.SubmodularComparator):
            curve = regret.submodular_regret_curve(losses, np.asarray(marks), np.zeros(len(marks)), comparator)
        elif isinstance(comparator, regret.Comparator):
            curve = regret.regret_curve(losses, np.asarray(marks), np.zeros(len(marks)), comparator)
        else:
            raise InvalidInputError(
                f"comparator must be a dponline.regret Comparator or SubmodularComparator, got {comparator!r}"
            )
        # curve: the regret, since round 0, of a learner whose loss is 0 (minus the comparator's cumulative loss, or
        # the factor times the comparator set's value); its increments over this run's rounds are the comparator's.
        return np.asarray(self.cumulative_loss, dtype=np.float64) + (curve[1:] - curve[0])

    def plot(self, ax: Any = None, *, regret_curve: np.ndarray | None = None, label: str | None = None) -> Any:
        """Draw the cumulative loss of this run (or ``regret_curve``, e.g. from :meth:`regret`) against the round,
        on ``ax`` (a matplotlib Axes; a new figure when ``None``), and return the Axes. Needs matplotlib (the
        ``experiments`` extra).

        Raises:
            InvalidInputError: ``regret_curve`` not of shape ``(len(checkpoints),)``.
            MissingExtraError: matplotlib is not installed.
        """
        y = self.cumulative_loss
        if regret_curve is not None:
            y = _validate.real_array("regret_curve", regret_curve, (len(self.checkpoints),))
        if ax is None:
            ax = require("matplotlib.pyplot", "RunResult.plot").subplots(layout="constrained")[1]
        ax.plot(self.checkpoints, y, label=label)
        ax.set_xlabel("round")
        ax.set_ylabel("cumulative loss" if regret_curve is None else "regret")
        if label is not None:
            ax.legend()
        return ax


def _checkpoints(start: int, end: int, count: int) -> np.ndarray:
    count = max(1, min(count, end - start, _MAX_CHECKPOINTS))
    return np.unique(np.linspace(start, end, count + 1)[1:].round().astype(np.int64))


_FEEDBACK_EXACT_SOURCE = (
    "; exact: the clipped feedback rounded onto the grid gamma and discrete Laplace DLap(t) added in integers, "
    "eps = (ceil({sensitivity}/gamma) + 1)/t <= eps exactly (the rounding Lemma of the core's noise::grid; the "
    "discrete Laplace (geometric) mechanism, Ghosh-Roughgarden-Sundararajan 2009 / Canonne-Kamath-Steinke 2020, "
    "dponline.privacy.discrete_laplace_epsilon)"
)


def _feedback_noise_text(core: object, sensitivity: str, sampler: str) -> tuple[str, str]:
    """The source suffix and the notes of a learner whose privacy is one Laplace release of its feedback per round
    (PrivateEXP3, PrivateSCRiBLe): the exact grid release (the noise scale ``t·γ``, its grid ``γ``) or the
    floating-point ``Laplace(λ)``."""
    scale = float(core.params["noise_scale"])  # type: ignore[attr-defined]
    if sampler == "exact":
        gamma = float(core.grid)  # type: ignore[attr-defined]
        notes = (
            f"discrete Laplace on the grid gamma = 2^{int(math.log2(gamma))}: effective scale t*gamma = {scale:.9g} "
            f"(>= {sensitivity}/eps); the arm/direction draws are floating-point post-processing of the releases"
        )
        return _FEEDBACK_EXACT_SOURCE.format(sensitivity=sensitivity), notes
    return "", (
        f"lambda = {sensitivity}/eps = {scale:.6g}; the arm/direction draws are post-processing of the releases (the "
        "floating-point caveat is the Laplace release's)"
    )


def clipped_count(doc: str) -> Any:
    """A learner's ``clipped`` property: the native count of the feedback clipped so far, documented by ``doc``
    (what is clipped to what) and the note that the count is not private."""

    def clipped(self: Learner) -> int:
        return int(self._core.clipped)

    clipped.__doc__ = (
        f"{doc}\n\n        Not private: an exact count over the raw data (do not publish it beside the actions)."
    )
    return property(clipped)


class FeedbackRelease:
    """The release of a learner that adds noise to one scalar feedback per round (PrivateEXP3, PrivateSCRiBLe):
    its sampler, grid and last release."""

    _core: Any

    @property
    def grid(self) -> float | None:
        """The grid step ``γ`` (a power of two) of the exact feedback release: every release is an integer multiple
        of it. ``None`` for ``sampler="floating-point"`` or ``epsilon=None``."""
        return self._core.grid

    @property
    def last_release(self) -> float:
        """The last released noisy feedback ``f̂_t`` (0.0 before the first round). It is the private release itself,
        covered by :attr:`privacy` (every later computation is post-processing of it)."""
        return float(self._core.last_release)

    def _build_release(
        self, first: Any, *declared: Any, sensitivity: str, source: str, options: dict[str, Any] | None = None
    ) -> None:
        """Validate the arguments shared by the feedback-release learners, build the native learner
        (``self._core_type`` on ``first``, the arms or the domain) and its guarantee: one Laplace release per round
        of the feedback, whose sensitivity is ``sensitivity`` (text), with the paper's ``source``.

        ``declared``: ``horizon, epsilon, loss_bound, strict, sampler, seed, secure``, as the learners take them;
        ``options``: the learner's own validated keywords, passed to the native constructor.

        Raises:
            InvalidInputError: naming the first argument refused.
        """
        horizon, epsilon, loss_bound, strict, sampler, seed, secure = declared
        horizon = _validate.integer("horizon", horizon, low=1, high=2**63 - 1)
        loss_bound = _validate.real("loss_bound", loss_bound, low=0.0, low_open=True)
        strict, secure = _validate.flag("strict", strict), _validate.flag("secure", secure)
        sampler = _validate.option("sampler", sampler, SAMPLERS)
        if epsilon is not None:
            epsilon = _validate.real("epsilon", epsilon, low=0.0, low_open=True)
        keywords = {"sampler": sampler, "strict": strict, "seed": seed, "secure": secure, **(options or {})}
        self._core = self._core_type(first, horizon, loss_bound, epsilon, **keywords)  # type: ignore[attr-defined]
        guarantee: PrivacyGuarantee | None = None
        if epsilon is not None:
            exact_source, notes = _feedback_noise_text(self._core, sensitivity, sampler)
            guarantee = PrivacyGuarantee(
                epsilon=float(epsilon),
                delta=0.0,
                source=source + exact_source,
                randomness=randomness_of(seed, secure),
                notes=notes,
                sampler=sampler,
            )
        self._horizon: int = horizon
        self._privacy: PrivacyGuarantee | None = guarantee
        self._sampler = sampler


class Learner:
    """Base class of dponline's online learners (see the module docs)."""

    _core: Any
    _core_type: ClassVar[Any]
    _privacy: PrivacyGuarantee | None
    _horizon: int
    # The native family type that run accepts beyond the loss families, and its name in the error message.
    _family: ClassVar[tuple[type, str] | None] = None
    # The ``params`` keys drawn by the learner's own generator (not functions of its declared arguments): left out
    # when a restored state is checked against the learner its declared arguments rebuild (another seed).
    _drawn_params: ClassVar[tuple[str, ...]] = ()
    # How the learner's own privacy noise is drawn; None for a learner that draws none (the local-DP learners).
    _sampler: str | None = None

    # -- introspection ----------------------------------------------------------------------------------
    @property
    def privacy(self) -> PrivacyGuarantee | None:
        """The ``(ε, δ)`` guarantee per round's loss, with its source, or ``None`` for a non-private learner."""
        return self._privacy

    def privacy_per_source_row(self, losses: Any) -> PrivacyGuarantee | None:
        """The guarantee per source row of ``losses``: a row used in ``k`` rounds (a resampled stream) is a group
        of ``k`` rounds (:meth:`PrivacyGuarantee.group`, with ``k`` the largest row multiplicity). Equal to
        :attr:`privacy` for a stream played in order. ``None`` for a non-private learner.

        Raises:
            InvalidInputError: ``losses`` is not a loss family.
        """
        k = row_multiplicity(losses)
        return None if self._privacy is None else self._privacy.group(k)

    @property
    def sampler(self) -> str | None:
        """How the learner's privacy noise is drawn: ``"exact"`` (discrete samplers on a grid, the guarantee holds
        for the floats released) or ``"floating-point"`` (the guarantee is the real-valued mechanism's, with
        Mironov's 2012 caveat); ``None`` for the local-DP learners, whose providers draw the noise. Fixed at
        construction (the ``sampler`` argument, or its default for the mechanism)."""
        return self._sampler

    @property
    def t(self) -> int:
        """Rounds completed."""
        return int(self._core.t)

    @property
    def horizon(self) -> int:
        """``T``, the number of rounds the learner was built for."""
        return self._horizon

    def _final_point(self) -> np.ndarray:
        return np.zeros(0)

    def _epsilon_text(self) -> str:
        """The guarantee's ε for a repr (``"None"`` for a non-private learner)."""
        return "None" if self._privacy is None else f"{self._privacy.epsilon:g}"

    # -- native loop ------------------------------------------------------------------------------------
    def run(
        self,
        losses: Any,
        *,
        rounds: int | None = None,
        checkpoints: int = 1000,
        progress: bool = False,
    ) -> RunResult:
        """Play ``rounds`` rounds against a native loss family, with the GIL released.

        Round ``t`` of the learner uses round ``t`` of the family. The loop runs natively in blocks; Ctrl-C
        (``KeyboardInterrupt``) is honoured between blocks (within a fraction of a second) and leaves the learner
        consistent: it has played whole blocks, pickles, and a later ``run`` continues exactly as an
        uninterrupted run would.

        Args:
            losses: a :mod:`dponline.losses` family of the learner's dimension.
            rounds: rounds to play (default: all remaining rounds of the learner and the family).
            checkpoints: number of evenly spaced rounds at which the cumulative loss is recorded (1 to 10⁴).
            progress: show a tqdm progress bar.

        Raises:
            ProtocolError: a point is pending (asked, not told). HorizonExhaustedError: too many rounds.
            InvalidInputError: a family of another dimension, bad ``rounds``/``checkpoints``.
            StateError: the learner is being used by another thread.
        """
        if self._family is not None and not isinstance(losses, self._family[0]):
            raise InvalidInputError(f"losses must be {self._family[1]}, got {type(losses).__name__}")
        family_horizon = getattr(losses, "horizon", None)
        if not isinstance(family_horizon, int):
            raise InvalidInputError(f"losses must be a dponline loss family, got {type(losses).__name__}")
        start = self.t
        remaining = max(0, min(self.horizon, family_horizon) - start)
        rounds = remaining if rounds is None else _validate.integer("rounds", rounds, low=0, high=2**63 - 1)
        count = _validate.integer("checkpoints", checkpoints, low=1, high=_MAX_CHECKPOINTS)
        _validate.flag("progress", progress)
        marks = _checkpoints(start, start + rounds, count) if rounds else np.zeros(0, np.int64)
        began = time.perf_counter()
        if progress:
            tqdm = require("tqdm.auto", "progress=True").tqdm
            with tqdm(total=rounds, unit="round", unit_scale=True, desc=type(self).__name__) as bar:
                total, clipped, cum = self._core.run(losses, rounds, marks.tolist(), bar.update)
        else:
            total, clipped, cum = self._core.run(losses, rounds, marks.tolist())
        return RunResult(
            checkpoints=marks,
            cumulative_loss=np.asarray(cum, dtype=np.float64),
            total_loss=float(total),
            rounds=rounds,
            clipped=int(clipped),
            seconds=time.perf_counter() - began,
            final_point=self._final_point(),
        )

    # -- pickling ---------------------------------------------------------------------------------------
    # The pickled state is one checksummed container (dponline_core::state) holding the declared constructor
    # arguments and the native state. Nothing derived is stored: on restore the constructor runs again on the
    # declared arguments (the same validation and calibration, so the guarantee is recomputed, never read back),
    # and the restored native state must agree with the freshly built one on everything the arguments determine
    # (parameters, noise, noise scale, mechanism). Secure generators reseed from the OS on restore.
    _declared: dict[str, Any]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _recording(cls.__dict__["__init__"])  # type: ignore[method-assign]

    def __reduce__(self) -> tuple[Any, ...]:
        # Restored only through `_state.restore` (never an instance whose __setstate__ did not run).
        return (_state.restore, (type(self), self.__getstate__()))

    def __getstate__(self) -> bytes:
        return _state.seal((type(self).__name__, self._declared, self._core.to_bytes()))

    def __setstate__(self, state: bytes) -> None:
        what = type(self).__name__
        value = _state.unseal(state, what, tuple)
        if not (len(value) == 3 and value[0] == what and isinstance(value[1], dict) and isinstance(value[2], bytes)):
            raise StateError(f"cannot restore {what}: the pickled state is not the state of a {what}")
        _, declared, native = value
        try:
            call = inspect.BoundArguments(inspect.signature(type(self).__init__), {"self": self, **declared})
            type(self).__init__(*call.args, **call.kwargs)
        except (TypeError, InvalidInputError) as e:
            raise StateError(f"cannot restore {what}: its declared arguments are refused ({e})") from None
        restored = self._core_type.from_bytes(native)
        check_agrees(type(self).__name__, self._core, restored, self._drawn_params)
        self._core = restored


class DomainLearner(Learner):
    """A learner over a native domain (``self._domain``): its ``domain`` and repr."""

    _domain: Any

    @property
    def domain(self) -> _core.Domain:
        """The domain."""
        return self._domain

    def __repr__(self) -> str:
        eps = self._epsilon_text()
        return f"{type(self).__name__}({self._domain!r}, horizon={self.horizon}, epsilon={eps}, t={self.t})"


class PrefixSumLearner(Learner):
    """A learner whose privacy is that of private prefix-sum mechanisms over its clipped inputs (DPFTRL, DPFTPL,
    NoisyOCO, PrivateBandit, PrivateDRSubmodular, and PrivateSubmodularFTRL's experts): its construction on the
    shared arguments (:meth:`_adopt`), its ``mechanism`` and the noise in its ``params``."""

    def _adopt(self, core: Any, args: MechanismArgs, *, horizon: int, privacy: Any, domain: Any = None) -> None:
        """Keep the built native learner ``core``, its horizon, sampler and guarantee (and its domain, if any)."""
        self._core = core
        self._sampler = args.sampler
        self._horizon = horizon
        self._privacy = privacy
        if domain is not None:
            self._domain = domain

    @property
    def mechanism(self) -> str:
        """The prefix-sum mechanism behind the releases: ``"tree"`` (the padded binary tree of the papers),
        ``"honaker"`` (the same tree with Honaker's readout) or ``"blt"`` (a buffered linear Toeplitz
        factorisation); for :class:`~dponline.PrivateDRSubmodular` that of each copy, for
        :class:`~dponline.PrivateSubmodularFTRL` that of each expert."""
        return str(self._core.mechanism)

    def _final_point(self) -> np.ndarray:
        return self._core.action  # the last action (the learners with another final point override this)

    def _native_params(self, *extra: str) -> dict[str, Any]:
        """The native ``params`` with the noise (``noise``, ``noise_scale``) and the native attributes ``extra``."""
        out = dict(self._core.params)
        out.update(noise=self._core.noise, noise_scale=self._core.scale)
        out.update({name: getattr(self._core, name) for name in extra})
        return out
