//! The flow polytope: the `source`-`target` flows of a given value in a directed graph with edge
//! capacities, one coordinate per edge.

use serde::{Deserialize, Serialize};

use super::dag::{reachable, strongly_connected_components, topological_order};
use super::flow_projection::{Arc, DENSE_LIMIT, FlowProjection};
use super::graph::{Adjacency, Direction, NONE, UnionFind, check_edges, check_terminals, is_flow};
use super::linalg::power_of_two_scale;
use super::network_simplex::{NetworkSimplex, Outcome};
use super::{Geometry, LinearMinimizationOracle};
use crate::error::{CoreError, Result};

/// Relative size (to `value + max capacity`) below which a residual capacity counts as none when the edges
/// that are fixed on the whole polytope are identified; an edge whose range over the polytope is narrower
/// than that is treated as fixed.
const RESIDUAL_TOLERANCE: f64 = 1e-10;

/// The flows `{x : 0 ≤ x_e ≤ cap_e, out(v) − in(v) = value·([v = s] − [v = t]) ∀v}` of a directed multigraph
/// (parallel edges and directed cycles allowed, no self-loops), one coordinate per edge.
///
/// Without capacities the graph must be acyclic (a directed cycle could carry any amount of circulation);
/// then every flow is a combination of `value`-weighted `s`-`t` paths, so `x_e ≤ value` holds on the whole
/// polytope and is used as the edges' capacity internally: the polytope is `value` times the path polytope.
///
/// Geometry, from one feasible flow `x⁰`: an edge is *free* (takes more than one value on the polytope) iff
/// one of its residual arcs lies on a directed cycle of the residual graph of `x⁰` (the feasible directions at
/// `x⁰` are the circulations of that graph), i.e. iff it has a residual arc and its ends are in one strongly
/// connected component of that graph; the others are fixed at their value in `x⁰`. The affine hull is
/// `{conservation, x_e = x⁰_e for fixed e}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "FlowPolytopeSpec", into = "FlowPolytopeSpec")]
pub struct FlowPolytope {
    num_nodes: usize,
    edges: Vec<(usize, usize)>,
    source: usize,
    target: usize,
    capacities: Option<Vec<f64>>,
    value: f64,
    /// The capacities used (`value` on every edge when none are given).
    caps: Vec<f64>,
    solver: NetworkSimplex,
    free: Vec<bool>,
    geometry: Geometry,
    /// LMO scratch: the scaled costs.
    scaled: Vec<f64>,
    /// LMO calls that reached the simplex's pivot cap (not observed; see [`FlowPolytope::capped_calls`]).
    capped: u64,
    /// Built on the first `project_tangent` call.
    projection: FlowProjection,
}

constructor_spec! {
    /// What a pickled [`FlowPolytope`] stores: its constructor arguments (validated again on restore).
    FlowPolytopeSpec for FlowPolytope |p| {
        num_nodes: usize = p.num_nodes,
        edges: Vec<(usize, usize)> = p.edges,
        source: usize = p.source,
        target: usize = p.target,
        capacities: Option<Vec<f64>> = p.capacities,
        value: f64 = p.value,
    }
}

impl FlowPolytope {
    /// The polytope of `source`-`target` flows of `value` in the directed graph with nodes `0..num_nodes`
    /// and edges `(u, v)`, within `capacities` (one per edge) if given.
    ///
    /// Cost: one phase-1 network simplex (a feasible flow), one strong-components pass, and a few LMO calls
    /// for the interior point (see [`LinearMinimizationOracle::interior_point`]).
    ///
    /// Errors: [`CoreError::InvalidGraph`] for bad terminals, no edges, an endpoint out of range, a
    /// self-loop, a directed cycle without capacities (one is reported), or no directed path from `source` to
    /// `target` through edges of positive capacity; [`CoreError::InvalidArgument`] for `value` not finite and
    /// `> 0`, a negative capacity, or a `value` above the maximum flow (reported); [`CoreError::Shape`] /
    /// [`CoreError::NonFinite`] for `capacities`; [`CoreError::IterationLimit`] if phase 1 reaches its cap.
    pub fn new(
        num_nodes: usize,
        edges: Vec<(usize, usize)>,
        source: usize,
        target: usize,
        capacities: Option<Vec<f64>>,
        value: f64,
    ) -> Result<Self> {
        check_terminals(num_nodes, source, target)?;
        super::reserve_for("FlowPolytope", num_nodes.max(edges.len()))?;
        if edges.is_empty() {
            return Err(CoreError::InvalidGraph("the graph has no edges".into()));
        }
        check_edges(num_nodes, &edges)?;
        crate::error::check_positive("value", value)?;
        let m = edges.len();
        let caps = match &capacities {
            Some(c) => {
                crate::error::check_len("capacities", c, m)?;
                crate::error::check_finite("capacities", c)?;
                if let Some(i) = c.iter().position(|&x| x < 0.0) {
                    return Err(CoreError::invalid(
                        "capacities",
                        ">= 0 on every edge",
                        format!("capacities[{i}] = {}", c[i]),
                    ));
                }
                c.clone()
            }
            None => {
                topological_order(
                    num_nodes,
                    &edges,
                    "without capacities a directed cycle can carry any amount of circulation, so the \
                     polytope is unbounded: give capacities",
                )?;
                vec![value; m]
            }
        };
        let usable: Vec<(usize, usize)> = edges
            .iter()
            .zip(&caps)
            .filter(|(_, c)| **c > 0.0)
            .map(|(e, _)| *e)
            .collect();
        let adjacency = Adjacency::new(num_nodes, &usable, Direction::Outgoing);
        if !reachable(&adjacency, num_nodes, source)[target] {
            return Err(CoreError::InvalidGraph(format!(
                "no directed path from source {source} to target {target} through edges of positive capacity"
            )));
        }
        let mut supply = vec![0.0; num_nodes];
        supply[source] = value;
        supply[target] = -value;
        let (solver, routed) = NetworkSimplex::new(num_nodes, &edges, &caps, &supply)?;
        let scale = value + caps.iter().fold(0.0f64, |a, &c| a.max(c));
        if routed < value - RESIDUAL_TOLERANCE * scale {
            return Err(CoreError::InvalidArgument {
                name: "value",
                allowed: "at most the maximum source-target flow the capacities allow",
                value: format!("{value} (the maximum flow is {routed})"),
            });
        }
        let mut polytope = FlowPolytope {
            num_nodes,
            edges,
            source,
            target,
            capacities,
            value,
            caps,
            solver,
            free: vec![false; m],
            geometry: Geometry::new(0.0, vec![0.0; m], None, 0),
            scaled: vec![0.0; m],
            capped: 0,
            projection: FlowProjection::default(),
        };
        polytope.describe(scale * RESIDUAL_TOLERANCE)?;
        polytope.projection = polytope.build_projection(DENSE_LIMIT);
        Ok(polytope)
    }

    /// The directed edges, one per coordinate.
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// The flow value.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The capacities given to the constructor (`None`: uncapacitated).
    pub fn capacities(&self) -> Option<&[f64]> {
        self.capacities.as_deref()
    }

    /// How many LMO calls of this object reached the network simplex's pivot cap and returned a feasible
    /// vertex that may not be optimal (expected 0: the cap is `50` pivots per arc).
    pub fn capped_calls(&self) -> u64 {
        self.capped
    }

    /// Free edges and the [`Geometry`]:
    /// - centre: the average of `x⁰` and of the LMO vertices for `±e_e` needed so that every free edge is
    ///   above the tolerance in one averaged vertex and below its capacity minus the tolerance in one: the
    ///   average then has every free edge strictly inside `(0, cap_e)` and meets the equalities, so it is in
    ///   the relative interior. At most two LMO calls per free edge, usually far fewer;
    /// - radius: `min_{e free} min(c_e, cap_e − c_e)` at the centre `c` (`None` only if that is not positive).
    ///   Certificate: the polytope is the affine hull intersected with `{0 ≤ x_e ≤ cap_e : e free}` (the fixed
    ///   edges' bounds hold on the whole hull, where those edges are constant). For a tangent `u` with
    ///   `‖u‖ ≤ r`, `|u_e| ≤ r` on every free edge, so `c + u` keeps every free edge within its bounds and
    ///   stays in the hull. Without capacities the bound `x_e ≤ value` is implied, which only makes `r`
    ///   smaller than necessary;
    /// - affine dimension: `m_free − rank`, the rank of the free edges' incidence matrix being their touched
    ///   nodes minus their connected components: the dimension of the free edges' circulation space;
    /// - diameter, an upper bound. With capacities: `√(Σ_{e free} cap_e²)` (each free coordinate ranges
    ///   within `[0, cap_e]`, fixed ones do not vary). Without: `value·√min(2L, m_free)` with `L` the number
    ///   of edges of a longest `s`-`t` path, since the vertices are `value·1_P` for paths `P` and
    ///   `|P Δ Q| ≤ |P| + |Q|`.
    fn describe(&mut self, tolerance: f64) -> Result<()> {
        let m = self.edges.len();
        let mut x0 = vec![0.0; m];
        self.lmo(&vec![0.0; m], &mut x0);
        let mut residual_arcs = Vec::with_capacity(2 * m);
        for (&(u, v), (&x, &c)) in self.edges.iter().zip(x0.iter().zip(&self.caps)) {
            if c - x > tolerance {
                residual_arcs.push((u, v));
            }
            if x > tolerance {
                residual_arcs.push((v, u));
            }
        }
        let component = strongly_connected_components(self.num_nodes, &residual_arcs);
        for (e, &(u, v)) in self.edges.iter().enumerate() {
            let movable = self.caps[e] - x0[e] > tolerance || x0[e] > tolerance;
            self.free[e] = movable && component[u] == component[v];
        }
        // Interior point: the average of LMO vertices chosen so that every free edge is above `tolerance`
        // in one of them and below `cap − tolerance` in one of them.
        let (mut low, mut high) = (x0.clone(), x0.clone());
        let mut sum = x0.clone();
        let mut count = 1.0;
        let mut direction = vec![0.0; m];
        let mut vertex = vec![0.0; m];
        for e in 0..m {
            if !self.free[e] {
                continue;
            }
            for (needs, sign) in [
                (high[e] <= tolerance, -1.0),
                (low[e] >= self.caps[e] - tolerance, 1.0),
            ] {
                if !needs {
                    continue;
                }
                direction[e] = sign;
                self.lmo(&direction, &mut vertex);
                direction[e] = 0.0;
                for i in 0..m {
                    low[i] = low[i].min(vertex[i]);
                    high[i] = high[i].max(vertex[i]);
                    sum[i] += vertex[i];
                }
                count += 1.0;
            }
        }
        let center: Vec<f64> = sum.iter().map(|s| s / count).collect();
        let slack = (0..m)
            .filter(|&e| self.free[e])
            .map(|e| center[e].min(self.caps[e] - center[e]))
            .fold(f64::INFINITY, f64::min);
        // Affine dimension: free edges minus the rank of their incidence matrix (touched nodes minus
        // components).
        // (Each union that merges two components adds one to the rank, so the rank is the number of merges.)
        let mut sets = UnionFind::new(self.num_nodes);
        let (mut free_edges, mut merges) = (0, 0);
        for (&(u, v), _) in self.edges.iter().zip(&self.free).filter(|(_, f)| **f) {
            free_edges += 1;
            merges += usize::from(sets.union(u, v));
        }
        let affine_dim = free_edges - merges;
        if affine_dim == 0 {
            return Err(CoreError::InvalidArgument {
                name: "value",
                allowed: "a value and capacities that admit more than one flow (here every edge is fixed: the \
                          polytope is a single point)",
                value: format!("{}", self.value),
            });
        }
        let diameter = match &self.capacities {
            Some(_) => (0..m)
                .filter(|&e| self.free[e])
                .map(|e| self.caps[e] * self.caps[e])
                .sum::<f64>()
                .sqrt(),
            None => self.value * (self.longest_path().min(free_edges) as f64 * 2.0).sqrt(),
        };
        self.geometry = Geometry::new(diameter, center, Some(slack), affine_dim);
        Ok(())
    }

    /// Number of edges of a longest `source`-`target` path (acyclic graphs only), capped by half the edges
    /// so that `2·longest ≤ m` is the other bound.
    fn longest_path(&self) -> usize {
        let Ok(order) = topological_order(self.num_nodes, &self.edges, "") else {
            return self.edges.len();
        };
        let outgoing = Adjacency::new(self.num_nodes, &self.edges, Direction::Outgoing);
        let mut longest = vec![NONE; self.num_nodes];
        longest[self.source] = 0;
        for v in order {
            if longest[v] == NONE {
                continue;
            }
            for &(w, _) in outgoing.of(v) {
                if longest[w] == NONE || longest[w] < longest[v] + 1 {
                    longest[w] = longest[v] + 1;
                }
            }
        }
        longest[self.target].min(self.edges.len())
    }

    /// The projection onto the free edges' circulations: one grounded node per connected component of the
    /// free edges.
    fn build_projection(&self, dense_limit: usize) -> FlowProjection {
        let mut sets = UnionFind::new(self.num_nodes);
        for (&(u, v), _) in self.edges.iter().zip(&self.free).filter(|(_, f)| **f) {
            sets.union(u, v);
        }
        // Rows: every node a free edge touches, except the first one met (in edge order) in each component.
        let mut grounded = vec![NONE; self.num_nodes];
        let mut row = vec![NONE; self.num_nodes];
        let mut rows = 0;
        let mut arcs = Vec::new();
        for (e, &(u, v)) in self.edges.iter().enumerate().filter(|(e, _)| self.free[*e]) {
            for w in [u, v] {
                let root = sets.find(w);
                if grounded[root] == NONE {
                    grounded[root] = w;
                } else if grounded[root] != w && row[w] == NONE {
                    row[w] = rows;
                    rows += 1;
                }
            }
            arcs.push((e, u, v));
        }
        let arcs = arcs
            .into_iter()
            .map(|(e, u, v)| Arc {
                coordinate: e,
                tail: row[u],
                head: row[v],
            })
            .collect();
        FlowProjection::new(rows, arcs, self.edges.len(), dense_limit)
    }
}

impl LinearMinimizationOracle for FlowPolytope {
    /// A minimum-cost flow for the edge costs `direction` (any sign; negative-cost cycles are saturated) by
    /// the primal network simplex from a stored feasible basis (see `network_simplex`): a vertex, a
    /// deterministic function of the direction, with cost within `10⁻¹¹·(8n + 10)·Σ_e cap_e·max|d|` of the
    /// minimum. The simplex stops after `50·(m + n)` pivots (never observed) and then returns the feasible
    /// vertex it holds, counted by [`FlowPolytope::capped_calls`]. No allocation.
    fn lmo(&mut self, direction: &[f64], vertex: &mut [f64]) {
        let scale = power_of_two_scale(direction);
        self.scaled
            .iter_mut()
            .zip(direction)
            .for_each(|(s, d)| *s = scale * d);
        if self.solver.solve(&self.scaled, vertex) == Outcome::CapReached {
            self.capped += 1;
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Orthogonal projection onto the circulations of the free edges (zero on fixed edges):
    /// `u ↦ u − Aᵀ (A Aᵀ)⁻¹ A u` on the free edges, with one grounded node per connected component (see
    /// `flow_projection`: a dense Cholesky factor up to 2000 rows, conjugate gradients beyond). The first call
    /// prepares the solver; later calls do not allocate.
    fn project_tangent(&mut self, u: &mut [f64]) {
        self.projection.project(u);
    }

    /// `−atol ≤ x_e ≤ cap_e + atol` (no upper test without capacities) and `|out(v) − in(v) − b_v| ≤ atol` at
    /// every node.
    fn contains(&self, x: &[f64], atol: f64) -> bool {
        let capacitated = self.capacities.is_some();
        let terminals = (self.source, self.target, self.value);
        is_flow(self.num_nodes, &self.edges, terminals, x, atol, |e, xe| {
            !capacitated || xe <= self.caps[e] + atol
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Every integer flow (the vertices are among them: the constraint matrix is totally unimodular).
    fn integer_flows(p: &FlowPolytope) -> Vec<Vec<f64>> {
        let m = p.edges.len();
        let caps: Vec<usize> = p.caps.iter().map(|&c| c as usize).collect();
        let mut out = Vec::new();
        let mut x = vec![0usize; m];
        loop {
            let point: Vec<f64> = x.iter().map(|&v| v as f64).collect();
            if p.contains(&point, 1e-12) {
                out.push(point);
            }
            let mut i = 0;
            while i < m && x[i] == caps[i] {
                x[i] = 0;
                i += 1;
            }
            if i == m {
                break;
            }
            x[i] += 1;
        }
        out
    }

    /// Rank of the differences of `points` from the first one.
    fn affine_rank(points: &[Vec<f64>]) -> usize {
        let mut rows: Vec<Vec<f64>> = points[1..]
            .iter()
            .map(|p| p.iter().zip(&points[0]).map(|(a, b)| a - b).collect())
            .collect();
        let cols = points[0].len();
        let mut rank = 0;
        for c in 0..cols {
            let Some(pivot) = (rank..rows.len()).find(|&r| rows[r][c].abs() > 1e-9) else {
                continue;
            };
            rows.swap(rank, pivot);
            for r in 0..rows.len() {
                if r != rank {
                    let f = rows[r][c] / rows[rank][c];
                    let pivot_row = rows[rank].clone();
                    rows[r]
                        .iter_mut()
                        .zip(&pivot_row)
                        .for_each(|(x, y)| *x -= f * y);
                }
            }
            rank += 1;
        }
        rank
    }

    /// Random small graphs with cycles and parallel edges, integer capacities in 0..=2.
    fn random_instances() -> Vec<FlowPolytope> {
        let mut rng = testing::rng(131);
        let mut out = Vec::new();
        while out.len() < 25 {
            let n = 3 + (rng.open01() * 3.0) as usize;
            let m = 3 + (rng.open01() * 5.0) as usize;
            let edges: Vec<(usize, usize)> = (0..m)
                .map(|_| {
                    (
                        (rng.open01() * n as f64) as usize,
                        (rng.open01() * n as f64) as usize,
                    )
                })
                .filter(|(u, v)| u != v)
                .collect();
            let caps: Vec<f64> = edges.iter().map(|_| (rng.open01() * 3.0).floor()).collect();
            let value = if rng.open01() < 0.5 { 1.0 } else { 2.0 };
            if let Ok(p) = FlowPolytope::new(n, edges, 0, n - 1, Some(caps), value) {
                assert!(p.affine_dim() > 0);
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn lmo_matches_brute_force_and_the_affine_hull() {
        for (i, mut p) in random_instances().into_iter().enumerate() {
            let points = integer_flows(&p);
            testing::lmo_matches_brute_force(&mut p, &points, 132 + i as u64);
            assert_eq!(
                p.affine_dim(),
                affine_rank(&points),
                "{:?} {:?}",
                p.edges,
                p.caps
            );
            assert_eq!(p.capped_calls(), 0);
        }
    }

    #[test]
    fn geometry_certificate_projection_and_frank_wolfe() {
        for (i, mut p) in random_instances().into_iter().enumerate() {
            let seed = 160 + 3 * i as u64;
            testing::certified_ball_is_inside(&mut p, seed);
            testing::projection_is_orthogonal(&mut p, seed + 1);
            let points = integer_flows(&p);
            let diam = testing::diameter_of(&points);
            assert!(p.diameter() >= diam - 1e-12);
        }
        let mut domain = crate::domains::Domain::Flow(Box::new(random_instances().remove(3)));
        testing::frank_wolfe_converges(&mut domain, 190);
    }

    #[test]
    fn without_capacities_it_is_value_times_the_path_polytope() {
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
            (1, 4),
        ];
        let mut flow = FlowPolytope::new(6, edges.clone(), 0, 4, None, 2.5).unwrap();
        let mut path = crate::domains::PathPolytope::new(6, edges, 0, 4).unwrap();
        assert_eq!(flow.affine_dim(), path.affine_dim());
        let mut rng = testing::rng(191);
        let (mut a, mut b) = (vec![0.0; 10], vec![0.0; 10]);
        for _ in 0..40 {
            let d = testing::gaussian(&mut rng, 10);
            flow.lmo(&d, &mut a);
            path.lmo(&d, &mut b);
            for (x, y) in a.iter().zip(&b) {
                assert!((x - 2.5 * y).abs() < 1e-12, "{a:?} vs {b:?}");
            }
        }
        assert!(flow.diameter() <= 2.5 * path.diameter() + 1e-12);
        testing::certified_ball_is_inside(&mut flow, 192);
        testing::projection_is_orthogonal(&mut flow, 193);
    }

    #[test]
    fn negative_cycles_ties_and_degenerate_instances() {
        // s = 0 -> 1 -> t = 2 with a cycle 1 -> 3 -> 1: the negative cycle is saturated.
        let mut p = FlowPolytope::new(
            4,
            vec![(0, 1), (1, 2), (1, 3), (3, 1)],
            0,
            2,
            Some(vec![1.0, 1.0, 4.0, 3.0]),
            1.0,
        )
        .unwrap();
        let mut v = vec![0.0; 4];
        p.lmo(&[0.0, 0.0, -1.0, -0.5], &mut v);
        assert_eq!(v, [1.0, 1.0, 3.0, 3.0]);
        // The zero direction: the stored feasible basis, the same every time.
        p.lmo(&[0.0; 4], &mut v);
        let first = v.clone();
        p.lmo(&[1.0, -2.0, 0.5, 0.0], &mut v);
        p.lmo(&[0.0; 4], &mut v);
        assert_eq!(v, first);
        // Value equal to the maximum flow: the cut edges are fixed at capacity; zero-capacity edges at 0.
        let p = FlowPolytope::new(
            4,
            vec![(0, 1), (0, 2), (1, 3), (2, 3), (1, 2), (2, 1)],
            0,
            3,
            Some(vec![1.0, 1.0, 5.0, 5.0, 0.0, 2.0]),
            2.0,
        )
        .unwrap();
        assert!(!p.free[0] && !p.free[1] && !p.free[4]);
        assert!(p.free[2] && p.free[3] && p.free[5]);
        assert_eq!(p.affine_dim(), 1);
        assert_eq!((p.interior_point()[0], p.interior_point()[1]), (1.0, 1.0));
    }

    #[test]
    fn bad_inputs_are_named() {
        let edges = vec![(0, 1), (1, 2), (0, 2)];
        let err = |caps: Option<Vec<f64>>, value: f64| {
            FlowPolytope::new(3, edges.clone(), 0, 2, caps, value)
                .unwrap_err()
                .to_string()
        };
        assert!(err(Some(vec![1.0, -1.0, 1.0]), 1.0).contains("capacities[1] = -1"));
        assert!(err(Some(vec![1.0, f64::NAN, 1.0]), 1.0).starts_with("capacities must be finite"));
        assert!(err(Some(vec![1.0, 1.0]), 1.0).starts_with("capacities must have length 3"));
        let e = err(Some(vec![1.0, 0.5, 0.25]), 1.0);
        assert!(
            e.starts_with("value must be at most") && e.contains("the maximum flow is 0.75"),
            "{e}"
        );
        for bad in [0.0, -1.0, f64::INFINITY] {
            assert!(err(None, bad).starts_with("value must be"));
        }
        let e = FlowPolytope::new(3, vec![(0, 1), (2, 1)], 0, 2, None, 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no directed path from source 0 to target 2"),
            "{e}"
        );
        let e = FlowPolytope::new(3, vec![(0, 1), (1, 2)], 0, 2, Some(vec![1.0, 0.0]), 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("positive capacity"), "{e}");
        let e = FlowPolytope::new(3, vec![(0, 1), (1, 0), (1, 2)], 0, 2, None, 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("directed cycle") && e.contains("give capacities"),
            "{e}"
        );
        assert!(FlowPolytope::new(3, vec![], 0, 2, None, 1.0).is_err());
        let e = FlowPolytope::new(3, vec![(0, 1), (1, 2)], 0, 2, None, 1.0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("single point"), "{e}");
        assert!(FlowPolytope::new(3, vec![(0, 0)], 0, 2, None, 1.0).is_err());
        assert!(FlowPolytope::new(3, vec![(0, 2)], 0, 0, None, 1.0).is_err());
    }

    #[test]
    fn serde_round_trip() {
        let mut p = random_instances().remove(0);
        let d: Vec<f64> = (0..p.dim()).map(|i| (i as f64 * 0.9).sin()).collect();
        let back = testing::state_round_trip(&mut p, &d);
        assert_eq!(p.interior_point(), back.interior_point());
    }
}
