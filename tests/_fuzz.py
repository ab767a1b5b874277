"""Shared strategies and checks of the property-based fuzz suites (``tests/test_fuzz*.py``).

Every public call gets generated arguments and must either return a valid result (finite, of the right shape,
feasible by the domain's own ``contains``) or raise :class:`dponline.DPOnlineError` / :class:`MemoryError`; a
stateful object whose method raised must pickle to the same bytes as before the call.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dponline
from dponline.domains import (
    Box,
    GraphicMatroid,
    L1Ball,
    L2Ball,
    PartitionMatroid,
    PathPolytope,
    Simplex,
    UniformMatroid,
)

ALLOWED = (dponline.DPOnlineError, MemoryError)

# -- strategies ----------------------------------------------------------------------------------------
SPECIAL_FLOATS = [
    1e308,
    -1e308,
    1.7976931348623157e308,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1e-310,
    0.0,
    -0.0,
    1.0,
    0.5,
    1e-12,
    1e12,
    math.nan,
    math.inf,
    -math.inf,
]
floats = st.one_of(st.floats(), st.sampled_from(SPECIAL_FLOATS))
finite_floats = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(SPECIAL_FLOATS[:13]))
moderate = st.floats(-1e3, 1e3, allow_nan=False)
# Sizes: small, or so huge that a correct implementation refuses them at once (never a mid-size that would
# really allocate gigabytes).
HUGE = [2**40, 2**48, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**30]
small_ints = st.integers(-3, 12)
sizes = st.one_of(small_ints, st.sampled_from(HUGE))


def scalar_like(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``values`` as Python numbers and as NumPy scalars of several dtypes, plus junk of other types."""
    return st.one_of(
        values,
        values.filter(lambda v: isinstance(v, float)).map(np.float64),
        values.filter(lambda v: isinstance(v, int) and -(2**63) <= v < 2**63).map(np.int64),
        values.filter(lambda v: isinstance(v, int) and 0 <= v < 2**8).map(np.uint8),
        st.floats(width=32).map(np.float32),
        st.sampled_from([True, False, None, "1", b"1", 1j, [1.0], np.array([1.0, 2.0]), np.array(2.0)]),
    )


reals = scalar_like(floats)
ints = scalar_like(sizes)
seeds = st.one_of(st.none(), st.integers(0, 2**64 - 1), st.sampled_from([-1, 2**64, 1.5, "seed"]))


def learner_kwargs(
    bound: str, *, max_horizon: int = 400, delta: bool = True, **optional: st.SearchStrategy[Any]
) -> st.SearchStrategy[dict[str, Any]]:
    """Fuzzed keyword arguments of a private learner: always ``horizon``, ``epsilon`` and the declared bound named
    ``bound`` (valid values most of the time, junk otherwise); sometimes ``delta`` (unless ``delta=False``) and each
    of ``optional``."""
    return st.fixed_dictionaries(
        {
            "horizon": st.one_of(st.integers(1, max_horizon), ints),
            "epsilon": st.one_of(st.none(), st.sampled_from([1.0, 1e-3, 1e3]), reals),
            bound: st.one_of(st.sampled_from([1.0, 1e-6, 1e6]), reals),
        },
        optional={**({"delta": st.one_of(st.sampled_from([0.0, 1e-6, 0.5]), reals)} if delta else {}), **optional},
    )


DTYPES = [np.float64, np.float32, np.int64, np.int8, np.bool_, np.complex128, np.uint64]


def arrays(shape: st.SearchStrategy[tuple[int, ...]]) -> st.SearchStrategy[Any]:
    """Arrays of every dtype and extreme values, lists, and non-arrays."""
    float_arrays = hnp.arrays(np.float64, shape, elements=floats)
    other = st.sampled_from(DTYPES).flatmap(lambda dt: hnp.arrays(dt, shape))
    return st.one_of(
        float_arrays,
        float_arrays,
        other,
        float_arrays.map(lambda a: a.tolist()),
        float_arrays.map(lambda a: a[::-1] if a.ndim else a),  # non-contiguous views
        st.sampled_from([None, "abc", 3.0, [[1.0], [2.0, 3.0]], {"a": 1}]),
    )


def vectors(dim: int) -> st.SearchStrategy[Any]:
    return arrays(st.sampled_from([(dim,), (dim,), (dim,), (dim + 1,), (0,), (1, dim), ()]))


def finite_vectors(dim: int, elements: st.SearchStrategy[float] = finite_floats) -> st.SearchStrategy[np.ndarray]:
    return hnp.arrays(np.float64, (dim,), elements=elements)


# -- helpers -------------------------------------------------------------------------------------------
def attempt(fn: Callable[[], Any]) -> tuple[bool, Any]:
    """``(True, result)`` or ``(False, error)`` for an allowed error; any other exception fails the test."""
    try:
        return True, fn()
    except ALLOWED as e:
        note(f"raised {type(e).__name__}: {e}")
        return False, e


def assert_finite(a: Any) -> None:
    arr = np.asarray(a, dtype=np.float64)
    assert np.all(np.isfinite(arr)), arr


def state_of(obj: Any) -> bytes:
    return pickle.dumps(obj)


def unchanged_if_failed(obj: Any, fn: Callable[[], Any]) -> tuple[bool, Any]:
    before = state_of(obj)
    ok, out = attempt(fn)
    if not ok:
        assert state_of(obj) == before, "a failed call changed the object's state"
    return ok, out


def tolerance(d: Any) -> float:
    """``contains`` tolerates an absolute ``atol`` per constraint: scale it with the domain (rounding of an LMO
    vertex of a ball of radius 1e16 is of order 1)."""
    return 1e-6 * max(1.0, d.diameter, float(np.abs(d.interior_point).max(initial=0.0)))


def check_domain(d: Any) -> None:
    """Invariants of a successfully constructed domain."""
    n = d.dim
    assert isinstance(n, int) and n >= 1
    assert 0 <= d.affine_dim <= n
    assert math.isfinite(d.diameter) and d.diameter >= 0
    c = np.asarray(d.interior_point)
    assert c.shape == (n,)
    assert_finite(c)
    assert d.contains(c, tolerance(d))
    r = d.inscribed_radius
    assert r is None or (math.isfinite(r) and r > 0)
    for direction in (np.zeros(n), np.ones(n), -np.arange(n, dtype=float), c):
        v = d.lmo(direction)
        assert v.shape == (n,)
        assert_finite(v)
        assert d.contains(v, tolerance(d)), (direction, v)
    bad = c.copy()
    bad[0] = np.nan
    assert not d.contains(bad)
    clone = pickle.loads(pickle.dumps(d))
    assert repr(clone) == repr(d)
    np.testing.assert_array_equal(clone.lmo(np.ones(n)), d.lmo(np.ones(n)))


@st.composite
def valid_domains(draw: st.DrawFn) -> Any:
    """Small valid domains, degenerate ones (single points, one path, a tree) included."""
    n = draw(st.integers(1, 6))
    kind = draw(st.integers(0, 8))
    if kind == 0:
        return Simplex(max(n, 2))
    if kind == 1:
        return L1Ball(n, radius=draw(st.sampled_from([1.0, 1e-300, 1e149, 5e-324])))
    if kind == 2:
        return L2Ball(n, radius=draw(st.sampled_from([1.0, 1e-300, 1e149, 5e-324])))
    if kind == 3:
        lo = draw(hnp.arrays(np.float64, (n,), elements=moderate))
        return Box(lo, lo + draw(hnp.arrays(np.float64, (n,), elements=st.floats(1e-6, 1e3))))
    if kind == 4:
        k = draw(st.integers(1, n + 1))
        return UniformMatroid(n + 1, k, base=k <= n and draw(st.booleans()))
    if kind == 5:
        return PartitionMatroid([[0, 1], list(range(2, n + 2))], [1, draw(st.integers(0, n))], base=draw(st.booleans()))
    if kind == 6:
        return GraphicMatroid(3, [(0, 1), (1, 2)] + draw(st.sampled_from([[], [(0, 2)], [(0, 2), (0, 1)]])))
    if kind == 7:
        return PathPolytope(3, [(0, 1), (1, 2)] + draw(st.sampled_from([[], [(0, 2)], [(0, 1), (0, 2)]])), 0, 2)
    return PathPolytope(2, [(0, 1)], 0, 1)


def check_params(params: dict[str, Any]) -> None:
    """Every float a learner reports among its constants is finite."""
    for key, value in params.items():
        if isinstance(value, float):
            assert math.isfinite(value), (key, value)


def check_guarantee(p: Any) -> None:
    """A reported guarantee is finite: ``ε > 0``, ``0 <= δ < 1``, a positive finite noise multiplier if any."""
    assert math.isfinite(p.epsilon) and p.epsilon > 0, p
    assert 0 <= p.delta < 1, p
    if p.noise_multiplier is not None:
        assert math.isfinite(p.noise_multiplier) and p.noise_multiplier > 0, p


def check_constructed(learner: Any) -> None:
    """A successfully constructed learner: finite constants and, when private, a finite guarantee."""
    check_params(learner.params)
    if learner.privacy is not None:
        check_guarantee(learner.privacy)
