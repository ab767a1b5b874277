"""Property-based fuzzing of the code of Perez-Salazar & Cummings 2021 (issue 13), with Hypothesis.

Covers :class:`dponline.mwu.Hedge`, the :mod:`dponline.submodular` families (probabilistic coverage, weighted
coverage, facility location, and Python set functions told to the learner), :class:`dponline.PrivateSubmodular`
(full information, bandit with online and presampled exploration) and :class:`dponline.PrivateDRSubmodular` over
uniform and partition matroid polytopes. As in ``tests/test_fuzz.py``: every call gets generated arguments and
must either return a valid result — finite, of the right shape, a distribution that sums to 1, a set of at most
``k`` distinct valid ids, a feasible fractional point and an independent rounded set, marginal gains equal to
brute-force differences ``f(S + a) − f(S)`` — or raise :class:`dponline.DPOnlineError` / :class:`MemoryError`,
and a stateful object whose method raised must pickle to the same bytes as before the call.

Sizes stay small (``|U| ≤ 12``, horizons ``≤ 300``). Profiles as for ``tests/test_fuzz.py`` (``tests/conftest.py``).
"""

from __future__ import annotations

import itertools
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from _fuzz import (
    ALLOWED,
    HUGE,
    arrays,
    assert_finite,
    attempt,
    check_constructed,
    ints,
    reals,
    seeds,
    state_of,
    unchanged_if_failed,
    vectors,
)
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dponline
from dponline.domains import PartitionMatroid, UniformMatroid
from dponline.mwu import Hedge
from dponline.regret import greedy_in_hindsight
from dponline.submodular import FacilityLocation, ProbabilisticCoverage, SubmodularFamily, WeightedCoverage

unit = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, 5e-324, 1 - 2**-53, 0.5]))
flags = st.sampled_from([True, False, None, 1, np.bool_(True), "yes"])
# item ids: valid, out of range, negative, huge, junk
item_ids = st.one_of(st.integers(-2, 14), st.sampled_from([2**31, 2**63, 2**64, 10**30]))
item_lists = st.one_of(
    st.lists(item_ids, max_size=6),
    st.sampled_from([None, "ab", [0.5], [None], [[0]], np.array([0, 1]), np.array([0.0]), (1, 1, 1)]),
)


def check_distribution(p: Any, n: int) -> None:
    p = np.asarray(p)
    assert p.shape == (n,) and p.dtype == np.float64
    assert_finite(p)
    assert np.all(p >= 0), p
    assert abs(p.sum() - 1.0) <= 1e-9, p.sum()


def check_set(S: Any, n: int, k: int) -> None:
    S = np.asarray(S)
    assert S.dtype == np.int64 and S.ndim == 1, S
    assert len(S) <= k and len(set(S.tolist())) == len(S), S
    assert np.all((S >= 0) & (S < n)), S


# -- Hedge ---------------------------------------------------------------------------------------------
etas = st.one_of(st.sampled_from([1e-12, 1e-3, 0.5, 1.0, 30.0, 700.0, 1e6, 1e100, 5e-324]), st.floats(1e-9, 50.0))


def checked_run(learner: Any, fam: Any, rounds: Any) -> Any:
    """``learner.run(fam, rounds=rounds, checkpoints=3)``: refused with the learner unchanged (``None``), or a run
    whose loss is minus a sum of coverage values in ``[0, 1]`` per round (its result)."""
    ok, result = unchanged_if_failed(learner, lambda: learner.run(fam, rounds=rounds, checkpoints=3))
    if not ok:
        return None
    assert math.isfinite(result.total_loss) and -result.rounds <= result.total_loss <= 0
    assert_finite(result.cumulative_loss)
    return result


def coverage_stream(n: int) -> Any:
    """A valid probabilistic-coverage family over ``n`` items for the protocol tests' runs (3 rows, cycled)."""
    return ProbabilisticCoverage(np.linspace(0, 1, 3 * n).reshape(3, n), horizon=300, resample="cycle")


def check_ask(learner: Any, horizon: int, check: Callable[[Any, Any], None]) -> None:
    """``learner.ask()`` either refused, leaving the learner unchanged, once ``horizon`` is reached (the only
    refusal allowed), or answered before it, with a set ``S`` that passes ``check(learner, S)``."""
    t = learner.t
    ok, S = unchanged_if_failed(learner, learner.ask)
    if not ok:
        assert t == horizon
        return
    assert t < horizon
    check(learner, S)


def check_refuses_run(learner: Any, other: Any) -> None:
    """``learner.run`` on a wrong family (or a non-family) is refused and leaves the learner unchanged."""
    ok, _ = unchanged_if_failed(learner, lambda: learner.run(other, rounds=2))
    assert not ok, "a wrong family was accepted"


def pickled(learner: Any) -> Any:
    """A pickle round trip of ``learner``, with the same state."""
    clone = pickle.loads(pickle.dumps(learner))
    assert state_of(clone) == state_of(learner)
    return clone


def check_hedge(h: Any) -> None:
    n = h.n
    check_distribution(h.probabilities(), n)
    assert math.isfinite(h.total) and h.total > 0
    assert math.isfinite(h.offset)
    assert_finite(h.log_weights)


@given(ints, st.one_of(etas, reals, st.just(1e308)), seeds, flags)
def test_hedge_constructor(n: Any, eta: Any, seed: Any, secure: Any) -> None:
    ok, h = attempt(lambda: Hedge(n, eta, seed=seed, secure=secure))
    if ok:
        assert h.n == int(n) and h.eta == float(eta)
        check_hedge(h)
        s = h.sample(3)
        assert s.shape == (3,) and np.all((s >= 0) & (s < h.n))


hedge_ops = st.lists(
    st.one_of(
        st.tuples(st.just("full"), st.none()),
        st.tuples(st.just("full_junk"), st.none()),
        st.tuples(st.just("one"), st.tuples(item_ids, st.one_of(unit, reals))),
        st.tuples(st.just("one_junk"), st.tuples(st.sampled_from([None, "0", 1.0, True, np.int64(0)]), unit)),
        st.tuples(st.just("sample"), st.one_of(st.integers(-1, 5), ints, st.just(None))),
        st.tuples(st.just("pickle"), st.none()),
    ),
    max_size=25,
)


@given(st.integers(1, 12), etas, st.integers(0, 2**64 - 1), hedge_ops, st.data())
def test_hedge_protocol(n: int, eta: float, seed: int, ops: list, data: st.DataObject) -> None:
    h = Hedge(n, eta, seed=seed)
    for op, arg in ops:
        if op == "full":
            g = data.draw(hnp.arrays(np.float64, (n,), elements=unit), "payoffs")
            ok, _ = unchanged_if_failed(h, lambda g=g, h=h: h.update_full(g))
            assert ok, "valid payoffs refused"
        elif op == "full_junk":
            g = data.draw(vectors(n), "payoffs")
            ok, _ = unchanged_if_failed(h, lambda g=g, h=h: h.update_full(g))
        elif op in ("one", "one_junk"):
            i, payoff = arg
            ok, _ = unchanged_if_failed(h, lambda i=i, payoff=payoff, h=h: h.update_one(i, payoff))
            if op == "one" and isinstance(i, int) and 0 <= i < n and isinstance(payoff, float) and 0 <= payoff <= 1:
                assert ok, "a valid bandit update was refused"
        elif op == "sample":
            ok, s = unchanged_if_failed(h, lambda arg=arg, h=h: h.sample(arg) if arg is not None else h.sample())
            if ok:
                size = 1 if arg is None else int(arg)
                assert s.shape == (size,) and s.dtype == np.int64
                assert np.all((s >= 0) & (s < n))
        else:
            clone = pickle.loads(pickle.dumps(h))
            assert state_of(clone) == state_of(h)
            np.testing.assert_array_equal(clone.sample(4), h.sample(4))
            h = clone
        check_hedge(h)


# -- families ------------------------------------------------------------------------------------------
KINDS = ["probabilistic_coverage", "facility_location", "weighted_coverage"]
covers_lists = st.one_of(
    st.lists(st.lists(st.integers(-1, 6), max_size=4), max_size=6),
    st.lists(st.lists(st.sampled_from([0, 1, 2**64, 2**70, -(2**70), 1.5, "1", None]), max_size=2), max_size=3),
    st.sampled_from([None, "ab", [0, 1], [[0], "1"], [[]], [], np.array([[0, 1], [1, 2]]), {0: [1]}]),
)


def build_family(kind: str, data: Any, covers: Any, **kwargs: Any) -> Any:
    if kind == "raw":  # the native constructor, public as dponline.submodular.SubmodularFamily
        order = {None: "sequential"}.get(kwargs.get("resample"), kwargs.get("resample"))
        name = covers if isinstance(covers, str) else "probabilistic_coverage"
        return SubmodularFamily(name, data, horizon=kwargs.get("horizon"), order=order, seed=kwargs.get("seed"))
    if kind == "probabilistic_coverage":
        return ProbabilisticCoverage(data, **kwargs)
    if kind == "facility_location":
        return FacilityLocation(data, **kwargs)
    return WeightedCoverage(data, covers, **kwargs)


def brute_value(fam: Any, t: int, S: Any) -> float:
    """``f_t(S)`` from the family's data and definition (not from its native code)."""
    row = fam.data[fam.row_indices()[t]]
    S = sorted(set(int(a) for a in S))
    if fam.kind == "probabilistic_coverage":
        return 1.0 - float(np.prod([1.0 - row[a] for a in S])) if S else 0.0
    if fam.kind == "facility_location":
        return max((float(row[a]) for a in S), default=0.0)
    covered = sorted({j for a in S for j in fam.covers[a]})
    return float(sum(row[j] for j in covered))


def check_family(fam: Any) -> None:
    n = fam.ground_set_size
    assert isinstance(n, int) and n >= 1
    assert fam.horizon >= 1 and fam.rows >= 1
    for t in {0, fam.horizon - 1}:
        assert fam.value(t, []) == 0.0
        v = fam.value(t, list(range(n)))
        assert math.isfinite(v) and -1e-12 <= v <= 1 + 1e-12, v
        g = fam.gains(t, [])
        assert g.shape == (n,)
        assert_finite(g)
        assert np.all(g >= -1e-12) and np.all(g <= 1 + 1e-12)
    clone = pickle.loads(pickle.dumps(fam))
    assert repr(clone) == repr(fam) and clone.covers == fam.covers
    np.testing.assert_array_equal(clone.data, fam.data)
    if fam.horizon <= 10**4:
        np.testing.assert_array_equal(clone.row_indices(), fam.row_indices())


@given(
    st.sampled_from([*KINDS, "raw"]),
    st.one_of(
        hnp.arrays(np.float64, st.tuples(st.integers(0, 3), st.integers(0, 5)), elements=unit),
        arrays(st.sampled_from([(2, 3), (3,), (1, 0), (0, 2), (2, 2, 2)])),
    ),
    st.one_of(covers_lists, st.sampled_from(["facility_location", "weighted_coverage", "x"])),
    st.one_of(st.none(), st.integers(-1, 300), ints),
    st.sampled_from([None, "cycle", "bootstrap", "other", 1, "sequential", b"cycle"]),
    st.one_of(st.none(), seeds),
)
def test_family_constructors(kind: str, data: Any, covers: Any, horizon: Any, resample: Any, seed: Any) -> None:
    if kind == "weighted_coverage" and isinstance(data, np.ndarray) and data.ndim == 2 and data.dtype == np.float64:
        with np.errstate(all="ignore"):
            data = data / max(1.0, float(np.nansum(np.abs(data), axis=1).max(initial=0.0)))
    ok, fam = attempt(lambda: build_family(kind, data, covers, horizon=horizon, resample=resample, seed=seed))
    if ok:
        assert kind == "raw" or fam.kind == kind
        check_family(fam)


@st.composite
def small_families(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(KINDS))
    rows = draw(st.integers(1, 4))
    if kind == "weighted_coverage":
        elements = draw(st.integers(1, 6))
        W = draw(hnp.arrays(np.float64, (rows, elements), elements=unit))
        W = W / np.maximum(1.0, W.sum(axis=1, keepdims=True))
        W = np.minimum(W, 1.0)
        while (W.sum(axis=1) > 1.0).any():  # rounding of the division
            W = np.nextafter(W, 0.0)
        covers = draw(st.lists(st.lists(st.integers(0, elements - 1), max_size=4), min_size=1, max_size=8))
        fam = WeightedCoverage(W, covers, horizon=draw(st.integers(1, 8)), resample="cycle")
    else:
        n = draw(st.integers(1, 8))
        data = draw(hnp.arrays(np.float64, (rows, n), elements=unit))
        resample = draw(st.sampled_from([None, "cycle", "bootstrap"]))
        horizon = rows if resample is None else draw(st.integers(1, 8))
        fam = build_family(kind, data, None, horizon=horizon, resample=resample, seed=draw(st.integers(0, 9)))
    return fam


@given(
    st.one_of(
        small_families(),
        st.sampled_from(["cycle", "bootstrap"]).map(
            lambda r: ProbabilisticCoverage(np.full((2, 3), 0.5), horizon=2**62, resample=r, seed=1)
        ),
    ),
    st.data(),
)
def test_family_methods_refuse_junk(fam: Any, data: st.DataObject) -> None:
    n, T = fam.ground_set_size, fam.horizon
    rounds = st.one_of(st.integers(-1, 9), ints, st.sampled_from([T - 1, T, 1.5, "0", None, np.int64(0)]))
    t, items = data.draw(rounds, "t"), data.draw(item_lists, "items")
    ok, v = attempt(lambda: fam.value(t, items))
    if ok:
        assert math.isfinite(v) and -1e-12 <= v <= 1 + 1e-12
    ok, g = attempt(lambda: fam.gains(t, items))
    if ok:
        assert g.shape == (n,)
        assert_finite(g)
    ok, rows = attempt(fam.row_indices)
    if ok:
        assert rows.shape == (T,) and np.all(rows < fam.rows)
    marks = data.draw(st.one_of(st.lists(rounds, max_size=3), st.sampled_from([None, "ab", [[1]]])), "marks")
    if isinstance(marks, list):  # a legal checkpoint near 2^62 is 2^62 evaluations, not an error
        marks = [m for m in marks if not (isinstance(m, (int, np.integer)) and 10**4 < m <= T)]
    ok, cum = attempt(lambda: fam.cumulative_at(items, marks))
    if ok:
        assert cum.shape == (len(marks),)
        assert_finite(cum)
    if T <= 10**4:  # bootstrap counts take O(horizon) (not an error: see the report of the fuzz suite)
        ok, sg = attempt(lambda: fam.summed_gains(items))
        if ok:
            assert sg.shape == (n,)
            assert_finite(sg)
        k = data.draw(st.one_of(st.integers(-1, 9), ints, st.sampled_from([1.0, "1", None, True])), "k")
        ok, out = attempt(lambda: fam.lazy_greedy(k))
        if ok:
            check_set(out[0], n, int(k))


def brute_total(fam: Any, S: Any) -> float:
    return sum(brute_value(fam, t, S) for t in range(fam.horizon))


@given(small_families(), st.data())
def test_family_gains_equal_brute_force(fam: Any, data: st.DataObject) -> None:
    n, T = fam.ground_set_size, fam.horizon
    t = data.draw(st.one_of(st.integers(0, T - 1), st.integers(-1, T + 1), ints), "t")
    prefix = data.draw(st.one_of(st.lists(st.integers(0, n - 1), max_size=5), item_lists), "prefix")
    ok, g = attempt(lambda: fam.gains(t, prefix))
    if not ok:
        return
    t = int(t)
    assert 0 <= t < T
    S = sorted(set(int(a) for a in prefix))
    assert all(0 <= a < n for a in S)
    assert g.shape == (n,)
    assert_finite(g)
    base = brute_value(fam, t, S)
    assert fam.value(t, prefix) == np_approx(base)
    for a in range(n):
        want = brute_value(fam, t, S + [a]) - base
        assert abs(g[a] - want) <= 1e-12, (a, g[a], want)
        assert g[a] >= -1e-15
        if a in S:
            assert g[a] == 0.0
    # submodularity along the prefix: gains given a superset are no larger
    if S:
        g_smaller = fam.gains(t, S[:-1])
        assert np.all(g <= g_smaller + 1e-12)
    summed = fam.summed_gains(prefix)
    want_summed = sum(fam.gains(s, prefix) for s in range(T))
    np.testing.assert_allclose(summed, want_summed, rtol=1e-12, atol=1e-12)
    marks = data.draw(st.lists(st.integers(0, T), max_size=3).map(sorted), "marks")
    cum = fam.cumulative_at(prefix, marks)
    want_cum = [sum(brute_value(fam, s, S) for s in range(m)) for m in marks]
    np.testing.assert_allclose(cum, want_cum, rtol=1e-12, atol=1e-12)


def np_approx(x: float) -> Any:
    return pytest.approx(x, rel=1e-12, abs=1e-12)


@given(small_families(), st.one_of(st.integers(-1, 10), ints))
def test_lazy_greedy_is_greedy(fam: Any, k: Any) -> None:
    n = fam.ground_set_size
    ok, out = attempt(lambda: fam.lazy_greedy(k))
    ok2, comp = attempt(lambda: greedy_in_hindsight(fam, k))
    assert ok == ok2, "lazy_greedy and greedy_in_hindsight disagree on the argument"
    if not ok:
        return
    items, values, evaluations = out
    assert 1 <= int(k) <= n
    check_set(items, n, int(k))
    assert values.shape == items.shape
    assert_finite(values)
    assert np.all(np.diff(values) >= -1e-12)
    for i in range(len(items)):
        prefix = items[:i].tolist()
        assert values[i] == np_approx(brute_total(fam, items[: i + 1].tolist()))
        best = max(brute_total(fam, prefix + [a]) for a in range(n))
        assert brute_total(fam, items[: i + 1].tolist()) >= best - 1e-9, "not the greedy step"
    if n <= 8:
        opt = max(brute_total(fam, S) for S in itertools.combinations(range(n), int(k)))
        total = float(values[-1]) if len(values) else 0.0
        assert (1 - 1 / math.e) * opt <= total + 1e-9 and total <= opt + 1e-9
        assert comp.total_value == np_approx(total)


# -- PrivateSubmodular ---------------------------------------------------------------------------------
submodular_kwargs = st.fixed_dictionaries(
    {
        "horizon": st.one_of(st.integers(1, 300), ints),
        "epsilon": st.one_of(st.none(), st.just(1.0), reals),
    },
    optional={
        "delta": st.one_of(st.just(1e-6), st.none(), reals),
        "feedback": st.sampled_from(["full", "bandit", "other", None]),
        "exploration": st.sampled_from(["online", "presampled", "x"]),
        "strict": flags,
        "seed": seeds,
        "secure": flags,
    },
)


@given(st.one_of(st.integers(1, 12), ints), st.one_of(st.integers(0, 13), ints), submodular_kwargs)
@example(2, 1, {"horizon": 1, "epsilon": 1e-310, "delta": 1e-6})  # regret_bound() was inf
def test_private_submodular_constructor(n: Any, k: Any, kwargs: dict[str, Any]) -> None:
    ok, learner = attempt(lambda: dponline.PrivateSubmodular(n, k, **kwargs))
    if not ok:
        return
    n, k = int(n), int(k)
    assert 1 <= k <= n
    p = learner.params
    for key, value in p.items():
        if isinstance(value, float):
            assert math.isfinite(value), (key, value)
    assert p["eta"] > 0 and 0 <= p["gamma"] <= 1
    if learner.privacy is not None:
        assert math.isfinite(learner.privacy.epsilon) and 0 < learner.privacy.delta <= 1
    ok, bound = attempt(learner.regret_bound)
    if ok:
        assert math.isfinite(bound) and bound >= 0
    if n <= 12:
        check_set(learner.ask(), n, k)
        for i in range(k):
            check_distribution(learner.expert_probabilities(i), n)


class Boom(Exception):
    """Raised by a user's set function: it propagates out of ``tell`` unchanged (documented)."""


def coverage_function(p: np.ndarray) -> Callable[[list[int]], float]:
    return lambda S: 1.0 - float(np.prod([1.0 - p[a] for a in S])) if S else 0.0


def set_functions(n: int) -> st.SearchStrategy[Callable[[list[int]], Any]]:
    def raising(S: list[int]) -> float:
        raise Boom("no")

    return st.one_of(
        hnp.arrays(np.float64, (n,), elements=unit).map(coverage_function),
        st.sampled_from(
            [
                raising,
                lambda S: math.nan,
                lambda S: math.inf,
                lambda S: -float(len(S)),  # not monotone
                lambda S: float(len(S)) ** 2,  # not submodular, > 1
                lambda S: 0.5 * len(S) if len(S) < 2 else "x",  # junk type
                lambda S: np.float64(0.25 * min(len(S), 1)),
                lambda S: 1e308 * len(S),
                lambda S: 1.5 if S else 0.0,
                lambda S: None,
                lambda S: np.array([0.5]),
                lambda S: True,
            ]
        ),
    )


submodular_ops = st.lists(
    st.one_of(
        st.just(("ask", None)),
        st.tuples(st.just("tell"), st.sampled_from(["row", "junk", "function", "payoff"])),
        st.tuples(st.just("run"), st.one_of(st.integers(0, 300), st.sampled_from([-1, 2**64, 1.5, None]))),
        st.tuples(st.just("run_wrong"), st.sampled_from(["n", "junk", "dr"])),
        st.tuples(st.just("expert"), st.one_of(st.integers(-1, 13), ints)),
        st.just(("pickle", None)),
    ),
    max_size=20,
)


def play_set_learner_ops(learner: Any, n: int, k: int, horizon: int, ops: list, data: st.DataObject) -> None:
    """Apply the fuzzed ``ops`` to a learner that plays sets of ``k`` of ``n`` items (PrivateSubmodular and
    PrivateSubmodularFTRL): every answer valid, every refused call leaves the learner unchanged."""
    fam = coverage_stream(n)
    for op, arg in ops:
        if op == "ask":
            check_ask(learner, horizon, lambda _, S: check_set(S, n, k))
        elif op == "tell":
            if arg == "row":
                fb = data.draw(hnp.arrays(np.float64, (n,), elements=unit), "row")
            elif arg == "junk":
                fb = data.draw(st.one_of(vectors(n), reals), "junk")
            elif arg == "payoff":
                fb = data.draw(st.one_of(unit, reals), "payoff")
            else:
                fb = data.draw(set_functions(n), "function")
            kind = data.draw(st.sampled_from(["probabilistic_coverage", "facility_location", "x", None]), "kind")
            before = state_of(learner)
            try:
                ok, value = attempt(lambda fb=fb, kind=kind, learner=learner: learner.tell(fb, kind=kind))
            except Boom:
                ok = False
            if ok:
                assert math.isfinite(value) and 0 <= value <= 1, value
            else:
                assert state_of(learner) == before, "a failed tell changed the learner"
        elif op == "run":
            result = checked_run(learner, fam, arg)
            if result is not None:
                assert len(result.final_point) == k
                assert np.all((result.final_point >= 0) & (result.final_point < n))
        elif op == "run_wrong":
            other: Any = {
                "n": ProbabilisticCoverage(np.full((2, n + 1), 0.5), horizon=300, resample="cycle"),
                "junk": np.full((3, n), 0.5),
                "dr": dponline.losses.Linear(np.ones((2, n)), horizon=300, resample="cycle"),
            }[arg]
            check_refuses_run(learner, other)
        elif op == "expert":
            ok, p = unchanged_if_failed(learner, lambda arg=arg, learner=learner: learner.expert_probabilities(arg))
            if ok:
                assert 0 <= int(arg) < k
                check_distribution(p, n)
        else:
            learner = pickled(learner)
        assert 0 <= learner.t <= horizon and learner.clipped >= 0
        bound = learner.regret_bound()
        assert math.isfinite(bound) and bound >= 0


@given(
    st.integers(1, 8),
    st.data(),
    st.sampled_from([("full", "online"), ("bandit", "online"), ("bandit", "presampled")]),
    st.sampled_from([None, 1.0, 1e-3, 1e6]),
    st.booleans(),
    st.integers(1, 300),
    submodular_ops,
)
def test_private_submodular_protocol(
    n: int, data: st.DataObject, mode: tuple[str, str], epsilon: Any, strict: bool, horizon: int, ops: list
) -> None:
    k = data.draw(st.integers(1, n), "k")
    feedback, exploration = mode
    learner = dponline.PrivateSubmodular(
        n,
        k,
        horizon=horizon,
        epsilon=epsilon,
        delta=1e-6,
        feedback=feedback,
        exploration=exploration,
        strict=strict,
        seed=data.draw(st.integers(0, 2**64 - 1), "seed"),
    )
    play_set_learner_ops(learner, n, k, horizon, ops, data)


# -- PrivateSubmodularFTRL -----------------------------------------------------------------------------
ftrl_kwargs = st.fixed_dictionaries(
    {
        "horizon": st.one_of(st.integers(1, 300), ints),
        "epsilon": st.one_of(st.none(), st.just(1.0), reals),
    },
    optional={
        "delta": st.one_of(st.just(1e-6), st.just(0.0), st.none(), reals),
        "mechanism": st.sampled_from(["tree", "honaker", "blt", "x", None]),
        "calibration": st.sampled_from(["paper", "analytic", "zcdp", "x", None]),
        "sampler": st.sampled_from(["exact", "floating-point", "x", None]),
        "strict": flags,
        "seed": seeds,
        "secure": flags,
    },
)


@given(st.one_of(st.integers(1, 12), ints), st.one_of(st.integers(0, 13), ints), ftrl_kwargs)
def test_private_submodular_ftrl_constructor(n: Any, k: Any, kwargs: dict[str, Any]) -> None:
    ok, learner = attempt(lambda: dponline.PrivateSubmodularFTRL(n, k, **kwargs))
    if not ok:
        return
    n, k = int(n), int(k)
    assert 2 <= n and 1 <= k <= n
    p = learner.params
    for key, value in p.items():
        if isinstance(value, float):
            assert math.isfinite(value), (key, value)
    assert p["eta"] > 0 and p["noise_scale"] >= 0 and learner.mechanism in ("tree", "honaker", "blt")
    if learner.privacy is not None:
        assert math.isfinite(learner.privacy.epsilon) and 0 <= learner.privacy.delta < 1 and p["noise_scale"] > 0
    ok, bound = attempt(learner.regret_bound)
    if ok:
        assert bound >= 0
    if n <= 12:
        check_set(learner.ask(), n, k)
        for i in range(k):
            check_distribution(learner.expert_probabilities(i), n)


@given(
    st.integers(2, 8),
    st.data(),
    st.sampled_from([(None, None), (1.0, 1e-6), (1e-3, 1e-6), (1.0, 0.0), (1e6, 1e-6)]),
    st.sampled_from(["exact", "floating-point"]),
    st.booleans(),
    st.integers(1, 300),
    submodular_ops,
)
def test_private_submodular_ftrl_protocol(
    n: int, data: st.DataObject, target: tuple[Any, Any], sampler: str, strict: bool, horizon: int, ops: list
) -> None:
    k = data.draw(st.integers(1, n), "k")
    epsilon, delta = target
    learner = dponline.PrivateSubmodularFTRL(
        n,
        k,
        horizon=horizon,
        epsilon=epsilon,
        delta=delta,
        sampler=sampler,
        strict=strict,
        seed=data.draw(st.integers(0, 2**64 - 1), "seed"),
    )
    play_set_learner_ops(learner, n, k, horizon, ops, data)


# -- PrivateDRSubmodular -------------------------------------------------------------------------------
@st.composite
def matroids(draw: st.DrawFn, allow_base: bool = True) -> Any:
    """Small uniform and partition matroid polytopes (in independence form, and a few in base form)."""
    base = allow_base and draw(st.sampled_from([False, False, False, True]))
    n = draw(st.integers(1, 8))
    try:
        if draw(st.booleans()):
            return UniformMatroid(n, draw(st.integers(1, n)), base=base)
        labels = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        blocks = [[i for i in range(n) if labels[i] == b] for b in sorted(set(labels))]
        return PartitionMatroid(blocks, [draw(st.integers(0, len(b))) for b in blocks], base=base)
    except dponline.InvalidInputError:  # a single point (every block fixed) or a degenerate base polytope
        return UniformMatroid(n, 1, base=False)


def indicator(S: Any, n: int) -> np.ndarray:
    x = np.zeros(n)
    x[np.asarray(S, dtype=np.int64)] = 1.0
    return x


dr_kwargs = st.fixed_dictionaries(
    {
        "horizon": st.one_of(st.integers(1, 300), ints),
        "epsilon": st.one_of(st.none(), st.just(1.0), reals),
    },
    optional={
        "delta": st.one_of(st.just(1e-6), st.just(0.0), reals),
        "gradient_bound": st.one_of(st.none(), st.just(2.0), reals),
        "copies": st.one_of(st.none(), st.integers(0, 5), ints),
        "regularization": st.one_of(st.none(), st.just(0.5), reals),
        "calibration": st.sampled_from(["paper", "analytic", "zcdp", "x"]),
        "mechanism": st.sampled_from(["tree", "honaker", "blt", "x"]),
        "argmin": st.sampled_from(["projection", "frank-wolfe", "x"]),
        "lmo_calls": st.one_of(st.integers(0, 6), ints),
        "strict": flags,
        "seed": seeds,
        "secure": flags,
    },
)


def check_dr_round(learner: Any, domain: Any, S: Any) -> None:
    n = domain.dim
    S = np.asarray(S)
    assert S.dtype == np.int64 and np.all(np.diff(S) > 0) and np.all((S >= 0) & (S < n)), S
    assert domain.contains(indicator(S, n), 1e-9), ("rounded set not independent", S)
    x = learner.point
    assert x.shape == (n,)
    assert_finite(x)
    assert domain.contains(x, 1e-6), ("fractional point infeasible", x)


@given(st.one_of(matroids(), st.sampled_from([None, "matroid"])), dr_kwargs)
def test_private_dr_submodular_constructor(domain: Any, kwargs: dict[str, Any]) -> None:
    copies = kwargs.get("copies")
    assume(not (isinstance(copies, int) and copies > 64))  # many copies are slow, not wrong
    ok, learner = attempt(lambda: dponline.PrivateDRSubmodular(domain, **kwargs))
    if not ok:
        return
    check_constructed(learner)
    S = learner.ask()
    check_dr_round(learner, domain, S)
    for j in range(learner.params["copies"]):
        v = learner.copy_point(j)
        assert_finite(v)
        assert domain.contains(v, 1e-6)


dr_ops = st.lists(
    st.one_of(
        st.just(("ask", None)),
        st.tuples(st.just("tell"), st.booleans()),
        st.tuples(st.just("run"), st.one_of(st.integers(0, 300), st.sampled_from([-1, 2**64, 1.5, None]))),
        st.tuples(st.just("run_wrong"), st.sampled_from(["n", "kind", "junk"])),
        st.tuples(st.just("copy_point"), st.one_of(st.integers(-1, 4), ints)),
        st.tuples(st.just("bound"), st.one_of(st.none(), reals)),
        st.just(("pickle", None)),
    ),
    max_size=20,
)


@given(
    matroids(allow_base=False),
    st.integers(1, 300),
    st.sampled_from([None, 1.0, 1e-3]),
    st.sampled_from([0.0, 1e-6]),
    st.sampled_from(["projection", "frank-wolfe"]),
    st.sampled_from(["tree", "honaker", "blt"]),
    st.booleans(),
    dr_ops,
    st.data(),
)
def test_private_dr_submodular_protocol(
    domain: Any,
    horizon: int,
    epsilon: Any,
    delta: float,
    argmin: str,
    mechanism: str,
    strict: bool,
    ops: list,
    data: st.DataObject,
) -> None:
    n = domain.dim
    ok, learner = attempt(
        lambda: dponline.PrivateDRSubmodular(
            domain,
            horizon=horizon,
            epsilon=epsilon,
            delta=delta,
            argmin=argmin,
            mechanism=mechanism,
            calibration="paper" if mechanism == "tree" else "analytic",
            strict=strict,
            seed=data.draw(st.integers(0, 2**64 - 1), "seed"),
        )
    )
    assume(ok)
    fam = coverage_stream(n)
    for op, arg in ops:
        if op == "ask":
            check_ask(learner, horizon, lambda lrn, S: check_dr_round(lrn, domain, S))
        elif op == "tell":
            p = data.draw(hnp.arrays(np.float64, (n,), elements=unit) if arg else vectors(n), "p")
            ok, value = unchanged_if_failed(learner, lambda p=p, learner=learner: learner.tell(p))
            if ok:
                assert math.isfinite(value) and 0 <= value <= 1
        elif op == "run":
            result = checked_run(learner, fam, arg)
            if result is not None:
                assert_finite(result.final_point)
                assert domain.contains(result.final_point, 1e-6)
        elif op == "run_wrong":
            other: Any = {
                "n": ProbabilisticCoverage(np.full((2, n + 1), 0.5), horizon=300, resample="cycle"),
                "kind": FacilityLocation(np.full((2, n), 0.5), horizon=300, resample="cycle"),
                "junk": np.full((3, n), 0.5),
            }[arg]
            check_refuses_run(learner, other)
        elif op == "copy_point":
            ok, v = unchanged_if_failed(learner, lambda arg=arg, learner=learner: learner.copy_point(arg))
            if ok:
                assert 0 <= int(arg) < learner.params["copies"]
                assert_finite(v)
                assert domain.contains(v, 1e-6)
        elif op == "bound":
            ok, b = attempt(lambda arg=arg, learner=learner: learner.regret_bound(smoothness=arg))
            if ok:
                assert math.isfinite(b) and b >= 0
        else:
            learner = pickled(learner)
        assert 0 <= learner.t <= horizon


def test_huge_sizes_are_refused_quickly() -> None:
    """The premise of the ``ints`` strategy here: huge sizes are refused at once, never allocated."""
    for n in HUGE:
        with pytest.raises(ALLOWED):
            Hedge(n, 1.0)
        with pytest.raises(ALLOWED):
            dponline.PrivateSubmodular(n, 1, horizon=10, epsilon=None)
