//! Membership in the forest polytope of a graph by minimum cuts (Padberg & Wolsey 1983; Cunningham 1984).
//!
//! The forest polytope is `{x ≥ 0 : x(E[S]) ≤ |S| − 1 for every non-empty node set S}`. Writing
//! `d_x(v) = Σ_{e∋v} x_e` and `x(δ(S))` for the weight of the edges leaving `S`,
//! `|S| − x(E[S]) = Σ_{v∈S} (1 − d_x(v)/2) + x(δ(S))/2`, a cut function: with `w_v = 1 − d_x(v)/2`, give each
//! node an arc `v → t` of capacity `w_v` if `w_v ≥ 0` and an arc `s → v` of capacity `−w_v` otherwise, and
//! each edge two opposite arcs of capacity `x_e/2`. The `s`-side `S` of a cut then costs
//! `|S| − x(E[S]) − Σ_{w_v<0} w_v`. Forcing `v_i` into `S` and `v_0..v_{i−1}` out of it (infinite arcs)
//! and taking the minimum over `i` ranges over every non-empty `S` once.

use super::graph::NONE;

/// Arc capacities at or below this count as saturated.
const SATURATED: f64 = 1e-13;

/// `min_{S ≠ ∅} |S| − x(E[S])` over node sets `S`, with negative `x_e` read as 0. `x ≥ 0` lies in the forest
/// polytope iff this is `≥ 1`. `num_nodes` maximum-flow computations (Dinic's algorithm).
pub(super) fn min_forest_slack(num_nodes: usize, edges: &[(usize, usize)], x: &[f64]) -> f64 {
    let (s, t) = (num_nodes, num_nodes + 1);
    let mut net = Network::new(num_nodes + 2);
    let mut half_degree = vec![0.0; num_nodes];
    for (&(u, v), &xe) in edges.iter().zip(x) {
        let c = 0.5 * xe.max(0.0);
        net.add(u, v, c, c);
        half_degree[u] += c;
        half_degree[v] += c;
    }
    let mut offset = 0.0;
    let mut source_arc = vec![0; num_nodes];
    let mut sink_arc = vec![0; num_nodes];
    for v in 0..num_nodes {
        let w = 1.0 - half_degree[v];
        offset += w.min(0.0);
        source_arc[v] = net.add(s, v, (-w).max(0.0), 0.0);
        sink_arc[v] = net.add(v, t, w.max(0.0), 0.0);
    }
    let forced = 1.0 + net.cap.iter().sum::<f64>();
    let template = net.cap.clone();
    let mut best = f64::INFINITY;
    for i in 0..num_nodes {
        net.cap.copy_from_slice(&template);
        net.cap[source_arc[i]] = forced;
        for &arc in &sink_arc[..i] {
            net.cap[arc] = forced;
        }
        best = best.min(net.max_flow(s, t) + offset);
    }
    best
}

/// A flow network: arc `a` goes to `to[a]`, its reverse is `a ^ 1`.
struct Network {
    to: Vec<usize>,
    cap: Vec<f64>,
    out: Vec<Vec<usize>>,
}

impl Network {
    fn new(nodes: usize) -> Self {
        Network {
            to: Vec::new(),
            cap: Vec::new(),
            out: vec![Vec::new(); nodes],
        }
    }

    /// Add arcs `a → b` and `b → a` with the given capacities; returns the index of `a → b`.
    fn add(&mut self, a: usize, b: usize, forward: f64, backward: f64) -> usize {
        let arc = self.to.len();
        self.to.extend([b, a]);
        self.cap.extend([forward, backward]);
        self.out[a].push(arc);
        self.out[b].push(arc + 1);
        arc
    }

    /// Maximum `s`-`t` flow value (Dinic 1970), consuming the capacities.
    fn max_flow(&mut self, s: usize, t: usize) -> f64 {
        let nodes = self.out.len();
        let mut level = vec![NONE; nodes];
        let mut next = vec![0; nodes];
        let mut path = Vec::new();
        let mut queue = std::collections::VecDeque::new();
        let mut flow = 0.0;
        loop {
            level.fill(NONE);
            level[s] = 0;
            queue.push_back(s);
            while let Some(v) = queue.pop_front() {
                for &a in &self.out[v] {
                    let w = self.to[a];
                    if self.cap[a] > SATURATED && level[w] == NONE {
                        level[w] = level[v] + 1;
                        queue.push_back(w);
                    }
                }
            }
            if level[t] == NONE {
                return flow;
            }
            next.fill(0);
            loop {
                let pushed = self.augment(s, t, &mut level, &mut next, &mut path);
                if pushed <= 0.0 {
                    break;
                }
                flow += pushed;
            }
        }
    }

    /// Push flow along one shortest augmenting path of the level graph; 0 when there is none left.
    fn augment(
        &mut self,
        s: usize,
        t: usize,
        level: &mut [usize],
        next: &mut [usize],
        path: &mut Vec<usize>,
    ) -> f64 {
        path.clear();
        let mut v = s;
        loop {
            if v == t {
                let pushed = path.iter().fold(f64::INFINITY, |m, &a| m.min(self.cap[a]));
                for &a in path.iter() {
                    self.cap[a] -= pushed;
                    self.cap[a ^ 1] += pushed;
                }
                return pushed;
            }
            let mut advanced = false;
            while let Some(&a) = self.out[v].get(next[v]) {
                let w = self.to[a];
                if self.cap[a] > SATURATED && level[w] == level[v] + 1 {
                    path.push(a);
                    v = w;
                    advanced = true;
                    break;
                }
                next[v] += 1;
            }
            if !advanced {
                if v == s {
                    return 0.0;
                }
                // Dead end: drop v from the level graph and retreat.
                level[v] = NONE;
                let Some(a) = path.pop() else { return 0.0 };
                v = self.to[a ^ 1];
                next[v] += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force over all non-empty node sets.
    fn brute(num_nodes: usize, edges: &[(usize, usize)], x: &[f64]) -> f64 {
        (1u32..1 << num_nodes)
            .map(|mask| {
                let inside = |v: usize| mask >> v & 1 == 1;
                let spanned: f64 = edges
                    .iter()
                    .zip(x)
                    .filter(|(e, _)| inside(e.0) && inside(e.1))
                    .map(|(_, &xe)| xe.max(0.0))
                    .sum();
                f64::from(mask.count_ones()) - spanned
            })
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn matches_brute_force() {
        let edges = [
            (0, 1),
            (1, 2),
            (2, 0),
            (2, 3),
            (3, 4),
            (4, 2),
            (0, 1),
            (3, 0),
        ];
        let mut rng = super::super::testing::rng(31);
        for scale in [0.2, 0.5, 0.8, 1.2] {
            for _ in 0..20 {
                let x: Vec<f64> = (0..edges.len()).map(|_| scale * rng.open01()).collect();
                let (a, b) = (min_forest_slack(5, &edges, &x), brute(5, &edges, &x));
                assert!((a - b).abs() < 1e-9, "{a} vs {b}");
            }
        }
    }
}
