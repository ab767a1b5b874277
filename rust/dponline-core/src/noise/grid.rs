//! The power-of-two grid every exact release lives on, and exact noise in grid units.
//!
//! An exact additive release of a real vector `x` (a prefix sum, a gradient, a loss) is made in three steps:
//!
//! 1. **Quantise**: `n = round(x/γ)` coordinate-wise on the grid `γℤ`, `γ = 2^exponent` ([`Grid::quantize`]).
//!    Dividing by a power of two only moves the binary exponent, so `x/γ` is exact and the rounding to the
//!    nearest integer (ties to even) is the only rounding.
//! 2. **Add integer noise** `Z` of an [`ExactNoise`] (discrete Laplace or discrete Gaussian in grid units,
//!    exact samplers of [`crate::noise::exact`]), in integer arithmetic: sums of rows stay exact integers.
//! 3. **Release** `(n + Z)·γ` ([`Grid::value`]): exact in `f64` while `|n + Z| < 2⁵³`; beyond, the correctly
//!    rounded float of that integer — a deterministic function of the integer, i.e. post-processing, which
//!    costs no privacy.
//!
//! The output is a function of the integer `n + Z` alone, so the privacy of the release is that of the
//! integer mechanism `n ↦ n + Z` with the integer sensitivity of the **Lemma** below — no floating-point
//! representation effect (Mironov 2012) can add to it.
//!
//! # The grid size ([`Grid::for_scale`])
//!
//! The grid is chosen from the noise scale (declared before any data) so that the scale in grid units lies in
//! `[2^30, 2^31)` ([`GRID_BITS`] `= 30`): the noise resolves `2⁻³⁰` of its own scale — rounding the scale up onto
//! the grid changes it by less than one part in `2³⁰`, and the rounding of the data is negligible next to the
//! noise (it is accounted for exactly by the Lemma, at the cost of `+dim` in `Δ₁` or `+√dim` in `Δ₂`, under
//! `2⁻³⁰` of a noise scale per unit of sensitivity). And every intermediate of the fast samplers stays within
//! `u128`: the discrete Gaussian of `σ <= 2³¹` grid units compares `(|Y| − σ)² < 2¹²⁸` with `2σ² <= 2⁶³`, one
//! `64×64`-bit product per Bernoulli decision, and the discrete Laplace of `t <= 2³¹` keeps `t·K < 2⁶⁴` in
//! its von Neumann loop. Data are quantised to `|n| < 2⁶²` units, so a release `n + Z` fits easily in
//! `i128` sums of many rows.
//!
//! # Sensitivity on the grid
//!
//! **Lemma.** Let `x, x′ ∈ ℝ^d` and `n = round(x/γ)`, `n′ = round(x′/γ)` coordinate-wise. Then
//! `‖n − n′‖₁ <= ‖x − x′‖₁/γ + d` and `‖n − n′‖₂ <= ‖x − x′‖₂/γ + √d`.
//!
//! *Proof.* `n_i = x_i/γ − e_i` with `|e_i| <= 1/2`, so `n − n′ = (x − x′)/γ − (e − e′)` with every
//! `|e_i − e′_i| <= 1`: `‖e − e′‖₁ <= d`, `‖e − e′‖₂ <= √d`; the triangle inequality. ∎
//!
//! So a query of sensitivity `Δ₁` (resp. `Δ₂`) has, after quantisation, the integer sensitivity
//! [`Grid::integer_sensitivity_l1`] `= ⌈Δ₁/γ⌉ + d` (an integer bound on an integer norm: `⌊Δ₁/γ⌋ + d`
//! would do) and [`Grid::integer_sensitivity_l2`] `= Δ₂/γ + √d` rounded up. *Clipping in floating point*
//! (scaling a row to norm at most `C`) can leave a norm a few ulp above `C`: a relative error at most `(d +
//! 16)·2⁻⁵²`. In `ℓ₁` this is absorbed by the ceiling: the true bound `Δ₁/γ + err + d` with `err < 1` is an
//! integer bound on an integer, so it is at most `⌈Δ₁/γ⌉ + d` (the functions refuse a sensitivity so large in
//! grid units that `err` could reach 1). In `ℓ₂` the norm is not an integer, so the same relative margin is
//! added explicitly.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::noise::exact::{
    DiscreteGaussian, DiscreteLaplace, IntegerSampler, discrete_gaussian_variance,
    discrete_laplace_variance,
};
use crate::rng::Generator;

/// The noise scale in grid units lies in `[2^GRID_BITS, 2^(GRID_BITS+1))` (module docs, "The grid size").
pub const GRID_BITS: i32 = 30;

/// Smallest noise scale a grid is built for (`1e-150`; the float samplers' bound mirrored).
pub const MIN_GRID_SCALE: f64 = 1e-150;

/// Largest noise scale a grid is built for (`1e150`, as [`crate::noise::MAX_SCALE`]).
pub const MAX_GRID_SCALE: f64 = 1e150;

/// Exponents a [`Grid`] may have: `γ` is a normal float and `|n|·γ` is finite for every `|n| < 2¹²⁷`.
const EXPONENTS: core::ops::RangeInclusive<i32> = -1022..=896;

/// Data in grid units are below `2⁶²` in magnitude ([`Grid::quantize`]).
const MAX_UNITS: f64 = (1u64 << 62) as f64;

/// `y` rounded to the nearest integer, ties to even — the same float as [`f64::round_ties_even`] for every input
/// (NaN and ±∞ included), inlined instead of a call to the C library's `rint` (x86-64's baseline has no
/// rounding instruction).
///
/// Exact: for `|y| >= 2⁵²` every float is an integer and `y` is returned. Otherwise `|y| + 2⁵²` lies in
/// `[2⁵², 2⁵³]`, where the floats are the integers, so the addition rounds `|y|` to an integer, to nearest with
/// ties to the even sum — the even integer, `2⁵²` being even; subtracting `2⁵²` is then exact, and the sign is
/// put back (−0.0 for a negative `y` that rounds to 0, as `rint` gives).
#[inline(always)]
pub(crate) fn round_ties_even(y: f64) -> f64 {
    const TWO_52: f64 = 4_503_599_627_370_496.0;
    let a = y.abs();
    if a >= TWO_52 || a.is_nan() {
        y
    } else {
        ((a + TWO_52) - TWO_52).copysign(y)
    }
}

/// The grid `γℤ`, `γ = 2^exponent`, of an exact release (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grid {
    /// `γ = 2^exponent`.
    pub exponent: i32,
}

impl Grid {
    /// The grid of step `2^exponent`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `exponent` outside `[−1022, 896]`.
    pub fn new(exponent: i32) -> Result<Self> {
        if !EXPONENTS.contains(&exponent) {
            return Err(CoreError::invalid("exponent", "in [-1022, 896]", exponent));
        }
        Ok(Grid { exponent })
    }

    /// The grid on which `scale` (a noise scale: Laplace `b` or Gaussian `σ`) is in `[2³⁰, 2³¹)` units:
    /// `γ = 2^(⌊log₂ scale⌋ − 30)` (module docs, "The grid size").
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `scale` unless it is finite and in `[1e-150, 1e150]` (so
    /// 0, negative, NaN, infinite, subnormal and `1e308` are refused).
    pub fn for_scale(scale: f64) -> Result<Self> {
        if !(scale.is_finite() && (MIN_GRID_SCALE..=MAX_GRID_SCALE).contains(&scale)) {
            return Err(CoreError::invalid(
                "scale",
                "finite and in [1e-150, 1e150]",
                scale,
            ));
        }
        // A normal float: its biased exponent gives ⌊log₂ scale⌋ exactly.
        let log2 = ((scale.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        Self::new(log2 - GRID_BITS)
    }

    /// The step `γ = 2^exponent` (exact).
    pub fn gamma(&self) -> f64 {
        2f64.powi(self.exponent)
    }

    /// `x/γ` rounded to the nearest integer (ties to even). Exact: dividing by `γ` is exact (a power of two;
    /// a quotient so small that it is subnormal rounds to 0 either way), and the rounding is the only one.
    ///
    /// Errors: [`CoreError::NonFinite`] for NaN or ±∞; [`CoreError::InvalidArgument`] naming `x` if `|x/γ| >=
    /// 2⁶²` (the message does not repeat the value: it may be private data).
    #[inline]
    pub fn quantize(&self, x: f64) -> Result<i64> {
        if !x.is_finite() {
            return Err(CoreError::NonFinite {
                name: "x",
                index: 0,
                value: x,
            });
        }
        let y = round_ties_even(x * 2f64.powi(-self.exponent));
        if y.abs() >= MAX_UNITS {
            return Err(CoreError::invalid(
                "x",
                "below 2^62 grid units in magnitude",
                "a value out of range (not shown)",
            ));
        }
        Ok(y as i64)
    }

    /// [`Grid::quantize`] of every entry of `xs` into `out` (same length). Every entry is checked before any is
    /// written: on error `out` is unchanged.
    ///
    /// Errors: [`CoreError::Shape`] for different lengths; [`CoreError::NonFinite`] (naming `x` and the index)
    /// and [`CoreError::InvalidArgument`] as [`Grid::quantize`].
    pub fn quantize_into(&self, xs: &[f64], out: &mut [i64]) -> Result<()> {
        let scale = self.check_quantizable(xs, out.len())?;
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = round_ties_even(x * scale) as i64;
        }
        Ok(())
    }

    /// [`Grid::quantize_into`] with the integers written as `f64`: exact, since a float of magnitude `>= 2⁵³` is
    /// already an integer and every smaller rounded quotient is an integer below `2⁵³`.
    ///
    /// Errors: as [`Grid::quantize_into`]; on error `out` is unchanged.
    pub fn quantize_units(&self, xs: &[f64], out: &mut [f64]) -> Result<()> {
        let scale = self.check_quantizable(xs, out.len())?;
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = round_ties_even(x * scale);
        }
        Ok(())
    }

    /// Check, without writing anything, that every entry of `xs` can be quantised.
    ///
    /// Errors: as [`Grid::quantize_into`].
    pub fn check_quantizable_all(&self, xs: &[f64]) -> Result<()> {
        self.check_quantizable(xs, xs.len()).map(|_| ())
    }

    /// Check `xs` for [`Grid::quantize_into`] into `len` entries; returns `2^−exponent`.
    fn check_quantizable(&self, xs: &[f64], len: usize) -> Result<f64> {
        if xs.len() != len {
            return Err(CoreError::Shape {
                name: "out",
                expected: format!("length {}", xs.len()),
                got: format!("length {len}"),
            });
        }
        crate::error::check_finite("x", xs)?;
        let scale = 2f64.powi(-self.exponent);
        // `|round(y)| >= 2⁶²` exactly when `|y| >= 2⁶²`: every float within 2¹⁰ of 2⁶² is an integer, and the
        // largest float below 2⁶² rounds to itself.
        if xs.iter().any(|&x| (x * scale).abs() >= MAX_UNITS) {
            return Err(CoreError::invalid(
                "x",
                "below 2^62 grid units in magnitude",
                "a value out of range (not shown)",
            ));
        }
        Ok(scale)
    }

    /// The released value `n·γ`: exact when `|n| < 2⁵³`, otherwise the correctly rounded float of the integer
    /// `n` times `γ` — a deterministic function of `n` (post-processing).
    #[inline]
    pub fn value(&self, n: i128) -> f64 {
        // Both conversions round correctly, so the 64-bit one (one instruction) gives the same float whenever
        // `n` fits; the 128-bit one is a library call.
        let f = match i64::try_from(n) {
            Ok(m) => m as f64,
            Err(_) => n as f64,
        };
        f * self.gamma()
    }

    /// `Δ/γ` for a sensitivity `Δ`, with the check that its clipping error `(d + 16)·2⁻⁵²·Δ/γ` is below one
    /// grid unit (module docs, "Sensitivity on the grid").
    fn units(&self, name: &'static str, delta: f64, dim: usize) -> Result<f64> {
        crate::error::check_nonnegative(name, delta)?;
        let units = delta * 2f64.powi(-self.exponent);
        let err = units * (dim as f64 + 16.0) * f64::EPSILON;
        if err.is_nan() || err >= 1.0 {
            return Err(CoreError::invalid(
                name,
                "below 2^52/(dim + 16) grid units (the grid is too fine for this sensitivity)",
                delta,
            ));
        }
        Ok(units)
    }

    /// The `ℓ₁` sensitivity in grid units after quantisation: `⌈Δ₁/γ⌉ + dim` (module docs: the Lemma, and the
    /// clipping error absorbed by the ceiling).
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `delta_l1` unless it is finite, `>= 0` and below
    /// `2⁵²/(dim + 16)` grid units.
    pub fn integer_sensitivity_l1(&self, delta_l1: f64, dim: usize) -> Result<u64> {
        let units = self.units("delta_l1", delta_l1, dim)?;
        // units < 2^52, so the ceiling is an exact integer below 2^52.
        (units.ceil() as u64)
            .checked_add(dim as u64)
            .ok_or_else(|| CoreError::invalid("dim", "below 2^63", dim))
    }

    /// The `ℓ₂` sensitivity in grid units after quantisation: `Δ₂/γ·(1 + (dim + 16)·2⁻⁵²) + √dim` (the Lemma
    /// plus the clipping margin), times `1 + 2⁻⁵⁰` so that the three float roundings cannot make it smaller.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `delta_l2` unless it is finite, `>= 0` and below
    /// `2⁵²/(dim + 16)` grid units.
    pub fn integer_sensitivity_l2(&self, delta_l2: f64, dim: usize) -> Result<f64> {
        let units = self.units("delta_l2", delta_l2, dim)?;
        let margin = units * (dim as f64 + 16.0) * f64::EPSILON;
        Ok((units + margin + (dim as f64).sqrt()) * (1.0 + 2f64.powi(-50)))
    }
}

/// An exact noise distribution in grid units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ExactDistribution {
    /// `DLap(t)`: `P(z) ∝ e^{−|z|/t}` on ℤ.
    DiscreteLaplace {
        /// Scale in grid units.
        t: u64,
    },
    /// `N_ℤ(0, σ²)`: `P(z) ∝ e^{−z²/(2σ²)}` on ℤ.
    DiscreteGaussian {
        /// `σ` in grid units.
        sigma: u64,
    },
}

/// Exact noise on a grid: the integer distribution `dist` in units of `grid.gamma()`. Built from a float scale
/// by rounding the scale **up** onto the grid ([`ExactNoise::laplace`], [`ExactNoise::gaussian`]), so the noise
/// is never smaller than asked; [`ExactNoise::scale`] is the effective scale.
///
/// A mechanism keeps its sums in integers (`i128` data sums, `i64` noise from [`ExactNoise::fill`] /
/// [`ExactNoise::add_to`], one fresh vector per node) and releases `grid.value(sum + noise)`; its privacy is
/// that of the integer mechanism with the integer sensitivity of [`Grid::integer_sensitivity_l1`] /
/// [`Grid::integer_sensitivity_l2`] (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExactNoise {
    /// The grid of the release.
    pub grid: Grid,
    /// The noise in grid units.
    pub dist: ExactDistribution,
}

impl ExactNoise {
    /// Discrete Laplace noise of scale at least `scale` (value units): `t = ⌈scale/γ⌉ ∈ [2³⁰, 2³¹]` units on
    /// [`Grid::for_scale`]`(scale)`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] as [`Grid::for_scale`].
    pub fn laplace(scale: f64) -> Result<Self> {
        let (grid, t) = Self::units(scale)?;
        Ok(ExactNoise {
            grid,
            dist: ExactDistribution::DiscreteLaplace { t },
        })
    }

    /// Discrete Gaussian noise of `σ` at least `sigma` (value units): `σ = ⌈sigma/γ⌉ ∈ [2³⁰, 2³¹]` units on
    /// [`Grid::for_scale`]`(sigma)`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] as [`Grid::for_scale`], naming `scale`.
    pub fn gaussian(sigma: f64) -> Result<Self> {
        let (grid, sigma) = Self::units(sigma)?;
        Ok(ExactNoise {
            grid,
            dist: ExactDistribution::DiscreteGaussian { sigma },
        })
    }

    fn units(scale: f64) -> Result<(Grid, u64)> {
        let grid = Grid::for_scale(scale)?;
        // scale/γ in [2^30, 2^31) exactly; its ceiling is in [2^30, 2^31].
        Ok((grid, (scale * 2f64.powi(-grid.exponent)).ceil() as u64))
    }

    /// The scale in grid units (`t` or `σ`).
    pub fn units_scale(&self) -> u64 {
        match self.dist {
            ExactDistribution::DiscreteLaplace { t } => t,
            ExactDistribution::DiscreteGaussian { sigma } => sigma,
        }
    }

    /// The effective scale in value units, `t·γ` or `σ·γ` (exact), at least the scale asked for.
    pub fn scale(&self) -> f64 {
        self.units_scale() as f64 * self.grid.gamma()
    }

    /// `"discrete_laplace"` or `"discrete_gaussian"`.
    pub fn name(&self) -> &'static str {
        match self.dist {
            ExactDistribution::DiscreteLaplace { .. } => "discrete_laplace",
            ExactDistribution::DiscreteGaussian { .. } => "discrete_gaussian",
        }
    }

    /// Variance of one draw in value units: `γ²` times `2e^{−1/t}/(1 − e^{−1/t})²` (discrete Laplace, `≈ 2t²`)
    /// or the discrete Gaussian's (`= σ²` in float at these sizes).
    pub fn variance(&self) -> f64 {
        let gamma = self.grid.gamma();
        let units = match self.dist {
            ExactDistribution::DiscreteLaplace { t } => discrete_laplace_variance(t as f64),
            ExactDistribution::DiscreteGaussian { sigma } => {
                discrete_gaussian_variance((sigma as f64) * (sigma as f64))
            }
        };
        units * gamma * gamma
    }

    /// Overwrite every entry of `out` with an independent draw in grid units (generator and distribution
    /// dispatched once per call).
    ///
    /// Errors: as [`IntegerSampler::fill`] (probability below `10⁻⁶⁰⁰`).
    pub fn fill(&self, rng: &mut Generator, out: &mut [i64]) -> Result<()> {
        self.vector_op(rng, out, false)
    }

    /// Add an independent draw in grid units to every entry of `out` (the stream of [`ExactNoise::fill`]).
    ///
    /// Errors: as [`IntegerSampler::add_to`].
    pub fn add_to(&self, rng: &mut Generator, out: &mut [i64]) -> Result<()> {
        self.vector_op(rng, out, true)
    }

    fn vector_op(&self, rng: &mut Generator, out: &mut [i64], add: bool) -> Result<()> {
        fn run<S: IntegerSampler>(
            s: &S,
            rng: &mut Generator,
            out: &mut [i64],
            add: bool,
        ) -> Result<()> {
            crate::with_generator!(rng, g => if add { s.add_to(g, out) } else { s.fill(g, out) })
        }
        match self.dist {
            ExactDistribution::DiscreteLaplace { t } => {
                run(&DiscreteLaplace::integer(t)?, rng, out, add)
            }
            ExactDistribution::DiscreteGaussian { sigma } => {
                run(&DiscreteGaussian::integer(sigma)?, rng, out, add)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::exact::tests::{chi_square_ok, gaussian_cdf, laplace_cdf, moments_ok};

    #[test]
    fn the_grid_puts_the_scale_in_two_to_the_thirty_units() {
        for scale in [1e-150, 3e-7, 0.1, 1.0, 1.5, 2.0, 1234.5, 1e150] {
            let g = Grid::for_scale(scale).unwrap();
            let units = scale / g.gamma();
            assert!(
                (2f64.powi(30)..2f64.powi(31)).contains(&units),
                "{scale}: {units}"
            );
            for noise in [
                ExactNoise::laplace(scale).unwrap(),
                ExactNoise::gaussian(scale).unwrap(),
            ] {
                // Rounded up onto the grid, by less than one unit in 2^30.
                assert!(noise.scale() >= scale && noise.scale() <= scale * (1.0 + 2f64.powi(-30)));
                assert!((1u64 << 30..=1u64 << 31).contains(&noise.units_scale()));
            }
        }
        for bad in [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e308,
            5e-324,
            1e-200,
            1e151,
        ] {
            assert!(
                matches!(
                    Grid::for_scale(bad),
                    Err(CoreError::InvalidArgument { name: "scale", .. })
                ),
                "{bad}"
            );
            assert!(ExactNoise::laplace(bad).is_err() && ExactNoise::gaussian(bad).is_err());
        }
        assert!(Grid::new(-1023).is_err() && Grid::new(897).is_err());
    }

    #[test]
    fn round_ties_even_matches_the_standard_library() {
        let mut rng = Generator::from_seed([7, 0, 0, 0]);
        let specials = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
            2_251_799_813_685_247.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_993.0,
            f64::MIN_POSITIVE,
            5e-324,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let random = (0..200_000).map(|i| {
            let bits = rand_core::Rng::next_u64(&mut rng);
            if i % 2 == 0 {
                f64::from_bits(bits)
            } else {
                // Halves and near-halves at every magnitude up to 2^53.
                let e = (bits % 54) as i32;
                ((bits >> 8) % (1 << 20)) as f64 * 0.5 * 2f64.powi(e - 20)
            }
        });
        for y in specials.into_iter().chain(random) {
            let (got, want) = (round_ties_even(y), y.round_ties_even());
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{y:e}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn quantisation_is_exact_rounding_and_values_are_exact() {
        let g = Grid::new(-10).unwrap();
        let gamma = g.gamma();
        let mut rng = Generator::from_seed([1, 2, 3, 4]);
        for _ in 0..10_000 {
            let x = (rand_core::Rng::next_u64(&mut rng) as f64 / 2f64.powi(40) - 8e6) * 1.37;
            let n = g.quantize(x).unwrap();
            // x/γ is exact, and so is its distance to n (Sterbenz): at most 1/2.
            let y = x / gamma;
            assert!((y - n as f64).abs() <= 0.5, "{x}");
            assert_eq!(g.value(i128::from(n)), n as f64 * gamma);
            assert_eq!(g.value(i128::from(n)) / gamma, n as f64);
        }
        // Ties to even, and the range.
        assert_eq!(g.quantize(0.5 * gamma).unwrap(), 0);
        assert_eq!(g.quantize(1.5 * gamma).unwrap(), 2);
        assert_eq!(g.quantize(-2.5 * gamma).unwrap(), -2);
        assert!(g.quantize(2f64.powi(62) * gamma).is_err());
        assert_eq!(
            g.quantize((2f64.powi(62) - 512.0) * gamma).unwrap(),
            (1i64 << 62) - 512
        );
        assert!(matches!(
            g.quantize(f64::NAN),
            Err(CoreError::NonFinite { .. })
        ));
        // The refusal does not repeat the value.
        let msg = g.quantize(1e300).unwrap_err().to_string();
        assert!(!msg.contains("1e300") && !msg.contains("1000000"), "{msg}");
        // Bulk: all checked before anything is written.
        let mut out = [7i64; 3];
        assert!(
            g.quantize_into(&[1.0, f64::INFINITY, 2.0], &mut out)
                .is_err()
        );
        assert!(g.quantize_into(&[1.0, 1e300, 2.0], &mut out).is_err());
        assert_eq!(out, [7, 7, 7]);
        g.quantize_into(&[1.0, -0.25, 3.0 * gamma], &mut out)
            .unwrap();
        assert_eq!(out, [1024, -256, 3]);
        // Beyond 2^53 the value is the correctly rounded float of the integer, times γ.
        let big = (1i128 << 60) + 1;
        assert_eq!(g.value(big), 2f64.powi(60) * gamma);
    }

    #[test]
    fn integer_sensitivities_bound_every_pair_of_quantised_neighbours() {
        // The Lemma on random neighbours at the sensitivity bound, including points near rounding ties.
        let g = Grid::new(-3).unwrap();
        let mut rng = Generator::from_seed([5, 6, 7, 8]);
        let mut unit = || rand_core::Rng::next_u64(&mut rng) as f64 / 2f64.powi(64);
        for dim in [1usize, 2, 5, 40] {
            let (d1, d2) = (0.9, 0.9);
            let s1 = g.integer_sensitivity_l1(d1, dim).unwrap();
            let s2 = g.integer_sensitivity_l2(d2, dim).unwrap();
            assert_eq!(s1, (d1 * 8.0f64).ceil() as u64 + dim as u64);
            assert!(s2 >= d2 * 8.0 + (dim as f64).sqrt());
            for _ in 0..2_000 {
                let x: Vec<f64> = (0..dim).map(|_| (unit() - 0.5) * 100.0).collect();
                let dir: Vec<f64> = (0..dim).map(|_| unit() - 0.5).collect();
                let n1: f64 = dir.iter().map(|v| v.abs()).sum();
                let n2: f64 = dir.iter().map(|v| v * v).sum::<f64>().sqrt();
                for (norm, bound) in [(n1, d1), (n2, d2)] {
                    let y: Vec<f64> = x
                        .iter()
                        .zip(&dir)
                        .map(|(a, v)| a + v / norm * bound)
                        .collect();
                    let (mut nx, mut ny) = (vec![0i64; dim], vec![0i64; dim]);
                    g.quantize_into(&x, &mut nx).unwrap();
                    g.quantize_into(&y, &mut ny).unwrap();
                    let l1: i64 = nx.iter().zip(&ny).map(|(a, b)| (a - b).abs()).sum();
                    let l2 = (nx
                        .iter()
                        .zip(&ny)
                        .map(|(a, b)| ((a - b) * (a - b)) as f64)
                        .sum::<f64>())
                    .sqrt();
                    if bound == d1 && norm == n1 {
                        assert!(l1 as u64 <= s1, "dim {dim}: l1 {l1} > {s1}");
                    } else {
                        assert!(l2 <= s2, "dim {dim}: l2 {l2} > {s2}");
                    }
                }
            }
        }
        assert!(g.integer_sensitivity_l1(-1.0, 3).is_err());
        assert!(g.integer_sensitivity_l1(f64::NAN, 3).is_err());
        assert!(g.integer_sensitivity_l2(1e300, 3).is_err());
        assert!(g.integer_sensitivity_l1(2f64.powi(46), 1 << 10).is_err());
    }

    #[test]
    fn exact_noise_has_its_law_in_grid_units() {
        let n = 1 << 18;
        for (i, noise) in [
            ExactNoise::laplace(0.37).unwrap(),
            ExactNoise::gaussian(2.5).unwrap(),
        ]
        .into_iter()
        .enumerate()
        {
            let mut rng = Generator::from_seed([i as u64, 9, 9, 9]);
            let mut xs = vec![0i64; n];
            noise.fill(&mut rng, &mut xs[..100]).unwrap();
            let mut rest = vec![5i64; n - 100];
            noise.add_to(&mut rng, &mut rest).unwrap();
            for (x, r) in xs[100..].iter_mut().zip(&rest) {
                *x = r - 5;
            }
            let units = noise.units_scale() as f64;
            let (stat, crit) = match noise.dist {
                ExactDistribution::DiscreteLaplace { .. } => {
                    let cuts: Vec<i64> = (-30..=30)
                        .map(|k| (f64::from(k) * 0.2 * units) as i64)
                        .collect();
                    chi_square_ok(&xs, &cuts, &laplace_cdf(units))
                }
                ExactDistribution::DiscreteGaussian { .. } => {
                    let cuts: Vec<i64> = (-30..=30)
                        .map(|k| (f64::from(k) * 0.15 * units) as i64)
                        .collect();
                    chi_square_ok(&xs, &cuts, &*gaussian_cdf(units * units))
                }
            };
            assert!(stat < crit, "{noise:?}: {stat} >= {crit}");
            let gamma = noise.grid.gamma();
            moments_ok(&xs, noise.variance() / (gamma * gamma), noise.name());
            let expected = match noise.dist {
                ExactDistribution::DiscreteLaplace { .. } => 2.0 * noise.scale() * noise.scale(),
                ExactDistribution::DiscreteGaussian { .. } => noise.scale() * noise.scale(),
            };
            assert!((noise.variance() / expected - 1.0).abs() < 1e-8);
        }
        // A hand-made distribution out of range is refused before drawing.
        let bad = ExactNoise {
            grid: Grid::new(0).unwrap(),
            dist: ExactDistribution::DiscreteLaplace { t: 0 },
        };
        let mut rng = Generator::from_seed([1, 1, 1, 1]);
        let before = rng.try_clone().unwrap();
        assert!(bad.fill(&mut rng, &mut [0i64; 4]).is_err());
        assert_eq!(rng, before);
        // Secure generator: runs, and two fills differ.
        let noise = ExactNoise::gaussian(1.0).unwrap();
        let mut s = Generator::secure().unwrap();
        let (mut a, mut b) = ([0i64; 16], [0i64; 16]);
        noise.fill(&mut s, &mut a).unwrap();
        noise.fill(&mut s, &mut b).unwrap();
        assert_ne!(a, b);
    }
}
