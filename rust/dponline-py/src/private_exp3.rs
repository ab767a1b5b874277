//! `dponline._core.PrivateEXP3` and `BernoulliArms`: bindings of `dponline_core::learners::private_exp3`.

use dponline_core::learners::{
    ArmLosses, BernoulliArms, Exp3Params, Exp3Tuning, Learner, PrivateExp3,
};
use dponline_core::noise::release::{SamplerKind, scalar_laplace};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::py_dict;
use crate::convert::{detached, keying};
use crate::errors::{OrRaise, invalid_input};
use crate::learner::py_learner;
use crate::losses::PyLossFamily;

fn params_dict<'py>(py: Python<'py>, p: &Exp3Params) -> PyResult<Bound<'py, PyDict>> {
    py_dict!(py, p; arms, horizon, loss_bound, noise_scale, noisy_range, eta, gamma, tuning = p.tuning.name(),
        regret_bound = p.regret_bound())
}

/// The random draws one PrivateEXP3 step is measured against (for ``benches/compare_bandits.py``): ``steps``
/// times two uniforms and one ``Laplace(1)`` from the reproducible generator of ``seed`` (an int), natively in
/// one loop with the GIL released. Returns the sum of all draws.
#[pyfunction]
#[pyo3(signature = (steps, seed))]
pub fn exp3_raw_step_draws(py: Python<'_>, steps: u64, seed: u64) -> PyResult<f64> {
    detached(py, || {
        dponline_core::learners::raw_step_draws([seed, 0, 0, 0], steps, false)
    })
}

/// Bernoulli bandit environment (documented wrapper: ``dponline.losses.BernoulliArms``).
#[pyclass(frozen, module = "dponline._core", name = "BernoulliArms")]
pub struct PyBernoulliArms {
    pub(crate) inner: BernoulliArms,
}

#[pymethods]
impl PyBernoulliArms {
    #[new]
    #[pyo3(signature = (means, *, horizon, seed))]
    fn new(means: Vec<f64>, horizon: u64, seed: u64) -> PyResult<Self> {
        Ok(PyBernoulliArms {
            inner: BernoulliArms::new(means, horizon, seed).or_raise()?,
        })
    }

    /// Loss means, shape ``(K,)``.
    #[getter]
    fn means<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.means())
    }

    /// Number of rounds.
    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.horizon()
    }

    /// Number of arms.
    #[getter]
    fn dim(&self) -> usize {
        self.inner.means().len()
    }

    /// The loss of ``arm`` at round ``t`` (0-based).
    fn loss(
        &self,
        #[pyo3(from_py_with = crate::convert::round)] t: u64,
        #[pyo3(from_py_with = crate::convert::arm)] arm: usize,
    ) -> PyResult<f64> {
        if arm >= self.inner.means().len() || t >= self.inner.horizon() {
            return Err(invalid_input(format!(
                "need t < horizon={} and arm < {}, got t={t}, arm={arm}",
                self.inner.horizon(),
                self.inner.means().len()
            )));
        }
        Ok(self.inner.loss(t, arm))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let py = slf.py();
        let inner = &slf.get().inner;
        let kwargs = py_dict!(py, inner; horizon = inner.horizon(), seed = inner.seed())?;
        let cls = py.get_type::<PyBernoulliArms>().into_any();
        let (factory, args) =
            crate::convert::reduce_partial(cls, (inner.means().to_vec(),), kwargs)?;
        Ok((factory, args, py.None().into_bound(py)))
    }

    fn __repr__(&self) -> String {
        format!(
            "BernoulliArms(arms={}, horizon={})",
            self.inner.means().len(),
            self.inner.horizon()
        )
    }
}

/// Call `f` with the arm losses `obj` names: a linear `LossFamily` (row entry = arm loss) or `BernoulliArms`;
/// else raise `InvalidInputError`.
fn with_arm_losses<R>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(ArmLosses<'_>) -> PyResult<R>,
) -> PyResult<R> {
    if let Ok(table) = obj.cast::<PyLossFamily>() {
        f(ArmLosses::Table(&table.get().inner))
    } else if let Ok(bernoulli) = obj.cast::<PyBernoulliArms>() {
        f(ArmLosses::Bernoulli(&bernoulli.get().inner))
    } else {
        Err(invalid_input(
            "losses must be a linear dponline.losses family or dponline.losses.BernoulliArms",
        ))
    }
}

py_learner! {
    /// Native PrivateEXP3 state machine (documented wrapper: ``dponline.PrivateEXP3``).
    class PyPrivateExp3(PrivateExp3) as "PrivateEXP3";
    family: with_arm_losses;
    params: params_dict;
    getters {
        /// The grid step ``γ`` of the exact feedback release, or ``None`` (floating-point or no noise).
        grid(&learner, _py) { learner.exact().map(|e| e.grid.gamma()) }
        /// Rebuilds (renormalisations) of the sum tree so far.
        rebuilds(&learner, _py) { learner.rebuilds() }
        /// The last released noisy loss.
        last_release(&learner, _py) { learner.last_release() }
        /// Log-weights ``−η L̂``, shape ``(K,)``.
        log_weights(&learner, py) { PyArray1::from_slice(py, learner.log_weights()) }
    }
    methods {
        /// ``epsilon=None``: no noise; otherwise Laplace noise on the feedback (sensitivity ``loss_bound``) of the
        /// ``sampler`` (``"exact"``: discrete Laplace on a grid meeting ``epsilon`` exactly; ``"floating-point"``:
        /// ``Laplace(loss_bound/epsilon)``).
        #[new]
        #[pyo3(signature = (arms, horizon, loss_bound, epsilon, *, sampler = "exact", strict = false, seed = None, secure = false, tuning = "variance"))]
        fn new(
            py: Python<'_>,
            arms: usize,
            horizon: u64,
            loss_bound: f64,
            epsilon: Option<f64>,
            sampler: &str,
            strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            secure: bool,
            tuning: &str,
        ) -> PyResult<Self> {
            let sampler = SamplerKind::from_name(sampler).or_raise()?;
            let tuning = Exp3Tuning::from_name(tuning).or_raise()?;
            let (scale, exact) = scalar_laplace(loss_bound, epsilon, sampler).or_raise()?;
            let params = Exp3Params::new(arms, horizon, loss_bound, scale, tuning).or_raise()?;
            let (words, secure) = keying(py, seed, secure)?;
            let inner = detached(py, || {
                PrivateExp3::new(params, exact, words, secure, strict)
            })?;
            Ok(PyPrivateExp3 { inner })
        }

        /// The arm to play.
        fn ask(slf: &Bound<'_, Self>) -> PyResult<usize> {
            Self::writable(slf)?.inner.ask().or_raise()
        }

        /// Report the loss of the asked arm.
        fn tell(slf: &Bound<'_, Self>, loss: f64) -> PyResult<()> {
            Self::writable(slf)?.inner.tell(loss).or_raise()
        }

        /// Sampling distribution of the next round, shape ``(K,)``, computed afresh in log-domain.
        fn probabilities<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let this = Self::readable(slf)?;
            let mut out =
                dponline_core::alloc::zeros("probabilities", this.inner.params().arms).or_raise()?;
            this.inner.probabilities(&mut out).or_raise()?;
            Ok(out.into_pyarray(slf.py()))
        }
    }
}
