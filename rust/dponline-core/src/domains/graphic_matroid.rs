//! The graphic matroid of an undirected multigraph: the spanning-tree polytope (bases) and the forest
//! polytope (independent sets), one coordinate per edge.

use serde::{Deserialize, Serialize};

use super::forest_membership::min_forest_slack;
use super::graph::{UnionFind, check_edges, count_components};
use super::selection::order_key;
use super::tree_blocks::tree_blocks;
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// The graphic matroid polytope of an undirected loopless multigraph with one coordinate per edge:
/// the convex hull of the indicator vectors of its spanning trees (`base = true`, the graph must be
/// connected) or of its forests (`base = false`).
///
/// Linear descriptions (Edmonds 1971): forests `{x ≥ 0 : x(E[S]) ≤ |S| − 1 ∀ S ≠ ∅}`; spanning trees add
/// `x(E) = n − 1`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "GraphicMatroidSpec", into = "GraphicMatroidSpec")]
pub struct GraphicMatroid {
    num_nodes: usize,
    edges: Vec<(usize, usize)>,
    base: bool,
    /// Size of a spanning forest: `num_nodes − components`.
    rank: usize,
    geometry: Geometry,
    /// Spanning trees only: edges grouped by block, block `b` is `block_edges[block_start[b]..block_start[b + 1]]`.
    block_edges: Vec<usize>,
    block_start: Vec<usize>,
    keys: Vec<(u64, usize)>,
    forest: UnionFind,
}

constructor_spec! {
    /// What a pickled [`GraphicMatroid`] stores: its constructor arguments (validated again on restore).
    GraphicMatroidSpec for GraphicMatroid |g| {
        num_nodes: usize = g.num_nodes,
        edges: Vec<(usize, usize)> = g.edges,
        base: bool = g.base,
    }
}

impl GraphicMatroid {
    /// The spanning-tree (`base = true`) or forest (`base = false`) polytope of the undirected multigraph
    /// with nodes `0..num_nodes` and the given edges (`(u, v)` pairs; parallel edges are allowed and get
    /// their own coordinates).
    ///
    /// Errors: [`CoreError::InvalidGraph`] if there are no edges, an endpoint is `>= num_nodes`, an edge is
    /// a self-loop, or (`base = true`) the graph is not connected (the message gives the number of
    /// components; isolated nodes count).
    pub fn new(num_nodes: usize, edges: Vec<(usize, usize)>, base: bool) -> Result<Self> {
        super::reserve_for("GraphicMatroid", num_nodes.max(edges.len()))?;
        if edges.is_empty() {
            return Err(CoreError::InvalidGraph("the graph has no edges".into()));
        }
        check_edges(num_nodes, &edges)?;
        let components = count_components(num_nodes, &edges);
        if base && components > 1 {
            return Err(CoreError::InvalidGraph(format!(
                "the graph has {components} connected components; spanning trees need a connected graph \
                 (use base=False for the forest polytope)"
            )));
        }
        let m = edges.len();
        let rank = num_nodes - components;
        let mut out = GraphicMatroid {
            num_nodes,
            edges,
            base,
            rank,
            geometry: Geometry::new(0.0, Vec::new(), None, m),
            block_edges: Vec::new(),
            block_start: Vec::new(),
            keys: vec![(0, 0); m],
            forest: UnionFind::new(num_nodes),
        };
        if base {
            out.describe_spanning_trees();
        } else {
            // Forests: centre `a·1` and radius `a` with `a = 1/(m + √m)`. Certificate: every single edge is
            // a forest, so the corner simplex `Δ = {x ≥ 0, Σx ≤ 1} = conv{0, e_1, …, e_m}` lies in the forest
            // polytope. The distances from `a·1` to the facets of `Δ` are `a` (to `x_i = 0`) and
            // `(1 − m·a)/√m` (to `Σx = 1`); both equal `1/(m + √m)` at `a = 1/(m + √m)`, so `B(a·1, a) ⊆ Δ`.
            // This is far from the forest polytope's true inradius on sparse graphs, but it is proven.
            // Diameter bound `√min(2·rank, m)` since `|F Δ F'| ≤ |F| + |F'| ≤ 2·rank` and `≤ m`. Full-dimensional.
            let mf = m as f64;
            let a = 1.0 / (mf + mf.sqrt());
            let diameter = ((2 * rank).min(m) as f64).sqrt();
            out.geometry = Geometry::new(diameter, vec![a; m], Some(a), m);
        }
        Ok(out)
    }

    /// Blocks and [`Geometry`] of the spanning-tree polytope:
    /// - diameter, an upper bound: `√(Σ_B 2·min(r_B, m_B − r_B))` over the blocks `B` (`m_B` edges, rank
    ///   `r_B = |V(B)| − 1`): `‖1_T − 1_T'‖² = |T Δ T'|`, and inside each block `T` and `T'` are spanning trees
    ///   of `B`, so each has at most `min(r_B, m_B − r_B)` edges the other lacks;
    /// - centre: the average of the depth-first-search tree `T₀` and of trees `T₀ + e − f` obtained by
    ///   fundamental exchanges; it lies in the relative interior (proof in `tree_blocks`);
    /// - radius: `None` (no certified radius is computed);
    /// - affine dimension: `m − (number of blocks)`.
    fn describe_spanning_trees(&mut self) {
        let blocks = tree_blocks(self.num_nodes, &self.edges);
        let mut start = vec![0usize; blocks.num_blocks + 1];
        let mut tree_edges = vec![0usize; blocks.num_blocks];
        for (&b, &t) in blocks.block_of_edge.iter().zip(&blocks.in_tree) {
            start[b + 1] += 1;
            tree_edges[b] += usize::from(t);
        }
        for b in 0..blocks.num_blocks {
            start[b + 1] += start[b];
        }
        let mut fill = start.clone();
        let mut members = vec![0; self.edges.len()];
        for (e, &b) in blocks.block_of_edge.iter().enumerate() {
            members[fill[b]] = e;
            fill[b] += 1;
        }
        // Per block, two spanning trees differ in at most min(rank, corank) edges each way.
        let squared: usize = (0..blocks.num_blocks)
            .map(|b| {
                let size = start[b + 1] - start[b];
                2 * tree_edges[b].min(size - tree_edges[b])
            })
            .sum();
        self.geometry = Geometry::new(
            (squared as f64).sqrt(),
            blocks.interior,
            None,
            self.edges.len() - blocks.num_blocks,
        );
        self.block_edges = members;
        self.block_start = start;
    }
}

impl LinearMinimizationOracle for GraphicMatroid {
    /// Kruskal's algorithm (1956) with union-find. Spanning trees: a minimum spanning tree for weights of
    /// any sign. Forests: Kruskal over the strictly negative edges only, which gives a minimum-weight
    /// forest (the greedy algorithm is exact on a matroid, and edges of weight `≥ 0` never lower the
    /// total). Edges are sorted as `(weight, index)` pairs, so equal weights go to the lower index.
    /// `O(m log m)`, stopping once `rank` edges are taken; no allocation.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        // Branch-free filling: always write, advance only for an edge that may be taken.
        let mut count = 0;
        for (i, &d) in direction.iter().enumerate() {
            self.keys[count] = (order_key(d), i);
            count += usize::from(self.base || d < 0.0);
        }
        let keys = &mut self.keys[..count];
        keys.sort_unstable();
        self.forest.reset();
        vertex.fill(0.0);
        let mut taken = 0;
        for &(_, e) in keys.iter() {
            if taken == self.rank {
                break;
            }
            let (u, v) = self.edges[e];
            if self.forest.union(u, v) {
                vertex[e] = 1.0;
                taken += 1;
            }
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Spanning trees: subtract, within every block, the block's mean (projection onto
    /// `{u : Σ_{e∈B} u_e = 0 ∀ B}`; bridges become 0). Forests: identity. `O(m)`, no allocation.
    #[inline]
    fn project_tangent(&mut self, u: &mut [f64]) {
        for b in 0..self.block_start.len().saturating_sub(1) {
            let block = &self.block_edges[self.block_start[b]..self.block_start[b + 1]];
            let mean = block.iter().map(|&e| u[e]).sum::<f64>() / block.len() as f64;
            block.iter().for_each(|&e| u[e] -= mean);
        }
    }

    /// `x_e ≥ −atol`, `x(E[S]) ≤ |S| − 1 + atol` for every node set `S` (checked exactly by `n` minimum
    /// cuts, so this costs `n` maximum-flow computations), and for spanning trees `|x(E) − (n − 1)| ≤ atol`.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        if x.len() != self.edges.len() || x.iter().any(|&v| v.is_nan() || v < -atol) {
            return false;
        }
        if self.base && (x.iter().sum::<f64>() - self.rank as f64).abs() > atol {
            return false;
        }
        min_forest_slack(self.num_nodes, &self.edges, x) >= 1.0 - atol
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Indicator vectors of all forests (`size = None`) or all spanning trees (`Some(n - 1)`).
    fn vertices(num_nodes: usize, edges: &[(usize, usize)], size: Option<usize>) -> Vec<Vec<f64>> {
        let m = edges.len();
        (0u32..1 << m)
            .filter(|mask| size.is_none_or(|s| mask.count_ones() as usize == s))
            .filter(|mask| {
                let mut uf = UnionFind::new(num_nodes);
                (0..m)
                    .filter(|e| mask >> e & 1 == 1)
                    .all(|e| uf.union(edges[e].0, edges[e].1))
            })
            .map(|mask| (0..m).map(|e| f64::from(mask >> e & 1)).collect())
            .collect()
    }

    fn graphs() -> Vec<(usize, Vec<(usize, usize)>)> {
        vec![
            (4, vec![(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]),
            (
                5,
                vec![(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 3), (1, 4)],
            ),
            (
                6,
                vec![(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (5, 3)],
            ),
            (3, vec![(0, 1), (0, 1), (1, 2)]),
            (2, vec![(0, 1)]),
        ]
    }

    #[test]
    fn lmo_matches_brute_force() {
        for (seed, (n, edges)) in graphs().into_iter().enumerate() {
            let mut trees = GraphicMatroid::new(n, edges.clone(), true).unwrap();
            testing::lmo_matches_brute_force(
                &mut trees,
                &vertices(n, &edges, Some(n - 1)),
                seed as u64,
            );
            let mut forests = GraphicMatroid::new(n, edges.clone(), false).unwrap();
            testing::lmo_matches_brute_force(&mut forests, &vertices(n, &edges, None), seed as u64);
        }
        // A disconnected graph has a forest polytope.
        let edges = vec![(0, 1), (1, 2), (2, 0), (3, 4)];
        let mut forests = GraphicMatroid::new(6, edges.clone(), false).unwrap();
        testing::lmo_matches_brute_force(&mut forests, &vertices(6, &edges, None), 9);
    }

    #[test]
    fn geometry_certificate_and_projection() {
        for (seed, (n, edges)) in graphs().into_iter().enumerate() {
            let seed = seed as u64;
            let mut trees = GraphicMatroid::new(n, edges.clone(), true).unwrap();
            assert!(trees.contains(trees.interior_point(), 1e-12));
            assert_eq!(trees.inscribed_radius(), None);
            testing::projection_is_orthogonal(&mut trees, seed);
            let mut forests = GraphicMatroid::new(n, edges.clone(), false).unwrap();
            testing::certified_ball_is_inside(&mut forests, seed);
            testing::projection_is_orthogonal(&mut forests, seed);
            for (domain, size) in [(&trees, Some(n - 1)), (&forests, None)] {
                let brute = vertices(n, &edges, size);
                let diam = testing::diameter_of(&brute);
                assert!(diam <= domain.diameter() + 1e-12);
            }
        }
    }

    #[test]
    fn the_interior_point_is_strictly_inside_the_tree_polytope() {
        // The spanning-tree polytope of K4 has the facets x_e >= 0 and x(E[S]) <= 2 for triangles S;
        // a relative-interior point is strictly inside all of them.
        let edges = vec![(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
        let trees = GraphicMatroid::new(4, edges.clone(), true).unwrap();
        let c = trees.interior_point();
        assert!(c.iter().all(|&x| x > 1e-3));
        let slack = min_forest_slack(4, &edges, c);
        // Singletons give slack 1; every larger set must have slack > 1 except V itself (exactly 1).
        assert!((slack - 1.0).abs() < 1e-12);
        for drop in 0..4 {
            let inner: Vec<(usize, usize)> = edges
                .iter()
                .copied()
                .filter(|&(u, v)| u != drop && v != drop)
                .collect();
            let x: f64 = edges
                .iter()
                .zip(c)
                .filter(|(e, _)| inner.contains(e))
                .map(|(_, x)| x)
                .sum();
            assert!(x < 2.0 - 1e-3, "triangle without {drop}: {x}");
        }
        assert_eq!(trees.affine_dim(), 5);
    }

    #[test]
    fn malformed_graphs_are_refused() {
        let msg = |n, e: Vec<(usize, usize)>, base| {
            GraphicMatroid::new(n, e, base).unwrap_err().to_string()
        };
        assert!(msg(3, vec![], true).contains("no edges"));
        assert!(msg(3, vec![(0, 3)], false).contains("edge 0 = (0, 3)"));
        assert!(msg(3, vec![(0, 1), (2, 2)], false).contains("self-loop"));
        assert!(msg(5, vec![(0, 1), (2, 3)], true).contains("3 connected components"));
        assert!(GraphicMatroid::new(5, vec![(0, 1), (2, 3)], false).is_ok());
    }

    #[test]
    fn serde_round_trip() {
        let (n, edges) = graphs().swap_remove(1);
        let mut g = GraphicMatroid::new(n, edges, true).unwrap();
        let back = testing::state_round_trip(&mut g, &[0.5, -1.0, 0.2, 0.0, 3.0, -2.0, 1.0]);
        assert_eq!(back.interior_point(), g.interior_point());
    }
}
