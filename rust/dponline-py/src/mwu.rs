//! `dponline._core.Hedge`: bindings of `dponline_core::mwu`.

use dponline_core::mwu::Hedge;
use dponline_core::rng::Generator;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::class::py_class;
use crate::convert::{keying, len_arg, real_arg, with_vector};
use crate::errors::OrRaise;

py_class! {
    /// Hedge over ``n`` actions in the log domain with a sum tree (documented wrapper: ``dponline.mwu.Hedge``).
    class PyHedge as "Hedge" () { inner: Hedge, rng: Generator }
    getters {
        /// Log-weights relative to :attr:`offset`, shape ``(n,)``.
        log_weights(&this, py) { PyArray1::from_slice(py, this.inner.log_weights()) }
        /// Amount subtracted from every log-weight by renormalisation.
        offset(&this, _py) { this.inner.offset() }
        /// Sum of the tree's leaves (finite, > 0).
        total(&this, _py) { this.inner.total() }
        /// Learning rate.
        eta(&this, _py) { this.inner.eta() }
        /// Number of actions.
        n(&this, _py) { this.inner.len() }
    }
    methods {
        #[new]
        #[pyo3(signature = (n, eta, *, seed = None, secure = false))]
        fn new(
            py: Python<'_>,
            n: &Bound<'_, PyAny>,
            eta: &Bound<'_, PyAny>,
            seed: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
        ) -> PyResult<Self> {
            let n = len_arg(n, "n", 1)?;
            let eta = real_arg(eta, "eta", Some(0.0), true)?;
            let (words, secure) = keying(py, seed, secure)?;
            Ok(PyHedge {
                inner: Hedge::new(n, eta).or_raise()?,
                rng: Generator::for_stream(&words, 1, secure).or_raise()?,
            })
        }

        /// Full-information update with payoffs in ``[0, 1]``, shape ``(n,)``.
        fn update_full(slf: &Bound<'_, Self>, payoffs: &Bound<'_, PyAny>) -> PyResult<()> {
            let mut this = Self::writable(slf)?;
            let n = this.inner.len();
            with_vector(payoffs, "payoffs", n, |g| {
                this.inner.update_full(g).or_raise()
            })
        }

        /// Bandit update: ``action`` earns ``payoff`` in ``[0, 1]``.
        fn update_one(
            slf: &Bound<'_, Self>,
            action: &Bound<'_, PyAny>,
            payoff: &Bound<'_, PyAny>,
        ) -> PyResult<()> {
            let action = len_arg(action, "action", 0)?;
            let payoff = real_arg(payoff, "payoff", None, false)?;
            Self::writable(slf)?
                .inner
                .update_one(action, payoff)
                .or_raise()
        }

        /// ``size`` actions drawn i.i.d. from the current distribution.
        #[pyo3(signature = (size = None))]
        #[pyo3(text_signature = "($self, size=1)")]
        fn sample<'py>(
            slf: &Bound<'py, Self>,
            size: Option<&Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyArray1<i64>>> {
            let size = size.map_or(Ok(1), |s| len_arg(s, "size", 0))?;
            let mut this = Self::writable(slf)?;
            let this = &mut *this;
            // Fallible: a huge size raises MemoryError instead of aborting the process.
            let mut out: Vec<i64> = dponline_core::alloc::reserve("Hedge samples", size).or_raise()?;
            out.extend((0..size).map(|_| this.inner.sample(&mut this.rng) as i64));
            Ok(out.into_pyarray(slf.py()))
        }

        /// The sampling distribution, shape ``(n,)``.
        fn probabilities<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let this = Self::readable(slf)?;
            let mut out = dponline_core::alloc::zeros("probabilities", this.inner.len()).or_raise()?;
            this.inner.probabilities(&mut out).or_raise()?;
            Ok(out.into_pyarray(slf.py()))
        }

        /// Serialized state (format-versioned; a secure generator is stored as a marker and reseeds on restore).
        fn to_bytes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
            let this = Self::readable(slf)?;
            let bytes = dponline_core::state::to_state_bytes(&(&this.inner, &this.rng)).or_raise()?;
            Ok(PyBytes::new(slf.py(), &bytes))
        }

        /// Restore from :meth:`to_bytes`.
        #[staticmethod]
        fn from_bytes(state: &[u8]) -> PyResult<Self> {
            let (inner, rng): (Hedge, Generator) =
                dponline_core::state::from_state_bytes(state).or_raise()?;
            Ok(PyHedge { inner, rng })
        }

        fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
            let py = slf.py();
            let state = Self::to_bytes(slf)?;
            let restore = slf.get_type().getattr("from_bytes")?;
            Ok((restore, (state,).into_pyobject(py)?.into_any()))
        }
    }
}
