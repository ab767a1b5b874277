"""The noise of the tree-based FTRL learners (DPFTRL, DPFTPL, and PrivateDRSubmodular's copies): the per-node
scale of the padded tree for a privacy target under each calibration (Agarwal & Singh 2017 Lemma 3.3; the exact
discrete path), and the width of the noise a release adds (what DPFTPL's regret bound needs)."""

from __future__ import annotations

import math

import numpy as np

from .. import _core, _validate, noise, privacy
from .._options import CALIBRATIONS, Calibration, Mechanism
from .._seed import SeedLike
from ..errors import DPOnlineError, InvalidInputError
from ..privacy import PrivacyGuarantee
from ._base import MechanismArgs, exact_learner_noise, mechanism_noise, randomness_of

__all__ = ["dp_ftrl_noise", "noise_width"]

_TOP_UP_NOTE = (
    "top_up: every release gets fresh N(0, sigma^2 (v_max - v_t)) per coordinate, independent of the data "
    "(post-processing; the guarantee is unchanged)"
)
_TOP_UP_SOURCE = (
    "Gaussian top-up Lemma (DPFTRL docs, Mechanisms): every release's noise is N(0, sigma^2 v_max I), "
    "v_max the mechanism's largest per-release unit variance"
)
_TOP_UP_VALID = "delta > 0 (Gaussian noise), sampler='floating-point' and mechanism='honaker' or 'blt'"


def _check_top_up(top_up: bool, mechanism: str, epsilon: float | None, delta: float, sampler: str) -> bool:
    """Validate ``top_up=``: only Gaussian noise drawn by the floating-point sampler through a mechanism whose
    releases differ in variance (``"honaker"``, ``"blt"``) can be topped up to identical marginals.

    Raises:
        InvalidInputError: ``top_up`` not a bool, or set with another combination (the message names the valid one).
    """
    top_up = _validate.flag("top_up", top_up)
    if top_up and (mechanism == "tree" or epsilon is None or delta == 0.0 or sampler != "floating-point"):
        raise InvalidInputError(
            f"top_up=True needs {_TOP_UP_VALID} with epsilon given; got mechanism={mechanism!r}, "
            f"epsilon={epsilon!r}, delta={delta!r}, sampler={sampler!r} (the padded tree's releases are already "
            "identically distributed; Laplace and exact discrete releases cannot be topped up to one Gaussian law)"
        )
    return top_up


def _require_identical_releases(core: _core.DPFTRL, theorem: str) -> None:
    """Refuse a regret bound unless every release's noise has one marginal: the padded tree, or ``top_up``.

    Raises:
        DPOnlineError: ``"honaker"`` / ``"blt"`` without ``top_up=True``; names the combinations with a bound.
    """
    if core.mechanism != "tree" and core.top_up_variance is None:
        m = core.mechanism
        raise DPOnlineError(
            f"regret_bound: Agarwal-Singh {theorem} covers the padded tree only, or releases topped up to "
            f"identically distributed noise: mechanism={m!r} without top_up=True has no proved bound. Use "
            f"mechanism='tree', or mechanism={m!r} with {_TOP_UP_VALID.split(' and mechanism')[0]} and top_up=True"
        )


_SOURCE_LAPLACE = (
    "Agarwal-Singh 2017 Lemma 3.3 (padded tree-based aggregation, Laplace) with the exact level count floor(log2 T) + 1"
)
_SOURCE_GAUSSIAN = "Agarwal-Singh 2017 Lemma 3.3 / Ene-Nguyen-Vladu 2021 Theorem 2.3 (padded tree, Gaussian)"


def dp_ftrl_noise(
    epsilon: float,
    delta: float,
    loss_bound: float,
    horizon: int,
    calibration: Calibration = "paper",
    *,
    randomness: str = "",
) -> tuple[str, float, PrivacyGuarantee]:
    """Per-node noise of DP-FTRL's tree for a privacy target.

    Replacing one round's loss vector ``ℓ_t`` (clipped to ``‖ℓ‖ ≤ G``) changes that tree input by at most
    ``2G``, and the input enters ``B = floor(log₂T) + 1`` released nodes (:func:`dponline.privacy.levels_touched`).

    * ``δ = 0`` — Laplace, Agarwal-Singh Lemma 3.3: ``λ = 2G·B/ε`` (``privacy.tree_laplace_scale`` with
      sensitivity ``2G``, G an L1 bound). The Laplace mechanism on the released nodes is exact, so
      ``"paper"`` and ``"analytic"`` coincide; ``"zcdp"`` is refused.
    * ``δ > 0`` — Gaussian, ``privacy.tree_gaussian_sigma(ε, δ, 2G, T, calibration)`` (G an L2 bound).

    Returns:
        ``(noise, scale, guarantee)``.

    Raises:
        InvalidInputError: ``"zcdp"`` with ``δ = 0``, an unknown calibration, arguments out of range.
    """
    calibration = _validate.option("calibration", calibration, CALIBRATIONS)
    sensitivity = 2.0 * loss_bound
    levels = privacy.levels_touched(horizon)
    if delta == 0.0:
        if calibration == "zcdp":
            raise InvalidInputError("calibration='zcdp' needs Gaussian noise (delta > 0)")
        scale = privacy.tree_laplace_scale(epsilon, sensitivity, horizon)
        guarantee = PrivacyGuarantee(
            epsilon=float(epsilon),
            delta=0.0,
            source=_SOURCE_LAPLACE,
            randomness=randomness,
            notes=f"lambda = 2G*levels/eps = {scale:.6g} (G={loss_bound:g} in L1, levels={levels}, T={horizon})",
        )
        return "laplace", scale, guarantee
    sigma = privacy.tree_gaussian_sigma(epsilon, delta, sensitivity, horizon, calibration)
    source = _SOURCE_GAUSSIAN if calibration == "paper" else f"{_SOURCE_GAUSSIAN}, calibration={calibration!r}"
    guarantee = PrivacyGuarantee(
        epsilon=float(epsilon),
        delta=float(delta),
        source=source,
        randomness=randomness,
        notes=f"sigma = {sigma:.6g} (G={loss_bound:g} in L2, levels={levels}, T={horizon})",
        noise_multiplier=sigma / (sensitivity * math.sqrt(levels)),
    )
    return "gaussian", sigma, guarantee


def path_noise(
    mechanism: Mechanism,
    calibration: Calibration | None,
    epsilon: float,
    delta: float,
    sensitivity_l1: float,
    sensitivity_l2: float,
    horizon: int,
    dim: int,
    *,
    exact: bool,
    source: str,
    randomness: str,
    at_least: float = 0.0,
) -> tuple[str, float, PrivacyGuarantee]:
    """The calibration DP-FTRL, DP-FTPL and NoisyOCO share, for a learner whose one prefix-sum input a round moves
    by at most ``sensitivity_l1`` / ``sensitivity_l2`` over ``horizon`` releases; Laplace noise when
    ``delta == 0``, else Gaussian.

    * ``exact=True`` (``sampler="exact"``, any mechanism): :func:`~dponline.learners._base.exact_learner_noise`,
      never below ``at_least`` nor, under ``calibration="paper"``, below the padded tree's paper scale
      (:func:`dponline.privacy.tree_laplace_scale` / :func:`dponline.privacy.tree_gaussian_sigma` with
      ``"paper"``); the callers refuse ``"paper"`` with a mechanism other than the tree before calling.
    * ``exact=False`` (floating-point path, a non-tree ``mechanism``):
      :func:`~dponline.learners._base.mechanism_noise`, ``calibration="analytic"`` by default (``source`` and
      ``at_least`` unused).

    Returns:
        ``(noise, scale, guarantee)``: ``"laplace"`` or ``"gaussian"``, the per-draw scale, the guarantee.
    """
    noise_name = "laplace" if delta == 0 else "gaussian"
    if not exact:
        scale, guarantee = mechanism_noise(
            mechanism,
            epsilon,
            delta,
            noise_name,
            calibration or "analytic",
            sensitivity_l1=sensitivity_l1,
            sensitivity_l2=sensitivity_l2,
            releases=horizon,
            randomness=randomness,
        )
        return noise_name, scale, guarantee
    sensitivity = sensitivity_l1 if noise_name == "laplace" else sensitivity_l2
    if calibration == "paper":
        paper = (
            privacy.tree_laplace_scale(epsilon, sensitivity, horizon)
            if noise_name == "laplace"
            else privacy.tree_gaussian_sigma(epsilon, delta, sensitivity, horizon, "paper")
        )
        at_least = max(paper, at_least)
    scale, guarantee = exact_learner_noise(
        mechanism,
        noise_name,
        calibration,
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
        releases=horizon,
        dim=dim,
        at_least=at_least,
        source=source,
        randomness=randomness,
    )
    return noise_name, scale, guarantee


def _exact_tree_noise(
    mechanism: Mechanism,
    calibration: Calibration | None,
    epsilon: float,
    delta: float,
    loss_bound: float,
    horizon: int,
    dim: int,
    at_least: float,
    seed: SeedLike,
    secure: bool,
) -> tuple[str, float, PrivacyGuarantee]:
    """DP-FTRL's / DP-FTPL's noise on the exact path (``sampler="exact"``): one round's clipped loss moves one input
    by at most ``2G``; :func:`~dponline.learners._base.exact_learner_noise` with the mechanism's column norms, never
    below the paper's scale under ``calibration="paper"`` (tree only) nor below ``at_least``."""
    if calibration == "paper" and mechanism != "tree":
        raise InvalidInputError(
            f"calibration='paper' is not available with mechanism={mechanism!r}: the paper's lemmas cover only "
            "the padded tree; leave calibration unset (the exact discrete calibration)"
        )
    if mechanism == "tree":
        source = _SOURCE_LAPLACE if delta == 0 else _SOURCE_GAUSSIAN
    else:  # the tree lemmas do not apply: a linear encoder, one round's input moves one column by at most 2G
        source = "the encoder's largest column norm times the sensitivity 2G of one round's clipped loss"
    return path_noise(
        mechanism,
        calibration,
        epsilon,
        delta,
        2.0 * loss_bound,
        2.0 * loss_bound,
        horizon,
        dim,
        exact=True,
        source=source,
        randomness=randomness_of(seed, secure),
        at_least=at_least,
    )


def _learner_noise(
    args: MechanismArgs, loss_bound: float, horizon: int, dim: int
) -> tuple[str, float, PrivacyGuarantee]:
    """The noise of a tree-based FTRL learner's prefix sums (DPFTRL, DPFTPL, a PrivateDRSubmodular copy) for the
    privacy target of ``args`` (``epsilon`` given), whose one input per round moves by at most ``2G``
    (``G = loss_bound``): the exact path (:func:`_exact_tree_noise`), the padded tree (:func:`dp_ftrl_noise`,
    ``calibration="paper"`` by default), or another mechanism's exact calibration
    (:func:`~dponline.learners._base.mechanism_noise`, ``"analytic"`` by default)."""
    mechanism, calibration, epsilon, delta = args.mechanism, args.calibration, float(args.epsilon or 0.0), args.delta
    seed, secure, randomness = args.seed, args.secure, args.randomness
    if args.sampler == "exact":
        return _exact_tree_noise(mechanism, calibration, epsilon, delta, loss_bound, horizon, dim, 0.0, seed, secure)
    if mechanism == "tree":
        return dp_ftrl_noise(epsilon, delta, loss_bound, horizon, calibration or "paper", randomness=randomness)
    # Replacing one round's clipped loss vector moves one input by at most 2G (L1 / L2 per noise).
    return path_noise(
        mechanism,
        calibration,
        epsilon,
        delta,
        2 * loss_bound,
        2 * loss_bound,
        horizon,
        dim,
        exact=False,
        source="",
        randomness=randomness,
    )


def noise_width(
    domain: _core.Domain, noise_name: str, scale: float, draws: int, samples: int = 20_000, seed: int = 0
) -> tuple[float, float, str]:
    """``E_Z[max_{x∈X}⟨Z, x⟩ − min_{x∈X}⟨Z, x⟩]`` for ``Z`` a vector of i.i.d. sums of ``draws`` noise draws
    (``noise_name`` ``"laplace"`` of scale ``scale`` or ``"gaussian"`` of standard deviation ``scale``).

    Closed forms on boxes (Gaussian and Laplace) and on the L2 ball (Gaussian), a one-dimensional quadrature on
    the simplex (Gaussian), otherwise Monte Carlo with the core's samplers (at most ``samples`` draws of ``Z``;
    2,000 on LMO-only domains). Returns ``(mean, standard error, method)`` (standard error 0 when exact).
    """
    from scipy import integrate, special, stats  # imported on use: scipy costs a second at `import dponline`

    n = domain.dim
    if scale == 0.0:
        return 0.0, 0.0, "none (non-private)"
    kind = domain.kind
    gaussian = noise_name == "gaussian"
    if kind == "Box":
        lower = domain.lmo(np.ones(n))
        upper = domain.lmo(-np.ones(n))
        total_width = float(np.sum(upper - lower))
        if gaussian:
            e_abs = scale * math.sqrt(draws) * math.sqrt(2.0 / math.pi)
        else:
            e_abs = 2.0 * scale * math.exp(special.gammaln(draws + 0.5) - special.gammaln(draws)) / math.sqrt(math.pi)
        return total_width * e_abs, 0.0, "closed form"
    if gaussian and kind == "L2Ball":
        s = scale * math.sqrt(draws)
        r = domain.diameter / 2.0
        e_norm = s * math.sqrt(2.0) * math.exp(special.gammaln((n + 1) / 2) - special.gammaln(n / 2))
        return 2.0 * r * e_norm, 0.0, "closed form"
    if gaussian and kind == "Simplex":
        s = scale * math.sqrt(draws)

        def integrand(z: float) -> float:
            return z * n * stats.norm.pdf(z) * math.exp((n - 1) * stats.norm.logcdf(z))

        e_max, _ = integrate.quad(integrand, -12.0, 12.0 + math.sqrt(2 * math.log(n)), limit=200)
        return 2.0 * s * e_max, 0.0, "quadrature"
    # Monte Carlo with the core's samplers, at unit scale (the width is linear in it): at scale 1e6 on a domain
    # of extent 1e149 the widths' squares overflowed in the standard error.
    m = int(max(100, min(samples, 20_000_000 // max(n, 1))))
    if kind not in ("Simplex", "L2Ball"):
        m = min(m, 2000)  # one pair of LMO calls per sample
    if gaussian:
        Z = noise.gaussian_sum(1.0, draws, m * n, seed=seed).reshape(m, n)
    else:
        Z = noise.laplace_sum(1.0, draws, m * n, seed=seed).reshape(m, n)
    if kind == "Simplex":
        widths = Z.max(axis=1) - Z.min(axis=1)
    elif kind == "L2Ball":
        widths = domain.diameter * np.linalg.norm(Z, axis=1)
    else:
        widths = np.array([z @ domain.lmo(-z) - z @ domain.lmo(z) for z in Z[:m]])
    mean, stderr = float(widths.mean()), float(widths.std(ddof=1) / math.sqrt(m))
    return scale * mean, scale * stderr, f"Monte Carlo ({m} samples)"


_RMS_POINTS = 4096


def _unit_probe(mechanism: str, horizon: int) -> _core.Mechanism:
    """The named mechanism over ``horizon`` rounds at unit Gaussian draws (its structure, for unit variances)."""
    return _core.Mechanism(
        mechanism,
        1,
        horizon,
        scale=1.0,
        noise="gaussian",
        sampler="floating-point",  # unit variances only: the structure, not the sampler
        **({"buffers": 6} if mechanism == "blt" else {}),
    )


def _release_max_sd(mechanism: str, horizon: int) -> float:
    """``sqrt(v_max)``: the per-coordinate noise sd of every release topped up to the mechanism's largest unit
    variance over ``0 <= t <= T`` (``top_up=True``). A function of the declared horizon only."""
    return math.sqrt(_unit_probe(mechanism, horizon).max_unit_variance())


def _release_rms(mechanism: str, horizon: int) -> float:
    """Root mean square over the releases ``L̃_0 .. L̃_{T−1}`` of the per-coordinate noise sd of the named
    mechanism at unit draws (exact for ``T <= 4096``; else over 4096 evenly spaced releases). A function of
    the declared horizon only."""
    probe = _unit_probe(mechanism, horizon)
    k = min(horizon, _RMS_POINTS)
    # Exact integer spacing: float64 rounding of t near 2^63 overflowed int64 (OverflowError leaked).
    span = max(k - 1, 1)
    ts = sorted({(2 * i * (horizon - 1) + span) // (2 * span) for i in range(k)})  # round(i (T − 1) / (k − 1))
    return math.sqrt(float(np.mean([probe.unit_variance(t) for t in ts])))


def _finite_multiplier(sigma: float, release_l2: float) -> float:
    """``σ / Δ₂`` of the whole release, refused when it leaves float64 (σ huge against a tiny sensitivity)."""
    with np.errstate(over="ignore"):
        multiplier = float(np.float64(sigma) / np.float64(release_l2))
    if not (math.isfinite(multiplier) and multiplier > 0.0):
        raise InvalidInputError(
            f"DPFTPL: the noise multiplier sigma/sensitivity = {sigma:g}/{release_l2:g} is not a positive float64; "
            "rescale the losses"
        )
    return multiplier
