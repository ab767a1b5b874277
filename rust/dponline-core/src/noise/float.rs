//! Floating-point noise samplers (the fast path for simulations): Laplace and Gaussian, and exact sums of `r`
//! i.i.d. draws.
//!
//! The sums are what the padded tree of Agarwal & Singh (2017, Algorithm 2; Ene-Nguyen-Vladu 2021,
//! Appendix A, Algorithm 4 line 3) needs: `r` fresh draws added to one release. Drawing them one by one costs
//! `O(r)` per coordinate; the identities below cost `O(1)` and are exact in distribution:
//!
//! * Gaussian: a sum of `r` i.i.d. `N(0, σ²)` is `N(0, rσ²)` = `√r · σ · Z`.
//! * Laplace: `Lap(b) = Exp(b) − Exp(b)` for independent exponentials, so a sum of `r` i.i.d. `Lap(b)` is
//!   `Gamma(r, b) − Gamma(r, b)` (sum of `r` exponentials of scale `b` is `Gamma(r, b)`).
//!
//! Single draws ([`Sampler::sample`]) come from `rand_distr`'s ziggurat `StandardNormal` and `Exp1`, sums of
//! `r >= 2` Laplace draws from its Marsaglia-Tsang `Gamma`. Whole vectors of Laplace draws take the bulk path.
//!
//! **Bulk draws** ([`Sampler::fill`] / [`Sampler::add_to`] of a single Laplace draw, [`NoiseDistribution::fill`]
//! and [`NoiseDistribution::add_to`], [`fill_exp1`]; every node of the tree aggregator). The generator's raw
//! 64-bit words are drawn in stream order (xoshiro256++ word by word; ChaCha20 serves them from its 64-byte
//! blocks), eight at a time, and each word `w` becomes one `Exp(1)` draw `E = −ln U`, `U = (w + 1)·2⁻⁶⁴`, by
//! a branch-free kernel ([`crate::vecops::ln_normal`], within 2 ulp of `f64::ln`) that runs at the CPU's
//! widest vector level ([`crate::simd`]; the values do not depend on the level). A Laplace draw is `b·E` with
//! its sign from one bit of a separate word per block of 64 entries (that word first, then one word per
//! entry). Cost per Laplace draw on the development machine (the `draw_speed` timing test, dev-release
//! build): 2.27 ns at AVX-512, 3.19 at AVX2, 4.99 at the baseline, against 2.82 ns at every level for the
//! previous fill (ziggurat `Exp1` per entry, the same batched signs) and 5.6 ns for [`Sampler::sample`] (a
//! word per sign). The ziggurat is cheap (one word and a table look-up in 99% of draws); the logarithm's
//! division bounds the bulk path, so it gains only where eight lanes share it: on an AVX2-only CPU it is
//! about 13% slower than the previous fill. Of one word per draw, the generator itself takes about 0.85 ns
//! (xoshiro256++'s serial dependency; one stream).
//!
//! *Tail and grid.* `U` takes the values `k·2⁻⁶⁴`, `k = 1..=2⁶⁴` (the sum `w + 1` rounded to 53 bits, so
//! the grid is exact where it matters, at small `U`). The largest `E` is `64 ln 2 ≈ 44.36`: a Laplace draw
//! never exceeds `44.36·b` in magnitude, and the mass the exact law puts beyond it, `P(|X| > 44.36·b) =
//! 2⁻⁶⁴ ≈ 5.4·10⁻²⁰`, sits on that largest value instead (the word `w = 0`). Near the top the possible values
//! are far apart (`64 ln 2`, `63 ln 2`, `ln(2⁶⁴/3)`, … for `w = 0, 1, 2, …`). The ziggurat path reaches about as
//! far: its tail is `7.70 − ln u` with a 53-bit `u` in `[0, 1)`, so its finite draws stop at `44.4`, and `u =
//! 0` (probability `2⁻⁵³` per tail draw, about `5·10⁻²⁰` per draw) gives `+∞`, which the bulk path cannot.
//! Both are the same kind of deviation from the real-valued mechanism as Mironov (2012) describes for every
//! floating-point sampler (see [`crate::rng`]): the privacy guarantees printed by dponline are those of the
//! real-valued mechanisms and hold for these samplers only up to such effects. Tested: KS distance to the
//! exact CDF at `n = 2²²` (level `10⁻⁶`), the variance, and the frequency beyond 10 scale units (`e⁻¹⁰`).
//!
//! *Gaussian.* A vectorised Box-Muller on the same words (`√(2E)` and an octant-exact `cos`/`sin` of `2πV`)
//! was measured at 2.15 ns per draw at AVX-512, 2.71 at AVX2 and 5.5 at the baseline, against 2.4 ns for the
//! ziggurat at every level; one algorithm must serve every level (a seeded stream may not depend on the
//! CPU), so Gaussian vectors keep the ziggurat.

use rand_distr::{Distribution, Exp1, Gamma, StandardNormal};
use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_nonnegative};
use crate::noise::exact::{Bits, DiscreteLaplace, IntegerGaussian, IntegerSampler};
use crate::noise::grid::{ExactDistribution, ExactNoise};
use crate::rng::Generator;

/// A coordinate-wise noise distribution with its scale.
///
/// A restored distribution is validated like a constructed one (finite scale in `[0, MAX_SCALE]`), so no state
/// decodes to a NaN, negative or overflowing noise scale.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "NoiseState")]
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

/// The serialized form of a [`NoiseDistribution`] (same layout), checked by `TryFrom`.
#[derive(Deserialize)]
enum NoiseState {
    Laplace { scale: f64 },
    Gaussian { sigma: f64 },
}

impl TryFrom<NoiseState> for NoiseDistribution {
    type Error = CoreError;

    fn try_from(s: NoiseState) -> Result<Self> {
        match s {
            NoiseState::Laplace { scale } => Self::laplace(scale),
            NoiseState::Gaussian { sigma } => Self::gaussian(sigma),
        }
    }
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

    /// Overwrite every entry of `out` with an i.i.d. draw (the stream of [`NoiseDistribution::add_to`]).
    pub fn fill(&self, rng: &mut Generator, out: &mut [f64]) {
        self.sum_of(1).fill(rng, out);
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
    UnitLaplace(UnitDraw<DiscreteLaplace>),
    UnitGaussian(UnitDraw<IntegerGaussian>),
}

/// Largest magnitude of an exact draw served by [`UnitDraw`]: `2⁴²` grid units. A sum of up to `2¹¹` such draws
/// is an integer below `2⁵³`, exact in `f64`. With a scale of at most `2³¹` units (every [`ExactNoise`]) a draw
/// reaches `2⁴²` with probability below `e^{−2048}` (the geometric tail of `DLap(2³¹)`, which also dominates
/// `N_ℤ(0, (2³¹)²)`).
pub const MAX_UNIT_DRAW: u64 = 1 << 42;

/// One exact draw of an integer sampler, in grid units, as an integer-valued `f64` (exact: `|z| < 2⁴²`).
///
/// A mechanism on the exact path keeps its noise in `f64` rows that are sums of at most `2¹¹` such draws, so
/// every row is an exact integer (see [`MAX_UNIT_DRAW`]). In the events where the integer sampler stops with an
/// error (probability below `10⁻⁶⁰⁰`, [`crate::noise::exact`]) or a draw reaches `2⁴²` (below `e^{−2048}`), the
/// draw is `NaN`: the caller checks its releases and reports [`CoreError::IterationLimit`] instead of releasing.
#[derive(Debug, Clone, Copy)]
pub struct UnitDraw<S>(S);

impl<S: IntegerSampler> UnitDraw<S> {
    #[inline(always)]
    fn value(z: Result<i64>) -> f64 {
        match z {
            Ok(z) if z.unsigned_abs() < MAX_UNIT_DRAW => z as f64,
            _ => f64::NAN,
        }
    }
}

impl<S: IntegerSampler + Copy> Sampler for UnitDraw<S> {
    #[inline]
    fn sample<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> f64 {
        Self::value(self.0.sample(g))
    }

    /// One [`Bits`] for the whole slice (the stream of [`IntegerSampler::fill`]).
    #[inline]
    fn fill<R: rand_core::Rng + ?Sized>(&self, g: &mut R, out: &mut [f64]) {
        let mut bits = Bits::new(g);
        out.iter_mut()
            .for_each(|o| *o = Self::value(self.0.draw(&mut bits)));
    }

    #[inline]
    fn add_to<R: rand_core::Rng + ?Sized>(&self, g: &mut R, out: &mut [f64]) {
        let mut bits = Bits::new(g);
        out.iter_mut()
            .for_each(|o| *o += Self::value(self.0.draw(&mut bits)));
    }
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

    /// Add an independent draw to every entry of `out`: the law and the stream of [`Sampler::fill`].
    #[inline]
    fn add_to<R: rand_core::Rng + ?Sized>(&self, g: &mut R, out: &mut [f64]) {
        out.iter_mut().for_each(|o| *o += self.sample(g));
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

    #[inline]
    fn add_to<R: rand_core::Rng + ?Sized>(&self, _: &mut R, _: &mut [f64]) {}
}

impl Sampler for GaussianDraw {
    /// `inline(always)`: inlined into a fill loop, the generator's state stays in registers across draws
    /// (as a call, every draw loads and stores it: about twice the time per draw).
    #[inline(always)]
    fn sample<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> f64 {
        let z: f64 = StandardNormal.sample(g);
        self.0 * z
    }
}

impl Sampler for LaplaceDraw {
    /// `inline(always)`, as [`GaussianDraw`]'s.
    #[inline(always)]
    fn sample<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> f64 {
        let e: f64 = Exp1.sample(g);
        if g.next_u64() & 1 == 1 {
            -self.0 * e
        } else {
            self.0 * e
        }
    }

    /// The bulk path (module docs, "Bulk draws"): per block of 64 entries one word of signs, then one word
    /// per entry turned into `E = −ln U` by a vectorised kernel at the CPU's widest level.
    #[inline]
    fn fill<R: rand_core::Rng + ?Sized>(&self, g: &mut R, out: &mut [f64]) {
        crate::simd::dispatch(
            #[inline(always)]
            || laplace_kernel::<R, false>(self.0, g, out),
        );
    }

    #[inline]
    fn add_to<R: rand_core::Rng + ?Sized>(&self, g: &mut R, out: &mut [f64]) {
        crate::simd::dispatch(
            #[inline(always)]
            || laplace_kernel::<R, true>(self.0, g, out),
        );
    }
}

/// Entries per block of the bulk fills: one 64-bit word of signs covers a block.
const BLOCK: usize = 64;

/// `2⁻⁶⁴`.
const TWO_POW_M64: f64 = 1.0 / 18_446_744_073_709_551_616.0;

/// `U = (w + 1) · 2⁻⁶⁴` in `[2⁻⁶⁴, 1]` (the sum rounded to 53 bits), then `E = −ln U`, an `Exp(1)` draw in
/// `[0, 64 ln 2]` (module docs, "Bulk draws").
#[inline(always)]
fn exp1_from_word(w: u64) -> f64 {
    let u = (w as f64 + 1.0) * TWO_POW_M64;
    // `0 − ln 1 = +0`, never `−0`.
    0.0 - crate::vecops::ln_normal(u)
}

/// Entries per step of the bulk kernels: the words of a step are drawn just before they are transformed, so
/// the (scalar) generator and the (vector) transform overlap.
const STEP: usize = 8;

/// Overwrite (`ADD = false`) or add to (`ADD = true`) every entry of `out` with `Laplace(scale)` draws: the
/// Laplace bulk kernel, at the level of its caller. Per block of [`BLOCK`] entries one word of signs, then
/// one word per entry, in order.
#[inline(always)]
fn laplace_kernel<R: rand_core::Rng + ?Sized, const ADD: bool>(
    scale: f64,
    g: &mut R,
    out: &mut [f64],
) {
    // `scale·E >= 0`: flipping its sign bit negates it.
    let draw =
        |w: u64, sign: u64| f64::from_bits((scale * exp1_from_word(w)).to_bits() ^ sign << 63);
    let put = |o: &mut f64, x: f64| if ADD { *o += x } else { *o = x };
    for block in out.chunks_mut(BLOCK) {
        let signs = g.next_u64();
        let mut steps = block.chunks_exact_mut(STEP);
        let mut used = 0u32;
        for o in &mut steps {
            // Fixed trip counts and constant shifts: vectorises.
            let mut words = [0u64; STEP];
            for w in &mut words {
                *w = g.next_u64();
            }
            let bits = signs >> used;
            for k in 0..STEP {
                put(&mut o[k], draw(words[k], bits >> k & 1));
            }
            used += STEP as u32;
        }
        for (k, o) in steps.into_remainder().iter_mut().enumerate() {
            put(o, draw(g.next_u64(), signs >> (used as usize + k) & 1));
        }
    }
}

/// Overwrite every entry of `out` with an independent `Exp(1)` draw by the bulk path (module docs, "Bulk
/// draws"): one generator word per entry, at the CPU's widest vector level.
pub fn fill_exp1(rng: &mut Generator, out: &mut [f64]) {
    crate::with_generator!(rng, g => crate::simd::dispatch(#[inline(always)] || exp1_kernel(g, out)));
}

/// [`fill_exp1`] at the level of its caller.
#[inline(always)]
fn exp1_kernel<R: rand_core::Rng + ?Sized>(g: &mut R, out: &mut [f64]) {
    let mut steps = out.chunks_exact_mut(STEP);
    for o in &mut steps {
        let mut words = [0u64; STEP];
        for w in &mut words {
            *w = g.next_u64();
        }
        for k in 0..STEP {
            o[k] = exp1_from_word(words[k]);
        }
    }
    for o in steps.into_remainder() {
        *o = exp1_from_word(g.next_u64());
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

    /// One exact draw of `noise` in its grid units ([`UnitDraw`]); [`SumOf::variance`] is then that of the
    /// float law of the same effective scale, `2(tγ)²` or `(σγ)²`, which equals the discrete law's variance
    /// to float precision at the `>= 2³⁰` units of every [`ExactNoise`] (`2e^{−1/t}/(1 − e^{−1/t})² = 2t² −
    /// 1/6 + O(t⁻²)`; the discrete Gaussian's equals `σ²` in float once `σ >= 2`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for a scale in units outside `[1, 2³¹]` (not an [`ExactNoise`]).
    pub fn exact(noise: &ExactNoise) -> Result<Self> {
        let (dist, draw) = match noise.dist {
            ExactDistribution::DiscreteLaplace { t } => (
                NoiseDistribution::Laplace {
                    scale: noise.scale(),
                },
                Draw::UnitLaplace(UnitDraw(DiscreteLaplace::integer(t)?)),
            ),
            ExactDistribution::DiscreteGaussian { sigma } => (
                NoiseDistribution::Gaussian {
                    sigma: noise.scale(),
                },
                Draw::UnitGaussian(UnitDraw(IntegerGaussian::new(sigma)?)),
            ),
        };
        Ok(SumOf { dist, r: 1, draw })
    }

    /// The law of one summed draw (for [`SumOf::exact`], the float law of the same effective scale).
    pub fn distribution(&self) -> NoiseDistribution {
        self.dist
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
            Draw::UnitLaplace(s) => f.call(s),
            Draw::UnitGaussian(s) => f.call(s),
        }
    }

    /// Add one draw of the sum to every entry of `out` ([`Sampler::add_to`]: the bulk path for single
    /// Laplace draws).
    pub fn add_to(&self, rng: &mut Generator, out: &mut [f64]) {
        self.vector_op(rng, out, true);
    }

    /// Overwrite every entry of `out` with one draw of the sum ([`Sampler::fill`]; the stream of
    /// [`SumOf::add_to`]).
    pub fn fill(&self, rng: &mut Generator, out: &mut [f64]) {
        self.vector_op(rng, out, false);
    }

    fn vector_op(&self, rng: &mut Generator, out: &mut [f64], add: bool) {
        struct Op<'a> {
            rng: &'a mut Generator,
            out: &'a mut [f64],
            add: bool,
        }
        impl WithSampler for Op<'_> {
            type Output = ();
            #[inline]
            fn call<S: Sampler>(self, s: S) {
                let out = self.out;
                if self.add {
                    crate::with_generator!(self.rng, g => s.add_to(g, out));
                } else {
                    crate::with_generator!(self.rng, g => s.fill(g, out));
                }
            }
        }
        self.with_sampler(Op { rng, out, add });
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

    /// Kolmogorov-Smirnov distance between the sample `xs` (sorted here) and the continuous CDF `cdf`.
    fn ks_distance(xs: &mut [f64], cdf: impl Fn(f64) -> f64) -> f64 {
        xs.sort_by(f64::total_cmp);
        let n = xs.len() as f64;
        xs.iter()
            .enumerate()
            .map(|(i, &x)| {
                let f = cdf(x);
                (f - i as f64 / n).max((i + 1) as f64 / n - f)
            })
            .fold(0.0, f64::max)
    }

    /// The KS critical value at level `1e-6` for `n` draws: `sqrt(ln(2/α) / (2n))` (Dvoretzky-Kiefer-Wolfowitz
    /// with Massart's constant, valid for every `n`).
    fn ks_critical(n: usize) -> f64 {
        ((2.0f64 / 1e-6).ln() / (2.0 * n as f64)).sqrt()
    }

    /// `|count − n·p| <= 5 sd` for a binomial count (two-sided level below `1e-6`).
    fn binomial_ok(count: usize, n: usize, p: f64) -> bool {
        let (n, c) = (n as f64, count as f64);
        (c - n * p).abs() <= 5.0 * (n * p * (1.0 - p)).sqrt()
    }

    #[test]
    fn bulk_laplace_has_the_laplace_law() {
        // 2^22 draws of Lap(1.5) by the bulk path, in blocks of uneven lengths (partial blocks, fill and add_to).
        let (n, b) = (1usize << 22, 1.5);
        let mut rng = Generator::from_seed([11, 12, 13, 14]);
        let mut xs = vec![0.0; n];
        let dist = NoiseDistribution::laplace(b).unwrap();
        let mut start = 0;
        for len in [1usize, 63, 64, 65, 1000, 100_003].iter().cycle() {
            let end = (start + len).min(n);
            if start % 2 == 0 {
                dist.fill(&mut rng, &mut xs[start..end]);
            } else {
                dist.add_to(&mut rng, &mut xs[start..end]);
            }
            start = end;
            if start == n {
                break;
            }
        }
        let nf = n as f64;
        // Variance 2b² (relative sd of the estimate sqrt((κ − 1)/n), κ = 6); mean 0; P(|X| > 10b) = e^-10.
        let (mean, var) = moments(&xs);
        assert!(
            (var / (2.0 * b * b) - 1.0).abs() < 5.0 * (5.0 / nf).sqrt(),
            "var {var}"
        );
        assert!(mean.abs() < 5.0 * (2.0 * b * b / nf).sqrt(), "mean {mean}");
        let tail = xs.iter().filter(|x| x.abs() > 10.0 * b).count();
        assert!(binomial_ok(tail, n, (-10.0f64).exp()), "{tail} beyond 10b");
        let neg = xs.iter().filter(|&&x| x < 0.0).count();
        assert!(binomial_ok(neg, n, 0.5), "{neg} negative");
        // The largest magnitude is 64 ln 2 scale units (module docs).
        assert!(
            xs.iter()
                .all(|x| x.abs() <= 64.0 * core::f64::consts::LN_2 * b)
        );
        let cdf = |x: f64| {
            if x < 0.0 {
                0.5 * (x / b).exp()
            } else {
                1.0 - 0.5 * (-x / b).exp()
            }
        };
        let d = ks_distance(&mut xs, cdf);
        assert!(d < ks_critical(n), "KS distance {d}");
    }

    #[test]
    fn bulk_exp1_has_the_exponential_law() {
        let n = 1usize << 22;
        let mut rng = Generator::from_seed([21, 22, 23, 24]);
        let mut xs = vec![0.0; n];
        fill_exp1(&mut rng, &mut xs[..1000]);
        fill_exp1(&mut rng, &mut xs[1000..]);
        let nf = n as f64;
        // Mean 1 (sd 1/sqrt n), variance 1 (relative sd sqrt((κ − 1)/n), κ = 9), P(E > 10) = e^-10.
        let (mean, var) = moments(&xs);
        assert!((mean - 1.0).abs() < 5.0 / nf.sqrt(), "mean {mean}");
        assert!((var - 1.0).abs() < 5.0 * (8.0 / nf).sqrt(), "var {var}");
        let tail = xs.iter().filter(|&&x| x > 10.0).count();
        assert!(binomial_ok(tail, n, (-10.0f64).exp()), "{tail} beyond 10");
        assert!(
            xs.iter()
                .all(|&x| (0.0..=64.0 * core::f64::consts::LN_2).contains(&x))
        );
        let d = ks_distance(&mut xs, |x| 1.0 - (-x).exp());
        assert!(d < ks_critical(n), "KS distance {d}");
    }

    #[test]
    fn exp1_words_cover_the_documented_range() {
        // Word 0 is U = 2^-64, the largest draw 64 ln 2; the largest word rounds to U = 1, the draw +0.
        let top = exp1_from_word(0);
        assert!(
            (top - 64.0 * core::f64::consts::LN_2).abs() < 1e-13,
            "{top}"
        );
        assert_eq!(exp1_from_word(u64::MAX).to_bits(), 0.0f64.to_bits());
        assert!((exp1_from_word(1) - 63.0 * core::f64::consts::LN_2).abs() < 1e-13);
        // The stream is the generator's words in order: one sign word, then one word per entry.
        let mut a = Generator::from_seed([1, 2, 3, 4]);
        let mut b = Generator::from_seed([1, 2, 3, 4]);
        let mut xs = [0.0; 3];
        NoiseDistribution::laplace(2.0)
            .unwrap()
            .fill(&mut a, &mut xs);
        let signs = rand_core::Rng::next_u64(&mut b);
        for (i, &x) in xs.iter().enumerate() {
            let e = exp1_from_word(rand_core::Rng::next_u64(&mut b));
            let want = if signs >> i & 1 == 1 {
                -2.0 * e
            } else {
                2.0 * e
            };
            assert_eq!(x.to_bits(), want.to_bits());
        }
    }

    #[test]
    fn bulk_kernels_agree_bitwise_at_every_level() {
        use crate::simd::{Level, run_at};
        let levels = [Level::Baseline, Level::Avx2, Level::Avx512];
        let draws = |level, add: bool| {
            let mut rng = Generator::from_seed([5, 6, 7, 8]);
            let mut out: Vec<f64> = (0..1003).map(|i| f64::from(i) * 0.25).collect();
            crate::with_generator!(&mut rng, g => if add {
                run_at(level, #[inline(always)] || laplace_kernel::<_, true>(0.8, g, &mut out));
            } else {
                run_at(level, #[inline(always)] || laplace_kernel::<_, false>(0.8, g, &mut out));
            });
            let mut exp = vec![0.0; 517];
            crate::with_generator!(&mut rng, g => run_at(level, #[inline(always)] || exp1_kernel(g, &mut exp)));
            out.extend(exp);
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        for add in [false, true] {
            let base = draws(Level::Baseline, add);
            for level in levels {
                assert_eq!(base, draws(level, add), "{level:?}");
            }
        }
        let xs: Vec<f64> = (0..999)
            .map(|i| (f64::from(i) * 0.731 - 360.0).exp2())
            .collect();
        let ln_at = |level| {
            let mut out = vec![0.0; xs.len()];
            run_at(
                level,
                #[inline(always)]
                || {
                    for (o, &x) in out.iter_mut().zip(&xs) {
                        *o = crate::vecops::ln_normal(x);
                    }
                },
            );
            out.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        };
        for level in levels {
            assert_eq!(ln_at(Level::Baseline), ln_at(level));
        }
    }

    /// Per-draw time of the scalar (ziggurat) and bulk paths, interleaved, best of repeats. Timing only:
    /// `cargo test -p dponline-core --profile dev-release --lib -- --ignored draw_speed --nocapture`.
    #[test]
    #[ignore = "timing, not a test"]
    fn draw_speed() {
        use std::time::Instant;
        let n = 1 << 16;
        let mut out = vec![0.0; n];
        let mut rng = Generator::from_seed([1, 2, 3, 4]);
        let mut best = [f64::INFINITY; 5];
        // Run `f` once and keep the shortest time seen in `best`.
        let timed = |best: &mut f64, f: &mut dyn FnMut()| {
            let t = Instant::now();
            f();
            *best = best.min(t.elapsed().as_secs_f64());
        };
        for _ in 0..200 {
            // The fill of STATE_VERSION 3: ziggurat `Exp1` per entry, signs batched 64 to a word.
            timed(&mut best[4], &mut || {
                crate::with_generator!(&mut rng, g => for block in out.chunks_mut(64) {
                    let signs = rand_core::Rng::next_u64(g);
                    for (i, o) in (0u32..).zip(block.iter_mut()) {
                        let e: f64 = Exp1.sample(g);
                        *o = f64::from_bits(e.to_bits() ^ (signs.wrapping_shr(i) & 1) << 63);
                    }
                })
            });
            timed(
                &mut best[0],
                &mut || crate::with_generator!(&mut rng, g => out.iter_mut().for_each(|o| *o = LaplaceDraw(1.0).sample(g))),
            );
            timed(&mut best[1], &mut || {
                NoiseDistribution::Laplace { scale: 1.0 }.fill(&mut rng, &mut out)
            });
            timed(
                &mut best[2],
                &mut || crate::with_generator!(&mut rng, g => out.iter_mut().for_each(|o| *o = GaussianDraw(1.0).sample(g))),
            );
            timed(&mut best[3], &mut || {
                NoiseDistribution::Gaussian { sigma: 1.0 }.fill(&mut rng, &mut out)
            });
        }
        let ns = best.map(|b| b / n as f64 * 1e9);
        println!(
            "ns/draw at {:?}: Laplace scalar {:.2}, version-3 fill {:.2}, bulk {:.2}; Gaussian scalar {:.2}, \
             fill {:.2}",
            crate::simd::detected(),
            ns[0],
            ns[4],
            ns[1],
            ns[2],
            ns[3]
        );
    }

    #[test]
    #[ignore = "timing, not a test"]
    fn kernel_speed() {
        use crate::simd::{Level, run_at};
        use std::time::Instant;
        let n = 1 << 16;
        let mut rng = Generator::from_seed([1, 2, 3, 4]);
        let words: Vec<u64> = (0..n).map(|_| rand_core::Rng::next_u64(&mut rng)).collect();
        let mut out = vec![0.0; n];
        let mut ws = vec![0u64; n];
        for level in [Level::Baseline, Level::Avx2, Level::Avx512] {
            let mut best = [f64::INFINITY; 5];
            for _ in 0..200 {
                let mut time = |k: usize, f: &mut dyn FnMut()| {
                    let t = Instant::now();
                    f();
                    best[k] = best[k].min(t.elapsed().as_secs_f64());
                };
                time(0, &mut || {
                    run_at(
                        level,
                        #[inline(always)]
                        || {
                            for (o, &w) in out.iter_mut().zip(&words) {
                                *o = exp1_from_word(w);
                            }
                        },
                    )
                });
                time(
                    1,
                    &mut || crate::with_generator!(&mut rng, g => run_at(level, #[inline(always)] || ws.iter_mut().for_each(|w| *w = rand_core::Rng::next_u64(g)))),
                );
                time(
                    2,
                    &mut || crate::with_generator!(&mut rng, g => run_at(level, #[inline(always)] || laplace_kernel::<_, false>(1.0, g, &mut out))),
                );
                time(4, &mut || {
                    run_at(
                        level,
                        #[inline(always)]
                        || {
                            for (oc, wc) in out.chunks_mut(64).zip(words.chunks(64)) {
                                let signs = wc[0];
                                for (i, (o, &w)) in oc.iter_mut().zip(wc).enumerate() {
                                    *o = f64::from_bits(
                                        exp1_from_word(w).to_bits() ^ (signs >> (i & 63)) << 63,
                                    );
                                }
                            }
                        },
                    )
                });
            }
            let ns = best.map(|b| b / n as f64 * 1e9);
            println!(
                "{level:?}: exp1_from_word {:.2} ns, next_u64 {:.2} ns, laplace_kernel {:.2}, signed {:.2}",
                ns[0], ns[1], ns[2], ns[4]
            );
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
