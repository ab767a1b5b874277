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
///     getters {
///         /// Docstring.
///         eta(&this, _py) { this.inner.eta() }    // `this`: the borrowed object; the value goes to Python
///     }
///     methods { #[new] fn new(...) -> PyResult<Self> { ... } ... }
/// }
/// ```
macro_rules! py_class {
    (
        $(#[doc = $doc:literal])*
        class $py:ident as $name:literal ($($option:ident),*) { $($field:ident: $fty:ty),* $(,)? }
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
