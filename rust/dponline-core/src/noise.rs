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

/// Largest noise scale accepted: every draw, every sum of up to `2^32` draws and every variance stays finite (a
/// standard exponential or normal draw is below `10^3`, a `Gamma(2^32, b)` draw below `10^10·b`, a variance
/// `2·count·b²` below `10^311`... so `b <= 1e150`), with room for the data it is added to.
pub const MAX_SCALE: f64 = 1e150;

fn check_scale(scale: f64) -> Result<()> {
    check_nonnegative("scale", scale)?;
    if scale > MAX_SCALE {
        return Err(CoreError::invalid(
            "scale",
            "<= 1e150 (larger noise or its variance overflows float64)",
            scale,
        ));
    }
    Ok(())
}

impl NoiseDistribution {
    /// Laplace noise of scale `scale`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] unless `scale` is finite, `>= 0` and `<= MAX_SCALE`.
    pub fn laplace(scale: f64) -> Result<Self> {
        check_scale(scale)?;
        Ok(NoiseDistribution::Laplace { scale })
    }

    /// Gaussian noise of standard deviation `sigma`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] unless `sigma` is finite, `>= 0` and `<= MAX_SCALE`.
    pub fn gaussian(sigma: f64) -> Result<Self> {
        check_scale(sigma)?;
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
        self.sum_of(1).add_to(rng, out);
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

/// Draws the sum of `r` i.i.d. copies of a [`NoiseDistribution`] in `O(1)` per coordinate, exactly in
/// distribution (see the module docs). `Copy` and allocation-free. Hot loops get a monomorphic
/// [`Sampler`] through [`SumOf::with_sampler`], so the distribution is dispatched once per vector, not once
/// per draw.
#[derive(Debug, Clone, Copy)]
pub struct SumOf {
    dist: NoiseDistribution,
    r: u32,
    draw: Draw,
}

#[derive(Debug, Clone, Copy)]
enum Draw {
    Zero,
    Gaussian(GaussianDraw),
    Laplace(LaplaceDraw),
    LaplaceSum(LaplaceSumDraw),
}

/// One scalar draw, generic in the generator.
pub trait Sampler: Copy {
    /// Draw one value.
    fn sample<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> f64;

    /// Overwrite every entry of `out` with an independent draw: the same law as [`Sampler::sample`], but not
    /// necessarily the same stream of values (a sampler may batch the random bits it needs).
    #[inline]
    fn fill<R: rand_core::Rng + ?Sized>(&self, g: &mut R, out: &mut [f64]) {
        out.iter_mut().for_each(|o| *o = self.sample(g));
    }
}

/// Always 0 (no noise).
#[derive(Debug, Clone, Copy)]
pub struct NoDraw;

/// `sd · Z`, `Z ~ N(0, 1)`.
#[derive(Debug, Clone, Copy)]
pub struct GaussianDraw(f64);

/// `b · E · S`, `E ~ Exp(1)`, `S` a uniform sign: `Laplace(b)`.
#[derive(Debug, Clone, Copy)]
pub struct LaplaceDraw(f64);

impl LaplaceDraw {
    /// `Laplace(scale)` (`scale` finite and `>= 0`; the caller checks).
    #[inline]
    pub fn new(scale: f64) -> Self {
        LaplaceDraw(scale)
    }
}

/// One draw of `Gamma(shape, scale)` (Marsaglia-Tsang, `rand_distr`).
///
/// Errors: [`CoreError::InvalidArgument`] unless `shape` and `scale` are finite and `> 0`.
pub fn sample_gamma(rng: &mut Generator, shape: f64, scale: f64) -> Result<f64> {
    crate::error::check_positive("shape", shape)?;
    crate::error::check_positive("scale", scale)?;
    let gamma = Gamma::new(shape, scale)
        .map_err(|e| CoreError::invalid("scale", "valid Gamma parameters", e))?;
    Ok(crate::with_generator!(rng, g => gamma.sample(g)))
}

/// `Gamma(r, b) − Gamma(r, b)`: a sum of `r` i.i.d. `Laplace(b)`.
#[derive(Debug, Clone, Copy)]
pub struct LaplaceSumDraw(Gamma<f64>);

impl Sampler for NoDraw {
    #[inline]
    fn sample<R: rand_core::Rng + ?Sized>(&self, _: &mut R) -> f64 {
        0.0
    }

    #[inline]
    fn fill<R: rand_core::Rng + ?Sized>(&self, _: &mut R, out: &mut [f64]) {
        out.fill(0.0);
    }
}

impl Sampler for GaussianDraw {
    #[inline]
    fn sample<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> f64 {
        let z: f64 = StandardNormal.sample(g);
        self.0 * z
    }
}

impl Sampler for LaplaceDraw {
    #[inline]
    fn sample<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> f64 {
        let e: f64 = Exp1.sample(g);
        if g.next_u64() & 1 == 1 {
            -self.0 * e
        } else {
            self.0 * e
        }
    }

    /// `b · E_i · S_i` with the 64 signs `S_i` of a block of 64 entries taken from the bits of one 64-bit
    /// word (one generator call per 64 draws instead of one per draw); each `E_i ~ Exp(1)` is its own draw.
    #[inline]
    fn fill<R: rand_core::Rng + ?Sized>(&self, g: &mut R, out: &mut [f64]) {
        for block in out.chunks_mut(64) {
            let signs = g.next_u64();
            for (i, o) in (0u32..).zip(block.iter_mut()) {
                let e: f64 = Exp1.sample(g);
                // `b·e >= 0`: flipping its sign bit negates it.
                *o = f64::from_bits((self.0 * e).to_bits() ^ (signs.wrapping_shr(i) & 1) << 63);
            }
        }
    }
}

impl Sampler for LaplaceSumDraw {
    #[inline]
    fn sample<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> f64 {
        self.0.sample(g) - self.0.sample(g)
    }
}

/// A computation parameterised by a [`Sampler`] type (a generic closure).
pub trait WithSampler {
    /// What the computation returns.
    type Output;
    /// Run with the concrete sampler `s`.
    fn call<S: Sampler>(self, s: S) -> Self::Output;
}

impl SumOf {
    /// Sampler for the sum of `r` draws of `dist`.
    pub fn new(dist: NoiseDistribution, r: u32) -> Self {
        let draw = match dist {
            _ if r == 0 || dist.scale() == 0.0 => Draw::Zero,
            NoiseDistribution::Gaussian { sigma } => {
                Draw::Gaussian(GaussianDraw(f64::from(r).sqrt() * sigma))
            }
            NoiseDistribution::Laplace { scale } if r == 1 => Draw::Laplace(LaplaceDraw(scale)),
            // Shape r >= 2 and a finite scale > 0 are valid, so construction cannot fail.
            NoiseDistribution::Laplace { scale } => Gamma::new(f64::from(r), scale)
                .map_or(Draw::Zero, |gamma| Draw::LaplaceSum(LaplaceSumDraw(gamma))),
        };
        SumOf { dist, r, draw }
    }

    /// Number of summed draws.
    pub fn count(&self) -> u32 {
        self.r
    }

    /// Variance of the sum per coordinate: `r · Var(one draw)`.
    pub fn variance(&self) -> f64 {
        f64::from(self.r) * self.dist.variance()
    }

    /// Run `f` with this sum's concrete sampler.
    #[inline]
    pub fn with_sampler<F: WithSampler>(&self, f: F) -> F::Output {
        match self.draw {
            Draw::Zero => f.call(NoDraw),
            Draw::Gaussian(s) => f.call(s),
            Draw::Laplace(s) => f.call(s),
            Draw::LaplaceSum(s) => f.call(s),
        }
    }

    /// Add one draw of the sum to every entry of `out`.
    pub fn add_to(&self, rng: &mut Generator, out: &mut [f64]) {
        struct AddTo<'a> {
            rng: &'a mut Generator,
            out: &'a mut [f64],
        }
        impl WithSampler for AddTo<'_> {
            type Output = ();
            #[inline]
            fn call<S: Sampler>(self, s: S) {
                let out = self.out;
                crate::with_generator!(self.rng, g => out.iter_mut().for_each(|o| *o += s.sample(g)));
            }
        }
        if !matches!(self.draw, Draw::Zero) {
            self.with_sampler(AddTo { rng, out });
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
    fn batched_laplace_fill_has_the_laplace_law() {
        // 400k draws of Lap(1.5): variance 4.5 (relative sd of the estimate sqrt(5/n) = 0.35%), P(X < 0) = 1/2
        // (sd 0.08%), E|X| = 1.5 (relative sd 0.16%), excess kurtosis 3 (sd about sqrt(2520/n) = 0.08); 6 sd.
        let n = 400_000;
        let mut rng = Generator::from_seed([9, 8, 7, 6]);
        let mut xs = vec![0.0; n];
        crate::with_generator!(&mut rng, g => LaplaceDraw::new(1.5).fill(g, &mut xs));
        let (mean, var) = moments(&xs);
        let nf = n as f64;
        assert!(
            (var / 4.5 - 1.0).abs() < 6.0 * (5.0 / nf).sqrt(),
            "var {var}"
        );
        assert!(mean.abs() < 6.0 * (4.5 / nf).sqrt(), "mean {mean}");
        let neg = xs.iter().filter(|&&x| x < 0.0).count() as f64 / nf;
        assert!((neg - 0.5).abs() < 6.0 * (0.25 / nf).sqrt(), "P(X<0) {neg}");
        let abs = xs.iter().map(|x| x.abs()).sum::<f64>() / nf;
        assert!(
            (abs / 1.5 - 1.0).abs() < 6.0 * (1.0 / nf).sqrt(),
            "E|X| {abs}"
        );
        let kurt = xs.iter().map(|x| x.powi(4)).sum::<f64>() / nf / (var * var) - 3.0;
        assert!(
            (kurt - 3.0).abs() < 6.0 * (2520.0 / nf).sqrt(),
            "kurtosis {kurt}"
        );
        // Signs within a block are independent of the magnitudes: E[X | X > 0] = b.
        let pos: Vec<f64> = xs.iter().copied().filter(|&x| x > 0.0).collect();
        let m = pos.iter().sum::<f64>() / pos.len() as f64;
        assert!(
            (m / 1.5 - 1.0).abs() < 6.0 * (1.0 / pos.len() as f64).sqrt(),
            "E[X|X>0] {m}"
        );
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
