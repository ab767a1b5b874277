//! `dponline._core.PrivateSCRiBLe`: bindings of `dponline_core::learners::PrivateScrible`.

use dponline_core::learners::{PrivateScrible, ScribleParams};
use dponline_core::noise::release::{SamplerKind, scalar_laplace};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{RunOutput, exclusive, keying, run_learner, shared};
use crate::domains::PyDomain;
use crate::errors::OrRaise;
use crate::losses::loss_family;

fn params_dict<'py>(py: Python<'py>, p: &ScribleParams) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("horizon", p.horizon)?;
    d.set_item("dim", p.dim)?;
    d.set_item("estimator_dim", p.estimator_dim)?;
    d.set_item("loss_bound", p.loss_bound)?;
    d.set_item("noise_scale", p.noise_scale)?;
    d.set_item("noisy_range", p.noisy_range)?;
    d.set_item("nu", p.nu)?;
    d.set_item("eta", p.eta)?;
    d.set_item("regret_bound", p.regret_bound())?;
    Ok(d)
}

/// Native PrivateSCRiBLe state machine (documented wrapper: ``dponline.PrivateSCRiBLe``).
#[pyclass(module = "dponline._core", name = "PrivateSCRiBLe")]
pub struct PyPrivateScrible {
    inner: PrivateScrible,
}

#[pymethods]
impl PyPrivateScrible {
    /// ``epsilon=None``: no noise; otherwise Laplace noise on the feedback (sensitivity ``2·loss_bound``) of the
    /// ``sampler`` (``"exact"``: discrete Laplace on a grid meeting ``epsilon`` exactly; ``"floating-point"``:
    /// ``Laplace(2·loss_bound/epsilon)``).
    #[new]
    #[pyo3(signature = (domain, horizon, loss_bound, epsilon, *, sampler = "exact", strict = false, seed = None, secure = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        domain: &Bound<'_, PyDomain>,
        horizon: u64,
        loss_bound: f64,
        epsilon: Option<f64>,
        sampler: &str,
        strict: bool,
        seed: Option<&Bound<'_, PyAny>>,
        secure: bool,
    ) -> PyResult<Self> {
        let dom = shared(domain, "domain")?.inner.clone();
        let sampler = SamplerKind::from_name(sampler).or_raise()?;
        let (scale, exact) = scalar_laplace(2.0 * loss_bound, epsilon, sampler).or_raise()?;
        let (words, secure) = keying(py, seed, secure)?;
        Ok(PyPrivateScrible {
            inner: PrivateScrible::new(
                dom, horizon, loss_bound, scale, exact, words, secure, strict,
            )
            .or_raise()?,
        })
    }

    /// The grid step ``γ`` of the exact feedback release, or ``None`` (floating-point or no noise).
    #[getter]
    fn grid(&self) -> Option<f64> {
        self.inner.exact().map(|e| e.grid.gamma())
    }

    /// The last released noisy feedback.
    #[getter]
    fn last_release(&self) -> f64 {
        self.inner.last_release()
    }

    /// The point to play, shape ``(dim,)``.
    fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut this = exclusive(slf, "PrivateSCRiBLe")?;
        Ok(PyArray1::from_slice(slf.py(), this.inner.ask().or_raise()?))
    }

    /// Report the loss of the asked point.
    fn tell(slf: &Bound<'_, Self>, loss: f64) -> PyResult<()> {
        exclusive(slf, "PrivateSCRiBLe")?
            .inner
            .tell(loss)
            .or_raise()
    }

    /// Play ``rounds`` rounds of a linear family natively; returns ``(total_loss, clipped, cumulative)``.
    #[pyo3(signature = (family, rounds, checkpoints, progress = None))]
    fn run<'py>(
        slf: &Bound<'py, Self>,
        family: &Bound<'py, PyAny>,
        rounds: u64,
        checkpoints: Vec<u64>,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<RunOutput<'py>> {
        let py = slf.py();
        let mut this = exclusive(slf, "PrivateSCRiBLe")?;
        let fam = &loss_family(family, "a linear dponline.losses family")?
            .get()
            .inner;
        run_learner(py, &mut this.inner, fam, rounds, &checkpoints, progress)
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

    /// Feedback values clipped so far.
    #[getter]
    fn clipped(&self) -> u64 {
        self.inner.clipped()
    }

    /// The FTRL point ``x_t``, shape ``(dim,)``.
    #[getter]
    fn center<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.center())
    }

    /// Serialized state (format-versioned).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_raise()?))
    }

    /// Restore from :meth:`to_bytes`.
    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyPrivateScrible {
            inner: PrivateScrible::from_bytes(state).or_raise()?,
        })
    }
}
