"""Smoke test of an installed wheel in a fresh virtualenv with only the core install (no extras): every learner
imports and takes a step, one runs natively, and the experiments harness names its missing extra."""

import importlib.util
import sys

import numpy as np

import dponline
from dponline import domains, losses

OPTIONAL = ("pandas", "pyarrow", "matplotlib", "tqdm")
assert all(importlib.util.find_spec(m) is None for m in OPTIONAL), "not a core install"
print(f"dponline {dponline.__version__} on Python {sys.version.split()[0]}, {dponline._core.__file__}")

steps = [
    (dponline.PrivateBandit(domains.Simplex(3), horizon=10, epsilon=1.0, lipschitz=1.0), 0.5),
    (dponline.DPFTRL(domains.Simplex(3), horizon=10, epsilon=1.0, loss_bound=3.0), [0.1, 0.2, 0.3]),
    (dponline.DPFTPL(domains.UniformMatroid(4, 2), horizon=10, epsilon=1.0, delta=1e-6, loss_bound=2.0), np.ones(4)),
    (dponline.PrivateEXP3(4, horizon=10, epsilon=1.0), 0.5),
    (dponline.PrivateSCRiBLe(domains.L2Ball(3, 1.0), horizon=10, epsilon=1.0, loss_bound=1.0), 0.5),
    (dponline.PrivateSubmodular(5, 2, horizon=10, epsilon=1.0, delta=1e-6), np.full(5, 0.1)),
    (dponline.PrivateDRSubmodular(domains.UniformMatroid(5, 2, base=False), horizon=10, epsilon=1.0), np.full(5, 0.1)),
    (dponline.PotentialLearner1D(1.0), 0.5),
    (dponline.CoordinatewiseLearner(3, 1.0), np.array([0.5, -0.5, 0.1])),
    (dponline.UnconstrainedLearner(3, 1.0), np.array([0.5, -0.5, 0.1])),
]
for learner, feedback in steps:
    learner.ask()
    learner.tell(feedback)
assert dponline.LocalLaplaceRandomizer(3).randomize(np.ones(3), [1.0, 1.0, 1.0]).shape == (3,)
assert dponline.TreeAggregator.calibrated(2, 8, epsilon=1.0, sensitivity=1.0).push(np.ones(2)).shape == (2,)

learner = dponline.PrivateBandit(domains.Simplex(3), horizon=10_000, epsilon=1.0, lipschitz=1.0, loss_bound=1.0)
result = learner.run(losses.Linear(np.tile([0.2, 0.5, 0.9], (10_000, 1))))
assert result.rounds == 10_000 and learner.privacy.randomness == "secure"
try:
    import dponline.experiments  # noqa: F401
except ImportError as exc:
    assert "dponline[experiments]" in str(exc), exc
else:
    raise AssertionError("dponline.experiments imported without its extra")
print(f"ok: {len(steps)} learners stepped, PrivateBandit ran {result.rounds} rounds, {learner.privacy}")
