"""pytest-benchmark: PrivateBandit (one ask+tell step; ``run`` over 10^4 rounds) and one Frank-Wolfe iteration.

``frank_wolfe(Simplex(n), v, 1)`` goes through the Python API: besides the one LMO call and line search it
pays the call overhead, input validation, and the allocation of the returned ``x``/vertices/weights arrays —
at ``n = 36`` that overhead dominates. The native learner's internal Frank-Wolfe step has none of it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from compare_private_bandit import make_learner

import dponline
from dponline.domains import Simplex

RUN_ROUNDS = 10_000


def _learner(family: dponline.losses.LossFamily, horizon: int) -> dponline.PrivateBandit:
    return make_learner(family, horizon)


def test_ask_tell_step(benchmark, nyse_family, nyse_relatives) -> None:
    """One round through the Python protocol: ``ask``, the loss ``−ln⟨r, y⟩`` in Python, ``tell``."""
    benchmark.group = "private_bandit-step"
    learner = _learner(nyse_family, 10**7)
    r = nyse_relatives[123]
    log = math.log

    def step() -> None:
        learner.tell(-log(float(r @ learner.ask())))

    rounds, iterations = 30, 1_000
    benchmark.pedantic(step, rounds=rounds, iterations=iterations, warmup_rounds=1)
    assert learner.t <= (rounds + 2) * iterations


def test_run_10k_rounds(benchmark, nyse_family) -> None:
    """``run`` over 10^4 rounds (GIL released, no Python per round); a fresh learner per benchmark round."""
    benchmark.group = "private_bandit-run"
    benchmark.extra_info["rounds"] = RUN_ROUNDS

    def setup():
        return (_learner(nyse_family, RUN_ROUNDS),), {}

    def run(learner: dponline.PrivateBandit) -> dponline.RunResult:
        # Rounds 0..10^4 of the bootstrapped family (it is longer than the learner's horizon).
        return learner.run(nyse_family, rounds=RUN_ROUNDS, checkpoints=1)

    result = benchmark.pedantic(run, setup=setup, rounds=10, warmup_rounds=1)
    assert result.rounds == RUN_ROUNDS


@pytest.mark.parametrize("n", [36, 10_000])
def test_frank_wolfe_one_iteration(benchmark, n: int) -> None:
    benchmark.group = "frank_wolfe-1-iteration"
    benchmark.extra_info["note"] = "includes the Python call, validation and result allocation"
    domain = Simplex(n)
    v = np.random.default_rng(0).normal(size=n)
    result = benchmark(dponline.frank_wolfe, domain, v, 1)
    assert result.x.shape == (n,)
