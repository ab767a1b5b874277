//! Fallible allocation for buffers whose size comes from the caller.
//!
//! A size that overflows `usize` or that the allocator refuses becomes [`CoreError::Allocation`] (Python
//! `MemoryError` naming the bytes requested) instead of a panic or an abort. Every buffer sized by user input
//! (noise vectors, trees, loss families, checkpoints, sphere samples) goes through [`zeros`] or [`reserve`].

use crate::error::{CoreError, Result};

fn refused(what: impl Into<String>, len: usize, elem: usize) -> CoreError {
    CoreError::Allocation {
        what: what.into(),
        bytes: (len as u128).saturating_mul(elem as u128),
    }
}

/// A zero-filled `Vec<T>` of length `len`, or [`CoreError::Allocation`].
pub fn zeros<T: Clone + Default>(what: impl Into<String>, len: usize) -> Result<Vec<T>> {
    let mut v = reserve(what, len)?;
    v.resize(len, T::default());
    Ok(v)
}

/// An empty `Vec<T>` with capacity for exactly `len` elements, or [`CoreError::Allocation`].
pub fn reserve<T>(what: impl Into<String>, len: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len)
        .map_err(|_| refused(what, len, core::mem::size_of::<T>()))?;
    Ok(v)
}

/// `a * b` for sizes, or [`CoreError::Allocation`] naming `what` when the product overflows `usize`.
pub fn checked_len(what: impl Into<String>, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b).ok_or_else(|| CoreError::Allocation {
        what: what.into(),
        bytes: (a as u128).saturating_mul(b as u128).saturating_mul(8),
    })
}

/// Convert a count from the caller to `usize`, or [`CoreError::Allocation`] when it does not fit.
pub fn to_len(what: impl Into<String>, n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| CoreError::Allocation {
        what: what.into(),
        bytes: u128::from(n).saturating_mul(8),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_are_errors_not_aborts() {
        let err = zeros::<f64>("test buffer", usize::MAX / 4).unwrap_err();
        assert!(matches!(err, CoreError::Allocation { .. }), "{err}");
        assert!(checked_len("x", usize::MAX, 2).is_err());
        assert_eq!(zeros::<f64>("ok", 3).unwrap(), vec![0.0; 3]);
    }
}
