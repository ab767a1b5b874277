"""Property-based fuzzing of the Agarwal-Singh 2017 learners (DPFTRL, DPFTPL, PrivateEXP3, PrivateSCRiBLe), in the
style of ``tests/test_fuzz.py`` (shared strategies and checks in ``tests/_fuzz.py``).

Every constructor gets every keyword with generated values (NumPy scalars, extreme floats, NaN, ±inf, huge and
junk sizes); every protocol property plays a random sequence of calls — ``ask``, ``tell`` with finite, junk, NaN,
huge and wrong-length feedback, ``run`` on native families of the right and the wrong shape with junk ``rounds``,
pickle round-trips, ``regret_bound`` — and checks that each call returns a valid result (finite, feasible by the
domain's own ``contains``, consistent with the protocol: ``t`` advances by exactly the rounds played, a pending
point is replayed, ``tell`` needs a pending point) or raises :class:`dponline.DPOnlineError` /
:class:`MemoryError` with the learner byte-identical (pickle) to what it was before.

Profiles (``tests/conftest.py``): ``ci`` (default), ``dev`` (500 examples per property), ``long``.
"""

from __future__ import annotations

import math
import pickle
from typing import Any

import numpy as np
from _fuzz import (
    assert_finite,
    attempt,
    check_guarantee,
    check_params,
    finite_floats,
    finite_vectors,
    ints,
    learner_kwargs,
    moderate,
    reals,
    seeds,
    state_of,
    tolerance,
    unchanged_if_failed,
    valid_domains,
    vectors,
)
from hypothesis import example, given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dponline
from dponline.domains import Box, L1Ball, L2Ball, Simplex

# -- strategies ----------------------------------------------------------------------------------------
RADII = [1.0, 1e-300, 1e149, 5e-324, 0.5, 1e6, 1e-150, 1e-100]
SCRIBLE_MIN_WIDTH = 1e-150  # narrower balls and boxes are refused (the barrier's Hessian ~ 1/width²)


@st.composite
def projection_domains(draw: st.DrawFn, smallest: float = 0.0) -> Any:
    """The domains with an exact Euclidean projection (and SCRiBLe's barriers): simplex, L2 ball, box (radii and
    half-widths ``>= smallest``)."""
    n = draw(st.integers(1, 6))
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return Simplex(max(n, 2))
    if kind == 1:
        return L2Ball(n, radius=draw(st.sampled_from([r for r in RADII if r >= smallest])))
    if kind == 2:  # extreme boxes: huge, tiny, far from the origin
        lo, hi = draw(st.sampled_from([(-1e149, 1e149), (0.0, 1e-9), (1e6, 1e6 + 1e-3), (-1e149, -9e148)]))
        return Box(np.full(n, lo), np.full(n, hi))
    lo = draw(hnp.arrays(np.float64, (n,), elements=moderate))
    return Box(lo, lo + draw(hnp.arrays(np.float64, (n,), elements=st.floats(1e-6, 1e3))))


domains = st.one_of(valid_domains(), projection_domains())
mechanisms = st.sampled_from(["tree", "tree", "honaker", "blt", "other", None])
calibrations = st.sampled_from(["paper", "analytic", "zcdp", "x", None])
flags = st.sampled_from([True, False, 0, None])
# Protocol learners: a seed (pickles byte-identically) or the OS-keyed generator (its secret state is never
# pickled, so the byte-identity checks hold as well).
randomness = st.sampled_from([{"seed": 7}, {"seed": 7}, {"secure": True}])


def check_privacy(learner: Any, epsilon: Any) -> None:
    if epsilon is None:
        assert learner.privacy is None
        return
    assert learner.privacy is not None
    check_guarantee(learner.privacy)


def constructed(cls: Any, first: Any, kwargs: dict[str, Any]) -> Any:
    """``cls(first, **kwargs)`` checked fresh (round 0 of the declared horizon, valid params and guarantee), or
    ``None`` when it was refused (with an allowed error)."""
    ok, learner = attempt(lambda: cls(first, **kwargs))
    if not ok:
        return None
    assert learner.t == 0 and learner.horizon == int(kwargs["horizon"])
    check_params(learner.params)
    check_privacy(learner, kwargs["epsilon"])
    return learner


def check_point(d: Any, x: Any) -> None:
    assert isinstance(x, np.ndarray) and x.shape == (d.dim,) and x.dtype == np.float64
    assert_finite(x)
    assert d.contains(x, tolerance(d)), x


def check_run(learner: Any, result: Any, t0: int, rounds: int, d: Any | None) -> None:
    assert result.rounds == rounds
    assert learner.t == t0 + rounds, (learner.t, t0, rounds)
    assert math.isfinite(result.total_loss)
    assert result.cumulative_loss.shape == result.checkpoints.shape
    assert_finite(result.cumulative_loss)
    assert 0 <= result.clipped <= rounds
    if rounds:
        assert result.checkpoints[-1] == t0 + rounds
        assert result.cumulative_loss[-1] == result.total_loss
    if d is not None:
        check_point(d, result.final_point)


def family_rows(n: int) -> st.SearchStrategy[Any]:
    """Loss rows of ``n`` columns (or a neighbouring wrong width), moderate or extreme values."""
    width = st.sampled_from([n, n, n, n + 1, max(n - 1, 0)])
    return st.tuples(st.integers(1, 4), width).flatmap(
        lambda s: st.one_of(
            hnp.arrays(np.float64, s, elements=moderate), hnp.arrays(np.float64, s, elements=finite_floats)
        )
    )


junk_rounds = st.one_of(st.integers(0, 300), st.sampled_from([-1, 2**64, 2**63, 1.5, None, "3", True, np.int64(5)]))


def linear_family(data: st.DataObject, n: int) -> Any:
    rows = data.draw(family_rows(n), "rows")
    bound = data.draw(st.sampled_from([None, 1.0, 1e-3]), "norm_bound")
    return dponline.losses.Linear(rows, norm_bound=bound, horizon=400, resample="cycle")


def portfolio_family(data: st.DataObject, n: int) -> Any:
    width = data.draw(st.sampled_from([n, n, max(n, 1) + 1]), "portfolio width")
    rows = data.draw(
        hnp.arrays(
            np.float64,
            (data.draw(st.integers(1, 4), "portfolio rows"), width),
            elements=st.one_of(st.floats(1e-3, 1e3), st.sampled_from([5e-324, 1e-300, 1e300])),
        ),
        "relatives",
    )
    declared = data.draw(st.sampled_from([None, (0.5, 2.0), (1.0, 1.0), (1e-6, 1e6)]), "relative_range")
    return dponline.losses.PortfolioLogLoss(rows, relative_range=declared, horizon=400, resample="cycle")


def protocol_kwargs(**more: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid declared arguments of the protocol tests: ``horizon``, ``epsilon``, ``loss_bound``, ``strict`` and
    ``more`` (the randomness is drawn apart)."""
    return st.fixed_dictionaries(
        {
            "horizon": st.integers(1, 400),
            "epsilon": st.sampled_from([None, 1.0, 1e-3]),
            "loss_bound": st.sampled_from([1.0, 1e-6, 1e6]),
            "strict": st.booleans(),
            **more,
        }
    )


protocol_mechanisms = st.sampled_from(["tree", "tree", "honaker", "blt"])


# -- DPFTRL --------------------------------------------------------------------------------------------
dpftrl_kwargs = learner_kwargs(
    "loss_bound",
    regularizer=st.sampled_from([None, "entropy", "euclidean", "x", 1]),
    learning_rate=st.one_of(st.none(), reals),
    dual_bound=st.one_of(st.none(), reals),
    calibration=calibrations,
    strict=flags,
    seed=seeds,
    secure=flags,
    lmo_calls=st.one_of(st.integers(1, 8), ints),
    mechanism=mechanisms,
    loss_shift=st.one_of(st.just(0.0), reals),
)


@given(domains, dpftrl_kwargs)
@example(Simplex(2), {"horizon": 2, "epsilon": None, "loss_bound": 7.634099848333374e307})  # ftrl_bound was inf
@example(L1Ball(1, radius=1e149), {"horizon": 1, "epsilon": 1.0, "loss_bound": 1e6})  # overflow in regret_bound
def test_dpftrl_constructor(d: Any, kwargs: dict[str, Any]) -> None:
    learner = constructed(dponline.DPFTRL, d, kwargs)
    if learner is None:
        return
    assert math.isfinite(learner.params["eta"]) and learner.params["eta"] > 0
    assert_finite(learner.noisy_cumulative_loss)
    check_regret_bound(learner, 200)
    check_first_ask(learner, d)


def _protocol_ops(extra: list[str]) -> st.SearchStrategy[list[str]]:
    ops = ["ask", "tell", "tell", "run", "run_junk", "pickle", "regret_bound", *extra]
    return st.lists(st.sampled_from(ops), max_size=25)


# Objects that are not the learner's loss family, some with an integer ``horizon`` (the wrapper's only check).
JUNK_FAMILIES = [
    None,
    "losses",
    np.zeros((3, 2)),
    dponline.losses.BernoulliArms([0.5, 0.5], horizon=50, seed=1),
    Simplex(2),
    type("Fake", (), {"horizon": 50, "dim": 2})(),
]


def run_junk(learner: Any, data: st.DataObject, allowed: tuple[type, ...] = ()) -> None:
    """``run`` with a junk object must raise an allowed error and change nothing (``allowed``: families the learner
    does accept, skipped)."""
    junk = data.draw(st.sampled_from(JUNK_FAMILIES), "junk family")
    if isinstance(junk, allowed):
        return
    ok, _ = unchanged_if_failed(learner, lambda: learner.run(junk, checkpoints=2))
    assert not ok, f"run accepted {junk!r}"


@given(
    domains,
    protocol_kwargs(delta=st.sampled_from([0.0, 1e-6]), mechanism=protocol_mechanisms),
    _protocol_ops(["run_portfolio"]),
    st.data(),
)
def test_dpftrl_protocol(d: Any, kwargs: dict[str, Any], ops: list[str], data: st.DataObject) -> None:
    kwargs = {**kwargs, **data.draw(randomness, "randomness")}
    if d.kind == "Simplex":
        kwargs["regularizer"] = data.draw(st.sampled_from(["entropy", "euclidean"]), "regularizer")
        kwargs["loss_shift"] = data.draw(st.sampled_from([0.0, -1.25, 3.0]), "loss_shift")
    if data.draw(st.booleans(), "declare learning_rate"):
        kwargs["learning_rate"] = data.draw(st.sampled_from([1e-3, 1.0, 1e6]), "learning_rate")
    learner = dponline.DPFTRL(d, **kwargs)
    _play_vector_learner(learner, d, ops, data, samples=200)


def play_run(learner: Any, op: str, data: st.DataObject, d: Any, pending: Any) -> Any:
    """One ``run`` of a full-information learner on a generated linear (``op == "run"``) or portfolio family with
    junk ``rounds``: a failure leaves the learner unchanged; a success had no pending point and played exactly
    the rounds asked. Returns the family when the run succeeded, else ``None``."""
    make = linear_family if op == "run" else portfolio_family
    ok, fam = attempt(lambda: make(data, d.dim))
    if not ok:
        return None
    t0, rounds = learner.t, data.draw(junk_rounds, "rounds")
    ok, result = unchanged_if_failed(learner, lambda: learner.run(fam, rounds=rounds, checkpoints=3))
    if not ok:
        return None
    assert pending is None, "run with a pending point succeeded"
    assert fam.dim == d.dim
    check_run(learner, result, t0, int(rounds) if rounds is not None else result.rounds, d)
    return fam


def pickled(learner: Any) -> Any:
    """A pickle round-trip that restores the same bytes."""
    clone = pickle.loads(pickle.dumps(learner))
    assert state_of(clone) == state_of(learner)
    return clone


def check_regret_bound(learner: Any, samples: int | None) -> None:
    """``learner.regret_bound()`` (with ``samples`` Monte-Carlo samples unless ``None``) is finite and >= 0, or
    refused: only off the padded tree, the one mechanism the paper's bound covers."""
    kwargs = {} if samples is None else {"samples": samples}
    ok, bound = attempt(lambda: learner.regret_bound(**kwargs))
    if ok:
        assert math.isfinite(bound) and bound >= 0, bound
    else:
        assert learner.mechanism != "tree", bound


def check_first_ask(learner: Any, d: Any) -> None:
    """The first ``ask`` gives a point of ``d``, replayed while the round is pending."""
    x = learner.ask()
    check_point(d, x)
    np.testing.assert_array_equal(learner.ask(), x)


def ask_point(learner: Any, d: Any, pending: np.ndarray | None, refusals: tuple[type, ...]) -> np.ndarray | None:
    """One ``ask`` of a learner playing points of ``d``: answered only before the horizon, with a point of ``d``,
    the pending one again while a round is pending (returns the point now pending); or refused with one of
    ``refusals`` (``HorizonExhaustedError`` only at the horizon), the learner unchanged (returns ``pending``)."""
    t0 = learner.t
    ok, x = unchanged_if_failed(learner, learner.ask)
    if not ok:
        assert isinstance(x, refusals), x
        assert not isinstance(x, dponline.HorizonExhaustedError) or t0 >= learner.horizon
        return pending
    assert t0 < learner.horizon
    check_point(d, x)
    if pending is not None:
        np.testing.assert_array_equal(x, pending)
    return x


def _play_vector_learner(learner: Any, d: Any, ops: list[str], data: st.DataObject, samples: int | None) -> None:
    """The protocol of the full-information learners (DPFTRL, DPFTPL): loss vectors of the domain's dimension."""
    n = d.dim
    pending: np.ndarray | None = None
    for op in ops:
        t0 = learner.t
        if op == "ask":
            pending = ask_point(learner, d, pending, (dponline.HorizonExhaustedError,))
        elif op == "tell":
            loss = data.draw(st.one_of(finite_vectors(n, moderate), finite_vectors(n), vectors(n)), "loss")
            clipped = learner.clipped
            ok, _ = unchanged_if_failed(learner, lambda loss=loss, learner=learner: learner.tell(loss))
            if ok:
                assert pending is not None, "tell without a pending point succeeded"
                assert learner.t == t0 + 1 and learner.clipped - clipped in (0, 1)
                assert_finite(learner.noisy_cumulative_loss)
                pending = None
        elif op in ("run", "run_portfolio"):
            fam = play_run(learner, op, data, d, pending)
            if fam is not None:
                assert_finite(learner.noisy_cumulative_loss)
                group = learner.privacy_per_source_row(fam)
                assert group is None or (math.isfinite(group.epsilon) and 0 <= group.delta <= 1)
        elif op == "run_junk":
            run_junk(learner, data)
        elif op == "pickle":
            learner = pickled(learner)
        else:
            check_regret_bound(learner, samples)


# -- DPFTPL --------------------------------------------------------------------------------------------
dpftpl_kwargs = learner_kwargs(
    "loss_bound", calibration=calibrations, strict=flags, seed=seeds, secure=flags, mechanism=mechanisms
)


@given(domains, dpftpl_kwargs)
@example(
    Simplex(3), {"horizon": 2**63 - 1, "epsilon": None, "loss_bound": 1.0, "mechanism": "honaker"}
)  # OverflowError
def test_dpftpl_constructor(d: Any, kwargs: dict[str, Any]) -> None:
    learner = constructed(dponline.DPFTPL, d, kwargs)
    if learner is None:
        return
    scale = learner.params["noise_scale"]
    assert math.isfinite(scale) and scale >= 0 and (scale > 0 or kwargs["epsilon"] is None)
    check_regret_bound(learner, None)
    check_first_ask(learner, d)


@given(domains, protocol_kwargs(mechanism=protocol_mechanisms), _protocol_ops([]), st.data())
def test_dpftpl_protocol(d: Any, kwargs: dict[str, Any], ops: list[str], data: st.DataObject) -> None:
    calibration = "paper" if kwargs["mechanism"] == "tree" else None
    learner = dponline.DPFTPL(d, delta=1e-6, calibration=calibration, **kwargs, **data.draw(randomness, "randomness"))
    _play_vector_learner(learner, d, ops, data, samples=None)


# -- PrivateEXP3 ---------------------------------------------------------------------------------------
exp3_kwargs = st.fixed_dictionaries(
    {
        "horizon": st.one_of(st.integers(1, 400), ints),
        "epsilon": st.one_of(st.none(), st.sampled_from([1.0, 1e-3, 1e3]), reals),
    },
    optional={
        "loss_bound": st.one_of(st.sampled_from([1.0, 1e-6, 1e6]), reals),
        "strict": flags,
        "seed": seeds,
        "secure": flags,
    },
)


def check_probabilities(learner: Any, arms: int) -> np.ndarray:
    p = learner.probabilities()
    assert isinstance(p, np.ndarray) and p.shape == (arms,) and p.dtype == np.float64
    assert_finite(p)
    assert abs(p.sum() - 1.0) <= 1e-9, p.sum()
    gamma = learner.params["gamma"]
    assert np.all(p >= gamma / arms * (1 - 1e-9)), (p, gamma)  # uniform exploration
    return p


@given(st.one_of(st.integers(-1, 6), ints), exp3_kwargs)
@example(7, {"horizon": 5, "epsilon": 1.0, "loss_bound": 1e-310})  # regret_bound was inf (B'² underflowed)
def test_exp3_constructor(arms: Any, kwargs: dict[str, Any]) -> None:
    learner = constructed(dponline.PrivateEXP3, arms, kwargs)
    if learner is None:
        return
    k = int(arms)
    p = learner.params
    # γ = 0 exactly when no exploration is needed: no noise or one round (c = 2λ ln T = 0), variance tuning.
    assert 0 < p["eta"] and 0 <= p["gamma"] <= 0.5
    assert p["gamma"] > 0 or p["noise_scale"] * math.log(p["horizon"]) < 1e-300
    assert math.isfinite(learner.regret_bound()) and learner.regret_bound() >= 0
    if k <= 10**6:
        check_probabilities(learner, k)
        arm = learner.ask()
        assert isinstance(arm, int) and 0 <= arm < k
        assert learner.ask() == arm


@given(
    st.integers(2, 6), protocol_kwargs(), _protocol_ops(["run_bernoulli", "run_portfolio", "probabilities"]), st.data()
)
def test_exp3_protocol(arms: int, kwargs: dict[str, Any], ops: list[str], data: st.DataObject) -> None:
    learner = dponline.PrivateEXP3(arms, **kwargs, **data.draw(randomness))
    horizon, loss_bound = kwargs["horizon"], kwargs["loss_bound"]
    pending: int | None = None
    for op in ops:
        t0 = learner.t
        if op == "ask":
            ok, arm = unchanged_if_failed(learner, learner.ask)
            if ok:
                assert isinstance(arm, int) and 0 <= arm < arms and t0 < horizon
                assert pending is None or arm == pending
                pending = arm
            else:
                assert isinstance(arm, dponline.HorizonExhaustedError) and t0 >= horizon
        elif op == "tell":
            loss = data.draw(
                st.one_of(st.floats(0, loss_bound), st.sampled_from([-1e-300, 2 * loss_bound, 1e308]), reals), "loss"
            )
            clipped = learner.clipped
            ok, _ = unchanged_if_failed(learner, lambda loss=loss, learner=learner: learner.tell(loss))
            if ok:
                assert pending is not None, "tell without a pending arm succeeded"
                assert learner.t == t0 + 1 and learner.clipped - clipped in (0, 1)
                assert math.isfinite(learner._core.last_release)
                assert_finite(learner._core.log_weights)
                pending = None
        elif op in ("run", "run_bernoulli"):
            k = data.draw(st.sampled_from([arms, arms, arms + 1, arms - 1, 1]), "family arms")
            if op == "run":
                ok, fam = attempt(
                    lambda k=k: dponline.losses.Linear(
                        data.draw(hnp.arrays(np.float64, (data.draw(st.integers(1, 4)), k), elements=finite_floats)),
                        horizon=400,
                        resample="cycle",
                    )
                )
            else:
                means = data.draw(hnp.arrays(np.float64, (k,), elements=st.floats(0, 1)), "means")
                ok, fam = attempt(lambda means=means: dponline.losses.BernoulliArms(means, horizon=400, seed=3))
            if not ok:
                continue
            rounds = data.draw(junk_rounds, "rounds")
            ok, result = unchanged_if_failed(
                learner, lambda fam=fam, rounds=rounds, learner=learner: learner.run(fam, rounds=rounds, checkpoints=3)
            )
            if ok:
                assert pending is None and fam.dim == arms
                check_run(learner, result, t0, int(rounds) if rounds is not None else result.rounds, None)
                assert result.final_point.shape == (arms,)
        elif op == "run_junk":
            run_junk(learner, data, allowed=(type(JUNK_FAMILIES[3]),) if arms == 2 else ())
        elif op == "run_portfolio":
            ok, fam = attempt(lambda: portfolio_family(data, arms))
            if not ok:
                continue
            ok, _ = unchanged_if_failed(learner, lambda fam=fam, learner=learner: learner.run(fam, checkpoints=2))
            assert not ok, "PrivateEXP3 ran on a portfolio family"
        elif op == "probabilities":
            check_probabilities(learner, arms)
        elif op == "pickle":
            clone = pickled(learner)
            np.testing.assert_array_equal(clone.probabilities(), learner.probabilities())
            learner = clone
        else:
            bound = learner.regret_bound()
            assert math.isfinite(bound) and bound >= 0


# -- PrivateSCRiBLe ------------------------------------------------------------------------------------
scrible_kwargs = learner_kwargs("loss_bound", delta=False, strict=flags, seed=seeds, secure=flags)


@given(domains, scrible_kwargs)
def test_scrible_constructor(d: Any, kwargs: dict[str, Any]) -> None:
    learner = constructed(dponline.PrivateSCRiBLe, d, kwargs)
    if learner is None:
        return
    assert d.kind in ("Box", "L2Ball", "Simplex")
    assert math.isfinite(learner.regret_bound()) and learner.regret_bound() >= 0
    check_point(d, learner._core.center)
    check_first_ask(learner, d)


@given(projection_domains(SCRIBLE_MIN_WIDTH), protocol_kwargs(), _protocol_ops(["run_portfolio"]), st.data())
def test_scrible_protocol(d: Any, kwargs: dict[str, Any], ops: list[str], data: st.DataObject) -> None:
    learner = dponline.PrivateSCRiBLe(d, **kwargs, **data.draw(randomness))
    loss_bound = kwargs["loss_bound"]
    n = d.dim
    pending: np.ndarray | None = None
    for op in ops:
        t0 = learner.t
        if op == "ask":
            pending = ask_point(learner, d, pending, (dponline.HorizonExhaustedError, dponline.ConvergenceError))
        elif op == "tell":
            value = (
                float(np.dot(data.draw(finite_vectors(n, moderate), "loss vector"), pending))
                if pending is not None
                else 0.0
            )
            loss = data.draw(
                st.one_of(st.just(value), st.sampled_from([-2 * loss_bound, 2 * loss_bound, 1e308, -1e308]), reals),
                "loss",
            )
            clipped = learner.clipped
            ok, _ = unchanged_if_failed(learner, lambda loss=loss, learner=learner: learner.tell(loss))
            if ok:
                assert pending is not None, "tell without a pending point succeeded"
                assert learner.t == t0 + 1 and learner.clipped - clipped in (0, 1)
                check_point(d, learner._core.center)
                pending = None
        elif op == "run_junk":
            run_junk(learner, data)
        elif op in ("run", "run_portfolio"):
            fam = play_run(learner, op, data, d, pending)
            assert fam is None or op == "run", "PrivateSCRiBLe ran on a portfolio family"
        elif op == "pickle":
            learner = pickled(learner)
        else:
            bound = learner.regret_bound()
            assert math.isfinite(bound) and bound >= 0
    note(f"t={learner.t}, clipped={learner.clipped}")
