//! `dponline._core.{Hedge, SubmodularFamily, PrivateSubmodular}`: bindings of `dponline_core::mwu`,
//! `dponline_core::submodular` and `dponline_core::learners::private_submodular`.

use dponline_core::learners::private_submodular::{
    Exploration, Feedback, PrivateSubmodular, SubmodularParams,
};
use dponline_core::losses::RowOrder;
use dponline_core::mwu::Hedge;
use dponline_core::rng::Generator;
use dponline_core::submodular::{SubmodularFamily, SubmodularKind};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::convert::{
    RunOutput, exclusive, int_arg, keying, len_arg, matrix_owned, real_arg, run_learner,
    with_vector,
};
use crate::errors::{OrRaise, invalid_input};

/// `(items, values after each addition, evaluations)` of greedy.
type GreedyTuple<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>, u64);

fn items_arg(items: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<usize>> {
    let refuse = || {
        invalid_input(format!(
            "item ids must be a sequence of integers, got {items}"
        ))
    };
    if items.is_instance_of::<pyo3::types::PyString>()
        || items.is_instance_of::<pyo3::types::PyBytes>()
    {
        return Err(refuse());
    }
    items
        .try_iter()
        .map_err(|_| refuse())?
        .map(|a| {
            let a = a?;
            // Plain ints directly (the per-round path); anything else through the shared validator.
            let a = if a.is_exact_instance_of::<pyo3::types::PyInt>() {
                a
            } else {
                crate::convert::validated(&a, "integer", "item id", &[])?
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

/// Round numbers (non-negative integers), each through the shared validator.
fn ids<'py>(py: Python<'py>, items: &[usize]) -> Bound<'py, PyArray1<i64>> {
    items
        .iter()
        .map(|&a| a as i64)
        .collect::<Vec<_>>()
        .into_pyarray(py)
}

/// Hedge over ``n`` actions in the log domain with a sum tree (documented wrapper: ``dponline.mwu.Hedge``).
#[pyclass(module = "dponline._core", name = "Hedge")]
pub struct PyHedge {
    inner: Hedge,
    rng: Generator,
}

#[pymethods]
impl PyHedge {
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
        let mut this = exclusive(slf, "Hedge")?;
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
        exclusive(slf, "Hedge")?
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
        let mut this = exclusive(slf, "Hedge")?;
        let this = &mut *this;
        // Fallible: a huge size raises MemoryError instead of aborting the process.
        let mut out: Vec<i64> = dponline_core::alloc::reserve("Hedge samples", size).or_raise()?;
        out.extend((0..size).map(|_| this.inner.sample(&mut this.rng) as i64));
        Ok(out.into_pyarray(slf.py()))
    }

    /// The sampling distribution, shape ``(n,)``.
    fn probabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mut out = dponline_core::alloc::zeros("probabilities", self.inner.len()).or_raise()?;
        self.inner.probabilities(&mut out).or_raise()?;
        Ok(out.into_pyarray(py))
    }

    /// Log-weights relative to :attr:`offset`, shape ``(n,)``.
    #[getter]
    fn log_weights<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.inner.log_weights())
    }

    /// Amount subtracted from every log-weight by renormalisation.
    #[getter]
    fn offset(&self) -> f64 {
        self.inner.offset()
    }

    /// Sum of the tree's leaves (finite, > 0).
    #[getter]
    fn total(&self) -> f64 {
        self.inner.total()
    }

    /// Learning rate.
    #[getter]
    fn eta(&self) -> f64 {
        self.inner.eta()
    }

    /// Number of actions.
    #[getter]
    fn n(&self) -> usize {
        self.inner.len()
    }

    /// Serialized state (format-versioned; a secure generator is stored as a marker and reseeds on restore).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = dponline_core::state::to_state_bytes(&(&self.inner, &self.rng)).or_raise()?;
        Ok(PyBytes::new(py, &bytes))
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
        let state = slf.borrow().to_bytes(py)?;
        let restore = slf.get_type().getattr("from_bytes")?;
        Ok((restore, (state,).into_pyobject(py)?.into_any()))
    }
}

/// A stream of monotone submodular functions evaluated natively (see ``dponline.submodular``).
#[pyclass(frozen, module = "dponline._core", name = "SubmodularFamily")]
pub struct PySubmodularFamily {
    pub(crate) inner: SubmodularFamily,
    seed: Option<u64>,
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

/// A 2-D float array of rows as `(columns, row-major values)`; `axes` names its axes in the error.
fn rows_arg(data: &Bound<'_, PyAny>, name: &str, axes: &str) -> PyResult<(usize, Vec<f64>)> {
    let shape: Vec<usize> = data
        .getattr("shape")
        .and_then(|s| s.extract())
        .unwrap_or_default();
    let [_, cols] = shape.as_slice() else {
        return Err(invalid_input(format!(
            "{name} must be a 2-D array ({axes}), got shape {shape:?}"
        )));
    };
    let (_, values) = matrix_owned(data, name, *cols)?;
    Ok((*cols, values))
}

impl PySubmodularFamily {
    fn finish(
        family: SubmodularFamily,
        horizon: Option<u64>,
        order: &str,
        seed: Option<u64>,
    ) -> PyResult<Self> {
        let order = match (order, seed) {
            ("sequential", _) => RowOrder::Sequential,
            ("cycle", _) => RowOrder::Cycle,
            ("bootstrap", Some(seed)) => RowOrder::Bootstrap { seed },
            ("bootstrap", None) => {
                return Err(invalid_input("order='bootstrap' needs an integer seed"));
            }
            (other, _) => {
                return Err(invalid_input(format!(
                    "order must be 'sequential', 'cycle' or 'bootstrap', got {other:?}"
                )));
            }
        };
        let horizon = horizon.unwrap_or(family.rows() as u64);
        Ok(PySubmodularFamily {
            inner: family.reordered(horizon, order).or_raise()?,
            seed,
        })
    }

    fn order_name(&self) -> &'static str {
        match self.inner.order() {
            RowOrder::Sequential => "sequential",
            RowOrder::Cycle => "cycle",
            RowOrder::Bootstrap { .. } => "bootstrap",
        }
    }
}

#[pymethods]
impl PySubmodularFamily {
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

    /// ``"probabilistic_coverage"``, ``"facility_location"`` or ``"weighted_coverage"``.
    #[getter]
    fn kind(&self) -> &'static str {
        self.inner.kind_name()
    }

    /// Weighted coverage: the sorted, distinct element ids each item covers; ``None`` for other kinds.
    #[getter]
    fn covers(&self) -> Option<Vec<Vec<usize>>> {
        self.inner.covers()
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

    /// ``"sequential"``, ``"cycle"`` or ``"bootstrap"``.
    #[getter]
    fn order(&self) -> &'static str {
        self.order_name()
    }

    /// Number of rounds.
    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.horizon()
    }

    /// ``|U|``.
    #[getter]
    fn ground_set_size(&self) -> usize {
        self.inner.ground_set_size()
    }

    /// Number of distinct data rows.
    #[getter]
    fn rows(&self) -> usize {
        self.inner.rows()
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
        let kwargs = PyDict::new(py);
        kwargs.set_item("horizon", this.horizon())?;
        kwargs.set_item("order", this.order_name())?;
        kwargs.set_item("seed", this.seed)?;
        let (target, args) = match this.inner.covers() {
            Some(covers) => (
                slf.get_type().getattr("weighted_coverage")?,
                (this.data(py)?, covers).into_pyobject(py)?.into_any(),
            ),
            None => (
                slf.get_type().into_any(),
                (this.kind(), this.data(py)?).into_pyobject(py)?.into_any(),
            ),
        };
        let partial = py
            .import("functools")?
            .getattr("partial")?
            .call((target,), Some(&kwargs))?;
        Ok((partial, args))
    }

    fn __repr__(&self) -> String {
        format!(
            "SubmodularFamily(kind={:?}, rows={}, ground_set_size={}, horizon={}, order={:?})",
            self.kind(),
            self.inner.rows(),
            self.inner.ground_set_size(),
            self.inner.horizon(),
            self.order_name()
        )
    }
}

fn feedback_from(name: &str) -> PyResult<Feedback> {
    match name {
        "full" => Ok(Feedback::Full),
        "bandit" => Ok(Feedback::Bandit),
        other => Err(invalid_input(format!(
            "feedback must be 'full' or 'bandit', got {other:?}"
        ))),
    }
}

fn exploration_from(name: &str) -> PyResult<Exploration> {
    match name {
        "online" => Ok(Exploration::Online),
        "presampled" => Ok(Exploration::Presampled),
        other => Err(invalid_input(format!(
            "exploration must be 'online' or 'presampled', got {other:?}"
        ))),
    }
}

fn params_dict<'py>(py: Python<'py>, p: &SubmodularParams) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ground_set_size", p.n)?;
    d.set_item("k", p.k)?;
    d.set_item("horizon", p.horizon)?;
    d.set_item("epsilon", p.epsilon)?;
    d.set_item("delta", p.delta)?;
    d.set_item(
        "feedback",
        match p.feedback {
            Feedback::Full => "full",
            Feedback::Bandit => "bandit",
        },
    )?;
    d.set_item(
        "exploration",
        match p.exploration {
            Exploration::Online => "online",
            Exploration::Presampled => "presampled",
        },
    )?;
    d.set_item("gamma", p.gamma)?;
    d.set_item("gamma_paper", p.gamma_paper)?;
    d.set_item("presampled_explores", p.presampled_explores)?;
    d.set_item("eta", p.eta)?;
    Ok(d)
}

/// Native PrivateSubmodular state machine (documented wrapper: ``dponline.PrivateSubmodular``).
#[pyclass(module = "dponline._core", name = "PrivateSubmodular")]
pub struct PyPrivateSubmodular {
    inner: PrivateSubmodular,
}

#[pymethods]
impl PyPrivateSubmodular {
    #[new]
    #[pyo3(signature = (ground_set_size, k, horizon, *, epsilon, delta, feedback = "full", exploration = "online", strict = false, seed = None, secure = false))]
    fn new(
        py: Python<'_>,
        ground_set_size: usize,
        k: usize,
        horizon: u64,
        epsilon: Option<f64>,
        delta: f64,
        feedback: &str,
        exploration: &str,
        strict: bool,
        seed: Option<&Bound<'_, PyAny>>,
        secure: bool,
    ) -> PyResult<Self> {
        let feedback = feedback_from(feedback)?;
        let exploration = exploration_from(exploration)?;
        let (words, secure) = keying(py, seed, secure)?;
        // Validate everything (with a placeholder M) before drawing M.
        let presampled = feedback == Feedback::Bandit && exploration == Exploration::Presampled;
        let probe = SubmodularParams::new(
            ground_set_size,
            k,
            horizon,
            epsilon,
            delta,
            feedback,
            exploration,
            presampled.then_some(0),
        )
        .or_raise()?;
        let m = if presampled {
            Some(PrivateSubmodular::draw_explores(horizon, probe.gamma, words, secure).or_raise()?)
        } else {
            None
        };
        let params = SubmodularParams::new(
            ground_set_size,
            k,
            horizon,
            epsilon,
            delta,
            feedback,
            exploration,
            m,
        )
        .or_raise()?;
        Ok(PyPrivateSubmodular {
            inner: PrivateSubmodular::new(params, words, secure, strict).or_raise()?,
        })
    }

    /// The set to play: distinct item ids, int64, at most ``k``.
    fn ask<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let mut this = exclusive(slf, "PrivateSubmodular")?;
        let played = this.inner.ask().or_raise()?;
        Ok(ids(slf.py(), played))
    }

    /// Full information: the row of ``f_t`` (shape ``(n,)``) of family ``kind``; returns ``f_t(S_t)``.
    #[pyo3(signature = (row, kind = "probabilistic_coverage"))]
    fn tell_row(slf: &Bound<'_, Self>, row: &Bound<'_, PyAny>, kind: &str) -> PyResult<f64> {
        let kind = SubmodularKind::from_name(kind).or_raise()?;
        let mut this = exclusive(slf, "PrivateSubmodular")?;
        let n = this.inner.params().n;
        with_vector(row, "row", n, |r| this.inner.tell_row(kind, r).or_raise())
    }

    /// Full information: the ``(k, n)`` marginal gains of the experts' prefixes and ``f_t(S_t)``.
    fn tell_gains(slf: &Bound<'_, Self>, gains: &Bound<'_, PyAny>, payoff: f64) -> PyResult<f64> {
        let mut this = exclusive(slf, "PrivateSubmodular")?;
        let (k, n) = (this.inner.params().k, this.inner.params().n);
        let (rows, data) = matrix_owned(gains, "gains", n)?;
        if rows != k {
            return Err(invalid_input(format!(
                "gains must have shape ({k}, {n}), got ({rows}, {n})"
            )));
        }
        this.inner.tell_gains(&data, payoff).or_raise()
    }

    /// Bandit: the payoff ``f_t(S_t)`` of the asked set.
    fn tell_payoff(slf: &Bound<'_, Self>, payoff: f64) -> PyResult<()> {
        exclusive(slf, "PrivateSubmodular")?
            .inner
            .tell_payoff(payoff)
            .or_raise()
    }

    /// Play ``rounds`` rounds natively in blocks (GIL released, Ctrl-C checked between blocks); returns
    /// ``(total_loss, clipped, cumulative_at_checkpoints)`` with loss ``−f_t(S_t)``.
    #[pyo3(signature = (family, rounds, checkpoints, progress = None))]
    fn run<'py>(
        slf: &Bound<'py, Self>,
        family: &Bound<'py, PySubmodularFamily>,
        rounds: u64,
        checkpoints: Vec<u64>,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<RunOutput<'py>> {
        let py = slf.py();
        let mut this = exclusive(slf, "PrivateSubmodular")?;
        let fam = &family.get().inner;
        run_learner(py, &mut this.inner, fam, rounds, &checkpoints, progress)
    }

    /// Sampling distribution of expert ``i`` (0-based), shape ``(n,)``.
    fn expert_probabilities<'py>(
        &self,
        py: Python<'py>,
        i: usize,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let experts = self.inner.experts();
        let e = experts.get(i).ok_or_else(|| {
            invalid_input(format!("i must be in [0, {}), got {i}", experts.len()))
        })?;
        let mut out = dponline_core::alloc::zeros("probabilities", e.len()).or_raise()?;
        e.probabilities(&mut out).or_raise()?;
        Ok(out.into_pyarray(py))
    }

    /// The experts' current picks ``a^1..a^k`` (with repetitions), int64.
    #[getter]
    fn picks<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        ids(py, self.inner.picks())
    }

    /// Schedule, as a dict.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        params_dict(py, self.inner.params())
    }

    /// Rounds completed.
    #[getter]
    fn t(&self) -> u64 {
        self.inner.t()
    }

    /// Whether an asked set awaits ``tell``.
    #[getter]
    fn pending(&self) -> bool {
        self.inner.pending()
    }

    /// Explore rounds so far (bandit).
    #[getter]
    fn explores(&self) -> u64 {
        self.inner.explores()
    }

    /// Feedback values clipped into ``[0, 1]`` so far.
    #[getter]
    fn clipped(&self) -> u64 {
        self.inner.clipped()
    }

    /// Serialized state (format-versioned).
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.inner.to_bytes().or_raise()?))
    }

    /// Restore from :meth:`to_bytes`.
    #[staticmethod]
    fn from_bytes(state: &[u8]) -> PyResult<Self> {
        Ok(PyPrivateSubmodular {
            inner: PrivateSubmodular::from_bytes(state).or_raise()?,
        })
    }
}
