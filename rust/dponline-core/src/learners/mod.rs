//! Online learners, each a state machine with `ask`/`tell` and a native `run` loop over a
//! [`crate::losses::LossFamily`].

pub mod noisy_oco;
pub mod private_bandit;

pub use noisy_oco::{NoisyGradient, NoisyMap, NoisyOco};
pub use private_bandit::{
    PrivateBandit, PrivateBanditParams, PrivateFrankWolfeMap, RunSummary, SmoothedBatchGradient,
};
