"""The one confidence bound every empirical privacy audit in this suite uses."""

from __future__ import annotations

import numpy as np


def audit_epsilon(hits_a: float, hits_b: float, trials: int, delta: float = 0.0) -> float:
    """Lower confidence bound (level 1 − 10⁻⁶) on ``ln((P_a − δ) / P_b)`` from two binomial counts of one event
    over ``trials`` runs on each of two neighbouring inputs (Clopper-Pearson, 0.5·10⁻⁶ on each side): any value
    above the claimed ε of an (ε, δ)-DP mechanism refutes the claim. ``−inf`` when the lower bound on ``P_a``
    does not exceed ``δ``."""
    from scipy.stats import beta

    lower_a = beta.ppf(0.5e-6, hits_a, trials - hits_a + 1)
    upper_b = beta.ppf(1 - 0.5e-6, hits_b + 1, trials - hits_b)
    return float(np.log(lower_a - delta) - np.log(upper_b)) if lower_a > delta else -np.inf
