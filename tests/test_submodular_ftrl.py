"""PrivateSubmodularFTRL: the calibration is one DP-FTRL learner's of dimension k·|U|, the experts follow the
algorithm (a from-scratch numpy reference), the regret stays below its bound, an audit passes and is not blind."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dponline
from dponline.audit import FirstAction, audit, play
from dponline.domains import Simplex
from dponline.regret import APPROXIMATION, greedy_in_hindsight
from dponline.submodular import ProbabilisticCoverage

CONFIGS = [
    {"delta": 1e-6},  # Gaussian, BLT, exact (the defaults)
    {"delta": 1e-6, "mechanism": "tree", "sampler": "floating-point"},  # the paper's padded tree and constants
    {"delta": 1e-6, "mechanism": "blt", "sampler": "floating-point"},  # analytic Gaussian on BLT's columns
    {"delta": 0.0},  # Laplace, Honaker's readout, exact
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_noise_is_that_of_one_dpftrl_learner_over_the_concatenated_rows(config):
    """The Lemma's reduction: the experts' noise equals that of a DPFTRL over ``k·|U|`` coordinates whose centred
    rows are bounded by ``k|U|/2`` (L1) or ``sqrt(k|U|)/2`` (L2), with the same mechanism, sampler, calibration."""
    n, k, T = 12, 3, 5_000
    learner = dponline.PrivateSubmodularFTRL(n, k, horizon=T, epsilon=1.0, seed=0, **config)
    norm = "l1" if config["delta"] == 0 else "l2"
    joint = k * n / 2 if norm == "l1" else math.sqrt(k * n) / 2
    reference = dponline.DPFTRL(Simplex(k * n), horizon=T, epsilon=1.0, loss_bound=joint, seed=0, **config)
    p = learner.params
    expert = n / 2 if norm == "l1" else math.sqrt(n) / 2
    assert (p["norm"], p["joint_loss_bound"], p["expert_loss_bound"]) == (norm, joint, expert)
    assert learner.mechanism == reference.mechanism and learner.sampler == reference.sampler
    assert p["noise"] == reference.params["noise"]
    assert p["noise_scale"] == reference.params["noise_scale"] > 0
    assert learner.privacy.epsilon == 1.0 and learner.privacy.delta == config["delta"]
    assert "one round's function" in learner.privacy.unit
    assert "k*n coordinates" in learner.privacy.source


def test_refuses_bad_arguments():
    with pytest.raises(dponline.InvalidInputError, match="delta is required when epsilon is given"):
        dponline.PrivateSubmodularFTRL(5, 2, horizon=10, epsilon=1.0)
    with pytest.raises(dponline.InvalidInputError, match="ground_set_size must be an integer >= 2"):
        dponline.PrivateSubmodularFTRL(1, 1, horizon=10, epsilon=None)
    with pytest.raises(dponline.InvalidInputError, match="k must be an integer"):
        dponline.PrivateSubmodularFTRL(4, 5, horizon=10, epsilon=None)
    learner = dponline.PrivateSubmodularFTRL(4, 2, horizon=10, epsilon=None)
    learner.ask()
    with pytest.raises(dponline.InvalidInputError, match="kind must be one of"):
        learner.tell(np.zeros(4), kind="weighted")


def _coverage_gains(p: np.ndarray, prefix: list[int]) -> np.ndarray:
    """Marginal gains of probabilistic coverage ``1 − Π(1 − p_a)`` given ``prefix``."""
    survive = float(np.prod([1.0 - p[a] for a in set(prefix)]))
    g = survive * p
    g[list(set(prefix))] = 0.0
    return g


@pytest.mark.parametrize("epsilon", [None, 1.0])
def test_experts_play_the_softmax_of_their_released_gains(epsilon):
    """A numpy reference of the algorithm: given the learner's picks each round, expert ``i``'s gains are those of
    the picks before it, and without noise its next distribution is ``softmax(η·Σ gains)``; with noise it is the
    softmax of some release (checked: a distribution whose log-ratios are η times a finite vector)."""
    rng = np.random.default_rng(3)
    n, k, T = 6, 3, 200
    rows = rng.uniform(0, 0.6, size=(T, n))
    learner = dponline.PrivateSubmodularFTRL(
        n, k, horizon=T + 1, epsilon=epsilon, delta=1e-6 if epsilon else None, seed=1
    )
    eta = learner.params["eta"]
    totals = np.zeros((k, n))
    for t in range(T):
        S = learner.ask()
        picks = learner.picks.tolist()
        assert S.tolist() == list(dict.fromkeys(picks))
        payoff = learner.tell(rows[t])
        assert payoff == pytest.approx(1.0 - np.prod(1.0 - rows[t][S]), abs=1e-15)
        for i in range(k):
            totals[i] += _coverage_gains(rows[t], picks[:i])
    # after round T - 1 (the last round's release plays no further round, and the experts keep their action)
    for i in range(k):
        x = learner.expert_probabilities(i)
        assert x.sum() == pytest.approx(1.0, abs=1e-12)
        if epsilon is None:
            expected = np.exp(eta * (totals[i] - totals[i].max()))
            np.testing.assert_allclose(x, expected / expected.sum(), rtol=1e-9, atol=1e-15)
        else:
            assert np.all(x > 0) and np.all(np.isfinite(np.log(x)))


def test_private_regret_is_below_its_bound_and_it_learns():
    """A planted instance (items 0 and 1 clicked with probability 0.6 and 0.5, the others 0.05): the
    ``(1 − 1/e)``-regret against the greedy set stays below :meth:`regret_bound`, which is informative at
    ``T = 2·10⁵``, and the learner collects more than a random pair does (fixed seeds)."""
    n, k, T = 10, 2, 200_000
    p = np.full(n, 0.05)
    p[:2] = (0.6, 0.5)
    rows = np.clip(np.random.default_rng(5).normal(p, 0.05, size=(64, n)), 0, 1)
    family = ProbabilisticCoverage(rows, horizon=T, resample="cycle")
    greedy = greedy_in_hindsight(family, k)
    learner = dponline.PrivateSubmodularFTRL(n, k, horizon=T, epsilon=1.0, delta=1e-6, seed=7)
    bound = learner.regret_bound()
    result = learner.run(family, checkpoints=10)
    regret = APPROXIMATION * greedy.total_value + result.total_loss
    assert bound.informative and regret <= bound
    random_pair = T * np.mean([1 - (1 - rows[:, a]) * (1 - rows[:, b]) for a in range(n) for b in range(n) if a < b])
    assert -result.total_loss > 1.3 * random_pair


@pytest.mark.slow
def test_audit_passes_at_the_claim_and_refutes_the_non_private_twin():
    """Neighbouring streams over two items that differ in round 1 (item 0 or item 1 clicked for sure), ``k = 1``:
    the action of round 2, audited at the claimed ``(1, 1e-5)`` — the private learner passes; its non-private twin
    (``η ≈ 1.18``: round 2 picks the clicked item with probability 0.76) is refuted against the claim 0.5
    (``ε̂ = 0.74`` from 1,000 trials per input after choosing the event on 1,000 others; the private learner's
    ``ε̂ = 0``), so the audit is not blind. Seeded learners, so the outcome is fixed."""
    a, b = [[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]]

    def build(epsilon):
        return lambda seed: dponline.PrivateSubmodularFTRL(
            2, 1, horizon=2, epsilon=epsilon, delta=1e-5 if epsilon else None, seed=seed
        )

    kwargs = {"trials": 2_000, "statistic": FirstAction(1), "delta": 1e-5}
    assert audit(build(1.0), play, a, b, claimed=1.0, seed=31, **kwargs).passed
    leaky = audit(build(None), play, a, b, claimed=0.5, seed=32, **kwargs)
    assert not leaky.passed, leaky


def test_a_set_function_is_told_as_its_row():
    """``tell(f)`` with a Python set function plays as the native row of the same coverage function: the same sets
    every round and the same payoffs, and the experts' distributions agree to rounding (the gains are computed as
    ``f(S + a) − f(S)`` instead of ``Π(1 − p)·p_a``); a function that is not monotone is refused and the learner is
    told nothing."""
    rows = np.random.default_rng(8).uniform(0, 0.5, size=(20, 5))
    kwargs = {"horizon": 20, "epsilon": 1.0, "delta": 1e-6, "sampler": "floating-point", "seed": 4}
    by_row = dponline.PrivateSubmodularFTRL(5, 2, **kwargs)
    by_function = dponline.PrivateSubmodularFTRL(5, 2, **kwargs)
    for p in rows:
        assert by_row.ask().tolist() == by_function.ask().tolist()

        def f(items, p=p):
            return 1.0 - float(np.prod(1.0 - p[items]))

        assert by_function.tell(f) == pytest.approx(by_row.tell(p), abs=1e-15)
    for i in range(2):
        np.testing.assert_allclose(
            by_function.expert_probabilities(i), by_row.expert_probabilities(i), rtol=1e-9, atol=0
        )
    fresh = dponline.PrivateSubmodularFTRL(5, 2, horizon=20, epsilon=None)
    fresh.ask()
    before = fresh._core.to_bytes()
    with pytest.raises(dponline.InvalidInputError, match="not monotone"):
        fresh.tell(lambda items: -0.1 * len(items))
    assert fresh._core.to_bytes() == before


@pytest.mark.parametrize("learner", [dponline.PrivateSubmodular, dponline.PrivateSubmodularFTRL])
def test_a_learner_that_clipped_more_values_than_rounds_restores(learner):
    """One round's row, or a set function's ``k·(|U| + 1)`` values, can clip several values: a pickle of a learner
    whose clipped count exceeds its round count restores with that count (it was refused as inconsistent)."""
    one = learner(4, 2, horizon=10, epsilon=None)
    one.ask()
    one.tell(np.full(4, 2.0))
    two = learner(4, 2, horizon=10, epsilon=None)
    two.ask()
    two.tell(lambda items: 2.0 * len(items))  # every gain 2 and the payoff above 1: k·n + 1 values clipped
    for played in (one, two):
        assert played.t == 1 and played.clipped > played.t
        restored = pickle.loads(pickle.dumps(played))
        assert (restored.t, restored.clipped) == (played.t, played.clipped)
