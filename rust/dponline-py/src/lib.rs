//! Thin PyO3 bindings of `dponline-core` (the extension module `dponline._core`).
//!
//! Each binding converts its arguments, calls the core, and converts back; no algorithm lives here.
//! Core errors become Python exceptions in one place (`errors`), and the GIL is released in one place
//! (`convert::detached`).

mod aggregation;
mod convert;
mod errors;
mod noise;

use pyo3::prelude::*;

/// The native core of dponline. Use the documented wrappers in the ``dponline`` package instead.
#[pymodule]
mod _core {
    #[pymodule_export]
    use super::aggregation::PyTreeAggregator;
    #[pymodule_export]
    use super::noise::sample_noise;

    use super::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
