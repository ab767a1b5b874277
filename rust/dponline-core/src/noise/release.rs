//! The exact Laplace mechanism calibrated to a stated ε, and the choice of samplers a mechanism offers.
//!
//! # Calibration ([`exact_laplace`])
//!
//! A query of `ℓ₁` sensitivity `Δ₁` (value units) over `d` coordinates is released ε-DP by the discrete Laplace
//! mechanism on a power-of-two grid ([`crate::noise::grid`]):
//!
//! 1. the grid `γ = `[`Grid::for_scale`]`(Δ₁/ε)` (from the declared `Δ₁` and `ε` only, never from data);
//! 2. the integer sensitivity after rounding the data onto the grid, `Δ = ⌈Δ₁/γ⌉ + d` grid units
//!    ([`Grid::integer_sensitivity_l1`]: the **Lemma** of [`crate::noise::grid`], rounding moves each coordinate
//!    by at most ½ unit, so two neighbours' rounded values differ by at most `Δ₁/γ + d` in `ℓ₁`);
//! 3. the scale `t = ⌈Δ/ε⌉` grid units, computed as `⌈(Δ/ε)·(1 + 2⁻⁵⁰)⌉` in floating point: the two roundings
//!    (the quotient and the product, each a relative `2⁻⁵³` at most) cannot bring it below the real `Δ/ε`, so
//!    `t >= Δ/ε` holds for the real numbers.
//!
//! **Privacy.** Adding independent `DLap(t)` (`P(z) ∝ e^{−|z|/t}` on ℤ, exact samplers of
//! [`crate::noise::exact`]) to each coordinate of an integer query of `ℓ₁` sensitivity `Δ` is exactly
//! `(Δ/t)`-DP: for outputs `z` and queries `q, q′`, `P(z | q)/P(z | q′) = Π_j e^{(|z_j − q′_j| − |z_j − q_j|)/t}
//! <= e^{‖q − q′‖₁/t}` by the triangle inequality (the geometric mechanism of Ghosh, Roughgarden & Sundararajan
//! 2009; Canonne, Kamath & Steinke 2020, §1; `dponline.privacy.discrete_laplace_epsilon`). With step 3,
//! `Δ/t <= ε`: the stated ε is met, not approximately but exactly. The release `(n + Z)·γ` is a function of the
//! integer `n + Z` alone (exact in `f64` while `|n + Z| < 2⁵³`, otherwise a deterministic rounding of it:
//! post-processing), so no floating-point representation effect (Mironov 2012) can weaken it.
//!
//! **Cost in noise.** The effective scale `t·γ` ([`ExactNoise::scale`]) exceeds `Δ₁/ε` by a relative
//! `((d + 1)γ + εγ)/Δ₁ <= ((d + 1)/ε + 1)·2⁻³⁰` (`t <= Δ/ε + 1`, `Δ <= Δ₁/γ + d + 1`, `γ <= Δ₁/(ε·2³⁰)`):
//! about `3·10⁻⁹` at `ε = 1`, `d = 1`; `2·10⁻³` at `ε = 10⁻⁶`.
//!
//! **Range.** `Δ₁/ε` in `[10⁻¹⁵⁰, 10¹⁵⁰]` and `Δ₁/γ ≈ ε·2³⁰` below `2⁵²/(d + 16)` grid units, i.e. `ε` up to
//! about `2²¹/(d + 16)` (≈ 1.2·10⁵ for `d = 1`); beyond, the grid would be finer than 52-bit integer arithmetic
//! supports and the floating-point samplers are the only option (an error says so).

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_positive};
use crate::noise::grid::{ExactDistribution, ExactNoise, Grid};

/// How a mechanism draws its noise: the Python option `sampler`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SamplerKind {
    /// Exact discrete samplers on a power-of-two grid (the module docs): the stated ε holds for the released
    /// floats.
    Exact,
    /// The floating-point samplers of [`crate::noise`]: the stated ε is that of the real-valued mechanism
    /// (Mironov 2012 caveat).
    FloatingPoint,
}

impl SamplerKind {
    /// Parse `"exact"` or `"floating-point"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `sampler` for another name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "exact" => Ok(SamplerKind::Exact),
            "floating-point" => Ok(SamplerKind::FloatingPoint),
            other => Err(CoreError::invalid(
                "sampler",
                "'exact' or 'floating-point'",
                format!("{other:?}"),
            )),
        }
    }

    /// `"exact"` or `"floating-point"`.
    pub fn name(self) -> &'static str {
        match self {
            SamplerKind::Exact => "exact",
            SamplerKind::FloatingPoint => "floating-point",
        }
    }
}

/// Discrete Laplace noise on a grid that makes a query of `ℓ₁` sensitivity `delta_l1` over `dim` coordinates
/// exactly `epsilon`-DP (module docs: grid `Grid::for_scale(Δ₁/ε)`, `t = ⌈(⌈Δ₁/γ⌉ + dim)/ε⌉`).
///
/// Errors: [`CoreError::InvalidArgument`] naming `delta_l1` or `epsilon` unless both are finite and `> 0`,
/// and naming `epsilon` when `Δ₁/ε` or `ε` leaves the range the exact arithmetic supports (module docs,
/// "Range"; use the floating-point samplers there).
pub fn exact_laplace(delta_l1: f64, dim: usize, epsilon: f64) -> Result<ExactNoise> {
    check_positive("delta_l1", delta_l1)?;
    check_positive("epsilon", epsilon)?;
    let out_of_range = |_| {
        CoreError::invalid(
            "epsilon",
            "such that sensitivity/epsilon is in [1e-150, 1e150] and epsilon <= 2^21/(dim + 16) for the exact \
             sampler (its grid would exceed 52-bit integers); use sampler='floating-point' beyond",
            epsilon,
        )
    };
    let grid = Grid::for_scale(delta_l1 / epsilon).map_err(out_of_range)?;
    let units = grid
        .integer_sensitivity_l1(delta_l1, dim)
        .map_err(out_of_range)?;
    // units < 2^53 (checked by integer_sensitivity_l1), so it is exact as a float.
    let t = (units as f64 / epsilon * (1.0 + 2f64.powi(-50))).ceil();
    if !(t >= 1.0 && t <= (1u64 << 52) as f64) {
        return Err(out_of_range(CoreError::State(String::new())));
    }
    Ok(ExactNoise {
        grid,
        dist: ExactDistribution::DiscreteLaplace { t: t as u64 },
    })
}

/// The Laplace noise of a scalar release of sensitivity `sensitivity` (a learner's clipped feedback):
/// `(scale, exact)` with
///
/// * `epsilon = None` (non-private): `(0, None)`;
/// * [`SamplerKind::FloatingPoint`]: the float Laplace scale `λ = Δ/ε` (Dwork-McSherry-Nissim-Smith 2006),
///   `(λ, None)`;
/// * [`SamplerKind::Exact`]: [`exact_laplace`]`(Δ, 1, ε)` and its effective scale `t·γ` (module docs).
///
/// Errors: [`CoreError::InvalidArgument`] as [`exact_laplace`] (naming `epsilon` or `delta_l1`), or naming
/// `epsilon` for a float scale that is not finite and `> 0`.
pub fn scalar_laplace(
    sensitivity: f64,
    epsilon: Option<f64>,
    sampler: SamplerKind,
) -> Result<(f64, Option<ExactNoise>)> {
    let Some(epsilon) = epsilon else {
        return Ok((0.0, None));
    };
    check_positive("epsilon", epsilon)?;
    match sampler {
        SamplerKind::Exact => {
            let noise = exact_laplace(sensitivity, 1, epsilon)?;
            Ok((noise.scale(), Some(noise)))
        }
        SamplerKind::FloatingPoint => {
            check_positive("delta_l1", sensitivity)?;
            let scale = sensitivity / epsilon;
            if !(scale.is_finite() && scale > 0.0) {
                return Err(CoreError::invalid(
                    "epsilon",
                    "such that sensitivity/epsilon is finite and > 0",
                    epsilon,
                ));
            }
            Ok((scale, None))
        }
    }
}

/// The exact ε of `noise` (discrete Laplace) on a query of `ℓ₁` sensitivity `delta_l1` over `dim` coordinates:
/// `(⌈Δ₁/γ⌉ + dim)/t` (module docs, "Privacy"), rounded to the nearest float.
///
/// Errors: [`CoreError::InvalidArgument`] for a discrete Gaussian `noise` or as
/// [`Grid::integer_sensitivity_l1`].
pub fn exact_laplace_epsilon(noise: &ExactNoise, delta_l1: f64, dim: usize) -> Result<f64> {
    let ExactDistribution::DiscreteLaplace { t } = noise.dist else {
        return Err(CoreError::invalid(
            "noise",
            "discrete Laplace",
            noise.name(),
        ));
    };
    let units = noise.grid.integer_sensitivity_l1(delta_l1, dim)?;
    Ok(units as f64 / t as f64)
}

/// The release `(round(x/γ) + z)·γ` of `x` with integer noise `z` on `grid` (module docs).
///
/// Errors: as [`Grid::quantize`] (`x` non-finite or beyond `2⁶²` grid units).
#[inline]
pub fn release_on_grid(grid: &Grid, x: f64, z: i64) -> Result<f64> {
    let n = grid.quantize(x)?;
    Ok(grid.value(i128::from(n) + i128::from(z)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::exact::{DiscreteLaplace, IntegerSampler};
    use crate::rng::Generator;

    #[test]
    fn calibration_meets_epsilon_with_a_tiny_excess_of_noise() {
        for &(delta, dim, eps) in &[
            (1.0, 1usize, 1.0),
            (2.0, 1, 0.1),
            (1.0, 1, 1e-6),
            (0.37, 5, 3.0),
            (1e-100, 1, 1e-3),
            (1e100, 2, 50.0),
            (1.0, 1, 1e5),
        ] {
            let noise = exact_laplace(delta, dim, eps).unwrap();
            let got = exact_laplace_epsilon(&noise, delta, dim).unwrap();
            // Exact check in integers: (⌈Δ₁/γ⌉ + d) <= ε·t, i.e. ε·t >= units (ε·t is exact enough: t < 2^53,
            // the product rounded once; the margin 2^-50 dominates).
            let units = noise.grid.integer_sensitivity_l1(delta, dim).unwrap();
            let t = noise.units_scale();
            assert!(got <= eps, "{delta} {dim} {eps}: {got}");
            assert!((units as f64) <= eps * t as f64);
            // Effective scale at least Δ₁/ε, and at most (1 + ((d + 1)/ε + 1)·2^-30) times it.
            let target = delta / eps;
            let excess = noise.scale() / target - 1.0;
            assert!(excess >= 0.0, "{excess}");
            assert!(
                excess <= ((dim as f64 + 1.0) / eps + 1.0) * 2f64.powi(-30) + 1e-15,
                "{delta} {dim} {eps}: {excess}"
            );
        }
    }

    #[test]
    fn out_of_range_is_refused_naming_epsilon() {
        for (delta, eps) in [
            (1.0, 1e6),
            (1.0, 1e-200),
            (1e-200, 1.0),
            (1.0, f64::NAN),
            (1.0, f64::INFINITY),
            (1.0, 0.0),
            (1.0, 5e-324),
        ] {
            match exact_laplace(delta, 1, eps) {
                Err(CoreError::InvalidArgument { name, .. }) => {
                    assert!(name == "epsilon", "{delta} {eps}: {name}")
                }
                other => panic!("{delta} {eps}: {other:?}"),
            }
        }
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                exact_laplace(bad, 1, 1.0),
                Err(CoreError::InvalidArgument {
                    name: "delta_l1",
                    ..
                })
            ));
        }
        assert_eq!(SamplerKind::from_name("exact").unwrap().name(), "exact");
        assert_eq!(
            SamplerKind::from_name("floating-point").unwrap(),
            SamplerKind::FloatingPoint
        );
        assert!(SamplerKind::from_name("float").is_err());
    }

    #[test]
    fn releases_are_integers_times_the_grid_and_unbiased() {
        let noise = exact_laplace(1.0, 1, 1.0).unwrap();
        let ExactDistribution::DiscreteLaplace { t } = noise.dist else {
            unreachable!()
        };
        let sampler = DiscreteLaplace::integer(t).unwrap();
        let mut rng = Generator::from_seed([3, 1, 4, 1]);
        let gamma = noise.grid.gamma();
        let n = 200_000;
        let (mut sum, mut sq) = (0.0, 0.0);
        for _ in 0..n {
            let z = sampler.sample(&mut rng).unwrap();
            let y = release_on_grid(&noise.grid, 0.3, z).unwrap();
            assert_eq!((y / gamma).fract(), 0.0);
            let d = y - noise
                .grid
                .value(i128::from(noise.grid.quantize(0.3).unwrap()));
            sum += d;
            sq += d * d;
        }
        let var = noise.variance();
        let (mean, m2) = (sum / n as f64, sq / n as f64);
        // Mean 0 within 6 standard errors; the second moment within 6 of its standard errors (the fourth
        // moment of a Laplace is 24 b^4 = 6 var^2).
        assert!(mean.abs() < 6.0 * (var / n as f64).sqrt(), "{mean}");
        assert!(
            (m2 - var).abs() < 6.0 * (5.0 * var * var / n as f64).sqrt(),
            "{m2} vs {var}"
        );
        assert!(release_on_grid(&noise.grid, f64::NAN, 0).is_err());
    }
}
