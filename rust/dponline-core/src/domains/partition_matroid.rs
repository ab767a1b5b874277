//! The partition matroid: coordinates split into blocks, block `j` holding at most (base: exactly) `k_j`
//! ones. Its polytopes are products of uniform-matroid polytopes, one per block.

use serde::{Deserialize, Serialize};

use super::selection::SAMPLE_CAPACITY;
use super::uniform_matroid::UniformBlock;
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// The partition matroid polytope on `n` coordinates partitioned into blocks `B_1..B_b` with capacities
/// `k_1..k_b`: `{0 ≤ x ≤ 1, Σ_{i∈B_j} x_i = k_j ∀j}` (`base = true`) or with `≤` (`base = false`).
///
/// Blocks are given as lists of coordinate indices that together contain each of `0..n` exactly once
/// (in any order; they are stored sorted).
/// A block is *fixed* when its own polytope is a point (base with `k_j ∈ {0, |B_j|}`, independence with
/// `k_j = 0`); its coordinates are then constant on the whole polytope.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "PartitionMatroidSpec", into = "PartitionMatroidSpec")]
pub struct PartitionMatroid {
    /// Coordinates grouped by block: block `j` is `members[start[j]..start[j + 1]]`.
    members: Vec<usize>,
    start: Vec<usize>,
    shapes: Vec<UniformBlock>,
    geometry: Geometry,
    scratch: Vec<f64>,
    sample: Vec<f64>,
}

constructor_spec! {
    /// What a pickled [`PartitionMatroid`] stores: its constructor arguments (validated again on restore).
    PartitionMatroidSpec for PartitionMatroid |m| {
        blocks: Vec<Vec<usize>> = (0..m.shapes.len()).map(|j| m.block(j).to_vec()).collect(),
        capacities: Vec<usize> = m.shapes.iter().map(|s| s.k).collect(),
        base: bool = m.shapes[0].base,
    }
}

impl PartitionMatroid {
    /// The partition matroid polytope with the given blocks and capacities.
    ///
    /// Args: `blocks[j]` lists the coordinates of block `j` (together a partition of `0..n`, `n` the total
    /// number of indices); `capacities[j]` is `k_j`, at most `|blocks[j]|`; `base` chooses the base
    /// polytope (`=`) or the independence polytope (`≤`).
    ///
    /// Errors: [`CoreError::InvalidArgument`] naming `blocks` if there are no blocks, a block is empty, an
    /// index is `>= n` or repeated; naming `capacities` if some `k_j > |B_j|` or every block is fixed (the
    /// polytope would be a single point). [`CoreError::Shape`] if `capacities` does not have one entry per
    /// block.
    pub fn new(blocks: Vec<Vec<usize>>, capacities: Vec<usize>, base: bool) -> Result<Self> {
        if blocks.is_empty() {
            return Err(CoreError::invalid(
                "blocks",
                "a non-empty list of blocks",
                "[]",
            ));
        }
        if capacities.len() != blocks.len() {
            return Err(CoreError::Shape {
                name: "capacities",
                expected: format!("one entry per block ({})", blocks.len()),
                got: format!("length {}", capacities.len()),
            });
        }
        let n: usize = blocks.iter().map(Vec::len).sum();
        let mut owner = vec![usize::MAX; n];
        for (j, block) in blocks.iter().enumerate() {
            if block.is_empty() {
                return Err(CoreError::invalid(
                    "blocks",
                    "non-empty lists of indices",
                    format!("block {j} is empty"),
                ));
            }
            for &i in block {
                if i >= n {
                    return Err(CoreError::invalid(
                        "blocks",
                        "a partition of 0..n, n the total number of indices",
                        format!("index {i} in block {j} is >= n = {n}"),
                    ));
                }
                if owner[i] != usize::MAX {
                    return Err(CoreError::invalid(
                        "blocks",
                        "a partition of 0..n, n the total number of indices",
                        format!("index {i} appears in blocks {} and {j}", owner[i]),
                    ));
                }
                owner[i] = j;
            }
        }
        let mut shapes = Vec::with_capacity(blocks.len());
        for (j, (block, &k)) in blocks.iter().zip(&capacities).enumerate() {
            if k > block.len() {
                return Err(CoreError::invalid(
                    "capacities",
                    "<= the size of their block",
                    format!("capacities[{j}] = {k} > {}", block.len()),
                ));
            }
            shapes.push(UniformBlock {
                size: block.len(),
                k,
                base,
            });
        }
        if shapes.iter().all(UniformBlock::is_fixed) {
            return Err(CoreError::invalid(
                "capacities",
                "such that some block is not fixed (the polytope would be a single point)",
                format!("{capacities:?} with base = {base}"),
            ));
        }
        let mut start = Vec::with_capacity(blocks.len() + 1);
        start.push(0);
        for block in &blocks {
            start.push(start.last().copied().unwrap_or(0) + block.len());
        }
        // Each block in increasing order, so that ties go to the lower index.
        let members: Vec<usize> = blocks
            .into_iter()
            .flat_map(|mut block| {
                block.sort_unstable();
                block
            })
            .collect();
        // Centre: block by block, the uniform-matroid centre (fixed blocks: their only value). Radius: the
        // smallest uniform-matroid radius over the blocks that are not fixed. Certificate: the polytope is the
        // product `Π_j P_j` and its affine hull the product of the blocks' hulls. If `y − c` is tangent with
        // `‖y − c‖ ≤ r = min_j r_j`, each block part `y_j − c_j` is tangent to `P_j` with norm `≤ r ≤ r_j`, so
        // `y_j ∈ P_j` by the block's certificate (fixed blocks have zero tangent part); hence `y ∈ Π_j P_j`.
        // Diameter `√(Σ_j diam_j²)`, exact: a product's diameter separates over its factors, and each block's
        // squared diameter is `2·min(k_j, |B_j| − k_j)` (base) or `min(2k_j, |B_j|)` (independence). Affine
        // dimension `Σ_j` (base: `|B_j| − 1`; independence: `|B_j|`) over the blocks that are not fixed.
        let mut center = vec![0.0; n];
        for (j, shape) in shapes.iter().enumerate() {
            let c = shape.center();
            members[start[j]..start[j + 1]]
                .iter()
                .for_each(|&i| center[i] = c);
        }
        let radius = shapes
            .iter()
            .filter_map(UniformBlock::radius)
            .fold(f64::INFINITY, f64::min);
        let diameter = shapes
            .iter()
            .map(UniformBlock::diameter_squared)
            .sum::<f64>()
            .sqrt();
        let affine_dim = shapes.iter().map(UniformBlock::affine_dim).sum();
        Ok(PartitionMatroid {
            members,
            start,
            shapes,
            geometry: Geometry::new(diameter, center, Some(radius), affine_dim),
            scratch: vec![0.0; n],
            sample: Vec::with_capacity(SAMPLE_CAPACITY),
        })
    }

    /// The coordinates of block `j` (increasing).
    fn block(&self, j: usize) -> &[usize] {
        &self.members[self.start[j]..self.start[j + 1]]
    }

    /// The blocks as `(coordinates in increasing order, capacity k_j)`.
    pub fn blocks(&self) -> impl Iterator<Item = (&[usize], usize)> {
        self.shapes
            .iter()
            .enumerate()
            .map(|(j, s)| (self.block(j), s.k))
    }

    /// Whether this is the base polytope (`Σ_{B_j} x = k_j`) rather than the independence polytope.
    pub fn is_base(&self) -> bool {
        self.shapes.first().is_some_and(|s| s.base)
    }
}

impl LinearMinimizationOracle for PartitionMatroid {
    /// Block by block, the uniform-matroid LMO: ones at the `k_j` smallest `direction_i` of block `j`
    /// (independence: only those `< 0`), lowest index on ties. `O(n)`, no allocation.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        for (j, shape) in self.shapes.iter().enumerate() {
            let (lo, hi) = (self.start[j], self.start[j + 1]);
            let members = &self.members[lo..hi];
            shape.write_vertex(
                members.iter().copied(),
                members.iter().map(|&i| direction[i]),
                &mut self.scratch[lo..hi],
                &mut self.sample,
                vertex,
            );
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Block by block: subtract the block mean (base), keep (independence), zero (fixed blocks).
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        for (j, shape) in self.shapes.iter().enumerate() {
            shape.project(self.block(j).iter().copied(), u);
        }
    }

    fn contains(&self, x: &[f64], atol: f64) -> bool {
        x.len() == self.geometry.center.len()
            && self
                .shapes
                .iter()
                .enumerate()
                .all(|(j, shape)| shape.contains(self.block(j).iter().copied(), x, atol))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Every vertex: one admissible subset per block, combined in all ways.
    fn vertices(blocks: &[Vec<usize>], capacities: &[usize], base: bool) -> Vec<Vec<f64>> {
        let n: usize = blocks.iter().map(Vec::len).sum();
        let mut out = vec![vec![0.0; n]];
        for (block, &k) in blocks.iter().zip(capacities) {
            let sizes = if base { k..=k } else { 0..=k };
            let choices: Vec<Vec<usize>> = sizes
                .flat_map(|j| testing::k_subsets(block.len(), j))
                .collect();
            out = out
                .iter()
                .flat_map(|v| {
                    choices.iter().map(move |choice| {
                        let mut w = v.clone();
                        choice.iter().for_each(|&p| w[block[p]] = 1.0);
                        w
                    })
                })
                .collect();
        }
        out
    }

    fn example() -> (Vec<Vec<usize>>, Vec<usize>) {
        (
            vec![vec![4, 0, 2], vec![1], vec![6, 3, 5, 7]],
            vec![1, 1, 2],
        )
    }

    #[test]
    fn lmo_matches_brute_force() {
        let (blocks, caps) = example();
        for base in [true, false] {
            let mut m = PartitionMatroid::new(blocks.clone(), caps.clone(), base).unwrap();
            testing::lmo_matches_brute_force(&mut m, &vertices(&blocks, &caps, base), 21);
        }
    }

    #[test]
    fn fixed_blocks_geometry_certificate_and_projection() {
        let (blocks, caps) = example();
        // Block 1 (a singleton with k = 1) is fixed in the base polytope.
        let mut m = PartitionMatroid::new(blocks.clone(), caps.clone(), true).unwrap();
        assert_eq!(m.affine_dim(), 2 + 3);
        assert_eq!(m.interior_point()[1], 1.0);
        assert!((m.diameter() - (2.0f64 + 4.0).sqrt()).abs() < 1e-12);
        testing::certified_ball_is_inside(&mut m, 22);
        testing::projection_is_orthogonal(&mut m, 23);
        let mut m = PartitionMatroid::new(blocks, caps, false).unwrap();
        assert_eq!(m.affine_dim(), 8);
        assert!((m.diameter() - (2.0f64 + 1.0 + 4.0).sqrt()).abs() < 1e-12);
        testing::certified_ball_is_inside(&mut m, 24);
        testing::projection_is_orthogonal(&mut m, 25);
        let mut m = PartitionMatroid::new(vec![vec![0, 1], vec![2, 3]], vec![0, 2], false).unwrap();
        assert_eq!(m.affine_dim(), 2);
        testing::certified_ball_is_inside(&mut m, 26);
        testing::projection_is_orthogonal(&mut m, 27);
    }

    #[test]
    fn bad_arguments_are_named() {
        let msg = |b: Vec<Vec<usize>>, c: Vec<usize>, base| {
            PartitionMatroid::new(b, c, base).unwrap_err().to_string()
        };
        assert!(msg(vec![], vec![], true).starts_with("blocks"));
        assert!(msg(vec![vec![0], vec![]], vec![1, 0], true).contains("block 1 is empty"));
        assert!(msg(vec![vec![0, 2]], vec![1], true).contains("index 2 in block 0"));
        assert!(
            msg(vec![vec![0, 1], vec![1, 0]], vec![1, 1], true)
                .contains("appears in blocks 0 and 1")
        );
        assert!(msg(vec![vec![0, 1]], vec![1, 1], true).starts_with("capacities must have"));
        assert!(msg(vec![vec![0, 1]], vec![3], true).contains("capacities[0] = 3 > 2"));
        assert!(msg(vec![vec![0, 1], vec![2]], vec![2, 0], true).contains("single point"));
        assert!(msg(vec![vec![0, 1]], vec![0], false).contains("single point"));
    }

    #[test]
    fn serde_round_trip() {
        let (blocks, caps) = example();
        let mut m = PartitionMatroid::new(blocks, caps, true).unwrap();
        let back = testing::state_round_trip(&mut m, &[0.3, -1.0, 2.0, 0.1, -0.5, 0.7, 0.0, -0.2]);
        assert_eq!(back.members, m.members);
    }
}
