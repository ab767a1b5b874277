//! `dponline._core.PrivateSCRiBLe`: bindings of `dponline_core::learners::PrivateScrible`.

use dponline_core::learners::{PrivateScrible, ScribleParams};
use dponline_core::noise::release::{SamplerKind, scalar_laplace};
use numpy::PyArray1;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::{keying, shared};
use crate::domains::PyDomain;
use crate::errors::OrRaise;
use crate::learner::py_learner;
use crate::losses::with_loss_family;

fn params_dict<'py>(py: Python<'py>, p: &ScribleParams) -> PyResult<Bound<'py, PyDict>> {
    py_dict!(py, p; horizon, dim, estimator_dim, loss_bound, noise_scale, noisy_range, nu, eta,
        regret_bound = p.regret_bound())
}

py_learner! {
    /// Native PrivateSCRiBLe state machine (documented wrapper: ``dponline.PrivateSCRiBLe``).
    class PyPrivateScrible(PrivateScrible) as "PrivateSCRiBLe";
    family: with_loss_family, "a linear dponline.losses family";
    params: params_dict;
    getters {
        /// The grid step ``γ`` of the exact feedback release, or ``None`` (floating-point or no noise).
        grid(&learner, _py) { learner.exact().map(|e| e.grid.gamma()) }
        /// The last released noisy feedback.
        last_release(&learner, _py) { learner.last_release() }
        /// The FTRL point ``x_t``, shape ``(dim,)``.
        center(&learner, py) { PyArray1::from_slice(py, learner.center()) }
    }
    methods {
        /// ``epsilon=None``: no noise; otherwise Laplace noise on the feedback (sensitivity ``2·loss_bound``) of the
        /// ``sampler`` (``"exact"``: discrete Laplace on a grid meeting ``epsilon`` exactly; ``"floating-point"``:
        /// ``Laplace(2·loss_bound/epsilon)``).
        #[new]
        #[pyo3(signature = (domain, horizon, loss_bound, epsilon, *, sampler = "exact", strict = false, seed = None, secure = false))]
        fn new(
            py: Python<'_>,
            domain: &Bound<'_, PyDomain>,
            horizon: u64,
            loss_bound: f64,
            epsilon: Option<f64>,
            sampler: &str,
            strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            secure: bool,
        ) -> PyResult<Self> {
            let dom = shared(domain, "domain")?.inner.clone();
            let sampler = SamplerKind::from_name(sampler).or_raise()?;
            let (scale, exact) = scalar_laplace(2.0 * loss_bound, epsilon, sampler).or_raise()?;
            let (words, secure) = keying(py, seed, secure)?;
            Ok(PyPrivateScrible {
                inner: PrivateScrible::new(
                    dom, horizon, loss_bound, scale, exact, words, secure, strict,
                )
                .or_raise()?,
            })
        }

        /// The point to play, shape ``(dim,)``.
        fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let mut this = Self::writable(slf)?;
            Ok(PyArray1::from_slice(slf.py(), this.inner.ask().or_raise()?))
        }

        /// Report the loss of the asked point.
        fn tell(slf: &Bound<'_, Self>, loss: f64) -> PyResult<()> {
            Self::writable(slf)?.inner.tell(loss).or_raise()
        }
    }
}
