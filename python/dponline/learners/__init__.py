"""Online learners. Each follows the protocol ``ask() → x``, ``tell(loss)``, ``run(losses)``, ``privacy``."""

from __future__ import annotations

from .private_bandit import PrivateBandit, RunResult, private_bandit_noise

__all__ = ["PrivateBandit", "RunResult", "private_bandit_noise"]
