//! `dponline._core.TreeAggregator`: bindings of `dponline_core::aggregation::TreeAggregator`.

use dponline_core::aggregation::{TreeAggregator, cover};
use dponline_core::noise::NoiseDistribution;
use dponline_core::rng::Generator;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{detached, int_arg, len_arg, matrix_owned, real_arg, seed_words, with_vector};
use crate::errors::OrRaise;

/// Private continual prefix sums by tree-based aggregation (the binary mechanism).
///
/// Source: Ene, Nguyen & Vladu (2021) Appendix A, Algorithms 3-5; Agarwal & Singh (2017) Algorithm 2
/// (padding). See ``dponline.TreeAggregator`` for the documented public class.
#[pyclass(subclass, module = "dponline._core", name = "TreeAggregator")]
pub struct PyTreeAggregator {
    inner: TreeAggregator,
}

#[pymethods]
impl PyTreeAggregator {
    #[new]
    #[pyo3(signature = (dim, horizon, *, scale, noise = "laplace", padded = true, seed = None, secure = false))]
    fn new(
        py: Python<'_>,
        dim: &Bound<'_, PyAny>,
        horizon: &Bound<'_, PyAny>,
        scale: &Bound<'_, PyAny>,
        noise: &str,
        padded: bool,
        seed: Option<&Bound<'_, PyAny>>,
        secure: bool,
    ) -> PyResult<Self> {
        let dim = len_arg(dim, "dim", 1)?;
        let horizon = int_arg(horizon, "horizon", 1, None)?;
        let scale = real_arg(scale, "scale", Some(0.0), false)?;
        let dist = NoiseDistribution::from_name(noise, scale).or_raise()?;
        let rng = Generator::for_stream(&seed_words(py, seed, secure)?, 0, secure).or_raise()?;
        let inner = TreeAggregator::new(dim, horizon, dist, padded, rng).or_raise()?;
        Ok(PyTreeAggregator { inner })
    }

    /// Add one row ``x`` (shape ``(dim,)``) and return the noisy prefix sum after it, shape ``(dim,)``.
    fn push<'py>(
        &mut self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let dim = self.inner.dim();
        let out = PyArray1::<f64>::zeros(py, dim, false);
        // SAFETY: `out` was just created here and no other reference to it exists yet.
        let out_slice = unsafe { out.as_slice_mut() }
            .map_err(|e| crate::errors::invalid_input(e.to_string()))?;
        with_vector(x, "x", dim, |x| self.inner.push(x, out_slice).or_raise())?;
        Ok(out)
    }

    /// Push every row of ``X`` (shape ``(m, dim)``) in one native call; returns the ``m`` releases.
    #[pyo3(name = "push_many")]
    fn push_many<'py>(
        &mut self,
        py: Python<'py>,
        xs: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let dim = self.inner.dim();
        let (rows, data) = matrix_owned(xs, "X", dim)?;
        let inner = &mut self.inner;
        let out = detached(py, move || {
            let mut out = dponline_core::alloc::zeros("push_many output", data.len())?;
            inner.push_many(&data, &mut out)?;
            Ok(out)
        })?;
        let arr = Array2::from_shape_vec((rows, dim), out)
            .map_err(|e| crate::errors::invalid_input(e.to_string()))?;
        Ok(arr.into_pyarray(py))
    }

    /// The release before any data, ``L̃_0`` (Algorithm 3), shape ``(dim,)``.
    fn initial<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.initial())
    }

    /// Exact per-coordinate noise variance of the release after push ``t`` (``0 <= t <= horizon``).
    fn noise_variance(&self, t: u64) -> PyResult<f64> {
        self.inner.noise_variance(t).or_raise()
    }

    /// Number of noise draws in the release after push ``t``.
    fn draws_at(&self, t: u64) -> u32 {
        self.inner.draws_at(t)
    }

    /// The tree nodes summed in the release after push ``t`` (the dyadic decomposition of ``[1, t]``, the set
    /// ``S_t`` of Algorithm 5), as ``(level, end)`` pairs: node ``(level, end)`` covers rounds
    /// ``end − 2**level + 1 .. end``.
    #[staticmethod]
    fn cover(t: u64) -> Vec<(u32, u64)> {
        cover(t).collect()
    }

    /// Number of pushes so far.
    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }

    /// Vector dimension.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// Number of pushes the tree was built for.
    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.horizon()
    }

    /// ``"laplace"`` or ``"gaussian"``.
    #[getter]
    fn noise(&self) -> &'static str {
        self.inner.noise().name()
    }

    /// Laplace scale ``b`` or Gaussian ``sigma`` of every node.
    #[getter]
    fn scale(&self) -> f64 {
        self.inner.noise().scale()
    }

    /// Whether every release carries exactly ``ceil(log2 horizon)`` draws.
    #[getter]
    fn padded(&self) -> bool {
        self.inner.padded()
    }

    /// Whether noise comes from the OS-keyed ChaCha20 generator.
    #[getter]
    fn secure(&self) -> bool {
        self.inner.is_secure()
    }

    /// Bytes held by the tree's buffers (constant: ``O(dim · log horizon)``).
    #[getter]
    fn state_nbytes(&self) -> usize {
        self.inner.state_nbytes()
    }

    fn __getstate__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_raise()?))
    }

    fn __setstate__(&mut self, state: &[u8]) -> PyResult<()> {
        self.inner = TreeAggregator::from_bytes(state).or_raise()?;
        Ok(())
    }

    fn __getnewargs_ex__(&self) -> ((usize, u64), std::collections::HashMap<&'static str, f64>) {
        ((1, 1), [("scale", 0.0)].into_iter().collect())
    }

    fn __repr__(&self) -> String {
        format!(
            "TreeAggregator(dim={}, horizon={}, noise={:?}, scale={}, padded={}, t={})",
            self.inner.dim(),
            self.inner.horizon(),
            self.inner.noise().name(),
            self.inner.noise().scale(),
            if self.inner.padded() { "True" } else { "False" },
            self.inner.t()
        )
    }
}
