//! Buffered linear Toeplitz (BLT) matrix-factorisation mechanism for continual prefix sums.
//!
//! Source: Dvijotham, McMahan, Pillutla, Steinke & Thakurta (2024), "Efficient and near-optimal noise
//! generation for streaming differential privacy"; McMahan, Pillutla, Steinke, Thakurta et al. (2024),
//! "Hassle-free mechanisms for differentially private continual counting via banded/BLT matrices".
//!
//! **Factorisation.** The prefix-sum matrix `A` (lower-triangular ones, `T × T`) is factored as `A = B C` with
//! `C` lower-triangular Toeplitz, `C_{ts} = c_{t−s}`, whose coefficients are a mixture of `d = buffers`
//! geometric sequences:
//!
//! `c_0 = 1`, `c_i = Σ_j ω_j θ_j^{i−1}` for `i >= 1`, with `0 < θ_1 < … < θ_d < 1` and `ω_j > 0`.
//!
//! The mechanism releases `B (C x + z) = A x + B z`, `z` i.i.d. noise: the noise-bearing quantities are
//! `C x + z` and the release after round `t` is `Σ_{s<=t} x_s + Σ_{s<=t} ζ_s` with `ζ = C⁻¹ z`.
//!
//! **Online noise (`C⁻¹` as a recurrence with `d` buffers).** `C ζ = z` reads `ζ_t = z_t − Σ_j ω_j S_j(t)`
//! with buffers `S_j(t) = Σ_{i>=1} θ_j^{i−1} ζ_{t−i}`, i.e. `S_j ← θ_j S_j + ζ_t` after each step. Per push
//! and coordinate: one draw, `2d` multiply-adds, one running sum; memory `d · dim` buffers.
//!
//! **Sensitivity (single participation).** All `c_i > 0`, so the largest column of `C` is the first:
//! `‖C e_1‖₂² = 1 + Σ_{j,k} ω_j ω_k Σ_{m<T−1} (θ_j θ_k)^m` and `‖C e_1‖₁ = 1 + Σ_j ω_j Σ_{m<T−1} θ_j^m`.
//!
//! **Variance.** Row `t` of `B = A C⁻¹` is `(r_{t−1}, …, r_0)` with `r_n = Σ_{m<=n} c̃_m`, `c̃` the
//! coefficients of `C⁻¹`. With the recurrence above, `c̃_m = −ωᵀ M^{m−1} 1` for `m >= 1`,
//! `M = diag(θ) − 1 ωᵀ`. The eigenvalues `λ_j` of `M` solve the secular equation `Σ_i ω_i / (θ_i − λ) = 1`;
//! there is exactly one in `(θ_1 − Σω, θ_1)` and one in each `(θ_{j−1}, θ_j)` (the left side increases
//! between its poles), found by bisection. With `f'(λ) = Σ_i ω_i/(θ_i − λ)²` the left/right eigenvectors give
//! `c̃_m = −Σ_j λ_j^{m−1} / f'(λ_j)`, hence `r_n = α_0 + Σ_j γ_j λ_j^n` with `α_0 = 1/(1 + Σ_j ω_j/(1 − θ_j))`
//! (`= 1/C(1)`) and `γ_j = 1/(f'(λ_j)(1 − λ_j))`. The unit variance of release `t` is
//! `V(t) = Σ_{n<t} r_n²`, a combination of geometric sums `Σ_{n<t} μ^n` for `μ ∈ {1, λ_j, λ_j λ_k}`, each
//! evaluated exactly by binary doubling in `O(log t)`: `V(t)` costs `O(d² log t)`.
//!
//! **Parameters.** Optimised for the horizon `T` at construction, minimising the loss of the factorisation
//! at equal privacy (the noise scale is proportional to the sensitivity):
//! `‖C e_1‖₂² · V(T)` (objective [`BltObjective::Max`]: `V(t)` increases in `t`, so `V(T)` is the worst step)
//! or `‖C e_1‖₂² · (1/T) Σ_{t<=T} V(t)` ([`BltObjective::Mean`]; `Σ_t V(t) = Σ_{n<T} (T − n) r_n²`, also by
//! doubling). The optimiser is BFGS on the logarithm of the loss in unconstrained coordinates
//! (`θ_j = 1 − e^{−u_j}`, `u_j = Σ_{i<=j} e^{a_i}`, `ω_j = e^{b_j}`), central finite-difference gradients,
//! Armijo backtracking (at most 60 halvings). Initial point: `s_j = 1 − θ_j` log-spaced in `[1/T, 1/2]`
//! with spacing `Δ` and `ω_j = √s_j · Δ/π` (halved while the recurrence is unstable), a quadrature of
//! `1/√(π i) = (1/π) ∫ s^{−1/2} e^{−s i} ds`, which approximates the coefficients of the optimal
//! `(1 − u)^{−1/2}` factorisation (`c_i ≈ 1/√(π i)`).
//! The optimiser stops when the largest gradient entry is below `1e-7`, or the loss decreased by less
//! than `1e-12` (relative) in 5 consecutive iterations, or no step along the descent direction or the
//! gradient decreases the loss; after [`BLT_MAX_ITERATIONS`] iterations it returns
//! [`CoreError::IterationLimit`]. Any parameters give an exactly calibrated mechanism: optimisation only
//! affects accuracy, never privacy.

use serde::{Deserialize, Serialize};

use super::PrefixSumMechanism;
use super::lattice::{Guarded, Lattice, SamplerKind, push_guarded};
use crate::alloc::{checked_len, zeros};
use crate::error::{CoreError, Result};
use crate::noise::grid::Grid;
use crate::noise::{NoiseDistribution, Sampler, SumOf, WithSampler};
use crate::rng::Generator;

/// Largest number of buffers.
pub const MAX_BUFFERS: usize = 16;

/// Iteration cap of the BLT parameter optimiser.
pub const BLT_MAX_ITERATIONS: u64 = 2000;

/// Iteration cap of each bisection for the eigenvalues (bisection in f64 ends within ~1100 halvings).
const ROOT_MAX_ITERATIONS: u64 = 2200;

/// The error functional the BLT parameters minimise (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BltObjective {
    /// Mean over rounds of the per-coordinate squared error of the release, at equal privacy.
    Mean,
    /// Largest per-round squared error (the last round's), at equal privacy.
    Max,
}

impl BltObjective {
    /// Parse `"mean"` or `"max"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] otherwise.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "mean" => Ok(BltObjective::Mean),
            "max" => Ok(BltObjective::Max),
            other => Err(CoreError::invalid(
                "objective",
                "'mean' or 'max'",
                format!("{other:?}"),
            )),
        }
    }

    /// `"mean"` or `"max"`.
    pub fn name(&self) -> &'static str {
        match self {
            BltObjective::Mean => "mean",
            BltObjective::Max => "max",
        }
    }
}

/// `(Σ_{k<n} μ^k, Σ_{k<n} (n − k) μ^k)` by binary doubling (`O(log n)`, no cancellation for `μ >= 0`).
fn geometric(mu: f64, n: u64) -> (f64, f64) {
    let (mut power, mut sum, mut weighted, mut m) = (1.0, 0.0, 0.0, 0.0f64);
    for bit in (0..64 - n.leading_zeros()).rev() {
        // m -> 2m: W_2m = W_m (1 + μ^m) + m S_m, S_2m = S_m (1 + μ^m).
        weighted = weighted * (1.0 + power) + m * sum;
        sum *= 1.0 + power;
        power *= power;
        m *= 2.0;
        if n >> bit & 1 == 1 {
            // m -> m + 1: W_{m+1} = W_m + S_m + μ^m, S_{m+1} = S_m + μ^m.
            weighted += sum + power;
            sum += power;
            power *= mu;
            m += 1.0;
        }
    }
    (sum, weighted)
}

/// Validated BLT parameters with the quantities derived from them.
#[derive(Debug, Clone)]
struct Spectrum {
    /// `r_∞ = 1/C(1)`.
    alpha0: f64,
    /// Eigenvalues `λ_j` of `M`.
    lambda: Vec<f64>,
    /// Coefficients `γ_j` of `r_n = α_0 + Σ_j γ_j λ_j^n`.
    gamma: Vec<f64>,
}

/// Check `0 < θ_1 < … < θ_d < 1`, `ω_j > 0` finite, `1 <= d <= MAX_BUFFERS`.
fn check_params(theta: &[f64], omega: &[f64]) -> Result<()> {
    if theta.is_empty() || theta.len() > MAX_BUFFERS || omega.len() != theta.len() {
        return Err(CoreError::invalid(
            "theta, omega",
            "of equal length between 1 and 16",
            format!("lengths {} and {}", theta.len(), omega.len()),
        ));
    }
    let increasing = theta.windows(2).all(|w| w[0] < w[1]);
    if !increasing || !theta.iter().all(|&t| t > 0.0 && t < 1.0) {
        return Err(CoreError::invalid(
            "theta",
            "strictly increasing in (0, 1)",
            format!("{theta:?}"),
        ));
    }
    if !omega.iter().all(|&w| w.is_finite() && w > 0.0) {
        return Err(CoreError::invalid(
            "omega",
            "finite and > 0",
            format!("{omega:?}"),
        ));
    }
    Ok(())
}

fn spectrum(theta: &[f64], omega: &[f64]) -> Result<Spectrum> {
    let secular = |l: f64| -> f64 { theta.iter().zip(omega).map(|(t, w)| w / (t - l)).sum() };
    let total: f64 = omega.iter().sum();
    let mut lambda = Vec::with_capacity(theta.len());
    let mut gamma = Vec::with_capacity(theta.len());
    for (i, &hi0) in theta.iter().enumerate() {
        let (mut lo, mut hi) = match i.checked_sub(1).and_then(|p| theta.get(p)) {
            Some(&prev) => (prev, hi0),
            None => (hi0 - total, hi0),
        };
        let mut iterations = 0;
        loop {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if secular(mid) < 1.0 {
                lo = mid;
            } else {
                hi = mid;
            }
            iterations += 1;
            if iterations > ROOT_MAX_ITERATIONS {
                return Err(CoreError::IterationLimit {
                    routine: "BLT eigenvalue bisection",
                    limit: ROOT_MAX_ITERATIONS,
                    detail: String::new(),
                });
            }
        }
        let l = 0.5 * (lo + hi);
        let slope: f64 = theta
            .iter()
            .zip(omega)
            .map(|(t, w)| w / ((t - l) * (t - l)))
            .sum();
        lambda.push(l);
        gamma.push(1.0 / (slope * (1.0 - l)));
    }
    let c_at_one: f64 = 1.0
        + theta
            .iter()
            .zip(omega)
            .map(|(t, w)| w / (1.0 - t))
            .sum::<f64>();
    Ok(Spectrum {
        alpha0: 1.0 / c_at_one,
        lambda,
        gamma,
    })
}

impl Spectrum {
    /// `(Σ_{n<t} r_n², Σ_{n<t} (t − n) r_n²)`.
    fn error_sums(&self, t: u64) -> (f64, f64) {
        let tf = t as f64;
        let a = self.alpha0;
        let mut sum = a * a * tf;
        let mut weighted = a * a * tf * (tf + 1.0) / 2.0;
        for (j, (&lj, &gj)) in self.lambda.iter().zip(&self.gamma).enumerate() {
            let (s, w) = geometric(lj, t);
            sum += 2.0 * a * gj * s;
            weighted += 2.0 * a * gj * w;
            for (k, (&lk, &gk)) in self.lambda.iter().zip(&self.gamma).enumerate().skip(j) {
                let factor = if k == j { 1.0 } else { 2.0 } * gj * gk;
                let (s, w) = geometric(lj * lk, t);
                sum += factor * s;
                weighted += factor * w;
            }
        }
        (sum, weighted)
    }
}

/// `(‖C e_1‖₁, ‖C e_1‖₂²)` over a horizon of `horizon` rounds.
fn column_norms(theta: &[f64], omega: &[f64], horizon: u64) -> (f64, f64) {
    let n = horizon.saturating_sub(1);
    let mut l1 = 1.0;
    let mut l2sq = 1.0;
    for (j, (&tj, &wj)) in theta.iter().zip(omega).enumerate() {
        l1 += wj * geometric(tj, n).0;
        for (k, (&tk, &wk)) in theta.iter().zip(omega).enumerate().skip(j) {
            let factor = if k == j { 1.0 } else { 2.0 };
            l2sq += factor * wj * wk * geometric(tj * tk, n).0;
        }
    }
    (l1, l2sq)
}

/// Natural log of the loss of parameters `(θ, ω)` (see the module docs); `+inf` if invalid or unstable.
fn log_loss(theta: &[f64], omega: &[f64], horizon: u64, objective: BltObjective) -> f64 {
    if check_params(theta, omega).is_err() {
        return f64::INFINITY;
    }
    let Ok(spec) = spectrum(theta, omega) else {
        return f64::INFINITY;
    };
    if spec.lambda.iter().any(|l| l.abs() >= 1.0) {
        return f64::INFINITY;
    }
    let (_, l2sq) = column_norms(theta, omega, horizon);
    let (sum, weighted) = spec.error_sums(horizon);
    let error = match objective {
        BltObjective::Max => sum,
        BltObjective::Mean => weighted / horizon as f64,
    };
    let loss = (l2sq * error).ln();
    if loss.is_finite() && error > 0.0 {
        loss
    } else {
        f64::INFINITY
    }
}

/// `(θ, ω)` from the unconstrained coordinates `p = (a_1..a_d, b_1..b_d)`.
fn params_from(p: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let d = p.len() / 2;
    let mut u = 0.0;
    let theta = p[..d]
        .iter()
        .map(|a| {
            u += a.exp();
            -(-u).exp_m1()
        })
        .collect();
    let omega = p[d..].iter().map(|b| b.exp()).collect();
    (theta, omega)
}

/// What the optimiser did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BltFit {
    /// BFGS iterations used.
    pub iterations: u64,
    /// Loss at the optimum (sensitivity² × error, per unit noise; see the module docs).
    pub loss: f64,
}

/// Optimise `(θ, ω)` with `buffers` buffers for `horizon` rounds (see the module docs).
///
/// Errors: [`CoreError::InvalidArgument`] for `buffers` outside `1..=16` or `horizon == 0`;
/// [`CoreError::IterationLimit`] if the optimiser reaches [`BLT_MAX_ITERATIONS`].
pub fn optimize_blt(
    horizon: u64,
    buffers: usize,
    objective: BltObjective,
) -> Result<(Vec<f64>, Vec<f64>, BltFit)> {
    if buffers == 0 || buffers > MAX_BUFFERS {
        return Err(CoreError::invalid("buffers", "between 1 and 16", buffers));
    }
    if horizon == 0 {
        return Err(CoreError::invalid("horizon", ">= 1", horizon));
    }
    let d = buffers;
    let n = 2 * d;
    // Initial point: 1 − θ_j log-spaced from 1/2 down to 1/T, ω_j ∝ sqrt(1 − θ_j) · spacing / sqrt(π).
    let log_hi = 0.5f64.ln();
    let log_lo = -(horizon.max(4) as f64).ln();
    let step = if d > 1 {
        (log_hi - log_lo) / (d - 1) as f64
    } else {
        log_hi - log_lo
    };
    let mut p = vec![0.0; n];
    let mut u_prev = 0.0;
    for j in 0..d {
        let log_s = if d > 1 {
            log_hi - step * j as f64
        } else {
            0.5 * (log_hi + log_lo)
        };
        let u = -log_s;
        p[j] = (u - u_prev).max(1e-12).ln();
        u_prev = u;
        p[d + j] = 0.5 * log_s + (step / std::f64::consts::PI).ln();
    }
    let f = |x: &[f64]| {
        let (theta, omega) = params_from(x);
        log_loss(&theta, &omega, horizon, objective)
    };
    let grad = |x: &[f64], g: &mut [f64]| {
        let h = 1e-6;
        let mut y = x.to_vec();
        for i in 0..x.len() {
            y[i] = x[i] + h;
            let up = f(&y);
            y[i] = x[i] - h;
            let down = f(&y);
            y[i] = x[i];
            g[i] = (up - down) / (2.0 * h);
        }
    };
    // A coarse quadrature can make the recurrence unstable (an eigenvalue <= −1): shrink ω until it is not.
    let mut fx = f(&p);
    for _ in 0..200 {
        if fx.is_finite() {
            break;
        }
        p[d..].iter_mut().for_each(|b| *b -= std::f64::consts::LN_2);
        fx = f(&p);
    }
    if !fx.is_finite() {
        return Err(CoreError::IterationLimit {
            routine: "BLT initialisation",
            limit: 200,
            detail: format!(": horizon={horizon}, buffers={buffers}"),
        });
    }
    let mut g = vec![0.0; n];
    grad(&p, &mut g);
    let mut h_inv = identity(n);
    let mut small_steps = 0;
    for iteration in 0..BLT_MAX_ITERATIONS {
        if g.iter().all(|v| v.abs() < 1e-7) || small_steps >= 5 {
            return finish(&p, fx, iteration);
        }
        let mut dir: Vec<f64> = (0..n)
            .map(|i| -(0..n).map(|k| h_inv[i * n + k] * g[k]).sum::<f64>())
            .collect();
        let mut slope: f64 = dir.iter().zip(&g).map(|(a, b)| a * b).sum();
        if slope >= 0.0 || !slope.is_finite() {
            h_inv = identity(n);
            dir = g.iter().map(|v| -v).collect();
            slope = -g.iter().map(|v| v * v).sum::<f64>();
        }
        let mut t = 1.0;
        let mut accepted = None;
        for _ in 0..60 {
            let trial: Vec<f64> = p.iter().zip(&dir).map(|(a, b)| a + t * b).collect();
            let ft = f(&trial);
            if ft.is_finite() && ft <= fx + 1e-4 * t * slope {
                accepted = Some((trial, ft));
                break;
            }
            t *= 0.5;
        }
        let Some((next, fnext)) = accepted else {
            if h_inv == identity(n) {
                // Not even the gradient direction decreases the loss: optimal at finite-difference precision.
                return finish(&p, fx, iteration);
            }
            h_inv = identity(n);
            continue;
        };
        let mut g_next = vec![0.0; n];
        grad(&next, &mut g_next);
        let s: Vec<f64> = next.iter().zip(&p).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = g_next.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy: f64 = s.iter().zip(&y).map(|(a, b)| a * b).sum();
        if sy > 1e-14 {
            bfgs_update(&mut h_inv, &s, &y, sy);
        }
        small_steps = if fx - fnext < 1e-12 * fx.abs().max(1.0) {
            small_steps + 1
        } else {
            0
        };
        p = next;
        fx = fnext;
        g = g_next;
    }
    Err(CoreError::IterationLimit {
        routine: "BLT parameter optimisation",
        limit: BLT_MAX_ITERATIONS,
        detail: format!(
            ": horizon={horizon}, buffers={buffers}, objective={}",
            objective.name()
        ),
    })
}

fn finish(p: &[f64], log_loss: f64, iterations: u64) -> Result<(Vec<f64>, Vec<f64>, BltFit)> {
    let (theta, omega) = params_from(p);
    check_params(&theta, &omega)?;
    Ok((
        theta,
        omega,
        BltFit {
            iterations,
            loss: log_loss.exp(),
        },
    ))
}

fn identity(n: usize) -> Vec<f64> {
    let mut m = vec![0.0; n * n];
    for i in 0..n {
        m[i * n + i] = 1.0;
    }
    m
}

/// `H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ`, `ρ = 1/(yᵀs)`.
fn bfgs_update(h: &mut [f64], s: &[f64], y: &[f64], sy: f64) {
    let n = s.len();
    let rho = 1.0 / sy;
    let hy: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|k| h[i * n + k] * y[k]).sum())
        .collect();
    let yhy: f64 = y.iter().zip(&hy).map(|(a, b)| a * b).sum();
    for i in 0..n {
        for k in 0..n {
            h[i * n + k] +=
                -rho * (hy[i] * s[k] + s[i] * hy[k]) + (rho * rho * yhy + rho) * s[i] * s[k];
        }
    }
}

/// The BLT mechanism over `horizon` pushes of `dim`-vectors.
#[derive(Debug, Serialize, Deserialize)]
#[serde(try_from = "BltState")]
pub struct Blt {
    dim: usize,
    horizon: u64,
    theta: Vec<f64>,
    omega: Vec<f64>,
    objective: BltObjective,
    fit: Option<BltFit>,
    noise: NoiseDistribution,
    t: u64,
    /// Exact running sum of the inputs.
    prefix: Vec<f64>,
    /// Running sum of the correlated noise `ζ`.
    noise_sum: Vec<f64>,
    /// Buffers `S_j`, coordinate-major: entry `i · d + j`.
    buffers: Vec<f64>,
    rng: Generator,
    #[serde(skip)]
    spec: Option<Spectrum>,
    #[serde(skip)]
    norms: (f64, f64),
    #[serde(skip)]
    initial: Vec<f64>,
    #[serde(skip)]
    node: SumOf,
}

#[derive(Deserialize)]
struct BltState {
    dim: usize,
    horizon: u64,
    theta: Vec<f64>,
    omega: Vec<f64>,
    objective: BltObjective,
    fit: Option<BltFit>,
    noise: NoiseDistribution,
    t: u64,
    prefix: Vec<f64>,
    noise_sum: Vec<f64>,
    buffers: Vec<f64>,
    rng: Generator,
}

impl TryFrom<BltState> for Blt {
    type Error = CoreError;

    fn try_from(s: BltState) -> Result<Self> {
        let bad = || CoreError::State("BLT state is inconsistent".into());
        check_params(&s.theta, &s.omega).map_err(|_| bad())?;
        let rows = s.dim.checked_mul(s.theta.len()).ok_or_else(bad)?;
        let consistent = s.dim > 0
            && s.horizon > 0
            && s.t <= s.horizon
            && s.prefix.len() == s.dim
            && s.noise_sum.len() == s.dim
            && s.buffers.len() == rows
            && [&s.prefix, &s.noise_sum, &s.buffers]
                .iter()
                .all(|v| v.iter().all(|x| x.is_finite()));
        if !consistent {
            return Err(bad());
        }
        let mut blt = Blt {
            dim: s.dim,
            horizon: s.horizon,
            theta: s.theta,
            omega: s.omega,
            objective: s.objective,
            fit: s.fit,
            noise: s.noise,
            t: s.t,
            prefix: s.prefix,
            noise_sum: s.noise_sum,
            buffers: s.buffers,
            rng: s.rng,
            spec: None,
            norms: (1.0, 1.0),
            initial: zeros("dim", s.dim)?,
            node: s.noise.sum_of(1),
        };
        blt.derive()?;
        Ok(blt)
    }
}

struct BltStep<'a> {
    rng: &'a mut Generator,
    theta: &'a [f64],
    omega: &'a [f64],
    prefix: &'a mut [f64],
    noise_sum: &'a mut [f64],
    buffers: &'a mut [f64],
    x: &'a [f64],
    out: &'a mut [f64],
}

impl WithSampler for BltStep<'_> {
    type Output = ();
    #[inline]
    fn call<S: Sampler>(self, node: S) {
        let BltStep {
            rng,
            theta,
            omega,
            prefix,
            noise_sum,
            buffers,
            x,
            out,
        } = self;
        let d = theta.len();
        crate::with_generator!(rng, g => {
            for ((((o, p), xi), n), state) in out
                .iter_mut()
                .zip(prefix.iter_mut())
                .zip(x)
                .zip(noise_sum.iter_mut())
                .zip(buffers.chunks_exact_mut(d))
            {
                let feedback: f64 = omega.iter().zip(state.iter()).map(|(w, s)| w * s).sum();
                let zeta = node.sample(g) - feedback;
                for (s, th) in state.iter_mut().zip(theta) {
                    *s = th * *s + zeta;
                }
                *n += zeta;
                *p += *xi;
                *o = *p + *n;
            }
        });
    }
}

impl Blt {
    /// A BLT mechanism with `buffers` buffers whose parameters are optimised for `horizon` and `objective`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `dim == 0`, `horizon == 0`, `buffers` outside `1..=16`, or
    /// buffers too large to allocate; [`CoreError::IterationLimit`] from the optimiser.
    pub fn new(
        dim: usize,
        horizon: u64,
        buffers: usize,
        objective: BltObjective,
        noise: NoiseDistribution,
        rng: Generator,
    ) -> Result<Self> {
        if dim == 0 {
            return Err(CoreError::invalid("dim", ">= 1", dim));
        }
        let (theta, omega, fit) = optimize_blt(horizon, buffers, objective)?;
        let mut blt = Self::with_params(dim, horizon, &theta, &omega, noise, rng)?;
        blt.objective = objective;
        blt.fit = Some(fit);
        Ok(blt)
    }

    /// A BLT mechanism with explicit parameters `θ` (strictly increasing in (0, 1)) and `ω` (> 0).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for bad parameters, `dim == 0` or `horizon == 0`.
    pub fn with_params(
        dim: usize,
        horizon: u64,
        theta: &[f64],
        omega: &[f64],
        noise: NoiseDistribution,
        rng: Generator,
    ) -> Result<Self> {
        if dim == 0 {
            return Err(CoreError::invalid("dim", ">= 1", dim));
        }
        if horizon == 0 {
            return Err(CoreError::invalid("horizon", ">= 1", horizon));
        }
        check_params(theta, omega)?;
        let rows = checked_len("dim", dim, theta.len())?;
        let mut blt = Blt {
            dim,
            horizon,
            theta: theta.to_vec(),
            omega: omega.to_vec(),
            objective: BltObjective::Max,
            fit: None,
            noise,
            t: 0,
            prefix: zeros("dim", dim)?,
            noise_sum: zeros("dim", dim)?,
            buffers: zeros("dim", rows)?,
            rng,
            spec: None,
            norms: (1.0, 1.0),
            initial: zeros("dim", dim)?,
            node: noise.sum_of(1),
        };
        blt.derive()?;
        Ok(blt)
    }

    /// Record the objective and optimiser report of explicit parameters that came from [`optimize_blt`]
    /// (informational only; privacy and variance depend on `θ`, `ω` alone).
    pub fn with_fit(mut self, objective: BltObjective, fit: Option<BltFit>) -> Self {
        self.objective = objective;
        self.fit = fit;
        self
    }

    fn derive(&mut self) -> Result<()> {
        let spec = spectrum(&self.theta, &self.omega)?;
        // The noise generator runs the recurrence of C⁻¹, whose eigenvalues are the `λ_j`: one outside (−1, 1)
        // makes `ζ_t` grow geometrically, to inf/NaN releases within a few hundred pushes (the optimiser never
        // proposes such parameters: `log_loss` rejects them the same way).
        if let Some(l) = spec.lambda.iter().find(|l| l.is_nan() || l.abs() >= 1.0) {
            return Err(CoreError::invalid(
                "theta, omega",
                "a stable noise recurrence (every eigenvalue of C⁻¹'s recurrence in (-1, 1), i.e. Σ ω_j/(1 + θ_j) < 1)",
                format!("eigenvalue {l}"),
            ));
        }
        let (l1, l2sq) = column_norms(&self.theta, &self.omega, self.horizon);
        self.norms = (l1, l2sq.sqrt());
        self.spec = Some(spec);
        Ok(())
    }

    /// The decay parameters `θ_j`.
    pub fn theta(&self) -> &[f64] {
        &self.theta
    }

    /// The output weights `ω_j`.
    pub fn omega(&self) -> &[f64] {
        &self.omega
    }

    /// Number of buffers `d`.
    pub fn buffers(&self) -> usize {
        self.theta.len()
    }

    /// The objective the parameters were optimised for.
    pub fn objective(&self) -> BltObjective {
        self.objective
    }

    /// The optimiser's report (`None` for explicit parameters).
    pub fn fit(&self) -> Option<BltFit> {
        self.fit
    }

    /// `Σ_{t<=T} V(t) / T`: the mean over rounds of the unit variance (`O(d² log T)`).
    pub fn mean_unit_variance(&self) -> f64 {
        self.spec.as_ref().map_or(f64::NAN, |s| {
            s.error_sums(self.horizon).1 / self.horizon as f64
        })
    }

    fn push_unchecked(&mut self, x: &[f64], out: &mut [f64]) {
        self.t += 1;
        let node = self.node;
        node.with_sampler(BltStep {
            rng: &mut self.rng,
            theta: &self.theta,
            omega: &self.omega,
            prefix: &mut self.prefix,
            noise_sum: &mut self.noise_sum,
            buffers: &mut self.buffers,
            x,
            out,
        });
    }
}

impl Guarded for Blt {
    const WHAT: &'static str = "BLT";
    fn counts(&self) -> (usize, u64, u64) {
        (self.dim, self.t, self.horizon)
    }
    fn running_sums(&self) -> &[f64] {
        &self.prefix
    }
    fn lattice(&mut self) -> Option<&mut Lattice> {
        None
    }
    fn folds_values(&self) -> bool {
        false
    }
    fn push_checked(&mut self, xs: &[f64], out: &mut [f64]) {
        for (x, o) in xs
            .chunks_exact(self.dim)
            .zip(out.chunks_exact_mut(self.dim))
        {
            self.push_unchecked(x, o);
        }
    }
}

impl PrefixSumMechanism for Blt {
    fn dim(&self) -> usize {
        self.dim
    }
    fn horizon(&self) -> u64 {
        self.horizon
    }
    fn t(&self) -> u64 {
        self.t
    }
    fn noise(&self) -> NoiseDistribution {
        self.noise
    }
    fn is_secure(&self) -> bool {
        self.rng.is_secure()
    }
    fn initial(&self) -> &[f64] {
        &self.initial
    }
    /// Always [`SamplerKind::FloatingPoint`]: BLT has no exact path (`super::lattice`).
    fn sampler(&self) -> SamplerKind {
        SamplerKind::FloatingPoint
    }
    fn grid(&self) -> Option<Grid> {
        None
    }
    fn push(&mut self, x: &[f64], out: &mut [f64]) -> Result<()> {
        push_guarded(self, x, out, true)
    }
    fn push_many(&mut self, xs: &[f64], out: &mut [f64]) -> Result<()> {
        push_guarded(self, xs, out, false)
    }
    /// `V(t) = Σ_{n<t} r_n²` in closed form (module docs), `O(d² log t)`.
    fn unit_variance(&self, t: u64) -> Result<f64> {
        if t > self.horizon {
            return Err(CoreError::invalid("t", "between 0 and horizon", t));
        }
        let spec = self
            .spec
            .as_ref()
            .ok_or_else(|| CoreError::State("BLT spectrum missing".into()))?;
        Ok(spec.error_sums(t).0.max(0.0))
    }
    fn sensitivity_l1(&self) -> f64 {
        self.norms.0
    }
    fn sensitivity_l2(&self) -> f64 {
        self.norms.1
    }
    fn state_nbytes(&self) -> usize {
        8 * (self.prefix.capacity()
            + self.noise_sum.capacity()
            + self.buffers.capacity()
            + self.initial.capacity()
            + self.theta.capacity()
            + self.omega.capacity())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coefficients of `C` and the row norms² of `B = A C⁻¹` by direct recurrences.
    fn dense(theta: &[f64], omega: &[f64], horizon: usize) -> (Vec<f64>, Vec<f64>) {
        let c: Vec<f64> = (0..horizon)
            .map(|i| {
                if i == 0 {
                    1.0
                } else {
                    theta
                        .iter()
                        .zip(omega)
                        .map(|(t, w)| w * t.powi(i as i32 - 1))
                        .sum()
                }
            })
            .collect();
        // C⁻¹ coefficients: c̃_0 = 1, c̃_n = −Σ_{i=1..n} c_i c̃_{n−i}.
        let mut inv = vec![0.0; horizon];
        inv[0] = 1.0;
        for n in 1..horizon {
            inv[n] = -(1..=n).map(|i| c[i] * inv[n - i]).sum::<f64>();
        }
        let mut r = 0.0;
        let mut v = 0.0;
        let mut var = vec![0.0];
        for x in inv {
            r += x;
            v += r * r;
            var.push(v);
        }
        (c, var)
    }

    #[test]
    fn geometric_sums_are_exact() {
        for mu in [0.0f64, 0.3, -0.7, 0.999, 1.0] {
            for n in [0u64, 1, 2, 3, 7, 64, 1000] {
                let s: f64 = (0..n).map(|k| mu.powi(k as i32)).sum();
                let w: f64 = (0..n).map(|k| (n - k) as f64 * mu.powi(k as i32)).sum();
                let (gs, gw) = geometric(mu, n);
                assert!((gs - s).abs() <= 1e-12 * s.abs().max(1.0), "{mu} {n}");
                assert!((gw - w).abs() <= 1e-12 * w.abs().max(1.0), "{mu} {n}");
            }
        }
    }

    #[test]
    fn closed_forms_match_the_dense_factorisation() {
        for (horizon, buffers, objective) in [
            (1000u64, 1, BltObjective::Max),
            (1024, 3, BltObjective::Mean),
            (3000, 5, BltObjective::Max),
            (50, 2, BltObjective::Mean),
        ] {
            let (theta, omega, _) = optimize_blt(horizon, buffers, objective).unwrap();
            let blt = Blt::with_params(
                1,
                horizon,
                &theta,
                &omega,
                NoiseDistribution::Gaussian { sigma: 1.0 },
                Generator::from_seed([0; 4]),
            )
            .unwrap();
            let (c, var) = dense(&theta, &omega, horizon as usize);
            let l2: f64 = c.iter().map(|x| x * x).sum::<f64>().sqrt();
            let l1: f64 = c.iter().sum();
            assert!((blt.sensitivity_l2() / l2 - 1.0).abs() < 1e-12);
            assert!((blt.sensitivity_l1() / l1 - 1.0).abs() < 1e-12);
            for t in 0..=horizon {
                let v = blt.unit_variance(t).unwrap();
                assert!(
                    (v - var[t as usize]).abs() <= 1e-9 * var[t as usize].max(1.0),
                    "T={horizon} d={buffers} t={t}: {v} vs {}",
                    var[t as usize]
                );
            }
            let mean = var[1..].iter().sum::<f64>() / horizon as f64;
            assert!((blt.mean_unit_variance() / mean - 1.0).abs() < 1e-9);
        }
    }

    #[test]
    fn closed_form_variance_is_accurate_at_long_horizons() {
        // The recurrence the mechanism runs (ζ = C⁻¹ e_1 through the buffers), accumulated directly.
        for (horizon, buffers, objective) in [
            (1u64 << 20, 6, BltObjective::Max),
            (1 << 20, 4, BltObjective::Mean),
            (10_000_000, 6, BltObjective::Mean),
        ] {
            let (theta, omega, _) = optimize_blt(horizon, buffers, objective).unwrap();
            let blt = Blt::with_params(
                1,
                horizon,
                &theta,
                &omega,
                NoiseDistribution::Gaussian { sigma: 1.0 },
                Generator::from_seed([0; 4]),
            )
            .unwrap();
            let mut state = vec![0.0; buffers];
            let (mut r, mut v) = (0.0, 0.0);
            let checks = [1u64, 2, 10, 1000, 1 << 16, horizon / 2, horizon];
            for t in 1..=horizon {
                let impulse = if t == 1 { 1.0 } else { 0.0 };
                let zeta = impulse - omega.iter().zip(&state).map(|(w, s)| w * s).sum::<f64>();
                for (s, th) in state.iter_mut().zip(&theta) {
                    *s = th * *s + zeta;
                }
                r += zeta;
                v += r * r;
                if checks.contains(&t) {
                    let closed = blt.unit_variance(t).unwrap();
                    assert!(
                        (closed / v - 1.0).abs() < 1e-9,
                        "T={horizon} t={t}: {closed} vs {v}"
                    );
                }
            }
        }
    }

    #[test]
    fn optimiser_converges_and_improves_with_buffers() {
        let mut previous = f64::INFINITY;
        for buffers in 1..=6 {
            let (_, _, fit) = optimize_blt(1 << 20, buffers, BltObjective::Max).unwrap();
            assert!(fit.iterations < BLT_MAX_ITERATIONS);
            assert!(
                fit.loss <= previous * (1.0 + 1e-9),
                "d={buffers}: {} > {previous}",
                fit.loss
            );
            previous = fit.loss;
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        let noise = NoiseDistribution::Gaussian { sigma: 1.0 };
        let g = || Generator::from_seed([0; 4]);
        assert!(Blt::with_params(1, 10, &[0.5, 0.4], &[1.0, 1.0], noise, g()).is_err());
        assert!(Blt::with_params(1, 10, &[0.5, 1.0], &[1.0, 1.0], noise, g()).is_err());
        assert!(Blt::with_params(1, 10, &[0.5], &[-1.0], noise, g()).is_err());
        assert!(Blt::with_params(1, 10, &[0.5], &[1.0, 2.0], noise, g()).is_err());
        assert!(Blt::with_params(0, 10, &[0.5], &[1.0], noise, g()).is_err());
        assert!(Blt::new(1, 10, 0, BltObjective::Max, noise, g()).is_err());
        assert!(Blt::new(1, 10, 17, BltObjective::Max, noise, g()).is_err());
        assert!(BltObjective::from_name("median").is_err());
    }
}
