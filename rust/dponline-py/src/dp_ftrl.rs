//! `dponline._core.DPFTRL`: bindings of `dponline_core::learners::DpFtrl`.

use dponline_core::learners::{DpFtrl, DpFtrlParams, Learner, LossNorm, Regularizer};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::with_vector;
use crate::domains::PyDomain;
use crate::errors::OrRaise;
use crate::learner::MechanismArgs;
use crate::losses::with_loss_family;
use crate::params::py_mechanism_learner;

fn params_dict<'py>(py: Python<'py>, p: &DpFtrlParams) -> PyResult<Bound<'py, PyDict>> {
    let eta_rule = if p.regularizer == Regularizer::None {
        "none (FTPL plays the LMO of the release)"
    } else if p.eta_default && !p.release_noise.nested && p.release_noise.deviation_sum > 0.0 {
        "sqrt(D_R / (T G^2 + G S)), noise-aware (Lipschitz bound)"
    } else if p.eta_default && p.release_noise.variance > 0.0 {
        match p.regularizer {
            Regularizer::NegativeEntropy => {
                "sqrt(D_R / (T G^2 + c v + G O)), noise-aware (perturbation bound)"
            }
            _ => "sqrt(D_R / (T G^2 + n v + G O)), noise-aware (perturbation bound)",
        }
    } else if p.eta_default {
        "sqrt(D_R / (T G^2))"
    } else {
        "learning_rate"
    };
    // `perturbation_bound` is present only where it holds (nested releases, and η within the cumulant bound's
    // range).
    let perturbation = Some(p.perturbation_bound()).filter(|b| b.is_finite());
    // `lipschitz_bound` (any mechanism) and its sum `S`, present once computed (a regulariser).
    let lipschitz = Some(p.lipschitz_bound()).filter(|b| b.is_finite());
    let deviation = Some(p.release_noise.deviation_sum).filter(|s| s.is_finite());
    py_dict!(py, p; horizon, dim, regularizer = p.regularizer.name(), loss_bound, norm = p.norm.name(),
        regularizer_range, dual_bound, dual_clip, eta, eta_rule = eta_rule, lmo_calls, ftrl_bound = p.ftrl_bound(),
        perturbation_bound ?= perturbation, lipschitz_bound ?= lipschitz, deviation_sum ?= deviation,
        offset_sum = p.release_noise.offset_sum, release_variance = p.release_noise.variance, loss_shift)
}

py_mechanism_learner! {
    /// Native DP-FTRL state machine (documented wrapper: ``dponline.DPFTRL``).
    class PyDpFtrl(DpFtrl) as "DPFTRL";
    family: with_loss_family, "a dponline.losses family (Linear or PortfolioLogLoss)";
    params: params_dict;
    ask: action;
    getters {
        /// Noise draws per coordinate in every release.
        release_draws(&learner, _py) { learner.release_draws() }
        /// The argmin method.
        method(&learner, _py) { learner.method() }
        /// The latest release of the tree, shape ``(dim,)``.
        noisy_cumulative_loss(&learner, py) { PyArray1::from_slice(py, learner.noisy_cumulative_loss()) }
        /// The action of the next round, shape ``(dim,)``.
        action(&learner, py) { PyArray1::from_slice(py, learner.action()) }
        /// The unit variance every release is topped up to (``None`` without ``top_up``).
        top_up_variance(&learner, _py) { learner.top_up_variance() }
    }
    methods {
        #[new]
        #[pyo3(signature = (domain, horizon, loss_bound, *, norm, regularizer, noise, scale, learning_rate = None, dual_bound = None, lmo_calls = 4, mechanism = "tree", strict = false, seed = None, secure = false, loss_shift = 0.0, sampler = "exact", top_up = false))]
        fn new(
            py: Python<'_>,
            domain: &Bound<'_, PyDomain>,
            horizon: u64,
            loss_bound: f64,
            norm: &str,
            regularizer: &str,
            noise: &str,
            scale: f64,
            learning_rate: Option<f64>,
            dual_bound: Option<f64>,
            lmo_calls: u32,
            mechanism: &str,
            strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            secure: bool,
            loss_shift: f64,
            #[pyo3(from_py_with = crate::aggregation::sampler_arg)] sampler: &'static str,
            top_up: bool,
        ) -> PyResult<Self> {
            let args = MechanismArgs::new(py, domain, noise, scale, mechanism, sampler, seed, secure)?;
            let keying = (args.seed, args.secure);
            let norm = LossNorm::from_name(norm).or_raise()?;
            let regularizer = Regularizer::from_name(regularizer).or_raise()?;
            let params = DpFtrlParams::new(&args.domain, horizon, loss_bound, norm, regularizer, learning_rate, dual_bound, lmo_calls)
                .and_then(|p| p.with_loss_shift(&args.domain, loss_shift))
                .or_raise()?;
            let mut inner = args.build(params, strict, DpFtrl::new)?;
            if top_up {
                inner = inner.with_top_up(keying.0, keying.1).or_raise()?;
            }
            Ok(Self { inner })
        }

        /// Report the loss vector of this round.
        fn tell(slf: &Bound<'_, Self>, loss: &Bound<'_, PyAny>) -> PyResult<()> {
            let mut this = Self::writable(slf)?;
            let n = this.inner.params().dim;
            with_vector(loss, "loss", n, |v| this.inner.tell(v).or_raise())
        }
    }
}
