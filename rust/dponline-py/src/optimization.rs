//! Stand-alone primitives: Frank-Wolfe projection and sphere sampling.

use dponline_core::domains::LinearMinimizationOracle;
use dponline_core::frank_wolfe::project;
use dponline_core::sphere;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::prelude::*;

use crate::convert::{detached, generator, int_arg, len_arg, shared, slice, vector};
use crate::domains::PyDomain;
use crate::errors::{OrRaise, invalid_input};

/// Frank-Wolfe iterations per native block between two checks for Ctrl-C.
const FW_BLOCK: u64 = 1 << 14;

/// `(x, gap, vertices, weights)` returned to Python.
type FrankWolfeOutput<'py> = (
    Bound<'py, PyArray1<f64>>,
    f64,
    Bound<'py, PyArray2<f64>>,
    Bound<'py, PyArray1<f64>>,
);

/// Frank-Wolfe for ``min_x ½‖x‖² − ⟨v, x⟩`` over ``domain`` (the Euclidean projection of ``v``).
///
/// Returns ``(x, gap, vertices, weights)``: the iterate, the last Frank-Wolfe gap, and the active set
/// (``vertices`` of shape ``(k, dim)`` with convex ``weights`` of shape ``(k,)``, ``x = weightsᵀ vertices``).
#[pyfunction]
pub fn frank_wolfe<'py>(
    py: Python<'py>,
    domain: &Bound<'py, PyDomain>,
    v: &Bound<'py, PyAny>,
    iterations: &Bound<'py, PyAny>,
) -> PyResult<FrankWolfeOutput<'py>> {
    let iterations = int_arg(iterations, "iterations", 0, None)?;
    let mut dom = shared(domain, "domain")?.inner.clone();
    let n = dom.dim();
    let v = slice(&vector(v, "v", n)?).to_vec();
    let mut fw = detached(py, || project(&mut dom, &v, 0))?;
    // Iterations run natively in blocks with the GIL released, checking for Ctrl-C between blocks; a step
    // with gap <= 0 leaves the iterate unchanged (and so would every later one), so the loop stops there.
    let mut left = iterations;
    while left > 0 {
        let n = left.min(FW_BLOCK);
        let converged = py.detach(|| (0..n).any(|_| fw.step(&mut dom) <= 0.0));
        left = if converged { 0 } else { left - n };
        py.check_signals()?;
    }
    let active = fw
        .active_set()
        .ok_or_else(|| invalid_input("active set missing"))?;
    let k = active.len();
    let flat: Vec<f64> = (0..k).flat_map(|i| active.vertex(i).to_vec()).collect();
    let vertices =
        Array2::from_shape_vec((k, n), flat).map_err(|e| invalid_input(e.to_string()))?;
    Ok((
        PyArray1::from_slice(py, fw.x()),
        fw.gap(),
        vertices.into_pyarray(py),
        PyArray1::from_slice(py, active.weights()),
    ))
}

/// ``size`` uniform unit vectors of ``R^dim`` (``ball=True``: uniform points of the unit ball), shape
/// ``(size, dim)``; with ``domain``, directions within the domain's tangent space.
#[pyfunction]
#[pyo3(signature = (dim, size, *, ball = false, domain = None, seed = None))]
pub fn sample_sphere<'py>(
    py: Python<'py>,
    dim: &Bound<'py, PyAny>,
    size: &Bound<'py, PyAny>,
    #[pyo3(from_py_with = crate::convert::flag)] ball: bool,
    domain: Option<&Bound<'py, PyDomain>>,
    seed: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (dim, size) = (len_arg(dim, "dim", 1)?, len_arg(size, "size", 0)?);
    let total = dponline_core::alloc::checked_len("sphere samples", dim, size).or_raise()?;
    // Even with size = 0 one row must be representable: numpy's row stride of 8·dim bytes must not overflow.
    dponline_core::alloc::reserve::<f64>(format!("one sample of dimension {dim}"), dim)
        .or_raise()?;
    let mut dom = match domain {
        Some(d) => Some(shared(d, "domain")?.inner.clone()),
        None => None,
    };
    if let Some(d) = &dom {
        if d.dim() != dim || ball {
            return Err(invalid_input(
                "domain must have dimension dim, and ball=True is not available with a domain",
            ));
        }
        if d.affine_dim() == 0 {
            return Err(invalid_input(format!(
                "domain {} is a single point: its tangent space is {{0}} and has no unit vectors",
                d.kind()
            )));
        }
    }
    let mut rng = generator(py, seed, false, 0)?;
    let out = detached(py, move || {
        let mut out =
            dponline_core::alloc::zeros(format!("{size} samples of dimension {dim}"), total)?;
        for row in out.chunks_exact_mut(dim) {
            match (&mut dom, ball) {
                (Some(d), _) => {
                    sphere::unit_sphere_in(&mut rng, row, |u| d.project_tangent(u));
                }
                (None, true) => sphere::unit_ball(&mut rng, row),
                (None, false) => sphere::unit_sphere(&mut rng, row),
            }
        }
        Ok(out)
    })?;
    Ok(Array2::from_shape_vec((size, dim), out)
        .map_err(|e| invalid_input(e.to_string()))?
        .into_pyarray(py))
}
