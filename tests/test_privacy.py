"""Tests of dponline.privacy: hand cases, agreement with dp-accounting, inverses, orderings, errors."""

from __future__ import annotations

import dataclasses
import functools
import importlib
import itertools
import math
import pickle
import re
import sys
import types
from pathlib import Path

import numpy as np
import pytest

try:
    from dponline import errors, privacy
except ImportError:  # compiled core not built: load the two pure-Python modules under a private package name
    _package = types.ModuleType("_dponline_pure")
    _package.__path__ = [str(Path(__file__).resolve().parents[1] / "python" / "dponline")]
    sys.modules[_package.__name__] = _package
    errors = importlib.import_module("_dponline_pure.errors")
    privacy = importlib.import_module("_dponline_pure.privacy")

InvalidInputError = errors.InvalidInputError
NonFiniteError = errors.NonFiniteError

# Rényi orders shared with dp-accounting in the RDP comparison (all > 1.01, where dp-accounting applies the
# Canonne-Kamath-Steinke bound).
ORDERS = [
    1.25,
    1.5,
    1.75,
    2.0,
    2.5,
    3.0,
    4.0,
    5.0,
    6.0,
    8.0,
    10.0,
    12.0,
    16.0,
    20.0,
    32.0,
    64.0,
    128.0,
    256.0,
]


@pytest.fixture(scope="module")
def dp_accounting():
    return pytest.importorskip("dp_accounting")


# ---------------------------------------------------------------------------------------------------------
# Hand-computed cases


def test_laplace_scale_is_sensitivity_over_epsilon():
    assert privacy.laplace_scale(0.5, 2) == 4.0
    assert privacy.laplace_scale(2.0, 3.0) == 1.5


def test_levels_touched_values():
    assert [privacy.levels_touched(t) for t in range(1, 10)] == [1, 2, 2, 3, 3, 3, 3, 4, 4]
    assert privacy.levels_touched(1000) == 10
    assert privacy.levels_touched(1024) == 11
    assert privacy.levels_touched(np.int64(8)) == 4


@pytest.mark.parametrize("horizon", range(1, 70))
def test_levels_touched_counts_released_dyadic_nodes(horizon):
    # Independent brute force: round s lies in block (k·2^j, (k+1)·2^j] at level j, k = (s-1) // 2^j; the
    # block is released iff it ends at or before the horizon. Count per s, maximise over s.
    def released(s):
        return sum((((s - 1) >> j) + 1) << j <= horizon for j in range(horizon.bit_length() + 1))

    assert max(released(s) for s in range(1, horizon + 1)) == privacy.levels_touched(horizon)


def test_tree_laplace_scale_uses_exact_level_count():
    assert privacy.tree_laplace_scale(1.0, 1.0, 8) == 4.0  # B = 4 at a power of two
    assert privacy.tree_laplace_scale(1.0, 1.0, 7) == 3.0  # B = 3
    assert privacy.tree_laplace_scale(0.5, 2.0, 8) == 16.0  # 2 · 4 / 0.5


def test_gaussian_sigma_classical_hand_case():
    # Δ = 1, ε = 0.5, δ = 1e-5: σ = sqrt(2 ln(1.25e5)) / 0.5 = 2 sqrt(2 ln 125000) ≈ 9.68961
    sigma = privacy.gaussian_sigma_classical(0.5, 1e-5, 1.0)
    assert sigma == pytest.approx(2.0 * math.sqrt(2.0 * math.log(125000.0)), rel=1e-15)
    assert sigma == pytest.approx(9.68961, abs=1e-5)
    assert privacy.gaussian_sigma_classical(0.5, 1e-5, 3.0) == pytest.approx(3.0 * sigma, rel=1e-15)


def test_gaussian_delta_closed_forms():
    # ε = 0: δ = Φ(Δ/2σ) − Φ(−Δ/2σ) = erf(Δ / (2σ√2)).
    assert privacy.gaussian_delta(0.0, 1.0, 1.0) == pytest.approx(math.erf(1.0 / (2.0 * math.sqrt(2.0))), rel=1e-14)
    assert privacy.gaussian_delta(0.0, 3.0, 2.0) == pytest.approx(math.erf(2.0 / (6.0 * math.sqrt(2.0))), rel=1e-14)
    assert privacy.gaussian_delta(1.0, 0.0, 1.0) == 1.0
    # Depends on σ and Δ only through σ/Δ.
    assert privacy.gaussian_delta(0.7, 2.0, 4.0) == pytest.approx(privacy.gaussian_delta(0.7, 0.5, 1.0), rel=1e-13)


def test_tree_gaussian_paper_hand_case():
    # T = 8 ⇒ B = 4; σ = Δ · B · ln(B/δ) / ε = 1 · 4 · ln(4e6) / 0.5 = 8 ln(4e6) ≈ 121.67
    sigma = privacy.tree_gaussian_sigma(0.5, 1e-6, 1.0, 8, "paper")
    assert sigma == pytest.approx(8.0 * math.log(4e6), rel=1e-15)
    # T = 1000 ⇒ B = 10: 10 ln(1e7) ≈ 161.18 (Theorem 2.3's depth factor is 10 here, not log2(1000) ≈ 9.97)
    assert privacy.tree_gaussian_sigma(1.0, 1e-6, 1.0, 1000) == pytest.approx(10.0 * math.log(1e7), rel=1e-15)


def test_tree_gaussian_paper_never_below_analytic_hand_case():
    # T = 1, ε = 1, δ = 0.9: the paper's 1 · ln(1/0.9) ≈ 0.105 is less than the exact requirement ≈ 0.268.
    paper_formula = math.log(1 / 0.9)
    analytic = privacy.tree_gaussian_sigma(1.0, 0.9, 1.0, 1, "analytic")
    assert analytic > paper_formula
    assert privacy.tree_gaussian_sigma(1.0, 0.9, 1.0, 1, "paper") == analytic


def test_advanced_composition_hand_case():
    # k = 10, ε = 0.1, δ' = 1e-6: sqrt(2·10·ln 1e6)·0.1 = sqrt(276.3102)·0.1 = 1.6622581;
    # k ε (e^ε − 1) = 10 · 0.1 · 0.1051709 = 0.1051709; ε' = 1.7674291. δ_total = 10·1e-7 + 1e-6 = 2e-6.
    guarantee = privacy.advanced_composition(0.1, 1e-7, 10, 1e-6)
    assert guarantee.epsilon == pytest.approx(1.7674291, abs=1e-7)
    assert guarantee.epsilon == pytest.approx(
        math.sqrt(20 * math.log(1e6)) * 0.1 + 10 * 0.1 * (math.exp(0.1) - 1), rel=1e-14
    )
    assert guarantee.delta == pytest.approx(2e-6, rel=1e-15)
    assert "Perez-Salazar" in guarantee.source and "Theorem 4" in guarantee.source
    assert "Dwork-Rothblum-Vadhan 2010" in guarantee.source


def test_zcdp_hand_cases():
    assert privacy.zcdp_gaussian_rho(2.0, 1.0) == 0.125  # 1 / (2 · 4)
    assert privacy.zcdp_gaussian_rho(1.0, 3.0) == 4.5
    assert privacy.dp_to_zcdp_rho(0.5) == 0.125
    # Bun-Steinke with ln(1/δ) = 2: ε = 0.5 + 2 sqrt(0.5 · 2) = 2.5.
    assert privacy.zcdp_to_dp(0.5, math.exp(-2.0), "bun-steinke") == pytest.approx(2.5, rel=1e-15)
    # CKS at the single order α = 2, ln(1/δ) = 3: 2ρ + ln(1/2) + (3 − ln 2) / 1 = 1 + 3 − 2 ln 2.
    assert privacy.zcdp_to_dp(0.5, math.exp(-3.0), orders=[2.0]) == pytest.approx(4 - 2 * math.log(2), rel=1e-14)
    assert privacy.zcdp_to_dp(0.0, 1e-6) == 0.0


def test_basic_composition_adds_up():
    parts = [
        privacy.PrivacyGuarantee(0.5, 1e-6, "a"),
        privacy.PrivacyGuarantee(0.25, 0.0, "b"),
        privacy.PrivacyGuarantee(1.0, 2e-6, "c"),
    ]
    total = privacy.basic_composition(parts)
    assert total.epsilon == 1.75
    assert total.delta == pytest.approx(3e-6, rel=1e-15)
    assert total.neighbouring == parts[0].neighbouring
    capped = privacy.basic_composition([privacy.PrivacyGuarantee(1.0, 0.6, "a")] * 2)
    assert capped.delta == 1.0


# ---------------------------------------------------------------------------------------------------------
# Agreement with dp-accounting


@pytest.mark.parametrize(
    ("epsilon", "sigma", "sensitivity"),
    list(itertools.product([0.0, 0.05, 0.5, 1.0, 2.0, 5.0], [0.5, 1.0, 3.0, 10.0], [0.5, 1.0, 4.0])),
)
def test_gaussian_delta_matches_dp_accounting(dp_accounting, epsilon, sigma, sensitivity):
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    reference = GaussianPrivacyLoss(sigma, sensitivity=sensitivity).get_delta_for_epsilon(epsilon)
    assert privacy.gaussian_delta(epsilon, sigma, sensitivity) == pytest.approx(reference, rel=1e-6, abs=0.0)


@pytest.mark.parametrize(
    ("epsilon", "delta", "sensitivity"),
    list(itertools.product([0.01, 0.3, 1.0, 4.0, 20.0], [1e-12, 1e-6, 1e-3, 0.2], [0.25, 1.0, 7.0])),
)
def test_gaussian_sigma_analytic_matches_dp_accounting(dp_accounting, epsilon, delta, sensitivity):
    from dp_accounting import gaussian_mechanism
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    sigma = privacy.gaussian_sigma_analytic(epsilon, delta, sensitivity)
    loss = GaussianPrivacyLoss(sigma, sensitivity=sensitivity)
    assert loss.get_delta_for_epsilon(epsilon) == pytest.approx(delta, rel=1e-6)
    # dp-accounting's own Balle-Wang solver works at sensitivity 1 (σ scales with Δ).
    reference = gaussian_mechanism.get_sigma_gaussian(epsilon, delta) * sensitivity
    assert sigma == pytest.approx(reference, rel=1e-9)


@pytest.mark.parametrize(("sigma", "delta"), list(itertools.product([0.8, 1.0, 2.0, 5.0, 20.0], [1e-5, 1e-9])))
def test_cks_conversion_matches_rdp_accountant(dp_accounting, sigma, delta):
    accountant = dp_accounting.rdp.RdpAccountant(orders=ORDERS)
    accountant.compose(dp_accounting.GaussianDpEvent(noise_multiplier=sigma))
    reference = accountant.get_epsilon(delta)
    assert reference > 0.0

    rho = privacy.zcdp_gaussian_rho(sigma, 1.0)  # RDP ε(α) = α / (2σ²) = αρ
    on_grid = privacy.zcdp_to_dp(rho, delta, orders=ORDERS)
    assert on_grid == pytest.approx(reference, rel=1e-6)
    continuous = privacy.zcdp_to_dp(rho, delta)
    assert continuous <= on_grid * (1 + 1e-12)


@pytest.mark.parametrize("rho", [1e-8, 1e-4, 0.01, 0.3, 1.0, 10.0, 1e4])
@pytest.mark.parametrize("delta", [1e-300, 1e-12, 1e-5, 0.1, 0.9])
def test_cks_continuous_minimum_is_below_a_dense_grid(rho, delta):
    # The infimum over all α > 1 is never above the minimum over a dense grid of orders, and close to it.
    orders = 1.0 + np.geomspace(1e-6, 1e8, 20001)
    on_grid = privacy.zcdp_to_dp(rho, delta, orders=orders)
    continuous = privacy.zcdp_to_dp(rho, delta)
    assert continuous <= on_grid + 1e-12 * max(1.0, on_grid)
    assert continuous >= on_grid - 1e-3 * max(1.0, on_grid)


# ---------------------------------------------------------------------------------------------------------
# Inverses


@pytest.mark.parametrize(
    ("epsilon", "delta", "sensitivity"),
    list(itertools.product([1e-3, 0.1, 0.9, 3.0, 50.0], [1e-15, 1e-8, 1e-3, 0.5], [0.1, 1.0, 30.0])),
)
def test_gaussian_sigma_and_epsilon_are_inverse(epsilon, delta, sensitivity):
    sigma = privacy.gaussian_sigma_analytic(epsilon, delta, sensitivity)
    assert privacy.gaussian_delta(epsilon, sigma, sensitivity) <= delta  # rounded to the safe side
    back = privacy.gaussian_epsilon_analytic(delta, sigma, sensitivity)
    assert back == pytest.approx(epsilon, rel=1e-9)


def test_gaussian_epsilon_is_zero_when_total_variation_is_below_delta():
    sigma = 10.0
    total_variation = privacy.gaussian_delta(0.0, sigma, 1.0)
    assert privacy.gaussian_epsilon_analytic(1.01 * total_variation, sigma, 1.0) == 0.0
    assert privacy.gaussian_epsilon_analytic(0.99 * total_variation, sigma, 1.0) > 0.0


@pytest.mark.parametrize("method", ["cks", "bun-steinke"])
@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product([0.01, 0.5, 2.0, 30.0], [1e-12, 1e-6, 0.1])))
def test_zcdp_gaussian_sigma_round_trip(method, epsilon, delta):
    sigma = privacy.zcdp_gaussian_sigma(epsilon, delta, 2.0, method)
    back = privacy.zcdp_to_dp(privacy.zcdp_gaussian_rho(sigma, 2.0), delta, method)
    assert back == pytest.approx(epsilon, rel=1e-9)
    assert back <= epsilon * (1 + 1e-13)


# ---------------------------------------------------------------------------------------------------------
# Orderings and consistency


@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product([0.01, 0.2, 0.5, 0.99], [1e-12, 1e-5, 0.1])))
def test_analytic_sigma_below_classical(epsilon, delta):
    assert privacy.gaussian_sigma_analytic(epsilon, delta, 1.0) < privacy.gaussian_sigma_classical(epsilon, delta, 1.0)


@pytest.mark.parametrize(("rho", "delta"), list(itertools.product([1e-6, 0.01, 1.0, 100.0], [1e-12, 1e-5, 0.1])))
def test_cks_below_bun_steinke(rho, delta):
    assert privacy.zcdp_to_dp(rho, delta, "cks") < privacy.zcdp_to_dp(rho, delta, "bun-steinke")


@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product([0.05, 1.0, 8.0], [1e-10, 1e-4, 0.3])))
def test_zcdp_sigma_never_below_exact(epsilon, delta):
    exact = privacy.gaussian_sigma_analytic(epsilon, delta, 1.0)
    cks = privacy.zcdp_gaussian_sigma(epsilon, delta, 1.0)
    assert exact <= cks <= privacy.zcdp_gaussian_sigma(epsilon, delta, 1.0, "bun-steinke")


@pytest.mark.parametrize("horizon", [1, 2, 3, 8, 100, 1024, 10**6])
@pytest.mark.parametrize(("epsilon", "delta"), list(itertools.product([0.1, 1.0, 10.0, 50.0], [1e-9, 1e-3, 0.5, 0.9])))
def test_tree_gaussian_calibrations(horizon, epsilon, delta):
    sigmas = {c: privacy.tree_gaussian_sigma(epsilon, delta, 1.5, horizon, c) for c in ("paper", "analytic", "zcdp")}
    assert sigmas["paper"] >= sigmas["analytic"]
    assert sigmas["zcdp"] >= sigmas["analytic"]
    # The delivered ε of each calibration meets the target, the analytic one exactly.
    delivered = {c: privacy.tree_privacy("gaussian", s, 1.5, horizon, delta=delta) for c, s in sigmas.items()}
    assert delivered["analytic"].epsilon == pytest.approx(epsilon, rel=1e-9)
    for guarantee in delivered.values():
        assert guarantee.epsilon <= epsilon * (1 + 1e-12)
        assert guarantee.delta == delta


@pytest.mark.parametrize("horizon", [1, 7, 8, 1000])
def test_tree_laplace_round_trip(horizon):
    scale = privacy.tree_laplace_scale(0.7, 2.0, horizon)
    guarantee = privacy.tree_privacy("laplace", scale, 2.0, horizon)
    assert guarantee.epsilon == pytest.approx(0.7, rel=1e-15)
    assert guarantee.delta == 0.0
    assert "Theorem 2.3" in guarantee.source


def test_gaussian_delta_decreases_in_sigma_and_epsilon():
    sigmas = np.geomspace(0.2, 20.0, 200)
    deltas = [privacy.gaussian_delta(1.0, s, 1.0) for s in sigmas]
    assert all(a > b for a, b in zip(deltas[:-1], deltas[1:], strict=True))
    epsilons = np.linspace(0.0, 8.0, 200)
    deltas = [privacy.gaussian_delta(e, 2.0, 1.0) for e in epsilons]
    assert all(a > b for a, b in zip(deltas[:-1], deltas[1:], strict=True))


# ---------------------------------------------------------------------------------------------------------
# Bad input

BAD_INPUTS = [
    (privacy.laplace_scale, (0.0, 1.0), "epsilon must be finite and > 0"),
    (privacy.laplace_scale, (-1.0, 1.0), re.escape("epsilon must be finite and > 0, got -1.0")),
    (privacy.laplace_scale, (float("nan"), 1.0), "epsilon must be finite and > 0, got nan"),
    (privacy.laplace_scale, (float("inf"), 1.0), "epsilon must be finite and > 0, got inf"),
    (privacy.laplace_scale, ("1", 1.0), "epsilon must be a real number"),
    (privacy.laplace_scale, (1.0, 0.0), "sensitivity must be finite and > 0"),
    (privacy.laplace_scale, (1.0, -2.0), "sensitivity must be finite and > 0"),
    (privacy.gaussian_sigma_classical, (1.0, 1e-5, 1.0), "epsilon must be in .0, 1.*gaussian_sigma_analytic"),
    (privacy.gaussian_sigma_classical, (0.5, 0.0, 1.0), re.escape("delta must be in (0, 1)")),
    (privacy.gaussian_delta, (-0.1, 1.0, 1.0), "epsilon must be finite and >= 0"),
    (privacy.gaussian_delta, (1.0, -1.0, 1.0), "sigma must be finite and >= 0"),
    (privacy.gaussian_delta, (1.0, float("inf"), 1.0), "sigma must be finite"),
    (privacy.gaussian_sigma_analytic, (1.0, 0.0, 1.0), re.escape("delta must be in (0, 1)")),
    (privacy.gaussian_sigma_analytic, (1.0, 1.0, 1.0), re.escape("delta must be in (0, 1)")),
    (privacy.gaussian_sigma_analytic, (1.0, -0.1, 1.0), re.escape("delta must be in (0, 1)")),
    (privacy.gaussian_sigma_analytic, (1.0, float("nan"), 1.0), re.escape("delta must be in (0, 1)")),
    (privacy.gaussian_sigma_analytic, (0.0, 1e-5, 1.0), "epsilon must be finite and > 0"),
    (privacy.gaussian_sigma_analytic, (1.0, 1e-5, float("nan")), "sensitivity must be finite and > 0"),
    (privacy.gaussian_epsilon_analytic, (1e-5, 0.0, 1.0), "sigma must be finite and > 0"),
    (privacy.gaussian_epsilon_analytic, (1.5, 1.0, 1.0), re.escape("delta must be in (0, 1)")),
    (privacy.zcdp_gaussian_rho, (0.0, 1.0), "sigma must be finite and > 0"),
    (privacy.zcdp_to_dp, (-1.0, 1e-5), "rho must be finite and >= 0"),
    (privacy.zcdp_to_dp, (1.0, 0.0), re.escape("delta must be in (0, 1)")),
    (privacy.zcdp_to_dp, (1.0, 1e-5, "renyi"), "method must be one of 'cks', 'bun-steinke'"),
    (privacy.zcdp_to_dp, (1.0, 1e-5, "bun-steinke", [2.0]), "orders can only be given with method='cks'"),
    (privacy.zcdp_to_dp, (1.0, 1e-5, "cks", [1.0, 2.0]), "orders must be .* > 1"),
    (privacy.zcdp_to_dp, (1.0, 1e-5, "cks", []), "orders must be a non-empty"),
    (privacy.dp_to_zcdp_rho, (float("inf"),), "epsilon must be finite and > 0"),
    (privacy.zcdp_gaussian_sigma, (1.0, 1e-5, 1.0, "bs"), "method must be one of"),
    (privacy.basic_composition, ([],), "guarantees must be a non-empty sequence"),
    (privacy.basic_composition, ([(1.0, 0.0)],), "guarantees must contain only PrivacyGuarantee"),
    (privacy.advanced_composition, (0.1, 1e-7, 10, 0.0), re.escape("delta_prime must be in (0, 1)")),
    (privacy.advanced_composition, (0.1, 1.0, 10, 1e-6), re.escape("delta must be in [0, 1)")),
    (privacy.advanced_composition, (0.1, 0.0, 0, 1e-6), "k must be an integer >= 1"),
    (privacy.advanced_composition, (0.1, 0.0, 2.5, 1e-6), "k must be an integer, got 2.5"),
    (privacy.advanced_composition, (-0.1, 0.0, 3, 1e-6), "epsilon must be finite and > 0"),
    (privacy.levels_touched, (0,), "horizon must be an integer >= 1, got 0"),
    (privacy.levels_touched, (8.0,), "horizon must be an integer, got 8.0"),
    (privacy.levels_touched, (1e6,), re.escape("got 1000000.0 (float): write 1000000 (e.g. 10**6 rather than 1e6")),
    (privacy.levels_touched, (float("inf"),), "horizon must be an integer, got inf \\(float\\)$"),
    (privacy.levels_touched, (True,), "horizon must be an integer, got True"),
    (privacy.tree_laplace_scale, (1.0, 0.0, 8), "sensitivity must be finite and > 0"),
    (privacy.tree_laplace_scale, (float("nan"), 1.0, 8), "epsilon must be finite and > 0"),
    (privacy.tree_gaussian_sigma, (1.0, 0.0, 1.0, 8), re.escape("delta must be in (0, 1)")),
    (
        privacy.tree_gaussian_sigma,
        (1.0, 1e-5, 1.0, 8, "tight"),
        "calibration must be one of 'paper', 'analytic', 'zcdp'",
    ),
    (privacy.tree_gaussian_sigma, (1.0, 1e-5, -1.0, 8), "sensitivity must be finite and > 0"),
    (privacy.tree_gaussian_sigma, (1.0, 1e-5, 1.0, 0), "horizon must be an integer >= 1"),
    (privacy.tree_privacy, ("laplace", 0.0, 1.0, 8), "scale 0 gives no privacy"),
    (privacy.tree_privacy, ("gaussian", 0.0, 1.0, 8), "scale 0 gives no privacy"),
    (privacy.tree_privacy, ("laplace", -1.0, 1.0, 8), "scale must be finite and > 0"),
    (privacy.tree_privacy, ("uniform", 1.0, 1.0, 8), "noise must be one of 'laplace', 'gaussian'"),
    (privacy.tree_privacy, ("gaussian", 1.0, 1.0, 8), re.escape("delta must be in (0, 1)")),
    (
        functools.partial(privacy.tree_privacy, delta=1e-6),
        ("laplace", 1.0, 1.0, 8),
        "delta must be 0 for Laplace",
    ),
    (privacy.PrivacyGuarantee, (-1.0, 0.0, "x"), "epsilon must be finite and >= 0"),
    (privacy.PrivacyGuarantee, (1.0, 1.5, "x"), re.escape("delta must be in [0, 1]")),
    (privacy.PrivacyGuarantee, (float("inf"), 0.0, "x"), "epsilon must be finite"),
    (privacy.PrivacyGuarantee, (1.0, 0.0, None), "source must be a str"),
]


@pytest.mark.parametrize(("function", "args", "match"), BAD_INPUTS)
def test_bad_input_raises_invalid_input_error(function, args, match):
    with pytest.raises(InvalidInputError, match=match) as info:
        function(*args)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_input_raises_non_finite_error(value):
    with pytest.raises(NonFiniteError, match="epsilon"):
        privacy.tree_laplace_scale(value, 1.0, 8)
    with pytest.raises(NonFiniteError, match="sensitivity"):
        privacy.gaussian_sigma_analytic(1.0, 1e-5, value)


def test_basic_composition_refuses_mixed_neighbouring():
    a = privacy.PrivacyGuarantee(1.0, 0.0, "a")
    b = privacy.PrivacyGuarantee(1.0, 0.0, "b", neighbouring="one user added or removed")
    with pytest.raises(InvalidInputError, match="neighbouring"):
        privacy.basic_composition([a, b])


# ---------------------------------------------------------------------------------------------------------
# PrivacyGuarantee


def test_privacy_guarantee_is_frozen_picklable_and_printable():
    guarantee = privacy.PrivacyGuarantee(np.float64(1.0), 1e-6, "Ene-Nguyen-Vladu Lemma 5.4", notes="n")
    assert type(guarantee.epsilon) is float
    assert str(guarantee) == "(ε=1, δ=1e-06)-DP per one round's loss [Ene-Nguyen-Vladu Lemma 5.4]"
    restored = pickle.loads(pickle.dumps(guarantee))
    assert restored == guarantee and type(restored) is type(guarantee)
    with pytest.raises(dataclasses.FrozenInstanceError):
        guarantee.epsilon = 2.0  # type: ignore[misc]
    assert guarantee.neighbouring == privacy.NEIGHBOURING_ROUND and guarantee.unit == "one round's loss"
    seeded = dataclasses.replace(guarantee, randomness="seed")
    assert "private only while the seed is secret" in str(seeded) and "secret" in seeded.caveat


def test_public_api_is_listed():
    for name in privacy.__all__:
        assert callable(getattr(privacy, name)) or name.isupper()


def test_sampler_field_states_the_floating_point_caveat_and_exact_group_privacy_uses_zcdp():
    # The sampler is part of the guarantee: "floating-point" carries the Mironov caveat in caveat and str().
    exact = privacy.PrivacyGuarantee(1.0, 1e-6, "test", sampler="exact", noise_multiplier=5.0)
    floating = privacy.PrivacyGuarantee(1.0, 1e-6, "test", sampler="floating-point", noise_multiplier=5.0)
    assert "Mironov" in floating.caveat and "Mironov" in str(floating)
    assert "Mironov" not in str(exact) and "exact" in exact.caveat
    with pytest.raises(InvalidInputError, match="sampler"):
        privacy.PrivacyGuarantee(1.0, 0.0, "test", sampler="float")
    # A group of k of the discrete Gaussian is k^2 rho-zCDP: rho = k^2 / (2 multiplier^2), converted at delta.
    k = 3
    group = exact.group(k)
    assert group.sampler == "exact"
    assert group.epsilon == pytest.approx(max(1.0, privacy.zcdp_to_dp(k**2 / (2 * 5.0**2), 1e-6)), rel=1e-12)
    assert floating.group(k).epsilon == pytest.approx(
        max(1.0, privacy.gaussian_epsilon_analytic(1e-6, 5.0, float(k))), rel=1e-12
    )
