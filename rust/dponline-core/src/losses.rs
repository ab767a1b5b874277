//! Loss families evaluated natively inside a learner's `run` loop (no call into Python per round).
//!
//! A family holds a finite matrix of rows (one row per round of the real or synthetic stream) and maps round
//! `t` (0-based) to a row by a [`RowOrder`]: in sequence, cycling, or by a seeded bootstrap (rows drawn
//! uniformly with replacement), which reaches horizons far beyond the data.
//!
//! * [`LossKind::Linear`]: `f_t(x) = ⟨c_t, x⟩`.
//! * [`LossKind::PortfolioLogLoss`]: `f_t(x) = −ln⟨r_t, x⟩` for price relatives `r_t > 0` (online portfolio
//!   selection, Cover 1991); the wealth of a constant-rebalanced portfolio `x` after `T` rounds is
//!   `exp(−Σ_t f_t(x))`.

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_finite};
use crate::interrupt::Poll;
use crate::rng::mix64;

/// How round `t` picks a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RowOrder {
    /// Row `t` (the horizon is at most the number of rows).
    Sequential,
    /// Row `t mod rows`.
    Cycle,
    /// Row `h(seed, t) mod rows` for a 64-bit mixing hash `h` (counter-based, so any round is O(1) to reach):
    /// an i.i.d. uniform bootstrap of the rows.
    Bootstrap {
        /// Seed of the resampling.
        seed: u64,
    },
}

/// The kind of loss a family evaluates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LossKind {
    /// `⟨c_t, x⟩`.
    Linear,
    /// `−ln⟨r_t, x⟩`, `r_t > 0`.
    PortfolioLogLoss,
}

/// The methods a family over a [`RowStream`] (its field `stream`) forwards to the stream: `reordered`, `rows`,
/// `horizon`, `order`, `row_index` and `row_counts`, the same for [`LossFamily`] and
/// [`crate::submodular::SubmodularFamily`]. Used inside the family's `impl` block:
///
/// ```ignore
/// impl LossFamily {
///     crate::losses::row_stream_methods!();
/// }
/// ```
macro_rules! row_stream_methods {
    () => {
        /// The same rows played for `horizon` rounds in `order`.
        ///
        /// Errors: [`crate::error::CoreError::InvalidArgument`] for `horizon == 0`, or `Sequential` with
        /// `horizon > rows`.
        pub fn reordered(
            mut self,
            horizon: u64,
            order: $crate::losses::RowOrder,
        ) -> $crate::error::Result<Self> {
            self.stream.reorder(horizon, order)?;
            Ok(self)
        }

        /// Number of distinct rows.
        pub fn rows(&self) -> usize {
            self.stream.rows()
        }

        /// Number of rounds.
        pub fn horizon(&self) -> u64 {
            self.stream.horizon()
        }

        /// The row order.
        pub fn order(&self) -> $crate::losses::RowOrder {
            self.stream.order()
        }

        /// Row used at round `t` (0-based; see [`crate::losses::row_index`]).
        #[inline]
        pub fn row_index(&self, t: u64) -> usize {
            self.stream.row_index(t)
        }

        /// How many times each row is used over the horizon (length `rows`; see [`crate::losses::row_counts`]).
        ///
        /// Errors: [`crate::error::CoreError::Allocation`]; [`crate::error::CoreError::Interrupted`] if `poll`
        /// says stop.
        pub fn row_counts(
            &self,
            poll: $crate::interrupt::Poll<'_>,
        ) -> $crate::error::Result<Vec<u64>> {
            self.stream.row_counts(poll)
        }
    };
}
pub(crate) use row_stream_methods;

/// A loss stream: `horizon` rounds drawn from `rows` rows of dimension `dim`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LossFamily {
    kind: LossKind,
    stream: RowStream,
}

/// The rows a family plays: a row-major `(rows, width)` matrix, and `horizon` rounds that pick their rows by
/// a [`RowOrder`]. Shared by [`LossFamily`] and [`crate::submodular::SubmodularFamily`].
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RowStream {
    width: usize,
    rows: usize,
    data: Vec<f64>,
    horizon: u64,
    order: RowOrder,
}

impl RowStream {
    /// The rows of `data` (row-major, `width > 0` dividing its length, checked by the caller) played in
    /// sequence (`horizon = rows`).
    pub(crate) fn sequential(data: Vec<f64>, width: usize) -> Self {
        let rows = data.len() / width;
        RowStream {
            width,
            rows,
            data,
            horizon: rows as u64,
            order: RowOrder::Sequential,
        }
    }

    /// The checks of a family's row-major matrix `data` before [`RowStream::sequential`]: non-empty, its length
    /// a multiple of `width > 0`, every entry finite. `name` is the argument the errors name, `expected` the
    /// shape asked for and `width_desc` the width as the message states it (`"dim 3"`, `"3 items"`).
    ///
    /// Errors: [`CoreError::Shape`]; [`CoreError::NonFinite`].
    pub(crate) fn check_matrix(
        name: &'static str,
        expected: &'static str,
        width_desc: core::fmt::Arguments<'_>,
        data: &[f64],
        width: usize,
    ) -> Result<()> {
        if width == 0 || data.is_empty() || data.len() % width != 0 {
            return Err(CoreError::Shape {
                name,
                expected: expected.into(),
                got: format!("{} values for {width_desc}", data.len()),
            });
        }
        check_finite(name, data)
    }

    /// Play the same rows for `horizon` rounds in `order` (unchanged on error).
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `horizon == 0`, or `Sequential` with `horizon > rows`.
    pub(crate) fn reorder(&mut self, horizon: u64, order: RowOrder) -> Result<()> {
        crate::error::check_horizon(horizon)?;
        if order == RowOrder::Sequential && horizon > self.rows as u64 {
            return Err(CoreError::invalid(
                "horizon",
                "<= the number of rows for sequential order (use cycle or bootstrap)",
                horizon,
            ));
        }
        self.horizon = horizon;
        self.order = order;
        Ok(())
    }

    /// Row length.
    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of distinct rows.
    #[inline]
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of rounds.
    #[inline]
    pub fn horizon(&self) -> u64 {
        self.horizon
    }

    /// The row order.
    #[inline]
    pub fn order(&self) -> RowOrder {
        self.order
    }

    /// The row-major matrix, `rows·width` values.
    #[inline]
    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// Row `i` (`i < rows`).
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        &self.data[i * self.width..(i + 1) * self.width]
    }

    /// Row used at round `t` (0-based; see [`row_index`]).
    #[inline]
    pub fn row_index(&self, t: u64) -> usize {
        row_index(self.order, self.rows, t)
    }

    /// How many times each row is used over the horizon (length `rows`; see [`row_counts`]).
    ///
    /// Errors: [`CoreError::Allocation`]; [`CoreError::Interrupted`] if `poll` says stop.
    pub fn row_counts(&self, poll: Poll<'_>) -> Result<Vec<u64>> {
        row_counts(self.order, self.rows, self.horizon, poll)
    }

    /// The running total after each round in `checkpoints` (sorted, each `<= horizon`) of a family's losses
    /// at a fixed decision (the `cumulative_at` of [`LossFamily`] and [`crate::submodular::SubmodularFamily`]):
    /// `add(rounds, &mut total)` adds the losses of a block of rounds `s .. e` to the total, the blocks taken in
    /// order, of at most [`crate::interrupt::POLL_ROUNDS`] rounds and cut at the checkpoints; `poll` is asked
    /// before each block.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for unsorted or out-of-range checkpoints;
    /// [`CoreError::Allocation`]; [`CoreError::Interrupted`] if `poll` says stop.
    pub(crate) fn cumulative_at(
        &self,
        checkpoints: &[u64],
        poll: Poll<'_>,
        mut add: impl FnMut(core::ops::Range<u64>, &mut f64),
    ) -> Result<Vec<f64>> {
        check_checkpoints(checkpoints, self.horizon)?;
        let mut out = crate::alloc::reserve("cumulative values", checkpoints.len())?;
        let (mut t, mut total) = (0u64, 0.0);
        for &c in checkpoints {
            while t < c {
                crate::interrupt::ask(poll)?;
                let end = c.min(t.saturating_add(crate::interrupt::POLL_ROUNDS));
                add(t..end, &mut total);
                t = end;
            }
            out.push(total);
        }
        Ok(out)
    }
}

impl RowOrder {
    /// The order named `name` (`"sequential"`, `"cycle"` or `"bootstrap"`, which needs `seed`): how the loss
    /// and submodular families' constructors read their `order` argument.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for another name, or `"bootstrap"` without a seed.
    pub fn from_name(name: &str, seed: Option<u64>) -> Result<Self> {
        match (name, seed) {
            ("sequential", _) => Ok(RowOrder::Sequential),
            ("cycle", _) => Ok(RowOrder::Cycle),
            ("bootstrap", Some(seed)) => Ok(RowOrder::Bootstrap { seed }),
            ("bootstrap", None) => Err(CoreError::invalid(
                "seed",
                "an integer (order='bootstrap' needs one)",
                "None",
            )),
            (other, _) => Err(CoreError::invalid(
                "order",
                "'sequential', 'cycle' or 'bootstrap'",
                format!("{other:?}"),
            )),
        }
    }

    /// `"sequential"`, `"cycle"` or `"bootstrap"`.
    pub fn name(self) -> &'static str {
        match self {
            RowOrder::Sequential => "sequential",
            RowOrder::Cycle => "cycle",
            RowOrder::Bootstrap { .. } => "bootstrap",
        }
    }
}

/// Row used at round `t` (0-based) of a stream of `rows` rows played in `order` (shared by every family).
#[inline]
pub fn row_index(order: RowOrder, rows: usize, t: u64) -> usize {
    match order {
        RowOrder::Sequential => t as usize,
        RowOrder::Cycle => (t % rows as u64) as usize,
        RowOrder::Bootstrap { seed } => {
            let h = mix64(mix64(seed ^ 0x6A09_E667_F3BC_C909).wrapping_add(t));
            // Lemire's multiply-shift maps 64 uniform bits to [0, rows) (bias < rows / 2^64).
            ((u128::from(h) * rows as u128) >> 64) as usize
        }
    }
}

/// How many of the rounds `0..horizon` use each of the `rows` rows in `order` (shared by every family):
/// closed-form in order or cycling, `O(horizon)` for a bootstrap order, which asks `poll` every
/// [`crate::interrupt::POLL_ROUNDS`] rounds.
///
/// Errors: [`CoreError::Allocation`]; [`CoreError::Interrupted`] if `poll` says stop.
pub fn row_counts(order: RowOrder, rows: usize, horizon: u64, poll: Poll<'_>) -> Result<Vec<u64>> {
    let mut counts: Vec<u64> = crate::alloc::zeros("row counts", rows)?;
    match order {
        RowOrder::Sequential | RowOrder::Cycle => {
            let (full, rest) = (horizon / rows as u64, horizon % rows as u64);
            for (i, c) in counts.iter_mut().enumerate() {
                *c = full + u64::from((i as u64) < rest);
            }
        }
        RowOrder::Bootstrap { .. } => {
            for t in 0..horizon {
                crate::interrupt::check(poll, t)?;
                counts[row_index(order, rows, t)] += 1;
            }
        }
    }
    Ok(counts)
}

impl LossFamily {
    /// A family over the row-major `(rows, dim)` matrix `data`, played in sequence (`horizon = rows`).
    ///
    /// Errors: [`CoreError::Shape`] for an empty or ragged matrix; [`CoreError::NonFinite`];
    /// [`CoreError::InvalidArgument`] for a non-positive price relative.
    pub fn new(kind: LossKind, data: Vec<f64>, dim: usize) -> Result<Self> {
        RowStream::check_matrix(
            "losses",
            "a non-empty 2-D array (rounds, dim)",
            format_args!("dim {dim}"),
            &data,
            dim,
        )?;
        if kind == LossKind::PortfolioLogLoss {
            if let Some(v) = data.iter().find(|&&v| v <= 0.0) {
                return Err(CoreError::invalid(
                    "relatives",
                    "> 0 everywhere (price relatives)",
                    v,
                ));
            }
        }
        Ok(LossFamily {
            kind,
            stream: RowStream::sequential(data, dim),
        })
    }

    row_stream_methods!();

    /// The loss kind.
    pub fn kind(&self) -> LossKind {
        self.kind
    }

    /// Dimension of the decision `x`.
    pub fn dim(&self) -> usize {
        self.stream.width()
    }

    /// Row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> &[f64] {
        self.stream.row(i)
    }

    /// `f_t(x)` for the row of round `t`.
    #[inline]
    pub fn value(&self, t: u64, x: &[f64]) -> f64 {
        Self::eval(self.kind, self.row(self.row_index(t)), x)
    }

    #[inline]
    fn eval(kind: LossKind, row: &[f64], x: &[f64]) -> f64 {
        let dot = crate::vecops::dot(row, x);
        match kind {
            LossKind::Linear => dot,
            LossKind::PortfolioLogLoss => -dot.ln(),
        }
    }

    /// Cumulative loss of the fixed point `x` after each round in `checkpoints` (sorted, each `<= horizon`):
    /// `Σ_{s < t} f_s(x)`, summed in blocks of [`crate::interrupt::POLL_ROUNDS`] rounds (cut at the
    /// checkpoints), asking `poll` before each block.
    ///
    /// Errors: [`CoreError::Shape`] for `x`; [`CoreError::InvalidArgument`] for unsorted or out-of-range
    /// checkpoints; [`CoreError::Interrupted`] if `poll` says stop.
    pub fn cumulative_at(
        &self,
        x: &[f64],
        checkpoints: &[u64],
        poll: Poll<'_>,
    ) -> Result<Vec<f64>> {
        crate::error::check_len("x", x, self.dim())?;
        self.stream
            .cumulative_at(checkpoints, poll, |rounds, total| {
                *total += rounds.map(|s| self.value(s, x)).sum::<f64>();
            })
    }

    /// Largest Lipschitz constant (in ‖·‖₂) of the family's losses over the probability simplex (portfolio)
    /// or over all of `R^dim` (linear): `max_t ‖c_t‖₂`, resp. `max_t ‖r_t‖₂ / min_i r_{t,i}`.
    ///
    /// Computed from the data: it depends on the stream, so it must never set the noise, clipping or step size
    /// of a private learner (declare a bound instead).
    pub fn empirical_lipschitz(&self) -> f64 {
        (0..self.rows())
            .map(|i| {
                let row = self.row(i);
                let norm = row.iter().map(|v| v * v).sum::<f64>().sqrt();
                match self.kind {
                    LossKind::Linear => norm,
                    LossKind::PortfolioLogLoss => {
                        norm / row.iter().copied().fold(f64::INFINITY, f64::min)
                    }
                }
            })
            .fold(0.0, f64::max)
    }

    /// `max_t max_{x ∈ simplex} |f_t(x)|` for the portfolio loss: `max_t max(|ln min_i r|, |ln max_i r|)`.
    /// `None` for linear losses (the bound depends on the domain). Computed from the data, like
    /// [`LossFamily::empirical_lipschitz`].
    pub fn empirical_portfolio_value_bound(&self) -> Option<f64> {
        (self.kind == LossKind::PortfolioLogLoss).then(|| {
            self.stream
                .data()
                .chunks_exact(self.dim())
                .fold(0.0f64, |acc, row| {
                    let lo = row.iter().copied().fold(f64::INFINITY, f64::min).ln().abs();
                    let hi = row.iter().copied().fold(0.0, f64::max).ln().abs();
                    acc.max(lo).max(hi)
                })
        })
    }
}

/// Validate sorted checkpoints within `0..=horizon`.
///
/// Errors: [`CoreError::InvalidArgument`].
pub fn check_checkpoints(checkpoints: &[u64], horizon: u64) -> Result<()> {
    if checkpoints.windows(2).any(|w| w[0] > w[1]) {
        return Err(CoreError::invalid(
            "checkpoints",
            "sorted in increasing order",
            "an unsorted array",
        ));
    }
    if let Some(&last) = checkpoints.last() {
        if last > horizon {
            return Err(CoreError::invalid("checkpoints", "<= horizon", last));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bootstrap_is_uniform_and_deterministic() {
        let fam = LossFamily::new(LossKind::Linear, (0..10).map(f64::from).collect(), 1)
            .unwrap()
            .reordered(100_000, RowOrder::Bootstrap { seed: 5 })
            .unwrap();
        let counts = fam.row_counts(crate::interrupt::NEVER).unwrap();
        assert_eq!(counts.iter().sum::<u64>(), 100_000);
        // Binomial(1e5, 0.1): sd ≈ 95; 6 sd.
        assert!(
            counts.iter().all(|&c| (c as f64 - 10_000.0).abs() < 570.0),
            "{counts:?}"
        );
        assert_eq!(fam.row_index(12_345), fam.clone().row_index(12_345));
    }

    #[test]
    fn portfolio_values_and_errors() {
        let fam = LossFamily::new(LossKind::PortfolioLogLoss, vec![1.0, 2.0, 0.5, 1.0], 2).unwrap();
        assert!((fam.value(0, &[0.5, 0.5]) + 1.5f64.ln()).abs() < 1e-15);
        let cum = fam
            .cumulative_at(&[1.0, 0.0], &[0, 1, 2], crate::interrupt::NEVER)
            .unwrap();
        assert_eq!(cum, vec![0.0, 0.0, -(0.5f64.ln())]);
        assert!(LossFamily::new(LossKind::PortfolioLogLoss, vec![1.0, 0.0], 2).is_err());
        assert!(LossFamily::new(LossKind::Linear, vec![1.0, f64::NAN], 2).is_err());
        assert!(fam.clone().reordered(3, RowOrder::Sequential).is_err());
        // Both rows have ‖r‖₂ / min r = √5.
        assert!((fam.empirical_lipschitz() - 5f64.sqrt()).abs() < 1e-12);
        assert!((fam.empirical_portfolio_value_bound().unwrap() - 2f64.ln()).abs() < 1e-15);
    }
}
