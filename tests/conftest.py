"""Shared test settings.

Statistical tests use fixed seeds and a significance level of ``ALPHA = 1e-6`` (two-sided z = 4.89), so a
correct implementation fails with probability about one in a million per assertion and never flakes in
practice, while a wrong noise scale, count or distribution fails reliably.
"""

import copy
import pickle
from typing import Any

import numpy as np
import pytest

import dponline

ALPHA = 1e-6
Z = 4.892  # two-sided standard-normal quantile for ALPHA


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


def checked_feedback_scale(noise_scale: float, lam: float, eps: float, sampler: str) -> float:
    """The feedback noise scale of PrivateEXP3 or PrivateSCRiBLe (``params["noise_scale"]``) checked against the
    paper's ``λ``: equal to it on the floating-point path; on the exact path the discrete Laplace's effective scale
    ``t·γ``, at least ``λ`` and above it by at most ``(2/ε + 1)·2^-30`` relative. Returns the scale in use."""
    if sampler == "floating-point":
        assert noise_scale == lam
        return lam
    assert lam <= noise_scale <= lam * (1 + (2 / eps + 1) * 2.0**-30)
    return noise_scale


def directions(rng: np.random.Generator, dim: int, count: int) -> list[np.ndarray]:
    """LMO test directions: ``count`` Gaussian directions, then ``count`` tie-heavy integer directions (entries in
    {-2, ..., 2}), drawn in that order from ``rng``."""
    gauss = [rng.standard_normal(dim) for _ in range(count)]
    tied = [rng.integers(-2, 3, size=dim).astype(float) for _ in range(count)]
    return gauss + tied


# Hypothesis profiles for the fuzz suites tests/test_fuzz*.py (issue 13). "ci" keeps them fast and reproducible;
# "dev" (HYPOTHESIS_PROFILE=dev) runs 500 random examples per property; "long" 9,000.
try:
    import os

    from hypothesis import HealthCheck, settings

    _relaxed = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
    settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True, suppress_health_check=_relaxed)
    settings.register_profile("dev", max_examples=500, deadline=None, suppress_health_check=_relaxed)
    settings.register_profile(
        "long", max_examples=9_000, deadline=None, suppress_health_check=_relaxed, print_blob=True
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is in the `test` extra; without it only test_fuzz.py is skipped
    pass


# The padded binary tree's noise nodes (rust/dponline-core/src/aggregation/tree.rs module docs), shared by the
# white-box covariance tests of tests/test_tree.py and the dense model of tests/test_mechanisms.py.


def tree_padding_node(j: int, t: int, L: int) -> tuple[str, int, int]:
    """The padding node at clear bit ``j`` of ``t``: drawn at ``b``, the last release ``<= t`` whose bits ``0..j``
    are 0 — unless ``b`` ends in exactly ``j + 1`` zeros (and ``j + 1 < L``), when it is the node that sat at
    position ``j + 1`` at release ``b − 1`` (handed down as that node retires)."""
    b = (t >> (j + 1)) << (j + 1)
    if b > 0 and (b & -b) == 1 << (j + 1) and j + 1 < L:
        return tree_padding_node(j + 1, b - 1, L)
    return ("pad", j, b)


def tree_noise_nodes(t: int, T: int, padded: bool) -> set[tuple[str, int, int]]:
    """The noise nodes of the release after push ``t`` as the module docs of ``aggregation/tree.rs`` define them:
    the data node ``(j, t >> j)`` for every set bit ``j`` of ``t`` and, padded, a padding node for every clear
    bit ``j < L = max(1, ⌈log₂T⌉)`` (``j < L − 1`` when ``t = 2^L``)."""
    nodes = {("data", j, t >> j) for j in range(t.bit_length()) if t >> j & 1}
    if padded:
        L = max(1, (T - 1).bit_length())
        top = L - 1 if t >> L else L
        nodes |= {tree_padding_node(j, t, L) for j in range(top) if not t >> j & 1}
    return nodes


def check_bad_tells_refused(learner: Any, valid: float, bad: list[tuple[Any, type[Exception]]]) -> None:
    """A fresh strict learner refuses ``tell(valid)`` before any ask (``ProtocolError``); after an ask, every
    ``(value, error)`` of ``bad`` is refused with ``error`` and leaves the learner byte-for-byte unchanged, still
    pending the same action. Ends with that action pending."""
    with pytest.raises(dponline.ProtocolError):
        learner.tell(valid)
    action = learner.ask()
    before = pickle.dumps(learner)
    for value, error in bad:
        with pytest.raises(error):
            learner.tell(value)
    assert pickle.dumps(learner) == before
    np.testing.assert_array_equal(learner.ask(), action)


def check_tangent_projector(domain: Any) -> None:
    """The matrix of ``domain.project_tangent`` is an orthogonal projection (symmetric and idempotent) of rank
    ``domain.affine_dim``."""
    projector = np.array([domain.project_tangent(row) for row in np.eye(domain.dim)])
    np.testing.assert_allclose(projector, projector.T, atol=1e-10)
    np.testing.assert_allclose(projector @ projector, projector, atol=1e-10)
    assert np.trace(projector) == pytest.approx(domain.affine_dim)


def check_certified_ball(domain: Any, rng: np.random.Generator, samples: int, uncertified: str) -> None:
    """``domain.interior_point`` is in the domain and, unless ``domain.inscribed_radius`` is ``None`` (allowed only
    for the kind ``uncertified``), the radius is > 0 and every point at that distance from it along the affine
    hull is in the domain too: tried along ``samples`` Gaussian and the ± coordinate directions, each projected
    onto the tangent space."""
    c, r = domain.interior_point, domain.inscribed_radius
    assert domain.contains(c, atol=1e-12)
    if r is None:
        assert domain.kind == uncertified
        return
    assert r > 0
    candidates = [rng.standard_normal(domain.dim) for _ in range(samples)]
    candidates += [sign * row for row in np.eye(domain.dim) for sign in (1.0, -1.0)]
    for u in candidates:
        u = domain.project_tangent(u)
        norm = np.linalg.norm(u)
        if norm > 1e-12:
            assert domain.contains(c + r * u / norm, atol=1e-9)


DUPLICATIONS = ["pickle twice", "copy", "deepcopy"]


def duplicated(obj: Any, how: str) -> tuple[Any, Any]:
    """Two objects to continue side by side from ``obj``'s state, by one of :data:`DUPLICATIONS`: restored twice
    from one pickle, or ``obj`` itself and its ``copy.copy`` / ``copy.deepcopy``."""
    if how == "pickle twice":
        state = pickle.dumps(obj)
        return pickle.loads(state), pickle.loads(state)
    return obj, (copy.copy if how == "copy" else copy.deepcopy)(obj)
