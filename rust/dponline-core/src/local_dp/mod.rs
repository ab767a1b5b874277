//! User-specified local differential privacy for unconstrained online learning.
//!
//! Source: D. van der Hoeven, "User-Specified Local Differential Privacy in Unconstrained Adaptive Online
//! Learning" (NeurIPS 2019).
//!
//! | module | holds |
//! | --- | --- |
//! | [`randomizer`] | the local Laplace randomiser (§2.1, Lemma 1) and the ℓ2 variant |
//! | [`learners`] | Algorithms 2 and 3, OGD and AdaGrad baselines, native runs over a [`learners::LocalStream`] |
//! | [`potential`] | Algorithm 1: the one-dimensional potential learner, eq. (7) evaluated stably |

pub mod learners;
pub mod potential;
pub mod randomizer;

pub use learners::{Algorithm, AlgorithmSpec, LocalLearner, LocalLoss, LocalParams, LocalStream};
pub use potential::{Potential1D, Prediction, Prior};
pub use randomizer::{LocalRandomizer, Mechanism};
