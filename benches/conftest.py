"""Shared fixtures of the pytest-benchmark suite.

Run with ``pytest benches --benchmark-enable`` (the project's ``addopts`` pass ``--benchmark-disable``, which
runs every benchmark body once, as a smoke test). Timings on the shared 2-core machines are noisy: compare
within one run (``--benchmark-group-by=group``), never across runs.
"""

from __future__ import annotations

import numpy as np
import pytest

import dponline
from dponline.datasets import load_nyse


@pytest.fixture(scope="session")
def nyse_relatives() -> np.ndarray:
    """The NYSE price relatives, shape ``(5651, 36)``."""
    return np.asarray(load_nyse().relatives, dtype=np.float64)


@pytest.fixture(scope="session")
def nyse_family(nyse_relatives: np.ndarray) -> dponline.losses.LossFamily:
    """NYSE portfolio log-losses bootstrapped to 10^7 rounds (counter-based: O(1) memory in the horizon)."""
    return dponline.losses.PortfolioLogLoss(
        nyse_relatives, relative_range=(0.5, 2.0), horizon=10**7, resample="bootstrap", seed=0
    )
