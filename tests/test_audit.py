"""dponline.audit: the confidence bound, the statistics, and black-box audits of the mechanisms and learners.

Every audit here runs with fixed seeds at alpha = 1e-6, so none of them flakes: a refuted claim is a real
violation (or a one-in-a-million event, reproduced identically on every run)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from dponline import (
    DPFTPL,
    DPFTRL,
    LocalLaplaceRandomizer,
    NoisyOCO,
    PrivateBandit,
    PrivateDRSubmodular,
    PrivateEXP3,
    PrivateSCRiBLe,
    TreeAggregator,
)
from dponline.aggregation import BLT, HonakerTree, KaryTree
from dponline.audit import (
    AuditResult,
    Categories,
    FirstAction,
    LatticeGrid,
    Threshold,
    audit,
    epsilon_lower_bound,
    grid_exponent,
    play,
)
from dponline.domains import Box, L2Ball, Simplex, UniformMatroid
from dponline.errors import InvalidInputError

# -- the bound ------------------------------------------------------------------------------------------------


def test_bound_matches_the_clopper_pearson_closed_forms():
    """All hits under a and none under b: P_a,lower = (α/2)^(1/n) and P_b,upper = 1 − (α/2)^(1/n) exactly."""
    n, alpha = 1000, 1e-6
    q = (alpha / 2) ** (1 / n)
    assert epsilon_lower_bound(n, 0, n, alpha=alpha) == pytest.approx(math.log(q / (1 - q)), rel=1e-9)
    assert epsilon_lower_bound(n, 0, n, delta=0.5, alpha=alpha) == pytest.approx(
        math.log((q - 0.5) / (1 - q)), rel=1e-9
    )
    assert epsilon_lower_bound(0, 0, n) == -math.inf  # no hits under a: nothing to bound
    assert epsilon_lower_bound(10, 0, n, delta=0.5) == -math.inf  # δ eats the lower bound
    hits = np.arange(0, 1001, 100)
    assert np.all(np.diff(epsilon_lower_bound(hits[1:], 50, n)) > 0)  # more hits under a: larger bound
    assert np.all(np.diff(epsilon_lower_bound(500, hits, n)) < 0)  # more hits under b: smaller bound


def test_bound_holds_with_its_confidence_on_the_worst_case_event():
    """Coverage: binomial counts of an event with P_a = e^ε·P_b exactly (the extreme an ε-DP mechanism allows).
    At α = 0.05 the bound may exceed ε in at most 5% of repetitions (Clopper-Pearson is conservative): 40,000
    repetitions give at most 2000 + 5 standard deviations. And it is informative: its median is within 0.2 of ε."""
    rng = np.random.default_rng(5)
    eps, n, reps = 1.0, 5000, 40_000
    p_b = 0.05
    hits_a = rng.binomial(n, math.exp(eps) * p_b, reps)
    hits_b = rng.binomial(n, p_b, reps)
    bounds = epsilon_lower_bound(hits_a, hits_b, n, alpha=0.05)
    assert np.count_nonzero(bounds > eps) <= 0.05 * reps + 5 * math.sqrt(0.05 * 0.95 * reps)
    assert np.median(bounds) > eps - 0.2


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hits_a": 5, "hits_b": 1, "trials_a": 0}, "trials_a"),
        ({"hits_a": 11, "hits_b": 1, "trials_a": 10}, "hits_a"),
        ({"hits_a": 5, "hits_b": -1, "trials_a": 10}, "hits_b"),
        ({"hits_a": 5, "hits_b": 1, "trials_a": 10, "delta": 1.0}, "delta"),
        ({"hits_a": 5, "hits_b": 1, "trials_a": 10, "alpha": 0.0}, "alpha"),
    ],
)
def test_bound_refuses_bad_counts(kwargs, match):
    with pytest.raises(InvalidInputError, match=match):
        epsilon_lower_bound(**kwargs)


# -- statistics -----------------------------------------------------------------------------------------------


def test_grid_exponent_is_the_finest_power_of_two_grid():
    assert grid_exponent([0.75, 6.0, 1.0, -0.5, 3.0]).tolist() == [2, -1, 0, 1, 0]
    assert grid_exponent(5e-324) == 1074 and grid_exponent(2.0**1023) == -1023
    assert grid_exponent(0.0) == 2**31 - 1
    rng = np.random.default_rng(0)
    x = rng.standard_normal(10_000) * np.exp2(rng.integers(-1070, 1000, 10_000))
    k = grid_exponent(x)
    on = np.ldexp(x, k.astype(np.int32))  # x·2^k: an odd integer
    assert np.all(on == np.round(on)) and np.all(np.abs(np.fmod(on, 2.0)) == 1.0)
    with pytest.raises(InvalidInputError, match="finite"):
        grid_exponent([1.0, np.nan])


def _laplace_shift(seed, x):  # reference mechanism for the statistics: x + Laplace(1) in numpy, ε = 1 exactly
    return x + np.random.default_rng(seed).laplace(0.0, 1.0, 50_000)


def _randomized_response(seed, x):  # ε = 1 randomised response of one bit
    keep = np.random.default_rng(seed).random(50_000) < math.e / (1 + math.e)
    return np.where(keep, x, 1 - x)


def _geometric(seed, x):  # x + two-sided geometric noise with ratio e^-1 per unit: ε = 1 for |x − x'| = 1
    rng = np.random.default_rng(seed)
    p = 1 - math.exp(-1.0)
    return x + rng.geometric(p, 50_000) - rng.geometric(p, 50_000)


@pytest.mark.parametrize(
    ("mechanism", "statistic", "tight"),
    [
        (_laplace_shift, Threshold(), True),
        (_randomized_response, Categories(), True),
        (_geometric, Threshold(), True),
        (_geometric, LatticeGrid(), False),  # integer outputs: grids differ only in parity-like patterns
        (_laplace_shift, Threshold(threshold=3.0), True),  # a fixed event: every trial estimates it
    ],
)
def test_audits_of_exact_reference_mechanisms_stay_below_and_near_their_epsilon(mechanism, statistic, tight):
    """Mechanisms whose ε = 1 is exact (numpy samplers, 2·10⁵ trials per input in batches): the audit never
    exceeds 1, and with the likelihood-ratio events (thresholds, the kept bit) it comes within 0.15 of it. The
    bound of a data-chosen event is computed on trials independent of the choice."""
    result = audit(
        lambda seed: seed, mechanism, 1, 0, trials=200_000, batch=50_000, statistic=statistic, claimed=1.0, seed=3
    )
    assert result.passed and result.epsilon_lower <= 1.0
    if tight:
        assert result.epsilon_lower > 0.85, result
    fixed = getattr(statistic, "threshold", None) is not None
    assert result.selection_trials == (0 if fixed else 100_000)
    assert result.trials == (200_000 if fixed else 100_000)


def test_a_mechanism_that_leaks_is_caught():
    """Laplace(1/2) on a unit shift is 2-DP: an audit against a claimed ε = 1 refutes it."""
    result = audit(
        lambda seed: np.random.default_rng(seed),
        lambda rng, x: x + rng.laplace(0.0, 0.5, 50_000),
        1.0, 0.0, trials=200_000, batch=50_000, statistic=Threshold(), claimed=1.0, seed=4,
    )  # fmt: skip
    assert result.passed is False and 1.0 < result.epsilon_lower <= 2.0
    assert "claim refuted" in str(result) and f"likelier under input {result.likelier}" in str(result)


def test_audit_is_reproducible_and_each_trial_gets_its_own_seed():
    seen = []

    def factory(seed):
        seen.append(tuple(seed.spawn_key))
        return np.random.default_rng(seed)

    def release(rng, x):
        return x + rng.laplace()

    first = audit(factory, release, 1.0, 0.0, trials=200, statistic=Threshold(), seed=11)
    assert len(seen) == len(set(seen)) == 400
    again = audit(factory, release, 1.0, 0.0, trials=200, statistic=Threshold(), seed=11, progress=True)
    assert first == again
    assert first.claimed is None and first.passed is None


def test_first_action_reads_discrete_ragged_and_continuous_actions():
    sets = [[np.array([0, 2]), np.array([1])], [np.array([1]), np.array([0, 1, 2])]]
    assert FirstAction(1).values(sets).tolist() == [(1,), (0, 1, 2)]
    arms = [[0, 1, 1], [1, 0, 0]]
    assert FirstAction(2).values(arms).tolist() == [1, 0]
    points = [[np.array([0.1, 0.2]), np.array([0.3, 0.4])], [np.array([0.5, 0.6]), np.array([0.7, 0.8])]]
    assert FirstAction(1, 1).values(points).tolist() == [0.4, 0.8]
    assert FirstAction(1, members=[[0, 1, 2]]).fixed_event().count(FirstAction(1).values(sets)) == 1
    with pytest.raises(InvalidInputError, match="threshold"):
        FirstAction(1, threshold=0.5)
    with pytest.raises(InvalidInputError, match="members"):
        FirstAction(1, 0, members=[1])


def test_play_returns_the_actions_of_each_round():
    learner = PrivateEXP3(3, horizon=4, epsilon=1.0, seed=0)
    actions = play(learner, [0.5, 0.5, 0.5])
    assert len(actions) == 3 and learner.t == 3 and all(isinstance(a, int) for a in actions)
    ftrl = DPFTRL(Simplex(2), horizon=3, epsilon=1.0, loss_bound=1.0, seed=0)
    points = play(ftrl, [[1.0, 0.0], [0.0, 1.0]])
    points[0][0] = 99.0  # copies: the learner's own buffers are untouched
    assert ftrl.ask()[0] != 99.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"trials": 0}, "trials"),
        ({"trials": 1}, "at least 2"),
        ({"alpha": 0.7}, "alpha"),
        ({"delta": -0.1}, "delta"),
        ({"selection": 1.0}, "selection"),
        ({"batch": 3}, "batch"),
        ({"seed": np.random.default_rng(0)}, "seed"),
        ({"statistic": 3}, "statistic"),
        ({"statistic": Threshold(lambda out: math.nan)}, "NaN"),
    ],
)
def test_bad_arguments_are_refused(kwargs, match):
    args = {"trials": 10, "statistic": Threshold(), **kwargs}
    with pytest.raises(InvalidInputError, match=match):
        audit(lambda seed: seed, lambda seed, x: x, 0.0, 1.0, **args)


def test_outputs_a_statistic_cannot_read_are_refused():
    with pytest.raises(InvalidInputError, match="select"):
        audit(lambda seed: seed, lambda seed, x: np.full(3, x), 0.0, 1.0, trials=10, statistic=Threshold())
    with pytest.raises(InvalidInputError, match="select"):
        Threshold(0.5)
    ragged = audit(
        lambda seed: np.random.default_rng(seed),
        lambda rng, x: [x] * int(rng.integers(1, 4)),
        0.0, 1.0, trials=50, statistic=Categories(len),
    )  # fmt: skip
    assert isinstance(ragged, AuditResult) and ragged.epsilon_lower == 0.0


# -- the floating-point lattice (Mironov 2012) ----------------------------------------------------------------

LATTICE_TRIALS = 40_000
LATTICE_BATCH = 20_000


# The tree's factories select the floating-point path explicitly (the exact sampler is the default, audited by
# test_lattice_audit_of_the_default_mechanisms below). SWITCH the local randomiser's when its exact path lands.
def _float_tree(noise: str, delta: float):
    return lambda seed: TreeAggregator.calibrated(
        LATTICE_BATCH, 1, epsilon=1.0, delta=delta, noise=noise, sensitivity=1.0, seed=seed, sampler="floating-point"
    )


def _float_local_randomizer():
    return lambda seed: LocalLaplaceRandomizer(1, bound=1.0, sampler="floating-point", seed=seed)


@pytest.mark.parametrize(
    ("name", "factory", "release", "delta", "at_least", "fixed_at_least"),
    [
        ("tree, Laplace", _float_tree("laplace", 0.0), lambda m, x: m.push(np.full(m.dim, x)), 0.0, 5.0, 6.0),
        ("tree, Gaussian", _float_tree("gaussian", 1e-5), lambda m, x: m.push(np.full(m.dim, x)), 1e-5, 2.5, 3.5),
        (
            "local randomiser",
            _float_local_randomizer(),
            lambda m, x: m.randomize(np.full((LATTICE_BATCH, 1), x), 1.0)[:, 0],
            0.0,
            4.0,
            5.5,
        ),
    ],
)
def test_lattice_audit_catches_the_floating_point_samplers(name, factory, release, delta, at_least, fixed_at_least):
    """A one-row mechanism at ε = 1 released on x = 0 vs x = 1, 40,000 trials per input (each coordinate or row
    of a batch is one independent trial). The statistic is the power-of-two grid of each output, and the event is
    chosen on 20,000 trials per input without knowing where the lattice differs (``1 + Z`` is always a multiple
    of 2^-53, ``0 + Z`` of small magnitude lies on finer grids that x = 1 never reaches), and the bound on the
    other 20,000 trials refutes ε = 1 by far. Measured: tree Laplace 5.84, tree Gaussian 2.97 (the event
    {|Z| < 1/2} is rarer at σ ≈ 4.8), local randomiser 4.82 (λ = 2). With the event {grid exponent ≥ 54} fixed
    in advance from that argument, all 40,000 trials estimate it: 6.50, 3.89 and 5.93 (issue 21 measured 6.4,
    4.0 and 5.9)."""
    result = audit(
        factory, release, 0.0, 1.0, trials=LATTICE_TRIALS, batch=LATTICE_BATCH, statistic=LatticeGrid(),
        delta=delta, claimed=1.0, seed=2021,
    )  # fmt: skip
    assert result.epsilon_lower > at_least, (name, result)
    fixed = audit(
        factory, release, 0.0, 1.0, trials=LATTICE_TRIALS, batch=LATTICE_BATCH,
        statistic=LatticeGrid(members=range(54, 1076)), delta=delta, claimed=1.0, seed=2021,
    )  # fmt: skip
    assert fixed.epsilon_lower > fixed_at_least, (name, fixed)


def _two_pushes(m, x):
    """The release after a second push of zeros, the first having pushed ``x``: every mechanism's release then
    involves a node above the leaves (the Honaker weights, the k-ary and binary covers)."""
    m.push(np.full(m.dim, x))
    return m.push(np.zeros(m.dim))


_DEFAULT_MECHANISMS = {
    "tree, Laplace": lambda seed: TreeAggregator.calibrated(LATTICE_BATCH, 4, epsilon=1.0, sensitivity=1.0, seed=seed),
    "tree, Gaussian": lambda seed: TreeAggregator.calibrated(
        LATTICE_BATCH, 4, epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=seed
    ),
    "unpadded tree, Laplace": lambda seed: TreeAggregator.calibrated(
        LATTICE_BATCH, 4, epsilon=1.0, sensitivity=1.0, padded=False, seed=seed
    ),
    "Honaker, Laplace": lambda seed: HonakerTree.calibrated(LATTICE_BATCH, 4, epsilon=1.0, sensitivity=1.0, seed=seed),
    "Honaker, Gaussian": lambda seed: HonakerTree.calibrated(
        LATTICE_BATCH, 4, epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=seed
    ),
    "3-ary plain, Laplace": lambda seed: KaryTree.calibrated(
        LATTICE_BATCH, 4, k=3, readout="plain", epsilon=1.0, sensitivity=1.0, seed=seed
    ),
    "3-ary Honaker, Gaussian": lambda seed: KaryTree.calibrated(
        LATTICE_BATCH, 4, k=3, epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=seed
    ),
    "BLT, Gaussian": lambda seed: BLT.calibrated(
        LATTICE_BATCH, 4, buffers=2, epsilon=1.0, delta=1e-5, sensitivity=1.0, seed=seed
    ),
    "BLT, Laplace": lambda seed: BLT.calibrated(LATTICE_BATCH, 4, buffers=2, epsilon=1.0, sensitivity=1.0, seed=seed),
}


@pytest.mark.parametrize("name", _DEFAULT_MECHANISMS)
def test_lattice_audit_of_the_default_mechanisms(name):
    """Issue 21's acceptance test: the statistic that refutes ε = 1 by far on the floating-point path (above)
    finds nothing on the defaults (exact discrete noise on a power-of-two grid): ε̂ <= 1.3 at ε = 1, both with the
    event chosen on half the trials and with the event {grid exponent >= 54} fixed in advance. The outputs of the
    tree and the plain readout are integer multiples of the grid whose low bits are those of the noise, nearly
    uniform whatever the input; the Honaker estimates are float functions of integer node values. 40,000 trials
    per input, as above."""
    factory = _DEFAULT_MECHANISMS[name]
    probe = factory(0)
    assert probe.sampler == "exact" and probe.privacy.sampler == "exact" and probe.grid is not None
    delta = probe.privacy.delta
    for statistic in (LatticeGrid(), LatticeGrid(members=range(54, 1076))):
        result = audit(
            factory, _two_pushes, 0.0, 1.0, trials=LATTICE_TRIALS, batch=LATTICE_BATCH, statistic=statistic,
            delta=delta, claimed=1.0, seed=2021,
        )  # fmt: skip
        assert result.epsilon_lower <= 1.3, (name, result)
        if name.startswith("BLT"):
            # Decoded from the integer view and rounded onto the grid: nothing at all for this statistic.
            assert result.epsilon_lower == 0.0, (name, result)


# -- threshold audits of the local randomiser -----------------------------------------------------------------


@pytest.mark.parametrize("mechanism", ["laplace", "l2"])
def test_threshold_audit_of_the_local_randomizer(mechanism):
    """One provider, G = 1, budget 1, releases of g = +G vs g' = −G (the extreme inputs: the privacy loss of a
    release beyond both is exactly the budget), 2·10⁵ trials per input in batches of rows: the data-chosen
    threshold event stays ≤ 1 and is tight (> 0.9) in one dimension, where both mechanisms are Laplace(2G/ε)."""
    result = audit(
        lambda seed: LocalLaplaceRandomizer(1, bound=1.0, mechanism=mechanism, seed=seed),
        lambda r, g: r.randomize(np.full((50_000, 1), g), 1.0)[:, 0],
        1.0, -1.0, trials=200_000, batch=50_000, statistic=Threshold(), claimed=1.0, seed=17,
    )  # fmt: skip
    assert result.passed and result.epsilon_lower > 0.9, result


# -- audits of every learner on its first released quantity ---------------------------------------------------


def _exp3_release_score(learner, loss):
    """The round-1 feedback release f̂ recovered from public outputs: the arm played and the probabilities after
    it. With two arms the log-ratio of the exploitation weights is −η·f̂/p with p = 1/2 the played arm's first
    probability, so the score is monotone in f̂ (the likelihood-ratio statistic of the Laplace release)."""
    arm = learner.ask()
    learner.tell(loss)
    p = learner.probabilities()
    half_gamma = learner.params["gamma"] / 2
    return -math.log((p[arm] - half_gamma) / (p[1 - arm] - half_gamma))


def _signed(first: int, later: int):
    """``sign(action_first) · action_later`` (one-dimensional actions around the centre 0): the direction played
    in round ``first + 1`` times the later action. The gradient estimate ``(d/ζ) f u`` is symmetric in ``f`` unless
    it is read against the direction ``u`` played, which the first action reveals."""

    def score(actions):
        return float(np.sign(actions[first][0]) * actions[later][0])

    score.__name__ = f"sign(action {first + 1})·action {later + 1}"
    return score


def _point_after_one_round(learner, rows):
    play(learner, rows)
    learner.ask()
    return learner.point.copy()


@dataclass(frozen=True)
class LearnerAudit:
    """One learner's audit: ``factory(epsilon, seed)`` builds it, ``release(learner, stream)`` runs it on one of the
    neighbouring streams ``a``, ``b``; ``claimed`` is its ``(ε, δ)``. The control is the same learner built with
    ``epsilon=None`` (no noise, same code path), audited against the same claim on ``control_trials`` trials."""

    factory: Callable[[float | None, Any], Any]
    release: Callable[[Any, Any], Any]
    a: Any
    b: Any
    statistic: Any
    claimed: tuple[float, float]
    trials: int
    control_trials: int


LEARNER_AUDITS = {
    "DPFTRL Laplace": LearnerAudit(
        lambda e, s: DPFTRL(Simplex(2), horizon=2, epsilon=e, loss_bound=1.0, seed=s),
        play, [[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]], FirstAction(1, 0), (1.0, 0.0), 10_000, 2_000,
    ),
    "DPFTRL Gaussian": LearnerAudit(
        lambda e, s: DPFTRL(Simplex(2), horizon=2, epsilon=e, delta=1e-5 if e else 0.0, loss_bound=1.0, seed=s),
        play, [[1.0, 0.0], [0.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]], FirstAction(1, 0), (1.0, 1e-5), 4_000, 2_000,
    ),
    "DPFTPL": LearnerAudit(
        lambda e, s: DPFTPL(Box([-1.0], [1.0]), horizon=2, epsilon=e, delta=1e-5 if e else 0.0, loss_bound=1.0,
                            seed=s),
        play, [[1.0], [0.0]], [[-1.0], [0.0]], FirstAction(1), (1.0, 1e-5), 4_000, 6_000,
    ),
    "NoisyOCO": LearnerAudit(
        lambda e, s: NoisyOCO(L2Ball(1), horizon=2, epsilon=e, lipschitz=1.0, seed=s),
        play, [[1.0], [0.0]], [[-1.0], [0.0]], FirstAction(1), (1.0, 0.0), 4_000, 2_000,
    ),
    "PrivateBandit": LearnerAudit(
        lambda e, s: PrivateBandit(L2Ball(1), horizon=9, epsilon=e, lipschitz=1.0, seed=s),
        play, [2.0] + [0.0] * 6, [-2.0] + [0.0] * 6, Threshold(_signed(0, 6)), (1.0, 0.0), 4_000, 2_000,
    ),
    "PrivateEXP3": LearnerAudit(
        lambda e, s: PrivateEXP3(2, horizon=2, epsilon=e, seed=s),
        _exp3_release_score, 1.0, 0.0, Threshold(), (1.0, 0.0), 20_000, 2_000,
    ),
    "PrivateSCRiBLe": LearnerAudit(
        lambda e, s: PrivateSCRiBLe(L2Ball(1), horizon=2, epsilon=e, loss_bound=1.0, seed=s),
        play, [1.0, 0.0], [-1.0, 0.0], Threshold(_signed(0, 1)), (1.0, 0.0), 20_000, 2_000,
    ),
    "PrivateDRSubmodular": LearnerAudit(
        lambda e, s: PrivateDRSubmodular(UniformMatroid(2, 1, base=False), horizon=2, epsilon=e, seed=s),
        _point_after_one_round, [[1.0, 0.0]], [[0.0, 1.0]], Threshold(0), (1.0, 0.0), 4_000, 2_000,
    ),
}  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", LEARNER_AUDITS)
def test_learner_audit_on_the_first_released_quantity(name):
    """Neighbouring streams differ in round 1 only, at the extremes of the declared bound; the statistic reads the
    first quantity the learner releases that depends on round 1 (an action, or a public post-processing of the
    release), and the event is chosen on half of the trials. Asserted: ε̂ ≤ the claimed ε; and the non-private
    learner (same code path, no noise) is caught by the same audit, so the audit is not blind.

    Measured ε̂ (claimed ε = 1; the non-private control in brackets): PrivateEXP3 0.86 [4.2] and PrivateSCRiBLe
    0.81 [3.4] — their first release is one Laplace draw, which the statistic reads almost losslessly; DP-FTRL
    Laplace 0.11 [4.2] — its first release carries at most half of ε (row 1 enters two released nodes) and the
    action is a softmax of a difference of two noisy coordinates; DP-FTRL Gaussian, DP-FTPL, NoisyOCO, PrivateBandit
    and PrivateDRSubmodular 0 [4.2, 1.5, 4.2, 3.4, 4.2] — their noise at these tiny horizons (scale several times the
    sensitivity) leaves one action nearly independent of round 1, so these only catch gross violations."""
    case = LEARNER_AUDITS[name]
    eps, delta = case.claimed
    result = audit(
        lambda seed: case.factory(eps, seed), case.release, case.a, case.b, trials=case.trials,
        statistic=case.statistic, delta=delta, claimed=eps, seed=101,
    )  # fmt: skip
    assert result.passed, result
    leaky = audit(
        lambda seed: case.factory(None, seed), case.release, case.a, case.b, trials=case.control_trials,
        statistic=case.statistic, delta=delta, claimed=eps, seed=202,
    )  # fmt: skip
    assert not leaky.passed, leaky
