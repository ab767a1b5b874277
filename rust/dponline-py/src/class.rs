//! One native class's frame, declared once: [`py_class!`] emits a `#[pyclass]` struct, its borrow helpers and one
//! `#[pymethods]` block holding the getters it lists (one line each) and the methods spliced in as written.
//! [`crate::learner::py_learner!`] and [`crate::aggregation`]'s `py_mechanism!` build on it (PyO3 allows one
//! `#[pymethods]` block per class, so the shared methods are spliced in by macro rather than added in a second
//! block).
//!
//! One borrow convention: every method takes `slf: &Bound<Self>` and borrows through `Self::readable(slf)`
//! ([`crate::convert::shared`]) or `Self::writable(slf)` ([`crate::convert::exclusive`]), so a call that meets
//! another thread's call on the same object raises `StateError` (never PyO3's generic borrow error).

/// Declare a mutable native class.
///
/// ```text
/// py_class! {
///     /// Class docstring.
///     class PyHedge as "Hedge" () { inner: Hedge, rng: Generator }   // (pyclass options, e.g. (subclass))
///     state: inner;                        // optional: `to_bytes`/`from_bytes` of a one-field class's state
///     getters {
///         /// Docstring.
///         eta(&this, _py) { this.inner.eta() }    // `this`: the borrowed object; the value goes to Python
///     }
///     methods { #[new] fn new(...) -> PyResult<Self> { ... } ... }
/// }
/// ```
///
/// `frozen class PyX as "X" { fields }` declares an immutable class instead (no borrow, so no `StateError`:
/// getters read `slf.get()`; fields keep their own visibility and docs).
macro_rules! py_class {
    (
        $(#[doc = $doc:literal])*
        frozen class $py:ident as $name:literal { $($(#[$fattr:meta])* $fvis:vis $field:ident: $fty:ty),* $(,)? }
        getters {
            $( $(#[doc = $gdoc:literal])* $getter:ident(&$this:ident, $gpy:ident) $body:block )*
        }
        methods { $($methods:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[pyclass(frozen, module = "dponline._core", name = $name)]
        pub struct $py {
            $($(#[$fattr])* $fvis $field: $fty),*
        }

        #[pymethods]
        impl $py {
            $($methods)*

            $(
                $(#[doc = $gdoc])*
                #[getter]
                #[allow(unused_braces)] // a one-line getter's value is written as a block
                fn $getter(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
                    let $gpy = slf.py();
                    let $this: &Self = slf.get();
                    let value = $body;
                    pyo3::IntoPyObjectExt::into_py_any(value, $gpy)
                }
            )*
        }
    };
    (
        $(#[doc = $doc:literal])*
        class $py:ident as $name:literal ($($option:ident),*) { $($field:ident: $fty:ty),* $(,)? }
        $(state: $state:ident;)?
        getters {
            $( $(#[doc = $gdoc:literal])* $getter:ident(&$this:ident, $gpy:ident) $body:block )*
        }
        methods { $($methods:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[pyclass(module = "dponline._core", name = $name $(, $option)*)]
        pub struct $py {
            $(pub(crate) $field: $fty),*
        }

        impl $py {
            /// Borrow for reading, or `StateError` while another thread uses the object.
            #[allow(dead_code)]
            fn readable<'py>(slf: &Bound<'py, Self>) -> PyResult<PyRef<'py, Self>> {
                $crate::convert::shared(slf, $name)
            }

            /// Borrow for writing, or `StateError` while another thread uses the object.
            #[allow(dead_code)]
            fn writable<'py>(slf: &Bound<'py, Self>) -> PyResult<PyRefMut<'py, Self>> {
                $crate::convert::exclusive(slf, $name)
            }
        }

        #[pymethods]
        impl $py {
            $($methods)*

            $(
                /// Serialized state (format-versioned, checksummed: ``dponline_core::state``).
                fn to_bytes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                    use $crate::errors::OrRaise;
                    let bytes = $crate::class::NativeState::to_state(&Self::readable(slf)?.$state).or_raise()?;
                    Ok(pyo3::types::PyBytes::new(slf.py(), &bytes))
                }

                /// Restore from :meth:`to_bytes`.
                #[staticmethod]
                fn from_bytes(state: &[u8]) -> PyResult<Self> {
                    use $crate::errors::OrRaise;
                    Ok(Self { $state: $crate::class::NativeState::from_state(state).or_raise()? })
                }
            )?

            $(
                $(#[doc = $gdoc])*
                #[getter]
                #[allow(unused_braces)] // a one-line getter's value is written as a block
                fn $getter(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
                    let $gpy = slf.py();
                    let guard = Self::readable(slf)?;
                    let $this: &Self = &guard;
                    let value = $body;
                    pyo3::IntoPyObjectExt::into_py_any(value, $gpy)
                }
            )*
        }
    };
}

pub(crate) use py_class;

/// A core type in the one serialized form (the checksummed container of `dponline_core::state`): what the
/// `state:` line of [`py_class!`] pickles. Decoding checks the type's invariants where the core defines them.
pub trait NativeState: Sized {
    /// The serialized state.
    fn to_state(&self) -> dponline_core::Result<Vec<u8>>;
    /// Restore from [`NativeState::to_state`].
    fn from_state(bytes: &[u8]) -> dponline_core::Result<Self>;
}

/// `NativeState` by the type's own `to_bytes`/`from_bytes` (which check its invariants) or, for `plain`, by the
/// container alone.
macro_rules! native_state {
    ($($ty:ty),*) => {$(
        impl NativeState for $ty {
            fn to_state(&self) -> dponline_core::Result<Vec<u8>> {
                self.to_bytes()
            }
            fn from_state(bytes: &[u8]) -> dponline_core::Result<Self> {
                <$ty>::from_bytes(bytes)
            }
        }
    )*};
    (plain $($ty:ty),*) => {$(
        impl NativeState for $ty {
            fn to_state(&self) -> dponline_core::Result<Vec<u8>> {
                dponline_core::state::to_state_bytes(self)
            }
            fn from_state(bytes: &[u8]) -> dponline_core::Result<Self> {
                dponline_core::state::from_state_bytes(bytes)
            }
        }
    )*};
}

native_state!(dponline_core::local_dp::LocalRandomizer);
native_state!(plain dponline_core::local_dp::potential::Potential1D);
