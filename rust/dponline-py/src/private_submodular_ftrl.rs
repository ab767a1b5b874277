//! `dponline._core.PrivateSubmodularFTRL`: bindings of `dponline_core::learners::private_submodular_ftrl`.

use dponline_core::aggregation::{MechanismSpec, SamplerKind};
use dponline_core::learners::{
    Learner, LossNorm, MechanismSetup, PrivateSubmodularFtrl, SubmodularFtrlParams,
};
use dponline_core::noise::NoiseDistribution;
use dponline_core::submodular::SubmodularKind;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{keying, py_dict, with_vector};
use crate::errors::OrRaise;
use crate::params::py_mechanism_learner;
use crate::submodular::{gains_matrix, ids, with_submodular_family};

fn params_dict<'py>(py: Python<'py>, p: &SubmodularFtrlParams) -> PyResult<Bound<'py, PyDict>> {
    let e = &p.expert;
    let perturbation = Some(e.perturbation_bound()).filter(|b| b.is_finite());
    let lipschitz = Some(e.lipschitz_bound()).filter(|b| b.is_finite());
    py_dict!(py, p; ground_set_size = p.n, k, horizon, norm = p.norm.name(),
        expert_loss_bound = p.expert_loss_bound(), joint_loss_bound = p.joint_loss_bound(), eta = e.eta,
        dual_bound = e.dual_bound, loss_shift = e.loss_shift, regularizer_range = e.regularizer_range,
        ftrl_bound = e.ftrl_bound(), perturbation_bound ?= perturbation, lipschitz_bound ?= lipschitz,
        release_variance = e.release_noise.variance, offset_sum = e.release_noise.offset_sum)
}

py_mechanism_learner! {
    /// Native PrivateSubmodularFTRL state machine (documented wrapper: ``dponline.PrivateSubmodularFTRL``).
    class PyPrivateSubmodularFtrl(PrivateSubmodularFtrl) as "PrivateSubmodularFTRL";
    family: with_submodular_family;
    params: params_dict;
    getters {
        /// The experts' picks ``a^1..a^k`` for the current (or next) round, with repetitions, int64.
        picks(&learner, py) { ids(py, learner.picks()) }
        /// Whether an asked set awaits ``tell``.
        pending(&learner, _py) { learner.pending() }
    }
    methods {
        #[new]
        #[pyo3(signature = (ground_set_size, k, horizon, *, norm, noise, scale, mechanism = "tree", strict = false, seed = None, secure = false, sampler = "exact"))]
        fn new(
            py: Python<'_>,
            ground_set_size: usize,
            k: usize,
            horizon: u64,
            norm: &str,
            noise: &str,
            scale: f64,
            mechanism: &str,
            #[pyo3(from_py_with = crate::convert::flag)] strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
            #[pyo3(from_py_with = crate::aggregation::sampler_arg)] sampler: &'static str,
        ) -> PyResult<Self> {
            let norm = LossNorm::from_name(norm).or_raise()?;
            let params = SubmodularFtrlParams::new(ground_set_size, k, horizon, norm).or_raise()?;
            let (seed, secure) = keying(py, seed, secure)?;
            let setup = MechanismSetup {
                mechanism: MechanismSpec::from_name(mechanism).or_raise()?,
                noise: NoiseDistribution::from_name(noise, scale).or_raise()?,
                sampler: SamplerKind::from_name(sampler).or_raise()?,
                seed,
                secure,
                strict,
            };
            Ok(Self { inner: PrivateSubmodularFtrl::new(params, setup).or_raise()? })
        }

        /// The set to play: distinct item ids, int64, at most ``k``.
        fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<i64>>> {
            let mut this = Self::writable(slf)?;
            let played = this.inner.ask().or_raise()?;
            Ok(ids(slf.py(), played))
        }

        /// The row of ``f_t`` (shape ``(n,)``) of family ``kind``; returns ``f_t(S_t)``.
        #[pyo3(signature = (row, kind = "probabilistic_coverage"))]
        fn tell_row(slf: &Bound<'_, Self>, row: &Bound<'_, PyAny>, kind: &str) -> PyResult<f64> {
            let kind = SubmodularKind::from_name(kind).or_raise()?;
            let mut this = Self::writable(slf)?;
            let n = this.inner.params().n;
            with_vector(row, "row", n, |r| this.inner.tell_row(kind, r).or_raise())
        }

        /// The ``(k, n)`` marginal gains of the experts' prefixes and ``f_t(S_t)``; returns the clipped payoff.
        fn tell_gains(slf: &Bound<'_, Self>, gains: &Bound<'_, PyAny>, payoff: f64) -> PyResult<f64> {
            let mut this = Self::writable(slf)?;
            let (k, n) = (this.inner.params().k, this.inner.params().n);
            let data = gains_matrix(gains, k, n)?;
            this.inner.tell_gains(&data, payoff).or_raise()
        }

        /// Expert ``i``'s distribution over the items for its next pick (0-based), shape ``(n,)``.
        fn expert_probabilities<'py>(slf: &Bound<'py, Self>, i: usize) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let this = Self::readable(slf)?;
            let p = this.inner.expert_probabilities(i).or_raise()?;
            Ok(PyArray1::from_slice(slf.py(), p))
        }
    }
}
