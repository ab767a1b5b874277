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
//! | `Entropy` | `DPOnlineError` |
//! | `Allocation` | `MemoryError` (builtin) |
//! | `IterationLimit` | `ConvergenceError` (a `RuntimeError`) |
//! | `Busy` | `StateError` (a `ValueError`) |
//! | `Interrupted` | `DPOnlineError` (not expected: `convert::detached_polled` raises the signal's exception) |
//!
//! A panic is a bug (no input reaches one: the core returns errors, its state decoders are total and check
//! their invariants). As a last resort, [`guarded`] — used by the helpers that run core calls, `convert::detached`,
//! `convert::detached_polled` and `convert::run_blocks` — turns one into `DPOnlineError` instead of PyO3's
//! `PanicException`, a `BaseException` that `except Exception` does not catch.

use dponline_core::CoreError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Name of the `dponline.errors` class a core error maps to.
pub fn class_name(err: &CoreError) -> &'static str {
    match err {
        CoreError::InvalidArgument { .. } | CoreError::Shape { .. } => "InvalidInputError",
        CoreError::NonFinite { .. } => "NonFiniteError",
        CoreError::InvalidGraph(_) => "InvalidGraphError",
        CoreError::State(_) | CoreError::Busy(_) => "StateError",
        CoreError::HorizonExhausted { .. } => "HorizonExhaustedError",
        CoreError::Protocol(_) => "ProtocolError",
        CoreError::Entropy(_) | CoreError::Interrupted => "DPOnlineError",
        CoreError::Allocation { .. } => "MemoryError",
        CoreError::IterationLimit { .. } => "ConvergenceError",
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
    if matches!(err, CoreError::Allocation { .. }) {
        return pyo3::exceptions::PyMemoryError::new_err(err.to_string());
    }
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

/// Run `f`, turning a panic into `dponline.errors.DPOnlineError` (see the module docs).
pub fn guarded<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let detail = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(Python::attach(|py| match error_class(py, "DPOnlineError") {
            Ok(cls) => PyErr::from_type(
                cls,
                format!(
                    "internal error (a bug, please report it): {detail}; the object may be inconsistent, \
                     restore it from a checkpoint"
                ),
            ),
            Err(e) => e,
        }))
    })
}

/// Raise `dponline.errors.StateError`: the object is in use by another thread.
pub fn busy(what: &str) -> PyErr {
    to_py(CoreError::Busy(format!(
        "this {what} is in use by another thread; use one object per thread (or a lock)"
    )))
}

/// Raise `dponline.errors.InvalidInputError(message)`.
pub fn invalid_input(message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| match error_class(py, "InvalidInputError") {
        Ok(cls) => PyErr::from_type(cls, message),
        Err(e) => e,
    })
}
