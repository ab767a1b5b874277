//! `k`-ary tree aggregation with a plain or Honaker-weighted (BLUE) readout; the Honaker tree is `k = 2`.
//!
//! **Tree.** Level `j` (`0 <= j < L`, `L` = the number of `j` with `k^j <= T`) has one node per block
//! `(e − k^j, e]` with `k^j | e`, `e <= T`. Each node `v` holds its block sum `S_v` plus one independent noise
//! draw `n_v` (variance `σ²` per coordinate): `y_v = S_v + n_v`. Writing `t` in base `k`,
//! `t = Σ_j d_j k^j`, the prefix `[1, t]` is the disjoint union of `d_j` consecutive nodes at each level
//! (the `k`-ary cover: at most `(k−1)·L` nodes), all complete by round `t`.
//!
//! **Readouts.** A release after round `t` may only use nodes complete by then (those with `e <= t`); every
//! such node lies inside one node of the cover, so the best linear unbiased estimate (BLUE) of the prefix
//! is the sum, over the cover, of the BLUE of each cover node's sum from its own subtree.
//!
//! * [`Readout::Plain`]: the cover nodes' noisy sums as they are, `Σ_{v ∈ cover(t)} y_v` (the classical
//!   `k`-ary mechanism). Only the nodes that appear in some cover get noise (not the last child of each
//!   parent), one draw per push. Unit variance of the release: `Σ_j d_j(t)`.
//! * [`Readout::Honaker`]: each node's sum is estimated bottom-up from its own observation and its `k`
//!   children's estimates by inverse-variance weighting (Honaker 2015, "Efficient use of differentially
//!   private binary trees"; the bottom-up pass of Hay, Rastogi, Miklau & Suciu 2010, which is the BLUE of a
//!   node from its subtree):
//!
//!   `ŝ_v = y_v` at level 0, and `ŝ_v = w_j · y_v + (1 − w_j) · Σ_{c child of v} ŝ_c` at level `j >= 1`,
//!
//!   with `w_j = v_j` and unit variances `v_0 = 1`, `v_j = 1 / (1 + 1/(k · v_{j−1}))` (the estimate of a node
//!   at level `j` has variance `v_j σ²`; the `k` children's sum has `k v_{j−1} σ²`, independent of `n_v`).
//!   For `k = 2`, `v_j = 2^j / (2^{j+1} − 1)`, decreasing to 1/2. The release is
//!   `Σ_{v ∈ cover(t)} ŝ_v`, with unit variance `Σ_j d_j(t) · v_j` (the cover nodes' subtrees are disjoint,
//!   so their errors are independent). Every complete node gets one draw (`k/(k−1)` per push on average).
//!
//! **Privacy.** An input `x_s` lies in one block per level and only in nodes with `e <= T`; round `s = 1`
//! lies in a used node at every one of the `L` levels (it is never the last child of its parent), so the
//! largest column of the encoder has `L` ones: `sensitivity_l1 = L`, `sensitivity_l2 = √L`, for both
//! readouts (the Honaker readout is post-processing of all complete nodes).
//!
//! **Computation.** Only the noise is tracked (the data part of every estimate is the exact block sum, so the
//! exact running sum is kept separately). At push `t` with `r` = the number of times `k` divides `t`, the
//! nodes at levels `0..=r` ending at `t` complete. Per coordinate the Honaker readout folds them bottom-up,
//! using `siblings[j]` (the summed errors of the already completed children of the open level-`j+1` parent),
//! and keeps `suffix[j] = Σ_{i>=j}` (errors of the completed cover nodes at level `i`), so the release noise
//! is `suffix[0]` after the update. Work `O(dim)` amortised, memory `O(dim · L)`, no allocation after
//! construction.
//!
//! **Exact path** (`super::lattice`). The plain readout keeps only noise, as above, in integer-valued rows
//! (sums of at most `(k − 1)·L <= 2¹¹` exact draws, checked at construction), and the guard adds the data's
//! integer running sum. The Honaker readout folds node **values** instead of noise: the level-0 node is the
//! pushed row in grid units plus its draw, a level-`j` node the `i128` block sum (kept in `sib_data`, the data
//! of the completed children of each open parent, as `siblings` keeps their estimates) plus its draw; each
//! integer `ỹ_v` is converted to `f64` once and the estimates are computed from those, so the release is a
//! function of the integer node values (post-processing).

/// Most draws in one release of the plain readout on the exact path (`2¹¹`): their sum is an exact integer in
/// `f64` ([`crate::noise::MAX_UNIT_DRAW`]).
const MAX_EXACT_COVER: u64 = 1 << 11;

use serde::{Deserialize, Serialize};

use super::PrefixSumMechanism;
use super::lattice::{
    Guarded, Lattice, SamplerKind, all_finite, node_sampler, push_guarded, push_rows, restored_node,
};
use crate::alloc::{checked_len, zeros};
use crate::error::{CoreError, Result};
use crate::noise::grid::Grid;
use crate::noise::{NoiseDistribution, Sampler, SumOf, WithSampler};
use crate::rng::Generator;

/// How a [`KaryTree`] turns its noisy nodes into a release (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Readout {
    /// The sum of the cover's noisy nodes.
    Plain,
    /// The sum of the cover's nodes, each estimated bottom-up from its subtree (Honaker 2015): the BLUE of
    /// the prefix from the nodes complete at release time.
    Honaker,
}

impl Readout {
    /// Parse `"plain"` or `"honaker"`.
    ///
    /// Errors: [`CoreError::InvalidArgument`] otherwise.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "plain" => Ok(Readout::Plain),
            "honaker" => Ok(Readout::Honaker),
            other => Err(CoreError::invalid(
                "readout",
                "'plain' or 'honaker'",
                format!("{other:?}"),
            )),
        }
    }

    /// `"plain"` or `"honaker"`.
    pub fn name(&self) -> &'static str {
        match self {
            Readout::Plain => "plain",
            Readout::Honaker => "honaker",
        }
    }
}

/// Number of levels of a `k`-ary tree over `horizon` rounds: the number of `j >= 0` with `k^j <= T`.
pub fn kary_levels(k: u64, horizon: u64) -> u32 {
    let mut levels = 0;
    let mut block: u64 = 1;
    while block <= horizon {
        levels += 1;
        match block.checked_mul(k) {
            Some(next) if k >= 2 => block = next,
            _ => break,
        }
    }
    levels
}

/// Unit variances `v_j` of a level-`j` node's estimate under `readout` (see the module docs).
fn unit_variances(k: u64, levels: usize, readout: Readout) -> Vec<f64> {
    let mut v = Vec::with_capacity(levels);
    let mut cur = 1.0;
    for _ in 0..levels {
        v.push(cur);
        if readout == Readout::Honaker {
            cur = 1.0 / (1.0 + 1.0 / (k as f64 * cur));
        }
    }
    v
}

crate::state::checked_state! {
    /// A `k`-ary tree for private continual prefix sums of `dim`-vectors over `horizon` rounds.
    #[derive(Debug, Serialize, Deserialize)]
    #[serde(try_from = "KaryState")]
    pub struct KaryTree via KaryState {
        dim: usize,
        horizon: u64,
        k: u64,
        readout: Readout,
        noise: NoiseDistribution,
        t: u64,
        /// Exact running sum of the inputs.
        prefix: Vec<f64>,
        /// Entry `i · L + j`: coordinate `i` of the summed errors of the completed cover nodes at levels `>= j`.
        suffix: Vec<f64>,
        /// Entry `i · L + j`: coordinate `i` of the summed errors of the completed level-`j` children of the open
        /// level-`j+1` node (Honaker readout only; empty otherwise).
        siblings: Vec<f64>,
        rng: Generator,
        /// The exact path's state (`None` on the floating-point path).
        lattice: Option<Lattice>,
        /// Entry `i · L + j`: coordinate `i` of the data (grid units) of the completed level-`j` children of the
        /// open level-`j+1` node (exact path with the Honaker readout only; empty otherwise).
        sib_data: Vec<i128>,
    }
    rebuilt {
        /// Unit variance (and Honaker weight) of a level-`j` estimate; rebuilt after deserialization.
        unit: Vec<f64>,
        /// The all-zero release before any data; rebuilt after deserialization.
        initial: Vec<f64>,
        /// One draw of the node noise; rebuilt after deserialization.
        node: SumOf,
    }
}

impl TryFrom<KaryState> for KaryTree {
    type Error = CoreError;

    fn try_from(s: KaryState) -> Result<Self> {
        let bad = || CoreError::State("KaryTree state is inconsistent".into());
        if s.dim == 0 || s.k < 2 || s.horizon == 0 || s.t > s.horizon {
            return Err(bad());
        }
        let levels = kary_levels(s.k, s.horizon) as usize;
        let rows = s.dim.checked_mul(levels).ok_or_else(bad)?;
        let sibling_rows = if s.readout == Readout::Honaker {
            rows
        } else {
            0
        };
        let values = s.lattice.is_some() && s.readout == Readout::Honaker;
        let consistent = s.prefix.len() == s.dim
            && s.suffix.len() == rows
            && s.siblings.len() == sibling_rows
            && s.sib_data.len() == if values { rows } else { 0 }
            && all_finite(&[&s.prefix, &s.suffix, &s.siblings]);
        if !consistent {
            return Err(bad());
        }
        let mut lattice = s.lattice;
        let node = restored_node(&mut lattice, s.dim, values, s.noise)?;
        Ok(KaryTree {
            dim: s.dim,
            horizon: s.horizon,
            k: s.k,
            readout: s.readout,
            noise: s.noise,
            t: s.t,
            prefix: s.prefix,
            suffix: s.suffix,
            siblings: s.siblings,
            rng: s.rng,
            lattice,
            sib_data: s.sib_data,
            unit: unit_variances(s.k, levels, s.readout),
            initial: zeros("dim", s.dim)?,
            node,
        })
    }
}

/// The per-coordinate loop of a push, monomorphic in the node sampler.
struct KaryStep<'a> {
    rng: &'a mut Generator,
    /// Levels `0..=r` complete at this push.
    r: usize,
    honaker: bool,
    unit: &'a [f64],
    prefix: &'a mut [f64],
    suffix: &'a mut [f64],
    siblings: &'a mut [f64],
    /// Exact path with the Honaker readout: the children's data; `x` is in grid units and the fold is over
    /// node values (module docs). Empty otherwise.
    sib_data: &'a mut [i128],
    x: &'a [f64],
    out: &'a mut [f64],
}

/// The value `ỹ = data + z` of a node (grid units) as a float: the integer sum converted once (`NaN` if the
/// draw failed).
#[inline(always)]
fn node_value(data: i128, z: f64) -> f64 {
    if z.is_nan() {
        f64::NAN
    } else {
        (data + z as i128) as f64
    }
}

impl WithSampler for KaryStep<'_> {
    type Output = ();
    #[inline]
    fn call<S: Sampler>(self, node: S) {
        let KaryStep {
            rng,
            r,
            honaker,
            unit,
            prefix,
            suffix,
            siblings,
            sib_data,
            x,
            out,
        } = self;
        let levels = unit.len();
        let r = r.min(levels.saturating_sub(1));
        crate::with_generator!(rng, g => {
            if !sib_data.is_empty() {
                for ((((o, xi), suf), sib), sd) in out
                    .iter_mut()
                    .zip(x)
                    .zip(suffix.chunks_exact_mut(levels))
                    .zip(siblings.chunks_exact_mut(levels))
                    .zip(sib_data.chunks_exact_mut(levels))
                {
                    // The same fold over node values: level j's block sum is its completed children's data.
                    let mut data = *xi as i128;
                    let mut cur = node_value(data, node.sample(g));
                    for ((s, d), &w) in sib[..r].iter_mut().zip(sd[..r].iter_mut()).zip(&unit[1..=r]) {
                        data += *d;
                        *d = 0;
                        cur = w * node_value(data, node.sample(g)) + (1.0 - w) * (*s + cur);
                        *s = 0.0;
                    }
                    sd[r] += data;
                    sib[r] += cur;
                    let total = suf[r] + cur;
                    suf[..=r].fill(total);
                    *o = total;
                }
            } else if honaker {
                for ((((o, p), xi), suf), sib) in out
                    .iter_mut()
                    .zip(prefix.iter_mut())
                    .zip(x)
                    .zip(suffix.chunks_exact_mut(levels))
                    .zip(siblings.chunks_exact_mut(levels))
                {
                    // Fold the nodes ending now bottom-up: level j = its own draw and its k children.
                    let mut cur = node.sample(g);
                    for (s, &w) in sib[..r].iter_mut().zip(&unit[1..=r]) {
                        cur = w * node.sample(g) + (1.0 - w) * (*s + cur);
                        *s = 0.0;
                    }
                    sib[r] += cur;
                    let total = suf[r] + cur;
                    suf[..=r].fill(total);
                    *p += *xi;
                    *o = *p + total;
                }
            } else {
                for (((o, p), xi), suf) in out
                    .iter_mut()
                    .zip(prefix.iter_mut())
                    .zip(x)
                    .zip(suffix.chunks_exact_mut(levels))
                {
                    let total = suf[r] + node.sample(g);
                    suf[..=r].fill(total);
                    *p += *xi;
                    *o = *p + total;
                }
            }
        });
    }
}

impl KaryTree {
    /// A `k`-ary tree for `horizon` pushes of `dim`-vectors with coordinate-wise `noise` per node from the
    /// floating-point samplers ([`KaryTree::with_sampler`] with [`SamplerKind::FloatingPoint`]).
    ///
    /// Errors: as [`KaryTree::with_sampler`].
    pub fn new(
        dim: usize,
        horizon: u64,
        k: u64,
        readout: Readout,
        noise: NoiseDistribution,
        rng: Generator,
    ) -> Result<Self> {
        Self::with_sampler(
            dim,
            horizon,
            k,
            readout,
            noise,
            SamplerKind::FloatingPoint,
            rng,
        )
    }

    /// A `k`-ary tree for `horizon` pushes of `dim`-vectors with coordinate-wise `noise` per node, drawn by
    /// `sampler` (exact path: module docs and `super::lattice`; [`PrefixSumMechanism::noise`] then reports the
    /// effective scale, rounded up onto the grid).
    ///
    /// Args: `dim >= 1`; `horizon >= 1`; `k >= 2`; `readout` as in [`Readout`]; `rng` is consumed for all
    /// noise.
    ///
    /// Errors: [`CoreError::InvalidArgument`] for `dim == 0`, `horizon == 0`, `k < 2`, buffers too large to
    /// allocate; on the exact path a scale outside `[1e-150, 1e150]`, or naming `k` for a plain readout whose
    /// releases sum more than `2¹¹` draws (`(k − 1)·L`).
    pub fn with_sampler(
        dim: usize,
        horizon: u64,
        k: u64,
        readout: Readout,
        noise: NoiseDistribution,
        sampler: SamplerKind,
        rng: Generator,
    ) -> Result<Self> {
        super::check_sizes(dim, horizon)?;
        if k < 2 {
            return Err(CoreError::invalid("k", ">= 2", k));
        }
        let levels = kary_levels(k, horizon) as usize;
        let rows = checked_len("dim", dim, levels)?;
        let siblings = if readout == Readout::Honaker {
            zeros("dim", rows)?
        } else {
            Vec::new()
        };
        let values = readout == Readout::Honaker;
        let (node, lattice) = node_sampler(dim, noise, sampler, values)?;
        if lattice.is_some() && !values && (k - 1).saturating_mul(levels as u64) > MAX_EXACT_COVER {
            return Err(CoreError::invalid(
                "k",
                "such that (k - 1) * levels <= 2048 for the exact plain readout (its releases sum that many draws)",
                k,
            ));
        }
        let sib_data = if lattice.is_some() && values {
            zeros("dim", rows)?
        } else {
            Vec::new()
        };
        Ok(KaryTree {
            dim,
            horizon,
            k,
            readout,
            // The requested law (what the state records, within the float samplers' range); `noise()` reports the
            // node sampler's, which on the exact path is rounded up onto the grid.
            noise,
            t: 0,
            prefix: zeros("dim", dim)?,
            suffix: zeros("dim", rows)?,
            siblings,
            rng,
            lattice,
            sib_data,
            unit: unit_variances(k, levels, readout),
            initial: zeros("dim", dim)?,
            node,
        })
    }

    /// The online Honaker tree: `k = 2` with [`Readout::Honaker`].
    ///
    /// Errors: as [`KaryTree::new`].
    pub fn honaker(
        dim: usize,
        horizon: u64,
        noise: NoiseDistribution,
        rng: Generator,
    ) -> Result<Self> {
        Self::new(dim, horizon, 2, Readout::Honaker, noise, rng)
    }

    /// The branching factor `k`.
    pub fn arity(&self) -> u64 {
        self.k
    }

    /// The readout.
    pub fn readout(&self) -> Readout {
        self.readout
    }

    /// Number of tree levels `L` (the number of `j` with `k^j <= T`).
    pub fn levels(&self) -> u32 {
        self.unit.len() as u32
    }

    /// Unit variance `v_j` of the estimate of a level-`j` node (1 for the plain readout).
    pub fn node_unit_variances(&self) -> &[f64] {
        &self.unit
    }

    /// Serialize the whole state (format-versioned); see [`super::Mechanism::to_bytes`].
    ///
    /// Errors: [`CoreError::State`] (not expected in practice).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        crate::state::to_state_bytes(self)
    }

    /// Restore a state written by [`KaryTree::to_bytes`].
    ///
    /// Errors: [`CoreError::State`] for corrupt bytes, another format version or an inconsistent state.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        crate::state::from_state_bytes(bytes)
    }

    fn push_unchecked(&mut self, x: &[f64], out: &mut [f64]) {
        self.t += 1;
        let mut r = 0usize;
        let mut q = self.t;
        while q % self.k == 0 {
            q /= self.k;
            r += 1;
        }
        let node = self.node;
        node.with_sampler(KaryStep {
            rng: &mut self.rng,
            r,
            honaker: self.readout == Readout::Honaker,
            unit: &self.unit,
            prefix: &mut self.prefix,
            suffix: &mut self.suffix,
            siblings: &mut self.siblings,
            sib_data: &mut self.sib_data,
            x,
            out,
        });
    }
}

impl Guarded for KaryTree {
    const WHAT: &'static str = "KaryTree";
    shared_methods!(guard);
    fn folds_values(&self) -> bool {
        self.readout == Readout::Honaker
    }
    fn push_checked(&mut self, xs: &[f64], out: &mut [f64]) {
        push_rows(self.dim, xs, out, |x, o| self.push_unchecked(x, o));
    }
}

impl PrefixSumMechanism for KaryTree {
    shared_methods!(mechanism);
    /// `Σ_j d_j(t) · v_j` over the base-`k` digits `d_j(t)` of `t`.
    fn unit_variance(&self, t: u64) -> Result<f64> {
        if t > self.horizon {
            return Err(CoreError::invalid("t", "between 0 and horizon", t));
        }
        let mut q = t;
        let mut total = 0.0;
        for &v in &self.unit {
            total += (q % self.k) as f64 * v;
            q /= self.k;
        }
        Ok(total)
    }
    /// [`super::max_over_digits`] with this tree's `k`: the unit variance `Σ_j d_j(t)·v_j` has `v_j > 0`.
    fn max_unit_variance(&self) -> Result<f64> {
        super::max_over_digits(self.horizon, self.k, |t| self.unit_variance(t))
    }
    /// `L`, the number of levels (see the module docs).
    fn sensitivity_l1(&self) -> f64 {
        f64::from(self.levels())
    }
    fn sensitivity_l2(&self) -> f64 {
        f64::from(self.levels()).sqrt()
    }
    fn state_nbytes(&self) -> usize {
        8 * (self.prefix.capacity()
            + self.suffix.capacity()
            + self.siblings.capacity()
            + self.initial.capacity()
            + self.unit.capacity())
            + 16 * self.sib_data.capacity()
            + self.lattice.as_ref().map_or(0, Lattice::nbytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Nodes `(level, end)` of the `k`-ary cover of `[1, t]`.
    fn kary_cover(k: u64, t: u64) -> Vec<(u32, u64)> {
        let mut nodes = Vec::new();
        let mut start = 0;
        let mut block = 1u64;
        let mut level = 0;
        while block * k <= t {
            block *= k;
            level += 1;
        }
        loop {
            while start + block <= t {
                start += block;
                nodes.push((level, start));
            }
            if level == 0 {
                break;
            }
            level -= 1;
            block /= k;
        }
        nodes
    }

    /// Brute-force largest encoder column: for each round s, the number of used nodes containing it.
    fn brute_force_column_count(k: u64, horizon: u64, readout: Readout) -> u32 {
        let mut used = BTreeSet::new();
        for t in 1..=horizon {
            for node in kary_cover(k, t) {
                used.insert(node);
            }
        }
        if readout == Readout::Honaker {
            // Every complete node feeds its parent's estimate.
            for level in 0..kary_levels(k, horizon) {
                let block = k.pow(level);
                for m in 1..=horizon / block {
                    used.insert((level, m * block));
                }
            }
        }
        (1..=horizon)
            .map(|s| {
                used.iter()
                    .filter(|&&(l, e)| e - k.pow(l) < s && s <= e)
                    .count() as u32
            })
            .max()
            .unwrap()
    }

    #[test]
    fn sensitivity_equals_the_brute_force_column_count() {
        for k in [2u64, 3, 4, 7] {
            for horizon in 1..=70u64 {
                for readout in [Readout::Plain, Readout::Honaker] {
                    let tree = KaryTree::new(
                        1,
                        horizon,
                        k,
                        readout,
                        NoiseDistribution::Gaussian { sigma: 1.0 },
                        Generator::from_seed([0; 4]),
                    )
                    .unwrap();
                    let count = brute_force_column_count(k, horizon, readout);
                    assert_eq!(tree.sensitivity_l1(), f64::from(count), "k={k} T={horizon}");
                    assert_eq!(tree.sensitivity_l2(), f64::from(count).sqrt());
                }
            }
        }
    }

    #[test]
    fn plain_unit_variance_is_the_cover_size() {
        for k in [2u64, 3, 16] {
            let tree = KaryTree::new(
                1,
                500,
                k,
                Readout::Plain,
                NoiseDistribution::Laplace { scale: 1.0 },
                Generator::from_seed([0; 4]),
            )
            .unwrap();
            for t in 0..=500 {
                assert_eq!(
                    tree.unit_variance(t).unwrap(),
                    kary_cover(k, t).len() as f64
                );
            }
            assert!(tree.unit_variance(501).is_err());
        }
    }

    #[test]
    fn honaker_weights_have_the_closed_form_for_k_2() {
        let tree = KaryTree::honaker(
            1,
            1 << 20,
            NoiseDistribution::Gaussian { sigma: 1.0 },
            Generator::from_seed([0; 4]),
        )
        .unwrap();
        assert_eq!(tree.levels(), 21);
        for (j, &v) in tree.node_unit_variances().iter().enumerate() {
            let exact = 2f64.powi(j as i32) / (2f64.powi(j as i32 + 1) - 1.0);
            assert!((v - exact).abs() < 1e-15, "j={j}");
        }
    }

    #[test]
    fn levels_are_counted_without_overflow() {
        assert_eq!(kary_levels(2, 1), 1);
        assert_eq!(kary_levels(2, 1024), 11);
        assert_eq!(kary_levels(16, 1 << 20), 6);
        assert_eq!(kary_levels(16, (1 << 20) - 1), 5);
        assert_eq!(kary_levels(u64::MAX, u64::MAX), 2);
        assert_eq!(kary_levels(2, u64::MAX), 64);
    }

    #[test]
    fn bad_arguments_are_refused() {
        let noise = NoiseDistribution::Gaussian { sigma: 1.0 };
        let g = || Generator::from_seed([0; 4]);
        assert!(KaryTree::new(0, 5, 2, Readout::Plain, noise, g()).is_err());
        assert!(KaryTree::new(1, 0, 2, Readout::Plain, noise, g()).is_err());
        assert!(KaryTree::new(1, 5, 1, Readout::Plain, noise, g()).is_err());
        assert!(KaryTree::new(usize::MAX, 1 << 40, 2, Readout::Plain, noise, g()).is_err());
        assert!(Readout::from_name("blue").is_err());
    }
}
