//! Noise for private mechanisms.
//!
//! | module | holds |
//! | --- | --- |
//! | [`exact`] | exact samplers on the integers: Bernoulli(exp(−γ)), the discrete Laplace and the discrete Gaussian of Canonne, Kamath & Steinke (2020), integer arithmetic only |
//! | [`grid`] | the power-of-two grid an exact release lives on: quantisation, integer sensitivities, [`grid::ExactNoise`] |
//! | [`release`] | the exact Laplace mechanism calibrated to a stated ε on the grid, and [`release::SamplerKind`] (exact or floating-point) |
//! | `float` (re-exported here) | floating-point Laplace and Gaussian samplers and exact sums of `r` draws: the fast path for simulations, with the representation gaps of Mironov (2012) |
//!
//! Everything of the floating-point samplers is re-exported at this level (`crate::noise::NoiseDistribution`,
//! `crate::noise::Sampler`, ...).

pub mod exact;
mod float;
pub mod grid;
pub mod release;

pub use float::*;
