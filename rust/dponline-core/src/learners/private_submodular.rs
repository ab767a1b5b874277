//! PrivateSubmodular: differentially private online monotone submodular maximisation under a cardinality
//! constraint (Perez-Salazar & Cummings, AISTATS 2021).
//!
//! Each round the learner plays a set `S_t` of at most `k` of the `n` items and earns `f_t(S_t) ∈ [0, 1]`.
//! It runs `k` ordered Hedge experts `E_1..E_k` over the items ([`crate::mwu::Hedge`]); expert `i` learns
//! the item of best marginal gain given the picks of experts `1..i−1` (Streeter & Golovin 2009).
//!
//! * Full information — Algorithm 2 (FI-DP): every expert samples `a_t^i`, the learner plays
//!   `S_t = ∪_i {a_t^i}` and, given oracle access to `f_t`, feeds expert `i` the marginal gains
//!   `g_t^i(a) = f_t(S_t^{i−1} + a) − f_t(S_t^{i−1})` for all `a` (`S_t^{i} = ∪_{j<=i} {a_t^j}`), at rate
//!   `η = ε / (k·sqrt(32·T·ln(k/δ)))` — `(ε, δ)`-DP by Theorem 5 — or the zCDP rate of the same draws
//!   ([`HedgeCalibration`]).
//! * Bandit — Algorithm 3 (BanditDP): with probability `γ = k·((16 n ln n)² / T)^{1/3}` (capped at 1) the
//!   round explores: pick `i ∈ [k]` and `a ∈ U` uniformly, play `S_t^{i−1} ∪ {a}`, feed expert `i` the payoff
//!   `f_t(S_t^{i−1} + a)` on coordinate `a` (the other experts get 0), then every expert resamples; otherwise
//!   the current set is played again. `η = ε / (k·sqrt(32·(2γT)·ln(k/δ)))` — `(ε, δ + e^{−8T^{1/3}})`-DP by
//!   Theorem 7 (`e^{−8T^{1/3}}` bounds the probability of more than `2γT` explore rounds) — or the zCDP rate
//!   for `2γT` explore rounds, with the same extra `δ` by the same argument.
//! * Presampled exploration — Appendix B.2: the number of explore rounds `M ~ Binomial(T, γ)` is drawn up
//!   front, `η = ε / (k·sqrt(32·(M+1)·ln(k/δ)))`, and `(ε, δ)`-DP holds with no extra δ. Given `M`, the explore
//!   rounds of i.i.d. Bernoulli(γ) draws are a uniformly random `M`-subset of the `T` rounds; the learner draws
//!   that subset sequentially (round `t` explores with probability `m/(T−t)` while `m` explore rounds remain),
//!   which has the same joint law as drawing them all up front but needs `O(1)` memory instead of the paper's
//!   `Θ(T^{2/3})`.
//!
//! Non-private (`epsilon = None`, Streeter & Golovin 2009) on the same code path: `η = sqrt(ln n / T)`
//! (full information, the minimiser of the Hedge bound `ηT + ln n/η`) and `η = sqrt(k n ln n / (γT))` (bandit,
//! the minimiser of `ηT + k n ln n/(γη)` from the proof of Lemma 3), with `ln n` read as `max(ln n, ln 2)`.
//!
//! **Samplers.** The privacy of every variant is that of the experts' draws from their exponential weights
//! (the exponential mechanism of Proposition 2 and Lemma 1). With [`SamplerKind::Exact`] (the Python wrapper's
//! default for private learners) each expert is an [`ExactHedge`]: payoffs rounded onto the grid `2^{−b}`
//! (the rounding keeps the quality's sensitivity at exactly 1: the Lemma of [`ExactHedge`]) and summed in
//! integers, `η` rounded down to the dyadic `η' <= η` of [`ExactRate`], and each draw exactly `∝ e^{η' u_i}` by
//! integer arithmetic; so the paper's `(ε, δ)` holds for the draws as made, with no floating-point caveat. With
//! [`SamplerKind::FloatingPoint`] each expert is a [`Hedge`] (log-domain weights and a float sum tree, `O(log n)`
//! draws): the guarantee is that of the real-valued mechanism (Mironov 2012 caveat).
//!
//! Per-round loss reported by `run`: `−f_t(S_t)` (so the regret against `(1 − 1/e)·max_{|S|<=k} Σ_t f_t(S)` is
//! the cumulative loss minus the comparator's cumulative loss, as for every other learner).

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result};
use crate::learners::{Checkpoints, Learner};
use crate::mwu::{ExactHedge, ExactRate, Hedge, uniform_below};
use crate::noise::release::SamplerKind;
use crate::rng::{Generator, Seed};
use crate::submodular::{
    SubmodularFamily, SubmodularKind, check_gains, check_row, state_of, value,
};

/// Feedback model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Feedback {
    /// Oracle access to `f_t` after playing (Algorithm 2).
    Full,
    /// Only `f_t(S_t)` (Algorithm 3).
    Bandit,
}

/// How a private learner's `η` is set from `ε` and `δ`: both give the stated `(ε, δ)` for the same draws.
///
/// The private step is every expert's draw from its exponential weights over cumulative payoffs in which one
/// round's function moves each item's payoff by at most 1: the exponential mechanism at rate `η` with a
/// sensitivity-1 quality (Proposition 2). `m` is the number of rounds whose draws depend on the data (`T` for
/// Algorithm 2, `2γT` for Algorithm 3, `M + 1` for Appendix B.2), each with `k` draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HedgeCalibration {
    /// The paper's rate `ε / (k·sqrt(32·m·ln(k/δ)))` (Theorems 5 and 7: each draw `2η`-DP, advanced composition
    /// over an expert's `m` draws at `δ/k`, basic composition over the `k` experts).
    Paper,
    /// The largest rate the same draws allow through zCDP: a draw is `2η`-bounded range (Durfee & Rogers 2019),
    /// hence `η²/2`-zCDP (Cesar & Rogers 2021: `ε`-bounded range implies `ε²/8`-zCDP); the `k·m` draws compose to
    /// `ρ = k·m·η²/2` (Bun & Steinke 2016, Lemma 2.3, adaptive composition), and `ρ`-zCDP is `(ε, δ)`-DP by
    /// [`crate::zcdp::epsilon`]. So `η = sqrt(2ρ*/(k·m))` with `ρ* = `[`crate::zcdp::largest_rho`]`(ε, δ)`. At
    /// `ε = 1`, `δ = 10⁻⁶` that is `4.6·sqrt(k)` times the paper's rate (8.35 times for `k = 3`): the zCDP
    /// composition costs `sqrt(k)`, not `k`, over the experts, and the bounded-range analysis a factor 4 in `ρ`.
    Zcdp,
}

/// How bandit explore rounds are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Exploration {
    /// Each round independently with probability `γ` (Algorithm 3).
    Online,
    /// `M ~ Binomial(T, γ)` drawn up front, `η` set from `M` (Appendix B.2).
    Presampled,
}

crate::state::checked_state! {
    /// Schedule of a [`PrivateSubmodular`] learner, from the declared arguments only (and, for presampled
    /// exploration, the drawn `M`). A decoded schedule is rebuilt by [`SubmodularParams::new`] from its inputs and
    /// refused unless every derived field (`γ`, `η`, the exact rate) agrees: a state cannot carry a rate that its
    /// `ε`, `δ` and `M` do not imply.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(try_from = "SubmodularParamsState")]
    pub struct SubmodularParams via SubmodularParamsState {
        /// `|U|`.
        pub n: usize,
        /// Cardinality `k`.
        pub k: usize,
        /// `T`.
        pub horizon: u64,
        /// `ε` (`None`: non-private).
        pub epsilon: Option<f64>,
        /// `δ` (0 when non-private).
        pub delta: f64,
        /// Feedback model.
        pub feedback: Feedback,
        /// Exploration (bandit only).
        pub exploration: Exploration,
        /// `γ` (0 for full information).
        pub gamma: f64,
        /// The uncapped `k·((16 n ln n)²/T)^{1/3}` of Algorithm 3 (0 for full information).
        pub gamma_paper: f64,
        /// Number of explore rounds drawn up front (presampled exploration only).
        pub presampled_explores: Option<u64>,
        /// How `η` is set from `ε, δ` (private learners; recorded but unused when non-private).
        pub calibration: HedgeCalibration,
        /// The total zCDP budget `ρ*` the draws spend (`Some` exactly for a private [`HedgeCalibration::Zcdp`]).
        pub rho: Option<f64>,
        /// Hedge learning rate `η` of every expert (the exact sampler uses `exact_rate`'s `η' <= η`).
        pub eta: f64,
        /// How the experts draw (module docs, "Samplers").
        pub sampler: SamplerKind,
        /// The exact sampler's payoff grid and rounded rate (`Some` exactly for [`SamplerKind::Exact`]).
        pub exact_rate: Option<ExactRate>,
    }
}

impl TryFrom<SubmodularParamsState> for SubmodularParams {
    type Error = CoreError;

    fn try_from(s: SubmodularParamsState) -> Result<Self> {
        let rebuilt = SubmodularParams::new(
            s.n,
            s.k,
            s.horizon,
            s.epsilon,
            s.delta,
            s.feedback,
            s.exploration,
            s.presampled_explores,
            s.sampler,
            s.calibration,
        )
        .map_err(|e| CoreError::State(format!("PrivateSubmodular schedule: {e}")))?;
        let stored = SubmodularParams {
            n: s.n,
            k: s.k,
            horizon: s.horizon,
            epsilon: s.epsilon,
            delta: s.delta,
            feedback: s.feedback,
            exploration: s.exploration,
            gamma: s.gamma,
            gamma_paper: s.gamma_paper,
            presampled_explores: s.presampled_explores,
            calibration: s.calibration,
            rho: s.rho,
            eta: s.eta,
            sampler: s.sampler,
            exact_rate: s.exact_rate,
        };
        if stored != rebuilt {
            return Err(CoreError::State(
                "PrivateSubmodular schedule: a rate or exploration probability its declared arguments do not imply"
                    .into(),
            ));
        }
        Ok(stored)
    }
}

fn ln_items(n: usize) -> f64 {
    (n as f64).ln().max(core::f64::consts::LN_2)
}

impl SubmodularParams {
    /// `γ` of Algorithm 3: `k·((16 n ln n)² / T)^{1/3}`, uncapped.
    pub fn paper_gamma(n: usize, k: usize, horizon: u64) -> f64 {
        let a = 16.0 * n as f64 * ln_items(n);
        k as f64 * (a * a / horizon as f64).cbrt()
    }

    /// `η` from `ε, δ` and the number of rounds `m` that access the data (`T` for Algorithm 2, `2γT` for
    /// Algorithm 3, `M + 1` for Appendix B.2), with the zCDP budget `ρ*` it spends ([`HedgeCalibration::Zcdp`]).
    pub fn private_eta(
        calibration: HedgeCalibration,
        epsilon: f64,
        delta: f64,
        k: usize,
        m: f64,
    ) -> (f64, Option<f64>) {
        match calibration {
            HedgeCalibration::Paper => (
                epsilon / (k as f64 * (32.0 * m * (k as f64 / delta).ln()).sqrt()),
                None,
            ),
            HedgeCalibration::Zcdp => {
                let rho = crate::zcdp::largest_rho(epsilon, delta);
                ((2.0 * rho / (k as f64 * m)).sqrt(), Some(rho))
            }
        }
    }

    /// The schedule for the declared arguments. `presampled_explores` is the `M` drawn by the learner
    /// (presampled exploration only).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `n == 0`, `k == 0`, `k > n`, `horizon == 0`, `ε <= 0`,
    /// `δ ∉ (0, 1)` when private, `presampled_explores` missing/present inconsistently, or (exact sampler) an `η`
    /// outside [`ExactRate::new`]'s range.
    #[allow(clippy::too_many_arguments)] // mirrors the Python signature one-to-one
    pub fn new(
        n: usize,
        k: usize,
        horizon: u64,
        epsilon: Option<f64>,
        delta: f64,
        feedback: Feedback,
        exploration: Exploration,
        presampled_explores: Option<u64>,
        sampler: SamplerKind,
        calibration: HedgeCalibration,
    ) -> Result<Self> {
        if n == 0 {
            return Err(CoreError::invalid("ground_set_size", ">= 1", n));
        }
        if k == 0 || k > n {
            return Err(CoreError::invalid("k", "in 1..=ground_set_size", k));
        }
        crate::error::check_horizon(horizon)?;
        if let Some(eps) = epsilon {
            if !(eps.is_finite() && eps > 0.0) {
                return Err(CoreError::invalid("epsilon", "finite and > 0", eps));
            }
            if !(delta > 0.0 && delta < 1.0) {
                return Err(CoreError::invalid(
                    "delta",
                    "in (0, 1) (Proposition 2 needs ln(k/δ) > 0)",
                    delta,
                ));
            }
        } else if !(0.0..1.0).contains(&delta) {
            return Err(CoreError::invalid("delta", "in [0, 1)", delta));
        }
        let presampled = feedback == Feedback::Bandit && exploration == Exploration::Presampled;
        if presampled != presampled_explores.is_some() {
            return Err(CoreError::invalid(
                "presampled_explores",
                "given exactly for presampled bandit exploration",
                format!("{presampled_explores:?}"),
            ));
        }
        let t = horizon as f64;
        let (gamma_paper, gamma) = match feedback {
            Feedback::Full => (0.0, 0.0),
            Feedback::Bandit => {
                let g = Self::paper_gamma(n, k, horizon);
                (g, g.min(1.0))
            }
        };
        let (eta, rho) = match (feedback, epsilon) {
            (Feedback::Full, Some(eps)) => Self::private_eta(calibration, eps, delta, k, t),
            (Feedback::Full, None) => ((ln_items(n) / t).sqrt(), None),
            (Feedback::Bandit, Some(eps)) => {
                let m = match presampled_explores {
                    Some(m) => m as f64 + 1.0,
                    None => 2.0 * gamma * t,
                };
                Self::private_eta(calibration, eps, delta, k, m)
            }
            (Feedback::Bandit, None) => (
                (k as f64 * n as f64 * ln_items(n) / (gamma * t)).sqrt(),
                None,
            ),
        };
        if !(eta.is_finite() && eta > 0.0 && eta <= crate::mwu::MAX_ETA) {
            return Err(CoreError::invalid(
                "eta",
                "finite, > 0 and <= 1e100 (it follows from epsilon: a larger one if eta is 0, a smaller one if huge)",
                eta,
            ));
        }
        let exact_rate = match sampler {
            SamplerKind::Exact => Some(ExactRate::new(eta, horizon)?),
            SamplerKind::FloatingPoint => None,
        };
        Ok(SubmodularParams {
            n,
            k,
            horizon,
            epsilon,
            delta: if epsilon.is_some() { delta } else { 0.0 },
            feedback,
            exploration,
            gamma,
            gamma_paper,
            presampled_explores,
            calibration,
            rho,
            eta,
            sampler,
            exact_rate,
        })
    }
}

/// What the current round plays (bandit rounds decide at `ask`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Pending {
    /// Nothing asked.
    None,
    /// Full information, or a bandit exploit round: the experts' set.
    Exploit,
    /// A bandit explore round: expert `expert` (0-based) tries `item` after the picks of experts before it.
    Explore { expert: usize, item: usize },
}

/// The `k` experts of a learner, by [`SubmodularParams::sampler`] (module docs, "Samplers").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Experts {
    /// Floating-point Hedge.
    FloatingPoint(Vec<Hedge>),
    /// Exact Hedge.
    Exact(Vec<ExactHedge>),
}

impl Experts {
    fn new(p: &SubmodularParams) -> Result<Self> {
        Ok(match p.exact_rate {
            None => {
                let mut v = crate::alloc::reserve("experts", p.k)?;
                for _ in 0..p.k {
                    v.push(Hedge::new(p.n, p.eta)?);
                }
                Experts::FloatingPoint(v)
            }
            Some(rate) => {
                let mut v = crate::alloc::reserve("experts", p.k)?;
                for _ in 0..p.k {
                    v.push(ExactHedge::new(p.n, rate)?);
                }
                Experts::Exact(v)
            }
        })
    }

    /// Number of experts.
    pub fn len(&self) -> usize {
        match self {
            Experts::FloatingPoint(v) => v.len(),
            Experts::Exact(v) => v.len(),
        }
    }

    /// Always false for a learner's experts (`k >= 1`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Expert `i`'s draw.
    fn sample(&self, i: usize, rng: &mut Generator) -> Result<usize> {
        match self {
            Experts::FloatingPoint(v) => Ok(v[i].sample(rng)),
            Experts::Exact(v) => v[i].sample(rng),
        }
    }

    /// Expert `i`'s full-information update with payoffs `gain(src[a])` (0 for the sorted ids in `zero`).
    #[inline(always)]
    fn apply_full_with(
        &mut self,
        i: usize,
        src: &[f64],
        gain: impl Fn(f64) -> f64 + Copy,
        zero: &[usize],
    ) {
        match self {
            Experts::FloatingPoint(v) => v[i].apply_full_with(src, gain, zero),
            Experts::Exact(v) => v[i].apply_full_with(src, gain, zero),
        }
    }

    /// Expert `i`'s bandit update: `item` earns `payoff ∈ [0, 1]`.
    fn apply_one(&mut self, i: usize, item: usize, payoff: f64) {
        match self {
            Experts::FloatingPoint(v) => v[i].apply_one(item, payoff),
            Experts::Exact(v) => v[i].apply_one(item, payoff),
        }
    }

    /// Expert `i`'s sampling distribution (`i < k`), written into `out` (length `n`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `i >= k`; [`CoreError::Shape`].
    pub fn probabilities(&self, i: usize, out: &mut [f64]) -> Result<()> {
        if i >= self.len() {
            return Err(CoreError::invalid("i", "an expert index below k", i));
        }
        match self {
            Experts::FloatingPoint(v) => v[i].probabilities(out),
            Experts::Exact(v) => v[i].probabilities(out),
        }
    }

    /// Whether there are `p.k` experts over `p.n` actions, with the constants `p` implies, whose sums are at
    /// most `updates` payoffs of 1 (exact).
    fn consistent(&self, p: &SubmodularParams, updates: u64) -> bool {
        match (self, p.exact_rate) {
            (Experts::FloatingPoint(v), None) => {
                p.sampler == SamplerKind::FloatingPoint
                    && v.len() == p.k
                    && v.iter().all(|e| e.len() == p.n && e.eta() == p.eta)
            }
            (Experts::Exact(v), Some(rate)) => {
                let max = u128::from(updates) << rate.bits;
                p.sampler == SamplerKind::Exact
                    && ExactRate::new(p.eta, p.horizon).ok() == Some(rate)
                    && v.len() == p.k
                    && v.iter().all(|e| {
                        e.len() == p.n
                            && e.rate() == rate
                            && e.totals().iter().all(|&l| u128::from(l) <= max)
                    })
            }
            _ => false,
        }
    }
}

/// The learner (see the module docs).
#[derive(Debug, Serialize, Deserialize)]
pub struct PrivateSubmodular {
    params: SubmodularParams,
    experts: Experts,
    /// `a^1..a^k`, the experts' current picks.
    picks: Vec<usize>,
    /// The set played this round (distinct ids, in expert order).
    played: Vec<usize>,
    pending: Pending,
    rng: Generator,
    t: u64,
    explores: u64,
    /// Explore rounds still to come (presampled exploration).
    explores_left: u64,
    clipped: u64,
    strict: bool,
    #[serde(skip)]
    scratch: Vec<f64>,
    /// The current prefix, sorted and deduplicated (scratch of the fused gains + Hedge pass).
    #[serde(skip)]
    prefix: Vec<usize>,
}

/// Algorithm 2, lines 7-8 for expert `i` and a row-scalar family: the marginal gains given `prefix` fused into
/// the Hedge pass (bit-identical to [`crate::submodular::gains_into`] followed by a full update; nothing is written but the
/// expert). `sorted` is scratch for the sorted, distinct prefix.
fn expert_step(
    experts: &mut Experts,
    i: usize,
    kind: SubmodularKind,
    row: &[f64],
    prefix: &[usize],
    sorted: &mut Vec<usize>,
) {
    let s = state_of(kind, row, prefix);
    sorted.clear();
    sorted.extend_from_slice(prefix);
    sorted.sort_unstable();
    sorted.dedup();
    match kind {
        SubmodularKind::ProbabilisticCoverage => experts.apply_full_with(
            i,
            row,
            move |x| SubmodularKind::ProbabilisticCoverage.gain(s, x),
            sorted,
        ),
        SubmodularKind::FacilityLocation => experts.apply_full_with(
            i,
            row,
            move |x| SubmodularKind::FacilityLocation.gain(s, x),
            sorted,
        ),
    }
}

fn dedup_into(items: impl Iterator<Item = usize>, out: &mut Vec<usize>) {
    out.clear();
    for a in items {
        if !out.contains(&a) {
            out.push(a);
        }
    }
}

impl PrivateSubmodular {
    /// A learner for `params`, seeded from stream 1 of `seed` (OS-keyed ChaCha20 when `secure`). With
    /// `strict`, feedback outside `[0, 1]` is an error instead of being clipped.
    ///
    /// For presampled exploration, `params` must hold the `M` drawn by [`PrivateSubmodular::draw_explores`]
    /// from the same seed.
    ///
    /// Errors: [`CoreError::Allocation`]; entropy failures; [`CoreError::IterationLimit`] from an exact draw
    /// (never expected, [`ExactHedge::sample`]).
    pub fn new(params: SubmodularParams, seed: Seed, secure: bool, strict: bool) -> Result<Self> {
        // The k experts hold about 3·|U| doubles each (log-weights, leaves, sum tree). Probe the whole amount at
        // once, so that sizes beyond the machine are refused up front (MemoryError) instead of being allocated
        // expert by expert until the process runs out of memory.
        let total = crate::alloc::checked_len("the experts' weights", params.k, params.n)?;
        let total = crate::alloc::checked_len("the experts' weights", total, 3)?;
        drop(crate::alloc::reserve::<f64>(
            "the experts' weights (k Hedges over |U| items)",
            total,
        )?);
        let mut rng = Generator::for_stream(&seed, 1, secure)?;
        let experts = Experts::new(&params)?;
        let picks = (0..params.k)
            .map(|i| experts.sample(i, &mut rng))
            .collect::<Result<Vec<usize>>>()?;
        let mut played = Vec::with_capacity(params.k);
        dedup_into(picks.iter().copied(), &mut played);
        let explores_left = params.presampled_explores.unwrap_or(0);
        Ok(PrivateSubmodular {
            scratch: crate::alloc::zeros("marginal gains", params.n)?,
            prefix: Vec::with_capacity(params.k),
            params,
            experts,
            picks,
            played,
            pending: Pending::None,
            rng,
            t: 0,
            explores: 0,
            explores_left,
            clipped: 0,
            strict,
        })
    }

    /// `M ~ Binomial(T, γ)` for presampled exploration, from stream 2 of `seed` (OS-keyed when `secure`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `γ ∉ [0, 1]`; entropy failures.
    pub fn draw_explores(horizon: u64, gamma: f64, seed: Seed, secure: bool) -> Result<u64> {
        use rand_distr::Distribution;
        let dist = rand_distr::Binomial::new(horizon, gamma)
            .map_err(|_| CoreError::invalid("gamma", "in [0, 1]", gamma))?;
        let mut rng = Generator::for_stream(&seed, 2, secure)?;
        Ok(dist.sample(&mut rng))
    }

    /// Explore rounds so far (bandit).
    pub fn explores(&self) -> u64 {
        self.explores
    }

    /// Whether a set was asked and awaits `tell`.
    pub fn pending(&self) -> bool {
        self.pending != Pending::None
    }

    /// The experts.
    pub fn experts(&self) -> &Experts {
        &self.experts
    }

    /// The experts' current picks `a^1..a^k` (with repetitions).
    pub fn picks(&self) -> &[usize] {
        &self.picks
    }

    fn resample(&mut self) -> Result<()> {
        for (i, p) in self.picks.iter_mut().enumerate() {
            *p = self.experts.sample(i, &mut self.rng)?;
        }
        Ok(())
    }

    /// The set to play this round: at most `k` distinct item ids. Asking again before `tell` returns the same
    /// set.
    ///
    /// Errors: [`CoreError::HorizonExhausted`] after `T` rounds; [`CoreError::IterationLimit`] from an exact draw
    /// (never expected, [`ExactHedge::sample`]).
    pub fn ask(&mut self) -> Result<&[usize]> {
        if self.t >= self.params.horizon {
            return Err(CoreError::HorizonExhausted {
                what: "PrivateSubmodular",
                horizon: self.params.horizon,
            });
        }
        if self.pending == Pending::None {
            self.decide()?;
        }
        Ok(&self.played)
    }

    /// Draw this round's randomness (full information: fresh picks; bandit: explore or not).
    fn decide(&mut self) -> Result<()> {
        match self.params.feedback {
            Feedback::Full => {
                if self.t > 0 {
                    self.resample()?;
                }
                dedup_into(self.picks.iter().copied(), &mut self.played);
                self.pending = Pending::Exploit;
            }
            Feedback::Bandit => {
                let explore = match self.params.exploration {
                    Exploration::Online => self.rng.open01() < self.params.gamma,
                    Exploration::Presampled => {
                        let remaining = (self.params.horizon - self.t) as f64;
                        self.rng.open01() * remaining < self.explores_left as f64
                    }
                };
                if explore {
                    let expert = uniform_below(&mut self.rng, self.params.k);
                    let item = uniform_below(&mut self.rng, self.params.n);
                    dedup_into(
                        self.picks[..expert]
                            .iter()
                            .copied()
                            .chain(core::iter::once(item)),
                        &mut self.played,
                    );
                    self.pending = Pending::Explore { expert, item };
                } else {
                    dedup_into(self.picks.iter().copied(), &mut self.played);
                    self.pending = Pending::Exploit;
                }
            }
        }
        Ok(())
    }

    fn need_pending(&self) -> Result<()> {
        if self.pending == Pending::None {
            return Err(CoreError::Protocol(
                "tell() must follow ask(): one feedback per asked set".into(),
            ));
        }
        Ok(())
    }

    /// Full information: report the row of `f_t` (length `n`; the learner evaluates the marginal gains
    /// itself). Entries outside `[0, 1]` are clipped (counted in [`PrivateSubmodular::clipped`]) unless
    /// `strict`. Returns `f_t(S_t)` of the played set (on the clipped row).
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a pending `ask` or for bandit learners;
    /// [`CoreError::Shape`]; [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`].
    pub fn tell_row(&mut self, kind: SubmodularKind, row: &[f64]) -> Result<f64> {
        self.need_pending()?;
        if self.params.feedback != Feedback::Full {
            return Err(CoreError::Protocol(
                "a bandit learner is told the payoff f_t(S_t), not the row of f_t".into(),
            ));
        }
        crate::error::check_len("row", row, self.params.n)?;
        let outside = check_row(row, self.strict, self.t + 1)?;
        if outside > 0 {
            let clipped: Vec<f64> = row.iter().map(|v| v.clamp(0.0, 1.0)).collect();
            self.clipped += outside as u64;
            Ok(self.full_step(kind, &clipped))
        } else {
            Ok(self.full_step(kind, row))
        }
    }

    /// Full information with gains computed by the caller (e.g. from a Python set function): `gains` is the
    /// row-major `(k, n)` matrix of `g_t^i(a) = f_t(S_t^{i−1} + a) − f_t(S_t^{i−1})` for the prefixes of
    /// [`PrivateSubmodular::picks`], and `payoff = f_t(S_t)`. Values outside `[0, 1]` are clipped (counted in
    /// [`PrivateSubmodular::clipped`]) unless `strict`. Returns the (clipped) payoff.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a pending `ask` or for bandit learners;
    /// [`CoreError::Shape`]; [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`].
    pub fn tell_gains(&mut self, gains: &[f64], payoff: f64) -> Result<f64> {
        self.need_pending()?;
        if self.params.feedback != Feedback::Full {
            return Err(CoreError::Protocol(
                "a bandit learner is told the payoff f_t(S_t), not marginal gains".into(),
            ));
        }
        let (k, n) = (self.params.k, self.params.n);
        self.clipped += check_gains(gains, payoff, k, n, self.strict, self.t + 1)?;
        for i in 0..k {
            for (o, &g) in self.scratch.iter_mut().zip(&gains[i * n..(i + 1) * n]) {
                *o = g.clamp(0.0, 1.0);
            }
            self.experts.apply_full_with(i, &self.scratch, |x| x, &[]);
        }
        self.pending = Pending::None;
        self.t += 1;
        Ok(payoff.clamp(0.0, 1.0))
    }

    /// Algorithm 2, lines 7-8 for a valid row of a family of `kind`: expert `i` is fed the gains of the row given
    /// the picks before it ([`expert_step`]: one gains pass and one Hedge pass per expert).
    #[inline]
    fn experts_step(&mut self, kind: SubmodularKind, row: &[f64]) {
        for i in 0..self.params.k {
            expert_step(
                &mut self.experts,
                i,
                kind,
                row,
                &self.picks[..i],
                &mut self.prefix,
            );
        }
    }

    /// Algorithm 2, lines 6-8 for a valid row: one gains pass and one Hedge pass per expert.
    fn full_step(&mut self, kind: SubmodularKind, row: &[f64]) -> f64 {
        let payoff = value(kind, row, &self.played);
        self.experts_step(kind, row);
        self.pending = Pending::None;
        self.t += 1;
        payoff
    }

    /// Bandit: report `f_t(S_t)` of the asked set, clipped into `[0, 1]` unless `strict`.
    ///
    /// Errors (state unchanged): [`CoreError::Protocol`] without a pending `ask` or for full-information
    /// learners; [`CoreError::NonFinite`]; with `strict`, [`CoreError::InvalidArgument`]. An exact redraw after
    /// an explore round can fail with [`CoreError::IterationLimit`] (never expected, [`ExactHedge::sample`]),
    /// after the update.
    pub fn tell_payoff(&mut self, payoff: f64) -> Result<()> {
        self.need_pending()?;
        if self.params.feedback != Feedback::Bandit {
            return Err(CoreError::Protocol(
                "a full-information learner is told the row of f_t, not a payoff".into(),
            ));
        }
        crate::error::check_finite("payoff", &[payoff])?;
        let inside = (0.0..=1.0).contains(&payoff);
        if !inside && self.strict {
            return Err(CoreError::strict_bound(
                "payoff",
                "in [0, 1] (strict=True)",
                self.t + 1,
            ));
        }
        if !inside {
            self.clipped += 1;
        }
        self.bandit_step(payoff.clamp(0.0, 1.0))
    }

    /// Algorithm 3, lines 8-11 (explore) or 13-15 (exploit), for a payoff in `[0, 1]`.
    fn bandit_step(&mut self, payoff: f64) -> Result<()> {
        if let Pending::Explore { expert, item } = self.pending {
            self.experts.apply_one(expert, item, payoff);
            self.resample()?;
            self.explores += 1;
            self.explores_left = self.explores_left.saturating_sub(1);
        }
        self.pending = Pending::None;
        self.t += 1;
        Ok(())
    }
}

impl Learner for PrivateSubmodular {
    const NAME: &'static str = "PrivateSubmodular";
    type Params = SubmodularParams;
    type Family<'a> = &'a SubmodularFamily;

    /// The schedule.
    fn params(&self) -> &SubmodularParams {
        &self.params
    }

    /// Rounds completed.
    fn t(&self) -> u64 {
        self.t
    }

    /// Feedback values clipped into `[0, 1]` so far (rows count once per clipped entry).
    fn clipped(&self) -> u64 {
        self.clipped
    }

    fn strict(&self) -> bool {
        self.strict
    }

    super::ground_set_check_run!(|learner| learner.pending != Pending::None);

    fn play(
        &mut self,
        family: &'_ SubmodularFamily,
        end: u64,
        marks: &mut Checkpoints<'_>,
    ) -> Result<f64> {
        let mut covered = family.scratch()?;
        let mut total = 0.0;
        while self.t < end {
            self.decide()?;
            let t = self.t;
            let payoff = family.value_with(t, &self.played, &mut covered);
            match self.params.feedback {
                Feedback::Full => {
                    match family.kind() {
                        Some(kind) => self.experts_step(kind, family.row_at(t)),
                        None => {
                            for i in 0..self.params.k {
                                family.gains_with(
                                    t,
                                    &self.picks[..i],
                                    &mut self.scratch,
                                    &mut covered,
                                );
                                self.experts.apply_full_with(i, &self.scratch, |x| x, &[]);
                            }
                        }
                    }
                    self.pending = Pending::None;
                    self.t += 1;
                }
                Feedback::Bandit => self.bandit_step(payoff)?,
            }
            total -= payoff;
            marks.record(self.t, total);
        }
        Ok(total)
    }

    /// The invariants of a decoded learner (see [`super::Learner::check_state`]).
    ///
    /// Errors: [`CoreError::State`]; [`CoreError::Allocation`].
    fn check_state(&mut self) -> Result<()> {
        let p = &self.params;
        if self.t > p.horizon
            || self.clipped > super::most_clipped(self.t, p.k, p.n)
            || !self.experts.consistent(p, self.t)
            || self.picks.len() != p.k
            || self.picks.iter().chain(&self.played).any(|&a| a >= p.n)
        {
            return Err(CoreError::State(
                "inconsistent PrivateSubmodular state".into(),
            ));
        }
        self.scratch = crate::alloc::zeros("marginal gains", p.n)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::losses::RowOrder;

    use crate::learners::testing::coverage_family as family;

    fn learner(
        feedback: Feedback,
        exploration: Exploration,
        horizon: u64,
        seed: u64,
        sampler: SamplerKind,
    ) -> PrivateSubmodular {
        let (n, k) = (6, 2);
        let m =
            (feedback == Feedback::Bandit && exploration == Exploration::Presampled).then(|| {
                let g = SubmodularParams::paper_gamma(n, k, horizon).min(1.0);
                PrivateSubmodular::draw_explores(horizon, g, [seed, 0, 0, 0], false).unwrap()
            });
        let p = SubmodularParams::new(
            n,
            k,
            horizon,
            Some(1.0),
            1e-3,
            feedback,
            exploration,
            m,
            sampler,
            HedgeCalibration::Paper,
        )
        .unwrap();
        PrivateSubmodular::new(p, [seed, 0, 0, 0], false, false).unwrap()
    }

    #[test]
    fn schedule_matches_the_paper() {
        let p = SubmodularParams::new(
            80,
            3,
            10_000,
            Some(1.0),
            1e-6,
            Feedback::Full,
            Exploration::Online,
            None,
            SamplerKind::FloatingPoint,
            HedgeCalibration::Paper,
        )
        .unwrap();
        let want = 1.0 / (3.0 * (32.0 * 10_000.0 * (3.0f64 / 1e-6).ln()).sqrt());
        assert!((p.eta - want).abs() < 1e-15 * want);
        let t = 1e12;
        let p = SubmodularParams::new(
            80,
            3,
            t as u64,
            Some(2.0),
            1e-6,
            Feedback::Bandit,
            Exploration::Online,
            None,
            SamplerKind::FloatingPoint,
            HedgeCalibration::Paper,
        )
        .unwrap();
        let gamma = 3.0 * ((16.0 * 80.0 * 80f64.ln()).powi(2) / t).powf(1.0 / 3.0);
        assert!((p.gamma - gamma).abs() < 1e-12 * gamma && gamma < 1.0);
        let eta = 2.0 / (3.0 * (32.0 * 2.0 * gamma * t * (3.0f64 / 1e-6).ln()).sqrt());
        assert!((p.eta - eta).abs() < 1e-12 * eta);
        // Refused: k > n, k = 0, and a Gaussian target (epsilon) with delta = 0.
        for (k, epsilon) in [(6, None), (0, None), (1, Some(1.0))] {
            let refused = SubmodularParams::new(
                5,
                k,
                10,
                epsilon,
                0.0,
                Feedback::Full,
                Exploration::Online,
                None,
                SamplerKind::FloatingPoint,
                HedgeCalibration::Paper,
            );
            assert!(refused.is_err(), "k={k} epsilon={epsilon:?}");
        }
    }

    #[test]
    fn zcdp_schedule_spends_exactly_the_budget_of_its_draws() {
        // k·m draws, each η²/2-zCDP, compose to ρ = k·m·η²/2 = ρ*(ε, δ): the largest budget within (ε, δ).
        for (feedback, exploration, m) in [
            (Feedback::Full, Exploration::Online, None),
            (Feedback::Bandit, Exploration::Online, None),
            (Feedback::Bandit, Exploration::Presampled, Some(41_234)),
        ] {
            let horizon = 1_000_000u64;
            let p = SubmodularParams::new(
                80,
                3,
                horizon,
                Some(1.0),
                1e-6,
                feedback,
                exploration,
                m,
                SamplerKind::Exact,
                HedgeCalibration::Zcdp,
            )
            .unwrap();
            let draws = 3.0
                * match (feedback, m) {
                    (Feedback::Full, _) => horizon as f64,
                    (_, Some(m)) => m as f64 + 1.0,
                    (_, None) => 2.0 * p.gamma * horizon as f64,
                };
            let rho = p.rho.unwrap();
            assert!((draws * p.eta * p.eta / 2.0 - rho).abs() <= 1e-12 * rho);
            assert!(crate::zcdp::epsilon(rho, 1e-6) <= 1.0);
            let (eta_paper, none) =
                SubmodularParams::private_eta(HedgeCalibration::Paper, 1.0, 1e-6, 3, draws / 3.0);
            assert!(none.is_none());
            // 8.35 times the paper's rate at k = 3, ε = 1, δ = 1e-6 (HedgeCalibration::Zcdp's docs).
            let ratio = p.eta / eta_paper;
            assert!((ratio - 8.35).abs() < 0.01, "{feedback:?}: {ratio}");
            // A state claiming the paper's calibration (or no budget) with the zCDP rate is refused.
            for tamper in [
                |q: &mut SubmodularParams| q.calibration = HedgeCalibration::Paper,
                |q: &mut SubmodularParams| q.rho = None,
            ] {
                let mut q = p.clone();
                tamper(&mut q);
                let bytes = postcard::to_allocvec(&q).unwrap();
                assert!(postcard::from_bytes::<SubmodularParams>(&bytes).is_err());
            }
        }
    }

    #[test]
    fn fused_expert_step_is_bit_identical_to_gains_then_update() {
        use crate::submodular::gains_into;
        let mut rng = Generator::from_seed([8, 6, 7, 5]);
        let n = 150; // 5 blocks, the last partial; prefixes with repeats and several ids in one block
        let prefixes: [&[usize]; 5] = [
            &[],
            &[3],
            &[40, 3, 33, 40],
            &[149, 0, 1, 2, 31, 32],
            &[77; 3],
        ];
        for kind in [
            SubmodularKind::ProbabilisticCoverage,
            SubmodularKind::FacilityLocation,
        ] {
            for &eta in &[1e-4, 0.04, 0.7, 900.0] {
                let mut fused = Experts::FloatingPoint(vec![Hedge::new(n, eta).unwrap()]);
                let mut plain = Hedge::new(n, eta).unwrap();
                let (mut sorted, mut g) = (Vec::new(), vec![0.0; n]);
                for t in 0..200 {
                    let row: Vec<f64> = (0..n).map(|_| rng.open01()).collect();
                    let prefix = prefixes[t % prefixes.len()];
                    expert_step(&mut fused, 0, kind, &row, prefix, &mut sorted);
                    gains_into(kind, &row, prefix, &mut g);
                    plain.apply_full(&g);
                    assert_eq!(
                        fused,
                        Experts::FloatingPoint(vec![plain.clone()]),
                        "{kind:?} eta {eta} round {t}"
                    );
                }
            }
        }
    }

    #[test]
    fn ask_tell_equals_run_and_restores_bit_identically() {
        for (fb, ex, sampler) in [
            (
                Feedback::Full,
                Exploration::Online,
                SamplerKind::FloatingPoint,
            ),
            (
                Feedback::Bandit,
                Exploration::Online,
                SamplerKind::FloatingPoint,
            ),
            (
                Feedback::Bandit,
                Exploration::Presampled,
                SamplerKind::FloatingPoint,
            ),
            (Feedback::Full, Exploration::Online, SamplerKind::Exact),
            (Feedback::Bandit, Exploration::Online, SamplerKind::Exact),
            (
                Feedback::Bandit,
                Exploration::Presampled,
                SamplerKind::Exact,
            ),
        ] {
            let horizon = 400;
            let fam = family(50, 6, 3)
                .reordered(horizon, RowOrder::Cycle)
                .unwrap();
            let mut a = learner(fb, ex, horizon, 11, sampler);
            let mut b = learner(fb, ex, horizon, 11, sampler);
            let mut sets_a = Vec::new();
            let mut total = 0.0;
            for t in 0..horizon {
                let s = a.ask().unwrap().to_vec();
                let row = fam.row_at(t);
                let v = value(SubmodularKind::ProbabilisticCoverage, row, &s);
                total += v;
                match fb {
                    Feedback::Full => {
                        let got = a
                            .tell_row(SubmodularKind::ProbabilisticCoverage, row)
                            .unwrap();
                        assert_eq!(got, v);
                    }
                    Feedback::Bandit => a.tell_payoff(v).unwrap(),
                }
                sets_a.push(s);
            }
            let mut cum = vec![0.0; 2];
            let r1 = b.run(&fam, 150, &[100, 150], &mut cum).unwrap();
            let bytes = b.to_bytes().unwrap();
            let mut c = PrivateSubmodular::from_bytes(&bytes).unwrap();
            let mut cum2 = [0.0];
            let r2 = c.run(&fam, 250, &[400], &mut cum2).unwrap();
            assert!(
                (r1.total_loss + r2.total_loss + total).abs() < 1e-9,
                "{fb:?} {ex:?}"
            );
            assert_eq!(a.experts(), c.experts());
            assert_eq!(a.picks(), c.picks());
            if fb == Feedback::Bandit {
                assert!(a.explores() > 0);
                if ex == Exploration::Presampled {
                    assert_eq!(Some(a.explores()), a.params().presampled_explores);
                }
            }
        }
    }

    #[test]
    fn a_decoded_schedule_must_be_the_one_its_inputs_imply() {
        for m in [Some(0), Some(37), Some(5000)] {
            let p = SubmodularParams::new(
                6,
                2,
                5000,
                Some(1.0),
                1e-6,
                Feedback::Bandit,
                Exploration::Presampled,
                m,
                SamplerKind::Exact,
                HedgeCalibration::Paper,
            )
            .unwrap();
            // Any drawn M decodes (its rate is re-derived from it) …
            let bytes = postcard::to_allocvec(&p).unwrap();
            assert_eq!(postcard::from_bytes::<SubmodularParams>(&bytes).unwrap(), p);
            // … but not a rate, exploration probability or exact rate that M, ε and δ do not imply.
            for tamper in [
                |q: &mut SubmodularParams| q.eta *= 2.0,
                |q: &mut SubmodularParams| q.gamma *= 0.5,
                |q: &mut SubmodularParams| q.exact_rate = None,
            ] {
                let mut q = p.clone();
                tamper(&mut q);
                let bytes = postcard::to_allocvec(&q).unwrap();
                assert!(postcard::from_bytes::<SubmodularParams>(&bytes).is_err());
            }
        }
    }

    #[test]
    fn bad_feedback_leaves_the_state_unchanged() {
        let mut l = learner(
            Feedback::Full,
            Exploration::Online,
            10,
            1,
            SamplerKind::FloatingPoint,
        );
        assert!(
            l.tell_row(SubmodularKind::ProbabilisticCoverage, &[0.1; 6])
                .is_err()
        ); // no ask
        l.ask().unwrap();
        let before = l.to_bytes().unwrap();
        assert!(
            l.tell_row(SubmodularKind::ProbabilisticCoverage, &[0.1; 5])
                .is_err()
        );
        assert!(
            l.tell_row(
                SubmodularKind::ProbabilisticCoverage,
                &[0.1, 0.1, 0.1, 0.1, 0.1, f64::NAN]
            )
            .is_err()
        );
        assert!(l.tell_payoff(0.5).is_err());
        assert_eq!(l.to_bytes().unwrap(), before);
        l.tell_row(
            SubmodularKind::ProbabilisticCoverage,
            &[0.1, 0.1, 0.1, 0.1, 0.1, 1.5],
        )
        .unwrap();
        assert_eq!(l.clipped(), 1);
        let mut b = learner(
            Feedback::Bandit,
            Exploration::Online,
            10,
            1,
            SamplerKind::Exact,
        );
        b.ask().unwrap();
        let before = b.to_bytes().unwrap();
        assert!(b.tell_payoff(f64::NAN).is_err());
        assert!(
            b.tell_row(SubmodularKind::ProbabilisticCoverage, &[0.1; 6])
                .is_err()
        );
        assert_eq!(b.to_bytes().unwrap(), before);
        b.tell_payoff(2.0).unwrap();
        assert_eq!(b.clipped(), 1);
    }
}
