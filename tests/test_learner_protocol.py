"""The protocol every native learner shares (generated once by the bindings' ``py_learner!``), checked once for
all of them: a call that meets another thread's call on the same learner raises ``StateError`` — ``ask``,
``tell``, ``run``, the getters and pickling alike — and leaves the learner to the thread that holds it."""

from __future__ import annotations

import pickle
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dponline
from dponline import local_dp, losses, submodular
from dponline.domains import Simplex, UniformMatroid

T = 70_000  # more than one native block (65,536 rounds): `run` calls `progress` with the learner borrowed
_P = np.array([[0.3, 0.1, 0.6, 0.2]])


def _linear(dim: int) -> Any:
    return losses.Linear(np.linspace(0.1, 0.9, dim)[None, :], horizon=T, resample="cycle")


def _coverage() -> Any:
    return submodular.ProbabilisticCoverage(_P, horizon=T, resample="cycle")


# name: (learner, family, a valid tell)
LEARNERS: dict[str, tuple[Callable[[], Any], Callable[[], Any], Callable[[Any], None]]] = {
    "PrivateBandit": (
        lambda: dponline.PrivateBandit(Simplex(3), horizon=T, epsilon=None, lipschitz=1.0, seed=0),
        lambda: _linear(3),
        lambda learner: learner.tell(0.0),
    ),
    "DPFTRL": (
        lambda: dponline.DPFTRL(Simplex(3), horizon=T, epsilon=None, loss_bound=1.0, seed=0),
        lambda: _linear(3),
        lambda learner: learner.tell(np.zeros(3)),
    ),
    "NoisyOCO": (
        lambda: dponline.NoisyOCO(Simplex(3), horizon=T, epsilon=None, lipschitz=1.0, seed=0),
        lambda: _linear(3),
        lambda learner: learner.tell(np.zeros(3)),
    ),
    "PrivateEXP3": (
        lambda: dponline.PrivateEXP3(3, horizon=T, epsilon=None, seed=0),
        lambda: _linear(3),
        lambda learner: learner.tell(0.0),
    ),
    "PrivateSCRiBLe": (
        lambda: dponline.PrivateSCRiBLe(Simplex(3), horizon=T, epsilon=None, loss_bound=1.0, seed=0),
        lambda: _linear(3),
        lambda learner: learner.tell(0.0),
    ),
    "PrivateSubmodular": (
        lambda: dponline.PrivateSubmodular(4, 2, horizon=T, epsilon=None, seed=0),
        _coverage,
        lambda learner: learner.tell(_P[0]),
    ),
    "PrivateDRSubmodular": (
        lambda: dponline.PrivateDRSubmodular(UniformMatroid(4, 2, base=False), horizon=T, epsilon=None, seed=0),
        _coverage,
        lambda learner: learner.tell(_P[0]),
    ),
    "CoordinatewiseLearner": (
        lambda: dponline.CoordinatewiseLearner(3, 1.0, seed=0),
        lambda: local_dp.LocalStream(np.full((T, 3), 0.1), np.ones(T), loss="squared"),
        lambda learner: learner.tell(np.zeros(3)),
    ),
}


@pytest.mark.parametrize("name", list(LEARNERS))
def test_two_threads_on_one_learner_get_state_error(name: str) -> None:
    make, family, tell = LEARNERS[name]
    learner, fam = make(), family()
    in_run, release = threading.Event(), threading.Event()

    def progress(n: int) -> None:  # called between native blocks, with the learner borrowed by `run`
        in_run.set()
        release.wait(10)

    native = fam._core if isinstance(fam, local_dp.LocalStream) else fam  # the native stream of a local learner
    worker = threading.Thread(target=lambda: learner._core.run(native, T, [T], progress))
    worker.start()
    assert in_run.wait(10)
    calls = [
        learner.ask,
        lambda: tell(learner),
        lambda: learner.run(fam, rounds=1),
        lambda: learner.t,
        lambda: learner._core.clipped,
        lambda: pickle.dumps(learner),
    ]
    if name != "CoordinatewiseLearner":  # the local learners have no schedule
        calls.append(lambda: learner._core.params)
    try:
        for call in calls:
            with pytest.raises(dponline.StateError, match="another thread"):
                call()
    finally:
        release.set()
        worker.join()
    assert learner.t == T
