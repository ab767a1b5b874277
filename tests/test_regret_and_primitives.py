"""Comparators in hindsight, Frank-Wolfe and sphere sampling from Python."""

import math
import pickle

import numpy as np
import pytest
from conftest import Z
from scipy import stats

import dponline
from dponline import losses, regret
from dponline.datasets import load_nyse
from dponline.domains import L2Ball, Simplex, UniformMatroid


def test_bcrp_on_the_real_nyse_sequence_matches_the_literature():
    """The BCRP of the 36 NYSE stocks over 1962-1984 grows wealth ≈ 250.6-fold (Cover 1991; Borodin et al.
    2004 report 250.60); the uniform CRP ≈ 27.08."""
    fam = losses.PortfolioLogLoss(load_nyse().relatives)
    best = regret.best_constant_rebalanced_portfolio(fam)
    assert math.exp(-best.total_loss) == pytest.approx(250.6, rel=5e-4)
    assert best.gap < 1e-6
    assert Simplex(36).contains(best.x, atol=1e-12)
    # First-order optimality on the simplex: every held asset has the minimal gradient coordinate.
    R = fam.data
    grad = -(1.0 / (R @ best.x)) @ R
    held = best.x > 1e-9
    assert np.ptp(grad[held]) < 1e-6 and grad.min() >= grad[held].max() - 1e-6
    ucrp = fam.cumulative_at(np.full(36, 1 / 36), [fam.horizon])[0]
    assert math.exp(-ucrp) == pytest.approx(27.08, rel=1e-3)


def test_linear_comparator_uses_row_multiplicities():
    C = np.array([[1.0, 0.0], [0.0, 1.0], [0.2, 0.3]])
    fam = losses.Linear(C, horizon=1000, resample="bootstrap", seed=4)
    counts = fam.row_counts()
    assert counts.sum() == 1000
    best = regret.best_fixed(fam, Simplex(2))
    total = counts @ C
    assert best.total_loss == pytest.approx(total.min())
    rows = fam.row_indices()
    assert np.array_equal(np.bincount(rows.astype(np.int64), minlength=3), counts)


def _simplex_projection(v):
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1
    k = np.nonzero(u - css / np.arange(1, len(v) + 1) > 0)[0][-1]
    return np.maximum(v - css[k] / (k + 1), 0)


@pytest.mark.parametrize("k", [10, 100, 1000])
def test_frank_wolfe_reaches_the_projection_within_lemma_c4(k):
    v = np.random.default_rng(k).normal(size=12)
    result = dponline.frank_wolfe(Simplex(12), v, k)
    exact = _simplex_projection(v)
    assert np.linalg.norm(result.x - exact) <= math.sqrt(20) * math.sqrt(2) / math.sqrt(k)
    assert np.allclose(result.weights @ result.vertices, result.x, atol=1e-12)
    assert result.weights.sum() == pytest.approx(1.0)
    assert result.gap >= -1e-12


def test_frank_wolfe_vertex_sampling_has_the_right_mean():
    v = np.array([0.9, 0.4, 0.1, -0.3, 0.7, 0.2])
    result = dponline.frank_wolfe(UniformMatroid(6, 2), v, 200)
    rng = np.random.default_rng(0)
    draws = np.array([result.sample_vertex(rng) for _ in range(40_000)])
    assert np.all(draws.sum(axis=1) == 2)
    sd = np.sqrt(result.x * (1 - result.x) / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - result.x) <= Z * sd + 1e-12)


def test_sphere_directions_are_uniform():
    u = dponline.sample_sphere(3, 100_000, seed=1)
    assert np.allclose(np.linalg.norm(u, axis=1), 1.0)
    # In 3-D, each coordinate of a uniform unit vector is uniform on [-1, 1] (Archimedes).
    assert stats.kstest(u[:, 0], stats.uniform(loc=-1, scale=2).cdf).pvalue > 1e-6
    inside = dponline.sample_sphere(3, 100_000, ball=True, seed=2)
    r = np.linalg.norm(inside, axis=1)
    assert stats.kstest(r, lambda x: np.clip(x, 0, 1) ** 3).pvalue > 1e-6
    tangent = dponline.sample_sphere(5, 1000, domain=Simplex(5), seed=3)
    assert np.allclose(tangent.sum(axis=1), 0.0, atol=1e-12)


def test_loss_families_pickle_and_refuse_bad_input():
    fam = losses.PortfolioLogLoss(load_nyse().relatives[:100], horizon=500, resample="bootstrap", seed=9)
    clone = pickle.loads(pickle.dumps(fam))
    x = np.full(36, 1 / 36)
    assert clone.cumulative_at(x, [500]) == fam.cumulative_at(x, [500])
    with pytest.raises(dponline.InvalidInputError, match="> 0"):
        losses.PortfolioLogLoss(np.array([[1.0, -0.5]]))
    with pytest.raises(dponline.NonFiniteError):
        losses.Linear(np.array([[1.0, np.nan]]))
    with pytest.raises(dponline.InvalidInputError, match="horizon"):
        losses.Linear(np.ones((3, 2)), horizon=10)
    with pytest.raises(dponline.InvalidInputError, match="seed"):
        losses.Linear(np.ones((3, 2)), horizon=10, resample="bootstrap")
    ball = L2Ball(2)
    assert ball.contains(dponline.frank_wolfe(ball, np.array([3.0, 4.0]), 50).x)


def test_run_result_regret_covers_the_rounds_of_its_own_run():
    """``RunResult.regret``: the first run's curve is :func:`regret.regret_curve`'s, a later run is compared over its
    own rounds (the two runs' final regrets add up to the whole horizon's), and the submodular comparator gives
    :func:`regret.submodular_regret_curve`'s ``(1 − 1/e)``-regret."""
    from dponline import submodular

    rng = np.random.default_rng(0)
    family = losses.Linear(rng.random((200, 4)), horizon=200)
    learner = dponline.DPFTRL(Simplex(4), horizon=200, epsilon=None, loss_bound=4.0)
    best = regret.best_fixed(family, Simplex(4))
    first, second = learner.run(family, rounds=80, checkpoints=8), learner.run(family, checkpoints=12)
    np.testing.assert_allclose(
        first.regret(family, best), regret.regret_curve(family, first.checkpoints, first.cumulative_loss, best)
    )
    whole = first.total_loss + second.total_loss - best.total_loss
    assert first.regret(family, best)[-1] + second.regret(family, best)[-1] == pytest.approx(whole, rel=1e-12)
    # the later run alone: its loss minus the comparator's over rounds 81..200
    comparator_tail = best.total_loss - family.cumulative_at(best.x, [80])[0]
    assert second.regret(family, best)[-1] == pytest.approx(second.total_loss - comparator_tail, rel=1e-12)

    coverage = submodular.ProbabilisticCoverage(rng.random((300, 6)) * 0.3)
    picker = dponline.PrivateSubmodular(6, 2, horizon=300, epsilon=None, seed=0)
    greedy = regret.greedy_in_hindsight(coverage, 2)
    run = picker.run(coverage, rounds=100, checkpoints=5)
    np.testing.assert_allclose(
        run.regret(coverage, greedy),
        regret.submodular_regret_curve(coverage, run.checkpoints, run.cumulative_loss, greedy),
    )
    with pytest.raises(dponline.InvalidInputError, match="comparator must be a dponline.regret Comparator"):
        run.regret(coverage, best.x)


def test_run_result_plot_draws_its_checkpoints():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    family = losses.Linear(np.random.default_rng(1).random((50, 3)), horizon=50)
    result = dponline.DPFTRL(Simplex(3), horizon=50, epsilon=None, loss_bound=3.0).run(family, checkpoints=10)
    ax = result.plot()
    x, y = ax.lines[0].get_data()
    np.testing.assert_array_equal(x, result.checkpoints)
    np.testing.assert_array_equal(y, result.cumulative_loss)
    assert ax.get_ylabel() == "cumulative loss"
    curve = result.regret(family, regret.best_fixed(family, Simplex(3)))
    assert result.plot(ax, regret_curve=curve, label="DP-FTRL").get_ylabel() == "regret"
    np.testing.assert_array_equal(ax.lines[1].get_data()[1], curve)
    with pytest.raises(dponline.InvalidInputError, match=r"regret_curve must have shape \(10,\)"):
        result.plot(regret_curve=curve[:-1])
