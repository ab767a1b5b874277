//! `dponline._core.TreeAggregator`: bindings of `dponline_core::aggregation::TreeAggregator`.

use dponline_core::aggregation::{TreeAggregator, cover};
use dponline_core::noise::NoiseDistribution;
use dponline_core::rng::Generator;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{
    exclusive, int_arg, len_arg, matrix_owned, real_arg, seed_words, shared, with_vector,
};

/// Values pushed per native block of `push_many` between two checks for Ctrl-C.
const BLOCK_VALUES: usize = 1 << 20;
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
        #[pyo3(from_py_with = crate::convert::flag)] padded: bool,
        seed: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
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
        slf: &Bound<'py, Self>,
        x: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let py = slf.py();
        let mut this = exclusive(slf, "TreeAggregator")?;
        let dim = this.inner.dim();
        let out = PyArray1::<f64>::zeros(py, dim, false);
        // SAFETY: `out` was just created here and no other reference to it exists yet.
        let out_slice = unsafe { out.as_slice_mut() }
            .map_err(|e| crate::errors::invalid_input(e.to_string()))?;
        with_vector(x, "x", dim, |x| this.inner.push(x, out_slice).or_raise())?;
        Ok(out)
    }

    /// Push every row of ``X`` (shape ``(m, dim)``) natively; returns the ``m`` releases.
    ///
    /// Every row is validated first (an error leaves the tree unchanged); rows are then pushed in blocks with
    /// the GIL released, checking for Ctrl-C between blocks (after an interrupt the tree holds the rows of
    /// the whole blocks pushed, ``t`` says how many).
    #[pyo3(name = "push_many")]
    fn push_many<'py>(
        slf: &Bound<'py, Self>,
        xs: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let py = slf.py();
        let mut this = exclusive(slf, "TreeAggregator")?;
        let dim = this.inner.dim();
        let (rows, data) = matrix_owned(xs, "X", dim)?;
        this.inner.check_rows(&data).or_raise()?;
        let mut out = dponline_core::alloc::zeros("push_many output", data.len()).or_raise()?;
        let block = dim * (BLOCK_VALUES / dim).max(1);
        let inner = &mut this.inner;
        for (x, o) in data.chunks(block).zip(out.chunks_mut(block)) {
            py.detach(|| inner.push_many(x, o)).or_raise()?;
            py.check_signals()?;
        }
        let arr = Array2::from_shape_vec((rows, dim), out)
            .map_err(|e| crate::errors::invalid_input(e.to_string()))?;
        Ok(arr.into_pyarray(py))
    }

    /// The release before any data, ``L̃_0`` (Algorithm 3), shape ``(dim,)``.
    fn initial<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        Ok(PyArray1::from_slice(
            slf.py(),
            shared(slf, "TreeAggregator")?.inner.initial(),
        ))
    }

    /// Exact per-coordinate noise variance of the release after push ``t`` (``0 <= t <= horizon``).
    fn noise_variance(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>) -> PyResult<f64> {
        let this = shared(slf, "TreeAggregator")?;
        let t = int_arg(t, "t", 0, Some(this.inner.horizon()))?;
        this.inner.noise_variance(t).or_raise()
    }

    /// Number of noise draws in the release after push ``t``.
    fn draws_at(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>) -> PyResult<u32> {
        let this = shared(slf, "TreeAggregator")?;
        let t = int_arg(t, "t", 0, Some(this.inner.horizon()))?;
        Ok(this.inner.draws_at(t))
    }

    /// The tree nodes summed in the release after push ``t`` (the dyadic decomposition of ``[1, t]``, the set
    /// ``S_t`` of Algorithm 5), as ``(level, end)`` pairs: node ``(level, end)`` covers rounds
    /// ``end − 2**level + 1 .. end``.
    #[staticmethod]
    fn cover(t: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, u64)>> {
        Ok(cover(int_arg(t, "t", 0, None)?).collect())
    }

    /// Number of pushes so far.
    #[getter]
    fn t(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(shared(slf, "TreeAggregator")?.inner.t())
    }

    /// Vector dimension.
    #[getter]
    fn dim(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(shared(slf, "TreeAggregator")?.inner.dim())
    }

    /// Number of pushes the tree was built for.
    #[getter]
    fn horizon(slf: &Bound<'_, Self>) -> PyResult<u64> {
        Ok(shared(slf, "TreeAggregator")?.inner.horizon())
    }

    /// ``"laplace"`` or ``"gaussian"``.
    #[getter]
    fn noise(slf: &Bound<'_, Self>) -> PyResult<&'static str> {
        Ok(shared(slf, "TreeAggregator")?.inner.noise().name())
    }

    /// Laplace scale ``b`` or Gaussian ``sigma`` of every node.
    #[getter]
    fn scale(slf: &Bound<'_, Self>) -> PyResult<f64> {
        Ok(shared(slf, "TreeAggregator")?.inner.noise().scale())
    }

    /// Whether every release carries exactly ``ceil(log2 horizon)`` draws.
    #[getter]
    fn padded(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(shared(slf, "TreeAggregator")?.inner.padded())
    }

    /// Whether noise comes from the OS-keyed ChaCha20 generator.
    #[getter]
    fn secure(slf: &Bound<'_, Self>) -> PyResult<bool> {
        Ok(shared(slf, "TreeAggregator")?.inner.is_secure())
    }

    /// Bytes held by the tree's buffers (constant: ``O(dim · log horizon)``).
    #[getter]
    fn state_nbytes(slf: &Bound<'_, Self>) -> PyResult<usize> {
        Ok(shared(slf, "TreeAggregator")?.inner.state_nbytes())
    }

    fn __getstate__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = shared(slf, "TreeAggregator")?.inner.to_bytes().or_raise()?;
        Ok(PyBytes::new(slf.py(), &bytes))
    }

    fn __setstate__(slf: &Bound<'_, Self>, state: &[u8]) -> PyResult<()> {
        let restored = TreeAggregator::from_bytes(state).or_raise()?;
        exclusive(slf, "TreeAggregator")?.inner = restored;
        Ok(())
    }

    fn __getnewargs_ex__(&self) -> ((usize, u64), std::collections::HashMap<&'static str, f64>) {
        ((1, 1), [("scale", 0.0)].into_iter().collect())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let Ok(this) = slf.try_borrow() else {
            return "TreeAggregator(<in use by another thread>)".into();
        };
        format!(
            "TreeAggregator(dim={}, horizon={}, noise={:?}, scale={}, padded={}, t={})",
            this.inner.dim(),
            this.inner.horizon(),
            this.inner.noise().name(),
            this.inner.noise().scale(),
            if this.inner.padded() { "True" } else { "False" },
            this.inner.t()
        )
    }
}
