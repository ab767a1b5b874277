//! The bipartite matching polytope: the convex hull of the indicator vectors (one coordinate per edge) of the
//! matchings of a bipartite graph, of every size.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use super::graph::NONE;
use super::linalg::power_of_two_scale;
use super::selection::order_key;
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// The matching polytope of a bipartite multigraph with `n_left` left and `n_right` right nodes and an edge
/// `(i, j)` from left node `i` to right node `j` per coordinate.
///
/// Bipartite graphs have a totally unimodular node-edge incidence matrix, so the polytope is
/// `{x ≥ 0 : Σ_{e ∋ v} x_e ≤ 1 for every node v}` (Egerváry 1931, König), which is how `contains` tests
/// membership. The empty matching and every single edge are vertices: the polytope is full-dimensional.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "BipartiteMatchingSpec", into = "BipartiteMatchingSpec")]
pub struct BipartiteMatchingPolytope {
    n_left: usize,
    n_right: usize,
    edges: Vec<(usize, usize)>,
    geometry: Geometry,
    /// The edges out of left node `i`: `by_left[left_start[i]..left_start[i + 1]]`, in increasing index.
    left_start: Vec<usize>,
    by_left: Vec<usize>,
    /// LMO scratch. Nodes are numbered left `0..n_left`, right `n_left..n_left + n_right`, then the sink.
    scaled: Vec<f64>,
    matched_left: Vec<usize>,
    matched_right: Vec<usize>,
    potential: Vec<f64>,
    distance: Vec<f64>,
    /// The edge by which the search reached a node (for the sink: the right node it came from).
    reached_by: Vec<usize>,
    settled: Vec<bool>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
}

constructor_spec! {
    /// What a pickled [`BipartiteMatchingPolytope`] stores: its constructor arguments (validated again on
    /// restore).
    BipartiteMatchingSpec for BipartiteMatchingPolytope |p| {
        n_left: usize = p.n_left,
        n_right: usize = p.n_right,
        edges: Vec<(usize, usize)> = p.edges,
    }
}

impl BipartiteMatchingPolytope {
    /// The matching polytope of the bipartite graph with the given edges `(left node, right node)`; parallel
    /// edges are allowed and get their own coordinates.
    ///
    /// Errors: [`CoreError::InvalidGraph`] if there are no edges or an edge has an endpoint out of range
    /// (`i >= n_left` or `j >= n_right`).
    pub fn new(n_left: usize, n_right: usize, edges: Vec<(usize, usize)>) -> Result<Self> {
        let nodes = n_left.checked_add(n_right).ok_or_else(|| {
            CoreError::invalid(
                "n_left + n_right",
                "a node count that fits in memory",
                "an overflow",
            )
        })?;
        super::reserve_for("BipartiteMatchingPolytope", nodes.max(edges.len()))?;
        if edges.is_empty() {
            return Err(CoreError::InvalidGraph("the graph has no edges".into()));
        }
        if let Some((e, &(i, j))) = edges
            .iter()
            .enumerate()
            .find(|(_, (i, j))| *i >= n_left || *j >= n_right)
        {
            return Err(CoreError::InvalidGraph(format!(
                "edge {e} = ({i}, {j}) has an endpoint outside the left nodes 0..{n_left} or the right nodes \
                 0..{n_right}"
            )));
        }
        let m = edges.len();
        let mut degree = vec![0usize; nodes];
        let mut left_start = vec![0usize; n_left + 1];
        for &(i, j) in &edges {
            degree[i] += 1;
            degree[n_left + j] += 1;
            left_start[i + 1] += 1;
        }
        for i in 0..n_left {
            left_start[i + 1] += left_start[i];
        }
        let mut fill = left_start.clone();
        let mut by_left = vec![0; m];
        for (e, &(i, _)) in edges.iter().enumerate() {
            by_left[fill[i]] = e;
            fill[i] += 1;
        }
        let max_degree = degree.iter().copied().max().unwrap_or(1) as f64;
        let a = 1.0 / (max_degree + max_degree.sqrt());
        let touched_left = degree[..n_left].iter().filter(|&&d| d > 0).count();
        let touched_right = degree[n_left..].iter().filter(|&&d| d > 0).count();
        let largest_matching = touched_left.min(touched_right);
        // Diameter bound `√min(2ν, m)` with `ν = min(left nodes with an edge, right nodes with an edge) ≥` the
        // largest matching: `‖1_M − 1_M'‖² = |M Δ M'| ≤ |M| + |M'|`. Centre `a·1`, radius `a = 1/(Δ + √Δ)`
        // (`Δ` the largest degree). Certificate: the distances from `a·1` to the facet hyperplanes `x_e = 0`
        // and `Σ_{e ∋ v} x_e = 1` are `a` and `(1 − deg(v)·a)/√deg(v) ≥ (1 − Δa)/√Δ = a`; a ball closer to no
        // facet hyperplane than its radius lies in every half-space. Full-dimensional.
        let diameter = ((2 * largest_matching).min(m) as f64).sqrt();
        Ok(BipartiteMatchingPolytope {
            n_left,
            n_right,
            geometry: Geometry::new(diameter, vec![a; m], Some(a), m),
            left_start,
            by_left,
            scaled: vec![0.0; m],
            matched_left: vec![NONE; n_left],
            matched_right: vec![NONE; n_right],
            potential: vec![0.0; nodes + 1],
            distance: vec![0.0; nodes + 1],
            reached_by: vec![NONE; nodes + 1],
            settled: vec![false; nodes + 1],
            heap: BinaryHeap::with_capacity(m + nodes + 1),
            edges,
        })
    }

    /// The edges `(left node, right node)`, one per coordinate.
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// The number of left and right nodes.
    pub fn sides(&self) -> (usize, usize) {
        (self.n_left, self.n_right)
    }

    /// One shortest-path search from every free left node (reduced costs `c_e + π_u − π_v ≥ 0`) over the
    /// residual graph of the current matching: unmatched edges with negative cost left to right, matched
    /// edges right to left at the opposite cost, free right nodes to the sink. Returns whether the sink was
    /// reached.
    fn search(&mut self) -> bool {
        let (n_left, sink) = (self.n_left, self.n_left + self.n_right);
        self.distance.fill(f64::INFINITY);
        self.settled.fill(false);
        self.heap.clear();
        for i in 0..n_left {
            if self.matched_left[i] == NONE {
                // The arc from the source has cost 0 and the source has potential 0.
                let d = (-self.potential[i]).max(0.0);
                self.distance[i] = d;
                self.reached_by[i] = NONE;
                self.heap.push(Reverse((order_key(d), i)));
            }
        }
        while let Some(Reverse((_, v))) = self.heap.pop() {
            if self.settled[v] {
                continue;
            }
            self.settled[v] = true;
            if v == sink {
                return true;
            }
            let dv = self.distance[v];
            if v < n_left {
                for k in self.left_start[v]..self.left_start[v + 1] {
                    let e = self.by_left[k];
                    let cost = self.scaled[e];
                    if cost >= 0.0 || self.matched_left[v] == e {
                        continue;
                    }
                    let w = n_left + self.edges[e].1;
                    let reduced = (cost + self.potential[v] - self.potential[w]).max(0.0);
                    self.relax(w, dv + reduced, e);
                }
            } else {
                let j = v - n_left;
                match self.matched_right[j] {
                    NONE => {
                        let reduced = (self.potential[v] - self.potential[sink]).max(0.0);
                        self.relax(sink, dv + reduced, v);
                    }
                    e => {
                        let w = self.edges[e].0;
                        let reduced =
                            (-self.scaled[e] + self.potential[v] - self.potential[w]).max(0.0);
                        self.relax(w, dv + reduced, e);
                    }
                }
            }
        }
        false
    }

    #[inline]
    fn relax(&mut self, w: usize, d: f64, by: usize) {
        if !self.settled[w] && d < self.distance[w] {
            self.distance[w] = d;
            self.reached_by[w] = by;
            self.heap.push(Reverse((order_key(d), w)));
        }
    }

    /// Flip the alternating path the last search found into the matching.
    fn augment(&mut self) {
        let n_left = self.n_left;
        let sink = n_left + self.n_right;
        let mut right = self.reached_by[sink] - n_left;
        loop {
            let e = self.reached_by[n_left + right];
            let left = self.edges[e].0;
            let previous = self.matched_left[left];
            self.matched_left[left] = e;
            self.matched_right[right] = e;
            if previous == NONE {
                break;
            }
            right = self.edges[previous].1;
        }
    }
}

impl LinearMinimizationOracle for BipartiteMatchingPolytope {
    /// A minimum-cost matching of any size for the edge costs `direction`: an optimal matching uses only
    /// edges of negative cost (dropping any other does not raise the cost), so only those are searched, and
    /// successive shortest augmenting paths with potentials (Dijkstra on reduced costs, the sink reached from
    /// every free right node) add one edge each while the path's true cost is negative. The cost of the best
    /// matching of size `k` is convex in `k` (it is a min-cost flow of value `k`), so stopping at the first
    /// non-negative path is optimal. At most `min(n_left, n_right)` searches of `O((m + n) log m)` each, so no
    /// iteration cap is needed; no allocation. Ties: a path of cost exactly 0 is not taken, heap ties go to
    /// the lower node index, relaxations run in edge order.
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let (n_left, sink) = (self.n_left, self.n_left + self.n_right);
        let scale = power_of_two_scale(direction);
        self.scaled
            .iter_mut()
            .zip(direction)
            .for_each(|(s, d)| *s = scale * d);
        self.matched_left.fill(NONE);
        self.matched_right.fill(NONE);
        // Initial potentials: shortest distances from the source in the empty matching's residual graph.
        self.potential.fill(0.0);
        for (e, &(_, j)) in self.edges.iter().enumerate() {
            let p = &mut self.potential[n_left + j];
            *p = p.min(self.scaled[e]);
        }
        self.potential[sink] = self.potential[n_left..sink]
            .iter()
            .fold(0.0, |m: f64, &p| m.min(p));
        while self.search() {
            let reduced = self.distance[sink];
            if reduced + self.potential[sink] >= 0.0 {
                break;
            }
            self.augment();
            for v in 0..=sink {
                self.potential[v] += if self.settled[v] {
                    self.distance[v].min(reduced)
                } else {
                    reduced
                };
            }
        }
        vertex.fill(0.0);
        for &e in &self.matched_left {
            if e != NONE {
                vertex[e] = 1.0;
            }
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// `x_e ≥ −atol` and `Σ_{e ∋ v} x_e ≤ 1 + atol` at every node (the exact description above).
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        if x.len() != self.edges.len() || x.iter().any(|&v| v < -atol) {
            return false;
        }
        let mut load = vec![0.0; self.n_left + self.n_right];
        for (&(i, j), &v) in self.edges.iter().zip(x) {
            load[i] += v;
            load[self.n_left + j] += v;
        }
        load.iter().all(|&l| l <= 1.0 + atol)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Indicator vectors of every matching (the graph has at most ~12 edges).
    fn all_matchings(p: &BipartiteMatchingPolytope) -> Vec<Vec<f64>> {
        let m = p.edges.len();
        (0u32..1 << m)
            .map(|mask| {
                testing::indicator(
                    m,
                    &(0..m).filter(|e| mask >> e & 1 == 1).collect::<Vec<_>>(),
                )
            })
            .filter(|x| p.contains(x, 0.0))
            .collect()
    }

    fn example() -> BipartiteMatchingPolytope {
        let edges = vec![
            (0, 0),
            (0, 1),
            (1, 0),
            (1, 2),
            (2, 1),
            (2, 2),
            (3, 2),
            (1, 0),
            (3, 3),
        ];
        BipartiteMatchingPolytope::new(4, 5, edges).unwrap()
    }

    #[test]
    fn lmo_matches_brute_force() {
        let mut p = example();
        let matchings = all_matchings(&p);
        testing::lmo_matches_brute_force(&mut p, &matchings, 31);
        // Random graphs.
        let mut rng = testing::rng(32);
        for trial in 0..30 {
            let (nl, nr) = (1 + trial % 4, 1 + trial % 5);
            let m = 1 + (rng.open01() * 10.0) as usize;
            let edges: Vec<(usize, usize)> = (0..m)
                .map(|_| {
                    (
                        (rng.open01() * nl as f64) as usize,
                        (rng.open01() * nr as f64) as usize,
                    )
                })
                .collect();
            let mut p = BipartiteMatchingPolytope::new(nl, nr, edges).unwrap();
            let matchings = all_matchings(&p);
            testing::lmo_matches_brute_force(&mut p, &matchings, 33 + trial as u64);
        }
    }

    #[test]
    fn ties_prefer_the_smaller_matching() {
        let mut p = BipartiteMatchingPolytope::new(2, 2, vec![(0, 0), (1, 1), (0, 1)]).unwrap();
        let mut v = [0.0; 3];
        p.lmo(&[0.0, -1.0, 0.0], &mut v);
        assert_eq!(v, [0.0, 1.0, 0.0]);
        p.lmo(&[1.0, 2.0, 0.0], &mut v);
        assert_eq!(v, [0.0; 3]);
        // Augmenting through a matched edge: 0-1 alone (-3) vs 0-0 and 1-1 (-2 - 2).
        p.lmo(&[-2.0, -2.0, -3.0], &mut v);
        assert_eq!(v, [1.0, 1.0, 0.0]);
    }

    #[test]
    fn geometry_certificate_and_frank_wolfe() {
        let mut p = example();
        testing::certified_ball_is_inside(&mut p, 34);
        testing::projection_is_orthogonal(&mut p, 35);
        let matchings = all_matchings(&p);
        let diam = testing::diameter_of(&matchings);
        assert!(p.diameter() >= diam);
        let mut domain = crate::domains::Domain::BipartiteMatching(Box::new(example()));
        testing::frank_wolfe_converges(&mut domain, 36);
    }

    #[test]
    fn bad_graphs_are_named() {
        let err = BipartiteMatchingPolytope::new(2, 2, vec![(0, 1), (2, 0)]).unwrap_err();
        assert!(err.to_string().contains("edge 1 = (2, 0)"), "{err}");
        let err = BipartiteMatchingPolytope::new(2, 2, vec![(0, 2)]).unwrap_err();
        assert!(err.to_string().contains("edge 0 = (0, 2)"), "{err}");
        assert!(BipartiteMatchingPolytope::new(2, 2, vec![]).is_err());
    }

    #[test]
    fn serde_round_trip() {
        let d: Vec<f64> = (0..9).map(|i| (i as f64 * 1.3).sin()).collect();
        testing::state_round_trip(&mut example(), &d);
    }
}
