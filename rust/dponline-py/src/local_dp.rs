//! Bindings of `dponline_core::local_dp`: the local randomisers and Algorithm 1 (van der Hoeven 2019).

use std::cell::RefCell;

use dponline_core::CoreError;
use dponline_core::local_dp::potential::{
    self, Potential1D, Prediction, Prior, ln_conjugate_normaliser, ln_moment_quadrature,
    ln_normaliser_quadrature,
};
use dponline_core::local_dp::{
    AlgorithmSpec, LocalLearner, LocalLoss, LocalParams, LocalRandomizer, LocalStream, Mechanism,
};
use dponline_core::noise::release::SamplerKind;
use dponline_core::special;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::class::py_class;
use crate::convert::{detached, keying, len_arg, matrix_owned, real_arg};
use crate::errors::{OrRaise, invalid_input};
use crate::learner::py_learner;

py_class! {
    /// Native local randomiser (documented wrapper: ``dponline.LocalLaplaceRandomizer``).
    class PyLocalRandomizer as "LocalRandomizer" () { inner: LocalRandomizer }
    state: inner;
    getters {
        /// Vector length.
        dim(&this, _py) { this.inner.dim() }
        /// The declared bound ``G``.
        bound(&this, _py) { this.inner.bound() }
        /// ``"laplace"`` or ``"l2"``.
        mechanism(&this, _py) { this.inner.mechanism().name() }
        /// ``"exact"`` or ``"floating-point"``.
        sampler(&this, _py) { this.inner.sampler().name() }
        /// Whether out-of-bound gradients raise.
        strict(&this, _py) { this.inner.strict() }
        /// Whether noise comes from the OS-keyed ChaCha20 generator.
        secure(&this, _py) { this.inner.secure() }
        /// Rows randomised so far.
        rounds(&this, _py) { this.inner.rounds() }
        /// Rows clipped so far.
        clipped(&this, _py) { this.inner.clipped() }
    }
    methods {
        #[new]
        #[pyo3(signature = (dim, *, bound = None, mechanism = "laplace", sampler = "exact", strict = false, seed = None, secure = false))]
        #[allow(clippy::too_many_arguments)]
        fn new(
            py: Python<'_>,
            dim: &Bound<'_, PyAny>,
            bound: Option<&Bound<'_, PyAny>>,
            mechanism: &str,
            sampler: &str,
            strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            secure: bool,
        ) -> PyResult<Self> {
            let dim = len_arg(dim, "dim", 1)?;
            let bound = bound.map_or(Ok(1.0), |b| real_arg(b, "bound", Some(0.0), true))?;
            let mechanism = Mechanism::from_name(mechanism).or_raise()?;
            let sampler = SamplerKind::from_name(sampler).or_raise()?;
            let (words, secure) = keying(py, seed, secure)?;
            Ok(PyLocalRandomizer {
                inner: LocalRandomizer::new(dim, bound, mechanism, sampler, words, secure, strict)
                    .or_raise()?,
            })
        }

        /// Release ``clip(g) + noise`` for every row of ``gradients`` (``(n, dim)``) with ``budgets``
        /// (``(n, dim)`` for ``"laplace"``, ``(n,)`` for ``"l2"``); one native call, GIL released.
        fn randomize<'py>(
            slf: &Bound<'py, Self>,
            gradients: &Bound<'py, PyAny>,
            budgets: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyArray2<f64>>> {
            let py = slf.py();
            let mut this = Self::writable(slf)?;
            let dim = this.inner.dim();
            let (rows, grads) = matrix_owned(gradients, "gradients", dim)?;
            let per = this.inner.mechanism().budgets_per_round(dim);
            let (brows, taus) = matrix_owned(budgets, "budgets", per)?;
            if brows != rows {
                return Err(invalid_input(format!(
                    "budgets must have one row per gradient ({rows}), got {brows}"
                )));
            }
            let inner = &mut this.inner;
            let out = detached(py, move || {
                let mut out = dponline_core::alloc::zeros("randomised gradients", grads.len())?;
                inner.randomize(&grads, &taus, &mut out)?;
                Ok(out)
            })?;
            let arr =
                Array2::from_shape_vec((rows, dim), out).map_err(|e| invalid_input(e.to_string()))?;
            Ok(arr.into_pyarray(py))
        }
    }
}

/// Parse a prior name and its precision ``b`` (used by the conjugate prior only).
pub fn parse_prior(name: &str, b: f64) -> PyResult<Prior> {
    match name {
        "conjugate" => Ok(Prior::Conjugate { b }),
        "uniform" => Ok(Prior::Uniform),
        "improper" => Ok(Prior::Improper),
        "external" => Ok(Prior::External),
        other => Err(invalid_input(format!(
            "prior must be 'conjugate', 'uniform', 'improper' or a callable, got {other:?}"
        ))),
    }
}

/// Run `f` with a core-side density that calls the Python callable `density`; a Python exception inside
/// is re-raised as is, a value that is not a real number raises `InvalidInputError`.
fn with_density<T>(
    density: &Bound<'_, PyAny>,
    f: impl FnOnce(&mut dyn FnMut(f64) -> dponline_core::Result<f64>) -> dponline_core::Result<T>,
) -> PyResult<T> {
    let raised: RefCell<Option<PyErr>> = RefCell::new(None);
    let mut call = |v: f64| -> dponline_core::Result<f64> {
        let value = density.call1((v,)).and_then(|r| {
            r.extract::<f64>().map_err(|_| {
                invalid_input(format!(
                    "the prior density must return a real number, got {} at v = {v}",
                    r.repr()
                        .map(|t| t.to_string())
                        .unwrap_or_else(|_| "an object".into())
                ))
            })
        });
        match value {
            Ok(x) => Ok(x),
            Err(e) => {
                *raised.borrow_mut() = Some(e);
                Err(CoreError::Protocol("prior density raised".into()))
            }
        }
    };
    let out = f(&mut call);
    if let Some(e) = raised.into_inner() {
        return Err(e);
    }
    out.or_raise()
}

fn pair(p: Prediction) -> (f64, f64) {
    (p.sign, p.ln_abs)
}

py_class! {
    /// Native Algorithm 1 state (documented wrapper: ``dponline.PotentialLearner1D``).
    class PyPotentialLearner1D as "PotentialLearner1D" () { inner: Potential1D }
    state: inner;
    getters {
        /// ``G``.
        g_bound(&this, _py) { this.inner.g_bound() }
        /// ``C = 1/(5G)``.
        c(&this, _py) { this.inner.c() }
        /// Prior name.
        prior(&this, _py) { this.inner.prior().name() }
        /// ``L_t = −Σ g̃_s``.
        neg_sum(&this, _py) { this.inner.neg_sum() }
        /// ``Q_t = Σ g̃_s²``.
        sq_sum(&this, _py) { this.inner.sq_sum() }
        /// Feedback absorbed.
        t(&this, _py) { this.inner.t() }
        /// Predictions saturated at ``±1e100``.
        saturated(&this, _py) { this.inner.saturated() }
    }
    methods {
        #[new]
        #[pyo3(signature = (g_bound, *, prior = "conjugate", b = 1.0))]
        fn new(g_bound: &Bound<'_, PyAny>, prior: &str, b: f64) -> PyResult<Self> {
            let g_bound = real_arg(g_bound, "G", Some(0.0), true)?;
            Ok(PyPotentialLearner1D {
                inner: Potential1D::new(g_bound, parse_prior(prior, b)?).or_raise()?,
            })
        }

        /// ``w_t`` (saturated at ``±1e100``).
        fn ask(slf: &Bound<'_, Self>) -> PyResult<f64> {
            Self::writable(slf)?.inner.ask().or_raise()
        }

        /// ``(sign, ln|w_t|)`` for an external prior density ``density(v)`` with log-mass ``ln_z``.
        fn log_prediction_with(
            slf: &Bound<'_, Self>,
            density: &Bound<'_, PyAny>,
            ln_z: f64,
        ) -> PyResult<(f64, f64)> {
            let this = Self::writable(slf)?;
            with_density(density, |d| this.inner.prediction_with(ln_z, d)).map(pair)
        }

        /// ``(sign, ln|w_t|)`` for the built-in prior.
        fn log_prediction(slf: &Bound<'_, Self>) -> PyResult<(f64, f64)> {
            let this = Self::writable(slf)?;
            this.inner.prediction().or_raise().map(pair)
        }

        /// Absorb one noisy gradient ``g̃_t``.
        fn tell(slf: &Bound<'_, Self>, g: f64) -> PyResult<()> {
            Self::writable(slf)?
                .inner
                .tell(g)
                .or_raise()
        }
    }
}

/// ``erfcx(x) = exp(x²) erfc(x)`` elementwise (the core's implementation).
#[pyfunction]
pub fn erfcx<'py>(py: Python<'py>, x: PyReadonlyArray1<'py, f64>) -> Bound<'py, PyArray1<f64>> {
    let xs = x
        .as_slice()
        .map(<[f64]>::to_vec)
        .unwrap_or_else(|_| x.as_array().to_vec());
    let out: Vec<f64> = xs.iter().map(|&v| special::erfcx(v)).collect();
    out.into_pyarray(py)
}

/// ``(sign, ln|w|)`` of Algorithm 1's prediction (eq. 5) for sums ``L``, ``Q`` and bound ``G``:
/// ``method="closed"`` (eq. 7 evaluated stably; conjugate and uniform priors) or ``"quadrature"``
/// (adaptive Gauss-Kronrod on the same integrals, normaliser included). ``density`` (a callable) replaces
/// the prior's ``ν`` in quadrature.
#[pyfunction]
#[pyo3(signature = (l, q, g_bound, *, prior = "conjugate", b = 1.0, method = "closed", density = None))]
pub fn potential_log_prediction(
    l: &Bound<'_, PyAny>,
    q: &Bound<'_, PyAny>,
    g_bound: &Bound<'_, PyAny>,
    prior: &str,
    b: f64,
    method: &str,
    density: Option<&Bound<'_, PyAny>>,
) -> PyResult<(f64, f64)> {
    let l = real_arg(l, "L", None, false)?;
    let q = real_arg(q, "Q", Some(0.0), false)?;
    let g = real_arg(g_bound, "G", Some(0.0), true)?;
    dponline_core::error::check_positive("b", b).or_raise()?;
    let c = 1.0 / (5.0 * g);
    let prior = parse_prior(prior, b)?;
    match (method, density) {
        ("closed", None) => {
            let ln_z = match prior {
                Prior::Conjugate { b } => ln_conjugate_normaliser(b, c),
                Prior::Uniform => (2.0 * c).ln(),
                _ => 0.0,
            };
            potential::prediction_for(prior, l, q, c, ln_z)
                .or_raise()
                .map(pair)
        }
        ("quadrature", None) => {
            let (q_total, ln_z) = match prior {
                Prior::Conjugate { b } => (
                    q + b,
                    ln_normaliser_quadrature(b, c, |_| Ok(1.0)).or_raise()?,
                ),
                Prior::Uniform => (q, ln_normaliser_quadrature(0.0, c, |_| Ok(1.0)).or_raise()?),
                Prior::Improper => {
                    return ln_moment_quadrature(l, q, c, |v| Ok(1.0 / v.abs()))
                        .or_raise()
                        .map(pair);
                }
                Prior::External => return Err(invalid_input("prior='external' needs density")),
            };
            let p = ln_moment_quadrature(l, q_total, c, |_| Ok(1.0)).or_raise()?;
            Ok((p.sign, p.ln_abs - ln_z))
        }
        ("quadrature", Some(density)) => {
            let ln_z = with_density(density, |d| ln_normaliser_quadrature(0.0, c, d))?;
            with_density(density, |d| ln_moment_quadrature(l, q, c, d))
                .map(|p| (p.sign, p.ln_abs - ln_z))
        }
        _ => Err(invalid_input(format!(
            "method must be 'closed' (no density) or 'quadrature', got {method:?}"
        ))),
    }
}

/// ``ln ∫_{−C}^{C} density(v) dv`` by adaptive quadrature (``C = 1/(5G)``).
#[pyfunction]
pub fn potential_log_normaliser(g_bound: f64, density: &Bound<'_, PyAny>) -> PyResult<f64> {
    let c = 1.0 / (5.0 * g_bound);
    with_density(density, |d| ln_normaliser_quadrature(0.0, c, d))
}

crate::class::py_class! {
    /// A native stream of providers (documented wrapper: ``dponline.local_dp.LocalStream``).
    frozen class PyLocalStream as "LocalStream" { pub(crate) inner: LocalStream }
    getters {
        /// Rounds.
        horizon(&this, _py) { this.inner.rows() }
        /// Feature dimension.
        dim(&this, _py) { this.inner.dim() }
        /// Loss name.
        loss(&this, _py) { this.inner.loss().name() }
        /// Mechanism name.
        mechanism(&this, _py) { this.inner.mechanism().name() }
        /// The providers' sampler: ``"exact"`` or ``"floating-point"``.
        sampler(&this, _py) { this.inner.sampler().name() }
    }
    methods {
        #[new]
        #[pyo3(signature = (features, labels, budgets, *, loss, mechanism = "laplace", sampler = "exact"))]
        fn new(
            features: &Bound<'_, PyAny>,
            labels: &Bound<'_, PyAny>,
            budgets: &Bound<'_, PyAny>,
            loss: &str,
            mechanism: &str,
            sampler: &str,
        ) -> PyResult<Self> {
            let dim: usize = features
                .getattr("shape")
                .and_then(|s| s.get_item(1))
                .and_then(|d| d.extract())
                .map_err(|_| invalid_input("features must be a 2-D array of shape (n, d)"))?;
            let (rows, x) = matrix_owned(features, "features", dim)?;
            let (yrows, y) = matrix_owned(labels, "labels", 1)?;
            let mechanism = Mechanism::from_name(mechanism).or_raise()?;
            let (brows, taus) = matrix_owned(budgets, "budgets", mechanism.budgets_per_round(dim))?;
            if yrows != rows || brows != rows {
                return Err(invalid_input(format!(
                    "features ({rows} rows), labels ({yrows}) and budgets ({brows}) must have one row per round"
                )));
            }
            let loss = LocalLoss::from_name(loss).or_raise()?;
            let sampler = SamplerKind::from_name(sampler).or_raise()?;
            Ok(PyLocalStream {
                inner: LocalStream::new(dim, x, y, loss, mechanism, sampler, taus).or_raise()?,
            })
        }

        /// ``Σ_{t<n} ℓ_t(u)`` at each checkpoint ``n``.
        fn cumulative_at<'py>(
            &self,
            py: Python<'py>,
            u: PyReadonlyArray1<'py, f64>,
            #[pyo3(from_py_with = crate::convert::checkpoints)] checkpoints: Vec<u64>,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let u = u.as_array().to_vec();
            let inner = &self.inner;
            let out = detached(py, move || inner.cumulative_at(&u, &checkpoints))?;
            Ok(out.into_pyarray(py))
        }

        /// ``(ℓ_t(w), g_t)`` of round ``t`` (unclipped, no noise).
        fn subgradient<'py>(
            &self,
            py: Python<'py>,
            t: usize,
            w: PyReadonlyArray1<'py, f64>,
        ) -> PyResult<(f64, Bound<'py, PyArray1<f64>>)> {
            if t >= self.inner.rows() || w.as_array().len() != self.inner.dim() {
                return Err(invalid_input(format!(
                    "t must be < {} and w of length {}",
                    self.inner.rows(),
                    self.inner.dim()
                )));
            }
            let w = w.as_array().to_vec();
            let mut g = vec![0.0; self.inner.dim()];
            let value = self.inner.subgradient(t, &w, &mut g);
            if !value.is_finite() {
                return Err(invalid_input(format!(
                    "the loss of round {t} at w overflows ({value})"
                )));
            }
            dponline_core::error::check_finite("the subgradient at w (overflow)", &g).or_raise()?;
            Ok((value, g.into_pyarray(py)))
        }

        /// Serialized stream.
        fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
            Ok(PyBytes::new(
                py,
                &dponline_core::state::to_state_bytes(&self.inner).or_raise()?,
            ))
        }

        /// Restore from :meth:`to_bytes`.
        #[staticmethod]
        fn from_bytes(state: &[u8]) -> PyResult<Self> {
            Ok(PyLocalStream {
                inner: dponline_core::state::from_state_bytes(state).or_raise()?,
            })
        }
    }
}

fn params_dict<'py>(py: Python<'py>, p: &LocalParams) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    crate::convert::py_dict!(py, p; dim, g_bound)
}

/// Call `f` with the native stream `obj` is (a `TypeError` for another object, as PyO3 raises for a typed
/// argument).
fn with_local_stream<R>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(&LocalStream) -> PyResult<R>,
) -> PyResult<R> {
    f(&obj.cast::<PyLocalStream>()?.get().inner)
}

py_learner! {
    /// Native d-dimensional local-DP learner (documented wrappers in ``dponline.local_dp``).
    class PyLocalLearner(LocalLearner) as "LocalLearner";
    family: with_local_stream;
    params: params_dict;
    getters {
        /// The current action (after the last ``ask``/``run``), shape ``(dim,)``.
        current(&learner, py) { PyArray1::from_slice(py, learner.current()) }
        /// Predictions saturated at ``±1e100``.
        saturated(&learner, _py) { learner.saturated() }
        /// Dimension.
        dim(&learner, _py) { learner.dim() }
    }
    methods {
        #[new]
        #[pyo3(signature = (dim, g_bound, algorithm, *, prior = "conjugate", b = 1.0, lr = 1.0, radius = 1.0, strict = false, seed = None, secure = false))]
        fn new(
            py: Python<'_>,
            dim: &Bound<'_, PyAny>,
            g_bound: &Bound<'_, PyAny>,
            algorithm: &str,
            prior: &str,
            b: f64,
            lr: f64,
            radius: f64,
            strict: bool,
            seed: Option<&Bound<'_, PyAny>>,
            secure: bool,
        ) -> PyResult<Self> {
            let dim = len_arg(dim, "dim", 1)?;
            let g_bound = real_arg(g_bound, "G", Some(0.0), true)?;
            let prior = parse_prior(prior, b)?;
            let (words, secure) = keying(py, seed, secure)?;
            let spec = AlgorithmSpec::from_name(algorithm, prior, lr, radius).or_raise()?;
            Ok(PyLocalLearner {
                inner: LocalLearner::new(dim, g_bound, spec, words, secure, strict).or_raise()?,
            })
        }

        /// The action ``w_t``, shape ``(dim,)``.
        fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let mut this = Self::writable(slf)?;
            Ok(PyArray1::from_slice(slf.py(), this.inner.ask().or_raise()?))
        }

        /// Absorb the noisy gradient of the asked action.
        fn tell(slf: &Bound<'_, Self>, gradient: &Bound<'_, PyAny>) -> PyResult<()> {
            let mut this = Self::writable(slf)?;
            let dim = this.inner.dim();
            crate::convert::with_vector(gradient, "gradient", dim, |g| this.inner.tell(g).or_raise())
        }

        /// Per-learner sums as a dict: ``sum_sq`` (per coordinate for ``coordinatewise``; of ``⟨z, g̃⟩`` for
        /// ``unconstrained``), ``sum_sq_norms`` (``unconstrained``), ``v``/``z`` (``unconstrained``).
        fn state<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
            use dponline_core::local_dp::Algorithm;
            let (py, this) = (slf.py(), Self::readable(slf)?);
            let d = pyo3::types::PyDict::new(py);
            d.set_item("algorithm", this.inner.algorithm().name())?;
            match this.inner.algorithm() {
                Algorithm::Coordinatewise { coords } => {
                    let sq: Vec<f64> = coords.iter().map(Potential1D::sq_sum).collect();
                    let ls: Vec<f64> = coords.iter().map(Potential1D::neg_sum).collect();
                    d.set_item("sum_sq", sq.into_pyarray(py))?;
                    d.set_item("neg_sum", ls.into_pyarray(py))?;
                }
                Algorithm::Unconstrained {
                    norm,
                    z,
                    sq_norms,
                    v,
                } => {
                    d.set_item("sum_sq", norm.sq_sum())?;
                    d.set_item("neg_sum", norm.neg_sum())?;
                    d.set_item("sum_sq_norms", *sq_norms)?;
                    d.set_item("v", *v)?;
                    d.set_item("z", PyArray1::from_slice(py, z))?;
                }
                Algorithm::Ogd { lr } => d.set_item("lr", *lr)?,
                Algorithm::AdaGrad { radius, sq } => {
                    d.set_item("radius", *radius)?;
                    d.set_item("sum_sq", PyArray1::from_slice(py, sq))?;
                }
            }
            Ok(d)
        }
    }
}
