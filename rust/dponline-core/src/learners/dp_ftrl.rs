//! DP-FTRL: follow the regularised leader on the tree's private prefix sums of the loss vectors.
//!
//! Source: Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017),
//! Algorithm 1 (restated in `agarwal-singh-notes.md`):
//!
//! ```text
//! L̃_0 = tree output before any data
//! for t = 1..T:  x_t = argmin_{x ∈ X} η⟨x, L̃_{t−1}⟩ + R(x);  play x_t;  observe ℓ_t;  L̃_t = TreeBasedAgg(ℓ_t)
//! ```
//!
//! The tree is the padded [`TreeAggregator`] (their Algorithm 2): every `L̃_t` carries exactly
//! `max(1, ⌈log₂T⌉)` independent noise draws per coordinate.
//!
//! The argmin ([`Step`]) is computed exactly where a closed form exists:
//! * negative entropy on the simplex: `x = softmax(−η L̃)`, in log-domain (shifted by the maximum, so it never
//!   overflows and the largest term is exactly 1);
//! * `½‖x‖²` on the L2 ball: `x = Π(−η L̃)`, radial scaling; on a box: coordinate-wise clamping; on the
//!   simplex: the sort-based projection (Held, Wolfe & Crowder 1974; Duchi et al. 2008), `O(n log n)`;
//! * `½‖x‖²` on any other domain: Frank-Wolfe on `½‖x‖² − ⟨−η L̃, x⟩` with exact line search, `lmo_calls`
//!   LMO calls per round, warm-started from the previous action (projection-free).
//!
//! Loss vectors are clipped to the declared bound `‖ℓ‖ ≤ G` (L1 norm for Laplace noise, L2 for Gaussian)
//! before they enter the tree: that is what makes the declared sensitivity `2G` (replacement of one round)
//! hold for any input — for the exact norm of the row computed in floating point too (issue 21: the shift,
//! the dual clip and the norm are float computations on private data; Lemma *rounded clip*,
//! [`super::clip_to_bound`]). With `strict`, a longer vector is an error instead.
//!
//! Linearised convex losses (Jain-Kothari-Thakurta 2012, Smith-Thakurta 2013): [`DpFtrl::run`] over a
//! portfolio family feeds the gradient `∇f_t(x_t) = −r_t/⟨r_t, x_t⟩` (clipped) as the loss vector.
//!
//! Centred losses ([`DpFtrlParams::with_loss_shift`], simplex only): a constant `c` declared before the data is
//! subtracted from every coordinate of every loss vector before clipping, so the tree sums `ℓ_t − c·1`. On the
//! simplex `⟨x, c·1⟩ = c` for every `x`, so every argmin (any regulariser) and every regret are unchanged, while
//! the declared bound `G` can be that of the centred vectors — for the linearised portfolio loss with relatives
//! in `[a, b]`, coordinates in `[−b/a, −a/b]` centred at their midpoint lie in `±(b/a − a/b)/2`.

use serde::{Deserialize, Serialize};

use crate::aggregation::{Mechanism, MechanismSpec, PrefixSumMechanism, TopUp, padded_draws};
use crate::domains::{Domain, LinearMinimizationOracle};
use crate::error::{CoreError, Result, check_finite, check_horizon, check_positive};
use crate::frank_wolfe::FrankWolfe;
use crate::learners::{Checkpoints, Learner, MechanismSetup};
use crate::losses::LossFamily;
use crate::noise::NoiseDistribution;
use crate::rng::{Generator, Seed};

/// The regulariser `R` of the FTRL step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Regularizer {
    /// `R(x) = Σ x_i ln x_i` (simplex only): exponential weights / Hedge.
    NegativeEntropy,
    /// `R(x) = ½‖x‖²`: the FTRL step is the Euclidean projection of `−η L̃`.
    Euclidean,
    /// No regulariser: `x = lmo(L̃)`, follow the perturbed leader (DP-FTPL, Agarwal-Singh Algorithm 3) — the
    /// tree's noise is the perturbation; `η` plays no role.
    None,
}

impl Regularizer {
    /// Parse `"entropy"` or `"euclidean"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "entropy" => Ok(Regularizer::NegativeEntropy),
            "euclidean" => Ok(Regularizer::Euclidean),
            "none" => Ok(Regularizer::None),
            other => Err(CoreError::invalid(
                "regularizer",
                "'entropy', 'euclidean' or 'none'",
                format!("{other:?}"),
            )),
        }
    }

    /// `"entropy"` or `"euclidean"`.
    pub fn name(self) -> &'static str {
        match self {
            Regularizer::NegativeEntropy => "entropy",
            Regularizer::Euclidean => "euclidean",
            Regularizer::None => "none",
        }
    }
}

/// The norm in which loss vectors are bounded (and clipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LossNorm {
    /// `‖ℓ‖₁ ≤ G` (Laplace noise: L1 sensitivity).
    L1,
    /// `‖ℓ‖₂ ≤ G` (Gaussian noise: L2 sensitivity).
    L2,
}

impl LossNorm {
    /// Parse `"l1"` or `"l2"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "l1" => Ok(LossNorm::L1),
            "l2" => Ok(LossNorm::L2),
            other => Err(CoreError::invalid(
                "norm",
                "'l1' or 'l2'",
                format!("{other:?}"),
            )),
        }
    }

    /// `"l1"` or `"l2"`.
    pub fn name(self) -> &'static str {
        match self {
            LossNorm::L1 => "l1",
            LossNorm::L2 => "l2",
        }
    }

    /// The norm of `v` (the L2 norm is computed with scaling, so it never overflows for finite `v`).
    #[inline(always)]
    pub fn of(self, v: &[f64]) -> f64 {
        match self {
            LossNorm::L1 => l1_norm(v),
            LossNorm::L2 => l2_norm(v),
        }
    }
}

/// `Σ f(v_i)` with four partial sums (vectorises; the order is fixed, so the result is deterministic).
#[inline(always)]
fn sum_map(v: &[f64], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 4];
    let chunks = v.chunks_exact(4);
    let tail: f64 = chunks.remainder().iter().map(|&x| f(x)).sum();
    for c in chunks {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += f(x);
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `‖v‖₁`.
#[inline(always)]
fn l1_norm(v: &[f64]) -> f64 {
    sum_map(v, f64::abs)
}

/// `‖v‖₂` without overflow or underflow for finite `v` (scaled by `1/max|v_i|`).
#[inline(always)]
fn l2_norm(v: &[f64]) -> f64 {
    let m = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if m == 0.0 || !m.is_finite() {
        return m;
    }
    let inv = 1.0 / m;
    if inv.is_finite() {
        m * sum_map(v, |x| (x * inv) * (x * inv)).sqrt()
    } else {
        m * sum_map(v, |x| (x / m) * (x / m)).sqrt()
    }
}

/// `‖v‖₂` from `Σ v_i²` when that sum is safely inside the normal range, else the scaled [`l2_norm`].
#[inline(always)]
fn l2_from_squares(v: &[f64], squares: f64) -> f64 {
    if (1e-280..=1e280).contains(&squares) {
        squares.sqrt()
    } else {
        l2_norm(v)
    }
}

/// Clamp every coordinate of the finite `row` to `[−d, d]`; whether any changed, and `Σ|w_i|` (`L1`) or
/// `Σ w_i²` of the clamped row, with four partial sums in a fixed order. One branch-free pass (selects, not
/// `f64::clamp`, whose argument check is a branch), monomorphic in the norm so the loop vectorises.
#[inline(always)]
fn clamp_and_norm<const L1: bool>(row: &mut [f64], d: f64) -> (bool, f64) {
    let mut over = [false; 4];
    let mut acc = [0.0f64; 4];
    let clamp = |v: f64| {
        if v > d {
            d
        } else if v < -d {
            -d
        } else {
            v
        }
    };
    let term = |w: f64| if L1 { w.abs() } else { w * w };
    let mut chunks = row.chunks_exact_mut(4);
    for c in &mut chunks {
        for k in 0..4 {
            let v = c[k];
            over[k] |= v.abs() > d;
            let w = clamp(v);
            c[k] = w;
            acc[k] += term(w);
        }
    }
    let mut tail = 0.0;
    for v in chunks.into_remainder() {
        over[0] |= v.abs() > d;
        *v = clamp(*v);
        tail += term(*v);
    }
    (
        over.iter().any(|&o| o),
        (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail,
    )
}

/// Clip `row` to the declared bounds of `params` (the dual bound first, if declared below `G`, then `G`);
/// whether anything changed. At the level of its caller (dispatched once per round by the learner).
#[inline(always)]
fn clip_row(params: &DpFtrlParams, row: &mut [f64]) -> bool {
    let mut changed = false;
    let mut norm = None;
    if params.dual_clip {
        let d = params.dual_bound;
        if params.regularizer == Regularizer::NegativeEntropy {
            // One branch-free pass (vectorises): the clamp (it leaves the coordinates within ±d unchanged)
            // and the norm of the clamped row, four partial sums.
            let l1 = params.norm == LossNorm::L1;
            let (over, total) = if l1 {
                clamp_and_norm::<true>(row, d)
            } else {
                clamp_and_norm::<false>(row, d)
            };
            changed |= over;
            norm = Some(if l1 {
                total
            } else {
                l2_from_squares(row, total)
            });
        } else {
            let n2 = l2_norm(row);
            if n2 > d {
                let scale = d / n2;
                row.iter_mut().for_each(|v| *v *= scale);
                changed = true;
            }
        }
    }
    let norm = norm.unwrap_or_else(|| params.norm.of(row));
    // Lemma *rounded clip*: the exact norm of the pushed row is within `G` (the computed norms here meet its
    // hypothesis: `Σ|v_i|`, `√Σ v_i²` and the scaled `m·√Σ(v_i/m)²`).
    changed |= super::clip_to_bound(row, norm, params.loss_bound);
    changed
}

/// How the FTRL argmin is computed for a (domain, regulariser) pair.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Step {
    Softmax,
    Ball { radius: f64 },
    Box { lower: Vec<f64>, upper: Vec<f64> },
    SimplexProjection { sorted: Vec<f64> },
    FrankWolfe { fw: Box<FrankWolfe>, calls: u32 },
    Lmo,
}

impl Step {
    /// Whether the step's buffers fit dimension `n` (checked when a state is restored).
    fn fits(&self, n: usize) -> bool {
        match self {
            Step::Box { lower, upper } => lower.len() == n && upper.len() == n,
            Step::SimplexProjection { sorted } => sorted.len() == n && n > 0,
            Step::FrankWolfe { fw, .. } => fw.x().len() == n,
            Step::Softmax | Step::Ball { .. } | Step::Lmo => true,
        }
    }

    fn name(&self) -> &'static str {
        match self {
            Step::Softmax => "softmax",
            Step::Ball { .. } => "ball projection",
            Step::Box { .. } => "box projection",
            Step::SimplexProjection { .. } => "simplex projection",
            Step::FrankWolfe { .. } => "frank-wolfe",
            Step::Lmo => "lmo",
        }
    }
}

/// The declared constants of DP-FTRL and the step size derived from them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DpFtrlParams {
    /// Horizon `T`.
    pub horizon: u64,
    /// Dimension `n`.
    pub dim: usize,
    /// The regulariser.
    pub regularizer: Regularizer,
    /// Declared bound `G` on the loss vectors' norm.
    pub loss_bound: f64,
    /// The norm of the bound (L1 for Laplace, L2 for Gaussian).
    pub norm: LossNorm,
    /// `D_R = max_{u∈X} R(u) − min_{x∈X} R(x)` (an upper bound where not exact, see [`DpFtrlParams::new`]).
    pub regularizer_range: f64,
    /// Bound `G_*` on the dual norm of the loss vectors (`‖·‖_∞` for entropy, `‖·‖₂` otherwise): the declared
    /// one, else `G` (both dual norms are at most the L1 and the L2 norm).
    pub dual_bound: f64,
    /// Whether a dual bound below `G` was declared: loss vectors are then also clipped to it (coordinates to
    /// `±G_*` for entropy, the L2 norm to `G_*` otherwise) before the `G` clipping.
    pub dual_clip: bool,
    /// Step size `η`.
    pub eta: f64,
    /// Whether `η` is the default rule (noise-aware once [`DpFtrlParams::tune_for_noise`] has run).
    pub eta_default: bool,
    /// The noise of every release, as the step size and [`DpFtrlParams::perturbation_bound`] use it (none until
    /// [`DpFtrlParams::tune_for_noise`]).
    pub release_noise: ReleaseNoise,
    /// LMO calls per round for the Frank-Wolfe step (unused by the closed forms).
    pub lmo_calls: u32,
    /// Constant `c` subtracted from every coordinate of every loss vector before clipping (0 = none; non-zero
    /// only on the simplex, see [`DpFtrlParams::with_loss_shift`]).
    pub loss_shift: f64,
}

impl DpFtrlParams {
    /// The constants for `domain`.
    ///
    /// `D_R`: `ln n` (entropy on the simplex); `r²/2` (ball of radius `r`); `½Σ max(l_i², u_i²) −
    /// ½Σ dist(0, [l_i, u_i])²` (box); `½ − 1/(2n)` (simplex); `½(‖c‖ + D)²` for other domains (an upper bound
    /// from the interior point `c` and the diameter `D`). Default `η = sqrt(D_R / (T G_*²))` minimises the FTRL
    /// bound `D_R/η + η T G_*²` (Shalev-Shwartz 2012, Theorem 2.11), the tuning behind Agarwal-Singh
    /// Corollary 3.2.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `T < 1`, a non-positive bound or step size, entropy on a
    /// domain other than the simplex, `lmo_calls == 0`, or constants whose products overflow.
    // One argument per declared constant of the Python signature.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        domain: &Domain,
        horizon: u64,
        loss_bound: f64,
        norm: LossNorm,
        regularizer: Regularizer,
        learning_rate: Option<f64>,
        dual_bound: Option<f64>,
        lmo_calls: u32,
    ) -> Result<Self> {
        if let Some(d) = dual_bound {
            check_positive("dual_bound", d)?;
        }
        check_horizon(horizon)?;
        check_positive("loss_bound", loss_bound)?;
        super::check_clip_bound("loss_bound", loss_bound, domain.dim())?;
        if lmo_calls == 0 {
            return Err(CoreError::invalid("lmo_calls", ">= 1", lmo_calls));
        }
        let n = domain.dim();
        let range = match (regularizer, domain) {
            (Regularizer::NegativeEntropy, Domain::Simplex(_)) => (n as f64).ln(),
            (Regularizer::NegativeEntropy, other) => {
                return Err(CoreError::InvalidArgument {
                    name: "regularizer",
                    allowed: "'entropy' only on the Simplex (use 'euclidean' elsewhere)",
                    value: other.kind().to_string(),
                });
            }
            (Regularizer::Euclidean, Domain::L2Ball(_)) => {
                let r = domain.diameter() / 2.0;
                0.5 * r * r
            }
            (Regularizer::Euclidean, Domain::Simplex(_)) => 0.5 - 0.5 / n as f64,
            (Regularizer::Euclidean, Domain::Box(_)) => {
                let (lower, upper) = box_corners(domain);
                lower
                    .iter()
                    .zip(&upper)
                    .map(|(&l, &u)| {
                        let far = l.abs().max(u.abs());
                        let near = if l > 0.0 {
                            l
                        } else if u < 0.0 {
                            -u
                        } else {
                            0.0
                        };
                        0.5 * (far * far - near * near)
                    })
                    .sum()
            }
            (Regularizer::Euclidean, _) => {
                let c = l2_norm(domain.interior_point()) + domain.diameter();
                0.5 * c * c
            }
            (Regularizer::None, _) => 0.0,
        };
        let dual_clip = dual_bound.is_some_and(|d| d < loss_bound);
        let dual_bound = dual_bound.map_or(loss_bound, |d| d.min(loss_bound));
        let tf = horizon as f64;
        let (eta, eta_default) = match learning_rate {
            Some(eta) => {
                check_positive("learning_rate", eta)?;
                (eta, false)
            }
            // FTPL (no regulariser) plays lmo(L̃), which η does not change: 1, not a step size that underflows
            // to 0 for T > 2^53 and refuses a valid horizon.
            None if regularizer == Regularizer::None => (1.0, true),
            None => (
                (range.max(f64::MIN_POSITIVE) / tf).sqrt() / dual_bound,
                true,
            ),
        };
        let params = DpFtrlParams {
            horizon,
            dim: n,
            regularizer,
            loss_bound,
            norm,
            regularizer_range: range,
            dual_bound,
            dual_clip,
            eta,
            eta_default,
            release_noise: ReleaseNoise::NONE,
            lmo_calls,
            loss_shift: 0.0,
        };
        let derived = [
            ("regularizer range", range),
            ("eta", eta),
            ("eta * horizon * loss_bound", eta * tf * loss_bound * 1e6),
            ("the FTRL regret bound", params.ftrl_bound()),
        ];
        match derived.iter().find(|(_, v)| !(v.is_finite() && *v >= 0.0)) {
            None if eta > 0.0 => Ok(params),
            None => Err(CoreError::invalid("learning_rate", "> 0", eta)),
            Some((what, v)) => Err(CoreError::InvalidArgument {
                name: "loss_bound/learning_rate/horizon",
                allowed: "values whose derived constants are finite",
                value: format!("{what} = {v}"),
            }),
        }
    }

    /// Centre the loss vectors: feed `ℓ_t − c·1` (then clipped to `G`) instead of `ℓ_t`. `c` must be declared
    /// before the data (it is part of the mechanism). On the simplex `⟨x, ℓ − c·1⟩ = ⟨x, ℓ⟩ − c`, so
    /// `argmin η⟨x, L̃⟩ + R(x)` and the regret against any comparator are unchanged; `G` and `G_*` then bound
    /// the centred vectors.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for a non-finite `c`, or `c ≠ 0` on a domain other than the simplex
    /// (where `⟨x, 1⟩` is not constant, so centring would change the actions).
    pub fn with_loss_shift(mut self, domain: &Domain, shift: f64) -> Result<Self> {
        if !shift.is_finite() {
            return Err(CoreError::invalid("loss_shift", "finite", shift));
        }
        if shift != 0.0 && !matches!(domain, Domain::Simplex(_)) {
            return Err(CoreError::InvalidArgument {
                name: "loss_shift",
                allowed: "0 on a domain other than the Simplex (only there is <x, 1> constant)",
                value: format!("{shift} on {}", domain.kind()),
            });
        }
        self.loss_shift = shift;
        Ok(self)
    }

    /// The non-private FTRL regret bound `D_R/η + η T G_*²` (Shalev-Shwartz 2012, Theorem 2.11, for a
    /// regulariser 1-strongly convex in the norm dual to `G_*`: entropy in L1 on the simplex (Pinsker),
    /// `½‖x‖²` in L2). 0 without a regulariser (FTPL's bound depends on the perturbation).
    pub fn ftrl_bound(&self) -> f64 {
        if self.regularizer == Regularizer::None {
            return 0.0;
        }
        // (η G_*)·T·G_*: G_*² alone overflows for G_* > 1.3e154.
        self.regularizer_range / self.eta
            + self.eta * self.dual_bound * self.horizon as f64 * self.dual_bound
    }

    /// The noise term of the perturbed-FTRL bound at step size `eta`: `η·c·v` for the entropy (from the
    /// cumulant bound `ln E e^{−ηZ_i} ≤ c·η²·v`, valid for `η ≤ cap`; `∞` above it) and `η·n·v` for `½‖x‖²`
    /// (`E‖Z‖₂² = n·v`). See [`DpFtrlParams::tune_for_noise`].
    fn perturbation_term(&self, eta: f64) -> f64 {
        let noise = &self.release_noise;
        match self.regularizer {
            Regularizer::None => f64::INFINITY,
            Regularizer::NegativeEntropy if eta > noise.cap => f64::INFINITY,
            Regularizer::NegativeEntropy => eta * noise.cumulant_factor * noise.variance,
            Regularizer::Euclidean => eta * self.dim as f64 * noise.variance,
        }
    }

    /// Expected regret bound of FTRL on the released prefix sums against an oblivious adversary, with the noise
    /// inside the FTRL analysis: `D_R/η + η T G_*² + perturbation + η·G_*·O`, where the perturbation term is
    /// `η·c·v` (entropy) or `η·n·v` (`½‖x‖²`), `v` the per-coordinate variance of the noise of the last
    /// release, and `O` = [`ReleaseNoise::offset_sum`], the exact path's rounding (0 on the float path).
    ///
    /// **Needs nested releases** ([`ReleaseNoise::nested`]): in law, the noise of release `t` is
    /// `N_t = N_{t−1} + W_t` (`N_{−1} = 0`) with `W_t` independent of `N_{t−1}`, centred, its coordinates obeying
    /// the cumulant bound `ln E e^{λW} ≤ c·λ²·Var(W)` of [`ReleaseNoise`] for `|λ| ≤ cap`, and `Σ_t Var(W_t) ≤ v`.
    /// *Identically distributed* releases are nested (`W_0 = N_0`, then `W_t = 0`): the padded tree and a
    /// [`TopUp`]. So is **BLT with Gaussian noise**: its decoder is lower-triangular Toeplitz, `N_t = Σ_{s≤t}
    /// r_{t−s} z_s` with i.i.d. draws `z_s` (module docs of [`crate::aggregation::Blt`]), so in law `N_t =
    /// N_{t−1} + r_t z` with a fresh draw `z`, `Σ_{n≤t} r_n² = v_{t+1}`, and a Gaussian draw — continuous, or
    /// the discrete Gaussian, which is `σ²`-sub-Gaussian (Canonne-Kamath-Steinke 2020) — gives `c = ½` for every
    /// `λ`. The Honaker tree is not nested (its `v_t` is not monotone in `t`).
    ///
    /// *Proof* (entropy; the potential argument of Abernethy, Lee, Sinha & Tewari 2014, with a nested
    /// perturbation). Let `φ(y) = −(1/η) ln Σ_i e^{−η y_i}`: concave, `∇φ(y) = softmax(−ηy)` is the FTRL action,
    /// and `φ(y) ≤ min_i y_i`. Let `Φ_t(L) = E φ(L + N_{t−1})`. Leave the rounding out first. Against an oblivious
    /// adversary `ℓ_t` and `L_{t−1}` are fixed, so `E⟨ℓ_t, x_t⟩ = ⟨ℓ_t, ∇Φ_t(L_{t−1})⟩`: it depends on the law of
    /// `N_{t−1}` only, never on the correlations between releases. Hoeffding's lemma (`φ(y + ℓ) − φ(y) =
    /// −(1/η) ln E_{i∼softmax(−ηy)} e^{−ηℓ_i} ≥ ⟨∇φ(y), ℓ⟩ − ηG_*²/2`, then the expectation over the noise) gives
    /// `⟨ℓ_t, ∇Φ_t(L_{t−1})⟩ ≤ Φ_t(L_t) − Φ_t(L_{t−1}) + ηG_*²/2`, and summing,
    /// `E Σ_t⟨ℓ_t, x_t⟩ ≤ Φ_T(L_T) − Φ_1(0) + Σ_{t<T} [Φ_t(L_t) − Φ_{t+1}(L_t)] + ηTG_*²/2`.
    /// Jensen (`E N = 0`): `Φ_T(L_T) ≤ φ(L_T) ≤ L_{T,i*}`, and `−Φ_1(0) ≤ (1/η) ln Σ_i E e^{−ηW_{0,i}} ≤ ln n/η +
    /// c·η·Var(W_0)`. Each middle term is `E[(1/η) ln Σ_i p_i(y) e^{−ηW_{t,i}}]` with `y = L_t + N_{t−1}`
    /// independent of `W_t`, so by Jensen at most `(1/η) ln Σ_i p_i(y) E e^{−ηW_{t,i}} ≤ c·η·Var(W_t)`. Hence
    /// `E[Regret] ≤ ln n/η + ηTG_*²/2 + c·η·v`. *`½‖x‖²`:* the same with `φ(y) = min_{x∈X} ⟨y, x⟩ + R(x)/η`, whose
    /// gradient `Π_X(−ηy)` is `η`-Lipschitz, so `φ(y + w) ≥ φ(y) + ⟨∇φ(y), w⟩ − η‖w‖₂²/2`: `E[Regret] ≤ D_R/η +
    /// ηTG_*²/2 + η·n·v/2`. *Rounding:* the action played, `F(L_{t−1} + N_{t−1} + O_{t−1})`, is within `η·o_{t−1}`
    /// in L1 (entropy) or `η√n·o_{t−1}` in L2 of `F(L_{t−1} + N_{t−1})` on every path (the Lipschitz argument of
    /// [`DpFtrlParams::lipschitz_bound`]), which adds at most `η·G_*·O`. ∎ For identically distributed releases
    /// this is Agarwal-Singh 2017's one-shot-perturbation argument (proof of Theorem 3.1: noise identically,
    /// not necessarily independently, distributed).
    ///
    /// `∞` for releases that are not nested, and (entropy) when `η` is above the cumulant bound's range.
    pub fn perturbation_bound(&self) -> f64 {
        let noise = &self.release_noise;
        if !noise.nested {
            return f64::INFINITY;
        }
        self.ftrl_bound()
            + self.perturbation_term(self.eta)
            + self.eta * self.dual_bound * noise.offset_sum
    }

    /// Expected regret bound of FTRL on the released prefix sums for **any** prefix-sum mechanism (the padded
    /// tree, the Honaker tree, BLT, on either sampler; the releases' noise may have a different law at every
    /// `t` and any correlation): `D_R/η + η T G_*² + η·G_*·S`, with `S` =
    /// [`ReleaseNoise::deviation_sum`] `≥ Σ_{t=0}^{T−1} E dev(Z_t)`, `Z_t = L̃_t − L_t` the total error of
    /// release `t` (noise and rounding), `dev(z) = (max_i z_i − min_i z_i)/2` for the entropy and `‖z‖₂` for
    /// `½‖x‖²`. `∞` before the noise is known and without a regulariser (FTPL's argmin is not Lipschitz).
    ///
    /// **Lemma (Lipschitz FTRL).** Let `x_t = F(L̃_{t−1})` with `F(y) = argmin_{x∈X} η⟨x, y⟩ + R(x)`, and let
    /// `x*_t = F(L_{t−1})` be non-private FTRL on the same (clipped, centred) loss vectors `ℓ_t`, `‖ℓ_t‖_* ≤ G_*`.
    /// Then for every loss sequence, oblivious or adaptive, `E[Regret] ≤ D_R/η + η T G_*² + η G_* Σ_t E dev(Z_{t−1})`.
    ///
    /// *Proof.* `Regret = Σ_t⟨ℓ_t, x*_t − u⟩ + Σ_t⟨ℓ_t, x_t − x*_t⟩`. The first sum is non-private FTRL's
    /// regret on the sequence actually played, at most `D_R/η + η T G_*²` on every path (Shalev-Shwartz 2012,
    /// Theorem 2.11; it holds for any sequence, so also for one that depends on the noise). For the second:
    /// *entropy:* `F(y) = softmax(−ηy)` has Jacobian `−η(diag(p) − ppᵀ)`, and `‖(diag(p) − ppᵀ)h‖₁ = E_p|h_I −
    /// E_p h_I| ≤ sqrt(Var_p h_I) ≤ (max h − min h)/2` (Cauchy-Schwarz, Popoviciu's inequality), so
    /// `‖F(y + z) − F(y)‖₁ ≤ η·(max z − min z)/2 = η·dev(z)` (integrate along the segment), and `⟨ℓ_t, x_t − x*_t⟩
    /// ≤ ‖ℓ_t‖_∞ ‖x_t − x*_t‖₁ ≤ η G_* dev(Z_{t−1})`. *`½‖x‖²`:* `F(y) = Π_X(−ηy)`, the Euclidean projection, is
    /// 1-Lipschitz in L2, so `⟨ℓ_t, x_t − x*_t⟩ ≤ ‖ℓ_t‖₂ η ‖Z_{t−1}‖₂`. Take expectations. ∎
    ///
    /// The per-release bounds behind `S` are in [`deviation_sum`]. Unlike
    /// [`DpFtrlParams::perturbation_bound`] the noise enters at every round (linear in `T`), so for nested
    /// releases (the padded tree, a top-up, BLT with Gaussian noise) the perturbation bound is usually far
    /// smaller; for the others (the Honaker tree, BLT with Laplace noise) this is the bound that is proved.
    pub fn lipschitz_bound(&self) -> f64 {
        let s = self.release_noise.deviation_sum;
        if self.regularizer == Regularizer::None || !s.is_finite() {
            return f64::INFINITY;
        }
        self.ftrl_bound() + self.eta * self.dual_bound * s
    }

    /// Make the default step size noise-aware. For nested releases (the padded tree, a top-up, BLT with
    /// Gaussian noise; [`ReleaseNoise::nested`]): `η = sqrt(D_R / (T G_*² + c·v + G_*·O))` for the entropy
    /// (capped at the cumulant bound's range) and `η = sqrt(D_R / (T G_*² + n·v + G_*·O))` for `½‖x‖²`, the
    /// minimisers of [`DpFtrlParams::perturbation_bound`]. For other releases (the Honaker tree, BLT with
    /// Laplace noise), whose proved bound is [`DpFtrlParams::lipschitz_bound`]: `η = sqrt(D_R / (T G_*² +
    /// G_*·S))`, its minimiser. With no noise (`v = S = O = 0`) both are the non-private `sqrt(D_R / (T G_*²))`;
    /// with heavy noise `η` shrinks so the learner stays near the regulariser's minimiser (the uniform weights,
    /// the centre) instead of following the noise. An explicit `learning_rate` is kept.
    pub fn tune_for_noise(&mut self, noise: ReleaseNoise) {
        self.release_noise = noise;
        if !self.eta_default || self.regularizer == Regularizer::None {
            return;
        }
        let g = self.dual_bound;
        // Every bound here is `D_R/η + η·(T G² + extra)`: minimised at `η = sqrt(D_R / (T G² + extra))`,
        // computed as `sqrt((D_R/G²) / (T + extra/G²)) `: G² alone overflows for G > 1.3e154.
        let (extra_per_g, cap) = if noise.nested {
            let variance_term = match self.regularizer {
                Regularizer::NegativeEntropy => noise.cumulant_factor * noise.variance,
                _ => self.dim as f64 * noise.variance,
            };
            let cap = match self.regularizer {
                Regularizer::NegativeEntropy => noise.cap,
                _ => f64::INFINITY,
            };
            (variance_term / g / g + noise.offset_sum / g, cap)
        } else {
            (noise.deviation_sum / g, f64::INFINITY)
        };
        let tf = self.horizon as f64;
        let eta = ((self.regularizer_range.max(f64::MIN_POSITIVE) / (tf + extra_per_g)).sqrt() / g)
            .min(cap);
        if eta.is_finite() && eta > 0.0 {
            self.eta = eta;
        }
    }
}

/// The release noise `mechanism` gives the step size and the bounds. [`DpFtrlParams::perturbation_bound`] needs
/// nested releases ([`ReleaseNoise::nested`]): every release of the padded tree sums the same number of draws,
/// a [`TopUp`] release is `N(0, σ² v_max)` in every coordinate, and BLT with Gaussian noise adds an
/// independent `r_t z` to the previous release's law, so its variance `v` is that of the last release,
/// `σ²·v_T` (its `v_t` is nondecreasing). For every mechanism, [`deviation_sum`] for
/// [`DpFtrlParams::lipschitz_bound`], and the rounding offsets both bounds charge.
///
/// Errors: as [`PrefixSumMechanism::variance`].
fn release_noise(
    mechanism: &Mechanism,
    padded: bool,
    params: &DpFtrlParams,
) -> Result<ReleaseNoise> {
    let noise = mechanism.noise();
    let horizon = params.horizon;
    let mut out = if padded {
        ReleaseNoise::of_draws(noise, padded_draws(horizon))
    } else if let Mechanism::TopUp(top) = mechanism {
        let mut same = ReleaseNoise::of_draws(noise, 1);
        same.variance = top.max_unit_variance()? * noise.variance();
        same
    } else if let (Mechanism::Blt(_), NoiseDistribution::Gaussian { .. }) = (mechanism, noise) {
        // v_t = Σ_{n<t} r_n² is nondecreasing, so the last release's variance bounds Σ_t Var(W_t).
        let mut nested = ReleaseNoise::of_draws(noise, 1);
        nested.variance = mechanism.variance(horizon)?;
        nested
    } else {
        let mut other = ReleaseNoise::of_draws(noise, 1);
        other.variance = mechanism.variance(horizon)?;
        other.nested = false;
        other.cap = f64::INFINITY;
        other.cumulant_factor = 1.0;
        other
    };
    (out.deviation_sum, out.offset_sum) =
        deviation_sum(mechanism, params.regularizer, params.dim, horizon)?;
    Ok(out)
}

/// Number of releases evaluated one by one when summing `√v_t`: above it, BLT (whose `v_t` is nondecreasing)
/// is bounded over this many blocks, the trees exactly up to [`SD_SUM_EXACT_TREE`] releases.
const SD_SUM_BLOCKS: u64 = 4096;

/// Largest horizon for which a tree's `Σ_t √v_t` is summed release by release (`O(T log T)`); above it, each
/// release is bounded by the largest, `T·√v_max`.
const SD_SUM_EXACT_TREE: u64 = 1 << 22;

/// Upper bounds of `(Σ_{t<T} √v_t, Σ_{t<T} √(t·v_t))` for the mechanism's unit variances `v_t`
/// ([`PrefixSumMechanism::unit_variance`], from the declared horizon only). Exact (up to float rounding) for
/// the padded tree and a top-up (constant `v_t`), for BLT with `T <= 4096` and the other trees with `T <= 2²²`;
/// otherwise BLT's nondecreasing `v_t` is bounded by its value at the end of each of 4096 blocks, and a tree's
/// by `v_max`.
///
/// Errors: those of `unit_variance`.
fn sd_sums(mechanism: &Mechanism, horizon: u64) -> Result<(f64, f64)> {
    let constant = match mechanism {
        Mechanism::Tree(t) if t.padded() => Some(mechanism.unit_variance(0)?),
        Mechanism::TopUp(top) => Some(top.max_unit_variance()?),
        _ => None,
    };
    let tf = horizon as f64;
    // Σ_{t<T} √t ≤ (2/3) T^{3/2}.
    if let Some(v) = constant {
        return Ok((tf * v.sqrt(), v.sqrt() * 2.0 / 3.0 * tf * tf.sqrt()));
    }
    let monotone = matches!(mechanism, Mechanism::Blt(_));
    if monotone && horizon > SD_SUM_BLOCKS {
        let (mut a, mut b, mut start) = (0.0, 0.0, 0u64);
        for k in 1..=SD_SUM_BLOCKS {
            // Block [start, end): every t in it has v_t <= v_{end−1} and t <= end − 1.
            let end = ((u128::from(horizon) * u128::from(k)) / u128::from(SD_SUM_BLOCKS)) as u64;
            if end > start {
                let last = end - 1;
                let v = mechanism.unit_variance(last)?;
                let len = (end - start) as f64;
                a += len * v.sqrt();
                b += len * (last as f64 * v).sqrt();
                start = end;
            }
        }
        return Ok((a, b));
    }
    if !monotone && horizon > SD_SUM_EXACT_TREE {
        let v = mechanism.max_unit_variance()?;
        return Ok((tf * v.sqrt(), v.sqrt() * 2.0 / 3.0 * tf * tf.sqrt()));
    }
    let (mut a, mut b) = (0.0, 0.0);
    for t in 0..horizon {
        let v = mechanism.unit_variance(t)?;
        a += v.sqrt();
        b += (t as f64 * v).sqrt();
    }
    Ok((a, b))
}

/// `S ≥ Σ_{t=0}^{T−1} E dev(Z_t)`, the sum behind [`DpFtrlParams::lipschitz_bound`] (`dev` as there: half the
/// range of the coordinates for the entropy, the L2 norm for `½‖x‖²`), computed from the declared arguments
/// only (the mechanism's structure `v_t`, its noise scale, its grid). 0 without noise; `∞` without a regulariser.
///
/// Release `t`'s error is `Z_t = N_t + O_t`: the noise `N_t`, per coordinate `Σ_j b_{tj} z_j` with the decoder
/// row `b_t` (`Σ_j b_{tj}² = v_t`) and i.i.d. draws `z_j` (independent across coordinates), and on the exact path
/// a deterministic rounding offset `O_t`. Per release:
///
/// * **Gaussian, entropy:** `E dev(N_t) = E max_i N_{t,i}` (symmetric) `≤ σ√v_t·√(2 ln n)`: each `N_{t,i}` is
///   `σ²v_t`-sub-Gaussian — a Gaussian draw exactly, a discrete Gaussian `N_ℤ(0, σ²)` because it is
///   `σ²`-sub-Gaussian (Canonne-Kamath-Steinke 2020: `E e^{λX} ≤ e^{λ²σ²/2}` for every real `λ`, their sub-Gaussianity result; also why its variance is at most `σ²`), and
///   sub-Gaussian proxies of independent summands add — and the maximum of `n` such variables (any
///   dependence) has mean at most `σ√v_t √(2 ln n)` (`E max ≤ (ln n + λ²s²/2)/λ` by Jensen, at `λ = √(2 ln n)/s`).
/// * **Laplace, entropy:** `E dev(N_t) ≤ E max_i |N_{t,i}| ≤ (Σ_i E N_{t,i}⁴)^{1/4} ≤ (n·m₄)^{1/4}·√v_t`
///   (Jensen; `max ≤ sum`): `E N⁴ = 3 Var(N)² + κ₄(N)`, `κ₄(N) = κ₄(z)·Σ_j b_j⁴ ≤ κ₄(z)·v_t²` since `κ₄(z) ≥ 0`
///   (cumulants of independent summands add), so `E N⁴ ≤ (3Var(z)² + κ₄(z))·v_t² = m₄·v_t²`, `m₄ = E z⁴`:
///   `24b⁴` for Laplace(`b`); for the discrete Laplace of scale `t` grid units (a difference of two i.i.d.
///   geometric variables of ratio `q = e^{−1/t}`), `E z⁴ = 24w² + 2w` units⁴ with `w = q/(1 − q)² =
///   1/(4 sinh²(1/(2t))) ≤ t²`, so `m₄ ≤ 24b⁴ + 2b²γ²` (`b = tγ`). No decoder entry bound is needed.
/// * **`½‖x‖²` (either noise):** `E‖N_t‖₂ ≤ sqrt(E‖N_t‖₂²) = sqrt(n·Var(z)·v_t)` (Jensen), with `Var(z) ≤ σ²`
///   (a `σ²`-sub-Gaussian variable) or `≤ 2b²` (`2w ≤ 2t²` units² for the discrete Laplace).
/// * **Rounding (exact path, grid `γ`):** the release sums the rounded rows `γ·round(x_s/γ)`, each within `γ/2`
///   of `x_s` per coordinate, so the prefix sum is off by at most `γt/2`; BLT adds its encoder rounding,
///   `γ·(B̂e)_t` with `|e_s| ≤ η_enc` ([`crate::aggregation::Blt::encoder_rounding`], its module Lemma), at most
///   `γ η_enc Σ_{n<t}|r_n| ≤ γ η_enc √(t v_t)` (Cauchy-Schwarz), and its final rounding to the grid, `γ/2`. With
///   `|O_{t,i}| ≤ o_t`: `dev(N + O) ≤ dev(N) + o_t` (entropy), `‖N + O‖₂ ≤ ‖N‖₂ + √n·o_t`. (The floating-point
///   evaluation of the sums is left out, as in the non-private FTRL bound.)
///
/// `n = 1`: the entropy's action is the single point, `dev = 0`.
///
/// Returns `(S, O)`: `S` (rounding included) and its rounding part `O ≥ Σ_t dev(O_t)`
/// ([`rounding_offsets`], which [`DpFtrlParams::perturbation_bound`] charges too). `(∞, 0)` without a
/// regulariser.
///
/// Errors: those of [`PrefixSumMechanism::unit_variance`].
pub fn deviation_sum(
    mechanism: &Mechanism,
    regularizer: Regularizer,
    dim: usize,
    horizon: u64,
) -> Result<(f64, f64)> {
    let noise = mechanism.noise();
    let scale = noise.scale();
    if regularizer == Regularizer::None {
        return Ok((f64::INFINITY, 0.0));
    }
    if scale == 0.0 || (regularizer == Regularizer::NegativeEntropy && dim < 2) {
        return Ok((0.0, 0.0));
    }
    let n = dim as f64;
    let gamma = mechanism.grid().map_or(0.0, |g| g.gamma());
    let entropy = regularizer == Regularizer::NegativeEntropy;
    let per_sd = match (noise, entropy) {
        (NoiseDistribution::Gaussian { .. }, true) => scale * (2.0 * n.ln()).sqrt(),
        (NoiseDistribution::Laplace { .. }, true) => {
            let m4 = 24.0 * scale.powi(4) + 2.0 * scale * scale * gamma * gamma;
            (n * m4).sqrt().sqrt()
        }
        (NoiseDistribution::Gaussian { .. }, false) => scale * n.sqrt(),
        (NoiseDistribution::Laplace { .. }, false) => scale * (2.0 * n).sqrt(),
    };
    let (sd_sum, weighted) = sd_sums(mechanism, horizon)?;
    let offsets = rounding_offsets(mechanism, entropy, dim, horizon, weighted);
    Ok((per_sd * sd_sum + offsets, offsets))
}

/// `O ≥ Σ_{t=0}^{T−1} dev(O_t)`: the exact path's deterministic rounding offsets `O_t` of the releases, in the
/// `dev` of [`deviation_sum`] (half the range for the entropy, the L2 norm for `½‖x‖²`), from the declared
/// arguments only (`weighted ≥ Σ_{t<T} √(t v_t)`, from [`sd_sums`]); 0 on the float path. With `|O_{t,i}| ≤
/// o_t` (the per-release bounds in [`deviation_sum`]: the rows' rounding `γt/2`; for BLT also its encoder
/// rounding `γ η_enc √(t v_t)` and its final rounding `γ/2`), `dev(O_t) ≤ o_t` (entropy), `‖O_t‖₂ ≤ √n·o_t`.
fn rounding_offsets(
    mechanism: &Mechanism,
    entropy: bool,
    dim: usize,
    horizon: u64,
    weighted: f64,
) -> f64 {
    let gamma = mechanism.grid().map_or(0.0, |g| g.gamma());
    if gamma == 0.0 {
        return 0.0;
    }
    let tf = horizon as f64;
    let mut offsets = gamma * tf * (tf - 1.0) / 4.0; // Σ_{t<T} γt/2
    if let Mechanism::Blt(blt) = mechanism {
        offsets += gamma * (tf / 2.0 + blt.encoder_rounding() * weighted);
    }
    if !entropy {
        offsets *= (dim as f64).sqrt();
    }
    offsets
}

/// The per-coordinate noise of the releases, for the noise-aware step size: the variance `v` of the last
/// release and a cumulant bound `ln E e^{λW} ≤ c·λ²·Var(W)` valid for `|λ| ≤ cap`, for a release's noise
/// `W` (identically distributed releases) or each increment `W_t = r_t z` of nested ones (BLT; `|r_t| ≤ 1`
/// is not needed for the Gaussian, whose bound holds for every `λ`).
///
/// * Gaussian node noise (any number of draws, any real weights): `c = ½`, `cap = ∞` (exact: `ln E e^{λZ} =
///   λ²v/2`); the discrete Gaussian is sub-Gaussian with its `σ²` (Canonne-Kamath-Steinke 2020), so the same
///   holds there.
/// * Laplace(`b`) node noise, `k` draws: `c = 1`, `cap = 1/(√2·b)`: per draw `−ln(1 − λ²b²) ≤ λ²b²/(1 − λ²b²)
///   ≤ 2λ²b² = λ²·Var` for `λb ≤ 1/√2`, and the cumulants of independent draws add.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReleaseNoise {
    /// Whether the releases are nested (the hypothesis of [`DpFtrlParams::perturbation_bound`]; false: that
    /// bound is not available): identically distributed (the padded tree, a top-up) or BLT with Gaussian noise.
    pub nested: bool,
    /// Per-coordinate variance `v` of one release's noise.
    pub variance: f64,
    /// The constant `c` of the cumulant bound.
    pub cumulant_factor: f64,
    /// The largest `|λ|` for which the cumulant bound holds.
    pub cap: f64,
    /// `S ≥ Σ_{t<T} E dev(Z_t)` of [`DpFtrlParams::lipschitz_bound`] ([`deviation_sum`]; `∞` until computed).
    pub deviation_sum: f64,
    /// `O`, the exact path's rounding part of `S` ([`rounding_offsets`]; 0 on the float path and until computed).
    pub offset_sum: f64,
}

impl ReleaseNoise {
    /// No noise declared yet.
    pub const NONE: ReleaseNoise = ReleaseNoise {
        nested: false,
        variance: 0.0,
        cumulant_factor: 0.5,
        cap: f64::INFINITY,
        deviation_sum: f64::INFINITY,
        offset_sum: 0.0,
    };

    /// The noise of a release that sums `draws` i.i.d. draws of `node` (the padded tree: every release).
    pub fn of_draws(node: NoiseDistribution, draws: u32) -> Self {
        let variance = f64::from(draws) * node.variance();
        match node {
            NoiseDistribution::Laplace { scale } if scale > 0.0 => ReleaseNoise {
                nested: true,
                variance,
                cumulant_factor: 1.0,
                cap: 1.0 / (core::f64::consts::SQRT_2 * scale),
                deviation_sum: f64::INFINITY,
                offset_sum: 0.0,
            },
            _ => ReleaseNoise {
                nested: true,
                variance,
                cumulant_factor: 0.5,
                cap: f64::INFINITY,
                deviation_sum: f64::INFINITY,
                offset_sum: 0.0,
            },
        }
    }
}

/// `(lmo(1), lmo(−1))` of a box: its lower and upper corners.
fn box_corners(domain: &Domain) -> (Vec<f64>, Vec<f64>) {
    let n = domain.dim();
    let mut d = domain.clone();
    let (mut lower, mut upper) = (vec![0.0; n], vec![0.0; n]);
    d.lmo(&vec![1.0; n], &mut lower);
    d.lmo(&vec![-1.0; n], &mut upper);
    (lower, upper)
}

/// The DP-FTRL learner (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct DpFtrl {
    params: DpFtrlParams,
    domain: Domain,
    tree: Mechanism,
    step: Step,
    /// `L̃_t` after the last push (`L̃_0` at the start).
    release: Vec<f64>,
    /// The action `x_{t+1}` for the next round.
    x: Vec<f64>,
    /// Scratch: the clipped loss vector of the current round.
    row: Vec<f64>,
    t: u64,
    pending: bool,
    strict: bool,
    clipped: u64,
}

impl DpFtrl {
    /// A learner over `domain` with constants `params`, prefix sums released by `mechanism` (the padded tree
    /// of the paper, or another mechanism of [`crate::aggregation`]) with per-draw noise `noise` (scale 0 =
    /// non-private FTRL on the same code path), drawn by `sampler` (exact discrete noise on a grid, or the
    /// floating-point samplers: [`crate::aggregation::SamplerKind`]). The noise comes from stream 1 of `seed`
    /// (the OS with `secure`).
    ///
    /// Errors: [`CoreError::Shape`] if `params` were made for another dimension; [`CoreError::InvalidArgument`]
    /// for a noise scale so large that sums could overflow; those of the mechanism; entropy failures.
    pub fn new(domain: Domain, params: DpFtrlParams, setup: MechanismSetup) -> Result<Self> {
        let n = domain.dim();
        super::check_params_dim(n, params.dim)?;
        super::check_noise_scale(setup.noise.scale(), params.eta)?;
        let padded = matches!(setup.mechanism, MechanismSpec::Tree { padded: true });
        let tree = setup.build_mechanism(n, params.horizon, 1)?;
        // The step size is tuned to the release noise (it only shrinks, so the finiteness check above holds).
        let mut params = params;
        {
            let noise = release_noise(&tree, padded, &params)?;
            params.tune_for_noise(noise);
        }
        let release = tree.initial().to_vec();
        let step = match (params.regularizer, &domain) {
            (Regularizer::None, _) => Step::Lmo,
            (Regularizer::NegativeEntropy, _) => Step::Softmax,
            (Regularizer::Euclidean, Domain::L2Ball(_)) => Step::Ball {
                radius: domain.diameter() / 2.0,
            },
            (Regularizer::Euclidean, Domain::Box(_)) => {
                let (lower, upper) = box_corners(&domain);
                Step::Box { lower, upper }
            }
            (Regularizer::Euclidean, Domain::Simplex(_)) => Step::SimplexProjection {
                sorted: crate::alloc::zeros("projection scratch", n)?,
            },
            (Regularizer::Euclidean, _) => {
                let target: Vec<f64> = release.iter().map(|s| -params.eta * s).collect();
                Step::FrankWolfe {
                    fw: Box::new(FrankWolfe::new(domain.interior_point(), &target, false)?),
                    calls: params.lmo_calls,
                }
            }
        };
        let mut learner = DpFtrl {
            x: crate::alloc::zeros("action", n)?,
            row: crate::alloc::zeros("loss vector", n)?,
            params,
            domain,
            tree,
            step,
            release,
            t: 0,
            pending: false,
            strict: setup.strict,
            clipped: 0,
        };
        learner.update_action();
        Ok(learner)
    }

    /// Top every release up to identically distributed noise: add to the release after push `t` fresh
    /// independent `N(0, σ²(v_max − v_t))` noise per coordinate, where `v_t` is the mechanism's unit variance
    /// of that release ([`PrefixSumMechanism::unit_variance`]) and `v_max` the largest over `0 <= t <= T`
    /// ([`PrefixSumMechanism::max_unit_variance`]). The default step size is re-tuned to the topped-up noise
    /// and [`DpFtrlParams::perturbation_bound`] becomes available. The noise comes from stream 3 of `seed`
    /// (the OS with `secure`).
    ///
    /// Lemma (identical marginals). With Gaussian node noise drawn by the floating-point sampler, the noise of
    /// every release is a fixed linear combination of i.i.d. `N(0, σ²I)` draws, so it is `N(0, σ² v_t I)`; the
    /// sum of it and the independent top-up is `N(0, σ² v_max I)` for every `t` (variances of independent
    /// Gaussians add). Correlations between releases are not changed and not needed: Agarwal-Singh's
    /// Theorem 3.1 (and [`DpFtrlParams::perturbation_bound`]) use only that every release's noise has the same
    /// marginal, against an oblivious adversary. Privacy is unchanged: the top-up is independent of the data, so
    /// the topped-up releases are post-processing of the mechanism's.
    ///
    /// Not available on the exact path (a sum of discrete Gaussians with different variances is not one
    /// distribution family: the marginals cannot be made identical by adding noise) nor for Laplace noise (a
    /// linear combination of Laplace draws with other weights is not a Laplace sum); a no-op for the padded
    /// tree, whose releases are already identically distributed.
    ///
    /// Errors: [`CoreError::InvalidArgument`] (named `top_up`) for Laplace noise, the exact sampler, or the
    /// padded tree; [`CoreError::Protocol`] after the first round; those of the generator.
    pub fn with_top_up(self, seed: Seed, secure: bool) -> Result<Self> {
        if self.t != 0 || self.pending {
            return Err(CoreError::Protocol(
                "top_up must be set before the first round".into(),
            ));
        }
        let DpFtrl {
            mut params,
            domain,
            tree,
            step,
            x,
            row,
            strict,
            ..
        } = self;
        let tree = Mechanism::TopUp(Box::new(TopUp::new(
            tree,
            Generator::for_stream(&seed, 3, secure)?,
        )?));
        let noise = release_noise(&tree, false, &params)?;
        params.tune_for_noise(noise);
        let mut learner = DpFtrl {
            params,
            domain,
            release: tree.initial().to_vec(),
            tree,
            step,
            x,
            row,
            t: 0,
            pending: false,
            strict,
            clipped: 0,
        };
        learner.update_action();
        Ok(learner)
    }

    /// Whether the releases are topped up to identically distributed noise ([`DpFtrl::with_top_up`]), and the
    /// unit variance `v_max` they are raised to.
    pub fn top_up_variance(&self) -> Option<f64> {
        match &self.tree {
            Mechanism::TopUp(top) => top.max_unit_variance().ok(),
            _ => None,
        }
    }

    /// The domain.
    pub fn domain(&self) -> &Domain {
        &self.domain
    }

    /// The tree's noise distribution.
    pub fn noise(&self) -> NoiseDistribution {
        self.tree.noise()
    }

    /// The kind of mechanism releasing the prefix sums (see [`Mechanism::kind`]).
    pub fn mechanism_kind(&self) -> &'static str {
        self.tree.kind()
    }

    /// Noise draws per coordinate in every release `L̃_t` of the padded tree (`max(1, ⌈log₂T⌉)`).
    pub fn release_draws(&self) -> u32 {
        padded_draws(self.params.horizon)
    }

    /// Name of the argmin method (`"softmax"`, `"ball projection"`, ..., `"frank-wolfe"`).
    pub fn method(&self) -> &'static str {
        self.step.name()
    }

    /// The latest private prefix sum `L̃_t` (a release of the tree; `L̃_0` before any data).
    pub fn noisy_cumulative_loss(&self) -> &[f64] {
        &self.release
    }

    /// Whether an action was asked and awaits `tell`.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The action for the next round (`x_{t+1}`), without marking it as asked.
    pub fn action(&self) -> &[f64] {
        &self.x
    }

    /// The action `x_t` to play this round. Asking again before `tell` returns the same point.
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<&[f64]> {
        super::check_room("DPFTRL", self.t, 1, self.params.horizon)?;
        self.pending = true;
        Ok(&self.x)
    }

    /// Report the loss vector `ℓ_t` of this round (full information; any gradient of a convex loss at `x_t`
    /// may be passed: the linearisation of Jain-Kothari-Thakurta).
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a preceding `ask`; [`CoreError::Shape`];
    /// [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`] for `‖ℓ‖ > G`.
    pub fn tell(&mut self, loss: &[f64]) -> Result<()> {
        super::check_asked(self.pending, "loss vector per asked point")?;
        crate::error::check_len("loss", loss, self.params.dim)?;
        check_finite("loss", loss)?;
        self.check_strict(loss)?;
        self.row.copy_from_slice(loss);
        self.shift_row();
        self.absorb_row()?;
        self.pending = false;
        Ok(())
    }

    /// With `strict`, refuse a loss vector (before the shift) that would be clipped: `‖ℓ − c·1‖ > G`, or a dual
    /// norm beyond the dual bound (this round's, named by number only).
    ///
    /// Errors: [`CoreError::InvalidArgument`] ([`CoreError::strict_bound`]).
    fn check_strict(&self, loss: &[f64]) -> Result<()> {
        if !self.strict {
            return Ok(());
        }
        let (norm, dual) = self.fed_norms(loss);
        if norm > self.params.loss_bound {
            return Err(CoreError::strict_bound(
                "loss",
                "a vector with norm <= loss_bound (strict=True; after subtracting loss_shift)",
                self.t + 1,
            ));
        }
        if self.params.dual_clip && dual > self.params.dual_bound {
            return Err(CoreError::strict_bound(
                "loss",
                "a vector with dual norm <= dual_bound (strict=True; after subtracting loss_shift)",
                self.t + 1,
            ));
        }
        Ok(())
    }

    /// `row −= c·1` for the declared [`DpFtrlParams::loss_shift`] `c` (a difference beyond the f64 range is
    /// kept at `±f64::MAX`: it is clipped to `G` next, never turned into inf/NaN).
    #[inline]
    fn shift_row(&mut self) {
        let c = self.params.loss_shift;
        if c != 0.0 {
            self.row
                .iter_mut()
                .for_each(|v| *v = (*v - c).clamp(-f64::MAX, f64::MAX));
        }
    }

    /// `(‖ℓ − c·1‖, dual norm of ℓ − c·1)` of the vector that would be fed, without writing it anywhere.
    fn fed_norms(&self, loss: &[f64]) -> (f64, f64) {
        let c = self.params.loss_shift;
        if c == 0.0 {
            return (self.params.norm.of(loss), self.dual_norm(loss));
        }
        let fed = || loss.iter().map(move |v| (v - c).clamp(-f64::MAX, f64::MAX));
        let max = fed().fold(0.0f64, |m, x| m.max(x.abs()));
        let l2 = if max == 0.0 {
            0.0
        } else {
            max * fed().map(|x| (x / max) * (x / max)).sum::<f64>().sqrt()
        };
        let norm = match self.params.norm {
            LossNorm::L1 => fed().map(f64::abs).sum(),
            LossNorm::L2 => l2,
        };
        let dual = match self.params.regularizer {
            Regularizer::NegativeEntropy => max,
            _ => l2,
        };
        (norm, dual)
    }

    /// `‖v‖_∞` for entropy, `‖v‖₂` otherwise.
    fn dual_norm(&self, v: &[f64]) -> f64 {
        match self.params.regularizer {
            Regularizer::NegativeEntropy => v.iter().fold(0.0f64, |m, x| m.max(x.abs())),
            _ => l2_norm(v),
        }
    }

    /// Clip `self.row` to the declared bounds, push it into the tree and compute the next action.
    #[inline]
    fn absorb_row(&mut self) -> Result<()> {
        let (params, row) = (&self.params, &mut self.row);
        // One dispatched pass (or two) over the row: at the CPU's widest vector level, bit-identical at every
        // level (`crate::simd`).
        let clipped = crate::simd::dispatch(
            #[inline(always)]
            || clip_row(params, row),
        );
        self.tree.push(&self.row, &mut self.release)?;
        // Counted once the push succeeded: an error leaves the learner as it was.
        self.clipped += u64::from(clipped);
        self.t += 1;
        if self.t < self.params.horizon {
            self.update_action();
        }
        Ok(())
    }

    /// `x = argmin η⟨x, L̃⟩ + R(x)` for the current release.
    fn update_action(&mut self) {
        let eta = self.params.eta;
        let x = &mut self.x;
        let release = &self.release;
        match &mut self.step {
            Step::Softmax => crate::vecops::softmax_neg_scaled(release, eta, x),
            Step::Ball { radius } => {
                for (xi, &s) in x.iter_mut().zip(release) {
                    *xi = -eta * s;
                }
                let norm = l2_norm(x);
                if norm > *radius {
                    let scale = *radius / norm;
                    x.iter_mut().for_each(|v| *v *= scale);
                }
            }
            Step::Box { lower, upper } => {
                for (((xi, &s), &l), &u) in x.iter_mut().zip(release).zip(&*lower).zip(&*upper) {
                    *xi = (-eta * s).clamp(l, u);
                }
            }
            Step::SimplexProjection { sorted } => {
                for (xi, &s) in x.iter_mut().zip(release) {
                    *xi = -eta * s;
                }
                // Π(v) = Π(v − c·1): shifted so that max v = 0, the threshold's `Σu − 1` keeps the 1 (at
                // |v| ≈ 1e16 it was rounded away and every coordinate came out 0).
                let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                x.iter_mut().for_each(|v| *v -= top);
                let theta = simplex_threshold(x, sorted);
                x.iter_mut().for_each(|v| *v = (*v - theta).max(0.0));
            }
            Step::FrankWolfe { fw, calls } => {
                for (v, &s) in fw.target_mut().iter_mut().zip(release) {
                    *v = -eta * s;
                }
                for _ in 0..*calls {
                    fw.step(&mut self.domain);
                }
                x.copy_from_slice(fw.x());
            }
            Step::Lmo => self.domain.lmo(release, x),
        }
    }
}

/// The threshold `θ` of the Euclidean projection of `v` onto the simplex, `Π(v) = max(v − θ, 0)`.
///
/// Sort `v` in decreasing order `u`; `ρ = max{j : u_j − (Σ_{i≤j} u_i − 1)/j > 0}`; `θ = (Σ_{i≤ρ} u_i − 1)/ρ`
/// (Held, Wolfe & Crowder 1974; Duchi, Shalev-Shwartz, Singer & Chandra 2008, Figure 1). `sorted` is
/// scratch of the same length.
fn simplex_threshold(v: &[f64], sorted: &mut [f64]) -> f64 {
    sorted.copy_from_slice(v);
    sorted.sort_unstable_by(|a, b| b.total_cmp(a));
    let (mut cum, mut theta) = (0.0, sorted[0] - 1.0);
    for (j, &u) in sorted.iter().enumerate() {
        cum += u;
        let candidate = (cum - 1.0) / (j + 1) as f64;
        if u - candidate > 0.0 {
            theta = candidate;
        }
    }
    theta
}

impl Learner for DpFtrl {
    const NAME: &'static str = "DPFTRL";
    type Family<'a> = &'a LossFamily;

    super::learner_accessors!(DpFtrlParams);

    super::full_information_check_run!();

    fn play(
        &mut self,
        family: &'_ LossFamily,
        end: u64,
        marks: &mut Checkpoints<'_>,
    ) -> Result<f64> {
        let mut total = 0.0;
        while self.t < end {
            total += super::full_information_feedback(family, self.t, &self.x, &mut self.row);
            self.check_strict(&self.row)?;
            self.shift_row();
            self.absorb_row()?;
            marks.record(self.t, total);
        }
        Ok(total)
    }

    /// The invariants of a decoded learner (see [`super::Learner::check_state`]).
    ///
    /// Errors: [`CoreError::State`].
    fn check_state(&mut self) -> Result<()> {
        let p = &self.params;
        let recomputed = DpFtrlParams::new(
            &self.domain,
            p.horizon,
            p.loss_bound,
            p.norm,
            p.regularizer,
            (!p.eta_default).then_some(p.eta),
            Some(p.dual_bound),
            p.lmo_calls,
        )
        .and_then(|q| q.with_loss_shift(&self.domain, p.loss_shift))
        .and_then(|mut q| {
            let padded = matches!(&self.tree, Mechanism::Tree(t) if t.padded());
            let noise = release_noise(&self.tree, padded, &q)?;
            q.tune_for_noise(noise);
            Ok(q)
        });
        crate::state::ensure(
            recomputed.as_ref() == Ok(p),
            "DPFTRL",
            "its constants differ from the ones its domain and declared bounds imply",
        )?;
        let n = self.params.dim;
        let consistent = self.t <= self.params.horizon
            && self.clipped <= self.t
            && [&self.x, &self.row, &self.release]
                .iter()
                .all(|v| crate::state::all_finite(v))
            && self.x.len() == n
            && self.row.len() == n
            && self.release.len() == n
            && self.domain.dim() == n
            && self.tree.dim() == n
            && self.tree.horizon() == self.params.horizon
            && self.t == self.tree.t()
            && self.step.fits(n);
        if !consistent {
            return Err(CoreError::State("DPFTRL state is inconsistent".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregation::SamplerKind;
    use crate::learners::testing::assert_same_at_every_level;

    #[test]
    fn the_default_step_size_is_noise_aware_and_minimises_the_perturbation_bound() {
        let domain = simplex(8);
        let base = |reg| {
            DpFtrlParams::new(&domain, 1000, 8.0, LossNorm::L1, reg, None, Some(1.0), 4).unwrap()
        };
        for reg in [Regularizer::NegativeEntropy, Regularizer::Euclidean] {
            let blind = base(reg).eta;
            // No noise: the non-private tuning sqrt(D_R / (T G²)).
            let mut p = base(reg);
            p.tune_for_noise(ReleaseNoise::of_draws(
                NoiseDistribution::Gaussian { sigma: 0.0 },
                10,
            ));
            assert_eq!(p.eta, blind);
            // Gaussian noise: the closed-form minimiser, and the bound is smallest there.
            let mut p = base(reg);
            p.tune_for_noise(ReleaseNoise::of_draws(
                NoiseDistribution::Gaussian { sigma: 30.0 },
                10,
            ));
            assert!(p.eta < blind);
            let at = |eta: f64| {
                let mut q = p.clone();
                q.eta = eta;
                q.perturbation_bound()
            };
            let best = at(p.eta);
            assert!(best.is_finite() && best <= at(p.eta * 1.01) && best <= at(p.eta * 0.99));
            assert!(at(blind) > best);
        }
        // Laplace: the step size never leaves the cumulant bound's range, where the bound holds.
        let mut p = base(Regularizer::NegativeEntropy);
        p.tune_for_noise(ReleaseNoise::of_draws(
            NoiseDistribution::Laplace { scale: 1e3 },
            1,
        ));
        assert!(p.eta <= 1.0 / (2f64.sqrt() * 1e3) && p.perturbation_bound().is_finite());
        p.eta_default = false;
        p.eta = 1.0;
        assert_eq!(p.perturbation_bound(), f64::INFINITY);
    }
    use crate::domains::{L2Ball, Simplex, UniformMatroid};

    fn simplex(n: usize) -> Domain {
        Domain::Simplex(Simplex::new(n).unwrap())
    }

    fn learner(domain: Domain, reg: Regularizer, scale: f64, seed: u64) -> DpFtrl {
        let params =
            DpFtrlParams::new(&domain, 300, 2.0, LossNorm::L1, reg, None, None, 4).unwrap();
        let (noise, sampler) = (
            NoiseDistribution::Laplace { scale },
            SamplerKind::FloatingPoint,
        );
        DpFtrl::new(
            domain,
            params,
            crate::learners::MechanismSetup::padded_tree(noise, sampler, [seed, 1, 2, 3]),
        )
        .unwrap()
    }

    #[test]
    fn dispatched_passes_agree_bitwise_at_every_level() {
        use crate::simd::{Level, run_at};
        let mut rng = crate::rng::Generator::from_seed([4, 4, 4, 4]);
        let rows: Vec<Vec<f64>> = (0..6)
            .map(|k| {
                (0..203)
                    .map(|_| (rng.open01() - 0.3) * f64::from(k + 1))
                    .collect()
            })
            .collect();
        let weights: Vec<f64> = (0..203).map(|_| rng.open01()).collect();
        let domains = [simplex(203), Domain::L2Ball(L2Ball::new(203, 1.0).unwrap())];
        let mut cases = Vec::new();
        for domain in &domains {
            for reg in [Regularizer::NegativeEntropy, Regularizer::Euclidean] {
                for norm in [LossNorm::L1, LossNorm::L2] {
                    for dual in [None, Some(0.5)] {
                        if let Ok(p) =
                            DpFtrlParams::new(domain, 300, 20.0, norm, reg, None, dual, 4)
                        {
                            cases.push(p);
                        }
                    }
                }
            }
        }
        assert!(
            cases
                .iter()
                .any(|p| p.dual_clip && p.regularizer == Regularizer::NegativeEntropy)
        );
        let at = |level: Level| {
            let mut bits = Vec::new();
            for params in &cases {
                for r in &rows {
                    let mut row = vec![0.0; r.len()];
                    let dot = run_at(
                        level,
                        #[inline(always)]
                        || crate::learners::copy_and_dot(r, &weights, &mut row),
                    );
                    let changed = run_at(
                        level,
                        #[inline(always)]
                        || clip_row(params, &mut row),
                    );
                    bits.push(dot.to_bits());
                    bits.push(u64::from(changed));
                    bits.extend(row.iter().map(|v| v.to_bits()));
                }
            }
            bits
        };
        assert_same_at_every_level(at);
    }

    #[test]
    fn simplex_projection_matches_brute_force() {
        let v = [0.3, -0.2, 1.4, 0.9, 0.0];
        let mut scratch = [0.0; 5];
        let theta = simplex_threshold(&v, &mut scratch);
        let x: Vec<f64> = v.iter().map(|a| (a - theta).max(0.0)).collect();
        assert!((x.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        // KKT: x_i > 0 ⇒ v_i − x_i = θ; x_i = 0 ⇒ v_i <= θ.
        for (a, b) in v.iter().zip(&x) {
            if *b > 0.0 {
                assert!((a - b - theta).abs() < 1e-15);
            } else {
                assert!(*a <= theta);
            }
        }
    }

    #[test]
    fn softmax_never_overflows_and_actions_are_feasible() {
        let mut l = learner(simplex(4), Regularizer::NegativeEntropy, 1e6, 3);
        for t in 0..300 {
            let x = l.ask().unwrap().to_vec();
            assert!(simplex(4).contains(&x, 1e-12), "t={t} {x:?}");
            l.tell(&[1.0, 0.0, -1.0, 0.0]).unwrap();
        }
        assert!(l.ask().is_err());
    }

    #[test]
    fn every_domain_and_regulariser_gives_feasible_actions() {
        let domains = [
            simplex(5),
            Domain::L2Ball(L2Ball::new(5, 2.0).unwrap()),
            Domain::UniformMatroid(UniformMatroid::new(5, 2, true).unwrap()),
        ];
        for d in domains {
            let mut l = learner(d.clone(), Regularizer::Euclidean, 0.5, 1);
            for t in 0..300 {
                let x = l.ask().unwrap().to_vec();
                assert!(d.contains(&x, 1e-9), "{} t={t} {x:?}", d.kind());
                let loss: Vec<f64> = (0..5).map(|i| ((i * 7 + t) % 5) as f64 - 2.0).collect();
                l.tell(&loss).unwrap();
            }
        }
    }

    #[test]
    fn a_declared_dual_bound_clips_coordinates_and_sets_eta() {
        let d = simplex(4);
        let p = DpFtrlParams::new(
            &d,
            100,
            4.0,
            LossNorm::L1,
            Regularizer::NegativeEntropy,
            None,
            Some(1.0),
            4,
        )
        .unwrap();
        assert!(p.dual_clip && p.dual_bound == 1.0);
        assert!((p.eta - (4f64.ln() / 100.0).sqrt()).abs() < 1e-15);
        let mut l = DpFtrl::new(
            d,
            p,
            MechanismSetup {
                mechanism: MechanismSpec::Tree { padded: true },
                noise: NoiseDistribution::Laplace { scale: 0.0 },
                sampler: SamplerKind::FloatingPoint,
                seed: [0; 4],
                secure: false,
                strict: false,
            },
        )
        .unwrap();
        l.ask().unwrap();
        l.tell(&[3.0, -0.5, 0.2, 0.0]).unwrap();
        assert_eq!(l.noisy_cumulative_loss(), &[1.0, -0.5, 0.2, 0.0]);
        assert_eq!(l.clipped(), 1);
    }

    #[test]
    fn follow_the_perturbed_leader_plays_vertices() {
        let d = Domain::UniformMatroid(UniformMatroid::new(5, 2, true).unwrap());
        let mut l = learner(d.clone(), Regularizer::None, 0.5, 2);
        assert_eq!(l.method(), "lmo");
        for t in 0..300 {
            let x = l.ask().unwrap().to_vec();
            assert!(d.contains(&x, 0.0), "t={t} {x:?}");
            assert_eq!(x.iter().filter(|&&v| v == 1.0).count(), 2);
            l.tell(&[0.1, 0.2, 0.0, 0.3, 0.4]).unwrap();
        }
    }

    #[test]
    fn errors_leave_state_alone_and_restore_is_bit_identical() {
        let mut l = learner(simplex(3), Regularizer::NegativeEntropy, 1.0, 5);
        assert!(matches!(l.tell(&[0.0; 3]), Err(CoreError::Protocol(_))));
        l.ask().unwrap();
        let before = l.to_bytes().unwrap();
        assert!(l.tell(&[0.0, f64::NAN, 0.0]).is_err());
        assert!(l.tell(&[0.0; 2]).is_err());
        assert_eq!(l.to_bytes().unwrap(), before);
        l.tell(&[0.5, 0.1, 0.0]).unwrap();
        let mut m = DpFtrl::from_bytes(&l.to_bytes().unwrap()).unwrap();
        for _ in 0..100 {
            assert_eq!(l.ask().unwrap(), m.ask().unwrap());
            l.tell(&[0.2, 0.9, 0.4]).unwrap();
            m.tell(&[0.2, 0.9, 0.4]).unwrap();
        }
    }

    fn topped(
        spec: MechanismSpec,
        noise: NoiseDistribution,
        sampler: SamplerKind,
    ) -> Result<DpFtrl> {
        let (n, horizon) = (4000, 64);
        let domain = simplex(n);
        let params = DpFtrlParams::new(
            &domain,
            horizon,
            1.0,
            LossNorm::L2,
            Regularizer::NegativeEntropy,
            None,
            None,
            4,
        )?;
        DpFtrl::new(
            domain,
            params,
            MechanismSetup {
                mechanism: spec,
                noise,
                sampler,
                seed: [9, 1, 2, 3],
                secure: false,
                strict: false,
            },
        )?
        .with_top_up([9, 1, 2, 3], false)
    }

    /// The top-up Lemma: every release's noise has per-coordinate variance σ²·v_max (6 sd of the sample
    /// variance of 4000 Gaussian coordinates, `sqrt(2/n)` relative), including `L̃_0`, which BLT alone releases
    /// exactly; the step size is tuned to that variance.
    #[test]
    fn top_up_gives_every_release_the_largest_variance() {
        let sigma = 3.0;
        let blt = MechanismSpec::Blt {
            buffers: 6,
            objective: crate::aggregation::BltObjective::Max,
        };
        for spec in [MechanismSpec::Honaker, blt] {
            let noise = NoiseDistribution::Gaussian { sigma };
            let mut l = topped(spec, noise, SamplerKind::FloatingPoint).unwrap();
            let target = l.top_up_variance().unwrap() * sigma * sigma;
            assert_eq!(l.params.release_noise.variance, target);
            let n = l.params.dim;
            let zeros = vec![0.0; n];
            for t in 0..=l.params.horizon {
                if t > 0 {
                    l.ask().unwrap();
                    l.tell(&zeros).unwrap();
                }
                let var = l.release.iter().map(|v| v * v).sum::<f64>() / n as f64;
                assert!(
                    (var / target - 1.0).abs() < 6.0 * (2.0 / n as f64).sqrt(),
                    "{spec:?} t={t}: {var} vs {target}"
                );
            }
        }
    }

    #[test]
    fn top_up_refuses_laplace_the_exact_path_the_padded_tree_and_a_started_run() {
        let gauss = NoiseDistribution::Gaussian { sigma: 1.0 };
        let laplace = NoiseDistribution::Laplace { scale: 1.0 };
        let fp = SamplerKind::FloatingPoint;
        for (spec, noise, sampler) in [
            (MechanismSpec::Honaker, laplace, fp),
            (MechanismSpec::Honaker, gauss, SamplerKind::Exact),
            (MechanismSpec::Tree { padded: true }, gauss, fp),
        ] {
            let err = topped(spec, noise, sampler).unwrap_err();
            assert!(
                matches!(err, CoreError::InvalidArgument { name: "top_up", .. }),
                "{err:?}"
            );
        }
        let domain = simplex(3);
        let params = DpFtrlParams::new(
            &domain,
            8,
            1.0,
            LossNorm::L2,
            Regularizer::NegativeEntropy,
            None,
            None,
            4,
        )
        .unwrap();
        let mut l = DpFtrl::new(
            domain,
            params,
            MechanismSetup {
                mechanism: MechanismSpec::Honaker,
                noise: gauss,
                sampler: fp,
                seed: [0; 4],
                secure: false,
                strict: false,
            },
        )
        .unwrap();
        l.ask().unwrap();
        l.tell(&[0.1, 0.2, 0.3]).unwrap();
        assert!(matches!(
            l.with_top_up([0; 4], false),
            Err(CoreError::Protocol(_))
        ));
    }
}
