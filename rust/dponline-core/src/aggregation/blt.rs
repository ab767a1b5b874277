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
//!
//! The float path ([`SamplerKind::FloatingPoint`]) releases `Σ_{s<=t} x_s + Σ_{s<=t} ζ_s` with `ζ_t` from the
//! float samplers: the Mironov (2012) caveat applies.
//!
//! # The exact path ([`SamplerKind::Exact`], the default of the Python class and of the learners)
//!
//! The private view must be an integer vector with exact discrete noise added, and the release a function of
//! that vector alone (`super::lattice`). Adding integer noise `z` in the noise space and decoding, `A n + B z`,
//! does **not** work: its support is the lattice `A n + B ℤ^T`, which moves with the data by `A e_s ∉ B ℤ^T`
//! (because `C e_s` is not an integer vector), so neighbouring inputs would be told apart exactly. So the
//! encoder's output is rounded to the grid *before* the noise is added:
//!
//! 1. **Quantise** each row, `n_s = round(x_s/γ)` on the grid of the noise (`Grid::for_scale`, the scale in
//!    `[2³⁰, 2³¹)` units), as for the trees: `|n_s| < 2⁶²`.
//! 2. **Encode in integers.** The parameters are fixed-point numbers: `θ̂_j = a_j 2⁻⁵³`, `ω̂_j = b_j 2⁻⁵³`
//!    (every `θ`, `ω` the mechanism holds, on both paths, is rounded to the nearest multiple of `2⁻⁵³` when
//!    it is built: exact in `f64`, so the variance, the column norms and the decoder use the same `Ĉ`).
//!    With `r` fraction bits ([`Blt::fraction_bits`]), integer buffers `S_j` (`i128`, units `γ 2⁻ʳ`) run
//!    `S_j ← R(θ̂_j S_j) + 2ʳ n_t` after step `t`, and the encoded value of step `t` is
//!    `y_t = n_t + R(2⁻ʳ Σ_j R(ω̂_j S_j))`, `R` rounding to the nearest integer (ties away from zero), every
//!    product formed exactly in `192`-bit arithmetic.
//! 3. **Add exact noise**: the view is `v_t = y_t + z_t ∈ ℤ`, `z_t` i.i.d. discrete Laplace or discrete
//!    Gaussian in grid units (Canonne, Kamath & Steinke 2020).
//! 4. **Decode** (post-processing, a deterministic `f64` function of the view alone): `ζ̂_t = v_t − Σ_j ω̂_j
//!    D_j`, `D_j ← θ̂_j D_j + ζ̂_t`, release `γ · round(Σ_{s<=t} ζ̂_s)` (`Σ ζ̂ = (B̂ v)_t`, `B̂ = A Ĉ⁻¹`, up to
//!    the decoder's float rounding): an integer times the grid, like every exact release, so the low bits of
//!    the output carry nothing but the noise's.
//!
//! **Lemma (encoder rounding).** Let `y*_t = (Ĉ n)_t` (exact reals). Then `|y_t − y*_t| <= η := 1/2 + (d +
//! Σ_j ω̂_j/(1 − θ̂_j)) / 2^{r+1}` for every `t`. *Proof.* With `S*_j` the unrounded recurrence
//! (`S*_j ← θ̂_j S*_j + 2ʳ n_t`), `2⁻ʳ Σ_j ω̂_j S*_j(t) = Σ_{i>=1} ĉ_i n_{t−i}`, so `y*_t = n_t + 2⁻ʳ Σ_j ω̂_j
//! S*_j(t)`. The error `E_j = S_j − S*_j` obeys `E_j ← θ̂_j E_j + ρ`, `|ρ| <= 1/2`, `E_j(0) = 0`, so `|E_j| <=
//! 1/(2(1 − θ̂_j))`; the `d` inner roundings add at most `d/2`, the outer one `1/2` (in grid units, after
//! the `2⁻ʳ`). ∎
//!
//! **Sensitivity (single participation, one row `s` replaced).** Coordinates are encoded independently and
//! causally, so `y` and `y′` agree before step `s` and on every coordinate whose rounded input is unchanged;
//! for `t >= s` on a changed coordinate, `y_t − y′_t = ĉ_{t−s}(n_s − n′_s) + (e_t − e′_t)` with `|e_t −
//! e′_t| <= 2η` (the Lemma). With `m <= dim` changed coordinates and the grid Lemma for `n_s − n′_s`
//! (`super::lattice`):
//!
//! * `‖y − y′‖₂ <= ‖ĉ‖₂ (Δ₂/γ + √dim) + 2η √(T·m)`,
//! * `‖y − y′‖₁ <= ‖ĉ‖₁ (⌈Δ₁/γ⌉ + dim) + 2η T·m`,
//!
//! i.e. the trees' integer sensitivity with the column norms of `Ĉ` ([`PrefixSumMechanism::sensitivity_l1`] /
//! `_l2`), plus the slack of [`PrefixSumMechanism::rounding_slack`] `= (2ηT, 2η√T)` per changed coordinate
//! (times `dim` in L1, `√dim` in L2). The discrete Laplace of scale `t` is then exactly ε = (that L1 bound)/t
//! -DP, and the discrete Gaussian `ρ = (that L2 bound)²/(2σ²)`-zCDP (CKS 2020; `dponline.privacy.discrete`).
//! The slack is a few grid units per step against a noise of `2³⁰` units: at `T = 2²⁰`, `dim = 100`, `ε = 1`,
//! it adds about `2⁻¹⁵` to the Gaussian's sensitivity (in L1 it grows like `T`, not `√T`: about `2⁻¹⁰` at
//! `T = 2²⁰`, `ε = 1`, `dim = 1`). The column norms are the closed forms of the float path, computed in `f64` (sums of positive
//! terms by binary doubling, relative error far below `2⁻⁴⁰`) and reported times `1 + 2⁻⁴⁰`, so they bound
//! the exact norms.
//!
//! **Fraction bits.** `r = min(40, 60 − ⌈log₂(max(2/(1 − θ̂_d), Σ_j ω̂_j/(1 − θ̂_j)) + 1)⌉)`, from the
//! parameters alone: with `|n| < 2⁶²`, `|S_j| <= (2^{62+r} + 1/2)/(1 − θ̂_j)` and `|Σ_j R(ω̂_j S_j)| <=
//! 2^{62+r} Σ_j ω̂_j/(1 − θ̂_j) + d`, all below `2¹²⁵`: no intermediate can overflow `i128`, whatever the data
//! (so no push can fail on a data-dependent overflow). Parameters so long-memory that `r < 0` (about `1 − θ̂_d <
//! 2⁻⁵⁹`) are refused on the exact path.
//!
//! **Variance.** The release is `γ (B̂ v)_t = γ (Σ_{s<=t} n_s + (B̂ e)_t + (B̂ z)_t)` with `e = y − Ĉ n` a
//! deterministic function of the data (the rounding is deterministic, not random: it shifts the mean by at
//! most `η Σ_{n<t} |r_n|` grid units and adds no variance). So the variance is exactly `V(t) · Var(z)` with
//! `V(t)` of `Ĉ` and `Var(z)` the discrete law's ([`PrefixSumMechanism::variance`]). What the computed
//! release adds to this exact-arithmetic one: the decoder's float rounding (relative `~2⁻⁵³` per operation)
//! and the final rounding to the grid (at most `γ/2`, i.e. below `2⁻³¹` of a noise standard deviation, which
//! moves the standard deviation by at most that much).

use serde::{Deserialize, Serialize};

use super::PrefixSumMechanism;
use super::lattice::{
    Guarded, Lattice, SamplerKind, all_finite, node_sampler, push_guarded, push_rows, restored_node,
};
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

/// The parameters `θ`, `ω` are multiples of `2^-FIXED_BITS` (module docs, "The exact path").
const FIXED_BITS: i32 = 53;

/// Largest number of fraction bits `r` of the exact encoder's buffers.
const MAX_FRACTION_BITS: i32 = 40;

/// Relative margin on the float-computed column norms (module docs, "Sensitivity").
const NORM_MARGIN: f64 = 1.0 + 1.0 / (1u64 << 40) as f64;

/// `v` rounded to the nearest multiple of `2⁻⁵³` (exact in `f64` for `0 <= v < 2`).
fn fixed_point(v: f64) -> f64 {
    (v * 2f64.powi(FIXED_BITS)).round() * 2f64.powi(-FIXED_BITS)
}

/// `R(s · a / 2⁵³)`: the product rounded to the nearest integer, ties away from zero, formed exactly in 192
/// bits. Needs `a < 2⁵⁴` and a result below `2¹²⁷` in magnitude (module docs, "Fraction bits").
#[inline]
fn mul_round(s: i128, a: u64) -> i128 {
    let m = s.unsigned_abs();
    let (hi, lo) = (m >> 64, m & u128::from(u64::MAX));
    // m·a = hi·a·2⁶⁴ + lo·a; (m·a + 2⁵²) >> 53 = hi·a·2¹¹ + (lo·a + 2⁵²) >> 53 (2⁶⁴ is a multiple of 2⁵³).
    let low = (lo * u128::from(a) + (1u128 << (FIXED_BITS - 1))) >> FIXED_BITS;
    let magnitude = ((hi * u128::from(a)) << (64 - FIXED_BITS)) + low;
    let r = magnitude as i128;
    if s < 0 { -r } else { r }
}

/// `R(u / 2ʳ)`, ties away from zero.
#[inline]
fn shift_round(u: i128, r: u32) -> i128 {
    if r == 0 {
        return u;
    }
    let m = (u.unsigned_abs() + (1u128 << (r - 1))) >> r;
    let m = m as i128;
    if u < 0 { -m } else { m }
}

/// One step of the exact encoder on one coordinate (module docs, "The exact path", step 2): returns `y_t = n_t
/// + R(2⁻ʳ Σ_j R(ω̂_j S_j))` and advances `S_j ← R(θ̂_j S_j) + 2ʳ n_t`. `a`, `b`: `θ̂ 2⁵³`, `ω̂ 2⁵³`.
#[inline]
fn encode(buffers: &mut [i128], a: &[u64], b: &[u64], bits: u32, n: i128) -> i128 {
    let u: i128 = buffers.iter().zip(b).map(|(s, &w)| mul_round(*s, w)).sum();
    for (s, &th) in buffers.iter_mut().zip(a) {
        *s = mul_round(*s, th) + (n << bits);
    }
    n + shift_round(u, bits)
}

/// The exact encoder's fraction bits `r` for fixed-point parameters (module docs, "Fraction bits"), `None`
/// if the parameters are too long-memory for `r >= 0`.
fn fraction_bits(theta: &[f64], omega: &[f64]) -> Option<u32> {
    let memory = theta.last().map_or(1.0, |t| 2.0 / (1.0 - t));
    let weight: f64 = theta.iter().zip(omega).map(|(t, w)| w / (1.0 - t)).sum();
    let bits = (memory.max(weight) + 1.0).log2().ceil();
    let r = (60.0 - bits).min(f64::from(MAX_FRACTION_BITS));
    (r >= 0.0).then_some(r as u32)
}

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
    crate::error::check_horizon(horizon)?;
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

crate::state::checked_state! {
    /// The BLT mechanism over `horizon` pushes of `dim`-vectors.
    #[derive(Debug, Serialize, Deserialize)]
    #[serde(try_from = "BltState")]
    pub struct Blt via BltState {
        dim: usize,
        horizon: u64,
        theta: Vec<f64>,
        omega: Vec<f64>,
        objective: BltObjective,
        fit: Option<BltFit>,
        noise: NoiseDistribution,
        t: u64,
        /// Exact running sum of the inputs (float path; zeros on the exact path).
        prefix: Vec<f64>,
        /// Running sum of the correlated noise `ζ` (float path) or of the decoded `ζ̂` in grid units (exact path).
        noise_sum: Vec<f64>,
        /// Buffers `S_j` of the noise recurrence (float path) or `D_j` of the decoder (exact path),
        /// coordinate-major: entry `i · d + j`.
        buffers: Vec<f64>,
        rng: Generator,
        /// The exact path's noise and grid (`None` on the float path; module docs, "The exact path").
        lattice: Option<Lattice>,
        /// The exact encoder's integer buffers `S_j` in units `γ 2⁻ʳ`, coordinate-major (empty on the float path).
        encoder: Vec<i128>,
    }
    rebuilt {
        spec: Option<Spectrum>,
        norms: (f64, f64),
        /// Fraction bits `r` of the exact encoder (`None`: parameters too long-memory for it).
        bits: Option<u32>,
        /// `θ̂_j 2⁵³` then `ω̂_j 2⁵³` (the exact encoder's integer parameters).
        fixed: Vec<u64>,
        initial: Vec<f64>,
        node: SumOf,
    }
}

impl TryFrom<BltState> for Blt {
    type Error = CoreError;

    fn try_from(s: BltState) -> Result<Self> {
        let bad = || CoreError::State("BLT state is inconsistent".into());
        check_params(&s.theta, &s.omega).map_err(|_| bad())?;
        let fixed = |v: &[f64]| v.iter().all(|&x| fixed_point(x) == x);
        let rows = s.dim.checked_mul(s.theta.len()).ok_or_else(bad)?;
        let consistent = s.dim > 0
            && s.horizon > 0
            && s.t <= s.horizon
            && fixed(&s.theta)
            && fixed(&s.omega)
            && s.prefix.len() == s.dim
            && s.noise_sum.len() == s.dim
            && s.buffers.len() == rows
            && s.encoder.len() == if s.lattice.is_some() { rows } else { 0 }
            && all_finite(&[&s.prefix, &s.noise_sum, &s.buffers]);
        if !consistent {
            return Err(bad());
        }
        let mut lattice = s.lattice;
        let node = restored_node(&mut lattice, s.dim, true, s.noise)?;
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
            lattice,
            encoder: s.encoder,
            spec: None,
            norms: (1.0, 1.0),
            bits: None,
            fixed: Vec::new(),
            initial: zeros("dim", s.dim)?,
            node,
        };
        blt.derive()?;
        if blt.lattice.is_some() && blt.bits.is_none() {
            return Err(bad());
        }
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

/// One push on the exact path (module docs, "The exact path"): `x` holds the row in grid units (integers),
/// `out` receives the release in grid units.
struct ExactStep<'a> {
    rng: &'a mut Generator,
    theta: &'a [f64],
    omega: &'a [f64],
    /// `θ̂_j 2⁵³` and `ω̂_j 2⁵³` (integers below `2⁵⁴`).
    a: &'a [u64],
    b: &'a [u64],
    bits: u32,
    encoder: &'a mut [i128],
    decoded: &'a mut [f64],
    decoder: &'a mut [f64],
    x: &'a [f64],
    out: &'a mut [f64],
}

impl WithSampler for ExactStep<'_> {
    type Output = ();
    #[inline]
    fn call<S: Sampler>(self, node: S) {
        let ExactStep {
            rng,
            theta,
            omega,
            a,
            b,
            bits,
            encoder,
            decoded,
            decoder,
            x,
            out,
        } = self;
        let d = theta.len();
        // The row's draws first, into `out` (one bit stream for the row, as the trees' `fill`), then each
        // coordinate's draw is replaced by its release.
        crate::with_generator!(rng, g => node.fill(g, out));
        {
            for ((((o, n), xi), enc), dec) in out
                .iter_mut()
                .zip(decoded.iter_mut())
                .zip(x)
                .zip(encoder.chunks_exact_mut(d))
                .zip(decoder.chunks_exact_mut(d))
            {
                // `xi` is an integer below 2⁶² in magnitude (the push guard's quantisation): exact in i128.
                let y = encode(enc, a, b, bits, *xi as i128);
                let z = *o;
                if z.is_nan() {
                    // A failed draw (probability below 1e-600): poison the decoder so every later push fails.
                    dec.fill(f64::NAN);
                    *n = f64::NAN;
                    *o = f64::NAN;
                    continue;
                }
                // The view v_t = y_t + z_t (an integer); from here on only v_t is used: post-processing.
                let v = (y + z as i128) as f64;
                let feedback: f64 = omega.iter().zip(dec.iter()).map(|(w, s)| w * s).sum();
                let zeta = v - feedback;
                for (s, th) in dec.iter_mut().zip(theta) {
                    *s = th * *s + zeta;
                }
                *n += zeta;
                // On the grid, like every exact release (a function of the view: still post-processing).
                *o = crate::noise::grid::round_ties_even(*n);
            }
        }
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

    /// A BLT mechanism with explicit parameters `θ` (strictly increasing in (0, 1)) and `ω` (> 0), each rounded
    /// to the nearest multiple of `2⁻⁵³` (module docs, "The exact path"), on the floating-point path
    /// ([`Blt::with_sampler`] selects the exact one).
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
        super::check_sizes(dim, horizon)?;
        check_params(theta, omega)?;
        let theta: Vec<f64> = theta.iter().map(|&v| fixed_point(v)).collect();
        let omega: Vec<f64> = omega.iter().map(|&v| fixed_point(v)).collect();
        check_params(&theta, &omega)?;
        let rows = checked_len("dim", dim, theta.len())?;
        let mut blt = Blt {
            dim,
            horizon,
            theta,
            omega,
            objective: BltObjective::Max,
            fit: None,
            noise,
            t: 0,
            prefix: zeros("dim", dim)?,
            noise_sum: zeros("dim", dim)?,
            buffers: zeros("dim", rows)?,
            rng,
            lattice: None,
            encoder: Vec::new(),
            spec: None,
            norms: (1.0, 1.0),
            bits: None,
            fixed: Vec::new(),
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

    /// The same mechanism drawing its noise by `sampler`, before any push. With [`SamplerKind::Exact`] and a
    /// scale > 0: the exact path of the module docs (the noise is the exact discrete law of at least the
    /// configured scale on the grid of [`crate::noise::grid::Grid::for_scale`]; [`PrefixSumMechanism::noise`]
    /// reports the effective scale). Scale 0 or [`SamplerKind::FloatingPoint`]: unchanged.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `scale` unless, on the exact path, it is in `[1e-150,
    /// 1e150]`, or naming `theta, omega` if the parameters are too long-memory for the exact encoder (module
    /// docs, "Fraction bits"); [`CoreError::State`] after a push.
    pub fn with_sampler(mut self, sampler: SamplerKind) -> Result<Self> {
        if self.t != 0 {
            return Err(CoreError::State(
                "the BLT sampler is chosen before the first push".into(),
            ));
        }
        let (node, lattice) = node_sampler(self.dim, self.noise, sampler, true)?;
        if lattice.is_some() {
            if self.bits.is_none() {
                return Err(CoreError::invalid(
                    "theta, omega",
                    "parameters whose exact encoder fits 128-bit integers (1 − θ_d above about 2^-59)",
                    format!("{:?}", self.theta),
                ));
            }
            self.encoder = vec![0; self.buffers.len()];
        }
        self.lattice = lattice;
        self.node = node;
        Ok(self)
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
        self.norms = (l1 * NORM_MARGIN, l2sq.sqrt() * NORM_MARGIN);
        self.spec = Some(spec);
        self.bits = fraction_bits(&self.theta, &self.omega);
        // θ̂, ω̂ are multiples of 2⁻⁵³ below 2 (stability gives ω_j < 1 + θ_j): integers below 2⁵⁴.
        let scale = 2f64.powi(FIXED_BITS);
        self.fixed = self
            .theta
            .iter()
            .chain(&self.omega)
            .map(|v| (v * scale) as u64)
            .collect();
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

    /// Fraction bits `r` of the exact encoder's buffers (module docs, "Fraction bits"); `None` if the parameters
    /// are too long-memory for the exact path.
    pub fn fraction_bits(&self) -> Option<u32> {
        self.bits
    }

    /// `η`, the bound of the Lemma (module docs) on `|y_t − (Ĉ n)_t|` in grid units: `1/2 + (d + Σ_j ω̂_j/(1 −
    /// θ̂_j)) / 2^{r+1}`, rounded up by a relative `2⁻⁴⁰`; `+∞` if there is no exact encoder.
    pub fn encoder_rounding(&self) -> f64 {
        let Some(r) = self.bits else {
            return f64::INFINITY;
        };
        let weight: f64 = self
            .theta
            .iter()
            .zip(&self.omega)
            .map(|(t, w)| w / (1.0 - t))
            .sum();
        (0.5 + (self.theta.len() as f64 + weight) * 2f64.powi(-(r as i32) - 1)) * NORM_MARGIN
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
        if self.lattice.is_some() {
            let (a, b) = self.fixed.split_at(self.theta.len());
            node.with_sampler(ExactStep {
                rng: &mut self.rng,
                theta: &self.theta,
                omega: &self.omega,
                a,
                b,
                // Present whenever the lattice is (`with_sampler`, `try_from`).
                bits: self.bits.unwrap_or(0),
                encoder: &mut self.encoder,
                decoded: &mut self.noise_sum,
                decoder: &mut self.buffers,
                x,
                out,
            });
            return;
        }
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
    shared_methods!(guard);
    fn folds_values(&self) -> bool {
        true
    }
    fn push_checked(&mut self, xs: &[f64], out: &mut [f64]) {
        push_rows(self.dim, xs, out, |x, o| self.push_unchecked(x, o));
    }
}

impl PrefixSumMechanism for Blt {
    shared_methods!(mechanism);
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
    /// `V(horizon)`: `V(t) = Σ_{n<t} r_n²` is a sum of squares, nondecreasing in `t`.
    fn max_unit_variance(&self) -> Result<f64> {
        self.unit_variance(self.horizon)
    }
    fn sensitivity_l1(&self) -> f64 {
        self.norms.0
    }
    fn sensitivity_l2(&self) -> f64 {
        self.norms.1
    }
    /// `(2ηT, 2η√T)` with `η` of [`Blt::encoder_rounding`] (module docs, "Sensitivity"): the same on both
    /// paths, since it depends on the parameters only (what a calibration reads off a float-path probe).
    fn rounding_slack(&self) -> (f64, f64) {
        let eta2 = 2.0 * self.encoder_rounding();
        let t = self.horizon as f64;
        (eta2 * t, eta2 * t.sqrt())
    }
    fn state_nbytes(&self) -> usize {
        16 * self.encoder.capacity()
            + self.lattice.as_ref().map_or(0, Lattice::nbytes)
            + 8 * self.fixed.capacity()
            + 8 * (self.prefix.capacity()
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
    use crate::aggregation::Mechanism;
    use rand_core::Rng;

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
    fn fixed_point_products_are_exact() {
        use num_bigint::BigInt;
        let mut g = Generator::from_seed([5; 4]);
        let exact = |s: i128, a: u64| -> i128 {
            // R(s·a/2⁵³), ties away from zero, in big integers.
            let p = BigInt::from(s.unsigned_abs()) * BigInt::from(a);
            let m: BigInt = (p + (BigInt::from(1) << 52)) >> 53;
            let m = i128::try_from(m).unwrap();
            if s < 0 { -m } else { m }
        };
        for i in 0..20_000u32 {
            let s = (i128::from(g.next_u64()) << 59 | i128::from(g.next_u64())) >> (i % 80);
            let s = if i % 2 == 0 { s } else { -s };
            let a = g.next_u64() >> 10; // below 2⁵⁴
            assert_eq!(mul_round(s, a), exact(s, a), "{s} {a}");
        }
        for (u, r, want) in [
            (5i128, 1u32, 3i128),
            (-5, 1, -3),
            (4, 1, 2),
            (7, 2, 2),
            (-6, 2, -2),
            (9, 0, 9),
        ] {
            assert_eq!(shift_round(u, r), want, "{u} {r}");
        }
    }

    #[test]
    fn exact_encoder_meets_its_rounding_lemma_and_sensitivity() {
        // y − Ĉn within η at every step (n small, so the f64 reference is exact to ~1e-9), and neighbouring
        // streams' encodings within ‖ĉ‖·|Δn| + the slack of `rounding_slack`.
        let horizon = 3000u64;
        let (theta, omega, _) = optimize_blt(horizon, 4, BltObjective::Max).unwrap();
        let noise = NoiseDistribution::Gaussian { sigma: 1.0 };
        let blt = Blt::with_params(
            1,
            horizon,
            &theta,
            &omega,
            noise,
            Generator::from_seed([0; 4]),
        )
        .unwrap()
        .with_sampler(SamplerKind::Exact)
        .unwrap();
        let (c, _) = dense(blt.theta(), blt.omega(), horizon as usize);
        let bits = blt.fraction_bits().unwrap();
        assert!((20..=40).contains(&bits), "{bits}");
        let eta = blt.encoder_rounding();
        assert!(eta > 0.5 && eta < 0.5 + 1e-3, "{eta}");
        let (a, b) = blt.fixed.split_at(4);
        let mut g = Generator::from_seed([9; 4]);
        let n: Vec<i128> = (0..horizon)
            .map(|_| i128::from(g.next_u64() % 2001) - 1000)
            .collect();
        let mut m = n.clone();
        m[7] += 1234;
        let (mut s1, mut s2) = (vec![0i128; 4], vec![0i128; 4]);
        let (mut l1, mut l2sq) = (0.0f64, 0.0f64);
        for t in 0..horizon as usize {
            let y = encode(&mut s1, a, b, bits, n[t]);
            let y2 = encode(&mut s2, a, b, bits, m[t]);
            let reference: f64 = (0..=t).map(|i| c[i] * n[t - i] as f64).sum();
            assert!((y as f64 - reference).abs() <= eta + 1e-6, "t={t}");
            let d = (y - y2) as f64;
            l1 += d.abs();
            l2sq += d * d;
        }
        let (slack1, slack2) = blt.rounding_slack();
        assert!(l1 <= 1234.0 * blt.sensitivity_l1() + slack1);
        assert!(l2sq.sqrt() <= 1234.0 * blt.sensitivity_l2() + slack2);
        // The rounding slack is small next to the main term at these sizes.
        assert!(slack2 < 2.0 * eta * (horizon as f64).sqrt() * (1.0 + 1e-9));
    }

    #[test]
    fn exact_release_decodes_the_view_and_replays_bit_exactly() {
        let noise = NoiseDistribution::Laplace { scale: 0.75 };
        let build = || {
            Blt::new(
                2,
                64,
                3,
                BltObjective::Mean,
                noise,
                Generator::from_seed([3; 4]),
            )
            .unwrap()
            .with_sampler(SamplerKind::Exact)
            .unwrap()
        };
        let (mut p, mut q) = (build(), build());
        assert_eq!(p.sampler(), SamplerKind::Exact);
        let gamma = p.grid().unwrap().gamma();
        let mut sum = [0.0; 2];
        let (mut o1, mut o2) = ([0.0; 2], [0.0; 2]);
        for t in 0..64 {
            let x = [0.3 * t as f64, -2.0];
            p.push(&x, &mut o1).unwrap();
            q.push(&x, &mut o2).unwrap();
            assert_eq!(o1.map(f64::to_bits), o2.map(f64::to_bits));
            for i in 0..2 {
                sum[i] += p.grid().unwrap().quantize(x[i]).unwrap() as f64 * gamma;
                assert!((o1[i] - sum[i]).abs() < 100.0, "{t}");
            }
            if t == 30 {
                q = Mechanism::from_bytes(&Mechanism::from(q).to_bytes().unwrap())
                    .map(|m| match m {
                        Mechanism::Blt(b) => *b,
                        _ => unreachable!(),
                    })
                    .unwrap();
            }
        }
        // Too late to choose the sampler.
        assert!(p.with_sampler(SamplerKind::FloatingPoint).is_err());
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
