//! Noise samplers for private mechanisms: Laplace and Gaussian, and exact sums of `r` i.i.d. draws.
//!
//! The sums are what the padded tree of Agarwal & Singh (2017, Algorithm 2; Ene-Nguyen-Vladu 2021,
//! Appendix A, Algorithm 4 line 3) needs: `r` fresh draws added to one release. Drawing them one by one costs
//! `O(r)` per coordinate; the identities below cost `O(1)` and are exact in distribution:
//!
//! * Gaussian: a sum of `r` i.i.d. `N(0, σ²)` is `N(0, rσ²)` = `√r · σ · Z`.
//! * Laplace: `Lap(b) = Exp(b) − Exp(b)` for independent exponentials, so a sum of `r` i.i.d. `Lap(b)` is
//!   `Gamma(r, b) − Gamma(r, b)` (sum of `r` exponentials of scale `b` is `Gamma(r, b)`).
//!
//! Base draws come from `rand_distr`'s ziggurat `StandardNormal` and `Exp1` and its Marsaglia-Tsang `Gamma`.

use rand::RngExt;
use rand_distr::{Distribution, Exp1, Gamma, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_nonnegative};
use crate::rng::Generator;

/// A coordinate-wise noise distribution with its scale.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum NoiseDistribution {
    /// Laplace with density `exp(-|x|/scale) / (2 scale)`; variance `2 scale²`.
    Laplace {
        /// Scale `b >= 0` (0 means no noise).
        scale: f64,
    },
    /// Gaussian `N(0, sigma²)`.
    Gaussian {
        /// Standard deviation `sigma >= 0` (0 means no noise).
        sigma: f64,
    },
}

impl NoiseDistribution {
    /// Laplace noise of scale `scale`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] unless `scale` is finite and `>= 0`.
    pub fn laplace(scale: f64) -> Result<Self> {
        check_nonnegative("scale", scale)?;
        Ok(NoiseDistribution::Laplace { scale })
    }

    /// Gaussian noise of standard deviation `sigma`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] unless `sigma` is finite and `>= 0`.
    pub fn gaussian(sigma: f64) -> Result<Self> {
        check_nonnegative("scale", sigma)?;
        Ok(NoiseDistribution::Gaussian { sigma })
    }

    /// Build from a name (`"laplace"` or `"gaussian"`) and a scale.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another name or a bad scale.
    pub fn from_name(name: &str, scale: f64) -> Result<Self> {
        match name {
            "laplace" => Self::laplace(scale),
            "gaussian" => Self::gaussian(scale),
            other => Err(CoreError::invalid(
                "noise",
                "'laplace' or 'gaussian'",
                format!("{other:?}"),
            )),
        }
    }

    /// The name, `"laplace"` or `"gaussian"`.
    pub fn name(&self) -> &'static str {
        match self {
            NoiseDistribution::Laplace { .. } => "laplace",
            NoiseDistribution::Gaussian { .. } => "gaussian",
        }
    }

    /// The scale parameter (Laplace `b` or Gaussian `sigma`).
    pub fn scale(&self) -> f64 {
        match *self {
            NoiseDistribution::Laplace { scale } => scale,
            NoiseDistribution::Gaussian { sigma } => sigma,
        }
    }

    /// Variance of one draw: `2b²` (Laplace) or `sigma²` (Gaussian).
    pub fn variance(&self) -> f64 {
        match *self {
            NoiseDistribution::Laplace { scale } => 2.0 * scale * scale,
            NoiseDistribution::Gaussian { sigma } => sigma * sigma,
        }
    }

    /// Add one i.i.d. draw to every entry of `out`.
    pub fn add_to(&self, rng: &mut Generator, out: &mut [f64]) {
        match *self {
            _ if self.scale() == 0.0 => {}
            NoiseDistribution::Gaussian { sigma } => add_scaled_normals(rng, sigma, out),
            NoiseDistribution::Laplace { scale } => {
                // Lap(b) = b * Exp(1) * (random sign); one 64-bit word supplies 64 signs.
                for block in out.chunks_mut(64) {
                    let mut signs = rng.random::<u64>();
                    for o in block.iter_mut() {
                        let e: f64 = Exp1.sample(rng);
                        let signed = if signs & 1 == 1 { -e } else { e };
                        signs >>= 1;
                        *o += scale * signed;
                    }
                }
            }
        }
    }

    /// Overwrite every entry of `out` with an i.i.d. draw.
    pub fn fill(&self, rng: &mut Generator, out: &mut [f64]) {
        out.fill(0.0);
        self.add_to(rng, out);
    }

    /// A sampler for sums of `r` i.i.d. draws of this distribution.
    pub fn sum_of(&self, r: u32) -> SumOf {
        SumOf::new(*self, r)
    }
}

/// `out += sd · Z` for i.i.d. standard normals `Z`, with one generator dispatch per call.
#[inline]
fn add_scaled_normals(rng: &mut Generator, sd: f64, out: &mut [f64]) {
    fn add<R: rand_core::Rng + ?Sized>(g: &mut R, sd: f64, out: &mut [f64]) {
        for o in out.iter_mut() {
            let z: f64 = StandardNormal.sample(g);
            *o += sd * z;
        }
    }
    match rng {
        Generator::Reproducible(g) => add(g, sd, out),
        Generator::Secure(g) => add(g.as_mut(), sd, out),
    }
}

/// Draws the sum of `r` i.i.d. copies of a [`NoiseDistribution`] in `O(1)` per coordinate, exactly in
/// distribution (see the module docs).
#[derive(Debug, Clone)]
pub struct SumOf {
    dist: NoiseDistribution,
    r: u32,
    /// `Gamma(r, b)` for Laplace with `r >= 2`.
    gamma: Option<Gamma<f64>>,
    /// `sqrt(r) * sigma` for Gaussian.
    gauss_sd: f64,
}

impl SumOf {
    /// Sampler for the sum of `r` draws of `dist`.
    pub fn new(dist: NoiseDistribution, r: u32) -> Self {
        let gamma = match dist {
            NoiseDistribution::Laplace { scale } if r >= 2 && scale > 0.0 => {
                // Shape r >= 2 and scale > 0 are valid, so construction cannot fail.
                Gamma::new(f64::from(r), scale).ok()
            }
            _ => None,
        };
        let gauss_sd = f64::from(r).sqrt() * dist.scale();
        SumOf {
            dist,
            r,
            gamma,
            gauss_sd,
        }
    }

    /// Number of summed draws.
    pub fn count(&self) -> u32 {
        self.r
    }

    /// Variance of the sum per coordinate: `r · Var(one draw)`.
    pub fn variance(&self) -> f64 {
        f64::from(self.r) * self.dist.variance()
    }

    /// Add one draw of the sum to every entry of `out`.
    pub fn add_to(&self, rng: &mut Generator, out: &mut [f64]) {
        if self.r == 0 || self.dist.scale() == 0.0 {
            return;
        }
        match (self.dist, &self.gamma) {
            (NoiseDistribution::Gaussian { .. }, _) => add_scaled_normals(rng, self.gauss_sd, out),
            (NoiseDistribution::Laplace { .. }, Some(gamma)) => {
                for o in out.iter_mut() {
                    let a = gamma.sample(rng);
                    let b = gamma.sample(rng);
                    *o += a - b;
                }
            }
            (NoiseDistribution::Laplace { .. }, None) => self.dist.add_to(rng, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var)
    }

    #[test]
    fn variances_match_theory() {
        // 200k draws: the sample variance has relative sd about sqrt((kurtosis - 1)/n) <= sqrt(5/2e5) = 0.5%;
        // 6 sd = 3% tolerance.
        let n = 200_000;
        for dist in [
            NoiseDistribution::Laplace { scale: 1.5 },
            NoiseDistribution::Gaussian { sigma: 0.7 },
        ] {
            for r in [1u32, 2, 5] {
                let mut rng = Generator::from_seed([r as u64, 1, 2, 3]);
                let mut xs = vec![0.0; n];
                dist.sum_of(r).add_to(&mut rng, &mut xs);
                let (mean, var) = moments(&xs);
                let expected = f64::from(r) * dist.variance();
                assert!(
                    (var / expected - 1.0).abs() < 0.03,
                    "{dist:?} r={r}: var {var} vs {expected}"
                );
                assert!(mean.abs() < 6.0 * (expected / n as f64).sqrt());
            }
        }
    }

    #[test]
    fn zero_scale_is_no_noise() {
        let mut rng = Generator::from_seed([1, 2, 3, 4]);
        let mut xs = vec![1.0; 10];
        NoiseDistribution::Laplace { scale: 0.0 }
            .sum_of(3)
            .add_to(&mut rng, &mut xs);
        NoiseDistribution::Gaussian { sigma: 0.0 }.add_to(&mut rng, &mut xs);
        assert!(xs.iter().all(|&x| x == 1.0));
    }

    #[test]
    fn bad_scales_are_refused() {
        for s in [-1.0, f64::NAN, f64::INFINITY] {
            assert!(NoiseDistribution::laplace(s).is_err());
            assert!(NoiseDistribution::gaussian(s).is_err());
        }
        assert!(NoiseDistribution::from_name("cauchy", 1.0).is_err());
    }
}
