//! The learners on a prefix-sum mechanism whose constants are built once (PrivateBandit, NoisyOCO,
//! PrivateDRSubmodular): [`py_params!`] declares a learner's frozen params class — its constants derived once from
//! the declared arguments and a domain, read by the Python calibration through `as_dict()` — and
//! [`py_mechanism_learner!`] declares the learner's class (over [`crate::learner::py_learner!`]) with the getters
//! every such learner shares and the constructor that takes that params object, so the declared arguments cross
//! into Rust once and the constants are never rebuilt.

use pyo3::prelude::*;

use crate::domains::PyDomain;
use crate::learner::MechanismArgs;

/// A params class of [`py_params!`]: the domain it was built for, and the typed constants of its learner.
pub trait LearnerParams {
    /// The core params type of the learner.
    type Core;

    /// The domain the constants were derived for (the learner is built on it).
    fn domain(&self) -> &Py<PyDomain>;

    /// The learner's core params once the mechanism's noise is known: the constants as built, unless they
    /// depend on the noise (then derived here, once).
    ///
    /// Raises what deriving them raises.
    fn finish(&self, args: &MechanismArgs) -> PyResult<Self::Core>;
}

/// Declare a learner's frozen params class: `__new__(domain, …)` runs `body` once (with `domain` the core
/// domain, borrowed; it returns `PyResult<$core>`), `domain` returns the Python domain, `as_dict()` the
/// constants through `dict` (the function of the learner's `params`), and [`LearnerParams`] hands them to the
/// learner's constructor.
///
/// ```text
/// py_params! {
///     /// Class docstring.
///     class PyNoisyOcoParams(NoisyOcoParams) as "NoisyOCOParams";   // Rust name, core type, Python name
///     dict: params_dict;                          // fn(Python, &NoisyOcoParams) -> PyResult<Bound<PyDict>>
///     #[pyo3(signature = (domain, horizon, lipschitz, *, learning_rate = None, lmo_calls = 4))]
///     new(domain, horizon: u64, lipschitz: f64, learning_rate: Option<f64>, lmo_calls: u32) {
///         NoisyOcoParams::new(domain, horizon, lipschitz, learning_rate, lmo_calls).or_raise()
///     }
/// }
/// ```
///
/// A learner whose constants depend on the noise adds the line `finish(&declared, args) -> CoreParams { … }`,
/// which derives them from the stored `declared` constants and the converted arguments `args` (by default the
/// stored constants are the core params, cloned).
///
/// ```text
/// }
/// ```
macro_rules! py_params {
    (
        $(#[doc = $doc:literal])*
        class $py:ident($core:ty) as $name:literal;
        dict: $dict:path;
        $(#[$attr:meta])*
        new($domain:ident, $($arg:ident: $ty:ty),* $(,)?) $body:block
    ) => {
        $crate::params::py_params! {
            $(#[doc = $doc])*
            class $py($core) as $name;
            dict: $dict;
            $(#[$attr])*
            new($domain, $($arg: $ty),*) $body
            finish(&params, _args) -> $core { Ok(params.clone()) }
        }
    };
    (
        $(#[doc = $doc:literal])*
        class $py:ident($core:ty) as $name:literal;
        dict: $dict:path;
        $(#[$attr:meta])*
        new($domain:ident, $($arg:ident: $ty:ty),* $(,)?) $body:block
        finish(&$params:ident, $args:ident) -> $finished:ty $finish:block
    ) => {
        $(#[doc = $doc])*
        #[pyclass(frozen, module = "dponline._core", name = $name)]
        pub struct $py {
            /// The domain the constants were derived for.
            domain: Py<$crate::domains::PyDomain>,
            /// The constants.
            inner: $core,
        }

        #[pymethods]
        impl $py {
            #[new]
            $(#[$attr])*
            fn new($domain: &Bound<'_, $crate::domains::PyDomain>, $($arg: $ty),*) -> PyResult<Self> {
                let bound = $domain.clone().unbind();
                let guard = $crate::convert::shared($domain, "domain")?;
                let $domain: &dponline_core::domains::Domain = &guard.inner;
                let inner = $body?;
                drop(guard);
                Ok(Self { domain: bound, inner })
            }

            /// The domain the constants were derived for.
            #[getter]
            fn domain(&self, py: Python<'_>) -> Py<$crate::domains::PyDomain> {
                self.domain.clone_ref(py)
            }

            /// The constants, as a dict.
            fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                $dict(py, &self.inner)
            }

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                Ok(format!("{}({})", $name, self.as_dict(py)?.repr()?))
            }
        }

        impl $crate::params::LearnerParams for $py {
            type Core = $finished;

            fn domain(&self) -> &Py<$crate::domains::PyDomain> {
                &self.domain
            }

            fn finish(&self, $args: &$crate::learner::MechanismArgs) -> PyResult<$finished> {
                let $params = &self.inner;
                $finish
            }
        }
    };
}

pub(crate) use py_params;

/// Declare the Python class of a learner on a prefix-sum mechanism (over [`crate::learner::py_learner!`]) with
/// the getters every such learner shares (`mechanism`, `noise`, `scale`), after `ask:` the `ask` of a learner
/// playing a vector, and, after `new:`, the constructor
/// `__new__(params, *, noise, scale, mechanism="tree", strict=False, seed=None, secure=False, sampler="exact")`
/// that builds the core learner from a params object of [`py_params!`] (its domain and its constants,
/// [`LearnerParams::finish`]) and the converted shared arguments ([`MechanismArgs`]), never rebuilding the
/// constants.
///
/// ```text
/// py_mechanism_learner! {
///     /// Class docstring.
///     class PyNoisyOco(NoisyOco) as "NoisyOCO";
///     new: PyNoisyOcoParams;                     // the params class the constructor takes (optional)
///     family: with_loss_family, "a dponline.losses family";
///     params: params_dict;
///     ask: action;                               // optional: `ask` returns the core's vector ("The action to play")
///     getters { … }                              // the learner's own, as in py_learner!
///     methods { … }                              // ask, tell, …
/// }
/// ```
macro_rules! py_mechanism_learner {
    (
        $(#[doc = $doc:literal])*
        class $py:ident($core:ty) as $name:literal;
        $(new: $params:ty;)?
        family: $with:path $(, $arg:expr)*;
        params: $dict:path;
        $(ask: $what:ident;)?
        getters { $($getters:tt)* }
        methods { $($methods:tt)* }
    ) => {
        $crate::learner::py_learner! {
            $(#[doc = $doc])*
            class $py($core) as $name;
            family: $with $(, $arg)*;
            params: $dict;
            getters {
                $($getters)*
                /// The mechanism releasing the prefix sums (``"tree"``, ``"honaker"``, ``"blt"``).
                mechanism(&learner, _py) { learner.mechanism_kind() }
                /// ``"laplace"`` or ``"gaussian"``.
                noise(&learner, _py) { learner.noise().name() }
                /// Per-draw noise scale of the mechanism (0 for the non-private learner).
                scale(&learner, _py) { learner.noise().scale() }
            }
            methods {
                $(
                    /// Build the learner on ``params`` (its domain and constants) with the mechanism's noise.
                    #[new]
                    #[pyo3(signature = (params, *, noise, scale, mechanism = "tree", strict = false, seed = None, secure = false, sampler = "exact"))]
                    fn new(
                        py: Python<'_>,
                        params: &Bound<'_, $params>,
                        noise: &str,
                        scale: f64,
                        mechanism: &str,
                        #[pyo3(from_py_with = $crate::convert::flag)] strict: bool,
                        seed: Option<&Bound<'_, PyAny>>,
                        #[pyo3(from_py_with = $crate::convert::flag)] secure: bool,
                        #[pyo3(from_py_with = $crate::aggregation::sampler_arg)] sampler: &'static str,
                    ) -> PyResult<Self> {
                        use $crate::params::LearnerParams;
                        let params = params.get();
                        let args = $crate::learner::MechanismArgs::new(
                            py, LearnerParams::domain(params).bind(py), noise, scale, mechanism, sampler, seed, secure,
                        )?;
                        let constants = params.finish(&args)?;
                        Ok(Self { inner: args.build(constants, strict, <$core>::new)? })
                    }
                )?
                $(
                    #[doc = concat!("The ", stringify!($what), " to play, shape ``(dim,)``.")]
                    fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, numpy::PyArray1<f64>>> {
                        use $crate::errors::OrRaise;
                        let mut this = Self::writable(slf)?;
                        Ok(numpy::PyArray1::from_slice(slf.py(), this.inner.ask().or_raise()?))
                    }
                )?
                $($methods)*
            }
        }
    };
}

pub(crate) use py_mechanism_learner;
