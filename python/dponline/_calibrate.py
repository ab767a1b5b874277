"""The option validation and guarantee wording shared by the ``calibrated`` constructors of
:mod:`dponline.aggregation` (the binary mechanism and the linear mechanisms)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeVar

from . import _validate, privacy
from ._options import NOISES, SAMPLERS, Calibration, LinearCalibration, Noise, Sampler
from ._seed import SeedLike
from .privacy import PrivacyGuarantee
from .privacy.discrete import ExactCalibration

_C = TypeVar("_C", Calibration, LinearCalibration)


def calibration_options(
    calibration: _C | None, calibrations: Sequence[_C], sampler: Sampler, delta: float, noise: Noise | None
) -> tuple[_C | None, Sampler, float, Noise]:
    """The validated options of a ``calibrated`` constructor: ``calibration`` (``None`` kept: the tightest proved
    one) among ``calibrations``, ``sampler``, ``delta`` in ``[0, 1)``, and ``noise``, by default Laplace when
    ``delta == 0`` else Gaussian. Raises ``InvalidInputError`` naming the bad argument."""
    if calibration is not None:
        calibration = _validate.option("calibration", calibration, calibrations)
    sampler = _validate.option("sampler", sampler, SAMPLERS)
    delta = _validate.real("delta", delta, low=0.0, high=1.0, high_open=True)
    if noise is None:
        noise = "laplace" if delta == 0 else "gaussian"
    return calibration, sampler, delta, _validate.option("noise", noise, NOISES)


def exact_guarantee(
    fit: ExactCalibration, source: str, calibration: str | None, seed: SeedLike, secure: bool
) -> PrivacyGuarantee:
    """The guarantee of a mechanism calibrated on the exact path (``fit`` from
    :func:`dponline.privacy.discrete.exact_noise`), per pushed row."""
    return fit.guarantee(
        f"{source}, calibration={calibration or 'exact'!r}",
        unit="one pushed row",
        randomness=privacy.randomness_of(seed, secure),
    )


def float_guarantee(guarantee: PrivacyGuarantee, seed: SeedLike, secure: bool) -> PrivacyGuarantee:
    """A floating-point calibration's ``guarantee`` stated per pushed row, with the run's randomness."""
    return dataclasses.replace(
        guarantee,
        unit="one pushed row",
        randomness=privacy.randomness_of(seed, secure),
        sampler="floating-point",
    )
