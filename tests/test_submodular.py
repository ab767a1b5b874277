"""PrivateSubmodular (Perez-Salazar & Cummings 2021), the submodular families, Hedge and the greedy comparator."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest

import dponline
from dponline import PrivateSubmodular
from dponline.audit import epsilon_lower_bound
from dponline.mwu import Hedge
from dponline.regret import APPROXIMATION, greedy_in_hindsight, submodular_regret_curve
from dponline.submodular import FacilityLocation, ProbabilisticCoverage, WeightedCoverage

KINDS = {"probabilistic_coverage": ProbabilisticCoverage, "facility_location": FacilityLocation}


def brute_value(kind: str, row: np.ndarray, items) -> float:
    items = sorted(set(int(a) for a in items))
    if kind == "probabilistic_coverage":
        return 1.0 - float(np.prod([1.0 - row[a] for a in items])) if items else 0.0
    return max((float(row[a]) for a in items), default=0.0)


def assert_feasible(S: np.ndarray, n: int, k: int) -> None:
    assert S.dtype == np.int64 and S.ndim == 1
    assert 1 <= len(S) <= k and len(set(S.tolist())) == len(S)
    assert ((S >= 0) & (S < n)).all()


# -- families ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_batched_gains_equal_brute_force_differences(kind, rng):
    data = rng.random((20, 9))
    fam = KINDS[kind](data)
    for t in range(20):
        prefix = rng.integers(0, 9, size=rng.integers(0, 5)).tolist()
        gains = fam.gains(t, prefix)
        base = brute_value(kind, data[t], prefix)
        assert fam.value(t, prefix) == pytest.approx(base, abs=1e-14)
        for a in range(9):
            assert gains[a] == pytest.approx(brute_value(kind, data[t], prefix + [a]) - base, abs=1e-14)
        assert ((gains >= 0) & (gains <= 1)).all()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_summed_gains_are_the_gains_of_the_summed_function(kind, rng):
    data = rng.random((7, 40))
    for fam, rounds in ((KINDS[kind](data), 7), (KINDS[kind](data, horizon=17, resample="cycle"), 17)):
        for size in (0, 1, 5):
            prefix = rng.choice(40, size=size, replace=False).tolist()
            want = sum(
                np.array(
                    [
                        brute_value(kind, data[t % 7], prefix + [a]) - brute_value(kind, data[t % 7], prefix)
                        for a in range(40)
                    ]
                )
                for t in range(rounds)
            )
            got = fam.summed_gains(prefix)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
            assert (got >= 0).all() and (got[prefix] == 0).all()
    W, covers = _coverage_case(rng)
    cov = WeightedCoverage(W, covers)
    np.testing.assert_allclose(
        cov.summed_gains([0]), sum(cov.gains(t, [0]) for t in range(cov.horizon)), rtol=0, atol=1e-12
    )
    with pytest.raises(dponline.InvalidInputError):
        cov.summed_gains([len(covers)])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_families_are_monotone_submodular_on_random_checks(kind, rng):
    n = 8
    data = rng.random((30, n))
    fam = KINDS[kind](data)
    for _ in range(400):
        t = int(rng.integers(0, 30))
        B = set(np.flatnonzero(rng.random(n) < 0.5).tolist())
        A = {a for a in B if rng.random() < 0.5}
        x = int(rng.integers(0, n))
        fA, fB = fam.value(t, sorted(A)), fam.value(t, sorted(B))
        assert 0.0 <= fA <= fB + 1e-15 <= 1.0 + 1e-15  # monotone, in [0, 1]
        if x not in B:
            gain_A = fam.value(t, sorted(A | {x})) - fA
            gain_B = fam.value(t, sorted(B | {x})) - fB
            assert gain_A >= gain_B - 1e-15  # diminishing returns
    assert fam.value(0, []) == 0.0


def _coverage_case(rng, rows=12, elements=15, n=7):
    W = rng.random((rows, elements))
    W /= W.sum(axis=1, keepdims=True) * 1.25  # rows sum to 0.8
    covers = [sorted(set(rng.integers(0, elements, size=rng.integers(1, 5)).tolist())) for _ in range(n)]
    return W, covers


def brute_coverage(W: np.ndarray, covers, t: int, items) -> float:
    covered = set().union(*[set(covers[a]) for a in items]) if len(items) else set()
    return float(sum(W[t, j] for j in covered))


def test_weighted_coverage_gains_monotone_submodular_greedy_and_run(rng):
    W, covers = _coverage_case(rng)
    n = len(covers)
    fam = WeightedCoverage(W, covers)
    assert fam.kind == "weighted_coverage" and fam.ground_set_size == n and fam.covers == covers
    for t in range(12):
        prefix = rng.integers(0, n, size=rng.integers(0, 4)).tolist()
        base = brute_coverage(W, covers, t, prefix)
        assert fam.value(t, prefix) == pytest.approx(base, abs=1e-14)
        gains = fam.gains(t, prefix)
        for a in range(n):
            assert gains[a] == pytest.approx(brute_coverage(W, covers, t, prefix + [a]) - base, abs=1e-14)
        B = set(np.flatnonzero(rng.random(n) < 0.5).tolist())
        A = {a for a in B if rng.random() < 0.5}
        x = int(rng.integers(0, n))
        fA, fB = fam.value(t, sorted(A)), fam.value(t, sorted(B))
        assert fA <= fB + 1e-15 <= 1.0 + 1e-15
        if x not in B:
            assert fam.value(t, sorted(A | {x})) - fA >= fam.value(t, sorted(B | {x})) - fB - 1e-15
    comp = greedy_in_hindsight(fam, 3)
    opt = max(sum(brute_coverage(W, covers, t, S) for t in range(12)) for S in itertools.combinations(range(n), 3))
    assert APPROXIMATION * opt <= comp.total_value <= opt + 1e-12
    back = pickle.loads(pickle.dumps(WeightedCoverage(W, covers, horizon=30, resample="cycle")))
    assert back.kind == "weighted_coverage" and back.horizon == 30 and back.covers == covers
    np.testing.assert_array_equal(back.data, W)
    # the learner plays it natively (full information and bandit); payoffs are the family's values
    for feedback in ("full", "bandit"):
        learner = PrivateSubmodular(n, 2, horizon=30, epsilon=None, feedback=feedback, seed=3)
        result = learner.run(back, checkpoints=3)
        assert -result.total_loss <= 30 and result.rounds == 30
    with pytest.raises(dponline.InvalidInputError, match="at most 1"):
        WeightedCoverage(np.array([[0.7, 0.6]]), [[0], [1]])
    with pytest.raises(dponline.InvalidInputError, match="element"):
        WeightedCoverage(np.array([[0.2, 0.6]]), [[0], [2]])
    with pytest.raises(dponline.InvalidInputError):
        WeightedCoverage(np.array([[0.2, 0.6]]), [[0], [-1]])


def test_family_errors_and_pickling():
    with pytest.raises(dponline.InvalidInputError, match=r"\[0, 1\]"):
        ProbabilisticCoverage(np.array([[0.5, 1.5]]))
    with pytest.raises(dponline.NonFiniteError):
        ProbabilisticCoverage(np.array([[0.5, np.nan]]))
    with pytest.raises(dponline.InvalidInputError):
        ProbabilisticCoverage(np.array([0.5, 0.2]))
    fam = ProbabilisticCoverage(np.array([[0.5, 0.2], [0.1, 0.3]]), horizon=7, resample="bootstrap", seed=3)
    with pytest.raises(dponline.InvalidInputError, match="item ids"):
        fam.value(0, [2])
    with pytest.raises(dponline.InvalidInputError, match="item ids"):
        fam.gains(0, [-1])
    with pytest.raises(dponline.InvalidInputError):
        fam.value(7, [0])
    back = pickle.loads(pickle.dumps(fam))
    assert back.horizon == 7 and back.order == "bootstrap"
    assert back.row_counts().tolist() == fam.row_counts().tolist()
    assert sum(fam.row_counts()) == 7


def test_lazy_greedy_is_greedy_and_within_one_minus_one_over_e_of_the_optimum(rng):
    n, k = 9, 3
    data = 0.4 * rng.random((40, n))
    fam = ProbabilisticCoverage(data)

    def total(S):
        return sum(brute_value("probabilistic_coverage", row, S) for row in data)

    comp = greedy_in_hindsight(fam, k)
    opt = max(total(S) for S in itertools.combinations(range(n), k))
    assert comp.total_value == pytest.approx(total(comp.items.tolist()), rel=1e-12)
    assert APPROXIMATION * opt <= comp.total_value <= opt + 1e-12
    assert comp.upper_bound >= opt
    with pytest.raises(dponline.InvalidInputError):
        greedy_in_hindsight(fam, 0)
    with pytest.raises(dponline.InvalidInputError):
        greedy_in_hindsight(fam, n + 1)


# -- Hedge ---------------------------------------------------------------------------------------------------


def softmax(cum: np.ndarray, eta: float) -> np.ndarray:
    z = eta * (cum - cum.max())
    w = np.exp(z)
    return w / w.sum()


def test_hedge_matches_numpy_with_full_and_bandit_updates(rng):
    n, eta = 50, 0.4
    h = Hedge(n, eta, seed=1)
    cum = np.zeros(n)
    for t in range(300):
        if t % 4 == 0:
            i, g = int(rng.integers(0, n)), float(rng.random())
            h.update_one(i, g)
            cum[i] += g
        else:
            g = rng.random(n)
            h.update_full(g)
            cum += g
        np.testing.assert_allclose(h.probabilities(), softmax(cum, eta), rtol=0, atol=1e-12)
    draws = h.sample(200_000)
    p = softmax(cum, eta)
    counts = np.bincount(draws, minlength=n)
    assert np.all(np.abs(counts - 200_000 * p) <= 4.892 * np.sqrt(200_000 * p * (1 - p)) + 1)


def test_hedge_pickles_and_resumes_bit_identically(rng):
    h = Hedge(100, 0.3, seed=5)
    h.update_full(rng.random(100))
    h.update_one(7, 0.9)
    back = pickle.loads(pickle.dumps(h))
    np.testing.assert_array_equal(back.probabilities(), h.probabilities())
    np.testing.assert_array_equal(back.sample(1000), h.sample(1000))
    with pytest.raises(dponline.StateError):
        Hedge.from_bytes(b"garbage")


def test_hedge_bad_input_leaves_state_unchanged():
    h = Hedge(4, 0.5, seed=0)
    h.update_full([0.1, 0.2, 0.3, 0.4])
    before = h.log_weights.copy()
    with pytest.raises(dponline.NonFiniteError):
        h.update_full([0.1, np.nan, 0.3, 0.4])
    with pytest.raises(dponline.InvalidInputError):
        h.update_full([0.1, 1.2, 0.3, 0.4])
    with pytest.raises(dponline.InvalidInputError):
        h.update_full([0.1, 0.2])
    with pytest.raises(dponline.InvalidInputError):
        h.update_one(4, 0.5)
    with pytest.raises(dponline.InvalidInputError):
        h.update_one(0, -0.1)
    np.testing.assert_array_equal(h.log_weights, before)
    with pytest.raises(dponline.InvalidInputError):
        Hedge(0, 1.0)
    with pytest.raises(dponline.InvalidInputError):
        Hedge(3, 0.0)


# Found by tests/test_fuzz_submodular.py: before the fix each of these raised TypeError / OverflowError (PyO3's
# argument conversion), or accepted junk, instead of InvalidInputError.
HEDGE_JUNK = [
    lambda: Hedge("3", 1.0),
    lambda: Hedge(-1, 1.0),
    lambda: Hedge(2**64, 1.0),
    lambda: Hedge(3, "x"),
    lambda: Hedge(3, True),
    lambda: Hedge(3, 1.0, secure="yes"),
    lambda: Hedge(3, 1.0).update_one("0", 0.5),
    lambda: Hedge(3, 1.0).update_one(-1, 0.5),
    lambda: Hedge(3, 1.0).update_one(2**64, 0.5),
    lambda: Hedge(3, 1.0).update_one(0, "0.5"),
    lambda: Hedge(3, 1.0).sample(-1),
    lambda: Hedge(3, 1.0).sample("2"),
    lambda: Hedge(3, 1.0).sample(1.0),
]


@pytest.mark.parametrize("call", HEDGE_JUNK)
def test_hedge_refuses_junk_arguments_with_invalid_input(call):
    with pytest.raises(dponline.InvalidInputError):
        call()


def test_hedge_huge_sample_size_raises_memory_error():
    """Found by the fuzz suite: ``sample(2**40)`` aborted the interpreter (an infallible 8 TB allocation)."""
    h = Hedge(3, 1.0, seed=0)
    before = pickle.dumps(h)
    with pytest.raises(MemoryError):
        h.sample(2**40)
    assert pickle.dumps(h) == before
    assert h.sample().shape == (1,) and h.sample(0).shape == (0,)


@pytest.mark.parametrize("eta", [600.0, 1e6, 1e100, 1e308])
def test_hedge_at_huge_learning_rates_stays_finite_or_refuses(eta):
    """Found by the fuzz suite: ``Hedge(1, 1e6).update_one(0, 1.0)`` made the distribution NaN (the leaf
    ``e^{10^6}`` overflowed); at ``eta = 1e308`` the log-weights and offset overflowed to ±inf after two updates.
    Learning rates above 1e100 are refused; below, every output stays finite."""
    try:
        h = Hedge(3, eta, seed=0)
    except dponline.InvalidInputError:
        assert eta > 1e100
        return
    for t in range(50):
        if t % 3 == 2:
            h.update_full(np.array([1.0, 0.0, 0.5]))
        else:
            h.update_one(t % 3, 1.0 if t % 2 else 0.25)
        p = h.probabilities()
        assert np.all(np.isfinite(p)) and np.all(p >= 0) and abs(p.sum() - 1) < 1e-12, (t, p)
        assert np.all(np.isfinite(h.log_weights)) and math.isfinite(h.offset) and math.isfinite(h.total)
        assert 0 <= h.sample(1)[0] < 3


def test_private_submodular_refuses_an_epsilon_whose_eta_overflows_hedge():
    with pytest.raises(dponline.InvalidInputError, match="eta"):
        PrivateSubmodular(3, 1, horizon=2, epsilon=1e300, delta=1e-6)
    with pytest.raises(dponline.InvalidInputError, match="eta"):  # beyond the exact sampler's range
        PrivateSubmodular(3, 1, horizon=2, epsilon=1e80, delta=1e-6)
    learner = PrivateSubmodular(3, 1, horizon=2, epsilon=1e80, delta=1e-6, sampler="floating-point", seed=0)
    learner.ask()
    learner.tell(np.array([1.0, 0.0, 0.5]))
    assert np.all(np.isfinite(learner.expert_probabilities(0)))


def test_private_submodular_too_large_for_memory_raises_memory_error_up_front():
    """Each expert's arrays fit, all ``k`` of them do not (2^20 Hedges over 2^24 items, about 400 TB): refused at
    once with MemoryError, instead of allocating expert by expert until the process is killed."""
    with pytest.raises(MemoryError):
        PrivateSubmodular(2**24, 2**20, horizon=10, epsilon=None)


def test_family_methods_refuse_junk_with_invalid_input():
    """Found by the fuzz suite: PyO3's conversions leaked TypeError / OverflowError from the family's methods,
    ``row_indices`` of a huge horizon panicked (capacity overflow) or aborted, and ``WeightedCoverage`` truncated
    float element ids."""
    fam = ProbabilisticCoverage(np.array([[0.5, 0.2], [0.1, 0.3]]))
    W = np.array([[0.2, 0.6]])
    calls = [
        lambda: fam.value("0", [0]),
        lambda: fam.value(-1, [0]),
        lambda: fam.value(0, [2**64]),
        lambda: fam.value(0, "01"),
        lambda: fam.value(0, [0.0]),
        lambda: fam.gains(2**64, [0]),
        lambda: fam.gains(0, None),
        lambda: fam.summed_gains([-(2**70)]),
        lambda: fam.cumulative_at([0], [-1]),
        lambda: fam.cumulative_at([0], "1"),
        lambda: fam.lazy_greedy(2**64),
        lambda: fam.lazy_greedy("1"),
        lambda: greedy_in_hindsight(fam, 2**64),
        lambda: WeightedCoverage(W, [[0], [2**70]]),
        lambda: WeightedCoverage(W, [[0], [1.5]]),
        lambda: WeightedCoverage(W, [[0], ["1"]]),
        lambda: dponline.submodular.SubmodularFamily("probabilistic_coverage", W, horizon=-1),
        lambda: dponline.submodular.SubmodularFamily("probabilistic_coverage", W, order=1),
        lambda: dponline.submodular.SubmodularFamily(None, W),
    ]
    for call in calls:
        with pytest.raises(dponline.InvalidInputError):
            call()
    for resample in ("cycle", "bootstrap"):
        huge = ProbabilisticCoverage(np.full((2, 3), 0.5), horizon=2**62, resample=resample, seed=1)
        with pytest.raises(MemoryError):
            huge.row_indices()
    assert fam.value(np.int64(1), np.array([0, 1])) == pytest.approx(1 - 0.9 * 0.7)


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_regret_bound_of_a_tiny_epsilon_raises_instead_of_inf(feedback):
    """Found by the fuzz suite: at ``epsilon=1e-310`` (``eta = 4.8e-312``) ``regret_bound()`` returned inf."""
    learner = PrivateSubmodular(
        2, 1, horizon=1, epsilon=1e-310, delta=1e-6, feedback=feedback, sampler="floating-point", calibration="paper"
    )
    with pytest.raises(dponline.InvalidInputError, match="overflows float64"):
        learner.regret_bound()
    # The zCDP budget of such an epsilon underflows to 0: refused up front, naming eta.
    with pytest.raises(dponline.InvalidInputError, match="eta.*a larger one if eta is 0"):
        PrivateSubmodular(2, 1, horizon=1, epsilon=1e-310, delta=1e-6, feedback=feedback, sampler="floating-point")
    assert math.isfinite(PrivateSubmodular(2, 1, horizon=1, epsilon=1.0, delta=1e-6, feedback=feedback).regret_bound())


def test_expert_probabilities_refuses_an_index_beyond_k():
    """Found by the fuzz suite: ``expert_probabilities(2**64)`` raised OverflowError."""
    learner = PrivateSubmodular(3, 2, horizon=5, epsilon=None, seed=0)
    for i in (2, 2**64, -1, 1.0):
        with pytest.raises(dponline.InvalidInputError):
            learner.expert_probabilities(i)
    assert learner.expert_probabilities(1).shape == (3,)


def _check_hedge_stays_normalised(n: int, updates: int, rng) -> None:
    eta = 1e-2
    h = Hedge(n, eta, seed=2)
    payoffs = [rng.random(n) for _ in range(4)]
    payoffs.append(np.where(np.arange(n) == 0, 1.0, 0.0))  # one action always wins: the others fall far behind
    cum0 = 0.0
    for t in range(updates):
        g = payoffs[t % len(payoffs)]
        h.update_full(g)
        cum0 += g[0]
    p = h.probabilities()
    assert np.isfinite(p).all() and np.isfinite(h.log_weights).all()
    assert p.sum() == pytest.approx(1.0, abs=1e-9)
    # Renormalised by the log-sum-exp bound on every exact update (leader in [-ln n, eta]); between two exact
    # updates at most 64 multiplicative ones add <= eta each.
    assert -math.log(n) - 1e-9 <= h.log_weights.max() <= 65 * eta
    assert math.isfinite(h.total) and h.total > 0
    # log-weight + offset = η · cumulative payoff, to relative precision
    assert h.log_weights[0] + h.offset == pytest.approx(eta * cum0, rel=1e-9)


def test_hedge_stays_normalised_over_many_updates(rng):
    _check_hedge_stays_normalised(1_000, 100_000, rng)
    _check_hedge_stays_normalised(1_000_000, 100, rng)


@pytest.mark.slow
def test_hedge_at_a_million_actions_stays_normalised_over_1e5_full_updates(rng):
    """10^11 weight updates: about 2-4 minutes of the suite (the issue's stability requirement, run in CI)."""
    _check_hedge_stays_normalised(1_000_000, 100_000, rng)


# -- PrivateSubmodular: schedule and privacy ------------------------------------------------------------------


def test_eta_gamma_and_privacy_follow_the_paper():
    n, k, T, eps, delta = 80, 3, 10_000, 1.0, 1e-6
    full = PrivateSubmodular(n, k, horizon=T, epsilon=eps, delta=delta, calibration="paper", seed=0)
    assert full.params["eta"] == pytest.approx(eps / (k * math.sqrt(32 * T * math.log(k / delta))), rel=1e-14)
    assert (full.privacy.epsilon, full.privacy.delta) == (eps, delta)
    assert "Theorem 5" in full.privacy.source and full.privacy.randomness == "seed"

    T = 10**12
    bandit = PrivateSubmodular(
        n, k, horizon=T, epsilon=eps, delta=delta, feedback="bandit", calibration="paper", seed=0
    )
    gamma = k * ((16 * n * math.log(n)) ** 2 / T) ** (1 / 3)
    assert gamma < 1 and bandit.params["gamma"] == pytest.approx(gamma, rel=1e-12)
    eta = eps / (k * math.sqrt(32 * (2 * gamma * T) * math.log(k / delta)))
    assert bandit.params["eta"] == pytest.approx(eta, rel=1e-12)
    assert bandit.privacy.delta == delta + math.exp(-8 * T ** (1 / 3))
    assert "Theorem 7" in bandit.privacy.source
    small = PrivateSubmodular(n, k, horizon=1000, epsilon=eps, delta=delta, feedback="bandit", seed=0)  # zCDP
    assert small.privacy.delta == pytest.approx(delta + math.exp(-80.0), rel=1e-15)
    assert small.params["gamma"] == 1.0 and small.params["gamma_paper"] > 1  # capped

    pre = PrivateSubmodular(
        n,
        k,
        horizon=10**6,
        epsilon=eps,
        delta=delta,
        feedback="bandit",
        exploration="presampled",
        calibration="paper",
        seed=4,
    )
    p = pre.params
    m = p["presampled_explores"]
    g = p["gamma"]
    assert abs(m - g * 10**6) < 4.892 * math.sqrt(10**6 * g * (1 - g)) + 1  # M ~ Binomial(T, γ)
    assert p["eta"] == pytest.approx(eps / (k * math.sqrt(32 * (m + 1) * math.log(k / delta))), rel=1e-12)
    assert (pre.privacy.epsilon, pre.privacy.delta) == (eps, delta) and "B.2" in pre.privacy.source

    plain = PrivateSubmodular(n, k, horizon=10_000, epsilon=None, seed=0)
    assert plain.privacy is None
    assert plain.params["eta"] == pytest.approx(math.sqrt(math.log(n) / 10_000), rel=1e-14)
    secure = PrivateSubmodular(n, k, horizon=10, epsilon=1.0, delta=1e-6, secure=True)
    assert secure.privacy.randomness == "secure"
    assert_feasible(secure.ask(), n, k)


@pytest.mark.parametrize(
    ("feedback", "exploration", "eps", "delta", "k"),
    [
        ("full", "online", 1.0, 1e-6, 3),
        ("full", "online", 0.1, 1e-9, 1),
        ("full", "online", 8.0, 0.01, 5),
        ("bandit", "online", 1.0, 1e-6, 3),
        ("bandit", "presampled", 2.0, 1e-5, 2),
    ],
)
def test_zcdp_rate_spends_exactly_the_budget_of_the_draws(feedback, exploration, eps, delta, k):
    """Default calibration: the k·m draws, each η²/2-zCDP (a 2η-bounded-range exponential mechanism), compose to
    ρ = k·m·η²/2, which the Python CKS conversion turns back into ε (within 1e-9, never above), and η is the
    paper's rate times sqrt(64·ρ·k·ln(k/δ))/ε — a larger rate for the same (ε, δ)."""
    n, T = 80, 10**6
    learner = PrivateSubmodular(
        n, k, horizon=T, epsilon=eps, delta=delta, feedback=feedback, exploration=exploration, seed=3
    )
    p = learner.params
    assert p["calibration"] == "zcdp"
    m = {"full": T, "online": 2 * p["gamma"] * T}.get(feedback if feedback == "full" else exploration)
    if m is None:
        m = p["presampled_explores"] + 1
    rho = k * m * p["eta"] ** 2 / 2
    assert rho == pytest.approx(p["rho"], rel=1e-12)
    spent = dponline.privacy.zcdp_to_dp(p["rho"], delta)
    assert spent <= eps and spent == pytest.approx(eps, rel=1e-9)
    assert p["rho"] == pytest.approx((1 / dponline.privacy.zcdp_gaussian_sigma(eps, delta, 1.0)) ** 2 / 2, rel=1e-9)
    paper = eps / (k * math.sqrt(32 * m * math.log(k / delta)))
    assert p["eta"] / paper == pytest.approx(math.sqrt(64 * p["rho"] * k * math.log(k / delta)) / eps, rel=1e-9)
    assert p["eta"] > paper
    assert "zCDP" in learner.privacy.source and "Cesar-Rogers 2021" in learner.privacy.source
    assert (learner.privacy.epsilon, learner.privacy.delta >= delta) == (eps, True)
    paper_learner = PrivateSubmodular(
        n,
        k,
        horizon=T,
        epsilon=eps,
        delta=delta,
        feedback=feedback,
        exploration=exploration,
        calibration="paper",
        seed=3,
    )
    assert paper_learner.params["rho"] is None and "zCDP" not in paper_learner.privacy.source
    assert paper_learner.privacy.delta == learner.privacy.delta


def test_calibration_is_validated_and_pickled():
    with pytest.raises(dponline.InvalidInputError, match="calibration"):
        PrivateSubmodular(5, 2, horizon=10, epsilon=1.0, delta=1e-6, calibration="analytic")
    learner = PrivateSubmodular(5, 2, horizon=10, epsilon=1.0, delta=1e-6, calibration="paper", seed=1)
    learner.ask()
    learner.tell(np.full(5, 0.2))
    restored = pickle.loads(pickle.dumps(learner))
    assert restored.params == learner.params and restored.params["calibration"] == "paper"


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"ground_set_size": 0, "k": 1}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 0}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 6}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 2, "delta": None}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 2, "delta": 0.0}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 2, "delta": 1.0}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 2, "epsilon": 0.0}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 2, "epsilon": math.nan}, dponline.NonFiniteError),
        ({"ground_set_size": 5, "k": 2, "feedback": "semi"}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 2, "exploration": "presampled"}, dponline.InvalidInputError),
        ({"ground_set_size": 5, "k": 2, "horizon": 0}, dponline.InvalidInputError),
    ],
)
def test_bad_arguments(kwargs, error):
    args = {"horizon": 10, "epsilon": 1.0, "delta": 1e-6, **kwargs}
    n, k = args.pop("ground_set_size"), args.pop("k")
    with pytest.raises(error):
        PrivateSubmodular(n, k, **args)


def test_bad_feedback_errors_with_state_unchanged():
    full = PrivateSubmodular(4, 2, horizon=10, epsilon=1.0, delta=1e-6, seed=1)
    with pytest.raises(dponline.ProtocolError):
        full.tell(np.full(4, 0.1))
    full.ask()
    state = full._core.to_bytes()
    for bad, error in [
        (np.full(3, 0.1), dponline.InvalidInputError),
        (np.array([0.1, np.nan, 0.1, 0.1]), dponline.NonFiniteError),
        ("row", dponline.InvalidInputError),
    ]:
        with pytest.raises(error):
            full.tell(bad)
    with pytest.raises(dponline.InvalidInputError):
        full.tell(np.full(4, 0.1), kind="cut")
    assert full._core.to_bytes() == state
    full.tell(np.array([0.1, 1.7, -0.2, 0.3]))  # clipped into [0, 1]
    assert full.clipped == 2 and full.t == 1

    strict = PrivateSubmodular(4, 2, horizon=10, epsilon=1.0, delta=1e-6, strict=True, seed=1)
    strict.ask()
    with pytest.raises(dponline.InvalidInputError, match="strict"):
        strict.tell(np.array([0.1, 1.7, 0.2, 0.3]))
    assert strict.t == 0

    bandit = PrivateSubmodular(4, 2, horizon=10, epsilon=1.0, delta=1e-6, feedback="bandit", seed=1)
    bandit.ask()
    state = bandit._core.to_bytes()
    with pytest.raises(dponline.NonFiniteError):
        bandit.tell(math.inf)
    with pytest.raises(dponline.InvalidInputError):
        bandit.tell(np.full(4, 0.1))
    assert bandit._core.to_bytes() == state
    assert bandit.tell(1.5) == 1.0 and bandit.clipped == 1

    done = PrivateSubmodular(4, 1, horizon=1, epsilon=None, seed=0)
    done.ask()
    done.tell(np.full(4, 0.5))
    with pytest.raises(dponline.HorizonExhaustedError):
        done.ask()
    with pytest.raises(dponline.InvalidInputError, match="submodular family"):
        PrivateSubmodular(4, 1, horizon=3, epsilon=None, seed=0).run(dponline.losses.Linear(np.ones((3, 4))))
    with pytest.raises(dponline.InvalidInputError):  # a family over another ground set
        PrivateSubmodular(5, 1, horizon=3, epsilon=None, seed=0).run(ProbabilisticCoverage(np.full((3, 4), 0.1)))


# -- PrivateSubmodular: equivalences --------------------------------------------------------------------------


@pytest.mark.parametrize("epsilon, sampler", [(None, None), (3.0, "floating-point"), (3.0, "exact")])
def test_experts_are_hedge_on_the_marginal_gains(epsilon, sampler, rng):
    """Full information: expert i is exactly Hedge (numpy, 1e-12) fed g_t^i(a) = f_t(S_t^{i−1} + a) − f_t(S_t^{i−1});
    with the exact sampler, on the gains rounded to the payoff grid and at the rounded rate ``eta_exact``."""
    n, k, T = 12, 3, 200
    data = 0.6 * rng.random((T, n))
    learner = PrivateSubmodular(n, k, horizon=T, epsilon=epsilon, delta=1e-3, sampler=sampler, seed=7)
    exact = learner.sampler == "exact"
    eta = learner.params["eta_exact" if exact else "eta"]
    grid = learner.params["payoff_grid"]
    cum = np.zeros((k, n))
    for t in range(T):
        S = learner.ask()
        picks = learner.picks
        assert_feasible(S, n, k)
        assert S.tolist() == list(dict.fromkeys(picks.tolist()))
        row = data[t]
        for i in range(k):
            prefix = picks[:i].tolist()
            base = brute_value("probabilistic_coverage", row, prefix)
            gains = np.array([brute_value("probabilistic_coverage", row, prefix + [a]) - base for a in range(n)])
            cum[i] += np.round(np.clip(gains, 0.0, 1.0) / grid) * grid if exact else gains
        payoff = learner.tell(row)
        assert payoff == pytest.approx(brute_value("probabilistic_coverage", row, S), abs=1e-15)
        for i in range(k):
            np.testing.assert_allclose(learner.expert_probabilities(i), softmax(cum[i], eta), rtol=0, atol=1e-12)


@pytest.mark.parametrize("feedback, exploration", [("full", "online"), ("bandit", "online"), ("bandit", "presampled")])
def test_ask_tell_equals_run_and_pickling_resumes_bit_identically(feedback, exploration, rng):
    n, k, T = 10, 3, 3000
    data = 0.5 * rng.random((100, n))
    fam = ProbabilisticCoverage(data, horizon=T, resample="bootstrap", seed=5)
    rows = fam.data[fam.row_indices().astype(np.int64)]
    kwargs = dict(horizon=T, epsilon=2.0, delta=1e-4, feedback=feedback, exploration=exploration, seed=11)
    a = PrivateSubmodular(n, k, **kwargs)
    total = 0.0
    for t in range(T):
        S = a.ask()
        assert_feasible(S, n, k)
        value = fam.value(t, S.tolist())
        total += a.tell(rows[t]) if feedback == "full" else a.tell(value)
    b = PrivateSubmodular(n, k, **kwargs)
    first = b.run(fam, rounds=1234, checkpoints=7)
    c = pickle.loads(pickle.dumps(b))
    second = c.run(fam)
    assert -(first.total_loss + second.total_loss) == pytest.approx(total, rel=1e-12)
    assert c.t == a.t == T
    np.testing.assert_array_equal(c.picks, a.picks)
    for i in range(k):
        np.testing.assert_array_equal(c.expert_probabilities(i), a.expert_probabilities(i))
    np.testing.assert_array_equal(second.final_point, a.picks)
    if feedback == "bandit":
        assert a.explores == c.explores > 0
        if exploration == "presampled":
            assert a.explores == a.params["presampled_explores"]


def test_python_set_functions_are_accepted_and_checked(rng):
    """A callable f(items) gives the same learner as the native row (full information and bandit), and a
    non-monotone or non-submodular callable is refused with the learner unchanged."""
    n, k, T = 6, 2, 60
    data = 0.5 * rng.random((T, n))
    for feedback in ("full", "bandit"):
        native = PrivateSubmodular(n, k, horizon=T, epsilon=2.0, delta=1e-3, feedback=feedback, seed=4)
        python = PrivateSubmodular(n, k, horizon=T, epsilon=2.0, delta=1e-3, feedback=feedback, seed=4)
        for t in range(T):
            S = native.ask()
            np.testing.assert_array_equal(python.ask(), S)
            row = data[t]
            value = brute_value("probabilistic_coverage", row, S)
            native.tell(row if feedback == "full" else value)
            got = python.tell(lambda items, row=row: brute_value("probabilistic_coverage", row, items))
            assert got == pytest.approx(value, abs=1e-15)
        for i in range(k):
            np.testing.assert_allclose(python.expert_probabilities(i), native.expert_probabilities(i), atol=1e-12)
    learner = PrivateSubmodular(n, k, horizon=T, epsilon=2.0, delta=1e-3, seed=4)
    with pytest.raises(dponline.ProtocolError):
        learner.tell(lambda items: 0.0)
    learner.ask()
    state = learner._core.to_bytes()
    with pytest.raises(dponline.InvalidInputError, match="monotone"):
        learner.tell(lambda items: 0.5 - 0.1 * len(items) if items else 0.0)
    with pytest.raises(dponline.InvalidInputError, match="submodular"):
        learner.tell(lambda items: min(1.0, (len(items) / n) ** 2))
    with pytest.raises(dponline.NonFiniteError):
        learner.tell(lambda items: math.nan)
    assert learner._core.to_bytes() == state


def test_secure_learner_pickles_without_replaying_its_randomness():
    """A restored secure learner keeps its weights but reseeds from the OS: two restores of one pickle play
    different sets (equal 40-round sequences over 30 items have probability below 30^-40)."""
    row = np.full(30, 0.05)
    learner = PrivateSubmodular(30, 3, horizon=50, epsilon=1.0, delta=1e-6, secure=True)
    for _ in range(10):
        learner.ask()
        learner.tell(row)
    copies = [pickle.loads(pickle.dumps(learner)) for _ in range(2)]
    played = []
    for c in copies:
        assert c.t == 10 and c.privacy.randomness == "secure"
        np.testing.assert_array_equal(c.expert_probabilities(0), learner.expert_probabilities(0))
        sets = []
        for _ in range(40):
            sets.append(tuple(c.ask().tolist()))
            c.tell(row)
        played.append(sets)
    assert played[0] != played[1]


# -- regret --------------------------------------------------------------------------------------------------


def _fit_slope(horizons, regrets) -> float:
    return float(np.polyfit(np.log(horizons), np.log(regrets), 1)[0])


def _mean_regrets(row, horizons, make) -> list[float]:
    """Per horizon ``T``, the mean over seeds 0, 1, 2 of the regret of ``make(T, seed)`` run natively on ``row``
    cycled, against the best single item (value 0.5 per round)."""
    regrets = []
    for T in horizons:
        fam = ProbabilisticCoverage(row, horizon=T, resample="cycle")
        regrets.append(np.mean([0.5 * T + make(T, seed).run(fam, checkpoints=1).total_loss for seed in range(3)]))
    return regrets


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [None, 4.0])
def test_full_information_regret_grows_as_sqrt_T(epsilon):
    """Theorem 6: regret O(√T) at fixed ε. k = 1 (greedy is then exact), a fixed row with a gap of 0.1."""
    row = np.array([[0.5, 0.4, 0.4, 0.4]])
    horizons = [100_000 * 2**j for j in range(5)]
    regrets = _mean_regrets(
        row, horizons, lambda T, seed: PrivateSubmodular(4, 1, horizon=T, epsilon=epsilon, delta=1e-3, seed=seed)
    )
    assert abs(_fit_slope(horizons, regrets) - 0.5) < 0.1, regrets


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [None, 10.0])
def test_bandit_regret_grows_as_T_to_the_two_thirds(epsilon):
    """Theorem 8: regret O(T^{2/3}). k = 1, |U| = 2, a fixed row with a gap of 0.2; γ < 1 for T > 500. (At
    ε = 1 the experts are still learning at T = 6.4·10⁶ — regret nearly linear — so the asymptotic rate
    shows only at larger ε or T.)"""
    row = np.array([[0.5, 0.3]])
    horizons = [100_000 * 4**j for j in range(4)]

    def make(T, seed):
        learner = PrivateSubmodular(2, 1, horizon=T, epsilon=epsilon, delta=1e-3, feedback="bandit", seed=seed)
        assert learner.params["gamma"] < 1
        return learner

    regrets = _mean_regrets(row, horizons, make)
    assert abs(_fit_slope(horizons, regrets) - 2 / 3) < 0.1, regrets


@pytest.mark.slow
@pytest.mark.parametrize("epsilon", [None, 64.0])
def test_one_minus_one_over_e_regret_on_real_clicks_is_below_theorem_6(epsilon):
    """Open Bandit click probabilities, k = 3 of 80 items, 10⁶ rounds resampled from the 10⁴ logged ones. The
    bound of Theorem 6's proof, k(ηT + ln|U|/η), is below the largest possible (1 − 1/e)-regret
    (1 − 1/e)·F(S_greedy) here (12,560 vs 24,500 without privacy; 16,392 at ε = 64), so the test can fail. At
    ε ≤ 35 the bound exceeds it: with click probabilities below 0.035 the real data need large ε or T."""
    import dponline.datasets

    P = dponline.datasets.open_bandit_round_probabilities()
    T = 1_000_000
    fam = ProbabilisticCoverage(P, horizon=T, resample="bootstrap", seed=1)
    comp = greedy_in_hindsight(fam, 3)
    learner = PrivateSubmodular(80, 3, horizon=T, epsilon=epsilon, delta=1e-6, seed=2)
    bound = learner.regret_bound()
    assert bound < APPROXIMATION * comp.total_value
    result = learner.run(fam, checkpoints=20)
    curve = submodular_regret_curve(fam, result.checkpoints, result.cumulative_loss, comp)
    assert curve[-1] == pytest.approx(APPROXIMATION * comp.total_value + result.total_loss, rel=1e-9)
    assert curve[-1] <= bound
    assert -result.total_loss > 0.5 * comp.total_value  # it learns: well above half the greedy value


# -- privacy audit ---------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 2])
def test_privacy_audit_of_fi_dp_on_neighbouring_streams(k):
    """Neighbouring streams over |U| = 2 items, T = 2: f_1 has p = (0, 1) in one stream and (1, 0) in the other
    (f_2 is never seen before S_2 is played). The event {S_2 = {1}} has likelihood ratio e^η (k = 1) and
    e^η·(e^η/(1+e^η) + 1/2)/(1/2 + 1/(1+e^η)) (k = 2: expert 2's gains depend on expert 1's round-1 pick). The
    Clopper-Pearson lower bound on ln(P/P') stays below the claimed ε and below the exact log-ratio, and comes
    within 0.1 of it — so a learner using a larger η than the formula would be caught."""
    eps, delta, T, trials = 8.0, 0.01, 2, 100_000
    eta = PrivateSubmodular(2, k, horizon=T, epsilon=eps, delta=delta, seed=0).params["eta"]
    q = 1.0 / (1.0 + math.exp(eta))
    exact = eta if k == 1 else eta + math.log((1 - q + 0.5) / (0.5 + q))

    def hits(row: np.ndarray, offset: int) -> int:
        count = 0
        for s in range(trials):
            learner = dponline._core.PrivateSubmodular(2, k, T, epsilon=eps, delta=delta, seed=offset + s)
            learner.ask()
            learner.tell_row(row)
            count += learner.ask().tolist() == [1]
        return count

    a = hits(np.array([0.0, 1.0]), 0)
    b = hits(np.array([1.0, 0.0]), 10**7)
    estimate = epsilon_lower_bound(a, b, trials)
    assert estimate <= exact <= eps
    assert estimate > exact - 0.1


def test_bandit_feedback_warns_when_exploration_is_capped_and_names_the_horizon():
    """γ = k((16|U| ln|U|)²/T)^{1/3} is capped at 1 below T = k³(16|U| ln|U|)²: the constructor says so."""
    import re
    import warnings

    from dponline.errors import ExplorationCappedWarning

    n, k, T = 80, 3, 10**6
    needed = k**3 * (16 * n * math.log(n)) ** 2
    with pytest.warns(ExplorationCappedWarning, match=re.escape(f"horizon > {needed:.3g}")) as record:
        learner = PrivateSubmodular(n, k, horizon=T, epsilon=1.0, delta=1e-6, feedback="bandit", seed=0)
    assert learner.params["gamma"] == 1.0 and record[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExplorationCappedWarning)
        assert PrivateSubmodular(n, k, horizon=10**9, epsilon=1.0, delta=1e-6, feedback="bandit").params["gamma"] < 1
        PrivateSubmodular(n, k, horizon=T, epsilon=1.0, delta=1e-6, feedback="full")


@pytest.mark.parametrize("epsilon", [None, 1.0])
@pytest.mark.parametrize("n", [1, 3])
def test_presampled_bandit_learner_pickles_with_its_drawn_explore_count(n, epsilon):
    """Presampled exploration draws ``M ~ Binomial(T, γ)`` (and sets ``η`` from it) at construction: a pickle
    restores that ``M``, although a learner rebuilt from the declared arguments draws another one (γ < 1 here)."""
    learner = PrivateSubmodular(
        n,
        1,
        horizon=20_000,
        epsilon=epsilon,
        delta=1e-6 if epsilon else 0.0,
        feedback="bandit",
        exploration="presampled",
        seed=1,
    )
    assert 0.0 < learner.params["gamma"] < 1.0
    restored = pickle.loads(pickle.dumps(learner))
    assert restored.params == learner.params
    assert restored._core.to_bytes() == learner._core.to_bytes()
