//! The one error type of the core. Bindings map each variant to one Python exception, in one place.

use thiserror::Error;

/// Everything that can go wrong in `dponline-core`.
///
/// Every variant names the offending argument so that the message alone tells a user what to fix.
/// A function that returns an error leaves the state it was called on unchanged.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum CoreError {
    /// An argument is outside its allowed range (e.g. a negative noise scale, `epsilon <= 0`).
    #[error("{name} must be {allowed}, got {value}")]
    InvalidArgument {
        /// Argument name as the user wrote it.
        name: &'static str,
        /// Human-readable allowed range, e.g. "finite and >= 0".
        allowed: &'static str,
        /// The rejected value, formatted.
        value: String,
    },
    /// A vector or matrix has the wrong length or shape.
    #[error("{name} must have {expected}, got {got}")]
    Shape {
        /// Argument name.
        name: &'static str,
        /// Expected shape, e.g. "length 3".
        expected: String,
        /// Actual shape.
        got: String,
    },
    /// A NaN or an infinity where a finite number is required.
    #[error("{name} must be finite, got {value} at index {index}")]
    NonFinite {
        /// Argument name.
        name: &'static str,
        /// Flat index of the first non-finite entry.
        index: usize,
        /// The offending value (NaN, inf or -inf).
        value: f64,
    },
    /// A stream was pushed past the horizon it was built for.
    #[error(
        "horizon exhausted: this {what} was built for horizon={horizon} and has already taken {horizon} steps"
    )]
    HorizonExhausted {
        /// The object, e.g. "TreeAggregator".
        what: &'static str,
        /// The horizon it was built for.
        horizon: u64,
    },
    /// A method was called out of protocol order (e.g. `tell` before `ask`).
    #[error("{0}")]
    Protocol(String),
    /// A graph given to a domain is malformed (edge out of range, cycle in a DAG, no s-t path, ...).
    #[error("invalid graph: {0}")]
    InvalidGraph(String),
    /// A serialized state could not be restored (corrupt bytes or an unknown format version).
    #[error("cannot restore state: {0}")]
    State(String),
    /// A long native loop was stopped by its caller's [`crate::interrupt::Poll`] (Ctrl-C in Python); nothing
    /// was changed.
    #[error("interrupted")]
    Interrupted,
    /// The operating system's entropy source failed.
    #[error("operating-system entropy source failed: {0}")]
    Entropy(String),
    /// A buffer whose size comes from the caller could not be allocated (or its size overflows `usize`).
    #[error("cannot allocate {what}: {bytes} bytes requested")]
    Allocation {
        /// What the buffer is for, named as the user knows it (e.g. "noise of 10^11 draws").
        what: String,
        /// Bytes requested (saturating at `u128::MAX` for sizes that overflow).
        bytes: u128,
    },
    /// An iterative routine reached its iteration cap without meeting its stopping rule.
    #[error("{routine} did not converge within {limit} iterations{detail}")]
    IterationLimit {
        /// The routine, e.g. "Frank-Wolfe projection".
        routine: &'static str,
        /// The cap that was reached.
        limit: u64,
        /// Optional context (starts with ": " when present).
        detail: String,
    },
    /// An object is being used by two threads at once.
    #[error("{0}")]
    Busy(String),
}

/// Result alias used throughout the core.
pub type Result<T> = core::result::Result<T, CoreError>;

impl CoreError {
    /// Shorthand for [`CoreError::InvalidArgument`].
    pub fn invalid(
        name: &'static str,
        allowed: &'static str,
        value: impl core::fmt::Display,
    ) -> Self {
        CoreError::InvalidArgument {
            name,
            allowed,
            value: value.to_string(),
        }
    }

    /// A value beyond a declared bound under `strict`: the message names the bound (in `allowed`) and the
    /// round (1-based), never the value — it is private data, and an error message is published like any other
    /// output.
    pub fn strict_bound(name: &'static str, allowed: &'static str, round: u64) -> Self {
        CoreError::InvalidArgument {
            name,
            allowed,
            value: format!("a value outside it in round {round} (not shown: it is private data)"),
        }
    }
}

/// Check that every entry of `values` is finite.
///
/// Errors: [`CoreError::NonFinite`] naming `name` and the first bad index.
pub fn check_finite(name: &'static str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(index) => Err(CoreError::NonFinite {
            name,
            index,
            value: values[index],
        }),
    }
}

/// Check that a scalar is finite and `>= 0`.
///
/// Errors: [`CoreError::InvalidArgument`].
pub fn check_nonnegative(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(CoreError::invalid(name, "finite and >= 0", value))
    }
}

/// Check that a dimension `dim` is at least 1.
///
/// Errors: [`CoreError::InvalidArgument`] naming `dim`.
pub fn check_dim(dim: usize) -> Result<()> {
    if dim == 0 {
        return Err(CoreError::invalid("dim", ">= 1", dim));
    }
    Ok(())
}

/// Check that a horizon (a number of rounds or pushes) is at least 1.
///
/// Errors: [`CoreError::InvalidArgument`] naming `horizon`.
pub fn check_horizon(horizon: u64) -> Result<()> {
    if horizon == 0 {
        return Err(CoreError::invalid("horizon", ">= 1", horizon));
    }
    Ok(())
}

/// Check that a scalar is finite and `> 0`.
///
/// Errors: [`CoreError::InvalidArgument`].
pub fn check_positive(name: &'static str, value: f64) -> Result<()> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(CoreError::invalid(name, "finite and > 0", value))
    }
}

/// Check that a slice has length `expected`.
///
/// Errors: [`CoreError::Shape`].
pub fn check_len(name: &'static str, values: &[f64], expected: usize) -> Result<()> {
    if values.len() == expected {
        Ok(())
    } else {
        Err(CoreError::Shape {
            name,
            expected: format!("length {expected}"),
            got: format!("length {}", values.len()),
        })
    }
}
