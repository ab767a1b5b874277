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
pub use noisy_oco::{NoisyGradient, NoisyMap, NoisyOco};
pub use private_bandit::{
    PrivateBandit, PrivateBanditParams, PrivateFrankWolfeMap, SmoothedBatchGradient,
};
pub use private_dr_submodular::{DrSubmodularParams, PrivateDrSubmodular};
pub use private_exp3::{ArmLosses, BernoulliArms, Exp3Params, PrivateExp3, raw_step_draws};
pub use private_scrible::{PrivateScrible, ScribleParams};

pub use private_submodular::{Exploration, Feedback, PrivateSubmodular, SubmodularParams};

use crate::error::{CoreError, Result};

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

/// The native `run` contract shared by the learners, so that a caller (the Python bindings) drives any of them
/// the same way: validate with [`NativeRun::check_run`] (mutates nothing), then play blocks with
/// [`NativeRun::run`] from absolute round [`NativeRun::t`]. Each method delegates to the learner's inherent
/// method of the same name, which documents its errors.
pub trait NativeRun {
    /// What the learner plays against: a reference to a family, or a small `Copy` view of one.
    type Family<'a>: Copy + Send;

    /// Rounds played so far.
    fn t(&self) -> u64;

    /// Check that `rounds` rounds of `family` can be played from the current round, without changing anything.
    fn check_run(&self, family: Self::Family<'_>, rounds: u64) -> Result<()>;

    /// Play `rounds` rounds; `cumulative[i]` receives the loss summed since the start of this call at the
    /// absolute round `checkpoints[i]`.
    fn run(
        &mut self,
        family: Self::Family<'_>,
        rounds: u64,
        checkpoints: &[u64],
        cumulative: &mut [f64],
    ) -> Result<RunSummary>;
}

/// `impl NativeRun for $learner` by delegation to its inherent `t`, `check_run` and `run`.
macro_rules! native_run {
    ($learner:ty, $family:lifetime => $family_ty:ty) => {
        impl $crate::learners::NativeRun for $learner {
            type Family<$family> = $family_ty;

            fn t(&self) -> u64 {
                <$learner>::t(self)
            }

            fn check_run(
                &self,
                family: Self::Family<'_>,
                rounds: u64,
            ) -> $crate::error::Result<()> {
                <$learner>::check_run(self, family, rounds)
            }

            fn run(
                &mut self,
                family: Self::Family<'_>,
                rounds: u64,
                checkpoints: &[u64],
                cumulative: &mut [f64],
            ) -> $crate::error::Result<$crate::learners::RunSummary> {
                <$learner>::run(self, family, rounds, checkpoints, cumulative)
            }
        }
    };
}

native_run!(DpFtrl, 'a => &'a crate::losses::LossFamily);
native_run!(PrivateBandit, 'a => &'a crate::losses::LossFamily);
native_run!(PrivateScrible, 'a => &'a crate::losses::LossFamily);
native_run!(PrivateExp3, 'a => ArmLosses<'a>);
native_run!(PrivateSubmodular, 'a => &'a crate::submodular::SubmodularFamily);
native_run!(PrivateDrSubmodular, 'a => &'a crate::submodular::SubmodularFamily);

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
pub(crate) struct Checkpoints<'a> {
    marks: &'a [u64],
    out: &'a mut [f64],
    next: usize,
}

impl<'a> Checkpoints<'a> {
    /// Start recording for a call whose rounds follow round `start`.
    pub(crate) fn new(marks: &'a [u64], out: &'a mut [f64], start: u64) -> Self {
        let next = marks.partition_point(|&c| c <= start);
        out.iter_mut().take(next).for_each(|o| *o = 0.0);
        Self { marks, out, next }
    }

    /// Record `total` for every mark equal to the round `t` that just ended.
    #[inline]
    pub(crate) fn record(&mut self, t: u64, total: f64) {
        while self.marks.get(self.next) == Some(&t) {
            if let Some(o) = self.out.get_mut(self.next) {
                *o = total;
            }
            self.next += 1;
        }
    }
}
