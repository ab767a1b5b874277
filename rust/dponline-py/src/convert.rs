//! Conversions at the Python boundary: seeds, numpy arrays, and the one helper that releases the GIL.

use dponline_core::rng::Seed;
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;

use crate::errors::{OrRaise, invalid_input};

/// Seed material from a Python `seed` (None / int / SeedSequence / Generator), via `dponline._seed`.
pub fn seed_words(py: Python<'_>, seed: Option<&Bound<'_, PyAny>>, secure: bool) -> PyResult<Seed> {
    let words: Vec<u64> = py
        .import("dponline._seed")?
        .getattr("seed_words")?
        .call1((seed, secure))?
        .extract()?;
    words
        .try_into()
        .map_err(|_| invalid_input("seed material must be four 64-bit words"))
}

fn as_float_array<'py>(obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let np = obj.py().import("numpy")?;
    let kwargs = pyo3::types::PyDict::new(obj.py());
    kwargs.set_item("dtype", np.getattr("float64")?)?;
    np.getattr("ascontiguousarray")?
        .call((obj,), Some(&kwargs))
        .map_err(|e| {
            invalid_input(format!(
                "{name} must be convertible to a float64 array, got {} ({e})",
                type_name(obj)
            ))
        })
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// A float64 vector of length `len` (any array-like accepted; no copy for a contiguous float64 array).
///
/// Raises `InvalidInputError` naming `name` for a wrong shape or a non-numeric input.
pub fn vector<'py>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    len: usize,
) -> PyResult<PyReadonlyArray1<'py, f64>> {
    let arr: PyReadonlyArray1<'py, f64> = match obj.extract::<PyReadonlyArray1<'py, f64>>() {
        Ok(a) if a.is_c_contiguous() => a,
        _ => {
            let converted = as_float_array(obj, name)?;
            converted
                .extract::<PyReadonlyArray1<'py, f64>>()
                .map_err(|_| {
                    let shape: Vec<usize> = converted
                        .getattr("shape")
                        .and_then(|s| s.extract())
                        .unwrap_or_default();
                    invalid_input(format!(
                        "{name} must be a 1-D array of length {len}, got shape {shape:?}"
                    ))
                })?
        }
    };
    if arr.len() != len {
        return Err(invalid_input(format!(
            "{name} must be a 1-D array of length {len}, got shape ({},)",
            arr.len()
        )));
    }
    Ok(arr)
}

/// Call `f` on `obj` as a float64 slice of length `len`. A C-contiguous float64 ndarray is read in place
/// (the fast path of per-round calls); anything else goes through [`vector`].
///
/// Raises `InvalidInputError` naming `name` for a wrong shape or a non-numeric input.
pub fn with_vector<'py, T>(
    obj: &Bound<'py, PyAny>,
    name: &str,
    len: usize,
    f: impl FnOnce(&[f64]) -> PyResult<T>,
) -> PyResult<T> {
    if let Ok(arr) = obj.cast::<numpy::PyArray1<f64>>() {
        if arr.is_c_contiguous() && arr.len() == len {
            // SAFETY: the GIL is held for the whole call (nothing here releases it and the module runs with
            // the GIL), so no Python code can mutate or resize the array while the slice is alive.
            let data = unsafe { numpy::PyArrayMethods::as_slice(arr) }
                .map_err(|e| invalid_input(format!("{name}: {e}")))?;
            return f(data);
        }
    }
    let arr = vector(obj, name, len)?;
    f(slice(&arr))
}

/// A C-contiguous float64 matrix with `cols` columns, copied into an owned row-major `Vec` (so it can be
/// read without the GIL). Returns `(rows, data)`.
pub fn matrix_owned(
    obj: &Bound<'_, PyAny>,
    name: &str,
    cols: usize,
) -> PyResult<(usize, Vec<f64>)> {
    let shape_error = |shape: Vec<usize>| {
        invalid_input(format!(
            "{name} must be a 2-D array of shape (m, {cols}), got shape {shape:?}"
        ))
    };
    let converted;
    let arr: PyReadonlyArray2<'_, f64> = match obj.extract::<PyReadonlyArray2<'_, f64>>() {
        Ok(a) if a.is_c_contiguous() => a,
        _ => {
            converted = as_float_array(obj, name)?;
            converted
                .extract::<PyReadonlyArray2<'_, f64>>()
                .map_err(|_| {
                    shape_error(
                        converted
                            .getattr("shape")
                            .and_then(|s| s.extract())
                            .unwrap_or_default(),
                    )
                })?
        }
    };
    let shape = arr.shape().to_vec();
    if shape[1] != cols {
        return Err(shape_error(shape));
    }
    let data = arr
        .as_slice()
        .map_err(|e| invalid_input(format!("{name}: {e}")))?
        .to_vec();
    Ok((shape[0], data))
}

/// Run `f` with the GIL released and map its core error. The only place bindings release the GIL.
pub fn detached<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce() -> dponline_core::Result<T>,
{
    py.detach(f).or_raise()
}

/// Read-only slice of a contiguous array (contiguity is guaranteed by the constructors above).
pub fn slice<'a>(arr: &'a PyReadonlyArray1<'_, f64>) -> &'a [f64] {
    // Arrays from `vector`/`any_vector` are C-contiguous, so `as_slice` cannot fail.
    arr.as_slice().unwrap_or(&[])
}
