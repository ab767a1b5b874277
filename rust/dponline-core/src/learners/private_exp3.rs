//! PrivateEXP3: EXP3 with uniform exploration fed with Laplace-noised bandit feedback.
//!
//! Source: Agarwal & Singh, "The Price of Differential Privacy for Online Learning" (ICML 2017),
//! Algorithm 4 (the private reduction: release `f̂_t = f_t + Lap(B/ε)`, one release per round) around
//! Algorithm 5 (EXP3 with uniform exploration γ, Bubeck & Cesa-Bianchi 2012 §3), Theorem 4.1.
//!
//! Per round: `p_t = (1 − γ)·softmax(−η L̂_{t−1}) + γ/K`; draw `I_t ~ p_t`; observe `f_t = ℓ_t(I_t)` clipped to
//! `[0, B]`; release `f̂_t = f_t + Z_t`, `Z_t ~ Lap(λ)`; update only the played arm,
//! `L̂(I_t) += f̂_t / p_t(I_t)`.
//!
//! **Privacy** (their Lemma 4.2): replacing one round's loss vector changes only that round's clipped
//! feedback, by at most `B`, so each `f̂_t` is an ε-DP Laplace mechanism with `λ = B/ε`; every other release
//! depends on the data only through the earlier `f̂_s` and the learner's own randomness (independent of the
//! data), so the whole sequence of arms is ε-DP (adaptive parallel composition, post-processing).
//!
//! **Parameters** ([`Exp3Tuning`]). On the event `E` that every `|Z_t| ≤ λ ln(T/β)` with `β = 1/T`
//! (probability `≥ 1 − 1/T`; its complement costs at most `BT·(1/T) = B`), `f̂_t ≥ −c` with `c = 2λ ln T` and
//! `|f̂_t| ≤ B' = B + c`. The Hedge bound `ln K/η + η Σ_t ⟨q_t, ℓ̂_t²⟩` (from `e^{−x} ≤ 1 − x + x²`) needs
//! `η ℓ̂_t(i) ≥ −1`; since `p_t(i) ≥ γ/K`, `γ ≥ η K c` suffices, and uniform exploration costs `γ B T`.
//!
//! * [`Exp3Tuning::Paper`] — Theorem 4.1: it bounds `ℓ̂_t(i)²` by the range, `γ = η K B'` and regret
//!   `≤ ln K/η + η T K B'²/(1 − γ) + γ B T + B`; the leading terms give `η = sqrt(ln K / (T K B'(B' + B)))`.
//! * [`Exp3Tuning::Variance`] (default) — the same proof with the second moment in place of the range: given
//!   the past, `E⟨q_t, ℓ̂_t²⟩ ≤ Σ_i E[f̂_t(i)²]/(1 − γ) ≤ K (B² + 2λ²)/(1 − γ)` (`q_t ≤ p_t/(1 − γ)`; the noise is
//!   centred and independent of the arm, and its law on `E` is the Laplace law truncated symmetrically, so
//!   still centred with second moment at most `2λ²` — also for the discrete Laplace, whose variance is below
//!   `2λ²` at effective scale `λ`). With `γ = η K c` the regret is at most
//!   `ln K/η + η T K (B² + 2λ²)/(1 − γ) + γ B T + B`; the leading terms give
//!   `η = sqrt(ln K / (T K (B² + 2λ² + cB)))`. At `K = 80`, `T = 10⁶`, `B = λ = 1` that is 5.3 times the
//!   paper's step and a bound 5 times smaller. With `λ = 0` (non-private) `c = 0`: plain EXP3 (`γ = 0`,
//!   `η = sqrt(ln K/(T K B²))`).
//!
//! In both, a `γ` above ½ is capped at ½ and `η = γ/(K·range)` (`range = B'` or `c`).
//!
//! **Numerics**: the weights are kept in log-domain (`w_i = −η L̂_i`); a 16-ary sum tree over `exp(w_i − M)`
//! (each node's 16 child sums in two cache lines, every sum recomputed exactly from its children) gives
//! `O(log K)` sampling (a branch-free choice among 16 per level) and `O(log K)` update of the played arm, the
//! exponential by [`crate::vecops::exp_clamped`] (no libm call). When the tree's values drift out of
//! `[1e-100, 1e100]` the reference `M` is reset to `max w` and the tree rebuilt (`O(K)`, rare: on the event a
//! round raises a log-weight by at most `η c K/γ ≤ 1`, and lowers only the played arm's).
//!
//! **Exact noise** (the default of the Python wrapper, `sampler="exact"`): the clipped feedback is rounded onto
//! a power-of-two grid and integer discrete Laplace noise is added, `f̂_t = (round(f_t/γ) + Z_t)·γ` with
//! `Z_t ~ DLap(t)` calibrated by [`crate::noise::release::exact_laplace`] (`Δ₁ = B`, one coordinate): exactly
//! ε-DP for the released floats (`(⌈B/γ⌉ + 1)/t <= ε`, the grid Lemma and the discrete Laplace Lemma). The arm
//! draw from the exponential weights stays in floating point: it is post-processing of the releases with the
//! learner's own data-independent randomness, so it does not enter the privacy argument. `λ` in the tuning
//! below is then the effective scale `t·γ`.
//!
//! **Speed**: the uniforms and the Laplace noise, independent of the data, are drawn ahead in blocks of 64
//! (a block is secret like the generators' states: serialised only for a seeded learner); `run`, `ask` and
//! `tell` run under [`crate::simd::dispatch`], with the same bits at every instruction-set level.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_positive};
use crate::losses::{LossFamily, LossKind};
use crate::noise::grid::ExactNoise;
use crate::noise::release::release_on_grid;
use crate::noise::{NoiseDistribution, Sampler, SumOf, WithSampler};
use crate::rng::{Generator, Seed, mix64};

use super::{Checkpoints, Learner};

const REBUILD_HIGH: f64 = 1e100;
const REBUILD_LOW: f64 = 1e-100;

/// How [`Exp3Params`] tunes `η` and `γ` (module docs, "Parameters").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exp3Tuning {
    /// The second-moment bound (default): `η = sqrt(ln K / (T K (B² + 2λ² + cB)))`, `γ = η K c`, `c = 2λ ln T`.
    Variance,
    /// Theorem 4.1's range bound: `η = sqrt(ln K / (T K B'(B' + B)))`, `γ = η K B'`.
    Paper,
}

impl Exp3Tuning {
    /// Parse `"variance"` or `"paper"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for any other name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "variance" => Ok(Exp3Tuning::Variance),
            "paper" => Ok(Exp3Tuning::Paper),
            other => Err(CoreError::invalid("tuning", "'variance' or 'paper'", other)),
        }
    }

    /// The name [`Exp3Tuning::from_name`] parses.
    pub fn name(self) -> &'static str {
        match self {
            Exp3Tuning::Variance => "variance",
            Exp3Tuning::Paper => "paper",
        }
    }
}

/// The constants of Algorithm 5 for `K` arms, horizon `T`, loss bound `B` and Laplace scale `λ`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exp3Params {
    /// Number of arms `K`.
    pub arms: usize,
    /// Horizon `T`.
    pub horizon: u64,
    /// Loss bound `B` (feedback clipped to `[0, B]`).
    pub loss_bound: f64,
    /// Laplace scale `λ` of the released feedback (0 = non-private).
    pub noise_scale: f64,
    /// `B' = B + 2λ ln T`: the range of the noisy feedback on the high-probability event.
    pub noisy_range: f64,
    /// Step size `η`.
    pub eta: f64,
    /// Uniform exploration `γ`.
    pub gamma: f64,
    /// How `η` and `γ` were tuned.
    pub tuning: Exp3Tuning,
}

impl Exp3Params {
    /// The tuning described in the module docs.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `K < 2`, `T < 1`, a non-positive `B`, a negative or
    /// non-finite `λ`, or derived constants that are not finite and positive (`γ` may be 0 with
    /// [`Exp3Tuning::Variance`] when `c = 2λ ln T = 0`: no noise, or `T = 1`, where the bound is the trivial `B`).
    pub fn new(
        arms: usize,
        horizon: u64,
        loss_bound: f64,
        noise_scale: f64,
        tuning: Exp3Tuning,
    ) -> Result<Self> {
        if arms < 2 {
            return Err(CoreError::invalid("arms", ">= 2", arms));
        }
        crate::error::check_horizon(horizon)?;
        check_positive("loss_bound", loss_bound)?;
        crate::error::check_nonnegative("noise scale", noise_scale)?;
        let (k, tf, b, lambda) = (arms as f64, horizon as f64, loss_bound, noise_scale);
        let c = 2.0 * lambda * tf.ln();
        let range = b + c;
        // η = sqrt(ln K / (T K · s)), s the tuning's second-moment-plus-exploration factor s1·s2, factored when
        // the product under- or overflows (B < 1.5e-154 or B' > 1.3e154).
        let (s1, s2, explore) = match tuning {
            Exp3Tuning::Paper => (range, range + b, range),
            Exp3Tuning::Variance => {
                let m = b.max(lambda);
                (
                    m,
                    (b / m) * b + 2.0 * (lambda / m) * lambda + c * (b / m),
                    c,
                )
            }
        };
        let denominator = tf * k * s1 * s2;
        let mut eta = if denominator.is_normal() {
            (k.ln() / denominator).sqrt()
        } else {
            (k.ln() / (tf * k)).sqrt() / (s1.sqrt() * s2.sqrt())
        };
        let mut gamma = eta * k * explore;
        if gamma > 0.5 {
            gamma = 0.5;
            eta = gamma / (k * explore);
        }
        let p = Exp3Params {
            arms,
            horizon,
            loss_bound,
            noise_scale,
            noisy_range: range,
            eta,
            gamma,
            tuning,
        };
        let derived = [
            ("eta", eta),
            ("gamma", if explore == 0.0 { 1.0 } else { gamma }), // no exploration needed: γ = 0
            ("noisy range", range * k * tf),
            ("regret bound", p.regret_bound()),
        ];
        match derived.iter().find(|(_, v)| !(v.is_finite() && *v > 0.0)) {
            None => Ok(p),
            Some((what, v)) => Err(CoreError::InvalidArgument {
                name: "arms/horizon/loss_bound/epsilon",
                allowed: "values whose derived constants are finite and > 0",
                value: format!("{what} = {v}"),
            }),
        }
    }

    /// The expected-regret bound of the module docs: `ln K/η + η T K M/(1 − γ) + γ B T + B` with the second
    /// moment bound `M = B'²` ([`Exp3Tuning::Paper`]) or `B² + 2λ²` ([`Exp3Tuning::Variance`]).
    pub fn regret_bound(&self) -> f64 {
        let (k, tf, b, r, lambda) = (
            self.arms as f64,
            self.horizon as f64,
            self.loss_bound,
            self.noisy_range,
            self.noise_scale,
        );
        // (η K B')·T·B': B'² alone over- or underflows for |log10 B'| > 154.
        let moment = match self.tuning {
            Exp3Tuning::Paper => self.eta * (k * r) * tf * r,
            Exp3Tuning::Variance => {
                (self.eta * b) * k * tf * b + 2.0 * (self.eta * lambda) * k * tf * lambda
            }
        };
        k.ln() / self.eta + moment / (1.0 - self.gamma) + self.gamma * b * tf + b
    }
}

/// A bandit environment with Bernoulli losses: arm `i` has loss 1 with probability `means[i]`, else 0,
/// independently across rounds and arms. Counter-based (round `t`, arm `i` ↦ a hash of `(seed, t, i)`), so
/// any round is O(1) to reach and the environment is stateless.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BernoulliArms {
    means: Vec<f64>,
    horizon: u64,
    seed: u64,
}

impl BernoulliArms {
    /// Arms with loss means `means` (each in `[0, 1]`), for `horizon` rounds.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for fewer than 2 arms, a mean outside `[0, 1]`, `horizon == 0`.
    pub fn new(means: Vec<f64>, horizon: u64, seed: u64) -> Result<Self> {
        if means.len() < 2 {
            return Err(CoreError::invalid("means", "at least 2 arms", means.len()));
        }
        if let Some(m) = means.iter().find(|m| !(0.0..=1.0).contains(*m)) {
            return Err(CoreError::invalid("means", "in [0, 1]", m));
        }
        crate::error::check_horizon(horizon)?;
        Ok(BernoulliArms {
            means,
            horizon,
            seed,
        })
    }

    /// Loss means.
    pub fn means(&self) -> &[f64] {
        &self.means
    }

    /// Number of rounds.
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// Seed of the environment.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The loss of `arm` at round `t` (0-based): 1 with probability `means[arm]`.
    #[inline]
    pub fn loss(&self, t: u64, arm: usize) -> f64 {
        let h = mix64(mix64(mix64(self.seed ^ 0x243F_6A88_85A3_08D3).wrapping_add(t)) ^ arm as u64);
        let u = (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        if u < self.means[arm] { 1.0 } else { 0.0 }
    }
}

/// What a native bandit run plays against: a table of loss vectors (the played arm's loss is `row[arm]`) or
/// Bernoulli arms.
#[derive(Debug, Clone, Copy)]
pub enum ArmLosses<'a> {
    /// A linear [`LossFamily`] of dimension `K`: round `t`'s loss of arm `i` is entry `i` of its row.
    Table(&'a LossFamily),
    /// [`BernoulliArms`].
    Bernoulli(&'a BernoulliArms),
}

impl ArmLosses<'_> {
    fn arms(&self) -> usize {
        match self {
            ArmLosses::Table(f) => f.dim(),
            ArmLosses::Bernoulli(b) => b.means.len(),
        }
    }

    fn horizon(&self) -> u64 {
        match self {
            ArmLosses::Table(f) => f.horizon(),
            ArmLosses::Bernoulli(b) => b.horizon,
        }
    }

    #[inline]
    fn loss(&self, t: u64, arm: usize) -> f64 {
        match self {
            ArmLosses::Table(f) => f.row(f.row_index(t))[arm],
            ArmLosses::Bernoulli(b) => b.loss(t, arm),
        }
    }
}

/// Children per node of the sum tree: a node's children are `FANOUT` contiguous sums (two cache lines).
const FANOUT: usize = 16;

/// The `FANOUT` child sums of one node, aligned to a cache line (a group occupies exactly two lines). Child
/// `c` is stored at [`slot`]`(c)`: the 4×4 transpose, so entry `j` of each of the four aligned quads of slots
/// belongs to the `j`-th run of four consecutive children and the four runs' running sums are four lanes of
/// one vector addition.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[repr(C, align(64))]
struct Group([f64; FANOUT]);

/// Slot of child `c < 16` in its [`Group`]: `4·(c mod 4) + ⌊c/4⌋` (an involution).
#[inline(always)]
const fn slot(c: usize) -> usize {
    ((c & 3) << 2) | ((c >> 2) & 3)
}

/// The sums of the four runs of four consecutive children (`q[j]` = children `4j..4j+4` in order), as four
/// lanes: three vector additions.
#[inline(always)]
fn run_sums(g: &[f64; FANOUT]) -> [f64; 4] {
    let mut q = [g[0], g[1], g[2], g[3]];
    for i in 1..4 {
        for (j, lane) in q.iter_mut().enumerate() {
            *lane += g[4 * i + j];
        }
    }
    q
}

/// The sum of a group: `((q₀ + q₁) + q₂) + q₃` over [`run_sums`]. Always the same order, so a node's sum is
/// a function of its children alone, and it equals the last of [`running_sums`] bit for bit.
#[inline(always)]
fn group_sum(g: &[f64; FANOUT]) -> f64 {
    let q = run_sums(g);
    ((q[0] + q[1]) + q[2]) + q[3]
}

/// The inclusive running sums of the children in child order, stored by slot: inside each run of four the
/// lanes accumulate (three vector additions), then each run is offset by the sum of the runs before it
/// (`0`, `q₀`, `q₀ + q₁`, `(q₀ + q₁) + q₂`; one vector addition). Non-decreasing in child order (rounding is
/// monotone, and the last sum of run `j` is computed exactly as the offset of run `j + 1`), and the last one
/// equals [`group_sum`].
#[inline(always)]
fn running_sums(g: &[f64; FANOUT]) -> [f64; FANOUT] {
    let mut run = *g;
    for i in 1..4 {
        for j in 0..4 {
            run[4 * i + j] = run[4 * (i - 1) + j] + g[4 * i + j];
        }
    }
    let o1 = run[12];
    let o2 = o1 + run[13];
    let o3 = o2 + run[14];
    let offsets = [0.0, o1, o2, o3];
    for i in 0..4 {
        for (j, &o) in offsets.iter().enumerate() {
            run[4 * i + j] += o;
        }
    }
    run
}

/// Branch-free choice of the child whose interval of the running sums contains `target ≥ 0`: the count `c` of
/// running sums `≤ target` (a child of value 0 adds a running sum equal to the one before it, so it is never
/// the answer), and `target` minus the largest of those sums (the offset inside child `c`). `c == FANOUT`
/// when `target` is at or beyond the group's sum. One compare, count and maximum over the 16 sums: vectorised
/// at every level.
#[inline(always)]
fn pick(g: &[f64; FANOUT], target: f64) -> (usize, f64) {
    let run = running_sums(g);
    let mut count = [0u64; 4];
    let mut before = [0.0f64; 4];
    for quad in run.chunks_exact(4) {
        for ((n, b), &r) in count.iter_mut().zip(&mut before).zip(quad) {
            let le = r <= target;
            *n += u64::from(le);
            let candidate = if le { r } else { 0.0 };
            *b = if candidate > *b { candidate } else { *b };
        }
    }
    let c = (count[0] + count[1]) + (count[2] + count[3]);
    let b0 = if before[1] > before[0] {
        before[1]
    } else {
        before[0]
    };
    let b1 = if before[3] > before[2] {
        before[3]
    } else {
        before[2]
    };
    let b = if b1 > b0 { b1 } else { b0 };
    (c as usize, target - b)
}

/// A `FANOUT`-ary sum tree over `K` non-negative values: `O(log K)` update and proportional sampling.
///
/// `levels[0]` holds the leaves (padded with zeros to whole groups); child `c` of group `g` of `levels[l + 1]`
/// is the exact sum ([`group_sum`]) of group `16g + c` of `levels[l]`, recomputed from that group whenever
/// one of its entries changes (no running differences, so no drift: a sum is 0 exactly when its whole subtree
/// is 0). The last level is a single group; `total` is its sum. The tree is a function of the leaves alone,
/// so it is not serialised: [`SumTree::rebuild`] restores it.
#[derive(Debug, Clone, Default)]
struct SumTree {
    levels: Vec<Vec<Group>>,
    total: f64,
}

impl SumTree {
    fn new(k: usize) -> Result<Self> {
        let mut levels = Vec::new();
        let mut len = k;
        loop {
            let groups = len.div_ceil(FANOUT);
            levels.push(crate::alloc::zeros::<Group>(
                "sum tree over the arms",
                groups,
            )?);
            if groups == 1 {
                break;
            }
            len = groups;
        }
        Ok(SumTree { levels, total: 0.0 })
    }

    #[inline(always)]
    fn total(&self) -> f64 {
        self.total
    }

    #[inline(always)]
    fn leaf(&self, i: usize) -> f64 {
        self.levels
            .first()
            .and_then(|l| l.get(i / FANOUT))
            .map_or(0.0, |g| g.0[slot(i % FANOUT)])
    }

    /// Set leaf `i` (`< K`) and recompute the sums above it, each from its whole group: per level, the group
    /// with the new entry blended in (in registers, no store-then-reload of a lane), its sum, and the changed
    /// entry written.
    #[inline(always)]
    fn set(&mut self, mut i: usize, value: f64) {
        let mut value = value;
        for level in &mut self.levels {
            let (g, s) = (i / FANOUT, slot(i % FANOUT));
            let Some(group) = level.get_mut(g) else {
                return;
            };
            // The group with the new entry blended in by bit masks, in registers (a `k == s` select would
            // become a jump table on `s`); only the changed entry is stored (measured faster than storing
            // the whole group).
            let mut new = group.0;
            let bits = value.to_bits();
            for (k, v) in new.iter_mut().enumerate() {
                let mask = 0u64.wrapping_sub(u64::from(k == s));
                *v = f64::from_bits((bits & mask) | (v.to_bits() & !mask));
            }
            group.0[s] = value;
            value = group_sum(&new);
            i = g;
        }
        self.total = value;
    }

    /// Set every leaf from `values` and recompute all sums (`O(K)`).
    fn rebuild(&mut self, values: impl Iterator<Item = f64>) {
        let mut levels = self.levels.iter_mut();
        let Some(mut below) = levels.next() else {
            return;
        };
        below.fill(Group::default());
        for (i, v) in values.enumerate() {
            if let Some(group) = below.get_mut(i / FANOUT) {
                group.0[slot(i % FANOUT)] = v;
            }
        }
        for level in levels {
            for (i, group) in below.iter().enumerate() {
                if let Some(parent) = level.get_mut(i / FANOUT) {
                    parent.0[slot(i % FANOUT)] = group_sum(&group.0);
                }
            }
            below = level;
        }
        self.total = below.first().map_or(0.0, |g| group_sum(&g.0));
    }

    /// The leaf where the running sums cross `target ∈ [0, total)`, never a leaf of value 0 while the total
    /// is positive: a child is entered only when `target` lies inside its non-empty interval ([`pick`]) or,
    /// when rounding leaves `target` at or beyond the group's sum, it is the last positive child of the group
    /// (there is one: the group's sum is exactly a sum of non-negative values and positive), entered with
    /// `target` = its value (so the same rule applies below).
    #[inline(always)]
    fn find(&self, mut target: f64) -> usize {
        let mut g = 0;
        for level in self.levels.iter().rev() {
            let Some(group) = level.get(g) else {
                return 0;
            };
            let (c, offset) = pick(&group.0, target);
            let c = if c < FANOUT {
                target = offset;
                c
            } else {
                last_positive(&group.0, &mut target)
            };
            g = g * FANOUT + c;
        }
        g
    }
}

/// The last child of positive value (0 if none), with `target` set to its value: the rounding fallback of
/// [`SumTree::find`].
#[cold]
fn last_positive(g: &[f64; FANOUT], target: &mut f64) -> usize {
    let c = (0..FANOUT).rev().find(|&c| g[slot(c)] > 0.0).unwrap_or(0);
    *target = g[slot(c)];
    c
}

/// Rounds per block of pre-drawn randomness.
const BLOCK: usize = 64;

/// The data-independent randomness of the next rounds, drawn in blocks of [`BLOCK`] ahead of use: entry `n`
/// of `uniforms` picks the arm of a round (stream 2) and entry `n` of `noise` is the Laplace noise of its
/// release (stream 1, [`Sampler::fill`]); `next` is the entry of the next round. The block is refilled when a
/// round is drawn with `next == BLOCK`, so block boundaries are round numbers fixed by the seed and the
/// history, and ask/tell, `run` and a restored pickle consume the same values.
///
/// A block is secret randomness exactly like the generators' states: for a reproducible learner (whose
/// generators are serialised) it is serialised too, so a restore resumes bit-identically; for a secure
/// learner it is never serialised (an empty block is written) and a restore draws a fresh block from the
/// freshly OS-keyed generators. A block also records the fork epoch it was drawn in ([`Generator::epoch`]):
/// a forked child of a process holding a secure learner sees a different epoch and redraws the block (from its
/// re-keyed generators) before it releases anything — also for a round asked before the fork — so parent and
/// child never add the same noise.
#[derive(Debug, Clone)]
struct DrawBlock {
    uniforms: [f64; BLOCK],
    noise: [f64; BLOCK],
    /// The integer noise (grid units) of an exact learner ([`PrivateExp3::exact`]); `noise` is then unused.
    ints: [i64; BLOCK],
    next: usize,
    secret: bool,
    /// [`Generator::epoch`] of the noise generator when the block was drawn (not serialised: a restored
    /// seeded block has epoch 0, a restored secure learner redraws its block).
    epoch: u64,
}

/// The serialised form of a [`DrawBlock`] (empty vectors for a secret block).
#[derive(Serialize, Deserialize)]
struct SavedBlock {
    uniforms: Vec<f64>,
    noise: Vec<f64>,
    ints: Vec<i64>,
    next: u32,
}

impl Serialize for DrawBlock {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> core::result::Result<S::Ok, S::Error> {
        let saved = if self.secret {
            SavedBlock {
                uniforms: Vec::new(),
                noise: Vec::new(),
                ints: Vec::new(),
                next: BLOCK as u32,
            }
        } else {
            SavedBlock {
                uniforms: self.uniforms.to_vec(),
                noise: self.noise.to_vec(),
                ints: self.ints.to_vec(),
                next: self.next as u32,
            }
        };
        saved.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for DrawBlock {
    /// Checked by [`PrivateExp3::from_bytes`]: a block of the wrong length is read as empty (`secret`).
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> core::result::Result<Self, D::Error> {
        let saved = SavedBlock::deserialize(deserializer)?;
        let mut block = DrawBlock::empty(false);
        match (
            <[f64; BLOCK]>::try_from(saved.uniforms.as_slice()),
            <[f64; BLOCK]>::try_from(saved.noise.as_slice()),
            <[i64; BLOCK]>::try_from(saved.ints.as_slice()),
        ) {
            (Ok(u), Ok(z), Ok(n)) => {
                block.uniforms = u;
                block.noise = z;
                block.ints = n;
                block.next = saved.next as usize;
            }
            _ => block.secret = true,
        }
        Ok(block)
    }
}

impl DrawBlock {
    fn empty(secret: bool) -> Self {
        DrawBlock {
            uniforms: [0.5; BLOCK],
            noise: [0.0; BLOCK],
            ints: [0; BLOCK],
            next: BLOCK,
            secret,
            epoch: 0,
        }
    }

    /// Whether the stored values are ones a block can hold (uniforms in (0, 1), finite noise, `next ≤ BLOCK`).
    fn is_valid(&self) -> bool {
        self.next <= BLOCK
            && self.uniforms.iter().all(|u| *u > 0.0 && *u < 1.0)
            && self.noise.iter().all(|z| z.is_finite())
    }

    /// Draw the next block: `BLOCK` uniforms from `rng`, `BLOCK` noise values from `noise_rng` — integers of
    /// `exact` when given, floats of `noise` otherwise. On an error nothing is changed but the generators.
    ///
    /// Errors: those of [`ExactNoise::fill`] (probability below `10⁻⁶⁰⁰`).
    #[inline(never)]
    fn refill(
        &mut self,
        rng: &mut Generator,
        noise_rng: &mut Generator,
        noise: &SumOf,
        exact: Option<&ExactNoise>,
    ) -> Result<()> {
        if let Some(exact) = exact {
            let mut ints = [0i64; BLOCK];
            exact.fill(noise_rng, &mut ints)?;
            self.ints = ints;
            self.epoch = noise_rng.epoch();
            let uniforms = &mut self.uniforms;
            crate::with_generator!(rng, g => uniforms.iter_mut().for_each(|u| *u = open01(g)));
            self.next = 0;
            return Ok(());
        }
        let uniforms = &mut self.uniforms;
        crate::with_generator!(rng, g => uniforms.iter_mut().for_each(|u| *u = open01(g)));
        struct Fill<'a> {
            rng: &'a mut Generator,
            out: &'a mut [f64; BLOCK],
        }
        impl WithSampler for Fill<'_> {
            type Output = ();
            #[inline]
            fn call<S: Sampler>(self, s: S) {
                let out = self.out;
                crate::with_generator!(self.rng, g => s.fill(g, out));
            }
        }
        noise.with_sampler(Fill {
            rng: noise_rng,
            out: &mut self.noise,
        });
        self.epoch = noise_rng.epoch();
        self.next = 0;
        Ok(())
    }
}

/// Check that `exact` (if any) is discrete Laplace noise of effective scale `params.noise_scale` whose grid
/// holds the feedback range `[0, B]` (so every release is exact).
fn check_exact(exact: Option<&ExactNoise>, params: &Exp3Params) -> Result<()> {
    let Some(exact) = exact else {
        return Ok(());
    };
    let laplace = matches!(
        exact.dist,
        crate::noise::grid::ExactDistribution::DiscreteLaplace { t } if (1..=1u64 << 52).contains(&t)
    );
    if !laplace
        || exact.scale() != params.noise_scale
        || exact
            .grid
            .integer_sensitivity_l1(params.loss_bound, 1)
            .is_err()
    {
        return Err(CoreError::invalid(
            "exact",
            "discrete Laplace noise whose effective scale is params.noise_scale, on a grid holding [0, B]",
            exact.name(),
        ));
    }
    Ok(())
}

/// [`Generator::open01`] on the concrete generator (the same bits: 53 random bits, never 0 or 1).
#[inline(always)]
fn open01<R: rand_core::Rng + ?Sized>(g: &mut R) -> f64 {
    let bits = g.next_u64() >> 11;
    (bits as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// The random draws one PrivateEXP3 step is measured against, for `steps` steps: two uniforms
/// ([`Generator::open01`]'s bits) and one `Laplace(1)` draw per step, all from the generator of stream 1 of
/// `seed` (OS-keyed when `secure`), drawn the cheapest way the core has — in blocks of 64 steps, the
/// uniforms by one loop and the Laplace draws by the sampler's [`Sampler::fill`] (as the learner pre-draws
/// its own) — so the cost does not depend on whether a per-draw call is inlined. Returns the sum of every
/// draw so that nothing is optimised away. For benchmarks (`benches/compare_bandits.py`): the native floor
/// of the "cost of the RNG draws a step needs".
///
/// Errors: [`CoreError::Entropy`] when `secure` and the OS entropy source fails.
pub fn raw_step_draws(seed: Seed, steps: u64, secure: bool) -> Result<f64> {
    let mut rng = Generator::for_stream(&seed, 1, secure)?;
    let noise = NoiseDistribution::laplace(1.0)?.sum_of(1);
    struct Loop<'a> {
        rng: &'a mut Generator,
        steps: u64,
    }
    impl WithSampler for Loop<'_> {
        type Output = f64;
        #[inline]
        fn call<S: Sampler>(self, s: S) -> f64 {
            let mut uniforms = [0.0f64; 2 * BLOCK];
            let mut laplace = [0.0f64; BLOCK];
            let mut left = self.steps;
            let mut acc = 0.0;
            crate::with_generator!(self.rng, g => {
                while left > 0 {
                    let n = usize::try_from(left).map_or(BLOCK, |l| l.min(BLOCK));
                    uniforms[..2 * n].iter_mut().for_each(|u| *u = open01(g));
                    s.fill(g, &mut laplace[..n]);
                    acc += crate::vecops::sum(&uniforms[..2 * n]) + crate::vecops::sum(&laplace[..n]);
                    left -= n as u64;
                }
            });
            acc
        }
    }
    Ok(noise.with_sampler(Loop {
        rng: &mut rng,
        steps,
    }))
}

/// The PrivateEXP3 learner (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct PrivateExp3 {
    params: Exp3Params,
    /// Log-weights `w_i = −η L̂_i`.
    log_weights: Vec<f64>,
    /// Reference `M` of the tree: leaf `i` holds `exp(w_i − M)`.
    reference: f64,
    /// Leaf `i` = `exp(w_i − M)`; rebuilt from the log-weights on restore (it is a function of them).
    #[serde(skip)]
    tree: SumTree,
    /// Draws the arms (stream 2).
    rng: Generator,
    /// Draws the Laplace noise of the releases (stream 1).
    noise_rng: Generator,
    #[serde(skip, default = "super::unset_feedback_noise")]
    noise: SumOf,
    /// The exact discrete Laplace noise on its grid (module docs, "Exact noise"); `None`: floating-point
    /// `Laplace(λ)` (or no noise for `λ = 0`).
    exact: Option<ExactNoise>,
    /// The uniforms and noise of the next rounds (see [`DrawBlock`]).
    block: DrawBlock,
    t: u64,
    /// The asked arm and `1/p_t(arm)`, while a `tell` is pending.
    pending: Option<(usize, f64)>,
    strict: bool,
    clipped: u64,
    rebuilds: u64,
    last_release: f64,
}

impl PrivateExp3 {
    /// A learner with constants `params`: Laplace noise of scale `params.noise_scale` from stream 1 of `seed`,
    /// arm draws from stream 2 (both OS-keyed when `secure`). The noise is the exact discrete Laplace `exact`
    /// when given (its effective scale [`ExactNoise::scale`] must be `params.noise_scale`, as
    /// [`crate::noise::release::scalar_laplace`] returns them), floating-point `Laplace(λ)` otherwise. With
    /// `strict`, feedback outside `[0, B]` is an error instead of being clipped.
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `exact` when its scale is not `params.noise_scale` or the
    /// feedback range `[0, B]` leaves its grid; [`CoreError::Allocation`] for a huge `K`; entropy failures.
    pub fn new(
        params: Exp3Params,
        exact: Option<ExactNoise>,
        seed: Seed,
        secure: bool,
        strict: bool,
    ) -> Result<Self> {
        check_exact(exact.as_ref(), &params)?;
        let k = params.arms;
        let mut tree = SumTree::new(k)?;
        tree.rebuild(std::iter::repeat_n(1.0, k));
        Ok(PrivateExp3 {
            noise: NoiseDistribution::laplace(params.noise_scale)?.sum_of(1),
            log_weights: crate::alloc::zeros("log-weights of the arms", k)?,
            reference: 0.0,
            tree,
            rng: Generator::for_stream(&seed, 2, secure)?,
            noise_rng: Generator::for_stream(&seed, 1, secure)?,
            block: DrawBlock::empty(secure),
            exact,
            params,
            t: 0,
            pending: None,
            strict,
            clipped: 0,
            rebuilds: 0,
            last_release: 0.0,
        })
    }

    /// The exact noise and its grid, or `None` for the floating-point sampler.
    pub fn exact(&self) -> Option<&ExactNoise> {
        self.exact.as_ref()
    }

    /// How many times the sum tree was rebuilt (renormalised).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// The last released noisy feedback `f̂_t`.
    pub fn last_release(&self) -> f64 {
        self.last_release
    }

    /// Log-weights `w_i = −η L̂_i`.
    pub fn log_weights(&self) -> &[f64] {
        &self.log_weights
    }

    /// The sampling distribution `p_t` of the next round, written into `out` (length `K`), computed afresh
    /// in log-domain: `(1 − γ)·exp(w_i − lse(w)) + γ/K`.
    ///
    /// Errors: [`CoreError::Shape`] for a wrong length.
    pub fn probabilities(&self, out: &mut [f64]) -> Result<()> {
        let k = self.params.arms;
        if out.len() != k {
            return Err(CoreError::Shape {
                name: "out",
                expected: format!("length {k}"),
                got: format!("length {}", out.len()),
            });
        }
        let m = self
            .log_weights
            .iter()
            .fold(f64::NEG_INFINITY, |m, &w| m.max(w));
        let mut total = 0.0;
        for (o, &w) in out.iter_mut().zip(&self.log_weights) {
            *o = (w - m).exp();
            total += *o;
        }
        let (gamma, uniform) = (self.params.gamma, self.params.gamma / k as f64);
        out.iter_mut()
            .for_each(|o| *o = (1.0 - gamma) * *o / total + uniform);
        Ok(())
    }

    /// The arm `I_t` to play this round (asking again before `tell` returns the same arm).
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<usize> {
        if let Some((arm, _)) = self.pending {
            return Ok(arm);
        }
        self.check_rounds_fit(1, self.params.horizon)?;
        crate::simd::dispatch(
            #[inline(always)]
            || self.draw(),
        )
    }

    /// Draw `I_t` and set `pending` (the kernel of [`PrivateExp3::ask`] and [`PrivateExp3::run`]).
    ///
    /// Errors: those of [`DrawBlock::refill`] (not expected); nothing is then changed.
    #[inline(always)]
    fn draw(&mut self) -> Result<usize> {
        if self.block.next >= BLOCK || self.block.epoch != self.noise_rng.epoch() {
            self.refill_block()?;
        }
        let k = self.params.arms;
        let gamma = self.params.gamma;
        let u = self.block.uniforms[self.block.next % BLOCK];
        // One uniform: u < γ explores (u/γ is uniform on (0,1)); otherwise (u − γ)/(1 − γ) is uniform and
        // picks an arm of the exponential weights through the sum tree.
        let total = self.tree.total();
        let arm = if u < gamma {
            ((u / gamma * k as f64) as usize).min(k - 1)
        } else {
            self.tree
                .find((u - gamma) / (1.0 - gamma) * total)
                .min(k - 1)
        };
        // 1/p_t(arm) with p_t(arm) = (1 − γ)·leaf/total + γ/K: one division.
        let inverse = total / ((1.0 - gamma) * self.tree.leaf(arm) + gamma / k as f64 * total);
        self.pending = Some((arm, inverse));
        Ok(arm)
    }

    /// Report the loss `ℓ_t(I_t)` of the asked arm.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a preceding `ask`; [`CoreError::NonFinite`];
    /// with `strict`, [`CoreError::InvalidArgument`] for a loss outside `[0, B]`.
    pub fn tell(&mut self, loss: f64) -> Result<()> {
        let Some((arm, inverse)) = self.pending else {
            return Err(CoreError::Protocol(
                "tell() must follow ask(): one loss per asked arm".into(),
            ));
        };
        crate::error::check_finite("loss", &[loss])?;
        self.check_strict(loss)?;
        crate::simd::dispatch(
            #[inline(always)]
            || self.update(arm, inverse, loss),
        )
    }

    /// With `strict`, refuse a loss outside `[0, B]` ([`super::check_strict_loss`]).
    #[inline(always)]
    fn check_strict(&self, loss: f64) -> Result<()> {
        super::check_strict_loss(
            self.strict,
            loss,
            0.0..=self.params.loss_bound,
            "within [0, loss_bound] (strict=True)",
            self.t + 1,
        )
    }

    /// Release the round's feedback and update the played arm (the kernel of [`PrivateExp3::tell`] and
    /// [`PrivateExp3::run`]).
    ///
    /// Floating point before the release (issue 21): none but the clamp to `[0, B]`, which is exact, so the
    /// released value moves by at most the calibrated `B` between neighbours; the `1/p` scaling comes after
    /// the release (post-processing).
    ///
    /// Errors: none for a finite `loss` (the clipped feedback lies on the grid's checked range); the state is
    /// unchanged on an error.
    #[inline(always)]
    fn update(&mut self, arm: usize, inverse: f64, loss: f64) -> Result<()> {
        let bound = self.params.loss_bound;
        let clamped = loss.clamp(0.0, bound);
        if self.block.epoch != self.noise_rng.epoch() {
            // Forked since this round was asked: the block is the parent's noise. Its arm stays (it is public),
            // the release takes fresh noise from the re-keyed generator.
            self.refresh_after_fork()?;
        }
        let i = self.block.next % BLOCK;
        let released = match &self.exact {
            Some(exact) => release_on_grid(&exact.grid, clamped, self.block.ints[i])?,
            None => clamped + self.block.noise[i],
        };
        if !(0.0..=bound).contains(&loss) {
            self.clipped += 1;
        }
        self.block.next += 1;
        self.last_release = released;
        let Some(slot) = self.log_weights.get_mut(arm) else {
            return Ok(());
        };
        let w = *slot - self.params.eta * released * inverse;
        *slot = w;
        let value = crate::vecops::exp_clamped(w - self.reference);
        self.tree.set(arm, value);
        let total = self.tree.total();
        if !(value <= REBUILD_HIGH && total >= REBUILD_LOW) {
            self.rebuild();
        }
        self.pending = None;
        self.t += 1;
        Ok(())
    }

    /// Redraw the block after a fork (see [`DrawBlock`]).
    #[cold]
    #[inline(never)]
    fn refresh_after_fork(&mut self) -> Result<()> {
        self.refill_block()
    }

    /// Draw the next block from the learner's generators and noise ([`DrawBlock::refill`]).
    #[inline]
    fn refill_block(&mut self) -> Result<()> {
        self.block.refill(
            &mut self.rng,
            &mut self.noise_rng,
            &self.noise,
            self.exact.as_ref(),
        )
    }

    /// Reset the reference to `max w` and rebuild the tree (`O(K)`).
    #[cold]
    #[inline(never)]
    fn rebuild(&mut self) {
        let m = crate::vecops::max_of(&self.log_weights);
        self.reference = m;
        self.tree.rebuild(
            self.log_weights
                .iter()
                .map(|&w| crate::vecops::exp_clamped(w - m)),
        );
        self.rebuilds += 1;
    }

    /// The rounds of [`PrivateExp3::run`] up to round `end` (checked): the kernel it dispatches. Returns the
    /// summed loss of the played arms.
    ///
    /// Errors: with `strict`, a loss outside `[0, B]`; as [`PrivateExp3::draw`] and [`PrivateExp3::update`]
    /// (not expected); the rounds before stay played.
    #[inline(always)]
    fn play_rounds(
        &mut self,
        env: ArmLosses<'_>,
        end: u64,
        marks: &mut Checkpoints<'_>,
    ) -> Result<f64> {
        let mut total = 0.0;
        while self.t < end {
            let arm = self.draw()?;
            let inverse = self.pending.map_or(1.0, |(_, inv)| inv);
            let loss = env.loss(self.t, arm);
            self.check_strict(loss)?;
            total += loss;
            self.update(arm, inverse, loss)?;
            marks.record(self.t, total);
        }
        Ok(total)
    }
}

impl Learner for PrivateExp3 {
    const NAME: &'static str = "PrivateEXP3";
    type Family<'a> = ArmLosses<'a>;

    super::learner_accessors!(Exp3Params);

    /// Check that `rounds` rounds of `env` can be played, without changing anything.
    ///
    /// Errors: [`CoreError::Protocol`] if an arm is pending; [`CoreError::Shape`] for another number of arms;
    /// [`CoreError::InvalidArgument`] for a non-linear loss table or one whose sum may overflow
    /// ([`super::check_table_fits`]); [`CoreError::HorizonExhausted`].
    fn check_run(&self, env: ArmLosses<'_>, rounds: u64) -> Result<()> {
        super::check_idle(self.pending.is_some(), "arm")?;
        if let ArmLosses::Table(f) = env {
            if f.kind() != LossKind::Linear {
                return Err(CoreError::invalid(
                    "losses",
                    "a linear family of loss vectors (one entry per arm)",
                    "a portfolio family",
                ));
            }
        }
        if env.arms() != self.params.arms {
            return Err(CoreError::Shape {
                name: "losses",
                expected: format!("{} arms", self.params.arms),
                got: format!("{} arms", env.arms()),
            });
        }
        self.check_rounds_fit(rounds, self.params.horizon.min(env.horizon()))?;
        match env {
            ArmLosses::Table(f) => super::check_table_fits(f, self.t, rounds),
            ArmLosses::Bernoulli(_) => Ok(()),
        }
    }

    fn play(&mut self, env: ArmLosses<'_>, end: u64, marks: &mut Checkpoints<'_>) -> Result<f64> {
        crate::simd::dispatch(
            #[inline(always)]
            || self.play_rounds(env, end, marks),
        )
    }

    /// The invariants of a decoded learner (see [`super::Learner::check_state`]).
    ///
    /// Errors: [`CoreError::State`] for corrupt or inconsistent bytes.
    fn check_state(&mut self) -> Result<()> {
        let k = self.params.arms;
        let p = &self.params;
        let recomputed = Exp3Params::new(k, p.horizon, p.loss_bound, p.noise_scale, p.tuning)?;
        let secure = self.rng.is_secure();
        // A reproducible learner's block was serialised whole; a secure learner's never is.
        let block_ok = secure
            || (!self.block.secret
                && self.block.is_valid()
                && (self.pending.is_none() || self.block.next < BLOCK));
        let consistent = recomputed == self.params
            && self.t <= self.params.horizon
            && self.clipped <= self.t
            && self.log_weights.len() == k
            && self.log_weights.iter().all(|w| w.is_finite())
            && self.reference.is_finite()
            && self
                .pending
                .is_none_or(|(arm, inv)| arm < k && inv.is_finite() && inv > 0.0)
            && block_ok
            && check_exact(self.exact.as_ref(), &self.params).is_ok();
        if !consistent {
            return Err(CoreError::State("PrivateEXP3 state is inconsistent".into()));
        }
        self.noise = NoiseDistribution::laplace(self.params.noise_scale)?.sum_of(1);
        if secure {
            // Fresh secret randomness from the freshly OS-keyed generators: nothing secret was restored.
            self.block = DrawBlock::empty(true);
            self.refill_block()?;
        }
        self.tree = SumTree::new(k)?;
        let m = self.reference;
        self.tree.rebuild(
            self.log_weights
                .iter()
                .map(|&w| crate::vecops::exp_clamped(w - m)),
        );
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learners::testing::assert_same_at_every_level;

    #[test]
    fn parameters_follow_the_tuning() {
        let p = Exp3Params::new(10, 10_000, 1.0, 2.0, Exp3Tuning::Paper).unwrap();
        let r = 1.0 + 4.0 * 10_000f64.ln();
        assert!((p.noisy_range - r).abs() < 1e-12);
        let eta = (10f64.ln() / (1e4 * 10.0 * r * (r + 1.0))).sqrt();
        let gamma = eta * 10.0 * r;
        assert!(gamma <= 0.5);
        assert!((p.eta - eta).abs() < 1e-15 && (p.gamma - gamma).abs() < 1e-15);
        // Small horizon: γ capped at ½.
        let q = Exp3Params::new(100, 10, 1.0, 1.0, Exp3Tuning::Paper).unwrap();
        assert_eq!(q.gamma, 0.5);
        assert!((q.eta - 0.5 / (100.0 * q.noisy_range)).abs() < 1e-15);
        assert!(Exp3Params::new(1, 10, 1.0, 0.0, Exp3Tuning::Paper).is_err());
    }

    #[test]
    fn variance_tuning_minimises_its_bound_and_is_plain_exp3_without_noise() {
        let (k, t, b, lambda) = (80.0f64, 1e6f64, 1.0, 1.0);
        let p = Exp3Params::new(80, 1_000_000, b, lambda, Exp3Tuning::Variance).unwrap();
        let c = 2.0 * lambda * t.ln();
        let eta = (k.ln() / (t * k * (b * b + 2.0 * lambda * lambda + c * b))).sqrt();
        assert!((p.eta - eta).abs() < 1e-15 * eta && (p.gamma - eta * k * c).abs() < 1e-15);
        let want = k.ln() / eta
            + eta * t * k * (b * b + 2.0 * lambda * lambda) / (1.0 - p.gamma)
            + p.gamma * b * t
            + b;
        assert!((p.regret_bound() - want).abs() < 1e-9 * want);
        let paper = Exp3Params::new(80, 1_000_000, b, lambda, Exp3Tuning::Paper).unwrap();
        assert!(p.eta > 5.0 * paper.eta && p.regret_bound() < paper.regret_bound() / 5.0);
        // One round: c = 2λ ln 1 = 0, no exploration either.
        let one = Exp3Params::new(2, 1, b, lambda, Exp3Tuning::Variance).unwrap();
        assert_eq!(one.gamma, 0.0);
        // No noise: no exploration is needed (the losses are >= 0), and η is plain EXP3's.
        let plain = Exp3Params::new(80, 1_000_000, b, 0.0, Exp3Tuning::Variance).unwrap();
        assert_eq!(plain.gamma, 0.0);
        assert!((plain.eta - (k.ln() / (t * k)).sqrt()).abs() < 1e-15);
        // Extreme scales keep finite constants.
        for (b, lambda) in [
            (1e-200, 0.0),
            (1e-200, 1e-200),
            (1.0, 1e200),
            (1e200, 1e200),
        ] {
            let q = Exp3Params::new(10, 100, b, lambda, Exp3Tuning::Variance).unwrap();
            assert!(
                q.eta.is_finite() && q.eta > 0.0 && q.gamma <= 0.5,
                "{b} {lambda}: {q:?}"
            );
        }
        assert_eq!(Exp3Tuning::from_name("paper").unwrap().name(), "paper");
        assert!(Exp3Tuning::from_name("range").is_err());
    }

    #[test]
    fn probabilities_sum_to_one_and_match_the_tree() {
        let p = Exp3Params::new(5, 1000, 1.0, 0.5, Exp3Tuning::Variance).unwrap();
        let mut l = PrivateExp3::new(p, None, [1, 2, 3, 4], false, false).unwrap();
        let mut probs = vec![0.0; 5];
        for t in 0..1000 {
            l.probabilities(&mut probs).unwrap();
            assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            let arm = l.ask().unwrap();
            let prob = 1.0 / l.pending.unwrap().1;
            assert!(
                (prob - probs[arm]).abs() < 1e-9 * probs[arm].max(1e-300),
                "t={t}"
            );
            l.tell(if arm == 2 { 0.0 } else { 1.0 }).unwrap();
        }
    }

    #[test]
    fn sum_tree_never_picks_a_zero_leaf() {
        let mut tree = SumTree::new(5).unwrap();
        tree.rebuild([0.0, 1.0, 0.0, 0.0, 2.0].into_iter());
        for i in 0..1000 {
            let leaf = tree.find(3.0 * i as f64 / 1000.0);
            assert!(leaf == 1 || leaf == 4);
        }
        assert_eq!(tree.find(3.0), 4);
        // Several levels (K = 5000 > FANOUT²): only the positive leaves are ever found, in proportion.
        let k = 5000;
        let mut tree = SumTree::new(k).unwrap();
        assert!(tree.levels.len() >= 3);
        tree.rebuild((0..k).map(|i| if i % 7 == 3 { (i % 5) as f64 } else { 0.0 }));
        tree.set(4999, 0.0);
        tree.set(10, 2.5);
        let expect: f64 = (0..k)
            .map(|i| match i {
                10 => 2.5,
                4999 => 0.0,
                _ if i % 7 == 3 => (i % 5) as f64,
                _ => 0.0,
            })
            .sum();
        assert_eq!(tree.total(), {
            let mut t2 = SumTree::new(k).unwrap();
            t2.rebuild((0..k).map(|i| match i {
                10 => 2.5,
                4999 => 0.0,
                _ if i % 7 == 3 => (i % 5) as f64,
                _ => 0.0,
            }));
            t2.total()
        });
        assert!((tree.total() - expect).abs() < 1e-9);
        let mut acc = 0.0;
        for i in 0..k {
            let v = tree.leaf(i);
            if v > 0.0 {
                // The middle of leaf i's interval finds leaf i.
                assert_eq!(tree.find(acc + 0.5 * v), i);
            }
            acc += v;
        }
        for x in [expect, expect * 2.0, f64::MAX] {
            let leaf = tree.find(x);
            assert!(tree.leaf(leaf) > 0.0);
        }
    }

    #[test]
    fn sampler_frequencies_match_the_weights() {
        // K = 1000 leaves over three levels, weights spanning 1..e^-5, every 13th leaf 0. Chi-square of the
        // counts of n proportional draws against n·w_i/Σw, at level 1 − 1e-6 (Wilson-Hilferty quantile,
        // z = 4.753); the zero leaves must never be drawn.
        let k = 1000;
        let weight = |i: usize| {
            if i % 13 == 0 {
                0.0
            } else {
                (-(i as f64) / 200.0).exp()
            }
        };
        let mut tree = SumTree::new(k).unwrap();
        assert_eq!(tree.levels.len(), 3);
        tree.rebuild((0..k).map(|_| 1.0));
        for i in (0..k).rev() {
            tree.set(i, weight(i));
        }
        let total: f64 = (0..k).map(weight).sum();
        assert!((tree.total() - total).abs() < 1e-12 * total);
        let mut rng = Generator::for_stream(&[7, 7, 7, 7], 2, false).unwrap();
        let n = 2_000_000usize;
        let mut counts = vec![0u64; k];
        for _ in 0..n {
            counts[tree.find(rng.open01() * tree.total())] += 1;
        }
        let mut chi2 = 0.0;
        let mut cells = 0;
        for (i, &c) in counts.iter().enumerate() {
            let expected = n as f64 * weight(i) / total;
            if expected == 0.0 {
                assert_eq!(c, 0, "zero-weight leaf {i} drawn");
                continue;
            }
            chi2 += (c as f64 - expected).powi(2) / expected;
            cells += 1;
        }
        let d = (cells - 1) as f64;
        let quantile = d * (1.0 - 2.0 / (9.0 * d) + 4.753 * (2.0 / (9.0 * d)).sqrt()).powi(3);
        assert!(chi2 < quantile, "chi2 = {chi2}, quantile = {quantile}");
        // A control that must fail: the same counts against weights shifted by one leaf.
        let shifted: f64 = (1..k)
            .map(|i| {
                let e = n as f64 * weight(i - 1) / total;
                if e > 0.0 {
                    (counts[i] as f64 - e).powi(2) / e
                } else {
                    0.0
                }
            })
            .sum();
        assert!(shifted > quantile);
    }

    #[test]
    fn protocol_errors_leave_state_alone_and_restore_is_bit_identical() {
        let p = Exp3Params::new(4, 500, 1.0, 1.0, Exp3Tuning::Variance).unwrap();
        let mut l = PrivateExp3::new(p, None, [9, 0, 0, 0], false, true).unwrap();
        assert!(matches!(l.tell(0.0), Err(CoreError::Protocol(_))));
        let arm = l.ask().unwrap();
        assert_eq!(l.ask().unwrap(), arm);
        let before = l.to_bytes().unwrap();
        assert!(l.tell(f64::NAN).is_err());
        assert!(l.tell(1.5).is_err());
        assert_eq!(l.to_bytes().unwrap(), before);
        l.tell(0.5).unwrap();
        let mut m = PrivateExp3::from_bytes(&l.to_bytes().unwrap()).unwrap();
        for _ in 0..400 {
            assert_eq!(l.ask().unwrap(), m.ask().unwrap());
            l.tell(0.25).unwrap();
            m.tell(0.25).unwrap();
        }
        assert_eq!(l.log_weights(), m.log_weights());
    }

    #[test]
    fn dispatched_kernels_agree_bitwise_at_every_level() {
        use crate::simd::run_at;
        // The tree kernels (`rebuild`, `set`, `find`): K = 5000 (four levels), weights over many magnitudes
        // and some zeros, a sequence of updates and descents; every sum and every found leaf compared bitwise.
        let tree_at = |level| {
            run_at(
                level,
                #[inline(always)]
                || {
                    let k = 5000;
                    let mut rng = Generator::from_seed([5, 4, 3, 2]);
                    let mut tree = SumTree::new(k).unwrap();
                    tree.rebuild((0..k).map(|i| {
                        if i % 11 == 0 {
                            0.0
                        } else {
                            (-30.0 * rng.open01()).exp()
                        }
                    }));
                    let mut out = Vec::new();
                    for step in 0..20_000 {
                        let leaf = tree.find(rng.open01() * tree.total());
                        out.push(leaf as u64);
                        tree.set((leaf * 7 + step) % k, rng.open01() * 2.0);
                        out.push(tree.total().to_bits());
                    }
                    for level in &tree.levels {
                        for g in level {
                            out.extend(g.0.iter().map(|v| v.to_bits()));
                        }
                    }
                    out
                },
            )
        };
        assert_same_at_every_level(tree_at);
        // The whole native loop (`play`: draw, update, `exp_clamped`): arms' losses and final state bitwise.
        let means: Vec<f64> = (0..300).map(|i| f64::from(i % 17) / 17.0).collect();
        let env = BernoulliArms::new(means, 50_000, 3).unwrap();
        let run_level = |level| {
            let p = Exp3Params::new(300, 50_000, 1.0, 1.0, Exp3Tuning::Variance).unwrap();
            let mut l = PrivateExp3::new(p, None, [1, 1, 2, 3], false, false).unwrap();
            let mut cumulative = vec![0.0; 1];
            let mut marks = Checkpoints::new(&[50_000], &mut cumulative, 0);
            let total = run_at(
                level,
                #[inline(always)]
                || l.play(ArmLosses::Bernoulli(&env), 50_000, &mut marks),
            );
            let mut out: Vec<u64> = l.log_weights().iter().map(|w| w.to_bits()).collect();
            out.push(total.unwrap().to_bits());
            out.push(l.rebuilds());
            out
        };
        assert_same_at_every_level(run_level);
    }

    #[test]
    fn pre_drawn_blocks_resume_bit_identically_and_secure_blocks_are_never_written() {
        // Reproducible: a restore in the middle of a block, with an arm pending, continues bit-identically.
        let p = Exp3Params::new(40, 10_000, 1.0, 0.5, Exp3Tuning::Variance).unwrap();
        let mut a = PrivateExp3::new(p.clone(), None, [2, 7, 1, 8], false, false).unwrap();
        for _ in 0..1000 + BLOCK / 3 {
            let arm = a.ask().unwrap();
            a.tell(if arm % 3 == 0 { 0.2 } else { 0.9 }).unwrap();
        }
        a.ask().unwrap();
        assert!(a.block.next > 0 && a.block.next < BLOCK);
        let mut b = PrivateExp3::from_bytes(&a.to_bytes().unwrap()).unwrap();
        for _ in 0..500 {
            let arm = a.ask().unwrap();
            assert_eq!(arm, b.ask().unwrap());
            a.tell(0.5).unwrap();
            b.tell(0.5).unwrap();
            assert_eq!(a.last_release().to_bits(), b.last_release().to_bits());
        }
        // Secure: the block's values appear nowhere in the bytes, and a restore (also with an arm pending)
        // draws a fresh block.
        let mut s = PrivateExp3::new(p, None, [0; 4], true, false).unwrap();
        for _ in 0..10 {
            s.ask().unwrap();
            s.tell(0.5).unwrap();
        }
        s.ask().unwrap();
        let bytes = s.to_bytes().unwrap();
        let contains = |v: f64| bytes.windows(8).any(|w| w == v.to_le_bytes());
        assert!(!s.block.uniforms.iter().any(|&u| contains(u)));
        assert!(!s.block.noise.iter().any(|&z| contains(z)));
        let mut r = PrivateExp3::from_bytes(&bytes).unwrap();
        assert!(r.block.secret && r.block.next == 0);
        assert_ne!(r.block.noise, s.block.noise);
        r.tell(0.5).unwrap();
        assert!(r.last_release().is_finite());
        // A reproducible state whose block was tampered with is refused.
        let mut c = PrivateExp3::new(
            Exp3Params::new(4, 100, 1.0, 1.0, Exp3Tuning::Variance).unwrap(),
            None,
            [1; 4],
            false,
            false,
        )
        .unwrap();
        c.ask().unwrap();
        c.block.uniforms[3] = 1.5;
        assert!(matches!(
            PrivateExp3::from_bytes(&c.to_bytes().unwrap()),
            Err(CoreError::State(_))
        ));
    }

    #[test]
    fn native_raw_draws_are_the_stated_draws() {
        // Two uniforms and one Laplace(1) per step: the mean of the sum is 1 per step, its variance
        // 2/12 + 2; over 10^6 steps |mean − 1| < 6 standard errors.
        let n = 1_000_000u64;
        let sum = raw_step_draws([4, 4, 4, 4], n, false).unwrap();
        let se = ((2.0 / 12.0 + 2.0) / n as f64).sqrt();
        assert!((sum / n as f64 - 1.0).abs() < 6.0 * se);
        assert_eq!(sum, raw_step_draws([4, 4, 4, 4], n, false).unwrap());
    }

    #[test]
    fn exact_releases_are_grid_integers_with_the_discrete_laplace_law_and_resume_bit_identically() {
        use crate::noise::release::{SamplerKind, scalar_laplace};
        let (scale, exact) = scalar_laplace(1.0, Some(1.0), SamplerKind::Exact).unwrap();
        let exact = exact.unwrap();
        assert!((1.0..1.0 + 1e-8).contains(&scale));
        let p = Exp3Params::new(3, 200_000, 1.0, scale, Exp3Tuning::Variance).unwrap();
        // A mismatched scale is refused.
        assert!(PrivateExp3::new(p.clone(), Some(exact), [0; 4], false, false).is_ok());
        let wrong = Exp3Params::new(3, 200_000, 1.0, 1.0, Exp3Tuning::Variance).unwrap();
        assert!(PrivateExp3::new(wrong, Some(exact), [0; 4], false, false).is_err());
        let mut l = PrivateExp3::new(p, Some(exact), [3, 3, 3, 3], false, false).unwrap();
        let gamma = exact.grid.gamma();
        let centre = exact
            .grid
            .value(i128::from(exact.grid.quantize(0.7).unwrap()));
        let n = 100_000;
        let (mut sum, mut sq) = (0.0, 0.0);
        for _ in 0..n {
            l.ask().unwrap();
            l.tell(0.7).unwrap();
            let r = l.last_release();
            assert_eq!((r / gamma).fract(), 0.0);
            sum += r - centre;
            sq += (r - centre) * (r - centre);
        }
        let var = exact.variance();
        assert!((sum / n as f64).abs() < 6.0 * (var / n as f64).sqrt());
        assert!((sq / n as f64 - var).abs() < 6.0 * (5.0 * var * var / n as f64).sqrt());
        // Mid-block restore continues bit-identically (the integer block is serialised for a seeded learner).
        l.ask().unwrap();
        assert!(l.block.next % BLOCK != 0);
        let mut m = PrivateExp3::from_bytes(&l.to_bytes().unwrap()).unwrap();
        for _ in 0..300 {
            assert_eq!(l.ask().unwrap(), m.ask().unwrap());
            l.tell(0.2).unwrap();
            m.tell(0.2).unwrap();
            assert_eq!(l.last_release().to_bits(), m.last_release().to_bits());
        }
        // Secure: the integer block is never written and a restore draws a fresh one.
        let p = Exp3Params::new(3, 1000, 1.0, scale, Exp3Tuning::Variance).unwrap();
        let mut s = PrivateExp3::new(p, Some(exact), [0; 4], true, false).unwrap();
        s.ask().unwrap();
        let bytes = s.to_bytes().unwrap();
        assert!(
            !s.block
                .ints
                .iter()
                .any(|z| bytes.windows(8).any(|w| w == z.to_le_bytes()))
        );
        let r = PrivateExp3::from_bytes(&bytes).unwrap();
        assert_ne!(r.block.ints, s.block.ints);
    }
}
