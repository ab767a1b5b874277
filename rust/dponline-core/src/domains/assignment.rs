//! The linear assignment problem: a minimum-cost perfect matching of the rows and columns of a dense `n × n`
//! cost matrix, by shortest augmenting paths with dual potentials.
//!
//! Rows are added one at a time. For each, a Dijkstra-like search over the columns, on reduced costs
//! `c_ij − u_i − v_j ≥ 0`, finds a shortest alternating path from the new row to a free column; the duals are
//! then updated so that reduced costs stay non-negative and vanish on the matching, and the path is
//! augmented (Jonker & Volgenant 1987, in the form described by Crouse 2016, "On implementing 2D rectangular
//! assignment algorithms", Algorithm 1), after Jonker & Volgenant's column reduction. Each search
//! scans every column at most once per row it reaches, so a solve is `O(n³)` in the worst case, and it makes
//! the same comparisons for any input: no iteration cap is needed. Buffers are sized once; a solve does not
//! allocate.

use super::graph::NONE;

/// Scratch space and result of assignment solves for one size `n`.
#[derive(Debug, Clone)]
pub(super) struct Assignment {
    n: usize,
    /// Dual potentials of rows and columns.
    u: Vec<f64>,
    v: Vec<f64>,
    /// Per column: length of the shortest alternating path found so far, and the row it comes from.
    shortest: Vec<f64>,
    path: Vec<usize>,
    row_of_col: Vec<usize>,
    col_of_row: Vec<usize>,
    /// Columns not yet reached by the current search (the first `remaining_len`).
    remaining: Vec<usize>,
    /// Rows and columns reached by the current search, in order.
    scanned_rows: Vec<usize>,
    scanned_cols: Vec<usize>,
}

impl Assignment {
    /// Buffers for `n × n` problems.
    pub(super) fn new(n: usize) -> Self {
        Assignment {
            n,
            u: vec![0.0; n],
            v: vec![0.0; n],
            shortest: vec![0.0; n],
            path: vec![NONE; n],
            row_of_col: vec![NONE; n],
            col_of_row: vec![NONE; n],
            remaining: vec![0; n],
            scanned_rows: Vec::with_capacity(n),
            scanned_cols: Vec::with_capacity(n),
        }
    }

    /// Solve for the row-major costs `scale · cost[i·n + j]` (finite; `scale` a power of two that keeps sums
    /// finite, see [`super::linalg::power_of_two_scale`]) and return the column assigned to each row.
    ///
    /// Ties: among columns at equal distance the search settles a free column first, else the one met first
    /// in its scan order (a fixed function of the costs), so the result is deterministic.
    pub(super) fn solve(&mut self, cost: &[f64], scale: f64) -> &[usize] {
        let n = self.n;
        self.u.fill(0.0);
        self.row_of_col.fill(NONE);
        self.col_of_row.fill(NONE);
        // Column reduction (Jonker & Volgenant 1987, the first step of their initialisation): v_j = min_i c_ij
        // keeps every reduced cost >= 0, and the row attaining it (lowest index on ties) takes column j when it
        // is still free, a tight edge. Only the rows left free then need an augmenting path.
        self.v.fill(f64::INFINITY);
        self.path.fill(NONE);
        for (i, row) in cost.chunks_exact(n).enumerate() {
            for ((v, p), &c) in self.v.iter_mut().zip(self.path.iter_mut()).zip(row) {
                let c = scale * c;
                if c < *v {
                    *v = c;
                    *p = i;
                }
            }
        }
        for j in 0..n {
            let i = self.path[j];
            if i != NONE && self.col_of_row[i] == NONE {
                self.col_of_row[i] = j;
                self.row_of_col[j] = i;
            }
        }
        for start in 0..n {
            if self.col_of_row[start] == NONE {
                self.augment_from(start, cost, scale);
            }
        }
        &self.col_of_row
    }

    /// Add row `start` to the matching along a shortest augmenting path.
    #[inline]
    fn augment_from(&mut self, start: usize, cost: &[f64], scale: f64) {
        let n = self.n;
        self.shortest.fill(f64::INFINITY);
        for (j, r) in self.remaining.iter_mut().enumerate() {
            *r = j;
        }
        let mut remaining_len = n;
        self.scanned_rows.clear();
        self.scanned_cols.clear();
        let mut reached = 0.0;
        let mut row = start;
        let sink = loop {
            self.scanned_rows.push(row);
            let costs = &cost[row * n..(row + 1) * n];
            let base = reached - self.u[row];
            let mut best_at = 0;
            let mut best = f64::INFINITY;
            for (at, &j) in self.remaining[..remaining_len].iter().enumerate() {
                let r = base + scale * costs[j] - self.v[j];
                if r < self.shortest[j] {
                    self.path[j] = row;
                    self.shortest[j] = r;
                }
                let s = self.shortest[j];
                if s < best || (s == best && self.row_of_col[j] == NONE) {
                    best = s;
                    best_at = at;
                }
            }
            reached = best;
            let col = self.remaining[best_at];
            self.scanned_cols.push(col);
            remaining_len -= 1;
            self.remaining[best_at] = self.remaining[remaining_len];
            if self.row_of_col[col] == NONE {
                break col;
            }
            row = self.row_of_col[col];
        };
        // Dual update: reduced costs stay >= 0 and are 0 along the new matching.
        self.u[start] += reached;
        for &i in &self.scanned_rows[1..] {
            self.u[i] += reached - self.shortest[self.col_of_row[i]];
        }
        for &j in &self.scanned_cols {
            self.v[j] -= reached - self.shortest[j];
        }
        // Augment: flip the alternating path ending at `sink`.
        let mut col = sink;
        loop {
            let row = self.path[col];
            self.row_of_col[col] = row;
            let previous = std::mem::replace(&mut self.col_of_row[row], col);
            if row == start {
                break;
            }
            col = previous;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing;
    use super::*;

    /// Minimum over all permutations (n small).
    fn brute_force(cost: &[f64], n: usize) -> f64 {
        fn go(cost: &[f64], n: usize, row: usize, used: &mut [bool], acc: f64, best: &mut f64) {
            if row == n {
                *best = best.min(acc);
                return;
            }
            for j in 0..n {
                if !used[j] {
                    used[j] = true;
                    go(cost, n, row + 1, used, acc + cost[row * n + j], best);
                    used[j] = false;
                }
            }
        }
        let mut best = f64::INFINITY;
        go(cost, n, 0, &mut vec![false; n], 0.0, &mut best);
        best
    }

    #[test]
    fn optimal_on_random_and_tied_costs() {
        let mut rng = testing::rng(71);
        for n in 1..=7 {
            let mut solver = Assignment::new(n);
            for trial in 0..40 {
                let cost = if trial % 2 == 0 {
                    testing::gaussian(&mut rng, n * n)
                } else {
                    testing::tied(&mut rng, n * n)
                };
                let cols = solver.solve(&cost, 1.0).to_vec();
                let mut seen = vec![false; n];
                cols.iter().for_each(|&j| seen[j] = true);
                assert!(seen.iter().all(|&s| s), "not a permutation: {cols:?}");
                let value: f64 = cols.iter().enumerate().map(|(i, &j)| cost[i * n + j]).sum();
                let best = brute_force(&cost, n);
                assert!((value - best).abs() < 1e-9, "{value} != {best}");
                assert_eq!(solver.solve(&cost, 1.0), &cols[..]);
            }
        }
    }

    #[test]
    fn huge_costs_are_scaled_not_overflowed() {
        let n = 3;
        let cost = [1e308, -1e308, 0.0, -1e308, 1e308, 0.0, 0.0, 0.0, -1e308];
        let scale = super::super::linalg::power_of_two_scale(&cost);
        let mut solver = Assignment::new(n);
        assert_eq!(solver.solve(&cost, scale), &[1, 0, 2]);
    }
}
