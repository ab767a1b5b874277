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

// The `dponline.errors` classes, each imported once per interpreter (then cached by PyO3).
pyo3::import_exception!(dponline.errors, DPOnlineError);
pyo3::import_exception!(dponline.errors, InvalidInputError);
pyo3::import_exception!(dponline.errors, NonFiniteError);
pyo3::import_exception!(dponline.errors, InvalidGraphError);
pyo3::import_exception!(dponline.errors, StateError);
pyo3::import_exception!(dponline.errors, HorizonExhaustedError);
pyo3::import_exception!(dponline.errors, ProtocolError);
pyo3::import_exception!(dponline.errors, ConvergenceError);

/// Convert a core error into the Python exception of the table above.
pub fn to_py(err: CoreError) -> PyErr {
    let message = err.to_string();
    match err {
        CoreError::InvalidArgument { .. } | CoreError::Shape { .. } => {
            InvalidInputError::new_err(message)
        }
        CoreError::NonFinite { .. } => NonFiniteError::new_err(message),
        CoreError::InvalidGraph(_) => InvalidGraphError::new_err(message),
        CoreError::State(_) | CoreError::Busy(_) => StateError::new_err(message),
        CoreError::HorizonExhausted { .. } => HorizonExhaustedError::new_err(message),
        CoreError::Protocol(_) => ProtocolError::new_err(message),
        CoreError::Entropy(_) | CoreError::Interrupted => DPOnlineError::new_err(message),
        CoreError::Allocation { .. } => pyo3::exceptions::PyMemoryError::new_err(message),
        CoreError::IterationLimit { .. } => ConvergenceError::new_err(message),
    }
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
        Err(DPOnlineError::new_err(format!(
            "internal error (a bug, please report it): {detail}; the object may be inconsistent, restore it \
             from a checkpoint"
        )))
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
    InvalidInputError::new_err(message.into())
}

/// Raise `dponline.errors.NonFiniteError(message)`.
pub fn non_finite(message: impl Into<String>) -> PyErr {
    NonFiniteError::new_err(message.into())
}
