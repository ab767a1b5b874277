//! `dponline._core.PrivateBandit`: bindings of `dponline_core::learners::private_bandit`.

use dponline_core::learners::private_bandit::Feasibility;
use dponline_core::learners::{PrivateBandit, PrivateBanditParams};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::shared;
use crate::domains::PyDomain;
use crate::errors::OrRaise;
use crate::learner::{MechanismArgs, py_learner};
use crate::losses::with_loss_family;

fn params_dict<'py>(py: Python<'py>, p: &PrivateBanditParams) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("horizon", p.horizon)?;
    d.set_item("dim", p.dim)?;
    d.set_item("affine_dim", p.affine_dim)?;
    d.set_item("t_batch", p.t_batch)?;
    d.set_item("t_round", p.t_round)?;
    d.set_item("eta", p.eta)?;
    d.set_item("kappa", p.kappa)?;
    d.set_item(
        "eta_rule",
        if p.eta_line_one {
            "line 1"
        } else {
            "Lemma 3.1 proof: D/(kappa sqrt(T_round))"
        },
    )?;
    d.set_item("feasibility", p.feasibility.name())?;
    d.set_item("zeta", p.zeta)?;
    d.set_item("zeta_paper", p.zeta_paper)?;
    d.set_item("lipschitz", p.lipschitz)?;
    d.set_item("diameter", p.diameter)?;
    d.set_item("loss_bound", p.loss_bound)?;
    d.set_item("inscribed_radius", p.inscribed_radius)?;
    d.set_item("shrink", p.shrink)?;
    d.set_item("max_gradient_scale", p.max_gradient_scale())?;
    d.set_item("rounding_inflation", p.rounding_inflation())?;
    d.set_item("sensitivity_l1", p.sensitivity_l1())?;
    d.set_item("sensitivity_l2", p.sensitivity_l2())?;
    Ok(d)
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
