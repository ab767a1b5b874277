//! Graph plumbing shared by the graph domains: edge validation, union-find, and adjacency lists.

use crate::error::{CoreError, Result};

/// "No node / no edge" marker in index arrays.
pub(super) const NONE: usize = usize::MAX;

/// Whether `x` (one value per edge of `edges`, over the nodes `0..num_nodes`) is a flow of `value` from
/// `source` to `target` within `atol`: every `x_e` not NaN, `≥ −atol` and accepted by `edge_ok(e, x_e)` (the
/// domain's own bound on edge `e`), and `|out(v) − in(v) − b_v| ≤ atol` at every node, `b_source = value`,
/// `b_target = −value`, else `0`. The membership test of the flow and path polytopes.
pub(super) fn is_flow(
    num_nodes: usize,
    edges: &[(usize, usize)],
    (source, target, value): (usize, usize, f64),
    x: &[f64],
    atol: f64,
    edge_ok: impl Fn(usize, f64) -> bool,
) -> bool {
    if x.len() != edges.len() {
        return false;
    }
    let mut net = vec![0.0; num_nodes];
    for (e, (&(u, v), &xe)) in edges.iter().zip(x).enumerate() {
        if xe.is_nan() || xe < -atol || !edge_ok(e, xe) {
            return false;
        }
        net[u] += xe;
        net[v] -= xe;
    }
    net[source] -= value;
    net[target] += value;
    net.iter().all(|v| v.abs() <= atol)
}

/// Check that every edge joins two distinct nodes of `0..num_nodes`.
///
/// Errors: [`CoreError::InvalidGraph`] naming the first bad edge (an endpoint out of range, or a self-loop).
pub(super) fn check_edges(num_nodes: usize, edges: &[(usize, usize)]) -> Result<()> {
    for (i, &(u, v)) in edges.iter().enumerate() {
        if u >= num_nodes || v >= num_nodes {
            return Err(CoreError::InvalidGraph(format!(
                "edge {i} = ({u}, {v}) has an endpoint outside the nodes 0..{num_nodes}"
            )));
        }
        if u == v {
            return Err(CoreError::InvalidGraph(format!(
                "edge {i} = ({u}, {v}) is a self-loop"
            )));
        }
    }
    Ok(())
}

/// `source` and `target` are distinct nodes.
pub(super) fn check_terminals(num_nodes: usize, source: usize, target: usize) -> Result<()> {
    for (name, node) in [("source", source), ("target", target)] {
        if node >= num_nodes {
            return Err(CoreError::InvalidGraph(format!(
                "{name} {node} is not a node (num_nodes = {num_nodes})"
            )));
        }
    }
    if source == target {
        return Err(CoreError::InvalidGraph(format!(
            "source and target are the same node {source}"
        )));
    }
    Ok(())
}

/// Disjoint sets over `0..n` with path compression and union by rank: near-constant amortised operations
/// (Tarjan 1975). [`UnionFind::reset`] reuses the buffers, so repeated use does not allocate.
#[derive(Debug, Clone, Default)]
pub(super) struct UnionFind {
    parent: Vec<usize>,
    rank: Vec<u8>,
}

impl UnionFind {
    /// `n` singletons.
    pub(super) fn new(n: usize) -> Self {
        UnionFind {
            parent: (0..n).collect(),
            rank: vec![0; n],
        }
    }

    /// Make every element a singleton again.
    pub(super) fn reset(&mut self) {
        self.parent.iter_mut().enumerate().for_each(|(i, p)| *p = i);
        self.rank.fill(0);
    }

    /// Representative of `x`'s set; points every node on the way directly at it.
    pub(super) fn find(&mut self, x: usize) -> usize {
        let mut root = x;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut node = x;
        while self.parent[node] != root {
            let next = self.parent[node];
            self.parent[node] = root;
            node = next;
        }
        root
    }

    /// Merge the sets of `a` and `b`; `false` if they were already one set.
    pub(super) fn union(&mut self, a: usize, b: usize) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return false;
        }
        match self.rank[ra].cmp(&self.rank[rb]) {
            std::cmp::Ordering::Less => self.parent[ra] = rb,
            std::cmp::Ordering::Greater => self.parent[rb] = ra,
            std::cmp::Ordering::Equal => {
                self.parent[rb] = ra;
                self.rank[ra] += 1;
            }
        }
        true
    }
}

/// Number of connected components of the undirected graph (isolated nodes count as components).
pub(super) fn count_components(num_nodes: usize, edges: &[(usize, usize)]) -> usize {
    let mut sets = UnionFind::new(num_nodes);
    let merges = edges.iter().filter(|&&(u, v)| sets.union(u, v)).count();
    num_nodes - merges
}

/// Adjacency lists in compressed form: the neighbours of node `v` are
/// `entries[start[v]..start[v + 1]]`, each a pair `(other endpoint, edge index)`, in increasing edge index.
#[derive(Debug, Clone)]
pub(super) struct Adjacency {
    start: Vec<usize>,
    entries: Vec<(usize, usize)>,
}

/// Which endpoints an [`Adjacency`] lists an edge `(u, v)` under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// Under `u` (pointing to `v`).
    Outgoing,
    /// Under `v` (pointing back to `u`).
    Incoming,
    /// Under both endpoints.
    Both,
}

impl Adjacency {
    /// Adjacency lists of `edges` on `num_nodes` nodes (endpoints already validated). `O(n + m)`.
    pub(super) fn new(num_nodes: usize, edges: &[(usize, usize)], direction: Direction) -> Self {
        let listed = |&(u, v): &(usize, usize)| -> [Option<(usize, usize)>; 2] {
            match direction {
                Direction::Outgoing => [Some((u, v)), None],
                Direction::Incoming => [Some((v, u)), None],
                Direction::Both => [Some((u, v)), Some((v, u))],
            }
        };
        let mut start = vec![0usize; num_nodes + 1];
        for edge in edges {
            for (at, _) in listed(edge).into_iter().flatten() {
                start[at + 1] += 1;
            }
        }
        for v in 0..num_nodes {
            start[v + 1] += start[v];
        }
        let mut fill = start.clone();
        let mut entries = vec![(0, 0); start[num_nodes]];
        for (i, edge) in edges.iter().enumerate() {
            for (at, other) in listed(edge).into_iter().flatten() {
                entries[fill[at]] = (other, i);
                fill[at] += 1;
            }
        }
        Adjacency { start, entries }
    }

    /// The `(other endpoint, edge index)` pairs listed under `v`.
    #[inline]
    pub(super) fn of(&self, v: usize) -> &[(usize, usize)] {
        &self.entries[self.start[v]..self.start[v + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_edges_are_named() {
        let err = check_edges(3, &[(0, 1), (1, 3)]).unwrap_err().to_string();
        assert!(err.contains("edge 1 = (1, 3)"), "{err}");
        let err = check_edges(3, &[(2, 2)]).unwrap_err().to_string();
        assert!(err.contains("self-loop"), "{err}");
        assert!(check_edges(3, &[(0, 1), (1, 0)]).is_ok());
    }

    #[test]
    fn union_find_and_components() {
        let mut uf = UnionFind::new(5);
        assert!(uf.union(0, 1));
        assert!(uf.union(3, 4));
        assert!(!uf.union(1, 0));
        assert_eq!(uf.find(0), uf.find(1));
        assert_ne!(uf.find(1), uf.find(3));
        uf.reset();
        assert_ne!(uf.find(0), uf.find(1));
        assert_eq!(count_components(5, &[(0, 1), (3, 4), (1, 0)]), 3);
    }

    #[test]
    fn adjacency_lists_in_edge_order() {
        let edges = [(0, 1), (1, 2), (0, 2), (0, 1)];
        let both = Adjacency::new(3, &edges, Direction::Both);
        assert_eq!(both.of(0), &[(1, 0), (2, 2), (1, 3)]);
        assert_eq!(both.of(1), &[(0, 0), (2, 1), (0, 3)]);
        let out = Adjacency::new(3, &edges, Direction::Outgoing);
        assert_eq!(out.of(2), &[]);
        let inc = Adjacency::new(3, &edges, Direction::Incoming);
        assert_eq!(inc.of(2), &[(1, 1), (0, 2)]);
    }
}
