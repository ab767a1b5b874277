"""Online learners. Each follows the protocol ``ask() → x``, ``tell(loss)``, ``run(losses)``, ``privacy``."""

from __future__ import annotations

from ._base import Learner, RunResult
from .dp_ftrl import DPFTPL, DPFTRL, dp_ftrl_noise
from .noisy_oco import NoisyOCO, noisy_oco_noise
from .private_bandit import PrivateBandit, private_bandit_noise
from .private_dr_submodular import PrivateDRSubmodular, dr_submodular_privacy
from .private_exp3 import PrivateEXP3
from .private_scrible import PrivateSCRiBLe
from .private_submodular import PrivateSubmodular, submodular_privacy
from .private_submodular_ftrl import PrivateSubmodularFTRL

__all__ = [
    "DPFTPL",
    "DPFTRL",
    "Learner",
    "NoisyOCO",
    "PrivateBandit",
    "PrivateDRSubmodular",
    "PrivateEXP3",
    "PrivateSCRiBLe",
    "PrivateSubmodular",
    "PrivateSubmodularFTRL",
    "RunResult",
    "dp_ftrl_noise",
    "dr_submodular_privacy",
    "noisy_oco_noise",
    "private_bandit_noise",
    "submodular_privacy",
]
