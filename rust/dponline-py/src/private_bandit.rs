//! `dponline._core.PrivateBandit`: bindings of `dponline_core::learners::private_bandit`.

use dponline_core::learners::private_bandit::Feasibility;
use dponline_core::learners::{PrivateBandit, PrivateBanditParams};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::shared;
use crate::domains::PyDomain;
use crate::errors::OrRaise;
use crate::learner::{MechanismArgs, py_learner};
use crate::losses::with_loss_family;

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

/// The schedule of Ene-Nguyen-Vladu Algorithm 1 line 1 for a domain, as a dict.
#[pyfunction]
#[pyo3(signature = (domain, horizon, lipschitz, *, loss_bound = None, smoothing_radius = None, feasibility = "fkm"))]
pub fn private_bandit_params<'py>(
    py: Python<'py>,
    domain: &Bound<'py, PyDomain>,
    horizon: u64,
    lipschitz: f64,
    loss_bound: Option<f64>,
    smoothing_radius: Option<f64>,
    feasibility: &str,
) -> PyResult<Bound<'py, PyDict>> {
    let p = PrivateBanditParams::new(
        &shared(domain, "domain")?.inner,
        horizon,
        lipschitz,
        loss_bound,
        smoothing_radius,
        Feasibility::from_name(feasibility).or_raise()?,
    )
    .or_raise()?;
    params_dict(py, &p)
}

py_learner! {
    /// Native PrivateBandit state machine (documented wrapper: ``dponline.PrivateBandit``).
    class PyPrivateBandit(PrivateBandit) as "PrivateBandit";
    family: with_loss_family, "a dponline.losses family (Linear or PortfolioLogLoss)";
    params: params_dict;
    getters {
        /// ``x̃`` of the current batch, shape ``(dim,)``.
        anchor(&learner, py) { PyArray1::from_slice(py, learner.anchor()) }
        /// ``"laplace"`` or ``"gaussian"``.
        noise(&learner, _py) { learner.noise().name() }
        /// The mechanism releasing the prefix sums (``"tree"``, ``"honaker"``, ``"blt"``).
        mechanism(&learner, _py) { learner.mechanism_kind() }
        /// Scale of the tree's noise (0 for the non-private learner).
        scale(&learner, _py) { learner.noise().scale() }
    }
    methods {
        #[new]
        #[pyo3(signature = (domain, horizon, lipschitz, *, noise, scale, loss_bound = None, smoothing_radius = None, feasibility = "fkm", mechanism = "tree", strict = false, seed = None, secure = false, sampler = "exact"))]
        fn new(
            py: Python<'_>,
            domain: &Bound<'_, PyDomain>,
            horizon: u64,
            lipschitz: f64,
            noise: &str,
            scale: f64,
            loss_bound: Option<f64>,
            smoothing_radius: Option<f64>,
            feasibility: &str,
            mechanism: &str,
            #[pyo3(from_py_with = crate::convert::flag)] strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
            #[pyo3(from_py_with = crate::aggregation::sampler_arg)] sampler: &'static str,
        ) -> PyResult<Self> {
            let args = MechanismArgs::new(py, domain, noise, scale, mechanism, sampler, seed, secure)?;
            let feasibility = Feasibility::from_name(feasibility).or_raise()?;
            let params =
                PrivateBanditParams::new(&args.domain, horizon, lipschitz, loss_bound, smoothing_radius, feasibility)
                    .or_raise()?;
            let inner = args.build(params, strict, PrivateBandit::new)?;
            Ok(Self { inner })
        }

        /// The point to play, shape ``(dim,)``.
        fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let mut this = Self::writable(slf)?;
            Ok(PyArray1::from_slice(slf.py(), this.inner.ask().or_raise()?))
        }

        /// Report the loss of the asked point.
        fn tell(slf: &Bound<'_, Self>, loss: f64) -> PyResult<()> {
            Self::writable(slf)?.inner.tell(loss).or_raise()
        }
    }
}
