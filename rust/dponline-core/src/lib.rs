//! `dponline-core`: differentially private online learning, in pure Rust.
//!
//! Every algorithm and primitive of the `dponline` Python package lives here, free of Python:
//! functions take slices and a [`rng::Generator`], return [`error::Result`], and never allocate in hot loops.
//!
//! | module | holds |
//! | --- | --- |
//! | [`rng`] | the reproducible generator (xoshiro256++), the secure one (ChaCha20), stream splitting |
//! | [`noise`] | Laplace and Gaussian samplers and exact sums of `r` draws |
//! | [`aggregation`] | the binary mechanism (tree-based aggregation) for private prefix sums |
//! | [`alloc`] | fallible allocation of caller-sized buffers |
//! | [`domains`] | decision sets with linear minimisation oracles |
//! | [`sphere`] | uniform directions on spheres, in balls and in subspaces |
//! | [`frank_wolfe`] | conditional gradient for Euclidean projections, with active sets |
//! | [`losses`] | loss families evaluated natively in `run` loops |
//! | [`mwu`] | Hedge (multiplicative weights) over large action sets, log-domain with a sum tree |
//! | [`submodular`] | monotone submodular function streams with batched marginal gains |
//! | [`vecops`] | small dense-vector kernels for hot loops |
//! | [`learners`] | the online learners (`PrivateBandit`, ...) |

pub mod aggregation;
pub mod alloc;
pub mod domains;
pub mod error;
pub mod frank_wolfe;
pub mod learners;
pub mod losses;
pub mod mwu;
pub mod noise;
pub mod rng;
pub mod sphere;
pub mod submodular;
pub mod vecops;

pub use error::{CoreError, Result};
