//! `dponline._core.SubmodularFamily`: bindings of `dponline_core::submodular`.

use dponline_core::losses::RowOrder;
use dponline_core::submodular::{SubmodularFamily, SubmodularKind};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::convert::{int_arg, len_arg, py_dict, reduce_partial, rows_arg};
use crate::errors::{OrRaise, invalid_input};

/// `(items, values after each addition, evaluations)` of greedy.
type GreedyTuple<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>, u64);

/// Item ids `< n` from a sequence of integers; `InvalidInputError` for anything else.
pub(crate) fn items_arg(items: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<usize>> {
    let refuse = || {
        invalid_input(format!(
            "item ids must be a sequence of integers, got {items}"
        ))
    };
    crate::convert::sequence_items(items, refuse)?
        .map(|a| {
            let a = a?;
            // Plain ints directly (the per-round path); anything else through the shared rules.
            let a = if a.is_exact_instance_of::<pyo3::types::PyInt>() {
                a
            } else {
                crate::validate::integer("item id", &a, None, None)?.into_any()
            };
            a.extract::<i64>()
                .ok()
                .and_then(|a| usize::try_from(a).ok())
                .filter(|&a| a < n)
                .ok_or_else(|| invalid_input(format!("item ids must be in [0, {n}), got {a}")))
        })
        .collect()
}

/// A string argument, or `InvalidInputError` naming `name`.
fn str_arg(value: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    value
        .extract::<String>()
        .map_err(|_| invalid_input(format!("{name} must be a string, got {value}")))
}

/// The `order` argument of the family constructors (`#[pyo3(from_py_with = order_arg)]`).
fn order_arg(value: &Bound<'_, PyAny>) -> PyResult<String> {
    str_arg(value, "order")
}

/// The caller-computed ``(k, n)`` matrix of marginal gains (the experts' prefixes), row-major, for the
/// submodular learners' ``tell_gains``.
///
/// Raises `InvalidInputError` for another shape or a non-numeric value.
pub(crate) fn gains_matrix(gains: &Bound<'_, PyAny>, k: usize, n: usize) -> PyResult<Vec<f64>> {
    let (rows, data) = crate::convert::matrix_owned(gains, "gains", n)?;
    if rows != k {
        return Err(invalid_input(format!(
            "gains must have shape ({k}, {n}), got ({rows}, {n})"
        )));
    }
    Ok(data)
}

/// Item ids as an int64 array.
pub(crate) fn ids<'py>(py: Python<'py>, items: &[usize]) -> Bound<'py, PyArray1<i64>> {
    items
        .iter()
        .map(|&a| a as i64)
        .collect::<Vec<_>>()
        .into_pyarray(py)
}

/// The optional `horizon` (>= 1) and `seed` (>= 0) of a family constructor.
fn horizon_and_seed(
    horizon: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<(Option<u64>, Option<u64>)> {
    Ok((
        horizon
            .map(|h| int_arg(h, "horizon", 1, None))
            .transpose()?,
        seed.map(|s| int_arg(s, "seed", 0, None)).transpose()?,
    ))
}

impl PySubmodularFamily {
    fn finish(
        family: SubmodularFamily,
        horizon: Option<u64>,
        order: &str,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let order = RowOrder::from_name(order, seed).or_raise()?;
        let horizon = horizon.unwrap_or(family.rows() as u64);
        Ok(PySubmodularFamily {
            inner: family.reordered(horizon, order).or_raise()?,
            seed,
        })
    }

    fn order_name(&self) -> &'static str {
        self.inner.order().name()
    }
}

crate::class::py_class! {
    /// A stream of monotone submodular functions evaluated natively (see ``dponline.submodular``).
    frozen class PySubmodularFamily as "SubmodularFamily" { pub(crate) inner: SubmodularFamily, seed: Option<u64> }
    getters {
        /// ``"probabilistic_coverage"``, ``"facility_location"`` or ``"weighted_coverage"``.
        kind(&this, _py) { this.inner.kind_name() }
        /// Weighted coverage: the sorted, distinct element ids each item covers; ``None`` for other kinds.
        covers(&this, _py) { this.inner.covers() }
        /// ``"sequential"``, ``"cycle"`` or ``"bootstrap"``.
        order(&this, _py) { this.order_name() }
        /// Number of rounds.
        horizon(&this, _py) { this.inner.horizon() }
        /// ``|U|``.
        ground_set_size(&this, _py) { this.inner.ground_set_size() }
        /// Number of distinct data rows.
        rows(&this, _py) { this.inner.rows() }
    }
    methods {
        #[new]
        #[pyo3(signature = (kind, data, *, horizon = None, order = String::from("sequential"), seed = None))]
        #[pyo3(text_signature = "(kind, data, *, horizon=None, order='sequential', seed=None)")]
        fn new(
            kind: &Bound<'_, PyAny>,
            data: &Bound<'_, PyAny>,
            horizon: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = order_arg)] order: String,
            seed: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let kind = SubmodularKind::from_name(&str_arg(kind, "kind")?).or_raise()?;
            let (horizon, seed) = horizon_and_seed(horizon, seed)?;
            let (cols, values) = rows_arg(data, "data", "rows, ground_set_size")?;
            let family = SubmodularFamily::new(kind, values, cols).or_raise()?;
            Self::finish(family, horizon, &order, seed)
        }

        /// ``f_t(S)`` at round ``t`` (0-based) for item ids ``items`` (duplicates count once).
        fn value(&self, t: &Bound<'_, PyAny>, items: &Bound<'_, PyAny>) -> PyResult<f64> {
            let t = int_arg(t, "t", 0, None)?;
            let items = items_arg(items, self.inner.ground_set_size())?;
            self.inner.value(t, &items).or_raise()
        }

        /// Marginal gains ``f_t(S + a) − f_t(S)`` of every item ``a`` given ``prefix``, shape ``(n,)``.
        fn gains<'py>(
            &self,
            py: Python<'py>,
            t: &Bound<'py, PyAny>,
            prefix: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let t = int_arg(t, "t", 0, None)?;
            let n = self.inner.ground_set_size();
            let prefix = items_arg(prefix, n)?;
            let mut out = dponline_core::alloc::zeros("gains", n).or_raise()?;
            self.inner.gains(t, &prefix, &mut out).or_raise()?;
            Ok(out.into_pyarray(py))
        }

        /// Marginal gains of every item given ``prefix`` for ``F = Σ_{t<horizon} f_t``, shape ``(n,)``.
        fn summed_gains<'py>(
            &self,
            py: Python<'py>,
            prefix: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let n = self.inner.ground_set_size();
            let prefix = items_arg(prefix, n)?;
            let family = &self.inner;
            let out = crate::convert::detached_polled(py, move |poll| {
                let mut out = dponline_core::alloc::zeros("gains", n)?;
                family.summed_gains(&prefix, &mut out, poll)?;
                Ok(out)
            })?;
            Ok(out.into_pyarray(py))
        }

        /// Greedy with lazy evaluations on ``Σ_t f_t``: ``(items, values after each addition, evaluations)``.
        fn lazy_greedy<'py>(
            &self,
            py: Python<'py>,
            k: &Bound<'py, PyAny>,
        ) -> PyResult<GreedyTuple<'py>> {
            let k = len_arg(k, "k", 1)?;
            let family = &self.inner;
            let g = crate::convert::detached_polled(py, move |poll| family.lazy_greedy(k, poll))?;
            Ok((ids(py, &g.items), g.values.into_pyarray(py), g.evaluations))
        }

        /// Index of the data row used at each round, shape ``(horizon,)`` (for small horizons / inspection).
        fn row_indices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
            let horizon = self.inner.horizon();
            let len = usize::try_from(horizon).unwrap_or(usize::MAX);
            let mut out: Vec<u64> = dponline_core::alloc::reserve("row indices", len).or_raise()?;
            out.extend((0..horizon).map(|t| self.inner.row_index(t) as u64));
            Ok(out.into_pyarray(py))
        }

        /// How many rounds use each data row, shape ``(rows,)``.
        fn row_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
            let family = &self.inner;
            Ok(
                crate::convert::detached_polled(py, move |poll| family.row_counts(poll))?
                    .into_pyarray(py),
            )
        }

        /// ``Σ_{s<c} f_s(S)`` of a fixed set after each checkpoint round ``c``, shape ``(len(checkpoints),)``.
        fn cumulative_at<'py>(
            &self,
            py: Python<'py>,
            items: &Bound<'py, PyAny>,
            checkpoints: &Bound<'py, PyAny>,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let items = items_arg(items, self.inner.ground_set_size())?;
            let checkpoints = crate::convert::int_list(checkpoints, "checkpoints")?;
            let family = &self.inner;
            let out = crate::convert::detached_polled(py, move |poll| {
                family.cumulative_at(&items, &checkpoints, poll)
            })?;
            Ok(out.into_pyarray(py))
        }

        /// Weighted coverage ``f_t(S) = Σ_{j ∈ ∪_{a∈S} covers[a]} weights[t, j]`` (see
        /// ``dponline.submodular.WeightedCoverage``).
        #[staticmethod]
        #[pyo3(signature = (weights, covers, *, horizon = None, order = String::from("sequential"), seed = None))]
        #[pyo3(text_signature = "(weights, covers, *, horizon=None, order='sequential', seed=None)")]
        fn weighted_coverage(
            weights: &Bound<'_, PyAny>,
            #[pyo3(from_py_with = crate::convert::index_lists)] covers: Vec<Vec<usize>>,
            horizon: Option<&Bound<'_, PyAny>>,
            #[pyo3(from_py_with = order_arg)] order: String,
            seed: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<Self> {
            let (horizon, seed) = horizon_and_seed(horizon, seed)?;
            let (cols, values) = rows_arg(weights, "weights", "rows, elements")?;
            let family = SubmodularFamily::weighted_coverage(values, cols, &covers).or_raise()?;
            Self::finish(family, horizon, &order, seed)
        }

        /// The data rows, shape ``(rows, ground_set_size)`` — ``(rows, elements)`` for weighted coverage (a copy).
        #[getter]
        fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            PyArray1::from_slice(py, &self.inner.data().or_raise()?)
                .call_method1("reshape", (self.inner.rows(), self.inner.width()))
        }

        fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
            let py = slf.py();
            let this = slf.get();
            let order = this.order_name();
            let kwargs = py_dict!(py, this; horizon = this.inner.horizon(), order = order, seed)?;
            match this.inner.covers() {
                Some(covers) => reduce_partial(slf.get_type().getattr("weighted_coverage")?, (this.data(py)?, covers), kwargs),
                None => reduce_partial(slf.get_type().into_any(), (this.inner.kind_name(), this.data(py)?), kwargs),
            }
        }

        fn __repr__(&self) -> String {
            format!(
                "SubmodularFamily(kind={:?}, rows={}, ground_set_size={}, horizon={}, order={:?})",
                self.inner.kind_name(),
                self.inner.rows(),
                self.inner.ground_set_size(),
                self.inner.horizon(),
                self.order_name()
            )
        }
    }
}

/// Call `f` with the core family of `obj`, a `SubmodularFamily` (`TypeError` otherwise, as for a typed
/// argument).
pub fn with_submodular_family<R>(
    obj: &Bound<'_, PyAny>,
    f: impl FnOnce(&SubmodularFamily) -> PyResult<R>,
) -> PyResult<R> {
    f(&obj.cast::<PySubmodularFamily>()?.get().inner)
}
