//! Online learners, each a state machine with `ask`/`tell` and a native `run` loop over a
//! [`crate::losses::LossFamily`].

pub mod dp_ftrl;
pub mod noisy_oco;
pub mod private_bandit;
pub mod private_dr_submodular;
pub mod private_exp3;
pub mod private_scrible;
pub mod private_submodular;
pub mod private_submodular_ftrl;
#[cfg(test)]
pub(crate) mod testing;

pub use dp_ftrl::{DpFtrl, DpFtrlParams, LossNorm, Regularizer};
pub use noisy_oco::{
    NoisyGradient, NoisyMap, NoisyOco, NoisyOcoParams, NoisyOcoTemplate, RegretBound,
};
pub use private_bandit::{
    PrivateBandit, PrivateBanditParams, PrivateFrankWolfeMap, SmoothedBatchGradient,
};
pub use private_dr_submodular::{DrSubmodularParams, PrivateDrSubmodular};
pub use private_exp3::{
    ArmLosses, BernoulliArms, Exp3Params, Exp3Tuning, PrivateExp3, raw_step_draws,
};
pub use private_scrible::{PrivateScrible, ScribleParams};

pub use private_submodular::{
    Exploration, Feedback, HedgeCalibration, PrivateSubmodular, SubmodularParams,
};
pub use private_submodular_ftrl::{PrivateSubmodularFtrl, SubmodularFtrlParams};

use serde::{Serialize, de::DeserializeOwned};

use crate::error::{CoreError, Result};
use crate::losses::{LossFamily, LossKind};

/// The [`Learner`] items every learner implements the same way: `type Params = $params` and the accessors of
/// its fields `params`, `t` and `strict`, and of its clipped count (the field `clipped`, or the expression
/// given as `|learner| …`). Used inside an `impl Learner for …` block.
macro_rules! learner_accessors {
    ($params:ty) => {
        $crate::learners::learner_accessors!($params, |learner| learner.clipped);
    };
    ($params:ty, |$learner:ident| $clipped:expr) => {
        type Params = $params;

        fn params(&self) -> &$params {
            &self.params
        }

        fn t(&self) -> u64 {
            self.t
        }

        fn clipped(&self) -> u64 {
            let $learner = self;
            $clipped
        }

        fn strict(&self) -> bool {
            self.strict
        }
    };
}
pub(crate) use learner_accessors;

/// The [`Learner::check_run`] of the full-information learners on a domain (DP-FTRL, NoisyOCO), whose fields
/// `pending`, `t`, `params.dim`, `params.horizon` and `domain` it passes to [`check_full_information_run`]. Used
/// inside an `impl Learner for …` block, e.g. `super::full_information_check_run!();`.
macro_rules! full_information_check_run {
    () => {
        /// Check that `rounds` rounds of `family` can be played from the current round, without changing
        /// anything.
        ///
        /// Errors: those of [`crate::learners::check_full_information_run`].
        fn check_run(
            &self,
            family: &$crate::losses::LossFamily,
            rounds: u64,
        ) -> $crate::error::Result<()> {
            $crate::learners::check_full_information_run(
                Self::NAME,
                self.pending,
                self.t,
                self.params.dim,
                self.params.horizon,
                &self.domain,
                family,
                rounds,
            )
        }
    };
}
pub(crate) use full_information_check_run;

/// The [`Learner::check_run`] of the learners that play sets of a ground set against a submodular family
/// (PrivateSubmodular, PrivateSubmodularFTRL): nothing pending (`|learner| …` says whether a set is), then
/// [`check_ground_set_run`] with the fields `params.n` and `params.horizon`. Used inside an `impl Learner for …`
/// block.
macro_rules! ground_set_check_run {
    (|$learner:ident| $pending:expr) => {
        /// Check that `rounds` rounds of `family` can be played from the current round, without changing anything.
        ///
        /// Errors: [`CoreError::Protocol`] if a set is pending; [`CoreError::Shape`] for a family over another
        /// ground set; [`CoreError::HorizonExhausted`] beyond the learner's or the family's horizon.
        fn check_run(
            &self,
            family: &$crate::submodular::SubmodularFamily,
            rounds: u64,
        ) -> $crate::error::Result<()> {
            let $learner = self;
            $crate::learners::check_idle($pending, "set")?;
            $crate::learners::check_ground_set_run(
                self,
                self.params.n,
                self.params.horizon,
                family,
                rounds,
            )
        }
    };
}
pub(crate) use ground_set_check_run;

/// The [`Learner::play`] of a learner that plays round by round: [`play_each`] with the one-round kernel
/// `|learner, family| …` (plays round `t` of `family` at the learner, advances it, returns that round's loss).
/// Used inside an `impl Learner for …` block, e.g.
///
/// ```ignore
/// super::play_by_rounds!(|l, family| {
///     let loss = family.value(l.t, l.oco.ask());
///     l.step(loss)?;
///     Ok(loss)
/// });
/// ```
macro_rules! play_by_rounds {
    (|$learner:ident, $family:ident| $round:expr) => {
        fn play(
            &mut self,
            $family: Self::Family<'_>,
            end: u64,
            marks: &mut $crate::learners::Checkpoints<'_>,
        ) -> $crate::error::Result<f64> {
            $crate::learners::play_each(self, end, marks, |$learner| $round)
        }
    };
}
pub(crate) use play_by_rounds;

/// Totals of a native run (one call of a learner's `run`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSummary {
    /// Rounds played in this call.
    pub rounds: u64,
    /// Sum of the (unclipped) losses of the played points.
    pub total_loss: f64,
    /// Rounds whose feedback exceeded the declared bound and was clipped.
    pub clipped: u64,
}

/// The protocol every online learner of the core follows, so that a caller (the Python bindings, a test, a
/// benchmark) drives any of them the same way. A learner implements the required items; the trait provides
/// the native [`Learner::run`] loop around its [`Learner::play`] kernel and the serialized form
/// ([`Learner::to_bytes`] / [`Learner::from_bytes`] in the [`crate::state`] container, checked by
/// [`Learner::check_state`]).
///
/// Adding a learner: implement this trait, then one `py_learner!` line in the bindings (see CONTRIBUTING.md).
pub trait Learner: Serialize + DeserializeOwned + Sized {
    /// The learner's name in messages (`"PrivateBandit"`, `"DPFTRL"`, …): also its Python class name.
    const NAME: &'static str;

    /// The typed schedule and constants the learner was built with.
    type Params;

    /// What the learner plays against in [`Learner::run`]: a reference to a family, or a small `Copy` view of
    /// one.
    type Family<'a>: Copy + Send;

    /// The schedule and constants.
    fn params(&self) -> &Self::Params;

    /// Rounds played so far.
    fn t(&self) -> u64;

    /// Rounds whose feedback exceeded the declared bound and was clipped, so far.
    fn clipped(&self) -> u64;

    /// Whether feedback beyond the declared bound is an error (`strict`) instead of being clipped: then
    /// [`Learner::play`] stops at such a round with the error `tell` raises there, and [`Learner::run`] puts
    /// back the state from before the call.
    fn strict(&self) -> bool;

    /// Whether [`Learner::play`] can fail after [`Learner::check_run`] accepted the run: then [`Learner::run`]
    /// (and a caller that splits a run into blocks) keeps the serialized state from before the call to put back.
    /// By default only a [`Learner::strict`] learner's can (feedback beyond the declared bound); a learner whose
    /// rounds can fail otherwise (the local-DP learners: a loss that overflows at the played action) returns
    /// `true`.
    fn play_may_fail(&self) -> bool {
        self.strict()
    }

    /// Check that `rounds` rounds of `family` can be played from the current round, without changing anything.
    ///
    /// Errors: each learner's (a pending `ask`, a family of another shape, rounds beyond a horizon).
    fn check_run(&self, family: Self::Family<'_>, rounds: u64) -> Result<()>;

    /// The kernel of [`Learner::run`]: play rounds `t .. end` of `family` (checked by [`Learner::check_run`]),
    /// recording the loss summed since the start of the call at each mark; returns that sum.
    ///
    /// Errors: with [`Learner::strict`], the error `tell` raises at a round whose feedback is beyond the declared
    /// bound ([`CoreError::strict_bound`]: it names the round, never the value); otherwise not expected after
    /// [`Learner::check_run`] unless [`Learner::play_may_fail`]. The rounds before stay played ([`Learner::run`]
    /// restores them).
    fn play(
        &mut self,
        family: Self::Family<'_>,
        end: u64,
        marks: &mut Checkpoints<'_>,
    ) -> Result<f64>;

    /// Check a decoded learner's invariants (and rebuild what is not stored): that it is one the constructor
    /// could have built and played to round `t`.
    ///
    /// Errors: [`CoreError::State`].
    fn check_state(&mut self) -> Result<()>;

    /// Check that `rounds` more rounds fit after the current round within `limit` (the learner's horizon, or the
    /// smaller of it and a family's): [`check_room`] under the learner's [`Learner::NAME`].
    ///
    /// Errors: [`CoreError::HorizonExhausted`].
    fn check_rounds_fit(&self, rounds: u64, limit: u64) -> Result<()> {
        check_room(Self::NAME, self.t(), rounds, limit)
    }

    /// Play `rounds` rounds of `family` natively (rounds `t .. t + rounds`), recording the cumulative loss of
    /// the played points (since the start of this call) after each absolute round in `checkpoints` into
    /// `cumulative`. Same seed ⇒ the same actions as the equivalent `ask`/`tell` loop, however the rounds are
    /// split into calls.
    ///
    /// Errors (state unchanged): as [`Learner::check_run`]; [`CoreError::Shape`] for mismatched checkpoint
    /// buffers; [`CoreError::InvalidArgument`] for unsorted checkpoints or checkpoints beyond the run; with
    /// [`Learner::strict`], [`CoreError::InvalidArgument`] for a round whose feedback is beyond the declared
    /// bound, as `tell` raises it, and any other error of [`Learner::play`] (the rounds played before it are
    /// undone, [`Learner::play_may_fail`]: a seeded learner replays them bit-identically, a secure one re-keys its
    /// generator as on restore).
    fn run(
        &mut self,
        family: Self::Family<'_>,
        rounds: u64,
        checkpoints: &[u64],
        cumulative: &mut [f64],
    ) -> Result<RunSummary> {
        self.check_run(family, rounds)?;
        check_len_pair(checkpoints, cumulative)?;
        let (start, end) = (self.t(), self.t() + rounds);
        crate::losses::check_checkpoints(checkpoints, end)?;
        let clipped_before = self.clipped();
        // Only a kernel that may fail after `check_run` needs what to put back.
        let before = if self.play_may_fail() {
            Some(self.to_bytes()?)
        } else {
            None
        };
        let mut marks = Checkpoints::new(checkpoints, cumulative, start);
        let total_loss = match self.play(family, end, &mut marks) {
            Ok(total) => total,
            Err(e) => {
                if let Some(bytes) = before {
                    *self = Self::from_bytes(&bytes)?;
                }
                return Err(e);
            }
        };
        Ok(RunSummary {
            rounds,
            total_loss,
            clipped: self.clipped() - clipped_before,
        })
    }

    /// Serialize the learner (format-versioned, checksummed: [`crate::state`]). Contains unreleased sums and
    /// noise: as sensitive as the data. A secure generator is stored as a marker and re-keys on restore.
    ///
    /// Errors: [`CoreError::State`] (not expected).
    fn to_bytes(&self) -> Result<Vec<u8>> {
        crate::state::to_state_bytes(self)
    }

    /// Restore a learner from [`Learner::to_bytes`]; it continues bit-identically (a seeded one; a secure one
    /// re-keys). The format is checked by [`crate::state`], the learner's invariants by
    /// [`Learner::check_state`].
    ///
    /// Errors: [`CoreError::State`]; [`CoreError::Allocation`].
    fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut learner: Self = crate::state::from_state_bytes(bytes)?;
        learner.check_state()?;
        Ok(learner)
    }
}

/// The core constructor of a learner on a prefix-sum mechanism (DP-FTRL, NoisyOCO, PrivateBandit,
/// PrivateDRSubmodular): `new(domain, params, setup)`.
pub type MechanismConstructor<P, L> = fn(crate::domains::Domain, P, MechanismSetup) -> Result<L>;

/// What every learner on a prefix-sum mechanism is built with beside its domain and typed params (the last
/// argument of its constructor, [`MechanismConstructor`]): the mechanism releasing the prefix sums, its
/// per-draw noise and sampler, the seed, whether the generator is the OS-keyed one, and `strict`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MechanismSetup {
    /// The mechanism releasing the prefix sums.
    pub mechanism: crate::aggregation::MechanismSpec,
    /// Its per-draw noise.
    pub noise: crate::noise::NoiseDistribution,
    /// How the noise is drawn.
    pub sampler: crate::aggregation::SamplerKind,
    /// Seed material (stream 0 of the learner's generator).
    pub seed: crate::rng::Seed,
    /// Whether the generator is the OS-keyed one (the seed is then not used).
    pub secure: bool,
    /// Whether feedback beyond the declared bound is an error ([`Learner::strict`]).
    pub strict: bool,
}

impl MechanismSetup {
    /// A reproducible (seeded), non-strict setup on the padded binary tree (the papers' mechanism).
    pub fn padded_tree(
        noise: crate::noise::NoiseDistribution,
        sampler: crate::aggregation::SamplerKind,
        seed: crate::rng::Seed,
    ) -> Self {
        Self {
            mechanism: crate::aggregation::MechanismSpec::Tree { padded: true },
            noise,
            sampler,
            seed,
            secure: false,
            strict: false,
        }
    }

    /// The learner's generator on stream `stream` of the seed, or a fresh OS-keyed one when `secure`.
    ///
    /// Errors: [`crate::error::CoreError::Entropy`] if the OS entropy source fails.
    pub fn generator(&self, stream: u64) -> Result<crate::rng::Generator> {
        crate::rng::Generator::for_stream(&self.seed, stream, self.secure)
    }

    /// The mechanism for `dim`-dimensional rows over `horizon` pushes, drawing its noise from
    /// [`MechanismSetup::generator`]`(stream)`.
    ///
    /// Errors: those of [`crate::aggregation::MechanismSpec::build`]; entropy failures.
    pub fn build_mechanism(
        &self,
        dim: usize,
        horizon: u64,
        stream: u64,
    ) -> Result<crate::aggregation::Mechanism> {
        self.mechanism.build(
            dim,
            horizon,
            self.noise,
            self.sampler,
            self.generator(stream)?,
        )
    }
}

/// The placeholder of a feedback release's noise while a learner is decoded (PrivateEXP3, PrivateSCRiBLe: the
/// `serde` default of their skipped noise field, rebuilt from the params by `check_state`): one `Laplace(0)` draw.
pub(crate) fn unset_feedback_noise() -> crate::noise::SumOf {
    crate::noise::NoiseDistribution::Laplace { scale: 0.0 }.sum_of(1)
}

/// Unit roundoff of `f64` (round to nearest), `u = 2⁻⁵³`.
pub const UNIT_ROUNDOFF: f64 = f64::EPSILON / 2.0;

/// Higham's `γ_k = k u / (1 − k u)` (needs `k u < 1`): the relative error bound of `k` roundings
/// (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, Lemma 3.1).
pub fn gamma(k: f64) -> f64 {
    k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)
}

/// Refuse a declared clipping bound outside the hypotheses of Lemma *rounded clip* ([`clip_to_bound`]) for
/// vectors of length `n`: `bound >= n·2⁻¹⁰¹⁸` (its underflow clause; declared constants, never the data).
///
/// Errors: [`CoreError::InvalidArgument`] naming `name`.
pub fn check_clip_bound(name: &'static str, bound: f64, n: usize) -> Result<()> {
    if bound >= n as f64 * 2f64.powi(-1018) {
        Ok(())
    } else {
        Err(CoreError::invalid(
            name,
            ">= dimension * 2^-1018 (the floating-point clipping bound needs norms in the normal range)",
            bound,
        ))
    }
}

/// Clip `row` (a vector computed in floating point, of length `n`) whose **computed** norm is `norm` so that
/// its **exact** norm is within the declared `bound`; returns whether `norm > bound` (the row was beyond the
/// bound: counted as clipped, refused under `strict`).
///
/// The row is scaled onto the radius `R = bound·(1 − c)`, `c = 2(n + 16)u` (`1 − c` is exact), whenever
/// `norm > R̂ = fl(R)`: a row within `bound` but above `R̂` is shrunk by a relative `c` (not counted).
///
/// **Lemma (rounded clip).** Let `n <= 2⁴⁸`, `bound >= n·2⁻¹⁰¹⁸` ([`check_clip_bound`]), `‖·‖` the L1 or L2
/// norm, and `|norm − ‖v‖| <= γ_{n+6}‖v‖` whenever `‖v‖ >= bound/4` (hypothesis *H*). Then the row `v̂` left
/// by this function has `‖v̂‖ <= bound·(1 − 4u)` in exact arithmetic: two neighbouring rows differ by at most
/// the declared `2·bound`, with four units of roundoff to spare for the calibration's own arithmetic.
///
/// *Proof.* If `‖v‖ < bound/4`, the row is at most scaled by `ŝ <= 1`, so `‖v̂‖ <= (1 + u)‖v‖ + n·2⁻¹⁰⁷⁵ <
/// bound/2`. Otherwise *H* applies. Unclipped (`norm <= R̂`): `‖v‖ <= R̂/(1 − γ_{n+6}) <= bound(1 − c)(1 +
/// u)/(1 − γ_{n+6}) <= bound(1 − 4u)` since `c >= γ_{n+6} + 5u`. Clipped: `ŝ = fl(R̂/norm) <= (1 + u)R̂/norm`;
/// every product `fl(v_i ŝ)` is within `u` relatively of `v_i ŝ`, or within `2⁻¹⁰⁷⁵` absolutely if it
/// underflows (at most `n·2⁻¹⁰⁷⁵ <= u·bound/8` in total), so `‖v̂‖ <= (1 + γ₃)·bound(1 − c)/(1 − γ_{n+6}) +
/// u·bound/8 <= bound(1 − 4u)` since `c >= γ_{n+6} + γ₃ + 6u` (`γ_k <= 2ku` for `ku <= 1/2`). ∎
///
/// *H* holds for the norms the learners compute (Higham 2002, eq. (3.5) and §4.2; `n` terms summed in any
/// order): the L1 norm `Σ|v_i|` errs by at most `γ_{n−1}` (sums of subnormals are exact); the scaled L2 norm
/// `m·√Σ(v_i/m)²` (`m = max|v_i|`; DP-FTRL's `l2_norm`) by `γ_{n+6}` — the scaled squares sum to at least 1, so
/// their underflow (`n·2⁻¹⁰⁷⁵`) is below `u` relatively, and the final product is normal once `‖v‖ >=
/// 2⁻¹⁰²⁰`; the plain `√Σ v_i²` when `Σ v_i² >= 10⁻²⁸⁰` (DP-FTRL's `l2_from_squares`) by `γ_{n+2}`.
#[inline]
pub fn clip_to_bound(row: &mut [f64], norm: f64, bound: f64) -> bool {
    let radius = bound * (1.0 - 2.0 * (row.len() as f64 + 16.0) * UNIT_ROUNDOFF);
    if norm > radius {
        let scale = radius / norm;
        row.iter_mut().for_each(|v| *v *= scale);
    }
    norm > bound
}

/// With `strict`, refuse the scalar loss of round `round` (1-based) outside `bounds` (the check of `tell` and of
/// [`Learner::play`] for the learners told one value per round). The error names the bound (`allowed`) and the
/// round, never the value: it is private data.
///
/// Errors: [`CoreError::InvalidArgument`] ([`CoreError::strict_bound`]).
#[inline(always)]
pub fn check_strict_loss(
    strict: bool,
    loss: f64,
    bounds: core::ops::RangeInclusive<f64>,
    allowed: &'static str,
    round: u64,
) -> Result<()> {
    if strict && !bounds.contains(&loss) {
        return Err(CoreError::strict_bound("loss", allowed, round));
    }
    Ok(())
}

/// With `strict`, refuse a loss outside `[−loss_bound, loss_bound]` at round `round` (1-based): the check of
/// [`check_strict_loss`] for the learners whose losses are declared bounded in absolute value (PrivateBandit,
/// PrivateSCRiBLe).
///
/// Errors: [`CoreError::InvalidArgument`] ([`CoreError::strict_bound`]).
#[inline(always)]
pub fn check_strict_symmetric(strict: bool, loss: f64, loss_bound: f64, round: u64) -> Result<()> {
    check_strict_loss(
        strict,
        loss,
        -loss_bound..=loss_bound,
        "within [-loss_bound, loss_bound] (strict=True)",
        round,
    )
}

/// The loop of a [`Learner::play`]: while `learner` is before round `end`, play one round with `round` (which
/// advances the learner's round and returns that round's loss), add the loss to the running total and record the
/// total at the marks of the round that ended. Returns the total; stops at the first error of `round`.
#[inline(always)]
pub fn play_each<L: Learner>(
    learner: &mut L,
    end: u64,
    marks: &mut Checkpoints<'_>,
    mut round: impl FnMut(&mut L) -> Result<f64>,
) -> Result<f64> {
    let mut total = 0.0;
    while learner.t() < end {
        total += round(learner)?;
        marks.record(learner.t(), total);
    }
    Ok(total)
}

/// Round `t`'s full-information feedback at the played point `x` (DP-FTRL, NoisyOCO): writes the vector fed to
/// the learner into `out` — the row `c` of a linear family, or the gradient `−r/⟨r, x⟩` of a portfolio row
/// (`⟨r, x⟩ > 0`: `r > 0` and `x` on the simplex, [`check_full_information_run`]) — and returns the loss
/// `⟨c, x⟩` or `−ln⟨r, x⟩`.
#[inline]
pub fn full_information_feedback(family: &LossFamily, t: u64, x: &[f64], out: &mut [f64]) -> f64 {
    let row = family.row(family.row_index(t));
    match family.kind() {
        LossKind::PortfolioLogLoss => {
            let dot = crate::vecops::dot(row, x);
            let inv = -1.0 / dot;
            for (g, &r) in out.iter_mut().zip(row) {
                *g = inv * r;
            }
            -dot.ln()
        }
        // One dispatched pass: at the CPU's widest vector level, bit-identical at every level (`crate::simd`).
        LossKind::Linear => crate::simd::dispatch(
            #[inline(always)]
            || copy_and_dot(row, x, out),
        ),
    }
}

/// `out = a` and `⟨a, b⟩` in one pass (four partial sums, the order of [`crate::vecops::dot`]).
#[inline(always)]
pub(crate) fn copy_and_dot(a: &[f64], b: &[f64], out: &mut [f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (ca, cb, mut co) = (
        a.chunks_exact(4),
        b.chunks_exact(4),
        out.chunks_exact_mut(4),
    );
    let mut tail = 0.0;
    for ((&x, &y), o) in ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .zip(co.into_remainder().iter_mut())
    {
        *o = x;
        tail += x * y;
    }
    co = out.chunks_exact_mut(4);
    for ((x, y), o) in ca.zip(cb).zip(co) {
        o.copy_from_slice(x);
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// The most values a learner on `n` items with `k` experts can have clipped after `t` rounds: a round clips at most
/// `k·n + 1` (the gains of every expert's prefix and the payoff, told by the caller; a row clips at most `n`, a
/// bandit payoff 1). A decoded state with more is inconsistent.
pub(crate) fn most_clipped(t: u64, k: usize, n: usize) -> u64 {
    let per_round = (k as u64).saturating_mul(n as u64).saturating_add(1);
    t.saturating_mul(per_round)
}

/// The first check of every [`Learner::check_run`]: nothing asked (a `what`: "point", "arm", "set") awaits
/// `tell`.
///
/// Errors: [`CoreError::Protocol`].
pub fn check_idle(pending: bool, what: &str) -> Result<()> {
    if pending {
        return Err(CoreError::Protocol(format!(
            "run() cannot start while an asked {what} awaits tell()"
        )));
    }
    Ok(())
}

/// The first check of every `tell`: an `ask` precedes it (`one`: what is told per asked action, "loss per
/// asked point").
///
/// Errors: [`CoreError::Protocol`].
pub fn check_asked(pending: bool, one: &str) -> Result<()> {
    if !pending {
        return Err(CoreError::Protocol(format!(
            "tell() must follow ask(): one {one}"
        )));
    }
    Ok(())
}

/// Check that a family's `got` (its dimension, ground set size, … in `unit`) is the learner's `expected`.
///
/// Errors: [`CoreError::Shape`] naming `name`.
pub fn check_dim(name: &'static str, unit: &str, expected: usize, got: usize) -> Result<()> {
    if got != expected {
        return Err(CoreError::Shape {
            name,
            expected: format!("{unit} {expected}"),
            got: format!("{unit} {got}"),
        });
    }
    Ok(())
}

/// Check that `params` made for a domain of dimension `got` fit the learner's domain of dimension `dim` (the
/// first check of the constructors that take typed params beside a domain).
///
/// Errors: [`CoreError::Shape`] naming `params`.
pub fn check_params_dim(dim: usize, got: usize) -> Result<()> {
    if got != dim {
        return Err(CoreError::Shape {
            name: "params",
            expected: format!("parameters for a domain of dimension {dim}"),
            got: format!("dimension {got}"),
        });
    }
    Ok(())
}

/// Refuse a per-draw noise `scale` so large that the step size `eta` times the released noise sums could
/// overflow: `eta·scale·10⁶` must be finite (DP-FTRL, NoisyOCO).
///
/// Errors: [`CoreError::InvalidArgument`] naming `scale`.
pub fn check_noise_scale(scale: f64, eta: f64) -> Result<()> {
    if !(scale * eta * 1e6).is_finite() {
        return Err(CoreError::invalid(
            "scale",
            "small enough that eta times the released noise sums stays finite",
            scale,
        ));
    }
    Ok(())
}

/// The checks of [`Learner::check_run`] shared by the full-information learners on a domain (DP-FTRL,
/// NoisyOCO): no point pending, a family of the learner's dimension, portfolio losses only on the simplex,
/// `rounds` within the remaining horizon, and losses whose sums cannot overflow.
///
/// Errors: [`CoreError::Protocol`] if a point is pending; [`CoreError::Shape`] for a family of another
/// dimension; [`CoreError::InvalidArgument`] for a portfolio family off the simplex or losses that may
/// overflow ([`check_family_fits`]); [`CoreError::HorizonExhausted`] past the horizon.
#[allow(clippy::too_many_arguments)]
pub fn check_full_information_run(
    what: &'static str,
    pending: bool,
    t: u64,
    dim: usize,
    horizon: u64,
    domain: &crate::domains::Domain,
    family: &LossFamily,
    rounds: u64,
) -> Result<()> {
    check_idle(pending, "point")?;
    check_dim("losses", "dimension", dim, family.dim())?;
    if family.kind() == LossKind::PortfolioLogLoss
        && !matches!(domain, crate::domains::Domain::Simplex(_))
    {
        return Err(CoreError::invalid(
            "losses",
            "a linear family (portfolio losses need the Simplex)",
            domain.kind(),
        ));
    }
    check_room(what, t, rounds, horizon.min(family.horizon()))?;
    check_family_fits(family, t, rounds, domain_extent(domain))
}

/// The checks of [`Learner::check_run`] that follow the pending check for the learners on a submodular family
/// (PrivateSubmodular, PrivateDRSubmodular): a family on the learner's ground set of `n` items, and `rounds` within
/// the smaller of the learner's `horizon` and the family's.
///
/// Errors: [`CoreError::Shape`] for another ground set; [`CoreError::HorizonExhausted`].
pub fn check_ground_set_run<L: Learner>(
    learner: &L,
    n: usize,
    horizon: u64,
    family: &crate::submodular::SubmodularFamily,
    rounds: u64,
) -> Result<()> {
    check_dim("family", "ground set size", n, family.ground_set_size())?;
    learner.check_rounds_fit(rounds, horizon.min(family.horizon()))
}

/// Check that `rounds` more rounds fit after round `t` within `limit` (the smaller of the learner's and the
/// stream's horizons), without overflow.
///
/// Errors: [`CoreError::HorizonExhausted`] naming `what`.
pub fn check_room(what: &'static str, t: u64, rounds: u64, limit: u64) -> Result<()> {
    if t.checked_add(rounds).is_none_or(|end| end > limit) {
        return Err(CoreError::HorizonExhausted {
            what,
            horizon: limit,
        });
    }
    Ok(())
}

/// Call `visit` on every row of `family` that rounds `start .. start + rounds` use (each row once when the rounds
/// cover at least as many rows as there are; otherwise row by row, repeats included): the cost is at most one
/// pass over what the run itself reads.
fn visit_played_rows(family: &LossFamily, start: u64, rounds: u64, mut visit: impl FnMut(&[f64])) {
    if rounds >= family.rows() as u64 {
        (0..family.rows()).for_each(|i| visit(family.row(i)));
    } else {
        (start..start.saturating_add(rounds)).for_each(|t| visit(family.row(family.row_index(t))));
    }
}

/// Check, before a native run mutates anything, that every round's loss (and, for portfolio rows, the gradient
/// `−r/⟨r, x⟩`) and the loss summed over rounds `start .. start + rounds` stay finite float64 for any point `x`
/// of a domain whose points satisfy `‖x‖_∞ <= extent` (for a domain: [`domain_extent`]). A bound on the data, not
/// on the stream played (it sets nothing): refusing a family whose sums may overflow keeps NaN and ±inf out of the
/// learner's state and of the run's outputs. Only the rows those rounds use are read.
///
/// * Linear rows `c`: `|⟨c, x⟩| <= ‖c‖₁·extent`, so `rounds · max ‖c‖₁ · extent` must be finite (with a factor 2
///   for rounding).
/// * Portfolio rows `r > 0` played on the simplex: `min r / n <= ⟨r, x⟩ <= max r`, so `min r / n` must be a
///   normal float64 and `n · max r / min r` finite (the loss `−ln⟨r, x⟩` is then at most 745 in absolute value).
///
/// Errors: [`CoreError::InvalidArgument`] naming the losses.
pub fn check_family_fits(family: &LossFamily, start: u64, rounds: u64, extent: f64) -> Result<()> {
    let fits = match family.kind() {
        LossKind::Linear => {
            let mut widest = 0.0f64;
            visit_played_rows(family, start, rounds, |row| {
                widest = widest.max(row.iter().map(|v| v.abs()).sum::<f64>());
            });
            (2.0 * widest * extent * rounds as f64).is_finite()
        }
        LossKind::PortfolioLogLoss => {
            let n = family.dim() as f64;
            let mut fits = true;
            visit_played_rows(family, start, rounds, |row| {
                let lo = row.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = row.iter().copied().fold(0.0, f64::max);
                fits &= lo / (2.0 * n) >= f64::MIN_POSITIVE && (2.0 * n * (hi / lo)).is_finite();
            });
            fits
        }
    };
    if fits {
        Ok(())
    } else {
        Err(too_large(family, rounds))
    }
}

/// [`check_family_fits`] for a table of arm losses (round `t`'s loss of arm `i` is entry `i` of its row):
/// `rounds · max |entry|` over the rows played must be finite (with a factor 2).
///
/// Errors: [`CoreError::InvalidArgument`] naming the losses.
pub fn check_table_fits(family: &LossFamily, start: u64, rounds: u64) -> Result<()> {
    let mut largest = 0.0f64;
    visit_played_rows(family, start, rounds, |row| {
        largest = row.iter().fold(largest, |m, v| m.max(v.abs()));
    });
    if (2.0 * largest * rounds as f64).is_finite() {
        Ok(())
    } else {
        Err(too_large(family, rounds))
    }
}

fn too_large(family: &LossFamily, rounds: u64) -> CoreError {
    CoreError::InvalidArgument {
        name: "losses",
        allowed: "values whose losses (and gradients) summed over the rounds played stay finite in float64; \
                  rescale the losses",
        value: format!(
            "a {} family too large for {rounds} rounds",
            match family.kind() {
                LossKind::Linear => "linear",
                LossKind::PortfolioLogLoss => "portfolio",
            }
        ),
    }
}

/// `‖interior point‖_∞ + diameter`: a bound on `‖x‖_∞` over the domain's points.
pub fn domain_extent(domain: &crate::domains::Domain) -> f64 {
    use crate::domains::LinearMinimizationOracle;
    let centre = domain
        .interior_point()
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    centre + domain.diameter()
}

/// Check that a run's checkpoint list and output buffer have the same length.
///
/// Errors: [`CoreError::Shape`].
pub fn check_len_pair(checkpoints: &[u64], cumulative: &[f64]) -> Result<()> {
    if checkpoints.len() == cumulative.len() {
        Ok(())
    } else {
        Err(CoreError::Shape {
            name: "cumulative",
            expected: format!("one output per checkpoint ({})", checkpoints.len()),
            got: format!("length {}", cumulative.len()),
        })
    }
}

/// The checkpoint bookkeeping of a native `run`: `marks` are absolute round numbers in increasing order and
/// `out[i]` receives the loss summed since the start of the call, read when round `marks[i]` ends. Marks at or
/// before the call's first round read 0. The caller has checked `marks.len() == out.len()`
/// ([`check_len_pair`]).
pub struct Checkpoints<'a> {
    marks: &'a [u64],
    out: &'a mut [f64],
    next: usize,
}

impl<'a> Checkpoints<'a> {
    /// Start recording for a call whose rounds follow round `start`.
    pub fn new(marks: &'a [u64], out: &'a mut [f64], start: u64) -> Self {
        let next = marks.partition_point(|&c| c <= start);
        out.iter_mut().take(next).for_each(|o| *o = 0.0);
        Self { marks, out, next }
    }

    /// Record `total` for every mark equal to the round `t` that just ended.
    #[inline]
    pub fn record(&mut self, t: u64, total: f64) {
        while self.marks.get(self.next) == Some(&t) {
            if let Some(o) = self.out.get_mut(self.next) {
                *o = total;
            }
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Σ|v_i|` exactly, in units of `2⁻¹¹⁰` (entries on that grid and below `2¹⁶`, checked).
    fn exact_l1_units(v: &[f64]) -> i128 {
        v.iter()
            .map(|&x| {
                let scaled = x.abs() * 2f64.powi(110);
                assert!(scaled.fract() == 0.0 && scaled < 2f64.powi(126));
                scaled as i128
            })
            .sum()
    }

    /// Whether `Σ v_i² > 1` exactly: the squares by `fma` error-free products, summed in double-double
    /// (Ogita-Rump-Oishi `Sum2`: as accurate as twice the working precision, far inside the `u` margins here).
    fn exact_l2_exceeds_one(v: &[f64]) -> bool {
        let (mut hi, mut lo) = (0.0f64, 0.0f64);
        for &x in v {
            let p = x * x;
            let e = x.mul_add(x, -p);
            let s = hi + p;
            let z = s - hi;
            lo += (hi - (s - z)) + (p - z) + e;
            hi = s;
        }
        (hi - 1.0) + lo > 0.0
    }

    /// The worst case of Lemma *rounded clip*: rows far beyond the bound whose computed norm rounds below the
    /// exact one. The plain float clip `v·fl(G/norm)` leaves rows whose exact norm exceeds `G` (the gap the
    /// Lemma closes); [`clip_to_bound`] never does, in L1 and L2.
    #[test]
    fn rounded_clip_keeps_the_exact_norm_within_the_bound() {
        let mut rng = crate::rng::Generator::from_seed([11, 0, 0, 0]);
        let n = 1000;
        let (mut plain_over_l1, mut plain_over_l2) = (0, 0);
        for _ in 0..400 {
            // Entries on the 2⁻⁶⁰ grid (products with the scale stay on 2⁻¹¹⁰ for the exact L1 sum).
            let v: Vec<f64> = (0..n)
                .map(|_| ((rng.open01() * 2f64.powi(40)).floor() + 1.0) * 2f64.powi(-37))
                .collect();
            let l1 = v.iter().map(|x| x.abs()).sum::<f64>();
            let l2 = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            let g = 1.0;
            let plain = |norm: f64| {
                let s = g / norm;
                v.iter().map(|x| x * s).collect::<Vec<f64>>()
            };
            plain_over_l1 += usize::from(exact_l1_units(&plain(l1)) > 1i128 << 110);
            plain_over_l2 += usize::from(exact_l2_exceeds_one(&plain(l2)));
            let mut a = v.clone();
            assert!(clip_to_bound(&mut a, l1, g));
            assert!(exact_l1_units(&a) <= 1i128 << 110);
            let mut b = v.clone();
            assert!(clip_to_bound(&mut b, l2, g));
            assert!(!exact_l2_exceeds_one(&b));
        }
        assert!(
            plain_over_l1 > 0 && plain_over_l2 > 0,
            "{plain_over_l1} {plain_over_l2}"
        );
        // Within the bound by the computed norm: unchanged unless within c = 2(n+16)u of it (shrunk, not counted).
        let mut inside = vec![0.5, 0.25];
        assert!(!clip_to_bound(&mut inside, 0.75, 1.0) && inside == [0.5, 0.25]);
        let mut edge = vec![0.5, 0.5];
        assert!(!clip_to_bound(&mut edge, 1.0, 1.0) && edge[0] < 0.5);
        assert!(check_clip_bound("bound", 2f64.powi(-1017), 2).is_ok());
        assert!(check_clip_bound("bound", 2f64.powi(-1017), 3).is_err());
        assert!(check_clip_bound("bound", 5e-324, 1).is_err());
    }

    #[test]
    fn families_whose_sums_overflow_are_refused() {
        let linear = LossFamily::new(LossKind::Linear, vec![1e300, -1e300], 2).unwrap();
        assert!(check_family_fits(&linear, 0, 10, 1.0).is_ok());
        assert!(check_family_fits(&linear, 0, 10, 1e10).is_err());
        assert!(check_table_fits(&linear, 0, 10).is_ok());
        assert!(check_table_fits(&linear, 0, 1 << 40).is_err());
        let tiny = LossFamily::new(LossKind::PortfolioLogLoss, vec![5e-324, 5e-324], 2).unwrap();
        assert!(check_family_fits(&tiny, 0, 1, 1.0).is_err());
        let spread = LossFamily::new(LossKind::PortfolioLogLoss, vec![1e-300, 1e300], 2).unwrap();
        assert!(check_family_fits(&spread, 0, 1, 1.0).is_err());
        let fine = LossFamily::new(LossKind::PortfolioLogLoss, vec![1e-100, 1e100], 2).unwrap();
        assert!(check_family_fits(&fine, 0, u64::MAX, 1.0).is_ok());
        // Only the rows played are read: row 1 overflows, row 0 does not.
        let mixed = LossFamily::new(LossKind::Linear, vec![1.0, 1.0, 1e308, 1e308], 2).unwrap();
        assert!(check_family_fits(&mixed, 0, 1, 1.0).is_ok());
        assert!(check_family_fits(&mixed, 1, 1, 1.0).is_err());
        assert!(check_table_fits(&mixed, 0, 1).is_ok() && check_table_fits(&mixed, 1, 1).is_err());
    }
}
