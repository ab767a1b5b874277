"""Online learners. Each follows the protocol ``ask() → x``, ``tell(loss)``, ``run(losses)``, ``privacy``."""

from __future__ import annotations

from ._base import Learner, RunResult
from .private_bandit import PrivateBandit, private_bandit_noise
from .private_submodular import PrivateSubmodular, submodular_privacy

__all__ = [
    "Learner",
    "PrivateBandit",
    "PrivateSubmodular",
    "RunResult",
    "private_bandit_noise",
    "submodular_privacy",
]
