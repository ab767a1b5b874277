"""The exact samplers of the learners without a counting tree (issue 21): PrivateEXP3 and PrivateSCRiBLe (their
feedback release), the local randomiser and its native stream, and PrivateSubmodular (exact exponential-mechanism
draws)."""

from __future__ import annotations

import math
import pickle
import sys

import numpy as np
import pytest

from dponline import LocalLaplaceRandomizer, PrivateEXP3, PrivateSCRiBLe, PrivateSubmodular
from dponline.audit import LatticeGrid, Threshold, audit
from dponline.domains import L2Ball
from dponline.errors import InvalidInputError
from dponline.local_dp import CoordinatewiseLearner, LocalStream
from dponline.privacy import discrete_laplace_epsilon

LATTICE_TRIALS = 40_000
LATTICE_BATCH = 20_000


def _dlap_variance(t: float) -> float:
    """Variance of DLap(t): ``2e^{-1/t}/(1 − e^{-1/t})²`` (Canonne-Kamath-Steinke 2020; the difference of two
    geometrics), evaluated stably."""
    q = math.exp(-1.0 / t)
    return 2.0 * q / (-math.expm1(-1.0 / t)) ** 2


def _first_release(learner, x):
    learner.ask()
    learner.tell(x)
    return learner.last_release


# -- lattice audits: the float path is caught, the exact default is not -------------------------------------------

LATTICE_CASES = {
    # name: (factory(sampler), release(object, x), batch, the extremes of the declared range)
    "local randomiser": (
        lambda sampler: lambda seed: LocalLaplaceRandomizer(1, bound=1.0, sampler=sampler, seed=seed),
        lambda m, x: m.randomize(np.full((LATTICE_BATCH, 1), x), 1.0)[:, 0],
        LATTICE_BATCH,
        (-1.0, 1.0),
    ),
    "PrivateEXP3 feedback": (
        lambda sampler: lambda seed: PrivateEXP3(2, horizon=1, epsilon=1.0, sampler=sampler, seed=seed),
        _first_release,
        1,
        (0.0, 1.0),
    ),
    "PrivateSCRiBLe feedback": (
        lambda sampler: (
            lambda seed: PrivateSCRiBLe(L2Ball(1), horizon=1, epsilon=1.0, loss_bound=1.0, sampler=sampler, seed=seed)
        ),
        _first_release,
        1,
        (-1.0, 1.0),
    ),
}


def _default(name: str) -> str | None:
    return None if name == "local randomiser" else "exact"


@pytest.mark.slow
@pytest.mark.parametrize("name", LATTICE_CASES)
def test_lattice_audit_passes_the_exact_default_and_catches_the_float_path(name):
    """The Mironov lattice audit of ``test_audit.py`` (the power-of-two grid of a release at ε = 1 on x = 0 vs
    x = 1, 40,000 trials per input, α = 1e-6: ``0 + Z`` of small magnitude lies on finer float grids than ``1 + Z``
    can reach), on the first release of each learner. The exact default releases integers times one grid for both
    inputs and passes (ε̂ ≤ 1.3; measured 0 for all three with both statistics); the explicit floating-point
    sampler is caught (ε̂ > 4; measured 4.82 / 5.63 / 5.24 for the randomiser / EXP3 / SCRiBLe with the grid chosen
    on half the trials, 5.93 / 6.49 / 5.92 with the event {grid exponent ≥ 54} fixed)."""
    factory, release, batch, _ = LATTICE_CASES[name]
    for statistic in (LatticeGrid(), LatticeGrid(members=range(54, 1076))):
        exact = audit(
            factory(_default(name)), release, 0.0, 1.0, trials=LATTICE_TRIALS, batch=batch, statistic=statistic,
            claimed=1.0, seed=2021,
        )  # fmt: skip
        assert exact.epsilon_lower <= 1.3, (name, exact)
        floating = audit(
            factory("floating-point"), release, 0.0, 1.0, trials=LATTICE_TRIALS, batch=batch, statistic=statistic,
            claimed=1.0, seed=2021,
        )  # fmt: skip
        assert floating.epsilon_lower > 4.0, (name, floating)


@pytest.mark.slow
@pytest.mark.parametrize("name", LATTICE_CASES)
def test_threshold_audit_of_the_exact_release_is_tight(name):
    """The likelihood-ratio event of the Laplace release (a threshold chosen on half of 10⁵ trials per input) at the
    two extremes of the declared range, on the exact default: ε̂ ≤ 1 and above 0.85 — the exact mechanism is as
    private as claimed and no noisier than the continuous one (its scale exceeds Δ/ε by < 10⁻⁸). Measured 0.950 /
    0.923 / 0.923 (randomiser / EXP3 / SCRiBLe)."""
    factory, release, batch, (a, b) = LATTICE_CASES[name]
    result = audit(
        factory(_default(name)), release, a, b, trials=100_000, batch=batch, statistic=Threshold(), claimed=1.0,
        seed=7,
    )  # fmt: skip
    assert result.passed and result.epsilon_lower > 0.85, (name, result)


# -- the exact calibration: ε met, variance of the discrete Laplace ----------------------------------------------


@pytest.mark.parametrize(("epsilon", "loss_bound"), [(1.0, 1.0), (0.1, 3.0), (7.5, 0.25), (1e-4, 1.0)])
def test_exp3_and_scrible_exact_calibration_meets_epsilon(epsilon, loss_bound):
    for learner, sensitivity in (
        (PrivateEXP3(3, horizon=10, epsilon=epsilon, loss_bound=loss_bound, seed=0), loss_bound),
        (PrivateSCRiBLe(L2Ball(2), horizon=10, epsilon=epsilon, loss_bound=loss_bound, seed=0), 2 * loss_bound),
    ):
        gamma, scale = learner.grid, learner.params["noise_scale"]
        assert gamma is not None and math.log2(gamma).is_integer()
        t = scale / gamma
        assert t.is_integer() and 2**30 <= t
        units = math.ceil(sensitivity / gamma) + 1
        assert discrete_laplace_epsilon(t, units) <= epsilon
        assert units <= epsilon * t  # exactly, in integers
        # The noise is at least the continuous calibration's, and barely more.
        assert sensitivity / epsilon <= scale <= sensitivity / epsilon * (1 + (2 / epsilon + 1) * 2.0**-30)
        assert learner.privacy.sampler == "exact" and "discrete Laplace" in learner.privacy.notes
        assert "Mironov" not in str(learner.privacy)


@pytest.mark.parametrize("learner_name", ["PrivateEXP3", "PrivateSCRiBLe"])
def test_exact_feedback_has_the_discrete_laplace_variance_and_lies_on_the_grid(learner_name):
    """10⁵ releases of the feedback 0.3 (seeded): each is an integer multiple of γ, centred on round(0.3/γ)·γ,
    with the variance γ²·Var DLap(t) within 6 standard errors (the fourth moment of a Laplace is 6 var²)."""
    n = 100_000
    if learner_name == "PrivateEXP3":
        learner = PrivateEXP3(2, horizon=n, epsilon=0.5, loss_bound=1.0, seed=11)
    else:
        learner = PrivateSCRiBLe(L2Ball(1), horizon=n, epsilon=0.5, loss_bound=1.0, seed=11)
    gamma, t = learner.grid, learner.params["noise_scale"] / learner.grid
    centre = round(0.3 / gamma) * gamma
    releases = np.empty(n)
    for i in range(n):
        learner.ask()
        learner.tell(0.3)
        releases[i] = learner.last_release
    assert np.all(np.mod(releases, gamma) == 0.0)
    var = gamma**2 * _dlap_variance(t)
    dev = releases - centre
    assert abs(dev.mean()) < 6 * math.sqrt(var / n)
    assert abs((dev**2).mean() - var) < 6 * math.sqrt(5 * var**2 / n)


def test_local_randomizer_exact_variance_and_per_coordinate_grids():
    r = LocalLaplaceRandomizer(2, bound=2.0, seed=3)
    assert r.sampler == "exact"
    n = 100_000
    out = r.randomize(np.tile([0.7, -5.0], (n, 1)), [0.5, 4.0])
    for j, (x, tau) in enumerate([(0.7, 0.5), (-2.0, 4.0)]):  # -5 is clipped to -G
        b = 2 * 2.0 / tau
        gamma = 2.0 ** (math.floor(math.log2(b)) - 30)
        units = math.ceil(4.0 / gamma) + 1
        t = math.ceil(units / tau * (1 + 2.0**-50))
        assert units / t <= tau
        col = out[:, j]
        assert np.all(np.mod(col, gamma) == 0.0)
        var = gamma**2 * _dlap_variance(t)
        dev = col - round(x / gamma) * gamma
        assert abs((dev**2).mean() - var) < 6 * math.sqrt(5 * var**2 / n), j
        assert abs(dev.mean()) < 6 * math.sqrt(var / n), j
    g = r.privacy([0.5, 4.0])
    assert g.epsilon == 4.5 and g.sampler == "exact" and "discrete Laplace" in g.notes


def test_a_native_run_refuses_budgets_beyond_the_exact_range_and_changes_nothing():
    """The stream cannot check the exact range without ``G``; the learner's ``run`` does, before any round."""
    stream = LocalStream(np.ones((4, 2)), np.ones(4), loss="squared", budgets=[[1.0, 1e6]] * 4)
    learner = CoordinatewiseLearner(2, 1.0, seed=0)
    before = pickle.dumps(learner)
    with pytest.raises(InvalidInputError, match="budgets.*exact"):
        learner.run(stream)
    assert pickle.dumps(learner) == before and learner.t == 0
    ok = LocalStream(np.ones((4, 2)), np.ones(4), loss="squared", budgets=[[1.0, 1e6]] * 4, sampler="floating-point")
    assert learner.run(ok).rounds == 4


# -- the samplers each learner offers ---------------------------------------------------------------------------


def test_defaults_are_the_most_secure_sampler_each_option_has():
    assert PrivateEXP3(2, horizon=5, epsilon=1.0).privacy.sampler == "exact"
    assert PrivateSCRiBLe(L2Ball(1), horizon=5, epsilon=1.0, loss_bound=1.0).privacy.sampler == "exact"
    assert LocalLaplaceRandomizer(2).privacy(1.0).sampler == "exact"
    l2 = LocalLaplaceRandomizer(2, mechanism="l2")
    assert l2.sampler == "floating-point"
    assert l2.privacy(1.0).sampler == "floating-point" and "sphere" in l2.privacy(1.0).notes
    for feedback in ("full", "bandit"):
        sub = PrivateSubmodular(4, 2, horizon=10, epsilon=1.0, delta=1e-6, feedback=feedback)
        assert sub.sampler == "exact" and sub.privacy.sampler == "exact" and sub.privacy.randomness == "secure"
        assert "exact exponential mechanism" in sub.privacy.notes and "ExactHedge" in sub.privacy.source
        assert "Mironov" not in str(sub.privacy) and "Mironov" not in sub.privacy.caveat
        fp = PrivateSubmodular(4, 2, horizon=10, epsilon=1.0, delta=1e-6, feedback=feedback, sampler="floating-point")
        assert fp.privacy.sampler == "floating-point" and "exponential weights" in fp.privacy.notes
        assert "Mironov" in str(fp.privacy) and "Mironov" in fp.privacy.caveat
    assert PrivateSubmodular(4, 2, horizon=10, epsilon=None).sampler == "floating-point"  # nothing to protect
    assert PrivateSubmodular(4, 2, horizon=10, epsilon=None, sampler="exact").params["eta_exact"] > 0
    for learner in (PrivateEXP3(2, horizon=5, epsilon=1.0, sampler="floating-point"),):
        assert learner.privacy.sampler == "floating-point" and learner.grid is None
    stream = LocalStream(np.ones((3, 2)), np.ones(3), loss="squared", budgets=1.0)
    assert stream.sampler == "exact" and stream.privacy(0, 1.0).sampler == "exact"
    assert LocalStream(np.ones((3, 2)), np.ones(3), loss="squared", budgets=1.0, mechanism="l2").sampler == (
        "floating-point"
    )


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: LocalLaplaceRandomizer(2, mechanism="l2", sampler="exact"), "l2.*no exact sampler.*laplace"),
        (
            lambda: LocalStream(np.ones((2, 2)), np.ones(2), loss="squared", mechanism="l2", sampler="exact"),
            "l2.*no exact sampler",
        ),
        (lambda: PrivateSubmodular(4, 2, horizon=10, epsilon=1e14, delta=1e-6), "eta.*floating-point"),
        (
            lambda: PrivateSubmodular(4, 2, horizon=10, epsilon=1e-12, delta=1e-6, calibration="paper"),
            "eta.*floating-point",
        ),
        (lambda: PrivateSubmodular(4, 2, horizon=10, epsilon=1.0, delta=1e-6, sampler="fast"), "sampler"),
        (lambda: PrivateEXP3(2, horizon=5, epsilon=1.0, sampler="float"), "sampler"),
        (lambda: LocalLaplaceRandomizer(2, sampler="fast"), "sampler"),
        (lambda: PrivateEXP3(2, horizon=5, epsilon=1e6), "epsilon.*floating-point"),
        (lambda: PrivateSCRiBLe(L2Ball(1), horizon=5, epsilon=1e-200, loss_bound=1.0), "epsilon"),
        (lambda: PrivateEXP3(2, horizon=5, epsilon=1.0, loss_bound=1e-200), "epsilon|loss_bound"),
    ],
)
def test_unavailable_samplers_and_ranges_are_refused_saying_why(build, match):
    with pytest.raises(InvalidInputError, match=match):
        build()


@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, 1e308, 5e-324, 1e-310, 1e-300])
def test_bad_budgets_and_epsilons_on_the_exact_path_are_refused_naming_them_and_change_nothing(bad):
    """0, negative, NaN, inf (ε only: an infinite budget means no noise), 1e308 and denormals: the argument is
    named, nothing is drawn and the state is unchanged."""
    r = LocalLaplaceRandomizer(1, seed=0)
    before = pickle.dumps(r)
    if not math.isinf(bad):
        with pytest.raises((InvalidInputError, ValueError), match="budget"):
            r.randomize([0.5], [bad])
    assert pickle.dumps(r) == before and r.rounds == 0
    for build in (
        lambda: PrivateEXP3(2, horizon=5, epsilon=bad),
        lambda: PrivateSCRiBLe(L2Ball(1), horizon=5, epsilon=bad, loss_bound=1.0),
    ):
        with pytest.raises((InvalidInputError, ValueError), match="epsilon"):
            build()


def test_bad_feedback_leaves_exact_learners_unchanged():
    for learner in (
        PrivateEXP3(2, horizon=5, epsilon=1.0, seed=0, strict=True),
        PrivateSCRiBLe(L2Ball(1), horizon=5, epsilon=1.0, loss_bound=1.0, seed=0, strict=True),
    ):
        learner.ask()
        before = pickle.dumps(learner)
        for bad in (math.nan, math.inf, -math.inf, 1e308, 5.0):
            with pytest.raises((InvalidInputError, ValueError)):
                learner.tell(bad)
            assert pickle.dumps(learner) == before


# -- the float path is the previous default, bit for bit; exact runs are reproducible and resumable -------------


def test_float_path_is_bit_identical_to_the_previous_default():
    """``sampler="floating-point"`` with a seed reproduces the outputs of the previous default (the values below
    were produced by the build before the exact samplers, with the same calls and no ``sampler``; EXP3 with the
    tuning of that build, ``tuning="paper"``)."""
    exp3 = PrivateEXP3(3, horizon=1000, epsilon=0.5, loss_bound=2.0, sampler="floating-point", tuning="paper", seed=123)
    for _ in range(1000):
        arm = exp3.ask()
        exp3.tell(0.3 * (arm + 1))
    assert exp3.probabilities().tolist() == [0.3948772075628031, 0.30557384052283193, 0.2995489519143651]
    assert exp3.last_release == 5.540782484831456
    scrible = PrivateSCRiBLe(L2Ball(2), horizon=300, epsilon=0.5, loss_bound=1.0, sampler="floating-point", seed=7)
    for _ in range(300):
        y = scrible.ask()
        scrible.tell(float(y @ [0.3, -0.4]))
    assert scrible._core.center.tolist() == [-0.10264807934812661, 0.2486574760989161]
    r = LocalLaplaceRandomizer(2, sampler="floating-point", seed=9)
    assert r.randomize(np.array([[0.5, -0.2], [3.0, 0.1]]), [1.0, 0.25]).tolist() == [
        [1.3593327036286729, 21.17763563397214],
        [3.2322683545700235, -24.03535620088122],
    ]


def test_exact_learners_resume_bit_identically_from_a_pickle():
    a = PrivateEXP3(5, horizon=2_000, epsilon=1.0, seed=4)
    for _ in range(100):
        a.ask()
        a.tell(0.4)
    a.ask()
    b = pickle.loads(pickle.dumps(a))
    for _ in range(500):
        assert a.ask() == b.ask()
        a.tell(0.7)
        b.tell(0.7)
        assert a.last_release == b.last_release
    features = np.random.default_rng(0).normal(size=(300, 3))
    stream = LocalStream(features, np.sign(features[:, 0]), loss="logistic", budgets=[0.5, 1.0, 2.0])
    one = CoordinatewiseLearner(3, 1.0, seed=5)
    two = CoordinatewiseLearner(3, 1.0, seed=5)
    one.run(stream, rounds=300)
    two.run(stream, rounds=150)
    two = pickle.loads(pickle.dumps(two))
    two.run(stream, rounds=150)
    assert np.array_equal(one.ask(), two.ask())


# -- EXP3's pre-drawn noise block is never shared with a forked child -----------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="os.fork is POSIX only")
@pytest.mark.parametrize("sampler", ["exact", "floating-point"])
@pytest.mark.parametrize("pending", [False, True])
def test_exp3_forked_children_never_release_the_parents_pre_drawn_noise(sampler, pending):
    """An unseeded PrivateEXP3 pre-draws 64 rounds of noise; the parent plays a few rounds (the block is mid-way),
    optionally asks the next arm, and forks twice. The children release 0.37 and 0 in their next round: with the
    parent's block the releases would differ by exactly 0.37 (on the exact grid, within γ ≈ 10⁻⁹). The block records
    the generator's fork epoch and each child redraws it, also for a round asked before the fork."""
    from test_no_noise_reuse import _in_child

    learner = PrivateEXP3(3, horizon=100, epsilon=1.0, sampler=sampler)
    for _ in range(5):
        learner.ask()
        learner.tell(0.5)
    if pending:
        learner.ask()

    def release(x: float):
        return lambda: _first_release(learner, x)

    a, b = _in_child(release(0.37)), _in_child(release(0.0))
    assert abs((a - b) - 0.37) > 1e-6, (a, b)
    assert _first_release(learner, 0.0) not in (a, b)


# -- PrivateSubmodular: exact exponential-mechanism draws ----------------------------------------------------------


def _chi2_critical_1e6(dof: float) -> float:
    """``P(χ²_dof > x) <= 1e-6`` by the Wilson-Hilferty approximation (z = 4.753, one-sided 1e-6)."""
    c = 2.0 / (9.0 * dof)
    return dof * (1.0 - c + 4.753 * math.sqrt(c)) ** 3


def test_exact_submodular_draws_follow_the_exact_law():
    """Expert 1 is fed the singleton gains ``f_t({a}) = p_t(a)`` whatever the picks, so after the same rows its law
    is the same in every learner: the first item of round 5 over 10,000 seeds against ``expert_probabilities(0)``
    (``∝ exp(η' u_a)`` of the rounded utilities), Pearson χ² at α = 1e-6. ``ε = 40`` with the paper's calibration
    makes ``η' ≈ 0.92`` and the law far from uniform (probabilities from 0.008 to 0.5)."""
    rows = np.array([[0.9, 0.7, 0.5, 0.3, 0.1, 0.0], [0.8, 0.8, 0.2, 0.3, 0.0, 0.1]] * 2)
    counts = np.zeros(6)
    law = None
    for seed in range(10_000):
        learner = PrivateSubmodular(6, 1, horizon=5, epsilon=40.0, delta=1e-6, calibration="paper", seed=seed)
        for row in rows:
            learner.ask()
            learner.tell(row)
        counts[learner.ask()[0]] += 1
        if law is None:
            law = learner.expert_probabilities(0)
            eta = learner.params["eta_exact"]
            units = np.round(rows * 2**20).sum(axis=0) / 2**20
            want = np.exp(eta * (units - units.max()))
            assert np.allclose(law, want / want.sum(), rtol=1e-12)
    expected = law * counts.sum()
    stat = float(((counts - expected) ** 2 / expected).sum())
    assert expected.min() > 100 and stat < _chi2_critical_1e6(5.0), (counts, expected)


def test_exact_submodular_constants_come_from_the_declared_arguments():
    learner = PrivateSubmodular(1000, 10, horizon=10_000, epsilon=1.0, delta=1e-6, seed=0)
    p = learner.params
    assert p["sampler"] == "exact" and p["payoff_grid"] == 2.0**-20
    step = 2.0 ** (20 - 63)
    assert p["eta"] - step < p["eta_exact"] <= p["eta"]
    assert (p["eta"] - p["eta_exact"]) / p["eta"] < 1e-8
    assert PrivateSubmodular(4, 2, horizon=2**60, epsilon=1.0, delta=1e-6).params["payoff_grid"] == 2.0**-3
    fp = PrivateSubmodular(4, 2, horizon=10, epsilon=1.0, delta=1e-6, sampler="floating-point").params
    assert fp["sampler"] == "floating-point" and fp["eta_exact"] is None and fp["payoff_grid"] is None


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_exact_submodular_resumes_bit_identically_and_refuses_bad_input_unchanged(feedback):
    from dponline.submodular import ProbabilisticCoverage

    P = np.random.default_rng(7).uniform(0.0, 0.5, size=(40, 8))
    fam = ProbabilisticCoverage(P)
    a = PrivateSubmodular(8, 3, horizon=40, epsilon=2.0, delta=1e-6, feedback=feedback, seed=5)
    b = PrivateSubmodular(8, 3, horizon=40, epsilon=2.0, delta=1e-6, feedback=feedback, seed=5)
    a.run(fam, rounds=15)
    b.run(fam, rounds=15)
    copy = pickle.loads(pickle.dumps(a))
    assert copy.sampler == "exact" and copy._core.to_bytes() == a._core.to_bytes()
    tail_a, tail_c = a.run(fam, rounds=25), copy.run(fam, rounds=25)
    assert tail_a.total_loss == tail_c.total_loss and np.array_equal(tail_a.final_point, tail_c.final_point)
    restored = type(b._core).from_bytes(b._core.to_bytes())
    assert restored.to_bytes() == b._core.to_bytes()
    b.ask()
    before = b._core.to_bytes()
    bad = np.full(8, 0.2)
    bad[3] = math.nan
    with pytest.raises(InvalidInputError if feedback == "full" else ValueError):
        b.tell(bad if feedback == "full" else math.nan)
    assert b._core.to_bytes() == before


@pytest.mark.slow
def test_audit_of_exact_submodular_default_passes_and_the_lattice_finds_nothing():
    """The default (exact, OS-keyed) learner, neighbouring streams that differ in round 1 at the extremes of
    ``[0, 1]``: the first set that can depend on round 1, audited at the claimed ``(ε, δ)`` — a category
    statistic and the lattice statistic (sets are integers: nothing to find); an ``ε = 200`` learner (``η ≈
    7``) is caught by the same audit against the claim ``ε = 1``, so the audit is not blind."""
    from dponline.audit import FirstAction, play

    a, b = [[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]]

    def build(epsilon):
        return lambda seed: PrivateSubmodular(2, 1, horizon=2, epsilon=epsilon, delta=1e-5, secure=True)

    for statistic in (FirstAction(1), LatticeGrid((1,))):
        result = audit(build(1.0), play, a, b, trials=10_000, statistic=statistic, delta=1e-5, claimed=1.0, seed=11)
        assert result.passed, result
    leaky = audit(build(200.0), play, a, b, trials=2_000, statistic=FirstAction(1), delta=1e-5, claimed=1.0, seed=12)
    assert not leaky.passed, leaky


# Bandit PrivateSubmodular above its exploration cap: |U| = 2, k = 1, T = BANDIT_T. gamma = min(1, ((16|U|
# ln|U|)^2 / T)^(1/3)) is 1 up to T ~ 492 (every round then explores a uniform item and the played sets do not
# depend on the data, so an audit there is blind); at T = 2000, gamma ~ 0.63 and 37% of the rounds replay the
# expert's last draw, which depends on the data.
BANDIT_T, BANDIT_TAIL = 2000, 100


def _bandit_tail_count(learner, first_row):
    """Play the stream whose round 1 is ``first_row`` and every other round 0 (natively up to the last
    ``BANDIT_TAIL`` rounds, then ask/tell) and return how often item 0 was played in those last rounds."""
    from dponline.submodular import ProbabilisticCoverage

    rows = np.zeros((BANDIT_T, 2))
    rows[0] = first_row
    learner.run(ProbabilisticCoverage(rows), rounds=BANDIT_T - BANDIT_TAIL)
    count = 0
    for _ in range(BANDIT_TAIL):
        count += int(learner.ask()[0] == 0)
        learner.tell(0.0)
    return count


@pytest.mark.slow
def test_audit_of_bandit_submodular_above_the_exploration_cap_passes_and_is_not_blind():
    """The bandit learner with its default exact sampler at ``(ε, δ) = (1, 1e-5)``, neighbouring streams that differ
    in round 1 (``f_1`` covers item 0 with probability 1, or item 1) and are 0 elsewhere. Round 1 explores
    (probability γ ≈ 0.63) a uniform item and feeds its payoff to the expert; every later payoff is 0, so the
    expert's utilities keep round 1's difference and every exploit round replays a draw from them. The statistic is
    the count of item 0 among the last 100 played sets, thresholded at a level chosen on half of the 2,000 trials
    per input (under 1 ms per trial: 1,900 native rounds, then 100 ask/tell rounds; about 5 s in all). An
    ``ε = 10⁴`` learner (``η ≈ 10``: after ``u = (1, 0)`` a draw is item 1 with probability ``e^{−10}``) is
    refuted by the same audit against the claim ``ε = 1`` (``ε̂ = 2.07``: count <= 35 in 25% of its stream-b
    trials, 0.4% under a), so the audit is not blind; the ``ε = 1`` learner (``η ≈ 10⁻³``) passes with ``ε̂ = 0``.
    Seeded learners (the trials' seeds), so the outcome is fixed."""
    import warnings

    def build(epsilon):
        def factory(seed):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # gamma < 1 at this horizon: no ExplorationCappedWarning
                return PrivateSubmodular(
                    2, 1, horizon=BANDIT_T, epsilon=epsilon, delta=1e-5, feedback="bandit", seed=seed
                )

        return factory

    assert build(1.0)(0).params["gamma"] < 0.7 and build(1.0)(0).sampler == "exact"
    a, b = [1.0, 0.0], [0.0, 1.0]
    kwargs = {"trials": 2_000, "statistic": Threshold(), "delta": 1e-5, "claimed": 1.0}
    result = audit(build(1.0), _bandit_tail_count, a, b, seed=21, **kwargs)
    assert result.passed, result
    leaky = audit(build(1e4), _bandit_tail_count, a, b, seed=22, **kwargs)
    assert not leaky.passed, leaky
