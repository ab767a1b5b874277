"""dponline: differentially private online learning with a fast Rust core.

See the README for an overview. Public API:

* :class:`TreeAggregator` — private continual prefix sums (binary mechanism, Agarwal-Singh padding);
  :mod:`dponline.aggregation` also has :class:`~dponline.aggregation.HonakerTree`,
  :class:`~dponline.aggregation.KaryTree` and :class:`~dponline.aggregation.BLT`.
* :class:`PrivateBandit` — private projection-free bandit convex optimisation (Ene-Nguyen-Vladu 2021).
* :class:`NoisyOCO` — private projection-free online convex optimisation, full information (their Algorithm 2).
* :class:`DPFTRL` — private follow-the-regularised-leader with full information (Agarwal-Singh 2017).
* :class:`DPFTPL` — private follow-the-perturbed-leader, one LMO call per round (Agarwal-Singh 2017).
* :class:`PrivateEXP3` — ε-DP EXP3 for multi-armed bandits (Agarwal-Singh 2017).
* :class:`PrivateSCRiBLe` — ε-DP bandit linear optimisation on balls and boxes (Agarwal-Singh 2017).
* :class:`LocalLaplaceRandomizer`, :class:`PotentialLearner1D` — user-specified local DP (van der Hoeven 2019).
* :class:`PrivateSubmodular` — private online submodular maximisation (Perez-Salazar & Cummings 2021).
* :class:`PrivateSubmodularFTRL` — the same reduction with DP-FTRL experts (full information).
* :class:`PrivateDRSubmodular` — private online DR-submodular maximisation over a matroid (their Algorithm 4).
* :mod:`dponline.submodular` — native submodular function streams; :mod:`dponline.mwu` — Hedge over large sets.
* :mod:`dponline.domains` — decision sets with linear minimisation oracles.
* :mod:`dponline.losses` — native loss families; :mod:`dponline.regret` — comparators and regret curves.
* :func:`frank_wolfe`, :func:`sample_sphere` — the primitives, stand-alone.
* :mod:`dponline.privacy` — :class:`PrivacyGuarantee`, noise calibration, composition.
* :mod:`dponline.audit` — black-box empirical privacy audits: ε lower bounds with Clopper-Pearson confidence.
* :mod:`dponline.noise` — the core's Laplace/Gaussian samplers.
* :mod:`dponline.errors` — the exception hierarchy rooted at :class:`DPOnlineError`.
* :func:`simd_level` — the vector instruction set the core's hot loops use here (results never depend on it).
"""

from __future__ import annotations

from . import audit, domains, errors, local_dp, losses, mwu, noise, privacy, regret, submodular
from ._core import __version__, simd_level
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
from .learners import (
    DPFTPL,
    DPFTRL,
    NoisyOCO,
    PrivateBandit,
    PrivateDRSubmodular,
    PrivateEXP3,
    PrivateSCRiBLe,
    PrivateSubmodular,
    PrivateSubmodularFTRL,
    RunResult,
)
from .local_dp import (
    CoordinatewiseLearner,
    LocalLaplaceRandomizer,
    LocalStream,
    PotentialLearner1D,
    UnconstrainedLearner,
)
from .optimization import FrankWolfeResult, frank_wolfe, sample_sphere
from .privacy import PrivacyGuarantee

__all__ = [
    "__version__",
    "simd_level",
    "TreeAggregator",
    "PrivateBandit",
    "NoisyOCO",
    "DPFTRL",
    "DPFTPL",
    "PrivateEXP3",
    "PrivateSCRiBLe",
    "LocalLaplaceRandomizer",
    "PotentialLearner1D",
    "CoordinatewiseLearner",
    "UnconstrainedLearner",
    "LocalStream",
    "PrivateSubmodular",
    "PrivateSubmodularFTRL",
    "PrivateDRSubmodular",
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
    "audit",
    "domains",
    "errors",
    "local_dp",
    "losses",
    "mwu",
    "noise",
    "privacy",
    "regret",
    "submodular",
]
