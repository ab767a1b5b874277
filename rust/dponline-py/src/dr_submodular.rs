//! `dponline._core.PrivateDRSubmodular`: bindings of `dponline_core::learners::private_dr_submodular`.

use dponline_core::aggregation::MechanismSpec;
use dponline_core::learners::LossNorm;
use dponline_core::learners::private_dr_submodular::{
    Argmin, DrSubmodularParams, PrivateDrSubmodular, coverage_gradient, coverage_multilinear,
    paper_copies,
};
use dponline_core::noise::NoiseDistribution;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{RunOutput, exclusive, keying, run_learner, shared, with_vector};
use crate::domains::PyDomain;
use crate::errors::{OrRaise, invalid_input};
use crate::submodular::PySubmodularFamily;

/// The paper's number of PFTAL copies ``K = ceil(sqrt(sqrt(T) / ln(T)^2.5))`` (at least 1).
#[pyfunction]
pub fn dr_submodular_copies(horizon: u64) -> usize {
    paper_copies(horizon)
}

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
    let d = PyDict::new(py);
    d.set_item("ground_set_size", p.n)?;
    d.set_item("horizon", p.horizon)?;
    d.set_item("copies", p.copies)?;
    d.set_item(
        "copies_rule",
        if p.copies_default { "paper" } else { "copies" },
    )?;
    d.set_item("gradient_bound", p.gradient_bound)?;
    d.set_item("norm", p.norm.name())?;
    d.set_item("radius_squared", p.radius_squared)?;
    d.set_item("noise_norm", p.noise_norm)?;
    d.set_item("regularization", p.regularization)?;
    d.set_item(
        "regularization_rule",
        if p.regularization_default {
            "minimiser of the per-copy bound"
        } else {
            "regularization"
        },
    )?;
    d.set_item("argmin", p.argmin.name())?;
    d.set_item("lmo_calls", p.lmo_calls)?;
    d.set_item("diameter", p.diameter)?;
    d.set_item("copy_regret_bound", p.copy_regret_bound())?;
    Ok(d)
}

/// Native PrivateDRSubmodular state machine (documented wrapper: ``dponline.PrivateDRSubmodular``).
#[pyclass(module = "dponline._core", name = "PrivateDRSubmodular")]
pub struct PyPrivateDrSubmodular {
    inner: PrivateDrSubmodular,
}

#[pymethods]
impl PyPrivateDrSubmodular {
    #[new]
    #[pyo3(signature = (domain, horizon, gradient_bound, *, norm, noise, scale, copies = None, regularization = None, argmin = "projection", lmo_calls = 4, mechanism = "tree", strict = false, seed = None, secure = false, sampler = "exact"))]
    fn new(
        py: Python<'_>,
        domain: &Bound<'_, PyDomain>,
        horizon: u64,
        gradient_bound: f64,
        norm: &str,
        noise: &str,
        scale: f64,
        copies: Option<usize>,
        regularization: Option<f64>,
        argmin: &str,
        lmo_calls: u32,
        mechanism: &str,
        strict: bool,
        seed: Option<&Bound<'_, PyAny>>,
        secure: bool,
        #[pyo3(from_py_with = crate::aggregation::sampler_arg)] sampler: &'static str,
    ) -> PyResult<Self> {
        let sampler = dponline_core::aggregation::SamplerKind::from_name(sampler).or_raise()?;
        let dom = shared(domain, "domain")?.inner.clone();
        let dist = NoiseDistribution::from_name(noise, scale).or_raise()?;
        let params = DrSubmodularParams::new(
            &dom,
            horizon,
            copies,
            gradient_bound,
            LossNorm::from_name(norm).or_raise()?,
            dist,
            regularization,
            Argmin::from_name(argmin).or_raise()?,
            lmo_calls,
        )
        .or_raise()?;
        let spec = MechanismSpec::from_name(mechanism).or_raise()?;
        let (words, secure) = keying(py, seed, secure)?;
        Ok(PyPrivateDrSubmodular {
            inner: PrivateDrSubmodular::new(
                dom, params, spec, dist, sampler, words, secure, strict,
            )
            .or_raise()?,
        })
    }

    /// The set to play: increasing item ids (int64), independent in the matroid.
    fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let mut this = exclusive(slf, "PrivateDRSubmodular")?;
        let played = this.inner.ask().or_raise()?;
        Ok(played
            .iter()
            .map(|&a| a as i64)
            .collect::<Vec<_>>()
            .into_pyarray(slf.py()))
    }

    /// Report the click probabilities ``p_t`` (shape ``(n,)``); returns ``f_t(S_t)``.
    fn tell(slf: &Bound<'_, Self>, p: &Bound<'_, PyAny>) -> PyResult<f64> {
        let mut this = exclusive(slf, "PrivateDRSubmodular")?;
        let n = this.inner.params().n;
        with_vector(p, "p", n, |r| this.inner.tell(r).or_raise())
    }

    /// Play ``rounds`` rounds natively in blocks (GIL released, Ctrl-C checked between blocks); returns
    /// ``(total_loss, clipped, cumulative_at_checkpoints)`` with loss ``−f_t(S_t)``.
    #[pyo3(signature = (family, rounds, checkpoints, progress = None))]
    fn run<'py>(
        slf: &Bound<'py, Self>,
        family: &Bound<'py, PySubmodularFamily>,
        rounds: u64,
        checkpoints: Vec<u64>,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<RunOutput<'py>> {
        let py = slf.py();
        let mut this = exclusive(slf, "PrivateDRSubmodular")?;
        let fam = &family.get().inner;
        run_learner(py, &mut this.inner, fam, rounds, &checkpoints, progress)
    }

    /// The fractional point ``x_t`` of the asked round, shape ``(n,)`` (zeros before the first ``ask``).
    #[getter]
    fn point<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.point())
    }

    /// The fractional point ``(1/K) Σ_k v^k`` of the current or next round, shape ``(n,)``.
    #[getter]
    fn fractional_point<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut out = dponline_core::alloc::zeros("point", self.inner.params().n).or_raise()?;
        self.inner.fractional_point(&mut out);
        Ok(out.into_pyarray(py))
    }

    /// Copy ``k``'s point ``v^k``, shape ``(n,)``.
    fn copy_point<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let v = self.inner.copy_point(k).ok_or_else(|| {
            invalid_input(format!(
                "k must be in [0, {}), got {k}",
                self.inner.params().copies
            ))
        })?;
        Ok(PyArray1::from_slice(py, v))
    }

    /// Constants, as a dict.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        params_dict(py, self.inner.params())
    }

    /// Rounds completed.
    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }

    /// Whether an asked set awaits ``tell``.
    #[getter]
    fn pending(&self) -> bool {
        self.inner.pending()
    }

    /// Rounds whose row or gradient was clipped.
    #[getter]
    fn clipped(&self) -> u64 {
        self.inner.clipped()
    }

    /// Frank-Wolfe: the largest gap before the last step of the latest solves (0 for exact projection).
    #[getter]
    fn last_gap(&self) -> f64 {
        self.inner.last_gap()
    }

    /// The mechanism releasing each copy's prefix sums (``"tree"``, ``"honaker"``, ``"blt"``).
    #[getter]
    fn mechanism(&self) -> &'static str {
        self.inner.mechanism_kind()
    }

    /// ``"laplace"`` or ``"gaussian"``.
    #[getter]
    fn noise(&self) -> &'static str {
        self.inner.noise().name()
    }

    /// Per-draw noise scale of every copy (0 for the non-private learner).
    #[getter]
    fn scale(&self) -> f64 {
        self.inner.noise().scale()
    }

    /// Serialized state (format-versioned).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_raise()?))
    }

    /// Restore from :meth:`to_bytes`.
    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyPrivateDrSubmodular {
            inner: PrivateDrSubmodular::from_bytes(state).or_raise()?,
        })
    }
}
