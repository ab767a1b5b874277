//! The one place where core errors become Python exceptions.
//!
//! | `CoreError` | Python class (in `dponline.errors`) |
//! | --- | --- |
//! | `InvalidArgument`, `Shape` | `InvalidInputError` (a `ValueError`) |
//! | `NonFinite` | `NonFiniteError` (a `ValueError`) |
//! | `InvalidGraph` | `InvalidGraphError` (a `ValueError`) |
//! | `State` | `StateError` (a `ValueError`) |
//! | `HorizonExhausted` | `HorizonExhaustedError` (a `RuntimeError`) |
//! | `Protocol` | `ProtocolError` (a `RuntimeError`) |
//! | `Entropy`, `NotConverged` | `DPOnlineError` |

use dponline_core::CoreError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Name of the `dponline.errors` class a core error maps to.
pub fn class_name(err: &CoreError) -> &'static str {
    match err {
        CoreError::InvalidArgument { .. } | CoreError::Shape { .. } => "InvalidInputError",
        CoreError::NonFinite { .. } => "NonFiniteError",
        CoreError::InvalidGraph(_) => "InvalidGraphError",
        CoreError::State(_) => "StateError",
        CoreError::HorizonExhausted { .. } => "HorizonExhaustedError",
        CoreError::Protocol(_) => "ProtocolError",
        CoreError::Entropy(_) | CoreError::NotConverged { .. } => "DPOnlineError",
    }
}

/// The `dponline.errors` class called `name`.
pub fn error_class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    Ok(py
        .import("dponline.errors")?
        .getattr(name)?
        .cast_into::<PyType>()?)
}

/// Convert a core error into the Python exception of the table above.
pub fn to_py(err: CoreError) -> PyErr {
    Python::attach(|py| match error_class(py, class_name(&err)) {
        Ok(cls) => PyErr::from_type(cls, err.to_string()),
        Err(import_failure) => import_failure,
    })
}

/// `.or_raise()` turns a core `Result` into a `PyResult`.
pub trait OrRaise<T> {
    /// Map the error with [`to_py`].
    fn or_raise(self) -> PyResult<T>;
}

impl<T> OrRaise<T> for Result<T, CoreError> {
    fn or_raise(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// Raise `dponline.errors.InvalidInputError(message)`.
pub fn invalid_input(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| match error_class(py, "InvalidInputError") {
        Ok(cls) => PyErr::from_type(cls, message),
        Err(e) => e,
    })
}
