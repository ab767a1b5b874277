"""The exact path of the prefix-sum mechanisms and of the tree-based learners (issue 21, items 2-3): inputs rounded
to a power-of-two grid, exact discrete noise, integer node values, the discrete calibration by default."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from conftest import Z

import dponline
from dponline import DPFTPL, DPFTRL, PrivateBandit, PrivateDRSubmodular, TreeAggregator, privacy
from dponline.aggregation import BLT, HonakerTree, KaryTree
from dponline.domains import L2Ball, Simplex, UniformMatroid
from dponline.errors import InvalidInputError


def discrete_laplace_variance(t: float) -> float:
    """Variance of DLap(t): 2e^{-1/t}/(1 - e^{-1/t})² (Canonne-Kamath-Steinke 2020)."""
    return 2 * math.exp(-1 / t) / math.expm1(-1 / t) ** 2


MAKERS = {
    "padded tree": lambda **kw: TreeAggregator(**kw),
    "tree": lambda **kw: TreeAggregator(padded=False, **kw),
    "honaker": lambda **kw: HonakerTree(**kw),
    "4-ary plain": lambda **kw: KaryTree(k=4, readout="plain", **kw),
    "4-ary honaker": lambda **kw: KaryTree(k=4, **kw),
    "blt": lambda **kw: BLT(buffers=3, **kw),
}


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_exact_variance_matches_the_discrete_laws(name, noise):
    """50,000 coordinates of zero data, every release of a horizon-9 mechanism: the sample variance matches
    unit_variance(t) × the discrete law's variance (discrete Laplace 2e^{-1/t}/(1 − e^{-1/t})², discrete Gaussian
    σ² at 2³⁰ grid units) within Z standard deviations of the sample second moment (relative sd at most
    sqrt((κ − 1)/n), κ <= 6 for these sums of Laplace draws)."""
    dim, horizon = 50_000, 9
    m = MAKERS[name](dim=dim, horizon=horizon, scale=0.75, noise=noise, seed=3)
    assert m.sampler == "exact"
    gamma = m.grid
    units = round(m.scale / gamma)
    assert units * gamma == m.scale and 2**30 <= units <= 2**31
    draw_var = (discrete_laplace_variance(units) if noise == "laplace" else float(units) ** 2) * gamma**2
    for t in range(1, horizon + 1):
        out = m.push(np.zeros(dim))
        expected = m.unit_variance(t) * draw_var
        assert m.variance(t) == pytest.approx(expected, rel=1e-12)
        assert abs(np.mean(out**2) / expected - 1) < Z * math.sqrt(5 / dim), (name, t)


@pytest.mark.parametrize("name", ["padded tree", "tree", "4-ary plain"])
def test_plain_releases_are_integer_multiples_of_the_grid_with_the_rounded_data(name):
    m = MAKERS[name](dim=4, horizon=50, scale=1.0, seed=5)
    grid = m.grid
    assert grid == 2.0**-30
    rows = np.random.default_rng(0).normal(size=(50, 4))
    out = m.push_many(rows)
    units = out / grid
    np.testing.assert_array_equal(units, np.round(units))
    noise_units = units - np.cumsum(np.round(rows / grid), axis=0)
    assert np.abs(noise_units).max() < 2**40


def test_calibration_is_the_discrete_one_and_meets_the_target():
    # Laplace: ε = levels·(⌈Δ₁/γ⌉ + dim)/t exactly, t the least integer meeting ε = 0.5.
    T, dim = 5000, 3
    tree = TreeAggregator.calibrated(dim, T, epsilon=0.5, sensitivity=2.0, seed=0)
    gamma, units = tree.grid, round(tree.scale / tree.grid)
    integer = privacy.levels_touched(T) * (math.ceil(2.0 / gamma) + dim)
    assert integer / units <= 0.5 < integer / (units - 1)
    assert tree.privacy.epsilon == 0.5 and tree.privacy.sampler == "exact"
    assert "discrete Laplace" in tree.privacy.source and "Mironov" not in str(tree.privacy)
    # Gaussian: discrete Gaussian through zCDP/CKS at the integer L2 sensitivity, the least integer σ.
    g = HonakerTree.calibrated(dim, T, epsilon=1.0, delta=1e-6, sensitivity=2.0, seed=0)
    gamma, sigma = g.grid, round(g.scale / g.grid)
    sens = g.sensitivity_l2 * privacy.grid_sensitivity_l2(2.0, gamma, dim)
    assert (
        privacy.discrete_gaussian_delta(1.0, sigma, sens)
        <= 1e-6
        < privacy.discrete_gaussian_delta(1.0, sigma - 1, sens)
    )
    assert g.privacy.noise_multiplier == pytest.approx(sigma / sens, rel=1e-12)
    # About 7% more noise than the analytic continuous Gaussian (privacy.discrete's table).
    analytic = privacy.gaussian_sigma_analytic(1.0, 1e-6, 2.0 * g.sensitivity_l2)
    assert 1.05 < g.scale / analytic < 1.09
    # The float path keeps its calibration and says so.
    f = TreeAggregator.calibrated(dim, T, epsilon=0.5, sensitivity=2.0, seed=0, sampler="floating-point")
    assert f.scale == 2.0 * privacy.levels_touched(T) / 0.5 and f.sampler == "floating-point"
    assert f.privacy.sampler == "floating-point" and "Mironov" in str(f.privacy)
    # calibration="paper" stays reproducible: never below the paper's scale.
    paper = TreeAggregator.calibrated(dim, 1024, epsilon=1.0, delta=1e-6, sensitivity=1.0, calibration="paper")
    assert paper.scale >= 11 * math.log(11 / 1e-6) and paper.sampler == "exact"


def test_calibrations_that_do_not_bound_the_discrete_mechanism_are_refused():
    with pytest.raises(InvalidInputError, match="analytic"):
        TreeAggregator.calibrated(2, 10, epsilon=1.0, delta=1e-6, sensitivity=1.0, calibration="analytic")
    with pytest.raises(InvalidInputError, match="analytic"):
        BLT.calibrated(2, 10, epsilon=1.0, delta=1e-6, sensitivity=1.0, calibration="analytic")
    with pytest.raises(InvalidInputError, match="sampler must be"):
        TreeAggregator(2, 10, scale=1.0, sampler="float")
    with pytest.raises(InvalidInputError, match="sampler must be"):
        BLT(2, 10, scale=1.0, sampler="float")


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("scale", [-1.0, math.nan, math.inf, 1e308, 1e-300, 5e-324, 2.2250738585072014e-308 / 4])
def test_scales_outside_exact_arithmetic_are_refused(name, scale):
    with pytest.raises(InvalidInputError, match="scale"):
        MAKERS[name](dim=2, horizon=8, scale=scale)


def test_scale_zero_is_the_noiseless_float_path():
    m = TreeAggregator(2, 8, scale=0.0)
    assert m.sampler == "floating-point" and m.grid is None
    np.testing.assert_array_equal(m.push(np.array([0.1, 0.2])), [0.1, 0.2])


@pytest.mark.parametrize("name", MAKERS)
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e308, -1e300])
def test_bad_rows_are_refused_and_change_nothing(name, bad):
    m = MAKERS[name](dim=2, horizon=8, scale=1.0, seed=1)
    m.push(np.array([1.0, 2.0]))
    before = pickle.dumps(m)
    with pytest.raises(InvalidInputError, match="x|X"):
        m.push(np.array([0.0, bad]))
    with pytest.raises(InvalidInputError, match="x|X"):
        m.push_many(np.array([[0.0, 1.0], [bad, 0.0]]))
    assert pickle.dumps(m) == before


@pytest.mark.parametrize("name", MAKERS)
def test_pickled_exact_mechanisms_continue_bit_identically(name):
    a = MAKERS[name](dim=3, horizon=40, scale=2.0, noise="gaussian", seed=9)
    a.push_many(np.ones((7, 3)))
    b = pickle.loads(pickle.dumps(a))
    assert b.sampler == "exact" and b.grid == a.grid
    rows = np.arange(30.0).reshape(10, 3)
    np.testing.assert_array_equal(a.push_many(rows), b.push_many(rows))


def test_learners_default_to_the_exact_sampler_and_state_it():
    kw = {"horizon": 200, "epsilon": 1.0, "seed": 0}
    learners = [
        DPFTRL(Simplex(3), loss_bound=1.0, **kw),
        DPFTRL(Simplex(3), loss_bound=1.0, delta=1e-6, mechanism="honaker", **kw),
        DPFTPL(UniformMatroid(5, 2), loss_bound=1.0, delta=1e-6, **kw),
        PrivateBandit(L2Ball(3, 1.0), lipschitz=1.0, delta=1e-6, **kw),
        PrivateDRSubmodular(UniformMatroid(5, 2, base=False), **kw),
        DPFTRL(Simplex(3), loss_bound=1.0, delta=1e-6, mechanism="blt", **kw),
        DPFTRL(Simplex(3), loss_bound=1.0, mechanism="blt", **kw),
        PrivateBandit(L2Ball(3, 1.0), lipschitz=1.0, delta=1e-6, mechanism="blt", **kw),
    ]
    for learner in learners:
        assert learner.privacy.sampler == "exact", type(learner).__name__
        assert "Mironov" not in str(learner.privacy)
        learner.ask()
    blt = DPFTRL(Simplex(3), loss_bound=1.0, delta=1e-6, mechanism="blt", sampler="floating-point", **kw)
    assert blt.privacy.sampler == "floating-point" and "Mironov" in str(blt.privacy)


def test_learners_float_path_is_the_previous_default():
    """sampler="floating-point" keeps the calibration the learners had before the exact default (the paper's, for
    the padded tree), so seeded float runs reproduce."""
    kw = {"horizon": 300, "epsilon": 1.0, "loss_bound": 1.0, "seed": 4}
    f = DPFTRL(Simplex(3), sampler="floating-point", mechanism="tree", **kw)
    paper = DPFTRL(Simplex(3), sampler="floating-point", calibration="paper", **kw)
    assert f.params["noise_scale"] == paper.params["noise_scale"] == 2.0 * privacy.levels_touched(300) / 1.0
    losses = np.random.default_rng(0).uniform(size=(20, 3))
    for row in losses:
        np.testing.assert_array_equal(f.ask(), paper.ask())
        f.tell(row)
        paper.tell(row)
    bandit = PrivateBandit(L2Ball(3, 1.0), horizon=10**4, lipschitz=1.0, epsilon=1.0, delta=1e-6, seed=0)
    lemma = PrivateBandit(
        L2Ball(3, 1.0), horizon=10**4, lipschitz=1.0, epsilon=1.0, delta=1e-6, seed=0, sampler="floating-point"
    )
    assert bandit.params["noise_scale"] < lemma.params["noise_scale"] == lemma.params["lemma_scale"]
    assert isinstance(dponline.PrivateBandit, type)


def test_exact_blt_calibration_adds_the_encoder_rounding_slack():
    """BLT's integer view moves by at most sensitivity_l2·(Δ₂/γ + sqrt(dim)) + 2η·sqrt(T·dim) (L2) or
    sensitivity_l1·(⌈Δ₁/γ⌉ + dim) + 2ηT·dim (L1): the calibration meets exactly that (core ``aggregation::blt``
    Lemma), and the slack is negligible next to the noise in L2."""
    T, dim = 4096, 5
    g = BLT.calibrated(dim, T, epsilon=1.0, delta=1e-6, sensitivity=2.0, buffers=3, seed=0)
    assert g.sampler == "exact" and g.privacy.sampler == "exact" and "Mironov" not in str(g.privacy)
    gamma, sigma = g.grid, round(g.scale / g.grid)
    slack_l1, slack_l2 = g.rounding_slack
    eta = slack_l2 / (2 * math.sqrt(T))
    assert 0.5 < eta < 0.5 + 1e-3 and slack_l1 == pytest.approx(2 * eta * T, rel=1e-12)
    sens = g.sensitivity_l2 * privacy.grid_sensitivity_l2(2.0, gamma, dim) + slack_l2 * math.sqrt(dim)
    delta_at = privacy.discrete_gaussian_delta
    assert delta_at(1.0, sigma, sens) <= 1e-6 < delta_at(1.0, sigma - 1, sens)
    assert slack_l2 * math.sqrt(dim) < 1e-5 * sens
    lap = BLT.calibrated(dim, T, epsilon=1.0, sensitivity=2.0, buffers=3, seed=0)
    gamma, t = lap.grid, round(lap.scale / lap.grid)
    integer = lap.sensitivity_l1 * privacy.grid_sensitivity_l1(2.0, gamma, dim) + lap.rounding_slack[0] * dim
    assert integer / t <= 1.0 < integer / (t - 1)
    assert HonakerTree(2, 8, scale=1.0).rounding_slack == (0.0, 0.0)
    # The float path keeps the analytic calibration and says so.
    f = BLT.calibrated(dim, T, epsilon=1.0, delta=1e-6, sensitivity=2.0, buffers=3, sampler="floating-point")
    assert f.sampler == "floating-point" and f.grid is None and "Mironov" in str(f.privacy)


def test_exact_blt_releases_decode_the_rounded_data():
    """Rows pushed through the exact BLT come back as the running sum of the rounded rows plus noise of the
    stated variance, rounded onto the grid (decoded in float from the integer view: post-processing)."""
    m = BLT(4, 64, scale=1e-6, buffers=3, seed=2)
    rows = np.random.default_rng(1).normal(size=(64, 4))
    out = m.push_many(rows)
    np.testing.assert_array_equal(out / m.grid, np.round(out / m.grid))
    sums = np.cumsum(np.round(rows / m.grid) * m.grid, axis=0)
    sd = math.sqrt(m.variance(64))
    assert np.abs(out - sums).max() < 8 * sd


def test_dpftrl_with_blt_runs_exact_and_replays():
    kw = {"horizon": 300, "epsilon": 1.0, "delta": 1e-6, "loss_bound": 1.0, "mechanism": "blt", "seed": 4}
    a, b = DPFTRL(Simplex(4), **kw), DPFTRL(Simplex(4), **kw)
    assert a.privacy.sampler == "exact"
    losses = np.random.default_rng(0).uniform(size=(50, 4))
    for row in losses[:25]:
        np.testing.assert_array_equal(a.ask(), b.ask())
        a.tell(row)
        b.tell(row)
    c = pickle.loads(pickle.dumps(a))
    for row in losses[25:]:
        np.testing.assert_array_equal(a.ask(), c.ask())
        a.tell(row)
        c.tell(row)
