//! Hedge (multiplicative weights) over large action sets, in the log domain.
//!
//! Source: Freund & Schapire (1997); in the form of Perez-Salazar & Cummings, "Differentially Private Online
//! Submodular Maximization" (AISTATS 2021), Algorithm 1: start from `w_1 = 1`, sample `i` with probability
//! `w_t(i) / Σ_j w_t(j)`, then `w_{t+1}(i) = w_t(i)·e^{η g_t(i)}` for payoffs `g_t(i) ∈ [0, 1]`.
//!
//! Representation. The learner keeps `ℓ(i) = η·Σ_{s<t} g_s(i) − c` (the log-weight relative to a running
//! offset `c`), the leaves `w(i) = exp(ℓ(i) − b)` for a reference `b`, and a **blocked sum tree**: the leaves
//! are cut into blocks of [`BLOCK`] consecutive actions, each block's sum is stored (always computed by the one
//! function `block_sum`), and a binary sum tree sits above the block sums.
//!
//! * A full-information update ([`Hedge::update_full`]) is **one fused pass** over the `n` actions that adds
//!   `η g(i)` to the log-weight, writes the new leaf and accumulates the block sums on the way (the payoffs may
//!   be computed inside the pass, `Hedge::apply_full_with`); then `n / BLOCK` additions for the tree above
//!   the blocks. For small `η` the leaves are updated multiplicatively, `w ← w·e^{η g}`, with `e^{η g}` from its
//!   Taylor polynomial of the smallest degree (chosen once from `η`) whose remainder is below half an ulp, and
//!   recomputed exactly from the log-weights every `REFRESH` updates. Otherwise (and at those refreshes) the
//!   pass subtracts `shift = ln Σ_i e^{ℓ(i)}` (from the tree's total: an upper bound of the largest log-weight
//!   within `ln n`, so the leader's new log-weight lies in `[−ln n, η]`) and writes `exp(ℓ − η) <= 1` by a
//!   branch-free `exp`; the log-weights therefore stay within `[−ln n, (REFRESH + 1)·η]` of the leader's.
//!   The pass (and the check of the payoffs before it) runs at the CPU's widest vector level through
//!   [`crate::simd::dispatch`], eight doubles per instruction at AVX-512, with the same bits at every level;
//!   whole blocks are processed as fixed-size arrays so that the loop has no bounds or overlap checks.
//! * A bandit update of one coordinate ([`Hedge::update_one`]) changes one leaf, its block's sum
//!   (`BLOCK` additions) and the `log₂(n / BLOCK)` sums above it; when the total exceeds `e^{300}` the
//!   whole array is renormalised (amortised `O(1)` per update for payoffs in `[0, 1]` and `η ≤ 1`).
//! * Sampling ([`Hedge::sample`]) descends the tree to a block in `O(log(n / BLOCK))` and scans the block's
//!   at most `BLOCK` leaves: exact up to float rounding in the sums.
//!
//! No sum is ever updated by adding a difference, so nothing drifts, and the sums are a deterministic function
//! of the leaves: they are rebuilt rather than stored when a state is restored, bit-identically (and every
//! shift is computed from them, so a restored Hedge continues bit-identically). With payoffs in `[0, 1]` the
//! leaves stay in `[e^{−ln n − η − Δ}, e^{300}]`, where `Δ` is the gap to the leader; an action more than about
//! `708 − ln n` behind the leader (probability below `e^{−690}` relative to it at `n = 10⁶`) underflows to
//! weight 0 and is not sampled until it catches up (its log-weight is kept exactly).
//!
//! [`ExactHedge`] is the same learner with exact draws (payoffs rounded onto a power-of-two grid and summed in
//! integers, a dyadic learning rate, rejection sampling with the exact Bernoulli(`e^{−γ}`)): the exponential
//! mechanism as a private learner uses it (its docs hold the sensitivity Lemma and the proof of exactness).

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::rng::Generator;
use crate::simd::{Level, run_at};
use crate::vecops::{TAYLOR, exp_any, exp_nonpositive, max_of};

/// Largest learning rate accepted: with payoffs in `[0, 1]` a log-weight moves by at most `η` per update, so
/// every log-weight and the offset stay finite (below `η·2^64 < 10^120`) over any number of updates.
pub const MAX_ETA: f64 = 1e100;
/// A bandit update whose leaf `e^{ℓ − base}` would exceed `e^{700}` (near the overflow at `e^{709.78}`)
/// renormalises on the exact maximum instead (only for `η` beyond about 400).
const LEAF_MAX_EXPONENT: f64 = 700.0;
/// Renormalise the log-weights once the sum of the leaves exceeds `e^300` (bandit updates only; far from the
/// overflow at `e^709` for any `n`).
const RENORM_TOTAL: f64 = 1.942_426_395_241_255_8e130;
/// Learning rates up to this value use the single-pass full update (leaves `exp(ℓ − η)` cannot underflow
/// for the leader); larger ones take a second pass relative to the exact maximum.
const SINGLE_PASS_MAX_ETA: f64 = 500.0;
/// Learning rates up to this value may update the leaves multiplicatively (Taylor degree at most 8).
const MULTIPLICATIVE_MAX_ETA: f64 = 0.05;
/// Largest Taylor degree of the multiplicative update.
const MAX_DEGREE: usize = 8;
/// Full updates between two exact recomputations of the leaves from the log-weights (bounds the rounding
/// drift of the multiplicative updates to about `2·REFRESH` ulps).
const REFRESH: u32 = 64;
/// Leaves per block of the blocked sum tree (a power of two).
pub const BLOCK: usize = 32;
/// Partial sums kept side by side inside a block (so the fused pass vectorises).
const LANES: usize = 8;

/// Hedge over `n` actions (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "HedgeState", into = "HedgeState")]
pub struct Hedge {
    eta: f64,
    n: usize,
    /// `ℓ(i) = η·(cumulative payoff of i) − offset`.
    log_w: Vec<f64>,
    /// Leaves are `exp(ℓ(i) − base)`.
    base: f64,
    /// Amount subtracted from every log-weight so far.
    offset: f64,
    /// `leaves[i] = exp(ℓ(i) − base)`.
    leaves: Vec<f64>,
    /// Number of blocks rounded up to a power of two.
    bcap: usize,
    /// `tree[bcap + b]` = [`block_sum`] of block `b` (0 past the last block); `tree[j] = tree[2j] + tree[2j + 1]`;
    /// `tree[1]` is the total.
    tree: Vec<f64>,
    /// Multiplicative full updates since the leaves were last recomputed exactly.
    since_refresh: u32,
    /// Taylor degree of the multiplicative update (0: always the exact `exp`); a function of `eta`.
    degree: usize,
}

/// Serialized form of [`Hedge`]: the log-weights and the leaves (the sums are rebuilt on restore).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct HedgeState {
    eta: f64,
    log_w: Vec<f64>,
    leaves: Vec<f64>,
    base: f64,
    offset: f64,
    since_refresh: u32,
}

impl From<Hedge> for HedgeState {
    fn from(h: Hedge) -> Self {
        HedgeState {
            eta: h.eta,
            leaves: h.leaves,
            log_w: h.log_w,
            base: h.base,
            offset: h.offset,
            since_refresh: h.since_refresh,
        }
    }
}

impl TryFrom<HedgeState> for Hedge {
    type Error = CoreError;

    fn try_from(s: HedgeState) -> Result<Self> {
        let n = s.log_w.len();
        let valid = n > 0
            && s.eta.is_finite()
            && s.eta > 0.0
            && s.base.is_finite()
            && s.offset.is_finite()
            && s.log_w.iter().all(|v| v.is_finite())
            && s.leaves.len() == n
            && s.leaves.iter().all(|v| v.is_finite() && *v >= 0.0)
            && s.leaves.iter().any(|v| *v > 0.0);
        if !valid {
            return Err(CoreError::State("corrupt Hedge state".into()));
        }
        let mut h = Hedge::with_leaves(s.eta, s.log_w, s.leaves)
            .map_err(|_| CoreError::State("corrupt Hedge state".into()))?;
        h.base = s.base;
        h.offset = s.offset;
        h.since_refresh = s.since_refresh;
        Ok(h)
    }
}

/// The leaf `e^d` of a log-weight `d` above the reference ([`exp_any`]: [`exp_nonpositive`] for `d <= 0`, which
/// every full update and renormalisation writes). The one function every leaf goes through, so a restored tree
/// is bit-identical to the one it was saved from.
#[inline]
fn leaf_of(d: f64) -> f64 {
    exp_any(d)
}

/// A uniform integer in `0..n` from 64 random bits (Lemire's multiply-shift; bias below `n / 2^64`).
#[inline]
pub fn uniform_below(rng: &mut Generator, n: usize) -> usize {
    let bits = rand_core::Rng::next_u64(rng);
    ((u128::from(bits) * n as u128) >> 64) as usize
}

/// The sum of one block's leaves (at most [`BLOCK`]), in the one order every block sum is computed in:
/// [`LANES`] running sums over consecutive groups, combined by halving, then the leftover leaves in turn. The order
/// is fixed, so the sum is the same at every SIMD level (one 8-wide accumulator at AVX-512, two at AVX2, four
/// at SSE2).
#[inline(always)]
fn block_sum(leaves: &[f64]) -> f64 {
    let mut acc = [0.0; LANES];
    let chunks = leaves.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for j in 0..LANES {
            acc[j] += c[j];
        }
    }
    // Halving order (lanes j and j + 4, then j and j + 2, then the last two): one full-width add per step
    // when `acc` sits in one vector register.
    let h = [
        acc[0] + acc[4],
        acc[1] + acc[5],
        acc[2] + acc[6],
        acc[3] + acc[7],
    ];
    let mut s = (h[0] + h[2]) + (h[1] + h[3]);
    for &v in rest {
        s += v;
    }
    s
}

/// The smallest degree `d <= MAX_DEGREE` whose Taylor remainder of `e^y`, `y ∈ [0, η]`, is below half an ulp
/// relative (`η^{d+1}/(d+1)! <= 2^{−54}`); 0 when none is (then updates use the exact `exp`).
fn taylor_degree(eta: f64) -> usize {
    if eta.is_nan() || eta > MULTIPLICATIVE_MAX_ETA {
        return 0;
    }
    let mut term = eta;
    for d in 1..=MAX_DEGREE {
        term *= eta / (d + 1) as f64;
        if term <= f64::EPSILON / 4.0 {
            return d;
        }
    }
    0
}

/// One block of a full update: `step(ℓ, leaf, gain(x))` for every action of the block (an element-wise loop
/// that vectorises), then the block's [`block_sum`], read back while the block is in the L1 cache. `zero`
/// (sorted offsets into the block) lists the actions whose payoff is 0 instead (a slower, scalar loop).
#[inline(always)]
fn fused_block(
    log_w: &mut [f64],
    leaves: &mut [f64],
    src: &[f64],
    zero: &[usize],
    gain: impl Fn(f64) -> f64,
    step: impl Fn(&mut f64, &mut f64, f64),
) -> f64 {
    if zero.is_empty() {
        for ((l, w), &x) in log_w.iter_mut().zip(leaves.iter_mut()).zip(src) {
            step(l, w, gain(x));
        }
    } else {
        for (j, ((l, w), &x)) in log_w.iter_mut().zip(leaves.iter_mut()).zip(src).enumerate() {
            step(l, w, if zero.contains(&j) { 0.0 } else { gain(x) });
        }
    }
    block_sum(leaves)
}

/// [`fused_block`] for a whole block without zeroed actions: fixed-size arrays, so the loop is unrolled into
/// a few full-width vector operations with no bounds, alias or remainder checks (the same bits).
#[inline(always)]
fn full_block(
    log_w: &mut [f64; BLOCK],
    leaves: &mut [f64; BLOCK],
    src: &[f64; BLOCK],
    gain: impl Fn(f64) -> f64,
    step: impl Fn(&mut f64, &mut f64, f64),
) -> f64 {
    // Local copies: provably unaliased, so the loop vectorises without run-time overlap checks.
    let (mut l, mut w, x) = (*log_w, *leaves, *src);
    for j in 0..BLOCK {
        step(&mut l[j], &mut w[j], gain(x[j]));
    }
    *log_w = l;
    *leaves = w;
    block_sum(&w)
}

/// A single-pass full update over all blocks with payoffs `gain(src[i])` (0 for the sorted ids in `zero`),
/// writing the block sums into `sums`.
#[inline(always)]
fn fused_pass(
    log_w: &mut [f64],
    leaves: &mut [f64],
    src: &[f64],
    sums: &mut [f64],
    zero: &[usize],
    gain: impl Fn(f64) -> f64 + Copy,
    step: impl Fn(&mut f64, &mut f64, f64) + Copy,
) {
    let blocks = log_w
        .chunks_mut(BLOCK)
        .zip(leaves.chunks_mut(BLOCK))
        .zip(src.chunks(BLOCK))
        .zip(sums.iter_mut());
    let mut offsets = [0usize; BLOCK];
    let mut z = 0;
    let mut start = 0;
    for (((l, w), x), s) in blocks {
        let end = start + l.len();
        let mut m = 0;
        while z < zero.len() && zero[z] < end {
            if zero[z] >= start && m < BLOCK {
                offsets[m] = zero[z] - start;
                m += 1;
            }
            z += 1;
        }
        *s = match (
            m,
            <&mut [f64; BLOCK]>::try_from(&mut *l),
            <&mut [f64; BLOCK]>::try_from(&mut *w),
            <&[f64; BLOCK]>::try_from(x),
        ) {
            (0, Ok(l), Ok(w), Ok(x)) => full_block(l, w, x, gain, step),
            _ => fused_block(l, w, x, &offsets[..m], gain, step),
        };
        start = end;
    }
}

/// [`fused_pass`] with `ℓ ← ℓ + η g` and multiplicative leaves `leaf ← leaf·Σ_{i<=D} (η g)^i / i!` (Horner):
/// the reference `base` is unchanged, so the leaves stay `e^{ℓ − base}` up to the Taylor remainder.
#[inline(always)]
fn multiplicative_pass<const D: usize>(
    log_w: &mut [f64],
    leaves: &mut [f64],
    src: &[f64],
    sums: &mut [f64],
    zero: &[usize],
    gain: impl Fn(f64) -> f64 + Copy,
    eta: f64,
) {
    fused_pass(log_w, leaves, src, sums, zero, gain, move |l, w, x| {
        let y = eta * x;
        *l += y;
        let mut p = TAYLOR[D];
        for i in (0..D).rev() {
            p = p * y + TAYLOR[i];
        }
        *w *= p;
    })
}

/// [`fused_pass`] with `ℓ ← min(ℓ + η g − shift, η)` and exact leaves `exp(ℓ − η)`.
#[inline(always)]
fn exact_pass(
    log_w: &mut [f64],
    leaves: &mut [f64],
    src: &[f64],
    sums: &mut [f64],
    zero: &[usize],
    gain: impl Fn(f64) -> f64 + Copy,
    (eta, shift): (f64, f64),
) {
    fused_pass(log_w, leaves, src, sums, zero, gain, move |l, w, x| {
        // Clamped to η (at most a rounding step of the log-sum-exp bound) so that `v − η <= 0` exactly.
        let v = *l + eta * x - shift;
        let v = if v > eta { eta } else { v };
        *l = v;
        *w = exp_nonpositive(v - eta);
    })
}

impl Hedge {
    /// Hedge over `n >= 1` actions with learning rate `eta > 0` (finite), all weights 1.
    ///
    /// Errors: [`CoreError::InvalidArgument`]; [`CoreError::Allocation`] when the arrays do not fit.
    pub fn new(n: usize, eta: f64) -> Result<Self> {
        if n == 0 {
            return Err(CoreError::invalid("n", ">= 1 (actions)", n));
        }
        if !(eta.is_finite() && eta > 0.0 && eta <= MAX_ETA) {
            return Err(CoreError::invalid("eta", "finite, > 0 and <= 1e100", eta));
        }
        let log_w = crate::alloc::zeros("Hedge log-weights", n)?;
        let mut leaves = crate::alloc::zeros("Hedge weights", n)?;
        leaves.fill(1.0);
        Hedge::with_leaves(eta, log_w, leaves)
    }

    /// A Hedge with the given log-weights and leaves (same length `n >= 1`), `base = offset = 0`, the sums
    /// built.
    fn with_leaves(eta: f64, log_w: Vec<f64>, leaves: Vec<f64>) -> Result<Self> {
        let n = log_w.len();
        let bcap = n
            .div_ceil(BLOCK)
            .checked_next_power_of_two()
            .ok_or_else(|| CoreError::invalid("n", "small enough for a sum tree", n))?;
        let tree = crate::alloc::zeros(
            "Hedge sum tree",
            crate::alloc::checked_len("Hedge sum tree", bcap, 2)?,
        )?;
        let mut h = Hedge {
            eta,
            n,
            log_w,
            base: 0.0,
            offset: 0.0,
            leaves,
            bcap,
            tree,
            since_refresh: 0,
            degree: taylor_degree(eta),
        };
        h.rebuild_sums();
        Ok(h)
    }

    /// Number of actions.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false (Hedge has at least one action).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The learning rate `η`.
    pub fn eta(&self) -> f64 {
        self.eta
    }

    /// Log-weights relative to the running offset: `η·Σ_s g_s(i) − offset()`.
    pub fn log_weights(&self) -> &[f64] {
        &self.log_w
    }

    /// Total amount subtracted from the log-weights by renormalisation.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// Sum of the leaves `Σ_i exp(ℓ(i) − base)` (finite and positive).
    pub fn total(&self) -> f64 {
        self.tree[1]
    }

    /// Write the sampling distribution `x_t(i) = w_t(i) / Σ_j w_t(j)` into `out` (length `n`).
    ///
    /// Errors: [`CoreError::Shape`].
    pub fn probabilities(&self, out: &mut [f64]) -> Result<()> {
        crate::error::check_len("out", out, self.n)?;
        let total = self.tree[1];
        for (o, &leaf) in out.iter_mut().zip(&self.leaves) {
            *o = leaf / total;
        }
        Ok(())
    }

    /// Recompute every block sum and the tree above them.
    fn rebuild_sums(&mut self) {
        let (bcap, n) = (self.bcap, self.n);
        let blocks = n.div_ceil(BLOCK);
        for (s, block) in self.tree[bcap..bcap + blocks]
            .iter_mut()
            .zip(self.leaves.chunks(BLOCK))
        {
            *s = block_sum(block);
        }
        self.rebuild_upper();
    }

    /// Recompute the tree above the block sums, one level at a time.
    fn rebuild_upper(&mut self) {
        let mut width = self.bcap / 2;
        while width >= 1 {
            let (head, tail) = self.tree.split_at_mut(2 * width);
            for (p, c) in head[width..]
                .iter_mut()
                .zip(tail[..2 * width].chunks_exact(2))
            {
                *p = c[0] + c[1];
            }
            width /= 2;
        }
    }

    /// Full-information update with payoffs `g` (length `n`, each in `[0, 1]`).
    ///
    /// Errors (state unchanged): [`CoreError::Shape`]; [`CoreError::NonFinite`]; [`CoreError::InvalidArgument`]
    /// for a payoff outside `[0, 1]`.
    pub fn update_full(&mut self, g: &[f64]) -> Result<()> {
        crate::error::check_len("payoffs", g, self.n)?;
        // One branch-free vectorised pass (NaN fails both comparisons); the details only when something is wrong.
        if crate::vecops::count_outside_unit(g) > 0 {
            crate::error::check_finite("payoffs", g)?;
            if let Some(&v) = g.iter().find(|&&v| !(0.0..=1.0).contains(&v)) {
                return Err(CoreError::invalid("payoffs", "in [0, 1]", v));
            }
        }
        self.apply_full(g);
        Ok(())
    }

    /// Full-information update with payoffs `g ∈ [0, 1]^n` (the caller guarantees length and range): one fused
    /// pass adding `η·g(i)`, writing the leaves and accumulating the block sums, then the `n / BLOCK` sums above
    /// the blocks.
    #[inline]
    pub(crate) fn apply_full(&mut self, g: &[f64]) {
        self.apply_full_with(g, |x| x, &[]);
    }

    /// Full-information update with payoffs `g(i) = gain(src[i])`, except 0 for the actions in `zero` (sorted,
    /// distinct ids), without writing `g` anywhere: bit-identical to [`Hedge::apply_full`] on the materialised
    /// payoffs. The caller guarantees `src.len() == n` and `gain(src[i]) ∈ [0, 1]`.
    pub(crate) fn apply_full_with(
        &mut self,
        src: &[f64],
        gain: impl Fn(f64) -> f64 + Copy,
        zero: &[usize],
    ) {
        self.apply_full_at(Level::Avx512, src, gain, zero);
    }

    /// [`Hedge::apply_full_with`] with the fused pass compiled for `level` (capped by the CPU's; see
    /// [`crate::simd`]): the same bits at every level.
    pub(crate) fn apply_full_at(
        &mut self,
        level: Level,
        src: &[f64],
        gain: impl Fn(f64) -> f64 + Copy,
        zero: &[usize],
    ) {
        let (eta, n, bcap) = (self.eta, self.n, self.bcap);
        // `base + ln(total) = ln Σ_i e^{ℓ(i)}` bounds the largest log-weight from above, within `ln n`
        // (used by the exact passes only).
        let shift = self.base + self.tree[1].ln();
        let blocks = n.div_ceil(BLOCK);
        let log_w = &mut self.log_w[..n];
        let leaves = &mut self.leaves[..n];
        let sums = &mut self.tree[bcap..bcap + blocks];
        let src = &src[..n];
        if self.degree > 0 && self.since_refresh < REFRESH {
            // One dispatch per update (not per element), at the widest level the CPU has.
            macro_rules! pass {
                ($d:literal) => {
                    run_at(
                        level,
                        #[inline(always)]
                        || multiplicative_pass::<$d>(log_w, leaves, src, sums, zero, gain, eta),
                    )
                };
            }
            match self.degree {
                1 => pass!(1),
                2 => pass!(2),
                3 => pass!(3),
                4 => pass!(4),
                5 => pass!(5),
                6 => pass!(6),
                7 => pass!(7),
                _ => pass!(8),
            }
            self.since_refresh += 1;
            self.rebuild_upper();
            return;
        } else if eta <= SINGLE_PASS_MAX_ETA {
            // Every new log-weight is <= max ℓ + η − shift <= η, and the leader's is >= −ln n.
            run_at(
                level,
                #[inline(always)]
                || exact_pass(log_w, leaves, src, sums, zero, gain, (eta, shift)),
            );
            self.base = eta;
            self.since_refresh = 0;
        } else {
            for (i, (l, &x)) in log_w.iter_mut().zip(src).enumerate() {
                let g = if zero.binary_search(&i).is_ok() {
                    0.0
                } else {
                    gain(x)
                };
                *l += eta * g - shift;
            }
            let top = max_of(log_w);
            for (w, &l) in leaves.iter_mut().zip(log_w.iter()) {
                *w = exp_nonpositive(l - top);
            }
            for (s, block) in sums.iter_mut().zip(leaves.chunks(BLOCK)) {
                *s = block_sum(block);
            }
            self.base = top;
            self.since_refresh = 0;
        }
        self.offset += shift;
        self.rebuild_upper();
    }

    /// Bandit update: action `i` earns `payoff ∈ [0, 1]`, every other action 0 (their weights are unchanged).
    ///
    /// Errors (state unchanged): [`CoreError::InvalidArgument`] for `i >= n` or a payoff outside `[0, 1]`;
    /// [`CoreError::NonFinite`].
    pub fn update_one(&mut self, i: usize, payoff: f64) -> Result<()> {
        if i >= self.n {
            return Err(CoreError::invalid(
                "action",
                "an index below the number of actions",
                i,
            ));
        }
        if !payoff.is_finite() {
            return Err(CoreError::NonFinite {
                name: "payoff",
                index: 0,
                value: payoff,
            });
        }
        if !(0.0..=1.0).contains(&payoff) {
            return Err(CoreError::invalid("payoff", "in [0, 1]", payoff));
        }
        self.apply_one(i, payoff);
        Ok(())
    }

    /// [`Hedge::update_one`] for a valid action and payoff: one leaf, its block's sum, `log₂(n / BLOCK)` sums.
    pub(crate) fn apply_one(&mut self, i: usize, payoff: f64) {
        let v = self.log_w[i] + self.eta * payoff;
        self.log_w[i] = v;
        if v - self.base > LEAF_MAX_EXPONENT {
            // `e^{v − base}` would overflow (a learning rate beyond about 400): rebase on the exact maximum.
            self.rebase_on_max();
            return;
        }
        self.leaves[i] = leaf_of(v - self.base);
        let b = i / BLOCK;
        let start = b * BLOCK;
        let end = (start + BLOCK).min(self.n);
        let mut j = self.bcap + b;
        self.tree[j] = block_sum(&self.leaves[start..end]);
        while j > 1 {
            j /= 2;
            self.tree[j] = self.tree[2 * j] + self.tree[2 * j + 1];
        }
        if self.tree[1] > RENORM_TOTAL {
            self.renormalise();
        }
    }

    /// Subtract `ln Σ_i e^{ℓ(i)}` (an upper bound of the largest log-weight, within `ln n`) from every
    /// log-weight and rebuild the leaves and sums (leader's leaf in `[1/n, 1]`).
    pub fn renormalise(&mut self) {
        let shift = self.base + self.tree[1].ln();
        for (l, leaf) in self.log_w.iter_mut().zip(&mut self.leaves) {
            *l -= shift;
            *leaf = exp_nonpositive(*l);
        }
        self.offset += shift;
        self.base = 0.0;
        self.since_refresh = 0;
        self.rebuild_sums();
    }

    /// Subtract the largest log-weight from every log-weight (the leader's becomes 0) and rebuild the leaves
    /// and sums.
    fn rebase_on_max(&mut self) {
        let top = max_of(&self.log_w);
        for (l, leaf) in self.log_w.iter_mut().zip(&mut self.leaves) {
            *l -= top;
            *leaf = exp_nonpositive(*l);
        }
        self.offset += top;
        self.base = 0.0;
        self.since_refresh = 0;
        self.rebuild_sums();
    }

    /// Draw an action with probability `w(i) / Σ_j w(j)`: one uniform draw, a descent of `O(log(n / BLOCK))`
    /// to a block and a scan of its at most [`BLOCK`] leaves.
    ///
    /// The descent goes right only into a subtree of positive weight and the scan returns only a leaf of
    /// positive weight (the last one of the block when rounding leaves a remainder), so an action of weight 0
    /// is never drawn.
    #[inline]
    pub fn sample(&self, rng: &mut Generator) -> usize {
        let mut u = rng.open01() * self.tree[1];
        let mut j = 1;
        while j < self.bcap {
            let left = self.tree[2 * j];
            if u < left || self.tree[2 * j + 1] <= 0.0 {
                j *= 2;
            } else {
                u -= left;
                j = 2 * j + 1;
            }
        }
        let start = ((j - self.bcap) * BLOCK).min(self.n - 1);
        let end = (start + BLOCK).min(self.n);
        let block = &self.leaves[start..end];
        start
            + crate::simd::dispatch(
                #[inline(always)]
                || scan_block(block, u),
            )
    }
}

/// The offset in `block` (non-empty) of the leaf a residual `u` in `[0, Σ block)` falls on: the first leaf of
/// positive weight `w` with `u < w` after subtracting the positive leaves before it, or the last leaf of
/// positive weight when rounding leaves a remainder (0 if none is positive, which the descent rules out).
#[inline(always)]
fn scan_block(block: &[f64], mut u: f64) -> usize {
    let mut last = 0;
    for (i, &w) in block.iter().enumerate() {
        if w > 0.0 {
            if u < w {
                return i;
            }
            u -= w;
            last = i;
        }
    }
    last
}

/// Largest number of bits of the payoff grid of [`ExactHedge`] (`2⁻²⁰ ≈ 10⁻⁶` of the payoff range).
pub const MAX_PAYOFF_BITS: u32 = 20;

/// `γ_i = num·(L_max − L_i)/2^DEN_BITS` in [`ExactHedge::sample`]: the denominator `2⁶³` is one `u64`, as
/// [`crate::noise::exact::bernoulli_exp_neg`] takes it.
const DEN_BITS: u32 = 63;

/// Proposals of one [`ExactHedge::sample`] before [`CoreError::IterationLimit`]: `1024·n`. Each proposal is
/// accepted with probability at least `1/n`, so the cap binds with probability below `(1 − 1/n)^{1024n} <
/// e^{−1024}`; it exists so that no state can make a draw hang.
const TRIALS_PER_ACTION: u64 = 1024;

/// The constants of [`ExactHedge`]: payoffs on the grid `2^{−bits}ℤ`, learning rate `η' = num·2^{bits − 63}`
/// (a dyadic rational with a 64-bit numerator), both functions of the declared `η` and horizon only.
///
/// * `bits = min(`[`MAX_PAYOFF_BITS`]`, 64 − bitlen(T))`, so that `T` payoffs of at most `2^bits` grid units
///   each sum below `2⁶⁴` (one `u64` per action).
/// * `num = ⌊η·2^{63 − bits}⌋` (the product is exact: a power-of-two scaling), i.e. `η` **rounded down** onto the
///   grid `2^{bits − 63}ℤ`: `η − 2^{bits−63} < η' <= η` (relative error below `1/num`; about `3·10⁻⁹` for the
///   private rate `4·10⁻⁵` of `T = 10⁴`, `k = 10`, `ε = 1`). Rounding down never weakens privacy (the
///   exponential mechanism at rate `η' <= η` is `2η'`-DP, Lemma of [`ExactHedge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExactRate {
    /// The payoff grid is `2^{−bits}`.
    pub bits: u32,
    /// `η' = num·2^{bits − 63}`, `num >= 1`.
    pub num: u64,
}

impl ExactRate {
    /// The constants for a declared learning rate `eta` and `horizon` (updates per action at most `horizon`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `horizon` (0) or `eta`: NaN, infinite, `<= 0`, below the
    /// grid (`η < 2^{bits−63}`, about `1.1·10⁻¹³` for `T < 2⁴⁴`: the rate would round to 0) or at least
    /// `2^{bits+1}` (the numerator would exceed 64 bits; about `2·10⁶`).
    pub fn new(eta: f64, horizon: u64) -> Result<Self> {
        crate::error::check_horizon(horizon)?;
        let bits = MAX_PAYOFF_BITS.min(horizon.leading_zeros()); // 64 − bitlen(T)
        let scaled = eta * 2f64.powi((DEN_BITS - bits) as i32);
        if !(eta.is_finite() && (1.0..18_446_744_073_709_551_616.0).contains(&scaled)) {
            return Err(CoreError::invalid(
                "eta",
                "finite and in [2^(b-63), 2^(b+1)) for the exact sampler, b = min(20, 64 - bit length of \
                 the horizon) (about [1.1e-13, 2.1e6)); use sampler='floating-point'",
                eta,
            ));
        }
        Ok(ExactRate {
            bits,
            num: scaled.floor() as u64,
        })
    }

    /// `η' = num·2^{bits − 63}` as the nearest float (exact when `num < 2⁵³`).
    pub fn eta(&self) -> f64 {
        self.num as f64 * 2f64.powi(self.bits as i32 - DEN_BITS as i32)
    }

    /// The payoff grid `2^{−bits}`.
    pub fn grid(&self) -> f64 {
        2f64.powi(-(self.bits as i32))
    }

    /// `round(clamp(g, 0, 1)·2^bits)` in `{0, …, 2^bits}`, to nearest with ties to even (NaN counts as 0).
    ///
    /// `y = clamp(g)·2^bits` is exact (a power-of-two scaling) and lies in `[0, 2²⁰]`; `y + 2⁵²` lies in
    /// `[2⁵², 2⁵³)`, where the floats are the integers, so the IEEE addition rounds it to `2⁵² + round(y)`
    /// (to nearest, ties to even) exactly, and the integer is read off the bits: branch-free, and it vectorises.
    #[inline(always)]
    #[allow(clippy::manual_clamp)] // `clamp` keeps NaN; `max` maps it to 0
    fn units(&self, g: f64) -> u64 {
        const SHIFT: f64 = 4_503_599_627_370_496.0; // 2^52
        let y = g.max(0.0).min(1.0) * f64::from(1u32 << self.bits);
        (y + SHIFT).to_bits() - SHIFT.to_bits()
    }
}

/// Hedge whose draws are exact: the exponential mechanism on payoffs rounded onto a power-of-two grid and summed
/// in integers, sampled with integer arithmetic only (no float in any decision).
///
/// Source: Perez-Salazar & Cummings (AISTATS 2021), Algorithm 1 (Hedge) as the exponential mechanism of their
/// Proposition 2 and Lemma 1; the sampler is rejection from the uniform proposal with the exact Bernoulli(`e^{−γ}`)
/// of Canonne, Kamath & Steinke (2020, Algorithm 1; [`crate::noise::exact::bernoulli_exp_neg`]).
///
/// State: per action `L_i = Σ_s round(g_s(i)·2^b)` (`u64`, grid units) and `L_max = max_i L_i`; constants
/// [`ExactRate`] (`b` and `η' = num·2^{b−63}`).
///
/// **Lemma (sensitivity on the payoff grid).** Let `q(g) = round(clamp(g, 0, 1)·2^b)` (to nearest, ties to
/// even). Then `q(g) ∈ {0, …, 2^b}` for every real `g`, so the rounded utility `u_i = 2^{−b}·L_i` of a stream of
/// payoffs changes by at most `1` in every coordinate when one round's payoffs are replaced by any others: the
/// sensitivity of the exponential mechanism's quality is `Δu = 1`, the same as for the real payoffs in `[0, 1]`
/// of the paper — **the rounding adds no slack**.
///
/// *Proof.* Rounding to the nearest integer is monotone and fixes the integers `0` and `2^b`, so it maps
/// `[0, 2^b]` into `{0, …, 2^b}`. Replacing one round's payoffs changes `L_i` by one term `q − q'` with `|q −
/// q'| <= 2^b`, i.e. `u_i` by at most 1. ∎
///
/// Hence each draw, `P(i) ∝ e^{η' u_i}`, is the exponential mechanism with a quality of sensitivity 1 at rate
/// `η' <= η`, which is `2η'`-DP (McSherry & Talwar 2007; the `2η` of the paper's Proposition 2 and of the proof of
/// Lemma 1), and every step of the paper's privacy proof (advanced composition over the rounds, Lemma 1's
/// induction over the experts) holds with the same `ε`, `δ`. The clamp makes the Lemma independent of how the
/// payoffs were computed (e.g. the floating-point marginal gains of a set function).
///
/// **Exactness of [`ExactHedge::sample`].** With `γ_i = η'(u_max − u_i) = num·(L_max − L_i)/2⁶³` (a
/// rational with a `u128` numerator: `num < 2⁶⁴`, `L_max − L_i < 2⁶⁴`, and the denominator `2⁶³`): propose `I`
/// uniform on `{0, …, n−1}` (Lemire's exact [`crate::noise::exact::uniform_below`]) and accept it with an exact
/// Bernoulli(`e^{−γ_I}`), else repeat. A trial returns `i` with probability `e^{−γ_i}/n`, independently of the
/// earlier trials, so the output has law `e^{−γ_i}/Σ_j e^{−γ_j} = e^{η' u_i}/Σ_j e^{η' u_j}` **exactly** (given
/// uniform random bits). A trial is accepted with probability `p = Σ_j e^{−γ_j}/n >= 1/n` (the leader has `γ =
/// 0`): `1/p <= n` trials on average, each `O(1)` expected words (one word per 44 units of `⌊γ⌋` until the first
/// rejection, at most `e` halves for the fractional part), the same order as the `O(n)` update pass. At the
/// private rates the weights are nearly uniform (`η'·T <= 0.5` for `T = 10⁴`, `k = 10`, `ε = 1`) and a draw
/// takes fewer than 2 trials. The number of trials depends on the weights — a timing channel, outside the
/// threat model (the README's "Threat model": timing side channels are not protected).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "ExactHedgeState", into = "ExactHedgeState")]
pub struct ExactHedge {
    rate: ExactRate,
    /// `L_i`, cumulative payoffs in grid units.
    totals: Vec<u64>,
    /// `max_i L_i`.
    top: u64,
}

/// Serialized form of [`ExactHedge`] (`L_max` is recomputed on restore).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ExactHedgeState {
    rate: ExactRate,
    totals: Vec<u64>,
}

impl From<ExactHedge> for ExactHedgeState {
    fn from(h: ExactHedge) -> Self {
        ExactHedgeState {
            rate: h.rate,
            totals: h.totals,
        }
    }
}

impl TryFrom<ExactHedgeState> for ExactHedge {
    type Error = CoreError;

    fn try_from(s: ExactHedgeState) -> Result<Self> {
        if s.totals.is_empty() || s.rate.num == 0 || s.rate.bits > MAX_PAYOFF_BITS {
            return Err(CoreError::State("corrupt ExactHedge state".into()));
        }
        let top = s.totals.iter().copied().max().unwrap_or(0);
        Ok(ExactHedge {
            rate: s.rate,
            totals: s.totals,
            top,
        })
    }
}

impl ExactHedge {
    /// Exact Hedge over `n >= 1` actions with the constants `rate` (all cumulative payoffs 0: uniform).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `n = 0`; [`CoreError::Allocation`].
    pub fn new(n: usize, rate: ExactRate) -> Result<Self> {
        if n == 0 {
            return Err(CoreError::invalid("n", ">= 1 (actions)", n));
        }
        Ok(ExactHedge {
            rate,
            totals: crate::alloc::zeros("exact Hedge payoff sums", n)?,
            top: 0,
        })
    }

    /// Number of actions.
    pub fn len(&self) -> usize {
        self.totals.len()
    }

    /// Always false (at least one action).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The constants (payoff grid and rounded rate).
    pub fn rate(&self) -> ExactRate {
        self.rate
    }

    /// `L_i`, the cumulative payoffs in grid units `2^{−bits}`.
    pub fn totals(&self) -> &[u64] {
        &self.totals
    }

    /// Full-information update with payoffs `g(i) = gain(src[i])`, except 0 for the sorted ids in `zero`: `L_i +=
    /// round(clamp(g(i), 0, 1)·2^bits)`. The caller guarantees `src.len() == n` and at most `horizon` updates
    /// per action (so the sums stay below `2⁶⁴`, [`ExactRate`]).
    ///
    /// One pass at the CPU's widest vector level ([`crate::simd::dispatch`]): the actions in `zero` are first
    /// debited the units the pass will credit them (wrapping `u64` arithmetic, exact modulo `2⁶⁴`, so they end
    /// unchanged), which keeps the pass free of branches.
    pub(crate) fn apply_full_with(
        &mut self,
        src: &[f64],
        gain: impl Fn(f64) -> f64 + Copy,
        zero: &[usize],
    ) {
        let rate = self.rate;
        for &i in zero {
            self.totals[i] = self.totals[i].wrapping_sub(rate.units(gain(src[i])));
        }
        let totals = &mut self.totals[..];
        let src = &src[..totals.len()];
        self.top = crate::simd::dispatch(
            #[inline(always)]
            || {
                let mut top = 0u64;
                for (l, &x) in totals.iter_mut().zip(src) {
                    *l = l.wrapping_add(rate.units(gain(x)));
                    top = top.max(*l);
                }
                top
            },
        );
    }

    /// Bandit update: action `i < n` earns `payoff` (clamped into `[0, 1]` and rounded), the others 0.
    pub(crate) fn apply_one(&mut self, i: usize, payoff: f64) {
        self.totals[i] += self.rate.units(payoff);
        self.top = self.top.max(self.totals[i]);
    }

    /// Write `P(i) = e^{−γ_i}/Σ_j e^{−γ_j}` (the law [`ExactHedge::sample`] draws from) into `out`, evaluated in
    /// floating point (for display; the draws never use it).
    ///
    /// Errors: [`CoreError::Shape`].
    pub fn probabilities(&self, out: &mut [f64]) -> Result<()> {
        crate::error::check_len("out", out, self.totals.len())?;
        let scale = self.rate.num as f64 * 2f64.powi(-(DEN_BITS as i32));
        for (o, &l) in out.iter_mut().zip(&self.totals) {
            *o = (-(scale * (self.top - l) as f64)).exp();
        }
        let total: f64 = out.iter().sum();
        out.iter_mut().for_each(|o| *o /= total);
        Ok(())
    }

    /// Draw `i` with probability exactly `e^{η' u_i}/Σ_j e^{η' u_j}` (rejection from the uniform proposal; see
    /// the type's docs for the proof and the cost).
    ///
    /// Errors: [`CoreError::IterationLimit`] after `1024·n` rejected proposals (probability below `e^{−1024}`) or
    /// from [`crate::noise::exact::bernoulli_exp_neg`] (below `2^{−3900}`); the generator has then advanced.
    pub fn sample(&self, rng: &mut Generator) -> Result<usize> {
        crate::with_generator!(rng, g => self.sample_with(g))
    }

    fn sample_with<R: rand_core::Rng + ?Sized>(&self, g: &mut R) -> Result<usize> {
        use crate::noise::exact::{Bits, bernoulli_exp_neg, uniform_below};
        let mut bits = Bits::new(g);
        let n = self.totals.len() as u64;
        let num = u128::from(self.rate.num);
        for _ in 0..n.saturating_mul(TRIALS_PER_ACTION) {
            let i = uniform_below(&mut bits, n) as usize;
            let gap = u128::from(self.top - self.totals[i]);
            if bernoulli_exp_neg(&mut bits, num * gap, 1u64 << DEN_BITS)? {
                return Ok(i);
            }
        }
        Err(CoreError::IterationLimit {
            routine: "exact Hedge draw",
            limit: n.saturating_mul(TRIALS_PER_ACTION),
            detail: String::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(cum: &[f64], eta: f64) -> Vec<f64> {
        let m = cum.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = cum.iter().map(|c| (eta * (c - m)).exp()).collect();
        let s: f64 = w.iter().sum();
        w.iter().map(|x| x / s).collect()
    }

    /// Play `rounds` rounds on `h` with payoffs from `seed`: every `one_every`-th round (from round 0) a
    /// bandit update of a uniform arm by an `open01` payoff, the others full updates with payoff `full(i, rng)`
    /// for arm `i`; after each round, `check(t, h, cumulative payoffs)`.
    fn play(
        h: &mut Hedge,
        seed: crate::rng::Seed,
        rounds: usize,
        one_every: usize,
        full: impl Fn(usize, &mut Generator) -> f64,
        mut check: impl FnMut(usize, &Hedge, &[f64]),
    ) {
        let n = h.len();
        let mut cum = vec![0.0; n];
        let mut rng = Generator::from_seed(seed);
        for t in 0..rounds {
            if t % one_every == 0 {
                let i = uniform_below(&mut rng, n);
                let g = rng.open01();
                h.update_one(i, g).unwrap();
                cum[i] += g;
            } else {
                let g: Vec<f64> = (0..n).map(|i| full(i, &mut rng)).collect();
                h.update_full(&g).unwrap();
                cum.iter_mut().zip(&g).for_each(|(c, x)| *c += x);
            }
            check(t, h, &cum);
        }
    }

    #[test]
    fn full_and_bandit_updates_match_the_closed_form() {
        let (n, eta) = (101, 0.3); // 4 blocks, the last one partial
        let mut h = Hedge::new(n, eta).unwrap();
        let mut p = vec![0.0; n];
        let full = |_, rng: &mut Generator| rng.open01();
        play(&mut h, [1, 2, 3, 4], 500, 3, full, |t, h, cum| {
            h.probabilities(&mut p).unwrap();
            let r = reference(cum, eta);
            for (a, b) in p.iter().zip(&r) {
                assert!((a - b).abs() < 1e-12, "round {t}: {a} vs {b}");
            }
            // log-weights + offset = η · cumulative payoff
            for (l, c) in h.log_weights().iter().zip(cum) {
                assert!((l + h.offset() - eta * c).abs() < 1e-9 * (1.0 + eta * c));
            }
        });
    }

    #[test]
    fn multiplicative_updates_stay_within_1e12_of_the_closed_form() {
        let (n, eta) = (77, 0.04);
        let mut h = Hedge::new(n, eta).unwrap();
        let mut p = vec![0.0; n];
        let full = |i, rng: &mut Generator| if i == 3 { 1.0 } else { rng.open01() };
        play(&mut h, [4, 3, 2, 1], 5_000, 7, full, |t, h, cum| {
            if t % 97 == 0 || t > 4_900 {
                h.probabilities(&mut p).unwrap();
                for (a, b) in p.iter().zip(&reference(cum, eta)) {
                    assert!((a - b).abs() < 1e-12, "round {t}: {a} vs {b}");
                }
            }
        });
        let bytes = crate::state::to_state_bytes(&h).unwrap();
        let back: Hedge = crate::state::from_state_bytes(&bytes).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn bandit_updates_at_huge_learning_rates_stay_finite() {
        // Found by tests/test_fuzz_submodular.py: `update_one` at η = 10^6 made the leaf e^{10^6} = inf and
        // the distribution NaN.
        for &eta in &[600.0, 1e6, MAX_ETA] {
            let mut h = Hedge::new(3, eta).unwrap();
            for t in 0..200 {
                h.update_one(t % 3, if t % 2 == 0 { 1.0 } else { 0.25 })
                    .unwrap();
                let mut p = vec![0.0; 3];
                h.probabilities(&mut p).unwrap();
                assert!(
                    p.iter().all(|v| v.is_finite() && *v >= 0.0),
                    "{eta} {t} {p:?}"
                );
                assert!(
                    (p.iter().sum::<f64>() - 1.0).abs() < 1e-12,
                    "{eta} {t} {p:?}"
                );
                assert!(h.log_weights().iter().all(|v| v.is_finite()) && h.offset().is_finite());
            }
        }
        assert!(Hedge::new(3, MAX_ETA * 2.0).is_err());
    }

    #[test]
    fn bandit_updates_renormalise_before_overflow() {
        let mut h = Hedge::new(5, 1.0).unwrap();
        for _ in 0..100_000 {
            h.update_one(2, 1.0).unwrap();
        }
        assert!(h.total().is_finite() && h.total() > 0.0);
        let mut p = vec![0.0; 5];
        h.probabilities(&mut p).unwrap();
        assert!((p[2] - 1.0).abs() < 1e-300_f64.max(f64::EPSILON));
        assert!(h.log_weights().iter().all(|v| v.is_finite()));
    }

    #[test]
    fn sampling_frequencies_follow_the_weights() {
        let n = 6;
        let mut h = Hedge::new(n, 1.0).unwrap();
        h.update_full(&[0.0, 1.0, 0.5, 0.0, 0.2, 1.0]).unwrap();
        let mut p = vec![0.0; n];
        h.probabilities(&mut p).unwrap();
        let mut rng = Generator::from_seed([9, 9, 9, 9]);
        let draws = 600_000;
        let mut counts = vec![0u64; n];
        for _ in 0..draws {
            counts[h.sample(&mut rng)] += 1;
        }
        for (c, q) in counts.iter().zip(&p) {
            let sd = (draws as f64 * q * (1.0 - q)).sqrt();
            assert!(
                (*c as f64 - draws as f64 * q).abs() < 6.0 * sd,
                "{counts:?} {p:?}"
            );
        }
    }

    /// Pearson's χ² statistic of `counts` against the probabilities `p` over `draws` draws, the cells with an
    /// expected count below 20 pooled into one (χ² validity); returns `(statistic, cells)`.
    fn pooled_chi_square(counts: &[u64], p: &[f64], draws: f64) -> (f64, f64) {
        let (mut stat, mut cells, mut pooled_e, mut pooled_o) = (0.0, 0.0, 0.0, 0.0);
        for (&c, &q) in counts.iter().zip(p) {
            let (e, c) = (q * draws, c as f64);
            if e < 20.0 {
                pooled_e += e;
                pooled_o += c;
            } else {
                stat += (c - e).powi(2) / e;
                cells += 1.0;
            }
        }
        if pooled_e > 0.0 {
            stat += (pooled_o - pooled_e).powi(2) / pooled_e;
            cells += 1.0;
        }
        (stat, cells)
    }

    /// `P(χ²_k > x) <= 1e-6` threshold by the Wilson-Hilferty approximation (z = 4.753 for one-sided 1e-6).
    fn chi2_critical_1e6(k: f64) -> f64 {
        let c = 2.0 / (9.0 * k);
        k * (1.0 - c + 4.753 * c.sqrt()).powi(3)
    }

    /// Draw `draws` indices in `0..p.len()` with `sample` and assert that Pearson's χ² of their counts against
    /// the probabilities `p` ([`pooled_chi_square`]), over at least `min_cells` cells, is below the α = 1e-6
    /// critical value; `what` names the case in a failure.
    fn assert_draws_follow(
        p: &[f64],
        draws: u64,
        min_cells: f64,
        what: &str,
        mut sample: impl FnMut() -> usize,
    ) {
        let mut counts = vec![0u64; p.len()];
        for _ in 0..draws {
            counts[sample()] += 1;
        }
        let (stat, cells) = pooled_chi_square(&counts, p, draws as f64);
        assert!(cells >= min_cells, "{what}: too few cells ({cells})");
        let crit = chi2_critical_1e6(cells - 1.0);
        assert!(stat < crit, "{what}: chi2 {stat} >= {crit} ({cells} cells)");
    }

    #[test]
    fn sampling_frequencies_match_the_probabilities_across_blocks() {
        // n = 300: 10 blocks in a 16-leaf tree (padding blocks), the last block partial. Both update kinds
        // (multiplicative and exact leaves) and bandit updates; Pearson χ² at α = 1e-6 with fixed seeds.
        for &(eta, bandit) in &[(0.02, false), (0.3, true), (2.0, false)] {
            let n = 300;
            let mut h = Hedge::new(n, eta).unwrap();
            let mut rng = Generator::from_seed([11, 12, 13, 14]);
            for t in 0..130 {
                let g: Vec<f64> = (0..n).map(|_| rng.open01()).collect();
                h.update_full(&g).unwrap();
                if bandit && t % 3 == 0 {
                    let i = uniform_below(&mut rng, n);
                    h.update_one(i, 1.0).unwrap();
                }
            }
            let mut p = vec![0.0; n];
            h.probabilities(&mut p).unwrap();
            assert_draws_follow(&p, 3_000_000, 21.0, &format!("eta {eta}"), || {
                h.sample(&mut rng)
            });
        }
    }

    #[test]
    fn taylor_degree_is_the_smallest_within_half_an_ulp() {
        for &eta in &[1e-9, 1.4e-6, 1e-4, 1e-3, 0.01, 0.05] {
            let d = taylor_degree(eta);
            assert!((1..=MAX_DEGREE).contains(&d), "{eta}: {d}");
            let remainder =
                |d: usize| eta.powi(d as i32 + 1) / (1..=d + 1).map(|i| i as f64).product::<f64>();
            assert!(remainder(d) <= f64::EPSILON / 4.0, "{eta}: degree {d}");
            assert!(
                d == 1 || remainder(d - 1) > f64::EPSILON / 4.0,
                "{eta}: degree {d} not minimal"
            );
        }
        assert_eq!(taylor_degree(0.051), 0);
        assert_eq!(taylor_degree(0.3), 0);
    }

    #[test]
    fn blocked_sums_are_rebuilt_bit_identically_and_resume_identically() {
        let n = 1_000;
        for &eta in &[1e-3, 0.3] {
            let mut h = Hedge::new(n, eta).unwrap();
            let mut rng = Generator::from_seed([21, 22, 23, 24]);
            for t in 0..150 {
                let g: Vec<f64> = (0..n).map(|_| rng.open01()).collect();
                h.update_full(&g).unwrap();
                if t % 5 == 0 {
                    h.update_one(uniform_below(&mut rng, n), 0.7).unwrap();
                }
            }
            let bytes = crate::state::to_state_bytes(&h).unwrap();
            let mut back: Hedge = crate::state::from_state_bytes(&bytes).unwrap();
            assert_eq!(back, h);
            let (mut r1, mut r2) = (
                Generator::from_seed([1, 0, 0, 0]),
                Generator::from_seed([1, 0, 0, 0]),
            );
            for _ in 0..50 {
                let g: Vec<f64> = (0..n).map(|_| r1.open01()).collect();
                let _ = r2.open01();
                for _ in 1..n {
                    let _ = r2.open01();
                }
                h.update_full(&g).unwrap();
                back.update_full(&g).unwrap();
                assert_eq!(h.sample(&mut r1), back.sample(&mut r2));
            }
            assert_eq!(back, h);
            // The block sums equal a fresh rebuild from the leaves.
            let mut fresh = h.clone();
            fresh.rebuild_sums();
            assert_eq!(fresh.tree, h.tree);
        }
    }

    /// Every dispatched kernel (fused multiplicative and exact passes with and without zeroed actions, the block
    /// scan) computes the same bits at the baseline, AVX2 and AVX-512 (levels the CPU lacks run at its own).
    #[test]
    fn levels_agree_bitwise() {
        use crate::simd::{Level, run_at};
        let n = 1_003; // 32 blocks, the last one partial
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for &eta in &[1.4e-6, 1e-3, 0.04, 0.3, 2.0, 800.0] {
            let run = |level: Level| {
                let mut h = Hedge::new(n, eta).unwrap();
                let mut rng = Generator::from_seed([8, 6, 4, 2]);
                let mut draws = Vec::new();
                for t in 0..150 {
                    let g: Vec<f64> = (0..n).map(|_| rng.open01()).collect();
                    if t % 3 == 0 {
                        h.apply_full_at(level, &g, |x| 0.5 * x, &[0, 33, 34, 500, 1_002]);
                    } else {
                        h.apply_full_at(level, &g, |x| x, &[]);
                    }
                    let u = rng.open01();
                    for start in [0, 480, 992] {
                        let block = &h.leaves[start..(start + BLOCK).min(n)];
                        let total: f64 = block.iter().sum();
                        draws.push(run_at(
                            level,
                            #[inline(always)]
                            || scan_block(block, u * total),
                        ));
                    }
                }
                (bits(&h.log_w), bits(&h.leaves), bits(&h.tree), draws)
            };
            let base = run(Level::Baseline);
            assert!(base == run(Level::Avx2), "eta {eta}: AVX2 differs");
            assert!(base == run(Level::Avx512), "eta {eta}: AVX-512 differs");
        }
        let mut rng = Generator::from_seed([1, 1, 2, 3]);
        let mut v: Vec<f64> = (0..1_001).map(|_| 3.0 * rng.open01() - 1.0).collect();
        v[7] = f64::NAN;
        let counts: Vec<usize> = [Level::Baseline, Level::Avx2, Level::Avx512]
            .iter()
            .map(|&l| {
                run_at(
                    l,
                    #[inline(always)]
                    || crate::vecops::count_outside_unit_kernel(&v),
                )
            })
            .collect();
        let naive = v.iter().filter(|x| !(0.0..=1.0).contains(*x)).count();
        assert_eq!(counts, vec![naive; 3]);
    }

    #[test]
    fn zero_weight_actions_are_never_sampled() {
        let mut h = Hedge::new(3, 1.0).unwrap();
        for _ in 0..2_000 {
            h.update_one(0, 1.0).unwrap();
        }
        let mut rng = Generator::from_seed([5, 0, 0, 0]);
        assert!((0..10_000).all(|_| h.sample(&mut rng) == 0));
    }

    #[test]
    fn bad_input_leaves_the_state_unchanged() {
        let mut h = Hedge::new(4, 0.5).unwrap();
        h.update_full(&[0.1, 0.2, 0.3, 0.4]).unwrap();
        let before = h.clone();
        assert!(h.update_full(&[0.1, f64::NAN, 0.3, 0.4]).is_err());
        assert!(h.update_full(&[0.1, 1.5, 0.3, 0.4]).is_err());
        assert!(h.update_full(&[0.1, 0.2]).is_err());
        assert!(h.update_one(4, 0.5).is_err());
        assert!(h.update_one(0, -0.5).is_err());
        assert!(h.update_one(0, f64::INFINITY).is_err());
        assert_eq!(h, before);
        assert!(Hedge::new(0, 1.0).is_err());
        assert!(Hedge::new(3, 0.0).is_err());
        assert!(Hedge::new(3, f64::NAN).is_err());
    }

    #[test]
    fn state_round_trip_rebuilds_the_same_tree() {
        let mut h = Hedge::new(11, 0.7).unwrap();
        h.update_full(&[0.3; 11]).unwrap();
        h.update_one(4, 0.9).unwrap();
        let bytes = crate::state::to_state_bytes(&h).unwrap();
        let back: Hedge = crate::state::from_state_bytes(&bytes).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn large_learning_rates_take_the_two_pass_path() {
        let mut h = Hedge::new(4, 1000.0).unwrap();
        h.update_full(&[0.0, 1.0, 0.999, 0.0]).unwrap();
        let mut p = vec![0.0; 4];
        h.probabilities(&mut p).unwrap();
        let r = reference(&[0.0, 1.0, 0.999, 0.0], 1000.0);
        for (a, b) in p.iter().zip(&r) {
            assert!((a - b).abs() < 1e-12);
        }
    }

    #[test]
    fn exact_rate_rounds_eta_down_onto_the_grid() {
        let r = ExactRate::new(4.4e-5, 10_000).unwrap();
        assert_eq!(r.bits, MAX_PAYOFF_BITS);
        let step = 2f64.powi(r.bits as i32 - 63);
        assert!(r.eta() <= 4.4e-5 && 4.4e-5 - r.eta() < step);
        assert_eq!(r.grid(), 2f64.powi(-20));
        // T = 2^60 leaves 4 bits of payoff grid, so T·2^b < 2^64.
        assert_eq!(ExactRate::new(0.1, 1 << 60).unwrap().bits, 3);
        assert_eq!(ExactRate::new(0.1, u64::MAX).unwrap().bits, 0);
        for bad in [
            0.0,
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e-14,
            2.2e6,
            1e100,
            5e-324,
        ] {
            assert!(ExactRate::new(bad, 100).is_err(), "{bad}");
        }
        assert!(ExactRate::new(0.1, 0).is_err());
        // Every real payoff maps into {0, ..., 2^b} (the Lemma).
        for g in [
            -1e300,
            -0.0,
            0.0,
            1e-300,
            0.3,
            1.0 - 1e-17,
            1.0,
            1.5,
            f64::MAX,
        ] {
            let q = r.units(g);
            assert!(q <= 1 << r.bits, "{g}: {q}");
        }
        assert_eq!(r.units(1.0), 1 << 20);
        assert_eq!(r.units(0.5), 1 << 19);
        assert_eq!(r.units(f64::NAN), 0);
        // Ties to even, and the bit trick agrees with `round_ties_even` on many values.
        let unit = 2f64.powi(-20);
        assert_eq!(
            (
                r.units(0.5 * unit),
                r.units(1.5 * unit),
                r.units(2.5 * unit)
            ),
            (0, 2, 2)
        );
        let mut rng = Generator::from_seed([5, 5, 5, 5]);
        for _ in 0..100_000 {
            let g = rng.open01();
            assert_eq!(
                r.units(g),
                (g * 2f64.powi(20)).round_ties_even() as u64,
                "{g}"
            );
        }
    }

    /// The exact draws' frequencies against the exact law `e^{−γ_i}/Σ e^{−γ_j}` (Pearson χ² at α = 1e-6, fixed
    /// seeds), on near-uniform and on concentrated weights (`γ` up to about 30, so the table factors and the
    /// von Neumann loop both decide), seeded and secure generators.
    #[test]
    fn exact_draws_follow_the_exponential_weights() {
        for &(eta, rounds) in &[(4e-3, 50), (0.4, 150)] {
            let n = 40;
            let rate = ExactRate::new(eta, 1_000).unwrap();
            let mut h = ExactHedge::new(n, rate).unwrap();
            let mut rng = Generator::from_seed([3, 1, 4, 1]);
            for _ in 0..rounds {
                let g: Vec<f64> = (0..n).map(|i| rng.open01() * i as f64 / n as f64).collect();
                h.apply_full_with(&g, |x| x, &[]);
            }
            h.apply_one(7, 0.9);
            let mut p = vec![0.0; n];
            h.probabilities(&mut p).unwrap();
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            for secure in [false, true] {
                let mut g = if secure {
                    Generator::for_stream(&[0, 0, 0, 0], 1, true).unwrap()
                } else {
                    Generator::from_seed([2, 7, 1, 8])
                };
                let what = format!("eta {eta} secure {secure}");
                assert_draws_follow(&p, 400_000, 5.0, &what, || h.sample(&mut g).unwrap());
            }
        }
    }

    #[test]
    fn exact_hedge_round_trips_and_refuses_corrupt_states() {
        let rate = ExactRate::new(0.3, 100).unwrap();
        let mut h = ExactHedge::new(5, rate).unwrap();
        h.apply_full_with(&[0.1, 0.2, 0.3, 0.4, 0.5], |x| x, &[1, 3]);
        assert_eq!(h.totals()[1], 0);
        assert_eq!(h.totals()[4], rate.units(0.5));
        let bytes = crate::state::to_state_bytes(&h).unwrap();
        let back: ExactHedge = crate::state::from_state_bytes(&bytes).unwrap();
        assert_eq!(back, h);
        let empty = ExactHedgeState {
            rate,
            totals: vec![],
        };
        let bytes = crate::state::to_state_bytes(&empty).unwrap();
        assert!(crate::state::from_state_bytes::<ExactHedge>(&bytes).is_err());
        assert!(ExactHedge::new(0, rate).is_err());
    }
}
