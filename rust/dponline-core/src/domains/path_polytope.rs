//! The s-t path polytope of a directed acyclic graph: the convex hull of the indicator vectors (one
//! coordinate per edge) of the directed paths from `source` to `target`.

use serde::{Deserialize, Serialize};

use super::dag::{orient_away_from, reachable, topological_order};
use super::flow_projection::{Arc, DENSE_LIMIT, FlowProjection};
use super::graph::{Adjacency, Direction, NONE, check_edges, check_terminals, is_flow};
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// The s-t path polytope of a DAG, one coordinate per edge (parallel edges allowed).
///
/// An edge is *live* if it lies on some s-t path (its tail is reachable from `source` and `target` is
/// reachable from its head); other edges are *dead* and are 0 on the whole polytope. Because the graph
/// is acyclic, the polytope equals the unit-flow polytope
/// `{x ≥ 0 : out(v) − in(v) = [v = s] − [v = t] ∀v, x_e = 0 for dead e}` (every unit s-t flow in a DAG is a
/// convex combination of paths), which is how `contains` tests membership.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "PathPolytopeSpec", into = "PathPolytopeSpec")]
pub struct PathPolytope {
    num_nodes: usize,
    edges: Vec<(usize, usize)>,
    source: usize,
    target: usize,
    live: Vec<bool>,
    /// Live nodes in topological order: `order[0] = source`, the last is `target`.
    order: Vec<usize>,
    /// Incoming live edges of the node at position `p` of `order`:
    /// `incoming[in_start[p]..in_start[p + 1]]`, as `(edge, position of its tail)`, by edge index.
    in_start: Vec<usize>,
    incoming: Vec<(usize, usize)>,
    geometry: Geometry,
    /// LMO scratch, by position: best cost from `source`, and the `incoming` entry achieving it.
    cost: Vec<f64>,
    best_in: Vec<usize>,
    /// Built on the first `project_tangent` call.
    projection: FlowProjection,
}

constructor_spec! {
    /// What a pickled [`PathPolytope`] stores: its constructor arguments (validated again on restore).
    PathPolytopeSpec for PathPolytope |p| {
        num_nodes: usize = p.num_nodes,
        edges: Vec<(usize, usize)> = p.edges,
        source: usize = p.source,
        target: usize = p.target,
    }
}

/// `ln(eᵃ + eᵇ)` without overflow; `a = −∞` is the empty sum.
fn log_add(a: f64, b: f64) -> f64 {
    if a == f64::NEG_INFINITY {
        return b;
    }
    let (hi, lo) = if a > b { (a, b) } else { (b, a) };
    hi + (lo - hi).exp().ln_1p()
}

impl PathPolytope {
    /// The polytope of directed `source`-`target` paths in the DAG with nodes `0..num_nodes` and directed
    /// edges `(u, v)`. `O(n + m)`; the tangent projection's factor is built later, on first use.
    ///
    /// Errors: [`CoreError::InvalidGraph`] if `source` or `target` is not a node or they are equal, an
    /// edge endpoint is out of range, an edge is a self-loop, the graph has a directed cycle (one is
    /// reported), or no directed path leads from `source` to `target`.
    pub fn new(
        num_nodes: usize,
        edges: Vec<(usize, usize)>,
        source: usize,
        target: usize,
    ) -> Result<Self> {
        check_terminals(num_nodes, source, target)?;
        super::reserve_for("PathPolytope", num_nodes.max(edges.len()))?;
        check_edges(num_nodes, &edges)?;
        let topological = topological_order(
            num_nodes,
            &edges,
            "a path polytope needs a directed acyclic graph",
        )?;
        let from_source = reachable(
            &Adjacency::new(num_nodes, &edges, Direction::Outgoing),
            num_nodes,
            source,
        );
        if !from_source[target] {
            return Err(CoreError::InvalidGraph(format!(
                "no directed path from source {source} to target {target}"
            )));
        }
        let to_target = reachable(
            &Adjacency::new(num_nodes, &edges, Direction::Incoming),
            num_nodes,
            target,
        );
        let live: Vec<bool> = edges
            .iter()
            .map(|&(u, v)| from_source[u] && to_target[v])
            .collect();
        let order: Vec<usize> = topological
            .into_iter()
            .filter(|&v| from_source[v] && to_target[v])
            .collect();
        let mut position = vec![NONE; num_nodes];
        order.iter().enumerate().for_each(|(p, &v)| position[v] = p);
        let k = order.len();
        let mut in_start = vec![0usize; k + 1];
        for (&(_, v), _) in edges.iter().zip(&live).filter(|(_, l)| **l) {
            in_start[position[v] + 1] += 1;
        }
        for p in 0..k {
            in_start[p + 1] += in_start[p];
        }
        let mut fill = in_start.clone();
        let mut incoming = vec![(0, 0); in_start[k]];
        for (e, &(u, v)) in edges.iter().enumerate().filter(|(e, _)| live[*e]) {
            incoming[fill[position[v]]] = (e, position[u]);
            fill[position[v]] += 1;
        }
        let mut polytope = PathPolytope {
            num_nodes,
            edges,
            source,
            target,
            live,
            order,
            in_start,
            incoming,
            geometry: Geometry::new(0.0, Vec::new(), None, 0),
            cost: vec![0.0; k],
            best_in: vec![0; k],
            projection: FlowProjection::default(),
        };
        polytope.describe();
        polytope.projection = polytope.build_projection(DENSE_LIMIT);
        Ok(polytope)
    }

    /// The path polytope of an undirected graph oriented away from `source`.
    ///
    /// Every undirected edge `{u, v}` is kept as coordinate `i` (in input order) and oriented from the
    /// endpoint with the smaller `(breadth-first distance from source, node index)` to the other, which
    /// makes the graph acyclic. So edges between nodes at equal distance are oriented from the lower to the
    /// higher index, and nothing is dropped; edges that then lie on no source-target path (those beyond
    /// `target`, in other components, or only reachable backwards) stay as coordinates fixed at 0. The
    /// directed paths are the undirected simple paths along which the key increases.
    ///
    /// Errors: as [`PathPolytope::new`] (an endpoint out of range, a self-loop, bad terminals, or
    /// `target` not connected to `source`).
    pub fn from_undirected(
        num_nodes: usize,
        edges: &[(usize, usize)],
        source: usize,
        target: usize,
    ) -> Result<Self> {
        check_terminals(num_nodes, source, target)?;
        super::reserve_for("PathPolytope", num_nodes.max(edges.len()))?;
        check_edges(num_nodes, edges)?;
        PathPolytope::new(
            num_nodes,
            orient_away_from(num_nodes, edges, source),
            source,
            target,
        )
    }

    /// The directed edges, one per coordinate.
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// The [`Geometry`]:
    /// - diameter, the upper bound `√min(2·L, m_live)`, with `L` the number of edges of a longest s-t path and
    ///   `m_live` the number of live edges: for paths `P, Q`, `‖1_P − 1_Q‖² = |P Δ Q| ≤ |P| + |Q| ≤ 2L`, and
    ///   `P Δ Q` consists of live edges;
    /// - centre: the uniform average of all s-t paths: `c_e = N(s→u)·N(v→t)/N(s→t)` for a live edge
    ///   `e = (u, v)` (`N` counts paths, computed in log space so large DAGs do not overflow), 0 for dead
    ///   edges. A strictly positive combination of all vertices, hence in the relative interior;
    /// - radius: `min_{e live} c_e` (`None` only if that underflows to 0). Certificate: by the flow
    ///   description, the affine hull is `{x : out(v) − in(v) = [v = s] − [v = t] ∀v, x_e = 0 for dead e}`
    ///   (`c` satisfies every remaining inequality `x_e ≥ 0`, e live, strictly, so the polytope is
    ///   full-dimensional in that flat), and the polytope is that flat intersected with `{x_e ≥ 0 : e live}`.
    ///   For `y = c + u` with `u` tangent and `‖u‖ ≤ r`, `y_e ≥ c_e − |u_e| ≥ c_e − r ≥ 0` for every live `e`,
    ///   and `y` stays in the flat, so `y` is in the polytope. The argument holds for the stored centre as
    ///   computed (the inequalities are checked against it); rounding only perturbs the equalities, by about
    ///   `m·ε·ln N(s→t)`;
    /// - affine dimension `m_live − n_live + 1`: the flat above has one independent equation per live node
    ///   but `target` (the live subgraph is connected, so its incidence matrix has rank `n_live − 1`).
    fn describe(&mut self) {
        let k = self.order.len();
        // Path counts in log space: from source to each node, and from each node to target.
        let mut log_from = vec![f64::NEG_INFINITY; k];
        let mut longest = vec![0usize; k];
        log_from[0] = 0.0;
        for p in 1..k {
            for &(_, tail) in self.entering(p) {
                log_from[p] = log_add(log_from[p], log_from[tail]);
                longest[p] = longest[p].max(longest[tail] + 1);
            }
        }
        let mut log_to = vec![f64::NEG_INFINITY; k];
        log_to[k - 1] = 0.0;
        for p in (1..k).rev() {
            for &(_, tail) in self.entering(p) {
                log_to[tail] = log_add(log_to[tail], log_to[p]);
            }
        }
        let log_total = log_from[k - 1];
        let mut center = vec![0.0; self.edges.len()];
        for (p, &to_target) in log_to.iter().enumerate().skip(1) {
            for &(e, tail) in self.entering(p) {
                center[e] = (log_from[tail] + to_target - log_total).exp();
            }
        }
        let live_edges = self.incoming.len();
        let smallest = self
            .incoming
            .iter()
            .map(|&(e, _)| center[e])
            .fold(f64::INFINITY, f64::min);
        self.geometry = Geometry::new(
            ((2 * longest[k - 1]).min(live_edges) as f64).sqrt(),
            center,
            Some(smallest),
            live_edges + 1 - k,
        );
    }

    /// Incoming live edges of the node at position `p`.
    fn entering(&self, p: usize) -> &[(usize, usize)] {
        &self.incoming[self.in_start[p]..self.in_start[p + 1]]
    }

    /// The projection onto the tangent space's live part, rows = every live node but `target`.
    fn build_projection(&self, dense_limit: usize) -> FlowProjection {
        let k = self.order.len();
        let row = |p: usize| if p == k - 1 { NONE } else { p };
        let arcs = (1..k)
            .flat_map(|p| {
                self.entering(p).iter().map(move |&(e, tail)| Arc {
                    coordinate: e,
                    tail: row(tail),
                    head: row(p),
                })
            })
            .collect();
        FlowProjection::new(k - 1, arcs, self.edges.len(), dense_limit)
    }
}

impl LinearMinimizationOracle for PathPolytope {
    /// A shortest s-t path for edge costs of any sign, by dynamic programming over the live nodes in
    /// topological order (exact on a DAG: no cycles, so no negative cycles). At each node the cheapest
    /// incoming edge wins, the lowest edge index on ties. `O(n + m)`, no allocation.
    #[inline]
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        self.cost[0] = 0.0;
        for p in 1..self.order.len() {
            let (lo, hi) = (self.in_start[p], self.in_start[p + 1]);
            let mut best = lo;
            let (e, tail) = self.incoming[lo];
            let mut best_cost = self.cost[tail] + direction[e];
            for j in lo + 1..hi {
                let (e, tail) = self.incoming[j];
                let c = self.cost[tail] + direction[e];
                if c < best_cost {
                    best_cost = c;
                    best = j;
                }
            }
            self.cost[p] = best_cost;
            self.best_in[p] = best;
        }
        vertex.fill(0.0);
        let mut p = self.order.len() - 1;
        while p != 0 {
            let (e, tail) = self.incoming[self.best_in[p]];
            vertex[e] = 1.0;
            p = tail;
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Orthogonal projection onto `{u : conservation at every live node, u_e = 0 for dead e}`:
    /// `u ↦ u − Aᵀ (A Aᵀ)⁻¹ A u` on the live edges, with `A` the incidence matrix of the live subgraph
    /// without `target`'s row. The first call prepares the solver: a dense Cholesky factor of the grounded
    /// Laplacian `A Aᵀ` when there are at most 2001 live nodes (`O(n_live³)` once, `O(n_live²)` per call),
    /// preconditioned conjugate gradients otherwise (`O(m_live)` per iteration, accurate to a relative
    /// residual of `1e-13`). Later calls do not allocate.
    fn project_tangent(&mut self, u: &mut [f64]) {
        self.projection.project(u);
    }

    /// `x_e ≥ −atol`, `|x_e| ≤ atol` on dead edges, and `|out(v) − in(v) − b_v| ≤ atol` at every node, with
    /// `b_s = 1`, `b_t = −1`, else `0`. Exact membership (the flow description above).
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        let terminals = (self.source, self.target, 1.0);
        is_flow(self.num_nodes, &self.edges, terminals, x, atol, |e, xe| {
            self.live[e] || xe.abs() <= atol
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Indicator vectors of all s-t paths, by depth-first enumeration.
    fn all_paths(p: &PathPolytope) -> Vec<Vec<f64>> {
        let out = Adjacency::new(p.num_nodes, &p.edges, Direction::Outgoing);
        let mut found = Vec::new();
        let mut stack = vec![(p.source, Vec::<usize>::new())];
        while let Some((v, used)) = stack.pop() {
            if v == p.target {
                found.push(testing::indicator(p.edges.len(), &used));
                continue;
            }
            for &(w, e) in out.of(v) {
                let mut next = used.clone();
                next.push(e);
                stack.push((w, next));
            }
        }
        found
    }

    /// A layered DAG with parallel edges, a dead edge into a sink, and an unreachable node.
    fn example() -> PathPolytope {
        let edges = vec![
            (0, 1),
            (0, 2),
            (1, 2),
            (1, 3),
            (2, 3),
            (2, 4),
            (3, 4),
            (3, 4),
            (3, 5),
            (6, 2),
            (1, 4),
        ];
        PathPolytope::new(7, edges, 0, 4).unwrap()
    }

    #[test]
    fn lmo_matches_brute_force() {
        let mut p = example();
        let paths = all_paths(&p);
        assert_eq!(paths.len(), 9);
        testing::lmo_matches_brute_force(&mut p, &paths, 51);
        let mut q = PathPolytope::from_undirected(
            6,
            &[
                (0, 1),
                (0, 2),
                (1, 2),
                (1, 3),
                (2, 3),
                (3, 4),
                (2, 4),
                (4, 5),
            ],
            0,
            5,
        )
        .unwrap();
        let paths = all_paths(&q);
        testing::lmo_matches_brute_force(&mut q, &paths, 52);
    }

    #[test]
    fn geometry_certificate_and_projection() {
        let mut p = example();
        assert_eq!(p.affine_dim(), 9 - 5 + 1);
        assert!(!p.live[8] && !p.live[9]);
        assert_eq!((p.interior_point()[8], p.interior_point()[9]), (0.0, 0.0));
        // 9 paths; edge (0, 1) is on 6: 0-1-2-3-4 (x2), 0-1-2-4, 0-1-3-4 (x2), 0-1-4.
        assert!((p.interior_point()[0] - 2.0 / 3.0).abs() < 1e-12);
        let paths = all_paths(&p);
        let longest = paths
            .iter()
            .map(|x| x.iter().sum::<f64>())
            .fold(0.0, f64::max);
        assert!((p.diameter() - (2.0 * longest).sqrt()).abs() < 1e-12);
        testing::certified_ball_is_inside(&mut p, 53);
        testing::projection_is_orthogonal(&mut p, 54);
    }

    #[test]
    fn iterative_projection_matches_the_dense_one() {
        let p = example();
        let mut dense = p.build_projection(DENSE_LIMIT);
        let mut iterative = p.build_projection(0);
        let mut rng = testing::rng(55);
        for _ in 0..5 {
            let u = testing::gaussian(&mut rng, p.dim());
            let (mut a, mut b) = (u.clone(), u);
            dense.project(&mut a);
            iterative.project(&mut b);
            assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-10));
        }
    }

    #[test]
    fn huge_path_counts_do_not_overflow() {
        // 1200 diamonds in a row: 2^1200 paths.
        let mut edges = Vec::new();
        for i in 0..1200 {
            let (a, up, down, b) = (3 * i, 3 * i + 1, 3 * i + 2, 3 * i + 3);
            edges.extend([(a, up), (a, down), (up, b), (down, b)]);
        }
        let mut p = PathPolytope::new(3601, edges, 0, 3600).unwrap();
        assert!(p.interior_point().iter().all(|&c| (c - 0.5).abs() < 1e-9));
        assert!((p.inscribed_radius().unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(p.affine_dim(), 1200);
        // 2401 live nodes: the projection goes iterative. Each diamond's tangent is (1, -1, 1, -1)/2.
        let mut u = vec![0.0; 4800];
        u[0] = 1.0;
        p.project_tangent(&mut u);
        let want = [0.25, -0.25, 0.25, -0.25];
        assert!(
            u[..4].iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-9),
            "{:?}",
            &u[..4]
        );
        assert!(u[4..].iter().all(|a| a.abs() < 1e-9));
    }

    #[test]
    fn malformed_graphs_are_named() {
        let msg = |n, e: Vec<(usize, usize)>, s, t| {
            PathPolytope::new(n, e, s, t).unwrap_err().to_string()
        };
        assert!(msg(3, vec![(0, 1), (1, 3)], 0, 2).contains("edge 1 = (1, 3)"));
        assert!(msg(3, vec![(0, 1), (1, 1)], 0, 2).contains("self-loop"));
        assert!(msg(4, vec![(0, 1), (1, 2), (2, 1), (2, 3)], 0, 3).contains("directed cycle"));
        assert!(
            msg(3, vec![(0, 1), (2, 1)], 0, 2)
                .contains("no directed path from source 0 to target 2")
        );
        assert!(msg(3, vec![(0, 1)], 1, 1).contains("same node 1"));
        assert!(msg(3, vec![(0, 1)], 0, 5).contains("target 5 is not a node"));
        let err = PathPolytope::from_undirected(4, &[(0, 1), (2, 3)], 0, 3).unwrap_err();
        assert!(err.to_string().contains("no directed path"));
    }

    #[test]
    fn serde_round_trip() {
        let d: Vec<f64> = (0..11).map(|i| (i as f64 * 0.7).sin()).collect();
        testing::state_round_trip(&mut example(), &d);
    }
}
