"""dponline: differentially private online learning with a fast Rust core.

See the README for an overview. Public API:

* :class:`TreeAggregator` — private continual prefix sums (binary mechanism, Agarwal-Singh padding).
* :mod:`dponline.privacy` — :class:`PrivacyGuarantee`, noise calibration, composition.
* :mod:`dponline.noise` — the core's Laplace/Gaussian samplers.
* :mod:`dponline.errors` — the exception hierarchy rooted at :class:`DPOnlineError`.
"""

from __future__ import annotations

from . import errors, noise, privacy
from ._core import __version__
from .aggregation import TreeAggregator
from .errors import (
    DPOnlineError,
    HorizonExhaustedError,
    InvalidGraphError,
    InvalidInputError,
    NonFiniteError,
    ProtocolError,
    StateError,
)
from .privacy import PrivacyGuarantee

__all__ = [
    "__version__",
    "TreeAggregator",
    "PrivacyGuarantee",
    "DPOnlineError",
    "InvalidInputError",
    "NonFiniteError",
    "InvalidGraphError",
    "StateError",
    "ProtocolError",
    "HorizonExhaustedError",
    "errors",
    "noise",
    "privacy",
]
