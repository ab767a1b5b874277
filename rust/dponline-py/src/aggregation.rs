//! `dponline._core.TreeAggregator` and `dponline._core.Mechanism`: bindings of
//! `dponline_core::aggregation`.

use dponline_core::aggregation::SamplerKind;
use dponline_core::aggregation::{
    Blt, BltFit, BltObjective, KaryTree, Mechanism, MechanismSpec, PrefixSumMechanism, Readout,
    TreeAggregator, cover,
};
use dponline_core::noise::NoiseDistribution;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::convert::{detached, generator, int_arg, len_arg, matrix_owned, real_arg, with_vector};
use crate::errors::OrRaise;

/// Values pushed per native block of `push_many` between two checks for Ctrl-C.
const BLOCK_VALUES: usize = 1 << 20;

/// An option argument (`#[pyo3(from_py_with = ...)]`): one of `options`, returned as its `'static` name (so the
/// signature keeps its literal default); another name or a non-string raises `InvalidInputError` naming the
/// argument, never PyO3's `TypeError`.
fn option_arg(
    value: &Bound<'_, PyAny>,
    name: &str,
    options: &[&'static str],
) -> PyResult<&'static str> {
    let text = value.extract::<String>().ok();
    let found = text
        .as_deref()
        .and_then(|t| options.iter().find(|o| **o == t).copied());
    found.ok_or_else(|| {
        let quoted: Vec<String> = options.iter().map(|o| format!("'{o}'")).collect();
        let allowed = match quoted.as_slice() {
            [a, b] => format!("{a} or {b}"),
            _ => format!("one of {}", quoted.join(", ")),
        };
        let shown = value
            .repr()
            .map(|r| r.to_string())
            .unwrap_or_else(|_| "an object".into());
        crate::errors::invalid_input(format!("{name} must be {allowed}, got {shown}"))
    })
}

fn noise_name(value: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    option_arg(value, "noise", &["laplace", "gaussian"])
}

/// A `sampler=` argument (`"exact"` or `"floating-point"`), shared by every binding that builds a mechanism.
pub(crate) fn sampler_arg(value: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    option_arg(value, "sampler", &["exact", "floating-point"])
}

fn readout_name(value: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    option_arg(value, "readout", &["honaker", "plain"])
}

fn objective_name(value: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    option_arg(value, "objective", &["max", "mean"])
}

fn kind_name(value: &Bound<'_, PyAny>) -> PyResult<&'static str> {
    option_arg(value, "kind", &["tree", "honaker", "kary", "blt"])
}

/// The arguments every mechanism's constructor converts the same way, in the order of the checks: the sampler,
/// `dim >= 1`, `horizon >= 1` and the noise of scale `scale >= 0`.
///
/// Raises `InvalidInputError` naming the argument.
fn release_args(
    sampler: &str,
    dim: &Bound<'_, PyAny>,
    horizon: &Bound<'_, PyAny>,
    scale: &Bound<'_, PyAny>,
    noise: &str,
) -> PyResult<(SamplerKind, usize, u64, NoiseDistribution)> {
    let sampler = SamplerKind::from_name(sampler).or_raise()?;
    let dim = len_arg(dim, "dim", 1)?;
    let horizon = int_arg(horizon, "horizon", 1, None)?;
    let scale = real_arg(scale, "scale", Some(0.0), false)?;
    let dist = NoiseDistribution::from_name(noise, scale).or_raise()?;
    Ok((sampler, dim, horizon, dist))
}

/// Declare a prefix-sum mechanism class (a `subclass`able class over a core [`PrefixSumMechanism`]) with the
/// methods every mechanism shares — `push`, `push_many` (its rows pushed by `push_rows`, a
/// `fn(Python, &mut $core, &[f64]) -> PyResult<Vec<f64>>` returning the releases), `initial`, `variance`,
/// `unit_variance`, pickling and the getters below — and its own getters and methods spliced in (see
/// [`crate::class::py_class!`]).
macro_rules! py_mechanism {
    (
        $(#[doc = $doc:literal])*
        class $py:ident($core:ty) as $name:literal;
        push_rows: $push_rows:path;
        getters { $($getters:tt)* }
        methods { $($methods:tt)* }
    ) => {
        crate::class::py_class! {
            $(#[doc = $doc])*
            class $py as $name (subclass) { inner: $core }
            getters {
                $($getters)*
                /// Largest L1 column norm of the encoder (noise-bearing quantities moved per unit change of one
                /// row).
                sensitivity_l1(&this, _py) { this.inner.sensitivity_l1() }
                /// Largest L2 column norm of the encoder.
                sensitivity_l2(&this, _py) { this.inner.sensitivity_l2() }
                /// Number of pushes so far.
                t(&this, _py) { this.inner.t() }
                /// Vector dimension.
                dim(&this, _py) { this.inner.dim() }
                /// Number of pushes the mechanism was built for.
                horizon(&this, _py) { this.inner.horizon() }
                /// ``"laplace"`` or ``"gaussian"``.
                noise(&this, _py) { this.inner.noise().name() }
                /// Laplace scale ``b`` or Gaussian ``sigma`` of every noise draw.
                scale(&this, _py) { this.inner.noise().scale() }
                /// ``"exact"`` (discrete noise on a power-of-two grid) or ``"floating-point"`` (also scale 0: no
                /// noise).
                sampler(&this, _py) { this.inner.sampler().name() }
                /// The grid step ``γ`` (a power of two) every release lies on, or ``None`` on the floating-point
                /// path.
                grid(&this, _py) { this.inner.grid().map(|g| g.gamma()) }
                /// Whether noise comes from the OS-keyed ChaCha20 generator.
                secure(&this, _py) { this.inner.is_secure() }
                /// Bytes held by the mechanism's buffers (constant after construction).
                state_nbytes(&this, _py) { this.inner.state_nbytes() }
            }
            methods {
                $($methods)*

                /// Add one row ``x`` (shape ``(dim,)``) and return the release after it, shape ``(dim,)``.
                fn push<'py>(
                    slf: &Bound<'py, Self>,
                    x: &Bound<'py, PyAny>,
                ) -> PyResult<Bound<'py, PyArray1<f64>>> {
                    let py = slf.py();
                    let mut this = Self::writable(slf)?;
                    let dim = this.inner.dim();
                    let out = PyArray1::<f64>::zeros(py, dim, false);
                    // SAFETY: `out` was just created here and no other reference to it exists yet.
                    let out_slice = unsafe { out.as_slice_mut() }
                        .map_err(|e| crate::errors::invalid_input(e.to_string()))?;
                    with_vector(x, "x", dim, |x| this.inner.push(x, out_slice).or_raise())?;
                    Ok(out)
                }

                /// Push every row of ``X`` (shape ``(m, dim)``) natively; returns the ``m`` releases. Every row is
                /// validated first (an error leaves the mechanism unchanged).
                fn push_many<'py>(
                    slf: &Bound<'py, Self>,
                    xs: &Bound<'py, PyAny>,
                ) -> PyResult<Bound<'py, PyArray2<f64>>> {
                    push_many_by(slf.py(), &mut Self::writable(slf)?.inner, xs, $push_rows)
                }

                /// The release before any data (``L̃_0`` of Algorithm 3 for the tree), shape ``(dim,)``.
                fn initial<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<f64>>> {
                    Ok(PyArray1::from_slice(slf.py(), Self::readable(slf)?.inner.initial()))
                }

                /// Exact per-coordinate noise variance of the release after push ``t`` (``0 <= t <= horizon``).
                fn variance(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>) -> PyResult<f64> {
                    let t = int_arg(t, "t", 0, None)?;
                    PrefixSumMechanism::variance(&Self::readable(slf)?.inner, t).or_raise()
                }

                /// Per-coordinate noise variance of the release after push ``t`` when every draw has variance 1.
                fn unit_variance(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>) -> PyResult<f64> {
                    let t = int_arg(t, "t", 0, None)?;
                    Self::readable(slf)?.inner.unit_variance(t).or_raise()
                }

                /// The largest :meth:`unit_variance` over ``0 <= t <= horizon`` (exact).
                fn max_unit_variance(slf: &Bound<'_, Self>) -> PyResult<f64> {
                    Self::readable(slf)?.inner.max_unit_variance().or_raise()
                }

                /// The serialized state (what the Python subclass pickles; format-versioned, checksummed).
                fn __getstate__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
                    let bytes = Self::readable(slf)?.inner.to_bytes().or_raise()?;
                    Ok(PyBytes::new(slf.py(), &bytes))
                }

                /// Restore the state in place from :meth:`__getstate__` (the subclass's instance is kept).
                fn __setstate__(slf: &Bound<'_, Self>, state: &[u8]) -> PyResult<()> {
                    let restored = <$core>::from_bytes(state).or_raise()?;
                    Self::writable(slf)?.inner = restored;
                    Ok(())
                }
            }
        }
    };
}

py_mechanism! {
    /// Private continual prefix sums by tree-based aggregation (the binary mechanism).
    ///
    /// Source: Ene, Nguyen & Vladu (2021) Appendix A, Algorithms 3-5; Agarwal & Singh (2017) Algorithm 2
    /// (padding). See ``dponline.TreeAggregator`` for the documented public class.
    class PyTreeAggregator(TreeAggregator) as "TreeAggregator";
    push_rows: push_tree_rows;
    getters {
        /// Whether every release carries exactly ``ceil(log2 horizon)`` draws.
        padded(&this, _py) { this.inner.padded() }
    }
    methods {
        #[new]
        #[pyo3(signature = (dim, horizon, *, scale, noise = "laplace", padded = true, seed = None, secure = false, sampler = "exact"))]
        fn new(
            py: Python<'_>,
            dim: &Bound<'_, PyAny>,
            horizon: &Bound<'_, PyAny>,
            scale: &Bound<'_, PyAny>,
            #[pyo3(from_py_with = noise_name)] noise: &'static str,
            #[pyo3(from_py_with = crate::convert::flag)] padded: bool,
            seed: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
            #[pyo3(from_py_with = sampler_arg)] sampler: &'static str,
        ) -> PyResult<Self> {
            let (sampler, dim, horizon, dist) = release_args(sampler, dim, horizon, scale, noise)?;
            let rng = generator(py, seed, secure, 0)?;
            let inner =
                TreeAggregator::with_sampler(dim, horizon, dist, padded, sampler, rng).or_raise()?;
            Ok(PyTreeAggregator { inner })
        }

        /// Exact per-coordinate noise variance of the release after push ``t`` (``0 <= t <= horizon``).
        fn noise_variance(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>) -> PyResult<f64> {
            let this = Self::readable(slf)?;
            let t = int_arg(t, "t", 0, Some(this.inner.horizon()))?;
            this.inner.noise_variance(t).or_raise()
        }

        /// Number of noise draws in the release after push ``t``.
        fn draws_at(slf: &Bound<'_, Self>, t: &Bound<'_, PyAny>) -> PyResult<u32> {
            let this = Self::readable(slf)?;
            let t = int_arg(t, "t", 0, Some(this.inner.horizon()))?;
            Ok(this.inner.draws_at(t))
        }

        /// The tree nodes summed in the release after push ``t`` (the dyadic decomposition of ``[1, t]``, the set
        /// ``S_t`` of Algorithm 5), as ``(level, end)`` pairs: node ``(level, end)`` covers rounds
        /// ``end − 2**level + 1 .. end``.
        #[staticmethod]
        fn cover(t: &Bound<'_, PyAny>) -> PyResult<Vec<(u32, u64)>> {
            Ok(cover(int_arg(t, "t", 0, None)?).collect())
        }

        fn __getnewargs_ex__(
            _slf: &Bound<'_, Self>,
        ) -> ((usize, u64), std::collections::HashMap<&'static str, f64>) {
            ((1, 1), [("scale", 0.0)].into_iter().collect())
        }

        fn __repr__(slf: &Bound<'_, Self>) -> String {
            let Ok(this) = slf.try_borrow() else {
                return "TreeAggregator(<in use by another thread>)".into();
            };
            format!(
                "TreeAggregator(dim={}, horizon={}, noise={:?}, scale={}, padded={}, t={})",
                this.inner.dim(),
                this.inner.horizon(),
                this.inner.noise().name(),
                this.inner.noise().scale(),
                if this.inner.padded() { "True" } else { "False" },
                this.inner.t()
            )
        }
    }
}

py_mechanism! {
    /// Any prefix-sum mechanism of the core (``kind``: ``"tree"``, ``"honaker"``, ``"kary"`` or ``"blt"``).
    ///
    /// See ``dponline.aggregation.HonakerTree`` and ``dponline.aggregation.KaryTree`` for the documented public
    /// classes.
    class PyMechanism(Mechanism) as "Mechanism";
    push_rows: push_rows_at_once;
    getters {
        /// BLT decay parameters ``theta`` (``None`` for trees).
        theta(&this, _py) { blt(&this.inner).map(|m| m.theta().to_vec()) }
        /// BLT output weights ``omega`` (``None`` for trees).
        omega(&this, _py) { blt(&this.inner).map(|m| m.omega().to_vec()) }
        /// BLT: the objective the parameters were optimised for (``"mean"`` or ``"max"``; ``None`` for trees).
        objective(&this, _py) { blt(&this.inner).map(|m| m.objective().name()) }
        /// BLT: ``(iterations, loss)`` of the parameter optimiser (``None`` for explicit parameters or trees).
        fit(&this, _py) { blt(&this.inner).and_then(|m| m.fit()).map(|f| (f.iterations, f.loss)) }
        /// The exact path's extra integer sensitivity from rounding inside the encoder, ``(L1, L2)`` grid units
        /// per changed coordinate (times ``dim`` in L1, ``sqrt(dim)`` in L2): ``(0, 0)`` for the trees, ``(2ηT,
        /// 2η√T)`` for BLT (core ``aggregation::blt`` docs, the encoder-rounding Lemma).
        rounding_slack(&this, _py) { this.inner.rounding_slack() }
        /// ``"tree"``, ``"honaker"``, ``"kary"`` or ``"blt"``.
        kind(&this, _py) { this.inner.kind() }
        /// Branching factor of a tree (2 for the binary tree; ``None`` for BLT).
        k(&this, _py) {
            match base(&this.inner) {
                Mechanism::Tree(_) => Some(2),
                Mechanism::Kary(m) => Some(m.arity()),
                Mechanism::Blt(_) | Mechanism::TopUp(_) => None,
            }
        }
        /// Number of BLT buffers (``None`` for trees).
        buffers(&this, _py) { blt(&this.inner).map(|m| m.buffers()) }
        /// Tree readout: ``"plain"`` (sum of the cover's nodes) or ``"honaker"`` (BLUE of the cover's nodes);
        /// ``None`` for BLT.
        readout(&this, _py) {
            match base(&this.inner) {
                Mechanism::Tree(_) => Some("plain"),
                Mechanism::Kary(m) => Some(m.readout().name()),
                Mechanism::Blt(_) | Mechanism::TopUp(_) => None,
            }
        }
    }
    methods {
        #[new]
        #[pyo3(signature = (
            kind, dim, horizon, *, scale, noise = "laplace", k = None, readout = "honaker",
            padded = true, buffers = None, objective = "max", theta = None, omega = None, fit = None,
            seed = None, secure = false, sampler = "exact"
        ))]
        fn new(
            py: Python<'_>,
            #[pyo3(from_py_with = kind_name)] kind: &'static str,
            dim: &Bound<'_, PyAny>,
            horizon: &Bound<'_, PyAny>,
            scale: &Bound<'_, PyAny>,
            #[pyo3(from_py_with = noise_name)] noise: &'static str,
            k: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = readout_name)] readout: &'static str,
            #[pyo3(from_py_with = crate::convert::flag)] padded: bool,
            buffers: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = objective_name)] objective: &'static str,
            theta: Option<Vec<f64>>,
            omega: Option<Vec<f64>>,
            fit: Option<(u64, f64)>,
            seed: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = crate::convert::flag)] secure: bool,
            #[pyo3(from_py_with = sampler_arg)] sampler: &'static str,
        ) -> PyResult<Self> {
            let (sampler, dim, horizon, dist) = release_args(sampler, dim, horizon, scale, noise)?;
            let k = k.map_or(Ok(2), |v| int_arg(v, "k", 2, None))?;
            let buffers = match buffers {
                // At most MAX_BUFFERS = 16, so the u64 fits in a usize.
                Some(v) => int_arg(v, "buffers", 1, Some(16))? as usize,
                None => 4,
            };
            let readout = Readout::from_name(readout).or_raise()?;
            let objective = BltObjective::from_name(objective).or_raise()?;
            if !matches!(kind, "tree" | "honaker" | "kary" | "blt") {
                return Err(crate::errors::invalid_input(format!(
                    "kind must be 'tree', 'honaker', 'kary' or 'blt', got {kind:?}"
                )));
            }
            let rng = generator(py, seed, secure, 0)?;
            let inner: Mechanism = match (kind, theta, omega) {
                ("tree", _, _) => MechanismSpec::Tree { padded }
                    .build(dim, horizon, dist, sampler, rng)
                    .or_raise()?,
                ("honaker", _, _) => MechanismSpec::Honaker
                    .build(dim, horizon, dist, sampler, rng)
                    .or_raise()?,
                ("kary", _, _) => KaryTree::with_sampler(dim, horizon, k, readout, dist, sampler, rng)
                    .or_raise()?
                    .into(),
                (_, Some(theta), Some(omega)) => {
                    let fit = fit.map(|(iterations, loss)| BltFit { iterations, loss });
                    Blt::with_params(dim, horizon, &theta, &omega, dist, rng)
                        .and_then(|b| b.with_fit(objective, fit).with_sampler(sampler))
                        .or_raise()?
                        .into()
                }
                (_, None, None) => detached(py, move || {
                    Blt::new(dim, horizon, buffers, objective, dist, rng)
                        .and_then(|b| b.with_sampler(sampler))
                })?
                .into(),
                _ => {
                    return Err(crate::errors::invalid_input(
                        "theta and omega must be given together",
                    ));
                }
            };
            Ok(PyMechanism { inner })
        }

        fn __repr__(slf: &Bound<'_, Self>) -> String {
            let Ok(this) = slf.try_borrow() else {
                return "Mechanism(<in use by another thread>)".into();
            };
            let structure = match base(&this.inner) {
                Mechanism::Tree(m) => format!("padded={}", if m.padded() { "True" } else { "False" }),
                Mechanism::Kary(m) => format!("k={}, readout={:?}", m.arity(), m.readout().name()),
                Mechanism::Blt(m) => format!(
                    "buffers={}, objective={:?}",
                    m.buffers(),
                    m.objective().name()
                ),
                Mechanism::TopUp(_) => String::new(),
            };
            format!(
                "Mechanism(kind={:?}, dim={}, horizon={}, {structure}, noise={:?}, scale={}, t={})",
                this.inner.kind(),
                this.inner.dim(),
                this.inner.horizon(),
                this.inner.noise().name(),
                this.inner.noise().scale(),
                this.inner.t()
            )
        }
    }
}

/// `push_many` of a mechanism class: the rows of `xs` (shape `(m, dim)`, converted by [`matrix_owned`]) pushed
/// by `push_rows`, the `m` releases as an array of the same shape.
///
/// Raises `InvalidInputError` for a wrong shape and what `push_rows` raises.
fn push_many_by<'py, M: PrefixSumMechanism>(
    py: Python<'py>,
    mechanism: &mut M,
    xs: &Bound<'py, PyAny>,
    push_rows: fn(Python<'_>, &mut M, &[f64]) -> PyResult<Vec<f64>>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let dim = mechanism.dim();
    let (rows, data) = matrix_owned(xs, "X", dim)?;
    let out = push_rows(py, mechanism, &data)?;
    let arr = Array2::from_shape_vec((rows, dim), out)
        .map_err(|e| crate::errors::invalid_input(e.to_string()))?;
    Ok(arr.into_pyarray(py))
}

/// `push_many` of the tree: every row validated first (an error leaves the tree unchanged), then pushed in blocks
/// of [`BLOCK_VALUES`] values with the GIL released, checking for Ctrl-C between blocks (after an interrupt the tree
/// holds the rows of the whole blocks pushed; its `t` says how many). Returns the releases, row-major.
fn push_tree_rows(py: Python<'_>, tree: &mut TreeAggregator, data: &[f64]) -> PyResult<Vec<f64>> {
    let dim = tree.dim();
    let block = dim * (BLOCK_VALUES / dim).max(1);
    if data.len() > block {
        // Several blocks: all validated before the first is pushed (each block's own check cannot see the rows
        // after it). A single block is validated by the core's `push_many`.
        let tree = &*tree;
        detached(py, || tree.check_rows(data))?;
    }
    let mut out = dponline_core::alloc::zeros("push_many output", data.len()).or_raise()?;
    for (x, o) in data.chunks(block).zip(out.chunks_mut(block)) {
        py.detach(|| tree.push_many(x, o)).or_raise()?;
        py.check_signals()?;
    }
    Ok(out)
}

/// `push_many` of any mechanism: the rows pushed in one native call with the GIL released (the core validates
/// them all first). Returns the releases, row-major.
fn push_rows_at_once(
    py: Python<'_>,
    mechanism: &mut Mechanism,
    data: &[f64],
) -> PyResult<Vec<f64>> {
    detached(py, move || {
        let mut out = vec![0.0; data.len()];
        mechanism.push_many(data, &mut out)?;
        Ok(out)
    })
}

/// The mechanism under any top-up (`dponline_core::aggregation::TopUp`).
fn base(mechanism: &Mechanism) -> &Mechanism {
    match mechanism {
        Mechanism::TopUp(top) => base(top.inner()),
        other => other,
    }
}

/// The BLT inside a mechanism, if it is one.
fn blt(mechanism: &Mechanism) -> Option<&Blt> {
    match base(mechanism) {
        Mechanism::Blt(m) => Some(m),
        _ => None,
    }
}

/// The largest ``(L1, L2)`` column norms of a named mechanism's encoder at ``horizon`` (``"tree"``,
/// ``"honaker"``, ``"blt"``): what one input's change moves the released noise-bearing values by, per unit
/// change — the multiplier calibration needs. Raises ``InvalidInputError`` for an unknown name.
#[pyfunction]
pub fn mechanism_column_norms(mechanism: &str, horizon: &Bound<'_, PyAny>) -> PyResult<(f64, f64)> {
    let horizon = int_arg(horizon, "horizon", 1, None)?;
    dponline_core::aggregation::MechanismSpec::from_name(mechanism)
        .and_then(|spec| spec.column_norms(horizon))
        .or_raise()
}

/// The exact path's encoder-rounding slack ``(L1, L2)`` of a named mechanism at ``horizon`` (``"tree"``,
/// ``"honaker"``: ``(0, 0)``; ``"blt"``: ``(2ηT, 2η√T)``), grid units per changed coordinate (see
/// ``Mechanism.rounding_slack``). Raises ``InvalidInputError`` for an unknown name.
#[pyfunction]
pub fn mechanism_rounding_slack(
    mechanism: &str,
    horizon: &Bound<'_, PyAny>,
) -> PyResult<(f64, f64)> {
    let horizon = int_arg(horizon, "horizon", 1, None)?;
    dponline_core::aggregation::MechanismSpec::from_name(mechanism)
        .and_then(|spec| spec.rounding_slack(horizon))
        .or_raise()
}
