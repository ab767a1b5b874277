"""Regret bounds that hold and inform: every default private learner's ``regret_bound()`` is a ``RegretBound`` —
the bound beside the trivial bound (the largest possible regret under the declared constants) — that holds on
seeded runs of several streams, and says when it is vacuous; combinations without a proved bound raise."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dponline
from dponline.domains import Box, L2Ball, Simplex, UniformMatroid
from dponline.losses import Linear
from dponline.regret import RegretBound, best_fixed

T = 20_000


def _streams(n: int) -> dict[str, np.ndarray]:
    """Two linear streams: a drifting mean with Gaussian jitter, and an adversarial-looking alternation."""
    rng = np.random.default_rng(7)
    drift = np.full(n, 0.4 / math.sqrt(n)) + 0.3 * rng.standard_normal((2_000, n))
    drift /= np.maximum(1.0, np.linalg.norm(drift, axis=1, keepdims=True))
    flip = np.where(np.arange(2_000)[:, None] % 3 == 0, 1.0, -0.6) * np.eye(n)[0] / 1.0
    return {"drift": drift, "alternating": flip}


def _check(bound: RegretBound, measured: float, trivial: float) -> None:
    assert isinstance(bound, RegretBound) and isinstance(bound, float)
    assert math.isfinite(bound) and bound.trivial == pytest.approx(trivial, rel=1e-12)
    assert bound.vacuous == (float(bound) >= trivial) and bound.informative == (not bound.vacuous)
    assert bound.ratio == pytest.approx(float(bound) / trivial, rel=1e-12)
    # The bound bounds the expected regret; the seed-mean measured regret stays below it (the bounds are worst-case
    # constants, far above the mean at these sizes), and no play exceeds the trivial bound.
    assert measured <= bound
    assert measured <= trivial


def _mean_regret(make: Callable[[int], Any], fam: Any, best: float) -> tuple[float, Any]:
    """The mean regret against ``best`` of the learners ``make(seed)`` for seeds 0, 1, 2 run natively on ``fam``,
    and the last learner."""
    regrets = []
    for seed in range(3):
        learner = make(seed)
        regrets.append(learner.run(fam, checkpoints=1).total_loss - best)
    return float(np.mean(regrets)), learner


def _stream_regret(make: Callable[[int], Any], stream: str, domain: Any, seed: int, **family: Any) -> tuple[float, Any]:
    """:func:`_mean_regret` on the stream ``stream`` of :func:`_streams` (``domain.dim`` columns) bootstrapped to
    ``T`` rounds with seed ``seed`` (``family``: more :class:`Linear` keywords), against the best fixed point of
    ``domain`` in hindsight."""
    fam = Linear(_streams(domain.dim)[stream], horizon=T, resample="bootstrap", seed=seed, **family)
    return _mean_regret(make, fam, best_fixed(fam, domain=domain).total_loss)


@pytest.mark.parametrize("stream", ["drift", "alternating"])
@pytest.mark.parametrize("epsilon,delta", [(1.0, 0.0), (1.0, 1e-6)])
def test_private_bandit(stream, epsilon, delta):
    mean, learner = _stream_regret(
        lambda seed: dponline.PrivateBandit(
            L2Ball(3, 1.0), horizon=T, epsilon=epsilon, delta=delta, lipschitz=1.0, seed=seed
        ),
        stream,
        L2Ball(3, 1.0),
        1,
        norm_bound=1.0,
    )
    p = learner.params
    _check(learner.regret_bound(), mean, T * min(p["lipschitz"] * p["diameter"], 2 * p["loss_bound"]))


@pytest.mark.parametrize("stream", ["drift", "alternating"])
@pytest.mark.parametrize("mechanism", ["honaker", "blt"])
def test_private_bandit_other_mechanisms_floating_point(stream, mechanism):
    """Honaker / BLT releases (floating-point): the bound with E‖Z_R‖₂ <= sqrt(n·Var·v_max) holds and is below the
    padded tree's at the same (ε, δ)."""
    kw = dict(horizon=T, epsilon=1.0, delta=1e-6, lipschitz=1.0, sampler="floating-point", calibration="analytic")
    mean, learner = _stream_regret(
        lambda seed: dponline.PrivateBandit(L2Ball(3, 1.0), mechanism=mechanism, seed=seed, **kw),
        stream,
        L2Ball(3, 1.0),
        1,
        norm_bound=1.0,
    )
    p = learner.params
    bound = learner.regret_bound()
    _check(bound, mean, T * min(p["lipschitz"] * p["diameter"], 2 * p["loss_bound"]))
    assert mechanism in bound.source
    assert bound < dponline.PrivateBandit(L2Ball(3, 1.0), mechanism="tree", seed=0, **kw).regret_bound()


@pytest.mark.parametrize("mechanism", ["honaker", "blt"])
def test_private_bandit_refuses_a_bound_on_the_exact_path_of_other_mechanisms(mechanism):
    learner = dponline.PrivateBandit(Simplex(3), horizon=100, epsilon=1.0, lipschitz=1.0, mechanism=mechanism, seed=0)
    with pytest.raises(dponline.DPOnlineError, match="mechanism='tree', or mechanism=.* with sampler='floating-point'"):
        learner.regret_bound()


_TOP_UP = dict(sampler="floating-point", calibration="analytic", top_up=True)


@pytest.mark.parametrize("stream", ["drift", "alternating"])
@pytest.mark.parametrize("domain", [Simplex(4), L2Ball(4, 1.0), Box([-1.0] * 4, [1.0] * 4)])
@pytest.mark.parametrize("mechanism", ["honaker", "blt"])
def test_dp_ftrl_top_up(stream, domain, mechanism):
    """The Gaussian top-up makes every release N(0, σ² v_max I): Theorem 3.1's bound (with that Z) holds."""
    kw = dict(horizon=T, epsilon=1.0, delta=1e-6, loss_bound=2.0)
    mean, learner = _stream_regret(
        lambda seed: dponline.DPFTRL(domain, mechanism=mechanism, seed=seed, **kw, **_TOP_UP), stream, domain, 2
    )
    p = learner.params
    assert p["release_variance"] == pytest.approx(p["noise_scale"] ** 2 * p["top_up_variance"], rel=1e-12)
    width = 2.0 if p["regularizer"] == "entropy" else domain.diameter
    bound = learner.regret_bound(samples=2_000)
    _check(bound, mean, T * p["dual_bound"] * width)
    assert "top-up" in bound.source


@pytest.mark.parametrize("stream", ["drift", "alternating"])
@pytest.mark.parametrize("mechanism", ["honaker", "blt"])
def test_dp_ftpl_top_up(stream, mechanism):
    domain = UniformMatroid(4, 2)
    mean, learner = _stream_regret(
        lambda seed: dponline.DPFTPL(
            domain, horizon=T, epsilon=1.0, delta=1e-6, loss_bound=1.0, mechanism=mechanism, seed=seed, **_TOP_UP
        ),
        stream,
        domain,
        3,
    )
    p = learner.params
    # σ_regret puts the topped-up perturbation s = σ·sqrt(v_max) at s* (or above, when privacy needs more).
    assert p["noise_scale"] * math.sqrt(p["top_up_variance"]) >= p["sigma_regret"] * p["release_sd"] * (1 - 1e-12)
    _check(learner.regret_bound(), mean, T * p["loss_bound"] * p["diameter"])


def test_top_up_releases_are_identically_distributed():
    """The Lemma, measured: without the top-up BLT releases L̃_0 exactly and later releases with growing variance;
    with it every release's 5,000 coordinates have sample variance σ² v_max (6 sd of sqrt(2/n), alpha ~ 1e-9)."""
    n, horizon = 5_000, 40
    kw = dict(horizon=horizon, epsilon=1.0, delta=1e-6, loss_bound=1.0, mechanism="blt", seed=11)
    raw = dponline.DPFTRL(L2Ball(n, 1.0), sampler="floating-point", calibration="analytic", **kw)
    topped = dponline.DPFTRL(L2Ball(n, 1.0), **_TOP_UP, **kw)
    target = topped.params["release_variance"]
    assert np.all(raw.noisy_cumulative_loss == 0.0)
    for t in range(horizon + 1):
        if t:
            for learner in (raw, topped):
                learner.ask()
                learner.tell(np.zeros(n))
        var = float(np.mean(topped.noisy_cumulative_loss**2))
        assert abs(var / target - 1) < 6 * math.sqrt(2 / n), (t, var, target)
    assert float(np.mean(raw.noisy_cumulative_loss**2)) == pytest.approx(target, rel=6 * math.sqrt(2 / n))


@pytest.mark.parametrize("cls", [dponline.DPFTRL, dponline.DPFTPL])
@pytest.mark.parametrize("mechanism", ["honaker", "blt"])
def test_refusals_name_the_valid_choices(cls, mechanism):
    """Without the top-up, DPFTPL on Honaker / BLT releases has no proved bound (its argmin is not Lipschitz): the
    error names the padded tree and the top-up combination; DPFTRL has the Lipschitz bound there (and the
    perturbation bound on Gaussian BLT, whose releases are nested). top_up=True where it cannot hold is refused at
    construction, naming the valid one."""
    kw = dict(horizon=64, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=0)
    domain = Simplex(3) if cls is dponline.DPFTRL else UniformMatroid(3, 1)
    raw = cls(domain, mechanism=mechanism, sampler="floating-point", calibration="analytic", **kw)
    if cls is dponline.DPFTRL:
        terms = raw.regret_bound_terms()
        assert float(raw.regret_bound()) == terms["lipschitz" if mechanism == "honaker" else "perturbation"]
    else:
        with pytest.raises(dponline.DPOnlineError) as info:
            raw.regret_bound()
        for choice in (
            "mechanism='tree'",
            f"mechanism={mechanism!r}",
            "delta > 0",
            "sampler='floating-point'",
            "top_up=True",
        ):
            assert choice in str(info.value)
    valid = "top_up=True needs delta > 0 .*sampler='floating-point' and mechanism='honaker' or 'blt'"
    with pytest.raises(dponline.InvalidInputError, match=valid):
        cls(domain, mechanism=mechanism, top_up=True, **kw)  # the exact sampler (default)
    with pytest.raises(dponline.InvalidInputError, match=valid):
        cls(domain, mechanism="tree", sampler="floating-point", top_up=True, **kw)
    if cls is dponline.DPFTRL:
        with pytest.raises(dponline.InvalidInputError, match=valid):
            cls(domain, mechanism=mechanism, sampler="floating-point", top_up=True, **{**kw, "delta": 0.0})


@pytest.mark.parametrize("stream", ["drift", "alternating"])
@pytest.mark.parametrize(
    "domain,delta", [(Simplex(4), 0.0), (L2Ball(4, 1.0), 1e-6), (Box([-1.0] * 4, [1.0] * 4), 1e-6)]
)
def test_dp_ftrl(stream, domain, delta):
    mean, learner = _stream_regret(
        lambda seed: dponline.DPFTRL(domain, horizon=T, epsilon=1.0, delta=delta, loss_bound=2.0, seed=seed),
        stream,
        domain,
        2,
    )
    p = learner.params
    width = 2.0 if p["regularizer"] == "entropy" else domain.diameter
    _check(learner.regret_bound(samples=2_000), mean, T * p["dual_bound"] * width)


@pytest.mark.parametrize("stream", ["drift", "alternating"])
@pytest.mark.parametrize("domain", [Simplex(4), L2Ball(4, 1.0), Box([-1.0] * 4, [1.0] * 4)])
@pytest.mark.parametrize("mechanism", ["tree", "honaker", "blt"])
@pytest.mark.parametrize("delta,sampler", [(0.0, "exact"), (1e-6, "exact"), (1e-6, "floating-point")])
def test_dp_ftrl_lipschitz_bound_every_mechanism(stream, domain, mechanism, delta, sampler):
    """The Lipschitz FTRL bound holds for every mechanism and sampler, the raw (not topped-up) Honaker and BLT
    releases included, whose noise has another law at every t: measured regret <= the Lipschitz term alone, and
    regret_bound() is the smallest valid bound. For Honaker / BLT the default step size minimises it."""
    fam = Linear(_streams(4)[stream], horizon=T, resample="bootstrap", seed=2)
    extra = {"calibration": "analytic"} if sampler == "floating-point" and mechanism != "tree" else {}
    kw = dict(horizon=T, epsilon=1.0, delta=delta, loss_bound=2.0, mechanism=mechanism, sampler=sampler, **extra)
    mean, learner = _mean_regret(
        lambda seed: dponline.DPFTRL(domain, seed=seed, **kw), fam, best_fixed(fam, domain=domain).total_loss
    )
    p = learner.params
    terms = learner.regret_bound_terms(samples=2_000)
    width = 2.0 if p["regularizer"] == "entropy" else domain.diameter
    assert math.isfinite(terms["lipschitz"]) and mean <= terms["lipschitz"]
    bound = learner.regret_bound(samples=2_000)
    _check(bound, mean, T * p["dual_bound"] * width)
    assert float(bound) <= terms["lipschitz"]
    G, D = p["dual_bound"], p["regularizer_range"]
    if mechanism == "honaker" or (mechanism == "blt" and delta == 0.0):  # not nested: the Lipschitz bound
        assert float(bound) == terms["lipschitz"] and math.isinf(terms["perturbation"])
        # η minimises D_R/η + η(T G² + G S): the bound is 2·sqrt(D_R (T G² + G S)).
        assert terms["lipschitz"] == pytest.approx(2 * math.sqrt(D * (T * G * G + G * p["deviation_sum"])))
    elif mechanism == "blt":  # Gaussian BLT releases are nested: the perturbation bound holds and sets η
        assert mean <= terms["perturbation"] < terms["lipschitz"] and float(bound) == terms["perturbation"]
        c = 0.5 if p["regularizer"] == "entropy" else p["dim"]
        extra = c * p["release_variance"] + G * p["offset_sum"]
        assert (p["offset_sum"] > 0) == (sampler == "exact")
        # η minimises D_R/η + η(T G² + c v + G O): the bound is 2·sqrt(D_R (T G² + c v + G O)).
        assert terms["perturbation"] == pytest.approx(2 * math.sqrt(D * (T * G * G + extra)))
        assert p["eta_rule"].endswith("(perturbation bound)")


@pytest.mark.parametrize("sampler", ["exact", "floating-point"])
def test_gaussian_blt_releases_are_nested(sampler):
    """BLT's decoder is Toeplitz, so with Gaussian noise release t's noise is, in law, release t−1's plus an
    independent r_t·z: nested releases, whose perturbation bound charges the last release's variance σ²·v_T once
    (v_t nondecreasing). On the float path that is exactly the variance a top-up raises every release to, so the
    raw and the topped-up learner get the same step size and the same perturbation bound; Laplace BLT is not
    covered (only the Lipschitz bound)."""
    from dponline.aggregation import BLT

    horizon, n = 4096, 5
    kw = dict(horizon=horizon, epsilon=1.0, delta=1e-6, loss_bound=2.0, mechanism="blt", sampler=sampler, seed=0)
    if sampler == "floating-point":
        kw["calibration"] = "analytic"
    raw = dponline.DPFTRL(Simplex(n), **kw)
    p = raw.params
    blt = BLT(1, horizon, scale=1.0, buffers=6, objective="max", seed=0)  # the learners' BLT (MechanismSpec)
    units = [blt.unit_variance(t) for t in (0, 1, 2, 10, 100, 1000, horizon)]
    assert units == sorted(units) and units[0] == 0.0
    assert p["release_variance"] == pytest.approx(p["noise_scale"] ** 2 * units[-1], rel=1e-12)
    assert math.isfinite(p["perturbation_bound"]) and p["perturbation_bound"] < p["lipschitz_bound"]
    if sampler == "floating-point":
        topped = dponline.DPFTRL(Simplex(n), top_up=True, **kw)
        assert topped.params["top_up_variance"] == pytest.approx(units[-1], rel=1e-12)
        for key in ("eta", "release_variance", "perturbation_bound"):
            assert topped.params[key] == pytest.approx(p[key], rel=1e-12), key
        assert p["offset_sum"] == 0.0
    laplace = dponline.DPFTRL(Simplex(n), **{**kw, "delta": 0.0})
    assert "perturbation_bound" not in laplace.params and laplace.params["eta_rule"].endswith("(Lipschitz bound)")


@pytest.mark.parametrize("stream", ["drift", "alternating"])
def test_dp_ftrl_lipschitz_bound_at_a_large_step_size(stream):
    """At an explicit step size 100× the default, where the noise term dominates, the Lipschitz and the
    perturbation bounds still hold for the raw BLT releases on both samplers."""
    domain = Simplex(4)
    fam = Linear(_streams(4)[stream], horizon=T, resample="bootstrap", seed=2)
    best = best_fixed(fam, domain=domain).total_loss
    for sampler in ("exact", "floating-point"):
        extra = {"calibration": "analytic"} if sampler == "floating-point" else {}
        kw = dict(horizon=T, epsilon=1.0, delta=1e-6, loss_bound=2.0, mechanism="blt", sampler=sampler, **extra)
        fast = dict(kw, learning_rate=100 * dponline.DPFTRL(domain, seed=0, **kw).params["eta"])
        mean, learner = _mean_regret(lambda seed, fast=fast: dponline.DPFTRL(domain, seed=seed, **fast), fam, best)
        eta = fast["learning_rate"]
        assert learner.params["eta"] == eta
        terms = learner.regret_bound_terms()
        # Gaussian BLT's releases are nested: the perturbation bound holds at any step size too.
        assert mean <= terms["lipschitz"] and mean <= terms["perturbation"]


@pytest.mark.parametrize("stream", ["drift", "alternating"])
def test_dp_ftpl(stream):
    domain = UniformMatroid(4, 2)
    mean, learner = _stream_regret(
        lambda seed: dponline.DPFTPL(domain, horizon=T, epsilon=1.0, delta=1e-6, loss_bound=1.0, seed=seed),
        stream,
        domain,
        3,
    )
    p = learner.params
    _check(learner.regret_bound(), mean, T * p["loss_bound"] * p["diameter"])


@pytest.mark.parametrize("stream", ["drift", "alternating"])
@pytest.mark.parametrize("domain,delta", [(Simplex(4), 0.0), (UniformMatroid(4, 2), 1e-6)])
def test_noisy_oco(stream, domain, delta):
    mean, learner = _stream_regret(
        lambda seed: dponline.NoisyOCO(domain, horizon=T, epsilon=1.0, delta=delta, lipschitz=1.0, seed=seed),
        stream,
        domain,
        3,
    )
    _check(learner.regret_bound(), mean, T * 1.0 * domain.diameter)


@pytest.mark.parametrize("means", [[0.5, 0.45, 0.6, 0.7], [0.9, 0.1, 0.5, 0.5]])
def test_private_exp3(means):
    """Expected losses (a fixed row), so the run's regret is the pseudo-regret exactly."""
    row = np.asarray(means)[None, :]
    fam = Linear(row, horizon=T, resample="cycle")
    mean, learner = _mean_regret(
        lambda seed: dponline.PrivateEXP3(len(means), horizon=T, epsilon=1.0, seed=seed), fam, T * row.min()
    )
    _check(learner.regret_bound(), mean, T * 1.0)


@pytest.mark.parametrize("c", [[0.5, -0.3, 0.2], [-0.9, 0.1, 0.0]])
def test_private_scrible(c):
    row = np.asarray([c])
    fam = Linear(row, horizon=T, resample="cycle")
    best = -np.linalg.norm(row) * T
    mean, learner = _mean_regret(
        lambda seed: dponline.PrivateSCRiBLe(L2Ball(3, 1.0), horizon=T, epsilon=1.0, loss_bound=1.0, seed=seed),
        fam,
        best,
    )
    _check(learner.regret_bound(), mean, 2.0 * T)


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_submodular_learners_report_the_trivial_bound(feedback):
    learner = dponline.PrivateSubmodular(10, 2, horizon=T, epsilon=1.0, delta=1e-6, feedback=feedback, seed=0)
    bound = learner.regret_bound()
    assert isinstance(bound, RegretBound) and bound.trivial == pytest.approx((1 - 1 / math.e) * T, rel=1e-12)
    assert bound.vacuous == (float(bound) >= bound.trivial)
    dr = dponline.PrivateDRSubmodular(UniformMatroid(6, 2, base=False), horizon=T, epsilon=1.0, delta=1e-6, seed=0)
    assert dr.regret_bound().trivial == pytest.approx((1 - 1 / math.e) * T, rel=1e-12)


def test_a_vacuous_bound_says_so_and_an_informative_one_too():
    """Non-private DP-FTRL on the simplex at T = 10⁶ is far below T·2G; PrivateBandit at ε = 1 is not (its noise
    term dominates at this horizon): both are reported, never a silent number."""
    good = dponline.DPFTRL(Simplex(4), horizon=10**6, epsilon=None, loss_bound=1.0, seed=0).regret_bound()
    assert good.informative and good.ratio < 0.01
    bad = dponline.PrivateBandit(L2Ball(5, 1.0), horizon=10**6, epsilon=1.0, lipschitz=1.0, seed=0).regret_bound()
    assert bad.vacuous and bad.ratio > 1
    assert "vacuous" in repr(bad) and "informative" in repr(good)


def test_regret_bound_pickles_and_behaves_as_a_float():
    b = RegretBound(12.5, trivial=100.0, source="test")
    back = pickle.loads(pickle.dumps(b))
    assert back == 12.5 and back.trivial == 100.0 and back.source == "test" and back.informative
    assert f"{b:.1f}" == "12.5" and b + 1 == 13.5 and not RegretBound(0.0, trivial=0.0).informative


def test_a_topped_up_learner_pickles_mid_run_and_resumes_bit_identically():
    kw = dict(horizon=50, epsilon=1.0, delta=1e-6, loss_bound=1.0, mechanism="blt", seed=5, **_TOP_UP)
    a = dponline.DPFTRL(Simplex(3), **kw)
    rows = np.random.default_rng(0).uniform(size=(50, 3)) / 3
    for row in rows[:20]:
        a.ask()
        a.tell(row)
    b = pickle.loads(pickle.dumps(a))
    assert b.params["top_up_variance"] == a.params["top_up_variance"] is not None
    for row in rows[20:]:
        assert np.array_equal(a.ask(), b.ask())
        a.tell(row)
        b.tell(row)
    assert np.array_equal(a.noisy_cumulative_loss, b.noisy_cumulative_loss)
