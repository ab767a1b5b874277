//! The argument checks of the native classes, with the rules and messages of `dponline._validate` (the Python
//! wrappers' checks), evaluated here so that no native call calls back into the Python package:
//!
//! * **real numbers**: anything registered as `numbers.Real`, never `bool` / NumPy `bool_`; NaN and infinities
//!   raise `NonFiniteError`;
//! * **integers**: anything whose type has `__index__`, never `bool` / `bool_`;
//! * **flags**: `bool` or NumPy `bool_`;
//! * **arrays**: never a masked array with masked entries.
//!
//! A refused value raises `InvalidInputError` naming the argument, what is allowed and what was given
//! (the same messages as the Python side's).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyFloat, PyInt, PyType};

use crate::errors::{invalid_input, non_finite};

/// A Python type, imported once per interpreter.
fn cached_type<'py>(
    py: Python<'py>,
    cell: &'static PyOnceLock<Py<PyType>>,
    module: &str,
    name: &str,
) -> PyResult<&'py Bound<'py, PyType>> {
    cell.import(py, module, name)
}

/// Whether `value` is a `bool` or a NumPy `bool_`.
fn is_bool(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    static BOOL_: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    Ok(value.is_instance_of::<pyo3::types::PyBool>()
        || value.is_instance(cached_type(value.py(), &BOOL_, "numpy", "bool_")?)?)
}

/// `repr(value)`, cut to 80 characters (`_validate._shown`).
fn shown(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = value.repr()?.to_string();
    Ok(if text.chars().count() <= 80 {
        text
    } else {
        text.chars().take(77).chain("...".chars()).collect()
    })
}

/// `type(value).__name__`.
fn type_name(value: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(value.get_type().name()?.to_string())
}

/// `repr(x)` of a float, as Python writes it.
fn float_repr(py: Python<'_>, x: f64) -> PyResult<String> {
    Ok(PyFloat::new(py, x).repr()?.to_string())
}

/// `format(x, "g")`, as Python writes it.
fn float_g(py: Python<'_>, x: f64) -> PyResult<String> {
    Ok(PyFloat::new(py, x)
        .call_method1("__format__", ("g",))?
        .to_string())
}

/// `value` as a Python `int` in `[low, high]` (either bound optional; `_validate.integer`).
///
/// Raises `InvalidInputError` naming `name`: not an integer (`bool` and `float` are refused), or out of range.
pub fn integer<'py>(
    name: &str,
    value: &Bound<'py, PyAny>,
    low: Option<u64>,
    high: Option<u64>,
) -> PyResult<Bound<'py, PyInt>> {
    let py = value.py();
    let refuse = || -> PyResult<PyErr> {
        Ok(invalid_input(format!(
            "{name} must be an integer, got {} ({})",
            shown(value)?,
            type_name(value)?
        )))
    };
    if is_bool(value)? || !value.get_type().hasattr("__index__")? {
        return Err(refuse()?);
    }
    // SAFETY: `PyNumber_Index` takes a borrowed object and returns a new reference or NULL with an exception set.
    let index =
        unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PyNumber_Index(value.as_ptr())) };
    let n = match index {
        Ok(n) => n.cast_into::<PyInt>()?,
        Err(err) if err.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => {
            return Err(refuse()?);
        }
        Err(err) => return Err(err),
    };
    if low.map_or(Ok(false), |l| n.lt(l))? || high.map_or(Ok(false), |h| n.gt(h))? {
        let bounds = [
            low.map(|l| format!(">= {l}")),
            high.map(|h| format!("<= {h}")),
        ];
        let allowed = bounds
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" and ");
        return Err(invalid_input(format!(
            "{name} must be an integer {allowed}, got {n}"
        )));
    }
    Ok(n)
}

/// `value` as a finite float `>= low` (`> low` when `low_open`), or any finite float without `low`
/// (`_validate.real`).
///
/// Raises `InvalidInputError` naming `name` (not a real number, out of range) or `NonFiniteError` (NaN, inf).
pub fn real(
    name: &str,
    value: &Bound<'_, PyAny>,
    low: Option<f64>,
    low_open: bool,
) -> PyResult<f64> {
    static REAL: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let py = value.py();
    if is_bool(value)? || !value.is_instance(cached_type(py, &REAL, "numbers", "Real")?)? {
        return Err(invalid_input(format!(
            "{name} must be a real number, got {} ({})",
            shown(value)?,
            type_name(value)?
        )));
    }
    let x = value.extract::<f64>().map_err(|err| {
        if err.is_instance_of::<pyo3::exceptions::PyOverflowError>(py) {
            invalid_input(format!(
                "{name} must be a finite real number, got an integer too large for float64"
            ))
        } else {
            err
        }
    })?;
    let out_of_range = low.is_some_and(|low| x < low || (low_open && x == low));
    if x.is_finite() && !out_of_range {
        return Ok(x);
    }
    // The error text (one call into Python for `%g`) is built only on the error path.
    let allowed = match low {
        Some(low) => format!(
            "finite and {} {}",
            if low_open { ">" } else { ">=" },
            float_g(py, low)?
        ),
        None => "finite".to_string(),
    };
    let message = format!("{name} must be {allowed}, got {}", float_repr(py, x)?);
    Err(if x.is_finite() {
        invalid_input(message)
    } else {
        non_finite(message)
    })
}

/// `value` as a `bool` (`bool` or NumPy `bool_` only; `_validate.flag`).
///
/// Raises `InvalidInputError` naming `name` for any other type.
pub fn flag(name: &str, value: &Bound<'_, PyAny>) -> PyResult<bool> {
    if !is_bool(value)? {
        return Err(invalid_input(format!(
            "{name} must be True or False, got {}",
            shown(value)?
        )));
    }
    value.is_truthy()
}

/// Refuse a NumPy masked array with masked entries (`_validate.unmasked`): NumPy's conversions read the values
/// under the mask.
///
/// Raises `InvalidInputError` naming `name`.
pub fn unmasked(name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    static MASKED: PyOnceLock<Py<PyType>> = PyOnceLock::new();
    let py = value.py();
    if !value.is_instance(cached_type(py, &MASKED, "numpy.ma", "MaskedArray")?)? {
        return Ok(());
    }
    let mask = py
        .import("numpy.ma")?
        .getattr("getmaskarray")?
        .call1((value,))?;
    let masked: u64 = py
        .import("numpy")?
        .getattr("count_nonzero")?
        .call1((mask,))?
        .extract()?;
    if masked > 0 {
        return Err(invalid_input(format!(
            "{name} must not have masked entries, got a masked array with {masked} masked: the values under a \
             mask would be used; fill them (.filled(...)) or drop them first"
        )));
    }
    Ok(())
}
