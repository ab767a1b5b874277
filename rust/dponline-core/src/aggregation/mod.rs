//! Private continual prefix sums ("continual counting"): mechanisms that, after every push of a vector
//! `x_t`, release a noisy version of the prefix sum `Σ_{s<=t} x_s`.
//!
//! Every mechanism here is **linear**: the release after push `t` is `Σ_{s<=t} x_s + (B z)_t`, where `z` is
//! a vector of i.i.d. noise draws (one per "noise-bearing quantity", e.g. a tree node) and `B` a fixed
//! decoder. Equivalently, the mechanism releases the noisy quantities `A x + z` for a fixed encoder `A`
//! (one row per quantity, one column per round) and post-processes them. Privacy under single
//! participation (one round's input replaced) is therefore exactly that of a Laplace / Gaussian mechanism
//! on `A x`, whose sensitivity is the largest L1 / L2 column norm of `A` times the per-round sensitivity:
//! [`PrefixSumMechanism::sensitivity_l1`] and [`PrefixSumMechanism::sensitivity_l2`] report those column
//! norms, and [`PrefixSumMechanism::variance`] the exact per-coordinate variance of each release.
//!
//! | mechanism | noise-bearing quantities | release |
//! | --- | --- | --- |
//! | [`TreeAggregator`] | dyadic tree nodes (binary mechanism), optionally padded | sum of the dyadic cover |
//! | [`KaryTree`] | `k`-ary tree nodes | sum of the `k`-ary cover, plain or Honaker (BLUE) weighted |
//!
//! Every mechanism also has an **exact path** ([`SamplerKind::Exact`]): inputs rounded to a power-of-two grid,
//! exact discrete noise, integer noise-bearing values, releases that are functions of those integers (the
//! `lattice` module's docs give the construction and how the rounding enters the sensitivity; BLT's real-valued
//! encoder is evaluated in integers with a bounded rounding, [`PrefixSumMechanism::rounding_slack`], its
//! module docs).
//!
//! [`Mechanism`] is the closed set of implementations as one serializable enum, so a learner can hold any
//! of them (as [`crate::domains::Domain`] does for decision sets); [`MechanismSpec`] names one without its
//! size and noise, and builds it.

/// The methods the tree, k-ary tree and BLT mechanisms answer alike from their common fields (`dim`,
/// `horizon`, `t`, `node`, `rng`, `initial`, `prefix`, `lattice`), expanded inside an impl block:
/// - `shared_methods!(guard)` in `impl lattice::Guarded`: the counts, the float path's running sums and the
///   exact state the push guard checks;
/// - `shared_methods!(mechanism)` in `impl PrefixSumMechanism`: sizes, noise law, generator, sampler kind,
///   grid, the release before any data, and both pushes through [`lattice::push_guarded`] (one guard for
///   shape, finiteness, horizon and range; "The push guard" in the lattice module).
///
/// Each mechanism writes its own structure-specific methods (variances, sensitivities, state size) beside it:
///
/// ```ignore
/// impl PrefixSumMechanism for KaryTree {
///     shared_methods!(mechanism);
///     fn unit_variance(&self, t: u64) -> Result<f64> { /* the k-ary cover's */ }
///     // ...
/// }
/// ```
macro_rules! shared_methods {
    (guard) => {
        fn counts(&self) -> (usize, u64, u64) {
            (self.dim, self.t, self.horizon)
        }
        fn running_sums(&self) -> &[f64] {
            &self.prefix
        }
        fn lattice(&mut self) -> Option<&mut Lattice> {
            self.lattice.as_mut()
        }
    };
    (mechanism) => {
        fn dim(&self) -> usize {
            self.dim
        }
        fn horizon(&self) -> u64 {
            self.horizon
        }
        fn t(&self) -> u64 {
            self.t
        }
        /// The law of every draw (on the exact path, its scale rounded up onto the grid).
        fn noise(&self) -> NoiseDistribution {
            self.node.distribution()
        }
        fn is_secure(&self) -> bool {
            self.rng.is_secure()
        }
        fn initial(&self) -> &[f64] {
            &self.initial
        }
        fn sampler(&self) -> SamplerKind {
            if self.lattice.is_some() {
                SamplerKind::Exact
            } else {
                SamplerKind::FloatingPoint
            }
        }
        /// The grid of the noise, the rounded inputs and the releases (exact path).
        fn grid(&self) -> Option<Grid> {
            self.lattice.as_ref().map(Lattice::grid)
        }
        fn push(&mut self, x: &[f64], out: &mut [f64]) -> Result<()> {
            push_guarded(self, x, out, true)
        }
        fn push_many(&mut self, xs: &[f64], out: &mut [f64]) -> Result<()> {
            push_guarded(self, xs, out, false)
        }
    };
}

mod blt;
mod kary;
mod lattice;
mod top_up;
mod tree;

pub use blt::{BLT_MAX_ITERATIONS, Blt, BltFit, BltObjective, MAX_BUFFERS, optimize_blt};
pub use kary::{KaryTree, Readout, kary_levels};
pub use lattice::SamplerKind;
pub use top_up::TopUp;
pub use tree::{TreeAggregator, ceil_log2, cover, levels_touched, padded_draws};

use serde::{Deserialize, Serialize};

use crate::error::{CoreError, Result, check_finite};
use crate::noise::NoiseDistribution;
use crate::noise::grid::Grid;
use crate::rng::Generator;
use crate::state::{from_state_bytes, to_state_bytes};

/// A continual prefix-sum mechanism over `horizon` pushes of `dim`-vectors (see the module docs).
///
/// Every method that returns an error leaves the mechanism unchanged.
pub trait PrefixSumMechanism {
    /// Vector dimension.
    fn dim(&self) -> usize;

    /// Number of pushes the mechanism was built for (`T`).
    fn horizon(&self) -> u64;

    /// Number of pushes so far.
    fn t(&self) -> u64;

    /// The distribution of every noise draw (per coordinate).
    fn noise(&self) -> NoiseDistribution;

    /// Whether the noise comes from the secure generator.
    fn is_secure(&self) -> bool;

    /// How the noise is drawn: exact discrete samplers on a grid, or the floating-point samplers (also
    /// reported for scale 0, where there is no noise).
    fn sampler(&self) -> SamplerKind;

    /// The power-of-two grid every release lies on (exact path only).
    fn grid(&self) -> Option<Grid>;

    /// The release before any data (push 0).
    fn initial(&self) -> &[f64];

    /// Add `x` (round `t+1`) and write the release after it into `out`.
    ///
    /// Errors (state unchanged): [`CoreError::Shape`] if `x` or `out` is not of length `dim`;
    /// [`CoreError::NonFinite`] for NaN/inf in `x`; [`CoreError::HorizonExhausted`] after `horizon` pushes.
    fn push(&mut self, x: &[f64], out: &mut [f64]) -> Result<()>;

    /// Push the rows of the row-major `(m, dim)` matrix `xs`, writing the `m` releases into `out`.
    ///
    /// All rows are validated before any is pushed, so an error leaves the mechanism unchanged.
    fn push_many(&mut self, xs: &[f64], out: &mut [f64]) -> Result<()>;

    /// Per-coordinate variance of the noise of the release after push `t` (`0 <= t <= horizon`) when every
    /// noise draw has variance 1: `Σ_i B_{t,i}²`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `t > horizon`.
    fn unit_variance(&self, t: u64) -> Result<f64>;

    /// Exact per-coordinate variance of the noise of the release after push `t` at the configured noise:
    /// `unit_variance(t) · Var(one draw)`.
    ///
    /// Errors: as [`PrefixSumMechanism::unit_variance`].
    fn variance(&self, t: u64) -> Result<f64> {
        Ok(self.unit_variance(t)? * self.noise().variance())
    }

    /// `max_{0 <= t <= horizon} unit_variance(t)`: the largest per-coordinate noise variance of any release
    /// at unit draws (what a top-up to identically distributed releases raises every release to, see
    /// [`crate::learners::DpFtrl::with_top_up`]). Exact, in `O(log T)` evaluations of
    /// [`PrefixSumMechanism::unit_variance`] for the trees and one for BLT (see each implementation).
    fn max_unit_variance(&self) -> Result<f64>;

    /// Largest L1 norm of a column of the encoder `A`: the L1 distance the noise-bearing quantities move
    /// (summed over them, per coordinate) when one round's input changes by 1. Laplace calibration:
    /// `scale = Δ₁ · sensitivity_l1 / ε`.
    fn sensitivity_l1(&self) -> f64;

    /// Largest L2 norm of a column of the encoder `A`. Gaussian calibration: the release sequence is one
    /// Gaussian mechanism with L2 sensitivity `Δ₂ · sensitivity_l2`.
    fn sensitivity_l2(&self) -> f64;

    /// The exact path's extra integer sensitivity from rounding *inside* the encoder, `(L1, L2)` in grid units
    /// per changed coordinate of the row (times `dim` in L1, `√dim` in L2): added to the column norm times the
    /// grid Lemma's bound (`super::lattice`). `(0, 0)` for the trees (0/1 encoders, integer node sums);
    /// BLT's from its Lemma (its module docs). Depends on the structure only, not on the sampler or scale.
    fn rounding_slack(&self) -> (f64, f64) {
        (0.0, 0.0)
    }

    /// Bytes held by the mechanism's buffers (constant after construction).
    fn state_nbytes(&self) -> usize;
}

/// The largest of `weight(t)` over `0 <= t <= horizon` for a weight that is a sum over the base-`k` digits of
/// `t` of non-negative per-position terms, each nondecreasing in its digit (the trees' unit variances:
/// `Σ_j d_j(t)·v_j` with `v_j >= 0`).
///
/// Lemma: the maximum is attained at `horizon` or at one of the candidates `c_i` obtained from `horizon` by
/// lowering one non-zero digit `i` by one and setting every lower digit to `k − 1`. Proof: for `t < horizon`
/// let `i` be the highest position where the digits differ; then `d_i(t) < d_i(horizon)`, so `d_i(horizon) > 0`,
/// and every digit of `t` is at most the same digit of `c_i` (equal above `i`, `<= d_i(horizon) − 1` at `i`,
/// `<= k − 1` below); the weight is monotone in each digit, so `weight(t) <= weight(c_i)`, and `c_i < horizon`.
///
/// Errors: those of `weight`.
pub(crate) fn max_over_digits(
    horizon: u64,
    k: u64,
    weight: impl Fn(u64) -> Result<f64>,
) -> Result<f64> {
    let mut best = weight(horizon)?;
    let mut place: u64 = 1; // k^i
    let mut below: u64 = 0; // the number whose i lowest digits are all k − 1
    loop {
        let digit = (horizon / place) % k;
        if digit > 0 {
            let candidate = (horizon / place - 1) * place + below;
            best = best.max(weight(candidate)?);
        }
        match place.checked_mul(k) {
            Some(next) if next <= horizon => {
                below += (k - 1) * place;
                place = next;
            }
            _ => break,
        }
    }
    Ok(best)
}

/// Refuse a mechanism of no coordinates or no rounds.
///
/// Errors: [`CoreError::InvalidArgument`] naming `dim` if `dim == 0`, else naming `horizon` if `horizon == 0`.
pub(crate) fn check_sizes(dim: usize, horizon: u64) -> Result<()> {
    crate::error::check_dim(dim)?;
    crate::error::check_horizon(horizon)
}

/// Every prefix-sum mechanism dponline ships, as one serializable type.
#[derive(Debug, Serialize, Deserialize)]
pub enum Mechanism {
    /// The binary mechanism (plain or Agarwal-Singh padded).
    Tree(TreeAggregator),
    /// A `k`-ary tree with plain or Honaker-weighted readout (the Honaker tree is `k = 2`, Honaker readout).
    Kary(KaryTree),
    /// A buffered-linear-Toeplitz matrix factorisation (boxed: its derived spectrum makes it the largest).
    Blt(Box<Blt>),
    /// Another mechanism's releases topped up to identically distributed Gaussian noise ([`TopUp`]).
    TopUp(Box<TopUp>),
}

macro_rules! dispatch {
    ($self:expr, $m:ident => $body:expr) => {
        match $self {
            Mechanism::Tree($m) => $body,
            Mechanism::Kary($m) => $body,
            Mechanism::Blt($m) => $body,
            Mechanism::TopUp($m) => $body,
        }
    };
}

impl PrefixSumMechanism for Mechanism {
    fn dim(&self) -> usize {
        dispatch!(self, m => m.dim())
    }
    fn horizon(&self) -> u64 {
        dispatch!(self, m => m.horizon())
    }
    fn t(&self) -> u64 {
        dispatch!(self, m => m.t())
    }
    fn noise(&self) -> NoiseDistribution {
        dispatch!(self, m => m.noise())
    }
    fn is_secure(&self) -> bool {
        dispatch!(self, m => m.is_secure())
    }
    fn sampler(&self) -> SamplerKind {
        dispatch!(self, m => m.sampler())
    }
    fn grid(&self) -> Option<Grid> {
        dispatch!(self, m => m.grid())
    }
    fn initial(&self) -> &[f64] {
        dispatch!(self, m => m.initial())
    }
    #[inline]
    fn push(&mut self, x: &[f64], out: &mut [f64]) -> Result<()> {
        dispatch!(self, m => m.push(x, out))
    }
    fn push_many(&mut self, xs: &[f64], out: &mut [f64]) -> Result<()> {
        dispatch!(self, m => m.push_many(xs, out))
    }
    fn unit_variance(&self, t: u64) -> Result<f64> {
        dispatch!(self, m => m.unit_variance(t))
    }
    fn variance(&self, t: u64) -> Result<f64> {
        dispatch!(self, m => m.variance(t))
    }
    fn max_unit_variance(&self) -> Result<f64> {
        dispatch!(self, m => m.max_unit_variance())
    }
    fn sensitivity_l1(&self) -> f64 {
        dispatch!(self, m => m.sensitivity_l1())
    }
    fn sensitivity_l2(&self) -> f64 {
        dispatch!(self, m => m.sensitivity_l2())
    }
    fn rounding_slack(&self) -> (f64, f64) {
        dispatch!(self, m => m.rounding_slack())
    }
    fn state_nbytes(&self) -> usize {
        dispatch!(self, m => m.state_nbytes())
    }
}

impl Mechanism {
    /// Short name of the implementation: `"tree"`, `"honaker"` (a binary tree with Honaker readout),
    /// `"kary"` or `"blt"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Mechanism::Tree(_) => "tree",
            Mechanism::Kary(m) if m.arity() == 2 && m.readout() == Readout::Honaker => "honaker",
            Mechanism::Kary(_) => "kary",
            Mechanism::Blt(_) => "blt",
            Mechanism::TopUp(m) => m.inner().kind(),
        }
    }

    /// Serialize the whole state (format-versioned). The bytes contain unreleased exact sums and noise:
    /// treat them as sensitive as the raw data.
    ///
    /// Errors: [`CoreError::State`] (not expected in practice).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        to_state_bytes(self)
    }

    /// Restore a state written by [`Mechanism::to_bytes`]; the restored mechanism continues bit-identically.
    ///
    /// Errors: [`CoreError::State`] for corrupt bytes, another format version or an inconsistent state.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        from_state_bytes(bytes)
    }
}

/// Which mechanism to build, without its size or noise: what a learner's `mechanism=` argument can hold.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum MechanismSpec {
    /// [`TreeAggregator`], padded or not.
    Tree {
        /// Agarwal-Singh padding.
        padded: bool,
    },
    /// [`KaryTree::honaker`].
    Honaker,
    /// [`KaryTree::new`] with branching factor `k` and a readout.
    Kary {
        /// Branching factor (>= 2).
        k: u64,
        /// Plain or Honaker readout.
        readout: Readout,
    },
    /// [`Blt::new`]: parameters optimised for the horizon.
    Blt {
        /// Number of buffers (1..=16).
        buffers: usize,
        /// The optimiser's objective.
        objective: BltObjective,
    },
}

impl MechanismSpec {
    /// The mechanisms a learner's `mechanism=` accepts by name: `"tree"` (the padded binary tree, the papers'
    /// choice), `"honaker"` ([`KaryTree::honaker`]) and `"blt"` (6 buffers, parameters optimised for the
    /// largest per-round error).
    ///
    /// Errors: [`crate::CoreError::InvalidArgument`] for another name.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "tree" => Ok(MechanismSpec::Tree { padded: true }),
            "honaker" => Ok(MechanismSpec::Honaker),
            "blt" => Ok(MechanismSpec::Blt {
                buffers: 6,
                objective: BltObjective::Max,
            }),
            other => Err(crate::CoreError::invalid(
                "mechanism",
                "'tree', 'honaker' or 'blt'",
                format!("{other:?}"),
            )),
        }
    }

    /// Build the mechanism for `horizon` pushes of `dim`-vectors with per-draw `noise`, drawn by `sampler`.
    ///
    /// Errors: those of the chosen constructor (for BLT, [`Blt::with_sampler`]'s too).
    pub fn build(
        &self,
        dim: usize,
        horizon: u64,
        noise: NoiseDistribution,
        sampler: SamplerKind,
        rng: Generator,
    ) -> Result<Mechanism> {
        Ok(match *self {
            MechanismSpec::Tree { padded } => {
                TreeAggregator::with_sampler(dim, horizon, noise, padded, sampler, rng)?.into()
            }
            MechanismSpec::Honaker => {
                KaryTree::with_sampler(dim, horizon, 2, Readout::Honaker, noise, sampler, rng)?
                    .into()
            }
            MechanismSpec::Kary { k, readout } => {
                KaryTree::with_sampler(dim, horizon, k, readout, noise, sampler, rng)?.into()
            }
            MechanismSpec::Blt { buffers, objective } => {
                Blt::new(dim, horizon, buffers, objective, noise, rng)?
                    .with_sampler(sampler)?
                    .into()
            }
        })
    }

    /// The encoder's largest `(L1, L2)` column norms at `horizon` (what calibration needs before the
    /// mechanism is built; for BLT this runs the optimiser once).
    ///
    /// Errors: those of the chosen constructor.
    pub fn column_norms(&self, horizon: u64) -> Result<(f64, f64)> {
        let probe = self.probe(horizon)?;
        Ok((probe.sensitivity_l1(), probe.sensitivity_l2()))
    }

    /// The exact path's [`PrefixSumMechanism::rounding_slack`] at `horizon` (`(0, 0)` for the trees).
    ///
    /// Errors: those of the chosen constructor.
    pub fn rounding_slack(&self, horizon: u64) -> Result<(f64, f64)> {
        Ok(self.probe(horizon)?.rounding_slack())
    }

    /// The noiseless one-coordinate mechanism: its structure, without noise.
    fn probe(&self, horizon: u64) -> Result<Mechanism> {
        self.build(
            1,
            horizon,
            NoiseDistribution::Gaussian { sigma: 0.0 },
            SamplerKind::FloatingPoint,
            Generator::from_seed([0; 4]),
        )
    }
}

impl From<TreeAggregator> for Mechanism {
    fn from(m: TreeAggregator) -> Self {
        Mechanism::Tree(m)
    }
}

impl From<Blt> for Mechanism {
    fn from(m: Blt) -> Self {
        Mechanism::Blt(Box::new(m))
    }
}

impl From<KaryTree> for Mechanism {
    fn from(m: KaryTree) -> Self {
        Mechanism::Kary(m)
    }
}

/// Validate one pushed row and its output buffer.
pub(crate) fn check_push(dim: usize, x: &[f64], out: &[f64]) -> Result<()> {
    if x.len() != dim {
        return Err(CoreError::Shape {
            name: "x",
            expected: format!("length dim={dim}"),
            got: format!("length {}", x.len()),
        });
    }
    check_finite("x", x)?;
    if out.len() != dim {
        return Err(CoreError::Shape {
            name: "out",
            expected: format!("length dim={dim}"),
            got: format!("length {}", out.len()),
        });
    }
    Ok(())
}

/// Validate a block of rows for `push_many`; returns the number of rows.
pub(crate) fn check_block(dim: usize, xs: &[f64], out: &[f64]) -> Result<u64> {
    if dim == 0 || xs.len() % dim != 0 || out.len() != xs.len() {
        return Err(CoreError::Shape {
            name: "X",
            expected: format!("shape (m, {dim}) with output of the same shape"),
            got: format!("{} values (output {})", xs.len(), out.len()),
        });
    }
    check_finite("X", xs)?;
    Ok((xs.len() / dim) as u64)
}

/// Bound on every exact running sum of the [`KaryTree`] and [`Blt`] (as the tree's): with the noise scale capped
/// at [`crate::noise::MAX_SCALE`], no release can overflow.
const MAX_RUNNING_SUM: f64 = 1e306;

/// Error unless the running sums `prefix` stay within `±1e306` after adding every row of the row-major `xs`
/// (rows of `prefix.len()` values, already checked finite and whole).
///
/// Errors: [`CoreError::InvalidArgument`] naming `x`.
pub(crate) fn check_sums(prefix: &[f64], xs: &[f64]) -> Result<()> {
    let dim = prefix.len();
    if dim == 0 {
        return Ok(());
    }
    let too_large =
        |v: f64| CoreError::invalid("x", "such that every running sum stays within ±1e306", v);
    if xs.len() == dim {
        // The common case in one branch-free pass (vectorised); which entry fails, only when one does.
        let fine = crate::simd::dispatch(
            #[inline(always)]
            || {
                prefix
                    .iter()
                    .zip(xs)
                    .fold(true, |ok, (p, v)| ok & ((p + v).abs() <= MAX_RUNNING_SUM))
            },
        );
        if fine {
            return Ok(());
        }
        return match prefix
            .iter()
            .zip(xs)
            .find(|(p, v)| (**p + **v).abs() > MAX_RUNNING_SUM)
        {
            None => Ok(()),
            Some((_, v)) => Err(too_large(*v)),
        };
    }
    let mut sums = crate::alloc::zeros("running sums", dim)?;
    sums.copy_from_slice(prefix);
    for row in xs.chunks_exact(dim) {
        for (s, v) in sums.iter_mut().zip(row) {
            *s += v;
            if s.abs() > MAX_RUNNING_SUM {
                return Err(too_large(*v));
            }
        }
    }
    Ok(())
}

/// Error unless `rows` more pushes fit after `t` of `horizon`.
pub(crate) fn check_room(what: &'static str, t: u64, horizon: u64, rows: u64) -> Result<()> {
    match t.checked_add(rows) {
        Some(end) if end <= horizon => Ok(()),
        _ => Err(CoreError::HorizonExhausted { what, horizon }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each push of a row `(x, len(out))` in `rows` and of a block in `blocks` (into an output as long) is
    /// refused, and the state bytes (`state`) stay what they were; `label` names the mechanism in failures.
    pub(super) fn assert_refused_unchanged<M: PrefixSumMechanism>(
        m: &mut M,
        state: impl Fn(&M) -> Vec<u8>,
        label: &str,
        rows: &[(&[f64], usize)],
        blocks: &[&[f64]],
    ) {
        let before = state(m);
        for &(x, len) in rows {
            assert!(m.push(x, &mut vec![0.0; len]).is_err(), "{label} {x:?}");
        }
        for &xs in blocks {
            assert!(
                m.push_many(xs, &mut vec![0.0; xs.len()]).is_err(),
                "{label} {xs:?}"
            );
        }
        assert_eq!(state(m), before, "{label}");
    }

    /// The state bytes of a [`Mechanism`], for the helpers above.
    fn bytes(m: &Mechanism) -> Vec<u8> {
        m.to_bytes().unwrap()
    }

    /// A 3-dimensional mechanism restored (`restore`) after 17 pushes continues with the original's next 20
    /// releases, bit for bit.
    pub(super) fn assert_restore_continues<M: PrefixSumMechanism>(
        a: &mut M,
        restore: impl Fn(&M) -> M,
    ) {
        let mut out_a = [0.0; 3];
        for _ in 0..17 {
            a.push(&[1.0, 2.0, 3.0], &mut out_a).unwrap();
        }
        let mut b = restore(a);
        let mut out_b = [0.0; 3];
        for _ in 0..20 {
            a.push(&[0.5, 0.0, -1.0], &mut out_a).unwrap();
            b.push(&[0.5, 0.0, -1.0], &mut out_b).unwrap();
            assert_eq!(out_a, out_b);
        }
    }

    /// A noiseless 2-dimensional mechanism (`label` names it in failures) releases the running sum of the rows
    /// `(0.1 t, −1/(t + 1))` bit for bit at every push up to its horizon, and refuses the push after it.
    pub(super) fn assert_noiseless_sums<M: PrefixSumMechanism>(m: &mut M, label: &str) {
        let mut out = [0.0; 2];
        let mut sum = [0.0; 2];
        for t in 0..m.horizon() {
            let x = [0.1 * t as f64, -1.0 / (t as f64 + 1.0)];
            m.push(&x, &mut out).unwrap();
            sum[0] += x[0];
            sum[1] += x[1];
            assert_eq!(out, sum, "{label}");
        }
        assert!(matches!(
            m.push(&[0.0, 0.0], &mut out),
            Err(CoreError::HorizonExhausted { .. })
        ));
    }

    fn all(dim: usize, horizon: u64, noise: NoiseDistribution) -> Vec<Mechanism> {
        let g = |s: u64| Generator::from_seed([s, 1, 2, 3]);
        vec![
            TreeAggregator::new(dim, horizon, noise, true, g(1))
                .unwrap()
                .into(),
            TreeAggregator::new(dim, horizon, noise, false, g(2))
                .unwrap()
                .into(),
            KaryTree::honaker(dim, horizon, noise, g(3)).unwrap().into(),
            KaryTree::new(dim, horizon, 3, Readout::Plain, noise, g(4))
                .unwrap()
                .into(),
            KaryTree::new(dim, horizon, 4, Readout::Honaker, noise, g(5))
                .unwrap()
                .into(),
            KaryTree::new(dim, horizon, 16, Readout::Plain, noise, g(6))
                .unwrap()
                .into(),
            Blt::new(dim, horizon, 3, BltObjective::Max, noise, g(7))
                .unwrap()
                .into(),
        ]
    }

    #[test]
    fn max_unit_variance_is_the_largest_over_every_release() {
        let noise = NoiseDistribution::gaussian(1.0).unwrap();
        for horizon in [1u64, 2, 3, 7, 8, 9, 100, 255, 256, 257, 1000] {
            for m in all(1, horizon, noise) {
                let brute = (0..=horizon)
                    .map(|t| m.unit_variance(t).unwrap())
                    .fold(f64::NEG_INFINITY, f64::max);
                let max = m.max_unit_variance().unwrap();
                assert!(
                    (max - brute).abs() <= 1e-12 * brute.max(1.0),
                    "{} T={horizon}: {max} vs {brute}",
                    m.kind()
                );
            }
        }
    }

    /// Every mechanism with an exact path, built with [`SamplerKind::Exact`].
    /// Push zeros `horizon` times: the per-coordinate second moment of every release matches `variance(t)`
    /// within 6 sd, `sqrt(excess / dim)` relative (`excess` = kurtosis − 1 of one coordinate's noise).
    fn assert_release_variances(m: &mut Mechanism, dim: usize, horizon: u64, excess: f64) {
        let zeros = vec![0.0; dim];
        let mut out = vec![0.0; dim];
        for t in 1..=horizon {
            m.push(&zeros, &mut out).unwrap();
            let var = out.iter().map(|v| v * v).sum::<f64>() / dim as f64;
            let expected = m.variance(t).unwrap();
            assert!(
                (var / expected - 1.0).abs() < 6.0 * (excess / dim as f64).sqrt(),
                "{} {:?} t={t} var={var} expected={expected}",
                m.kind(),
                m.noise()
            );
        }
    }

    fn all_exact(dim: usize, horizon: u64, noise: NoiseDistribution) -> Vec<Mechanism> {
        let specs = [
            MechanismSpec::Tree { padded: true },
            MechanismSpec::Tree { padded: false },
            MechanismSpec::Honaker,
            MechanismSpec::Kary {
                k: 3,
                readout: Readout::Plain,
            },
            MechanismSpec::Kary {
                k: 4,
                readout: Readout::Honaker,
            },
            MechanismSpec::Blt {
                buffers: 3,
                objective: BltObjective::Max,
            },
        ];
        specs
            .iter()
            .zip(10u64..)
            .map(|(spec, s)| {
                spec.build(
                    dim,
                    horizon,
                    noise,
                    SamplerKind::Exact,
                    Generator::from_seed([s, 1, 2, 3]),
                )
                .unwrap()
            })
            .collect()
    }

    #[test]
    fn exact_releases_are_integers_on_the_grid_and_carry_the_rounded_data() {
        // Laplace scale 3: grid 2^(1 - 30), t = ceil(3 / γ) units. Tree and plain readouts: release/γ minus the
        // rounded running sum is the integer noise of the cover (within its bound); Honaker: release on the grid
        // only up to the float readout, so only the plain ones are checked for integrality.
        for noise in [
            NoiseDistribution::Laplace { scale: 3.0 },
            NoiseDistribution::Gaussian { sigma: 3.0 },
        ] {
            for mut m in all_exact(3, 40, noise) {
                let grid = m.grid().unwrap();
                assert_eq!(grid.exponent, 1 - 30);
                assert_eq!(m.sampler(), SamplerKind::Exact);
                assert!(m.noise().scale() >= 3.0 && m.noise().scale() < 3.0 * (1.0 + 1e-9));
                let gamma = grid.gamma();
                let plain = match &m {
                    Mechanism::Tree(_) => true,
                    Mechanism::Kary(k) => k.readout() == Readout::Plain,
                    Mechanism::Blt(_) | Mechanism::TopUp(_) => false,
                };
                let mut sum = [0i128; 3];
                let mut out = [0.0; 3];
                for t in 0..40 {
                    let x = [0.1 * t as f64, -1.0 / (t as f64 + 1.0), 1e-12];
                    m.push(&x, &mut out).unwrap();
                    for i in 0..3 {
                        sum[i] += grid.quantize(x[i]).unwrap() as i128;
                        let units = out[i] / gamma;
                        if plain {
                            assert_eq!(units.fract(), 0.0, "{}", m.kind());
                            let noise_units = units as i128 - sum[i];
                            assert!(noise_units.unsigned_abs() < 1 << 40, "{}", m.kind());
                        }
                        assert!(
                            (out[i] - sum[i] as f64 * gamma).abs() < 200.0,
                            "{}",
                            m.kind()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn exact_variance_matches_the_discrete_laws() {
        // 20k i.i.d. coordinates; the discrete laws' variances equal 2(tγ)^2 and (σγ)^2 to float precision at
        // 2^30 units, which is what variance(t) reports; 6 sd of the sample second moment (kurtosis of a sum of
        // Laplace draws at most 6: relative sd <= sqrt(5/20k) = 1.6%).
        let dim = 20_000;
        let horizon = 13;
        for noise in [
            NoiseDistribution::Laplace { scale: 1.5 },
            NoiseDistribution::Gaussian { sigma: 1.5 },
        ] {
            for mut m in all_exact(dim, horizon, noise) {
                assert_release_variances(&mut m, dim, horizon, 5.0);
            }
        }
    }

    #[test]
    fn exact_failed_pushes_change_nothing_and_state_restores() {
        for mut m in all_exact(2, 10, NoiseDistribution::Laplace { scale: 1.0 }) {
            let mut out = [0.0; 2];
            m.push(&[1.0, 2.0], &mut out).unwrap();
            let before = m.to_bytes().unwrap();
            let rows: [(&[f64], usize); 3] =
                [(&[f64::NAN, 0.0], 2), (&[1e300, 0.0], 2), (&[1.0], 2)];
            let blocks: [&[f64]; 2] = [&[1.0, 1.0, 1e300, 0.0], &[1.0; 20]];
            let kind = m.kind();
            assert_refused_unchanged(&mut m, bytes, kind, &rows, &blocks);
            let mut b = Mechanism::from_bytes(&before).unwrap();
            assert_eq!(b.sampler(), SamplerKind::Exact);
            let (mut out_b, mut many_a, mut many_b) = ([0.0; 2], [0.0; 4], [0.0; 4]);
            m.push(&[0.5, -3.0], &mut out).unwrap();
            b.push(&[0.5, -3.0], &mut out_b).unwrap();
            assert_eq!(out, out_b, "{}", m.kind());
            m.push_many(&[0.25, 1.0, 2.0, 3.0], &mut many_a).unwrap();
            b.push_many(&[0.25, 1.0, 2.0, 3.0], &mut many_b).unwrap();
            assert_eq!(many_a, many_b, "{}", m.kind());
        }
    }

    #[test]
    fn exact_push_many_equals_pushes() {
        let rows: Vec<f64> = (0..30).map(|i| f64::from(i) * 0.37 - 4.0).collect();
        let noise = NoiseDistribution::Gaussian { sigma: 0.5 };
        for (mut a, mut b) in all_exact(3, 10, noise)
            .into_iter()
            .zip(all_exact(3, 10, noise))
        {
            let mut many = vec![0.0; 30];
            a.push_many(&rows, &mut many).unwrap();
            let mut one = vec![0.0; 30];
            for (x, o) in rows.chunks_exact(3).zip(one.chunks_exact_mut(3)) {
                b.push(x, o).unwrap();
            }
            // Different Bits streams per call (fill vs per-row), so only the laws agree: compare the data part.
            for (u, v) in many.iter().zip(&one) {
                assert!((u - v).abs() < 40.0, "{}", a.kind());
            }
        }
    }

    #[test]
    fn exact_arguments_out_of_range_are_refused() {
        let g = || Generator::from_seed([0; 4]);
        for scale in [
            f64::NAN,
            f64::INFINITY,
            -1.0,
            1e308,
            1e-300,
            f64::MIN_POSITIVE / 2.0,
        ] {
            let noise = NoiseDistribution::Laplace { scale };
            let spec = MechanismSpec::Tree { padded: true };
            assert!(
                spec.build(1, 10, noise, SamplerKind::Exact, g()).is_err(),
                "{scale}"
            );
        }
        // The largest scale: its grid rounds it up beyond 1e150, and the state still restores.
        for spec in [MechanismSpec::Tree { padded: true }, MechanismSpec::Honaker] {
            let m = spec
                .build(
                    1,
                    4,
                    NoiseDistribution::Laplace { scale: 1e150 },
                    SamplerKind::Exact,
                    g(),
                )
                .unwrap();
            assert!(m.noise().scale() > 1e150);
            let back = Mechanism::from_bytes(&m.to_bytes().unwrap()).unwrap();
            assert_eq!(back.noise(), m.noise());
        }
        // Scale 0: no noise, nothing to protect: the floating-point path.
        let zero = MechanismSpec::Honaker
            .build(
                1,
                10,
                NoiseDistribution::Laplace { scale: 0.0 },
                SamplerKind::Exact,
                g(),
            )
            .unwrap();
        assert_eq!(
            (zero.sampler(), zero.grid()),
            (SamplerKind::FloatingPoint, None)
        );
        let blt = MechanismSpec::Blt {
            buffers: 2,
            objective: BltObjective::Max,
        };
        for scale in [f64::NAN, -1.0, 1e308, 1e-300] {
            let noise = NoiseDistribution::Gaussian { sigma: scale };
            assert!(
                blt.build(1, 10, noise, SamplerKind::Exact, g()).is_err(),
                "{scale}"
            );
        }
        let exact = blt
            .build(
                1,
                10,
                NoiseDistribution::Gaussian { sigma: 1.0 },
                SamplerKind::Exact,
                g(),
            )
            .unwrap();
        assert_eq!(exact.sampler(), SamplerKind::Exact);
        let wide = MechanismSpec::Kary {
            k: 1000,
            readout: Readout::Plain,
        };
        let noise = NoiseDistribution::Laplace { scale: 1.0 };
        assert!(
            wide.build(1, 1 << 30, noise, SamplerKind::Exact, g())
                .is_err()
        );
        assert!(
            SamplerKind::from_name("exact").is_ok() && SamplerKind::from_name("float").is_err()
        );
    }

    #[test]
    fn zero_noise_is_the_exact_prefix_sum_for_every_mechanism() {
        for mut m in all(2, 70, NoiseDistribution::Gaussian { sigma: 0.0 }) {
            let kind = m.kind();
            assert_noiseless_sums(&mut m, kind);
        }
    }

    #[test]
    fn empirical_variance_matches_variance_t() {
        // 20k i.i.d. Gaussian coordinates: the sample second moment has relative sd sqrt(2/20k) = 1%; 6 sd.
        let dim = 20_000;
        let horizon = 13;
        for mut m in all(dim, horizon, NoiseDistribution::Gaussian { sigma: 1.5 }) {
            assert_release_variances(&mut m, dim, horizon, 2.0);
        }
    }

    #[test]
    fn failed_pushes_change_nothing() {
        for mut m in all(2, 10, NoiseDistribution::Laplace { scale: 1.0 }) {
            m.push(&[1.0, 2.0], &mut [0.0; 2]).unwrap();
            let rows: [(&[f64], usize); 3] = [(&[f64::NAN, 0.0], 2), (&[1.0], 2), (&[1.0, 1.0], 3)];
            let blocks: [&[f64]; 2] = [&[1.0, 1.0, 1.0, f64::INFINITY], &[1.0; 20]];
            let kind = m.kind();
            assert_refused_unchanged(&mut m, bytes, kind, &rows, &blocks);
        }
    }

    #[test]
    fn running_sums_beyond_1e306_are_refused_unchanged() {
        for mut m in all(1, 10, NoiseDistribution::Laplace { scale: 1.0 }) {
            let mut out = [0.0];
            m.push(&[8e305], &mut out).unwrap();
            let before = m.to_bytes().unwrap();
            assert!(m.push(&[3e305], &mut out).is_err(), "{}", m.kind());
            assert!(m.push_many(&[1.0, 3e305], &mut [0.0; 2]).is_err());
            assert_eq!(m.to_bytes().unwrap(), before, "{}", m.kind());
            let r = m.push_many(&[-8e305, 1.0], &mut [0.0; 2]);
            assert!(r.is_ok(), "{} {r:?}", m.kind());
        }
    }

    #[test]
    fn blt_parameters_with_an_unstable_noise_recurrence_are_refused() {
        // Σ ω/(1 + θ) = 5/1.99 > 1: an eigenvalue of C⁻¹'s recurrence below −1 (releases overflowed to NaN).
        let noise = NoiseDistribution::Gaussian { sigma: 1.0 };
        let g = || Generator::from_seed([0; 4]);
        assert!(Blt::with_params(1, 300, &[0.99], &[5.0], noise, g()).is_err());
        assert!(Blt::with_params(1, 300, &[0.5], &[1e308], noise, g()).is_err());
        assert!(Blt::with_params(1, 300, &[0.99], &[1.9], noise, g()).is_ok());
    }

    #[test]
    fn restored_state_continues_bit_identically() {
        for mut a in all(3, 50, NoiseDistribution::Laplace { scale: 2.0 }) {
            assert_restore_continues(&mut a, |a| {
                let b = Mechanism::from_bytes(&bytes(a)).unwrap();
                assert_eq!(a.kind(), b.kind());
                b
            });
        }
    }

    #[test]
    fn specs_build_what_they_name() {
        let noise = NoiseDistribution::Gaussian { sigma: 1.0 };
        let specs = [
            (MechanismSpec::Tree { padded: true }, "tree"),
            (MechanismSpec::Honaker, "honaker"),
            (
                MechanismSpec::Kary {
                    k: 8,
                    readout: Readout::Plain,
                },
                "kary",
            ),
            (
                MechanismSpec::Blt {
                    buffers: 4,
                    objective: BltObjective::Mean,
                },
                "blt",
            ),
        ];
        for (spec, kind) in specs {
            let m = spec
                .build(
                    3,
                    1000,
                    noise,
                    SamplerKind::FloatingPoint,
                    Generator::from_seed([1, 2, 3, 4]),
                )
                .unwrap();
            assert_eq!((m.kind(), m.dim(), m.horizon()), (kind, 3, 1000));
            let (l1, l2) = spec.column_norms(1000).unwrap();
            assert_eq!((l1, l2), (m.sensitivity_l1(), m.sensitivity_l2()));
        }
        assert!(
            MechanismSpec::Kary {
                k: 1,
                readout: Readout::Plain
            }
            .build(
                1,
                10,
                noise,
                SamplerKind::Exact,
                Generator::from_seed([0; 4])
            )
            .is_err()
        );
    }

    #[test]
    fn tree_trait_matches_its_inherent_methods() {
        for horizon in [1u64, 2, 7, 8, 1000, 1024] {
            for padded in [true, false] {
                let tr = TreeAggregator::new(
                    1,
                    horizon,
                    NoiseDistribution::Laplace { scale: 1.5 },
                    padded,
                    Generator::from_seed([0; 4]),
                )
                .unwrap();
                let levels = f64::from(levels_touched(horizon));
                assert_eq!(tr.sensitivity_l1(), levels);
                assert_eq!(tr.sensitivity_l2(), levels.sqrt());
                for t in 0..=horizon.min(40) {
                    assert_eq!(
                        PrefixSumMechanism::variance(&tr, t).unwrap(),
                        tr.noise_variance(t).unwrap()
                    );
                }
            }
        }
    }
}
