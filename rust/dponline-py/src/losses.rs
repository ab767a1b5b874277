//! `dponline._core.LossFamily`: bindings of `dponline_core::losses::LossFamily`.

use dponline_core::losses::{LossFamily, LossKind, RowOrder};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use dponline_core::alloc;

use crate::convert::{detached_polled, int_arg, py_dict, reduce_partial, rows_arg, slice, vector};
use crate::errors::{OrRaise, invalid_input};

/// Call `f` with the core family of `obj`, a loss family, else raise `InvalidInputError` saying what `run`
/// accepts (`what`): a learner's `run` takes any object, since the Python wrappers check only for an integer
/// `horizon`.
pub fn with_loss_family<R>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    f: impl FnOnce(&LossFamily) -> PyResult<R>,
) -> PyResult<R> {
    let family = obj
        .cast::<PyLossFamily>()
        .map_err(|_| invalid_input(format!("losses must be {what}")))?;
    f(&family.get().inner)
}

/// The loss kinds by name.
const KINDS: [(&str, LossKind); 2] = [
    ("linear", LossKind::Linear),
    ("portfolio", LossKind::PortfolioLogLoss),
];

fn kind_name(kind: LossKind) -> &'static str {
    match kind {
        LossKind::Linear => "linear",
        LossKind::PortfolioLogLoss => "portfolio",
    }
}

crate::class::py_class! {
    /// A stream of losses evaluated natively by learners' ``run`` (see ``dponline.losses``).
    frozen class PyLossFamily as "LossFamily" {
        pub(crate) inner: LossFamily,
        seed: Option<u64>,
        /// Bounds declared by the caller before seeing the data (see ``dponline.losses``), if any.
        lipschitz: Option<f64>,
        loss_bound: Option<f64>,
    }
    getters {
        /// The Lipschitz constant declared with the family (before seeing the data), or ``None``.
        lipschitz(&this, _py) { this.lipschitz }
        /// The bound on ``|f_t(x)|`` declared with the family (before seeing the data), or ``None``.
        loss_bound(&this, _py) { this.loss_bound }
        /// ``"linear"`` or ``"portfolio"``.
        kind(&this, _py) { kind_name(this.inner.kind()) }
        /// ``"sequential"``, ``"cycle"`` or ``"bootstrap"``.
        order(&this, _py) { this.inner.order().name() }
        /// Number of rounds.
        horizon(&this, _py) { this.inner.horizon() }
        /// Dimension of the decision.
        dim(&this, _py) { this.inner.dim() }
        /// Number of distinct data rows.
        rows(&this, _py) { this.inner.rows() }
    }
    methods {
        #[new]
        #[pyo3(signature = (kind, data, *, horizon = None, order = "sequential", seed = None, lipschitz = None, loss_bound = None))]
        fn new(
            kind: &str,
            data: &Bound<'_, PyAny>,
            horizon: Option<u64>,
            order: &str,
            seed: Option<u64>,
            lipschitz: Option<f64>,
            loss_bound: Option<f64>,
        ) -> PyResult<Self> {
            for (name, value) in [("lipschitz", lipschitz), ("loss_bound", loss_bound)] {
                if let Some(v) = value {
                    dponline_core::error::check_positive(name, v).or_raise()?;
                }
            }
            let kind = crate::convert::named("kind", kind, &KINDS)?;
            let (cols, values) = rows_arg(data, "data", "rounds, dim")?;
            let family = LossFamily::new(kind, values, cols).or_raise()?;
            let order = RowOrder::from_name(order, seed).or_raise()?;
            let horizon = horizon.unwrap_or(family.rows() as u64);
            Ok(PyLossFamily {
                inner: family.reordered(horizon, order).or_raise()?,
                seed,
                lipschitz,
                loss_bound,
            })
        }

        /// ``f_t(x)`` at round ``t`` (0-based).
        fn value(&self, t: &Bound<'_, PyAny>, x: &Bound<'_, PyAny>) -> PyResult<f64> {
            let horizon = self.inner.horizon();
            let t = int_arg(t, "t", 0, Some(horizon - 1))?;
            let x = vector(x, "x", self.inner.dim())?;
            dponline_core::error::check_finite("x", slice(&x)).or_raise()?;
            finite_loss(self.inner.value(t, slice(&x)))
        }

        /// Index of the data row used at each round, shape ``(horizon,)`` (for small horizons / inspection).
        fn row_indices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
            let what = "row_indices (one per round of the horizon)";
            let len = alloc::to_len(what, self.inner.horizon()).or_raise()?;
            let mut out: Vec<u64> = alloc::reserve(what, len).or_raise()?;
            out.extend((0..self.inner.horizon()).map(|t| self.inner.row_index(t) as u64));
            Ok(out.into_pyarray(py))
        }

        /// How many rounds use each data row, shape ``(rows,)``.
        ///
        /// Closed form for sequential and cyclic order; a bootstrap family is counted natively (GIL released,
        /// Ctrl-C checked every 2¹⁶ rounds).
        fn row_counts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
            let family = &self.inner;
            Ok(detached_polled(py, move |poll| family.row_counts(poll))?.into_pyarray(py))
        }

        /// Cumulative loss ``Σ_{s<t} f_s(x)`` of a fixed point after each checkpoint round, shape ``(k,)``.
        ///
        /// Evaluated natively (GIL released, Ctrl-C checked every 2¹⁶ rounds).
        fn cumulative_at<'py>(
            &self,
            py: Python<'py>,
            x: &Bound<'py, PyAny>,
            #[pyo3(from_py_with = crate::convert::checkpoints)] checkpoints: Vec<u64>,
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            let x = vector(x, "x", self.inner.dim())?
                .as_slice()
                .map(<[f64]>::to_vec)
                .unwrap_or_default();
            dponline_core::error::check_finite("x", &x).or_raise()?;
            let family = &self.inner;
            let out = detached_polled(py, move |poll| family.cumulative_at(&x, &checkpoints, poll))?;
            for &total in &out {
                finite_loss(total)?;
            }
            Ok(out.into_pyarray(py))
        }

        /// Constants computed from the data (``lipschitz``; for portfolio losses also ``loss_bound``). They
        /// depend on the private stream: never use them to set noise, clipping or step sizes of a private learner.
        fn empirical_bounds<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
            let d = pyo3::types::PyDict::new(py);
            d.set_item("lipschitz", self.inner.empirical_lipschitz())?;
            d.set_item("loss_bound", self.inner.empirical_portfolio_value_bound())?;
            Ok(d)
        }

        /// The data rows, shape ``(rows, dim)`` (a copy).
        #[getter]
        fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
            let flat: Vec<f64> = (0..self.inner.rows())
                .flat_map(|i| self.inner.row(i).to_vec())
                .collect();
            PyArray1::from_vec(py, flat).call_method1("reshape", (self.inner.rows(), self.inner.dim()))
        }

        fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
            let py = slf.py();
            let this = slf.get();
            let (order, kind) = (this.inner.order().name(), kind_name(this.inner.kind()));
            let kwargs = py_dict!(py, this; horizon = this.inner.horizon(), order = order, seed, lipschitz, loss_bound)?;
            reduce_partial(slf.get_type().into_any(), (kind, this.data(py)?), kwargs)
        }

        fn __repr__(&self) -> String {
            format!(
                "LossFamily(kind={:?}, rows={}, dim={}, horizon={}, order={:?})",
                kind_name(self.inner.kind()),
                self.inner.rows(),
                self.inner.dim(),
                self.inner.horizon(),
                self.inner.order().name()
            )
        }
    }
}

/// A loss value or sum handed back to Python, or `InvalidInputError` when it is not finite (a portfolio loss
/// at an `x` with `⟨r_t, x⟩ <= 0`, or a sum that overflows): never NaN or inf in an output.
fn finite_loss(v: f64) -> PyResult<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(invalid_input(format!(
            "the loss at x is {v}: x is outside the losses' domain (portfolio losses need <r_t, x> > 0) or \
             the sum overflows float64"
        )))
    }
}
