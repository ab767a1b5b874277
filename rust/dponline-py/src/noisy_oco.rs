//! `dponline._core.NoisyOCO`: bindings of `dponline_core::learners::NoisyOco`.

use dponline_core::learners::{Learner, NoisyOco, NoisyOcoParams};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::{shared, with_vector};
use crate::domains::PyDomain;
use crate::errors::OrRaise;
use crate::learner::{MechanismArgs, py_learner};
use crate::losses::with_loss_family;

fn params_dict<'py>(py: Python<'py>, p: &NoisyOcoParams) -> PyResult<Bound<'py, PyDict>> {
    let eta_rule = if !p.eta_default {
        "learning_rate"
    } else if p.noise_norm > 0.0 {
        "sqrt(D_omega^2 / (T L^2/2 + L T mu)), noise-aware"
    } else {
        "D / (L sqrt(T)) (Algorithm 2 line 1, kappa = L)"
    };
    py_dict!(py, p; horizon, dim, lipschitz, diameter, mirror_range, lmo_calls, eta, eta_rule = eta_rule, noise_norm,
        frank_wolfe_error = p.frank_wolfe_error(), sensitivity_l1 = p.sensitivity_l1(),
        sensitivity_l2 = p.sensitivity_l2())
}

fn build_params(
    domain: &Bound<'_, PyDomain>,
    horizon: u64,
    lipschitz: f64,
    learning_rate: Option<f64>,
    lmo_calls: u32,
) -> PyResult<NoisyOcoParams> {
    NoisyOcoParams::new(
        &shared(domain, "domain")?.inner,
        horizon,
        lipschitz,
        learning_rate,
        lmo_calls,
    )
    .or_raise()
}

/// The constants of NoisyOCO (Ene-Nguyen-Vladu Algorithm 2, full information) for a domain, before the noise
/// is known, as a dict.
#[pyfunction]
#[pyo3(signature = (domain, horizon, lipschitz, *, learning_rate = None, lmo_calls = 4))]
pub fn noisy_oco_params<'py>(
    py: Python<'py>,
    domain: &Bound<'py, PyDomain>,
    horizon: u64,
    lipschitz: f64,
    learning_rate: Option<f64>,
    lmo_calls: u32,
) -> PyResult<Bound<'py, PyDict>> {
    let p = build_params(domain, horizon, lipschitz, learning_rate, lmo_calls)?;
    params_dict(py, &p)
}

py_learner! {
    /// Native NoisyOCO state machine (documented wrapper: ``dponline.NoisyOCO``).
    class PyNoisyOco(NoisyOco) as "NoisyOCO";
    family: with_loss_family, "a dponline.losses family (Linear or PortfolioLogLoss)";
    params: params_dict;
    getters {
        /// The mechanism releasing the prefix sums (``"tree"``, ``"honaker"``, ``"blt"``).
        mechanism(&learner, _py) { learner.mechanism_kind() }
        /// The grid step of the exact path, or ``None``.
        grid(&learner, _py) { learner.grid() }
        /// The latest release of the mechanism, shape ``(dim,)``.
        noisy_cumulative_gradient(&learner, py) { PyArray1::from_slice(py, learner.noisy_cumulative_gradient()) }
        /// The action of the next round, shape ``(dim,)``.
        action(&learner, py) { PyArray1::from_slice(py, learner.action()) }
        /// ``"laplace"`` or ``"gaussian"``.
        noise(&learner, _py) { learner.noise().name() }
        /// Per-node noise scale (0 for the non-private learner).
        scale(&learner, _py) { learner.noise().scale() }
    }
    methods {
        #[new]
        #[pyo3(signature = (domain, horizon, lipschitz, *, noise, scale, learning_rate = None, lmo_calls = 4, mechanism = "tree", strict = false, seed = None, secure = false, sampler = "exact"))]
        fn new(
            py: Python<'_>,
            domain: &Bound<'_, PyDomain>,
            horizon: u64,
            lipschitz: f64,
            noise: &str,
            scale: f64,
            learning_rate: Option<f64>,
            lmo_calls: u32,
            mechanism: &str,
            strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            secure: bool,
            #[pyo3(from_py_with = crate::aggregation::sampler_arg)] sampler: &'static str,
        ) -> PyResult<Self> {
            let args = MechanismArgs::new(py, domain, noise, scale, mechanism, sampler, seed, secure)?;
            let params = build_params(domain, horizon, lipschitz, learning_rate, lmo_calls)?;
            let inner = args.build(params, strict, NoisyOco::new)?;
            Ok(Self { inner })
        }

        /// The action to play, shape ``(dim,)``.
        fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let mut this = Self::writable(slf)?;
            Ok(PyArray1::from_slice(slf.py(), this.inner.ask().or_raise()?))
        }

        /// Report the gradient at the asked point.
        fn tell(slf: &Bound<'_, Self>, gradient: &Bound<'_, PyAny>) -> PyResult<()> {
            let mut this = Self::writable(slf)?;
            let n = this.inner.params().dim;
            with_vector(gradient, "gradient", n, |v| this.inner.tell(v).or_raise())
        }

        /// The terms of the regret bound (``mirror``, ``stability``, ``noise``, ``frank_wolfe``, ``trivial``,
        /// ``total``), as a dict.
        fn regret_bound_terms<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
            let b = Self::readable(slf)?.inner.regret_bound().or_raise()?;
            py_dict!(slf.py(), b; mirror, stability, noise, frank_wolfe, trivial, total = b.total())
        }

        /// Exact per-coordinate noise variance of the release after ``t`` gradients.
        fn release_variance(slf: &Bound<'_, Self>, t: u64) -> PyResult<f64> {
            Self::readable(slf)?.inner.release_variance(t).or_raise()
        }
    }
}
