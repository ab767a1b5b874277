//! `dponline._core.PrivateBandit`: bindings of `dponline_core::learners::private_bandit`.

use dponline_core::learners::private_bandit::Feasibility;
use dponline_core::learners::{PrivateBandit, PrivateBanditParams};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::errors::OrRaise;
use crate::losses::with_loss_family;
use crate::params::{py_mechanism_learner, py_params};

fn params_dict<'py>(py: Python<'py>, p: &PrivateBanditParams) -> PyResult<Bound<'py, PyDict>> {
    let eta_rule = if p.eta_line_one {
        "line 1"
    } else {
        "Lemma 3.1 proof: D/(kappa sqrt(T_round))"
    };
    py_dict!(py, p; horizon, dim, affine_dim, t_batch, t_round, eta, kappa, eta_rule = eta_rule,
        feasibility = p.feasibility.name(), zeta, zeta_paper, lipschitz, diameter, loss_bound, inscribed_radius,
        shrink, max_gradient_scale = p.max_gradient_scale(), rounding_inflation = p.rounding_inflation(),
        sensitivity_l1 = p.sensitivity_l1(), sensitivity_l2 = p.sensitivity_l2())
}

py_params! {
    /// The schedule of Ene-Nguyen-Vladu Algorithm 1 line 1 and the constants of the privacy analysis for a domain
    /// (documented wrapper: ``dponline.PrivateBandit``, whose ``params`` holds them).
    class PyPrivateBanditParams(PrivateBanditParams) as "PrivateBanditParams";
    dict: params_dict;
    #[pyo3(signature = (domain, horizon, lipschitz, *, loss_bound = None, smoothing_radius = None, feasibility = "fkm"))]
    new(domain, horizon: u64, lipschitz: f64, loss_bound: Option<f64>, smoothing_radius: Option<f64>, feasibility: &str) {
        let feasibility = Feasibility::from_name(feasibility).or_raise()?;
        PrivateBanditParams::new(domain, horizon, lipschitz, loss_bound, smoothing_radius, feasibility).or_raise()
    }
}

py_mechanism_learner! {
    /// Native PrivateBandit state machine (documented wrapper: ``dponline.PrivateBandit``).
    class PyPrivateBandit(PrivateBandit) as "PrivateBandit";
    new: PyPrivateBanditParams;
    family: with_loss_family, "a dponline.losses family (Linear or PortfolioLogLoss)";
    params: params_dict;
    ask: point;
    getters {
        /// ``x̃`` of the current batch, shape ``(dim,)``.
        anchor(&learner, py) { PyArray1::from_slice(py, learner.anchor()) }
    }
    methods {
        /// Report the loss of the asked point.
        fn tell(slf: &Bound<'_, Self>, loss: f64) -> PyResult<()> {
            Self::writable(slf)?.inner.tell(loss).or_raise()
        }
    }
}
