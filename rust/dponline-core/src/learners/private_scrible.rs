//! PrivateSCRiBLe: bandit linear optimisation with a self-concordant barrier, fed with Laplace-noised feedback.
//!
//! Source: Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017), Theorem 4.5:
//! Algorithm 4 (release `f̂_t = f_t + Lap(λ)`, one release per round) around SCRiBLe (Abernethy, Hazan &
//! Rakhlin 2012). Per round:
//!
//! * `x_t = argmin_x η⟨L̂_{t−1}, x⟩ + R(x)` with `R` a ν-self-concordant barrier of the domain — closed forms
//!   for the box and the ball, a one-dimensional Newton iteration for the simplex (below);
//! * eigen-decompose `∇²R(x_t) = Σ λ_i e_i e_iᵀ`, draw `i` uniformly and a sign `s = ±1`, play
//!   `y_t = x_t + s λ_i^{−1/2} e_i` (on the Dikin ellipsoid, which lies in the domain);
//! * observe `f_t = ⟨ℓ_t, y_t⟩` clipped to `[−B, B]`, release `f̂_t = f_t + Lap(λ)`, and add
//!   `ℓ̂_t = n f̂_t s λ_i^{1/2} e_i` to `L̂`.
//!
//! Domains and barriers:
//! * box `[l, u]`: `R = −Σ ln(u_i − x_i) + ln(x_i − l_i)` (ν = 2N); the argmin is coordinate-wise,
//!   `x_i = m_i − c_i h_i² / (1 + sqrt(1 + c_i² h_i²))` with `c = η L̂`, centre `m`, half-width `h`; the Hessian
//!   is diagonal, `λ_i = 1/(u_i − x_i)² + 1/(x_i − l_i)²`, `e_i` the coordinate vectors;
//! * ball of radius `r`: `R = −ln(r² − ‖x‖²)` (ν = 1); the argmin is `x = −τ L̂/‖L̂‖` with
//!   `τ = a r²/(1 + sqrt(1 + a² r²))`, `a = η‖L̂‖`; the Hessian `2I/σ + 4xxᵀ/σ²` (`σ = r² − ‖x‖²`) has
//!   eigenvector `x̂ = x/‖x‖` (eigenvalue `2/σ + 4‖x‖²/σ²`) and the orthogonal complement (eigenvalue `2/σ`),
//!   for which the columns of the Householder reflection sending `e_1` to `x̂` give an orthonormal basis;
//! * simplex `Δ_N` on its affine hull `{Σx = 1}`: `R = −Σ ln x_i` (ν = N), see "The simplex" below.
//!
//! The estimator's factor `n` is the number of exploration directions, i.e. the dimension of the set's affine hull:
//! `n = N` for the box and the ball, `n = N' = N − 1` for the simplex. Averaging over the `2n` equally likely
//! `(i, s)`, `E[ℓ̂] = n · (1/n) Σ_i e_i e_iᵀ ℓ = Π ℓ` with `Π` the orthogonal projection onto the hull's direction
//! space (`Π = I` for the box and the ball, `Π = I − 11ᵀ/N` for the simplex): an unbiased estimate of every loss
//! difference `⟨ℓ, x − x'⟩` between points of the domain, which is all FTRL on the domain uses.
//!
//! # The simplex
//! * **Argmin.** On `{Σx = 1, x > 0}` the optimality condition of `η⟨L̂, x⟩ − Σ ln x_i` is
//!   `η L̂_i − 1/x_i + μ = 0`, so `x_i = 1/(c_i + z)` with `c = η(L̂ − min L̂) ≥ 0` and `z > 0` the unique root of
//!   `g(z) = Σ 1/(c_i + z) − 1` (decreasing and convex; `g(1) ≥ 0 ≥ g(N)`). Newton's method on `g` from `z = 1` —
//!   the Newton method of the problem's one-dimensional dual — increases monotonically to the root (a convex
//!   decreasing function's tangent meets zero left of its root), so it needs no damping; it roughly doubles `z`
//!   while far (≤ log₂ N steps) and then converges quadratically. Cost `O(N)` per iteration, capped at
//!   [`SIMPLEX_NEWTON_CAP`] ([`CoreError::IterationLimit`]; not expected). A new point is computed before anything
//!   is committed, so an error leaves `L̂` and `x_t` as they were (the round's noise draw is consumed, never used).
//! * **Eigen-decomposition.** On the direction space `1^⊥` the Hessian is `Π D Π`, `D = diag(d)`, `d_k = 1/x_k²`
//!   (diagonal plus a rank-one correction). Its `N − 1` eigenpairs: (a) for every group of `m` equal `d`'s (values
//!   within a relative `1e-12` are grouped: a backward perturbation of that size), an `(m−1)`-dimensional
//!   eigenspace spanned by Helmert vectors supported on the group (eigenvalue the group's `d`); (b) with `G`
//!   distinct values `δ_1 < … < δ_G` (multiplicities `m_g`), `G − 1` eigenvalues `λ`, one in each `(δ_j, δ_{j+1})`,
//!   roots of the secular equation `Σ_g m_g/(δ_g − λ) = 0`, eigenvector `e_k ∝ 1/(δ_{g(k)} − λ)`. Only the drawn
//!   pair is computed: the root by bisection in the offset from the nearer pole (so the differences `δ_g − λ` are
//!   accurate), capped at [`SIMPLEX_BISECTION_CAP`] halvings. Cost per round `O(N log N)` (a sort) plus `O(N)`
//!   per halving (about 50-100 halvings); no allocation.
//! * **Exploration.** With the unit eigenvector `e`, `q = eᵀ∇²R e = Σ_k e_k² d_k` (= `λ` up to rounding);
//!   `y = x + s q^{−1/2} e` and `ℓ̂ = N' f̂ s q^{1/2} e`. Since `q ≥ e_k²/x_k²` for every `k`, `|y_k − x_k| ≤ x_k`:
//!   `y ≥ 0` (to rounding, `≥ −4·2⁻⁵³ x_k`) and `Σ y = 1` — the unit Dikin ellipsoid lies in the simplex, nothing
//!   is projected.
//!
//! Privacy: as PrivateEXP3 — one Laplace release per round of a value in `[−B, B]`, so `λ = 2B/ε` makes the
//! played points ε-DP per round's loss (replacement). With exact noise (the Python wrapper's default,
//! `sampler="exact"`) the clipped feedback is rounded onto a power-of-two grid and integer discrete Laplace noise
//! is added, `f̂_t = (round(f_t/γ) + Z_t)·γ`, `Z_t ~ DLap(t)` of [`crate::noise::release::exact_laplace`] with
//! `Δ₁ = 2B`: exactly ε-DP for the released floats; the eigen-direction and sign draws and every later float
//! computation are post-processing with data-independent randomness. `λ` is then the effective scale `t·γ`.

use serde::{Deserialize, Serialize};

use crate::domains::{Domain, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_finite, check_positive};
use crate::losses::{LossFamily, LossKind};
use crate::noise::grid::{ExactDistribution, ExactNoise};
use crate::noise::release::release_on_grid;
use crate::noise::{NoiseDistribution, Sampler, SumOf, WithSampler};
use crate::rng::{Generator, Seed};

use super::Learner;

/// The barrier's domain.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Barrier {
    Box { mid: Vec<f64>, half: Vec<f64> },
    Ball { radius: f64 },
    Simplex,
}

/// Iteration cap of the simplex argmin's Newton method (it needs about `log₂ N + 6`).
pub const SIMPLEX_NEWTON_CAP: u64 = 200;
/// Cap on the halvings of the secular-equation bisection (an f64 interval shrinks to one ulp within ~2100).
pub const SIMPLEX_BISECTION_CAP: u64 = 2200;
/// Smallest ball radius or box half-width accepted: the barrier's Hessian (`~ 1/width²`) must stay a normal
/// float64.
pub const MIN_WIDTH: f64 = 1e-150;
/// Relative tolerance below which two Hessian diagonal values are treated as equal (deflated).
const SIMPLEX_GROUP_TOL: f64 = 1e-12;

/// Per-round buffers of the simplex barrier (not serialised; rebuilt on restore).
#[derive(Debug, Default)]
struct SimplexScratch {
    /// Indices sorted by `d` ascending.
    order: Vec<usize>,
    /// `d` of the sorted positions, rounded to their group's first value.
    rep: Vec<f64>,
    /// `rep − origin` of the secular root being solved.
    diff: Vec<f64>,
    /// Candidate `L̂` and `x` of the next round (committed only when the argmin succeeds).
    next_estimate: Vec<f64>,
    next_center: Vec<f64>,
}

impl SimplexScratch {
    fn new(n: usize) -> Result<Self> {
        Ok(SimplexScratch {
            order: crate::alloc::zeros("simplex eigen order", n)?,
            rep: crate::alloc::zeros("simplex eigen values", n)?,
            diff: crate::alloc::zeros("simplex secular differences", n)?,
            next_estimate: crate::alloc::zeros("loss estimate", n)?,
            next_center: crate::alloc::zeros("FTRL point", n)?,
        })
    }
}

/// `x = argmin_{Σx=1} η⟨l, x⟩ − Σ ln x_i` into `out` (module docs, "The simplex").
///
/// Errors: [`CoreError::IterationLimit`] at [`SIMPLEX_NEWTON_CAP`]; [`CoreError::NonFinite`] when `η l` has a
/// non-finite spread or a coordinate of `x` underflows (its barrier Hessian `1/x²` would overflow).
fn simplex_argmin(eta: f64, l: &[f64], out: &mut [f64]) -> Result<()> {
    let lo = l.iter().copied().fold(f64::INFINITY, f64::min);
    let mut z = 1.0;
    for iter in 0..SIMPLEX_NEWTON_CAP {
        let (mut g, mut dg) = (-1.0, 0.0);
        for (x, &v) in out.iter_mut().zip(l) {
            *x = 1.0 / (eta * (v - lo) + z);
            g += *x;
            dg += *x * *x;
        }
        if !(g.is_finite() && dg.is_finite()) {
            return Err(CoreError::NonFinite {
                name: "simplex argmin (eta * loss estimate)",
                index: iter as usize,
                value: g,
            });
        }
        let step = g / dg;
        if g <= 0.0 || step <= 4.0 * f64::EPSILON * z {
            if let Some(index) = out
                .iter()
                .position(|&x| !(x > 0.0 && (1.0 / (x * x)).is_finite()))
            {
                return Err(CoreError::NonFinite {
                    name: "simplex barrier Hessian 1/x^2",
                    index,
                    value: out[index],
                });
            }
            return Ok(());
        }
        z += step;
    }
    Err(CoreError::IterationLimit {
        routine: "PrivateSCRiBLe simplex argmin (Newton)",
        limit: SIMPLEX_NEWTON_CAP,
        detail: String::new(),
    })
}

/// The `index`-th (of `N − 1`) unit eigenvector of the simplex barrier's Hessian on `1^⊥` at `x` into `dir`;
/// returns `q = dirᵀ diag(1/x²) dir` (module docs, "The simplex"). Indices `< N − G` are the deflated (Helmert)
/// vectors group by group, the others the secular roots in increasing order.
///
/// Errors: [`CoreError::IterationLimit`] at [`SIMPLEX_BISECTION_CAP`] (not expected).
fn simplex_direction(
    x: &[f64],
    scratch: &mut SimplexScratch,
    index: usize,
    dir: &mut [f64],
) -> Result<f64> {
    let n = x.len();
    let SimplexScratch {
        order, rep, diff, ..
    } = scratch;
    for (k, o) in order.iter_mut().enumerate() {
        *o = k;
    }
    // d = 1/x² ascending ⇔ x descending.
    order.sort_unstable_by(|&a, &b| x[b].total_cmp(&x[a]));
    let curvature = |k: usize| {
        let v = x[k];
        1.0 / (v * v)
    };
    // Groups: runs of sorted positions within a relative SIMPLEX_GROUP_TOL of the run's first value.
    let mut groups = 0usize;
    let mut start_value = 0.0;
    for (pos, &k) in order.iter().enumerate() {
        let d = curvature(k);
        if pos == 0 || d > start_value * (1.0 + SIMPLEX_GROUP_TOL) {
            start_value = d;
            groups += 1;
        }
        rep[pos] = start_value;
    }
    dir.fill(0.0);
    let deflated = n - groups;
    if index < deflated {
        // Walk the groups: a group of m positions owns m − 1 Helmert vectors.
        let mut remaining = index;
        let mut pos = 0;
        while pos < n {
            let mut end = pos + 1;
            while end < n && rep[end] == rep[pos] {
                end += 1;
            }
            let m = end - pos;
            if remaining < m - 1 {
                let r = remaining + 1; // Helmert vector r: (1, …, 1 (r times), −r, 0, …)/sqrt(r(r+1)).
                let norm = ((r * (r + 1)) as f64).sqrt();
                for &k in &order[pos..pos + r] {
                    dir[k] = 1.0 / norm;
                }
                dir[order[pos + r]] = -(r as f64) / norm;
                break;
            }
            remaining -= m - 1;
            pos = end;
        }
    } else {
        // Secular root between the j-th and (j+1)-th distinct values.
        let j = index - deflated;
        let (mut seen, mut lower, mut upper) = (0usize, f64::NAN, f64::NAN);
        for pos in 0..n {
            if pos == 0 || rep[pos] != rep[pos - 1] {
                if seen == j {
                    lower = rep[pos];
                } else if seen == j + 1 {
                    upper = rep[pos];
                    break;
                }
                seen += 1;
            }
        }
        // F(τ) = σ Σ 1/(rep − origin − στ), increasing in τ, −∞ at τ = 0+.
        let mid = lower + 0.5 * (upper - lower);
        let at_mid: f64 = rep.iter().map(|&r| 1.0 / (r - mid)).sum();
        let (origin, sigma, width) = if at_mid >= 0.0 {
            (lower, 1.0, mid - lower)
        } else {
            (upper, -1.0, upper - mid)
        };
        for (dv, &r) in diff.iter_mut().zip(rep.iter()) {
            *dv = r - origin;
        }
        let secular = |tau: f64| -> f64 {
            sigma * diff.iter().map(|&dv| 1.0 / (dv - sigma * tau)).sum::<f64>()
        };
        let (mut lo, mut hi) = (0.0f64, width);
        let mut converged = false;
        for _ in 0..SIMPLEX_BISECTION_CAP {
            let t = lo + 0.5 * (hi - lo);
            if t <= lo || t >= hi {
                converged = true;
                break;
            }
            if secular(t) < 0.0 {
                lo = t;
            } else {
                hi = t;
            }
        }
        if !converged {
            return Err(CoreError::IterationLimit {
                routine: "PrivateSCRiBLe simplex secular-equation bisection",
                limit: SIMPLEX_BISECTION_CAP,
                detail: String::new(),
            });
        }
        let tau = hi; // > lo >= 0, so no division by zero below
        for (&k, &dv) in order.iter().zip(diff.iter()) {
            dir[k] = 1.0 / (dv - sigma * tau);
        }
        // Enforce Σ e = 0 (exact for the exact root) and unit length.
        let mean = dir.iter().sum::<f64>() / n as f64;
        dir.iter_mut().for_each(|v| *v -= mean);
        let norm = dir.iter().map(|v| v * v).sum::<f64>().sqrt();
        dir.iter_mut().for_each(|v| *v /= norm);
    }
    let q: f64 = dir
        .iter()
        .zip(x)
        .map(|(&e, &v)| {
            let w = e / v;
            w * w
        })
        .sum();
    if !(q.is_finite() && q > 0.0) {
        return Err(CoreError::NonFinite {
            name: "simplex exploration curvature",
            index,
            value: q,
        });
    }
    Ok(q)
}

/// Constants of PrivateSCRiBLe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScribleParams {
    /// Horizon `T`.
    pub horizon: u64,
    /// Dimension `N` of the points.
    pub dim: usize,
    /// `n`, the number of exploration directions = dimension of the domain's affine hull (`N`; `N − 1` for the
    /// simplex): the estimator's factor and the `n` of `η` and of the bound.
    pub estimator_dim: usize,
    /// Bound `B` on `|⟨ℓ, y⟩|` (feedback clipped to `[−B, B]`).
    pub loss_bound: f64,
    /// Laplace scale `λ` (0 = non-private).
    pub noise_scale: f64,
    /// `B' = B + 2λ ln T`: the range of the noisy feedback with probability `≥ 1 − 1/T`.
    pub noisy_range: f64,
    /// Barrier parameter `ν` (2N for the box, 1 for the ball, N for the simplex).
    pub nu: f64,
    /// Step size `η = sqrt(ν ln T / (2 n² B'² T))`.
    pub eta: f64,
}

impl ScribleParams {
    /// Regret bound `ν ln T / η + 2 η n² B'² T + B` (the SCRiBLe analysis, Abernethy-Hazan-Rakhlin 2012
    /// Theorem 5.1 with the feedback range `B'`; the last `B` pays for the noise event's complement).
    pub fn regret_bound(&self) -> f64 {
        let (n, tf) = (self.estimator_dim as f64, self.horizon as f64);
        let log_t = tf.ln().max(1.0);
        self.nu * log_t / self.eta
            + 2.0 * self.eta * n * n * self.noisy_range * self.noisy_range * tf
            + self.loss_bound
    }
}

struct ScalarDraw<'a> {
    rng: &'a mut Generator,
}

impl WithSampler for ScalarDraw<'_> {
    type Output = f64;
    #[inline]
    fn call<S: Sampler>(self, s: S) -> f64 {
        crate::with_generator!(self.rng, g => s.sample(g))
    }
}

/// Check that `exact` (if any) is discrete Laplace noise of effective scale `noise_scale` whose grid holds the
/// feedback range `[−B, B]` (so every release is exact).
fn check_exact(exact: Option<&ExactNoise>, noise_scale: f64, loss_bound: f64) -> Result<()> {
    let Some(exact) = exact else {
        return Ok(());
    };
    let laplace = matches!(
        exact.dist,
        ExactDistribution::DiscreteLaplace { t } if (1..=1u64 << 52).contains(&t)
    );
    if !laplace
        || exact.scale() != noise_scale
        || exact
            .grid
            .integer_sensitivity_l1(2.0 * loss_bound, 1)
            .is_err()
    {
        return Err(CoreError::invalid(
            "exact",
            "discrete Laplace noise whose effective scale is the noise scale, on a grid holding [-B, B]",
            exact.name(),
        ));
    }
    Ok(())
}

/// The PrivateSCRiBLe learner (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct PrivateScrible {
    params: ScribleParams,
    barrier: Barrier,
    domain: Domain,
    /// `L̂`, the sum of the loss estimates.
    estimate: Vec<f64>,
    /// `x_t`, the FTRL point.
    center: Vec<f64>,
    /// `y_t`, the played point.
    played: Vec<f64>,
    /// `s λ_i^{1/2} e_i · n` for the pending round (the estimate is `f̂` times this).
    gain: Vec<f64>,
    #[serde(skip)]
    scratch: SimplexScratch,
    rng: Generator,
    noise_rng: Generator,
    #[serde(skip, default = "super::unset_feedback_noise")]
    noise: SumOf,
    /// Exact discrete Laplace noise on its grid (module docs); `None`: floating-point `Laplace(λ)`.
    exact: Option<ExactNoise>,
    t: u64,
    pending: bool,
    strict: bool,
    clipped: u64,
    /// The last released noisy feedback `f̂_t`.
    last_release: f64,
}

impl PrivateScrible {
    /// A learner on a `Box`, `L2Ball` or `Simplex` domain for `horizon` rounds, feedback bound `B`, Laplace scale `λ`:
    /// the exact discrete Laplace `exact` when given (its effective scale must be `λ`, as
    /// [`crate::noise::release::scalar_laplace`] returns them), floating-point `Laplace(λ)` otherwise.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another domain, `T < 1`, a bad `B` or `λ`, an `exact` noise
    /// whose scale is not `λ` or whose grid does not hold `[−B, B]`, or non-finite derived constants.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        domain: Domain,
        horizon: u64,
        loss_bound: f64,
        noise_scale: f64,
        exact: Option<ExactNoise>,
        seed: Seed,
        secure: bool,
        strict: bool,
    ) -> Result<Self> {
        crate::error::check_horizon(horizon)?;
        check_positive("loss_bound", loss_bound)?;
        crate::error::check_nonnegative("noise scale", noise_scale)?;
        check_exact(exact.as_ref(), noise_scale, loss_bound)?;
        let n = domain.dim();
        let (barrier, nu) = match &domain {
            Domain::Box(_) => {
                let mut d = domain.clone();
                let (mut lower, mut upper) = (vec![0.0; n], vec![0.0; n]);
                d.lmo(&vec![1.0; n], &mut lower);
                d.lmo(&vec![-1.0; n], &mut upper);
                let mid = lower
                    .iter()
                    .zip(&upper)
                    .map(|(l, u)| 0.5 * (l + u))
                    .collect();
                let half = lower
                    .iter()
                    .zip(&upper)
                    .map(|(l, u)| 0.5 * (u - l))
                    .collect();
                (Barrier::Box { mid, half }, 2.0 * n as f64)
            }
            Domain::L2Ball(_) => (
                Barrier::Ball {
                    radius: domain.diameter() / 2.0,
                },
                1.0,
            ),
            Domain::Simplex(_) => (Barrier::Simplex, n as f64),
            other => {
                return Err(CoreError::InvalidArgument {
                    name: "domain",
                    allowed: "a Box, an L2Ball or a Simplex (domains with a barrier argmin and eigen-decomposition)",
                    value: other.kind().to_string(),
                });
            }
        };
        // The barrier's Hessian scales as 1/width²: below MIN_WIDTH it over- or underflows (NaN points).
        let narrowest = match &barrier {
            Barrier::Box { half, .. } => half.iter().copied().fold(f64::INFINITY, f64::min),
            Barrier::Ball { radius } => *radius,
            Barrier::Simplex => f64::INFINITY,
        };
        if narrowest.is_nan() || narrowest < MIN_WIDTH {
            return Err(CoreError::InvalidArgument {
                name: "domain",
                allowed: "a ball radius and box half-widths >= 1e-150 (the barrier's Hessian scales as \
                          1/width^2); rescale the domain",
                value: format!("{narrowest:e}"),
            });
        }
        let is_simplex = matches!(barrier, Barrier::Simplex);
        let estimator_dim = if is_simplex { n - 1 } else { n };
        let tf = horizon as f64;
        let range = loss_bound + 2.0 * noise_scale * tf.ln();
        let nf = estimator_dim as f64;
        let eta = (nu * tf.ln().max(1.0) / (2.0 * nf * nf * range * range * tf)).sqrt();
        if !(eta.is_finite() && eta > 0.0 && (range * nf * tf).is_finite()) {
            return Err(CoreError::InvalidArgument {
                name: "horizon/loss_bound/epsilon",
                allowed: "values whose step size and noise range are finite and > 0",
                value: format!("eta = {eta}, range = {range}"),
            });
        }
        let params = ScribleParams {
            horizon,
            dim: n,
            estimator_dim,
            loss_bound,
            noise_scale,
            noisy_range: range,
            nu,
            eta,
        };
        let mut learner = PrivateScrible {
            params,
            barrier,
            domain,
            estimate: crate::alloc::zeros("loss estimate", n)?,
            center: crate::alloc::zeros("FTRL point", n)?,
            played: crate::alloc::zeros("played point", n)?,
            gain: crate::alloc::zeros("exploration direction", n)?,
            scratch: if is_simplex {
                SimplexScratch::new(n)?
            } else {
                SimplexScratch::default()
            },
            rng: Generator::for_stream(&seed, 2, secure)?,
            noise_rng: Generator::for_stream(&seed, 1, secure)?,
            noise: NoiseDistribution::laplace(noise_scale)?.sum_of(1),
            exact,
            t: 0,
            pending: false,
            strict,
            clipped: 0,
            last_release: 0.0,
        };
        learner.update_center()?;
        Ok(learner)
    }

    /// The current FTRL point `x_t` (the centre of the exploration).
    pub fn center(&self) -> &[f64] {
        &self.center
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The exact noise and its grid, or `None` for the floating-point sampler.
    pub fn exact(&self) -> Option<&ExactNoise> {
        self.exact.as_ref()
    }

    /// The last released noisy feedback `f̂_t` (0 before the first round).
    pub fn last_release(&self) -> f64 {
        self.last_release
    }

    /// `x = argmin η⟨L̂, x⟩ + R(x)` (module docs).
    ///
    /// Errors: those of the simplex argmin; the centre is then unchanged.
    fn update_center(&mut self) -> Result<()> {
        let eta = self.params.eta;
        match &self.barrier {
            Barrier::Simplex => {
                simplex_argmin(eta, &self.estimate, &mut self.scratch.next_center)?;
                std::mem::swap(&mut self.center, &mut self.scratch.next_center);
            }
            Barrier::Box { mid, half } => {
                for (((x, &g), &m), &h) in self
                    .center
                    .iter_mut()
                    .zip(&self.estimate)
                    .zip(mid)
                    .zip(half)
                {
                    let c = eta * g;
                    *x = m - c * h * h / (1.0 + (1.0 + c * c * h * h).sqrt());
                }
            }
            Barrier::Ball { radius } => {
                let norm = self.estimate.iter().map(|v| v * v).sum::<f64>().sqrt();
                let a = eta * norm;
                if a > 0.0 && a.is_finite() {
                    let r = *radius;
                    let tau = a * r * r / (1.0 + (1.0 + a * a * r * r).sqrt());
                    for (x, &g) in self.center.iter_mut().zip(&self.estimate) {
                        *x = -tau * g / norm;
                    }
                } else {
                    self.center.fill(0.0);
                }
            }
        }
        Ok(())
    }

    /// The point `y_t` to play (asking again before `tell` returns the same point).
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<&[f64]> {
        if self.pending {
            return Ok(&self.played);
        }
        self.check_rounds_fit(1, self.params.horizon)?;
        self.explore()?;
        Ok(&self.played)
    }

    /// Draw the eigen-direction and sign, set `played` and `gain`.
    fn explore(&mut self) -> Result<()> {
        let n = self.params.estimator_dim;
        let nf = n as f64;
        let i = ((self.rng.open01() * nf) as usize).min(n - 1);
        let sign = if self.rng.open01() < 0.5 { -1.0 } else { 1.0 };
        self.step(i, sign)
    }

    /// Set `played` and `gain` for eigen-direction `i` (of `estimator_dim`) and sign `s`; then `pending`.
    fn step(&mut self, i: usize, sign: f64) -> Result<()> {
        let nf = self.params.estimator_dim as f64;
        self.gain.fill(0.0);
        match &self.barrier {
            Barrier::Simplex => {
                let q = simplex_direction(&self.center, &mut self.scratch, i, &mut self.played)?;
                let root = q.sqrt();
                for ((g, d), &c) in self
                    .gain
                    .iter_mut()
                    .zip(self.played.iter_mut())
                    .zip(&self.center)
                {
                    *g = nf * sign * root * *d;
                    *d = c + sign * *d / root;
                }
            }
            Barrier::Box { mid, half } => {
                let (x, m, h) = (self.center[i], mid[i], half[i]);
                let (up, down) = (m + h - x, x - (m - h));
                let lambda = 1.0 / (up * up) + 1.0 / (down * down);
                let root = lambda.sqrt();
                self.played.copy_from_slice(&self.center);
                self.played[i] = x + sign / root;
                self.gain[i] = nf * sign * root;
            }
            Barrier::Ball { radius } => {
                let xs: f64 = self.center.iter().map(|v| v * v).sum();
                let sigma = radius * radius - xs;
                let norm = xs.sqrt();
                // Orthonormal basis: columns of the Householder reflection H with H e_1 = x̂ (or e_i when x = 0).
                // λ = 2/σ + 4‖x‖²/σ² for i = 0, 2/σ otherwise; as a product (σ² underflows for r < 1e-77).
                let root = if i == 0 {
                    (2.0 / sigma).sqrt() * (1.0 + 2.0 * (xs / sigma)).sqrt()
                } else {
                    (2.0 / sigma).sqrt()
                };
                // Column i of H = I − 2 v vᵀ/‖v‖², v = e_1 − x̂ (H = I when x̂ = e_1 or x = 0).
                let dir = &mut self.played;
                dir.fill(0.0);
                dir[i] = 1.0;
                if norm > 0.0 {
                    let mut vv = 0.0;
                    for (k, &c) in self.center.iter().enumerate() {
                        let v = f64::from(u8::from(k == 0)) - c / norm;
                        vv += v * v;
                    }
                    if vv > 1e-30 {
                        let vi = f64::from(u8::from(i == 0)) - self.center[i] / norm;
                        let coef = 2.0 * vi / vv;
                        for (k, (d, &c)) in dir.iter_mut().zip(&self.center).enumerate() {
                            let v = f64::from(u8::from(k == 0)) - c / norm;
                            *d -= coef * v;
                        }
                    }
                }
                for ((g, d), &c) in self.gain.iter_mut().zip(dir.iter_mut()).zip(&self.center) {
                    *g = nf * sign * root * *d;
                    *d = c + sign * *d / root;
                }
            }
        }
        self.pending = true;
        Ok(())
    }

    /// Report `⟨ℓ_t, y_t⟩` for the asked point.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without `ask`; [`CoreError::NonFinite`]; with `strict`,
    /// [`CoreError::InvalidArgument`] for `|loss| > B`.
    pub fn tell(&mut self, loss: f64) -> Result<()> {
        super::check_asked(self.pending, "loss per asked point")?;
        check_finite("loss", &[loss])?;
        self.check_strict(loss)?;
        self.update(loss)
    }

    /// With `strict`, refuse a loss outside `[−B, B]` ([`super::check_strict_symmetric`]).
    fn check_strict(&self, loss: f64) -> Result<()> {
        super::check_strict_symmetric(self.strict, loss, self.params.loss_bound, self.t + 1)
    }

    /// Release the noisy feedback, update `L̂` and the FTRL point. Floating point before the release (issue
    /// 21): none but the clamp to `[−B, B]`, which is exact, so neighbours' released values differ by at most
    /// the calibrated `2B`; the gain scaling comes after the release (post-processing). On an error (simplex argmin only) `L̂`, `x_t`,
    /// `t` and the pending point are unchanged; the noise draw is consumed and never used.
    fn update(&mut self, loss: f64) -> Result<()> {
        let bound = self.params.loss_bound;
        let clamped = loss.clamp(-bound, bound);
        let released = match &self.exact {
            Some(exact) => {
                let mut z = [0i64];
                exact.fill(&mut self.noise_rng, &mut z)?;
                release_on_grid(&exact.grid, clamped, z[0])?
            }
            None => {
                clamped
                    + self.noise.with_sampler(ScalarDraw {
                        rng: &mut self.noise_rng,
                    })
            }
        };
        let last = self.t + 1 >= self.params.horizon;
        if matches!(self.barrier, Barrier::Simplex) {
            let next = &mut self.scratch.next_estimate;
            for ((nl, &l), &g) in next.iter_mut().zip(&self.estimate).zip(&self.gain) {
                *nl = l + released * g;
            }
            if !last {
                simplex_argmin(self.params.eta, next, &mut self.scratch.next_center)?;
                std::mem::swap(&mut self.center, &mut self.scratch.next_center);
            }
            std::mem::swap(&mut self.estimate, &mut self.scratch.next_estimate);
        } else {
            for (l, g) in self.estimate.iter_mut().zip(&self.gain) {
                *l += released * g;
            }
            if !last {
                self.update_center()?;
            }
        }
        if loss.abs() > bound {
            self.clipped += 1;
        }
        self.last_release = released;
        self.pending = false;
        self.t += 1;
        Ok(())
    }
}

impl Learner for PrivateScrible {
    const NAME: &'static str = "PrivateSCRiBLe";
    type Family<'a> = &'a LossFamily;

    super::learner_accessors!(ScribleParams);

    /// Check that `rounds` rounds of a linear `family` can be played, without changing anything.
    ///
    /// Errors: [`CoreError::Protocol`], [`CoreError::Shape`], [`CoreError::InvalidArgument`] (non-linear family,
    /// or losses whose sum may overflow: [`super::check_family_fits`]), [`CoreError::HorizonExhausted`].
    fn check_run(&self, family: &LossFamily, rounds: u64) -> Result<()> {
        super::check_idle(self.pending, "point")?;
        if family.kind() != LossKind::Linear {
            return Err(CoreError::invalid(
                "losses",
                "a linear family",
                "a portfolio family",
            ));
        }
        super::check_dim("losses", "dimension", self.params.dim, family.dim())?;
        self.check_rounds_fit(rounds, self.params.horizon.min(family.horizon()))?;
        super::check_family_fits(family, self.t, rounds, super::domain_extent(&self.domain))
    }

    super::play_by_rounds!(|l, family| {
        l.explore()?;
        let loss = family.value(l.t, &l.played);
        l.check_strict(loss)?;
        l.update(loss)?;
        Ok(loss)
    });

    /// The invariants of a decoded learner (see [`super::Learner::check_state`]).
    ///
    /// Errors: [`CoreError::State`] for corrupt or inconsistent bytes.
    fn check_state(&mut self) -> Result<()> {
        let n = self.params.dim;
        let fits = match &self.barrier {
            Barrier::Box { mid, half } => mid.len() == n && half.len() == n,
            Barrier::Ball { .. } | Barrier::Simplex => true,
        };
        let consistent = fits
            && self.t <= self.params.horizon
            && self.clipped <= self.t
            && self.params.noise_scale.is_finite()
            && self.params.noise_scale >= 0.0
            && [&self.estimate, &self.center, &self.played, &self.gain]
                .iter()
                .all(|v| crate::state::all_finite(v))
            && n > 0
            && self.domain.dim() == n
            && [&self.estimate, &self.center, &self.played, &self.gain]
                .iter()
                .all(|v| v.len() == n);
        if !consistent {
            return Err(CoreError::State(
                "PrivateSCRiBLe state is inconsistent".into(),
            ));
        }
        let expected_dim = if matches!(self.barrier, Barrier::Simplex) {
            n.checked_sub(1)
        } else {
            Some(n)
        };
        if expected_dim != Some(self.params.estimator_dim) || self.params.estimator_dim == 0 {
            return Err(CoreError::State(
                "PrivateSCRiBLe state is inconsistent".into(),
            ));
        }
        check_exact(
            self.exact.as_ref(),
            self.params.noise_scale,
            self.params.loss_bound,
        )
        .map_err(|_| CoreError::State("PrivateSCRiBLe state is inconsistent".into()))?;
        if matches!(self.barrier, Barrier::Simplex) {
            self.scratch = SimplexScratch::new(n)?;
        }
        self.noise = NoiseDistribution::laplace(self.params.noise_scale)?.sum_of(1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domains::{Hyperrectangle, L2Ball, Simplex};

    /// A simplex learner whose FTRL point is the argmin for `estimate`.
    fn simplex_at(n: usize, estimate: &[f64]) -> PrivateScrible {
        let domain = Domain::Simplex(Simplex::new(n).unwrap());
        let mut l = PrivateScrible::new(domain, 100, 1.0, 0.0, None, [7; 4], false, false).unwrap();
        l.estimate = estimate.to_vec();
        l.update_center().unwrap();
        l
    }

    #[test]
    fn simplex_argmin_meets_the_optimality_conditions() {
        let cases: Vec<Vec<f64>> = vec![
            vec![0.0; 5],
            vec![1.0, -2.0, 3.0, 0.5, 0.5],
            vec![1e6, -1e6, 0.0],
            vec![40.0, 0.0],
            (0..300).map(|k| ((k * 37) % 101) as f64 - 50.0).collect(),
        ];
        for est in cases {
            let n = est.len();
            let l = simplex_at(n, &est);
            let (x, eta) = (&l.center, l.params.eta);
            assert!(
                (x.iter().sum::<f64>() - 1.0).abs() < 1e-13 * n as f64,
                "{x:?}"
            );
            assert!(x.iter().all(|&v| v > 0.0));
            // Stationarity on the hull: η L̂_i − 1/x_i is the same for every i.
            let m: Vec<f64> = x.iter().zip(&est).map(|(v, e)| eta * e - 1.0 / v).collect();
            let scale = x.iter().map(|v| 1.0 / v).fold(0.0, f64::max);
            for v in &m {
                assert!((v - m[0]).abs() < 1e-12 * scale, "{m:?}");
            }
        }
    }

    /// Hessian of −Σ ln x_i restricted to 1^⊥, applied to a vector of 1^⊥: Π diag(1/x²) v.
    fn restricted_hessian_times(x: &[f64], v: &[f64]) -> Vec<f64> {
        let dv: Vec<f64> = v.iter().zip(x).map(|(a, b)| a / (b * b)).collect();
        let mean = dv.iter().sum::<f64>() / x.len() as f64;
        dv.iter().map(|a| a - mean).collect()
    }

    #[test]
    fn simplex_directions_are_an_orthonormal_eigenbasis_and_the_estimate_is_unbiased_on_the_hull() {
        let cases: Vec<Vec<f64>> = vec![
            vec![0.0; 6],                             // x uniform: one group, all Helmert vectors
            vec![1.0, -2.0, 3.0, 0.5, 0.5, 0.5, 2.0], // a tie
            vec![0.3, -1.0, 2.0, 0.5],                // distinct
            vec![1.0, 1.0 + 1e-9, 1.0 + 2e-9, -3.0, 50.0], // near ties (relative 1e-9..1e-11 in d)
            vec![200.0, 0.0],                         // N = 2, one direction
            (0..40).map(|k| ((k * 17) % 23) as f64 * 3.0).collect(), // many ties, large spread
        ];
        for est in cases {
            let n = est.len();
            let mut l = simplex_at(n, &est);
            let x = l.center.clone();
            let np = n - 1;
            assert_eq!(l.params.estimator_dim, np);
            let ell: Vec<f64> = (0..n).map(|k| ((k * 7) % 5) as f64 * 0.2 - 0.3).collect();
            let ell_mean = ell.iter().sum::<f64>() / n as f64;
            let mut basis = Vec::new();
            let mut mean_estimate = vec![0.0; n];
            for i in 0..np {
                for sign in [-1.0, 1.0] {
                    l.pending = false;
                    l.step(i, sign).unwrap();
                    let y = l.played.clone();
                    assert!(y.iter().all(|&v| v >= -1e-15), "{y:?}");
                    assert!((y.iter().sum::<f64>() - 1.0).abs() < 1e-13);
                    let f: f64 = ell.iter().zip(&y).map(|(a, b)| a * b).sum();
                    for (m, g) in mean_estimate.iter_mut().zip(&l.gain) {
                        *m += f * g / (2 * np) as f64;
                    }
                    if sign > 0.0 {
                        let e: Vec<f64> = y.iter().zip(&x).map(|(a, b)| a - b).collect();
                        basis.push(e);
                    }
                }
            }
            // Each step d = y − x: dᵀ∇²R d = 1 (unit Dikin ellipsoid) and H d ∥ d (an eigenvector).
            let unit: Vec<Vec<f64>> = basis
                .iter()
                .map(|d| {
                    let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
                    d.iter().map(|v| v / norm).collect()
                })
                .collect();
            for (d, e) in basis.iter().zip(&unit) {
                let hd = restricted_hessian_times(&x, d);
                let quad: f64 = d.iter().zip(&hd).map(|(a, b)| a * b).sum();
                assert!((quad - 1.0).abs() < 1e-10, "{quad}");
                let he = restricted_hessian_times(&x, e);
                let lambda: f64 = e.iter().zip(&he).map(|(a, b)| a * b).sum();
                let resid = he
                    .iter()
                    .zip(e)
                    .map(|(a, b)| (a - lambda * b).powi(2))
                    .sum::<f64>()
                    .sqrt();
                assert!(resid < 1e-8 * lambda, "residual {resid} lambda {lambda}");
                assert!(e.iter().sum::<f64>().abs() < 1e-12);
            }
            for (a, ea) in unit.iter().enumerate() {
                for (b, eb) in unit.iter().enumerate() {
                    let dot: f64 = ea.iter().zip(eb).map(|(p, q)| p * q).sum();
                    let want = if a == b { 1.0 } else { 0.0 };
                    assert!((dot - want).abs() < 1e-10, "{a} {b} {dot}");
                }
            }
            // Exact expectation over the 2N' equally likely (i, s): Π ℓ = ℓ − mean(ℓ).
            for (m, v) in mean_estimate.iter().zip(&ell) {
                assert!(
                    (m - (v - ell_mean)).abs() < 1e-10,
                    "{mean_estimate:?} vs {ell:?}"
                );
            }
        }
    }

    #[test]
    fn played_points_are_feasible_and_estimates_unbiased_directions() {
        for domain in [
            Domain::Box(Hyperrectangle::new(vec![-1.0, 0.0, 2.0], vec![1.0, 3.0, 2.5]).unwrap()),
            Domain::L2Ball(L2Ball::new(3, 2.0).unwrap()),
            Domain::Simplex(Simplex::new(3).unwrap()),
        ] {
            let mut l = PrivateScrible::new(
                domain.clone(),
                2000,
                5.0,
                1.0,
                None,
                [1, 2, 3, 4],
                false,
                false,
            )
            .unwrap();
            for t in 0..2000 {
                let y = l.ask().unwrap().to_vec();
                assert!(domain.contains(&y, 1e-12), "{} t={t} {y:?}", domain.kind());
                // The exploration step has Hessian norm 1 (it lies on the Dikin ellipsoid).
                let loss = 0.3 * y[0] - 0.2 * y[1] + 0.1 * y[2];
                l.tell(loss).unwrap();
            }
        }
    }

    #[test]
    fn the_step_lies_on_the_dikin_ellipsoid_along_an_eigenvector() {
        // For d = y − x: dᵀ∇²R(x) d = 1 and the estimate direction is n ∇²R(x) d (= n s λ^{1/2} e).
        let n = 4;
        type Hessian = Box<dyn Fn(&[f64]) -> Vec<Vec<f64>>>;
        let hessians: Vec<(Domain, Hessian)> = vec![
            (
                Domain::L2Ball(L2Ball::new(n, 1.5).unwrap()),
                Box::new(|x: &[f64]| {
                    let sigma = 2.25 - x.iter().map(|v| v * v).sum::<f64>();
                    (0..4)
                        .map(|i| {
                            (0..4)
                                .map(|j| {
                                    f64::from(u8::from(i == j)) * 2.0 / sigma
                                        + 4.0 * x[i] * x[j] / (sigma * sigma)
                                })
                                .collect()
                        })
                        .collect()
                }),
            ),
            (
                Domain::Box(Hyperrectangle::new(vec![-1.0; 4], vec![1.0, 2.0, 3.0, 4.0]).unwrap()),
                Box::new(|x: &[f64]| {
                    let upper = [1.0, 2.0, 3.0, 4.0];
                    (0..4)
                        .map(|i| {
                            (0..4)
                                .map(|j| {
                                    if i == j {
                                        1.0 / (upper[i] - x[i]).powi(2) + 1.0 / (x[i] + 1.0).powi(2)
                                    } else {
                                        0.0
                                    }
                                })
                                .collect()
                        })
                        .collect()
                }),
            ),
        ];
        for (domain, hessian) in hessians {
            let mut l =
                PrivateScrible::new(domain, 100, 1.0, 0.0, None, [0; 4], false, false).unwrap();
            l.estimate = vec![0.3, -1.0, 2.0, 0.5];
            l.update_center().unwrap();
            let x = l.center.clone();
            let h = hessian(&x);
            for _ in 0..50 {
                l.pending = false;
                l.explore().unwrap();
                let d: Vec<f64> = l.played.iter().zip(&x).map(|(y, c)| y - c).collect();
                let hd: Vec<f64> = h
                    .iter()
                    .map(|row| row.iter().zip(&d).map(|(a, b)| a * b).sum())
                    .collect();
                let quad: f64 = d.iter().zip(&hd).map(|(a, b)| a * b).sum();
                assert!((quad - 1.0).abs() < 1e-9, "{quad}");
                for (g, v) in l.gain.iter().zip(&hd) {
                    assert!(
                        (g - n as f64 * v).abs() < 1e-9 * (1.0 + g.abs()),
                        "{g} vs {v}"
                    );
                }
            }
        }
    }
}
