//! `dponline._core.PrivateDRSubmodular`: bindings of `dponline_core::learners::private_dr_submodular`.

use dponline_core::domains::LinearMinimizationOracle;
use dponline_core::learners::private_dr_submodular::{
    Argmin, Center, DrSubmodularParams, PrivateDrSubmodular, coverage_gradient,
    coverage_multilinear, paper_copies,
};
use dponline_core::learners::{Learner, LossNorm};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::with_vector;
use crate::errors::{OrRaise, invalid_input};
use crate::params::{py_mechanism_learner, py_params};
use crate::submodular::{ids, with_submodular_family};

/// ``(F(x), ∇F(x))`` of the multilinear extension of probabilistic coverage ``F(x) = 1 − Π_a (1 − p_a x_a)``.
#[pyfunction]
pub fn coverage_extension<'py>(
    py: Python<'py>,
    p: Vec<f64>,
    x: Vec<f64>,
) -> PyResult<(f64, Bound<'py, PyArray1<f64>>)> {
    if p.len() != x.len() {
        return Err(invalid_input(format!(
            "p and x must have the same length, got {} and {}",
            p.len(),
            x.len()
        )));
    }
    if p.iter().chain(&x).any(|v| !(0.0..=1.0).contains(v)) {
        return Err(invalid_input("p and x must lie in [0, 1]".to_string()));
    }
    let mut g = dponline_core::alloc::zeros("gradient", p.len()).or_raise()?;
    coverage_gradient(&p, &x, &mut g);
    Ok((coverage_multilinear(&p, &x), g.into_pyarray(py)))
}

fn params_dict<'py>(py: Python<'py>, p: &DrSubmodularParams) -> PyResult<Bound<'py, PyDict>> {
    let copies_rule = if p.copies_default { "paper" } else { "copies" };
    let regularization_rule = if p.regularization_default {
        "minimiser of the per-copy bound"
    } else {
        "regularization"
    };
    py_dict!(py, p; ground_set_size = p.n, horizon, copies, copies_rule = copies_rule, gradient_bound,
        norm = p.norm.name(), radius_squared, center = p.center.name(), center_radius_squared, noise_norm, regularization,
        regularization_rule = regularization_rule,
        argmin = p.argmin.name(), lmo_calls, diameter, copy_regret_bound = p.copy_regret_bound())
}

/// The declared constants of a PrivateDRSubmodular learner, before the noise is known: the default
/// regularisation and the noise norm depend on the noise, so [`DrSubmodularParams::new`] derives the core params
/// once, in the learner's constructor.
#[derive(Debug, Clone)]
pub struct DrSubmodularDeclared {
    ground_set_size: usize,
    horizon: u64,
    copies: Option<usize>,
    gradient_bound: f64,
    norm: LossNorm,
    regularization: Option<f64>,
    center: Center,
    argmin: Argmin,
    lmo_calls: u32,
}

fn declared_dict<'py>(py: Python<'py>, p: &DrSubmodularDeclared) -> PyResult<Bound<'py, PyDict>> {
    let copies = p.copies.unwrap_or_else(|| paper_copies(p.horizon));
    let copies_rule = if p.copies.is_none() {
        "paper"
    } else {
        "copies"
    };
    py_dict!(py, p; ground_set_size, horizon, copies = copies, copies_rule = copies_rule, gradient_bound,
        norm = p.norm.name(), regularization, center = p.center.name(), argmin = p.argmin.name(), lmo_calls)
}

py_params! {
    /// The declared constants of PrivateDRSubmodular (Perez-Salazar & Cummings Algorithm 4) for a matroid, before
    /// the noise is known, with the number of PFTAL copies ``K`` (the paper's
    /// ``ceil(sqrt(sqrt(T) / ln(T)^2.5))``, at least 1, unless ``copies`` is given) that the calibration needs
    /// (documented wrapper: ``dponline.PrivateDRSubmodular``).
    class PyDrSubmodularParams(DrSubmodularDeclared) as "PrivateDRSubmodularParams";
    dict: declared_dict;
    #[pyo3(signature = (domain, horizon, gradient_bound, *, norm, copies = None, regularization = None, center = "uniform", argmin = "projection", lmo_calls = 4))]
    new(domain, horizon: u64, gradient_bound: f64, norm: &str, copies: Option<usize>, regularization: Option<f64>, center: &str, argmin: &str, lmo_calls: u32) {
        Ok::<_, PyErr>(DrSubmodularDeclared {
            ground_set_size: domain.dim(),
            horizon,
            copies,
            gradient_bound,
            norm: LossNorm::from_name(norm).or_raise()?,
            regularization,
            center: Center::from_name(center).or_raise()?,
            argmin: Argmin::from_name(argmin).or_raise()?,
            lmo_calls,
        })
    }
    finish(&p, args) -> DrSubmodularParams {
        DrSubmodularParams::new(
            &args.domain, p.horizon, p.copies, p.gradient_bound, p.norm, args.noise, p.regularization, p.center,
            p.argmin, p.lmo_calls,
        )
        .or_raise()
    }
}

py_mechanism_learner! {
    /// Native PrivateDRSubmodular state machine (documented wrapper: ``dponline.PrivateDRSubmodular``).
    class PyPrivateDrSubmodular(PrivateDrSubmodular) as "PrivateDRSubmodular";
    new: PyDrSubmodularParams;
    family: with_submodular_family;
    params: params_dict;
    getters {
        /// The fractional point ``x_t`` of the asked round, shape ``(n,)`` (zeros before the first ``ask``).
        point(&learner, py) { PyArray1::from_slice(py, learner.point()) }
        /// The fractional point ``(1/K) Σ_k v^k`` of the current or next round, shape ``(n,)``.
        fractional_point(&learner, py) {
            let mut out = dponline_core::alloc::zeros("point", learner.params().n).or_raise()?;
            learner.fractional_point(&mut out);
            out.into_pyarray(py)
        }
        /// Whether an asked set awaits ``tell``.
        pending(&learner, _py) { learner.pending() }
        /// Frank-Wolfe: the largest gap before the last step of the latest solves (0 for exact projection).
        last_gap(&learner, _py) { learner.last_gap() }
    }
    methods {
        /// The set to play: increasing item ids (int64), independent in the matroid.
        fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<i64>>> {
            let mut this = Self::writable(slf)?;
            let played = this.inner.ask().or_raise()?;
            Ok(ids(slf.py(), played))
        }

        /// Report the click probabilities ``p_t`` (shape ``(n,)``); returns ``f_t(S_t)``.
        fn tell(slf: &Bound<'_, Self>, p: &Bound<'_, PyAny>) -> PyResult<f64> {
            let mut this = Self::writable(slf)?;
            let n = this.inner.params().n;
            with_vector(p, "p", n, |r| this.inner.tell(r).or_raise())
        }

        /// Copy ``k``'s point ``v^k``, shape ``(n,)``.
        fn copy_point<'py>(slf: &Bound<'py, Self>, k: usize) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let this = Self::readable(slf)?;
            let v = this.inner.copy_point(k).ok_or_else(|| {
                invalid_input(format!(
                    "k must be in [0, {}), got {k}",
                    this.inner.params().copies
                ))
            })?;
            Ok(PyArray1::from_slice(slf.py(), v))
        }
    }
}
