//! Blocks (biconnected components) of a connected multigraph and a relative-interior point of its
//! spanning-tree polytope, from one iterative depth-first search (Hopcroft & Tarjan 1973).
//!
//! Why blocks: the graphic matroid of a loopless graph is the direct sum of the graphic matroids of its
//! blocks (Whitney 1932; bridges are one-edge blocks), so the spanning-tree polytope is the product of
//! the blocks' spanning-tree polytopes. The base polytope of a connected matroid on `m_B` elements has
//! dimension `m_B − 1` (Edmonds 1970), hence the affine hull of the spanning-tree polytope is
//! `{x : Σ_{e∈B} x_e = |V(B)| − 1 for every block B}` and its tangent space `{u : Σ_{e∈B} u_e = 0 ∀B}`.

use super::graph::{Adjacency, Direction, NONE};

/// Result of [`tree_blocks`].
#[derive(Debug, Clone)]
pub(super) struct TreeBlocks {
    /// Block index of every edge, in `0..num_blocks`.
    pub(super) block_of_edge: Vec<usize>,
    /// Number of blocks.
    pub(super) num_blocks: usize,
    /// Whether the edge is in the depth-first-search tree `T₀` (a spanning tree).
    pub(super) in_tree: Vec<bool>,
    /// A point of the relative interior of the spanning-tree polytope (see [`tree_blocks`]).
    pub(super) interior: Vec<f64>,
}

/// Blocks, a spanning tree and a relative-interior point of the spanning-tree polytope of the connected
/// loopless multigraph `edges` on `num_nodes` nodes. `O(n + m)` time and memory, no recursion.
///
/// Interior point. Let `T₀` be the DFS tree. Every non-tree edge `e` joins a node `y` to an ancestor `a`, and
/// for every tree edge `f` on the tree path from `y` to `a`, `T₀ + e − f` is again a spanning tree. We use the
/// exchange pairs
/// 1. `(e, f)` with `f` the tree edge above `y`, for every non-tree edge `e`;
/// 2. `(e_v, f)` and `(e_v, g)` for every tree edge `f = (p, v)` (`p` the parent of `v`) whose block also
///    contains the tree edge `g` above `p`, i.e. `low(v) < disc(p)`; `e_v` is the non-tree edge that realises
///    `low(v)`: it leaves the subtree of `v` and ends at a proper ancestor of `p`, so its cycle holds `f` and `g`.
///
/// The returned point is the average of `T₀` and the trees `T₀ + e − f` over those `P` pairs, that is
/// `1_{T₀} + Σ (1_e − 1_f)/(P + 1)`. Within a block, pairs of kind 2 link every tree edge to the tree edge
/// above it up to the block's top edge and pairs of kind 1 link every non-tree edge to a tree edge, so the
/// pairs connect all edges of each block; therefore the differences `1_e − 1_f` span `{Σ_{e∈B} u_e = 0 ∀B}`,
/// the tangent space. The averaged trees thus affinely span the affine hull of the polytope, their convex
/// hull is a full-dimensional subset of it, and its barycentre lies in that subset's relative interior,
/// hence in the polytope's relative interior. Every coordinate is in `(0, 1)` except bridges (`1`).
pub(super) fn tree_blocks(num_nodes: usize, edges: &[(usize, usize)]) -> TreeBlocks {
    let m = edges.len();
    let adjacency = Adjacency::new(num_nodes, edges, Direction::Both);
    let mut disc = vec![NONE; num_nodes];
    let mut low = vec![NONE; num_nodes];
    let mut low_edge = vec![NONE; num_nodes];
    let mut parent_edge = vec![NONE; num_nodes];
    let mut in_tree = vec![false; m];
    let mut block_of_edge = vec![NONE; m];
    let mut num_blocks = 0;
    let mut open_edges = Vec::with_capacity(m);
    let mut exchange = vec![0.0; m];
    let mut pairs = 0usize;
    // DFS stack of (node, position in its adjacency list).
    let mut stack = vec![(0usize, 0usize)];
    disc[0] = 0;
    low[0] = 0;
    let mut time = 1;
    while let Some(top) = stack.last_mut() {
        let (v, cursor) = *top;
        if let Some(&(w, e)) = adjacency.of(v).get(cursor) {
            top.1 += 1;
            if e == parent_edge[v] {
                continue;
            }
            if disc[w] == NONE {
                parent_edge[w] = e;
                in_tree[e] = true;
                open_edges.push(e);
                disc[w] = time;
                low[w] = time;
                time += 1;
                stack.push((w, 0));
            } else if disc[w] < disc[v] {
                // A non-tree edge to the ancestor w (seen from the descendant first): pair of kind 1.
                open_edges.push(e);
                exchange[e] += 1.0;
                exchange[parent_edge[v]] -= 1.0;
                pairs += 1;
                if disc[w] < low[v] {
                    low[v] = disc[w];
                    low_edge[v] = e;
                }
            }
            // disc[w] > disc[v]: a non-tree edge already handled from its lower end w.
        } else {
            stack.pop();
            let f = parent_edge[v];
            if f == NONE {
                continue;
            }
            let p = if edges[f].0 == v {
                edges[f].1
            } else {
                edges[f].0
            };
            if low[v] < low[p] {
                low[p] = low[v];
                low_edge[p] = low_edge[v];
            }
            if low[v] >= disc[p] {
                // f is the top edge of a block: its edges are the open ones down to f.
                while let Some(e) = open_edges.pop() {
                    block_of_edge[e] = num_blocks;
                    if e == f {
                        break;
                    }
                }
                num_blocks += 1;
            } else {
                // Pairs of kind 2: (e_v, f) and (e_v, g).
                exchange[low_edge[v]] += 2.0;
                exchange[f] -= 1.0;
                exchange[parent_edge[p]] -= 1.0;
                pairs += 2;
            }
        }
    }
    let weight = 1.0 / (pairs + 1) as f64;
    let interior = exchange
        .iter()
        .zip(&in_tree)
        .map(|(&x, &t)| f64::from(u8::from(t)) + x * weight)
        .collect();
    TreeBlocks {
        block_of_edge,
        num_blocks,
        in_tree,
        interior,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_two_triangles_a_bridge_and_parallel_edges() {
        // Triangle 0-1-2, bridge 2-3, triangle 3-4-5, parallel pair 5-6.
        let edges = [
            (0, 1),
            (1, 2),
            (2, 0),
            (2, 3),
            (3, 4),
            (4, 5),
            (5, 3),
            (5, 6),
            (6, 5),
        ];
        let t = tree_blocks(7, &edges);
        assert_eq!(t.num_blocks, 4);
        let b = &t.block_of_edge;
        assert!(b[0] == b[1] && b[1] == b[2]);
        assert!(b[4] == b[5] && b[5] == b[6]);
        assert_eq!(b[7], b[8]);
        let distinct: std::collections::BTreeSet<usize> = b.iter().copied().collect();
        assert_eq!(distinct.len(), 4);
        assert_eq!(t.in_tree.iter().filter(|&&x| x).count(), 6);
        assert_eq!(t.interior[3], 1.0);
        // Each block's coordinates sum to its rank (|V(B)| - 1), all strictly inside (0, 1) except the bridge.
        let sum = |ids: &[usize]| ids.iter().map(|&e| t.interior[e]).sum::<f64>();
        assert!((sum(&[0, 1, 2]) - 2.0).abs() < 1e-12);
        assert!((sum(&[4, 5, 6]) - 2.0).abs() < 1e-12);
        assert!((sum(&[7, 8]) - 1.0).abs() < 1e-12);
        assert!(
            t.interior
                .iter()
                .enumerate()
                .all(|(e, &x)| e == 3 || (x > 0.0 && x < 1.0))
        );
    }

    #[test]
    fn a_cut_vertex_separates_blocks() {
        // Two 4-cycles sharing node 0 (a bow tie), and a chord in the first.
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 0),
            (0, 4),
            (4, 5),
            (5, 6),
            (6, 0),
            (1, 3),
        ];
        let t = tree_blocks(7, &edges);
        assert_eq!(t.num_blocks, 2);
        let b = &t.block_of_edge;
        assert!([1, 2, 3, 8].iter().all(|&e| b[e] == b[0]));
        assert!([5, 6, 7].iter().all(|&e| b[e] == b[4]));
        assert_ne!(b[0], b[4]);
    }
}
