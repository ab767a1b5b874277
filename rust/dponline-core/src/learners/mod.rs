//! Online learners, each a state machine with `ask`/`tell` and a native `run` loop over a
//! [`crate::losses::LossFamily`].

pub mod dp_ftrl;
pub mod noisy_oco;
pub mod private_bandit;
pub mod private_dr_submodular;
pub mod private_exp3;
pub mod private_scrible;
pub mod private_submodular;

pub use dp_ftrl::{DpFtrl, DpFtrlParams, LossNorm, Regularizer};
pub use noisy_oco::{
    NoisyGradient, NoisyMap, NoisyOco, NoisyOcoParams, NoisyOcoTemplate, RegretBound,
};
pub use private_bandit::{
    PrivateBandit, PrivateBanditParams, PrivateFrankWolfeMap, SmoothedBatchGradient,
};
pub use private_dr_submodular::{DrSubmodularParams, PrivateDrSubmodular};
pub use private_exp3::{ArmLosses, BernoulliArms, Exp3Params, PrivateExp3, raw_step_draws};
pub use private_scrible::{PrivateScrible, ScribleParams};

pub use private_submodular::{Exploration, Feedback, PrivateSubmodular, SubmodularParams};

use serde::{Serialize, de::DeserializeOwned};

use crate::error::{CoreError, Result};
use crate::losses::{LossFamily, LossKind};

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

    /// Check that `rounds` rounds of `family` can be played from the current round, without changing anything.
    ///
    /// Errors: each learner's (a pending `ask`, a family of another shape, rounds beyond a horizon).
    fn check_run(&self, family: Self::Family<'_>, rounds: u64) -> Result<()>;

    /// The kernel of [`Learner::run`]: play rounds `t .. end` of `family` (checked by [`Learner::check_run`]),
    /// recording the loss summed since the start of the call at each mark; returns that sum.
    ///
    /// Errors: with [`Learner::strict`], the error `tell` raises at a round whose feedback is beyond the declared
    /// bound ([`CoreError::strict_bound`]: it names the round, never the value); otherwise not expected after
    /// [`Learner::check_run`]. The rounds before stay played ([`Learner::run`] restores them).
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

    /// Play `rounds` rounds of `family` natively (rounds `t .. t + rounds`), recording the cumulative loss of
    /// the played points (since the start of this call) after each absolute round in `checkpoints` into
    /// `cumulative`. Same seed ⇒ the same actions as the equivalent `ask`/`tell` loop, however the rounds are
    /// split into calls.
    ///
    /// Errors (state unchanged): as [`Learner::check_run`]; [`CoreError::Shape`] for mismatched checkpoint
    /// buffers; [`CoreError::InvalidArgument`] for unsorted checkpoints or checkpoints beyond the run; with
    /// [`Learner::strict`], [`CoreError::InvalidArgument`] for a round whose feedback is beyond the declared
    /// bound, as `tell` raises it (the rounds played before it are undone: a seeded learner replays them
    /// bit-identically, a secure one re-keys its generator as on restore).
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
        // Only a strict learner's kernel fails after `check_run`: keep what to put back.
        let before = if self.strict() {
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
    if pending {
        return Err(CoreError::Protocol(
            "run() cannot start while an asked point awaits tell()".into(),
        ));
    }
    if family.dim() != dim {
        return Err(CoreError::Shape {
            name: "losses",
            expected: format!("dimension {dim}"),
            got: format!("dimension {}", family.dim()),
        });
    }
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
