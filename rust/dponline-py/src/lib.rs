//! Thin PyO3 bindings of `dponline-core` (the extension module `dponline._core`).
//!
//! Each binding converts its arguments, calls the core, and converts back; no algorithm lives here.
//! Core errors become Python exceptions in one place (`errors`), and the GIL is released in one place
//! (`convert::detached`).

// Python signatures mirror keyword arguments one-to-one, so constructors take many parameters.
#![allow(clippy::too_many_arguments)]

mod aggregation;
mod class;
mod convert;
mod domains;
mod dp_ftrl;
mod errors;
mod learner;
mod local_dp;
mod losses;
mod mwu;
mod noise;
mod noisy_oco;
mod optimization;
mod params;
mod private_bandit;
mod private_dr_submodular;
mod private_exp3;
mod private_scrible;
mod private_submodular;
mod private_submodular_ftrl;
mod submodular;
mod validate;

use pyo3::prelude::*;

/// The native core of dponline. Use the documented wrappers in the ``dponline`` package instead.
#[pymodule]
mod _core {
    #[pymodule_export]
    use super::aggregation::{
        PyMechanism, PyTreeAggregator, mechanism_column_norms, mechanism_rounding_slack,
    };
    #[pymodule_export]
    use super::domains::{
        PyBipartiteMatchingPolytope, PyBirkhoffPolytope, PyBox, PyDomain, PyFlowPolytope,
        PyGraphicMatroid, PyKSparsePolytope, PyL1Ball, PyL2Ball, PyNuclearNormBall,
        PyPartitionMatroid, PyPathPolytope, PySimplex, PySpectraplex, PySubmodularBasePolytope,
        PyUniformMatroid,
    };
    #[pymodule_export]
    use super::dp_ftrl::PyDpFtrl;
    #[pymodule_export]
    use super::local_dp::{
        PyLocalLearner, PyLocalRandomizer, PyLocalStream, PyPotentialLearner1D, erfcx,
        potential_log_normaliser, potential_log_prediction,
    };
    #[pymodule_export]
    use super::losses::PyLossFamily;
    #[pymodule_export]
    use super::mwu::PyHedge;
    #[pymodule_export]
    use super::noise::{sample_discrete, sample_noise};
    #[pymodule_export]
    use super::noisy_oco::{PyNoisyOco, PyNoisyOcoParams};
    #[pymodule_export]
    use super::optimization::{frank_wolfe, sample_sphere};
    #[pymodule_export]
    use super::private_bandit::{PyPrivateBandit, PyPrivateBanditParams};
    #[pymodule_export]
    use super::private_dr_submodular::{
        PyDrSubmodularParams, PyPrivateDrSubmodular, coverage_extension,
    };
    #[pymodule_export]
    use super::private_exp3::{PyBernoulliArms, PyPrivateExp3, exp3_raw_step_draws};
    #[pymodule_export]
    use super::private_scrible::PyPrivateScrible;
    #[pymodule_export]
    use super::private_submodular::PyPrivateSubmodular;
    #[pymodule_export]
    use super::private_submodular_ftrl::PyPrivateSubmodularFtrl;
    #[pymodule_export]
    use super::submodular::PySubmodularFamily;

    use super::*;

    /// The instruction-set level the core's hot loops run at: ``"avx512"``, ``"avx2"`` or ``"baseline"`` (the
    /// CPU's widest, capped by the environment variable ``DPONLINE_SIMD``, read once per process). Results do
    /// not depend on it.
    #[pyfunction]
    fn simd_level() -> &'static str {
        dponline_core::simd::detected().name()
    }

    /// Four 64-bit words of seed material for the core's xoshiro256++ generator, as every native constructor
    /// derives them from its ``seed`` (see ``dponline._seed.seed_words``).
    #[pyfunction]
    #[pyo3(signature = (seed, secure = false))]
    fn seed_words(
        py: Python<'_>,
        seed: Option<&Bound<'_, PyAny>>,
        secure: bool,
    ) -> PyResult<[u64; 4]> {
        crate::convert::seed_words(py, seed, secure)
    }

    /// Wrap ``payload`` in dponline's checksummed state container (magic, format version, length, CRC-32C):
    /// what the Python wrappers pickle.
    #[pyfunction]
    fn seal_state<'py>(py: Python<'py>, payload: &[u8]) -> Bound<'py, pyo3::types::PyBytes> {
        pyo3::types::PyBytes::new(py, &dponline_core::state::seal(payload))
    }

    /// The payload of a container written by :func:`seal_state`. Raises ``StateError`` for bytes that are
    /// truncated, extended, damaged (checksum mismatch), of another format version, or not a dponline state.
    #[pyfunction]
    fn open_state<'py>(
        py: Python<'py>,
        state: &[u8],
    ) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        use crate::errors::OrRaise;
        let payload = dponline_core::state::open(state).or_raise()?;
        Ok(pyo3::types::PyBytes::new(py, payload))
    }

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        // The version of serialised states and of the seeded noise streams: a change means a seed gives other
        // noise, so cached results keyed by it are stale.
        m.add("STATE_VERSION", dponline_core::state::STATE_VERSION)?;
        // The largest noise scale the core's samplers accept: Python checks against it before building.
        m.add("MAX_NOISE_SCALE", dponline_core::noise::MAX_SCALE)
    }
}
