//! The learner protocol, generated once for every native learner: [`py_learner!`] emits a learner's Python
//! class around a core [`Learner`] and its whole protocol — `run`, `params`, `t`, `clipped`, `to_bytes`,
//! `from_bytes` and the getters it lists — and splices in what is the learner's own (its constructor, `ask`,
//! `tell`, other methods). PyO3 classes cannot be generic, hence a macro rather than a generic class.
//! The class frame and its borrow convention are [`crate::class::py_class!`]'s.

use dponline_core::learners::{Learner, MechanismConstructor, MechanismSetup};
use pyo3::prelude::*;

use crate::convert::{RunOutput, run_native};

/// The `run` binding of a core [`Learner`]: validate (nothing changes on an error), then play `rounds` rounds
/// in blocks with the GIL released, as [`run_native`] does.
///
/// A block that fails after the checks — a strict learner's at feedback beyond the declared bound, a local-DP
/// learner's at a loss that overflows ([`Learner::play_may_fail`]; the core `run` undoes that block) — undoes the
/// blocks played before it too, so the whole call changes nothing. An interrupt between blocks keeps them, as
/// documented.
pub fn run_learner<'py, L: Learner + Send>(
    py: Python<'py>,
    learner: &mut L,
    family: L::Family<'_>,
    rounds: u64,
    checkpoints: &[u64],
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<RunOutput<'py>> {
    use crate::errors::OrRaise;
    let check = learner.check_run(family, rounds);
    let start = learner.t();
    let several = rounds > crate::convert::BLOCK_ROUNDS;
    let before = match (&check, learner.play_may_fail() && several) {
        (Ok(()), true) => Some(learner.to_bytes().or_raise()?),
        _ => None,
    };
    let mut failed = false;
    let (playing, failing) = (&mut *learner, &mut failed);
    let output = run_native(
        py,
        check,
        start,
        rounds,
        checkpoints,
        progress,
        move |n, marks, out| {
            let part = playing.run(family, n, marks, out);
            *failing |= part.is_err();
            part
        },
    );
    if let (true, Some(bytes)) = (failed, before) {
        *learner = L::from_bytes(&bytes).or_raise()?;
    }
    output
}

/// What the constructor of every learner on a prefix-sum mechanism (PrivateBandit, DPFTRL, NoisyOCO,
/// PrivateDRSubmodular) converts the same way, in the order of the core constructors' arguments.
pub struct MechanismArgs {
    /// The learner's domain (a copy of the Python domain's).
    pub domain: dponline_core::domains::Domain,
    /// The per-draw noise of the mechanism.
    pub noise: dponline_core::noise::NoiseDistribution,
    /// The mechanism releasing the prefix sums.
    pub mechanism: dponline_core::aggregation::MechanismSpec,
    /// How its noise is drawn.
    pub sampler: dponline_core::aggregation::SamplerKind,
    /// Seed material, and whether the generator is the secure one ([`crate::convert::keying`]).
    pub seed: dponline_core::rng::Seed,
    /// Whether the generator is the OS-keyed one.
    pub secure: bool,
}

impl MechanismArgs {
    /// Convert the shared constructor arguments.
    ///
    /// Raises `InvalidInputError` naming the argument (an unknown noise, mechanism or sampler, a bad scale or
    /// seed); `StateError` if the domain is in use by another thread.
    pub fn new(
        py: Python<'_>,
        domain: &Bound<'_, crate::domains::PyDomain>,
        noise: &str,
        scale: f64,
        mechanism: &str,
        sampler: &str,
        seed: Option<&Bound<'_, PyAny>>,
        secure: bool,
    ) -> PyResult<Self> {
        use crate::errors::OrRaise;
        let sampler = dponline_core::aggregation::SamplerKind::from_name(sampler).or_raise()?;
        let mechanism =
            dponline_core::aggregation::MechanismSpec::from_name(mechanism).or_raise()?;
        let domain = crate::convert::shared(domain, "domain")?.inner.clone();
        let noise = dponline_core::noise::NoiseDistribution::from_name(noise, scale).or_raise()?;
        let (seed, secure) = crate::convert::keying(py, seed, secure)?;
        Ok(Self {
            domain,
            noise,
            mechanism,
            sampler,
            seed,
            secure,
        })
    }

    /// Build the learner with the core constructor `new` (every such learner's takes these arguments, its
    /// `params` and `strict`: [`MechanismSetup`]).
    ///
    /// Raises what the core constructor raises.
    pub fn build<P, L>(
        self,
        params: P,
        strict: bool,
        new: MechanismConstructor<P, L>,
    ) -> PyResult<L> {
        use crate::errors::OrRaise;
        let setup = MechanismSetup {
            mechanism: self.mechanism,
            noise: self.noise,
            sampler: self.sampler,
            seed: self.seed,
            secure: self.secure,
            strict,
        };
        new(self.domain, params, setup).or_raise()
    }
}

/// Whether two names are equal, in a constant (the Python class name of [`py_learner!`] must be the core's
/// [`Learner::NAME`]).
pub const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Declare the Python class of a core learner with its whole protocol.
///
/// ```text
/// py_learner! {
///     /// Class docstring.
///     class PyDpFtrl(DpFtrl) as "DPFTRL";          // Rust name, core type, Python name (= Learner::NAME)
///     family: with_loss_family, "a dponline.losses family";   // how `run` reads its family argument
///     params: params_dict;                         // fn(Python, &Params) -> PyResult<Bound<PyDict>>
///     getters {
///         /// Docstring.
///         action(&learner, py) { PyArray1::from_slice(py, learner.action()) }
///     }
///     methods {
///         #[new] fn new(...) -> PyResult<Self> { ... }   // spliced into the class's #[pymethods] as written
///     }
/// }
/// ```
///
/// `family: f, args…` calls `f(obj, args…, |family| …)`, which converts the Python argument and hands the core
/// family to the closure. The class frame (borrow helpers, getters, spliced methods) is
/// [`crate::class::py_class!`]'s; each getter's `learner` is the borrowed core learner.
macro_rules! py_learner {
    (
        $(#[doc = $doc:literal])*
        class $py:ident($core:ty) as $name:literal;
        family: $with:path $(, $arg:expr)*;
        params: $params:path;
        getters {
            $( $(#[doc = $gdoc:literal])* $getter:ident(&$learner:ident, $gpy:ident) $body:block )*
        }
        methods { $($methods:tt)* }
    ) => {
        const _: () = assert!(
            $crate::learner::same_name($name, <$core as dponline_core::learners::Learner>::NAME),
            "the Python class name must be the core learner's NAME"
        );

        $crate::class::py_class! {
            $(#[doc = $doc])*
            class $py as $name () { inner: $core }
            getters {
                $( $(#[doc = $gdoc])* $getter(&this, $gpy) { let $learner = &this.inner; $body } )*
            }
            methods {
                $($methods)*

                /// Play ``rounds`` rounds natively in blocks (GIL released, Ctrl-C checked between blocks);
                /// returns ``(total_loss, clipped, cumulative_at_checkpoints)``. ``progress(n)`` is called after
                /// each block.
                #[pyo3(signature = (family, rounds, checkpoints, progress = None))]
                fn run<'py>(
                    slf: &Bound<'py, Self>,
                    family: &Bound<'py, PyAny>,
                    rounds: u64,
                    checkpoints: Vec<u64>,
                    progress: Option<&Bound<'py, PyAny>>,
                ) -> PyResult<$crate::convert::RunOutput<'py>> {
                    let py = slf.py();
                    let mut this = Self::writable(slf)?;
                    $with(family, $($arg,)* |family| {
                        $crate::learner::run_learner(py, &mut this.inner, family, rounds, &checkpoints, progress)
                    })
                }

                /// Schedule and constants, as a dict.
                #[getter]
                fn params<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
                    use dponline_core::learners::Learner;
                    $params(slf.py(), Self::readable(slf)?.inner.params())
                }

                /// Rounds completed.
                #[getter]
                fn t(slf: &Bound<'_, Self>) -> PyResult<u64> {
                    use dponline_core::learners::Learner;
                    Ok(Self::readable(slf)?.inner.t())
                }

                /// Feedback clipped to the declared bound so far.
                #[getter]
                fn clipped(slf: &Bound<'_, Self>) -> PyResult<u64> {
                    use dponline_core::learners::Learner;
                    Ok(Self::readable(slf)?.inner.clipped())
                }

                /// Serialized state (format-versioned, checksummed; as sensitive as the data).
                fn to_bytes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
                    use dponline_core::learners::Learner;
                    use $crate::errors::OrRaise;
                    let bytes = Self::readable(slf)?.inner.to_bytes().or_raise()?;
                    Ok(pyo3::types::PyBytes::new(slf.py(), &bytes))
                }

                /// Restore from :meth:`to_bytes`.
                #[staticmethod]
                fn from_bytes(state: &[u8]) -> PyResult<Self> {
                    use dponline_core::learners::Learner;
                    use $crate::errors::OrRaise;
                    Ok(Self {
                        inner: <$core>::from_bytes(state).or_raise()?,
                    })
                }
            }
        }
    };
}

pub(crate) use py_learner;
