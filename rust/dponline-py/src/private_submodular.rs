//! `dponline._core.PrivateSubmodular`: bindings of `dponline_core::learners::private_submodular`.

use dponline_core::learners::Learner;
use dponline_core::learners::private_submodular::{
    Exploration, Feedback, HedgeCalibration, PrivateSubmodular, SubmodularParams,
};
use dponline_core::noise::release::SamplerKind;
use dponline_core::submodular::SubmodularKind;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::{keying, name_of, named, with_vector};
use crate::errors::OrRaise;
use crate::learner::py_learner;
use crate::submodular::{gains_matrix, ids, with_submodular_family};

/// The feedback models by name.
const FEEDBACK: [(&str, Feedback); 2] = [("full", Feedback::Full), ("bandit", Feedback::Bandit)];

/// The exploration schedules by name.
const EXPLORATION: [(&str, Exploration); 2] = [
    ("online", Exploration::Online),
    ("presampled", Exploration::Presampled),
];

/// The rate calibrations by name.
const CALIBRATION: [(&str, HedgeCalibration); 2] = [
    ("paper", HedgeCalibration::Paper),
    ("zcdp", HedgeCalibration::Zcdp),
];

fn params_dict<'py>(py: Python<'py>, p: &SubmodularParams) -> PyResult<Bound<'py, PyDict>> {
    let feedback = name_of(&FEEDBACK, &p.feedback);
    let exploration = name_of(&EXPLORATION, &p.exploration);
    let calibration = name_of(&CALIBRATION, &p.calibration);
    py_dict!(py, p; ground_set_size = p.n, k, horizon, epsilon, delta, feedback = feedback,
        exploration = exploration, calibration = calibration, rho, gamma, gamma_paper, presampled_explores, eta, sampler = p.sampler.name(),
        eta_exact = p.exact_rate.map(|r| r.eta()), payoff_grid = p.exact_rate.map(|r| r.grid()))
}

py_learner! {
    /// Native PrivateSubmodular state machine (documented wrapper: ``dponline.PrivateSubmodular``).
    class PyPrivateSubmodular(PrivateSubmodular) as "PrivateSubmodular";
    family: with_submodular_family;
    params: params_dict;
    getters {
        /// The experts' current picks ``a^1..a^k`` (with repetitions), int64.
        picks(&learner, py) { ids(py, learner.picks()) }
        /// Whether an asked set awaits ``tell``.
        pending(&learner, _py) { learner.pending() }
        /// Explore rounds so far (bandit).
        explores(&learner, _py) { learner.explores() }
    }
    methods {
        #[new]
        #[pyo3(signature = (ground_set_size, k, horizon, *, epsilon, delta, feedback = "full", exploration = "online", calibration = "zcdp", strict = false, sampler = "exact", seed = None, secure = false))]
        fn new(
            py: Python<'_>,
            ground_set_size: usize,
            k: usize,
            horizon: u64,
            epsilon: Option<f64>,
            delta: f64,
            feedback: &str,
            exploration: &str,
            calibration: &str,
            strict: bool,
            sampler: &str,
            seed: Option<&Bound<'_, PyAny>>,
            secure: bool,
        ) -> PyResult<Self> {
            let feedback = named("feedback", feedback, &FEEDBACK)?;
            let exploration = named("exploration", exploration, &EXPLORATION)?;
            let calibration = named("calibration", calibration, &CALIBRATION)?;
            let sampler = SamplerKind::from_name(sampler).or_raise()?;
            let (words, secure) = keying(py, seed, secure)?;
            // Validate everything (with a placeholder M) before drawing M.
            let presampled = feedback == Feedback::Bandit && exploration == Exploration::Presampled;
            let params = |explores| {
                SubmodularParams::new(
                    ground_set_size, k, horizon, epsilon, delta, feedback, exploration, explores, sampler, calibration,
                )
                .or_raise()
            };
            let probe = params(presampled.then_some(0))?;
            let m = if presampled {
                Some(PrivateSubmodular::draw_explores(horizon, probe.gamma, words, secure).or_raise()?)
            } else {
                None
            };
            let params = params(m)?;
            Ok(PyPrivateSubmodular {
                inner: PrivateSubmodular::new(params, words, secure, strict).or_raise()?,
            })
        }

        /// The set to play: distinct item ids, int64, at most ``k``.
        fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<i64>>> {
            let mut this = Self::writable(slf)?;
            let played = this.inner.ask().or_raise()?;
            Ok(ids(slf.py(), played))
        }

        /// Full information: the row of ``f_t`` (shape ``(n,)``) of family ``kind``; returns ``f_t(S_t)``.
        #[pyo3(signature = (row, kind = "probabilistic_coverage"))]
        fn tell_row(slf: &Bound<'_, Self>, row: &Bound<'_, PyAny>, kind: &str) -> PyResult<f64> {
            let kind = SubmodularKind::from_name(kind).or_raise()?;
            let mut this = Self::writable(slf)?;
            let n = this.inner.params().n;
            with_vector(row, "row", n, |r| this.inner.tell_row(kind, r).or_raise())
        }

        /// Full information: the ``(k, n)`` marginal gains of the experts' prefixes and ``f_t(S_t)``.
        fn tell_gains(slf: &Bound<'_, Self>, gains: &Bound<'_, PyAny>, payoff: f64) -> PyResult<f64> {
            let mut this = Self::writable(slf)?;
            let (k, n) = (this.inner.params().k, this.inner.params().n);
            let data = gains_matrix(gains, k, n)?;
            this.inner.tell_gains(&data, payoff).or_raise()
        }

        /// Bandit: the payoff ``f_t(S_t)`` of the asked set.
        fn tell_payoff(slf: &Bound<'_, Self>, payoff: f64) -> PyResult<()> {
            Self::writable(slf)?.inner.tell_payoff(payoff).or_raise()
        }

        /// Sampling distribution of expert ``i`` (0-based), shape ``(n,)``.
        fn expert_probabilities<'py>(
            slf: &Bound<'py, Self>,
            i: usize,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let this = Self::readable(slf)?;
            let n = this.inner.params().n;
            let mut out = dponline_core::alloc::zeros("probabilities", n).or_raise()?;
            this.inner.experts().probabilities(i, &mut out).or_raise()?;
            Ok(out.into_pyarray(slf.py()))
        }
    }
}
