//! PrivateSubmodularFTRL: private online monotone submodular maximisation under a cardinality constraint with
//! DP-FTRL experts — the `k` ordered experts of Streeter & Golovin (2009), as in Perez-Salazar & Cummings (2021)
//! Algorithm 2, each a DP-FTRL learner (Agarwal & Singh 2017, Algorithm 1) with the negative-entropy regulariser
//! on the simplex over the `n` items.
//!
//! Each round the learner plays `S_t = {a_t^1, …, a_t^k}` (at most `k` distinct items), `a_t^i ~ x_t^i` drawn
//! independently, and earns `f_t(S_t) ∈ [0, 1]`. Given oracle access to `f_t` (a row of a
//! [`SubmodularFamily`]), expert `i` is fed the marginal gains `g_t^i(a) = f_t(S_t^{i−1} + a) − f_t(S_t^{i−1})`
//! of every item (`S_t^{i−1}` = the picks of the experts before it), as the loss vector `ℓ_t^i = −g_t^i`
//! centred at `c = −½` ([`DpFtrlParams::with_loss_shift`]): the tree sums `½ − g_t^i ∈ [−½, ½]^n`. Expert `i`
//! plays `x_{t+1}^i = softmax(η·G̃_t^i)`, `G̃_t^i` its private prefix sum of the gains (a release of its own
//! prefix-sum mechanism).
//!
//! **Privacy** (neighbours: streams that differ in one round's function). Lemma: for any history of releases and
//! picks, replacing `f_t` by `f'_t` changes round `t`'s row of every expert, and no other row, by a vector with
//! coordinates in `[−1, 1]` (both gains lie in `[0, 1]`: `f` monotone with values in `[0, 1]`); rows of other
//! rounds are the same functions of the same history. So the `k` mechanisms together are one prefix-sum mechanism
//! over rows of `k·n` coordinates, with block-diagonal encoder, whose inputs are chosen adaptively with per-round
//! sensitivity `‖Δ‖₁ ≤ k·n` (Laplace) or `‖Δ‖₂ ≤ sqrt(k·n)` (Gaussian): the declared bound `G = k·n/2` or
//! `sqrt(k·n)/2` of the centred rows (sensitivity `2G`), exactly the calibration of one DP-FTRL learner of
//! dimension `k·n` (the caller's). Each node of the padded tree (Honaker's readout is post-processing of it) is a
//! Laplace or Gaussian mechanism applied to rows that depend on earlier releases only, so the guarantee holds
//! under this adaptivity by adaptive composition (Dwork, Naor, Pitassi & Rothblum 2010; Bun & Steinke 2016,
//! Lemma 2.3); BLT's Gaussian releases by Denisov, McMahan, Rush, Smith & Thakurta 2022, Theorem 2.1 (adaptive
//! continual release of the Gaussian matrix mechanism). The picks are post-processing: independent draws from
//! the experts' distributions with the learner's own randomness.
//!
//! **Regret.** Streeter & Golovin's reduction (Perez-Salazar & Cummings, the proof of Theorem 6):
//! `(1 − 1/e)·max_{|S|≤k} Σ_t f_t(S) − E Σ_t f_t(S_t) ≤ Σ_i E[r_i]`, `r_i` expert `i`'s regret on its gains.
//! Expert `i`'s gains depend only on the stream and on experts `1..i−1` (their noise and picks), never on its own
//! noise or picks: an oblivious sequence for it, so each `E[r_i]` is at most DP-FTRL's expected-regret bound for
//! losses with `‖ℓ − c·1‖_∞ ≤ ½` ([`DpFtrlParams`]; the dual bound `G_* = ½`), and the `(1 − 1/e)`-regret at most
//! `k` times it. The step size is DP-FTRL's noise-aware default, tuned per expert to its release noise.
//!
//! Per-round loss reported by `run`: `−f_t(S_t)`, as for [`super::PrivateSubmodular`].

use serde::{Deserialize, Serialize};

use crate::domains::{Domain, LinearMinimizationOracle, Simplex};
use crate::error::{CoreError, Result};
use crate::learners::{
    Checkpoints, DpFtrl, DpFtrlParams, Learner, LossNorm, MechanismSetup, Regularizer,
};
use crate::rng::{Generator, derive_seed};
use crate::submodular::{
    SubmodularFamily, SubmodularKind, check_gains, check_row, gains_into, value,
};

/// The centre `c` of every expert's loss vectors `−g`: the tree sums `−g − c = ½ − g ∈ [−½, ½]^n`.
pub const LOSS_SHIFT: f64 = -0.5;

/// The dual bound `G_* = ‖½ − g‖_∞ <= ½` of every expert's centred loss vectors.
pub const DUAL_BOUND: f64 = 0.5;

/// The declared constants of a [`PrivateSubmodularFtrl`] learner.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubmodularFtrlParams {
    /// `|U|`.
    pub n: usize,
    /// Cardinality `k`.
    pub k: usize,
    /// `T`.
    pub horizon: u64,
    /// The norm of the experts' loss bound: L1 for Laplace noise, L2 for Gaussian noise.
    pub norm: LossNorm,
    /// Every expert's DP-FTRL constants ([`SubmodularFtrlParams::expert_params`]), with the step size tuned to
    /// the experts' release noise once the learner is built.
    pub expert: DpFtrlParams,
}

impl SubmodularFtrlParams {
    /// The constants; `norm` matches the mechanism's noise (L1 for Laplace, L2 for Gaussian).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `n < 2`, `k == 0`, `k > n`, or `horizon == 0`.
    pub fn new(n: usize, k: usize, horizon: u64, norm: LossNorm) -> Result<Self> {
        if n < 2 {
            return Err(CoreError::invalid("ground_set_size", ">= 2", n));
        }
        if k == 0 || k > n {
            return Err(CoreError::invalid("k", "in 1..=ground_set_size", k));
        }
        crate::error::check_horizon(horizon)?;
        let domain = Domain::Simplex(Simplex::new(n)?);
        Ok(SubmodularFtrlParams {
            expert: Self::expert_params(&domain, horizon, norm)?,
            n,
            k,
            horizon,
            norm,
        })
    }

    /// One expert's declared bound `G` on its centred loss vectors `½ − g ∈ [−½, ½]^n`: `n/2` in L1, `sqrt(n)/2` in
    /// L2. The `k` experts' rows together have the bound `k·n/2` (L1) or `sqrt(k·n)/2` (L2) that the caller
    /// calibrates the noise to ([`SubmodularFtrlParams::joint_loss_bound`]).
    pub fn expert_loss_bound(&self) -> f64 {
        Self::loss_bound(self.n, self.norm)
    }

    fn loss_bound(n: usize, norm: LossNorm) -> f64 {
        let n = n as f64;
        match norm {
            LossNorm::L1 => 0.5 * n,
            LossNorm::L2 => 0.5 * n.sqrt(),
        }
    }

    /// The bound of the `k` experts' concatenated centred rows (`k·n` coordinates in `[−½, ½]`): `k·n/2` in L1,
    /// `sqrt(k·n)/2` in L2. Replacing one round's function moves the concatenated row by at most twice it (the
    /// sensitivity of the module docs' Lemma).
    pub fn joint_loss_bound(&self) -> f64 {
        let kn = self.k as f64 * self.n as f64;
        match self.norm {
            LossNorm::L1 => 0.5 * kn,
            LossNorm::L2 => 0.5 * kn.sqrt(),
        }
    }

    /// The constants of every expert on `domain`, the simplex over the items, before its step size is tuned to its
    /// mechanism's noise: negative entropy, the bound of [`SubmodularFtrlParams::expert_loss_bound`], dual bound ½,
    /// centre −½.
    ///
    /// Errors: those of [`DpFtrlParams::new`].
    fn expert_params(domain: &Domain, horizon: u64, norm: LossNorm) -> Result<DpFtrlParams> {
        DpFtrlParams::new(
            domain,
            horizon,
            Self::loss_bound(domain.dim(), norm),
            norm,
            Regularizer::NegativeEntropy,
            None,
            Some(DUAL_BOUND),
            1,
        )?
        .with_loss_shift(domain, LOSS_SHIFT)
    }
}

/// The learner (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct PrivateSubmodularFtrl {
    params: SubmodularFtrlParams,
    experts: Vec<DpFtrl>,
    /// `a^1..a^k`, the experts' picks of the current (or next) round.
    picks: Vec<usize>,
    /// The set played this round (distinct ids, in expert order).
    played: Vec<usize>,
    pending: bool,
    /// The learner's own randomness: the picks.
    rng: Generator,
    t: u64,
    clipped: u64,
    strict: bool,
    /// Scratch: one expert's gains, then its loss vector.
    #[serde(skip)]
    gains: Vec<f64>,
}

/// `a ~ x`: the first item whose cumulative probability exceeds `u·Σx` (the last item with positive probability
/// if rounding leaves `u·Σx` at or above the total).
fn draw(x: &[f64], rng: &mut Generator) -> usize {
    let total: f64 = x.iter().sum();
    let target = rng.open01() * total;
    let mut acc = 0.0;
    let mut last = 0;
    for (a, &p) in x.iter().enumerate() {
        if p > 0.0 {
            acc += p;
            last = a;
            if acc > target {
                return a;
            }
        }
    }
    last
}

fn dedup_into(items: &[usize], out: &mut Vec<usize>) {
    out.clear();
    for &a in items {
        if !out.contains(&a) {
            out.push(a);
        }
    }
}

impl PrivateSubmodularFtrl {
    /// A learner for `params` whose experts release their prefix sums by `setup`'s mechanism and noise (scale 0 =
    /// the non-private learner on the same code path; the caller calibrates the scale to
    /// [`SubmodularFtrlParams::joint_loss_bound`]). Expert `i`'s mechanism draws from the stream `2 + i` of
    /// `setup.seed`, the picks from stream 1 (all OS-keyed when `setup.secure`). With `setup.strict`, rows outside
    /// `[0, 1]` are an error instead of being clipped.
    ///
    /// Errors: those of [`SubmodularFtrlParams::expert_params`] and [`DpFtrl::new`]; [`CoreError::Allocation`];
    /// entropy failures.
    pub fn new(mut params: SubmodularFtrlParams, setup: MechanismSetup) -> Result<Self> {
        let domain = Domain::Simplex(Simplex::new(params.n)?);
        let mut experts: Vec<DpFtrl> = crate::alloc::reserve("experts", params.k)?;
        for i in 0..params.k {
            let own = MechanismSetup {
                seed: derive_seed(&setup.seed, 2 + i as u64),
                strict: false,
                ..setup
            };
            experts.push(DpFtrl::new(domain.clone(), params.expert.clone(), own)?);
        }
        params.expert = experts[0].params().clone();
        let mut learner = PrivateSubmodularFtrl {
            gains: crate::alloc::zeros("marginal gains", params.n)?,
            picks: vec![0; params.k],
            played: Vec::with_capacity(params.k),
            rng: setup.generator(1)?,
            experts,
            params,
            pending: false,
            t: 0,
            clipped: 0,
            strict: setup.strict,
        };
        learner.draw_picks();
        Ok(learner)
    }

    /// The experts (DP-FTRL learners on the simplex over the items).
    pub fn experts(&self) -> &[DpFtrl] {
        &self.experts
    }

    /// The experts' picks `a^1..a^k` for the current round (or the next one, between rounds), with repetitions.
    pub fn picks(&self) -> &[usize] {
        &self.picks
    }

    /// Whether a set was asked and awaits `tell`.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The mechanism kind of the experts ([`DpFtrl::mechanism_kind`]).
    pub fn mechanism_kind(&self) -> &'static str {
        self.experts[0].mechanism_kind()
    }

    /// The experts' per-draw noise.
    pub fn noise(&self) -> crate::noise::NoiseDistribution {
        self.experts[0].noise()
    }

    /// Expert `i`'s distribution over the items for the next pick (length `n`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `i >= k`.
    pub fn expert_probabilities(&self, i: usize) -> Result<&[f64]> {
        self.experts
            .get(i)
            .map(DpFtrl::action)
            .ok_or_else(|| CoreError::invalid("i", "an expert index below k", i))
    }

    /// Draw every expert's next pick from its current distribution.
    fn draw_picks(&mut self) {
        for (p, e) in self.picks.iter_mut().zip(&self.experts) {
            *p = draw(e.action(), &mut self.rng);
        }
    }

    /// The set to play this round: at most `k` distinct item ids. Asking again before `tell` returns the same
    /// set.
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds.
    pub fn ask(&mut self) -> Result<&[usize]> {
        super::check_room("PrivateSubmodularFTRL", self.t, 1, self.params.horizon)?;
        if !self.pending {
            dedup_into(&self.picks, &mut self.played);
            self.pending = true;
        }
        Ok(&self.played)
    }

    /// Report the row of `f_t` (length `n`, a family of `kind`; the learner evaluates the marginal gains
    /// itself). Entries outside `[0, 1]` are clipped (counted in [`Learner::clipped`]) unless `strict`. Returns
    /// `f_t(S_t)` of the played set (on the clipped row).
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a pending `ask`; [`CoreError::Shape`];
    /// [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`].
    pub fn tell_row(&mut self, kind: SubmodularKind, row: &[f64]) -> Result<f64> {
        super::check_asked(self.pending, "row per asked set")?;
        crate::error::check_len("row", row, self.params.n)?;
        let outside = check_row(row, self.strict, self.t + 1)?;
        let clipped: Vec<f64>;
        let row = if outside > 0 {
            self.clipped += outside as u64;
            clipped = row.iter().map(|v| v.clamp(0.0, 1.0)).collect();
            &clipped
        } else {
            row
        };
        let payoff = value(kind, row, &self.played);
        for i in 0..self.params.k {
            gains_into(kind, row, &self.picks[..i], &mut self.gains);
            self.feed(i)?;
        }
        self.finish_round();
        Ok(payoff)
    }

    /// Report gains computed by the caller (e.g. from a Python set function): `gains` is the row-major `(k, n)`
    /// matrix of `g_t^i(a) = f_t(S_t^{i−1} + a) − f_t(S_t^{i−1})` for the prefixes of
    /// [`PrivateSubmodularFtrl::picks`], and `payoff = f_t(S_t)`. Values outside `[0, 1]` are clipped (counted in
    /// [`Learner::clipped`]) unless `strict`. Returns the (clipped) payoff.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a pending `ask`; [`CoreError::Shape`];
    /// [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`].
    pub fn tell_gains(&mut self, gains: &[f64], payoff: f64) -> Result<f64> {
        super::check_asked(self.pending, "gains matrix per asked set")?;
        let (k, n) = (self.params.k, self.params.n);
        self.clipped += check_gains(gains, payoff, k, n, self.strict, self.t + 1)?;
        for i in 0..k {
            for (o, &g) in self.gains.iter_mut().zip(&gains[i * n..(i + 1) * n]) {
                *o = g.clamp(0.0, 1.0);
            }
            self.feed(i)?;
        }
        self.finish_round();
        Ok(payoff.clamp(0.0, 1.0))
    }

    /// Feed expert `i` the gains in `self.gains` (valid, in `[0, 1]`) as its loss vector `−g`.
    fn feed(&mut self, i: usize) -> Result<()> {
        self.gains.iter_mut().for_each(|g| *g = -*g);
        let expert = &mut self.experts[i];
        expert.ask()?;
        expert.tell(&self.gains)
    }

    fn finish_round(&mut self) {
        self.pending = false;
        self.t += 1;
        self.draw_picks();
    }
}

impl Learner for PrivateSubmodularFtrl {
    const NAME: &'static str = "PrivateSubmodularFTRL";
    type Family<'a> = &'a SubmodularFamily;

    super::learner_accessors!(SubmodularFtrlParams);

    super::ground_set_check_run!(|learner| learner.pending);

    fn play(
        &mut self,
        family: &'_ SubmodularFamily,
        end: u64,
        marks: &mut Checkpoints<'_>,
    ) -> Result<f64> {
        let mut covered = family.scratch()?;
        let mut total = 0.0;
        while self.t < end {
            let t = self.t;
            dedup_into(&self.picks, &mut self.played);
            total -= family.value_with(t, &self.played, &mut covered);
            for i in 0..self.params.k {
                family.gains_with(t, &self.picks[..i], &mut self.gains, &mut covered);
                self.feed(i)?;
            }
            self.finish_round();
            marks.record(self.t, total);
        }
        Ok(total)
    }

    /// The invariants of a decoded learner: every expert a valid DP-FTRL learner (its own
    /// [`Learner::check_state`]) with the constants the declared ones imply, all on one mechanism and noise, at
    /// the learner's round; picks within the ground set.
    ///
    /// Errors: [`CoreError::State`]; [`CoreError::Allocation`].
    fn check_state(&mut self) -> Result<()> {
        let p = self.params.clone();
        for e in &mut self.experts {
            e.check_state()?;
        }
        // The declared part of the experts' constants (all but the step size and the release noise it is tuned to,
        // which each expert's own check recomputes from its mechanism).
        let declared = |q: &DpFtrlParams| {
            (
                q.horizon,
                q.dim,
                q.regularizer,
                q.loss_bound,
                q.norm,
                q.dual_bound,
                q.dual_clip,
                q.loss_shift,
                q.eta_default,
            )
        };
        let rebuilt = SubmodularFtrlParams::new(p.n, p.k, p.horizon, p.norm);
        let first = self.experts.first();
        let consistent = rebuilt.is_ok_and(|r| declared(&r.expert) == declared(&p.expert))
            && self.experts.len() == p.k
            && self.experts.iter().all(|e| {
                e.params() == &p.expert
                    && e.t() == self.t
                    && !e.pending()
                    && e.clipped() <= self.t
                    && matches!(e.domain(), Domain::Simplex(_))
                    && first.is_some_and(|f| {
                        f.noise() == e.noise() && f.mechanism_kind() == e.mechanism_kind()
                    })
            })
            && self.t <= p.horizon
            && self.clipped <= super::most_clipped(self.t, p.k, p.n)
            && self.picks.len() == p.k
            && self.played.len() <= p.k
            && self.picks.iter().chain(&self.played).all(|&a| a < p.n);
        crate::state::ensure(
            consistent,
            "PrivateSubmodularFTRL",
            "its experts or picks differ from the ones its declared arguments imply",
        )?;
        self.gains = crate::alloc::zeros("marginal gains", p.n)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregation::{MechanismSpec, SamplerKind};
    use crate::noise::NoiseDistribution;

    use crate::learners::testing::coverage_family as family;

    fn learner(
        n: usize,
        k: usize,
        horizon: u64,
        sigma: f64,
        sampler: SamplerKind,
    ) -> PrivateSubmodularFtrl {
        let params = SubmodularFtrlParams::new(n, k, horizon, LossNorm::L2).unwrap();
        let setup = MechanismSetup {
            mechanism: MechanismSpec::Tree { padded: true },
            noise: NoiseDistribution::Gaussian { sigma },
            sampler,
            seed: [7, 1, 2, 3],
            secure: false,
            strict: false,
        };
        PrivateSubmodularFtrl::new(params, setup).unwrap()
    }

    #[test]
    fn bounds_are_those_of_the_centred_rows() {
        let p = SubmodularFtrlParams::new(16, 3, 100, LossNorm::L2).unwrap();
        assert_eq!(p.expert_loss_bound(), 2.0);
        assert_eq!(p.joint_loss_bound(), 0.5 * 48f64.sqrt());
        let q = SubmodularFtrlParams::new(16, 3, 100, LossNorm::L1).unwrap();
        assert_eq!((q.expert_loss_bound(), q.joint_loss_bound()), (8.0, 24.0));
        assert!(SubmodularFtrlParams::new(1, 1, 10, LossNorm::L2).is_err());
        assert!(SubmodularFtrlParams::new(4, 5, 10, LossNorm::L2).is_err());
        assert!(SubmodularFtrlParams::new(4, 0, 10, LossNorm::L2).is_err());
    }

    #[test]
    fn ask_tell_equals_run_and_the_state_round_trips() {
        let fam = family(50, 6, 3);
        for sampler in [SamplerKind::Exact, SamplerKind::FloatingPoint] {
            let mut a = learner(6, 2, 40, 3.0, sampler);
            let mut b = learner(6, 2, 40, 3.0, sampler);
            let mut total = 0.0;
            for t in 0..40u64 {
                let set = a.ask().unwrap().to_vec();
                assert!(set.len() <= 2 && set.iter().all(|&x| x < 6));
                total -= a
                    .tell_row(SubmodularKind::ProbabilisticCoverage, fam.row_at(t))
                    .unwrap();
            }
            let mut out = [0.0];
            let run = b.run(&fam, 40, &[40], &mut out).unwrap();
            assert_eq!((run.total_loss, out[0]), (total, total));
            assert_eq!(a.to_bytes().unwrap(), b.to_bytes().unwrap());
            let restored = PrivateSubmodularFtrl::from_bytes(&a.to_bytes().unwrap()).unwrap();
            assert_eq!(restored.to_bytes().unwrap(), a.to_bytes().unwrap());
        }
    }

    #[test]
    fn gains_told_by_the_caller_equal_the_native_row() {
        let fam = family(30, 5, 9);
        let mut a = learner(5, 2, 30, 2.0, SamplerKind::Exact);
        let mut b = learner(5, 2, 30, 2.0, SamplerKind::Exact);
        let kind = SubmodularKind::ProbabilisticCoverage;
        for t in 0..30u64 {
            let set = a.ask().unwrap().to_vec();
            assert_eq!(b.ask().unwrap(), &set[..]);
            let row = fam.row_at(t);
            let picks = b.picks().to_vec();
            let mut gains = vec![0.0; 10];
            for i in 0..2 {
                gains_into(kind, row, &picks[..i], &mut gains[i * 5..(i + 1) * 5]);
            }
            let payoff = a.tell_row(kind, row).unwrap();
            assert_eq!(b.tell_gains(&gains, payoff).unwrap(), payoff);
        }
        assert_eq!(a.to_bytes().unwrap(), b.to_bytes().unwrap());
        let mut c = learner(5, 2, 30, 2.0, SamplerKind::Exact);
        assert!(c.tell_gains(&[0.0; 10], 0.0).is_err()); // nothing asked
        c.ask().unwrap();
        let before = c.to_bytes().unwrap();
        assert!(c.tell_gains(&[0.0; 9], 0.0).is_err());
        assert!(c.tell_gains(&[f64::NAN; 10], 0.0).is_err());
        assert_eq!(c.to_bytes().unwrap(), before);
    }

    #[test]
    fn a_state_with_an_expert_of_other_constants_is_refused() {
        let mut a = learner(6, 2, 40, 3.0, SamplerKind::FloatingPoint);
        let mut other = learner(6, 2, 40, 5.0, SamplerKind::FloatingPoint);
        assert!(PrivateSubmodularFtrl::from_bytes(&other.to_bytes().unwrap()).is_ok());
        std::mem::swap(&mut a.experts[1], &mut other.experts[1]);
        assert!(PrivateSubmodularFtrl::from_bytes(&other.to_bytes().unwrap()).is_err());
        let mut bigger = learner(6, 2, 40, 3.0, SamplerKind::FloatingPoint);
        bigger.params.horizon = 41;
        assert!(PrivateSubmodularFtrl::from_bytes(&bigger.to_bytes().unwrap()).is_err());
    }

    #[test]
    fn without_noise_the_experts_find_the_greedy_items() {
        // Item 0 is covered with probability 0.9 every round, item 1 with 0.5, the others with 0.05: the first
        // expert concentrates on item 0, the second on item 1.
        let n = 8;
        let mut data = vec![0.05; 4 * n];
        for r in 0..4 {
            data[r * n] = 0.9;
            data[r * n + 1] = 0.5;
        }
        let fam = SubmodularFamily::new(SubmodularKind::ProbabilisticCoverage, data, n)
            .unwrap()
            .reordered(20_000, crate::losses::RowOrder::Cycle)
            .unwrap();
        let mut l = learner(n, 2, 20_000, 0.0, SamplerKind::FloatingPoint);
        let mut out = [0.0];
        l.run(&fam, 20_000, &[20_000], &mut out).unwrap();
        assert!(l.expert_probabilities(0).unwrap()[0] > 0.99);
        assert!(l.expert_probabilities(1).unwrap()[1] > 0.99);
        assert!(l.expert_probabilities(2).is_err());
    }
}
