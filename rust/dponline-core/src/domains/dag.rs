//! Directed-graph plumbing for the path polytope: topological order (or a directed cycle as proof that
//! there is none), reachability, and orienting an undirected graph away from a node.

use std::collections::VecDeque;

use super::graph::{Adjacency, Direction, NONE};
use crate::error::{CoreError, Result};

/// The nodes in a topological order (Kahn 1962; among available nodes the earliest-freed, starting in
/// index order, so the order is deterministic).
///
/// Errors: [`CoreError::InvalidGraph`] reporting one directed cycle, e.g. `"... directed cycle 1 -> 4 -> 2
/// -> 1; {why}"`, if the graph is not acyclic (`why` says what needs acyclicity).
pub(super) fn topological_order(
    num_nodes: usize,
    edges: &[(usize, usize)],
    why: &str,
) -> Result<Vec<usize>> {
    let outgoing = Adjacency::new(num_nodes, edges, Direction::Outgoing);
    let mut indegree = vec![0usize; num_nodes];
    edges.iter().for_each(|&(_, v)| indegree[v] += 1);
    let mut queue: VecDeque<usize> = (0..num_nodes).filter(|&v| indegree[v] == 0).collect();
    let mut order = Vec::with_capacity(num_nodes);
    while let Some(v) = queue.pop_front() {
        order.push(v);
        for &(w, _) in outgoing.of(v) {
            indegree[w] -= 1;
            if indegree[w] == 0 {
                queue.push_back(w);
            }
        }
    }
    if order.len() == num_nodes {
        return Ok(order);
    }
    let cycle = find_cycle(num_nodes, edges, &indegree);
    let text: Vec<String> = cycle.iter().map(usize::to_string).collect();
    Err(CoreError::InvalidGraph(format!(
        "the graph has a directed cycle {}; {why}",
        text.join(" -> ")
    )))
}

/// A directed cycle among the nodes Kahn's algorithm could not order (`indegree > 0`), as a closed walk
/// `v_0 -> … -> v_0`. Each such node has a predecessor that is also left over, so walking backwards from
/// any of them must repeat a node.
fn find_cycle(num_nodes: usize, edges: &[(usize, usize)], indegree: &[usize]) -> Vec<usize> {
    let incoming = Adjacency::new(num_nodes, edges, Direction::Incoming);
    let left = |v: usize| indegree[v] > 0;
    let mut step = vec![NONE; num_nodes];
    let mut walk = Vec::new();
    let mut v = (0..num_nodes).find(|&v| left(v)).unwrap_or(0);
    while step[v] == NONE {
        step[v] = walk.len();
        walk.push(v);
        v = incoming
            .of(v)
            .iter()
            .map(|&(u, _)| u)
            .find(|&u| left(u))
            .unwrap_or(v);
    }
    // walk[step[v]..] is the cycle traversed against the edges.
    let mut cycle: Vec<usize> = walk[step[v]..].iter().rev().copied().collect();
    cycle.push(cycle[0]);
    cycle
}

/// Which nodes can be reached from `start` along the adjacency lists (breadth-first).
pub(super) fn reachable(adjacency: &Adjacency, num_nodes: usize, start: usize) -> Vec<bool> {
    let mut seen = vec![false; num_nodes];
    seen[start] = true;
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &(w, _) in adjacency.of(v) {
            if !seen[w] {
                seen[w] = true;
                queue.push_back(w);
            }
        }
    }
    seen
}

/// Orient every undirected edge from the endpoint with the smaller `(BFS distance from source, node
/// index)` to the other (nodes not reachable from `source` have distance `∞`). The result is acyclic: the
/// key strictly increases along every arc. Endpoints must be validated.
pub(super) fn orient_away_from(
    num_nodes: usize,
    edges: &[(usize, usize)],
    source: usize,
) -> Vec<(usize, usize)> {
    let adjacency = Adjacency::new(num_nodes, edges, Direction::Both);
    let mut distance = vec![NONE; num_nodes];
    distance[source] = 0;
    let mut queue = VecDeque::from([source]);
    while let Some(v) = queue.pop_front() {
        for &(w, _) in adjacency.of(v) {
            if distance[w] == NONE {
                distance[w] = distance[v] + 1;
                queue.push_back(w);
            }
        }
    }
    edges
        .iter()
        .map(|&(u, v)| {
            if (distance[u], u) < (distance[v], v) {
                (u, v)
            } else {
                (v, u)
            }
        })
        .collect()
}

/// The strongly connected component of every node (labels `0..count`, in no particular order), by
/// Kosaraju's two passes of iterative depth-first search: finishing order on the arcs, then components on
/// the reversed arcs in reverse finishing order. `O(n + m)`.
pub(super) fn strongly_connected_components(
    num_nodes: usize,
    arcs: &[(usize, usize)],
) -> Vec<usize> {
    let forward = Adjacency::new(num_nodes, arcs, Direction::Outgoing);
    let backward = Adjacency::new(num_nodes, arcs, Direction::Incoming);
    let mut seen = vec![false; num_nodes];
    let mut finished = Vec::with_capacity(num_nodes);
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..num_nodes {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        stack.push((root, 0));
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            match forward.of(v).get(*next) {
                Some(&(w, _)) => {
                    *next += 1;
                    if !seen[w] {
                        seen[w] = true;
                        stack.push((w, 0));
                    }
                }
                None => {
                    finished.push(v);
                    stack.pop();
                }
            }
        }
    }
    let mut component = vec![NONE; num_nodes];
    let mut count = 0;
    let mut pending = Vec::new();
    for &root in finished.iter().rev() {
        if component[root] != NONE {
            continue;
        }
        component[root] = count;
        pending.push(root);
        while let Some(v) = pending.pop() {
            for &(w, _) in backward.of(v) {
                if component[w] == NONE {
                    component[w] = count;
                    pending.push(w);
                }
            }
        }
        count += 1;
    }
    component
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_a_dag_and_reports_a_cycle() {
        let order = topological_order(4, &[(2, 1), (1, 0), (3, 0)], "").unwrap();
        assert_eq!(order, [2, 3, 1, 0]);
        let err = topological_order(6, &[(0, 1), (1, 2), (2, 3), (3, 1), (4, 5)], "x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("directed cycle"), "{err}");
        let cycle: Vec<usize> = err
            .split("cycle ")
            .nth(1)
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .split(" -> ")
            .map(|s| s.parse().unwrap())
            .collect();
        assert_eq!(cycle.first(), cycle.last());
        let edges = [(1, 2), (2, 3), (3, 1)];
        for w in cycle.windows(2) {
            assert!(edges.contains(&(w[0], w[1])), "{cycle:?}");
        }
    }

    #[test]
    fn strong_components() {
        // 0 <-> 1 -> 2 <-> 3 -> 4, and 5 alone.
        let arcs = [(0, 1), (1, 0), (1, 2), (2, 3), (3, 2), (3, 4)];
        let c = strongly_connected_components(6, &arcs);
        assert_eq!(c[0], c[1]);
        assert_eq!(c[2], c[3]);
        let distinct: std::collections::BTreeSet<usize> = c.iter().copied().collect();
        assert_eq!(distinct.len(), 4);
        assert_ne!(c[1], c[2]);
    }

    #[test]
    fn orientation_follows_bfs_distance_then_index() {
        // Square 0-1-2-3-0 with the diagonal 1-3 and an isolated edge 5-4.
        let edges = [(1, 0), (1, 2), (2, 3), (3, 0), (3, 1), (5, 4)];
        let oriented = orient_away_from(6, &edges, 0);
        assert_eq!(oriented, [(0, 1), (1, 2), (3, 2), (0, 3), (1, 3), (4, 5)]);
        assert!(topological_order(6, &oriented, "").is_ok());
    }
}
