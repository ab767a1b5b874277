//! The local Laplace randomiser of van der Hoeven (2019, §2.1) and its ℓ2 variant (Song et al. 2015).
//!
//! Each data provider releases `g̃_t = g_t + ξ_t` with noise it chooses:
//!
//! * [`Mechanism::Coordinate`] — the **local Laplace randomiser**: per-coordinate budgets `τ_{t,j} > 0`
//!   (`+∞` = that coordinate is released exactly), density `ρ_t(z) ∝ exp(−Σ_j τ_{t,j} |z_j| / (2G))`, i.e.
//!   independent `Laplace(2G/τ_{t,j})` per coordinate. For `|g_j| ≤ G` it is `ε_t`-local DP with
//!   `ε_t = Σ_j τ_{t,j}` (Lemma 1, stated for `G = 1`; apply it to `g/G`), and coordinate `j` alone is
//!   `τ_{t,j}`-local DP.
//! * [`Mechanism::L2`] — `ρ_t(z) ∝ exp(−ε_t ‖z‖₂ / (2G))`: a direction uniform on the sphere times a radius
//!   `Gamma(d, 2G/ε_t)` (the density in polar coordinates is `∝ r^{d−1} e^{−ε r/(2G)}`). `ε_t`-local DP for
//!   `‖g‖₂ ≤ G` (Song et al. 2015, Theorem 1).
//!
//! Inputs beyond the bound (`|g_j| > G`, resp. `‖g‖₂ > G`) are clipped to it — the privacy proof assumes the
//! bound, and refusing would itself leak — unless `strict`, where they are an error. Both noises are
//! symmetric and zero-mean, so `E[g̃] = g` for inputs within the bound.
//!
//! # Samplers ([`SamplerKind`])
//!
//! * **Exact** ([`Mechanism::Coordinate`] only; the Python default): each clipped coordinate with a finite
//!   budget is rounded onto a power-of-two grid and integer discrete Laplace noise is added, `g̃_j =
//!   (round(g_j/γ_j) + Z_j)·γ_j`, `Z_j ~ DLap(t_j)` with the grid and `t_j` of
//!   [`crate::noise::release::exact_laplace`]`(2G, 1, τ_j)`: the coordinate's sensitivity `2G` becomes
//!   `⌈2G/γ_j⌉ + 1` grid units after rounding (the Lemma of [`crate::noise::grid`]) and `t_j` is chosen so that
//!   `(⌈2G/γ_j⌉ + 1)/t_j <= τ_j` — coordinate `j` is exactly `τ_j`-local DP for the released floats (the discrete
//!   Laplace Lemma, `dponline.privacy.discrete_laplace_epsilon`) and the row `Σ_j τ_j`-local DP (independent
//!   coordinates: the privacy-loss ratios multiply). Still symmetric and zero-mean around the rounded value,
//!   so `E[g̃_j]` is `g_j` within `γ_j/2 <= 2^{−30}` of the noise scale.
//! * **Floating-point**: `Laplace(2G/τ_j)` in floating point (Lemma 1 holds for the real-valued mechanism;
//!   Mironov 2012 caveat). [`Mechanism::L2`] has only this sampler: its direction (uniform on the sphere) and
//!   radius (`Gamma(d, 2G/ε)`) are drawn in floating point and no exact sampler with a proof exists here, so
//!   [`check_sampler`] refuses `L2` with [`SamplerKind::Exact`].

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_dim, check_positive};
use crate::noise::release::{SamplerKind, exact_laplace, release_on_grid};
use crate::noise::{LaplaceDraw, Sampler, sample_gamma};
use crate::rng::{Generator, Seed};
use crate::sphere::unit_sphere;

/// Largest noise scale `2G/τ` accepted (so every draw and every sum of draws stays finite).
pub const MAX_NOISE_SCALE: f64 = 1e250;

/// Which local randomiser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mechanism {
    /// Per-coordinate budgets, `Laplace(2G/τ_j)` per coordinate (Lemma 1).
    Coordinate,
    /// One budget per round, `ρ(z) ∝ exp(−ε‖z‖₂/(2G))`.
    L2,
}

impl Mechanism {
    /// Parse `"laplace"` (per coordinate) or `"l2"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "laplace" => Ok(Mechanism::Coordinate),
            "l2" => Ok(Mechanism::L2),
            other => Err(CoreError::invalid(
                "mechanism",
                "'laplace' or 'l2'",
                format!("{other:?}"),
            )),
        }
    }

    /// `"laplace"` or `"l2"`.
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::Coordinate => "laplace",
            Mechanism::L2 => "l2",
        }
    }

    /// Budgets per round: `dim` for [`Mechanism::Coordinate`], 1 for [`Mechanism::L2`].
    pub fn budgets_per_round(self, dim: usize) -> usize {
        match self {
            Mechanism::Coordinate => dim,
            Mechanism::L2 => 1,
        }
    }
}

/// Check that `mechanism` can be sampled by `sampler`: everything but [`Mechanism::L2`] with
/// [`SamplerKind::Exact`] (module docs, "Samplers").
///
/// Errors: [`CoreError::InvalidArgument`] naming `sampler`, saying why and what to use instead.
pub fn check_sampler(mechanism: Mechanism, sampler: SamplerKind) -> Result<()> {
    if mechanism == Mechanism::L2 && sampler == SamplerKind::Exact {
        return Err(CoreError::invalid(
            "sampler",
            "'floating-point' for the l2 mechanism: its direction (uniform on the sphere) and Gamma radius are \
             drawn in floating point and have no exact sampler; use mechanism='laplace' for exact noise, or \
             pass sampler='floating-point' to accept the floating-point caveat (Mironov 2012)",
            "'exact'",
        ));
    }
    Ok(())
}

/// Check a budget vector: every entry `> 0` (`+∞` allowed), and `2G/τ ≤ MAX_NOISE_SCALE`; with the exact
/// sampler and a bound `G > 0`, also that every finite budget has an exact calibration
/// ([`exact_laplace`]`(2G, 1, τ)`: `τ` up to about `2²¹/17`).
///
/// Errors: [`CoreError::NonFinite`] for NaN; [`CoreError::InvalidArgument`] for `τ ≤ 0`, a budget so small
/// that the noise scale overflows, or (exact) outside the exact sampler's range.
pub fn check_budgets(
    name: &'static str,
    budgets: &[f64],
    bound: f64,
    sampler: SamplerKind,
) -> Result<()> {
    for (index, &tau) in budgets.iter().enumerate() {
        if tau.is_nan() {
            return Err(CoreError::NonFinite {
                name,
                index,
                value: tau,
            });
        }
        let ok = tau > 0.0 && 2.0 * bound / tau <= MAX_NOISE_SCALE;
        if !ok {
            return Err(CoreError::InvalidArgument {
                name,
                allowed: "> 0 (inf = no noise) with 2G/budget <= 1e250",
                value: format!("{tau} at index {index}"),
            });
        }
        if sampler == SamplerKind::Exact
            && bound > 0.0
            && tau.is_finite()
            && exact_laplace(2.0 * bound, 1, tau).is_err()
        {
            return Err(CoreError::InvalidArgument {
                name,
                allowed: "within the exact sampler's range (2G/budget in [1e-150, 1e150], budget <= about \
                          1.2e5); use sampler='floating-point' beyond",
                value: format!("{tau} at index {index}"),
            });
        }
    }
    Ok(())
}

/// Clip `g` to the bound in place: coordinate-wise to `[−G, G]` or to the ℓ2 ball of radius `G`.
/// Returns whether anything changed.
#[inline]
pub fn clip(g: &mut [f64], bound: f64, l2: bool) -> bool {
    if l2 {
        let norm = crate::vecops::dot(g, g).sqrt();
        if norm > bound {
            let f = bound / norm;
            g.iter_mut().for_each(|x| *x *= f);
            return true;
        }
        false
    } else {
        let mut changed = false;
        for x in g.iter_mut() {
            if x.abs() > bound {
                *x = x.clamp(-bound, bound);
                changed = true;
            }
        }
        changed
    }
}

/// Whether `g` exceeds the bound (coordinate-wise, or in ℓ2 norm).
#[inline]
pub fn exceeds(g: &[f64], bound: f64, l2: bool) -> bool {
    if l2 {
        crate::vecops::dot(g, g).sqrt() > bound
    } else {
        g.iter().any(|x| x.abs() > bound)
    }
}

/// Add the noise of `mechanism` to `g` in place with `sampler` (no clipping; `budgets` already checked by
/// [`check_budgets`] with the same sampler and bound, and the pair by [`check_sampler`]). The exact sampler
/// replaces each noised coordinate by its exact release on the grid (module docs).
///
/// Errors: only from samplers with parameters already validated (not expected); `g` may then be partly
/// noised.
#[inline]
pub fn add_noise(
    rng: &mut Generator,
    mechanism: Mechanism,
    sampler: SamplerKind,
    bound: f64,
    budgets: &[f64],
    g: &mut [f64],
    direction: &mut [f64],
) -> Result<()> {
    match mechanism {
        Mechanism::Coordinate if sampler == SamplerKind::Exact => {
            for (x, &tau) in g.iter_mut().zip(budgets) {
                if tau.is_finite() {
                    let noise = exact_laplace(2.0 * bound, 1, tau)?;
                    let mut z = [0i64];
                    noise.fill(rng, &mut z)?;
                    *x = release_on_grid(&noise.grid, *x, z[0])?;
                }
            }
        }
        Mechanism::Coordinate => {
            crate::with_generator!(rng, g_rng => {
                for (x, &tau) in g.iter_mut().zip(budgets) {
                    if tau.is_finite() {
                        *x += LaplaceDraw::new(2.0 * bound / tau).sample(g_rng);
                    }
                }
            });
        }
        Mechanism::L2 => {
            let eps = budgets.first().copied().unwrap_or(f64::INFINITY);
            if eps.is_finite() && !g.is_empty() {
                let radius = sample_gamma(rng, g.len() as f64, 2.0 * bound / eps)?;
                unit_sphere(rng, direction);
                for (x, u) in g.iter_mut().zip(direction.iter()) {
                    *x += radius * u;
                }
            }
        }
    }
    Ok(())
}

/// A stateful local randomiser: a bound `G`, a mechanism and its own generator.
#[derive(Debug, Serialize, Deserialize)]
pub struct LocalRandomizer {
    dim: usize,
    bound: f64,
    mechanism: Mechanism,
    sampler: SamplerKind,
    strict: bool,
    rng: Generator,
    direction: Vec<f64>,
    rounds: u64,
    clipped: u64,
}

impl LocalRandomizer {
    /// A randomiser for vectors of length `dim` with bound `G`, noise of `mechanism` drawn by `sampler`
    /// (stream 0 of `seed`, or OS-keyed ChaCha20 when `secure`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `dim = 0`, `G` not finite and `> 0`, or a pair refused by
    /// [`check_sampler`]; allocation and entropy failures.
    pub fn new(
        dim: usize,
        bound: f64,
        mechanism: Mechanism,
        sampler: SamplerKind,
        seed: Seed,
        secure: bool,
        strict: bool,
    ) -> Result<Self> {
        check_dim(dim)?;
        check_positive("bound", bound)?;
        check_sampler(mechanism, sampler)?;
        Ok(LocalRandomizer {
            dim,
            bound,
            mechanism,
            sampler,
            strict,
            rng: Generator::for_stream(&seed, 0, secure)?,
            direction: crate::alloc::zeros("sphere direction", dim)?,
            rounds: 0,
            clipped: 0,
        })
    }

    /// Vector length `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The bound `G`.
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The mechanism.
    pub fn mechanism(&self) -> Mechanism {
        self.mechanism
    }

    /// The sampler.
    pub fn sampler(&self) -> SamplerKind {
        self.sampler
    }

    /// Whether out-of-bound inputs are errors.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Whether the generator is the secure one.
    pub fn secure(&self) -> bool {
        self.rng.is_secure()
    }

    /// Rounds (rows) randomised so far.
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    /// Rows clipped so far.
    pub fn clipped(&self) -> u64 {
        self.clipped
    }

    /// Check `gradients` (`rows × d`, row-major) and `budgets` (`rows × d`, or `rows` for ℓ2) without
    /// changing anything; returns `rows`.
    ///
    /// Errors: [`CoreError::Shape`], [`CoreError::NonFinite`], budget errors of [`check_budgets`]; with
    /// `strict`, [`CoreError::InvalidArgument`] for a row beyond the bound.
    pub fn check(&self, gradients: &[f64], budgets: &[f64]) -> Result<usize> {
        if gradients.len() % self.dim != 0 {
            return Err(CoreError::Shape {
                name: "gradients",
                expected: format!("rows of length {}", self.dim),
                got: format!("{} values", gradients.len()),
            });
        }
        let rows = gradients.len() / self.dim;
        let per = self.mechanism.budgets_per_round(self.dim);
        if budgets.len() != rows * per {
            return Err(CoreError::Shape {
                name: "budgets",
                expected: format!("{rows} x {per} values"),
                got: format!("{} values", budgets.len()),
            });
        }
        crate::error::check_finite("gradients", gradients)?;
        check_budgets("budgets", budgets, self.bound, self.sampler)?;
        if self.strict {
            let l2 = self.mechanism == Mechanism::L2;
            if let Some(row) = gradients
                .chunks_exact(self.dim)
                .position(|g| exceeds(g, self.bound, l2))
            {
                return Err(CoreError::InvalidArgument {
                    name: "gradients",
                    allowed: "within the declared bound G (strict=True)",
                    value: format!("row {row}"),
                });
            }
        }
        Ok(rows)
    }

    /// Release `g̃ = clip(g) + ξ` for every row into `out` (same shape as `gradients`); returns the number of
    /// rows clipped in this call.
    ///
    /// Errors (state unchanged): as [`LocalRandomizer::check`]; [`CoreError::Shape`] for `out`.
    pub fn randomize(
        &mut self,
        gradients: &[f64],
        budgets: &[f64],
        out: &mut [f64],
    ) -> Result<u64> {
        let rows = self.check(gradients, budgets)?;
        if out.len() != gradients.len() {
            return Err(CoreError::Shape {
                name: "out",
                expected: format!("{} values", gradients.len()),
                got: format!("{} values", out.len()),
            });
        }
        let per = self.mechanism.budgets_per_round(self.dim);
        let l2 = self.mechanism == Mechanism::L2;
        let mut clipped = 0;
        for ((o, g), tau) in out
            .chunks_exact_mut(self.dim)
            .zip(gradients.chunks_exact(self.dim))
            .zip(budgets.chunks_exact(per))
        {
            o.copy_from_slice(g);
            clipped += u64::from(clip(o, self.bound, l2));
            add_noise(
                &mut self.rng,
                self.mechanism,
                self.sampler,
                self.bound,
                tau,
                o,
                &mut self.direction,
            )?;
        }
        self.rounds += rows as u64;
        self.clipped += clipped;
        Ok(clipped)
    }

    /// Serialize (format-versioned; a secure generator is never serialised).
    ///
    /// Errors: [`CoreError::State`].
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        crate::state::to_state_bytes(self)
    }

    /// Restore from [`LocalRandomizer::to_bytes`].
    ///
    /// Errors: [`CoreError::State`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let r: Self = crate::state::from_state_bytes(bytes)?;
        if r.dim == 0
            || r.direction.len() != r.dim
            || check_sampler(r.mechanism, r.sampler).is_err()
        {
            return Err(CoreError::State(
                "LocalRandomizer state is inconsistent".into(),
            ));
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded randomiser with bound `G = 1`, not secure.
    fn seeded(
        dim: usize,
        mechanism: Mechanism,
        sampler: SamplerKind,
        seed: Seed,
        strict: bool,
    ) -> Result<LocalRandomizer> {
        LocalRandomizer::new(dim, 1.0, mechanism, sampler, seed, false, strict)
    }

    /// `n = 100 000` coordinate-wise releases of the gradient `(g, g, g)` with budgets `(0.5, 4, ∞)`, by
    /// `sampler` from `seed`.
    fn coordinate_releases(sampler: SamplerKind, seed: Seed, g: f64) -> Vec<f64> {
        let mut r = seeded(3, Mechanism::Coordinate, sampler, seed, false).unwrap();
        let n = 100_000;
        let budgets: Vec<f64> = (0..n).flat_map(|_| [0.5, 4.0, f64::INFINITY]).collect();
        let mut out = vec![0.0; 3 * n];
        r.randomize(&vec![g; 3 * n], &budgets, &mut out).unwrap();
        out
    }

    #[test]
    fn laplace_scales_follow_the_budgets_and_inf_means_exact() {
        let out = coordinate_releases(SamplerKind::FloatingPoint, [1, 2, 3, 4], 0.5);
        let n = out.len() / 3;
        for (j, tau) in [0.5f64, 4.0].iter().enumerate() {
            let xs: Vec<f64> = out.iter().skip(j).step_by(3).copied().collect();
            let mean = xs.iter().sum::<f64>() / n as f64;
            let mad = xs.iter().map(|x| (x - 0.5).abs()).sum::<f64>() / n as f64;
            let b = 2.0 / tau;
            // E|X − g| = b; sd of the mean absolute deviation is b/√n.
            assert!(
                (mad - b).abs() < 6.0 * b / (n as f64).sqrt(),
                "j={j}: {mad} vs {b}"
            );
            assert!((mean - 0.5).abs() < 6.0 * b * 2f64.sqrt() / (n as f64).sqrt());
        }
        assert!(out.iter().skip(2).step_by(3).all(|&x| x == 0.5));
    }

    #[test]
    fn bad_budgets_and_gradients_leave_state_unchanged() {
        let mut r = seeded(
            2,
            Mechanism::Coordinate,
            SamplerKind::FloatingPoint,
            [1, 0, 0, 0],
            true,
        )
        .unwrap();
        let before = r.to_bytes().unwrap();
        let mut out = [0.0; 2];
        for (g, tau) in [
            ([0.1, f64::NAN], [1.0, 1.0]),
            ([0.1, 0.2], [-1.0, 1.0]),
            ([0.1, 0.2], [f64::NAN, 1.0]),
            ([0.1, 0.2], [0.0, 1.0]),
            ([0.1, 0.2], [1e-300, 1.0]),
            ([0.1, 2.0], [1.0, 1.0]),
        ] {
            assert!(r.randomize(&g, &tau, &mut out).is_err(), "{g:?} {tau:?}");
        }
        assert!(
            r.randomize(&[0.1, 0.2, 0.3], &[1.0; 3], &mut [0.0; 3])
                .is_err()
        );
        assert_eq!(r.to_bytes().unwrap(), before);
    }

    #[test]
    fn l2_noise_has_gamma_radius() {
        let d = 4;
        let mut r = seeded(
            d,
            Mechanism::L2,
            SamplerKind::FloatingPoint,
            [9, 9, 9, 9],
            false,
        )
        .unwrap();
        let n = 50_000;
        let mut out = vec![0.0; d * n];
        r.randomize(&vec![0.0; d * n], &vec![2.0; n], &mut out)
            .unwrap();
        // ‖ξ‖ ~ Gamma(d, 2G/ε) = Gamma(4, 1): mean 4, variance 4.
        let radii: Vec<f64> = out
            .chunks_exact(d)
            .map(|z| crate::vecops::dot(z, z).sqrt())
            .collect();
        let mean = radii.iter().sum::<f64>() / n as f64;
        assert!((mean - 4.0).abs() < 6.0 * 2.0 / (n as f64).sqrt(), "{mean}");
    }

    #[test]
    fn exact_releases_lie_on_the_grid_with_the_discrete_laplace_variance() {
        // G = 1, budgets 0.5 and 4 (inf released as is): each noised coordinate is an integer multiple of its
        // grid, and its variance around the rounded input is the discrete Laplace variance γ²·2e^{-1/t}/(1 −
        // e^{-1/t})² within 6 standard errors (fourth moment of a Laplace: 6 var²).
        let out = coordinate_releases(SamplerKind::Exact, [5, 6, 7, 8], 0.3);
        let n = out.len() / 3;
        for (j, tau) in [0.5f64, 4.0].into_iter().enumerate() {
            let noise = exact_laplace(2.0, 1, tau).unwrap();
            let gamma = noise.grid.gamma();
            let centre = noise
                .grid
                .value(i128::from(noise.grid.quantize(0.3).unwrap()));
            let xs: Vec<f64> = out.iter().skip(j).step_by(3).copied().collect();
            assert!(xs.iter().all(|x| (x / gamma).fract() == 0.0));
            let var = noise.variance();
            let m2 = xs.iter().map(|x| (x - centre).powi(2)).sum::<f64>() / n as f64;
            let mean = xs.iter().map(|x| x - centre).sum::<f64>() / n as f64;
            assert!(
                (m2 - var).abs() < 6.0 * (5.0 * var * var / n as f64).sqrt(),
                "j={j}: {m2} vs {var}"
            );
            assert!(mean.abs() < 6.0 * (var / n as f64).sqrt(), "j={j}: {mean}");
            // The variance is that of Laplace(2G/τ) up to the calibration's excess (< 1e-6 here).
            let b = 2.0 / tau;
            assert!((var / (2.0 * b * b) - 1.0).abs() < 1e-6);
        }
        assert!(out.iter().skip(2).step_by(3).all(|&x| x == 0.3));
    }

    #[test]
    fn exact_sampler_refuses_l2_and_out_of_range_budgets_without_drawing() {
        assert!(matches!(
            seeded(2, Mechanism::L2, SamplerKind::Exact, [1; 4], false),
            Err(CoreError::InvalidArgument {
                name: "sampler",
                ..
            })
        ));
        let mut r = seeded(1, Mechanism::Coordinate, SamplerKind::Exact, [1; 4], false).unwrap();
        let before = r.to_bytes().unwrap();
        for tau in [1e6, 1e-300, 0.0, -1.0, f64::NAN] {
            assert!(r.randomize(&[0.5], &[tau], &mut [0.0]).is_err(), "{tau}");
        }
        assert_eq!(r.to_bytes().unwrap(), before);
        let back = LocalRandomizer::from_bytes(&before).unwrap();
        assert_eq!(back.sampler(), SamplerKind::Exact);
    }
}
