"""Integrity of pickled state (issue 23): one checksummed format, the guarantee recomputed on restore, no silent
change and no ``PanicException`` from any mutated pickle, and named errors at the binding boundary."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dponline
from dponline import _core, _state, aggregation, losses
from dponline.domains import Simplex
from dponline.errors import InvalidInputError, StateError

sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
from mutated_pickles import FACTORIES, mutate, outcome, state_outcome, summary  # noqa: E402

_OBJECTS = {name: make() for name, make in FACTORIES.items()}
_PICKLES = {name: pickle.dumps(obj) for name, obj in _OBJECTS.items()}
_SUMMARIES = {name: summary(obj) for name, obj in _OBJECTS.items()}

mutations = st.tuples(st.integers(0, 3), st.floats(0.0, 1.0, exclude_max=True), st.integers(0, 1 << 16))


@pytest.mark.parametrize("name", list(FACTORIES))
@settings(max_examples=60, deadline=None)
@given(mutation=mutations)
def test_a_mutated_pickle_is_refused_or_loads_unchanged(name: str, mutation: tuple[int, float, int]) -> None:
    got = outcome(_SUMMARIES[name], mutate(_PICKLES[name], *mutation))
    assert got not in ("silent change", "panic"), got


@pytest.mark.parametrize("name", list(FACTORIES))
@settings(max_examples=60, deadline=None)
@given(mutation=mutations)
def test_a_mutated_state_is_refused_with_a_dponline_error(name: str, mutation: tuple[int, float, int]) -> None:
    obj = _OBJECTS[name]
    state = obj.__getstate__()
    mutated = mutate(state, *mutation)
    got = state_outcome(obj, _SUMMARIES[name], mutated)
    assert got == ("identical" if mutated == state else "refused"), got


@pytest.mark.parametrize("name", list(FACTORIES))
def test_round_trip_keeps_parameters_guarantee_and_state(name: str) -> None:
    assert summary(pickle.loads(_PICKLES[name])) == _SUMMARIES[name]


def test_each_defect_of_the_container_has_its_message() -> None:
    state = _OBJECTS["PrivateBandit"].__getstate__()
    assert state[:4] == b"DPOS"
    cases = {
        "truncated": state[:-3],
        "trailing bytes": state + b"\0",
        "checksum mismatch": state[:40] + bytes([state[40] ^ 1]) + state[41:],
        "not a dponline state": b"XXXX" + state[4:],
        "too short": state[:7],
    }
    for message, damaged in cases.items():
        with pytest.raises(StateError, match=message):
            pickle.loads(pickle.dumps(damaged)) and _state.unseal(damaged, "PrivateBandit")


def test_the_guarantee_is_recomputed_and_a_native_state_that_disagrees_is_refused() -> None:
    """The issue's case: a native state whose noise scale is not the calibrated one (here: the state of a learner
    built with another ε, inside a valid container) is refused, whatever the declared arguments say."""
    learner = dponline.PrivateBandit(Simplex(3), horizon=100, epsilon=1.0, lipschitz=1.0, seed=0)
    weaker = dponline.PrivateBandit(Simplex(3), horizon=100, epsilon=1e6, lipschitz=1.0, seed=0)
    name, declared, _ = pickle.loads(_core.open_state(learner.__getstate__()))
    forged = _state.seal((name, declared, weaker._core.to_bytes()))
    fresh = dponline.PrivateBandit.__new__(dponline.PrivateBandit)
    with pytest.raises(StateError, match="scale differs"):
        fresh.__setstate__(forged)
    # The guarantee is not part of the state: it is rebuilt by the constructor from the declared arguments.
    assert b"Lemma" not in _core.open_state(learner.__getstate__())
    restored = pickle.loads(pickle.dumps(learner))
    assert restored.privacy == learner.privacy and restored.params == learner.params


def test_no_panic_escapes_from_mutated_native_bytes() -> None:
    """Native ``from_bytes`` of every learner over payload-level damage behind a valid checksum (what a crafted
    state looks like): a value or a ``DPOnlineError``, never a ``PanicException``; the restored learners answer."""
    rng = np.random.default_rng(0)
    for name in ("PrivateBandit", "DPFTRL", "NoisyOCO", "PrivateEXP3", "PrivateSCRiBLe", "PrivateSubmodular"):
        obj = _OBJECTS[name]
        payload = bytearray(_core.open_state(obj._core.to_bytes()))
        for _ in range(200):
            damaged = bytearray(payload)
            damaged[rng.integers(len(damaged))] ^= 1 << int(rng.integers(8))
            try:
                restored = type(obj._core).from_bytes(_core.seal_state(bytes(damaged)))
            except dponline.DPOnlineError:
                continue
            try:
                restored.ask()
            except dponline.DPOnlineError:
                pass


def test_boundary_conversions_name_the_argument() -> None:
    fam = losses.Linear(np.ones((5, 3)))
    arms = losses.BernoulliArms([0.2, 0.5], horizon=10, seed=0)
    learner = dponline.PrivateBandit(Simplex(3), horizon=10, epsilon=1.0, lipschitz=1.0, seed=0)
    learner.ask()
    ftrl = dponline.DPFTRL(Simplex(3), horizon=10, epsilon=1.0, loss_bound=1.0, seed=0)
    ftrl.ask()
    masked = np.ma.masked_array([0.1, 0.2, 0.3], [0, 1, 0])
    cases = [
        ("checkpoints", lambda: fam.cumulative_at([0.3, 0.3, 0.4], [-1])),
        ("checkpoints", lambda: fam.cumulative_at([0.3, 0.3, 0.4], [10**30])),
        ("checkpoints", lambda: fam.cumulative_at([0.3, 0.3, 0.4], "ab")),
        ("x", lambda: fam.cumulative_at(masked, [1])),
        ("x", lambda: fam.cumulative_at(np.array([0.3, 0.3, 0.4]) + 0j, [1])),
        ("arm", lambda: arms.loss(0, -1)),
        ("t", lambda: arms.loss(-1, 0)),
        ("t", lambda: arms.loss(1.0, 0)),
        ("loss", lambda: learner.tell(10**400)),
        ("loss", lambda: learner.tell(1 + 2j)),
        ("loss", lambda: ftrl.tell(masked)),
        ("C", lambda: losses.Linear(np.ma.masked_array(np.ones((2, 3)), [[0, 0, 1], [0, 0, 0]]))),
    ]
    for name, call in cases:
        with pytest.raises(InvalidInputError, match=rf"^{name} "):
            call()
    # A masked array with nothing masked is an ordinary array.
    assert fam.cumulative_at(np.ma.masked_array([0.3, 0.3, 0.4]), [1])[0] == pytest.approx(1.0)


def test_a_mechanism_guarantee_is_recomputed_from_its_calibration() -> None:
    tree = aggregation.TreeAggregator.calibrated(2, 20, epsilon=1.0, sensitivity=1.0, seed=1)
    weaker = aggregation.TreeAggregator.calibrated(2, 20, epsilon=1e6, sensitivity=1.0, seed=1)
    native, attributes = pickle.loads(_core.open_state(tree.__getstate__()))
    assert "_privacy" not in attributes and attributes["_calibration"]["epsilon"] == 1.0
    forged = _state.seal((pickle.loads(_core.open_state(weaker.__getstate__()))[0], attributes))
    fresh = aggregation.TreeAggregator.__new__(aggregation.TreeAggregator, 1, 1, scale=0.0)
    with pytest.raises(StateError, match="scale differs"):
        fresh.__setstate__(forged)
    assert pickle.loads(pickle.dumps(tree)).privacy == tree.privacy
