//! Algorithm 1 of van der Hoeven (2019): the one-dimensional local-DP adaptive potential function.
//!
//! Source: D. van der Hoeven, "User-Specified Local Differential Privacy in Unconstrained Adaptive Online
//! Learning" (NeurIPS 2019), §3, Algorithm 1 and eqs. (5)-(7). With `C = 1/(5G)`, `L_t = −Σ_{s<t} g̃_s`,
//! `Q_t = Σ_{s<t} g̃_s²` and a prior `P` on `[−C, C]`, the prediction is (eq. 5)
//!
//! ```text
//! w_t = E_{v∼P}[ v · exp(L_t v − Q_t v²) ].
//! ```
//!
//! Priors ([`Prior`]): the conjugate prior `dP/dv = exp(−b v²)/Z` (eq. 6 with `ν ≡ 1`, Koolen & van Erven
//! 2015), whose prediction is eq. (7) with `B_t = b + Q_t`; the uniform prior on `[−C, C]` (Jun & Orabona
//! 2019; eq. 7's integral with `B_t = Q_t` and `Z = 2C`); the improper prior `dP/dv = 1/|v|` (§3 and their
//! Appendix C; no normalisation, `w_t = ∫ sign(v) exp(L_t v − Q_t v²) dv`); and any density given by the
//! caller, by adaptive quadrature.
//!
//! ## Evaluating eq. (7) without overflow or cancellation
//!
//! `w_t` is odd in `L_t`, so the numerator `N = ∫_{−C}^{C} v e^{Lv − Bv²} dv` is computed for `L > 0` as
//! `ln N` (it can be `e^{10^{11}}`), in one of three regimes of `ℓ = LC`, `β = BC²`, `μ = L/(2B)`:
//!
//! 1. `ℓ ≤ 2` and `β ≤ 2` (every exponent on `[−C, C]` is at most 4 in size): eq. (7)'s erf differences
//!    cancel here (they lose a factor `1/(BC²)`), so `N = 2C²ℓ ∫₀¹ u² shc(ℓu) e^{−βu²} du` (`shc(z) = sinh z/z`)
//!    is summed as a power series in `ℓ²` over moments of `e^{−βu²}` ([`small_moment`]; checked against a
//!    16-point Gauss-Legendre rule, exact to rounding for such an entire integrand).
//! 2. `μ ≤ C` (the maximum of the exponent is inside the interval): eq. (7) rearranged as
//!    `N = G·μ·(1 − q/μ)` with `G = ∫ e^{Lv−Bv²} = e^{L²/4B} (√π/2√B)(erf(x₁) + erf(x₂))`,
//!    `x₁ = (C − μ)√B ≥ 0`, `x₂ = (C + μ)√B` (two positive erf terms) and
//!    `q/μ = e^{−BC²} sinh(LC)/(BμG) = 2√B e^{−x₁²}(1 − e^{−2LC}) / (L√π (erf x₁ + erf x₂))`; the subtraction
//!    loses at most a factor 3 outside regime 1.
//! 3. `μ > C` (maximum beyond the endpoint): with `y = C − v`, `λ = L − 2BC > 0`,
//!    `N = e^{LC − BC²} J₀ (C − E[y])` for the density `∝ e^{−λy − By²}` on `[0, 2C]`. With the Mills-ratio
//!    residual `r(x) = 1/(√π erfcx(x)) − x` ([`crate::special::mills_residual`]), `K = x + r(x)`,
//!    `x_a = λ/(2√B)`, `x_b = x_a + 2C√B`, `δ = 2C√B`, `ε₂ = e^{−2LC}`:
//!    `J₀ = (K_b − ε₂K_a)/(2√B K_a K_b)` and `√B·E[y] = (K_b r_a − ε₂K_a(δ + r_b))/(K_b − ε₂K_a)`, in which
//!    every subtraction is of a term at most a few percent of the other (`ℓ > 2` here). When `B` is
//!    negligible (`x_a > 10^300` or `B = 0`) the truncated-exponential limits are used.
//!
//! The conjugate normaliser is `ln Z = ½ ln π − ½ ln b + ln erf(C√b)`. The same quantities by adaptive
//! quadrature ([`ln_moment_quadrature`]) agree to `10⁻⁹` relative over `|L|, B ∈ [10⁻¹², 10¹²]` (tests).

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_positive};
use crate::special::{SQRT_PI, adaptive_gauss_kronrod, mills_residual};

/// Largest `|w_t|` an action may take: `ln|w_t|` above `ln(ACTION_LIMIT)` saturates (counted as
/// `saturated`). Reached only after a long run of one-signed feedback (`|w_t|` can grow like `e^{t/5}`);
/// keeps every action and every loss of a played action finite.
pub const ACTION_LIMIT: f64 = 1e100;

/// Relative tolerance of the adaptive quadrature.
pub const QUADRATURE_RTOL: f64 = 1e-13;
/// Subinterval cap of the adaptive quadrature.
pub const QUADRATURE_MAX_INTERVALS: usize = 4_000;

/// A prior on `v ∈ [−C, C]` for Algorithm 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Prior {
    /// `dP/dv ∝ exp(−b v²)` (eq. 6 with `ν ≡ 1`), `b > 0`: closed form eq. (7).
    Conjugate {
        /// Prior precision `b > 0`.
        b: f64,
    },
    /// Uniform on `[−C, C]` (eq. 6 with `b = 0`): closed form eq. (7) with `B_t = Q_t`.
    Uniform,
    /// The improper prior `dP/dv = 1/|v|` (§3, Appendix C): adaptive quadrature.
    Improper,
    /// A density supplied by the caller at every prediction ([`Potential1D::prediction_with`]).
    External,
}

impl Prior {
    /// `"conjugate"`, `"uniform"`, `"improper"` or `"external"`.
    pub fn name(&self) -> &'static str {
        match self {
            Prior::Conjugate { .. } => "conjugate",
            Prior::Uniform => "uniform",
            Prior::Improper => "improper",
            Prior::External => "external",
        }
    }
}

/// A prediction `w = sign · exp(ln_abs)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Prediction {
    /// −1, 0 or +1.
    pub sign: f64,
    /// `ln |w|` (−∞ when `w = 0`).
    pub ln_abs: f64,
}

impl Prediction {
    /// The zero prediction.
    pub const ZERO: Prediction = Prediction {
        sign: 0.0,
        ln_abs: f64::NEG_INFINITY,
    };

    /// `w`, saturated at `±ACTION_LIMIT`; the flag says whether it saturated.
    #[inline]
    pub fn value(&self) -> (f64, bool) {
        if self.sign == 0.0 {
            return (0.0, false);
        }
        let cap = ACTION_LIMIT.ln();
        if self.ln_abs > cap {
            (self.sign * ACTION_LIMIT, true)
        } else {
            (self.sign * self.ln_abs.exp(), false)
        }
    }
}

/// `I(ℓ, β) = ∫₀¹ u² shc(ℓu) e^{−βu²} du` for `ℓ ≤ 2`, `β ≤ 2` (regime 1), as the series
/// `Σ_k ℓ^{2k}/(2k+1)! · m_{k+1}(β)` of the moments `m_j = ∫₀¹ u^{2j} e^{−βu²} du`, which follow from
/// `e^{−β} = (2j+1) m_j − 2β m_{j+1}` by the (stable) downward recursion `m_j = (e^{−β} + 2β m_{j+1})/(2j+1)`
/// started at `j = 32` (the start error is damped by `Π 2β/(2j+1) < 10⁻¹⁷` by `j = 14`). Fourteen terms leave
/// a relative truncation error below `10⁻¹⁷` for `ℓ ≤ 2`.
#[inline]
pub fn small_moment(ell: f64, beta: f64) -> f64 {
    const TERMS: usize = 14;
    const START: usize = 32;
    // 1/(2j+1) and 1/((2k+2)(2k+3)), so that the serial recursions multiply instead of divide.
    const INV_ODD: [f64; START + 1] = {
        let mut t = [0.0; START + 1];
        let mut j = 0;
        while j <= START {
            t[j] = 1.0 / (2 * j + 1) as f64;
            j += 1;
        }
        t
    };
    const INV_STEP: [f64; TERMS] = {
        let mut t = [0.0; TERMS];
        let mut k = 0;
        while k < TERMS {
            t[k] = 1.0 / ((2 * k + 2) * (2 * k + 3)) as f64;
            k += 1;
        }
        t
    };
    let e = (-beta).exp();
    let two_beta = 2.0 * beta;
    let mut moments = [0.0; TERMS + 1];
    let mut m = e * INV_ODD[START];
    for j in (TERMS + 1..START).rev() {
        m = (e + two_beta * m) * INV_ODD[j];
    }
    for j in (1..=TERMS).rev() {
        m = (e + two_beta * m) * INV_ODD[j];
        moments[j] = m;
    }
    let l2 = ell * ell;
    let mut coef = 1.0; // ℓ^{2k}/(2k+1)!
    let mut sum = 0.0;
    for k in 0..TERMS {
        sum += coef * moments[k + 1];
        coef *= l2 * INV_STEP[k];
    }
    sum
}

/// `ln ∫_{−C}^{C} v e^{Lv − Bv²} dv` for `L > 0`, `B ≥ 0`, `C > 0`, by the three regimes of the module docs.
///
/// Errors: only if the Gauss-Legendre rule cannot be built (not expected).
pub fn ln_moment(l: f64, b: f64, c: f64) -> Result<f64> {
    let ell = l * c;
    let beta = b * c * c;
    if ell <= 2.0 && beta <= 2.0 {
        return Ok((2.0 * c * c).ln() + ell.ln() + small_moment(ell, beta).ln());
    }
    let s = b.sqrt();
    let mu = l / (2.0 * b);
    if b > 0.0 && mu <= c {
        let x1 = (c - mu) * s;
        let x2 = (c + mu) * s;
        let erf_sum = libm::erf(x1) + libm::erf(x2);
        // q/μ of the module docs: 2√B (e^{−x₁²} − e^{−x₂²}) / (L √π (erf x₁ + erf x₂)), with
        // e^{−x₁²} − e^{−x₂²} = e^{−x₁²}(1 − e^{−2LC}) (x₂² − x₁² = 2LC).
        let ratio = 2.0 * s * (-x1 * x1).exp() * (-(-2.0 * ell).exp_m1()) / (l * SQRT_PI * erf_sum);
        // ln N = L²/(4B) + ln(√π/(2√B)) + ln(erf x₁ + erf x₂) + ln μ + ln(1 − q/μ).
        return Ok(0.5 * mu * l + (SQRT_PI * l * erf_sum / (4.0 * s * b)).ln() + (-ratio).ln_1p());
    }
    let lambda = l - 2.0 * b * c;
    let x_a = if s > 0.0 {
        lambda / (2.0 * s)
    } else {
        f64::INFINITY
    };
    let (ln_j0, mean_y) = if x_a > 1e300 {
        // B negligible: the density of y is a truncated exponential of rate λ on [0, 2C].
        let two_lc = 2.0 * lambda * c;
        (
            (-(-two_lc).exp_m1()).ln() - lambda.ln(),
            1.0 / lambda - 2.0 * c / two_lc.exp_m1(),
        )
    } else {
        let delta = 2.0 * c * s;
        let x_b = x_a + delta;
        let (r_a, r_b) = (mills_residual(x_a), mills_residual(x_b));
        let (k_a, k_b) = (x_a + r_a, x_b + r_b);
        let eps2 = (-2.0 * ell).exp();
        let den = k_b - eps2 * k_a;
        (
            den.ln() - (2.0 * s).ln() - k_a.ln() - k_b.ln(),
            (k_b * r_a - eps2 * k_a * (delta + r_b)) / (den * s),
        )
    };
    Ok(ell - beta + ln_j0 + (c - mean_y).ln())
}

/// `ln Z` of the conjugate prior: `ln ∫_{−C}^{C} e^{−bv²} dv = ½ ln π − ½ ln b + ln erf(C√b)`.
pub fn ln_conjugate_normaliser(b: f64, c: f64) -> f64 {
    let x = c * b.sqrt();
    if x < 1e-8 {
        // erf(x)·√π/(2x) = 1 − x²/3 + …
        (2.0 * c).ln() + (-x * x / 3.0).ln_1p()
    } else {
        0.5 * core::f64::consts::PI.ln() - 0.5 * b.ln() + libm::erf(x).ln()
    }
}

/// `∫_{−C}^{C} v ν(v) e^{Lv − qv²} dv` by adaptive Gauss-Kronrod quadrature, as a signed log
/// ([`Prediction`]), for any density `ν` on `[−C, C] \ {0}` (evaluated only at interior points).
///
/// Both halves are folded onto `(0, C]`: the integrand is `v e^{−qv² − m}[ν(v)e^{Lv} − ν(−v)e^{−Lv}]`, written
/// `v ν(v) e^{|L|v − qv² − m}(1 − e^{−2|L|v})` when `ν(v) = ν(−v)` (no cancellation), where `m` is the maximum
/// of `|L|v − qv²` on `[0, C]` (so nothing overflows). Breakpoints at the maximum and at 1, 4 and 16 standard
/// deviations `1/√(2q)` around it.
///
/// Errors: [`CoreError::NonFinite`] if `ν` returns a non-finite value, [`CoreError::InvalidArgument`] for a
/// negative density value, [`CoreError::IterationLimit`] when the subinterval cap is reached, and whatever
/// `density` returns.
pub fn ln_moment_quadrature(
    l: f64,
    q: f64,
    c: f64,
    mut density: impl FnMut(f64) -> Result<f64>,
) -> Result<Prediction> {
    let la = l.abs();
    // Maximiser p of E(v) = |L|v − qv² on [0, C]; the integration variable is y = p − v, so that the exponent
    // E(p − y) − E(p) = −y·slope − q·y² is formed without the cancellation of two large numbers.
    let (peak, slope) = if q > 0.0 && la / (2.0 * q) < c {
        (la / (2.0 * q), 0.0)
    } else {
        (c, la - 2.0 * q * c)
    };
    let shift = la * peak - q * peak * peak;
    let (lo, hi) = (peak - c, peak);
    let mut breaks = vec![lo, hi, 0.0];
    if q > 0.0 {
        let sd = 1.0 / (2.0 * q).sqrt();
        for k in [1.0, 4.0, 16.0] {
            breaks.push((-k * sd).clamp(lo, hi));
            breaks.push((k * sd).clamp(lo, hi));
        }
    }
    if slope > 0.0 {
        for k in [1.0, 4.0, 16.0, 64.0] {
            breaks.push((k / slope).clamp(lo, hi));
        }
    }
    breaks.sort_by(f64::total_cmp);
    breaks.dedup();
    let mut nu = |v: f64| -> Result<f64> {
        let d = density(v)?;
        if !d.is_finite() {
            return Err(CoreError::NonFinite {
                name: "prior density",
                index: 0,
                value: d,
            });
        }
        if d < 0.0 {
            return Err(CoreError::invalid("prior density", ">= 0", d));
        }
        Ok(d)
    };
    let quad = adaptive_gauss_kronrod(
        |y| {
            let v = peak - y;
            if v <= 0.0 {
                return Ok(0.0);
            }
            let (plus, minus) = (nu(v)?, nu(-v)?);
            let base = v * (-y * slope - q * y * y).exp();
            Ok(if plus == minus {
                base * plus * (-(-2.0 * la * v).exp_m1())
            } else {
                // Orientation for L >= 0; flipped for L < 0.
                let (p, m) = if l >= 0.0 {
                    (plus, minus)
                } else {
                    (minus, plus)
                };
                base * (p - m * (-2.0 * la * v).exp())
            })
        },
        &breaks,
        QUADRATURE_RTOL,
        0.0,
        QUADRATURE_MAX_INTERVALS,
    )?;
    if quad.value == 0.0 {
        return Ok(Prediction::ZERO);
    }
    let sign = quad.value.signum() * if l >= 0.0 { 1.0 } else { -1.0 };
    Ok(Prediction {
        sign,
        ln_abs: shift + quad.value.abs().ln(),
    })
}

fn normaliser_breaks(b: f64, c: f64) -> Vec<f64> {
    let mut breaks = vec![-c, 0.0, c];
    if b > 0.0 {
        let sd = 1.0 / (2.0 * b).sqrt();
        for k in [1.0, 4.0, 16.0] {
            breaks.push((k * sd).min(c));
            breaks.push((-k * sd).max(-c));
        }
    }
    breaks.sort_by(f64::total_cmp);
    breaks.dedup();
    breaks
}

/// `ln ∫_{−C}^{C} ν(v) e^{−bv²} dv` by adaptive quadrature (the normaliser `Z` of eq. 6).
///
/// Errors: as [`ln_moment_quadrature`]; [`CoreError::InvalidArgument`] if the integral is 0.
pub fn ln_normaliser_quadrature(
    b: f64,
    c: f64,
    mut density: impl FnMut(f64) -> Result<f64>,
) -> Result<f64> {
    let quad = adaptive_gauss_kronrod(
        |v| {
            let d = density(v)?;
            if d < 0.0 {
                return Err(CoreError::invalid("prior density", ">= 0", d));
            }
            Ok(d * (-b * v * v).exp())
        },
        &normaliser_breaks(b, c),
        QUADRATURE_RTOL,
        0.0,
        QUADRATURE_MAX_INTERVALS,
    )?;
    if quad.value > 0.0 {
        Ok(quad.value.ln())
    } else {
        Err(CoreError::invalid(
            "prior density",
            "a density with positive mass on [-C, C]",
            quad.value,
        ))
    }
}

/// The state of Algorithm 1: `L_t = −Σ g̃_s`, `Q_t = Σ g̃_s²`, and the prior.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Potential1D {
    g_bound: f64,
    c: f64,
    prior: Prior,
    ln_z: f64,
    neg_sum: f64,
    sq_sum: f64,
    t: u64,
    saturated: u64,
}

impl Potential1D {
    /// Algorithm 1 for `|E g̃_t| ≤ G` (`C = 1/(5G)`) with `prior`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `G` not finite and `> 0`, a conjugate `b` not finite and
    /// `> 0`, or `C` underflowing.
    pub fn new(g_bound: f64, prior: Prior) -> Result<Self> {
        check_positive("G", g_bound)?;
        let c = 1.0 / (5.0 * g_bound);
        if !(c.is_finite() && c > 0.0 && (c * c) > 0.0) {
            return Err(CoreError::invalid(
                "G",
                "such that C = 1/(5G) and C² are finite and > 0",
                g_bound,
            ));
        }
        let ln_z = match prior {
            Prior::Conjugate { b } => {
                check_positive("b", b)?;
                ln_conjugate_normaliser(b, c)
            }
            Prior::Uniform => (2.0 * c).ln(),
            Prior::Improper | Prior::External => 0.0,
        };
        Ok(Potential1D {
            g_bound,
            c,
            prior,
            ln_z,
            neg_sum: 0.0,
            sq_sum: 0.0,
            t: 0,
            saturated: 0,
        })
    }

    /// `G`.
    pub fn g_bound(&self) -> f64 {
        self.g_bound
    }

    /// `C = 1/(5G)`.
    pub fn c(&self) -> f64 {
        self.c
    }

    /// The prior.
    pub fn prior(&self) -> Prior {
        self.prior
    }

    /// `L_t = −Σ_{s<t} g̃_s`.
    pub fn neg_sum(&self) -> f64 {
        self.neg_sum
    }

    /// `Q_t = Σ_{s<t} g̃_s²`.
    pub fn sq_sum(&self) -> f64 {
        self.sq_sum
    }

    /// Feedback received so far.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Predictions that saturated at `±ACTION_LIMIT`.
    pub fn saturated(&self) -> u64 {
        self.saturated
    }

    /// The prediction `w_t` of eq. (5) for the current sums, as a signed log.
    ///
    /// Errors: [`CoreError::Protocol`] for [`Prior::External`] (use [`Potential1D::prediction_with`]);
    /// quadrature errors for [`Prior::Improper`].
    pub fn prediction(&self) -> Result<Prediction> {
        prediction_for(self.prior, self.neg_sum, self.sq_sum, self.c, self.ln_z)
    }

    /// The prediction for an external prior density `ν` (normalised by `ln_z`, the log of its mass).
    ///
    /// Errors: as [`ln_moment_quadrature`].
    pub fn prediction_with(
        &self,
        ln_z: f64,
        density: impl FnMut(f64) -> Result<f64>,
    ) -> Result<Prediction> {
        if self.neg_sum == 0.0 {
            return Ok(Prediction::ZERO);
        }
        let p = ln_moment_quadrature(self.neg_sum, self.sq_sum, self.c, density)?;
        Ok(Prediction {
            sign: p.sign,
            ln_abs: p.ln_abs - ln_z,
        })
    }

    /// `w_t` (saturated at `±ACTION_LIMIT`, counted).
    ///
    /// Errors: as [`Potential1D::prediction`].
    pub fn ask(&mut self) -> Result<f64> {
        let (w, sat) = self.prediction()?.value();
        self.saturated += u64::from(sat);
        Ok(w)
    }

    /// Check that `g̃` can be absorbed (finite, and the sums stay finite), without changing anything.
    ///
    /// Errors: [`CoreError::NonFinite`].
    #[inline]
    pub fn check_tell(&self, g: f64) -> Result<()> {
        if !(g.is_finite() && (self.sq_sum + g * g).is_finite() && (self.neg_sum - g).is_finite()) {
            return Err(CoreError::NonFinite {
                name: "gradient",
                index: 0,
                value: if g.is_finite() { f64::INFINITY } else { g },
            });
        }
        Ok(())
    }

    /// Absorb the noisy gradient `g̃_t`: `L ← L − g̃`, `Q ← Q + g̃²`.
    ///
    /// Errors (state unchanged): as [`Potential1D::check_tell`].
    #[inline]
    pub fn tell(&mut self, g: f64) -> Result<()> {
        self.check_tell(g)?;
        self.absorb(g);
        Ok(())
    }

    /// [`Potential1D::tell`] without the check (the caller has checked).
    #[inline]
    pub(crate) fn absorb(&mut self, g: f64) {
        self.neg_sum -= g;
        self.sq_sum += g * g;
        self.t += 1;
    }
}

/// The prediction of eq. (5) for sums `L`, `Q`, half-width `C` and `prior` (whose log-normaliser is `ln_z`).
///
/// Errors: [`CoreError::Protocol`] for [`Prior::External`]; quadrature errors for [`Prior::Improper`].
pub fn prediction_for(prior: Prior, l: f64, q: f64, c: f64, ln_z: f64) -> Result<Prediction> {
    if l == 0.0 {
        return Ok(Prediction::ZERO);
    }
    let sign = l.signum();
    let ln_abs = match prior {
        Prior::Conjugate { b } => ln_moment(l.abs(), b + q, c)? - ln_z,
        Prior::Uniform => ln_moment(l.abs(), q, c)? - ln_z,
        Prior::Improper => {
            return ln_moment_quadrature(l, q, c, |v| Ok(1.0 / v.abs()));
        }
        Prior::External => {
            return Err(CoreError::Protocol(
                "this learner's prior is a Python callable: use the wrapper's ask()".into(),
            ));
        }
    };
    Ok(Prediction { sign, ln_abs })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quad_conjugate(l: f64, q: f64, b: f64, c: f64) -> f64 {
        let n = ln_moment_quadrature(l, q + b, c, |_| Ok(1.0)).unwrap();
        let z = ln_normaliser_quadrature(b, c, |_| Ok(1.0)).unwrap();
        n.ln_abs - z
    }

    #[test]
    fn closed_form_matches_quadrature_over_a_wide_grid() {
        let c = 0.2;
        let values = [
            1e-12, 1e-6, 1e-3, 0.1, 1.0, 3.0, 10.0, 30.0, 100.0, 1e3, 1e4, 1e6, 1e9, 1e12,
        ];
        let mut worst: f64 = 0.0;
        for &l in &values {
            for &q in &[0.0, 1e-12, 1e-3, 1.0, 10.0, 50.0, 1e3, 1e6, 1e9, 1e12] {
                for &b in &[1e-6, 1.0, 25.0] {
                    let p = prediction_for(
                        Prior::Conjugate { b },
                        l,
                        q,
                        c,
                        ln_conjugate_normaliser(b, c),
                    )
                    .unwrap();
                    let want = quad_conjugate(l, q, b, c);
                    // Where w is representable (|ln w| < 700) a relative error e of w is an absolute error e
                    // of ln w: require 1e-9. Beyond, w exists only as its logarithm, itself a float with
                    // relative rounding ~1e-16: require 1e-13 relative on ln w.
                    let err = (p.ln_abs - want).abs();
                    let tol = if want.abs() < 700.0 {
                        1e-9
                    } else {
                        1e-13 * want.abs()
                    };
                    worst = worst.max(err / tol);
                    assert!(
                        err < tol,
                        "L={l} Q={q} b={b}: closed {} vs quadrature {want}",
                        p.ln_abs
                    );
                    assert_eq!(p.sign, 1.0);
                    let n = prediction_for(
                        Prior::Conjugate { b },
                        -l,
                        q,
                        c,
                        ln_conjugate_normaliser(b, c),
                    )
                    .unwrap();
                    assert_eq!((n.sign, n.ln_abs), (-1.0, p.ln_abs));
                }
            }
        }
        eprintln!("worst error / tolerance: {worst:.3e}");
    }

    #[test]
    fn small_moment_series_matches_gauss_legendre() {
        let rule = crate::special::GaussLegendre::new(16).unwrap();
        for &ell in &[1e-300, 1e-8, 0.1, 1.0, 1.9, 2.0] {
            for &beta in &[0.0, 1e-12, 0.3, 1.0, 2.0] {
                let gl = rule
                    .integrate(|u| u * u * crate::special::sinhc(ell * u) * (-beta * u * u).exp());
                let series = small_moment(ell, beta);
                assert!(
                    ((series - gl) / gl).abs() < 1e-15,
                    "ℓ={ell} β={beta}: {series} vs {gl}"
                );
            }
        }
    }

    #[test]
    fn uniform_prior_matches_quadrature_including_zero_curvature() {
        let c = 0.2;
        for &l in &[1e-9, 0.5, 5.0, 50.0, 1e5, 1e12] {
            for &q in &[0.0, 1e-9, 1.0, 100.0, 1e8] {
                let p = prediction_for(Prior::Uniform, l, q, c, (2.0 * c).ln()).unwrap();
                let want =
                    ln_moment_quadrature(l, q, c, |_| Ok(1.0)).unwrap().ln_abs - (2.0 * c).ln();
                let tol = if want.abs() < 700.0 {
                    1e-9
                } else {
                    1e-13 * want.abs()
                };
                assert!(
                    (p.ln_abs - want).abs() < tol,
                    "L={l} Q={q}: {} vs {want}",
                    p.ln_abs
                );
            }
        }
    }

    #[test]
    fn predictions_are_monotone_in_l() {
        let c = 0.2;
        for &q in &[1.0, 100.0, 1e6] {
            let mut last = f64::NEG_INFINITY;
            let mut l = -1e8;
            while l < 1e8 {
                let p = prediction_for(Prior::Conjugate { b: 1.0 }, l, q, c, 0.0).unwrap();
                let (w, _) = p.value();
                assert!(w.is_finite());
                assert!(w >= last, "Q={q} L={l}: {w} < {last}");
                last = w;
                l += (l.abs() * 0.05).max(0.01);
            }
        }
    }

    #[test]
    fn bad_arguments_and_feedback_are_refused_without_change() {
        assert!(Potential1D::new(0.0, Prior::Uniform).is_err());
        assert!(Potential1D::new(f64::NAN, Prior::Uniform).is_err());
        assert!(Potential1D::new(1.0, Prior::Conjugate { b: -1.0 }).is_err());
        let mut p = Potential1D::new(1.0, Prior::Conjugate { b: 1.0 }).unwrap();
        p.tell(0.5).unwrap();
        let before = p.clone();
        assert!(p.tell(f64::NAN).is_err());
        assert!(p.tell(1e200).is_err());
        assert_eq!(p, before);
        assert!(p.ask().unwrap() < 0.0);
    }
}

#[cfg(test)]
mod timing {
    use super::*;

    #[test]
    #[ignore = "timing only: cargo test --release -- --ignored --nocapture regimes"]
    fn regimes() {
        let c = 0.2;
        for (name, l, b) in [
            ("R1 small", 1.0, 10.0),
            ("A interior", 3.0, 1e4),
            ("B endpoint", 1e4, 100.0),
        ] {
            let n = 1_000_000;
            let t0 = std::time::Instant::now();
            let mut acc = 0.0;
            for i in 0..n {
                acc += ln_moment(l * (1.0 + 1e-9 * f64::from(i)), b, c).unwrap();
            }
            let dt = t0.elapsed().as_secs_f64() / f64::from(n) * 1e9;
            eprintln!("{name}: {dt:.1} ns ({acc})");
        }
    }
}
