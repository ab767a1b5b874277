"""Property-based fuzzing (issue 13) of the counting mechanisms beyond the binary tree (``HonakerTree``,
``KaryTree``, ``BLT``) and the learners' ``mechanism=`` option, the local-DP module (van der Hoeven 2019) and the
input validation of the experiments harness.

Same contract as ``tests/test_fuzz.py``: every call gets generated arguments (NumPy scalars, extreme floats,
NaN/inf, huge and empty sizes, junk types, calls out of protocol order) and must either return a valid result
(finite, of the right shape) or raise :class:`dponline.DPOnlineError` / :class:`MemoryError`; a stateful object
whose method raised must pickle to the same bytes as before the call. The experiments harness runs inline only
(never a process pool) on tiny streams.

Profiles (``tests/conftest.py``): ``ci`` (default), ``dev`` (500 examples) and ``long``.
"""

from __future__ import annotations

import copy
import math
import os
import pickle
import tempfile
from typing import Any

import numpy as np
import pytest
from _fuzz import (
    ALLOWED,
    HUGE,
    arrays,
    assert_finite,
    attempt,
    finite_floats,
    finite_vectors,
    ints,
    moderate,
    reals,
    seeds,
    small_ints,
    state_of,
    unchanged_if_failed,
    vectors,
)
from hypothesis import assume, example, given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dponline
from dponline import local_dp, losses
from dponline.aggregation import BLT, HonakerTree, KaryTree
from dponline.domains import L2Ball, Simplex
from dponline.experiments import (
    Experiment,
    LearnerSpec,
    build_domain,
    experiment_from_config,
    load_config,
    resolve_learner,
)

JUNK = [None, "1", b"1", 1j, 1.5, [1.0], np.array([1.0, 2.0]), {"a": 1}, object()]
names = st.one_of(st.sampled_from(JUNK), st.text(max_size=4))
flags = st.sampled_from([True, False, np.bool_(True), 0, 1, None, "yes"])
mostly_flags = st.one_of(st.booleans(), st.booleans(), st.booleans(), flags)


def option_values(valid: list[str]) -> st.SearchStrategy[Any]:
    """Valid option names (most of the time) and junk (other names, other types, near-misses)."""
    near = [v.upper() for v in valid] + [v + " " for v in valid]
    return st.one_of(st.sampled_from(valid), st.sampled_from(valid), st.sampled_from(near + JUNK), names)


# -- counting mechanisms ----------------------------------------------------------------------------------
MECHANISM_CLASSES = {"honaker": HonakerTree, "kary": KaryTree, "blt": BLT}
# BLT's optimiser costs O(buffers³ log T) per iteration: keep the buffers small (junk still reaches 16+).
buffer_counts = st.one_of(st.integers(1, 5), st.sampled_from([0, -1, 17, 2**64, 1.5, None, "4", True]))
arities = st.one_of(st.integers(2, 17), ints)
horizons = st.one_of(st.integers(1, 300), st.sampled_from([0, 1, 2, 2**62, 2**63 - 1]), ints)
params_lists = st.one_of(
    st.none(),
    st.lists(st.one_of(st.floats(0.01, 0.99), finite_floats), min_size=0, max_size=4),
    st.sampled_from([[0.5], [0.2, 0.8], "ab", 5, [None], [[0.5]], [1j], np.array([0.5]), [math.nan], {"a": 1}]),
)


def mechanism_kwargs(kind: str, draw: st.DrawFn) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    if kind == "kary":
        kwargs["k"] = draw(arities, "k")
        if draw(st.booleans()):
            kwargs["readout"] = draw(option_values(["honaker", "plain"]), "readout")
    if kind == "blt":
        if draw(st.booleans()):
            kwargs["buffers"] = draw(buffer_counts, "buffers")
        if draw(st.booleans()):
            kwargs["objective"] = draw(option_values(["max", "mean"]), "objective")
    return kwargs


def check_mechanism(m: Any, dim: int | None = None) -> None:
    """Invariants of a successfully built mechanism."""
    assert m.t == 0
    if dim is not None:
        assert m.dim == dim
    assert m.initial().shape == (m.dim,)
    assert_finite(m.initial())
    for value in (m.sensitivity_l1, m.sensitivity_l2, m.scale):
        assert math.isfinite(value) and value >= 0
    assert m.sensitivity_l1 > 0 and m.sensitivity_l2 > 0
    for t in {0, 1, min(m.horizon, 7), m.horizon}:
        v = m.variance(t)
        assert math.isfinite(v) and v >= 0, (t, v)
        assert math.isfinite(m.unit_variance(t))
    if m.kind == "blt":
        theta, omega = np.asarray(m.theta), np.asarray(m.omega)
        assert theta.shape == omega.shape == (m.buffers,)
        assert np.all((theta > 0) & (theta < 1)) and np.all(omega > 0), (theta, omega)
    clone = pickle.loads(pickle.dumps(m))
    assert state_of(clone) == state_of(m)
    assert type(clone) is type(m)


def mechanism_structure(draw: st.DrawFn) -> tuple[str, Any, Any, Any, dict[str, Any]]:
    """What a constructor call and a ``calibrated`` call share: a mechanism kind, its class, a fuzzed ``dim`` and
    ``horizon``, and its structure keywords (:func:`mechanism_kwargs`)."""
    kind = draw(st.sampled_from(sorted(MECHANISM_CLASSES)))
    dim = draw(st.one_of(st.integers(1, 6), ints), "dim")
    horizon = draw(horizons, "horizon")
    return kind, MECHANISM_CLASSES[kind], dim, horizon, mechanism_kwargs(kind, draw)


@st.composite
def mechanism_calls(draw: st.DrawFn) -> tuple[str, Any]:
    kind, cls, dim, horizon, kwargs = mechanism_structure(draw)
    scale = draw(st.one_of(st.sampled_from([0.0, 1.0, 1e-300, 1e150]), reals), "scale")
    if draw(st.booleans()):
        kwargs["noise"] = draw(option_values(["laplace", "gaussian"]), "noise")
    if kind == "blt" and draw(st.booleans()):
        kwargs["theta"] = draw(params_lists, "theta")
        kwargs["omega"] = draw(params_lists, "omega")
    if draw(st.booleans()):
        kwargs["seed"] = draw(seeds, "seed")
    if draw(st.booleans()):
        kwargs["secure"] = draw(flags, "secure")
    return f"{cls.__name__}({dim!r}, {horizon!r}, scale={scale!r}, **{kwargs!r})", lambda: cls(
        dim, horizon, scale=scale, **kwargs
    )


@given(mechanism_calls())
@example(("BLT theta=5", lambda: BLT(2, 10, scale=1.0, theta=5, omega=[0.5])))
@example(("BLT theta='ab'", lambda: BLT(2, 10, scale=1.0, theta="ab", omega=[0.5])))
@example(("Honaker noise=None", lambda: HonakerTree(2, 10, scale=1.0, noise=None)))
@example(("Kary readout=1", lambda: KaryTree(2, 10, k=3, scale=1.0, readout=1)))
@example(("BLT objective=None", lambda: BLT(2, 10, scale=1.0, objective=None)))
@example(("Honaker secure=0", lambda: HonakerTree(2, 10, scale=1.0, secure=0)))
def test_mechanism_constructors(call: tuple[str, Any]) -> None:
    text, build = call
    note(text)
    ok, m = attempt(build)
    if ok:
        check_mechanism(m)


@st.composite
def calibrated_calls(draw: st.DrawFn) -> tuple[str, Any]:
    _, cls, dim, horizon, kwargs = mechanism_structure(draw)
    kwargs["epsilon"] = draw(st.one_of(st.sampled_from([1.0, 0.1, 1e-300, 1e300]), reals), "epsilon")
    kwargs["sensitivity"] = draw(st.one_of(st.sampled_from([1.0, 2.0, 1e-300, 1e300]), reals), "sensitivity")
    if draw(st.booleans()):
        kwargs["delta"] = draw(st.one_of(st.sampled_from([0.0, 1e-6, 0.5, 1 - 1e-16]), reals), "delta")
    if draw(st.booleans()):
        kwargs["noise"] = draw(st.one_of(st.none(), option_values(["laplace", "gaussian"])), "noise")
    if draw(st.booleans()):
        kwargs["calibration"] = draw(option_values(["analytic", "zcdp", "paper"]), "calibration")
    kwargs["seed"] = draw(seeds, "seed")
    return f"{cls.__name__}.calibrated({dim!r}, {horizon!r}, **{kwargs!r})", lambda: cls.calibrated(
        dim, horizon, **kwargs
    )


@given(calibrated_calls())
@example(("Honaker noise=1", lambda: HonakerTree.calibrated(2, 8, epsilon=1.0, sensitivity=1.0, noise=1)))
@example(("Honaker calibration=None", lambda: HonakerTree.calibrated(2, 8, epsilon=1.0, sensitivity=1.0, noise=1)))
def test_mechanism_calibrated(call: tuple[str, Any]) -> None:
    text, build = call
    note(text)
    ok, m = attempt(build)
    if not ok:
        return
    check_mechanism(m)
    assert m.scale > 0
    g = m.privacy
    assert g is not None and math.isfinite(g.epsilon) and g.epsilon > 0 and 0 <= g.delta < 1
    if g.noise_multiplier is not None:
        assert math.isfinite(g.noise_multiplier) and g.noise_multiplier > 0


mechanism_ops = st.lists(
    st.one_of(
        st.tuples(st.just("push"), st.integers(0, 4)),
        st.tuples(st.just("push_many"), st.integers(0, 6)),
        st.tuples(st.just("variance"), st.one_of(st.integers(-1, 12), ints)),
        st.tuples(st.just("unit_variance"), st.one_of(st.integers(-1, 12), ints)),
        st.tuples(st.just("copy"), st.integers(0, 2)),
    ),
    max_size=14,
)


@st.composite
def small_mechanisms(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(sorted(MECHANISM_CLASSES)))
    dim, horizon = draw(st.integers(1, 4)), draw(st.integers(1, 9))
    scale = draw(st.sampled_from([0.0, 1.0, 1e-300, 1e150]))
    noise = draw(st.sampled_from(["laplace", "gaussian"]))
    # The exact sampler refuses scales below 1e-150 (beyond exact arithmetic): those take the float path.
    sampler = "floating-point" if scale == 1e-300 else draw(st.sampled_from(["exact", "floating-point"]))
    if kind == "honaker":
        return HonakerTree(dim, horizon, scale=scale, noise=noise, seed=1, sampler=sampler)
    if kind == "kary":
        k = draw(st.integers(2, 5))
        readout = draw(st.sampled_from(["honaker", "plain"]))
        return KaryTree(dim, horizon, k=k, scale=scale, noise=noise, readout=readout, seed=1, sampler=sampler)
    if draw(st.booleans()):
        return BLT(dim, horizon, scale=scale, noise=noise, theta=[0.3, 0.9], omega=[0.2, 0.1], seed=1, sampler=sampler)
    return BLT(dim, horizon, scale=scale, noise=noise, buffers=draw(st.integers(1, 3)), seed=1, sampler=sampler)


@given(small_mechanisms(), mechanism_ops, st.data())
def test_mechanism_protocol(m: Any, ops: list, data: st.DataObject) -> None:
    dim = m.dim
    for op, arg in ops:
        if op == "push":
            x = data.draw(st.one_of(finite_vectors(dim), vectors(dim)), "x")
            t = m.t
            ok, out = unchanged_if_failed(m, lambda x=x, m=m: m.push(x))
            if ok:
                assert out.shape == (dim,) and m.t == t + 1
                assert_finite(out)
        elif op == "push_many":
            xs = data.draw(
                st.one_of(
                    hnp.arrays(np.float64, (arg, dim), elements=finite_floats),
                    arrays(st.just((arg, dim))),
                    arrays(st.just((arg,))),
                ),
                "xs",
            )
            ok, out = unchanged_if_failed(m, lambda xs=xs, m=m: m.push_many(xs))
            if ok:
                assert out.shape == (arg, dim)
                assert_finite(out)
        elif op in ("variance", "unit_variance"):
            ok, v = unchanged_if_failed(m, lambda arg=arg, m=m, op=op: getattr(m, op)(arg))
            if ok:
                assert math.isfinite(v) and v >= 0
        else:
            clone = [copy.copy, copy.deepcopy, lambda t: pickle.loads(pickle.dumps(t))][arg](m)
            assert state_of(clone) == state_of(m)
            m = clone
    assert m.t <= m.horizon


@given(st.sampled_from(sorted(MECHANISM_CLASSES)), st.sampled_from([b"", b"junk", None, 3, "state"]))
def test_mechanism_setstate_junk(kind: str, state: Any) -> None:
    m = MECHANISM_CLASSES[kind].__new__(
        MECHANISM_CLASSES[kind], 1, 1, scale=0.0, **({"k": 3} if kind == "kary" else {})
    )
    ok, _ = attempt(lambda: m.__setstate__(state))
    if not ok:
        check_mechanism(m)


# -- the learners' mechanism= option -----------------------------------------------------------------------
@given(
    st.sampled_from(["DPFTRL", "DPFTPL", "PrivateBandit"]),
    option_values(["tree", "honaker", "blt"]),
    option_values(["paper", "analytic", "zcdp"]),
    st.sampled_from([None, 1.0, 1e-300, 1e300]),
    st.sampled_from([0.0, 1e-6]),
    st.one_of(st.integers(1, 300), st.sampled_from([2**62, 2**63 - 1])),
)
@example("DPFTPL", "honaker", "analytic", None, 0.0, 1)  # before: ZeroDivisionError (no release carries noise)
@example("DPFTPL", "blt", "analytic", 1.0, 1e-6, 1)
@example("DPFTPL", "honaker", "paper", None, 0.0, 2**63 - 1)  # before: RuntimeWarning, the grid cast past int64
def test_learner_mechanism_option(
    name: str, mechanism: Any, calibration: Any, epsilon: Any, delta: float, horizon: int
) -> None:
    d = Simplex(3) if name != "PrivateBandit" else L2Ball(2)
    kwargs: dict[str, Any] = dict(
        horizon=horizon, epsilon=epsilon, delta=delta, mechanism=mechanism, calibration=calibration, seed=0
    )
    if name == "PrivateBandit":
        kwargs["lipschitz"] = 1.0
    else:
        kwargs["loss_bound"] = 1.0
    ok, learner = attempt(lambda: getattr(dponline, name)(d, **kwargs))
    if not ok:
        return
    g = learner.privacy
    if g is not None:
        assert math.isfinite(g.epsilon) and 0 <= g.delta < 1
    x = learner.ask()
    assert_finite(x)
    assert d.contains(x, 1e-6)


# -- local DP: randomiser ----------------------------------------------------------------------------------
budget_values = st.one_of(
    st.sampled_from([1.0, 0.5, math.inf, 1e-300, 5e-324, 1e300, 0.0, -1.0, math.nan]),
    reals,
    arrays(st.sampled_from([(), (1,), (2,), (3,), (2, 3), (3, 1), (1, 3), (4, 2)])),
)


@given(
    st.one_of(st.integers(1, 5), st.integers(1, 5), ints),
    st.one_of(st.sampled_from([1.0, 1e-300, 1e300]), st.floats(1e-3, 1e3), reals),
    option_values(["laplace", "l2"]),
    mostly_flags,
    st.one_of(st.integers(0, 2**64 - 1), seeds),
    mostly_flags,
    st.data(),
)
@example(2, 1.0, "laplace", False, 0, False, None)  # the pinned regressions below, with or without data
def test_local_randomizer(
    dim: Any, bound: Any, mechanism: Any, strict: Any, seed: Any, secure: Any, data: st.DataObject
) -> None:
    ok, r = attempt(
        lambda: dponline.LocalLaplaceRandomizer(
            dim, bound=bound, mechanism=mechanism, strict=strict, seed=seed, secure=secure
        )
    )
    if not ok:
        return
    assume(r.dim <= 6)
    d = r.dim
    assert repr(r)
    if data is None:  # pinned regressions: junk budgets and rounds refused, overflowing sums never warn
        for call in (
            lambda: r.epsilons(-1.0),
            lambda: r.epsilons(math.nan),
            lambda: r.epsilons("x"),
            lambda: r.epsilons(1.0, 1.5),
            lambda: r.privacy([1e308, 1e308]),
            lambda: r.privacy([math.nan, 1.0]),
            lambda: r.randomize("abc", 1.0),
        ):
            assert not attempt(call)[0]
        assert r.epsilons([1e308, 1e308]).tolist() == [math.inf]
        return
    for _ in range(data.draw(st.integers(1, 4), "calls")):
        kind = data.draw(st.sampled_from(["randomize", "epsilons", "privacy", "pickle"]), "kind")
        budgets = data.draw(budget_values, "budgets")
        if kind == "randomize":
            n = data.draw(st.integers(0, 3), "n")
            g = data.draw(
                st.one_of(
                    finite_vectors(d, moderate),
                    hnp.arrays(np.float64, (n, d), elements=finite_floats),
                    vectors(d),
                    arrays(st.just((n, d))),
                ),
                "gradients",
            )
            ok, out = unchanged_if_failed(r, lambda g=g, b=budgets, r=r: r.randomize(g, b))
            if ok:
                assert out.shape == np.shape(g)
                assert_finite(out)
        elif kind == "epsilons":
            rounds = data.draw(st.one_of(st.none(), st.integers(0, 4), ints), "rounds")
            ok, eps = attempt(lambda b=budgets, n=rounds, r=r: r.epsilons(b, n))
            if ok:
                assert eps.ndim == 1 and not np.any(np.isnan(eps)) and np.all(eps > 0)
        elif kind == "privacy":
            ok, g = attempt(lambda b=budgets, r=r: r.privacy(b))
            if ok and g is not None:
                assert math.isfinite(g.epsilon) and g.epsilon > 0
        else:
            clone = pickle.loads(pickle.dumps(r))
            assert state_of(clone) == state_of(r)
            r = clone


# -- local DP: Algorithm 1 ---------------------------------------------------------------------------------
def _density_flat(v: float) -> float:
    return 1.0


def _density_bump(v: float) -> float:
    return math.exp(-100.0 * v * v)


def _density_nan(v: float) -> float:
    return math.nan


def _density_negative(v: float) -> float:
    return -1.0


def _density_inf(v: float) -> float:
    return math.inf


def _density_huge(v: float) -> float:
    return 1e308


def _density_zero(v: float) -> float:
    return 0.0


def _density_text(v: float) -> Any:
    return "x"


def _density_array(v: float) -> Any:
    return np.array([1.0, 2.0])


def _density_tiny(v: float) -> float:
    return 5e-324


DENSITIES = [
    _density_flat,
    _density_bump,
    _density_nan,
    _density_negative,
    _density_inf,
    _density_huge,
    _density_zero,
    _density_text,
    _density_array,
    _density_tiny,
]
priors = st.one_of(option_values(["conjugate", "uniform", "improper"]), st.sampled_from(DENSITIES))
potential_ops = st.lists(
    st.one_of(
        st.just(("ask", None)),
        st.just(("log_prediction", None)),
        st.tuples(st.just("tell"), st.one_of(moderate, finite_floats, reals)),
        st.tuples(st.just("regret_bound"), st.one_of(moderate, reals)),
        st.just(("pickle", None)),
    ),
    max_size=12,
)


@given(
    st.one_of(st.sampled_from([1.0, 1e-300, 1e300, 5e-324]), reals),
    priors,
    st.one_of(st.none(), st.sampled_from([1.0, 1e-300, 1e300]), reals),
    potential_ops,
)
@example(1.0, _density_text, None, [("ask", None)])
@example(1.0, "conjugate", None, [("regret_bound", 2.5e153)])
def test_potential_learner_1d(G: Any, prior: Any, b: Any, ops: list) -> None:
    ok, learner = attempt(lambda: dponline.PotentialLearner1D(G, prior=prior, b=b))
    if not ok:
        return
    assert math.isfinite(learner.C) and learner.C > 0
    for op, arg in ops:
        if op == "ask":
            ok, w = unchanged_if_failed(learner, learner.ask)
            if ok:
                assert isinstance(w, float) and math.isfinite(w) and abs(w) <= local_dp.ACTION_LIMIT
        elif op == "log_prediction":
            ok, pair = unchanged_if_failed(learner, learner.log_prediction)
            if ok:
                sign, ln_abs = pair
                assert sign in (-1.0, 0.0, 1.0) and not math.isnan(ln_abs)
        elif op == "tell":
            unchanged_if_failed(learner, lambda arg=arg, learner=learner: learner.tell(arg))
            assert math.isfinite(learner.neg_sum) and math.isfinite(learner.sum_sq)
        elif op == "regret_bound":
            ok, bound = attempt(lambda arg=arg, learner=learner: learner.regret_bound(arg))
            if ok:
                assert math.isfinite(bound), bound
        else:
            clone = pickle.loads(pickle.dumps(learner))
            assert state_of(clone) == state_of(learner)
            learner = clone


# -- local DP: streams and d-dimensional learners ----------------------------------------------------------
LOCAL_LEARNERS = ["CoordinatewiseLearner", "UnconstrainedLearner", "OnlineGradientDescent", "AdaGrad"]


@st.composite
def local_learner_calls(draw: st.DrawFn) -> tuple[str, Any]:
    name = draw(st.sampled_from(LOCAL_LEARNERS))
    cls = getattr(local_dp, name)
    dim = draw(st.one_of(st.integers(1, 5), st.integers(1, 5), ints), "dim")
    kwargs: dict[str, Any] = {}
    positive = st.one_of(st.sampled_from([1.0, 1e-300, 1e300]), st.floats(1e-3, 1e3), reals)
    if name in ("CoordinatewiseLearner", "UnconstrainedLearner"):
        args: tuple[Any, ...] = (dim, draw(positive, "G"))
        if draw(st.booleans()):
            kwargs["prior"] = draw(option_values(["conjugate", "uniform", "improper"]), "prior")
        if draw(st.booleans()):
            kwargs["b"] = draw(st.one_of(st.none(), positive), "b")
    else:
        args = (dim, draw(positive, "lr/radius"))
        if draw(st.booleans()):
            kwargs["G"] = draw(positive, "G")
    if draw(st.booleans()):
        kwargs["strict"] = draw(mostly_flags, "strict")
    kwargs["seed"] = draw(st.one_of(st.integers(0, 2**64 - 1), seeds), "seed")
    if draw(st.booleans()):
        kwargs["secure"] = draw(mostly_flags, "secure")
    return f"{name}{args!r} **{kwargs!r}", lambda: cls(*args, **kwargs)


local_ops = st.lists(
    st.one_of(
        st.just(("ask", None)),
        st.just(("tell", None)),
        st.tuples(st.just("run"), st.one_of(st.integers(0, 40), st.sampled_from([None, -1, 2**64, 1.5, "3"]))),
        st.just(("regret_bound", None)),
        st.just(("state", None)),
        st.just(("pickle", None)),
    ),
    max_size=10,
)


@given(local_learner_calls(), local_ops, st.data())
def test_local_learners(call: tuple[str, Any], ops: list, data: st.DataObject) -> None:
    text, build = call
    note(text)
    ok, learner = attempt(build)
    if not ok:
        return
    assume(learner.dim <= 6)
    d = learner.dim
    assert learner.privacy is None
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (40, d))
    stream = local_dp.LocalStream(
        X,
        np.sign(X[:, 0] + 0.1),
        loss=data.draw(st.sampled_from(["logistic", "squared", "absolute"]), "loss"),
        budgets=data.draw(st.sampled_from([np.inf, 1.0, 1e-3]), "budgets"),
        mechanism="l2" if data.draw(st.booleans(), "l2") else "laplace",
    )
    for op, arg in ops:
        if op == "ask":
            ok, w = unchanged_if_failed(learner, learner.ask)
            if ok:
                assert w.shape == (d,)
                assert_finite(w)
        elif op == "tell":
            g = data.draw(st.one_of(finite_vectors(d, moderate), finite_vectors(d), vectors(d), reals), "g")
            unchanged_if_failed(learner, lambda g=g, learner=learner: learner.tell(g))
        elif op == "run":
            target = stream if data.draw(st.integers(0, 5), "target") else data.draw(st.sampled_from(JUNK), "junk")
            ok, result = unchanged_if_failed(
                learner, lambda arg=arg, s=target, learner=learner: learner.run(s, rounds=arg, checkpoints=3)
            )
            if ok:
                assert math.isfinite(result.total_loss)
                assert_finite(result.cumulative_loss)
                assert_finite(result.final_point)
        elif op == "regret_bound":
            if not hasattr(learner, "regret_bound"):
                continue
            u = data.draw(st.one_of(finite_vectors(d, moderate), vectors(d)), "u")
            ok, bound = attempt(lambda u=u, learner=learner: learner.regret_bound(u))
            if ok:
                assert math.isfinite(bound), bound
        elif op == "state":
            for key, value in learner.state.items():
                if key != "algorithm":
                    assert_finite(value)
        else:
            clone = pickle.loads(pickle.dumps(learner))
            assert state_of(clone) == state_of(learner)
            learner = clone


@st.composite
def stream_calls(draw: st.DrawFn) -> tuple[str, Any]:
    n, d = draw(st.integers(0, 5)), draw(st.integers(0, 4))
    features = draw(
        st.one_of(
            hnp.arrays(np.float64, (n, d), elements=finite_floats), arrays(st.just((n, d))), arrays(st.just((n,)))
        )
    )
    labels = draw(st.one_of(hnp.arrays(np.float64, (n,), elements=finite_floats), arrays(st.just((n,)))))
    kwargs: dict[str, Any] = {"loss": draw(option_values(["logistic", "squared", "absolute"]), "loss")}
    if draw(st.booleans()):
        kwargs["budgets"] = draw(budget_values, "budgets")
    if draw(st.booleans()):
        kwargs["mechanism"] = draw(option_values(["laplace", "l2"]), "mechanism")
    return f"LocalStream({features!r}, {labels!r}, **{kwargs!r})", lambda: local_dp.LocalStream(
        features, labels, **kwargs
    )


@given(stream_calls(), st.data())
def test_local_stream(call: tuple[str, Any], data: st.DataObject) -> None:
    text, build = call
    note(text)
    ok, s = attempt(build)
    if not ok:
        return
    assert repr(s)
    eps = s.epsilons()
    assert eps.shape == (s.horizon,) and not np.any(np.isnan(eps))
    t = data.draw(st.one_of(st.integers(-1, s.horizon), ints), "t")
    G = data.draw(st.one_of(st.just(1.0), reals), "G")
    ok, g = attempt(lambda: s.privacy(t, G))
    if ok and g is not None:
        assert math.isfinite(g.epsilon)
    u = data.draw(st.one_of(finite_vectors(s.dim, moderate), vectors(s.dim)), "u")
    marks = data.draw(
        st.one_of(
            st.none(),
            st.lists(st.integers(0, s.horizon), max_size=3),
            st.lists(st.one_of(small_ints, st.sampled_from(HUGE)), max_size=3),
            st.sampled_from(JUNK),
        ),
        "checkpoints",
    )
    ok, cum = attempt(lambda: s.cumulative_loss(u, marks))
    if ok:
        assert_finite(cum)
    ok, out = attempt(lambda: s.subgradient(t, u))
    if ok:
        value, grad = out
        assert math.isfinite(value) and grad.shape == (s.dim,)
        assert_finite(grad)
    clone = pickle.loads(pickle.dumps(s))
    assert state_of(clone) == state_of(s)


# -- experiments: input validation -------------------------------------------------------------------------
T_EXP = 12
_STREAM = losses.Linear(np.linspace(-1.0, 1.0, 3 * T_EXP).reshape(T_EXP, 3))
_GOOD = {"domain": Simplex(3), "horizon": T_EXP, "lipschitz": 1.0, "loss_bound": 1.0}


def _factory_returns_junk(seed: Any = None, **kwargs: Any) -> Any:
    return 3


def _factory_raises_type_error(seed: Any = None, **kwargs: Any) -> Any:
    raise TypeError("a bug in the user's factory")


def _run_raises(seed: Any = None, **kwargs: Any) -> Any:
    class Bad:
        privacy = None

        def run(self, losses: Any, checkpoints: int = 1) -> Any:
            raise KeyError("boom")

    return Bad()


values = st.one_of(
    st.sampled_from([0.5, 1.0, 1e-6, None, -1.0, 0, 3, math.nan, math.inf, "none", "x", [1.0], {"a": 1}, True]),
    reals,
)
param_dicts = st.one_of(
    st.just(dict(_GOOD)),
    st.dictionaries(
        st.sampled_from(["domain", "horizon", "lipschitz", "loss_bound", "epsilon", "delta", "noise", "seed", "foo"]),
        st.one_of(values, st.sampled_from([Simplex(3), Simplex(4), L2Ball(3)])),
        max_size=5,
    ).map(lambda extra: {**_GOOD, **extra}),
    st.sampled_from(JUNK),
)
grids = st.one_of(
    st.none(),
    st.just({"epsilon": [0.5, 1.0]}),
    st.dictionaries(
        st.one_of(st.sampled_from(["epsilon", "delta", "lipschitz", "seed", "foo", "horizon"]), st.integers(0, 2)),
        st.one_of(st.lists(values, max_size=3), st.sampled_from(JUNK)),
        max_size=3,
    ),
    st.sampled_from(JUNK),
)
factories = st.one_of(
    st.just(dponline.PrivateBandit),
    st.just(dponline.PrivateBandit),
    st.sampled_from([_factory_returns_junk, _factory_raises_type_error, _run_raises, dponline.DPFTRL, print]),
    st.sampled_from(JUNK),
)


@st.composite
def learner_specs(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(JUNK))
    name = draw(st.one_of(st.just("a"), st.just("b"), names), "name")
    kwargs: dict[str, Any] = {}
    if draw(st.booleans()):
        kwargs["grid"] = draw(grids, "spec grid")
    if draw(st.integers(0, 4)) == 0:
        kwargs["key"] = draw(names, "key")
    return LearnerSpec(name, draw(factories, "factory"), draw(param_dicts, "params"), **kwargs)


counts = st.one_of(st.integers(1, 2), ints, st.sampled_from(JUNK))


@given(
    st.one_of(st.just(_STREAM), st.just(_STREAM), st.sampled_from(JUNK)),
    st.one_of(st.lists(learner_specs(), min_size=0, max_size=3), st.sampled_from(JUNK)),
    grids,
    counts,
    st.one_of(st.none(), counts),
    counts,
    st.data(),
)
@example(_STREAM, [LearnerSpec("a", dponline.PrivateBandit, _GOOD)], {"epsilon": 5}, 1, 0, 1, None)
@example(_STREAM, [LearnerSpec("a", dponline.PrivateBandit, _GOOD)], np.array([1.0, 2.0]), 1, 0, 1, None)
@example(_STREAM, [LearnerSpec("a", dponline.PrivateBandit, _GOOD, grid={"epsilon": 5})], None, 1, 0, 1, None)
@example(_STREAM, [LearnerSpec(["a"], dponline.PrivateBandit, _GOOD)], None, 1, 0, 1, None)
@example(_STREAM, [LearnerSpec("a", dponline.PrivateBandit, None)], None, 1, 0, 1, None)
@example(_STREAM, [LearnerSpec("a", _factory_raises_type_error, _GOOD)], None, 1, 0, 1, None)
def test_experiment_arguments(
    stream: Any, specs: Any, grid: Any, seeds_: Any, root_seed: Any, checkpoints: Any, data: st.DataObject
) -> None:
    def build() -> Experiment:
        return Experiment(stream, specs, grid=grid, seeds=seeds_, root_seed=root_seed, checkpoints=checkpoints)

    ok, exp = attempt(build)
    if not ok:
        return
    assert exp.n_runs >= 1
    assert exp.metadata()["name"] == "sweep"
    if exp.n_runs <= 4 and data is not None:
        results = exp.run(backend="inline", progress=False)
        frame = results.frame()
        assert len(results.runs()) == exp.n_runs
        assert not frame.empty or results.failures


def _seed_fn_junk(i: int, j: int, k: int) -> Any:
    return "seed"


def _seed_fn_ok(i: int, j: int, k: int) -> Any:
    return 1000 * i + 10 * j + k


@given(
    st.one_of(
        st.none(), st.just({}), st.sampled_from(JUNK), st.dictionaries(st.text(max_size=3), st.sampled_from(JUNK))
    ),
    st.one_of(st.none(), st.sampled_from([Simplex(3), Simplex(4), L2Ball(3)]), st.sampled_from(JUNK)),
    st.one_of(st.none(), st.sampled_from([_seed_fn_ok, _seed_fn_junk, print, len]), st.sampled_from(JUNK)),
    st.one_of(st.text(max_size=5), st.sampled_from(JUNK)),
    st.one_of(st.text(max_size=5), st.sampled_from(JUNK)),
)
@example(None, None, 3, "sweep", "")
@example({"best": 3}, None, None, "sweep", "")
def test_experiment_optional_arguments(
    comparators: Any, domain: Any, seed_fn: Any, name: Any, description: Any
) -> None:
    def build() -> Experiment:
        return Experiment(
            _STREAM,
            [LearnerSpec("a", dponline.PrivateBandit, _GOOD)],
            grid={"epsilon": [1.0]},
            checkpoints=2,
            comparators=comparators,
            domain=domain,
            seed_fn=seed_fn,
            name=name,
            description=description,
        )

    ok, exp = attempt(build)
    if ok:
        results = exp.run(backend="inline", progress=False)
        assert len(results.runs()) == 1
        results.summary()
        results.metadata()


@given(st.one_of(counts, st.sampled_from(["inline", "process", "dask", "thread", None])), counts)
def test_experiment_run_arguments(backend: Any, workers: Any) -> None:
    exp = Experiment(_STREAM, [LearnerSpec("a", dponline.PrivateBandit, _GOOD)], grid={"epsilon": [1.0]}, checkpoints=2)
    if isinstance(backend, str) and backend in ("process", "dask"):
        return  # never spawn process pools or clusters here: only the validation of the arguments is tested
    ok, results = attempt(lambda: exp.run(backend=backend, workers=workers, progress=False))
    if ok:
        assert results.runs().shape[0] == 1


# -- experiments: configuration dicts ----------------------------------------------------------------------
toml_scalars = st.one_of(
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.sampled_from([0, 1, 2, 5, 20, -1, 2**62]),
    st.floats(),
    st.text(max_size=6),
    st.sampled_from(["none", "nyse", "portfolio", "linear", "cycle", "bootstrap", "simplex", "PrivateBandit"]),
)


def _toml_containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3))


toml_values = st.recursive(toml_scalars, _toml_containers, max_leaves=6)


def _csv_file() -> str:
    path = os.path.join(tempfile.mkdtemp(prefix="dponline-fuzz-"), "rows.csv")
    np.savetxt(path, np.linspace(0.5, 1.5, 4 * T_EXP).reshape(T_EXP, 4), delimiter=",")
    return path


CSV = _csv_file()
GOOD_LEARNER = {"name": "p", "learner": "PrivateBandit", "domain": "simplex", "lipschitz": 10.0, "loss_bound": 0.7}


@st.composite
def configs(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(st.one_of(toml_values, st.sampled_from(JUNK)))
    config: dict[str, Any] = {}
    stream: dict[str, Any] = {"file": CSV, "horizon": T_EXP}
    for key, strategy in [
        ("dataset", st.sampled_from(["nyse", "other", 3])),
        ("file", st.one_of(st.just(CSV), st.just(CSV + ".missing"), toml_scalars)),
        ("loss", st.one_of(st.sampled_from(["portfolio", "linear"]), toml_values)),
        ("horizon", st.one_of(st.integers(1, 30), toml_values)),
        ("resample", st.one_of(st.sampled_from(["none", "cycle", "bootstrap"]), toml_values)),
        ("seed", st.one_of(st.integers(0, 3), toml_values)),
        ("junk", toml_values),
    ]:
        roll = draw(st.integers(0, 6))
        if roll == 0:
            stream.pop(key, None)
        elif roll == 1:
            stream[key] = draw(strategy, f"stream.{key}")
    if "dataset" in stream:
        stream.pop("file", None)
        stream["horizon"] = draw(st.integers(1, 30))
    config["stream"] = stream if draw(st.integers(0, 9)) else draw(toml_values)
    if draw(st.booleans()):
        config["sweep"] = draw(
            st.one_of(
                st.fixed_dictionaries(
                    {}, optional={"seeds": toml_values, "root_seed": toml_values, "checkpoints": toml_values}
                ),
                toml_values,
            ),
            "sweep",
        )
    if draw(st.booleans()):
        config["grid"] = draw(
            st.one_of(
                st.just({"epsilon": [0.5, 1.0]}),
                st.dictionaries(st.sampled_from(["epsilon", "delta", "seed", "x"]), toml_values, max_size=2),
                toml_values,
            ),
            "grid",
        )
    learners: Any = [dict(GOOD_LEARNER)]
    if draw(st.booleans()):
        table = dict(GOOD_LEARNER)
        for key in draw(st.lists(st.sampled_from([*GOOD_LEARNER, "grid", "epsilon", "delta", "horizon"]), max_size=3)):
            if draw(st.booleans()):
                table.pop(key, None)
            else:
                table[key] = draw(
                    st.one_of(
                        toml_values,
                        st.sampled_from(["l2ball", "box", "l1ball", "PrivateBandit", "DPFTRL", "os:getcwd"]),
                        st.sampled_from([{"kind": "l2ball", "radius": "x"}, {"kind": "box", "lower": [1, 2]}]),
                        st.sampled_from([{"kind": 3}, {"kind": "box", "upper": -1.0}, {"kind": "simplex", "r": 1}]),
                    ),
                    f"learners.{key}",
                )
        learners = [table]
    if draw(st.integers(0, 5)) == 0:
        learners = draw(toml_values)
    config["learners"] = learners
    if draw(st.booleans()):
        config["output"] = draw(
            st.one_of(
                st.fixed_dictionaries({}, optional={"format": toml_values, "svg": toml_values}),
                toml_values,
            ),
            "output",
        )
    if draw(st.integers(0, 5)) == 0:
        config[draw(st.sampled_from(["name", "description", "extra"]))] = draw(toml_values)
    return config


@given(configs())
@example({"stream": {"file": CSV}, "learners": [{**GOOD_LEARNER, "domain": {"kind": "box", "lower": [1.0, 2.0]}}]})
@example({"stream": {"file": CSV}, "learners": [{**GOOD_LEARNER, "domain": {"kind": "l2ball", "radius": "x"}}]})
@example({"stream": {"file": CSV}, "learners": [{**GOOD_LEARNER, "name": ["x"]}]})
@example({"stream": {"file": CSV}, "grid": {"epsilon": 5}, "learners": [GOOD_LEARNER]})
@example({"stream": {"file": CSV, "loss": ["portfolio"]}, "learners": [GOOD_LEARNER]})
@example({"stream": {"file": CSV, "resample": ["cycle"]}, "learners": [GOOD_LEARNER]})
@example({"stream": {"file": CSV}, "learners": [{**GOOD_LEARNER, "grid": {"epsilon": [{"a": 1}]}}]})
@example({"stream": {"file": CSV}, "learners": [GOOD_LEARNER], "output": {"format": ["csv"]}})
def test_experiment_from_config(config: Any) -> None:
    ok, out = attempt(lambda: experiment_from_config(config))
    if ok:
        exp, options = out
        assert exp.n_runs >= 1
        assert options.format in ("parquet", "csv") and isinstance(options.svg, bool)


@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode), st.sampled_from([b"[stream]\n"])))
@example(b'[stream]\nfile = "rows.csv"\n[[learners]]\nlearner = "PrivateBandit"\n')
@example(b"\xff\xfe")
def test_load_config_junk_files(raw: bytes) -> None:
    folder = tempfile.mkdtemp(prefix="dponline-fuzz-")
    path = os.path.join(folder, "sweep.toml")
    with open(path, "wb") as f:
        f.write(raw)
    attempt(lambda: load_config(path))


@given(st.one_of(toml_values, st.sampled_from(JUNK)), st.one_of(st.integers(1, 5), ints))
@example({"kind": "box", "lower": "x"}, 3)
@example({"kind": "l2ball", "radius": None}, 3)
@example({"kind": "simplex"}, 2**64)
def test_build_domain(spec: Any, dim: Any) -> None:
    ok, d = attempt(lambda: build_domain(spec, dim, "learners[0].domain"))
    if ok:
        assert d.dim == int(dim)


@given(st.one_of(toml_values, st.sampled_from(JUNK), st.sampled_from(["os:getcwd", ":", "x:", "dponline:nope"])))
def test_resolve_learner(name: Any) -> None:
    ok, factory = attempt(lambda: resolve_learner(name, "learners[0].learner"))
    if ok:
        assert callable(factory)


def test_allowed_errors_are_the_library_errors() -> None:
    """The premise of every property here: the library's errors are what a refusal may raise."""
    assert ALLOWED[0] is dponline.DPOnlineError
    with pytest.raises(dponline.DPOnlineError):
        HonakerTree(0, 8, scale=1.0)
