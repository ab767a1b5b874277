//! Hedge (multiplicative weights) over large action sets, in the log domain.
//!
//! Source: Freund & Schapire (1997); in the form of Perez-Salazar & Cummings, "Differentially Private Online
//! Submodular Maximization" (AISTATS 2021), Algorithm 1: start from `w_1 = 1`, sample `i` with probability
//! `w_t(i) / Σ_j w_t(j)`, then `w_{t+1}(i) = w_t(i)·e^{η g_t(i)}` for payoffs `g_t(i) ∈ [0, 1]`.
//!
//! Representation. The learner keeps `ℓ(i) = η·Σ_{s<t} g_s(i) − c` (the log-weight relative to a running
//! offset `c`) and a **sum tree** over the leaves `exp(ℓ(i) − b)` for a reference `b`:
//!
//! * a full-information update ([`Hedge::update_full`]) is one pass over the `n` actions that adds `η g(i)`,
//!   subtracts the previous maximum (renormalisation: the largest log-weight is `≤ η` after every full
//!   update, so no log-weight drifts beyond `η` from zero and adding a payoff never loses precision to a
//!   large offset) and writes the new leaf, followed by a bottom-up pass of `n` additions for the tree;
//! * a bandit update of one coordinate ([`Hedge::update_one`]) changes one leaf and the `log₂ n` sums above
//!   it; when the largest leaf exceeds `e^{300}` the whole array is renormalised (amortised `O(1)` per update
//!   for payoffs in `[0, 1]` and `η ≤ 1`);
//! * sampling ([`Hedge::sample`]) descends the tree in `O(log n)`.
//!
//! The tree's internal nodes are recomputed as `left + right` (never by adding a difference), so the sums do
//! not drift, and the tree is a deterministic function of the log-weights: it is rebuilt rather than stored
//! when a state is restored. With payoffs in `[0, 1]` the leaves stay in `[e^{−η−Δ}, e^{300}]`, where `Δ`
//! is the gap to the leader; an action `Δ > 745` behind the leader (probability below `e^{−745}` relative to
//! it) underflows to weight 0 and is no longer sampled.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::rng::Generator;
use crate::vecops::{exp_any, exp_nonpositive, max_of};

/// Renormalise the log-weights once the largest leaf exceeds `e^RENORM` (bandit updates only).
const RENORM: f64 = 300.0;
/// Learning rates up to this value use the single-pass full update (leaves `exp(ℓ − η)` cannot underflow
/// for the leader); larger ones take a second pass relative to the exact maximum.
const SINGLE_PASS_MAX_ETA: f64 = 500.0;
/// Learning rates up to this value update the leaves multiplicatively, `leaf ← leaf · c · e^{η g}` with
/// `e^{η g}` from its Taylor polynomial of degree 8 (remainder below `0.05⁹/9! < 6·10⁻¹⁸` relative).
const MULTIPLICATIVE_MAX_ETA: f64 = 0.05;
/// Full updates between two exact recomputations of the leaves from the log-weights (bounds the rounding
/// drift of the multiplicative updates to about `REFRESH` ulps).
const REFRESH: u32 = 64;

/// Hedge over `n` actions (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "HedgeState", into = "HedgeState")]
pub struct Hedge {
    eta: f64,
    n: usize,
    /// `ℓ(i) = η·(cumulative payoff of i) − offset`.
    log_w: Vec<f64>,
    /// `max_i ℓ(i)`.
    top: f64,
    /// Leaves are `exp(ℓ(i) − base)`.
    base: f64,
    /// Amount subtracted from every log-weight so far.
    offset: f64,
    /// Number of leaves of the (complete) tree: `n.next_power_of_two()`.
    cap: usize,
    /// `tree[cap + i]` = leaf `i`; `tree[j] = tree[2j] + tree[2j + 1]`; `tree[1]` is the total.
    tree: Vec<f64>,
    /// Multiplicative full updates since the leaves were last recomputed exactly.
    since_refresh: u32,
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
            leaves: h.tree[h.cap..h.cap + h.n].to_vec(),
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
        let cap = n
            .checked_next_power_of_two()
            .ok_or_else(|| CoreError::State("corrupt Hedge state".into()))?;
        let mut tree = crate::alloc::zeros(
            "Hedge sum tree",
            crate::alloc::checked_len("Hedge sum tree", cap, 2)?,
        )?;
        let top = s.log_w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        tree[cap..cap + n].copy_from_slice(&s.leaves);
        let mut h = Hedge {
            eta: s.eta,
            n,
            log_w: s.log_w,
            top,
            base: s.base,
            offset: s.offset,
            cap,
            tree,
            since_refresh: s.since_refresh,
        };
        h.rebuild_sums();
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

impl Hedge {
    /// Hedge over `n >= 1` actions with learning rate `eta > 0` (finite), all weights 1.
    ///
    /// Errors: [`CoreError::InvalidArgument`]; [`CoreError::Allocation`] when the arrays do not fit.
    pub fn new(n: usize, eta: f64) -> Result<Self> {
        if n == 0 {
            return Err(CoreError::invalid("n", ">= 1 (actions)", n));
        }
        if !(eta.is_finite() && eta > 0.0) {
            return Err(CoreError::invalid("eta", "finite and > 0", eta));
        }
        let cap = n
            .checked_next_power_of_two()
            .ok_or_else(|| CoreError::invalid("n", "small enough for a sum tree", n))?;
        let log_w = crate::alloc::zeros("Hedge log-weights", n)?;
        let mut tree = crate::alloc::zeros(
            "Hedge sum tree",
            crate::alloc::checked_len("Hedge sum tree", cap, 2)?,
        )?;
        tree[cap..cap + n].fill(1.0);
        let mut h = Hedge {
            eta,
            n,
            log_w,
            top: 0.0,
            base: 0.0,
            offset: 0.0,
            cap,
            tree,
            since_refresh: 0,
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
        for (o, &leaf) in out.iter_mut().zip(&self.tree[self.cap..self.cap + self.n]) {
            *o = leaf / total;
        }
        Ok(())
    }

    /// Recompute every internal node, one level at a time (each level a contiguous pass over its children).
    fn rebuild_sums(&mut self) {
        let mut width = self.cap / 2;
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
        // One branch-free pass (NaN fails both comparisons); the details only when something is wrong.
        #[allow(clippy::manual_range_contains)]
        // `&` on both comparisons keeps the fold branch-free
        let valid = g.iter().fold(true, |ok, &v| ok & (v >= 0.0) & (v <= 1.0));
        if !valid {
            crate::error::check_finite("payoffs", g)?;
            if let Some(&v) = g.iter().find(|&&v| !(0.0..=1.0).contains(&v)) {
                return Err(CoreError::invalid("payoffs", "in [0, 1]", v));
            }
        }
        self.apply_full(g);
        Ok(())
    }

    /// Full-information update with payoffs `g ∈ [0, 1]^n` (the caller guarantees length and range): one pass
    /// adding `η·g(i)`, subtracting the previous maximum and writing the leaves, then the tree sums.
    #[inline]
    pub(crate) fn apply_full(&mut self, g: &[f64]) {
        let (eta, shift) = (self.eta, self.top);
        let n = self.n;
        let leaves = &mut self.tree[self.cap..self.cap + n];
        let log_w = &mut self.log_w[..n];
        let g = &g[..n];
        if eta <= MULTIPLICATIVE_MAX_ETA && self.since_refresh < REFRESH {
            // leaf_i = e^{ℓ_i − base} becomes e^{ℓ_i + ηg_i − shift − η} = leaf_i · e^{ηg_i} · c.
            let c = (self.base - shift - eta).exp();
            for ((l, leaf), &x) in log_w.iter_mut().zip(leaves.iter_mut()).zip(g) {
                let y = eta * x;
                *l = (*l + y - shift).min(eta);
                let e = 1.0
                    + y * (1.0
                        + y * (0.5
                            + y * (1.0 / 6.0
                                + y * (1.0 / 24.0
                                    + y * (1.0 / 120.0
                                        + y * (1.0 / 720.0
                                            + y * (1.0 / 5_040.0 + y * (1.0 / 40_320.0))))))));
                *leaf *= c * e;
            }
            self.base = eta;
            self.since_refresh += 1;
        } else if eta <= SINGLE_PASS_MAX_ETA {
            // Every new log-weight is <= old top + η - shift = η, and the leader's is >= 0.
            for ((l, leaf), &x) in log_w.iter_mut().zip(leaves.iter_mut()).zip(g) {
                // Clamped to η (at most one rounding step) so that the leaf's exponent is exactly <= 0.
                let v = (*l + eta * x - shift).min(eta);
                *l = v;
                *leaf = exp_nonpositive(v - eta);
            }
            self.base = eta;
            self.since_refresh = 0;
        } else {
            for (l, &x) in log_w.iter_mut().zip(g) {
                *l += eta * x - shift;
            }
            self.since_refresh = 0;
        }
        let top = max_of(log_w);
        if eta > SINGLE_PASS_MAX_ETA {
            for (leaf, &l) in leaves.iter_mut().zip(log_w.iter()) {
                *leaf = exp_nonpositive(l - top);
            }
            self.base = top;
        }
        self.offset += shift;
        self.top = top;
        self.rebuild_sums();
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

    /// [`Hedge::update_one`] for a valid action and payoff.
    pub(crate) fn apply_one(&mut self, i: usize, payoff: f64) {
        let v = self.log_w[i] + self.eta * payoff;
        self.log_w[i] = v;
        self.top = self.top.max(v);
        if self.top - self.base > RENORM {
            self.renormalise();
            return;
        }
        let mut j = self.cap + i;
        self.tree[j] = leaf_of(v - self.base);
        while j > 1 {
            j /= 2;
            self.tree[j] = self.tree[2 * j] + self.tree[2 * j + 1];
        }
    }

    /// Subtract the maximum log-weight from every log-weight and rebuild the tree (leader's leaf = 1).
    pub fn renormalise(&mut self) {
        let top = self.top;
        for (l, leaf) in self
            .log_w
            .iter_mut()
            .zip(&mut self.tree[self.cap..self.cap + self.n])
        {
            *l -= top;
            *leaf = exp_nonpositive(*l);
        }
        self.offset += top;
        self.top = 0.0;
        self.base = 0.0;
        self.since_refresh = 0;
        self.rebuild_sums();
    }

    /// Draw an action with probability `w(i) / Σ_j w(j)`: one uniform draw, `O(log n)`.
    ///
    /// The descent goes right only into a subtree of positive weight, so it always ends on an action of
    /// positive weight (rounding in the sums cannot select a zero-weight or padding leaf).
    #[inline]
    pub fn sample(&self, rng: &mut Generator) -> usize {
        let mut u = rng.open01() * self.tree[1];
        let mut j = 1;
        while j < self.cap {
            let left = self.tree[2 * j];
            if u < left || self.tree[2 * j + 1] <= 0.0 {
                j *= 2;
            } else {
                u -= left;
                j = 2 * j + 1;
            }
        }
        (j - self.cap).min(self.n - 1)
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

    #[test]
    fn full_and_bandit_updates_match_the_closed_form() {
        let (n, eta) = (37, 0.3);
        let mut h = Hedge::new(n, eta).unwrap();
        let mut cum = vec![0.0; n];
        let mut rng = Generator::from_seed([1, 2, 3, 4]);
        let mut p = vec![0.0; n];
        for t in 0..500 {
            if t % 3 == 0 {
                let i = uniform_below(&mut rng, n);
                let g = rng.open01();
                h.update_one(i, g).unwrap();
                cum[i] += g;
            } else {
                let g: Vec<f64> = (0..n).map(|_| rng.open01()).collect();
                h.update_full(&g).unwrap();
                cum.iter_mut().zip(&g).for_each(|(c, x)| *c += x);
            }
            h.probabilities(&mut p).unwrap();
            let r = reference(&cum, eta);
            for (a, b) in p.iter().zip(&r) {
                assert!((a - b).abs() < 1e-12, "round {t}: {a} vs {b}");
            }
            // log-weights + offset = η · cumulative payoff
            for (l, c) in h.log_weights().iter().zip(&cum) {
                assert!((l + h.offset() - eta * c).abs() < 1e-9 * (1.0 + eta * c));
            }
        }
    }

    #[test]
    fn multiplicative_updates_stay_within_1e12_of_the_closed_form() {
        let (n, eta) = (29, 0.04);
        let mut h = Hedge::new(n, eta).unwrap();
        let mut cum = vec![0.0; n];
        let mut rng = Generator::from_seed([4, 3, 2, 1]);
        let mut p = vec![0.0; n];
        for t in 0..5_000 {
            if t % 7 == 0 {
                let i = uniform_below(&mut rng, n);
                let g = rng.open01();
                h.update_one(i, g).unwrap();
                cum[i] += g;
            } else {
                let g: Vec<f64> = (0..n)
                    .map(|i| if i == 3 { 1.0 } else { rng.open01() })
                    .collect();
                h.update_full(&g).unwrap();
                cum.iter_mut().zip(&g).for_each(|(c, x)| *c += x);
            }
            if t % 97 == 0 || t > 4_900 {
                h.probabilities(&mut p).unwrap();
                for (a, b) in p.iter().zip(&reference(&cum, eta)) {
                    assert!((a - b).abs() < 1e-12, "round {t}: {a} vs {b}");
                }
            }
        }
        let bytes = crate::rng::to_state_bytes(&h).unwrap();
        let back: Hedge = crate::rng::from_state_bytes(&bytes).unwrap();
        assert_eq!(back, h);
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
        let bytes = crate::rng::to_state_bytes(&h).unwrap();
        let back: Hedge = crate::rng::from_state_bytes(&bytes).unwrap();
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
}
