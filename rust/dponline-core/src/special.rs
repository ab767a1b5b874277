//! Special functions and quadrature for the potential-function learners of [`crate::local_dp`].
//!
//! * [`erfcx`], the scaled complementary error function `erfcx(x) = exp(x²)·erfc(x)`, to a few ulp:
//!   `exp(x²)` with `x²` split exactly into `hi + lo` (one fused multiply-add) times `libm::erfc`
//!   (the musl/FreeBSD implementation, < 1 ulp) for `0 ≤ x < 26`; the Laplace continued fraction
//!   `√π·erfcx(x) = 1/(x + ½/(x + 1/(x + (3/2)/(x + …))))` for `x ≥ 26`; the reflection
//!   `erfcx(x) = 2·exp(x²) − erfcx(−x)` for `x < 0` (which overflows to `+∞` below `−26.6`; use [`ln_erfcx`]).
//! * [`mills_residual`]: `r(x) = 1/(√π·erfcx(x)) − x`, the tail of the same continued fraction, computed
//!   without the cancellation of the difference for large `x` (where `r(x) ≈ 1/(2x)`).
//! * [`GaussLegendre`]: fixed `n`-point Gauss-Legendre rules (nodes by Newton's method on `P_n`).
//! * [`adaptive_gauss_kronrod`]: globally adaptive 7/15-point Gauss-Kronrod quadrature with a subdivision
//!   cap ([`CoreError::IterationLimit`] when it is reached).

use crate::error::{CoreError, Result};

/// `1/√π`.
pub const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;
/// `√π`.
pub const SQRT_PI: f64 = 1.772_453_850_905_516;

/// `exp(x²)` without the rounding error of forming `x²` (`x² = hi + lo` exactly).
#[inline]
fn exp_square(x: f64) -> f64 {
    let hi = x * x;
    let lo = x.mul_add(x, -hi);
    let e = hi.exp();
    e + e * lo
}

/// Backward evaluation of `x + ½/(x + 1/(x + (3/2)/(x + …)))` to `depth` levels.
#[inline]
fn laplace_fraction(x: f64, depth: u32) -> f64 {
    let mut f = x;
    for k in (1..=depth).rev() {
        f = x + 0.5 * f64::from(k) / f;
    }
    f
}

/// Depth of the continued fraction used for `x ≥ 26` (converged to rounding there; see the tests).
const FRACTION_DEPTH_LARGE: u32 = 24;
/// Where [`mills_residual`] switches from the direct difference to the continued-fraction tail.
const RESIDUAL_SWITCH: f64 = 3.0;
/// Depth of the continued fraction used by [`mills_residual`] for `3 ≤ x < 4` (shallower beyond).
const FRACTION_DEPTH_RESIDUAL: u32 = 120;

/// The scaled complementary error function `erfcx(x) = exp(x²)·erfc(x)`.
///
/// Accurate to a few ulp on the whole line (tested against SciPy's `scipy.special.erfcx` to `1e-13`
/// relative); `+∞` for `x < −26.64` where the value overflows, NaN for NaN.
pub fn erfcx(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        if x < -26.7 {
            return f64::INFINITY;
        }
        return 2.0 * exp_square(x) - erfcx(-x);
    }
    if x < 26.0 {
        exp_square(x) * libm::erfc(x)
    } else if x.is_infinite() {
        0.0
    } else {
        FRAC_1_SQRT_PI / laplace_fraction(x, FRACTION_DEPTH_LARGE)
    }
}

/// `ln erfcx(x)`, finite for every finite `x` (for `x < −26` it is `x² + ln 2` to rounding).
pub fn ln_erfcx(x: f64) -> f64 {
    if x < -26.0 {
        x * x + core::f64::consts::LN_2
    } else if x > 1e300 {
        -(x.ln() + 0.5 * core::f64::consts::PI.ln())
    } else {
        erfcx(x).ln()
    }
}

/// The Mills-ratio residual `r(x) = 1/(√π·erfcx(x)) − x` for `x ≥ 0`.
///
/// `1/(√π erfcx(x))` is the reciprocal Mills ratio of the half-normal scaled by `√2`; for large `x` it is
/// `x + 1/(2x) − …`, so the difference cancels. For `x ≥ 3` the value is the tail
/// `½/(x + 1/(x + (3/2)/(x + 2/(x + …))))` of Laplace's continued fraction, evaluated backwards, which has no
/// cancellation. Positive and decreasing; `r(0) = 1/√π`.
pub fn mills_residual(x: f64) -> f64 {
    if x < RESIDUAL_SWITCH {
        FRAC_1_SQRT_PI / erfcx(x) - x
    } else if x > 1e150 {
        0.5 / x
    } else {
        // Depths at which the fraction has converged to rounding (checked against 50-digit mpmath on a grid).
        let depth = if x < 4.0 {
            FRACTION_DEPTH_RESIDUAL
        } else if x < 6.0 {
            60
        } else if x < 12.0 {
            30
        } else if x < 40.0 {
            16
        } else if x < 200.0 {
            8
        } else {
            4
        };
        let mut f = x;
        for k in (2..=depth).rev() {
            f = x + 0.5 * f64::from(k) / f;
        }
        0.5 / f
    }
}

/// `ln sinh(z)` for `z > 0` without overflow.
#[inline]
pub fn ln_sinh(z: f64) -> f64 {
    if z > 20.0 {
        z + (-(-2.0 * z).exp_m1() * 0.5).ln()
    } else {
        z.sinh().ln()
    }
}

/// `sinh(z)/z`, accurate also for tiny `z`.
#[inline]
pub fn sinhc(z: f64) -> f64 {
    if z.abs() < 1e-4 {
        let z2 = z * z;
        1.0 + z2 / 6.0 * (1.0 + z2 / 20.0)
    } else {
        z.sinh() / z
    }
}

/// An `n`-point Gauss-Legendre rule on `[0, 1]` (exact for polynomials of degree `2n − 1`).
#[derive(Debug, Clone)]
pub struct GaussLegendre {
    /// Nodes in `(0, 1)`.
    pub nodes: Vec<f64>,
    /// Weights, summing to 1.
    pub weights: Vec<f64>,
}

impl GaussLegendre {
    /// The rule with `n` points (`1 ≤ n ≤ 256`): roots of the Legendre polynomial `P_n` by Newton's method
    /// from Tricomi's initial guesses (a fixed 100 iterations at most, stopping at convergence).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `n` outside `[1, 256]`; [`CoreError::IterationLimit`] if a
    /// root does not converge (not expected).
    pub fn new(n: usize) -> Result<Self> {
        if !(1..=256).contains(&n) {
            return Err(CoreError::invalid("n", "in [1, 256]", n));
        }
        let nf = n as f64;
        let mut nodes = vec![0.0; n];
        let mut weights = vec![0.0; n];
        for i in 0..n {
            // Tricomi's guess for the i-th root of P_n on [−1, 1].
            let mut x = (core::f64::consts::PI * (i as f64 + 0.75) / (nf + 0.5)).cos();
            let mut converged = false;
            let mut dp = 0.0;
            for _ in 0..100 {
                let (mut p0, mut p1) = (1.0, x);
                for k in 2..=n {
                    let kf = k as f64;
                    let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
                    p0 = p1;
                    p1 = p2;
                }
                let p = if n == 1 { x } else { p1 };
                let pm1 = if n == 1 { 1.0 } else { p0 };
                dp = nf * (x * p - pm1) / (x * x - 1.0);
                let dx = p / dp;
                x -= dx;
                if dx.abs() <= 1e-16 * x.abs().max(1e-3) {
                    converged = true;
                    break;
                }
            }
            if !converged {
                return Err(CoreError::IterationLimit {
                    routine: "Gauss-Legendre root finding",
                    limit: 100,
                    detail: format!(": root {i} of P_{n}"),
                });
            }
            nodes[i] = 0.5 * (1.0 - x);
            weights[i] = 1.0 / ((1.0 - x * x) * dp * dp);
        }
        Ok(GaussLegendre { nodes, weights })
    }

    /// `∫₀¹ f`.
    #[inline]
    pub fn integrate(&self, mut f: impl FnMut(f64) -> f64) -> f64 {
        self.nodes
            .iter()
            .zip(&self.weights)
            .map(|(&x, &w)| w * f(x))
            .sum()
    }
}

const KRONROD_NODES: [f64; 8] = [
    0.991_455_371_120_812_6,
    0.949_107_912_342_758_5,
    0.864_864_423_359_769_1,
    0.741_531_185_599_394_4,
    0.586_087_235_467_691_1,
    0.405_845_151_377_397_2,
    0.207_784_955_007_898_5,
    0.0,
];
const KRONROD_WEIGHTS: [f64; 8] = [
    0.022_935_322_010_529_22,
    0.063_092_092_629_978_55,
    0.104_790_010_322_250_2,
    0.140_653_259_715_525_9,
    0.169_004_726_639_267_9,
    0.190_350_578_064_785_4,
    0.204_432_940_075_298_9,
    0.209_482_141_084_727_8,
];
/// Gauss weights of the 7-point rule at the odd-indexed Kronrod nodes (1, 3, 5, 7).
const GAUSS_WEIGHTS: [f64; 4] = [
    0.129_484_966_168_869_7,
    0.279_705_391_489_276_7,
    0.381_830_050_505_118_9,
    0.417_959_183_673_469_4,
];

/// One 7/15-point Gauss-Kronrod estimate on `[a, b]`: `(integral, error estimate)`.
fn kronrod15(f: &mut impl FnMut(f64) -> Result<f64>, a: f64, b: f64) -> Result<(f64, f64)> {
    let c = 0.5 * (a + b);
    let h = 0.5 * (b - a);
    let fc = f(c)?;
    let mut k = fc * KRONROD_WEIGHTS[7];
    let mut g = fc * GAUSS_WEIGHTS[3];
    for i in 0..7 {
        let dx = h * KRONROD_NODES[i];
        let s = f(c - dx)? + f(c + dx)?;
        k += KRONROD_WEIGHTS[i] * s;
        if i % 2 == 1 {
            g += GAUSS_WEIGHTS[i / 2] * s;
        }
    }
    Ok((k * h, ((k - g) * h).abs()))
}

/// Result of [`adaptive_gauss_kronrod`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quadrature {
    /// The integral.
    pub value: f64,
    /// Estimated absolute error (sum of the subintervals' `|K15 − G7|`).
    pub error: f64,
    /// Subintervals used.
    pub intervals: usize,
}

/// `∫ f` over `[breaks[0], breaks[last]]` by globally adaptive Gauss-Kronrod (7/15) quadrature, starting from
/// the subintervals between consecutive `breaks` (sorted, at least two) and always bisecting the subinterval
/// with the largest error estimate, until the total error estimate is `≤ max(abs_tol, rel_tol·|value|)`.
///
/// `f` may fail (its error is returned) and must return finite values.
///
/// Errors: [`CoreError::InvalidArgument`] for fewer than two or unsorted/non-finite breakpoints;
/// [`CoreError::NonFinite`] when `f` returns NaN/inf; [`CoreError::IterationLimit`] when `max_intervals`
/// subintervals do not reach the tolerance.
pub fn adaptive_gauss_kronrod(
    mut f: impl FnMut(f64) -> Result<f64>,
    breaks: &[f64],
    rel_tol: f64,
    abs_tol: f64,
    max_intervals: usize,
) -> Result<Quadrature> {
    if breaks.len() < 2
        || breaks.iter().any(|b| !b.is_finite())
        || breaks.windows(2).any(|w| w[0] > w[1])
    {
        return Err(CoreError::invalid(
            "breaks",
            "at least two sorted finite breakpoints",
            format!("{breaks:?}"),
        ));
    }
    let mut checked = |x: f64| -> Result<f64> {
        let v = f(x)?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(CoreError::NonFinite {
                name: "integrand",
                index: 0,
                value: v,
            })
        }
    };
    let limit = max_intervals.max(breaks.len());
    let mut parts: Vec<(f64, f64, f64, f64)> =
        crate::alloc::reserve("quadrature intervals", limit)?;
    for w in breaks.windows(2) {
        if w[1] > w[0] {
            let (v, e) = kronrod15(&mut checked, w[0], w[1])?;
            parts.push((w[0], w[1], v, e));
        }
    }
    loop {
        let value: f64 = parts.iter().map(|p| p.2).sum();
        let error: f64 = parts.iter().map(|p| p.3).sum();
        if error <= abs_tol.max(rel_tol * value.abs()) {
            return Ok(Quadrature {
                value,
                error,
                intervals: parts.len(),
            });
        }
        if parts.len() >= limit {
            return Err(CoreError::IterationLimit {
                routine: "adaptive Gauss-Kronrod quadrature",
                limit: limit as u64,
                detail: format!(": error estimate {error:.3e} for integral {value:.6e}"),
            });
        }
        let (worst, _) = parts
            .iter()
            .enumerate()
            .fold((0, f64::NEG_INFINITY), |best, (i, p)| {
                if p.3 > best.1 { (i, p.3) } else { best }
            });
        let (a, b, _, _) = parts[worst];
        let m = 0.5 * (a + b);
        if !(m > a && m < b) {
            return Err(CoreError::IterationLimit {
                routine: "adaptive Gauss-Kronrod quadrature",
                limit: parts.len() as u64,
                detail: format!(": interval [{a}, {b}] cannot be bisected further"),
            });
        }
        let (v1, e1) = kronrod15(&mut checked, a, m)?;
        let (v2, e2) = kronrod15(&mut checked, m, b)?;
        parts[worst] = (a, m, v1, e1);
        parts.push((m, b, v2, e2));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erfcx_known_values() {
        // Reference values (mpmath, 30 digits): erfcx(0) = 1, erfcx(1), erfcx(10), erfcx(-1), erfcx(100).
        let cases = [
            (0.0, 1.0),
            (1.0, 0.427_583_576_155_807),
            (10.0, 0.056_140_992_743_822_59),
            (-1.0, 5.008_980_080_762_283),
            (100.0, 0.005_641_613_782_989_433),
            (30.0, 0.018_795_888_861_416_75),
        ];
        for (x, want) in cases {
            let got = erfcx(x);
            assert!(
                ((got - want) / want).abs() < 2e-15,
                "erfcx({x}) = {got}, want {want}"
            );
        }
        assert_eq!(erfcx(f64::INFINITY), 0.0);
        assert!(erfcx(f64::NAN).is_nan());
        assert!(ln_erfcx(-1e3).is_finite());
        assert!(ln_erfcx(1e306).is_finite());
    }

    #[test]
    fn continued_fraction_agrees_with_direct_formula_at_the_switch() {
        for x in [25.5, 26.0, 26.5] {
            let cf = FRAC_1_SQRT_PI / laplace_fraction(x, FRACTION_DEPTH_LARGE);
            let direct = exp_square(x) * libm::erfc(x);
            assert!(
                ((cf - direct) / direct).abs() < 1e-14,
                "x={x}: {cf} vs {direct}"
            );
        }
        for x in [3.0, 3.5, 5.0, 8.0] {
            let direct = FRAC_1_SQRT_PI / erfcx(x) - x;
            let tail = mills_residual(x);
            // The direct difference loses about log10(2x²) digits.
            assert!(
                ((tail - direct) / tail).abs() < 1e-13 * 2.0 * x * x,
                "x={x}"
            );
        }
        // The shallower fractions used for larger x agree with a deep one.
        for x in [4.0, 5.9, 6.0, 11.9, 12.0, 39.9, 40.0, 199.0, 200.0, 1e4] {
            let mut f = x;
            for k in (2..=2000u32).rev() {
                f = x + 0.5 * f64::from(k) / f;
            }
            let deep = 0.5 / f;
            assert!(((mills_residual(x) - deep) / deep).abs() < 4e-16, "x={x}");
        }
        // r(x) ≈ 1/(2x) − 1/(2x)³·... for large x.
        let x = 1e6;
        assert!((mills_residual(x) * 2.0 * x - 1.0).abs() < 1e-11);
    }

    #[test]
    fn gauss_legendre_is_exact_for_polynomials() {
        let rule = GaussLegendre::new(16).unwrap();
        assert!((rule.weights.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        let v = rule.integrate(|x| x.powi(31));
        assert!((v - 1.0 / 32.0).abs() < 1e-15);
        assert!(GaussLegendre::new(0).is_err());
    }

    #[test]
    fn adaptive_quadrature_converges_or_reports_the_cap() {
        // A narrow Gaussian far from the breakpoints: ∫ exp(−10⁶ (x − 0.3)²) dx over [0, 1] = √(π/10⁶).
        let q = adaptive_gauss_kronrod(
            |x| Ok((-1e6 * (x - 0.3) * (x - 0.3)).exp()),
            &[0.0, 1.0],
            1e-13,
            0.0,
            2_000,
        )
        .unwrap();
        let want = (core::f64::consts::PI / 1e6).sqrt();
        assert!(((q.value - want) / want).abs() < 1e-12, "{q:?}");
        let err = adaptive_gauss_kronrod(|x| Ok(1.0 / x.sqrt()), &[0.0, 1.0], 1e-15, 0.0, 5);
        assert!(
            matches!(err, Err(CoreError::IterationLimit { .. })),
            "{err:?}"
        );
        let err = adaptive_gauss_kronrod(|_| Ok(f64::NAN), &[0.0, 1.0], 1e-15, 0.0, 5);
        assert!(matches!(err, Err(CoreError::NonFinite { .. })));
    }
}
