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

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_positive};
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

/// Check a budget vector: every entry `> 0` (`+∞` allowed), and `2G/τ ≤ MAX_NOISE_SCALE`.
///
/// Errors: [`CoreError::NonFinite`] for NaN; [`CoreError::InvalidArgument`] for `τ ≤ 0` or a budget so small
/// that the noise scale overflows.
pub fn check_budgets(name: &'static str, budgets: &[f64], bound: f64) -> Result<()> {
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

/// Add the noise of `mechanism` to `g` in place (no clipping; `budgets` already checked).
///
/// Errors: only from the Gamma sampler with parameters already validated (not expected).
#[inline]
pub fn add_noise(
    rng: &mut Generator,
    mechanism: Mechanism,
    bound: f64,
    budgets: &[f64],
    g: &mut [f64],
    direction: &mut [f64],
) -> Result<()> {
    match mechanism {
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
    strict: bool,
    rng: Generator,
    direction: Vec<f64>,
    rounds: u64,
    clipped: u64,
}

impl LocalRandomizer {
    /// A randomiser for vectors of length `dim` with bound `G` (stream 0 of `seed`, or OS-keyed ChaCha20
    /// when `secure`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `dim = 0` or `G` not finite and `> 0`; allocation and
    /// entropy failures.
    pub fn new(
        dim: usize,
        bound: f64,
        mechanism: Mechanism,
        seed: Seed,
        secure: bool,
        strict: bool,
    ) -> Result<Self> {
        if dim == 0 {
            return Err(CoreError::invalid("dim", ">= 1", dim));
        }
        check_positive("bound", bound)?;
        Ok(LocalRandomizer {
            dim,
            bound,
            mechanism,
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
        check_budgets("budgets", budgets, self.bound)?;
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
        crate::state::from_state_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn laplace_scales_follow_the_budgets_and_inf_means_exact() {
        let mut r = LocalRandomizer::new(3, 1.0, Mechanism::Coordinate, [1, 2, 3, 4], false, false)
            .unwrap();
        let n = 100_000;
        let g = vec![0.5; 3 * n];
        let budgets: Vec<f64> = (0..n).flat_map(|_| [0.5, 4.0, f64::INFINITY]).collect();
        let mut out = vec![0.0; 3 * n];
        r.randomize(&g, &budgets, &mut out).unwrap();
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
        let mut r =
            LocalRandomizer::new(2, 1.0, Mechanism::Coordinate, [1, 0, 0, 0], false, true).unwrap();
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
        let mut r =
            LocalRandomizer::new(d, 1.0, Mechanism::L2, [9, 9, 9, 9], false, false).unwrap();
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
}
