//! `dponline._core.NoisyOCO`: bindings of `dponline_core::learners::NoisyOco`.

use dponline_core::aggregation::MechanismSpec;
use dponline_core::learners::{NoisyOco, NoisyOcoParams};
use dponline_core::noise::NoiseDistribution;
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{RunOutput, exclusive, keying, run_learner, shared, with_vector};
use crate::domains::PyDomain;
use crate::errors::OrRaise;
use crate::losses::loss_family;

fn params_dict<'py>(py: Python<'py>, p: &NoisyOcoParams) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("horizon", p.horizon)?;
    d.set_item("dim", p.dim)?;
    d.set_item("lipschitz", p.lipschitz)?;
    d.set_item("diameter", p.diameter)?;
    d.set_item("mirror_range", p.mirror_range)?;
    d.set_item("lmo_calls", p.lmo_calls)?;
    d.set_item("eta", p.eta)?;
    d.set_item(
        "eta_rule",
        if !p.eta_default {
            "learning_rate"
        } else if p.noise_norm > 0.0 {
            "sqrt(D_omega^2 / (T L^2/2 + L T mu)), noise-aware"
        } else {
            "D / (L sqrt(T)) (Algorithm 2 line 1, kappa = L)"
        },
    )?;
    d.set_item("noise_norm", p.noise_norm)?;
    d.set_item("frank_wolfe_error", p.frank_wolfe_error())?;
    d.set_item("sensitivity_l1", p.sensitivity_l1())?;
    d.set_item("sensitivity_l2", p.sensitivity_l2())?;
    Ok(d)
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

/// Native NoisyOCO state machine (documented wrapper: ``dponline.NoisyOCO``).
#[pyclass(module = "dponline._core", name = "NoisyOCO")]
pub struct PyNoisyOco {
    inner: NoisyOco,
}

#[pymethods]
impl PyNoisyOco {
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
        let sampler = dponline_core::aggregation::SamplerKind::from_name(sampler).or_raise()?;
        let dom = shared(domain, "domain")?.inner.clone();
        let params = build_params(domain, horizon, lipschitz, learning_rate, lmo_calls)?;
        let dist = NoiseDistribution::from_name(noise, scale).or_raise()?;
        let (words, secure) = keying(py, seed, secure)?;
        Ok(PyNoisyOco {
            inner: NoisyOco::new(
                dom,
                params,
                MechanismSpec::from_name(mechanism).or_raise()?,
                dist,
                sampler,
                words,
                secure,
                strict,
            )
            .or_raise()?,
        })
    }

    /// The mechanism releasing the prefix sums (``"tree"``, ``"honaker"``, ``"blt"``).
    #[getter]
    fn mechanism(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        Ok(shared(slf, "NoisyOCO")?.inner.mechanism_kind())
    }

    /// The action to play, shape ``(dim,)``.
    fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut this = exclusive(slf, "NoisyOCO")?;
        Ok(PyArray1::from_slice(slf.py(), this.inner.ask().or_raise()?))
    }

    /// Report the gradient at the asked point.
    fn tell(slf: &Bound<'_, Self>, gradient: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut this = exclusive(slf, "NoisyOCO")?;
        let n = this.inner.params().dim;
        with_vector(gradient, "gradient", n, |v| this.inner.tell(v).or_raise())
    }

    /// Play ``rounds`` rounds natively in blocks (GIL released, Ctrl-C checked between blocks); returns
    /// ``(total_loss, clipped, cumulative_at_checkpoints)``.
    #[pyo3(signature = (family, rounds, checkpoints, progress = None))]
    fn run<'py>(
        slf: &Bound<'py, Self>,
        family: &Bound<'py, PyAny>,
        rounds: u64,
        checkpoints: Vec<u64>,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<RunOutput<'py>> {
        let py = slf.py();
        let mut this = exclusive(slf, "NoisyOCO")?;
        let fam = &loss_family(
            family,
            "a dponline.losses family (Linear or PortfolioLogLoss)",
        )?
        .get()
        .inner;
        run_learner(py, &mut this.inner, fam, rounds, &checkpoints, progress)
    }

    /// The terms of the regret bound (``mirror``, ``stability``, ``noise``, ``frank_wolfe``, ``trivial``,
    /// ``total``), as a dict.
    fn regret_bound_terms<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let b = self.inner.regret_bound().or_raise()?;
        let d = PyDict::new(py);
        d.set_item("mirror", b.mirror)?;
        d.set_item("stability", b.stability)?;
        d.set_item("noise", b.noise)?;
        d.set_item("frank_wolfe", b.frank_wolfe)?;
        d.set_item("trivial", b.trivial)?;
        d.set_item("total", b.total())?;
        Ok(d)
    }

    /// Exact per-coordinate noise variance of the release after ``t`` gradients.
    fn release_variance(&self, t: u64) -> PyResult<f64> {
        self.inner.release_variance(t).or_raise()
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

    /// Gradients clipped so far.
    #[getter]
    fn clipped(&self) -> u64 {
        self.inner.clipped()
    }

    /// The grid step of the exact path, or ``None``.
    #[getter]
    fn grid(&self) -> Option<f64> {
        self.inner.grid()
    }

    /// The latest release of the mechanism, shape ``(dim,)``.
    #[getter]
    fn noisy_cumulative_gradient<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.noisy_cumulative_gradient())
    }

    /// The action of the next round, shape ``(dim,)``.
    #[getter]
    fn action<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.action())
    }

    /// ``"laplace"`` or ``"gaussian"``.
    #[getter]
    fn noise(&self) -> &'static str {
        self.inner.noise().name()
    }

    /// Per-node noise scale (0 for the non-private learner).
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
        Ok(PyNoisyOco {
            inner: NoisyOco::from_bytes(state).or_raise()?,
        })
    }
}
