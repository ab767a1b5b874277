"""A seeded run gives the same bits at every SIMD level the core dispatches to (``DPONLINE_SIMD``, read once per
process, so each level runs in its own interpreter): the learners built on dispatched kernels — DP-FTRL's softmax
and tree rows with bulk Laplace draws, PrivateEXP3's sum tree, Hedge's fused update, FI-DP's expert passes with
coverage gains — are digested and compared with the default (widest) level of this machine."""

import subprocess
import sys

import pytest

import dponline

_SCRIPT = r"""
import hashlib

import numpy as np

import dponline
from dponline import DPFTRL, PrivateEXP3, PrivateSubmodular
from dponline.domains import Simplex
from dponline.losses import BernoulliArms, Linear
from dponline.mwu import Hedge
from dponline.submodular import ProbabilisticCoverage

digest = hashlib.sha256()


def add(*arrays):
    for a in arrays:
        digest.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())


rng = np.random.default_rng(7)
losses = rng.random((64, 1003))
for delta in (0.0, 1e-6):
    learner = DPFTRL(Simplex(1003), horizon=300, epsilon=1.0, delta=delta, loss_bound=1003.0, seed=1)
    result = learner.run(Linear(losses, horizon=300, resample="cycle"), checkpoints=10)
    add(result.cumulative_loss, result.final_point)

exp3 = PrivateEXP3(1000, horizon=20_000, epsilon=1.0, seed=2)
result = exp3.run(BernoulliArms(rng.random(1000) * 0.9, horizon=20_000, seed=3), checkpoints=10)
add(result.cumulative_loss, result.final_point)

hedge = Hedge(4099, 0.05, seed=4)
for _ in range(70):  # past the exact refresh every 64 updates
    hedge.update_full(rng.random(4099))
add(hedge.log_weights, hedge.probabilities(), hedge.sample(50))

family = ProbabilisticCoverage(rng.random((40, 501)) * 0.2, horizon=200, resample="cycle")
fi_dp = PrivateSubmodular(501, 5, horizon=200, epsilon=1.0, delta=1e-6, feedback="full", seed=5)
result = fi_dp.run(family, checkpoints=10)
add(result.cumulative_loss)

print(dponline.simd_level(), digest.hexdigest())
"""


def _digest(level: str | None) -> tuple[str, str]:
    import os

    env = dict(os.environ)
    env.pop("DPONLINE_SIMD", None)
    if level is not None:
        env["DPONLINE_SIMD"] = level
    done = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    used, digest = done.stdout.split()
    return used, digest


@pytest.mark.slow
def test_seeded_runs_are_bit_identical_at_every_simd_level():
    order = ["baseline", "avx2", "avx512"]
    top, widest = _digest(None)
    assert top == dponline.simd_level() and len(widest) == 64
    for level in order[: order.index(top)]:
        used, digest = _digest(level)
        assert used == level  # the cap took effect: this is a run at another level
        assert digest == widest, f"DPONLINE_SIMD={level} changed a seeded run"
