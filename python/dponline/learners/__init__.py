"""Online learners. Each follows the protocol ``ask() → x``, ``tell(loss)``, ``run(losses)``, ``privacy``."""

from __future__ import annotations

from ._base import Learner, RunResult
from .private_bandit import PrivateBandit, private_bandit_noise

__all__ = ["Learner", "PrivateBandit", "RunResult", "private_bandit_noise"]
