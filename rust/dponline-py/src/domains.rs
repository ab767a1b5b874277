//! `dponline._core.Domain` and its concrete subclasses: bindings of `dponline_core::domains`.

use dponline_core::domains::{Domain, LinearMinimizationOracle, Simplex};
use dponline_core::error::check_finite;
use dponline_core::rng::{from_state_bytes, to_state_bytes};
use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::convert::{slice, vector};
use crate::errors::OrRaise;

/// A convex decision set accessed through its linear minimisation oracle (LMO).
#[pyclass(subclass, module = "dponline._core", name = "Domain")]
pub struct PyDomain {
    pub(crate) inner: Domain,
}

#[pymethods]
impl PyDomain {
    /// A vertex minimising ``⟨direction, v⟩`` over the domain, shape ``(dim,)``.
    fn lmo<'py>(
        &mut self,
        py: Python<'py>,
        direction: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let d = vector(direction, "direction", self.inner.dim())?;
        check_finite("direction", slice(&d)).or_raise()?;
        let out = PyArray1::<f64>::zeros(py, self.inner.dim(), false);
        {
            let mut rw = out.readwrite();
            self.inner.lmo(
                slice(&d),
                rw.as_slice_mut()
                    .map_err(|e| crate::errors::invalid_input(e.to_string()))?,
            );
        }
        Ok(out)
    }

    /// Whether ``x`` lies in the domain up to ``atol`` per constraint.
    #[pyo3(signature = (x, atol = 1e-9))]
    fn contains(&self, x: &Bound<'_, PyAny>, atol: f64) -> PyResult<bool> {
        let x = vector(x, "x", self.inner.dim())?;
        Ok(self.inner.contains(slice(&x), atol))
    }

    /// Orthogonal projection of ``u`` onto the linear subspace parallel to the affine hull.
    fn project_tangent<'py>(
        &mut self,
        py: Python<'py>,
        u: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let u = vector(u, "u", self.inner.dim())?;
        let mut out = slice(&u).to_vec();
        self.inner.project_tangent(&mut out);
        Ok(PyArray1::from_vec(py, out))
    }

    /// Ambient dimension.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    /// Euclidean diameter (or a proven upper bound).
    #[getter]
    fn diameter(&self) -> f64 {
        self.inner.diameter()
    }

    /// Dimension of the affine hull.
    #[getter]
    fn affine_dim(&self) -> usize {
        self.inner.affine_dim()
    }

    /// Centre of the certified inscribed ball, shape ``(dim,)``.
    #[getter]
    fn interior_point<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.interior_point())
    }

    /// Certified radius ``r`` with ``B(c, r) ∩ aff(D) ⊆ D``, or ``None`` if unknown.
    #[getter]
    fn inscribed_radius(&self) -> Option<f64> {
        self.inner.inscribed_radius()
    }

    /// Kind of domain, e.g. ``"Simplex"``.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let state = to_state_bytes(&slf.borrow().inner).or_raise()?;
        Ok((
            slf.get_type().getattr("_from_state")?,
            (PyBytes::new(slf.py(), &state),),
        ))
    }

    #[classmethod]
    fn _from_state<'py>(cls: &Bound<'py, PyType>, state: &[u8]) -> PyResult<Bound<'py, PyAny>> {
        let inner: Domain = from_state_bytes(state).or_raise()?;
        let obj = cls.call_method1("__new__", (cls,))?;
        obj.cast::<PyDomain>()?.borrow_mut().inner = inner;
        Ok(obj)
    }

    fn __repr__(&self) -> String {
        format!("{}(dim={})", self.inner.kind(), self.inner.dim())
    }
}

/// The probability simplex ``{x ∈ R^n : x ≥ 0, Σ x = 1}`` (n ≥ 2). LMO: the vertex of the smallest
/// coordinate, O(n). Centre ``1/n``, certified radius ``1/sqrt(n(n−1))`` within the hyperplane.
#[pyclass(extends = PyDomain, module = "dponline._core", name = "Simplex")]
pub struct PySimplex;

#[pymethods]
impl PySimplex {
    #[new]
    #[pyo3(signature = (n = 2))]
    fn new(n: usize) -> PyResult<PyClassInitializer<Self>> {
        let base = PyDomain {
            inner: Domain::Simplex(Simplex::new(n).or_raise()?),
        };
        Ok(PyClassInitializer::from(base).add_subclass(PySimplex))
    }
}
