"""pytest-benchmark: the cost of PrivateEXP3's secure default (OS-keyed ChaCha20 and the exact discrete Laplace
feedback release, issue 21) against the previous default path (a seeded xoshiro256++ generator and the
floating-point Laplace sampler, ``sampler="floating-point"``): ``run`` over T = 10⁶ rounds of 10 Bernoulli arms,
a fresh learner per benchmark round. The two middle configurations split the cost between the generator and the
sampler. Target (issue 21): the default within 2× of the floating-point seeded run; read the ratio of the means
within one run (``--benchmark-group-by=group``).
"""

from __future__ import annotations

import pytest

import dponline
from dponline.losses import BernoulliArms

T = 10**6
ARMS = 10

CONFIGS = {
    "default (secure, exact)": {},
    "seeded, exact": {"seed": 0},
    "secure, floating-point": {"sampler": "floating-point"},
    "seeded, floating-point (previous default)": {"sampler": "floating-point", "seed": 0},
}


@pytest.mark.parametrize("config", list(CONFIGS))
def test_exp3_run_1e6(benchmark, config: str) -> None:
    benchmark.group = "private_exp3-run-1e6-sampler"
    benchmark.extra_info["rounds"] = T
    arms = BernoulliArms([0.1 * (i + 1) for i in range(ARMS - 1)] + [0.05], horizon=T, seed=1)

    def setup():
        return (dponline.PrivateEXP3(ARMS, horizon=T, epsilon=1.0, **CONFIGS[config]),), {}

    def run(learner: dponline.PrivateEXP3) -> dponline.RunResult:
        return learner.run(arms, checkpoints=1)

    result = benchmark.pedantic(run, setup=setup, rounds=5, warmup_rounds=1)
    assert result.rounds == T
