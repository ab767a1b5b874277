//! `dponline-core`: differentially private online learning, in pure Rust.
//!
//! Every algorithm and primitive of the `dponline` Python package lives here, free of Python:
//! functions take slices and a [`rng::Generator`], return [`error::Result`], and never allocate in hot loops.
//!
//! | module | holds |
//! | --- | --- |
//! | [`rng`] | the reproducible generator (xoshiro256++), the secure one (ChaCha20), stream splitting |
//! | [`noise`] | Laplace and Gaussian samplers and exact sums of `r` draws |
//! | [`aggregation`] | private prefix sums: binary, Honaker and `k`-ary trees, BLT matrix factorisation |
//! | [`alloc`] | fallible allocation of caller-sized buffers |
//! | [`domains`] | decision sets with linear minimisation oracles |
//! | [`sphere`] | uniform directions on spheres, in balls and in subspaces |
//! | [`frank_wolfe`] | conditional gradient for Euclidean projections, with active sets |
//! | [`interrupt`] | cooperative interruption (Ctrl-C) of long native loops |
//! | [`losses`] | loss families evaluated natively in `run` loops |
//! | [`mwu`] | Hedge (multiplicative weights) over large action sets, log-domain with a sum tree |
//! | [`submodular`] | monotone submodular function streams with batched marginal gains |
//! | [`vecops`] | small dense-vector kernels for hot loops |
//! | [`simd`] | run-time CPU-feature dispatch (AVX2, AVX-512) for those kernels; the only `unsafe` in the crate |
//! | [`learners`] | the online learners (`PrivateBandit`, ...) |
//! | [`local_dp`] | local randomisers and the parameter-free local-DP learners (van der Hoeven 2019) |
//! | [`special`] | `erfcx`, Mills-ratio residual, Gauss-Legendre and adaptive Gauss-Kronrod quadrature |

pub mod aggregation;
pub mod alloc;
pub mod domains;
pub mod error;
pub mod frank_wolfe;
pub mod interrupt;
pub mod learners;
pub mod local_dp;
pub mod losses;
pub mod mwu;
pub mod noise;
pub mod rng;
pub mod simd;
pub mod special;
pub mod sphere;
pub mod state;
pub mod submodular;
pub mod vecops;
pub mod zcdp;

pub use error::{CoreError, Result};
