"""dponline: differentially private online learning with a fast Rust core.

See the README for an overview. Public API:

* :class:`TreeAggregator` — private continual prefix sums (binary mechanism, Agarwal-Singh padding).
* :class:`PrivateBandit` — private projection-free bandit convex optimisation (Ene-Nguyen-Vladu 2021).
* :class:`PrivateSubmodular` — private online submodular maximisation (Perez-Salazar & Cummings 2021).
* :mod:`dponline.submodular` — native submodular function streams; :mod:`dponline.mwu` — Hedge over large sets.
* :mod:`dponline.domains` — decision sets with linear minimisation oracles.
* :mod:`dponline.losses` — native loss families; :mod:`dponline.regret` — comparators and regret curves.
* :func:`frank_wolfe`, :func:`sample_sphere` — the primitives, stand-alone.
* :mod:`dponline.privacy` — :class:`PrivacyGuarantee`, noise calibration, composition.
* :mod:`dponline.noise` — the core's Laplace/Gaussian samplers.
* :mod:`dponline.errors` — the exception hierarchy rooted at :class:`DPOnlineError`.
"""

from __future__ import annotations

from . import domains, errors, losses, mwu, noise, privacy, regret, submodular
from ._core import __version__
from .aggregation import TreeAggregator
from .errors import (
    ConvergenceError,
    DPOnlineError,
    HorizonExhaustedError,
    InvalidGraphError,
    InvalidInputError,
    NonFiniteError,
    ProtocolError,
    StateError,
)
from .learners import PrivateBandit, PrivateSubmodular, RunResult
from .optimization import FrankWolfeResult, frank_wolfe, sample_sphere
from .privacy import PrivacyGuarantee

__all__ = [
    "__version__",
    "TreeAggregator",
    "PrivateBandit",
    "PrivateSubmodular",
    "RunResult",
    "frank_wolfe",
    "FrankWolfeResult",
    "sample_sphere",
    "PrivacyGuarantee",
    "DPOnlineError",
    "InvalidInputError",
    "NonFiniteError",
    "InvalidGraphError",
    "StateError",
    "ConvergenceError",
    "ProtocolError",
    "HorizonExhaustedError",
    "domains",
    "errors",
    "losses",
    "mwu",
    "noise",
    "privacy",
    "regret",
    "submodular",
]
