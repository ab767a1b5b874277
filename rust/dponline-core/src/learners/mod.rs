//! Online learners, each a state machine with `ask`/`tell` and a native `run` loop over a
//! [`crate::losses::LossFamily`].

pub mod private_bandit;

pub use private_bandit::{PrivateBandit, PrivateBanditParams, RunSummary};
