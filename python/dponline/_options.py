"""The option names that several modules accept, each owned here once: a ``Literal`` alias for type hints and the
tuple of its values (``typing.get_args`` of the alias) for validators and CLI choices.

The stubs of the compiled core (``_core.pyi``) spell the same literals out, as stubtest requires.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "Calibration",
    "CALIBRATIONS",
    "LinearCalibration",
    "LINEAR_CALIBRATIONS",
    "HedgeCalibration",
    "HEDGE_CALIBRATIONS",
    "Noise",
    "NOISES",
    "Mechanism",
    "MECHANISMS",
    "Sampler",
    "SAMPLERS",
]

Calibration = Literal["paper", "analytic", "zcdp"]
"""How a learner or the tree calibrates its noise: the paper's own formula, the exact analytic Gaussian mechanism,
or through zCDP (:func:`dponline.privacy.tree_gaussian_sigma`)."""
CALIBRATIONS: tuple[Calibration, ...] = get_args(Calibration)

LinearCalibration = Literal["analytic", "zcdp"]
"""The calibrations of a linear prefix-sum mechanism, which has no paper formula
(:func:`dponline.privacy.linear_gaussian_sigma`)."""
LINEAR_CALIBRATIONS: tuple[LinearCalibration, ...] = get_args(LinearCalibration)

HedgeCalibration = Literal["paper", "zcdp"]
"""How a private Hedge's rate is set from ``(ε, δ)`` (:class:`dponline.PrivateSubmodular`): the paper's formula, or
the largest rate whose draws compose to ``(ε, δ)`` through zCDP."""
HEDGE_CALIBRATIONS: tuple[HedgeCalibration, ...] = get_args(HedgeCalibration)

Noise = Literal["laplace", "gaussian"]
"""The noise distribution of a central mechanism."""
NOISES: tuple[Noise, ...] = get_args(Noise)

Mechanism = Literal["tree", "honaker", "blt"]
"""The prefix-sum mechanism a learner releases its sums with (:mod:`dponline.aggregation`)."""
MECHANISMS: tuple[Mechanism, ...] = get_args(Mechanism)

Sampler = Literal["exact", "floating-point"]
"""How a mechanism draws its noise: exact discrete samplers on a power-of-two grid (the default), or the fast
floating-point samplers, whose guarantee holds for the real-valued mechanism only (Mironov 2012)."""
SAMPLERS: tuple[Sampler, ...] = get_args(Sampler)
