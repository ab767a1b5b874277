"""The (ε, δ) guarantee every learner and mechanism states, and how its noise was keyed."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import _core, _validate
from ..errors import InvalidInputError
from ._numerics import _count, _nonnegative, _positive
from .gaussian import gaussian_epsilon_analytic
from .zcdp import zcdp_to_dp

__all__ = ["PrivacyGuarantee", "NEIGHBOURING_ROUND", "UNIT_ROUND", "randomness_of", "row_multiplicity"]

NEIGHBOURING_ROUND = "streams that differ in one round's loss (one round's input replaced by any other)"
"""The neighbouring relation of every online learner in dponline."""

UNIT_ROUND = "one round's loss"
"""The privacy unit of every online learner in dponline."""

_RANDOMNESS = {
    "": "",
    "os": "noise from xoshiro256++ seeded from operating-system entropy that is never recorded (a sweep without a "
    "root seed): private while that entropy stays secret",
    "seed": "seeded noise: private only while the seed is secret (anyone with the seed and the code can "
    "reproduce the noise)",
    "secure": "noise from ChaCha20 keyed by the operating system (no seed): never serialised, re-keyed on copy, "
    "unpickling and in a forked child",
}

_SAMPLER = {
    "": "",
    "exact": "exact noise: integer noise from exact discrete samplers (Canonne-Kamath-Steinke 2020) added to inputs "
    "rounded onto a power-of-two grid, released as integer multiples of the grid; the accounting is that of the "
    "discrete mechanism, so floating-point representation cannot weaken it",
    "floating-point": "floating-point noise: the stated (ε, δ) is that of the real-valued mechanism; the low-order "
    "bits of a floating-point release can reveal its input (Mironov 2012, 'On significance of the least "
    "significant bits for differential privacy'), so it does not hold against an attacker who reads the floats",
}


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ)-differential-privacy guarantee, what it protects, and where it comes from.

    Attributes:
        epsilon: ε >= 0, finite (nats).
        delta: δ in [0, 1].
        source: the paper and theorem the guarantee follows from.
        neighbouring: the neighbouring relation the guarantee is stated for (default: streams differing in one
            round's loss).
        unit: what one neighbouring step changes — the privacy unit (default ``"one round's loss"``; a group
            guarantee names its group, e.g. one source row of a resampled stream).
        randomness: how the noise was keyed: ``"secure"`` (no seed: OS-keyed ChaCha20, the default), ``"seed"``
            (private only while the seed is secret), ``"os"`` (seeded from OS entropy that was never recorded: a
            sweep without a root seed), or ``""`` (not stated).
        notes: free text (parameters, caveats).
        noise_multiplier: for a Gaussian mechanism, σ divided by the L2 sensitivity of the whole release; lets
            :meth:`group` compute the exact group guarantee. ``None`` otherwise.
        sampler: how the noise was drawn: ``"exact"`` (exact discrete samplers on a power-of-two grid, the
            default of every mechanism), ``"floating-point"`` (the fast float samplers: the guarantee is that of
            the real-valued mechanism and carries the Mironov 2012 caveat) or ``""`` (not stated).

    Raises:
        InvalidInputError: for ε < 0, δ outside [0, 1], an unknown ``randomness`` or ``sampler``, or a non-string
            text field.
        NonFiniteError: for a NaN or infinite ε or δ.
    """

    epsilon: float
    delta: float
    source: str
    neighbouring: str = NEIGHBOURING_ROUND
    unit: str = UNIT_ROUND
    randomness: str = ""
    notes: str = ""
    noise_multiplier: float | None = None
    sampler: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _nonnegative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", _validate.real("delta", self.delta, low=0.0, high=1.0))
        for name in ("source", "neighbouring", "unit", "randomness", "notes", "sampler"):
            if not isinstance(getattr(self, name), str):
                raise InvalidInputError(f"{name} must be a str, got {getattr(self, name)!r}")
        _validate.option("randomness", self.randomness, tuple(_RANDOMNESS))
        _validate.option("sampler", self.sampler, tuple(_SAMPLER))
        if self.noise_multiplier is not None:
            object.__setattr__(self, "noise_multiplier", _positive("noise_multiplier", self.noise_multiplier))

    @property
    def caveat(self) -> str:
        """What the guarantee assumes about the randomness and the noise samplers, in words (empty when neither is
        stated)."""
        return "; ".join(text for text in (_RANDOMNESS[self.randomness], _SAMPLER[self.sampler]) if text)

    def group(self, k: int) -> PrivacyGuarantee:
        """The guarantee for a group of ``k`` units (e.g. a source row used in ``k`` rounds).

        * pure ε-DP: ``kε`` (Dwork & Roth 2014, Theorem 2.2);
        * a Gaussian mechanism (``noise_multiplier`` known): exact, the Gaussian mechanism at ``k`` times the
          sensitivity — ``ε_k = gaussian_epsilon_analytic(δ, noise_multiplier, k)`` at the same δ (Balle & Wang
          2018, Theorem 8); for the discrete Gaussian (``sampler="exact"``), whose accounting is zCDP, the group of
          ``k`` is ``k²ρ``-zCDP (the sensitivity scales by ``k``; Canonne-Kamath-Steinke 2020, Section 2) converted
          at the same δ (:func:`~dponline.privacy.zcdp_to_dp`);
        * otherwise: ``(kε, k·e^{(k−1)ε}·δ)`` (Vadhan 2017, "The complexity of differential privacy",
          Lemma 2.2).

        Args:
            k: group size, an integer >= 1.

        Returns:
            A new :class:`PrivacyGuarantee` whose ``unit`` names the group.

        Raises:
            InvalidInputError: ``k`` not an integer >= 1.
        """
        size = _count("k", k)
        if size == 1:
            return self
        unit = f"{size} x ({self.unit})"
        common = {
            "neighbouring": self.neighbouring,
            "unit": unit,
            "randomness": self.randomness,
            "sampler": self.sampler,
        }
        if self.delta == 0.0:
            return PrivacyGuarantee(
                epsilon=size * self.epsilon,
                delta=0.0,
                source=f"group privacy of {size} (Dwork-Roth Theorem 2.2) applied to: {self.source}",
                notes=self.notes,
                **common,
            )
        if self.noise_multiplier is not None and 0.0 < self.delta < 1.0:
            # The exact group ε can be below a conservative per-round claim (a calibration with slack);
            # never report a group guarantee stronger than the per-unit one.
            if self.sampler == "exact":
                exact = zcdp_to_dp(size**2 / (2.0 * self.noise_multiplier**2), self.delta)
                how = "discrete Gaussian at {size}x the sensitivity (zCDP, Canonne-Kamath-Steinke 2020)"
            else:
                exact = gaussian_epsilon_analytic(self.delta, self.noise_multiplier, float(size))
                how = "Gaussian mechanism at {size}x the sensitivity (Balle-Wang 2018 Thm 8)"
            return PrivacyGuarantee(
                epsilon=max(self.epsilon, exact),
                delta=self.delta,
                source=f"{how.format(size=size)} for: {self.source}",
                notes=self.notes,
                noise_multiplier=self.noise_multiplier / size,
                **common,
            )
        # k·e^{(k−1)ε}·δ in log space: it saturates at 1 instead of overflowing for large (k−1)ε.
        log_delta = math.log(size) + (size - 1) * self.epsilon + math.log(self.delta)
        return PrivacyGuarantee(
            epsilon=size * self.epsilon,
            delta=1.0 if log_delta >= 0.0 else math.exp(log_delta),
            source=f"group privacy of {size} (Vadhan 2017 Lemma 2.2) applied to: {self.source}",
            notes=self.notes,
            **common,
        )

    def to_dict(self) -> dict[str, object]:
        """The fields as a JSON-ready dict, with the randomness caveat spelled out."""
        out: dict[str, object] = dict(self.__dict__)
        out["caveat"] = self.caveat
        return out

    def __str__(self) -> str:
        text = f"(ε={self.epsilon:g}, δ={self.delta:g})-DP per {self.unit} [{self.source}]"
        if self.randomness == "seed":
            text += " — seeded: private only while the seed is secret"
        if self.sampler == "floating-point":
            text += " — floating-point noise: holds for the real-valued mechanism only (Mironov 2012)"
        return text


def randomness_of(seed: object, secure: bool) -> str:
    """How an object's noise is keyed, for :attr:`PrivacyGuarantee.randomness`: ``"secure"`` (no seed, or
    ``secure=True``: OS-keyed ChaCha20) or ``"seed"`` (the guarantee then holds only while the seed is secret)."""
    return "secure" if secure or seed is None else "seed"


def row_multiplicity(losses: object) -> int:
    """The largest number of rounds any source row of a loss stream is used in (1 for a stream played in order).

    A guarantee per round is, per source row, a group guarantee over this many rounds
    (:meth:`PrivacyGuarantee.group`).

    Args:
        losses: a :mod:`dponline.losses` family (anything with ``row_counts()``), or a
            :func:`dponline.losses.BernoulliArms` environment (fresh independent draws every round: 1).

    Raises:
        InvalidInputError: an object without ``row_counts``.
    """
    if isinstance(losses, _core.BernoulliArms):
        return 1
    counts = getattr(losses, "row_counts", None)
    if counts is None:
        raise InvalidInputError(f"losses must be a loss family with row_counts(), got {type(losses).__name__}")
    values = np.asarray(counts())
    return max(1, int(values.max())) if values.size else 1
