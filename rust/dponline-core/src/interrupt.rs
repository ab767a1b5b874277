//! Cooperative interruption of long native loops whose length the caller chooses (a horizon up to `2⁶²`).
//!
//! Such a loop takes a [`Poll`] and asks it every [`POLL_ROUNDS`] iterations; when it answers `true` the
//! loop stops with [`CoreError::Interrupted`], leaving every object it was called on unchanged. The Python
//! bindings poll for signals (Ctrl-C), Rust callers pass [`NEVER`].

use crate::error::{CoreError, Result};

/// Asked between blocks of a long loop: `true` stops it.
pub type Poll<'a> = &'a (dyn Fn() -> bool + Sync);

/// A poll that never stops anything.
pub const NEVER: Poll<'static> = &|| false;

/// Iterations between two polls.
pub const POLL_ROUNDS: u64 = 1 << 16;

/// Ask `poll` now (a loop that works in blocks of [`POLL_ROUNDS`] rounds asks before each block).
///
/// Errors: [`CoreError::Interrupted`] if the poll says stop.
#[inline]
pub fn ask(poll: Poll<'_>) -> Result<()> {
    if poll() {
        Err(CoreError::Interrupted)
    } else {
        Ok(())
    }
}

/// Ask `poll` at iteration `i` if `i` is a multiple of [`POLL_ROUNDS`] (so every block, from `i = 0`).
///
/// Errors: [`CoreError::Interrupted`] if the poll says stop.
#[inline]
pub fn check(poll: Poll<'_>, i: u64) -> Result<()> {
    if i % POLL_ROUNDS == 0 {
        ask(poll)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_once_per_block() {
        let calls = std::sync::atomic::AtomicU64::new(0);
        let count = || {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            false
        };
        for i in 0..3 * POLL_ROUNDS {
            check(&count, i).unwrap();
        }
        assert_eq!(calls.into_inner(), 3);
        assert_eq!(check(&|| true, POLL_ROUNDS), Err(CoreError::Interrupted));
        assert_eq!(check(&|| true, 1), Ok(()));
        assert_eq!(check(NEVER, 0), Ok(()));
        assert_eq!(ask(&|| true), Err(CoreError::Interrupted));
    }
}
