"""No noise is ever reused: an unseeded object (OS-keyed ChaCha20, the default) re-keys from the OS in a forked
child, on ``copy``/``deepcopy`` and on every unpickling, so two continuations never share a noise draw.

The attack each test mounts: continue one object twice, with inputs ``x`` and ``x'``; if the continuations
shared their noise, the releases would differ by exactly ``x − x'``. With independent noise the difference is a
continuous or lattice random variable that equals ``x − x'`` with probability 0 (float path) or at most the
largest atom of the noise difference (exact path) — below 1e-6 at the scales used here, so the tests cannot flake.
A seeded object, by contrast, replays its stream by design (checked too: that is what makes a seeded run
reproducible, and why it is private only while the seed is secret).
"""

from __future__ import annotations

import copy
import os
import pickle
import sys

import numpy as np
import pytest

import dponline
from dponline.domains import Simplex

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="os.fork is POSIX only")

SCALE = 1e3  # noise scale: an atom of the difference of two draws has mass far below 1e-6


def _tree(seed=None):
    return dponline.TreeAggregator(1, 16, scale=SCALE, seed=seed)


def _push(obj, x: float) -> float:
    return float(obj.push(np.array([x]))[0])


def _randomizer(seed=None):
    return dponline.LocalLaplaceRandomizer(1, bound=1.0, seed=seed)


def _randomize(obj, x: float) -> float:
    return float(obj.randomize(np.array([x]), 1e-3)[0])


def _free_sampler(sample):
    """A free sampler of ``dponline.noise`` as a case: the "object" is the seed (``None``: the process-wide
    OS-keyed generator small unseeded calls continue, which a forked child must re-key)."""

    def release(seed, x: float) -> float:
        return x + float(sample(SCALE, 1, seed=seed)[0])

    return (lambda seed=None: seed), release


CASES = {
    "tree": (_tree, _push),
    "local randomizer": (_randomizer, _randomize),
    "discrete_laplace": _free_sampler(dponline.noise.discrete_laplace),
    "discrete_gaussian": _free_sampler(dponline.noise.discrete_gaussian),
    "float laplace": _free_sampler(dponline.noise.laplace),
}


def _in_child(fn) -> float:
    """Run ``fn()`` in a forked child and return its float result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            os.write(write, np.float64(fn()).tobytes())
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while len(data) < 8:
        chunk = os.read(read, 8 - len(data))
        if not chunk:
            break
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    assert len(data) == 8, "the child did not report"
    return float(np.frombuffer(data, dtype=np.float64)[0])


@pytest.mark.parametrize("case", list(CASES))
def test_forked_children_draw_independent_noise(case):
    make, release = CASES[case]
    obj = make()
    release(obj, 0.0)  # the parent has drawn before forking
    a = _in_child(lambda: release(obj, 0.37))
    b = _in_child(lambda: release(obj, 0.0))
    assert a - b != pytest.approx(0.37, abs=1e-9)
    # The parent itself continues with yet other noise.
    assert release(obj, 0.0) not in (a, b)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("duplicate", ["copy", "deepcopy", "pickle twice"])
def test_copies_and_restored_pickles_draw_independent_noise(case, duplicate):
    make, release = CASES[case]
    obj = make()
    release(obj, 0.0)
    if duplicate == "copy":
        one, two = copy.copy(obj), copy.copy(obj)
    elif duplicate == "deepcopy":
        one, two = copy.deepcopy(obj), copy.deepcopy(obj)
    else:
        blob = pickle.dumps(obj)
        one, two = pickle.loads(blob), pickle.loads(blob)
    assert release(one, 1.0) - release(two, 0.0) != pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("case", list(CASES))
def test_a_seeded_object_replays_by_design(case):
    make, release = CASES[case]
    obj = make(seed=7)
    release(obj, 0.0)
    blob = pickle.dumps(obj)
    one, two = pickle.loads(blob), pickle.loads(blob)
    assert release(one, 1.0) - release(two, 0.0) == pytest.approx(1.0, abs=1e-6)
    assert _in_child(lambda: release(obj, 0.37)) - _in_child(lambda: release(obj, 0.0)) == pytest.approx(0.37, abs=1e-6)


def test_unseeded_objects_are_secure_by_default():
    assert _tree().secure and not _tree(seed=1).secure
    tree = dponline.TreeAggregator.calibrated(1, 16, epsilon=1.0, sensitivity=1.0)
    assert tree.privacy.randomness == "secure"
    learner = dponline.DPFTRL(Simplex(3), horizon=16, epsilon=1.0, loss_bound=1.0)
    assert learner.privacy.randomness == "secure"
    assert dponline.DPFTRL(Simplex(3), horizon=16, epsilon=1.0, loss_bound=1.0, seed=1).privacy.randomness == "seed"


def test_forked_learners_play_independently():
    """Two forked children of one unseeded DP-FTRL learner, told the same losses, play different points: the
    tree noise behind their actions is re-keyed in each child."""
    learner = dponline.DPFTRL(Simplex(8), horizon=64, epsilon=1.0, loss_bound=1.0)

    def play() -> float:
        x = learner.ask()
        for _ in range(8):
            learner.tell(np.linspace(0, 1, 8))
            x = learner.ask()
        return float(x @ np.arange(8))

    assert _in_child(play) != _in_child(play)
