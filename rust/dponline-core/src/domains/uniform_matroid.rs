//! The uniform matroid `U(n, k)`: its base polytope (the hypersimplex `{0 ≤ x ≤ 1, Σx = k}`) and its
//! independence polytope `{0 ≤ x ≤ 1, Σx ≤ k}`.
//!
//! [`UniformBlock`] holds the geometry of one block of coordinates; the partition matroid is a product of
//! such blocks and reuses it.

use serde::{Deserialize, Serialize};

use super::selection::{KSmallest, SAMPLE_CAPACITY};
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// One uniform-matroid polytope on `size` coordinates with capacity `k <= size`: `base` selects
/// `{0 ≤ x ≤ 1, Σx = k}`, otherwise `{0 ≤ x ≤ 1, Σx ≤ k}`. The block is *fixed* (a single point) when it is
/// a base polytope with `k ∈ {0, size}` or an independence polytope with `k = 0`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct UniformBlock {
    pub(super) size: usize,
    pub(super) k: usize,
    pub(super) base: bool,
}

impl UniformBlock {
    /// Whether the polytope is a single point.
    pub(super) fn is_fixed(&self) -> bool {
        self.k == 0 || (self.base && self.k == self.size)
    }

    /// Common value `a` of the centre `a·1`.
    ///
    /// Base: `k/size`. Independence: `a = min(1/2, k/(size + √size))`, the maximiser of
    /// `min(a, 1 − a, (k − size·a)/√size)` (the distances from `a·1` to the facets `x_i = 0`, `x_i = 1`,
    /// `Σx = k`): the first and third terms are equal at `k/(size + √size)`, and when that exceeds `1/2`
    /// the middle term binds, with the third then `> 1/2`.
    pub(super) fn center(&self) -> f64 {
        let (s, k) = (self.size as f64, self.k as f64);
        if self.base {
            k / s
        } else {
            (k / (s + s.sqrt())).min(0.5)
        }
    }

    /// Certified radius of the ball around the centre inside the block's affine hull; `None` when fixed.
    ///
    /// Base (`0 < k < size`): the affine hull is `{Σx = k}` and the tangent space `{Σu = 0}`. For a
    /// tangent `u`, `u_i = ⟨u, P e_i⟩` with `P` the projection onto `{Σu = 0}` and `‖P e_i‖ =
    /// √(1 − 1/size)`, so `|u_i| ≤ ‖u‖·√(1 − 1/size)`. With `‖u‖ ≤ r = min(k/size, 1 − k/size)/√(1 − 1/size)`
    /// every coordinate of `k/size + u` stays in `[0, 1]`, and the sum stays `k`.
    ///
    /// Independence (`k ≥ 1`): full-dimensional; the Euclidean distances from `a·1` to the hyperplanes
    /// `x_i = 0`, `x_i = 1` and `Σx = k` are `a`, `1 − a` and `(k − size·a)/√size`, all `≥ a` for the `a` of
    /// [`UniformBlock::center`]; a ball closer to no bounding hyperplane than its radius lies in every
    /// half-space, so `r = a`.
    pub(super) fn radius(&self) -> Option<f64> {
        if self.is_fixed() {
            return None;
        }
        let s = self.size as f64;
        let a = self.center();
        Some(if self.base {
            a.min(1.0 - a) / (1.0 - 1.0 / s).sqrt()
        } else {
            a
        })
    }

    /// Squared diameter (exact).
    ///
    /// The diameter of a polytope is attained at two vertices; for 0/1 vertices `‖1_A − 1_B‖² = |A Δ B|`.
    /// Base: `|A Δ B| = 2|A ∖ B| ≤ 2 min(k, size − k)`, attained by two sets as disjoint as possible.
    /// Independence: `|A Δ B| ≤ min(|A| + |B|, size) ≤ min(2k, size)`, attained by disjoint sets of size `k`
    /// (or a set of size `k` and its complement).
    pub(super) fn diameter_squared(&self) -> f64 {
        let (s, k) = (self.size, self.k);
        if self.base {
            2.0 * k.min(s - k) as f64
        } else {
            (2 * k).min(s) as f64
        }
    }

    /// Dimension of the block's affine hull.
    pub(super) fn affine_dim(&self) -> usize {
        match (self.is_fixed(), self.base) {
            (true, _) => 0,
            (false, true) => self.size - 1,
            (false, false) => self.size,
        }
    }

    /// Write the block's LMO vertex into `vertex` at the coordinates `members` (increasing), given the
    /// direction's entries at those coordinates as `values` (same order). `scratch` (length `size`) and
    /// `sample` (capacity `SAMPLE_CAPACITY`) are scratch space.
    ///
    /// Base: ones at the `k` smallest values. Independence: ones at the `k` smallest among the strictly
    /// negative values (all of them if fewer). Ties go to the lower index. `O(size)`: one selection (see
    /// `KSmallest`), then one pass; allocation-free.
    #[inline]
    pub(super) fn write_vertex(
        &self,
        members: impl Iterator<Item = usize>,
        values: impl Iterator<Item = f64> + Clone,
        scratch: &mut [f64],
        sample: &mut Vec<f64>,
        vertex: &mut [f64],
    ) {
        let eligible = |d: f64| self.base || d < 0.0;
        let count = if self.base {
            self.size
        } else {
            values.clone().filter(|&d| d < 0.0).count()
        };
        let take = self.k.min(count);
        if take > 0 && take < count {
            // Select among all values: with more than `take` negative values, the `take` smallest are all
            // negative, so no eligibility check is needed.
            let mut choice = KSmallest::new(values.clone(), self.size, take, scratch, sample);
            for (i, d) in members.zip(values) {
                vertex[i] = f64::from(u8::from(choice.take(d)));
            }
        } else {
            for (i, d) in members.zip(values) {
                vertex[i] = f64::from(u8::from(take > 0 && eligible(d)));
            }
        }
    }

    /// Project `u` at the coordinates `members` onto the block's tangent space: subtract the mean (base),
    /// keep (independence), or zero (fixed block).
    #[inline]
    pub(super) fn project(&self, members: impl Iterator<Item = usize> + Clone, u: &mut [f64]) {
        if self.is_fixed() {
            members.for_each(|i| u[i] = 0.0);
        } else if self.base {
            let mean = members.clone().map(|i| u[i]).sum::<f64>() / self.size as f64;
            members.for_each(|i| u[i] -= mean);
        }
    }

    /// `−atol ≤ x_i ≤ 1 + atol` on `members`, and `|Σx − k| ≤ atol` (base) or `Σx ≤ k + atol`.
    pub(super) fn contains(
        &self,
        mut members: impl Iterator<Item = usize>,
        x: &[f64],
        atol: f64,
    ) -> bool {
        let mut sum = 0.0;
        let boxed = members.all(|i| {
            sum += x[i];
            x[i] >= -atol && x[i] <= 1.0 + atol
        });
        let k = self.k as f64;
        boxed
            && if self.base {
                (sum - k).abs() <= atol
            } else {
                sum <= k + atol
            }
    }
}

/// The uniform matroid polytope on `n` coordinates: the hypersimplex `{0 ≤ x ≤ 1, Σx = k}` (`base = true`)
/// or `{0 ≤ x ≤ 1, Σx ≤ k}` (`base = false`). Vertices are the indicator vectors of the `k`-subsets
/// (of the subsets of size `≤ k`).
///
/// Geometry (from `UniformBlock`): diameter, base `√(2·min(k, n − k))`, independence `√min(2k, n)` (both
/// exact); centre, base `(k/n)·1`, independence `a·1` with `a = min(1/2, k/(n + √n))`; radius, base
/// `min(k/n, 1 − k/n)/√(1 − 1/n)`, independence `min(1/2, k/(n + √n))` (the ball stays on the right side of
/// every facet hyperplane, proof in `UniformBlock::radius`); affine dimension, base `n − 1`, independence `n`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "UniformMatroidSpec", into = "UniformMatroidSpec")]
pub struct UniformMatroid {
    block: UniformBlock,
    geometry: Geometry,
    scratch: Vec<f64>,
    sample: Vec<f64>,
}

constructor_spec! {
    /// What a pickled [`UniformMatroid`] stores: its constructor arguments (validated again on restore).
    UniformMatroidSpec for UniformMatroid |m| {
        n: usize = m.block.size,
        k: usize = m.block.k,
        base: bool = m.block.base,
    }
}

impl UniformMatroid {
    /// The uniform matroid polytope of rank `k` on `n` coordinates.
    ///
    /// Errors: [`CoreError::InvalidArgument`] if `base` and not `0 < k < n` (otherwise the polytope is a
    /// point), or if not `base` and not `1 <= k <= n`.
    pub fn new(n: usize, k: usize, base: bool) -> Result<Self> {
        super::reserve_for("UniformMatroid", n)?;
        if base && (k == 0 || k >= n) {
            return Err(CoreError::invalid(
                "k",
                "> 0 and < n for the base polytope",
                format!("{k} (n = {n})"),
            ));
        }
        if !base && (k == 0 || k > n) {
            return Err(CoreError::invalid(
                "k",
                ">= 1 and <= n for the independence polytope",
                format!("{k} (n = {n})"),
            ));
        }
        let block = UniformBlock { size: n, k, base };
        Ok(UniformMatroid {
            block,
            geometry: Geometry::new(
                block.diameter_squared().sqrt(),
                vec![block.center(); n],
                block.radius(),
                block.affine_dim(),
            ),
            scratch: vec![0.0; n],
            sample: Vec::with_capacity(SAMPLE_CAPACITY),
        })
    }
}

impl UniformMatroid {
    /// The rank `k`.
    pub fn k(&self) -> usize {
        self.block.k
    }

    /// Whether this is the base polytope (`Σx = k`) rather than the independence polytope (`Σx ≤ k`).
    pub fn is_base(&self) -> bool {
        self.block.base
    }
}

impl LinearMinimizationOracle for UniformMatroid {
    /// Ones at the `k` smallest `direction_i` (independence: only those `< 0`), lowest index on ties.
    /// `O(n)` by selection with preallocated scratch space; no allocation.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        self.block.write_vertex(
            0..self.block.size,
            direction.iter().copied(),
            &mut self.scratch,
            &mut self.sample,
            vertex,
        );
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Base: subtract the mean (projection onto `{Σu = 0}`); independence: identity.
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        self.block.project(0..self.block.size, u);
    }

    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.len() == self.block.size && self.block.contains(0..self.block.size, x, atol)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    fn vertices(n: usize, k: usize, base: bool) -> Vec<Vec<f64>> {
        let sizes = if base { k..=k } else { 0..=k };
        sizes
            .flat_map(|j| testing::k_subsets(n, j))
            .map(|s| testing::indicator(n, &s))
            .collect()
    }

    #[test]
    fn lmo_matches_brute_force() {
        for (n, k) in [(2, 1), (5, 2), (7, 3), (8, 7)] {
            for base in [true, false] {
                let mut m = UniformMatroid::new(n, k, base).unwrap();
                testing::lmo_matches_brute_force(&mut m, &vertices(n, k, base), n as u64);
            }
        }
        let mut m = UniformMatroid::new(4, 4, false).unwrap();
        testing::lmo_matches_brute_force(&mut m, &vertices(4, 4, false), 11);
    }

    #[test]
    fn ties_go_to_the_lower_index() {
        let mut m = UniformMatroid::new(5, 2, true).unwrap();
        let mut v = [0.0; 5];
        m.lmo(&[1.0, 0.0, 1.0, 0.0, 0.0], &mut v);
        assert_eq!(v, [0.0, 1.0, 0.0, 1.0, 0.0]);
        m.lmo(&[-0.0, 0.0, 0.0, -0.0, 1.0], &mut v);
        assert_eq!(v, [1.0, 1.0, 0.0, 0.0, 0.0]);
        let mut m = UniformMatroid::new(5, 3, false).unwrap();
        m.lmo(&[-1.0, 0.0, -1.0, 2.0, 0.0], &mut v);
        assert_eq!(v, [1.0, 0.0, 1.0, 0.0, 0.0]);
    }

    #[test]
    fn geometry_certificate_and_projection() {
        for (n, k) in [(2, 1), (6, 1), (6, 3), (6, 5), (9, 9), (9, 1), (10, 8)] {
            for base in [true, false] {
                let Ok(mut m) = UniformMatroid::new(n, k, base) else {
                    assert!(base && k == n);
                    continue;
                };
                testing::certified_ball_is_inside(&mut m, 12);
                testing::projection_is_orthogonal(&mut m, 13);
                let brute = vertices(n, k, base);
                let diam = testing::diameter_of(&brute);
                assert!((m.diameter() - diam).abs() < 1e-12, "{n} {k} {base}");
            }
        }
    }

    #[test]
    fn the_radius_is_tight_for_the_hypersimplex() {
        // Moving r towards the facet x_0 = 0 (k/n < 1/2) reaches it exactly.
        let mut m = UniformMatroid::new(6, 2, true).unwrap();
        assert!(testing::towards_facet(&mut m, 0)[0].abs() < 1e-12);
    }

    #[test]
    fn bad_arguments_are_refused() {
        for (n, k, base) in [
            (3, 0, true),
            (3, 3, true),
            (1, 1, true),
            (3, 0, false),
            (3, 4, false),
        ] {
            let err = UniformMatroid::new(n, k, base).unwrap_err().to_string();
            assert!(err.starts_with("k must be"), "{err}");
        }
    }

    #[test]
    fn serde_round_trip() {
        let mut m = UniformMatroid::new(6, 2, false).unwrap();
        let back = testing::state_round_trip(&mut m, &testing::gaussian(&mut testing::rng(14), 6));
        assert_eq!(back.block, m.block);
        assert_eq!(back.scratch.len(), 6);
    }
}
