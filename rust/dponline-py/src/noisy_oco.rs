//! `dponline._core.NoisyOCO`: bindings of `dponline_core::learners::NoisyOco`.

use dponline_core::learners::{Learner, NoisyOco, NoisyOcoParams};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::with_vector;
use crate::errors::OrRaise;
use crate::losses::with_loss_family;
use crate::params::{py_mechanism_learner, py_params};

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

py_params! {
    /// The constants of NoisyOCO (Ene-Nguyen-Vladu Algorithm 2, full information) for a domain, before the noise is
    /// known (documented wrapper: ``dponline.NoisyOCO``, whose ``params`` holds them once the step size is tuned to
    /// the noise).
    class PyNoisyOcoParams(NoisyOcoParams) as "NoisyOCOParams";
    dict: params_dict;
    #[pyo3(signature = (domain, horizon, lipschitz, *, learning_rate = None, lmo_calls = 4))]
    new(domain, horizon: u64, lipschitz: f64, learning_rate: Option<f64>, lmo_calls: u32) {
        NoisyOcoParams::new(domain, horizon, lipschitz, learning_rate, lmo_calls).or_raise()
    }
}

py_mechanism_learner! {
    /// Native NoisyOCO state machine (documented wrapper: ``dponline.NoisyOCO``).
    class PyNoisyOco(NoisyOco) as "NoisyOCO";
    new: PyNoisyOcoParams;
    family: with_loss_family, "a dponline.losses family (Linear or PortfolioLogLoss)";
    params: params_dict;
    ask: action;
    getters {
        /// The grid step of the exact path, or ``None``.
        grid(&learner, _py) { learner.grid() }
        /// The latest release of the mechanism, shape ``(dim,)``.
        noisy_cumulative_gradient(&learner, py) { PyArray1::from_slice(py, learner.noisy_cumulative_gradient()) }
        /// The action of the next round, shape ``(dim,)``.
        action(&learner, py) { PyArray1::from_slice(py, learner.action()) }
    }
    methods {
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
