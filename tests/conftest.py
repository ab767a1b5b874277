"""Shared test settings.

Statistical tests use fixed seeds and a significance level of ``ALPHA = 1e-6`` (two-sided z = 4.89), so a
correct implementation fails with probability about one in a million per assertion and never flakes in
practice, while a wrong noise scale, count or distribution fails reliably.
"""

import numpy as np
import pytest

ALPHA = 1e-6
Z = 4.892  # two-sided standard-normal quantile for ALPHA


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
