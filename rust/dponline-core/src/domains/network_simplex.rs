//! Minimum-cost flows by the primal network simplex method, for the flow polytope's LMO.
//!
//! The problem: arcs `a = (tail, head)` with capacities `0 ≤ x_a ≤ cap_a < ∞`, node supplies `b` (`Σ b = 0`),
//! flow conservation `out(v) − in(v) = b_v`, and arc costs `c`. A basis is a spanning tree of the nodes plus an
//! artificial root; every non-tree arc sits at a bound (`0` or `cap`), which fixes the tree arcs' flows, so
//! every basis is a vertex of the polytope. A pivot adds a non-tree arc whose reduced cost
//! `c_a + π_tail − π_head` (node potentials `π` make tree arcs' reduced costs 0) shows that moving it off its
//! bound lowers the cost, pushes flow around the cycle it closes until an arc reaches a bound, and swaps that
//! arc out of the tree (Dantzig 1963, ch. 17-19; Ahuja, Magnanti & Orlin 1993, ch. 11).
//!
//! * Start: the root joined to every node by an artificial arc carrying the node's supply (towards the root
//!   for supplies `≥ 0`, away from it for demands): a *strongly feasible* tree (positive flow can be sent from
//!   every node to the root along the tree). Phase 1 minimises the artificial flow (cost 1 per unit); if some
//!   remains, no feasible flow exists, and half of it is the shortfall of the largest feasible value. The
//!   phase-1 optimum is stored, and every later solve starts from it, so a solve is a function of its costs
//!   alone (no dependence on earlier calls, which keeps restored objects bit-identical).
//! * Phase 2 (each solve): artificial arcs cost `2(n + 2)`, more than any simple path of real arcs with
//!   costs scaled to `|c| < 2`, so no improving cycle moves flow onto one (they carry 0 and keep it: a cycle
//!   through the root pushes along two artificial arcs, at cost above every real path, or is degenerate).
//! * Pricing: block search (the most violating arc among the next `⌈√arcs⌉`, cyclically). A reduced cost
//!   counts as violating below `−PRICE_TOLERANCE·(1 + |π_tail| + |π_head|)` (potentials carry rounding
//!   relative to their size) on costs scaled to `max|c| ∈ [1, 2)`. With potentials of size at most `2(n + 2)`
//!   plus a path's cost, a returned flow's cost is within `10⁻¹¹·(8n + 10)·Σ_a cap_a·max|c|` of the minimum
//!   (by LP duality each arc moves by at most its capacity).
//! * Leaving arc: the last blocking arc met when walking the cycle from its apex in the direction of the
//!   push. This keeps the tree strongly feasible, which rules out cycling (Cunningham 1976), so the method
//!   terminates; a pivot cap still bounds the work (see [`NetworkSimplex::solve`]).
//! * At the end of a solve the tree arcs' flows are recomputed from the supplies and the non-tree arcs'
//!   bounds, so rounding never accumulates across pivots into the output.
//!
//! The tree is kept as parent pointers with the arc to the parent and its orientation, depths, and child
//! lists (first child, doubly linked siblings); a pivot re-hangs one subtree, updating depths and potentials
//! in `O(subtree)`. No allocation after construction.

use super::graph::NONE;
use crate::error::{CoreError, Result};

/// A violating reduced cost is below minus this (costs scaled to `max|c| ∈ [1, 2)`).
const PRICE_TOLERANCE: f64 = 1e-11;

/// Phase 2's artificial arcs cost this times `n + 2`: above `2(n − 1)`, the largest cost of a simple path of
/// real arcs with scaled costs `|c| < 2`.
const ARTIFICIAL_COST_PER_NODE: f64 = 2.0;

/// Pivots per arc (real and artificial) allowed in one phase before the cap is reached.
const PIVOTS_PER_ARC: usize = 50;

/// Arc state: at its lower bound, at its upper bound, or in the tree.
const LOWER: i8 = 1;
const UPPER: i8 = -1;
const TREE: i8 = 0;

/// A spanning-tree basis with its flows.
#[derive(Debug, Clone)]
struct Basis {
    flow: Vec<f64>,
    state: Vec<i8>,
    parent: Vec<usize>,
    /// The arc to the parent, and whether it points from the node to its parent.
    pred: Vec<usize>,
    up: Vec<bool>,
    depth: Vec<usize>,
    first_child: Vec<usize>,
    next_sibling: Vec<usize>,
    prev_sibling: Vec<usize>,
}

impl Basis {
    /// Overwrite with `from` (same sizes), reusing the buffers.
    fn restore(&mut self, from: &Basis) {
        self.flow.copy_from_slice(&from.flow);
        self.state.copy_from_slice(&from.state);
        self.parent.copy_from_slice(&from.parent);
        self.pred.copy_from_slice(&from.pred);
        self.up.copy_from_slice(&from.up);
        self.depth.copy_from_slice(&from.depth);
        self.first_child.copy_from_slice(&from.first_child);
        self.next_sibling.copy_from_slice(&from.next_sibling);
        self.prev_sibling.copy_from_slice(&from.prev_sibling);
    }

    fn detach(&mut self, v: usize) {
        let (prev, next) = (self.prev_sibling[v], self.next_sibling[v]);
        if prev == NONE {
            self.first_child[self.parent[v]] = next;
        } else {
            self.next_sibling[prev] = next;
        }
        if next != NONE {
            self.prev_sibling[next] = prev;
        }
    }

    fn attach(&mut self, v: usize, parent: usize) {
        let first = self.first_child[parent];
        self.next_sibling[v] = first;
        self.prev_sibling[v] = NONE;
        if first != NONE {
            self.prev_sibling[first] = v;
        }
        self.first_child[parent] = v;
        self.parent[v] = parent;
    }
}

/// What a phase ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// No violating arc is left: the flow is optimal (up to the price tolerance).
    Optimal,
    /// The pivot cap was reached; the flow is feasible (a vertex) but may not be optimal.
    CapReached,
}

/// A network-simplex solver for one network (arcs, capacities, supplies); costs vary per solve.
#[derive(Debug, Clone)]
pub(super) struct NetworkSimplex {
    /// Real nodes `0..n`; the root is `n`.
    n: usize,
    /// Real arcs `0..m`, then the artificial arc of node `i` at `m + i`.
    m: usize,
    tail: Vec<usize>,
    head: Vec<usize>,
    cap: Vec<f64>,
    /// Supplies of the real nodes and the root (0).
    supply: Vec<f64>,
    start: Basis,
    work: Basis,
    cost: Vec<f64>,
    potential: Vec<f64>,
    /// Scratch: traversal stack, pre-order, remaining supplies.
    stack: Vec<usize>,
    order: Vec<usize>,
    remaining: Vec<f64>,
    block: usize,
    pivot_cap: usize,
}

impl NetworkSimplex {
    /// Prepare the network and run phase 1.
    ///
    /// Returns the solver and the largest total flow the supplies allow to be routed, `Σ_{b_v > 0} b_v` minus
    /// the phase-1 shortfall (equal to that sum exactly when a feasible flow exists; the caller decides how
    /// much shortfall to tolerate).
    ///
    /// Errors: [`CoreError::IterationLimit`] if phase 1 reaches its pivot cap (`50` pivots per arc).
    pub(super) fn new(
        n: usize,
        arcs: &[(usize, usize)],
        cap: &[f64],
        supply: &[f64],
    ) -> Result<(Self, f64)> {
        let m = arcs.len();
        let total = m + n;
        let mut tail: Vec<usize> = arcs.iter().map(|a| a.0).collect();
        let mut head: Vec<usize> = arcs.iter().map(|a| a.1).collect();
        let mut caps = cap.to_vec();
        let mut flow = vec![0.0; total];
        let mut state = vec![LOWER; total];
        let mut parent = vec![n; n + 1];
        let mut pred = vec![NONE; n + 1];
        let mut up = vec![false; n + 1];
        let mut depth = vec![1; n + 1];
        parent[n] = NONE;
        depth[n] = 0;
        for (i, &b) in supply.iter().enumerate() {
            let a = m + i;
            if b >= 0.0 {
                tail.push(i);
                head.push(n);
                up[i] = true;
            } else {
                tail.push(n);
                head.push(i);
            }
            caps.push(f64::INFINITY);
            flow[a] = b.abs();
            state[a] = TREE;
            pred[i] = a;
        }
        let mut start = Basis {
            flow,
            state,
            parent,
            pred,
            up,
            depth,
            first_child: vec![NONE; n + 1],
            next_sibling: vec![NONE; n + 1],
            prev_sibling: vec![NONE; n + 1],
        };
        for i in (0..n).rev() {
            start.attach(i, n);
        }
        let mut supplies = supply.to_vec();
        supplies.push(0.0);
        let mut solver = NetworkSimplex {
            n,
            m,
            tail,
            head,
            cap: caps,
            supply: supplies,
            work: start.clone(),
            start,
            cost: vec![0.0; total],
            potential: vec![0.0; n + 1],
            stack: Vec::with_capacity(n + 1),
            order: Vec::with_capacity(n + 1),
            remaining: vec![0.0; n + 1],
            block: (total as f64).sqrt().ceil().max(8.0) as usize,
            pivot_cap: PIVOTS_PER_ARC.saturating_mul(total).max(1000),
        };
        solver.cost[m..].fill(1.0);
        solver.compute_potentials();
        if solver.run(total) == Outcome::CapReached {
            return Err(CoreError::IterationLimit {
                routine: "network simplex (phase 1: a feasible flow)",
                limit: solver.pivot_cap as u64,
                detail: String::new(),
            });
        }
        solver.recompute_tree_flows();
        let shortfall: f64 = solver.work.flow[m..].iter().sum::<f64>() / 2.0;
        let offered: f64 = supply.iter().filter(|&&b| b > 0.0).sum();
        solver.start.restore(&solver.work);
        Ok((solver, offered - shortfall))
    }

    /// Minimise `Σ_a costs[a]·x_a` (`costs` finite, already scaled so that `max|c| ∈ [1, 2)` or all zero) from
    /// the stored phase-1 basis; write the real arcs' flows into `flow`. At most `50·(m + n)` pivots: if the cap
    /// is reached the flow written is still a vertex of the polytope (every basis is), possibly not optimal,
    /// and [`Outcome::CapReached`] says so.
    pub(super) fn solve(&mut self, costs: &[f64], flow: &mut [f64]) -> Outcome {
        let (n, m) = (self.n, self.m);
        self.work.restore(&self.start);
        self.cost[..m].copy_from_slice(costs);
        self.cost[m..].fill(ARTIFICIAL_COST_PER_NODE * (n as f64 + 2.0));
        self.compute_potentials();
        let outcome = self.run(m);
        self.recompute_tree_flows();
        flow.copy_from_slice(&self.work.flow[..m]);
        outcome
    }

    /// Pivot until no arc among the first `priced` is violating, or the cap.
    fn run(&mut self, priced: usize) -> Outcome {
        let mut next = 0;
        for _ in 0..self.pivot_cap {
            match self.entering_arc(priced, &mut next) {
                None => return Outcome::Optimal,
                Some(arc) => self.pivot(arc),
            }
        }
        Outcome::CapReached
    }

    /// `state·(c_a + π_tail − π_head)` plus the rounding allowance `PRICE_TOLERANCE·(1 + |π_tail| + |π_head|)`:
    /// negative when moving the arc off its bound surely lowers the cost.
    #[inline]
    fn violation(&self, a: usize) -> f64 {
        let (pt, ph) = (self.potential[self.tail[a]], self.potential[self.head[a]]);
        f64::from(self.work.state[a]) * (self.cost[a] + pt - ph)
            + PRICE_TOLERANCE * (1.0 + pt.abs() + ph.abs())
    }

    /// Block search over the arcs `0..priced`, from `next` on (cyclically): the most violating arc of the
    /// first block that has one.
    fn entering_arc(&self, priced: usize, next: &mut usize) -> Option<usize> {
        let mut best = NONE;
        let mut best_violation = 0.0;
        let mut in_block = 0;
        for step in 0..priced {
            let a = (*next + step) % priced;
            let v = self.violation(a);
            if v < best_violation {
                best_violation = v;
                best = a;
            }
            in_block += 1;
            if in_block == self.block && best != NONE {
                *next = (a + 1) % priced;
                return Some(best);
            }
            if in_block == self.block {
                in_block = 0;
            }
        }
        (best != NONE).then(|| {
            *next = (best + 1) % priced;
            best
        })
    }

    /// One pivot on the entering arc `entering`.
    fn pivot(&mut self, entering: usize) {
        let b = &mut self.work;
        let increase = b.state[entering] == LOWER;
        let (first, second) = if increase {
            (self.tail[entering], self.head[entering])
        } else {
            (self.head[entering], self.tail[entering])
        };
        // The apex of the cycle: the lowest common ancestor of the entering arc's ends.
        let (mut p, mut q) = (first, second);
        while p != q {
            if b.depth[p] >= b.depth[q] {
                p = b.parent[p];
            }
            if b.depth[q] > b.depth[p] {
                q = b.parent[q];
            }
        }
        let apex = p;
        // The cycle runs apex -> first (down), first -> second (the entering arc), second -> apex (up). The
        // leaving arc is the last blocking one in that order: on the first path (walked upwards, against the
        // order) ties keep the first found, on the second path the last found.
        let residual = |b: &Basis, w: usize, along_up: bool| {
            let a = b.pred[w];
            if b.up[w] == along_up {
                (self.cap[a] - b.flow[a]).max(0.0)
            } else {
                b.flow[a].max(0.0)
            }
        };
        let mut delta = self.cap[entering];
        let mut leaving = NONE;
        let mut on_first = false;
        let mut w = first;
        while w != apex {
            let r = residual(b, w, false);
            if r < delta {
                (delta, leaving, on_first) = (r, w, true);
            }
            w = b.parent[w];
        }
        w = second;
        while w != apex {
            let r = residual(b, w, true);
            if r <= delta {
                (delta, leaving, on_first) = (r, w, false);
            }
            w = b.parent[w];
        }
        if delta > 0.0 && delta.is_finite() {
            b.flow[entering] += if increase { delta } else { -delta };
            for (start, along_up) in [(first, false), (second, true)] {
                let mut w = start;
                while w != apex {
                    let a = b.pred[w];
                    b.flow[a] += if b.up[w] == along_up { delta } else { -delta };
                    w = b.parent[w];
                }
            }
        }
        if leaving == NONE {
            // The entering arc goes from one bound to the other; the tree is unchanged.
            b.state[entering] = -b.state[entering];
            b.flow[entering] = if increase { self.cap[entering] } else { 0.0 };
            return;
        }
        let out = b.pred[leaving];
        // The residual that blocked was the flow (not the room to the capacity) when the arc runs against
        // the push: upwards on the first path, downwards on the second.
        let to_zero = b.up[leaving] == on_first;
        b.flow[out] = if to_zero { 0.0 } else { self.cap[out] };
        b.state[out] = if to_zero { LOWER } else { UPPER };
        b.state[entering] = TREE;
        // Re-hang the subtree cut off by the leaving arc: root it at the entering arc's end inside it and
        // attach it to the other end.
        let (inner, outer) = if on_first {
            (first, second)
        } else {
            (second, first)
        };
        let (mut w, mut new_parent, mut new_pred) = (inner, outer, entering);
        let mut new_up = self.tail[entering] == inner;
        loop {
            let (old_parent, old_pred, old_up) = (b.parent[w], b.pred[w], b.up[w]);
            b.detach(w);
            b.attach(w, new_parent);
            b.pred[w] = new_pred;
            b.up[w] = new_up;
            if w == leaving {
                break;
            }
            (new_parent, new_pred, new_up) = (w, old_pred, !old_up);
            w = old_parent;
        }
        self.refresh_subtree(inner);
    }

    /// Depths and potentials of the subtree rooted at `top` from its parent's.
    fn refresh_subtree(&mut self, top: usize) {
        let b = &self.work;
        self.stack.clear();
        self.stack.push(top);
        while let Some(v) = self.stack.pop() {
            let p = b.parent[v];
            let a = b.pred[v];
            self.potential[v] = if b.up[v] {
                self.potential[p] - self.cost[a]
            } else {
                self.potential[p] + self.cost[a]
            };
            let mut c = b.first_child[v];
            while c != NONE {
                self.stack.push(c);
                c = b.next_sibling[c];
            }
        }
        // Depths in a second pass (the borrow of `self.work` above is shared).
        let b = &mut self.work;
        self.stack.push(top);
        while let Some(v) = self.stack.pop() {
            b.depth[v] = b.depth[b.parent[v]] + 1;
            let mut c = b.first_child[v];
            while c != NONE {
                self.stack.push(c);
                c = b.next_sibling[c];
            }
        }
    }

    /// Potentials of every node from the root's (0).
    fn compute_potentials(&mut self) {
        let root = self.n;
        self.potential[root] = 0.0;
        let mut c = self.work.first_child[root];
        while c != NONE {
            self.refresh_subtree(c);
            c = self.work.next_sibling[c];
        }
    }

    /// Set every tree arc's flow from the supplies and the non-tree arcs (at their bounds), leaves first.
    fn recompute_tree_flows(&mut self) {
        let b = &mut self.work;
        self.remaining.copy_from_slice(&self.supply);
        for (a, &s) in b.state.iter().enumerate() {
            if s != TREE {
                let f = b.flow[a];
                self.remaining[self.tail[a]] -= f;
                self.remaining[self.head[a]] += f;
            }
        }
        self.order.clear();
        self.stack.clear();
        self.stack.push(self.n);
        while let Some(v) = self.stack.pop() {
            self.order.push(v);
            let mut c = b.first_child[v];
            while c != NONE {
                self.stack.push(c);
                c = b.next_sibling[c];
            }
        }
        for &v in self.order[1..].iter().rev() {
            let r = self.remaining[v];
            b.flow[b.pred[v]] = if b.up[v] { r } else { -r };
            self.remaining[b.parent[v]] += r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_one_reports_the_largest_flow() {
        // 0 -> 1 -> 3 (caps 2, 1) and 0 -> 2 -> 3 (caps 1, 5): max flow 2.
        let arcs = [(0, 1), (1, 3), (0, 2), (2, 3)];
        let caps = [2.0, 1.0, 1.0, 5.0];
        let (_, routed) = NetworkSimplex::new(4, &arcs, &caps, &[3.0, 0.0, 0.0, -3.0]).unwrap();
        assert_eq!(routed, 2.0);
        let (mut solver, routed) =
            NetworkSimplex::new(4, &arcs, &caps, &[2.0, 0.0, 0.0, -2.0]).unwrap();
        assert_eq!(routed, 2.0);
        let mut flow = [0.0; 4];
        assert_eq!(
            solver.solve(&[1.0, 1.0, 1.0, 1.0], &mut flow),
            Outcome::Optimal
        );
        assert_eq!(flow, [1.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn negative_cycles_are_saturated() {
        // s=0, t=2; a cycle 1 -> 3 -> 1 of negative cost carries its capacity.
        let arcs = [(0, 1), (1, 2), (1, 3), (3, 1)];
        let caps = [1.0, 1.0, 4.0, 3.0];
        let (mut solver, _) = NetworkSimplex::new(4, &arcs, &caps, &[1.0, 0.0, -1.0, 0.0]).unwrap();
        let mut flow = [0.0; 4];
        solver.solve(&[0.0, 0.0, -1.0, -0.5], &mut flow);
        assert_eq!(flow, [1.0, 1.0, 3.0, 3.0]);
        solver.solve(&[0.0, 0.0, 1.0, 1.0], &mut flow);
        assert_eq!(flow, [1.0, 1.0, 0.0, 0.0]);
    }
}
